#!perl
# StatProfiler records count ticks of the header's interval: what the writer
# makes of weights that are ns (pprof and V8 times), sample counts, and
# neither (a heap profile's bytes), and of weights it cannot hold.
#   - every trace written, read back (our reader: weight x interval, summed
#     over the traces), holds the input's seconds, taken from independent
#     truth: `go tool pprof -top`'s "Total samples = N ns" for the pprof
#     file; endTime - startTime - timeDeltas[0] µs for a V8 .cpuprofile (the
#     last sample lasts to endTime: the V8 reader's documented rule);
#   - a 5 s V8 sample fits (it was capped at 4,294,967,295 ns-as-samples);
#   - a folded weight of 2^63 - 1 is a `limit` error, no file left;
#   - a heap profile's bytes are a `usage` error naming the unit, and the
#     CLI exits 2; --sample-type samples (a CPU profile's sample counts)
#     gives the same seconds at pprof's period.
# (xt/real-statprofiler.t reads the same outputs with the real reader.)
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use Needs qw(snappy);
use JSON::PP ();
use Devel::ProfileBridge ();

my $data = "$FindBin::Bin/data";
my $tmp = tempdir('pb65-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $n = 0;

# seconds in the traces written from $in, as our reader sees them
sub written_seconds {
    my ($in, %o) = @_;
    my $dir = "$tmp/" . ++$n;
    mkdir $dir or die;
    my @files = Devel::ProfileBridge::convert(in => $in, out => "$dir/out", to => 'statprofiler', %o);
    my $s = 0;
    for my $f (@files) {
        my ($ticks, $interval) = (0, undef);
        Devel::ProfileBridge::for_chunks(sub {
            my $tag = shift;
            $ticks += $_[0] if $tag eq 'TIME_LINE';
            $interval = $_[1] if $tag eq 'ATTRIBUTE' && $_[0] eq 'sample_interval_us';
        }, filename => $f, quiet => 1);
        $s += $ticks / 1e6; # TIME_LINE ticks are µs of sampled time
    }
    return ($s, scalar @files);
}

sub v8_truth_sec {
    my ($f) = @_;
    my $p = JSON::PP->new->decode(do { local (@ARGV, $/) = $f; <> });
    return ($p->{endTime} - $p->{startTime} - $p->{timeDeltas}[0]) / 1e6;
}

sub near { my ($a, $b) = @_; abs($a - $b) < 1e-9 * (1 + abs $b) }

# pprof: go tool pprof's own total
{
    my ($top) = grep { /Total samples = / } do { open my $fh, '<', "$data/pprof/cpu_inline.prof.top-flat.txt" or die; <$fh> };
    my ($ns) = $top =~ /Total samples = ([0-9]+)ns/ or die "no total in the pprof -top text";
    my ($s, $nf) = written_seconds("$data/pprof/cpu_inline.prof");
    ok(near($s, $ns / 1e9), "cpu_inline.prof: $s s in the traces = go tool pprof's ${ns} ns") or diag "$s vs " . $ns / 1e9;
    is($nf, 3, 'cpu_inline.prof: one trace per thread');
    my ($s2) = written_seconds("$data/pprof/cpu_inline.prof", sample_type => 'samples');
    ok(near($s2, $ns / 1e9), "cpu_inline.prof --sample-type samples: $s2 s (sample counts at pprof's period)");
}

# V8: each file's seconds, from its own JSON
for my $f (glob("$data/v8/*.cpuprofile"), "$data/crashers/statprofiler-writer/v8-long-sample-to-statprofiler.cpuprofile") {
    (my $name = $f) =~ s{.*/}{};
    my $want = v8_truth_sec($f);
    my ($s) = written_seconds($f);
    ok(near($s, $want), "$name: $s s in the trace = the profile's $want s");
}

# weights the format cannot hold, and weights that are no time
{
    my $dir = "$tmp/limit";
    mkdir $dir or die;
    my $e = eval {
        Devel::ProfileBridge::convert(in => "$data/crashers/statprofiler-writer/folded-weight-2e63-to-statprofiler.folded",
            out => "$dir/out", to => 'statprofiler');
        1;
    } ? undef : $@;
    ok(ref $e && $e->class eq 'limit', 'a folded weight of 2^63 - 1: a limit error') or diag "$e";
    like("$e", qr/9223372036854775807 does not fit a StatProfiler record's weight/, '... naming the weight');
    opendir my $dh, $dir or die;
    is_deeply([ grep { !/\A\./ } readdir $dh ], [], '... and no file left behind');

    $e = eval {
        Devel::ProfileBridge::convert(in => "$data/pprof/heap.prof", out => "$dir/heap", to => 'statprofiler');
        1;
    } ? undef : $@;
    ok(ref $e && $e->class eq 'unsupported', 'a heap profile: an unsupported error (the target cannot carry bytes)') or diag "$e";
    like("$e", qr/the weights are bytes \(sample type inuse_space\/bytes\), not samples or time/, '... naming the unit');
    my $root = "$FindBin::Bin/..";
    my @inc = -d "$root/blib" ? ("-I$root/blib/lib", "-I$root/blib/arch") : ();
    my $err = `"$^X" @inc "$root/bin/profbridge" convert --to statprofiler -o "$dir/cli" "$data/pprof/heap.prof" 2>&1`;
    is($? >> 8, 2, '... the CLI exits 2');
    like($err, qr/\Astatprofiler-writer: unsupported: .*bytes/, '... with the one line');
}

done_testing;
