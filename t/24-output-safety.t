#!/usr/bin/perl
# Issue 15 points 1-4: every writer (nytprof, collapsed, statprofiler, dump),
# through the CLI and the API, takes one output path (c/output.c):
#   - a FIFO and a character device of our own (mknod, in a temp dir: never the
#     real /dev/null) are written in place and survive unchanged;
#   - a symlink output updates its target and stays a link;
#   - a failed run leaves an existing output byte-identical and no temp file;
#   - symlinks planted at the old predictable temp names are not followed;
#   - long names work; SIGTERM removes the temp file;
#   - --to statprofiler is atomic and reports the decoder's error (exit 2);
#   - 1,000 threads convert under `ulimit -n 64`;
#   - writer objects: forged / copied handles refused, ithreads and fork safe.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use Config;
use POSIX ();
use Scalar::Util ();
use RawFile qw(slurp_raw);
use TachyonFile qw(many_threads);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream qw(for_chunks);
use Devel::ProfileBridge::NYTProfWriter;
use Devel::ProfileBridge::StatProfilerWriter;

my $data = "$FindBin::Bin/data";
my $pb = "$FindBin::Bin/../bin/profbridge";
my @perl = ($^X, map { "-I$_" } @INC);
my $tmp = tempdir('pb24-XXXXXX', TMPDIR => 1, CLEANUP => 1);
# what this build can do (zstd and snappy are optional): without zstd the
# 5-thread input is a generated, uncompressed one; the StatProfiler parts
# need snappy
my $lib = Devel::ProfileBridge::features()->{libraries};
my ($zstd, $snappy) = (defined $lib->{zstd}, defined $lib->{snappy});
my $in = "$data/tachyon/multithread.bin";    # 5 threads (zstd)
my $one = "$data/tachyon/cpu_recursion.bin"; # 1 thread (uncompressed)
if (!$zstd) {
    $in = "$tmp/five-threads.bin";
    open my $fh, '>:raw', $in or die;
    print $fh many_threads(5);
    close $fh;
}

sub spew { my ($f, $b) = @_; open my $fh, '>:raw', $f or die "$f: $!"; print $fh $b; close $fh or die }
sub run_pb {    # (exit code, stderr)
    my @args = @_;
    my $err = "$tmp/stderr.txt";
    my $pid = fork // die;
    if (!$pid) {
        open STDOUT, '>', '/dev/null' or POSIX::_exit(99);    # read-only use of /dev/null as our stdout
        open STDERR, '>', $err or POSIX::_exit(99);
        exec @perl, $pb, @args or POSIX::_exit(98);
    }
    waitpid $pid, 0;
    return ($? >> 8, -e $err ? slurp_raw($err) : '');
}
sub listing { my ($d) = @_; opendir my $dh, $d or die; return join ' ', sort grep { !/^\.\.?\z/ } readdir $dh }
sub chunks { my @c; for_chunks { push @c, join "\t", map { $_ // '' } @_ } filename => $_[0]; \@c }
# one test: $file's chunks are ref.nytprof's
sub reads_as_ref {
    my ($file, $what) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    return is_deeply(chunks($file), chunks("$tmp/ref.nytprof"), $what);
}
# the TIME_LINE ticks of what for_chunks reads with these arguments
sub ticks_of { my $t = 0; for_chunks { $t += $_[1] if $_[0] eq 'TIME_LINE' } @_; return $t }

# reference outputs, written to plain files
my %ref;
for my $to (qw(nytprof collapsed)) {
    my ($rc, $e) = run_pb('convert', $in, '--to', $to, '-o', "$tmp/ref.$to");
    is($rc, 0, "reference $to") or diag $e;
    $ref{$to} = slurp_raw("$tmp/ref.$to");
}
{
    my ($rc, $e) = run_pb('dump', $in, '-o', "$tmp/ref.dump");
    is($rc, 0, 'reference dump') or diag $e;
    $ref{dump} = slurp_raw("$tmp/ref.dump");
}

# ---- a FIFO is written in place and stays a FIFO ----------------------------
SKIP: {
    my $fifo = "$tmp/out.fifo";
    skip 'no mkfifo', 6 unless POSIX::mkfifo($fifo, 0600);
    for my $case ([collapsed => 'convert', $in, '--to', 'collapsed', '-o', $fifo],
                  [dump => 'dump', $in, '-o', $fifo],
                  [nytprof => 'convert', $in, '--to', 'nytprof', '-o', $fifo]) {
        my ($what, @args) = @$case;
        my $got = "$tmp/fifo-read.$what";
        my $reader = fork // die;
        if (!$reader) {    # a reader, as `cat fifo > got`
            open my $r, '<:raw', $fifo or POSIX::_exit(1);
            open my $w, '>:raw', $got or POSIX::_exit(1);
            local $/;
            print $w scalar <$r>;
            close $w;
            POSIX::_exit(0);
        }
        my ($rc, $e) = run_pb(@args);
        waitpid $reader, 0;
        ok($rc == 0 && -p $fifo, "$what -o FIFO: exit 0 and the FIFO is still a FIFO") or diag $e;
        if ($what eq 'nytprof') {    # the zlib stream differs only in nothing; compare what it decodes to
            reads_as_ref($got, 'nytprof through the FIFO reads as the file does');
        } else {
            ok(slurp_raw($got) eq $ref{$what}, "$what: the reader got exactly the bytes a file gets");
        }
    }
}

# ---- a character device of our own: written in place, never replaced -------
SKIP: {
    skip 'mknod needs root', 3 if $> != 0;
    my $dev = "$tmp/null";
    system('mknod', $dev, 'c', '1', '3') == 0 or skip 'mknod failed', 3;
    for my $to (qw(nytprof collapsed)) {
        my ($rc, $e) = run_pb('convert', $in, '--to', $to, '-o', $dev);
        ok($rc == 0 && -c $dev, "$to -o <char device>: exit 0 and still a character device") or diag $e;
    }
    my ($rc, $e) = run_pb('dump', $in, '-o', $dev);
    ok($rc == 0 && -c $dev, 'dump -o <char device>: still a character device') or diag $e;
}

# ---- a symlink output updates its target ------------------------------------
{
    mkdir "$tmp/real";
    spew("$tmp/real/target.txt", "old\n");
    chmod 0640, "$tmp/real/target.txt";
    symlink 'real/target.txt', "$tmp/link" or die;
    my ($rc, $e) = run_pb('convert', $in, '--to', 'collapsed', '-o', "$tmp/link");
    is($rc, 0, 'collapsed -o symlink') or diag $e;
    ok(-l "$tmp/link", 'the link is still a link');
    ok(slurp_raw("$tmp/real/target.txt") eq $ref{collapsed}, 'its target holds the output');
    is((stat "$tmp/real/target.txt")[2] & 07777, 0640, 'and keeps its permission bits');
    is(listing("$tmp/real"), 'target.txt', 'no temp file beside the target');
    symlink 'real/new.nytprof', "$tmp/dangling" or die;
    ($rc, $e) = run_pb('convert', $in, '-o', "$tmp/dangling");
    ok($rc == 0 && -l "$tmp/dangling" && -f "$tmp/real/new.nytprof", 'a dangling link: its target is created')
        or diag $e;
}

# ---- a failed run leaves an existing output byte-identical ------------------
{
    my $bad = "$tmp/trunc.bin";
    my $bytes = slurp_raw($in);
    spew($bad, substr($bytes, 0, length($bytes) > 3000 ? 3000 : int(length($bytes) / 2)));
    mkdir "$tmp/keep";
    for my $case ([dump => 'dump', $bad, '-o'], [collapsed => 'convert', $bad, '--to', 'collapsed', '-o'],
                  [nytprof => 'convert', $bad, '-o']) {
        my ($what, @args) = @$case;
        my $out = "$tmp/keep/$what.out";
        spew($out, "precious $what\n");
        my ($rc, $e) = run_pb(@args, $out);
        is($rc, 2, "$what of a truncated input exits 2");
        like($e, qr/^tachyon: truncated: /, "$what: the decoder's error, with its class");
        is(slurp_raw($out), "precious $what\n", "$what: the existing output is byte-identical");
    }
    is(listing("$tmp/keep"), 'collapsed.out dump.out nytprof.out', 'no temp file left behind');
}

# ---- --to statprofiler: atomic, with the decoder's error --------------------
SKIP: {
    skip 'this build has no snappy (StatProfiler records)', 7 unless $snappy;
    my $bad = "$tmp/trunc.bin";
    mkdir "$tmp/sp";
    my ($rc, $e) = run_pb('convert', $bad, '--to', 'statprofiler', '-o', "$tmp/sp/out");
    is($rc, 2, '--to statprofiler on a truncated input exits 2');
    like($e, qr/^tachyon: truncated: .* at byte \d+ of /, 'with the decoder\'s message, class and offset');
    is(listing("$tmp/sp"), '', 'and leaves nothing behind (no partial trace, no temp directory)');

    # symlinks planted at every name the old writer used are not followed
    my $victim = "$tmp/victim";
    spew($victim, "victim\n");
    symlink $victim, "$tmp/sp/$_" or die for qw(out_ out.t0_ out.t1_ out.t2_ out.t3_ out.t4_ one_);
    ($rc, $e) = run_pb('convert', $in, '--to', 'statprofiler', '-o', "$tmp/sp/out");
    is($rc, 0, '--to statprofiler beside planted symlinks') or diag $e;
    my $w = Devel::ProfileBridge::StatProfilerWriter->new(file => "$tmp/sp/one");
    $w->start_sample(1, 'op')->main_frame('x.pl', 1)->end_sample->close;
    is(slurp_raw($victim), "victim\n", 'the planted symlinks were not followed');
    my @traces = grep { /^out\.[0-9a-f]{48}\.00000001\z/ } split ' ', listing("$tmp/sp");
    is(scalar @traces, 5, 'five traces in place');
    unlike(listing("$tmp/sp"), qr/(?:^|\s)\./, 'no hidden temp file or directory remains');
}

# ---- long names -----------------------------------------------------------------
{
    my $long = "$tmp/" . ('n' x 250);
    for my $to (qw(nytprof collapsed)) {
        unlink $long;
        my ($rc, $e) = run_pb('convert', $in, '--to', $to, '-o', $long);
        ok($rc == 0 && -s $long, "$to to a 250-byte file name") or diag $e;
    }
    unlink $long;
  SKIP: {
        skip 'this build has no snappy', 1 unless $snappy;
        my ($rc, $e) = run_pb('convert', $one, '--to', 'statprofiler', '-o', $long);
        ok($rc == 0 && -s $long, 'statprofiler (one thread) to a 250-byte file name') or diag $e;
        unlink $long;
    }
}

# ---- SIGTERM while writing removes the temp file ------------------------------
{
    mkdir "$tmp/sig";
    pipe my $r, my $wr or die;
    my $pid = fork // die;
    if (!$pid) {    # a program writing a profile, killed half way
        close $r;
        my $w = Devel::ProfileBridge::NYTProfWriter->new(file => "$tmp/sig/out.nytprof");
        $w->write_chunk('VERSION', 5, 0);
        syswrite $wr, "ready\n";
        sleep 60;
        POSIX::_exit(0);
    }
    close $wr;
    my $ready = <$r>;
    ok(defined $ready && listing("$tmp/sig") =~ /^\.out\.nytprof\.\w{6}\z/, 'the temp file is there while writing');
    kill 'TERM', $pid;
    waitpid $pid, 0;
    is($? & 127, POSIX::SIGTERM(), 'the writer died of SIGTERM (the default action still happens)');
    is(listing("$tmp/sig"), '', 'and its temp file is gone, no output appeared');
}

# ---- 1,000 threads under ulimit -n 64 ---------------------------------------------
SKIP: {
    skip 'this build has no snappy', 3 unless $snappy;
    my $f = "$tmp/t1000.bin";
    spew($f, many_threads(1000));
    mkdir "$tmp/many";
    my $cmd = join ' ', map { "'$_'" } @perl, $pb, 'convert', $f, '--to', 'statprofiler', '-o', "$tmp/many/out";
    my $rc = system("ulimit -n 64 && exec $cmd >/dev/null 2>$tmp/many.err");
    is($rc, 0, '1,000 threads to StatProfiler under ulimit -n 64') or diag slurp_raw("$tmp/many.err");
    my @files = split ' ', listing("$tmp/many");
    is(scalar @files, 1000, 'one trace per thread');
    is(ticks_of(files => [ map { "$tmp/many/$_" } @files ]), 1000 * 1000, 'every sample read back (1,000 x 1,000 us)');
}

# ---- writer objects -------------------------------------------------------------------
sub nyt_copy {    # copy $in's chunks into $w
    my ($w) = @_;
    for_chunks { $w->write_chunk(@_) } filename => "$tmp/ref.nytprof";
}
sub err_class { my ($code) = @_; eval { $code->(); 1 } and return 'none'; ref $@ ? $@->class : "plain: $@" }
{
    # a forged handle, and a serialised copy, are refused, never dereferenced
    my $forged = bless \(my $x = 123456), 'Devel::ProfileBridge::StatProfilerWriter::Handle';
    is(err_class(sub { Devel::ProfileBridge::StatProfilerWriter::_xs_close($forged) }), 'usage',
        'a forged StatProfiler handle: usage error');
    is(err_class(sub { Devel::ProfileBridge::NYTProfWriter::_write(\1, 'VERSION', 5, 0) }), 'usage',
        'a plain reference as a NYTProf handle: usage error');
    my $w = Devel::ProfileBridge::NYTProfWriter->new(file => "$tmp/obj.nytprof");
    SKIP: {
        skip 'no Storable', 2 unless eval { require Storable; 1 };
        my $copy = eval { Storable::dclone($w) };
        skip 'Storable refuses the object', 2 unless $copy;
        is(err_class(sub { $copy->write_chunk('VERSION', 5, 0) }), 'usage', 'a dclone\'d writer: usage error');
        undef $copy;
        ok(1, 'the copy is destroyed without a crash');
    }
    nyt_copy($w);
    $w->close;
    reads_as_ref("$tmp/obj.nytprof", 'the original writes on');
    is(err_class(sub { $w->close }), 'usage', 'close twice: usage error');
}
SKIP: {
    skip 'perl without ithreads', 3 unless $Config{useithreads};
    require threads;
    skip 'this build has no snappy (the StatProfiler writer)', 3 unless $snappy;
    my $w = Devel::ProfileBridge::NYTProfWriter->new(file => "$tmp/thr.nytprof");
    my $s = Devel::ProfileBridge::StatProfilerWriter->new(file => "$tmp/thr.sp");
    $s->start_sample(2, 'op')->main_frame('x.pl', 3)->end_sample;
    my $t = threads->create(sub {
        # CLONE_SKIP: the clone's objects are unblessed and empty
        my @r = map { Scalar::Util::blessed($_) ? 'object' : 'empty' } $w, $s;
        push @r, eval { $w->close; 1 } ? 'closed' : 'refused';
        return join ',', @r;
    });
    my $r = $t->join;
    is($r, 'empty,empty,refused', 'a new thread gets no copy of a live writer (CLONE_SKIP)');
    nyt_copy($w);
    $w->close;
    $s->close;
    reads_as_ref("$tmp/thr.nytprof", 'NYTProf writer: the file re-reads exactly');
    is(ticks_of(filename => "$tmp/thr.sp"), 2 * 10000, 'StatProfiler writer: the trace re-reads exactly');
}
SKIP: {
    skip 'this build has no snappy (the StatProfiler writer)', 4 unless $snappy;
    my $w = Devel::ProfileBridge::NYTProfWriter->new(file => "$tmp/fork.nytprof");
    my $s = Devel::ProfileBridge::StatProfilerWriter->new(file => "$tmp/fork.sp");
    $s->start_sample(3, 'op')->main_frame('x.pl', 3)->end_sample;
    pipe my $r, my $wr or die;
    my $pid = fork // die;
    if (!$pid) {
        close $r;
        my @c = (err_class(sub { $w->write_chunk('VERSION', 5, 0) }), err_class(sub { $w->close }),
                 err_class(sub { $s->start_sample(1, 'x') }), err_class(sub { $s->close }));
        print $wr join(',', @c), "\n";
        close $wr;
        exit 0;    # a normal exit: DESTROY and END run in the child
    }
    close $wr;
    my $child = <$r>;
    waitpid $pid, 0;
    chomp $child;
    is($child, 'usage,usage,usage,usage', 'in a forked child every writer call is a usage error');
    is($? >> 8, 0, 'the child exits cleanly');
    nyt_copy($w);
    $w->close;
    $s->start_sample(1, 'op')->main_frame('x.pl', 4)->end_sample;
    $s->close;
    reads_as_ref("$tmp/fork.nytprof", 'after fork the parent\'s nytprof.out re-reads exactly');
    is(ticks_of(filename => "$tmp/fork.sp"), 4 * 10000, 'and its StatProfiler trace holds exactly its own samples');
}

done_testing;
