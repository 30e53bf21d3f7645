#!/usr/bin/perl
# for_chunks side by side: ours and Devel::NYTProf::ReadStream's on the same
# file, empty callback, interleaved runs (each run in a fresh perl), medians
# and ratios.  Also: our tag-table case (only SUB_INFO/SUB_CALLERS wanted)
# against NYTProf's full pass, the C-only decode rate (chunk_counts: no Perl
# call per chunk), and the floor of the calls: the same number of callback
# calls with the same tag mix and argument shapes, made by an XS loop with
# no file read (Devel::ProfileBridge::_call_floor), through our light call
# and through a call_sv per chunk (what NYTProf's reader makes).  What ours
# takes beyond process start + decode + its floor is what is left to gain.
#
#   perl -Mblib bench/for_chunks.pl [--runs N] [FILE]
#   default FILE: ../shared/corpus/nytprof/large/large.nytprof.out
use strict;
use warnings;
use Getopt::Long;
use Time::HiRes qw(time);
use Config;
use FindBin;
use Devel::ProfileBridge ();

my $runs = 3;
GetOptions('runs=i' => \$runs) or die "usage: $0 [--runs N] [FILE]\n";
my $file = shift // "$FindBin::Bin/../../shared/corpus/nytprof/large/large.nytprof.out";
die "no such file: $file\n" unless -f $file;
my @inc = map { "-I$_" } grep { -d } ("$FindBin::Bin/../blib/lib", "$FindBin::Bin/../blib/arch");

# the tag mix of the file, for the floor (counted once, not timed)
my $counts = Devel::ProfileBridge::chunk_counts($file);
my $chunks = 0;
$chunks += $_ for values %$counts;
my $mix = join ' ', map { "$_=$counts->{$_}" } sort keys %$counts;

my $floor = 'use Devel::ProfileBridge; my %c = map { split /=/ } @ARGV[1 .. $#ARGV];'
    . ' my $light = delete $c{light}; Devel::ProfileBridge::_call_floor(sub { }, \%c, $light);';
my %code = (
    nytprof => 'use Devel::NYTProf::ReadStream qw(for_chunks); for_chunks { } filename => $ARGV[0], quiet => 1;',
    ours    => 'use Devel::ProfileBridge::ReadStream qw(for_chunks); for_chunks { } filename => $ARGV[0];',
    ours_subs => 'use Devel::ProfileBridge::ReadStream qw(for_chunks); my $n = 0;'
        . ' for_chunks { SUB_INFO => sub { $n++ }, SUB_CALLERS => sub { $n++ } } filename => $ARGV[0];',
    ours_c  => 'use Devel::ProfileBridge; my $c = Devel::ProfileBridge::chunk_counts($ARGV[0]);',
    start   => 'use Devel::ProfileBridge::ReadStream qw(for_chunks);',
    floor   => $floor,
    floor_sv => $floor,
);
my %args = (floor => "light=1 $mix", floor_sv => "light=0 $mix");

# one run: wall seconds and the child's CPU seconds (user + sys)
sub run_one {
    my ($name) = @_;
    my @c0 = times;
    my $t0 = time;
    my $out = `'$Config{perlpath}' @inc -e '$code{$name}' '$file' @{[ $args{$name} // '' ]} 2>&1`;
    die "$name failed: $out" if $?;
    my $dt = time - $t0;
    my @c1 = times;
    return ($dt, ($c1[2] - $c0[2]) + ($c1[3] - $c0[3]));
}

my @order = qw(nytprof ours ours_subs ours_c start floor floor_sv);
my (%t, %cpu);
for my $i (1 .. $runs) {
    for my $name (@order) {
        my ($dt, $c) = run_one($name);
        push @{ $t{$name} }, $dt;
        push @{ $cpu{$name} }, $c;
        printf "run %d %-10s %.3f s wall %.3f s cpu\n", $i, $name, $dt, $c;
    }
}
sub median { my @s = sort { $a <=> $b } @_; return @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2 }
my %m = map { $_ => median(@{ $t{$_} }) } keys %t;
my %mc = map { $_ => median(@{ $cpu{$_} }) } keys %cpu;
printf "\nfile: %s (%d chunks); medians of %d runs, wall (cpu) seconds\n", $file, $chunks, $runs;
my $row = sub {
    my ($label, $name, $extra) = @_;
    printf "%-44s %7.3f (%6.3f)%s\n", $label, $m{$name}, $mc{$name}, $extra // '';
};
$row->('Devel::NYTProf::ReadStream, empty callback:', 'nytprof');
$row->('ours, empty callback:', 'ours', sprintf '  ratio %.2fx (cpu %.2fx)', $m{ours} / $m{nytprof}, $mc{ours} / $mc{nytprof});
$row->('ours, only SUB_INFO/SUB_CALLERS:', 'ours_subs', sprintf "  ratio %.2fx of NYTProf's full pass", $m{ours_subs} / $m{nytprof});
$row->('ours, C only (chunk_counts):', 'ours_c', sprintf '  %.1f M chunks/s', $chunks / $m{ours_c} / 1e6);
$row->('process start (perl, our module loaded):', 'start');
$row->('floor: the same calls, no read (light call):', 'floor');
$row->('floor: the same calls, no read (call_sv):', 'floor_sv');
my $calls = $mc{floor} - $mc{start};
my $decode = $mc{ours_c} - $mc{start};
printf "ours (cpu) = start %.3f + decode %.3f + calls at the floor %.3f (%.1f ns a call) + the rest %.3f\n",
    $mc{start}, $decode, $calls, $calls / ($chunks || 1) * 1e9, $mc{ours} - $mc{start} - $decode - $calls;
