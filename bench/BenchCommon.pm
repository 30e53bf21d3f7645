package BenchCommon;
# What the Perl benches share (bench/race.pl, bench/info-vs-collapsed.pl):
#   use lib 'bench'; use BenchCommon qw(large_go_profile median %LARGE_PICK);
use strict;
use warnings;
use Exporter 'import';
use File::Path qw(make_path);

our @EXPORT_OK = qw(large_go_profile median $GO_SAMPLES %LARGE_PICK);

# samples of the large Go CPU profile: about 50 MB gzipped
our $GO_SAMPLES = 8750000;

# which files of the corpus's <format>/large directories the benches take
our %LARGE_PICK = (
    nytprof      => qr/\.nytprof\.out\z/,
    pynytprof    => qr/\.nytprof\.out\z/,
    easyprofiler => qr/\.prof\z/,
    statprofiler => qr/\.out\.[0-9a-f]{48}\.[0-9]{8}\z/,
    tachyon      => qr/\.bin\z/,
);

# the large Go CPU profile's path under $tools (made once by `go run
# t/data/pprof/gen_labels.go` when missing and $make is true); undef when it
# is not there and cannot be made.  $who names the bench in its messages.
sub large_go_profile {
    my ($tools, $who, $make) = @_;
    my $big = "$tools/pprof/large-cpu-$GO_SAMPLES.pb.gz";
    return $big unless $make;
    if (!-s $big && `which go 2>/dev/null`) {
        make_path("$tools/pprof");
        print STDERR "$who: making a large Go CPU profile in $big (go run t/data/pprof/gen_labels.go)\n";
        system('go', 'run', 't/data/pprof/gen_labels.go', "$big.tmp", $GO_SAMPLES, 1, 20000, 0) == 0
            && rename("$big.tmp", $big)
            or print STDERR "$who: could not make $big\n";
    }
    return -s $big ? $big : undef;
}

sub median {
    my @v = sort { $a <=> $b } @_;
    return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

1;
