/* test_statprofiler - C-level checks of the StatProfiler reader and writer.
 *
 *   test_statprofiler convert IN... -o OUT    StatProfiler trace(s) (or, built with
 *                                             -DWITH_TACHYON, a Tachyon file) ->
 *                                             our writer; prints the files written
 *   test_statprofiler bad DIR                 hostile inputs written to DIR and
 *                                             decoded; TAP output
 *   test_statprofiler misuse DIR              writer API misuse; TAP output
 *   test_statprofiler bench-write OUT N       writer throughput: N samples
 *
 * Build: gcc -O2 -std=c99 -Wall -Wextra -Ic t/c/test_statprofiler.c c/read_statprofiler.c
 *        c/write_statprofiler.c c/fold_samples.c <core> -lz -lzstd -lsnappy
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <snappy-c.h>
#include "pb.h"
#include "formats.h"
#include "read_statprofiler.h"
#include "read_tachyon.h"
#include "samples.h"
#include "write_statprofiler.h"
#include "harness.h"
#ifdef WITH_TACHYON
#include "fold_samples.h"
#endif

static int ntest;
static int nfail;

static void ok(int cond, const char *name, const char *diag)
{
    ntest++;
    printf("%sok %d - %s\n", cond ? "" : "not ", ntest, name);
    if (!cond) {
        nfail++;
        if (diag)
            printf("# %s\n", diag);
    }
}

static void warn_cb(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "warning: %s\n", msg);
}

static int do_convert(int argc, char **argv)
{
    const char *out = NULL;
    const char **in = (const char **)calloc((size_t)argc, sizeof *in);
    size_t nin = 0, i, nf;
    int a;
    pb_error err;
    pb_spw_sink *k;
    pb_sp_hooks hooks;
    pb_status st;
    const char *const *names;
    pb_format_info info;
    for (a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "-o") && a + 1 < argc)
            out = argv[++a];
        else
            in[nin++] = argv[a];
    }
    if (!out || !nin) {
        fprintf(stderr, "usage: test_statprofiler convert IN... -o OUT\n");
        return 1;
    }
    pb_error_init(&err, "statprofiler-writer", out);
    k = pb_spw_sink_new(out, &err);
    if (!k)
        return 2;
    hooks.warn = warn_cb;
    hooks.ctx = NULL;
    if (pb_detect_file(in[0], &info, &err) != PB_OK)
        goto fail;
    if (info.format == PB_FMT_STATPROFILER) {
        st = pb_statprofiler_files(in, nin, NULL, pb_spw_sink_base(k), &hooks, &err);
    } else {
#ifdef WITH_TACHYON
        pb_source src;
        pb_error_init(&err, pb_format_name(info.format), in[0]);
        if ((st = pb_src_open_file(&src, in[0], &err)) == PB_OK) {
            /* the row the driver would hand on (own frames: format_row.h) */
            pb_sample_sink_set_row(pb_spw_sink_base(k), pb_format_get(PB_FMT_TACHYON));
            st = pb_sample_decode(&src, NULL, pb_spw_sink_base(k), &pb_tachyon_decoder, &err);
            pb_src_close(&src);
            if (st == PB_OK)
                st = pb_spw_sink_base(k)->finish(pb_spw_sink_base(k));
        }
#else
        st = pb_fail_nooff(&err, PB_ERR_UNSUPPORTED, "built without WITH_TACHYON");
#endif
    }
    if (st != PB_OK)
        goto fail;
    nf = pb_spw_sink_files(k, &names);
    for (i = 0; i < nf; i++)
        printf("%s\n", names[i]);
    pb_spw_sink_free(k);
    free(in);
    return 0;
fail : {
    char msg[2048];
    pb_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    pb_spw_sink_free(k);
    free(in);
    return 2;
}
}

/* ---- hostile inputs ------------------------------------------------------- */
typedef struct {
    unsigned char b[70000];
    size_t n;
} mbuf;

static void m_put(mbuf *m, const void *p, size_t n)
{
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

/* magic + version + one packet holding `logical` (compressed by libsnappy) */
static void m_trace(mbuf *m, const unsigned char *logical, size_t n)
{
    char z[70000];
    size_t zl = sizeof z;
    unsigned char h[2];
    m->n = 0;
    m_put(m, "=statprofiler\001", 14);
    snappy_compress((const char *)logical, n, z, &zl);
    h[0] = (unsigned char)(zl >> 8);
    h[1] = (unsigned char)zl;
    m_put(m, h, 2);
    m_put(m, z, zl);
}

static pb_status decode_mem(const mbuf *m, pb_error *err)
{
    pb_source src;
    pb_sample_sink ss;
    pb_status st;
    hx_null_sink(&ss, NULL, err);
    pb_error_init(err, "statprofiler", "mem");
    pb_src_open_mem(&src, m->b, m->n, err);
    st = pb_statprofiler_samples(&src, NULL, &ss, NULL, 0, 0, NULL, err);
    pb_src_close(&src);
    return st;
}

static void expect(const mbuf *m, pb_status want, const char *needle, const char *name)
{
    pb_error err;
    pb_status st = decode_mem(m, &err);
    char msg[2048];
    pb_error_format(&err, msg, sizeof msg);
    ok(st == want && strstr(msg, needle) != NULL, name, msg);
    printf("#   %s\n", msg);
}

static const unsigned char HDR[] = { 201, 5, 36, 0, 202, 0x87, 0x68, 203, 20, 254 };

static int do_bad(void)
{
    static mbuf m;
    unsigned char L[40000];
    size_t n;
    /* a sane minimal trace decodes */
    memcpy(L, HDR, sizeof HDR);
    n = sizeof HDR;
    L[n++] = 1; L[n++] = 3; L[n++] = 1; L[n++] = 0; L[n++] = 0; L[n++] = 2; L[n++] = 0; L[n++] = 197; L[n++] = 0;
    m_trace(&m, L, n);
    expect(&m, PB_OK, "", "minimal trace decodes");

    /* packet length runs past EOF */
    m_trace(&m, L, n);
    m.n -= 3;
    expect(&m, PB_ERR_TRUNCATED, "runs past the end of the file", "packet length past EOF: truncated");

    /* a packet that decompresses to more than 32000 bytes */
    memset(L, 0, sizeof L);
    memcpy(L, HDR, sizeof HDR);
    m_trace(&m, L, 32001);
    expect(&m, PB_ERR_CORRUPT, "more than the writer's 32000-byte buffer", "packet > 32000 bytes: corrupt");

    /* varint longer than 5 bytes (sample weight) */
    memcpy(L, HDR, sizeof HDR);
    n = sizeof HDR;
    L[n++] = 1; L[n++] = 3;
    memset(L + n, 0x81, 6);
    n += 6;
    L[n++] = 1;
    m_trace(&m, L, n);
    expect(&m, PB_ERR_CORRUPT, "longer than 5 bytes", "6-byte varint: corrupt");

    /* header with tag 204 */
    n = 0;
    L[n++] = 201; L[n++] = 5; L[n++] = 36; L[n++] = 0; L[n++] = 204; L[n++] = 0; L[n++] = 254;
    m_trace(&m, L, n);
    expect(&m, PB_ERR_CORRUPT, "header record tag 204", "header tag 204: corrupt");

    /* wrong version byte */
    m_trace(&m, HDR, sizeof HDR);
    m.b[13] = 2;
    expect(&m, PB_ERR_UNSUPPORTED, "version 2", "format version 2: unsupported");

    /* corrupt snappy block */
    memcpy(L, HDR, sizeof HDR);
    m_trace(&m, L, sizeof HDR);
    m.b[16] = 0xff; m.b[17] = 0xff; m.b[18] = 0xff; m.b[19] = 0xff; m.b[20] = 0x0f;
    expect(&m, PB_ERR_CORRUPT, "snappy", "bad snappy preamble: corrupt");

    /* unknown body tag is skipped by its declared length */
    memcpy(L, HDR, sizeof HDR);
    n = sizeof HDR;
    L[n++] = 77; L[n++] = 3; L[n++] = 9; L[n++] = 9; L[n++] = 9; L[n++] = 197; L[n++] = 0;
    m_trace(&m, L, n);
    expect(&m, PB_OK, "", "unknown body tag skipped");

    /* frame outside a sample */
    memcpy(L, HDR, sizeof HDR);
    n = sizeof HDR;
    L[n++] = 6; L[n++] = 3; L[n++] = 0; L[n++] = 1; L[n++] = 'x'; L[n++] = 1;
    m_trace(&m, L, n);
    expect(&m, PB_ERR_CORRUPT, "outside a sample", "frame outside a sample: corrupt");

    /* input ends inside a sample */
    memcpy(L, HDR, sizeof HDR);
    n = sizeof HDR;
    L[n++] = 1; L[n++] = 3; L[n++] = 1; L[n++] = 0; L[n++] = 0;
    m_trace(&m, L, n);
    expect(&m, PB_ERR_TRUNCATED, "inside the sample", "EOF inside a sample: truncated");

    printf("1..%d\n", ntest);
    return nfail ? 1 : 0;
}

/* ---- writer misuse --------------------------------------------------------- */
static int do_misuse(const char *dir)
{
    char path[4096], tmp[4200];
    pb_error err;
    pb_spw *w;
    FILE *f;
    snprintf(path, sizeof path, "%s/misuse.out", dir);
    snprintf(tmp, sizeof tmp, "%s_", path);
    remove(path);
    w = pb_spw_open(path, NULL, &err);
    ok(w != NULL, "open", err.message);
    if (!w)
        return 1;
    f = fopen(tmp, "rb");
    ok(f == NULL, "no predictable <path>_ is used (a temp file made with O_EXCL is)", NULL);
    if (f)
        fclose(f);
    f = fopen(path, "rb");
    ok(f == NULL, "<path> does not exist before close", NULL);
    if (f)
        fclose(f);
    ok(pb_spw_sub_frame(w, pb_str_c("main"), pb_str_c("f"), pb_str_c("x.pl"), 1, 1) != PB_OK &&
           strstr(pb_spw_error(w)->message, "outside a sample"),
       "frame outside a sample fails", pb_spw_error(w)->message);
    ok(pb_spw_start_sample(w, 1, pb_str_c("op")) == PB_OK, "start_sample", NULL);
    ok(pb_spw_start_sample(w, 1, pb_str_c("op")) != PB_OK, "start_sample inside a sample fails", NULL);
    ok(pb_spw_close(w) != PB_OK, "close inside a sample fails", NULL);
    ok(pb_spw_end_sample(w) == PB_OK, "end_sample", NULL);
    ok(pb_spw_close(w) == PB_OK, "close", pb_spw_error(w)->message);
    f = fopen(path, "rb");
    ok(f != NULL, "<path> exists after close", NULL);
    if (f)
        fclose(f);
    ok(pb_spw_close(w) != PB_OK && strstr(pb_spw_error(w)->message, "close called twice"), "close twice fails",
       pb_spw_error(w)->message);
    ok(pb_spw_metadata(w, pb_str_c("k"), pb_str_c("v")) != PB_OK, "write after close fails", NULL);
    pb_spw_free(w);
    printf("1..%d\n", ntest);
    return nfail ? 1 : 0;
}

/* ---- writer throughput ----------------------------------------------------- */
static int do_bench_write(const char *out, long n)
{
    pb_error err;
    pb_spw *w = pb_spw_open(out, NULL, &err);
    struct timespec t0, t1;
    long i;
    double s;
    if (!w) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (i = 0; i < n; i++) {
        int d;
        pb_spw_start_sample(w, 1, pb_str_c("padsv"));
        for (d = 0; d < 7; d++)
            pb_spw_sub_frame(w, pb_str_c("My::Package"), pb_str_c("some_function"),
                             pb_str_c("/usr/share/perl5/My/Package.pm"), 100 + d + (int)(i % 13), 90 + d);
        pb_spw_main_frame(w, pb_str_c("large.pl"), 33);
        pb_spw_end_sample(w);
    }
    if (pb_spw_close(w) != PB_OK) {
        fprintf(stderr, "%s\n", pb_spw_error(w)->message);
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("wrote %ld samples (8 frames each) in %.3f s: %.0f samples/s, %llu bytes\n", n, s, (double)n / s,
           (unsigned long long)pb_spw_bytes_written(w));
    pb_spw_free(w);
    return 0;
}

/* ---- a fork chain: N processes, each the child of the one before --------------
 * DIR/chain.out.<id>.00000001 for process k = 0 (the root) .. N-1; the pids
 * fall along the chain (root N, its child N-1, ...), so the files sort (and
 * are listed) child before parent: what made genealogy cubic.  Process k has
 * one sample of weight k + 1 (the run weighs N (N + 1) / 2).  Prints the
 * root's file name. */
static void chain_id(unsigned char id[PB_SP_ID_BYTES], uint32_t pid)
{
    int i;
    memset(id, 0, PB_SP_ID_BYTES);
    for (i = 0; i < 4; i++) {
        id[i] = (unsigned char)(pid >> (8 * i));
        id[8 + i] = (unsigned char)(0x6b0787u >> (8 * i)); /* a fixed "time" and random words */
        id[16 + i] = (unsigned char)(0x5bd1e995u >> (8 * i));
    }
}

static int do_chain(const char *dir, long n)
{
    long k;
    char path[4200], hex[49];
    for (k = 0; k < n; k++) {
        pb_spw_header h;
        pb_error err;
        pb_spw *w;
        pb_spw_header_init(&h);
        h.interval_us = 1000;
        h.have_id = 1;
        chain_id(h.id, (uint32_t)(n - k));
        h.ordinal = 1;
        if (k) {
            chain_id(h.parent_id, (uint32_t)(n - k + 1));
            h.parent_ordinal = 1;
        }
        pb_sp_id_hex(h.id, hex);
        snprintf(path, sizeof path, "%s/chain.out.%s.00000001", dir, hex);
        if (!(w = pb_spw_open(path, &h, &err)) || pb_spw_start_sample(w, (uint32_t)(k + 1), pb_str_c("entersub")) ||
            pb_spw_sub_frame(w, pb_str_c("main"), pb_str_c("work"), pb_str_c("chain.pl"), 3, 2) ||
            pb_spw_main_frame(w, pb_str_c("chain.pl"), 9) || pb_spw_end_sample(w) || pb_spw_close(w)) {
            fprintf(stderr, "%s: %s\n", path, w ? pb_spw_error(w)->message : err.message);
            return 2;
        }
        pb_spw_free(w);
        if (k == 0)
            printf("%s\n", path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "chain"))
        return do_chain(argv[2], atol(argv[3]));
    if (argc >= 2 && !strcmp(argv[1], "convert"))
        return do_convert(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "bad"))
        return do_bad();
    if (argc >= 3 && !strcmp(argv[1], "misuse"))
        return do_misuse(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "bench-write"))
        return do_bench_write(argv[2], atol(argv[3]));
    fprintf(stderr, "usage: test_statprofiler convert IN... -o OUT | bad | misuse DIR | bench-write OUT N | chain DIR N\n");
    return 1;
}
