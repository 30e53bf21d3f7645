/* bench/tachyon - decode + fold a Tachyon profile, timed.
 *
 *   bench/tachyon [-n RUNS] collapsed|chunks|samples [FILE]
 *
 *   collapsed  decode + collapsed stacks written through pb_write to a temp file
 *              (what `profbridge convert IN --to collapsed` does)
 *   chunks     decode + fold to NYTProf chunks into a counting sink
 *   samples    decode only, into a sample sink that does nothing
 *
 * FILE defaults to ../shared/corpus/tachyon/large/large_multithread.bin
 * (20 MB, 4,000,989 samples, 30 threads).  Prints the median wall time of
 * RUNS runs, samples/s and this process's peak RSS (getrusage).  Run one mode
 * per process so the RSS belongs to that mode; /usr/bin/time -v agrees.
 * CPython 3.15's own replay is raced against ours, both whole processes, in
 * the same run by bench/race.pl ("make bench").
 *
 * Build (from the top directory):
 *   gcc -O2 -std=c99 -Wall -Wextra -Ic bench/tachyon.c c/<core + decoders> \
 *       -lz -lzstd -lsnappy -lyajl -lpthread -o /tmp/bench_tachyon
 */
#include "bench_common.h"
#include <sys/resource.h>
#include <unistd.h>
#include "fold_samples.h"
#include "read_tachyon.h"
#include "write_collapsed.h"

int main(int argc, char **argv)
{
    const char *file = "../shared/corpus/tachyon/large/large_multithread.bin";
    const char *mode = NULL;
    int runs = 5, i;
    double t[BENCH_MAX_RUNS];
    uint64_t samples = 0, chunks = 0;
    struct rusage ru;
    bench_args(argc, argv, &runs, &mode, &file);
    if (!mode || (strcmp(mode, "collapsed") && strcmp(mode, "chunks") && strcmp(mode, "samples"))) {
        fprintf(stderr, "usage: %s [-n RUNS] collapsed|chunks|samples [FILE]\n", argv[0]);
        return 1;
    }
    runs = bench_clamp(runs);
    for (i = 0; i < runs; i++) {
        pb_error err;
        pb_status st;
        double t0 = bench_now();
        if (!strcmp(mode, "collapsed")) {
            /* through pb_write, as convert --to collapsed, to a temp file */
            char out[64];
            snprintf(out, sizeof out, "/tmp/bench_tachyon.%ld.out", (long)getpid());
            st = hx_convert("collapsed", file, PB_FMT_TACHYON, NULL, out, -1, &err);
            remove(out);
        } else if (!strcmp(mode, "chunks")) {
            pb_count_sink cs;
            pb_count_sink_init(&cs);
            st = pb_decode_file(file, PB_FMT_TACHYON, NULL, &cs.sink, &err);
            chunks = bench_chunks(&cs);
        } else {
            pb_sample_sink ss;
            pb_source src;
            uint64_t nsamples = 0;
            hx_null_sink(&ss, &nsamples, &err);
            pb_error_init(&err, "tachyon", file);
            st = pb_src_open_file(&src, file, &err);
            if (st == PB_OK) {
                pb_sample_sink_set_row(&ss, pb_format_get(PB_FMT_TACHYON)); /* as the driver does */
                st = pb_sample_decode(&src, NULL, &ss, &pb_tachyon_decoder, &err);
                pb_src_close(&src);
            }
            samples = nsamples;
        }
        t[i] = bench_now() - t0;
        if (st != PB_OK)
            return hx_fail(&err);
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
    bench_sort(t, runs);
    getrusage(RUSAGE_SELF, &ru);
    printf("%-9s %s: median %.3f s of %d (min %.3f, max %.3f), %.1f M samples/s, peak RSS %.1f MB",
           mode, file, t[runs / 2], runs, t[0], t[runs - 1], (double)samples / t[runs / 2] / 1e6,
           (double)ru.ru_maxrss / 1024.0);
    if (chunks)
        printf(", %llu chunks", (unsigned long long)chunks);
    printf("\n");
    return 0;
}
