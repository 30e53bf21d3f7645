#!perl
# --to pprof: the REAL `go tool pprof` (Debian golang-go) reads every
# conversion of the corpus, and what it prints (-traces: every sample with its
# stack and thread; -top: flat totals) equals our collapsed output stack for
# stack and the ground truth's totals.  Skipped where Go is absent.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use Stacks qw(slurp stack_corpus convert_ok folded_weights first_differences go_for_pprof);
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();

my $tmp = tempdir('pb92-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $go = go_for_pprof($tmp);
plan skip_all => 'go (golang-go, for go tool pprof) not found' unless $go;
$ENV{PPROF_TMPDIR} = $tmp;
my $d = "$FindBin::Bin/data";

# go tool pprof -traces: { "thread;outer;...;leaf" => value }
sub traces {
    my ($file, @opt) = @_;
    my $out = `"$go" tool pprof @opt -traces "$file" 2>&1`;
    return undef if $?;
    my %w;
    for my $block (split /^-+\+-+\n/m, $out) {
        my ($thread) = $block =~ /^\s+thread:\s+(\S+)$/m or next;
        my @frames;
        my $v;
        for (split /\n/, $block) {
            next if /^\s+(?:thread|pid):/;
            if (/^\s*(\d+)(?:ns)?\s{3}(.*)\z/) { $v = $1; push @frames, $2 }
            elsif (defined $v && /^\s{13}(.*)\z/) { push @frames, $1 }
        }
        next unless defined $v;
        $w{ join ';', $thread, reverse @frames } += $v;
    }
    return \%w;
}

my @corpus = stack_corpus($d);
for my $in (@corpus) {
    my $pb = "$tmp/p.pb.gz";
    my $folded = "$tmp/p.folded";
    my $label = convert_ok($d, $in, 'converted to pprof and collapsed', $folded, { out => $pb, to => 'pprof' });
    is(substr(slurp($pb), 0, 2), "\x1f\x8b", "$label: gzip");
    my $spans = $label =~ /^(?:easyprofiler|v8)\//;    # weights in ns
    my $got = traces($pb, $spans ? ('-unit=ns') : ('-sample_index=samples'));
    ok($got, "$label: go tool pprof -traces reads it") or next;
    my %want = %{ folded_weights($folded, thread => 1) };
    is_deeply([ first_differences(\%want, $got, 4) ], [],
        "$label: pprof's stacks and weights are our collapsed stacks (" . scalar(keys %want) . ')');

    # flat totals: go tool pprof -top against the collapsed leaves
    my $top = `"$go" tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 @{[ $spans ? '-unit=ns' : '-sample_index=samples' ]} "$pb" 2>&1`;
    my (%flat, %leaf);
    for (split /\n/, $top) {
        next unless /^\s*(\d+)(?:ns)?\s+[\d.]+%\s+[\d.]+%\s+\d+(?:ns)?\s+[\d.]+%\s+(.*)\z/;
        $flat{$2} += $1 if $1;
    }
    for my $k (keys %want) { $leaf{ (split /;/, $k)[-1] } += $want{$k} }
    is_deeply(\%flat, \%leaf, "$label: go tool pprof -top flat totals = our collapsed leaf totals");

    # the ground truth's total
    my $total = 0;
    $total += $_ for values %want;
    if ($label =~ /^tachyon/) {
        my $t = JSON::PP->new->decode(slurp("$in.truth.json"));
        is($total, $t->{total_samples}, "$label: $total samples, as CPython's own reader counts");
    } elsif ($label =~ /^statprofiler/) {
        # a root's first file stands for its whole run (every process's files)
        my $t = JSON::PP->new->decode(slurp("$in.truth.json"));
        (my $name = $in) =~ s/\.[0-9a-f]{48}\.[0-9a-f]{8}\z//;
        my @run = $t->{genealogy}{parent_id} =~ /\A0+\z/ && $t->{genealogy}{ordinal} == 1
            ? glob("$name.*[0-9a-f]") : ($in);
        my $sum = 0;
        $sum += JSON::PP->new->decode(slurp("$_.truth.json"))->{total_weight} for @run;
        is($total, $sum, "$label: total weight $total, as Devel::StatProfiler's reader counts");
    } elsif (-e "$in.truth.json") {
        my $t = JSON::PP->new->decode(slurp("$in.truth.json"));
        my $self = 0;
        for my $th (@{ $t->{threads} }) { $self += $_->{self_ns} for values %{ $th->{by_name} } }
        is($total, $self, "$label: ${total} ns of self time, as EasyProfiler's reader sums it");
    }
}

# sample types, period, labels (-raw)
{
    my $pb = "$tmp/cr.pb.gz";
    Devel::ProfileBridge::convert(in => "$d/tachyon/cpu_recursion.bin", out => $pb, to => 'pprof');
    my $raw = `"$go" tool pprof -raw "$pb" 2>&1`;
    like($raw, qr/^PeriodType: wall nanoseconds$/m, 'period type wall/nanoseconds');
    like($raw, qr/^Period: 1000000$/m, 'period = the 1 ms interval, in ns');
    like($raw, qr/^samples\/count wall\/nanoseconds$/m, 'sample types samples/count and wall/nanoseconds');
    like($raw, qr/^\s+67\s+67000000: /m, 'values: count and count x interval');
    like($raw, qr{^\s+\d+: 0x0 M=1 <module> cpu_recursion\.py:30 s=0}m,
        "functions keep CPython's own names (<module>), with file and line");
}

# a Perl profile: NYTProf's call events as pprof samples, in ns
{
    my $pb = "$tmp/perl.pb.gz";
    ok(eval { Devel::ProfileBridge::convert(in => "$d/nytprof/recursion.nytprof.out", out => $pb, to => 'pprof'); 1 },
        'NYTProf input converts to pprof') or diag $@;
    my $got = traces($pb, '-unit=ns');
    my $n = 0;
    $n += $_ for values %$got;
    my $calls = `which nytprofcalls 2>/dev/null`;
    chomp $calls;
    SKIP: {
        skip 'nytprofcalls not found', 1 unless $calls;
        my $want = 0;
        for (`"$calls" "$d/nytprof/recursion.nytprof.out" 2>/dev/null`) { $want += $1 * 100 if / (\d+)$/ }
        is($n, $want, "go tool pprof's total is nytprofcalls' (ticks of 100 ns): $n ns");
    }
}

# pprof in, pprof out (issue 35): every sample type with its name and unit,
# the period type, mappings, labels, comments and inlined Lines come back:
# go tool pprof -raw of the output is the input's, apart from ids (each id
# replaced here by what it names; samples of one stack and label set summed)
sub raw_named {
    my ($file, @opt) = @_;
    my @l = split /\n/, `"$go" tool pprof @opt -raw "$file" 2>&1`;
    return "go tool pprof failed: @l[0 .. ($#l < 3 ? $#l : 3)]" if $?;
    my (%loc, %map, @head, @samples, $sec, $cur);
    for (@l) {
        if (/^(Samples|Locations|Mappings):?$/) { $sec = $1; next }
        if (!$sec) { push @head, $_; next }
        if ($sec eq 'Mappings') { $map{$1} = $2 if /^(\d+): (.*)/; next }
        if ($sec eq 'Locations') {
            if (/^\s*(\d+): (.*)/) { $cur = $1; $loc{$cur} = $2 }
            else { (my $t = $_) =~ s/^\s+//; $loc{$cur} .= " | $t" }
            next;
        }
        push @samples, $_;
    }
    s/M=(\d+)/'M=' . ($map{$1} \/\/ "?$1")/e for values %loc;
    my $types = shift @samples;
    my (%sum, $s);
    for (@samples) {
        if (/^\s*(-?\d[-\d ]*): ([\d ]*)$/) {
            my @v = split ' ', $1;
            $s = { v => \@v, key => join(' ; ', map { $loc{$_} // "?$_" } split ' ', $2) . ' |' };
            push @{ $sum{_order} }, $s;
        } else {
            (my $t = $_) =~ s/^\s+//;
            $s->{key} .= " $t";
        }
    }
    my %tot;
    for my $x (@{ delete $sum{_order} || [] }) {
        my $a = $tot{ $x->{key} } ||= [ (0) x @{ $x->{v} } ];
        $a->[$_] += $x->{v}[$_] for 0 .. $#{ $x->{v} };
    }
    return join "\n", @head, "types: $types", map({ "$_ = @{ $tot{$_} }" } sort keys %tot), '';
}
for my $in (sort glob("$d/pprof/*.prof"), glob("$d/pprof/*.pb")) {
    (my $label = $in) =~ s{.*/}{};
    my $pb = "$tmp/rt.pb.gz";
    unlink $pb;
    ok(eval { Devel::ProfileBridge::convert(in => $in, out => $pb, to => 'pprof'); 1 }, "$label --to pprof")
        or diag $@;
    my ($want, $got) = (raw_named($in), raw_named($pb));
    ok(scalar($want =~ /^types: \S/m), "$label: go tool pprof -raw reads the input");
    is($got, $want, "$label: go tool pprof -raw of the output is the input's apart from ids");
    # -sample_index lists the same types (its error names them)
    my ($ti) = `"$go" tool pprof -sample_index=no_such_type -top "$in" 2>&1` =~ /must be one of: (\[.*\])/;
    my ($to) = `"$go" tool pprof -sample_index=no_such_type -top "$pb" 2>&1` =~ /must be one of: (\[.*\])/;
    ok(defined $ti, "$label: -sample_index names the input's types ($ti)");
    is($to, $ti, "$label: -sample_index lists the same types for the output");
}
{
    # --sample-type: the pprof target keeps every type and makes the one
    # picked the default; a target that holds one value takes that one
    my $pb = "$tmp/heap-alloc.pb.gz";
    Devel::ProfileBridge::convert(in => "$d/pprof/heap.prof", out => $pb, to => 'pprof', sample_type => 'alloc_space');
    like(`"$go" tool pprof -raw "$pb" 2>&1`,
        qr{^alloc_objects/count alloc_space/bytes\[dflt\] inuse_objects/count inuse_space/bytes$}m,
        'heap.prof --sample-type alloc_space --to pprof: four types, alloc_space the default');
    like(`"$go" tool pprof -top "$pb" 2>&1`, qr/^Type: alloc_space$/m, '... which go tool pprof shows');
    my $f = "$tmp/heap-alloc.folded";
    Devel::ProfileBridge::convert(in => "$d/pprof/heap.prof", out => $f, to => 'collapsed', sample_type => 'alloc_space');
    my $sum = 0;
    $sum += $_ for values %{ folded_weights($f) };
    is($sum, 5242880 + 393347 + 851968 + 4144 + 4307, '... and --to collapsed weighs by alloc_space alone');
}

# not a profile: nothing written
{
    my $pb = "$tmp/none.pb.gz";
    ok(!eval { Devel::ProfileBridge::convert(in => "$d/tachyon/cpu_recursion.py", out => $pb, to => 'pprof'); 1 },
        'a Python program is no profile');
    like($@, qr/^Devel::ProfileBridge: corrupt: not a profile/, '... a corrupt error');
    ok(!-e $pb, '... and no output file');
}

done_testing;
