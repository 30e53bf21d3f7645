#!/bin/sh
# Call graphs at scale (issue 37): a generated callgrind file of SIZE_MB
# (default 100; 20,000 C++-named functions in 500 files, each fn= block
# re-entered with 16 cost lines and 4 calls, compressed names and
# positions as callgrind writes them) and a pstats file of NFUNC functions
# (default 100,000; 3 callers each, written by Python's own marshal), each
# read whole by us (profbridge info: every chunk decoded and counted) and,
# in the same run, by the real tools: callgrind_annotate (--inclusive=yes)
# and Python's pstats.Stats(path).  Wall time, CPU time and peak RSS of
# each.  Run from the distribution root after "make":
#   sh bench/callgraph-in.sh [SIZE_MB] [NFUNC] [SAME_EDGES]
# Memory: ours grows with the functions, their lines and the call edges,
# never with the cost lines (each round of fn= blocks repeats the same
# functions and lines; its calls go to other callees, so edges grow).
# SAME_EDGES=1: every round calls the same callees, so a bigger file has
# only more cost lines: peak RSS stays flat (16.7 MB file, 3 rounds: 44.6
# MB; 102 MB, 18 rounds: 44.8 MB; 100,000 edges both), where the default
# file's 102 MB has 1,180,000 edges (16.7 MB: 260,000; 64 MB -> 189 MB).
# Measured on a loaded 2-core VM (eight jobs at once), 102 MB callgrind
# (20,000 functions, about 12 rounds): ours 19.5 s wall / 6.2 s CPU, peak
# RSS 204 MB; callgrind_annotate --inclusive=yes 196 s wall / 65.8 s CPU,
# 1363 MB: 10x faster in a seventh of the memory.  pstats of 100,000
# functions (16 MB): ours 2.45 s wall / 0.97 s CPU, 135 MB; Python 3.11's
# pstats.Stats(path) 4.6 s wall / 1.75 s CPU, 119 MB.
set -eu
size_mb=${1:-100}
nfunc=${2:-100000}
same_edges=${3:-0}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pb-cg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cg=$tmp/big.callgrind
ps=$tmp/big.prof

perl -e '
    my ($out, $mb, $same) = @ARGV;
    open my $o, ">", $out or die "$out: $!";
    print $o "# callgrind format\nversion: 1\ncreator: bench\npositions: line\nevents: Ir Dr\n\n";
    # the file names first (a name is defined once, by its first use)
    print $o "fl=(" . ($_ + 1) . ") src/mod$_/file$_.cpp\n" for 0 .. 499;
    my ($n, $round, %seen) = (0, 0);
    my $nf = 20000;
    my $name = sub { my $f = $_[0]; $seen{$f}++ ? "" : " ns" . ($f % 500) . "::Class$f" . "::method(int) const" };
    while ($n < $mb * 1048576) {
        for my $f (0 .. $nf - 1) {
            my $fl = $f % 500;
            my $s = "fl=(" . ($fl + 1) . ")\nfn=(" . ($f + 1) . ")" . $name->($f) . "\n";
            $s .= (10 + $f % 300) . " " . (3 + $f % 7) . " 1\n";
            $s .= "+1 " . (2 + $_ % 5) . "\n" for 1 .. 15;
            for my $c (1 .. 4) {
                my $g = ($f * 7 + $c * 13 + ($same ? 0 : $round)) % $nf;
                $s .= "cfi=(" . ($g % 500 + 1) . ")\n" if $g % 500 != $fl;
                $s .= "cfn=(" . ($g + 1) . ")" . $name->($g) . "\n";
                $s .= "calls=" . (1 + $c) . " " . (10 + $g % 300) . "\n* " . (100 + $c * 17) . " " . $c . "\n";
            }
            print $o $s, "\n";
            $n += length($s) + 1;
        }
        $round++;
    }
    close $o or die' "$cg" "$size_mb" "$same_edges"

python3 - "$ps" "$nfunc" <<'EOF'
import marshal, sys
path, n = sys.argv[1], int(sys.argv[2])
keys = [("pkg%d/mod%d.py" % (i % 700, i % 7000), 10 + i % 900, "func%d" % i) for i in range(n)]
stats = {}
for i, k in enumerate(keys):
    callers = {keys[(i * 31 + j * 17 + 1) % n]: (1 + j, 1 + j, 1e-6 * (1 + j), 2e-6 * (1 + j)) for j in range(3)}
    nc = sum(v[0] for v in callers.values())
    stats[k] = (nc, nc, 1e-6 * (i % 100 + 1) * 6, 2e-5 * (i % 50 + 1), callers)
with open(path, "wb") as f:
    marshal.dump(stats, f)
EOF
echo "callgrind file: $(($(wc -c < "$cg") / 1048576)) MB; pstats file: $(($(wc -c < "$ps") / 1048576)) MB, $nfunc functions"

run() { # label, command...
    label=$1
    shift
    /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$@" > "$tmp/out" 2> "$tmp/err" || { echo "  $label failed:"; tail -3 "$tmp/err"; return 0; }
    read -r secs rss usr sys < "$tmp/time"
    printf '  %-30s %7.2f s wall, %7.2f s CPU, peak RSS %7.1f MB\n' "$label" "$secs" \
        "$(perl -e "print $usr + $sys")" "$(perl -e "print $rss / 1024")"
}
echo "callgrind:"
run "ours (profbridge info)" perl -Mblib bin/profbridge info "$cg"
grep -E '^(cost|chunks):' "$tmp/out" | sed 's/^/    /'
if command -v callgrind_annotate > /dev/null; then
    run "callgrind_annotate --inclusive=yes" callgrind_annotate --inclusive=yes --auto=no "$cg"
fi
echo "pstats:"
run "ours (profbridge info)" perl -Mblib bin/profbridge info "$ps"
grep -E '^(time|chunks):' "$tmp/out" | sed 's/^/    /'
run "python3 pstats.Stats(path)" python3 -c 'import pstats, sys; s = pstats.Stats(sys.argv[1]); print(len(s.stats))' "$ps"
