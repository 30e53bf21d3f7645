#!perl
# vendor/NYTProf_refs: the xxd dumps are dumps of the files, and our reader
# gives the chunk stream the real NYTProf reader recorded for them.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use ChunkDump qw(dump_chunks read_lines first_difference);

my $dir = "$FindBin::Bin/../vendor/NYTProf_refs";
for my $kind (qw(uncompressed compressed)) {
    my $f = "$dir/sample_nytprof.out.$kind";
    open my $fh, '<:raw', $f or die "$f: $!";
    my $bytes = do { local $/; <$fh> };
    open my $dump, '<', "$f.xxd-dump.txt" or die;
    my $from_dump = '';
    while (<$dump>) {
        my ($hex) = /^[0-9a-f]{8}: ((?:[0-9a-f]{2,4} ?)+)/ or next;
        $hex =~ s/\s+//g;
        $from_dump .= pack 'H*', $hex;
    }
    ok($from_dump eq $bytes, "$kind: the xxd dump holds the file's " . length($bytes) . " bytes");
    my $diff = first_difference(dump_chunks($f, reader => 'Devel::ProfileBridge::ReadStream'),
        read_lines("$f.chunks.jsonl"));
    ok(!defined $diff, "$kind: our chunk stream equals the real reader's") or diag $diff;
}
my $d = Devel::ProfileBridge::detect_format("$dir/sample_nytprof.out.compressed");
is_deeply([ @$d{qw(format version compressed compression)} ], [ 'nytprof', '5.0', 1, 'zlib' ], 'detect_format');
done_testing;
