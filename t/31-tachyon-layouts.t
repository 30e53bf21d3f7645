#!perl
# Tachyon's two version-1 header layouts (../shared/specs/tachyon-format.md,
# "Versions that exist"): the pre-rc one (u32 sample count at 28) and the one
# Python 3.15.0 writes (u64 sample count at 28, every later field 4 bytes on),
# with and without the proposed profiling-mode field at 60, in either byte
# order, plain or zstd.  The layout is told from the header's own consistency,
# never by trying one and falling back on an error:
#  * every 3.15.0 file of the corpus (t/data/tachyon/v315/, with CPython's
#    ground truth; t/30 compares their stacks with CPython's) is detected as
#    3.15 and gives the chunk stream of its pre-rc twin, but for the
#    header_layout attribute;
#  * headers rewritten here (mode byte, big-endian, big-endian zstd) do too;
#  * a header consistent in neither layout is refused with a clear error, and
#    a 3.15 file cut short still salvages.
use strict;
use warnings;
use Test::More;
use File::Spec;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw spew_raw);
use TachyonFile qw(swap_to_big);
use JSON::PP ();
use Devel::ProfileBridge;

my $data = File::Spec->rel2abs("$FindBin::Bin/data/tachyon");
my $tmp = tempdir('pb31-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub chunks {
    my ($file, %opt) = @_;
    my @c;
    Devel::ProfileBridge::for_chunks(sub { push @c, [@_] }, filename => $file, quiet => 1, %opt);
    return \@c;
}
sub attrs {
    my ($c) = @_;
    return { map { ($_->[1] => $_->[2]) } grep { $_->[0] eq 'ATTRIBUTE' } @$c };
}
# the stream without the attributes that name the header's layout, mode and byte order
sub body {
    my ($c) = @_;
    return [ grep { !($_->[0] eq 'ATTRIBUTE' && $_->[1] =~ /\A(?:header_layout|profiling_mode(?:_field)?|capture_features|byte_order|basetime|clock)\z/) }
        @$c ];
}

# ---- header rewriting, in the writer's byte order ---------------------------
sub order { substr($_[0], 0, 4) eq 'HCAT' ? '<' : '>' }
sub to_315 {
    my ($b, $mode) = @_;
    my $e = order($b);
    my ($cnt, $thr, $so, $fo, $comp) = unpack "x28 L$e L$e Q$e Q$e L$e", $b;
    substr($b, 28, 36) = pack "Q$e L$e Q$e Q$e L$e L$e", $cnt, $thr, $so, $fo, $comp, $mode // 0;
    return $b;
}

# ---- the corpus: 3.15.0 files against their ground truth and pre-rc twins -----
for my $name (qw(cpu_recursion.bin multithread.bin)) {
    my $f315 = "$data/v315/$name";
    my $f314 = "$data/$name";
    my $truth = JSON::PP->new->decode(slurp_raw("$f315.truth.json"));
    my $info = Devel::ProfileBridge::detect_format($f315);
    is($info->{layout}, '3.15', "v315/$name: detected as the 3.15 layout");
    is(Devel::ProfileBridge::detect_format($f314)->{layout}, '3.14', "$name: its twin as the pre-rc layout");
    is($info->{compression}, $truth->{compression}, "v315/$name: compression $truth->{compression}");
    ok(!exists $info->{mode}, "v315/$name: no profiling mode stored");
    my $c315 = chunks($f315);
    my $a = attrs($c315);
    is($a->{header_layout}, '3.15', "v315/$name: header_layout attribute");
    is($a->{total_samples}, $truth->{header_sample_count}, "v315/$name: header sample count $truth->{header_sample_count}");
    my $ticks = 0;
    $ticks += $_->[1] for grep { $_->[0] eq 'TIME_LINE' } @$c315;
    is($ticks / $truth->{sample_interval_us}, $truth->{total_samples}, "v315/$name: $truth->{total_samples} samples");
    is_deeply(body($c315), body(chunks($f314)), "v315/$name: the same stream as its pre-rc twin");
}

# ---- the bit field at 60, as CPython 3.15.2 reads it (tachyon-format.md,
# "VERIFIED against a real CPython 3.15.2"): mode + 1 in bits 0-2, capture
# features present in bit 3, the features in bits 4-8, higher bits ignored ----
{
    my $src = slurp_raw("$data/cpu_recursion.bin");
    my $base = body(chunks("$data/cpu_recursion.bin"));
    my %modes = (1 => 'wall', 2 => 'cpu', 3 => 'gil', 4 => 'all', 5 => 'exception', 0x09 => 'wall', 0x4a => 'cpu',
        0x5b => 'gil', 0xd9 => 'wall', 0x79 => 'wall', 0x1f9 => 'wall', 0x10005 => 'exception');
    my %capture = (0x09 => '', 0x4a => 'gc', 0x5b => 'all_threads gc', 0xd9 => 'all_threads gc opcodes',
        0x79 => 'all_threads native gc', 0x1f9 => 'all_threads native gc opcodes blocking', 0x10005 => undef);
    for my $field (sort { $a <=> $b } keys %modes) {
        my $f = "$tmp/mode$field.bin";
        spew_raw($f, to_315($src, $field));
        my $info = Devel::ProfileBridge::detect_format($f);
        my $x = sprintf '0x%x', $field;
        is("$info->{layout} $info->{mode}", "3.15 $modes{$field}", "field $x: 3.15 layout, mode $modes{$field}");
        is($info->{capture} && "@{ $info->{capture} }", $capture{$field},
            "field $x: capture " . ($capture{$field} // 'not recorded'));
        my $c = chunks($f);
        is(attrs($c)->{profiling_mode}, $modes{$field}, "field $x: profiling_mode attribute");
        is(attrs($c)->{capture_features}, defined $capture{$field} ? $capture{$field} =~ s/ /,/gr : undef,
            "field $x: capture_features attribute");
        is_deeply(body($c), $base, "field $x: the same stream");
    }
    for my $field (6, 7, 0x5e) {
        my $f = "$tmp/mode$field.bin";
        spew_raw($f, to_315($src, $field));
        ok(!exists Devel::ProfileBridge::detect_format($f)->{mode}, "field $field: no mode");
        ok(!eval { chunks($f); 1 }, "field $field: refused, as CPython's reader refuses it");
        like($@, qr/\Atachyon: corrupt: header: invalid profiling mode in the field at offset 60 .* at byte 60 of /,
            '... with a clear error');
    }
    my $f = "$tmp/mode-info.bin";
    spew_raw($f, to_315($src, 0x5a));
    my $text = `"$^X" -Mblib "$FindBin::Bin/../bin/profbridge" info "$f"`;
    like($text, qr/^layout:\s+3\.15\nmode:\s+cpu\ncapture:\s+all_threads, gc$/m, 'profbridge info names layout, mode and capture');
}

# ---- big-endian: plain, and zstd (needs the zstd command to rebuild it) ------
# replace a pre-rc file's sample region (absolute table offsets move with it)
sub with_region {
    my ($b, $region, $comp) = @_;
    my $e = order($b);
    my ($so, $fo) = unpack "x36 Q$e Q$e", $b;
    my $tables = substr($b, $so);
    my $nso = 64 + length $region;
    my $out = substr($b, 0, 64) . $region . $tables;
    substr($out, 36, 20) = pack "Q$e Q$e L$e", $nso, $nso + ($fo - $so), $comp;
    substr($out, length($out) - 24, 8) = pack "Q$e", length $out;
    return $out;
}
{
    my $le = slurp_raw("$data/cpu_recursion.bin");
    my $base = body(chunks("$data/cpu_recursion.bin"));
    my $f = "$tmp/be315.bin";
    spew_raw($f, to_315(swap_to_big($le), 3));
    my $info = Devel::ProfileBridge::detect_format($f);
    is("$info->{byte_order} $info->{layout} $info->{mode}", 'big 3.15 gil', 'big-endian 3.15 with a mode: detected');
    is_deeply(body(chunks($f)), $base, 'big-endian 3.15: the same stream');
}
SKIP: {
    my $zstd = `which zstd 2>/dev/null`;
    chomp $zstd;
    skip 'no zstd command to rebuild a zstd region', 6 unless $zstd;
    my $src = slurp_raw("$data/multithread.bin");     # pre-rc, little-endian, zstd
    my $base = body(chunks("$data/multithread.bin"));
    my ($so) = unpack 'x36 Q<', $src;
    spew_raw("$tmp/region.zst", substr($src, 64, $so - 64));
    system("'$zstd' -q -d -f -o '$tmp/region' '$tmp/region.zst'") == 0 or die 'zstd -d failed';
    my $plain = with_region($src, slurp_raw("$tmp/region"), 0);
    my $be = swap_to_big($plain);
    my ($bso) = unpack 'x36 Q>', $be;
    spew_raw("$tmp/be-region", substr($be, 64, $bso - 64));
    system("'$zstd' -q -f -o '$tmp/be-region.zst' '$tmp/be-region'") == 0 or die 'zstd failed';
    my $bez = with_region($be, slurp_raw("$tmp/be-region.zst"), 1);
    for my $case ([ '3.14', $bez ], [ '3.15', to_315($bez) ]) {
        my ($layout, $bytes) = @$case;
        my $f = "$tmp/bez-$layout.bin";
        spew_raw($f, $bytes);
        my $info = Devel::ProfileBridge::detect_format($f);
        is("$info->{byte_order} $info->{compression} $info->{layout}", "big zstd $layout",
            "big-endian zstd, $layout layout: detected");
        my $c = chunks($f);
        is(attrs($c)->{header_layout}, $layout, "big-endian zstd, $layout layout: header_layout attribute");
        is_deeply(body($c), $base, "big-endian zstd, $layout layout: the same stream as the little-endian file");
    }
}

# ---- neither layout, and a 3.15 file cut short ----------------------------------
{
    my $b = slurp_raw("$data/v315/cpu_recursion.bin");
    substr($b, 40, 8) = pack 'Q<', 10;     # 3.15 string table inside the header; pre-rc reading has bytes 56.. set
    substr($b, 56, 4) = pack 'V', 0;
    substr($b, 60, 4) = pack 'V', 7;
    spew_raw("$tmp/neither.bin", $b);
    ok(!eval { chunks("$tmp/neither.bin"); 1 }, 'a header consistent in neither layout is refused');
    like($@, qr/\Atachyon: corrupt: header: neither v1 header layout is consistent .* at byte 28 of /,
        '... with a clear error');

    my $full = slurp_raw("$data/v315/cpu_recursion.bin");
    spew_raw("$tmp/cut315.bin", substr($full, 0, 2000));
    my @warn;
    my $c = do {
        local $SIG{__WARN__} = sub { push @warn, @_ };
        my @c;
        Devel::ProfileBridge::for_chunks(sub { push @c, [@_] }, filename => "$tmp/cut315.bin", salvage => 1);
        \@c;
    };
    my $samples = grep { $_->[0] eq 'TIME_LINE' } @$c;
    ok($samples > 0 && attrs($c)->{header_layout} eq '3.15', "a 3.15 file cut at 2000 bytes salvages ($samples lines)");
    like("@warn", qr/tachyon: truncated: /, '... with the truncation as a warning');
}

done_testing();
