#!perl
# Issue 27 point 2: merge(jobs => N) never reports success on part of the
# data.  Each worker's inputs end with completion records and its outcome
# comes over a pipe; its spool is made in $TMPDIR and unlinked at once; the
# caller's progress hook runs in the calling process (a hook that calls
# exit ends the program, never a worker with half a spool); workers die with
# their parent; a killed worker fails the merge.  (A full disk under the
# spools is xt/merge-enospc.t: it needs a small tmpfs.)
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use POSIX ();
use lib "$FindBin::Bin/lib";
use Devel::ProfileBridge ();

plan skip_all => 'needs /proc to find the merge workers' unless -d "/proc/$$";
my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb99-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $big = "$d/nytprof/recursion.nocompress.nytprof.out";    # 513 KB: progress at each file
my $one = "$d/tachyon/deep_stack.bin";

sub weight {
    my ($f) = @_;
    my $s = 0;
    open my $fh, '<', $f or die "$f: $!";
    while (<$fh>) { $s += (split)[-1] }
    return $s;
}
sub children_of {    # pids whose parent is $pid
    my ($pid) = @_;
    my @c;
    for my $st (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $st or next;
        my $l = <$fh> // next;
        push @c, $1 if $l =~ /^(\d+) \(.*\) \S+ (\d+) / && $2 == $pid;
    }
    return @c;
}
sub alive { my ($pid) = @_; return -e "/proc/$pid" && !(`cat /proc/$pid/stat 2>/dev/null` =~ /^\d+ \(.*\) Z /) }

# the spools live in $TMPDIR (unlinked: nothing is left there, whatever happens)
my $spools = "$tmp/spooldir";
mkdir $spools or die;
{
    local $ENV{TMPDIR} = $spools;
    my @calls;
    Devel::ProfileBridge::merge(in => [ ($big) x 6 ], out => "$tmp/p.folded", to => 'collapsed', jobs => 2,
        progress => sub { push @calls, [@_] });
    ok(@calls >= 2, 'jobs => 2: the progress hook is called in the caller (' . scalar(@calls) . ' calls)');
    my @done = map { $_->[0] } @calls;
    is_deeply(\@done, [ sort { $a <=> $b } @done ], '... with bytes done that never go back');
    is($calls[0][1], 6 * -s $big, '... of the inputs\' total size');
    Devel::ProfileBridge::merge(in => [ ($big) x 6 ], out => "$tmp/p1.folded", to => 'collapsed');
    is(weight("$tmp/p.folded"), weight("$tmp/p1.folded"), '... and the same result as one process');
    opendir my $dh, $spools or die;
    is_deeply([ grep { !/^\.\.?\z/ } readdir $dh ], [], 'no spool left in $TMPDIR');
}

# a progress hook that calls exit: the program ends (its exit status), merge
# never returns, and no temp file or worker is left
{
    my $out = "$tmp/x/pe.col";
    mkdir "$tmp/x" or die;
    my $pid = fork // die;
    if (!$pid) {
        local $ENV{TMPDIR} = $spools;
        Devel::ProfileBridge::merge(in => [ ($big) x 6 ], out => $out, to => 'collapsed', jobs => 2,
            progress => sub { exit 7 });
        POSIX::_exit(0);    # merge returned: the defect
    }
    waitpid $pid, 0;
    is($? >> 8, 7, 'exit 7 in the progress hook: the program exits 7 (merge did not return)');
    opendir my $dh, "$tmp/x" or die;
    is_deeply([ grep { !/^\.\.?\z/ } readdir $dh ], [], '... no output and no temp file beside it');
    opendir $dh, $spools or die;
    is_deeply([ grep { !/^\.\.?\z/ } readdir $dh ], [], '... no spool');
}

# workers die with their parent: the parent kills itself (SIGKILL: no
# cleanup of its own) from its progress hook while the workers decode
{
    pipe my $r, my $w or die;
    my $pid = fork // die;
    if (!$pid) {
        close $r;
        Devel::ProfileBridge::merge(in => [ ($big) x 40 ], out => "$tmp/k.folded", to => 'collapsed', jobs => 2,
            progress => sub {
                syswrite $w, join(' ', children_of($$)) . "\n";
                kill 'KILL', $$;
            });
        POSIX::_exit(0);
    }
    close $w;
    my $line = <$r> // '';
    waitpid $pid, 0;
    my @workers = split ' ', $line;
    ok(@workers >= 1, 'the parent had merge workers (' . scalar(@workers) . ') when it was killed');
    my $t0 = time;
    my @left;
    do { select undef, undef, undef, 0.05; @left = grep { alive($_) } @workers } while @left && time - $t0 < 10;
    is_deeply(\@left, [], '... and none of them outlives it');
    ok(!-e "$tmp/k.folded", '... no output');
}

# a worker killed mid-merge: the merge fails, or (when the worker had
# already finished) its result is whole; never success with part of the data
{
    my $out = "$tmp/w.folded";
    my $ok = eval {
        Devel::ProfileBridge::merge(in => [ ($one) x 200 ], out => $out, to => 'collapsed', jobs => 2,
            progress => sub { kill 'KILL', children_of($$) });
        1;
    };
    my $err = $@;
    Devel::ProfileBridge::merge(in => [$one], out => "$tmp/one.folded", to => 'collapsed');
    if ($ok) {
        is(weight($out), 200 * weight("$tmp/one.folded"), 'workers killed after they finished: the whole result');
    } else {
        like("$err", qr/^merge: io: .*a merge worker \(inputs \d+ to \d+\) was killed by signal 9/,
            'a worker killed mid-merge: merge fails, naming the signal');
    }
    ok($ok || !-e $out, '... no partial output');
}

done_testing;
