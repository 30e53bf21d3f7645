#!/bin/sh
# The CLI convert of the large EasyProfiler capture to nytprof.out, at zlib
# levels 6 (the default), 1 and 0: median wall and CPU (user + sys) seconds of
# RUNS runs each, the whole process (Perl start-up included).  The target:
# the default level at most 0.8x the real reader's fillTreesFromFile, whole
# process, raced in the same run by bench/race.pl ("make bench").
# Run from the distribution root after "perl Makefile.PL && make".
#   sh bench/convert-easyprofiler.sh [RUNS]
set -eu
runs=${1:-7}
corpus=${CORPUS:-../shared/corpus}
in="$corpus/easyprofiler/large/ep_large.prof"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pb-bench-ep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for level in 6 1 0; do
    : >"$tmp/times"
    i=0
    while [ "$i" -lt "$runs" ]; do
        rm -f "$tmp/out.nytprof"
        /usr/bin/time -f "%e %U %S" -o "$tmp/t" \
            perl -Mblib bin/profbridge convert "$in" -o "$tmp/out.nytprof" --compress "$level" 2>/dev/null
        cat "$tmp/t" >>"$tmp/times"
        i=$((i + 1))
    done
    wall=$(awk '{ print $1 }' "$tmp/times" | median)
    cpu=$(awk '{ print $2 + $3 }' "$tmp/times" | median)
    printf 'convert --compress %d: wall %s s, cpu %s s (median of %d); %d bytes\n' \
        "$level" "$wall" "$cpu" "$runs" "$(wc -c <"$tmp/out.nytprof")"
done
