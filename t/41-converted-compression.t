#!perl
# nytprof.out's default compression (c/write_nytprof.h): a converted profile
# is written plain (no zlib part) unless a level is asked for; a NYTProf
# input keeps level 3.  Checked with the REAL Devel::NYTProf::ReadStream: the
# plain file and the one written with --compress 1 give the same chunk
# stream but for the "Compressed at level 1" COMMENT and START_DEFLATE, and
# the raw bytes show which of the two is compressed.
use strict;
use warnings;
use Test::More;
use File::Spec;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use ChunkDump qw(have_nytprof dump_chunks first_difference);
use Devel::ProfileBridge ();

plan skip_all => 'the real Devel::NYTProf reader is not installed' unless have_nytprof();
my $root = File::Spec->rel2abs("$FindBin::Bin/..");
my $cli = "$root/bin/profbridge";
my $tmp = tempdir('pb41-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub convert {
    my ($in, $out, @opt) = @_;
    my $log = "$tmp/log";
    my $rc = system("$^X -Mblib=$root $cli convert '$in' -o '$out' @opt >'$log' 2>&1");
    open my $fh, '<', $log or die "$log: $!";
    local $/;
    my $msg = <$fh>;
    return ($rc == 0, $msg);
}

sub head_bytes {
    my ($f) = @_;
    open my $fh, '<:raw', $f or die "$f: $!";
    local $/;
    return scalar <$fh>;
}

# V8 input needs yajl, an optional library
my $yajl = defined Devel::ProfileBridge::features()->{libraries}{yajl};
my @inputs = (($yajl ? ("$root/t/data/v8/v8_mixed.cpuprofile", "$root/t/data/v8/v8_recursion.cpuprofile") : ()),
    glob("$root/t/data/folded/*.folded"));
@inputs = grep { -f } @inputs;
plan skip_all => 'no converted inputs in t/data' unless @inputs;

for my $in (@inputs) {
    my $name = (File::Spec->splitpath($in))[2];
    my ($plain, $z1) = ("$tmp/$name.plain", "$tmp/$name.z1");
    my ($ok, $msg) = convert($in, $plain, '--no-source');
    ok($ok, "$name: converted with the default level") or diag $msg;
    ($ok, $msg) = convert($in, $z1, '--no-source', '-z', 1);
    ok($ok, "$name: converted with -z 1") or diag $msg;
    my $bytes = head_bytes($plain);
    unlike($bytes, qr/^#Compressed at level/m, "$name: the default writes no zlib part");
    like(head_bytes($z1), qr/^#Compressed at level 1 with zlib/m, "$name: -z 1 writes one at level 1");
    cmp_ok(length($bytes), '>', -s $z1, "$name: the plain file is the larger");
    my $a = dump_chunks($plain);
    my $b = [grep { !/\A\["(?:START_DEFLATE|COMMENT","Compressed at level)/ } @{ dump_chunks($z1) }];
    ok(!grep({ /\A\["START_DEFLATE"/ } @$a), "$name: no START_DEFLATE in the plain file");
    ok(@$a > 10 && !defined first_difference($a, $b),
        "$name: the real reader gives the same chunks from both (" . scalar(@$a) . " chunks)")
        or diag first_difference($a, $b);
}

# a NYTProf input keeps its default of 3
my ($nyt) = grep { head_bytes($_) =~ /^#Compressed at level/m } sort glob("$root/t/data/nytprof/*.nytprof.out");
SKIP: {
    skip 'no compressed NYTProf file in t/data/nytprof', 2 unless $nyt;
    my ($ok, $msg) = convert($nyt, "$tmp/nyt.out");
    ok($ok, 'a NYTProf input converted') or diag $msg;
    like(head_bytes("$tmp/nyt.out"), qr/^#Compressed at level 3 with zlib/m, '... at level 3 by default');
}

done_testing;
