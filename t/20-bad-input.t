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

# pstats: the marshal subset, bounded
{
    my $key = ")\x03z\x04a.pyi\x01\x00\x00\x00z\x01f";    # ('a.py', 1, 'f')
    my $val = ")\x05i\x01\x00\x00\x00i\x01\x00\x00\x00g" . pack('d<', 0.5) . 'g' . pack('d<', 0.5) . "{0";
    my $n = 0;
    for_chunks { $n++ } filename => spew_raw("$tmp/ps-ok", "{$key${val}0");
    ok($n > 5, 'pstats: a minimal file reads');
    is_error(spew_raw("$tmp/ps-cut", "{$key" . substr($val, 0, 9)), 'truncated',
        qr/^pstats: truncated: the file ends inside an int at byte 25 /, 'pstats: cut inside a value');
    is_error(spew_raw("$tmp/ps-cplx", "{$key)\x05x\x01\x00\x00\x00"), 'unsupported',
        qr/^pstats: unsupported: marshal object \(type byte 0x78\) is not part of a pstats file at byte 19 /,
        'pstats: a marshal type outside the subset');
    is_error(spew_raw("$tmp/ps-ref", "{$key)\x05r\x07\x00\x00\x00"), 'corrupt',
        qr/^pstats: corrupt: a reference to object 7, only 0 objects marked so far at byte 19 /,
        'pstats: a reference to an object not yet read');
    is_error(spew_raw("$tmp/ps-deep", "{$key" . (")\x01" x 300)), 'limit',
        qr/^pstats: limit: marshal objects nested more than 200 deep/, 'pstats: nesting is bounded');
    is_error(spew_raw("$tmp/ps-shape", "{$key)\x02i\x01\x00\x00\x00i\x01\x00\x00\x000"), 'corrupt',
        qr/^pstats: corrupt: a pstats value is not a \(cc, nc, tt, ct, callers\) tuple/, 'pstats: a value of another shape');
    is_error(spew_raw("$tmp/ps-long", "{$key)\x05l\xff\xff\xff\x7f"), 'limit',
        qr/^pstats: limit: a long of 2147483647 digits/, 'pstats: a long\'s digit count is bounded before its digits');
}
# callgrind: lines, names, positions
{
    my $h = "# callgrind format\nversion: 1\npositions: line\nevents: Ir\n";
    is_error(spew_raw("$tmp/cg-calls", "${h}fl=(1) a.c\nfn=(1) main\n3 10\ncfn=(2) f\ncalls=1 5\n"), 'truncated',
        qr/^callgrind: truncated: the file ends after a calls= line/, 'callgrind: a calls= line at the end');
    is_error(spew_raw("$tmp/cg-id", "${h}fl=(1) a.c\nfn=(7)\n3 10\n"), 'corrupt',
        qr/^callgrind: corrupt: line 6: a compressed name's id is used before it is defined at byte 68 /,
        'callgrind: a name id never defined');
    is_error(spew_raw("$tmp/cg-v2", "# callgrind format\nversion: 2\n"), 'unsupported',
        qr/^callgrind: unsupported: callgrind format version 2 \(only 1\)/, 'callgrind: another version');
    is_error(spew_raw("$tmp/cg-pos", "${h}fl=(1) a.c\nfn=(1) main\n3x 10\n"), 'corrupt',
        qr/^callgrind: corrupt: line 7: a cost line's position is not a number/, 'callgrind: a bad position');
    is_error(spew_raw("$tmp/cg-more", "${h}fl=(1) a.c\nfn=(1) main\n3 10 20\n"), 'corrupt',
        qr/more costs than events/, 'callgrind: more costs than events');
    is_error(spew_raw("$tmp/cg-ev", "${h}fl=(1) a.c\nfn=(1) main\n3 10\n"), 'usage',
        qr/^callgrind: usage: no event Dr in this file \(its events: Ir\)/, 'callgrind: an event the file lacks',
        sample_type => 'Dr');
}

done_testing;
