#!/bin/sh
# The call-graph targets at scale (issue 37): a large real NYTProf profile
# (the corpus's large.nytprof.out, about 57 million chunks) written --to
# pstats and --to callgrind by us, beside the floor (decoding the input once,
# `profbridge info`, which counts its chunks in C) and the real tool that does
# the same job, Devel::NYTProf's own nytprofcg (NYTProf -> callgrind), in the
# same run, one after the other: wall time, CPU time and peak RSS of each,
# and whether both callgrind files give callgrind_annotate the same program
# total (ours in ns, nytprofcg's Ticks in us: compared as seconds).  Run from
# the distribution root after "make":
#   sh bench/callgraph-out.sh [NYTPROF_FILE]
# Measured once on a loaded 2-core VM (eight jobs at once), the 9.9 MB large
# profile: floor 3.79 s wall / 0.77 s CPU; --to pstats 2.65 s / 0.55 s,
# --to callgrind 2.61 s / 0.54 s (below the floor: the call-graph sink asks
# for SUB_INFO and SUB_CALLERS only, so the statements are skipped, while
# info counts every chunk), peak RSS 11.7 MB; nytprofcg 14.35 s / 2.83 s:
# 5.5x slower; program totals 3.415260 s (ours) and 3.415256 s (nytprofcg's
# truncated us); pstats.Stats loads ours (34 functions, 3,150,009 calls) in
# 0.63 s.
# NYTPROF_FILE: default the developers' corpus copy beside the distribution
# (../shared/corpus/nytprof/large/large.nytprof.out), else t/data's largest.
set -eu
in=${1:-../shared/corpus/nytprof/large/large.nytprof.out}
[ -f "$in" ] || in=t/data/nytprof/modapp.nytprof.out
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pb-cg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bytes=$(wc -c < "$in")
echo "input: $in ($(perl -e "printf '%.1f', $bytes / 1048576") MB)"

run() { # label, command...
    label=$1
    shift
    /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$@" > /dev/null
    read -r secs rss usr sys < "$tmp/time"
    cpu=$(perl -e "print $usr + $sys")
    printf '  %-22s %7.2f s wall, %7.2f s CPU, peak RSS %7.1f MB\n' "$label" "$secs" "$cpu" \
        "$(perl -e "print $rss / 1024")"
    echo "$secs $cpu" > "$tmp/$label.secs"
}
ratio() { perl -e 'printf "  %s / %s: %.2fx (wall), %.2fx (CPU)\n", @ARGV[0, 1], $ARGV[2] / ($ARGV[4] || 0.01), $ARGV[3] / ($ARGV[5] || 0.01)' \
    "$1" "$2" $(cat "$tmp/$1.secs") $(cat "$tmp/$2.secs"); }

run floor perl -Mblib bin/profbridge info "$in"
run pstats perl -Mblib bin/profbridge convert "$in" --to pstats -o "$tmp/out.prof"
run callgrind perl -Mblib bin/profbridge convert "$in" --to callgrind -o "$tmp/out.callgrind"
ratio pstats floor
ratio callgrind floor
if command -v nytprofcg > /dev/null; then
    run nytprofcg nytprofcg --file "$in" --out "$tmp/nytprofcg.callgrind"
    ratio nytprofcg callgrind
    if command -v callgrind_annotate > /dev/null; then
        total() { callgrind_annotate "$1" | perl -ne 'if (/^\s*([\d,]+).*PROGRAM TOTALS/) { (my $n = $1) =~ tr/,//d; print $n; exit }'; }
        ours=$(total "$tmp/out.callgrind")
        theirs=$(total "$tmp/nytprofcg.callgrind")
        # nytprofcg's Ticks are microseconds (int(excl_time * 1e6) per sub: truncated)
        perl -e 'printf "  program total: ours %.6f s (ns), nytprofcg %.6f s (us, truncated per sub)\n", $ARGV[0] / 1e9, $ARGV[1] / 1e6' \
            "$ours" "$theirs"
    fi
else
    echo "  nytprofcg: missing (Debian libdevel-nytprof-perl)"
fi
if command -v python3 > /dev/null; then
    run pstats.Stats python3 -c 'import pstats, sys; s = pstats.Stats(sys.argv[1]); print(len(s.stats), s.total_calls, s.total_tt)' "$tmp/out.prof"
    python3 -c 'import pstats, sys; s = pstats.Stats(sys.argv[1]); print("  pstats.Stats: %d functions, %d calls, %.6f s" % (len(s.stats), s.total_calls, s.total_tt))' "$tmp/out.prof"
fi
