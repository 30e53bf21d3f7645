#!/usr/bin/perl
# Issue 27 point 2: `profbridge merge --jobs 2` with its spools ($TMPDIR) on
# a tmpfs too small for them fails, naming ENOSPC, for every size tried; it
# never exits 0 with part of the data (before: 2-3 of 99 sizes gave exit 0
# and 2.56e9 ns of 4.38e9, the others "a merge worker's spool is cut short").
# Sizes from 4 KiB up in 4 KiB steps until the merge fits, then a few more:
# every run either fails naming ENOSPC with no output, or succeeds with the
# output byte-identical to a merge with room to spare.  A private mount
# namespace (unshare -m, as xt/hidden-libs.t; needs root) holds the tmpfs.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use Cwd qw(abs_path);

plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING};
plan skip_all => 'needs root and unshare(1) for a private mount namespace'
    unless $> == 0 && system('unshare -m true 2>/dev/null') == 0;

my $top = abs_path('.');
my $tmp = tempdir('pb-enospc-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @in = map { "$top/t/data/$_" } qw(tachyon/cpu_recursion.bin tachyon/multithread.bin tachyon/deep_stack.bin
    tachyon/async_tasks.bin easyprofiler/ep_threads.prof tachyon/deep_stack.bin tachyon/cpu_recursion.bin);
-f $_ or plan skip_all => "no $_" for @in;
my $pb = "perl -I$top/blib/lib -I$top/blib/arch $top/bin/profbridge";
my $ref = "$tmp/ref.folded";
system("$pb merge --jobs 2 @in --to collapsed -o $ref") == 0 or die "reference merge failed";
my $want = do { local (@ARGV, $/) = $ref; <> };

# one shell in the namespace runs the whole sweep: "SIZE RC" lines, stderr in files
my $script = "$tmp/sweep.sh";
open my $sh, '>', $script or die;
print {$sh} <<"SH";
set -u
mkdir -p $tmp/small
k=4; fits=0
while [ \$k -le 8192 ]; do
    mount -t tmpfs -o size=\${k}k tmpfs $tmp/small || exit 9
    rm -f $tmp/out.folded
    TMPDIR=$tmp/small $pb merge --jobs 2 @in --to collapsed -o $tmp/out.folded 2>$tmp/err.\$k
    rc=\$?
    [ \$rc = 0 ] && cp $tmp/out.folded $tmp/out.\$k
    echo "\$k \$rc \$(ls -A $tmp/small | wc -l)"
    umount $tmp/small
    if [ \$rc = 0 ]; then fits=\$((fits + 1)); [ \$fits -ge 4 ] && break; k=\$((k + 4)); else k=\$((k + 4)); fi
done
SH
close $sh;
my @runs = map { [split] } grep { /^\d+ \d+ \d+$/ } split /\n/, `unshare -m sh $script 2>&1`;
ok(@runs > 10, scalar(@runs) . ' sizes tried') or BAIL_OUT('the sweep did not run');
my ($failed, $ok) = (0, 0);
for my $r (@runs) {
    my ($k, $rc, $left) = @$r;
    is($left, 0, "${k}K: nothing left in \$TMPDIR");
    if ($rc == 0) {
        $ok++;
        my $got = do { local (@ARGV, $/) = "$tmp/out.$k"; <> };
        ok($got eq $want, "${k}K: exit 0, and the output is the whole merge");
    } else {
        $failed++;
        my $err = do { local (@ARGV, $/) = "$tmp/err.$k"; <> } // '';
        like($err, qr/^merge: io: \Q$tmp\E\/small: cannot write a merge worker's spool: No space left on device \(ENOSPC\)$/,
            "${k}K: exit $rc, naming ENOSPC");
    }
}
ok($failed >= 10, "$failed sizes too small for the spools, each an ENOSPC error");
ok($ok >= 1, "$ok sizes large enough, each the whole merge");
done_testing;
