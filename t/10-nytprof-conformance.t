#!perl
# Every real NYTProf file in t/data/nytprof, read by OUR for_chunks, must give
# exactly the chunk stream that the real Devel::NYTProf 6.12 reader gave
# (the *.chunks.jsonl ground truth, made by ../shared/tools/nytprof-dump-chunks):
# every tag, every argument, in order.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use ChunkDump qw(dump_chunks read_lines first_difference);

my @truth = sort glob("$FindBin::Bin/data/nytprof/*.chunks.jsonl");
plan skip_all => 'no ground truth in t/data/nytprof' unless @truth;

for my $t (@truth) {
    (my $file = $t) =~ s/\.chunks\.jsonl\z//;
    my $want = read_lines($t);
    my $got = dump_chunks($file, reader => 'Devel::ProfileBridge::ReadStream');
    my $diff = first_difference($got, $want);
    ok(!defined $diff, "$file: " . scalar(@$want) . " chunks identical to NYTProf's reader")
        or diag($diff);
}

# the C JSON Lines writer (profbridge dump) gives the same bytes
for my $t (@truth[0 .. 2]) {
    (my $file = $t) =~ s/\.chunks\.jsonl\z//;
    my $out = "$FindBin::Bin/../t/tmp-dump-$$.jsonl";
    Devel::ProfileBridge::dump_json($file, output => $out);
    my $diff = first_difference(read_lines($out), read_lines($t));
    unlink $out;
    ok(!defined $diff, "dump_json $file is byte-identical to nytprof-dump-chunks") or diag($diff);
}

done_testing;
