package RawFile;
# Test helper: whole files as bytes.
#
#   use RawFile qw(slurp_raw spew_raw);
#   my $bytes = slurp_raw($path);          # dies if it cannot be read
#   spew_raw($path, $bytes);               # dies if it cannot be written; returns $path
use strict;
use warnings;
use Exporter 'import';

our @EXPORT_OK = qw(slurp_raw spew_raw);

sub slurp_raw {
    my ($path) = @_;
    open my $fh, '<:raw', $path or die "can't read $path: $!";
    local $/;
    return scalar <$fh>;
}

sub spew_raw {
    my ($path, $bytes) = @_;
    open my $fh, '>:raw', $path or die "can't write $path: $!";
    print {$fh} $bytes;
    close $fh or die "can't write $path: $!";
    return $path;
}

1;
