#!perl
# Every name visible, in the nytprof.out view (issue 26): every profile in
# t/data, of every format, converted to nytprof.out and rendered by the REAL
# nytprofhtml, then read by the REAL nytprofcalls:
#  * nothing on nytprofhtml's stderr but its progress lines (and, only for a
#    profile whose deepest stack is 100 frames or more, perl's "Deep
#    recursion" warning from nytprofcalls' recursive walk, which nytprofhtml
#    prints for a real Perl profile of such a stack too: pinned below on a
#    live profile of a 150-deep Perl recursion); for NYTProf input,
#    which passes through unchanged, exactly what nytprofhtml says of the
#    input itself;
#  * every sub name of the ground truth beside the file is in the report's
#    list of subs: index.html, or when the profile has more subs than the 15
#    index.html lists, the page of all subs it links to; the ground truth's
#    top 5 (by exclusive time) in index.html itself; for EasyProfiler, every
#    block name of the ground truth (one sub per name, all threads summed:
#    main::<block>) literally in index.html, its 15 rows;
#  * no page holds raw <frozen ...>, <module>, <lambda>, ... markup (file names
#    are presented as sub names are);
#  * nytprofcalls prints exactly our collapsed stacks of the nytprof.out (its
#    unit, its "(eval 0)"), with the source's own total weight; for
#    EasyProfiler, each named thread's stacks under its own root sub
#    (<package>::RUNTIME), the main thread's on its top-level blocks (no
#    main::RUNTIME frame, as in a Perl profile), weighing the thread's summed
#    self ns of the truth;
#  * merge gives a file the flags convert gives it (<frozen runpy>: IS_FAKE).
# Here one file of each kind (frozen modules and lambdas, an empty profile,
# missing sources, 29 EasyProfiler subs, a run, Pynytprof, NYTProf's own);
# xt/report-names-all.t runs every file of t/data through the same checks.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../t/lib";
use Needs qw(zstd snappy);
use Stacks qw(slurp first_differences nytprof_tools statprofiler_run page_text);
use V8Truth ();
use File::Temp qw(tempdir);
use JSON::PP ();
use Encode ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my ($html, $calls) = nytprof_tools();    # skips without Devel::NYTProf, nytprofhtml, nytprofcalls

my $d = "$FindBin::Bin/../t/data";
my $tmp = tempdir('pb98-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new;
sub name { Devel::ProfileBridge::nytprof_name($_[0]) }

my @corpus = (
    glob("$d/tachyon/*.bin"), glob("$d/tachyon/v315/*.bin"), glob("$d/tachyon/real315/*.bin"),
    glob("$d/easyprofiler/*.prof"), grep({ !/\.(?:json|jsonl)\z/ } glob("$d/statprofiler/*.out.*[0-9a-f]")),
    glob("$d/pynytprof/*.nytprof.out"), glob("$d/pynytprof/tlv/*/*.nytprof.out"), glob("$d/nytprof/*.nytprof.out"),
    (Devel::ProfileBridge::features()->{read}{v8} ? glob("$d/v8/*.cpuprofile") : ()),
);
our $ALL;    # xt/report-names-all.t: every file
@corpus = grep {
    m{/(?:tachyon/multithread\.bin|real315/lambdas_classes_opcodes_zstd\.bin|real315/multithread_exception_none\.bin
        |ep_threads\.prof|ep_open_block\.prof|ep_cxx_names\.prof|statprofiler/multifile\.out\.[^/]*|B_ascii_FSDCE_670fbc8/recursion\.nytprof\.out
        |nytprof/synthetic-utf8\.nytprof\.out|v8/v8_mixed\.cpuprofile)\z}x
} @corpus unless $ALL;

# an EasyProfiler thread's package (its root sub <package>::RUNTIME), POD's rule
sub package_of {
    my ($tid, $name) = @_;
    return 'main' if $name eq 'Main' || $name eq 'main';
    return "thread_$tid" if $name eq '';
    (my $p = $name) =~ s/[\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]/_/g;
    return $p =~ /\A[0-9]/ ? "_$p" : $p;
}

# a C++ name with a package: a "::" outside (), <> and {} (not the std:: of
# "operator<<(std::ostream&, const T&)" or "max<std::string>")
sub has_package {
    my ($s) = @_;
    1 while $s =~ s/\([^()]*\)|<[^<>]*>|\{[^{}]*\}//;
    return $s =~ /::/;
}

# the ground truth's sub names as nytprofhtml shows them: { name => exclusive
# weight }; for EasyProfiler also { sub => 1 } of the block subs index.html must
# list and { root sub => the thread's self ns } of the threads' stacks
my (%ep_blocks, %ep_roots);
sub truth_names {
    my ($in) = @_;
    my %w;
    %ep_blocks = %ep_roots = ();
    if ($in =~ m{/tachyon/}) {
        for (split /\n/, slurp("$in.collapsed.txt")) {    # CPython's basename:qualname:line frames
            my ($stack, $n) = /\A(.*) (\d+)\z/ or next;
            my @f = map { /\A.*:(.*?):-?\d+\z/ ? $1 : () } split /;/, $stack;
            $w{ name($_ =~ s/\./::/gr) } += 0 for @f;
            $w{ name($f[-1] =~ s/\./::/gr) } += $n if @f;
        }
    } elsif ($in =~ m{/easyprofiler/}) {
        my $t = $json->decode(slurp("$in.truth.json"));
        for my $th (@{ $t->{threads} }) {
            $w{ name($_) } += $th->{by_name}{$_}{self_ns} for keys %{ $th->{by_name} };
            for (grep { $th->{by_name}{$_}{type} eq 'block' } keys %{ $th->{by_name} }) {
                $ep_blocks{ name(has_package($_) ? $_ : "main::$_") } = 1;
                # the main thread's stacks start at its top-level blocks
                my $pkg = package_of($th->{thread_id}, $th->{name});
                $ep_roots{ $pkg eq 'main' ? '(main thread)' : "${pkg}::RUNTIME" } += $th->{by_name}{$_}{self_ns};
            }
        }
        delete $ep_roots{$_} for grep { !$ep_roots{$_} } keys %ep_roots;
    } elsif ($in =~ m{/statprofiler/}) {
        my $t = $json->decode(slurp("$in.truth.json"));
        for my $f (statprofiler_run($in, $t)) {    # a root's first file: its whole run
            for (split /\n/, slurp("$f.samples.jsonl")) {
                my ($weight, undef, $frames) = @{ $json->decode($_) };
                my @subs = grep { length } map { $_->[0] } @$frames;    # (main and eval frames: not subs)
                $w{$_} += 0 for @subs;
                $w{ $frames->[0][0] } += $weight if @$frames && length $frames->[0][0];
            }
        }
    } elsif ($in =~ m{/v8/}) {    # the JSON itself (t/lib/V8Truth.pm)
        my $t = V8Truth::truth($in);
        $w{ name($_) } += 0 for keys %{ $t->{cum}[1] };
        $w{ name($_) } += $t->{self}[1]{$_} for keys %{ $t->{self}[1] };
    } elsif ($in =~ m{/pynytprof/} && -e "$in.truth.json") {
        my $t = $json->decode(slurp("$in.truth.json"));
        my %called = map { $_->{callee_sid} => 1 } @{ $t->{call_edges} };
        $w{ name($_->{name}) } = 0 for grep { $called{ $_->{sid} } } @{ $t->{subs} };
    }
    return \%w;
}

# nytprofhtml's stderr, its progress lines dropped, and perl's "Deep
# recursion" (nytprofcalls walks each stack recursively; perl warns at depth
# 100) when $deep: the profile has a stack of 100 frames or more
sub html_errors {
    my ($file, $dir, $deep) = @_;
    system("cd \"$tmp\" && \"$html\" -f \"$file\" -o \"$dir\" > \"$dir.out\" 2> \"$dir.err\"");
    my $rc = $? >> 8;
    my @err = grep {
        !/\A(?:Extracting subroutine (?:call data|links)|Generating subroutine stack flame graph)\b/
            && !($deep && /\ADeep recursion on subroutine "main::(?:_merge_sub_return_into_caller|visit_nodes_depth_first)" at /)
    } split /\n/, slurp("$dir.err");
    return ($rc, \@err);
}

# the deepest stack nytprofcalls prints of a nytprof.out (frames)
sub max_depth {
    my ($got) = @_;
    my $max = 0;
    for (keys %$got) {
        my $d = 1 + tr/;//;
        $max = $d if $d > $max;
    }
    return $max;
}

# the nytprof.out's stacks as nytprofcalls prints them (zero lines dropped), and
# as our collapsed output of it says them, in ticks; raw bytes both
sub calls_stacks {
    my ($out) = @_;
    my %got;
    for (split /\n/, `"$calls" "$out" 2>/dev/null`) {
        my ($s, $v) = /\A(.*) (\d+)\z/ or next;
        # (perl prints a UTF-8 flagged name of characters below 256 as Latin-1:
        # NYTProf's own names; ours are bytes)
        $s = Encode::encode_utf8(Encode::decode('latin1', $s))
            unless eval { Encode::decode('UTF-8', $s, Encode::FB_CROAK | Encode::LEAVE_SRC); 1 };
        $got{$s} += $v if $v;
    }
    return \%got;
}
sub our_stacks {
    my ($out, $ticks_per_sec) = @_;
    my $f = "$tmp/stacks.folded";
    unlink $f;
    {
        local $SIG{__WARN__} = sub { };
        Devel::ProfileBridge::convert(in => $out, out => $f, to => 'collapsed');
    }
    my %want;
    for (split /\n/, slurp($f)) {
        my ($s, $n) = /\A[^;]*;(.*) (\d+)\z/ or next;    # (tid:<thread> dropped)
        $s =~ s/\( (\w*eval)\s\d+ \) (?= \[ .+? :\d+ \] )/($1 0)/gx;    # as nytprofcalls merges evals
        $want{$s} += $n * $ticks_per_sec / 1e9;
    }
    return \%want;
}

my $raw_markup = qr/<(?:frozen[ >]|module>|lambda>|genexpr>|listcomp>|dictcomp>|setcomp>|locals>|string>)/;
my $n = 0;
for my $in (@corpus) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    $n++;
    my $out = "$tmp/$n.nytprof";
    my $dir = "$tmp/$n-html";
    my $ok = do {
        local $SIG{__WARN__} = sub { };    # (source files not found, empty profiles: said on our stderr)
        eval { Devel::ProfileBridge::convert(in => $in, out => $out); 1 };
    };
    ok($ok, "$label: converted") or diag($@), next;

    my $deep = max_depth(calls_stacks($out)) >= 100;
    my ($rc, $err) = html_errors($out, $dir, $deep);
    is($rc, 0, "$label: nytprofhtml exits 0");
    if ($label =~ m{\Anytprof/}) {
        my (undef, $own) = html_errors($in, "$dir-input", $deep);
        is_deeply($err, $own, "$label: nytprofhtml says of ours exactly what it says of the input ("
            . scalar(@$own) . ' lines)');
    } else {
        is_deeply($err, [], "$label: nothing on nytprofhtml's stderr but its progress lines");
    }

    my @pages = glob("$dir/*.html");
    my @raw = grep { slurp($_) =~ $raw_markup } @pages;
    is_deeply(\@raw, [], "$label: no raw <frozen ...>, <module>, <lambda> markup in its " . scalar(@pages)
        . ' pages');

    my $truth = truth_names($in);
    if (%$truth) {
        my $index = page_text("$dir/index.html", 1);
        my $list = $index =~ /See all \d+ subroutines/ ? page_text("$dir/index-subs-excl.html", 1) : $index;
        my @missing = grep { $list !~ /(?:^|[\s:])\Q$_\E(?=\s|\z)/m } sort keys %$truth;
        is_deeply(\@missing, [], "$label: the ground truth's " . scalar(keys %$truth)
            . ' sub names are in the report\'s list of subs');
        my @top = grep { $truth->{$_} > 0 } sort { $truth->{$b} <=> $truth->{$a} || $a cmp $b } keys %$truth;
        @top = @top[0 .. 4] if @top > 5;
        my @hidden = grep { $index !~ /(?:^|[\s:])\Q$_\E(?=\s|\z)/m } @top;
        is_deeply(\@hidden, [], "$label: ... its top " . scalar(@top) . ' in index.html');
        if (%ep_blocks) {
            my @absent = grep { $index !~ /(?:^|\s)\Q$_\E(?=\s|\z)/m } sort keys %ep_blocks;
            is_deeply(\@absent, [], "$label: ... all its " . scalar(keys %ep_blocks)
                . ' block subs (every thread\'s spans of a name in one sub) in index.html');
        }
    }

    my %attr;
    &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $attr{ $_[1] } = $_[2] } },
        filename => $out, quiet => 1);
    my $got = calls_stacks($out);
    my $want = our_stacks($out, $attr{ticks_per_sec});
    is_deeply([ first_differences($want, $got, 5) ], [], "$label: nytprofcalls prints our collapsed stacks ("
        . scalar(keys %$want) . ' stacks)');
    if (%ep_roots) {
        my %by_root;
        $by_root{ (split /;/, $_)[0] =~ /::RUNTIME\z/ ? (split /;/, $_)[0] : '(main thread)' } += $got->{$_}
            for keys %$got;
        is_deeply(\%by_root, \%ep_roots, "$label: ... each of its " . scalar(keys %ep_roots)
            . " threads' stacks under its own root sub, weighing the thread's self ns");
    }
    if ($label =~ m{\A(?:tachyon|easyprofiler|statprofiler)/} && %$want) {
        my $f = "$tmp/source.folded";
        unlink $f;
        {
            local $SIG{__WARN__} = sub { };
            Devel::ProfileBridge::convert(in => $in, out => $f, to => 'collapsed');
        }
        my $unit = $label =~ /\Aeasyprofiler/ ? 1e-9 : ($attr{sample_interval_us} // 0) * 1e-6;
        my ($src, $ours) = (0, 0);
        for (split /\n/, slurp($f)) { $src += $1 if / (\d+)\z/ }
        $ours += $_ for values %$want;
        is(sprintf('%.0f', $ours), sprintf('%.0f', $src * $unit * $attr{ticks_per_sec}),
            "$label: ... holding the source's total weight");
    }
}

# perl's "Deep recursion" on nytprofhtml's stderr is NYTProf's own for any
# stack of 100 frames or more: a real Perl profile of a 150-deep recursion,
# made live by Devel::NYTProf, gets it too (so the check above drops it only
# for such profiles)
SKIP: {
    skip 'Devel::NYTProf cannot profile here', 2
        unless eval { require Devel::NYTProf::Core; 1 } && !$ENV{PERL5OPT};
    my $pl = "$tmp/deep.pl";
    open my $fh, '>', $pl or die "$pl: $!";
    print $fh "sub down { my \$n = shift; return \$n ? down(\$n - 1) : 0 }\ndown(150) for 1 .. 3;\n";
    close $fh;
    local $ENV{NYTPROF} = "file=$tmp/deep.nytprof.out";
    system($^X, '-d:NYTProf', $pl) == 0 or skip 'perl -d:NYTProf failed', 2;
    is(max_depth(calls_stacks("$tmp/deep.nytprof.out")), 151, 'a real Perl profile of a 150-deep recursion');
    system("cd \"$tmp\" && \"$html\" -f \"$tmp/deep.nytprof.out\" -o \"$tmp/deep-html\" > /dev/null 2> \"$tmp/deep.err\"");
    my @deep = grep { /\ADeep recursion on subroutine "main::/ } split /\n/, slurp("$tmp/deep.err");
    ok(scalar(@deep), '... makes nytprofhtml itself print perl\'s "Deep recursion" (' . scalar(@deep) . ' lines)');
}

# merge flags files as convert does
for my $in ("$d/tachyon/multithread.bin", "$d/tachyon/real315/lambdas_classes_opcodes_zstd.bin") {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my %flags;
    for my $how (qw(convert merge)) {
        my $out = "$tmp/flags-$how.nytprof";
        unlink $out;
        local $SIG{__WARN__} = sub { };
        if ($how eq 'convert') { Devel::ProfileBridge::convert(in => $in, out => $out) }
        else { Devel::ProfileBridge::merge(in => [$in], out => $out) }
        &Devel::ProfileBridge::ReadStream::for_chunks(
            { NEW_FID => sub { $flags{$how}{ $_[7] } = $_[4] & ~0x30 } }, filename => $out, quiet => 1);
    }
    is_deeply($flags{merge}, $flags{convert}, "$label: merge flags its " . scalar(keys %{ $flags{convert} })
        . ' files as convert does');
    my @fake = grep { /\A\[/ } keys %{ $flags{convert} };
    ok(@fake && !grep({ !($flags{convert}{$_} & 0x80) } @fake),
        "$label: ... its [frozen ...] files IS_FAKE (@fake)");
}

done_testing;
