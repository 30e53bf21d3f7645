#!/bin/sh
# perf script text at scale (issue 38): a large `perf script` file made from
# a real one (t/data/perf/rust_dwarf.perf, deep Rust stacks from
# --call-graph dwarf, repeated with its thread ids varied over 16 threads),
# converted --to collapsed by us and by FlameGraph's stackcollapse-perf.pl
# --tid in the same run, one after the other; wall time, MB/s and peak RSS
# of each (wall and CPU time: on a loaded machine the CPU time is the
# steadier figure), the ratios, and whether the two outputs agree (ours without its
# "tid:" prefix, both sorted).  Run from the distribution root after "make":
#   sh bench/perf-script.sh [SIZE_MB] [STACKCOLLAPSE]
# Measured on a loaded 2-core VM (eight jobs at once), 100 MB: ours 0.85 s
# wall / 0.21 s CPU (476 MB/s of CPU time), peak RSS 11.3 MB;
# stackcollapse-perf.pl 13.9 s wall / 3.47 s CPU, 7.4 MB: 16x faster, the
# same 400 stacks.  Ours alone on 1 GB: 8.5 s wall / 2.1 s CPU, peak RSS
# 11.2 MB (the same as for 100 MB: memory does not grow with the file).
# SIZE_MB: the file's size (default 1024); STACKCOLLAPSE: the path of
# stackcollapse-perf.pl (default: FlameGraph's copy beside the
# distribution, ../shared/anchors/flamegraph-41fee1f/, when there is one).
set -eu
size_mb=${1:-1024}
sc=${2:-../shared/anchors/flamegraph-41fee1f/stackcollapse-perf.pl}
src=t/data/perf/rust_dwarf.perf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pb-perf.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
in=$tmp/big.perf

# the file: copies of the real one, copy k with its tids + k % 16
perl -e '
    my ($src, $out, $mb) = @ARGV;
    open my $fh, "<", $src or die "$src: $!";
    local $/;
    my $text = <$fh>;
    my @copies = map { my $k = $_; (my $t = $text) =~ s{^(\S.*?\s)(\d+)(\s)}{$1 . ($2 + $k) . $3}gme; $t } 0 .. 15;
    open my $o, ">", $out or die "$out: $!";
    my ($n, $i) = (0, 0);
    while ($n < $mb * 1048576) { print $o $copies[$i++ % 16]; $n += length $copies[0] }
    close $o or die' "$src" "$in" "$size_mb"
bytes=$(wc -c < "$in")
mb=$(perl -e "printf '%.0f', $bytes / 1048576")
echo "perf script file: $mb MB (from $src)"

run() { # label, output, command...
    label=$1 out=$2
    shift 2
    /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$@" > "$out"
    read -r secs rss usr sys < "$tmp/time"
    cpu=$(perl -e "print $usr + $sys")
    printf '  %-22s %6.2f s wall %7.1f MB/s, %6.2f s CPU %7.1f MB/s, peak RSS %6.1f MB\n' "$label" "$secs" \
        "$(perl -e "print $bytes / 1048576 / ($secs || 0.01)")" "$cpu" \
        "$(perl -e "print $bytes / 1048576 / ($cpu || 0.01)")" "$(perl -e "print $rss / 1024")"
    echo "$secs $cpu" > "$tmp/$label.secs"
}
# the floor: reading the bytes once (cat into a pipe; the page cache holds
# them after the first run)
run floor "$tmp/floor.out" sh -c 'cat "$1" | wc -c' sh "$in"
run ours "$tmp/ours.folded" perl -Mblib bin/profbridge convert "$in" --to collapsed -o -
perl -e 'printf "  ours / floor: %.1fx (wall)\n", $ARGV[0] / ($ARGV[2] || 0.01)' $(cat "$tmp/ours.secs") $(cat "$tmp/floor.secs")
rm -f "$tmp/floor.out"
if [ -f "$sc" ]; then
    run stackcollapse-perf.pl "$tmp/theirs.folded" perl "$sc" --tid "$in"
    perl -e 'printf "  ours is %.1fx faster (wall), %.1fx (CPU)\n", $ARGV[2] / ($ARGV[0] || 0.01), $ARGV[3] / ($ARGV[1] || 0.01)' \
        $(cat "$tmp/ours.secs") $(cat "$tmp/stackcollapse-perf.pl.secs")
    sed 's/^tid://' "$tmp/ours.folded" | LC_ALL=C sort > "$tmp/a"
    LC_ALL=C sort "$tmp/theirs.folded" > "$tmp/b"
    if cmp -s "$tmp/a" "$tmp/b"; then echo "  the two outputs agree ($(wc -l < "$tmp/a") stacks)"
    else echo "  the outputs DIFFER"; exit 1; fi
else
    echo "  stackcollapse-perf.pl: missing ($sc)"
fi
