#!/usr/bin/perl
# bench/info-vs-collapsed.pl - what `profbridge info` costs against
# `profbridge convert --to collapsed` of the same file, in one run.
#
#   perl bench/info-vs-collapsed.pl [--runs N] [--corpus DIR] [--tools DIR] [--v8-mb N] [--only WORD]...
#
# Run from the distribution root after "perl Makefile.PL && make".  The
# files: every large corpus file (CORPUS/<format>/large/, as bench/race.pl
# picks them), a Go CPU profile of about 50 MB made here once with
# t/data/pprof/gen_labels.go (8,750,000 samples; `go` needed) and a V8
# .cpuprofile of about 100 MB (--v8-mb N) made once with
# bench/make-cpuprofile.js (`node` needed), both into --tools DIR (default
# $PB_BENCH_TOOLS or $TMPDIR/pb-bench-tools: the files bench/race.pl makes
# and reuses).
#
# info reads its input once: its chunk counts, threads and the losses of a
# conversion to nytprof.out come from one decode (c/losses.c counts the
# losses as the chunks go by), so it should cost about what one conversion
# costs.  Method: each command runs once untimed (it must succeed; it warms
# the page cache), then N rounds (default 5) of info then collapsed, so load
# on the machine falls on both alike.  Printed per file: the medians of
# each's CPU seconds (user + sys of the whole process, from times()) and
# wall seconds, and info/collapsed as the median of the rounds' CPU ratios.
use strict;
use warnings;
use Getopt::Long;
use Config;
use Cwd qw(abs_path);
use File::Basename qw(basename dirname);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use Time::HiRes qw(time);
use lib 'bench';
use BenchCommon qw(large_go_profile median %LARGE_PICK);

my $runs = 5;
my $corpus = $ENV{CORPUS} // '../shared/corpus';
my $tools = $ENV{PB_BENCH_TOOLS} // ($ENV{TMPDIR} // '/tmp') . '/pb-bench-tools';
my $v8_mb = 100;
my @only;
GetOptions('runs=i' => \$runs, 'corpus=s' => \$corpus, 'tools=s' => \$tools, 'v8-mb=i' => \$v8_mb,
    'only=s' => \@only)
    or die "usage: $0 [--runs N] [--corpus DIR] [--tools DIR] [--v8-mb N] [--only WORD]...\n";
$runs = 1 if $runs < 1;
die "info-vs-collapsed.pl: run it from the distribution root after 'perl Makefile.PL && make' (no blib/)\n"
    unless -d 'blib/arch' && -f 'bin/profbridge';

my %pick = %LARGE_PICK;
my $only_re = @only ? join('|', map { quotemeta } @only) : undef;
sub wanted { !defined $only_re || ("$_[0]/" . basename($_[1])) =~ /$only_re/ }
my @files;
for my $fmt (sort keys %pick) {
    next unless -d "$corpus/$fmt/large";
    push @files, map { [ $fmt, $_ ] } grep { basename($_) =~ $pick{$fmt} && -f } sort glob("$corpus/$fmt/large/*");
}
my $big = large_go_profile($tools, 'info-vs-collapsed.pl', 0);
if (wanted(pprof => $big) && ($big = large_go_profile($tools, 'info-vs-collapsed.pl', 1))) {
    push @files, [ pprof => $big ];
}
# the V8 file, as bench/race.pl makes it (and reuses it)
my $v8 = "$tools/v8/large/synthetic-${v8_mb}mb.cpuprofile";
my $node = `which node 2>/dev/null`;
chomp $node;
if (wanted(v8 => $v8) && !-s $v8 && $node) {
    make_path(dirname($v8));
    print STDERR "info-vs-collapsed.pl: making $v8 (node bench/make-cpuprofile.js, $v8_mb MB)\n";
    system($node, 'bench/make-cpuprofile.js', "$v8.part", $v8_mb) == 0 && rename("$v8.part", $v8)
        or die "info-vs-collapsed.pl: bench/make-cpuprofile.js failed\n";
}
push @files, [ v8 => $v8 ] if -s $v8;
@files = grep { wanted(@$_) } @files;
die "info-vs-collapsed.pl: no files (no $corpus/*/large, and no Go profile)\n" unless @files;

my $tmp = tempdir('pb-info-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @pb = ($Config{perlpath}, '-Mblib', 'bin/profbridge');

# one whole process: (CPU seconds of it, wall seconds); dies when it fails
sub timed {
    my (@cmd) = @_;
    my @t0 = times;
    my $w0 = time;
    my $pid = fork // die "fork: $!\n";
    if (!$pid) {
        open STDOUT, '>', '/dev/null' or die;
        open STDERR, '>', "$tmp/err" or die;
        exec @cmd or die "exec: $!\n";
    }
    waitpid $pid, 0;
    my $rc = $?;
    my $wall = time - $w0;
    my @t1 = times;
    die "info-vs-collapsed.pl: failed ($rc): @cmd\n" if $rc;
    return ($t1[2] + $t1[3] - $t0[2] - $t0[3], $wall);
}

printf "%-46s %9s %9s %9s %9s %12s\n", 'file', 'info cpu', 'coll cpu', 'info wall', 'coll wall', 'info/coll';
for my $f (@files) {
    my ($fmt, $path) = @$f;
    my @info = (@pb, 'info', $path);
    my @coll = (@pb, 'convert', $path, '--to', 'collapsed', '-o', "$tmp/out.txt");
    timed(@info);
    timed(@coll);
    my (@ic, @iw, @cc, @cw, @r);
    for (1 .. $runs) {
        my ($c1, $w1) = timed(@info);
        my ($c2, $w2) = timed(@coll);
        push @ic, $c1;
        push @iw, $w1;
        push @cc, $c2;
        push @cw, $w2;
        push @r, $c2 > 0 ? $c1 / $c2 : 0;
    }
    unlink "$tmp/out.txt";
    printf "%-46s %9.2f %9.2f %9.2f %9.2f %11.2fx\n", "$fmt/" . basename($path), median(@ic), median(@cc),
        median(@iw), median(@cw), median(@r);
}
