#!/bin/sh
# StatProfiler run genealogy (issue 27 point 3): a fork chain of N traces,
# each process the child of the one before, stored child-before-parent (the
# pids fall along the chain, so a listing puts children first), read as one
# run from the root's first file.  Resolving the run (which files belong to
# it, in which order) must be O(N): one hash from process id to trace.
# Before it was cubic: 0.29 s at N = 1,000, 2.2 s at 2,000, 18 s at 4,000.
# Prints the time of `profbridge convert ROOT --to collapsed` (every trace
# read: the run's resolution plus N small decodes) for N = 1,000, 4,000,
# 10,000.  Run from the distribution root after "make":
#   sh bench/genealogy.sh [DIR]      (DIR: where traces go; default $TMPDIR)
set -eu
base=${1:-${TMPDIR:-/tmp}}
tmp=$(mktemp -d "$base/pb-genealogy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
objs=$(ls c/*.c | sed 's/\.c$/.o/')
src=c/*.c
for o in $objs; do [ -e "$o" ] || { objs=; break; }; done
${CC:-cc} -O2 -std=c99 -Ic t/c/test_statprofiler.c ${objs:-$src} -lz -lzstd -lsnappy -lyajl -lpthread -o "$tmp/tsp"
for n in 1000 4000 10000; do
    mkdir "$tmp/c$n"
    root=$("$tmp/tsp" chain "$tmp/c$n" $n)
    printf '%6d traces: ' $n
    /usr/bin/time -f "%e s, peak RSS %M KB" perl -Mblib bin/profbridge convert "$root" --to collapsed \
        -o "$tmp/c$n.folded" 2>&1 | tail -1
    want=$((n * (n + 1) / 2))
    got=$(awk '{ s += $NF } END { print s }' "$tmp/c$n.folded")
    [ "$got" = "$want" ] || echo "  wrong total weight: $got, not $want"
    rm -rf "$tmp/c$n"
done
