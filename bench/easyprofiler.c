/* bench/easyprofiler.c - decode + fold an EasyProfiler file with the C core
 * into a sink that only counts chunks; prints the median wall time.
 *
 * Build (from the distribution root):
 *   gcc -O2 -std=c99 -Wall -Wextra -Ic bench/easyprofiler.c c/[a-z]*.c -lz -lzstd -lsnappy -o /tmp/bench_ep
 * Run (peak RSS from /usr/bin/time):
 *   /usr/bin/time -v /tmp/bench_ep ../shared/corpus/easyprofiler/large/ep_large.prof 5
 * Reference: the real reader (fillTreesFromFile, no statistics) takes 0.27 s
 * and 112 MB peak RSS on this file (../shared/specs/easyprofiler-format.md §8).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pb.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int runs = argc > 2 ? atoi(argv[2]) : 5, i, t;
    double times[64];
    pb_count_sink cs;
    pb_error err;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.prof [runs]\n", argv[0]);
        return 1;
    }
    if (runs < 1)
        runs = 1;
    if (runs > 64)
        runs = 64;
    for (i = 0; i < runs; i++) {
        double t0;
        pb_count_sink_init(&cs);
        t0 = now();
        if (pb_decode_file(argv[1], PB_FMT_EASYPROFILER, NULL, &cs.sink, &err) != PB_OK) {
            char buf[2048];
            pb_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "%s\n", buf);
            return 2;
        }
        times[i] = now() - t0;
    }
    qsort(times, (size_t)runs, sizeof times[0], cmp);
    printf("decode+fold %s: median %.3f s over %d run%s (min %.3f, max %.3f)\n", argv[1], times[runs / 2], runs,
           runs == 1 ? "" : "s", times[0], times[runs - 1]);
    for (t = 0; t < PB_TAG_COUNT; t++)
        if (cs.count[t])
            printf("  %-12s %llu\n", pb_tag_name[t], (unsigned long long)cs.count[t]);
    return 0;
}
