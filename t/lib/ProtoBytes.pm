package ProtoBytes;
# Test helper: protobuf bytes written by hand, independent of the reader
# (profile.proto messages for the pprof tests):
#   use ProtoBytes qw(varint fv fl);
#   varint(N): N as a base-128 varint; fv(F, N): field F, wire type 0 (a
#   varint N); fl(F, BYTES): field F, wire type 2 (length-delimited BYTES).
use strict;
use warnings;
use Exporter 'import';

our @EXPORT_OK = qw(varint fv fl);

sub varint {
    my ($v) = @_;
    my $o = '';
    while (1) {
        my $b = $v % 128;
        $v = int($v / 128);
        return $o . chr($b) unless $v;
        $o .= chr($b | 0x80);
    }
}
sub fv { my ($f, $v) = @_; return varint($f * 8) . varint($v) }
sub fl { my ($f, $b) = @_; return varint($f * 8 + 2) . varint(length $b) . $b }

1;
