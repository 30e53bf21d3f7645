#!perl
# Issue 27, items 5-7 and 9: exact arithmetic and honest messages.
#   - weight x interval (and the sums of weights) never wrap: pprof, speedscope,
#     collapsed (a merge's ns) and the nytprof fold's ticks fail with a `limit`
#     error, as merge does;
#   - limits and pid are 64-bit values checked for range (4294967297 is not 1);
#   - usage errors, from the CLI and the API alike, exit 1 with "profbridge:";
#   - output errors name the output and the system's reason (no "at byte 0");
#   - control bytes from a profile or a file name never reach the terminal raw;
#   - --salvage offsets in compressed files are file offsets;
#   - an empty input is named empty for every target;
#   - collapsed escapes "\" too; merged pprof has a PeriodType; a forged writer
#     object is a usage error; a child forked in a callback stops reading;
#     max_statements is bounded by the input's size.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use lib "$FindBin::Bin/lib";
use RawFile qw(slurp_raw spew_raw);
use TachyonFile qw(varint);
use Devel::ProfileBridge ();

# StatProfiler records need snappy; without it that target is left out
my @with_sp = defined Devel::ProfileBridge::features()->{libraries}{snappy} ? ('statprofiler') : ();
use Devel::ProfileBridge::ReadStream ();
use Devel::ProfileBridge::NYTProfWriter ();
use Devel::ProfileBridge::StatProfilerWriter ();

my $tmp = tempdir('pb98-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @pb = ($^X, '-Mblib', "$FindBin::Bin/../bin/profbridge");
sub run {
    my $cmd = join ' ', map { my $a = $_; $a =~ s/'/'\\''/g; "'$a'" } @_;
    my $out = `$cmd 2>&1`;
    return ($? >> 8, $out);
}

# A pre-3.15 Tachyon file: one sample of main > work > leaf per entry of
# @$threads (a thread id, repeated for more samples of that thread); the
# interval (us), the start time and the sub names may be chosen.
sub tachyon {
    my (%o) = @_;
    my @tids = @{ $o{threads} || [1] };
    my @names = @{ $o{names} || [qw(main work leaf)] };
    my $samples = '';
    $samples .= pack('Q< V C', $_, 0, 1) . varint(1) . "\0" . varint(3) . varint(2) . varint(1) . varint(0) for @tids;
    my @str = ($o{file} // 'app.py', @names);
    my $strings = join '', map { varint(length) . $_ } @str;
    my $zig = sub { my $v = shift; varint($v >= 0 ? 2 * $v : -2 * $v - 1) };
    my $frames = '';
    $frames .= varint(0) . varint($_->[0]) . $zig->($_->[1]) . $zig->(0) x 3 . chr(255) for [1, 10], [2, 20], [3, 30];
    my %seen;
    my $nthreads = grep { !$seen{$_}++ } @tids;
    my $str_off = 64 + length $samples;
    my $frm_off = $str_off + length $strings;
    my $size = $frm_off + length($frames) + 32;
    my $hdr = pack('V V C4 Q< Q< V V Q< Q< V', 0x54414348, 1, 3, 14, 0, 0, $o{start} // 1_000_000,
        $o{interval} // 1000, scalar @tids, $nthreads, $str_off, $frm_off, 0);
    $hdr .= "\0" x (64 - length $hdr);
    return $hdr . $samples . $strings . $frames . pack('V V Q<', scalar @str, 3, $size) . ("\0" x 16);
}

sub file_of { my ($name, $bytes) = @_; spew_raw("$tmp/$name", $bytes); return "$tmp/$name" }

# ---- item 5: weight x interval ------------------------------------------------
subtest 'weight x interval never wraps' => sub {
    # 5 samples x 4e15 us = 2e19 ns: above 2^63 (pprof gave -8.6e12 ns, speedscope
    # an endValue below the sum of the weights)
    my $ov = file_of('ov.bin', tachyon(threads => [ (1) x 5 ], interval => 4_000_000_000_000_000));
    for my $to (qw(pprof speedscope)) {
        my $out = "$tmp/ov.$to";
        ok(!eval { Devel::ProfileBridge::convert(in => $ov, out => $out, to => $to); 1 }, "--to $to refused");
        my $e = $@;
        is(ref $e && $e->class, 'limit', "--to $to: a limit error");
        like("$e", qr/^$to: limit: .*sampled time of 5 x 4000000000000000000 ns does not fit 63 bits/,
            "--to $to: says what does not fit");
        ok(!-e $out, "--to $to: nothing written");
    }
    # a merge's weights are ns: their sums in collapsed output are checked too
    my $out = "$tmp/ov.merged";
    ok(!eval { Devel::ProfileBridge::merge(in => [ $ov, $ov ], out => $out, to => 'collapsed'); 1 },
        'merge --to collapsed of sums above 2^63 refused');
    like("$@", qr/^collapsed: limit: .*does not fit 63 bits/, 'merge --to collapsed: a limit error');
    ok(!-e $out, 'merge --to collapsed: nothing written');
    # the nytprof fold's ticks: a timestamp near 2^64 made PID_END wrap below PID_START
    my $late = file_of('late.bin', tachyon(threads => [ 1, 1 ], start => '18446744073709551000', interval => 1_000_000));
    $out = "$tmp/late.nytprof";
    ok(!eval { Devel::ProfileBridge::convert(in => $late, out => $out, source => 0); 1 },
        'nytprof: ticks beyond 2^63 refused');
    like("$@", qr/^tachyon: limit: .*does not fit 63 bits/, 'nytprof: a limit error');
    ok(!-e $out, 'nytprof: nothing written');
    # an ordinary interval still converts
    my $ok = file_of('ok.bin', tachyon(threads => [ (1) x 5 ], interval => 1000));
    ok(eval { Devel::ProfileBridge::convert(in => $ok, out => "$tmp/ok.pprof", to => 'pprof'); 1 }, 'a small interval converts')
        or diag $@;
};

# ---- item 5: limits as 64-bit values ------------------------------------------
subtest 'limits and pid are checked for range' => sub {
    my $in = file_of('lim.bin', tachyon());
    for my $case ([ max_stack_depth => 4294967297 ], [ max_line => 2**32 ], [ max_strings => '4294967296' ],
        [ max_frames => '99999999999999999999' ], [ max_statements => '18446744073709551616' ],
        [ max_decompressed_bytes => 2**64 ], [ pid => 4294967297 ], [ max_stack_depth => 0 ])
    {
        my ($k, $v) = @$case;
        ok(!eval { Devel::ProfileBridge::convert(in => $in, out => "$tmp/lim.out", to => 'collapsed', $k => $v); 1 },
            "$k => $v refused");
        my $e = $@;
        is(ref $e && $e->class, 'usage', "$k => $v: a usage error");
        like("$e", qr/^Devel::ProfileBridge: usage: convert: \Q$k\E must be/, "$k => $v: names the option");
    }
    ok(eval { Devel::ProfileBridge::convert(in => $in, out => "$tmp/lim.out", to => 'collapsed',
        max_stack_depth => 4294967295, max_statements => '18446744073709551615'); 1 }, 'the largest values are taken')
        or diag $@;
    my ($rc, $out) = run(@pb, 'convert', $in, '--to', 'collapsed', '-o', "$tmp/lim.cli", '--max-stack-depth', 4294967297);
    is($rc, 1, 'CLI --max-stack-depth 4294967297: exit 1');
    like($out, qr/^profbridge: usage: convert: max_stack_depth must be a positive integer up to 4294967295/,
        'CLI --max-stack-depth 4294967297: refused, not read as 1');
};

# ---- item 6: usage errors ------------------------------------------------------
subtest 'usage errors exit 1 with the profbridge: prefix' => sub {
    my $in = file_of('use.bin', tachyon());
    my $o = "$tmp/use.out";
    for my $case ([ 'merge', '--jobs', 1000, $in, '-o', $o ], [ 'convert', '--max-stack-depth', 0, $in, '-o', $o ],
        [ 'convert', '--compress', 12, $in, '-o', $o ], [ 'convert', '--pid', 'abc', $in, '-o', $o ],
        [ 'convert', $in, '-o', '' ], [ 'convert', '--format', 'bogus', $in, '-o', $o ])
    {
        my ($rc, $out) = run(@pb, @$case);
        is($rc, 1, "@$case[0..2]: exit 1");
        like($out, qr/\Aprofbridge: /, "@$case[0..2]: the profbridge: prefix");
        ok(!-e $o, "@$case[0..2]: nothing written");
    }
    ok(!eval { Devel::ProfileBridge::losses($in, to => 'bogus'); 1 }, "losses(to => 'bogus') refused");
    like("$@", qr/^Devel::ProfileBridge: usage: losses: to => 'bogus' is not a target/, 'losses: names the target');
    ok(eval { Devel::ProfileBridge::losses($in, to => 'pprof'); 1 }, "losses(to => 'pprof') still works");
};

# ---- item 6: output errors -----------------------------------------------------
# RLIMIT_FSIZE (ulimit -f, SIGXFSZ ignored): every write past 1 KiB fails with EFBIG
subtest 'output errors name the output and the reason' => sub {
    my $in = "$FindBin::Bin/data/tachyon/cpu_recursion.bin";
    for my $to (qw(collapsed speedscope), @with_sp, 'nytprof') {
        my $dir = tempdir('fsize-XXXXXX', DIR => $tmp);
        my $cmd = join ' ', map { "'$_'" } @pb, 'convert', $in, '--to', $to, '-o', "$dir/out",
            $to eq 'nytprof' ? ('--no-compress', '--no-source') : ();
        my $out = `sh -c "trap '' XFSZ; ulimit -f 1; exec $cmd" 2>&1`;
        my $rc = $? >> 8;
        is($rc, 2, "--to $to past the file size limit: exit 2");
        like($out, qr/: io: \Q$dir\E\/[^:]*: cannot write .*: File too large$/m, "--to $to: names the output and strerror")
            or diag $out;
        unlike($out, qr/at byte 0 of/, "--to $to: no 'at byte 0'");
        unlike($out, qr/\Q$in\E/, "--to $to: does not blame the input");
        opendir(my $dh, $dir) or die "$dir: $!";
        is_deeply([ grep { !/\A\.\.?\z/ } readdir $dh ], [], "--to $to: nothing left behind");
    }
};

# ---- item 6: control bytes ---------------------------------------------------
subtest 'control bytes are escaped in every message' => sub {
    # a file name that would retitle the terminal, one with a newline
    for my $name ("retitle\e]2;pwned\a.bin", "two\nlines.bin") {
        my $f = file_of($name, "not a profile at all, just bytes\n");
        my ($rc, $out) = run(@pb, 'info', $f);
        is($rc, 2, 'an unreadable file: exit 2');
        unlike($out, qr/[\x00-\x09\x0b-\x1f\x7f]/, 'no control byte reaches the terminal');
        is(($out =~ tr/\n//), 1, 'one line');
        like($out, qr/\\x(?:1b|0a)/, 'the byte is shown as \\xHH');
        my $e = eval { Devel::ProfileBridge::chunk_counts($f); 1 } ? undef : $@;
        is($e && $e->file, $f, 'the error object keeps the name as it is');
    }
    # names inside a profile: the source-not-found warning names the file
    my $p = file_of('evil-src.bin', tachyon(file => "app\e]2;pwned\a\n.py"));
    my ($rc, $out) = run(@pb, 'convert', $p, '-o', "$tmp/evil-src.nytprof");
    is($rc, 0, 'converts');
    unlike($out, qr/[\x00-\x09\x0b-\x1f\x7f]/, 'the warning has no control byte');
    like($out, qr/app\\x1b\]2;pwned\\x07\\x0a\.py/, 'the warning shows the name escaped');
    # the usage error of an option value
    ($rc, $out) = run(@pb, 'convert', $p, '--to', "x\e[2J", '-o', "$tmp/x");
    unlike($out, qr/\e/, 'a usage error shows no ESC either');
};

# ---- item 6: salvage offsets ----------------------------------------------------
subtest 'salvage offsets in compressed files are file offsets' => sub {
    my $b = slurp_raw("$FindBin::Bin/data/nytprof/recursion.nytprof.out");
    my $cut = file_of('cut.nytprof', substr($b, 0, int(length($b) * 2 / 3)));
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    ok(eval { Devel::ProfileBridge::convert(in => $cut, out => "$tmp/cut.out", salvage => 1); 1 }, 'salvaged') or diag $@;
    my ($off) = join('', @w) =~ /at byte (\d+) of \Q$cut\E; salvaged/;
    ok(defined $off, 'the warning gives an offset');
    cmp_ok($off // 1e9, '<', -s $cut, 'inside the file (it was 383,605 of 26,899)');
};

# ---- item 7: empty inputs -----------------------------------------------------
subtest 'empty inputs are named empty for every target' => sub {
    my $zero = file_of('zero.bin', '');
    for my $to (qw(nytprof collapsed statprofiler pprof speedscope)) {
        ok(!eval { Devel::ProfileBridge::convert(in => $zero, out => "$tmp/zero.$to", to => $to); 1 }, "0 bytes --to $to: refused");
        like("$@", qr/empty file/, "0 bytes --to $to: named empty");
    }
    my $none = file_of('none.bin', tachyon(threads => []));
    for my $to (qw(nytprof collapsed), @with_sp, qw(pprof speedscope)) {
        my @w;
        local $SIG{__WARN__} = sub { push @w, @_ };
        ok(eval { Devel::ProfileBridge::convert(in => $none, out => "$tmp/none.$to", to => $to, source => undef); 1 },
            "no samples --to $to: converts") or diag $@;
        like(join('', @w), qr/no samples|no stack samples/, "no samples --to $to: a warning says so");
    }
};

# ---- item 9 -------------------------------------------------------------------
subtest 'collapsed escapes the backslash' => sub {
    # a literal "\x3B" in a name: read back, it must not become ";"
    my $f = file_of('bs.bin', tachyon(names => [ 'main', 'a\\x3Bb', 'c\\d' ]));
    Devel::ProfileBridge::convert(in => $f, out => "$tmp/bs.folded", to => 'collapsed');
    my ($line) = split /\n/, slurp_raw("$tmp/bs.folded");
    my ($stack) = $line =~ /\A(.*) 1\z/;
    my @frames = map { s/\\x([0-9A-Fa-f]{2})/chr hex $1/ger } split /;/, $stack;
    is(scalar @frames, 4, 'four frames (tid, main, work, leaf)');
    like($frames[2], qr/a\\x3Bb\z/, 'decoding every \\xNN gives the literal name back');
    like($frames[3], qr/c\\d\z/, 'a lone backslash too');
    unlike($stack, qr/\\(?!x[0-9A-F]{2})/, 'every backslash in the line starts an escape');
};

# the top-level fields of a protobuf message: { field number => [ values ] }
sub pb_fields {
    my ($buf) = @_;
    my (%f, $pos);
    $pos = 0;
    my $varint = sub {
        my ($v, $s) = (0, 0);
        while (1) { my $b = ord substr($buf, $pos++, 1); $v += ($b & 0x7f) * 2**$s; $s += 7; return $v unless $b & 0x80 }
    };
    while ($pos < length $buf) {
        my $key = $varint->();
        my ($n, $t) = (int($key / 8), $key % 8);
        if ($t == 0) { push @{ $f{$n} }, $varint->() }
        elsif ($t == 2) { my $l = $varint->(); push @{ $f{$n} }, substr($buf, $pos, $l); $pos += $l }
        elsif ($t == 1) { $pos += 8 }
        elsif ($t == 5) { $pos += 4 }
        else { die "wire type $t" }
    }
    return \%f;
}

subtest 'merged pprof has a PeriodType' => sub {
    my $f = file_of('m.bin', tachyon(threads => [ 1, 1, 2 ]));
    Devel::ProfileBridge::merge(in => [ $f, $f ], out => "$tmp/m.pb.gz", to => 'pprof');
    gunzip("$tmp/m.pb.gz" => \my $raw) or die $GunzipError;
    my $p = pb_fields($raw);
    my @strings = @{ $p->{6} };
    ok($p->{11}, 'period_type (field 11) is there');
    my $vt = pb_fields($p->{11}[0] // '');
    is(join(' ', map { $strings[ $vt->{$_}[0] // 0 ] } 1, 2), 'wall nanoseconds', 'wall nanoseconds');
};

subtest 'a forged writer object is a usage error' => sub {
    for my $class (qw(Devel::ProfileBridge::NYTProfWriter Devel::ProfileBridge::StatProfilerWriter)) {
        my $forged = bless \(my $x), $class;
        ok(!eval { $forged->close; 1 }, "$class: a blessed scalar refused");
        is(ref $@ && $@->class, 'usage', "$class: the usage error, not 'Not a HASH reference'");
        my $handle = bless { h => \1 }, $class; # a handle that is a reference to a number
        ok(!eval { $handle->close; 1 }, "$class: a forged handle refused (no crash)");
        is(ref $@ && $@->class, 'usage', "$class: a usage error");
        unlike("$@", qr/\(memory\)/, "$class: names no '(memory)'");
    }
    # a real writer's usage errors name the caller's file, not "(memory)"
    my $w = Devel::ProfileBridge::NYTProfWriter->new(file => "$tmp/w.nytprof");
    ok(!eval { $w->write_chunk('BOGUS', 1); 1 }, 'an unknown tag refused');
    like("$@", qr/^nytprof-writer: usage: \Q$tmp\E\/w\.nytprof: unknown tag 'BOGUS'/, 'the error names the writer\'s file');
    ok(!eval { $w->write_chunk('TIME_LINE', 1); 1 }, 'too few arguments refused');
    like("$@", qr/^nytprof-writer: usage: \Q$tmp\E\/w\.nytprof: TIME_LINE takes 3 arguments/, 'that one too');
    eval { $w->close };
};

subtest 'a child forked in a callback stops; the parent reads on' => sub {
    # uncompressed and larger than one read: the two would share the offset
    my $f = "$FindBin::Bin/data/nytprof/recursion.nocompress.nytprof.out";
    my $total = 0;
    $total += $_ for values %{ Devel::ProfileBridge::chunk_counts($f) };
    my ($n, $kid, $parent) = (0, 0, $$);
    pipe(my $r, my $w) or die;
    my $ok = eval {
        Devel::ProfileBridge::for_chunks(sub { $n++; $kid = fork // die "fork: $!" if $n == 5 }, filename => $f, quiet => 1);
        1;
    };
    if ($$ != $parent) { # the child
        print {$w} $ok ? "read on\n" : "stopped: $@";
        close $w;
        require POSIX;
        POSIX::_exit(0);
    }
    close $w;
    my $said = do { local $/; <$r> };
    waitpid $kid, 0;
    ok($ok, 'the parent finished') or diag $@;
    is($n, $total, 'the parent read every chunk');
    like($said, qr/^stopped: for_chunks: usage: a for_chunks callback forked/, 'the child stopped with a usage error');
};

subtest 'max_statements is bounded by the input size' => sub {
    # the real 745-byte Pynytprof file, one S record claiming 20 million executions
    my $b = slurp_raw("$FindBin::Bin/data/pynytprof/tlv/A_binmagic_996afac/shapes.nytprof.out");
    is(substr($b, 0xcb, 1), 'S', 'the S chunk where expected');
    substr($b, 0xd8, 4) = pack 'V', 20_000_000;
    my $f = file_of('bomb.nytprof.out', $b);
    ok(!eval { Devel::ProfileBridge::chunk_counts($f); 1 }, '20M statements from 745 bytes refused');
    like("$@", qr/^pynytprof: limit: .*16777216 for this file: 4096 per byte of input, at least 2\^24/,
        'the message states the bound and how to lift it');
    my $orig = Devel::ProfileBridge::chunk_counts("$FindBin::Bin/data/pynytprof/tlv/A_binmagic_996afac/shapes.nytprof.out");
    is($orig->{TIME_LINE}, 128, 'the real file still reads');
};

done_testing();
