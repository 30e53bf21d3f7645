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
 *   gcc -O2 -std=c99 -Wall -Wextra -Ic bench/pynytprof.c c/[a-z]*.c -lz -lzstd -lsnappy -lyajl -lpthread -o /tmp/bench_pynytprof
 */
#include "bench_common.h"
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *file = "../shared/corpus/pynytprof/large/bigloop.nytprof.out";
    const char *mode = NULL;
    int runs = 5, i;
    double t[BENCH_MAX_RUNS];
    unsigned long long chunks = 0;
    char out[64];
    struct rusage ru;
    bench_args(argc, argv, &runs, &mode, &file);
    if (!mode || (strcmp(mode, "decode") && strcmp(mode, "convert")) || runs < 1 || runs > BENCH_MAX_RUNS) {
        fprintf(stderr, "usage: bench/pynytprof [-n RUNS] decode|convert [FILE]\n");
        return 1;
    }
    snprintf(out, sizeof out, "/tmp/bench_pynytprof.%ld.out", (long)getpid());
    for (i = 0; i < runs; i++) {
        pb_error err;
        pb_status st;
        double t0 = bench_now();
        if (!strcmp(mode, "decode")) {
            pb_count_sink cs;
            pb_count_sink_init(&cs);
            st = pb_decode_file(file, PB_FMT_PYNYTPROF, NULL, &cs.sink, &err);
            chunks = bench_chunks(&cs);
        } else {
            st = hx_convert("nytprof", file, PB_FMT_PYNYTPROF, NULL, out, 6, &err); /* pb_write, as convert */
        }
        t[i] = bench_now() - t0;
        if (st != PB_OK) {
            remove(out);
            return hx_fail(&err);
        }
    }
    remove(out);
    bench_sort(t, runs);
    getrusage(RUSAGE_SELF, &ru);
    printf("pynytprof %s %s: median %.3f s of %d runs (min %.3f, max %.3f)", mode, file, t[runs / 2], runs, t[0],
           t[runs - 1]);
    if (chunks)
        printf(", %llu chunks", chunks);
    printf(", peak RSS %ld KB\n", ru.ru_maxrss);
    return 0;
}
