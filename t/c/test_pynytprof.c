/* test_pynytprof - TAP test of c/read_pynytprof.c (all four Pynytprof dialects).
 *
 *   test_pynytprof [DATA_DIR]        default DATA_DIR: t/data/pynytprof
 *
 * Build (from the distribution root):
 *   gcc -O2 -std=c99 -Wall -Wextra -Ic t/c/test_pynytprof.c c/[a-z]*.c -lz -lzstd -lsnappy -o /tmp/test_pynytprof
 *
 * Checks, per corpus file: detect.c names the dialect; the chunk stream obeys
 * NYTProf's rules (VERSION first, ticks_per_sec before data, dense fids defined
 * before use, PID_START/PID_END with end > start, SUB_INFO for every sub in
 * SUB_CALLERS, no double DISCOUNT); per-line counts and exclusive ticks equal
 * values taken from the files' .truth.json (Pynytprof's own reader); the NYTProf
 * writer's output re-read by read_nytprof.c gives the same per-line data.
 * Then synthetic files: I32 tick splitting, the statement limit, truncation,
 * corruption, salvage, and dialect C's log/summary disagreement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "write_nytprof.h"
#include "pb.h"
#include "formats.h"
#include "harness.h"

static int t_n, t_fail;
static void ok(int cond, const char *fmt, const char *a, const char *b)
{
    t_n++;
    if (!cond)
        t_fail++;
    printf("%sok %d - ", cond ? "" : "not ", t_n);
    printf(fmt, a, b);
    printf("\n");
}

/* ---- a sink that aggregates and checks ---------------------------------- */
#define MAXL 4096
#define MAXS 256
typedef struct {
    pb_sink sink;
    int nchunks, bad;
    char why[256];
    int tps_seen, data_started, pid_start, pid_end, discount_pending;
    double t_start, t_end;
    uint32_t nfids;          /* the last NEW_FID (hx_fid_rule) */
    long long count[MAXL];   /* fid 1 only, by line */
    long long ticks[MAXL];
    char subs[MAXS][64];
    int nsubs;
    char dialect[4];
    int ncallers;
    int warnings;
} agg;

static void bad(agg *a, const char *why)
{
    if (!a->bad)
        snprintf(a->why, sizeof a->why, "chunk %d: %s", a->nchunks, why);
    a->bad++;
}

static int has_sub(agg *a, const pb_str *s)
{
    int i;
    for (i = 0; i < a->nsubs; i++)
        if (strlen(a->subs[i]) == s->len && memcmp(a->subs[i], s->ptr, s->len) == 0)
            return 1;
    return 0;
}

static int agg_chunk(pb_sink *self, const pb_chunk *c)
{
    agg *a = (agg *)self->ctx;
    const char *why;
    a->nchunks++;
    if (a->nchunks == 1 && (c->tag != PB_T_VERSION || c->u[0] != 5))
        bad(a, "first chunk is not VERSION 5");
    if ((why = hx_fid_rule(&a->nfids, c)) != NULL)
        bad(a, why);
    switch (c->tag) {
    case PB_T_ATTRIBUTE:
        if (c->s[0].len == 13 && !memcmp(c->s[0].ptr, "ticks_per_sec", 13))
            a->tps_seen = 1;
        if (c->s[0].len == 14 && !memcmp(c->s[0].ptr, "source_dialect", 14) && c->s[1].len < 4) {
            memcpy(a->dialect, c->s[1].ptr, c->s[1].len);
            a->dialect[c->s[1].len] = 0;
        }
        break;
    case PB_T_PID_START:
        if (!a->tps_seen)
            bad(a, "PID_START before ticks_per_sec");
        a->pid_start++;
        a->t_start = c->n[0];
        break;
    case PB_T_PID_END:
        a->pid_end++;
        a->t_end = c->n[0];
        break;
    case PB_T_NEW_FID:
        if (!a->pid_start)
            bad(a, "NEW_FID before PID_START");
        break;
    case PB_T_DISCOUNT:
        if (a->discount_pending)
            bad(a, "two DISCOUNTs in a row");
        a->discount_pending = 1;
        break;
    case PB_T_TIME_LINE:
        if (!a->tps_seen)
            bad(a, "TIME_LINE before ticks_per_sec");
        if (c->ticks < 0)
            bad(a, "negative ticks");
        if (c->u[0] == 1 && c->u[1] < MAXL) {
            a->count[c->u[1]] += a->discount_pending ? 0 : 1;
            a->ticks[c->u[1]] += c->ticks;
        }
        a->discount_pending = 0;
        break;
    case PB_T_SUB_INFO:
        if (a->nsubs < MAXS && c->s[0].len < 64) {
            memcpy(a->subs[a->nsubs], c->s[0].ptr, c->s[0].len);
            a->subs[a->nsubs++][c->s[0].len] = 0;
        }
        break;
    case PB_T_SUB_CALLERS:
        a->ncallers++;
        if (!has_sub(a, &c->s[0]) || !has_sub(a, &c->s[1]))
            bad(a, "SUB_CALLERS names a sub without SUB_INFO");
        break;
    default:
        break;
    }
    return 0;
}

static void agg_warn(pb_sink *self, const char *msg)
{
    agg *a = (agg *)self->ctx;
    (void)msg;
    a->warnings++;
}

static void agg_init(agg *a)
{
    memset(a, 0, sizeof *a);
    hx_sink_init(&a->sink, agg_chunk, agg_warn, a);
}

static void agg_finish(agg *a)
{
    if (a->pid_start != 1 || a->pid_end != 1)
        bad(a, "not exactly one PID_START and one PID_END");
    else if (a->ncallers && !(a->t_end > a->t_start))
        bad(a, "PID_END not after PID_START although there are sub calls");
}

/* ---- corpus ---------------------------------------------------------------- */
typedef struct {
    unsigned line;
    long long calls, exc;
} want_line;

typedef struct {
    const char *path;
    const char *dialect;
    int nsubs, ncallers;
    want_line w[3]; /* from <path>.truth.json "lines" (Pynytprof's reader) */
} corpus_file;

static const corpus_file corpus[] = {
    {"tlv/A_binmagic_996afac/shapes.nytprof.out", "A", 0, 0, {{9, 20, 6741}, {29, 22, 7477}, {30, 22, 11105}}},
    {"tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out", "B", 4, 5, {{2, 740, 124832}, {3, 376, 64297}, {4, 364, 63863}}},
    {"tlv/B_ascii_FSDCE_670fbc8/twofiles.nytprof.out", "B", 3, 2, {{6, 26, 4400}, {7, 25, 41132}, {11, 1, 424}}},
    {"tlv/B_ascii_FSDCE_670fbc8/shapes.nytprof.out", "B", 9, 8, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
    {"tlv/B_ascii_FSDCE_670fbc8/manylines.nytprof.out", "B", 3, 2, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
    {"tlv/C_rawP_5b7df35/recursion.nytprof.out", "C", 4, 5, {{2, 740, 128088}, {4, 364, 64223}, {13, 12, 2666}}},
    {"fib.nytprof.out", "D", 0, 0, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
    {"strings.nytprof.out", "D", 0, 0, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
};

static void test_corpus(const char *dir)
{
    size_t i;
    int k;
    for (i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        const corpus_file *cf = &corpus[i];
        char path[1024], out[1100], msg[256];
        pb_format_info info;
        pb_error err;
        agg a, b;
        pb_status st;
        int same = 1;
        unsigned l;
        snprintf(path, sizeof path, "%s/%s", dir, cf->path);
        st = pb_detect_file(path, &info, &err);
        ok(st == PB_OK && info.format == PB_FMT_PYNYTPROF && pb_info_fact_value(&info, "dialect") && !strcmp(pb_info_fact_value(&info, "dialect"), cf->dialect),
           "%s: detected as pynytprof dialect %s", cf->path, cf->dialect);
        agg_init(&a);
        st = pb_decode_file(path, PB_FMT_UNKNOWN, NULL, &a.sink, &err);
        agg_finish(&a);
        ok(st == PB_OK, "%s: decodes%s", cf->path, st == PB_OK ? "" : err.message);
        ok(!a.bad, "%s: valid NYTProf stream %s", cf->path, a.why);
        ok(!strcmp(a.dialect, cf->dialect), "%s: ATTRIBUTE source_dialect=%s", cf->path, cf->dialect);
        snprintf(msg, sizeof msg, "%d subs, %d SUB_CALLERS", cf->nsubs, cf->ncallers);
        ok(a.nsubs == cf->nsubs && a.ncallers == cf->ncallers, "%s: %s", cf->path, msg);
        for (k = 0; k < 3; k++) {
            const want_line *w = &cf->w[k];
            if (!w->line)
                continue;
            snprintf(msg, sizeof msg, "line %u: count %lld (want %lld), exclusive ticks %lld (want %lld)", w->line,
                     a.count[w->line], w->calls, a.ticks[w->line], w->exc);
            ok(a.count[w->line] == w->calls && a.ticks[w->line] == w->exc, "%s: %s", cf->path, msg);
        }
        /* convert and read back with the NYTProf decoder */
        snprintf(out, sizeof out, "/tmp/test_pynytprof.%d.nytprof.out", (int)i);
        st = hx_convert("nytprof", path, PB_FMT_UNKNOWN, NULL, out, 6, &err);
        ok(st == PB_OK, "%s: converts to nytprof.out %s", cf->path, st == PB_OK ? "" : err.message);
        agg_init(&b);
        st = pb_decode_file(out, PB_FMT_NYTPROF, NULL, &b.sink, &err);
        agg_finish(&b);
        for (l = 0; l < MAXL; l++)
            if (a.count[l] != b.count[l] || a.ticks[l] != b.ticks[l])
                same = 0;
        ok(st == PB_OK && !b.bad && same && b.nsubs == a.nsubs && b.ncallers == a.ncallers,
           "%s: the converted file reads back with the same lines and subs%s", cf->path, b.why);
        remove(out);
    }
}

/* ---- synthetic dialect-B files ------------------------------------------- */
typedef hx_buf buf;
static void put32(buf *b, uint32_t v) { hx_le(b, v, 4); }
static void put64(buf *b, uint64_t v) { hx_le(b, v, 8); }
static void chunk_hdr(buf *b, char tag, uint32_t len)
{
    hx_put(b, &tag, 1);
    put32(b, len);
}

/* header + F + S{fid 0, line 5, calls, exc} + D{0 "main_fn"} + C{0->0} + E */
static buf make_b(uint32_t calls, uint64_t exc)
{
    buf b = {0, 0, 0};
    const char *hdr = "NYTProf 5 0\n#Generated by Pynytprof on test\n:ticks_per_sec=10000000\n:nv_size=8\n\n";
    const char *path = "/x/prog.py";
    hx_put(&b, hdr, strlen(hdr));
    chunk_hdr(&b, 'F', 16 + (uint32_t)strlen(path) + 1);
    put32(&b, 0); put32(&b, 0x10); put32(&b, 10); put32(&b, 0);
    hx_put(&b, path, strlen(path) + 1);
    chunk_hdr(&b, 'S', 28);
    put32(&b, 0); put32(&b, 5); put32(&b, calls); put64(&b, exc + 7); put64(&b, exc);
    chunk_hdr(&b, 'D', 8 + 8);
    put32(&b, 0); put32(&b, 0); hx_put(&b, "main_fn", 8);
    chunk_hdr(&b, 'C', 28);
    put32(&b, 0); put32(&b, 0); put32(&b, 2); put64(&b, 100); put64(&b, 100);
    chunk_hdr(&b, 'E', 0);
    return b;
}

static pb_status decode_buf(const buf *b, agg *a, pb_error *err, int salvage)
{
    pb_options o;
    pb_status st;
    pb_options_init(&o);
    o.salvage = salvage;
    agg_init(a);
    st = pb_decode_mem(b->p, b->n, "synthetic", PB_FMT_UNKNOWN, &o, &a->sink, err);
    agg_finish(a);
    return st;
}

static void test_synthetic(void)
{
    agg a;
    pb_error err;
    pb_status st;
    char msg[256];
    buf b = make_b(3, UINT64_C(5000000000));
    size_t cut;
    int all_trunc = 1, crashes = 0;

    st = decode_buf(&b, &a, &err, 0);
    snprintf(msg, sizeof msg, "count %lld, ticks %lld", a.count[5], a.ticks[5]);
    ok(st == PB_OK && !a.bad && a.count[5] == 3 && a.ticks[5] == INT64_C(5000000000),
       "synthetic B: 5e9 ticks over 3 executions split into I32 TIME_LINEs (%s)%s", msg, a.why);
    free(b.p);

    b = make_b(0xFFFFFFFFu, 1);
    st = decode_buf(&b, &a, &err, 0);
    ok(st == PB_ERR_LIMIT, "synthetic B: calls=4294967295 trips the statement limit (%s)%s", err.message, "");
    free(b.p);

    b = make_b(2, 10);
    for (cut = 0; cut < b.n; cut++) {
        st = pb_decode_mem(b.p, cut, "cut", PB_FMT_PYNYTPROF, NULL, &a.sink, &err);
        if (st != PB_ERR_TRUNCATED)
            all_trunc = 0;
    }
    ok(all_trunc, "synthetic B: every prefix is reported as truncated%s%s", "", "");
    {
        pb_options o;
        pb_options_init(&o);
        o.salvage = 1;
        agg_init(&a);
        st = pb_decode_mem(b.p, b.n - 40, "cut", PB_FMT_PYNYTPROF, &o, &a.sink, &err);
        agg_finish(&a);
        ok(st == PB_OK && !a.bad && a.count[5] == 2 && a.warnings > 0,
           "synthetic B: salvage delivers the lines before the cut and a loadable ending%s%s", a.why, "");
    }
    b.p[b.n - 5] = 'Q'; /* E tag -> unknown */
    st = pb_decode_mem(b.p, b.n, "flip", PB_FMT_PYNYTPROF, NULL, &a.sink, &err);
    ok(st == PB_ERR_CORRUPT && strstr(err.message, "unknown chunk tag") != NULL, "synthetic B: unknown tag is corrupt (%s)%s",
       err.message, "");
    free(b.p);
    (void)crashes;
}

/* dialect C whose statement log disagrees with its S summary for one line */
static void test_c_mismatch(void)
{
    buf b = {0, 0, 0};
    agg a;
    pb_error err;
    pb_status st;
    const char *hdr = "NYTProf 5 0\n#Generated by Pynytprof on test\n:ticks_per_sec=10000000\n!usecputime=0\n";
    char msg[200];
    hx_put(&b, hdr, strlen(hdr));
    hx_put(&b, "P", 1); put32(&b, 42); put32(&b, 1); put64(&b, 0x41DAC0AFC5C82A8Dull);
    chunk_hdr(&b, 'S', 56);
    put32(&b, 1); put32(&b, 3); put32(&b, 2); put64(&b, 90); put64(&b, 80);  /* log has 2: proportional */
    put32(&b, 1); put32(&b, 4); put32(&b, 5); put64(&b, 60); put64(&b, 50);  /* log has 1: from S */
    chunk_hdr(&b, 'F', 8);
    put32(&b, 1); put32(&b, 0);
    chunk_hdr(&b, 'D', 3 * 17 + 1);
    hx_put(&b, "\1", 1); put32(&b, 0); put32(&b, 3); put64(&b, 1000);
    hx_put(&b, "\1", 1); put32(&b, 0); put32(&b, 4); put64(&b, 5000);
    hx_put(&b, "\1", 1); put32(&b, 0); put32(&b, 3); put64(&b, 3000);
    hx_put(&b, "\0", 1);
    hx_put(&b, "E", 1);
    st = decode_buf(&b, &a, &err, 0);
    snprintf(msg, sizeof msg, "line 3: %lld/%lld, line 4: %lld/%lld, %d warnings", a.count[3], a.ticks[3], a.count[4],
             a.ticks[4], a.warnings);
    ok(st == PB_OK && !a.bad && a.count[3] == 2 && a.ticks[3] == 80 && a.count[4] == 5 && a.ticks[4] == 50 &&
           a.warnings == 1 && !strcmp(a.dialect, "C"),
       "synthetic C: log-driven line and S-driven line both carry the S counts and ticks (%s)%s", msg, a.why);
    free(b.p);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "t/data/pynytprof";
    test_corpus(dir);
    test_synthetic();
    test_c_mismatch();
    printf("1..%d\n", t_n);
    return t_fail ? 1 : 0;
}
