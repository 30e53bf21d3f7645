#!/bin/sh
# Scaling in stack depth (issue 27): 100 StatProfiler samples, each a
# distinct stack of D frames (distinct subs; every stack differs at its
# root, so the call tree has 100 x D nodes), to nytprof.out, for D = 2,000,
# 4,000, 8,000.  Time should grow linearly in D (it was quadratic: the
# recursion depth of every node counted up its path, and every call event
# compared the whole path: 2.2 s, 6.8 s, 22.5 s before; about 0.8 s, 1.7 s,
# 2.9 s after).  Run from the distribution root after "make":
#   sh bench/deep-stacks.sh
set -eu
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pb-deep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
t() { /usr/bin/time -f "%e s, peak RSS %M KB" "$@" 2>&1 >/dev/null | tail -1; }
for d in 2000 4000 8000; do
    perl -Mblib -MDevel::ProfileBridge::StatProfilerWriter -e '
        my ($d, $out) = @ARGV;
        my $w = Devel::ProfileBridge::StatProfilerWriter->new(file => $out, interval_us => 1000, depth => $d);
        for my $s (1 .. 100) {
            $w->start_sample(1, "padsv");
            $w->sub_frame("main", "f$_", "app.pl", $_, $_) for reverse 1 .. $d - 1;
            $w->main_frame("app.pl", $s);
            $w->end_sample;
        }
        $w->close;' "$d" "$tmp/d$d.sp"
    printf '  depth %-6s %s\n' "$d" "$(t perl -Mblib bin/profbridge convert "$tmp/d$d.sp" --max-stack-depth 10000 --no-source -o "$tmp/d$d.nytprof")"
done
