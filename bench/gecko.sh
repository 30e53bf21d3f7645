#!/bin/sh
# --to gecko at scale (issue 39): a large real Tachyon file (the corpus's
# tachyon/large/large_315.bin, CPython 3.15) and a 99 MB V8 .cpuprofile
# (made here by bench/make-cpuprofile.js) converted --to gecko, each raced in
# the same run against the real tool: CPython's own `profiling.sampling
# replay --gecko` of the .bin (run directly in the chroot that
# tools/make-real-python315 makes; skipped, with the reason, without one),
# and node's JSON.parse of the .cpuprofile (the floor of any JavaScript
# reader).  Wall time, CPU time and peak RSS of each, the ratios, and whether
# our output and CPython's have the same threads and samples per thread
# (counted by node).  Run from the distribution root after "make", as root
# for the chroot:
#   sh bench/gecko.sh [CORPUS] [PY315_ROOT]
# CORPUS: the real files (default ../shared/corpus); PY315_ROOT: the chroot
# (default $PY315_ROOT, else ${TMPDIR:-/tmp}/py315-sid).
# Measured on this 2-core VM, otherwise idle (load average about 1.7), one
# run (the raw Gecko profile in the DevTools wrapper):
#   large_315.bin (18.2 MB, 5 threads, 8,300,094 samples): ours 2.16 s wall /
#   2.15 s CPU, peak RSS 12.3 MB; CPython 3.15's replay --gecko 36.44 s wall /
#   36.34 s CPU, peak RSS 47.8 MB: 16.9x less CPU, 3.9x less memory; the same
#   threads and samples per thread.
#   synthetic-99mb.cpuprofile (98.3 MB, 10,569,118 samples): ours 4.23 s wall /
#   4.23 s CPU, peak RSS 13.4 MB; node's JSON.parse alone 1.12 s wall / 1.12 s
#   CPU, peak RSS 459 MB: 3.8x its CPU time, 1/34 of its memory.
set -eu
corpus=${1:-../shared/corpus}
root=${2:-${PY315_ROOT:-${TMPDIR:-/tmp}/py315-sid}}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pb-gecko.XXXXXX")
bench_dir=""
cleanup() { rm -rf "$tmp"; [ -z "$bench_dir" ] || rm -rf "$bench_dir"; }
trap cleanup EXIT

run() { # label, bytes, output (or -), command...
    label=$1 bytes=$2 out=$3
    shift 3
    if [ "$out" = - ]; then /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$@" > /dev/null 2> "$tmp/$label.err"
    else /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$@" > "$out" 2> "$tmp/$label.err"; fi
    read -r secs rss usr sys < "$tmp/time"
    cpu=$(perl -e "print $usr + $sys")
    printf '  %-26s %6.2f s wall %6.1f MB/s, %6.2f s CPU, peak RSS %7.1f MB\n' "$label" "$secs" \
        "$(perl -e "print $bytes / 1048576 / ($secs || 0.01)")" "$cpu" "$(perl -e "print $rss / 1024")"
    echo "$secs $cpu $rss" > "$tmp/$label.secs"
}
ratio() { # ours, theirs, what
    perl -e 'my @a = split " ", $ARGV[0]; my @b = split " ", $ARGV[1];
        printf "  %s: theirs / ours: %.2fx the time (wall), %.2fx (CPU), %.2fx the peak RSS\n", $ARGV[2],
            $b[0] / ($a[0] || 0.01), $b[1] / ($a[1] || 0.01), $b[2] / ($a[2] || 1)' \
        "$(cat "$tmp/$1.secs")" "$(cat "$tmp/$2.secs")" "$3"
}
# threads and samples per thread of a gecko file, as node reads it: ours (a
# raw Gecko profile in the DevTools wrapper: rows, the closing sample of no
# stack not counted) or CPython's (a processed profile: columns)
count() {
    node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1]));
        const p = j.profile || j;
        console.log(p.threads.map(t => t.tid + ":" + (t.samples.data
            ? t.samples.data.filter(r => r[t.samples.schema.stack] !== null).length
            : t.samples.length)).sort().join(" "))' "$1"
}

# 1. Tachyon: ours against CPython's replay --gecko
bin=$corpus/tachyon/large/large_315.bin
if [ -f "$bin" ]; then
    bytes=$(wc -c < "$bin")
    echo "$bin: $(perl -e "printf '%.1f', $bytes / 1e6") MB"
    run ours-tachyon "$bytes" - perl -Mblib bin/profbridge convert "$bin" --to gecko -o "$tmp/ours.json"
    if [ -x "$root/usr/bin/python3.15" ] && [ "$(id -u)" = 0 ]; then
        bench_dir=$root/srv/bench-$$
        mkdir -p "$bench_dir"
        cp "$bin" "$bench_dir/in.bin"
        run cpython-replay-gecko "$bytes" - chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root \
            python3.15 -m profiling.sampling replay --gecko -o "/srv/bench-$$/out.json" "/srv/bench-$$/in.bin"
        ratio ours-tachyon cpython-replay-gecko "large_315.bin"
        a=$(count "$tmp/ours.json") b=$(count "$bench_dir/out.json")
        if [ "$a" = "$b" ]; then echo "  the same threads and samples per thread ($a)"
        else echo "  the outputs DIFFER: ours $a, CPython's $b"; exit 1; fi
        rm -rf "$bench_dir"
    else
        echo "  cpython replay --gecko: missing (no python3.15 in $root, or not root: make it with make-real-python315)"
    fi
    rm -f "$tmp/ours.json"
else
    echo "$bin: missing (give the corpus directory)"
fi

# 2. V8: ours against node's JSON.parse of the input
prof=$tmp/synthetic-99mb.cpuprofile
node bench/make-cpuprofile.js "$prof" 99 > /dev/null
bytes=$(wc -c < "$prof")
echo "$prof: $(perl -e "printf '%.1f', $bytes / 1e6") MB (bench/make-cpuprofile.js)"
run ours-v8 "$bytes" - perl -Mblib bin/profbridge convert "$prof" --to gecko -o "$tmp/ours.json"
run node-JSON.parse "$bytes" - node --max-old-space-size=8192 -e \
    'const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(p.samples.length)' "$prof"
ratio ours-v8 node-JSON.parse "synthetic .cpuprofile"
echo "  ours: $(count "$tmp/ours.json") samples (thread:samples)"
