/* bench/easyprofiler.c - decode + fold an EasyProfiler file with the C core
 * into a sink that only counts chunks; prints the median wall time.
 *
 * Build (from the distribution root):
 *   gcc -O2 -std=c99 -Wall -Wextra -Ic bench/easyprofiler.c c/[a-z]*.c -lz -lzstd -lsnappy -lyajl -lpthread -o /tmp/bench_ep
 * Run (peak RSS from /usr/bin/time):
 *   /usr/bin/time -v /tmp/bench_ep ../shared/corpus/easyprofiler/large/ep_large.prof 5
 * The real reader (fillTreesFromFile) is raced against ours, both whole
 * processes, in the same run by bench/race.pl ("make bench").
 */
#include "bench_common.h"

int main(int argc, char **argv)
{
    int runs = bench_clamp(argc > 2 ? atoi(argv[2]) : 5), i, t;
    double times[BENCH_MAX_RUNS];
    pb_count_sink cs;
    pb_error err;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.prof [runs]\n", argv[0]);
        return 1;
    }
    for (i = 0; i < runs; i++) {
        double t0;
        pb_count_sink_init(&cs);
        t0 = bench_now();
        if (pb_decode_file(argv[1], PB_FMT_EASYPROFILER, NULL, &cs.sink, &err) != PB_OK)
            return hx_fail(&err);
        times[i] = bench_now() - t0;
    }
    bench_sort(times, runs);
    printf("decode+fold %s: median %.3f s over %d run%s (min %.3f, max %.3f)\n", argv[1], times[runs / 2], runs,
           runs == 1 ? "" : "s", times[0], times[runs - 1]);
    for (t = 0; t < PB_TAG_COUNT; t++)
        if (cs.count[t])
            printf("  %-12s %llu\n", pb_tag_name[t], (unsigned long long)cs.count[t]);
    return 0;
}
