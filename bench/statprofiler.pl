#!/usr/bin/perl
# bench/statprofiler.pl - StatProfiler decode (+ fold to chunks) and writer
# throughput on ../shared/corpus/statprofiler/large/ (18.2 MB, 848,805
# samples).  The real Devel::StatProfiler::Reader is raced against ours in
# the same run by bench/race.pl ("make bench").
#   perl bench/statprofiler.pl [LARGE_FILE]
use strict;
use warnings;
use File::Temp qw(tempdir);
my $large = shift // (glob('../shared/corpus/statprofiler/large/large.out.*[0-9a-f]'))[0];
die "no large trace\n" unless $large && -e $large;
my $tmp = tempdir(CLEANUP => 1);
my @core = sort glob('c/*.c');
for my $t ([pbdump => 't/c/pbdump.c'], [samples => 't/c/statprof_samples.c'], [tsp => 't/c/test_statprofiler.c']) {
    system("cc -O2 -std=c99 -Ic $t->[1] @core -lz -lzstd -lsnappy -lyajl -lpthread -o $tmp/$t->[0]") == 0 or die "build $t->[0]\n";
}
sub timed {
    my ($label, $cmd) = @_;
    my @runs;
    for (1 .. 3) {
        my $out = `/usr/bin/time -f '%e %M' $cmd 2>&1 >/dev/null`;
        my ($s, $kb) = $out =~ /([\d.]+) (\d+)\s*$/ or die "$cmd: $out";
        push @runs, [$s, $kb];
    }
    @runs = sort { $a->[0] <=> $b->[0] } @runs;
    printf "%-40s median %.2f s, peak RSS %.1f MB\n", $label, $runs[1][0], $runs[1][1] / 1024;
}
timed('decode only (sample sink, no output)', "$tmp/samples -n $large");
timed('decode + fold to chunks (pbdump -c)', "$tmp/pbdump -c $large");
timed('decode + writer (convert to StatProfiler)', "$tmp/tsp convert $large -o $tmp/rt.out");
print `$tmp/tsp bench-write $tmp/w.out 1000000`;
