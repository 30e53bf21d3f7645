#!perl
# pprof profile.proto input (issue 29), against the REAL reader, go tool
# pprof: every file of t/data/pprof (Go runtime/pprof CPU and heap profiles,
# gen_labels.go's numeric tid/pid labels, the CPU profile ungzipped) is read
#  * by for_chunks (Devel::ProfileBridge::ReadStream): the sampled total and
#    each function's flat (SUB_CALLERS exclusive) and cumulative (inclusive,
#    outermost activation) weights;
#  * by convert(to => 'collapsed'): the same totals from its stacks;
# and both equal go tool pprof -top's flat and cum columns, saved beside the
# file (FILE.top-flat.txt, made with -nodefraction=0 -unit=ns, or =B for
# bytes) and, where go is installed, printed by it here and now.  Also: the
# stacks (leaf to root) are -raw's; --to pprof read back is our collapsed
# output; nytprofhtml renders the conversion with every function named in
# its pages and flame graph; merge with a Tachyon profile is the sum of the
# parts; threads and processes come from the labels; info lists the sample
# types; --sample-type reads another.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Stacks qw(slurp folded_weights first_differences go_for_pprof);
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data/pprof";
my $tmp = tempdir('pb33-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $go = go_for_pprof($tmp);
$ENV{PPROF_TMPDIR} = $tmp;
my @files = (glob("$d/*.prof"), "$d/cpu_inline.pb");
plan skip_all => "no pprof files in $d" unless -f $files[0];

# pprof's function name -> the nytprof.out sub (read_pprof.c: Go's package path, "/" -> "::")
sub sub_of {
    my ($n) = @_;
    my ($pkg, $rest) = $n =~ m{\A((?:[^(\[ ]*/)?[^./(\[ ]+)\.(.+)\z}s or return "main::$n";
    $pkg =~ s{/}{::}g;
    return "${pkg}::$rest";
}

# go tool pprof -top output: (total, { function => flat }, { function => cum })
sub parse_top {
    my ($text) = @_;
    my ($total) = $text =~ /accounting for \S+, 100% of (\d+)(?:ns|B)? total/ or return;
    my (%flat, %cum);
    for (split /\n/, $text) {
        my ($f, $c, $name) = /\A\s*(\d+)(?:ns|B)?\s+\S+\s+\S+\s+(\d+)(?:ns|B)?\s+\S+\s+(.*?)(?: \((?:partial-)?inline\))?\z/
            or next;
        $flat{$name} += $f;
        $cum{$name} = $c;
    }
    return ($total, \%flat, \%cum);
}

# collapsed stacks -> (total, flat, cum) by function name
sub from_stacks {
    my ($w) = @_;
    my ($total, %flat, %cum) = (0);
    for my $s (keys %$w) {
        my @f = split /;/, $s;
        $total += $w->{$s};
        $flat{ $f[-1] } += $w->{$s};
        my %seen;
        $cum{$_} += $w->{$s} for grep { !$seen{$_}++ } @f;
    }
    return ($total, \%flat, \%cum);
}

# for_chunks: (total, flat, cum) by sub, from SUB_CALLERS (seconds -> ns)
sub from_chunks {
    my ($file, %o) = @_;
    my ($total, %flat, %cum, %attr) = (0);
    &Devel::ProfileBridge::ReadStream::for_chunks({
            SUB_CALLERS => sub {
                my (undef, undef, undef, undef, $incl, $excl, undef, undef, $callee) = @_;
                $flat{$callee} += sprintf '%.0f', $excl * 1e9;
                $cum{$callee} += sprintf '%.0f', $incl * 1e9;
            },
            ATTRIBUTE => sub { $attr{ $_[1] } = $_[2] },
        },
        filename => $file, %o);
    $total += $flat{$_} for keys %flat;
    return ($total, \%flat, \%cum, \%attr);
}

sub collapsed_of {
    my ($in, %o) = @_;
    my $out = "$tmp/c.folded";
    unlink $out;
    Devel::ProfileBridge::convert(in => $in, out => $out, to => 'collapsed', %o);
    return $out;
}

# the names of a table mapped by sub_of, values summed
sub by_sub { my ($h) = @_; my %s; $s{ sub_of($_) } += $h->{$_} for keys %$h; return \%s }
sub nonzero { my ($h) = @_; return { map { $h->{$_} ? ($_ => $h->{$_}) : () } keys %$h } }

for my $in (@files) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    (my $truth = $in) =~ s/\.pb\z/.prof/;    # the ungzipped twin has its original's truth
    my $unit = $in =~ /heap/ ? 'B' : 'ns';
    my ($t_total, $t_flat, $t_cum) = parse_top(slurp("$truth.top-flat.txt"));
    ok($t_total, "$label: the saved go tool pprof -top parses (total $t_total)") or next;
    if ($go) {
        my $live = `"$go" tool pprof -top -flat -nodecount=100000 -nodefraction=0 -edgefraction=0 -unit=$unit "$in" 2>&1`;
        my ($l_total, $l_flat, $l_cum) = parse_top($live);
        is_deeply([ $l_total, $l_flat, $l_cum ], [ $t_total, $t_flat, $t_cum ],
            "$label: go tool pprof says now what the saved truth says");
    }

    # collapsed
    my $w = folded_weights(collapsed_of($in));
    my ($c_total, $c_flat, $c_cum) = from_stacks($w);
    is($c_total, $t_total, "$label: collapsed total = go tool pprof's ($t_total $unit)");
    is_deeply([ first_differences(nonzero($c_flat), nonzero($t_flat), 4) ], [], "$label: collapsed flat per function");
    is_deeply([ first_differences($c_cum, $t_cum, 4) ], [], "$label: collapsed cum per function ("
        . scalar(keys %$t_cum) . ')');

    # for_chunks
    my ($k_total, $k_flat, $k_cum, $attr) = from_chunks($in);
    is($k_total, $t_total, "$label: for_chunks total = go tool pprof's");
    is_deeply([ first_differences(nonzero($k_flat), nonzero(by_sub($t_flat)), 4) ], [],
        "$label: for_chunks flat (SUB_CALLERS exclusive) per sub");
    is_deeply([ first_differences($k_cum, by_sub($t_cum), 4) ], [],
        "$label: for_chunks cum (SUB_CALLERS inclusive) per sub");
    is($attr->{source_format}, 'pprof', "$label: ATTRIBUTE source_format");
    like($attr->{sample_types} // '', qr{/}, "$label: ATTRIBUTE sample_types");

    # the stacks are -raw's (leaf first there), per thread label where it has one
    my %raw;
    my $raw = slurp("$truth.raw.txt");
    my ($samples) = $raw =~ /\nSamples:\n.*?\n(.*?)\nLocations\n/s;
    my %loc;
    my ($locs) = $raw =~ /\nLocations\n(.*?)\nMappings\n/s;
    my $cur;
    for (split /\n/, $locs) {
        if (/\A\s*(\d+): 0x\S+ M=\d+ (.*?) \S+:\d+ s=\d+\z/) { $cur = $1; $loc{$cur} = [$2] }
        elsif (defined $cur && /\A\s+(.*?) \S+:\d+ s=\d+\z/) { push @{ $loc{$cur} }, $1 }
    }
    my @types = split ' ', ($raw =~ /\nSamples:\n(.*?)\n/)[0];
    my $vi = $in =~ /heap/ ? 3 : $#types;
    for (split /\n/, $samples) {
        my ($vals, $ids) = /\A\s*([-\d ]+?):\s*([\d ]*?)\s*\z/ or next;
        my @v = split ' ', $vals;
        next unless $v[$vi];
        my @frames = map { @{ $loc{$_} } } split ' ', $ids;
        $raw{ join ';', reverse @frames } += $v[$vi];
    }
    my %ours;
    $ours{$_} += $w->{$_} for keys %$w;
    is_deeply([ first_differences(\%ours, \%raw, 4) ], [], "$label: every stack and weight is go tool pprof -raw's ("
        . scalar(keys %raw) . ' stacks)');

    # round trip: our pprof output read back is our collapsed output
    my $pb = "$tmp/rt.pb.gz";
    unlink $pb;
    Devel::ProfileBridge::convert(in => $in, out => $pb, to => 'pprof');
    my $before = folded_weights(collapsed_of($in), thread => 1);
    my $after = folded_weights(collapsed_of($pb), thread => 1);
    is_deeply([ first_differences($after, $before, 4) ], [], "$label: --to pprof read back = our collapsed output");
}

# threads and processes from labels
{
    my $w = folded_weights(collapsed_of("$d/cpu_inline.prof"), thread => 1);
    my %threads = map { (split /;/)[0] => 1 } keys %$w;
    is_deeply([ sort keys %threads ], [qw(main worker-a worker-b)], 'cpu_inline: pprof.Labels("thread", ...) split threads');
    my %t;
    for my $s (keys %$w) { my ($th) = split /;/, $s; $t{$th} += $w->{$s} }
    # each thread's weight is go tool pprof -traces' for that thread label (unlabelled: main)
    my %want;
    for my $block (split /^-+\+-+\n/m, slurp("$d/cpu_inline.prof.traces.txt")) {
        my ($v) = $block =~ /^\s*(\d+)ms\s{3}/m or next;
        my ($th) = $block =~ /^\s+thread:\s+(\S+)$/m;
        $want{ $th // 'main' } += $v * 1e6;
    }
    is_deeply(\%t, \%want, 'cpu_inline: each thread weighs what -traces shows for its label');
    my ($info) = Devel::ProfileBridge::info("$d/labels.prof");
    my %proc = map { ($_->{id} // '') => $_->{process} } @{ $info->{threads} };
    is_deeply(\%proc, { 100 => 4000, 101 => 4001, 102 => 4000, 'io-loop' => 4001 },
        'labels: numeric tid labels (and a thread name) split threads, pid labels processes');
    my $one = folded_weights(collapsed_of("$d/labels.prof", thread => 101), thread => 1);
    is_deeply([ sort keys %{ { map { (split /;/)[0] => 1 } keys %$one } } ], ['101'], 'labels: thread => 101 keeps one');
    is_deeply($info->{sample_types}, [qw(samples/count cpu/nanoseconds)], 'info lists the sample types');
    is($info->{sample_type}, 'cpu/nanoseconds', 'info: the last one is read');
    my ($heap) = Devel::ProfileBridge::info("$d/heap.prof");
    is($heap->{sample_type}, 'inuse_space/bytes', 'heap: no default_sample_type, the last is read');
    my $alloc = folded_weights(collapsed_of("$d/heap.prof", sample_type => 'alloc_space'));
    my $total = 0;
    $total += $_ for values %$alloc;
    my $a_total = 0;
    for (split /\n/, slurp("$d/heap.prof.raw.txt")) { $a_total += $1 if /\A\s*\d+\s+(\d+)\s+\d+\s+\d+: / }
    is($total, $a_total, "sample_type => 'alloc_space' reads that column of -raw ($a_total bytes)");
    ok(!eval { collapsed_of("$d/heap.prof", sample_type => 'nope'); 1 }, 'an unknown sample type is refused');
    like("$@", qr/\Approf: unsupported: no sample type "nope" in this profile \(its types: alloc_objects\/count,/,
        '... naming the types there are');
}

# bad input: a clear "pprof: <class>: <what> at byte N of FILE", never a crash
{
    sub vint { my ($v) = @_; my $b = ''; while ($v >= 0x80) { $b .= chr(($v & 0x7f) | 0x80); $v >>= 7 } $b . chr $v }
    sub fv { vint($_[0] << 3) . vint($_[1]) }                        # a varint field
    sub fl { vint(($_[0] << 3) | 2) . vint(length $_[1]) . $_[1] }    # a length-delimited field
    my $strings = join '', map { fl(6, $_) } '', 'cpu', 'nanoseconds', 'main.f', 'f.go';
    my $types = fl(1, fv(1, 1) . fv(2, 2));
    my $func = fl(5, fv(1, 1) . fv(2, 3) . fv(4, 4));
    my $loc = fl(4, fv(1, 1) . fl(4, fv(1, 1) . fv(2, 7)));
    my $sample = sub { fl(2, fl(1, join '', map { vint($_) } @{ $_[0] }) . fl(2, join '', map { vint($_) } @{ $_[1] })) };
    my $good = $types . $sample->([1], [5]) . $loc . $func . $strings;
    my %bad = (
        'string_table[0] not empty' => [ $types . $loc . $func . fl(6, 'x') . $strings,
            qr/corrupt: string_table\[0\] must be the empty string/ ],
        'a sample names a location there is not' => [ $types . $sample->([9], [5]) . $loc . $func . $strings,
            qr/corrupt: a sample names location 9, which the profile does not define at byte \d+/ ],
        'a location names a function there is not' => [ $types . $sample->([1], [5]) . fl(4, fv(1, 1) . fl(4, fv(1, 8)))
            . $func . $strings, qr/corrupt: location 1 names function 8/ ],
        'two values for one sample type' => [ $types . $sample->([1], [5, 6]) . $loc . $func . $strings,
            qr/corrupt: a sample has 2 values for the profile's 1 sample types/ ],
        'a negative value' => [ $types . $sample->([1], [ 18446744073709551611 ]) . $loc . $func . $strings,
            qr/unsupported: a sample's value is negative \(-5\)/ ],
        'time_nanos as a string' => [ $good . fl(9, 'x'), qr/corrupt: Profile field 9 has wire type 2, profile.proto says 0/ ],
        'a length past the end' => [ $good . vint((6 << 3) | 2) . vint(1000) . 'abc', qr/truncated: string_table entry needs 1000 more bytes/ ],
        'no sample type' => [ $sample->([1], []) . $loc . $func . $strings, qr/corrupt: the profile declares no sample_type/ ],
        'a Sample cut inside' => [ $types . vint((2 << 3) | 2) . vint(4) . "\x0a\x05\x01\x02" . $loc . $func . $strings,
            qr/corrupt: Sample: malformed protobuf field/ ],
    );
    my $gf = "$tmp/good.pb";
    open my $fh, '>:raw', $gf or die; print {$fh} $good; close $fh;
    my $w = folded_weights(collapsed_of($gf));
    is_deeply($w, { 'main.f' => 5 }, 'a hand-made profile reads (the cases below break one thing of it)');
    for my $what (sort keys %bad) {
        my $f = "$tmp/bad.pb";
        open my $bfh, '>:raw', $f or die; print {$bfh} $bad{$what}[0]; close $bfh;
        my $ok = eval { &Devel::ProfileBridge::ReadStream::for_chunks(sub { }, filename => $f, format => 'pprof'); 1 };
        my $e = $@;
        ok(!$ok && ref $e && $e->isa('Devel::ProfileBridge::Error'), "bad input, $what: an Error");
        like("$e", qr/\Approf: /, "... $what: a pprof error");
        like("$e", $bad{$what}[1], "... $what: says what");
        like("$e", qr/ at byte \d+ of \Q$f\E/, "... $what: names the byte and the file");
    }
}

# the rest of the one table's verbs: dump, diff, limits, --format
{
    my $jl = "$tmp/dump.jsonl";
    Devel::ProfileBridge::dump_json("$d/cpu_inline.prof", output => $jl);
    my @lines = split /\n/, slurp($jl);
    my ($tl) = grep { /^\["TIME_LINE"/ } @lines;
    ok(@lines > 50 && $tl, 'dump_json writes the chunk stream (' . scalar(@lines) . ' lines)');
    my $df = "$tmp/diff.folded";
    Devel::ProfileBridge::diff(before => "$d/cpu_inline.prof", after => "$d/cpu_inline.pb", out => $df);
    my @d = grep { length } split /\n/, slurp($df);
    ok(@d && !grep({ !/ (\d+) \1\z/ } @d), 'diff of a profile with its ungzipped twin: every stack unchanged');
    ok(!eval { collapsed_of("$d/cpu_inline.prof", max_stack_depth => 5); 1 }, 'max_stack_depth => 5: refused');
    like("$@", qr/\Approf: limit: a sample of more than max_stack_depth \(5\) (?:locations|frames)/, '... a limit error');
    ok(!eval { collapsed_of("$d/labels.prof", max_strings => 10); 1 }, 'max_strings => 10: refused');
    like("$@", qr/\Approf: limit: more than max_strings \(10\) strings at byte \d+/, '... a limit error');
    ok(!eval { collapsed_of("$FindBin::Bin/data/tachyon/cpu_recursion.bin", format => 'pprof'); 1 },
        "a Tachyon file read with format => 'pprof'");
    like("$@", qr/\Approf: corrupt: /, '... is a pprof corrupt error');
}

{
    my $n = 0;
    ok(!eval { &Devel::ProfileBridge::ReadStream::for_chunks(sub { die "stop here\n" if $_[0] eq 'TIME_LINE' && ++$n == 3 },
        filename => "$d/labels.prof"); 1 }, 'a for_chunks callback that dies');
    is($@, "stop here\n", '... its exception comes out as it is');
}

# merge: a Go profile and a Tachyon profile, the sum of the parts (weights in ns)
{
    my $tach = "$FindBin::Bin/data/tachyon/cpu_recursion.bin";
    my $out = "$tmp/merged.folded";
    Devel::ProfileBridge::merge(in => [ "$d/cpu_inline.prof", $tach ], out => $out, to => 'collapsed');
    my %parts;
    my $go_w = folded_weights(collapsed_of("$d/cpu_inline.prof"));
    my $interval;
    &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $interval //= $_[2] if $_[1] eq 'sample_interval_us' } },
        filename => $tach);
    my $t_w = folded_weights(collapsed_of($tach), unit => $interval * 1000);
    $parts{$_} += $go_w->{$_} for keys %$go_w;
    $parts{$_} += $t_w->{$_} for keys %$t_w;
    my $m = folded_weights($out);
    my ($mt, $pt) = (0, 0);
    $mt += $_ for values %$m;
    $pt += $_ for values %parts;
    is($mt, $pt, "merge of a Go profile and a Tachyon profile: total ns = the sum of the parts ($pt)");
    is_deeply([ first_differences($m, \%parts, 4) ], [], 'merge: every stack weighs what it weighs in its part');
}

# info of a profile whose stacks repeat (made by `go run gen_labels.go
# repeats.pprof 3000 7 40 1`: 3,000 samples over 40 stacks) reads it in one
# pass, the distinct samples summed with their counts (fold_samples.h
# sums_counted): one TIME_LINE per Sample record all the same, as the
# records counted here say, and every other count that of the chunk path
{
    my $in = "$d/repeats.pprof";
    require IO::Uncompress::Gunzip;
    IO::Uncompress::Gunzip::gunzip($in => \my $pb) or die "gunzip $in";
    my ($at, $records) = (0, 0);
    my $varint = sub { my ($v, $s) = (0, 0); while (1) { my $b = ord substr($pb, $at++, 1); $v |= ($b & 0x7f) << $s; $s += 7; return $v if $b < 0x80 } };
    while ($at < length $pb) {    # the Profile's top-level fields: 2 is a Sample
        my $key = $varint->();
        if (($key & 7) == 2) { my $len = $varint->(); $at += $len; $records++ if $key >> 3 == 2 }
        elsif (($key & 7) == 0) { $varint->() }
        else { die "wire type " . ($key & 7) }
    }
    is($records, 3000, 'repeats.pprof holds 3000 Sample records');
    my $out = `$^X -Mblib "$FindBin::Bin/../bin/profbridge" info "$in" 2>&1`;
    is($? >> 8, 0, 'info repeats.pprof');
    my %info = $out =~ /^  ([A-Z_]+) +(\d+)$/mg;
    is($info{TIME_LINE}, $records, '... one TIME_LINE per Sample record');
    my $chunks = Devel::ProfileBridge::chunk_counts($in);
    is_deeply(\%info, { map { ($_ => $chunks->{$_}) } grep { $chunks->{$_} } keys %$chunks },
        "... and the chunk path's count of every tag");
}

# nytprofhtml renders the conversion: every function in the pages and the flame graph
SKIP: {
    my $html = `which nytprofhtml 2>/dev/null`;
    chomp $html;
    skip 'nytprofhtml not found', 9 unless $html && eval { require Devel::NYTProf::Data; 1 };
    for my $in ("$d/cpu_inline.prof", "$d/heap.prof", "$d/labels.prof") {
        (my $label = $in) =~ s{\A\Q$d/\E}{};
        my $out = "$tmp/$label.nytprof";
        my $dir = "$tmp/$label-html";
        { local $SIG{__WARN__} = sub { }; Devel::ProfileBridge::convert(in => $in, out => $out) }
        system("cd \"$tmp\" && \"$html\" -f \"$out\" -o \"$dir\" > \"$dir.out\" 2> \"$dir.err\"");
        is($? >> 8, 0, "$label: nytprofhtml renders the conversion");
        # its stderr: progress lines only (no perl warning, no error)
        my @noise = grep { /warn|error|uninitiali[sz]ed|line \d+\.?\z|not found|invalid/i } split /\n/, slurp("$dir.err");
        is_deeply(\@noise, [], "$label: ... without a warning or an error");
        my (undef, undef, $cum) = parse_top(slurp("$in.top-flat.txt"));
        my $pages = join "\n", map { slurp($_) } glob("$dir/*.html");
        my ($svg) = grep { /flame|stack/i } glob("$dir/*.svg");
        my $flame = $svg ? slurp($svg) : '';
        my @missing = grep {
            my $s = sub_of($_);
            my ($short) = $s =~ /([^:]+)\z/;
            index($pages, $short) < 0 || index($flame, $short) < 0
        } sort keys %$cum;
        is_deeply(\@missing, [], "$label: every function (" . scalar(keys %$cum) . ') named in the report and its flame graph');
    }
}

done_testing;
