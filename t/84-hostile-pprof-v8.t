#!perl
# Hostile pprof and V8 inputs of issue 34 (round 3): each reproducer gives
# its documented error, or the right data.  The small ones are kept in
# t/data/crashers/pprof/ (fuzz smoke replays them); the large ones (80,000
# thread labels, 200 MiB strings, a 256 MiB .gz of samples, a .cpuprofile
# changed between passes) are built here with small sizes.
#
#   max_threads       pprof thread labels; every reader (Tachyon, EasyProfiler)
#                     and every target (nytprof fold, statprofiler, collapsed,
#                     speedscope, pprof)
#   max_string_bytes  pprof's string table, before its bytes are read
#   Sample bound      one Sample larger than max_stack_depth ids + 1 MiB
#   .gz ratio         a pprof .gz inflating past max(64 MiB, 64 x its size)
#   gzip members      read to the end, as go tool pprof reads them
#   lengths           a length varint of 2^64-1: truncated, with its text
#   detection         by field headers (a first Sample over 4 KB)
#   V8                pass 2 checks pass 1's counts (a file changed in between)
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use ProtoBytes qw(varint fv fl);
use RawFile qw(slurp_raw spew_raw);
use File::Temp qw(tempdir);
use Compress::Zlib ();
use Devel::ProfileBridge;
use Devel::ProfileBridge::ReadStream qw(for_chunks);

my $tmp = tempdir('pb84-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $C = 't/data/crashers/pprof';
my @PERL = ($^X, '-Mblib');
my $CLI = 'blib/script/profbridge';

# ---- protobuf by hand (independent of the reader) ----------------------------
my @STR = ('', 'cpu', 'nanoseconds', 'main.main', 'main.go', 'main.f', 'tid');
# a CPU profile: locations 1 (main.f) and 2 (main.main), the samples given
sub profile {
    my (%a) = @_;
    my $p = fl(1, fv(1, 1) . fv(2, 2));
    $p .= fl(2, $_) for @{ $a{samples} };
    $p .= fl(4, fv(1, 1) . fl(4, fv(1, 2) . fv(2, 12))) . fl(4, fv(1, 2) . fl(4, fv(1, 1) . fv(2, 3)));
    $p .= fl(5, fv(1, 1) . fv(2, 3) . fv(4, 4) . fv(5, 1)) . fl(5, fv(1, 2) . fv(2, 5) . fv(4, 4) . fv(5, 10));
    $p .= fl(6, $_) for @{ $a{strings} || \@STR };
    return $p . fl(11, fv(1, 1) . fv(2, 2)) . fv(12, 10000000);
}
# a sample of [main.f, main.main] and value $v, thread label tid = $tid
sub sample {
    my ($v, $tid) = @_;
    return fl(1, varint(1) . varint(2)) . fl(2, varint($v)) . (defined $tid ? fl(3, fv(1, 6) . fv(3, $tid)) : '');
}
sub spew { my ($name, $bytes) = @_; return spew_raw("$tmp/$name", $bytes) }

# the error of $code, or '' when it lived
sub err_of { my ($code) = @_; return eval { $code->(); 1 } ? '' : "$@" }

sub cli {
    my (@args) = @_;
    my $out = "$tmp/cli.out";
    my $pid = fork // die;
    if (!$pid) {
        open STDOUT, '>', $out or die;
        open STDERR, '>', "$out.err" or die;
        exec @PERL, $CLI, @args or die;
    }
    waitpid $pid, 0;
    return ($? >> 8, slurp_raw($out), slurp_raw("$out.err"));
}

# ---- 1. threads ------------------------------------------------------------------------
subtest 'max_threads: pprof thread labels through one index' => sub {
    my $n = 5000;
    my $f = spew('threads.pb', profile(samples => [ map { sample(100, $_) } 1 .. $n ]));
    my $e = err_of(sub { for_chunks(sub { }, filename => $f) });
    like($e, qr/\Approf: limit: more than max_threads \(4096\) threads \(thread and tid labels\) at byte \d+ of \Q$f\E/,
        "$n thread labels: a limit error at the default max_threads");
    my %pids;
    ok(!err_of(sub { for_chunks(sub { $pids{ $_[1] }++ if $_[0] eq 'PID_START' }, filename => $f, max_threads => 5000) }),
        'max_threads => 5000 reads them');
    is(scalar keys %pids, $n, "... $n threads, each its own pid");
    my $lib = Devel::ProfileBridge::features()->{libraries};
    for my $to (qw(nytprof statprofiler collapsed speedscope pprof)) {
        next if $to eq 'statprofiler' && !defined $lib->{snappy};    # the writer needs snappy
        my $dir = "$tmp/t-$to";
        mkdir $dir;
        my $out = $to eq 'statprofiler' ? "$dir/sp" : "$dir/out";
        my $e2 = err_of(sub { Devel::ProfileBridge::convert(in => $f, out => $out, to => $to, max_threads => 50) });
        like($e2, qr/\Approf: limit: more than max_threads \(50\) threads/, "to => $to: max_threads => 50 stops it");
        opendir my $dh, $dir or die;
        is_deeply([ grep { !/\A\.\.?\z/ } readdir $dh ], [], '... and leaves no file (no trace file per thread)');
    }
};

subtest 'max_threads: every reader, every target' => sub {
    my $lib = Devel::ProfileBridge::features()->{libraries};
    plan skip_all => 'this build has no zstd or snappy (the Tachyon file is compressed; StatProfiler records)'
        unless defined $lib->{zstd} && defined $lib->{snappy};
    for my $f ('t/data/tachyon/multithread.bin', 't/data/easyprofiler/ep_threads.prof',
        't/data/tachyon/multithread.bin.collapsed.txt') {
        my $e = err_of(sub { for_chunks(sub { }, filename => $f, max_threads => 4) });
        like($e, qr/\A\w+: limit: (?:.+: )?more than max_threads \(4\) threads/, "$f (5 threads) into nytprof.out: limit");
        ok(!err_of(sub { for_chunks(sub { }, filename => $f, max_threads => 5) }), '... max_threads => 5 reads it');
        for my $to (qw(statprofiler collapsed speedscope pprof)) {
            next if $to eq 'statprofiler' && $f =~ /easyprofiler/;    # spans: no StatProfiler output
            my $dir = "$tmp/r-$to-" . ($f =~ tr{/.}{__}r);
            mkdir $dir;
            my $e2 = err_of(sub { Devel::ProfileBridge::convert(in => $f, out => "$dir/out", to => $to, max_threads => 4) });
            like($e2, qr/\A\w+: limit: (?:.+: )?more than max_threads \(4\) threads/, "... to => $to: limit");
        }
    }
    my ($rc, $out, $err) = cli('info', '--max-threads', 4, 't/data/tachyon/multithread.bin');
    is($rc, 2, 'profbridge info --max-threads 4: exit 2');
    like($err, qr/\Atachyon: limit: t\S+: more than max_threads \(4\) threads\n\z/, '... the limit error');
    ($rc, $out, $err) = cli('info', '--max-threads', 0, 't/data/tachyon/multithread.bin');
    is($rc, 1, '--max-threads 0: a usage error');
};

# ---- 2. strings -----------------------------------------------------------------------
subtest 'max_string_bytes: the string table before its bytes are read' => sub {
    # the round-3 bomb with 2 strings of 40 MiB (each under max_record_size)
    my $head = profile(samples => [ sample(100) ]);
    my $gz = Compress::Zlib::deflateInit(-WindowBits => 31, -Level => 1) or die;
    my ($o, $st) = $gz->deflate($head);
    my $blk = 'A' x (1 << 20);
    for (1 .. 2) {
        my ($x) = $gz->deflate(varint(6 * 8 + 2) . varint(40 << 20));
        $o .= $x;
        for (1 .. 40) { my ($y) = $gz->deflate($blk); $o .= $y }
    }
    my ($z) = $gz->flush;
    my $f = spew('strings.pb.gz', $o . $z);
    my $e = err_of(sub { for_chunks(sub { }, filename => $f) });
    like($e, qr/\Approf: limit: a string_table entry of 41943040 bytes would take the string table past max_string_bytes \(33554432; \d+ bytes held\) at byte \d+ of /,
        'a 40 MiB string: limit at max_string_bytes (32 MiB), before it is inflated');
    my $p = spew('long-string.pb', profile(samples => [ sample(100) ], strings => [ @STR, 'x' x 5000 ]));
    like(err_of(sub { for_chunks(sub { }, filename => $p, max_string_bytes => 4096) }),
        qr/\Approf: limit: a string_table entry of 5000 bytes would take the string table past max_string_bytes \(4096; 46 bytes held\) at byte 108 of /,
        'max_string_bytes => 4096: one string of 5000 bytes is a limit');
    like(err_of(sub { for_chunks(sub { }, filename => $p, max_string_bytes => 5040) }),
        qr/past max_string_bytes \(5040; 46 bytes held\)/, '... and so is the table that passes it');
    ok(!err_of(sub { for_chunks(sub { }, filename => $p, max_string_bytes => 5047) }), '... 5047 holds them all');
    like(err_of(sub { for_chunks(sub { }, filename => $p, max_string_bytes => 5046) }), qr/max_string_bytes \(5046;/,
        '... 5046 does not (each string and its NUL)');
};

subtest 'one Sample, one .gz: bounded' => sub {
    my $big = fl(1, varint(1) x (2 << 20)) . fl(2, varint(100));
    my $f = spew('big-sample.pb.gz', Compress::Zlib::memGzip(profile(samples => [$big])));
    like(err_of(sub { for_chunks(sub { }, filename => $f) }),
        qr/\Approf: limit: a Sample of \d+ bytes: more than the 1093632 that max_stack_depth \(4096\) locations and 1 MiB of values and labels take at byte 6 of /,
        'a Sample of 2 MiB: a limit on pass 1, not read');
    # 80 MiB of samples from about 100 KB: past 64 MiB (64 x the .gz's size is less)
    my $s = fl(2, sample(100));
    my $gz = Compress::Zlib::deflateInit(-WindowBits => 31, -Level => 9) or die;
    my ($o) = $gz->deflate(profile(samples => []) );
    my $blk = $s x int((1 << 20) / length $s);
    for (1 .. 80) { my ($y) = $gz->deflate($blk); $o .= $y }
    my ($z) = $gz->flush;
    my $g = spew('many-samples.pb.gz', $o . $z);
    cmp_ok(-s $g, '<', 1 << 20, '... a .gz of ' . (-s $g) . ' bytes');
    like(err_of(sub { for_chunks(sub { }, filename => $g) }),
        qr/\Approf: limit: decompressed data exceeds max_decompressed_bytes \(67108864: 64 MiB, or 64 times the .gz file's size, unless max_decompressed_bytes is given\)/,
        '... inflating to 80 MiB: a limit at 64 MiB');
};

# ---- 3. gzip members ------------------------------------------------------------------
# go tool pprof -raw of gzip-multimember.pb.gz (the independent reader):
#   cpu/nanoseconds   100: 1 2   900: 2   (location 1 main.f, 2 main.main)
subtest 'gzip members read to the end' => sub {
    my $want = "tid:main;main.main 900\ntid:main;main.main;main.f 100\n";
    for my $case ([ 'gzip-multimember.pb.gz', $want ], [ 'gzip-split-members.pb.gz', "tid:main;main.main;main.f 100\n" ]) {
        my ($name, $w) = @$case;
        my ($rc, $out, $err) = cli('convert', "$C/$name", '--to', 'collapsed', '-o', '-');
        is("$rc $out$err", "0 $w", "$name from a path: every member's samples");
        my $pid = open my $fh, '-|' // die;
        if (!$pid) {
            open STDIN, '<', "$C/$name" or die;
            open STDERR, '>', '/dev/null' or die;
            exec @PERL, $CLI, 'convert', '-', '--to', 'collapsed', '-o', '-' or die;
        }
        local $/;
        my $stdin = <$fh>;
        close $fh;
        is($stdin, $w, '... the same from standard input');
    }
    my $e = err_of(sub { for_chunks(sub { }, filename => "$C/gzip-trailing-garbage.pb.gz") });
    like($e, qr/\Approf: corrupt: bytes after a gzip member \(from byte 156 of the file\) are not another gzip member at byte 136 of /,
        'trailing garbage after the last member: corrupt, not ignored (offset in inflated bytes)');
};

# ---- 5. lengths -------------------------------------------------------------------------
subtest 'a length varint of 2^64-1' => sub {
    like(err_of(sub { for_chunks(sub { }, filename => "$C/len-2e64-abort") }),
        qr/\Approf: truncated: string_table entry of 18446744073709551615 bytes runs past the end of the input at byte 138 of /,
        'a string_table entry: truncated, with its text and offset');
    like(err_of(sub { for_chunks(sub { }, filename => "$C/abort-fuzz-found", format => 'pprof') }),
        qr/\Approf: truncated: sample_type of 18446744073709551615 bytes runs past the end of the input at byte 11 of /,
        'the fuzzer\'s input, as pprof: truncated');
    like(err_of(sub { for_chunks(sub { }, filename => "$C/abort-fuzz-found") }),
        qr/\ADevel::ProfileBridge: corrupt: not a profile this distribution recognises/, '... detected: not a profile');
    # the same length on a Sample, on a skipped field, on a Location
    for my $f ([ 2, 'Sample' ], [ 99, 'unknown field' ], [ 4, 'Location' ]) {
        my $p = spew("len-$f->[0].pb", profile(samples => [ sample(100) ]) . varint($f->[0] * 8 + 2) . varint(2**64 - 1));
        my $e = err_of(sub { for_chunks(sub { }, filename => $p, format => 'pprof') });
        like($e, qr/\Approf: (?:truncated|corrupt): .+ at byte \d+ of /, "... on a $f->[1]: a documented error");
    }
};

# ---- 6. detection ----------------------------------------------------------------------
subtest 'detection by field headers' => sub {
    is(Devel::ProfileBridge::detect_format("$C/first-sample-over-4k")->{format}, 'pprof',
        'a first Sample of 42 KB: pprof');
    my ($rc, $out, $err) = cli('info', "$C/first-sample-over-4k");
    is($rc, 0, 'info reads it');
    like($out, qr/^format:      pprof$/m, '... format: pprof');
    is($err, '', '... no warning');
    my $f = spew('s100k.pb', profile(samples => [ fl(1, join '', map { varint($_ % 2 + 1) } 1 .. 100000) . fl(2, varint(100)) ]));
    is(Devel::ProfileBridge::detect_format($f)->{format}, 'pprof', 'a first Sample of 100,000 locations: pprof');
    like(err_of(sub { for_chunks(sub { }, filename => $f) }),
        qr/\Approf: limit: a sample of more than max_stack_depth \(4096\) locations/, '... read as one (max_stack_depth)');
    my $g = spew('gz-s100k.pb.gz', Compress::Zlib::memGzip(slurp_raw($f)));
    is(Devel::ProfileBridge::detect_format($g)->{format}, 'pprof', '... gzipped too');
    my $j = spew('junk.bin', "\x0a\x05junk!" . ("\xff" x 5000));
    ($rc, $out, $err) = cli('info', $j);
    is($rc, 2, 'info of an unrecognised file: exit 2');
    like($err, qr/\Aprofbridge: corrupt: not a profile this distribution recognises/, '... a clear error');
    unlike($out . $err, qr/uninitialized|^format:\s*$/m, '... never an empty format or a Perl warning');
};

# ---- 7. V8 ---------------------------------------------------------------------------------
subtest 'V8: a file changed between the passes' => sub {
    plan skip_all => 'this build has no yajl (V8 .cpuprofile files)'
        unless defined Devel::ProfileBridge::features()->{libraries}{yajl};
    my $N = 20000;
    my $nodes = '[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2]},'
        . '{"id":2,"callFrame":{"functionName":"main","scriptId":"1","url":"file:///t/a.js","lineNumber":1,"columnNumber":0},"hitCount":0,"children":[3]},'
        . '{"id":3,"callFrame":{"functionName":"f","scriptId":"1","url":"file:///t/a.js","lineNumber":2,"columnNumber":0},"hitCount":0}]';
    my $pad = ' ' x (1 << 20);    # pass 1 reports progress (once per MiB) after the arrays, before the nodes
    my $orig = '{"samples":[' . join(',', (3) x $N) . '],"timeDeltas":[' . join(',', (10) x $N)
        . qq(],"startTime":0,"endTime":@{[ 10 * $N + 10 ]},$pad"nodes":$nodes});
    my $at = index($orig, '"samples":[') + 11;
    my %mut = (
        shorter => sub { my $x = shift; my $i = index($x, ']', $at); substr($x, $at + 1, $i - $at - 1) = ' ' x ($i - $at - 1); $x },
        same_count => sub { my $x = shift; substr($x, $at, 1) = '2'; $x },
    );
    my $f = "$tmp/g.cpuprofile";
    for my $name (sort keys %mut) {
        spew_raw($f, $orig);
        my $new = $mut{$name}->($orig);
        is(length $new, length $orig, "$name: the same length");
        my $hooked = 0;
        my $e = err_of(sub {
            for_chunks(sub { }, filename => $f, progress => sub {
                return if $hooked || $_[0] < 1000000;
                $hooked = 1;
                open my $w, '+<', $f or die;
                print {$w} $new;
                close $w;
            });
        });
        ok($hooked, '... changed during pass 1');
        like($e, qr/\Av8: corrupt: the file changed while it was read/, '... a corrupt error, never exit 0 with other numbers');
    }
    spew_raw($f, $orig);
    my $ticks = 0;
    ok(!err_of(sub { for_chunks(sub { $ticks += $_[1] if $_[0] eq 'TIME_LINE' }, filename => $f) }), 'unchanged: read');
    is($ticks, 10 * $N * 1000, "... $N samples of 10 µs");
};

done_testing;
