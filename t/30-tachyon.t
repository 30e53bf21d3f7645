#!perl
# Tachyon (CPython profiling.sampling --binary) through Devel::ProfileBridge,
# checked against CPython's own reader (t/data/tachyon/*.truth.json and
# *.collapsed.txt, produced by binary_io_reader.c):
#  * total and per-thread sample counts (for_chunks, thread => $tid);
#  * our collapsed stacks = CPython's, both aggregated per function (CPython
#    writes basename:func:lineno frames, we write its function names);
#  * SUB_CALLERS inclusive/exclusive totals = what CPython's stacks imply;
#  * a big-endian twin built here by byte-swapping gives the same chunks;
#  * a zstd bomb, a REPEAT count past the data and a frame index out of range
#    stop with a clear error.
# Collapsed stacks come from Devel::ProfileBridge::convert(..., to =>
# 'collapsed') when the XS has it, else from the C tool t/c/test_tachyon.c
# (--collapse), built here with $Config{cc} ($ENV{PB_TEST_TACHYON} names a
# prebuilt one).
use strict;
use warnings;
use Test::More;
use Config;
use File::Spec;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw spew_raw);
use TachyonFile qw(swap_to_big varint);
use JSON::PP ();
use Devel::ProfileBridge;

my $root = File::Spec->rel2abs("$FindBin::Bin/..");
my $data = "$root/t/data/tachyon";
# the pre-rc header layout, and Python 3.15.0's (v315/: u64 sample count)
my @files = map { "$data/$_" } qw(async_tasks.bin cpu_recursion.bin deep_stack.bin multithread.bin
    v315/cpu_recursion.bin v315/multithread.bin);
plan skip_all => "no Tachyon files in $data" unless -f $files[0];
my $tmp = tempdir('pb30-XXXXXX', TMPDIR => 1, CLEANUP => 1);

# every chunk as [tag, args...] (copies: for_chunks reuses its scalars)
sub chunks {
    my ($file, %opt) = @_;
    my @c;
    Devel::ProfileBridge::for_chunks(sub { push @c, [@_] }, filename => $file, format => 'tachyon', quiet => 1,
        %opt);
    return \@c;
}

# ---- collapsed stacks: convert() or the C tool ----------------------------
my $collapse_how;
sub collapse_with_c_tool {
    my ($file) = @_;
    my $tool = $ENV{PB_TEST_TACHYON};
    if (!$tool) {
        $tool = "$tmp/test_tachyon";
        if (!-x $tool) {
            my @src = glob("$root/c/*.c");
            my $cmd = join ' ', $Config{cc}, '-O2 -std=c99', "-I$root/c", "$root/t/c/test_tachyon.c", @src,
                '-lz -lzstd -lsnappy -lyajl -lpthread', '-o', $tool, '2>&1';
            my $out = `$cmd`;
            die "cannot build the C tool: $out" if $?;
        }
    }
    my $text = `"$tool" --collapse "$file" 2>&1`;
    die "collapse failed: $text" if $?;
    return $text;
}
sub collapse {
    my ($file) = @_;
    if (!$collapse_how && defined &Devel::ProfileBridge::convert && !$ENV{PB_TEST_TACHYON}) {
        my $out = "$tmp/probe.collapsed";
        if (eval { Devel::ProfileBridge::convert(in => $file, out => $out, to => 'collapsed'); 1 }) {
            $collapse_how = 'convert';
        } else {
            note "convert(to => 'collapsed') not usable ($@); using the C tool";
            $collapse_how = 'c';
        }
    }
    $collapse_how ||= 'c';
    if ($collapse_how eq 'convert') {
        my $out = "$tmp/out.collapsed";
        Devel::ProfileBridge::convert(in => $file, out => $out, to => 'collapsed');
        return slurp_raw($out);
    }
    return collapse_with_c_tool($file);
}

# "stack count" lines -> { stack => count }
sub parse_collapsed {
    my ($text) = @_;
    my %h;
    for my $l (split /\n/, $text) {
        my ($stack, $n) = $l =~ /\A(.*) (\d+)\z/ or next;
        $h{$stack} += $n;
    }
    return \%h;
}

# ---- the checks ---------------------------------------------------------------
for my $file (@files) {
    (my $name = $file) =~ s{\A\Q$data\E/}{};
    my $truth = JSON::PP->new->decode(slurp_raw("$file.truth.json"));
    my $iv = $truth->{sample_interval_us};

    my $c = chunks($file);
    my (%fid, %subinfo, @callers, $ticks);
    for my $ch (@$c) {
        my ($tag, @a) = @$ch;
        $ticks += $a[0] if $tag eq 'TIME_LINE';
        $fid{ $a[0] } = $a[6] if $tag eq 'NEW_FID';
        $subinfo{ $a[3] } = $a[0] if $tag eq 'SUB_INFO';
        push @callers, \@a if $tag eq 'SUB_CALLERS';
    }
    is($ticks / $iv, $truth->{total_samples}, "$name: $truth->{total_samples} samples in all");

    for my $tid (sort keys %{ $truth->{samples_per_thread} }) {
        my $t = 0;
        my $pids = 0;
        Devel::ProfileBridge::for_chunks(sub {
            $t += $_[1] if $_[0] eq 'TIME_LINE';
            $pids++ if $_[0] eq 'PID_START';
        }, filename => $file, format => 'tachyon', thread => $tid, quiet => 1);
        is($t / $iv, $truth->{samples_per_thread}{$tid}, "$name thread $tid: samples");
    }

    # collapsed: ours names each frame by CPython's own function name (its
    # qualname), as CPython's basename:func:lineno frames do: the same stacks,
    # per function
    my $ours = parse_collapsed(collapse($file));
    my $theirs = parse_collapsed(slurp_raw("$file.collapsed.txt"));
    my (%agg_ours, %agg_theirs);
    $agg_ours{$_} += $ours->{$_} for keys %$ours;
    for my $stack (keys %$theirs) {
        my ($tid, @frames) = split /;/, $stack;
        $agg_theirs{ join ';', $tid, map { s/\A.*:(.*?):-?\d+\z/$1/r } @frames } += $theirs->{$stack};
    }
    my %tids = map { (split /;/)[0] => 1 } keys %agg_ours, keys %agg_theirs;
    for my $tid (sort keys %tids) {
        my %a = map { $_ => $agg_ours{$_} } grep { /\A\Q$tid\E;/ } keys %agg_ours;
        my %b = map { $_ => $agg_theirs{$_} } grep { /\A\Q$tid\E;/ } keys %agg_theirs;
        is_deeply(\%a, \%b, "$name $tid: collapsed stacks = CPython's, with CPython's function names ("
            . scalar(keys %b) . " stacks)");
    }

    # SUB_CALLERS vs CPython's stacks.  Each of our subs maps to the CPython
    # function (file basename, qualname) whose qualname ("." -> "::") ends the
    # sub name - the longest such, in the sub's own file (SUB_INFO fid ->
    # NEW_FID name).  Per function that is one sub: inclusive = samples whose
    # stack holds it (once), exclusive = samples whose leaf it is.
    my %cpy_funcs;    # basename => { func => 1 }
    my (%holds, %leaf);
    for my $stack (keys %$theirs) {
        my ($tid, @frames) = split /;/, $stack;
        my @keys;
        for my $fr (@frames) {
            my ($f, $func) = $fr =~ /\A(.*):(.*?):-?\d+\z/ or next;
            $cpy_funcs{$f}{$func} = 1;
            push @keys, "$f:$func";
        }
        my %seen;
        $holds{$_} += $theirs->{$stack} for grep { !$seen{$_}++ } @keys;
        $leaf{ $keys[-1] } += $theirs->{$stack} if @keys;
    }
    my (%sub2key, %subs_of);
    my $unmapped = 0;
    for my $sub (keys %subinfo) {
        next if $sub eq 'main::RUNTIME';
        my $path = $fid{ $subinfo{$sub} };
        my $base = $path =~ m{\A<.*>\z} ? $path : ($path =~ m{([^/\\]+)\z})[0];
        my ($best) = sort { length $b <=> length $a }
            grep { my $q = $_; $q =~ s/\./::/g; $sub =~ /(?:\A|::)\Q$q\E\z/ } keys %{ $cpy_funcs{$base} || {} };
        if (defined $best) {
            $sub2key{$sub} = "$base:$best";
            push @{ $subs_of{"$base:$best"} }, $sub;
        } else {
            $unmapped++;
            diag "$name: no CPython function for our sub $sub ($path)";
        }
    }
    is($unmapped, 0, "$name: every sub maps to a CPython function");
    my (%incl, %excl, $missing);
    for my $e (@callers) {
        my ($fid, $line, $count, $in, $ex, $reci, $depth, $called, $caller) = @$e;
        $incl{$called} += $in;
        $excl{$called} += $ex;
        $missing++ unless exists $subinfo{$called} && ($caller eq 'main::RUNTIME' || exists $subinfo{$caller});
    }
    my ($bad, $checked) = (0, 0);
    for my $key (sort keys %holds) {
        my $subs = $subs_of{$key} or next;
        next if @$subs != 1;    # two modules named alike (__init__.py:<module>)
        my $sub = $subs->[0];
        $checked++;
        my $i = sprintf '%.0f', ($incl{$sub} // 0) * 1e6 / $iv;
        my $x = sprintf '%.0f', ($excl{$sub} // 0) * 1e6 / $iv;
        next if $i == $holds{$key} && $x == ($leaf{$key} // 0);
        $bad++;
        diag "$name: $sub: incl $i excl $x samples, CPython's stacks say $holds{$key} / " . ($leaf{$key} // 0);
    }
    is($bad, 0, "$name: SUB_CALLERS inclusive/exclusive times agree with CPython's stacks for $checked functions");
    ok(!$missing, "$name: every SUB_CALLERS sub has a SUB_INFO");
}

# ---- big-endian twin ------------------------------------------------------------
{
    my $le = "$data/cpu_recursion.bin";
    my $be = "$tmp/cpu_recursion.be.bin";
    spew_raw($be, swap_to_big(slurp_raw($le)));
    is(substr(slurp_raw($be), 0, 4), 'TACH', 'big-endian twin starts with "TACH"');
    is(Devel::ProfileBridge::detect_format($be)->{byte_order}, 'big', 'detected as big-endian');
    # basetime comes from each file's mtime (tested below)
    my $strip = sub { [ grep { !($_->[0] eq 'ATTRIBUTE' && $_->[1] =~ /\A(?:byte_order|basetime)\z/) } @{ $_[0] } ] };
    is_deeply($strip->(chunks($be)), $strip->(chunks($le)), 'big-endian twin: the same chunk stream');
}

# ---- basetime: wall-clock, from the file's mtime minus the profile's duration ----
{
    my $f = "$tmp/dated.bin";
    spew_raw($f, slurp_raw("$data/cpu_recursion.bin"));
    my $t = 1_790_000_000;
    utime $t, $t, $f or die "utime: $!";
    my %a = map { ($_->[1] => $_->[2]) } grep { $_->[0] eq 'ATTRIBUTE' } @{ chunks($f) };
    # 511 samples at 1000 us: 0.511 s, rounded to 1 s
    is($a{basetime}, $t - 1, 'basetime = mtime - duration (the header holds a monotonic start)');
    is($a{start_time_us}, 303137851, '... the monotonic start stays as start_time_us');
    like($a{profiler}, qr/CPython/, 'ATTRIBUTE profiler names CPython');
}

# ---- bad files -------------------------------------------------------------------
# strings f.py, work; frame 0 = f.py:work:3
sub make_tachyon {
    my (%a) = @_;
    my $region = $a{region};
    my $strings = join '', map { varint(length $_) . $_ } 'f.py', $a{func} // 'work';
    my $frames = varint(0) . varint(1) . varint(3 * 2) . varint(0) x 3 . "\xFF";
    my $str_off = 64 + length $region;
    my $frame_off = $str_off + length $strings;
    my $size = $frame_off + length($frames) + 32;
    my $hdr = pack('V V C4 Q< Q< V V Q< Q< V', 0x54414348, 1, 3, 15, 0, 0, 1_000_000, 1000, $a{samples},
        $a{threads} // 1, $str_off, $frame_off, $a{zstd} ? 1 : 0);
    $hdr .= "\0" x (64 - length $hdr);
    return $hdr . $region . $strings . $frames . pack('V V Q< Q< Q<', 2, 1, $size, 0, 0);
}
sub record { my ($tid, $enc) = @_; pack('Q< V C', $tid, 0, $enc) }
sub dies_like {
    my ($bytes, $re, $what) = @_;
    my $f = "$tmp/bad.bin";
    spew_raw($f, $bytes);
    my $ok = eval { chunks($f); 1 };
    my $err = $@;
    ok(!$ok && $err =~ $re, "$what: " . ($ok ? 'no error' : $err =~ s/\s+\z//r));
}
{
    # the good base: one FULL sample
    my $full = record(7, 1) . varint(10) . "\x01" . varint(1) . varint(0);
    my $good = make_tachyon(region => $full, samples => 1);
    spew_raw("$tmp/good.bin", $good);
    my $t = 0;
    Devel::ProfileBridge::for_chunks(sub { $t += $_[1] if $_[0] eq 'TIME_LINE' }, filename => "$tmp/good.bin",
        quiet => 1);
    is($t, 1000, 'hand-made file: one sample of 1000 us');

    # non-ASCII names arrive as character strings; invalid UTF-8 becomes U+FFFD
    spew_raw("$tmp/utf8.bin", make_tachyon(region => $full, samples => 1, func => "Caf\xc3\xa9.na\xefve"));
    my ($sub) = map { $_->[4] } grep { $_->[0] eq 'SUB_INFO' && $_->[4] ne 'main::RUNTIME' } @{ chunks("$tmp/utf8.bin") };
    is($sub, "f::Caf\x{e9}::na\x{fffd}ve", 'UTF-8 qualname: Class.method -> f::Class::method, bad byte replaced');

    dies_like(make_tachyon(region => $full . record(7, 0) . varint(50_000) . varint(1) . "\x01", samples => 50_001),
        qr/tachyon: corrupt: REPEAT record: count 50000 exceeds .* at byte \d+/, 'REPEAT count past the data');
    dies_like(make_tachyon(region => record(7, 1) . varint(10) . "\x01" . varint(1) . varint(1), samples => 1),
        qr/tachyon: corrupt: .*frame index 1 out of range \(frame count 1\) at byte \d+/, 'frame index out of range');
    dies_like(make_tachyon(region => $full, samples => 2), qr/tachyon: corrupt: sample count mismatch/,
        'sample count mismatch');
    dies_like(substr($good, 0, 100), qr/tachyon: (?:corrupt|truncated): /, 'truncated file');

    # zstd bomb: RLE blocks of 128 KiB zeros, 3200 of them (400 MiB), in 13 KB
    my $zst = pack('V', 0xFD2FB528) . "\x00\x38";
    for my $i (1 .. 3200) {
        $zst .= substr(pack('V', (131072 << 3) | (1 << 1) | ($i == 3200 ? 1 : 0)), 0, 3) . "\x00";
    }
    my $bomb = make_tachyon(region => $zst, samples => 10, zstd => 1);
    cmp_ok(length $bomb, '<', 16384, 'zstd bomb is small on disk');
    dies_like($bomb, qr/tachyon: (?:limit|corrupt): .*(?:zstd bomb|max_decompressed)/, 'zstd bomb stops early');
}

done_testing();
