package CallGraph;
# Test helper for the call-graph targets (pstats, callgrind): every profile
# under t/data, and our own numbers for a file, computed here from
# for_chunks (SUB_INFO, SUB_CALLERS, ATTRIBUTEs), not from our outputs:
#   use CallGraph qw(package_of parse_annotate sub_of graph_corpus our_graph py_func run_of pstats_load check_pstats near);
use strict;
use warnings;
use Exporter 'import';
use Test::More ();
use Encode ();
use File::Find ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

our @EXPORT_OK = qw(package_of parse_annotate sub_of graph_corpus our_graph py_func run_of pstats_load check_pstats near);

# the sub a pstats key names (read_pstats.c: the package from the module path)
sub package_of {
    my ($f) = @_;
    return "main" if $f eq '';
    if ($f =~ /\A<(.*)>\z/s) {
        my $in = $1;
        return "main" unless $in =~ /\Afrozen (.+)\z/s;
        (my $p = $1) =~ s/\./::/g;
        return $p;
    }
    my ($rest) = $f =~ m{.*/(?:site-packages|dist-packages|lib/python[0-9.t]+)/(.*)\z}s;
    ($rest) = $f =~ m{([^/]*)\z}s unless defined $rest;
    $rest =~ s/\.pyw?\z//;
    $rest =~ s{(?:\A|/)__init__\z}{};
    $rest =~ s{[/.]}{::}g;
    return length $rest ? $rest : 'main';
}

# callgrind_annotate's report: (events, total per event, { name => [ [cost per event], ... rows ] })
sub parse_annotate {
    my ($text) = @_;
    my ($shown) = $text =~ /^Events shown:\s+(.*?)\s*$/m or return;
    my @ev = split ' ', $shown;
    my (%total, %rows);
    for my $l (split /\n/, $text) {
        my $rest = $l;
        my @v;
        for (1 .. @ev) {
            $rest =~ s/\A\s*(\.|[\d,]+)(?:\s+\(\s*[\d.]+%\))?// or last;
            (my $n = $1) =~ tr/,//d;
            push @v, $n eq '.' ? 0 : $n;
        }
        next unless @v == @ev && $rest =~ /\S/;
        $rest =~ s/\A\s+//;
        if ($rest eq 'PROGRAM TOTALS') {
            @total{@ev} = @v;
            next;
        }
        $rest =~ s/ \[[^\]]*\]\z//;    # its object
        my ($file, $fn) = $rest =~ /\A(\(eval [^)]*\)\[[^\]]*\]|[^:]*):(.*)\z/s or next;
        push @{ $rows{$fn} }, \@v;
    }
    return (\@ev, \%total, \%rows);
}

# the sub a callgrind function name is (read_callgrind.c: split at the last "::" before any "(")
sub sub_of {
    my ($n) = @_;
    my ($pre) = $n =~ /\A([^(]*)/;
    1 while $pre =~ s/<[^<>]*>//;    # template arguments
    return $pre =~ /.::/s ? $n : "main::$n";
}

# every profile under $d (the crashers and limit bombs are bad input, not
# profiles), sorted
sub graph_corpus {
    my ($d) = @_;
    my @inputs;
    File::Find::find({ no_chdir => 1, wanted => sub {
        return if -d $_ || m{/(?:crashers|limits)/} || /\.(?:json|jsonl|txt|py|pl|cpp|md|go|js|rs|c)\z/
            || m{/(?:README|COMMAND)\z};
        my $f = eval { Devel::ProfileBridge::detect_format($_) } or return;
        push @inputs, $_ if defined $f->{format} && $f->{supported};
    } }, $d);
    return sort @inputs;
}

# funcname of a Python sub as CPython names it: the sub's name after its
# module ("threading::Thread::run" in .../threading.py -> "Thread.run")
sub py_func {
    my ($name, $file, $line) = @_;
    # the pstats reader's "@<line>" (two functions of one name in one module)
    $name =~ s/\@\Q$line\E\z// if $line;
    my $m;
    if ($file =~ /\A<frozen (?:.*\.)?([^.]*)>\z/) { $m = $1 }
    else {
        ($m = $file) =~ s/\.py\z//;
        $m =~ s{/__init__\z}{};
        $m =~ s{.*/}{};
    }
    unless (length $m && $name =~ /(?:\A|::)\Q$m\E::(.*)\z/s) {
        # no module: the fold's empty package, main (its root main::RUNTIME as it is)
        return $name eq 'main::RUNTIME' ? $name : $name =~ s/\Amain:://r =~ s/::/./gr if $name =~ /\Amain::/;
        return $name;
    }
    (my $f = $1) =~ s/::/./g;
    return $f;
}

# run_of($in): for_chunks' options that read what convert reads of $in: a
# StatProfiler run's root process's first file is the whole run, forked
# children's files included (any other file is itself)
sub run_of {
    my ($in) = @_;
    return () unless $in =~ /\A(.*\.out)\.[0-9a-f]{8}00000002[0-9a-f]{32}\.00000001\z/;
    return (files => $1);    # the template: every process's files
}

# Our graph of $in (%opt: for_chunks' options, e.g. run_of($in)): { subs => { name => { file, line, nc, self_calls, tt, ct } },
# edges => { "callee\0caller" => { count, excl, incl, reci } },
# sites => { "caller\0callee\0fid\0line" => { count, incl } }, sampled,
# unit (seconds per count), unit_name, interval (CPython's tt per sample),
# python }
sub our_graph {
    my ($in, %opt) = @_;
    my (%attr, %fid, %fake, %subs, %edges, %sites, %prim, %prim_e);
    local $SIG{__WARN__} = sub { };    # a decoder's notes (EasyProfiler's "0 blocks"): the tests' stderr stays clean
    # names as Python reads them: bytes that are not UTF-8 as U+FFFD
    my $u = sub { utf8::is_utf8($_[0]) ? $_[0] : Encode::decode('UTF-8', $_[0]) };
    &Devel::ProfileBridge::ReadStream::for_chunks({
        ATTRIBUTE => sub {
            # the fold's primitive calls where they differ from the calls: per sub, per edge
            if ($_[1] =~ /\Aprimitive_calls [0-9]+ (.*?)(?: <- (.*))?\z/s) {
                if (defined $2) { $prim_e{ $u->($1) . "\0" . $u->($2) } += $_[2] } else { $prim{ $u->($1) } += $_[2] }
                return;
            }
            $attr{ $_[1] } //= $_[2];
        },
        NEW_FID => sub { $fid{ $_[1] } = $u->($_[7]); $fake{ $_[1] } = $_[4] & 0x80 },    # IS_FAKE
        SUB_INFO => sub {
            my (undef, $fid, $first, undef, $name) = @_;
            $name = $u->($name);
            $subs{$name}{info} //= [ $fid, $first ];
        },
        SUB_CALLERS => sub {
            my (undef, $fid, $line, $count, $incl, $excl, $reci, undef, $called, $caller) = @_;
            return if $caller eq '';
            ($called, $caller) = map { $u->($_) } $called, $caller;
            $subs{$_} //= {} for $called, $caller;
            my $e = $edges{"$called\0$caller"} //= { count => 0, excl => 0, incl => 0, reci => 0 };
            $e->{count} += $count;
            $e->{excl} += $excl;
            $e->{incl} += $incl;
            $e->{reci} += $reci;
            my $s = $sites{"$caller\0$called\0$fid\0$line"} //= { count => 0, incl => 0, line => $line };
            $s->{count} += $count;
            $s->{incl} += $incl;
        },
    }, ($opt{files} ? () : (filename => $in)), quiet => 1, %opt);
    my %g = (edges => \%edges, sites => \%sites);
    # an exact call graph (pstats, callgrind) is not sampled, though its fold says sampled_time_sec
    $g{exact} = ($attr{call_graph} // '') eq 'exact' ? 1 : 0;
    $g{sampled} = exists $attr{sampled_time_sec} && !$g{exact} ? 1 : 0;
    my $ns = ($attr{sample_weight_unit} // '') eq 'ns';
    $g{unit} = !$g{sampled} || $ns ? 1e-9 : $attr{sample_interval_us} ? $attr{sample_interval_us} * 1e-6
        : 1 / ($attr{ticks_per_sec} || 1e6);
    $g{unit_name} = $g{exact} && $attr{graph_cost_unit} ? $attr{graph_cost_unit}    # callgrind's event (Ir ...)
        : $g{sampled} && !$ns ? 'samples' : 'ns';
    $g{interval} = $g{sampled} && !$ns && $attr{sample_interval_us} ? $attr{sample_interval_us} / 1e6 : $g{unit};
    my $fmt = $attr{source_format} // '';
    $g{python} = $fmt =~ /\A(?:tachyon|pynytprof|pstats)\z/ ? 1 : 0;    # the formats of Python programs
    $g{application} = $attr{application};
    for my $name (keys %subs) {
        my $s = $subs{$name};
        my ($fid, $line) = $s->{info} ? @{ $s->{info} } : (undef, 0);
        $s->{file} = defined $fid ? $fid{$fid} // '' : '';
        $s->{line} = $line;
        $s->{synthetic} = defined $fid && $fake{$fid} && !$line ? 1 : 0;    # pstats: ('~', 0, name)
        $s->{$_} = 0 for qw(nc self_calls tt ct);
    }
    for my $k (keys %edges) {
        my ($called, $caller) = split /\0/, $k;
        my ($e, $s) = ($edges{$k}, $subs{$called});
        $s->{nc} += $e->{count};
        $s->{self_calls} += $e->{count} if $called eq $caller;
        $s->{tt} += $e->{excl};
        $s->{ct} += $e->{incl};
    }
    # an exact graph: an edge of count 0 (the fold's rest of a function's
    # totals) and the calls from the fold's root (main::RUNTIME in a fake
    # file: calls from outside the profile) count for the callee, but are no
    # caller's; a sub that is only such a caller is no function
    $g{counts_only} = ($attr{graph_edge_times} // '') eq 'none' ? 1 : 0;
    if ($g{exact}) {
        my %caller;
        for my $k (keys %edges) {
            my ($called, $caller) = split /\0/, $k;
            my $s = $subs{$caller};
            my $root = $caller eq 'main::RUNTIME' && $s->{info} && $fake{ $s->{info}[0] };
            $edges{$k}{no_caller} = !$edges{$k}{count} || $root ? 1 : 0;
            $caller{$called} = 1;
            $caller{$caller} = 1 unless $edges{$k}{no_caller};
        }
        for my $name (keys %subs) {
            my $has_edges = grep { /\0\Q$name\E\z/ } keys %edges;
            $subs{$name}{no_function} = 1 if $has_edges && !$caller{$name};    # (callgrind: a root like any)
        }
        $subs{$_}{cc} = $prim{$_} for grep { $subs{$_} } keys %prim;
        $edges{$_}{cc} = $prim_e{$_} for grep { $edges{$_} } keys %prim_e;
    }
    $g{subs} = \%subs;
    return \%g;
}

# what Python's pstats loads: per file a header line, then one line per
# function and one per caller (repr floats, tab-separated)
our $PSTATS_TRUTH = <<'PY';
import pstats, sys
for path in sys.argv[1:]:
    s = pstats.Stats(path)
    print("FILE\t%s\t%d\t%d\t%r" % (path, s.total_calls, s.prim_calls, s.total_tt))
    for (f, l, fn), (cc, nc, tt, ct, callers) in s.stats.items():
        print("F\t%s\t%d\t%s\t%d\t%d\t%r\t%r" % (f, l, fn, cc, nc, tt, ct))
        for (cf, cl, cfn), v in callers.items():
            if isinstance(v, tuple):
                print("C\t%s\t%d\t%s\t%d\t%d\t%r\t%r" % ((cf, cl, cfn) + v))
            else:
                print("C\t%s\t%d\t%s\t%d" % (cf, cl, cfn, v))
PY


sub near { my ($a, $b) = @_; return abs($a - $b) <= 1e-9 * (abs($a) + abs($b)) + 1e-12 }

# Python's pstats.Stats of each file, run by @$python (a command: the
# interpreter, or a chroot's) on the paths it sees (%$seen: path -> the
# path it sees; default the same): ($?, { path => { totals => [calls,
# prim_calls, total_tt], f => { "file\0line\0func" => { n => [cc, nc, tt,
# ct], c => { caller key => [value...] } } } } })
sub pstats_load {
    my ($python, @paths) = @_;
    my $seen = ref $paths[-1] eq 'HASH' ? pop @paths : {};
    my %back = map { (($seen->{$_} // $_) => $_) } @paths;
    my %loaded;
    local $ENV{PYTHONIOENCODING} = 'utf-8';
    open my $ph, '-|:encoding(UTF-8)', @$python, '-c', $PSTATS_TRUTH, map { $seen->{$_} // $_ } @paths
        or die "python: $!";
    my ($cur, $last);
    while (my $l = <$ph>) {
        chomp $l;
        my @f = split /\t/, $l, -1;
        if ($f[0] eq 'FILE') { $cur = $loaded{ $back{ $f[1] } // $f[1] } = { totals => [ @f[ 2 .. 4 ] ], f => {} } }
        elsif ($f[0] eq 'F') { $last = $cur->{f}{"$f[1]\0$f[2]\0$f[3]"} = { n => [ @f[ 4 .. 7 ] ], c => {} } }
        else { $last->{c}{"$f[1]\0$f[2]\0$f[3]"} = [ @f[ 4 .. $#f ] ] }
    }
    close $ph;
    return ($?, \%loaded);
}

# the tests of one file: what pstats loaded ($l) against our graph ($g)
sub check_pstats {
    my ($label, $g, $l) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;

    Test::More::ok($l, "$label: pstats.Stats loaded it") or return;
    my $subs = { map { ($_ => $g->{subs}{$_}) } grep { !$g->{subs}{$_}{no_function} } keys %{ $g->{subs} } };
    my %key = map {
        my $s = $subs->{$_};
        $s->{synthetic} ? ($_ => join("\0", '~', 0, s/\Amain:://r))
            : ($_ => join("\0", $s->{file}, $s->{line}, $g->{python} ? py_func($_, $s->{file}, $s->{line}) : $_))
    } keys %$subs;
    Test::More::is(scalar(keys %{ $l->{f} }), scalar(keys %$subs), "$label: one function per sub");
    my (@bad, $calls, $prim, $tt) = ();
    ($calls, $prim, $tt) = (0, 0, 0);
    for my $name (sort keys %$subs) {
        my $s = $subs->{$name};
        my $got = $l->{f}{ $key{$name} };
        unless ($got) { push @bad, "$name: missing"; next }
        my @want;
        if ($g->{sampled}) {
            my ($cc, $nc) = map { int($_ / $g->{unit} + 0.5) } $s->{tt}, $s->{ct};
            @want = ($cc, $nc, $cc * $g->{interval}, $nc * $g->{interval});
        } else {
            @want = ($s->{cc} // $s->{nc} - $s->{self_calls}, $s->{nc}, $s->{tt}, $s->{ct});
        }
        $calls += $want[1];
        $prim += $want[0];
        $tt += $want[2];
        push @bad, "$name: (@{ $got->{n} }) want (@want)"
            unless $got->{n}[0] == $want[0] && $got->{n}[1] == $want[1] && near($got->{n}[2], $want[2])
            && near($got->{n}[3], $want[3]);
        # its callers
        my %want_c;
        for my $k (grep { /\A\Q$name\E\0/ } keys %{ $g->{edges} }) {
            my $caller = (split /\0/, $k)[1];
            my $e = $g->{edges}{$k};
            next if $e->{no_caller};
            # an exact edge's ct: its incl and what the fold moved to reci (cProfile's per-edge ct)
            $want_c{ $key{$caller} } = $g->{sampled} ? [ int(($e->{incl} + $e->{reci}) / $g->{unit} + 0.5) ]
                : $g->{counts_only} ? [ $e->{count} ]
                : [ $e->{count}, $e->{cc} // ($caller eq $name ? 0 : $e->{count}), $e->{excl}, $e->{incl} + $e->{reci} ];
        }
        my @ck = sort keys %want_c;
        push @bad, "$name: callers " . join(',', sort keys %{ $got->{c} }) . ' want ' . join(',', @ck)
            unless join(',', @ck) eq join(',', sort keys %{ $got->{c} });
        for my $ck (@ck) {
            my ($w, $v) = ($want_c{$ck}, $got->{c}{$ck} // []);
            my $same = @$w == @$v;
            for my $i (0 .. $#$w) { $same &&= $i >= 2 ? near($v->[$i], $w->[$i]) : $v->[$i] == $w->[$i] }
            push @bad, "$name <- " . ($ck =~ s/\0/:/gr) . ": (@$v) want (@$w)" unless $same;
        }
    }
    Test::More::is(join("\n", @bad[ 0 .. ($#bad < 9 ? $#bad : 9) ]), '', "$label: every function and caller as ours");
    Test::More::ok($l->{totals}[0] == $calls && $l->{totals}[1] == $prim && near($l->{totals}[2], $tt),
        "$label: totals $calls calls ($prim primitive), $tt s") or Test::More::diag("pstats: @{ $l->{totals} }");
}

1;
