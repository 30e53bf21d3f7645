/* bench/tachyon - decode + fold a Tachyon profile, timed.
 *
 *   bench/tachyon [-n RUNS] collapsed|chunks|samples [FILE]
 *
 *   collapsed  decode + collapsed stacks written to /dev/null
 *              (what `profbridge convert IN --to collapsed` does)
 *   chunks     decode + fold to NYTProf chunks into a counting sink
 *   samples    decode only, into a sample sink that does nothing
 *
 * FILE defaults to ../shared/corpus/tachyon/large/large_multithread.bin
 * (20 MB, 4,000,989 samples, 30 threads).  Prints the median wall time of
 * RUNS runs, samples/s and this process's peak RSS (getrusage).  Run one mode
 * per process so the RSS belongs to that mode; /usr/bin/time -v agrees.
 * Reference: CPython's own reader into its collapsed collector, 2.06 s and
 * 33.6 MB on the same 2-core VM (the large truth.json).
 *
 * Build (from the top directory):
 *   gcc -O2 -std=c99 -Wall -Wextra -Ic bench/tachyon.c c/<core + decoders> \
 *       -lz -lzstd -lsnappy -o /tmp/bench_tachyon
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "pb.h"
#include "fold_samples.h"
#include "collapsed.h"

static uint64_t nsamples;

static pb_status n_attr(pb_sample_sink *s, const char *k, pb_str v) { (void)s; (void)k; (void)v; return PB_OK; }
static pb_status n_frame(pb_sample_sink *s, const pb_frame *f, uint32_t *id)
{
    (void)s; (void)f;
    *id = 0;
    return PB_OK;
}
static pb_status n_thread(pb_sample_sink *s, uint64_t k, uint32_t p, uint32_t pp, const char *l)
{
    (void)s; (void)k; (void)p; (void)pp; (void)l;
    return PB_OK;
}
static pb_status n_sample(pb_sample_sink *s, uint64_t k, const uint32_t *ids, uint32_t d, uint64_t w, uint64_t ts)
{
    (void)s; (void)k; (void)ids; (void)d; (void)ts;
    nsamples += w;
    return PB_OK;
}
static pb_status n_note(pb_sample_sink *s, const char *k, pb_str a, pb_str b, uint32_t n)
{
    (void)s; (void)k; (void)a; (void)b; (void)n;
    return PB_OK;
}
static pb_status n_finish(pb_sample_sink *s) { (void)s; return PB_OK; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *file = "../shared/corpus/tachyon/large/large_multithread.bin";
    const char *mode = NULL;
    int runs = 5, i, a;
    double t[64];
    uint64_t samples = 0, chunks = 0;
    struct rusage ru;
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc)
            runs = atoi(argv[++a]);
        else if (!mode)
            mode = argv[a];
        else
            file = argv[a];
    }
    if (!mode || (strcmp(mode, "collapsed") && strcmp(mode, "chunks") && strcmp(mode, "samples"))) {
        fprintf(stderr, "usage: %s [-n RUNS] collapsed|chunks|samples [FILE]\n", argv[0]);
        return 1;
    }
    if (runs < 1)
        runs = 1;
    if (runs > 64)
        runs = 64;
    for (i = 0; i < runs; i++) {
        pb_error err;
        pb_status st;
        double t0 = now();
        if (!strcmp(mode, "collapsed")) {
            FILE *o = fopen("/dev/null", "w");
            st = pb_collapse_file(file, PB_FMT_TACHYON, NULL, o, &err);
            fclose(o);
        } else if (!strcmp(mode, "chunks")) {
            pb_count_sink cs;
            int k;
            pb_count_sink_init(&cs);
            st = pb_decode_file(file, PB_FMT_TACHYON, NULL, &cs.sink, &err);
            chunks = 0;
            for (k = 0; k < PB_TAG_COUNT; k++)
                chunks += cs.count[k];
        } else {
            pb_sample_sink ss;
            pb_source src;
            memset(&ss, 0, sizeof ss);
            ss.attribute = n_attr;
            ss.frame = n_frame;
            ss.thread = n_thread;
            ss.sample = n_sample;
            ss.note = n_note;
            ss.finish = n_finish;
            ss.err = &err;
            nsamples = 0;
            pb_error_init(&err, "tachyon", file);
            st = pb_src_open_file(&src, file, &err);
            if (st == PB_OK) {
                st = pb_read_tachyon_samples(&src, NULL, &ss, &err);
                pb_src_close(&src);
            }
            samples = nsamples;
        }
        t[i] = now() - t0;
        if (st != PB_OK) {
            char line[2048];
            pb_error_format(&err, line, sizeof line);
            fprintf(stderr, "%s\n", line);
            return 2;
        }
    }
    if (!samples) {
        /* the sample count from the header (all modes decode every sample) */
        FILE *f = fopen(file, "rb");
        unsigned char h[32];
        if (f && fread(h, 1, 32, f) == 32)
            samples = (uint64_t)h[28] | ((uint64_t)h[29] << 8) | ((uint64_t)h[30] << 16) | ((uint64_t)h[31] << 24);
        if (f)
            fclose(f);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_d);
    getrusage(RUSAGE_SELF, &ru);
    printf("%-9s %s: median %.3f s of %d (min %.3f, max %.3f), %.1f M samples/s, peak RSS %.1f MB",
           mode, file, t[runs / 2], runs, t[0], t[runs - 1], (double)samples / t[runs / 2] / 1e6,
           (double)ru.ru_maxrss / 1024.0);
    if (chunks)
        printf(", %llu chunks", (unsigned long long)chunks);
    printf("\n");
    return 0;
}
