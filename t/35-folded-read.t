#!perl
# Reading folded stacks (issue 29, item 3): every folded file of t/data, made
# by the real tools (CPython 3.15's `profiling.sampling replay --collapsed`,
# Devel::NYTProf's nytprofcalls, our own --to collapsed), against a few lines
# of Perl over the text itself:
#  * sample totals and per-function flat (self) and cumulative weights from
#    for_chunks (SUB_CALLERS: exclusive and inclusive time, one unit of
#    weight = 1 tick at ticks_per_sec 1000000) and from --to collapsed;
#  * --to collapsed read back equals itself, byte for byte (for our own
#    files: the file itself);
#  * nytprofhtml (the REAL one) renders the conversion, nothing on its stderr
#    but progress lines, every sub of the file in its list of subs;
#  * merge with a Tachyon file gives every stack the sum of its parts;
#  * --to pprof, read back by the REAL `go tool pprof -raw`, equals our
#    collapsed output stack for stack;
#  * detection by content, root frames (tid:, pid:, py-spy's process/thread),
#    --thread, and the bad-input messages.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd);
use Stacks qw(slurp folded_weights weight_unit_ns first_differences go_for_pprof);
use File::Temp qw(tempdir);
use Encode ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb35-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @files = (glob("$d/folded/*.collapsed"), glob("$d/folded/*.folded"),
    "$d/tachyon/real315/multithread_cpu_none.bin.collapsed.txt",
    "$d/tachyon/real315/lambdas_classes_opcodes_zstd.bin.collapsed.txt");

sub spew { open my $fh, '>:raw', $_[0] or die "$_[0]: $!"; print $fh $_[1]; close $fh or die }
sub quietly { my $code = shift; local $SIG{__WARN__} = sub { }; return eval { $code->(); 1 } }

# ---- the independent reading: a few lines of Perl over the text ----------
# a frame's function (CPython's file:func:line -> func) and its nytprof.out sub
sub unesc { my $f = shift; $f =~ s/\\x([0-9A-Fa-f]{2})/chr hex $1/ge; $f }
sub func_of {
    my $f = unesc(shift);
    return $f =~ /\A(?!.*::)[^:]+:(.+):\d{1,9}\z/s ? $1 : $f;
}
sub sub_of {
    my $f = unesc(shift);
    if ($f =~ /\A(?!.*::)([^:]+):(.+):\d{1,9}\z/s) {
        my ($file, $func) = ($1, $2);
        my $pkg = $file =~ /\A<frozen (.+)>\z/ ? $1 : $file =~ /\A</ ? 'main'
            : ($file =~ s{.*[/\\]}{}r =~ s/(?<=.)\.[^.]*\z//r);
        return "${pkg}::" . ($func =~ s/\./::/gr);
    }
    return $f =~ /\A(?:<.*>|.*::\z|::.*)\z/s || $f !~ /::/ ? "main::$f" : $f;
}
sub strip_root { my $s = shift; $s =~ s/\A(?:(?:pid:[^;]+|process \d+:[^;]*);)?(?:(?:tid:[^;]+|thread \([^;]*\));)?//; $s }
# { total, flat => { name => w }, cum => { name => w } } by $name_of
sub weights {
    my ($text, $name_of) = @_;
    my %r = (total => 0, flat => {}, cum => {});
    for (split /\r?\n/, $text) {
        my ($stack, $w) = /\A(.*?)[ \t]+(\d+)\z/ or next;
        next unless $w;
        my @names = map { $name_of->($_) } split /;/, strip_root($stack);
        $r{total} += $w;
        $r{flat}{ $names[-1] } += $w if @names;
        my %seen;
        $r{cum}{$_} += $w for grep { !$seen{$_}++ } @names;
    }
    return \%r;
}
# the same from for_chunks: SUB_CALLERS exclusive / inclusive seconds as ticks
sub chunk_weights {
    my ($in) = @_;
    my %r = (flat => {}, cum => {});
    my $tps;
    &Devel::ProfileBridge::ReadStream::for_chunks({
        ATTRIBUTE   => sub { $tps = $_[2] if $_[1] eq 'ticks_per_sec' },
        SUB_CALLERS => sub { $r{flat}{ $_[8] } += $_[5]; $r{cum}{ $_[8] } += $_[4] },
    }, filename => $in, quiet => 1);
    for my $k (qw(flat cum)) {
        %{ $r{$k} } = map { (Encode::encode_utf8($_) => $r{$k}{$_}) } keys %{ $r{$k} };
        $_ = sprintf('%.0f', $_ * $tps) for values %{ $r{$k} };
        delete $r{$k}{$_} for grep { !$r{$k}{$_} } keys %{ $r{$k} };
    }
    $r{total} = 0;
    $r{total} += $_ for values %{ $r{flat} };
    return \%r;
}
sub same {
    my ($got, $want, $what) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    is($got->{total}, $want->{total}, "$what: total $want->{total}");
    is_deeply([ first_differences($got->{flat}, $want->{flat}, 4) ], [],
        "$what: flat weights of " . scalar(keys %{ $want->{flat} }) . ' functions');
    is_deeply([ first_differences($got->{cum}, $want->{cum}, 4) ], [],
        "$what: cumulative weights of " . scalar(keys %{ $want->{cum} }) . ' functions');
}

my $go = go_for_pprof($tmp);
$ENV{PPROF_TMPDIR} = $tmp;
my ($html) = grep { -x } map { "$_/nytprofhtml" } split /:/, $ENV{PATH};

for my $in (@files) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my $text = slurp($in);
    is(Devel::ProfileBridge::detect_format($in)->{format}, 'folded', "$label: detected as folded stacks");

    # --to collapsed, and read back
    my ($c1, $c2) = ("$tmp/c1.folded", "$tmp/c2.folded");
    unlink $c1, $c2;
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $in, out => $c1, to => 'collapsed') }), "$label: --to collapsed")
        or diag $@;
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $c1, out => $c2, to => 'collapsed') }),
        "$label: ... read back") or diag $@;
    ok(slurp($c1) eq slurp($c2), "$label: --to collapsed read back equals itself, byte for byte");
    ok($text eq slurp($c1), "$label: our own collapsed output reads back as itself") if $label =~ m{/ours_};

    my $truth = weights($text, \&func_of);
    ok($truth->{total} > 0, "$label: $truth->{total} in all");
    same(weights(slurp($c1), \&func_of), $truth, "$label: --to collapsed");
    same(chunk_weights($in), weights($text, \&sub_of), "$label: for_chunks");

    # nytprofhtml: the conversion rendered, every sub listed
    SKIP: {
        skip 'nytprofhtml not found', 3 unless $html;
        my $nyt = "$tmp/r.nytprof";
        unlink $nyt;
        ok(quietly(sub { Devel::ProfileBridge::convert(in => $in, out => $nyt) }), "$label: converted to nytprof.out");
        my $dir = "$tmp/html";
        system("rm -rf '$dir'; cd '$tmp' && '$html' -f '$nyt' -o '$dir' > '$dir.out' 2> '$dir.err'");
        is($? >> 8, 0, "$label: nytprofhtml exits 0");
        my @err = grep { !/\A(?:Extracting subroutine (?:call data|links)|Generating subroutine stack flame graph)\b/
                && !/\ADeep recursion on subroutine "/ } split /\n/, slurp("$dir.err");
        is_deeply(\@err, [], "$label: nothing on nytprofhtml's stderr but its progress lines");
        my $list = Encode::decode('UTF-8', slurp(-e "$dir/index-subs-excl.html" ? "$dir/index-subs-excl.html"
            : "$dir/index.html"));
        $list =~ s/<span style="display: none;">[^<]*<\/span>//g;
        $list =~ s/<\/?(?:td|th|tr|table|div|p|br|li|h\d)\b[^>]*>/ /gi;
        $list =~ s/<[^>]*>//g;
        $list =~ s/&nbsp;/ /g;
        $list =~ s/&lt;/</g; $list =~ s/&gt;/>/g; $list =~ s/&amp;/&/g; $list =~ s/&quot;/"/g;
        my @subs = map { Devel::ProfileBridge::nytprof_name(Encode::decode('UTF-8', $_)) } keys %{ weights($text, \&sub_of)->{cum} };
        my @missing = grep { $list !~ /(?:^|[\s:])\Q$_\E(?=\s|\z)/m } sort @subs;
        is_deeply(\@missing, [], "$label: all its " . scalar(@subs) . ' subs in the report\'s list of subs');
        ok(-s "$dir/all_stacks_by_time.svg", "$label: ... and a flame graph");
    }

    # --to pprof, read back by go tool pprof -raw
    SKIP: {
        skip 'go (golang-go) not found', 3 unless $go;
        my $pb = "$tmp/p.pb.gz";
        unlink $pb;
        ok(quietly(sub { Devel::ProfileBridge::convert(in => $in, out => $pb, to => 'pprof') }), "$label: --to pprof");
        my $raw = `"$go" tool pprof -raw "$pb" 2>&1`;
        my (%loc, %got, $stack, $w);
        for (split /\n/, $raw) {
            $loc{$1} = $2 if /^\s*(\d+): 0x[0-9a-f]+ M=\d+ (.+?) (?:<[^>]*>|[^ ]*):-?\d+ s=/;
        }
        for (split /\n/, $raw) {
            if (/^\s+(\d+)(?:\s+-?\d+)?: ([\d ]+?)\s*\z/) { ($w, $stack) = ($1, [ reverse split / /, $2 ]) }
            elsif ($stack && /^\s+thread:\[(.*)\]\z/) {
                $got{ join ';', $1, map { $loc{$_} } @$stack } += $w;
                undef $stack;
            }
        }
        my $want = folded_weights($c1, thread => 1);
        is_deeply([ first_differences(\%got, $want, 4) ], [],
            "$label: go tool pprof -raw reads our collapsed stacks back (" . scalar(keys %$want) . ')');
        my ($shown) = `"$go" tool pprof -top -nodecount=1 "$pb" 2>&1` =~ /of (\d+) total/;
        is($shown, $truth->{total}, "$label: go tool pprof -top shows the counts by default (of $truth->{total} total)");
    }
}

# merge with a Tachyon file: every stack the sum of its parts (a folded unit
# is 1 ns in a merge, a Tachyon sample its interval)
{
    my ($f, $t) = ("$d/folded/cpython315_replay.collapsed", "$d/tachyon/multithread.bin");
    my %want;
    for my $p ([ $f, 1 ], [ $t, weight_unit_ns($t) ]) {
        quietly(sub { Devel::ProfileBridge::convert(in => $p->[0], out => "$tmp/part.folded", to => 'collapsed') });
        my $w = folded_weights("$tmp/part.folded", unit => $p->[1]);
        $want{$_} += $w->{$_} for keys %$w;
    }
    ok(quietly(sub { Devel::ProfileBridge::merge(in => [ $f, $t ], out => "$tmp/m.folded", to => 'collapsed') }),
        'merge of folded stacks and a Tachyon file') or diag $@;
    my $got = folded_weights("$tmp/m.folded");
    is_deeply([ first_differences($got, \%want, 4) ], [], 'every merged stack weighs the sum of its parts ('
        . scalar(keys %want) . ')');
}

# --to statprofiler (every sample target): the traces read back hold every sample
SKIP: {
    skip 'no snappy in this build', 2 unless Devel::ProfileBridge::features()->{write}{statprofiler};
    my $in = "$d/folded/cpython315_replay.collapsed";
    mkdir "$tmp/sp";
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $in, out => "$tmp/sp/out", to => 'statprofiler') }),
        'folded stacks to StatProfiler traces') or diag $@;
    my $total = 0;
    for my $f (glob "$tmp/sp/out.*") {
        quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/sp.folded", to => 'collapsed') });
        $total += $_ for values %{ folded_weights("$tmp/sp.folded") };
    }
    is($total, weights(slurp($in), \&func_of)->{total}, "... which read back hold all $total samples");
}

# ---- root frames, --thread, detection ---------------------------------------
{
    my $f = "$tmp/roots.folded";
    spew($f, "pid:7;tid:1;a;b 3\npid:7;tid:2;a 4\nprocess 9:\"python x.py\";thread (0x1F);c 5\n"
        . "tid:1;a;b 1\r\nd;e 2\n\n");
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed') }),
        'root frames: read') or diag $@;
    is(slurp("$tmp/roots.out"), "tid:9/0x1F;c 5\ntid:7/2;a 4\ntid:7/1;a;b 3\ntid:4;d;e 2\ntid:1;a;b 1\n",
        'pid:/tid: and py-spy\'s process/thread roots split threads (process/thread); CRLF, blank lines');
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed', thread => 2) }),
        '--thread 2') or diag $@;
    is(slurp("$tmp/roots.out"), "tid:7/2;a 4\n", '--thread N takes the thread part of a process/thread label');
    ok(!quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed', thread => 99) }),
        '--thread 99: none');
    like($@, qr/^folded: unsupported: \S+roots\.folded: no thread 99 in this file \(its threads: 7\/1, 7\/2, 9\/0x1F, 1, \)/,
        '... says which threads there are');
    spew($f, "main::a;main::b 5");
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed') }),
        'a last line without its newline');
    is(slurp("$tmp/roots.out"), "tid:0;main::a;main::b 5\n", '... is read; no root: one thread');
    spew($f, "main::caf\xe9;main::x 3\n");
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed') }),
        'a name that is not UTF-8');
    is(slurp("$tmp/roots.out"), "tid:0;main::caf\xc3\xa9;main::x 3\n", '... is Latin-1 (as nytprofcalls prints such names)');
    my %det = ("NYTProf 5 0\n" => 'nytprof', "{\"traceEvents\": 1}\n" => undef, "hello world\n" => undef,
        "a;b 1\nnot a stack\n" => undef, "a;b 1\n\0\n" => undef, " a;b 1\n" => undef, "a;b 12\n\na 1\n" => 'folded',
        join(';', map { "m.py:f:$_" } 1 .. 800) . " 5\n" => 'folded', join(';', map { "a{b:c$_}" } 1 .. 800) . "\n" => undef);
    for my $in (sort keys %det) {
        spew("$tmp/det", $in);
        my $i = Devel::ProfileBridge::detect_format("$tmp/det");
        is($i && $i->{format}, $det{$in}, 'detected ' . ($det{$in} // 'as nothing') . ': '
            . substr($in =~ s/\n/\\n/gr =~ s/\0/\\0/gr, 0, 40));
    }
}

# ---- bad input -----------------------------------------------------------------
my @bad = (
    [ "a;b 1\nc;d\n", qr/^folded: corrupt: line 2 does not end in white space and a weight \(an integer\) at byte 9 of / ],
    [ "a;b 1\na;;b 2\n", qr/^folded: corrupt: line 2 has an empty frame .* at byte 8 of / ],
    [ "a;b 1\n  x 3\n", qr/^folded: corrupt: line 2 starts with white space at byte 6 of / ],
    [ "a;b 1\na\x01b 3\n", qr/^folded: corrupt: line 2 holds a control character .* at byte 7 of / ],
    [ "a;b 99999999999999999999\n", qr/^folded: limit: line 1: its weight does not fit 63 bits at byte 3 of / ],
    [ "a;b 1\n" . ('x;' x 50) . "x 1\n", qr/^folded: limit: line 2 has more than 20 frames \(max_stack_depth\) at byte 46 of /,
        max_stack_depth => 20 ],
    [ "a;b 1\n" . ('y' x 5000) . " 1\n", qr/^folded: limit: line 2 is longer than 1024 bytes \(max_record_size\) at byte 6 of /,
        max_record_size => 1024 ],
    [ "a;b 1\nc;d 1\ne 1\n", qr/^folded: limit: more than 3 unique frames \(max_frames\) at byte 8 of /, max_frames => 3 ],
);
for my $b (@bad) {
    my ($text, $re, %opt) = @$b;
    my $f = "$tmp/bad.folded";
    spew($f, $text);
    ok(!quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/bad.out", to => 'collapsed', format => 'folded', %opt) }),
        'bad input refused: ' . substr($text =~ s/\n/\\n/gr =~ s/\x01/\\x01/gr, 0, 40));
    like($@, $re, '... with its message');
}

done_testing();
