#!/bin/sh
# bench/run-all.sh - what "make bench" runs: every large corpus file
# (../shared/corpus/*/large) raced against the real readers in one run, then
# the C core's own rates.  Run from the distribution root after
# "perl Makefile.PL && make":
#   sh bench/run-all.sh [-n RUNS] [--race-only]       (make bench [BENCH_RUNS=N])
#
# 1. bench/race.pl: per large file and per target of ours (for_chunks,
#    nytprof.out, collapsed, pprof, speedscope, StatProfiler records), the
#    median wall time and peak RSS of ours and of the real reader of the
#    file's format, runs alternating (real, ours, real, ours ...: RUNS of
#    each, default 5, per target), and ours/theirs.  The real readers are found or built in
#    that run: Devel::NYTProf::ReadStream (Debian libdevel-nytprof-perl), the
#    real EasyProfiler 2.1 reader and Devel::StatProfiler (built from
#    ../shared/tools/build-real-easyprofiler and build-real-statprofiler),
#    CPython 3.15's own replay (../shared/tools/make-real-python315, a Debian
#    sid chroot: root and Debian's archive the first time); a ~100 MB
#    V8 .cpuprofile made here (bench/make-cpuprofile.js) against node's
#    JSON.parse of the same file, the floor of any JS reader; and go tool
#    pprof -raw on a ~50 MB Go CPU profile made at bench time
#    (t/data/pprof/gen_labels.go).  Built tools are
#    kept in $PB_BENCH_TOOLS (default $TMPDIR/pb-bench-tools) for the next
#    run.  A reader that cannot be had is printed as "missing", one that
#    rejects a file as "refused": no figure measured elsewhere is printed.
# 2. The detail of ours: the NYTProf for_chunks breakdown (bench/for_chunks.pl:
#    beside the real reader again, only SUB_INFO/SUB_CALLERS wanted, the
#    C-only decode rate of chunk_counts, process start and the floor of the
#    calls: the same calls from an XS loop without the read), then the C core alone (no Perl, no
#    process start): Tachyon and EasyProfiler decode + fold, StatProfiler
#    decode and writer, Pynytprof decode and convert.
# Without ../shared (a CPAN tarball) there is nothing to race: it says so.
set -eu
runs=5
race_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        -n) runs=$2; shift 2 ;;
        --race-only) race_only=1; shift ;;
        [0-9]*) runs=$1; shift ;;
        *) echo "usage: sh bench/run-all.sh [-n RUNS] [--race-only]" >&2; exit 1 ;;
    esac
done
corpus=${CORPUS:-../shared/corpus}
if [ ! -d "$corpus" ]; then
    echo "bench: $corpus is absent: the large profiles and the real tools' build scripts"
    echo "bench: come with the development material beside the distribution (../shared);"
    echo "bench: set CORPUS=DIR to a corpus directory.  Nothing was measured."
    exit 0
fi
[ -d blib/arch ] || { echo "bench: run 'perl Makefile.PL && make' first" >&2; exit 1; }

echo "== 1. the real readers against ours, $runs alternating rounds"
perl bench/race.pl --runs "$runs" --corpus "$corpus"
[ "$race_only" = 1 ] && exit 0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pb-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
core=$(ls c/*.c)
for b in tachyon pynytprof easyprofiler; do
    $CC -O2 -std=c99 -Ic -o "$tmp/$b" "bench/$b.c" $core -lzstd -lsnappy -lyajl -lz -lpthread
done
rss() { /usr/bin/time -f "%e s, peak RSS %M KB" "$@"; }

echo; echo "== 2. the detail of ours (median of $runs)"
echo "-- NYTProf: for_chunks breakdown (tag table, C-only decode rate, the calls' floor)"
perl -Mblib bench/for_chunks.pl --runs "$runs" "$corpus/nytprof/large/large.nytprof.out"
for f in "$corpus"/tachyon/large/*.bin; do
    echo "-- Tachyon $(basename "$f")"
    for mode in samples chunks collapsed; do
        rss "$tmp/tachyon" -n "$runs" "$mode" "$f"
    done
done
echo "-- EasyProfiler ep_large.prof: decode + fold"
rss "$tmp/easyprofiler" "$corpus/easyprofiler/large/ep_large.prof" "$runs"
echo "-- StatProfiler large trace"
perl bench/statprofiler.pl "$(ls "$corpus"/statprofiler/large/large.out.*[0-9a-f] | head -1)"
echo "-- Pynytprof bigloop.nytprof.out"
rss "$tmp/pynytprof" -n "$runs" decode "$corpus/pynytprof/large/bigloop.nytprof.out"
rss "$tmp/pynytprof" -n "$runs" convert "$corpus/pynytprof/large/bigloop.nytprof.out"
