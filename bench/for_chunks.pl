#!/usr/bin/perl
# for_chunks side by side: ours and Devel::NYTProf::ReadStream's on the same
# file, empty callback, interleaved runs (each run in a fresh perl), medians
# and ratios.  Also: our tag-table case (only SUB_INFO/SUB_CALLERS wanted)
# against NYTProf's full pass, and the C-only decode rate (chunk_counts: no
# Perl call per chunk).
#
#   perl -Mblib bench/for_chunks.pl [--runs N] [FILE]
#   default FILE: ../shared/corpus/nytprof/large/large.nytprof.out
use strict;
use warnings;
use Getopt::Long;
use Time::HiRes qw(time);
use Config;
use FindBin;

my $runs = 3;
GetOptions('runs=i' => \$runs) or die "usage: $0 [--runs N] [FILE]\n";
my $file = shift // "$FindBin::Bin/../../shared/corpus/nytprof/large/large.nytprof.out";
die "no such file: $file\n" unless -f $file;
my @inc = map { "-I$_" } grep { -d } ("$FindBin::Bin/../blib/lib", "$FindBin::Bin/../blib/arch");

my %code = (
    nytprof => 'use Devel::NYTProf::ReadStream qw(for_chunks); for_chunks { } filename => $ARGV[0], quiet => 1;',
    ours    => 'use Devel::ProfileBridge::ReadStream qw(for_chunks); for_chunks { } filename => $ARGV[0];',
    ours_subs => 'use Devel::ProfileBridge::ReadStream qw(for_chunks); my $n = 0;'
        . ' for_chunks { SUB_INFO => sub { $n++ }, SUB_CALLERS => sub { $n++ } } filename => $ARGV[0];',
    ours_c  => 'use Devel::ProfileBridge; my $c = Devel::ProfileBridge::chunk_counts($ARGV[0]);'
        . ' my $t = 0; $t += $_ for values %$c; print STDERR "chunks=$t\n";',
);

sub run_one {
    my ($name) = @_;
    my $t0 = time;
    my $out = `'$Config{perlpath}' @inc -e '$code{$name}' '$file' 2>&1`;
    die "$name failed: $out" if $?;
    my $dt = time - $t0;
    return ($dt, $out);
}

my (%t, $chunks);
for my $i (1 .. $runs) {
    for my $name (qw(nytprof ours ours_subs ours_c)) {
        my ($dt, $out) = run_one($name);
        push @{ $t{$name} }, $dt;
        ($chunks) = $out =~ /chunks=(\d+)/ if $name eq 'ours_c';
        printf "run %d %-10s %.3f s\n", $i, $name, $dt;
    }
}
sub median { my @s = sort { $a <=> $b } @_; return $s[$#s / 2] }
my %m = map { $_ => median(@{ $t{$_} }) } keys %t;
printf "\nfile: %s (%d chunks)\n", $file, $chunks // 0;
printf "Devel::NYTProf::ReadStream, empty callback: median %.3f s\n", $m{nytprof};
printf "ours, empty callback:                       median %.3f s  ratio %.2fx\n", $m{ours}, $m{ours} / $m{nytprof};
printf "ours, only SUB_INFO/SUB_CALLERS:            median %.3f s  ratio %.2fx of NYTProf's full pass\n",
    $m{ours_subs}, $m{ours_subs} / $m{nytprof};
printf "ours, C only (chunk_counts):                median %.3f s  %.1f M chunks/s\n", $m{ours_c},
    ($chunks // 0) / $m{ours_c} / 1e6;
