#!/usr/bin/perl
# Issue 15 point 6, the input side: gzip-compressed profiles of every format
# read transparently (the gzip made by the real gzip tool: IO::Compress is
# only used when gzip(1) is missing), "-" reads standard input, info reads a
# FIFO once, an empty input is a clear error and an empty profile a warning,
# a non-numeric thread is a usage error.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX ();
use RawFile qw(slurp_raw);
use TachyonFile qw(many_threads);
use Devel::ProfileBridge ();

my $data = "$FindBin::Bin/data";
my $pb = "$FindBin::Bin/../bin/profbridge";
my @perl = ($^X, map { "-I$_" } @INC);
my $tmp = tempdir('pb25-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub spew { my ($f, $b) = @_; open my $fh, '>:raw', $f or die "$f: $!"; print $fh $b; close $fh or die }
sub gz {
    my ($from, $to) = @_;
    if (system("gzip -c '$from' > '$to' 2>/dev/null") != 0) {
        require IO::Compress::Gzip;
        IO::Compress::Gzip::gzip($from => $to) or die "gzip $from";
    }
}
sub run_pb {    # (exit, stdout, stderr); stdin from $in_file when given
    my ($in_file, @args) = @_;
    my $pid = fork // die;
    if (!$pid) {
        open STDIN, '<', $in_file or POSIX::_exit(99) if defined $in_file;
        open STDOUT, '>', "$tmp/out.txt" or POSIX::_exit(99);
        open STDERR, '>', "$tmp/err.txt" or POSIX::_exit(99);
        exec @perl, $pb, @args or POSIX::_exit(98);
    }
    waitpid $pid, 0;
    return ($? >> 8, slurp_raw("$tmp/out.txt"), slurp_raw("$tmp/err.txt"));
}

my ($sp) = glob("$data/statprofiler/xs_calls.out.*[0-9a-f]");
my $lib = Devel::ProfileBridge::features()->{libraries};    # zstd and snappy are optional
my %inputs = (
    nytprof      => "$data/nytprof/evals.nytprof.out",
    pynytprof    => "$data/pynytprof/fib.nytprof.out",
    easyprofiler => "$data/easyprofiler/ep_threads.prof",
    tachyon      => defined $lib->{zstd} ? "$data/tachyon/multithread.bin" : "$data/tachyon/cpu_recursion.bin",
    (defined $lib->{snappy} ? (statprofiler => $sp) : ()),
);
for my $fmt (sort keys %inputs) {
    my $f = $inputs{$fmt};
    (my $base = $f) =~ s{.*/}{};
    my $g = "$tmp/$base.gz";    # as gzip(1) names it (the decoders name the application from the base name)
    gz($f, $g);
    my $plain = Devel::ProfileBridge::chunk_counts($f);
    is_deeply(Devel::ProfileBridge::chunk_counts($g), $plain, "$fmt: a gzip-compressed profile reads as the original");
    is(Devel::ProfileBridge::detect_format($g)->{format}, $fmt, "$fmt: detected through gzip");
    my ($rc, $out, $err) = run_pb(undef, 'dump', $g);
    my ($rc0, $out0) = run_pb(undef, 'dump', $f);
    # the application attribute names the file read: for EasyProfiler its path
    my $app = sub { my $t = shift; $fmt eq 'easyprofiler' ? $t =~ s/^\["ATTRIBUTE","application",.*\n//mr : $t };
    ok($rc == 0 && $app->($out) eq $app->($out0), "$fmt: profbridge dump FILE.gz = dump FILE (date from the gzip header)")
        or diag $err;
    ($rc, $out, $err) = run_pb($f, 'dump', '-');
    my $nodate = sub { $app->(shift) =~ s/^\["ATTRIBUTE","(?:application|basetime)",.*\n//mgr };
    ok($rc == 0 && $nodate->($out) eq $nodate->($out0), "$fmt: profbridge dump - (standard input) = dump FILE")
        or diag $err;
}

# gzip limits and damage are errors of their own
{
    (my $g = $inputs{tachyon}) =~ s{.*/}{$tmp/};
    $g .= '.gz';
    my $e = eval { Devel::ProfileBridge::chunk_counts($g, max_decompressed_bytes => 1000); 1 } ? '' : $@;
    like("$e", qr/^gzip: limit: .*max_decompressed_bytes/, 'a gzip that inflates past max_decompressed_bytes: limit');
    spew("$tmp/cut.gz", substr(slurp_raw($g), 0, 200));
    $e = eval { Devel::ProfileBridge::chunk_counts("$tmp/cut.gz"); 1 } ? '' : $@;
    like("$e", qr/^gzip: corrupt: \S*cut\.gz: /, 'a cut gzip: corrupt, naming the file');
    # a damaged profile inside a good gzip names the user's file
    spew("$tmp/trunc.bin", substr(slurp_raw($inputs{tachyon}), 0, 3000));
    gz("$tmp/trunc.bin", "$tmp/trunc.bin.gz");
    $e = eval { Devel::ProfileBridge::chunk_counts("$tmp/trunc.bin.gz"); 1 } ? '' : $@;
    like("$e", qr/^tachyon: truncated: .* of \S*trunc\.bin\.gz \(gunzipped\)$/, 'errors inside name FILE.gz (gunzipped)');
}

# a gzip file whose name does not end in .gz: the decoder is handed the file
# unpeeked (one open for a plain one), detection names nothing, and it is
# read through the inflated copy all the same; a cut one is gzip's error
{
    my %more = (%inputs, folded => "$data/folded/nytprofcalls_modapp.folded",
        v8 => "$data/v8/v8_recursion.cpuprofile");
    # (V8 needs yajl, an optional library)
    for my $fmt (grep { $_ ne 'v8' || defined $lib->{yajl} } qw(folded v8 tachyon easyprofiler)) {
        my $g = "$tmp/$fmt-gzipped.profile";
        gz($more{$fmt}, $g);
        is_deeply(Devel::ProfileBridge::chunk_counts($g), Devel::ProfileBridge::chunk_counts($more{$fmt}),
            "$fmt: gzip under a name without .gz reads as the original");
        my ($rc, $out, $err) = run_pb(undef, 'info', $g);
        ok($rc == 0 && $out =~ /^format:\s+\Q$fmt\E/m && $out =~ /gzip/, "$fmt: profbridge info on it names the format and gzip")
            or note "rc $rc: $out$err";
        my ($rc2, $out2, $err2) = run_pb($g, 'info', '-');    # gzip on standard input (zcat-less)
        ok($rc2 == 0 && $out2 =~ /^format:\s+\Q$fmt\E/m && $out2 =~ /gzip/, "$fmt: profbridge info - on its gzip")
            or note "rc $rc2: $out2$err2";
    }
    spew("$tmp/cut-gzipped.profile", substr(slurp_raw("$tmp/tachyon-gzipped.profile"), 0, 200));
    my ($rc, $out, $err) = run_pb(undef, 'info', "$tmp/cut-gzipped.profile");
    ok($rc != 0 && $err =~ /^gzip: corrupt: \S*cut-gzipped\.profile: /m, 'a cut gzip without .gz: gzip: corrupt, non-zero exit')
        or note "rc $rc: $err";
    ($rc, $out, $err) = run_pb("$tmp/cut-gzipped.profile", 'info', '-');
    ok($rc != 0 && $err =~ /^gzip: corrupt: standard input: /m, 'a cut gzip on standard input: gzip: corrupt, non-zero exit')
        or note "rc $rc: $err";
}

# standard input and FIFOs are read once
{
    my $f = $inputs{tachyon};
    my ($rc, $out, $err) = run_pb($f, 'info', '-');
    ok($rc == 0 && $out =~ /^format:\s+tachyon$/m, 'info - reads standard input') or diag $err;
    ($rc, $out, $err) = run_pb($f, 'convert', '-', '--to', 'collapsed', '-o', '-');
    my ($rc0, $out0) = run_pb(undef, 'convert', $f, '--to', 'collapsed', '-o', '-');
    ok($rc == 0 && $out eq $out0 && length $out, 'convert - --to collapsed -o -: a pipe end to end') or diag $err;
  SKIP: {
        my $fifo = "$tmp/in.fifo";
        skip 'no mkfifo', 1 unless POSIX::mkfifo($fifo, 0600);
        my $w = fork // die;
        if (!$w) {    # one writer: the FIFO can be read once
            open my $o, '>:raw', $fifo or POSIX::_exit(1);
            print $o slurp_raw($f);
            close $o;
            POSIX::_exit(0);
        }
        local $SIG{ALRM} = sub { die "info hung on a FIFO\n" };
        alarm 60;
        ($rc, $out, $err) = run_pb(undef, 'info', $fifo);
        alarm 0;
        waitpid $w, 0;
        ok($rc == 0 && $out =~ /^chunks:\s+\d+/m, 'info FIFO: reads the FIFO once, no hang') or diag $err;
    }
}

# read in C (c/source.c): gzip members as a stream, standard input as a
# stream, a copy only for a format that seeks (none left behind)
{
    my $spool = "$tmp/spool";
    mkdir $spool or die;
    local $ENV{TMPDIR} = $spool;
    my $left = sub { opendir my $d, $spool or die; scalar grep { !/\A\.\.?\z/ } readdir $d };
    # a multi-member gzip (two gzip files one after the other, RFC 1952 2.2) on standard input
    my $folded = "$data/folded/nytprofcalls_modapp.folded";
    my @lines = split /^/m, slurp_raw($folded);
    my $half = int(@lines / 2);
    spew("$tmp/part1", join '', @lines[0 .. $half - 1]);
    spew("$tmp/part2", join '', @lines[$half .. $#lines]);
    gz("$tmp/part$_", "$tmp/part$_.gz") for 1, 2;
    spew("$tmp/two-members.gz", slurp_raw("$tmp/part1.gz") . slurp_raw("$tmp/part2.gz"));
    my ($rc0, $want) = run_pb(undef, 'convert', $folded, '--to', 'collapsed', '-o', '-');
    my ($rc, $out, $err) = run_pb("$tmp/two-members.gz", 'convert', '-', '--to', 'collapsed', '-o', '-');
    ok($rc0 == 0 && $rc == 0 && $out eq $want, 'a two-member gzip on standard input reads as the whole file')
        or note "rc $rc: $err";
    ($rc, $out, $err) = run_pb(undef, 'convert', "$tmp/two-members.gz", '--to', 'collapsed', '-o', '-');
    ok($rc == 0 && $out eq $want, '... and as a file') or note "rc $rc: $err";
    # a member followed by bytes that start no other: corrupt, not ignored
    spew("$tmp/trailing.gz", slurp_raw("$tmp/part1.gz") . "trailing junk");
    ($rc, $out, $err) = run_pb("$tmp/trailing.gz", 'info', '-');
    ok($rc != 0 && $err =~ /^gzip: corrupt: standard input: bytes after a gzip member/m,
        'bytes after a gzip member on standard input: gzip: corrupt') or note "rc $rc: $err";
    # a gzip larger than the limit on standard input, read as a stream and into a copy
    ($rc, $out, $err) = run_pb("$tmp/two-members.gz", 'info', '-', '--max-decompressed-bytes', 1000);
    ok($rc == 2 && $err =~ /^gzip: limit: inflates to more than max_decompressed_bytes \(1000\) at byte \d+ of standard input$/m,
        'a gzip on standard input past --max-decompressed-bytes: gzip: limit, at a byte of standard input')
        or note "rc $rc: $err";
    my $tach = $inputs{tachyon};
    (my $tgz = $tach) =~ s{.*/}{$tmp/};
    $tgz .= '.gz';    # (made above)
    ($rc, $out, $err) = run_pb($tgz, 'info', '-', '--max-decompressed-bytes', 1000);
    ok($rc == 2 && $err =~ /^gzip: limit: inflates to more than max_decompressed_bytes \(1000\) at byte \d+ of standard input$/m,
        '... and for a format that seeks (its copy bounded as well)') or note "rc $rc: $err";
    # formats that seek or read twice, from standard input: what the file gives
    my %seeking = (tachyon => $tach, pprof => "$data/pprof/cpu_inline.prof",
        pynytprof => $inputs{pynytprof},    # (no stack samples: an empty output)
        (defined $lib->{yajl} ? (v8 => "$data/v8/v8_recursion.cpuprofile") : ()));
    for my $fmt (sort keys %seeking) {
        my $f = $seeking{$fmt};
        ($rc0, $want) = run_pb(undef, 'convert', $f, '--to', 'collapsed', '-o', '-');
        ($rc, $out, $err) = run_pb($f, 'convert', '-', '--to', 'collapsed', '-o', '-');
        ok($rc0 == 0 && $rc == 0 && $out eq $want && (length $out || $fmt eq 'pynytprof'),
            "$fmt (seeks) from standard input = from the file")
            or note "rc $rc: $err";
        gz($f, "$tmp/$fmt-seek.gz");
        ($rc, $out, $err) = run_pb("$tmp/$fmt-seek.gz", 'convert', '-', '--to', 'collapsed', '-o', '-');
        ok($rc == 0 && $out eq $want, "$fmt (seeks) gzipped on standard input = the file") or note "rc $rc: $err";
    }
    # an error inside a gzipped standard input names it (gunzipped)
    gz("$tmp/trunc.bin", "$tmp/trunc-stdin.gz");
    ($rc, $out, $err) = run_pb("$tmp/trunc-stdin.gz", 'info', '-');
    ok($rc != 0 && $err =~ /^tachyon: truncated: .* of standard input \(gunzipped\)$/m,
        'an error inside gzipped standard input names standard input (gunzipped)') or note "rc $rc: $err";
    is($left->(), 0, 'no temporary copy left behind');
}

# empty input, empty profile, bad thread
{
    spew("$tmp/empty", '');
    my ($rc, $out, $err) = run_pb(undef, 'info', "$tmp/empty");
    ok($rc == 2 && $err =~ /^profbridge: corrupt: empty file/, 'an empty file: exit 2, corrupt') or diag $err;
    ($rc, $out, $err) = run_pb("$tmp/empty", 'info', '-');
    ok($rc == 2 && $err =~ /^profbridge: corrupt: standard input: empty input/, 'empty standard input: exit 2')
        or diag $err;
    spew("$tmp/zero.bin", many_threads(0));
    ($rc, $out, $err) = run_pb(undef, 'convert', "$tmp/zero.bin", '-o', "$tmp/zero.nytprof");
    ok($rc == 0 && $err =~ /warning: the profile holds no samples/, 'a profile with no samples: a warning (nytprof)')
        or diag $err;
    ($rc, $out, $err) = run_pb(undef, 'convert', "$tmp/zero.bin", '--to', 'collapsed', '-o', "$tmp/zero.txt");
    ok($rc == 0 && $err =~ /warning: .*no stack samples/, 'and for collapsed') or diag $err;
    my $e = eval { Devel::ProfileBridge::chunk_counts($inputs{tachyon}, thread => 'abc'); 1 } ? '' : $@;
    like($e, qr/^tachyon: unsupported: \S+\.bin: no thread "abc": Tachyon threads are numbered \(its threads: \d+/,
        "thread => 'abc' on Tachyon is an error listing the threads, not thread 0");
    ($rc, $out, $err) = run_pb(undef, 'info', $inputs{tachyon}, '--thread', 'abc');
    ok($rc == 2 && $err =~ /no thread "abc"/, '--thread abc too') or diag $err;
}

done_testing;
