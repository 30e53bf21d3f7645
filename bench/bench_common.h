/* bench/bench_common.h - what every C benchmark in bench/ does the same way:
 * the clock, the command line "[-n RUNS] MODE [FILE]", the median of the
 * runs, the chunk count of a counting sink; with ../t/c/harness.h (the
 * error line: hx_fail; a sample sink that does nothing: hx_null_sink). */
#ifndef PB_BENCH_COMMON_H
#define PB_BENCH_COMMON_H

#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pb.h"
#include "formats.h"
#include "../t/c/harness.h"

#define BENCH_MAX_RUNS 64

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* sort the runs' times: t[0] is the fastest, t[runs / 2] the median */
static inline void bench_sort(double *t, int runs) { qsort(t, (size_t)runs, sizeof *t, bench_cmp); }

/* runs clamped to 1..BENCH_MAX_RUNS */
static inline int bench_clamp(int runs) { return runs < 1 ? 1 : runs > BENCH_MAX_RUNS ? BENCH_MAX_RUNS : runs; }

/* "[-n RUNS] MODE [FILE]": *mode and *file (left as given when absent) */
static inline void bench_args(int argc, char **argv, int *runs, const char **mode, const char **file)
{
    int a;
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc)
            *runs = atoi(argv[++a]);
        else if (!*mode)
            *mode = argv[a];
        else
            *file = argv[a];
    }
}

/* the chunks a counting sink saw */
static inline unsigned long long bench_chunks(const pb_count_sink *cs)
{
    unsigned long long n = 0;
    int k;
    for (k = 0; k < PB_TAG_COUNT; k++)
        n += cs->count[k];
    return n;
}

#endif
