#!perl
# Reading folded stacks (issues 29, 34, 35): every folded file of t/data,
# made by the real tools (CPython 3.15's `profiling.sampling replay
# --collapsed`, Devel::NYTProf's nytprofcalls, our own --to collapsed; the
# CPython outputs beside the Tachyon files too), each against a few lines of
# Perl over the file's own text (never against our own output):
#  * folded in, folded out: --to collapsed gives the input's own stack lines,
#    weights summed per identical line (file:func:line frames, root frames or
#    none, as written); CPython's and our own files come back byte for byte;
#  * per-function flat (self) and cumulative weights from for_chunks
#    (SUB_CALLERS: exclusive and inclusive time, one unit of weight = 1 tick
#    at ticks_per_sec 1000000);
#  * nytprofhtml (the REAL one) renders the conversion, nothing on its stderr
#    but progress lines, every sub of the file in its list of subs;
#  * --to pprof, read back by the REAL `go tool pprof -raw`: every stack of
#    functions (and its thread) with its weight;
#  * merge (one process and two workers): every stack the sum of its parts;
#  * the two-column (differential) form "stack BEFORE AFTER" as the two sample
#    types before/samples and after/samples; a UTF-8 byte order mark; names that
#    are not UTF-8;
#  * detection by content, root frames (tid:, pid:, py-spy's process/thread),
#    --thread, and the bad-input messages.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd);
use Stacks qw(slurp folded_weights weight_unit_ns first_differences go_for_pprof refused_texts nytprofhtml_ok);
use File::Temp qw(tempdir);
use Encode ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb35-XXXXXX', TMPDIR => 1, CLEANUP => 1);
# every folded file of t/data: ours, nytprofcalls', CPython's (an empty one
# too: a run whose replay held no samples)
my @files = (glob("$d/folded/*.collapsed"), glob("$d/folded/*.folded"), glob("$d/tachyon/*.collapsed.txt"),
    glob("$d/tachyon/*/*.collapsed.txt"));
# the real readers (nytprofhtml, go tool pprof) take a few seconds each: one
# file of each tool, and the deepest and widest of CPython's
my %heavy = map { ("$d/$_" => 1) } qw(folded/cpython315_replay.collapsed folded/ours_ep_threads.collapsed
    folded/ours_multithread.collapsed folded/ours_synthetic-utf8.collapsed folded/nytprofcalls_modapp.folded
    folded/nytprofcalls_recursion.folded folded/nytprofcalls_synthetic-utf8.folded
    tachyon/real315/multithread_cpu_none.bin.collapsed.txt tachyon/real315/lambdas_classes_opcodes_zstd.bin.collapsed.txt
    tachyon/real315/recursive_cpu_nogc_none.bin.collapsed.txt);

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
# the root frames of a stack line, and its thread label as the reader makes
# it ("T", "P/T"; '' for none)
sub root_label {
    my ($s) = @_;
    my @l;
    push @l, $1 // $2 if $s =~ s/\A(?:pid:([^;]+)|process (\d+):[^;]*)(?:;|\z)//;
    push @l, $1 // $2 if $s =~ /\A(?:tid:([^;]+)|thread \(([^;]*)\))(?:;|\z)/;
    return join '/', @l;
}
# { stack line => summed weight } of folded text: what folded in, folded out
# must give (lines of weight 0 count nothing)
sub line_sums {
    my %w;
    for (split /\r?\n/, $_[0]) {
        my ($stack, $w) = /\A(.*?)[ \t]+(\d+)\z/ or next;
        $w{$stack} += $w if $w;
    }
    return \%w;
}
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
    my ($in, %opt) = @_;
    my %r = (flat => {}, cum => {});
    my $tps;
    &Devel::ProfileBridge::ReadStream::for_chunks({
        ATTRIBUTE   => sub { $tps = $_[2] if $_[1] eq 'ticks_per_sec' },
        SUB_CALLERS => sub { $r{flat}{ $_[8] } += $_[5]; $r{cum}{ $_[8] } += $_[4] },
    }, filename => $in, quiet => 1, %opt);
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
    if (!length $text) {    # CPython's replay of a run with no samples
        ok(quietly(sub { Devel::ProfileBridge::convert(in => $in, out => "$tmp/e.folded", to => 'collapsed',
            format => 'folded') }), "$label: an empty file read as folded stacks") or diag $@;
        is(slurp("$tmp/e.folded"), '', '... gives no stacks');
        next;
    }
    is(Devel::ProfileBridge::detect_format($in)->{format}, 'folded', "$label: detected as folded stacks");

    # folded in, folded out: the input's own lines, weights summed per line
    my $c1 = "$tmp/c1.folded";
    unlink $c1;
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $in, out => $c1, to => 'collapsed') }), "$label: --to collapsed")
        or diag $@;
    my $out = slurp($c1);
    my $want = line_sums($text);
    my @lines = split /\n/, $out;
    is(scalar(@lines), scalar(keys %$want), "$label: one output line per distinct stack line of the input ("
        . scalar(keys %$want) . ')');
    is_deeply([ first_differences(line_sums($out), $want, 4) ], [],
        "$label: folded in, folded out: every stack line as written, with its summed weight");
    # CPython writes each stack once, sorted by count then text, as we do
    ok($text eq $out, "$label: read and written back, the file itself, byte for byte")
        if $label =~ m{/ours_|/cpython315_|\.collapsed\.txt\z};

    my $truth = weights($text, \&func_of);
    ok($truth->{total} > 0, "$label: $truth->{total} in all");
    same(chunk_weights($in), weights($text, \&sub_of), "$label: for_chunks");
    next unless $heavy{$in};

    # nytprofhtml: the conversion rendered, every sub listed
    SKIP: {
        skip 'nytprofhtml not found', 3 unless $html;
        my $nyt = "$tmp/r.nytprof";
        unlink $nyt;
        ok(quietly(sub { Devel::ProfileBridge::convert(in => $in, out => $nyt) }), "$label: converted to nytprof.out");
        my $dir = "$tmp/html";
        nytprofhtml_ok($html, $nyt, $dir, $label);
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
        # the truth: the input's functions per stack, under the thread its root frames name
        my (%want, $roots);
        for my $line (split /\r?\n/, $text) {
            my ($stack, $w) = $line =~ /\A(.*?)[ \t]+(\d+)\z/ or next;
            next unless $w;
            my $t = root_label($stack);
            $roots ||= length $t;
            $want{ join ';', $t, map { func_of($_) } split /;/, strip_root($stack) } += $w;
        }
        %got = map { ($roots ? $_ : s/\A[^;]*//r) => $got{$_} } keys %got;    # no roots: one thread
        is_deeply([ first_differences(\%got, \%want, 4) ], [],
            "$label: go tool pprof -raw: every stack of functions, its thread and weight (" . scalar(keys %want) . ')');
        my ($shown) = `"$go" tool pprof -top -nodecount=1 "$pb" 2>&1` =~ /of (\d+) total/;
        is($shown, $truth->{total}, "$label: go tool pprof -top shows the counts by default (of $truth->{total} total)");
    }
}

# merge: every stack the sum of its parts, from the inputs' text (a folded
# unit is 1 ns in a merge, a Tachyon sample its interval)
{
    my ($f, $g, $t) = map { "$d/$_" } qw(folded/cpython315_replay.collapsed tachyon/multithread.bin.collapsed.txt
        tachyon/multithread.bin);
    my ($fw, $gw) = map { line_sums(slurp($_)) } $f, $g;
    my %want = %$fw;
    $want{$_} += $gw->{$_} for keys %$gw;
    for my $jobs (1, 2) {
        unlink "$tmp/m.folded";
        ok(quietly(sub { Devel::ProfileBridge::merge(in => [ $f, $g ], out => "$tmp/m.folded", to => 'collapsed',
            jobs => $jobs) }), "merge of two folded files (jobs => $jobs)") or diag $@;
        is_deeply([ first_differences(line_sums(slurp("$tmp/m.folded")), \%want, 4) ], [],
            '... every stack line as written, weighing the sum of its parts (' . scalar(keys %want) . ')');
    }
    ok(quietly(sub { Devel::ProfileBridge::merge(in => [ $f, $t ], out => "$tmp/m.folded", to => 'collapsed') }),
        'merge of folded stacks and a Tachyon file') or diag $@;
    my $got = line_sums(slurp("$tmp/m.folded"));
    is_deeply([ first_differences({ map { ($_ => $got->{$_}) } keys %$fw }, $fw, 4) ], [],
        '... the folded file\'s lines as written, with their weights');
    my $sum = sub { my $n = 0; $n += $_ for values %{ $_[0] }; $n };
    is($sum->($got), $sum->($fw) + $sum->($gw) * weight_unit_ns($t),
        '... in all the folded total + the Tachyon samples (as CPython replays them) x its interval');
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
    is(slurp("$tmp/roots.out"), "process 9:\"python x.py\";thread (0x1F);c 5\npid:7;tid:2;a 4\npid:7;tid:1;a;b 3\nd;e 2\n"
        . "tid:1;a;b 1\n", 'pid:/tid: and py-spy\'s process/thread roots split threads and are written back as they '
        . 'were (no root: none); CRLF, blank lines');
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed', thread => 2) }),
        '--thread 2') or diag $@;
    is(slurp("$tmp/roots.out"), "pid:7;tid:2;a 4\n", '--thread N takes the thread part of a process/thread label');
    ok(!quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed', thread => 99) }),
        '--thread 99: none');
    like($@, qr/^folded: unsupported: \S+roots\.folded: no thread 99 in this file \(its threads: 7\/1, 7\/2, 9\/0x1F, 1, \(lines without tid:\)\)/,
        '... says which threads there are');
    spew($f, "main::a;main::b 5");
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed') }),
        'a last line without its newline');
    is(slurp("$tmp/roots.out"), "main::a;main::b 5\n", '... is read; no root: one thread, no root written');

    # names are UTF-8: a byte that is not is \xNN in every output, the escape
    # that reads back as the byte
    spew($f, "main::caf\xe9;main::x 3\nmain::caf\xc3\xa9;main::x 4\n");
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed') }),
        'a name that is not UTF-8');
    is(slurp("$tmp/roots.out"), "main::caf\xc3\xa9;main::x 4\nmain::caf\\xE9;main::x 3\n",
        '... its byte written as \\xE9 (valid UTF-8 as it is)');
    ok(quietly(sub { Devel::ProfileBridge::convert(in => "$tmp/roots.out", out => "$tmp/roots2.out", to => 'collapsed') }),
        '... read back');
    # the escape reads back as the byte, which is written as the escape again
    is(slurp("$tmp/roots2.out"), "main::caf\xc3\xa9;main::x 4\nmain::caf\\xE9;main::x 3\n", '... the same lines');
    my %subs;
    &Devel::ProfileBridge::ReadStream::for_chunks({ SUB_INFO => sub { $subs{ $_[4] } = 1 } }, filename => $f, quiet => 1);
    is_deeply([ sort map { Encode::encode_utf8($_) } keys %subs ], [ 'main::RUNTIME', "main::caf\\xE9", "main::caf\xc3\xa9", 'main::x' ],
        '... and the same name in the chunks (nytprof.out)');
    spew($f, "tid:caf\xe9;a 1\ntid:\xe6\x9d\xb1;b 2\n");
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed') }),
        'root frames that are UTF-8 and not');
    is(slurp("$tmp/roots.out"), "tid:\xe6\x9d\xb1;b 2\ntid:caf\\xE9;a 1\n", '... written back by the same rule');
    my @names;
    &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { push @names, $_[2] if $_[1] =~ /\Athread_id_/ } },
        filename => $f, quiet => 1);
    is_deeply([ sort @names ], [ 'caf\xE9', "\xe6\x9d\xb1" ], '... and the thread names in the chunks likewise (UTF-8)');

    # a UTF-8 byte order mark is no part of the first frame
    spew($f, "\xEF\xBB\xBFa;b 5\r\na;c 2\r\n");
    is(Devel::ProfileBridge::detect_format($f)->{format}, 'folded', 'a file with a UTF-8 BOM: detected');
    ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/roots.out", to => 'collapsed') }), '... read');
    is(slurp("$tmp/roots.out"), "a;b 5\na;c 2\n", '... without the mark');
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

# ---- the two-column (differential) form: "stack BEFORE AFTER" -------------------
# difffolded.pl's output and our diff's, flamegraph.pl's differential input:
# two sample types, before/samples and after/samples (the default, as the last
# type is pprof's and the widths flamegraph.pl draws)
{
    my $f = "$tmp/two.folded";
    my $text = "a;b 5 6\na;c 1 0\nd 0 7\r\ntid:3;a;b 2 2\na;b 1 1\n";
    spew($f, $text);
    my %col;    # the truth: each column's sums per stack line
    for (split /\r?\n/, $text) {
        my ($stack, @w) = /\A(.*?)[ \t]+(\d+)[ \t]+(\d+)\z/ or die;
        for my $i (0, 1) { $col{$i}{$stack} += $w[$i] if $w[$i] }
    }
    is(Devel::ProfileBridge::detect_format($f)->{format}, 'folded', 'two columns: detected as folded stacks');
    my ($info) = Devel::ProfileBridge::info($f);
    is_deeply($info->{sample_types}, [ 'before/samples', 'after/samples' ], 'info lists the two sample types');
    is($info->{sample_type}, 'after/samples', '... and reads AFTER by default');
    is((Devel::ProfileBridge::info($f, sample_type => 'before'))[0]{sample_type}, 'before/samples',
        '... BEFORE with sample_type => before');
    for my $t ([ undef, 1 ], [ 'after', 1 ], [ 'before', 0 ]) {
        my ($type, $i) = @$t;
        unlink "$tmp/two.out";
        ok(quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/two.out", to => 'collapsed',
            defined $type ? (sample_type => $type) : ()) }), 'two columns, sample type ' . ($type // 'by default'))
            or diag $@;
        is_deeply(line_sums(slurp("$tmp/two.out")), $col{$i}, '... each stack line with its ' . ($i ? 'AFTER' : 'BEFORE')
            . ' weight');
        my $sum = 0;
        $sum += $_ for values %{ $col{$i} };
        is(chunk_weights($f, defined $type ? (sample_type => $type) : ())->{total}, $sum, "... $sum in the chunks");
    }
    ok(!quietly(sub { Devel::ProfileBridge::convert(in => $f, out => "$tmp/two.out", to => 'collapsed',
        sample_type => 'cpu') }), 'sample_type => cpu: none of them');
    like($@, qr/^folded: unsupported: .*no sample type "cpu" in this file \(its types: before\/samples, after\/samples/,
        '... says which there are');
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
    [ "a;b 1\na;c 2 3\n", qr/^folded: corrupt: line 2 has two weight columns where line 1 has one \(the two-column form is "stack BEFORE AFTER" on every line\) at byte 9 of / ],
    [ "\na;b 1 2\na;c 3\n", qr/^folded: corrupt: line 3 has one weight column where line 2 has two .* at byte 12 of / ],
);
refused_texts(folded => $tmp, @bad);

done_testing();
