#!/bin/sh
# Scaling in threads (issue 15 point 4): a Tachyon file with N short-lived
# threads (one 3-frame sample each, t/lib/TachyonFile.pm many_threads) to
# every output format, for N = 1,000, 10,000, 100,000.  Time and peak RSS
# should grow linearly in N.  --to statprofiler writes one trace per thread,
# so it is printed beside the floor of the file system it runs on: creating,
# writing and renaming N small files with nothing else (the same run, the
# same directory).  Run from the distribution root after "make":
#   sh bench/threads.sh [DIR]      (DIR: where outputs go; default $TMPDIR)
set -eu
base=${1:-${TMPDIR:-/tmp}}
tmp=$(mktemp -d "$base/pb-threads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pb="perl -Mblib bin/profbridge"
t() { /usr/bin/time -f "%e s, peak RSS %M KB" "$@" 2>&1 >/dev/null | tail -1; }
for n in 1000 10000 100000; do
    perl -It/lib -MTachyonFile=many_threads -e "binmode STDOUT; print many_threads($n)" >"$tmp/t$n.bin"
    echo "== $n threads ($(wc -c <"$tmp/t$n.bin") bytes)"
    for to in nytprof collapsed statprofiler; do
        rm -rf "$tmp/o"; mkdir "$tmp/o"
        printf '  %-13s %s\n' "$to" "$(t $pb convert "$tmp/t$n.bin" --to $to -o "$tmp/o/out")"
    done
    rm -rf "$tmp/o"; mkdir "$tmp/o"
    printf '  %-13s %s\n' "fs floor" "$(t perl -e 'for (1..'$n') { open my $f, ">", "'"$tmp"'/o/t$_" or die; syswrite $f, "x" x 120; close $f; rename "'"$tmp"'/o/t$_", "'"$tmp"'/o/u$_" or die }')"
done
