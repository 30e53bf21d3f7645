#!/usr/bin/perl
# Issue 27 (messages): an output that meets a full disk names the output and
# ENOSPC ("No space left on device"), never the input with an empty message
# (--to statprofiler did), and never "at byte 0 of OUT"; nothing is left
# behind.  The disk is a 64 KiB tmpfs mounted in a private mount namespace
# (unshare -m; needs root).  t/98-arith-messages.t checks the same paths
# with RLIMIT_FSIZE (EFBIG) for every CPAN user.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;

plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING};
plan skip_all => 'needs root and unshare(1) for a private mount namespace'
    unless $> == 0 && system('unshare -m true 2>/dev/null') == 0;

my $tmp = tempdir('pb-fulldisk-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $in = "$FindBin::Bin/../t/data/tachyon/multithread.bin";
my @pb = ($^X, "-I$FindBin::Bin/../blib/lib", "-I$FindBin::Bin/../blib/arch", "$FindBin::Bin/../bin/profbridge");
for my $to (qw(nytprof collapsed statprofiler pprof speedscope)) {
    my $disk = "$tmp/disk-$to";
    mkdir $disk or die "$disk: $!";
    my $conv = join ' ', map { "'$_'" } @pb, 'convert', $in, '--to', $to, '-o', "$disk/out",
        $to eq 'nytprof' ? ('--no-compress', '--no-source') : ();
    # fill the disk, then convert onto it; list what is left
    my $out = `unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs '$disk' && head -c 1000000 /dev/zero > '$disk/filler' 2>/dev/null; $conv; echo rc=\\\$?; ls -A '$disk'" 2>&1`;
    my ($rc) = $out =~ /^rc=(\d+)$/m;
    is($rc, 2, "--to $to on a full disk: exit 2") or diag $out;
    like($out, qr/: io: \Q$disk\E\/[^:\n]*: .*No space left on device$/m, "--to $to: names the output and ENOSPC")
        or diag $out;
    unlike($out, qr/at byte 0 of/, "--to $to: no 'at byte 0'");
    unlike($out, qr/\Q$in\E/, "--to $to: does not blame the input");
    my ($left) = $out =~ /^rc=\d+\n(.*)\z/ms;
    is($left, "filler\n", "--to $to: nothing left behind") or diag $out;
}

# standard input of a format that seeks (a 38 KB Tachyon profile: only such
# a stream is copied) copied into a full $TMPDIR (issue 34): one line, no
# stray "unable to close filehandle ... at Error.pm line 23" before it
{
    my $disk = "$tmp/disk-stdin";
    mkdir $disk or die "$disk: $!";
    my $seeks = "$FindBin::Bin/../t/data/tachyon/real315/multithread_cpu_none.bin";
    my $info = join ' ', map { "'$_'" } @pb, 'info', '-';
    my $out = `unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs '$disk' && head -c 40000 /dev/zero > '$disk/filler' 2>/dev/null; TMPDIR='$disk' $info < '$seeks' >/dev/null; echo rc=\\\$?; ls -A '$disk'" 2>&1`;
    like($out, qr/\Aprofbridge: io: standard input: cannot spool to a temporary file: No space left on device\nrc=2\nfiller\n\z/,
        'standard input copied into a full $TMPDIR: exit 2, one line, nothing left behind') or diag $out;
}

done_testing();
