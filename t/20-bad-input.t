#!perl
# Bad input: the C sweep (t/c/sweep.c) over every file under t/data, every
# format: a sample of 100 cuts and 100 one-byte flips per file here (a few
# seconds); the exhaustive sweep (every offset of every file, sampled above
# 64 KB and within a budget of decode work per file) is xt/20-bad-input-sweep.t (RELEASE_TESTING=1, make xtest, CI, and
# under AddressSanitizer in make ctest-asan).  Then the named NYTProf cases.  Every error is a Devel::ProfileBridge::Error of a
# known class naming the byte offset; nothing crashes or hangs.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use RawFile qw(spew_raw);
use Config;
use File::Temp qw(tempdir);
use Compress::Zlib ();
use Devel::ProfileBridge::ReadStream qw(for_chunks);

my $root = "$FindBin::Bin/..";
my $tmp = tempdir('pb20-XXXXXX', TMPDIR => 1, CLEANUP => 1);

# ---- the sweep -------------------------------------------------------------
# built here with the compiler Perl was built with (never a stale binary:
# $ENV{PB_SWEEP_BIN} names a prebuilt one)
my $sweep = $ENV{PB_SWEEP_BIN};
if (!$sweep && !$ENV{PB_SKIP_SWEEP}) {
    my @c = glob("$root/c/*.c");
    # the objects make built for the module (c/*.o, position-independent
    # code links into a program as well), when each is newer than its
    # source: compiling the core again costs more than the sweep itself
    # (not when the module was built without a library: those objects
    # refuse its files, which the sweep's own build reads)
    my @o = map { s/\.c\z/.o/r } @c;
    my $lib = Devel::ProfileBridge::features()->{libraries};
    @c = @o unless grep({ !defined $lib->{$_} } qw(zstd snappy yajl))
        || grep { !-e $o[$_] || -M $o[$_] > -M $c[$_] } 0 .. $#c;
    my $cmd = join ' ', $Config{cc}, '-O2', '-std=c99', "-I$root/c", '-o', "$tmp/sweep",
        "$root/t/c/sweep.c", @c, '-lzstd', '-lsnappy', '-lyajl', '-lz', '-lpthread', '2>&1';
    my $out = `$cmd`;
    $sweep = $? == 0 ? "$tmp/sweep" : undef;
    diag("could not build the sweep driver: $out") unless $sweep;
}
SKIP: {
    skip 'PB_SKIP_SWEEP is set (CI runs the sweep under ASan in make ctest-asan)', 1 if $ENV{PB_SKIP_SWEEP};
    skip 'no sweep driver', 1 unless $sweep;
    my @seed = defined $ENV{SWEEP_SEED} ? ('-s', $ENV{SWEEP_SEED}) : ();
    # t/c/asan-perl.sh preloads the ASan runtime into perl; the sweep limits
    # its address space, which ASan's shadow memory cannot live with (the
    # sweep runs instrumented in "make ctest-asan")
    local %ENV = %ENV;
    delete $ENV{LD_PRELOAD};
    my @sample = $ENV{PB_FULL_SWEEP} ? () : ('-n', 100);
    my $out = `'$sweep' @seed @sample -q '$root/t/data' 2>&1`;
    my $rc = $? >> 8;
    my ($seed) = $out =~ /sweep seed (\d+)/;
    note("sweep seed $seed (replay: SWEEP_SEED=$seed)") if defined $seed;
    ok($rc == 0 && $out =~ /^1 passed, 0 failed$/m,
        'sweep: ' . (@sample ? '100 cuts and 100 flips of' : 'every cut and flip of')
        . ' every file in t/data decode or fail cleanly')
        or diag($out);
}

# ---- named cases --------------------------------------------------------------
sub error_of {
    my ($file, %opt) = @_;
    my $n = 0;
    my $ok = eval { for_chunks { $n++ } filename => $file, %opt; 1 };
    return $ok ? undef : $@;
}

sub is_error {
    my ($file, $class, $re, $name, %opt) = @_;
    my $e = error_of($file, %opt);
    if (!ref $e) {
        fail("$name: expected a $class error, got " . (defined $e ? $e : 'success'));
        return;
    }
    ok($e->isa('Devel::ProfileBridge::Error') && $e->class eq $class && "$e" =~ $re, $name)
        or diag("got: $e");
}

my $hdr = "NYTProf 5 0\n:ticks_per_sec=10000000\n";
is_error(spew_raw("$tmp/junk", "GIF89a not a profile"), 'corrupt',
    qr/^Devel::ProfileBridge: corrupt: not a profile this distribution recognises \(.*\); first bytes 47 49 46 38 at byte 0 of /,
    'not a profile');
is_error(spew_raw("$tmp/empty", ''), 'corrupt', qr/empty file/, 'empty file');
is_error(spew_raw("$tmp/v4", "NYTProf 4 0\n"), 'unsupported',
    qr/^nytprof: unsupported: NYTProf file format version 4\.0; this reader handles major version 5 at byte 0 /,
    'wrong major version');
is_error(spew_raw("$tmp/nv", "NYTProf 5 0\n:nv_size=16\n"), 'unsupported',
    qr/nv_size=16; this reader handles nv_size=8 .* at byte 12 /, 'nv_size mismatch');
is_error(spew_raw("$tmp/tag", "${hdr}Q"), 'corrupt', qr/unknown tag 0x51 \('Q'\) at byte 36 /, 'unknown tag');
is_error(spew_raw("$tmp/strtag", "${hdr}'"), 'corrupt', qr/string prefix .* where a tag byte was expected/,
    'a bare string prefix at tag position');
is_error(spew_raw("$tmp/badstr", "${hdr}\@\x01\x00\x00\x00\x00\x00Zx"), 'corrupt',
    qr/NEW_FID record: file name should start with a string prefix/, 'bad string prefix');
is_error(spew_raw("$tmp/cut", "${hdr}+\x05\x01"), 'truncated',
    qr/TIME_LINE record needs 1 more byte for its line, the input has 0 at byte 39 /, 'record cut short');
is_error(spew_raw("$tmp/longstr", "${hdr}S\x01\x01'\xFF\x7F\xFF\xFF\xFFabc"), 'truncated',
    qr/SRC_LINE record needs 2147483647 more bytes for its source text/,
    'a string length far past EOF is truncation, not an allocation');

my $z = do {
    open my $fh, '<:raw', "$FindBin::Bin/data/nytprof/evals.nytprof.out" or die;
    local $/;
    <$fh>;
};
# NYTProf writes a plain "#\n# Compressed N bytes to M ..." trailer after the
# zlib stream, which its reader (and ours) ignores: cut into the stream itself
is_error(spew_raw("$tmp/zcut", substr($z, 0, length($z) - 200)), 'truncated',
    qr/zlib stream ends before its end marker/, 'truncated zlib stream');
{
    my $n = 0;
    for_chunks { $n++ } filename => spew_raw("$tmp/ztrailer", substr($z, 0, length($z) - 40));
    is($n, 2648, 'a cut inside the text trailer after the zlib stream loses nothing (as NYTProf)');
}
is_error(spew_raw("$tmp/zgarbage", "${hdr}zthis is not zlib data"), 'corrupt',
    qr/zlib inflate failed \(-3: incorrect header check\) at byte \d+ /, 'garbage after z');
my $bomb = "${hdr}z" . Compress::Zlib::compress('-' x 20_000_000, 9);
ok(length($bomb) < 40_000, 'a small zlib bomb (' . length($bomb) . ' bytes for 20 MB)');
is_error(spew_raw("$tmp/bomb", $bomb), 'limit', qr/exceeds max_decompressed_bytes \(1000000\)/,
    'zlib bomb stops at max_decompressed_bytes', max_decompressed_bytes => 1_000_000);

# a minor version above 0 is read, with a warning (as NYTProf)
{
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $n = 0;
    for_chunks { $n++ } filename => spew_raw("$tmp/minor", "NYTProf 5 1\n:ticks_per_sec=1\n");
    is($n, 2, 'minor version 1: read');
    like("@w", qr/format version 5\.1 is newer than 5\.0/, 'minor version 1: warned');
}
# format => overrides detection, and says what it expected
is_error("$FindBin::Bin/data/nytprof/oneliner.nytprof.out", 'corrupt', qr/^tachyon: corrupt: header: invalid magic number/,
    'format => tachyon on a NYTProf file', format => 'tachyon');

done_testing;
