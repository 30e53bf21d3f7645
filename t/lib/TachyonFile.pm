package TachyonFile;
# Test helper: rewrite Tachyon (CPython sampling profiler) files.
#
#   use TachyonFile qw(swap_to_big varint);
#   my $be = swap_to_big($le_bytes);   # a pre-3.15, little-endian, uncompressed file -> big-endian
#   my $v  = varint($n);               # unsigned LEB128, as the format writes counts and indices
use strict;
use warnings;
use Exporter 'import';

our @EXPORT_OK = qw(swap_to_big varint varint_at);

sub varint {
    my ($v) = @_;
    my $o = '';
    while ($v >= 0x80) { $o .= chr(($v & 0x7F) | 0x80); $v = int($v / 128) }
    return $o . chr($v);
}

sub varint_at {
    my ($buf, $pos) = @_;
    my ($v, $s) = (0, 0);
    while (1) {
        my $b = ord substr($$buf, $$pos++, 1);
        $v += ($b & 0x7F) * 2**$s;
        $s += 7;
        return $v unless $b & 0x80;
    }
}

# every fixed-width field byte-swapped: the header's, the footer's, and the
# thread id / interpreter id of every sample record (varints stay as they are)
sub swap_to_big {
    my ($b) = @_;
    my $str_off = unpack 'Q<', substr($b, 36, 8);
    die "compressed" if unpack('V', substr($b, 52, 4));
    my $pos = 64;
    while ($pos < $str_off) {
        my $enc = ord substr($b, $pos + 12, 1);
        substr($b, $pos, 8) = reverse substr($b, $pos, 8);
        substr($b, $pos + 8, 4) = reverse substr($b, $pos + 8, 4);
        $pos += 13;
        if ($enc == 0) {
            my $n = varint_at(\$b, \$pos);
            for (1 .. $n) { varint_at(\$b, \$pos); $pos++ }
        } else {
            varint_at(\$b, \$pos);
            $pos++;
            my $n = varint_at(\$b, \$pos);
            $n = varint_at(\$b, \$pos) if $enc != 1;
            varint_at(\$b, \$pos) for 1 .. $n;
        }
    }
    for my $f ([0, 4], [4, 4], [12, 8], [20, 8], [28, 4], [32, 4], [36, 8], [44, 8], [52, 4]) {
        substr($b, $f->[0], $f->[1]) = reverse substr($b, $f->[0], $f->[1]);
    }
    my $n = length $b;
    substr($b, $n - 32, 4) = reverse substr($b, $n - 32, 4);
    substr($b, $n - 28, 4) = reverse substr($b, $n - 28, 4);
    substr($b, $n - 24, 8) = reverse substr($b, $n - 24, 8);
    return $b;
}

1;
