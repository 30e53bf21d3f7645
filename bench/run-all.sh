#!/bin/sh
# Build and run every benchmark on the large corpus files (../shared/corpus/*/large).
# Run from the distribution root after "perl Makefile.PL && make".
#   sh bench/run-all.sh [RUNS]
# NYTProf is measured side by side with the real Devel::NYTProf reader in the
# same run (bench/for_chunks.pl).  The other profilers' own readers are not
# packaged for Debian; their reference timings (measured on the same kind of
# 2-core machine) are printed next to ours for comparison.
set -eu
runs=${1:-3}
corpus=${CORPUS:-../shared/corpus}
tmp=${TMPDIR:-/tmp}/pb-bench.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
core=$(ls c/*.c)
for b in tachyon pynytprof easyprofiler; do
    $CC -O2 -std=c99 -Ic -o "$tmp/$b" "bench/$b.c" $core -lzstd -lsnappy -lz -lpthread
done
rss() { /usr/bin/time -f "%e s, peak RSS %M KB" "$@"; }

echo "== NYTProf: for_chunks, ours vs Devel::NYTProf::ReadStream (median of $runs)"
perl -Mblib bench/for_chunks.pl --runs "$runs" "$corpus/nytprof/large/large.nytprof.out"

echo; echo "== Tachyon: large_multithread.bin (20 MB, 4.0M samples); CPython's reader replaying into a collapsed collector: 2.06 s, 33.6 MB"
for mode in collapsed chunks; do
    rss "$tmp/tachyon" -n "$runs" "$mode" "$corpus/tachyon/large/large_multithread.bin"
done
echo "-- to nytprof.out (convert, zlib 6):"
rss perl -Mblib bin/profbridge convert "$corpus/tachyon/large/large_multithread.bin" -o "$tmp/t.nytprof"

echo; echo "== EasyProfiler: ep_large.prof (27.5 MB, 1.2M blocks); the real reader (fillTreesFromFile): 0.27 s, 112 MB"
rss "$tmp/easyprofiler" "$corpus/easyprofiler/large/ep_large.prof"
echo "-- for_chunks with an empty Perl callback:"
rss perl -Mblib -MDevel::ProfileBridge::ReadStream=for_chunks -e 'for_chunks { } filename => shift' "$corpus/easyprofiler/large/ep_large.prof"

echo; echo "== StatProfiler: large trace (18.2 MB, 849k samples); the real Devel::StatProfiler::Reader: 2.78 s, 7.4 MB"
perl bench/statprofiler.pl "$(ls "$corpus"/statprofiler/large/large.out.*[0-9a-f] | head -1)"

echo; echo "== Pynytprof: bigloop.nytprof.out (4.9 MB, 290k statements)"
rss "$tmp/pynytprof" -n "$runs" decode "$corpus/pynytprof/large/bigloop.nytprof.out"
rss "$tmp/pynytprof" -n "$runs" convert "$corpus/pynytprof/large/bigloop.nytprof.out"
