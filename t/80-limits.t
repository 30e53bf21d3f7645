#!perl
# Resource limits (issue 7): every limit option of for_chunks/convert tripped
# by a crafted or real input, each giving a `limit` error that names the
# option; and a conversion that trips a limit leaves no target, no temp file,
# and an existing target unchanged.
#
#   max_decompressed_bytes  zlib bomb into NYTProf (built here), zstd bomb
#                           into Tachyon (t/data/limits/tachyon-zstd-bomb.bin:
#                           257 bytes inflating to 4 MiB), many small Snappy
#                           packets into StatProfiler (built here)
#   max_stack_depth         Tachyon, StatProfiler samples; EasyProfiler nesting
#   max_strings/max_frames  Tachyon string/frame tables, StatProfiler frames,
#                           EasyProfiler block names, Pynytprof files/subs
#   max_record_size         each format's longest string/record
#   max_statements          Pynytprof statement counts
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw spew_raw);
use File::Temp qw(tempdir);
use Compress::Zlib ();
use Devel::ProfileBridge;
use Devel::ProfileBridge::ReadStream qw(for_chunks);

my $tmp = tempdir('pb80-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $D = 't/data';

sub spew { my ($name, $bytes) = @_; return spew_raw("$tmp/$name", $bytes) }

# for_chunks must die with a limit error naming $option
sub trips {
    my ($name, $file, $option, $value) = @_;
    my %opt = ($option => $value);
    my $n = 0;
    my $ok = eval { for_chunks { $n++ } filename => $file, %opt; 1 };
    my $e = $@;
    subtest $name => sub {
        ok(!$ok, 'dies') or return;
        isa_ok($e, 'Devel::ProfileBridge::Error');
        return unless ref $e;
        is($e->class, 'limit', 'class limit') or diag("$e");
        like($e->message, qr/\Q$option\E/, "the message names $option");
        like("$e", qr/^\w[\w-]*: limit: .* at byte \d+ of \Q$file\E$/, 'one line: format, class, offset, file');
    };
}

# the same file decodes without the limit (so the limit, not the file, failed)
sub decodes {
    my ($name, $file, %opt) = @_;
    my $n = 0;
    my $ok = eval { for_chunks { $n++ } filename => $file, %opt; 1 };
    ok($ok && $n > 0, $name) or diag($@);
}

# ---- max_decompressed_bytes ------------------------------------------------
{
    # NYTProf: 1 MB of DISCOUNT tags ('-', a one-byte record) deflated to ~1 KB
    my $z = Compress::Zlib::compress('-' x 1_000_000, 9);
    cmp_ok(length $z, '<', 1500, 'zlib bomb is about 1 KB (' . length($z) . ' bytes)');
    my $f = spew('bomb.nytprof.out', "NYTProf 5 0\n:ticks_per_sec=1000000\n:nv_size=8\nz" . $z);
    trips('zlib bomb into NYTProf stops at max_decompressed_bytes', $f, max_decompressed_bytes => 100_000);
    decodes('the same zlib stream decodes under a higher limit', $f, max_decompressed_bytes => 2_000_000);
}
{
    my $f = "$D/limits/tachyon-zstd-bomb.bin";
    cmp_ok(-s $f, '<', 1024, 'zstd bomb is under 1 KB');
    trips('zstd bomb into Tachyon stops at max_decompressed_bytes', $f, max_decompressed_bytes => 1_000_000);
}
SKIP: {
    skip 'Compress::Snappy not installed', 2 unless eval { require Compress::Snappy; 1 };
    # a real header (magic, version, header packet), then 64 packets of 32000
    # bytes each of empty samples (sample start: 01 03 01 00 00; end: 02 00)
    my ($real) = grep { /\.[0-9a-f]{48}\.[0-9a-f]{8}$/ } sort glob("$D/statprofiler/recursion.out.*");
    my $bytes = slurp_raw($real);
    my $clen = unpack('n', substr($bytes, 14, 2));
    my $out = substr($bytes, 0, 14 + 2 + $clen);
    my $pattern = "\x01\x03\x01\x00\x00\x02\x00";
    my $stream = $pattern x (64 * 32000 / length($pattern) + 1);
    for my $i (0 .. 63) {
        my $packet = Compress::Snappy::compress(substr($stream, $i * 32000, 32000));
        $out .= pack('n', length $packet) . $packet;
    }
    my $f = spew('bomb.out.' . ('0' x 48) . '.00000001', $out);
    cmp_ok(length($out), '<', 120_000, 'many-packet Snappy stream is small (' . length($out) . ' bytes for 2 MB)');
    trips('Snappy packets into StatProfiler stop at max_decompressed_bytes', $f, max_decompressed_bytes => 500_000);
}

# ---- max_stack_depth -----------------------------------------------------------
trips('Tachyon: a sample deeper than max_stack_depth', "$D/tachyon/deep_stack.bin", max_stack_depth => 5);
my ($sp_rec) = grep { /\.[0-9a-f]{48}\.[0-9a-f]{8}$/ } sort glob("$D/statprofiler/recursion.out.*");
trips('StatProfiler: a sample deeper than max_stack_depth', $sp_rec, max_stack_depth => 3);
trips('EasyProfiler: block nesting deeper than max_stack_depth', "$D/easyprofiler/ep_recursion.prof",
    max_stack_depth => 2);

# ---- max_strings / max_frames ------------------------------------------------------
trips('Tachyon: string table larger than max_strings', "$D/tachyon/cpu_recursion.bin", max_strings => 2);
trips('Tachyon: frame table larger than max_frames', "$D/tachyon/cpu_recursion.bin", max_frames => 2);
trips('StatProfiler: more unique frames than max_frames', $sp_rec, max_frames => 2);
trips('EasyProfiler: more block names than max_strings', "$D/easyprofiler/ep_basic.prof", max_strings => 2);
trips('Pynytprof: more files/subs than max_strings', "$D/pynytprof/tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out",
    max_strings => 1);

# ---- max_record_size -------------------------------------------------------------------
trips('NYTProf: a string longer than max_record_size', "$D/nytprof/recursion.nocompress.nytprof.out",
    max_record_size => 16);
trips('Tachyon: a string table entry longer than max_record_size', "$D/tachyon/cpu_recursion.bin",
    max_record_size => 4);
trips('EasyProfiler: a record longer than max_record_size', "$D/easyprofiler/ep_basic.prof", max_record_size => 10);
trips('StatProfiler: a string longer than max_record_size', $sp_rec, max_record_size => 4);
trips('Pynytprof: a record longer than max_record_size', "$D/pynytprof/fib.nytprof.out", max_record_size => 4);

# ---- max_statements ----------------------------------------------------------------------
trips('Pynytprof: more statements than max_statements', "$D/pynytprof/tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out",
    max_statements => 1);

# ---- the defaults let every fixture through -----------------------------------------------
decodes("default limits: $_", $_)
    for "$D/tachyon/deep_stack.bin", $sp_rec, "$D/easyprofiler/ep_recursion.prof", "$D/pynytprof/fib.nytprof.out",
    "$D/nytprof/recursion.nytprof.out", "$D/limits/tachyon-zstd-bomb.bin";

# ---- a conversion that trips a limit leaves nothing behind ---------------------------------
sub dir_entries {
    my ($dir) = @_;
    opendir my $dh, $dir or die "$dir: $!";
    return join ' ', sort grep { !/^\.\.?$/ } readdir $dh;
}
{
    my $dir = tempdir('conv-XXXXXX', DIR => $tmp, CLEANUP => 1);
    my $target = "$dir/out.nytprof";
    my $ok = eval {
        Devel::ProfileBridge::convert(in => "$D/tachyon/deep_stack.bin", out => $target, max_stack_depth => 5);
        1;
    };
    my $e = $@;
    ok(!$ok && ref $e && $e->class eq 'limit', 'conversion tripping max_stack_depth dies with a limit error')
        or diag("$e");
    ok(!-e $target, 'no target file');
    is(dir_entries($dir), '', 'no temporary file left in the target directory');

    # an existing target is left exactly as it was
    Devel::ProfileBridge::convert(in => "$D/tachyon/cpu_recursion.bin", out => $target);
    my $before = slurp_raw($target);
    ok(length $before, 'a first conversion wrote the target');
    $ok = eval {
        Devel::ProfileBridge::convert(in => "$D/limits/tachyon-zstd-bomb.bin", out => $target,
            max_decompressed_bytes => 1_000_000);
        1;
    };
    $e = $@;
    ok(!$ok && ref $e && $e->class eq 'limit' && $e->message =~ /max_decompressed_bytes/,
        'conversion of the zstd bomb dies at max_decompressed_bytes') or diag("$e");
    is(slurp_raw($target), $before, 'the existing target is unchanged');
    is(dir_entries($dir), 'out.nytprof', 'and no temporary file is left');
}

done_testing;
