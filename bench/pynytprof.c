/* bench/pynytprof - Pynytprof (dialect C, statement log) to nytprof.out, timed.
 *
 *   bench/pynytprof [-n RUNS] decode|convert [FILE]
 *
 *   decode   decode only, into a sink that counts chunks
 *   convert  decode + the NYTProf writer (zlib level 6) to a temp file
 *            (what `profbridge convert FILE -o fixed.nytprof` does)
 *
 * FILE defaults to ../shared/corpus/pynytprof/large/bigloop.nytprof.out
 * (4.9 MB, dialect C, 290,003-statement D log).  Prints the median wall time
 * of RUNS runs (default 5), chunks, and this process's peak RSS (getrusage);
 * run one mode per process so the RSS belongs to that mode.
 * There is no real reader to compare with: Devel::NYTProf 6.12 rejects the
 * file, and Pynytprof's own reader only lists the records.
 *
 * Build (from the top directory):
 *   gcc -O2 -std=c99 -Wall -Wextra -Ic bench/pynytprof.c c/[a-z]*.c -lz -lzstd -lsnappy -o /tmp/bench_pynytprof
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "convert.h"
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
    const char *file = "../shared/corpus/pynytprof/large/bigloop.nytprof.out";
    const char *mode = NULL;
    int runs = 5, i;
    double t[64];
    unsigned long long chunks = 0;
    char out[64];
    struct rusage ru;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!mode)
            mode = argv[i];
        else
            file = argv[i];
    }
    if (!mode || (strcmp(mode, "decode") && strcmp(mode, "convert")) || runs < 1 || runs > 64) {
        fprintf(stderr, "usage: bench/pynytprof [-n RUNS] decode|convert [FILE]\n");
        return 1;
    }
    snprintf(out, sizeof out, "/tmp/bench_pynytprof.%ld.out", (long)getpid());
    for (i = 0; i < runs; i++) {
        pb_error err;
        pb_status st;
        double t0 = now();
        if (!strcmp(mode, "decode")) {
            pb_count_sink cs;
            int k;
            pb_count_sink_init(&cs);
            st = pb_decode_file(file, PB_FMT_PYNYTPROF, NULL, &cs.sink, &err);
            chunks = 0;
            for (k = 0; k < PB_TAG_COUNT; k++)
                chunks += cs.count[k];
        } else {
            st = pb_convert_file(file, PB_FMT_PYNYTPROF, NULL, out, 6, &err);
        }
        t[i] = now() - t0;
        if (st != PB_OK) {
            char buf[2048];
            pb_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "%s\n", buf);
            remove(out);
            return 2;
        }
    }
    remove(out);
    qsort(t, (size_t)runs, sizeof t[0], cmp);
    getrusage(RUSAGE_SELF, &ru);
    printf("pynytprof %s %s: median %.3f s of %d runs (min %.3f, max %.3f)", mode, file, t[runs / 2], runs, t[0],
           t[runs - 1]);
    if (chunks)
        printf(", %llu chunks", chunks);
    printf(", peak RSS %ld KB\n", ru.ru_maxrss);
    return 0;
}
