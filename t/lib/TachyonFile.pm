package TachyonFile;
# Test helper: rewrite Tachyon (CPython sampling profiler) files.
#
#   use TachyonFile qw(swap_to_big varint);
#   my $be = swap_to_big($le_bytes);   # a pre-3.15, little-endian, uncompressed file -> big-endian
#   my $v  = varint($n);               # unsigned LEB128, as the format writes counts and indices
#   my $f  = many_threads($n);         # a valid file: $n threads, one 3-frame sample each
#   my $f  = naming_files(@names);     # a valid file: one sample in each named file
use strict;
use warnings;
use Exporter 'import';

our @EXPORT_OK = qw(swap_to_big varint varint_at many_threads naming_files);

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

# A valid pre-3.15 (format 1, little-endian, uncompressed) file with $n
# threads (ids 1..$n), each with one FULL sample of main > work > leaf in
# app.py: the shape of a service that starts a short-lived thread per
# request.  Used by t/24 (fd pool) and bench/threads.sh (scaling).
sub many_threads {
    my ($n) = @_;
    my $samples = '';
    for my $t (1 .. $n) {
        # thread id, interpreter id, FULL; ts delta 1, status 0, depth 3, frames innermost first
        $samples .= pack('Q< V C', $t, 0, 1) . varint(1) . "\0" . varint(3) . varint(2) . varint(1) . varint(0);
    }
    my @str = ('app.py', 'main', 'work', 'leaf');
    my $strings = join '', map { varint(length) . $_ } @str;
    my $zig = sub { my $v = shift; varint($v >= 0 ? 2 * $v : -2 * $v - 1) };
    my $frames = '';
    for my $f ([1, 10], [2, 20], [3, 30]) {    # funcname index, line
        $frames .= varint(0) . varint($f->[0]) . $zig->($f->[1]) . $zig->(0) . $zig->(0) . $zig->(0) . chr(255);
    }
    my $str_off = 64 + length $samples;
    my $frm_off = $str_off + length $strings;
    my $size = $frm_off + length($frames) + 32;
    my $hdr = pack('V V C4 Q< Q< V V Q< Q< V', 0x54414348, 1, 3, 14, 0, 0, 1_000_000, 1000, $n, $n, $str_off,
        $frm_off, 0);
    $hdr .= "\0" x (64 - length $hdr);
    return $hdr . $samples . $strings . $frames . pack('V V Q<', scalar @str, 3, $size) . ("\0" x 16);
}

# A valid pre-3.15 (format 1, little-endian, uncompressed) file of one
# thread whose samples name the files given, one 1-frame sample each (sub
# "f" at line 1 of that file): a profile that names whatever file it likes,
# as a hostile one would (t/27).
sub naming_files {
    my @files = @_;
    my $n = @files;
    my $samples = '';
    for my $i (0 .. $n - 1) {
        # thread id 1, interpreter id 0, FULL; ts delta 1, status 0, depth 1, frame $i
        $samples .= pack('Q< V C', 1, 0, 1) . varint(1) . "\0" . varint(1) . varint($i);
    }
    my @str = ('f', @files);
    my $strings = join '', map { varint(length) . $_ } @str;
    my $zig = sub { my $v = shift; varint($v >= 0 ? 2 * $v : -2 * $v - 1) };
    my $frames = '';
    $frames .= varint($_ + 1) . varint(0) . $zig->(1) . $zig->(0) . $zig->(0) . $zig->(0) . chr(255) for 0 .. $n - 1;
    my $str_off = 64 + length $samples;
    my $frm_off = $str_off + length $strings;
    my $size = $frm_off + length($frames) + 32;
    my $hdr = pack('V V C4 Q< Q< V V Q< Q< V', 0x54414348, 1, 3, 14, 0, 0, 1_000_000, 1000, $n, 1, $str_off,
        $frm_off, 0);
    $hdr .= "\0" x (64 - length $hdr);
    return $hdr . $samples . $strings . $frames . pack('V V Q<', scalar @str, $n, $size) . ("\0" x 16);
}

1;

