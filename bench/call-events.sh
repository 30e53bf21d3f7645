#!/bin/sh
# What nytprofhtml fidelity costs (call events, names, embedded source): each
# large corpus file converted to nytprof.out by this build and by an OLD build
# (a checkout of an earlier version, built with "perl Makefile.PL && make"),
# side by side in one run: output size and convert time (median of RUNS).
# Run from the distribution root after "perl Makefile.PL && make".
#   OLD=/path/to/old/checkout sh bench/call-events.sh [RUNS]
set -eu
runs=${1:-3}
old=${OLD:?set OLD to the top directory of a built earlier version}
corpus=${CORPUS:-../shared/corpus}
tmp=${TMPDIR:-/tmp}/pb-callev.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# median wall seconds of $runs runs of a command
median() {
    i=0
    : > "$tmp/times"
    while [ $i -lt "$runs" ]; do
        /usr/bin/time -f %e -o "$tmp/t" "$@" > /dev/null 2>&1
        cat "$tmp/t" >> "$tmp/times"
        i=$((i + 1))
    done
    sort -n "$tmp/times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# "new" is without source (--no-source): the call events' own cost; "+source"
# is the size with the files found on this machine embedded
printf '%-28s %10s %10s %6s %6s %6s %6s %10s %10s\n' file "old bytes" "new bytes" ratio "old s" "new s" ratio SUB_RETURN "+source"
for f in "$corpus"/tachyon/large/large_multithread.bin \
         "$(ls "$corpus"/statprofiler/large/large.out.*[0-9a-f] | head -1)" \
         "$corpus"/easyprofiler/large/ep_large.prof \
         "$corpus"/pynytprof/large/bigloop.nytprof.out; do
    b=$(basename "$f" | cut -c1-28)
    to=$(median perl -I"$old/blib/lib" -I"$old/blib/arch" "$old/bin/profbridge" convert "$f" -o "$tmp/old.nytprof")
    perl -Mblib bin/profbridge convert "$f" -o "$tmp/src.nytprof" 2>/dev/null
    ss=$(wc -c < "$tmp/src.nytprof")
    tn=$(median perl -Mblib bin/profbridge convert "$f" -o "$tmp/new.nytprof" --no-source)
    so=$(wc -c < "$tmp/old.nytprof")
    sn=$(wc -c < "$tmp/new.nytprof")
    nr=$(perl -Mblib -MDevel::ProfileBridge -e 'print Devel::ProfileBridge::chunk_counts(shift)->{SUB_RETURN} // 0' "$tmp/new.nytprof")
    printf '%-28s %10d %10d %6.3f %6.2f %6.2f %6.3f %10d %10d\n' "$b" "$so" "$sn" \
        "$(echo "$sn $so" | awk '{ printf "%.3f", $1 / $2 }')" "$to" "$tn" \
        "$(echo "$tn $to" | awk '{ printf "%.3f", ($2 > 0 ? $1 / $2 : 0) }')" "$nr" "$ss"
done
