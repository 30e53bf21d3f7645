#!/bin/sh
# merge's scaling: N copies of a small Tachyon profile (cpu_recursion.bin,
# 10 KB, 511 samples) merged into one collapsed file, with 1 and 2 worker
# processes: wall time and peak RSS (/usr/bin/time), so that memory can be
# seen not to grow with the number of files.
# Run from the distribution root after "perl Makefile.PL && make".
#   sh bench/merge.sh [N ...]        (default: 10 100 1000)
set -eu
tmp=${TMPDIR:-/tmp}/pb-merge.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
src=t/data/tachyon/cpu_recursion.bin
[ $# -gt 0 ] || set -- 10 100 1000
i=0
max=0
for n in "$@"; do [ "$n" -gt "$max" ] && max=$n; done
while [ $i -lt "$max" ]; do i=$((i + 1)); cp "$src" "$tmp/p$i.bin"; done
printf '%8s %6s %10s %12s\n' files jobs "wall s" "peak RSS KB"
for n in "$@"; do
    ls "$tmp"/p*.bin | head -n "$n" > "$tmp/list"
    for j in 1 2; do
        /usr/bin/time -f "%e %M" -o "$tmp/t" perl -Mblib bin/profbridge merge $(cat "$tmp/list") \
            --to collapsed -o "$tmp/out.folded" --jobs $j
        read -r wall rss < "$tmp/t"
        printf '%8d %6d %10s %12s\n' "$n" "$j" "$wall" "$rss"
    done
done
