#!perl
# Issue 27 points 4 and 7: temporary files never outlive a run, and a copy
# of an input never grows past its bound.
#   - standard input and FIFOs of a format that seeks (Tachyon) are copied
#     at most max_decompressed_bytes (default 64 MiB for a copy), and the
#     copy (unlinked as it is made: c/source.c) is gone after an error, a
#     signal (SIGTERM while copying) or the end of the run;
#   - profbridge info on a FIFO prints the loss report info FILE prints;
#     convert --report reads its input once (standard input, a FIFO);
#   - --to statprofiler onto a FIFO leaves no staging directory, nor does
#     SIGTERM in the middle of writing a run; exit() in a progress hook
#     leaves no temp file beside the output.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use POSIX qw(mkfifo);
use Config;
use lib "$FindBin::Bin/lib";
use TachyonFile qw(many_threads);
use Devel::ProfileBridge ();

# StatProfiler records need snappy: without it those parts are left out
# (profbridge would refuse before opening the FIFO, and its reader would wait)
my $snappy = defined Devel::ProfileBridge::features()->{libraries}{snappy};

my $root = "$FindBin::Bin/..";
my $bin = "$root/bin/profbridge";
my @inc = map { "-I$_" } grep { defined } (-d "$root/blib" ? ("$root/blib/lib", "$root/blib/arch") : ());
my @pb = ($Config{perlpath}, @inc, $bin);
my $tmp = tempdir('pb85-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $spool = "$tmp/spool";    # TMPDIR of the runs below: it must end empty
mkdir $spool or die;
local $ENV{TMPDIR} = $spool;
my $tach = "$FindBin::Bin/data/tachyon/real315/multithread_cpu_none.bin"; # plain: no zstd needed

sub entries {    # a directory's entries (a list; in scalar context their number)
    my ($dir) = @_;
    opendir my $dh, $dir or die "$dir: $!";
    my @e = sort grep { !/^\.\.?\z/ } readdir $dh;
    return wantarray ? @e : scalar @e;
}
sub slurp { my ($f) = @_; open my $fh, '<:raw', $f or die "$f: $!"; local $/; return scalar <$fh> }
sub sh_quote { return join ' ', map { "'$_'" } @_ }

# run profbridge with stdin from a shell command; (exit status, stdout, stderr)
sub run_pb {
    my ($stdin_cmd, @args) = @_;
    my $cmd = ($stdin_cmd ? "$stdin_cmd | " : '') . sh_quote(@pb, @args) . " 2>'$tmp/err'";
    my $out = `$cmd`;
    return ($? >> 8, $out, slurp("$tmp/err"));
}

# a FIFO fed by a child process with the bytes of $file
sub fifo_of {
    my ($file) = @_;
    my $fifo = "$tmp/fifo" . int(rand 1e9);
    mkfifo($fifo, 0600) or die "mkfifo: $!";
    my $pid = fork // die;
    if (!$pid) {
        open my $w, '>:raw', $fifo or POSIX::_exit(1);
        print {$w} slurp($file);
        close $w;
        POSIX::_exit(0);
    }
    return ($fifo, $pid);
}

# ---- the copy's bound -----------------------------------------------------------
{
    my ($rc, $out, $err) = run_pb("cat '$tach'", 'info', '-', '--max-decompressed-bytes', 1000);
    is($rc, 2, 'a stream past --max-decompressed-bytes 1000: exit 2');
    like($err, qr/^profbridge: limit: holds more than max_decompressed_bytes \(1000\) bytes .* of standard input$/m,
        '... a limit error naming standard input');
    is_deeply([ entries($spool) ], [], '... and no copy left');
    # the default: a writer that counts what the reader took before it
    # stopped (a Tachyon profile's bytes, then zeros)
    my $n = `perl -e '\$SIG{PIPE} = "IGNORE"; open my \$f, "<:raw", "$tach" or die; local \$/; syswrite STDOUT, <\$f>; my (\$b, \$n) = ("\\0" x 65536, 0); while (\$n < 100 * 2**20) { my \$k = syswrite STDOUT, \$b; last unless \$k; \$n += \$k } print STDERR \$n' 2>'$tmp/count' | @{[ sh_quote(@pb) ]} info - 2>'$tmp/err2'`;
    my $taken = slurp("$tmp/count");
    like(slurp("$tmp/err2"), qr/^profbridge: limit: holds more than max_decompressed_bytes \(67108864\) bytes .* of standard input$/m,
        '100 MiB of zeros on standard input: stops at the default 64 MiB');
    ok($taken < 100 * 2**20, "... having taken $taken of 104857600 bytes");
    is_deeply([ entries($spool) ], [], '... and no copy left');
}

# ---- SIGTERM while standard input is copied --------------------------------------
{
    pipe my $r, my $w or die;
    my $pid = fork // die;
    if (!$pid) {
        close $w;
        open STDIN, '<&', $r or die;
        { exec @pb, 'info', '-' }
        POSIX::_exit(127);
    }
    close $r;
    # a Tachyon profile's bytes and more (reads take 64 KiB), then the stream stays open
    syswrite $w, slurp($tach) . ("\0" x 200_000);
    # the copy is unlinked as it is made: seen only as an open file of the process
    my $copying = sub {
        opendir my $fd, "/proc/$pid/fd" or return 0;
        return grep { (readlink("/proc/$pid/fd/$_") // '') =~ m{^\Q$spool\E/profbridge-in-\S+ \(deleted\)$} } readdir $fd;
    };
    my $t0 = time;
    select undef, undef, undef, 0.05 until $copying->() || time - $t0 > 10;
  SKIP: {
        skip 'no /proc to see the open copy', 1 unless -d "/proc/$pid/fd";
        ok(scalar($copying->()), 'standard input is being copied (a nameless file in $TMPDIR)');
    }
    kill 'TERM', $pid;
    waitpid $pid, 0;
    is($? & 127, 15, '... SIGTERM ends profbridge');
    is_deeply([ entries($spool) ], [], '... and the copy is gone');
    close $w;
}

# ---- info on a FIFO: the same report, loss report included ----------------------------
{
    my (undef, $want) = run_pb('', 'info', $tach);
    like($want, qr/^not carried to nytprof:/m, 'info FILE prints a loss report');
    my ($fifo, $pid) = fifo_of($tach);
    my ($rc, $got) = run_pb('', 'info', $fifo);
    waitpid $pid, 0;
    is($rc, 0, 'info FIFO: exit 0');
    s/^file:.*\n//m for $want, $got;
    is($got, $want, '... the same report as info FILE, loss report included');
}

# ---- convert --report reads the input once ----------------------------------------------
{
    my ($rc, undef, $err) = run_pb("cat '$tach'", 'convert', '-', '--report', '--to', 'collapsed', '-o', "$tmp/r1.folded");
    is($rc, 0, 'convert - --report: exit 0');
    like($err, qr/^not carried to collapsed:\n  samples with thread-state flags/m, '... and the report');
    ok(-s "$tmp/r1.folded", '... and the output');
    my ($fifo, $pid) = fifo_of($tach);
    local $SIG{ALRM} = sub { kill 'KILL', $pid; die "blocked\n" };
    alarm 60;
    ($rc, undef, $err) = run_pb('', 'convert', $fifo, '--report', '--to', 'collapsed', '-o', "$tmp/r2.folded");
    alarm 0;
    waitpid $pid, 0;
    is($rc, 0, 'convert FIFO --report: exit 0 (it used to block on a second read)');
    like($err, qr/^not carried to collapsed:/m, '... and the report');
    is(slurp("$tmp/r2.folded"), slurp("$tmp/r1.folded"), '... the same output');
    is_deeply([ entries($spool) ], [], '... no copy left');
}

# ---- --to statprofiler onto a FIFO: no staging directory left ---------------------------
if ($snappy) {
    my $dir = "$tmp/dev";
    mkdir $dir or die;
    my $fifo = "$dir/trace";
    mkfifo($fifo, 0600) or die;
    my $pid = fork // die;
    if (!$pid) {    # the FIFO's reader
        open my $in, '<:raw', $fifo or POSIX::_exit(1);
        open my $out, '>:raw', "$tmp/from-fifo" or POSIX::_exit(1);
        print {$out} $_ while <$in>;
        close $out;
        POSIX::_exit(0);
    }
    my ($rc) = run_pb('', 'convert', "$FindBin::Bin/data/tachyon/cpu_recursion.bin", '--to', 'statprofiler', '-o', $fifo);
    waitpid $pid, 0;
    is($rc, 0, '--to statprofiler -o FIFO: exit 0');
    like(slurp("$tmp/from-fifo"), qr/\A=statprofiler/, '... the trace went through the FIFO');
    is_deeply([ entries($dir) ], ['trace'], '... and no staging directory is left beside it');
}

# ---- SIGTERM while a StatProfiler run is written -----------------------------------------
if ($snappy) {
    my $in = "$tmp/threads.bin";
    open my $fh, '>:raw', $in or die;
    print {$fh} many_threads(30_000);
    close $fh;
    my $dir = "$tmp/run";
    mkdir $dir or die;
    my $pid = fork // die;
    if (!$pid) {
        open STDOUT, '>', '/dev/null';
        { exec @pb, 'convert', $in, '--to', 'statprofiler', '-o', "$dir/run" }
        POSIX::_exit(127);
    }
    my $t0 = time;
    my $seen;
    until ($seen || time - $t0 > 20) {
        ($seen) = grep { -e "$dir/$_/t1" } grep { /^\.run\./ } entries($dir);
        last if waitpid($pid, POSIX::WNOHANG()) > 0;
    }
    kill 'TERM', $pid;
    waitpid $pid, 0;
    if ($seen) {
        is($? & 127, 15, 'SIGTERM while a run of 30,000 traces is staged: profbridge ends');
        is_deeply([ entries($dir) ], [], '... and neither the staging directory nor a trace is left');
    } else {
        # it finished first: then the run is whole
        is(scalar(entries($dir)), 30_000, 'the run finished before the signal: all of it');
        is_deeply([ grep { /^\./ } entries($dir) ], [], '... no staging directory');
    }
}

# ---- exit in a progress hook: no temp file beside the output ---------------------------------
for my $to (qw(collapsed nytprof pprof)) {
    my $dir = "$tmp/pe-$to";
    mkdir $dir or die;
    my $pid = fork // die;
    if (!$pid) {
        Devel::ProfileBridge::convert(in => "$FindBin::Bin/data/tachyon/deep_stack.bin", out => "$dir/pe.col",
            to => $to, source => $to eq 'nytprof' ? 0 : undef, progress => sub { exit 3 });
        POSIX::_exit(0);
    }
    waitpid $pid, 0;
    is($? >> 8, 3, "--to $to: exit 3 from the progress hook ends the program");
    is_deeply([ entries($dir) ], [], '... and leaves no .pe.col.XXXXXX');
}

done_testing;
