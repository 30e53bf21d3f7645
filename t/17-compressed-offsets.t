#!perl
# Error offsets are offsets in the file, also inside compressed data: for a
# zlib (NYTProf) or zstd (Tachyon) stream, the byte where the compressed
# block that produced the bad data begins (not a position in the inflated
# stream, which can be far past the end of the file).  Checked by flipping
# and cutting bytes of real files: the offset lies between the start of the
# compressed data and the damaged byte, inside the file, and never goes
# backwards as the damage moves on.  Complete chunks before the damage are
# still delivered.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use RawFile qw(slurp_raw spew_raw);
use Devel::ProfileBridge ();

my $tmp = tempdir('pb17-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub try_read {
    my ($bytes) = @_;
    spew_raw("$tmp/bad", $bytes);
    my $n = 0;
    my $ok = eval { Devel::ProfileBridge::for_chunks(sub { $n++ }, filename => "$tmp/bad", quiet => 1); 1 };
    return ($ok, $@, $n);
}

for my $case (
    [ 'NYTProf zlib', "$FindBin::Bin/data/nytprof/recursion.nytprof.out", sub { index($_[0], "\nz") + 2 } ],
    [ 'Tachyon zstd', "$FindBin::Bin/data/tachyon/async_tasks.bin", sub { 64 } ],
) {
    my ($what, $file, $zstart_of) = @$case;
    my $b = slurp_raw($file);
    my $size = length $b;
    my $zstart = $zstart_of->($b);
    my $zend = $what =~ /Tachyon/ ? unpack('Q<', substr($b, 36, 8)) : $size;
    my ($last, $errors) = (0, 0);
    for my $frac (0.1, 0.3, 0.5, 0.7, 0.9) {
        my $at = int($zstart + ($zend - $zstart) * $frac);
        my $c = $b;
        substr($c, $at, 1) = chr(ord(substr($c, $at, 1)) ^ 0x55);
        my ($ok, $e) = try_read($c);
        next if $ok;    # a flip the format cannot notice
        $errors++;
        my $o = ref $e ? $e->offset : -1;
        ok($o >= $zstart - 2 && $o <= $at && $o < $size && $o >= $last,
            "$what: byte $at flipped: error at byte $o, in the file, where its block begins ("
            . (ref $e ? $e->class : 'no class') . ')') or diag "$e";
        $last = $o if $o >= 0;
    }
    ok($errors >= 2, "$what: $errors of 5 flips noticed");
    next if $what =~ /Tachyon/;    # its tables sit after the samples: a cut is a header error
    my $cut = int($zstart + ($zend - $zstart) * 0.6);
    my ($ok, $e, $n) = try_read(substr($b, 0, $cut));
    ok(!$ok && ref $e && $e->offset <= $cut && $e->offset >= $zstart - 2,
        "$what: cut at byte $cut: error at byte " . (ref $e ? $e->offset : '?') . ' (' . (ref $e ? $e->class : $e) . ')');
    ok($n > 0, "$what: cut: the $n complete chunks before it were delivered");
}

done_testing();
