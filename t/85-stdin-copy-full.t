#!perl
# Issue 34 (messages): standard input of a format that seeks (Tachyon) is
# copied to a temporary file in $TMPDIR (c/source.c); when that copy meets a full disk (here RLIMIT_FSIZE: ulimit -f,
# SIGXFSZ ignored, every write past the limit fails with EFBIG, as
# t/98-arith-messages.t does; xt/full-disk.t uses a real full tmpfs) the
# one error line names standard input and the system's reason, with no stray
# "unable to close filehandle ... at Error.pm line 23" before it, exit 2,
# and no temporary file is left.  Same for a gzipped standard input
# inflated into $TMPDIR.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use IO::Compress::Gzip qw(gzip $GzipError);

my $root = "$FindBin::Bin/..";
my @inc = -d "$root/blib" ? ("-I$root/blib/lib", "-I$root/blib/arch") : ();
my $tmp = tempdir('pb85s-XXXXXX', TMPDIR => 1, CLEANUP => 1);
mkdir "$tmp/t" or die;
# a Tachyon profile of 38 KB (a format that seeks: copied from a stream),
# past the 32 KiB a write may reach below
my $in = "$FindBin::Bin/data/tachyon/real315/multithread_cpu_none.bin";
die "$in: too small" unless -s $in > 33_000;
gzip($in => "$tmp/in.bin.gz") or die $GzipError;

for my $case ([ 'standard input', $in, qr/\Aprofbridge: io: standard input: cannot spool to a temporary file: File too large\n\z/ ],
    [ 'gzipped standard input', "$tmp/in.bin.gz", qr/\Agzip: io: standard input: cannot write a temporary file: File too large\n\z/ ]) {
    my ($label, $in, $want) = @$case;
    my $cmd = join ' ', map { "'$_'" } $^X, @inc, "$root/bin/profbridge", 'info', '-';
    # 64 blocks (32 KiB in sh's 512-byte blocks): perl and the shell start, the copy cannot end
    my $err = `TMPDIR='$tmp/t' sh -c "trap '' XFSZ; ulimit -f 64; exec $cmd" < '$in' 2>&1 >/dev/null`;
    is($? >> 8, 2, "$label on a full \$TMPDIR: exit 2");
    like($err, $want, "$label: one line naming standard input and EFBIG, nothing before it") or diag $err;
    opendir my $dh, "$tmp/t" or die;
    is_deeply([ grep { !/\A\.\.?\z/ } readdir $dh ], [], "$label: no temporary copy left");
}

done_testing;
