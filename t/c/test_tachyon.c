/* test_tachyon - C-level checks of the Tachyon decoder, the sample fold and
 * the collapsed-stack writer, against the CPython ground truth in
 * t/data/tachyon (*.truth.json from CPython's own reader).
 *
 *   test_tachyon [DATA_DIR]           run the checks (TAP output)
 *   test_tachyon --collapse FILE      print FILE's collapsed stacks (tool)
 *   test_tachyon --swap IN OUT        write IN (uncompressed, little-endian)
 *                                     byte-swapped to big-endian (tool)
 *
 * Build: gcc -std=c99 -Wall -Wextra -Ic t/c/test_tachyon.c c/<core and
 * decoders> -lz -lzstd -lsnappy   (add -fsanitize=address,undefined to
 * check memory safety; the sweep below cuts and flips every file).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "pb.h"
#include "fold_samples.h"
#include "write_collapsed.h"
#include "tap.h"
#include "harness.h"

/* "key": <number> in a JSON text (first occurrence after `from`) */
static int json_u64(const char *json, const char *from, const char *key, unsigned long long *v)
{
    char pat[128];
    const char *p = from ? strstr(json, from) : json;
    if (!p)
        return 0;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(p, pat);
    if (!p)
        return 0;
    return sscanf(p + strlen(pat), " %llu", v) == 1;
}

/* ---- a sink that totals what the fold produced ----------------------- */
typedef struct {
    pb_sink sink;
    uint64_t count[PB_TAG_COUNT];
    uint64_t ticks;          /* sum of TIME_LINE ticks */
    uint32_t max_fid_defined;
    int fid_before_use;      /* 1 until a fid is used before its NEW_FID */
    int pids_open;
    double excl_sum;         /* SUB_CALLERS excl, seconds */
    double runtime_incl;     /* incl of edges called by main::RUNTIME */
    int last_tag;
    int order_ok;            /* no TIME_LINE after SUB_INFO/SUB_CALLERS */
    int seen_final;
    char sub_of_interest[256];
    double incl_of_interest, excl_of_interest;
} tot_sink;


/* the sub name (package::Class::method) ends with CPython's qualname q
 * (Class.method, what collapsed output names), "." read as "::" */
static int ends_sub(const char *nm, size_t len, const char *q)
{
    char want[300];
    size_t w = 0, i;
    for (i = 0; q[i] && w + 2 < sizeof want; i++) {
        if (q[i] == '.') {
            want[w++] = ':';
            want[w++] = ':';
        } else {
            want[w++] = q[i];
        }
    }
    if (w > len || memcmp(nm + len - w, want, w) != 0)
        return 0;
    return w == len || (len - w >= 2 && nm[len - w - 1] == ':' && nm[len - w - 2] == ':');
}

static int tot_chunk(pb_sink *self, const pb_chunk *c)
{
    tot_sink *t = (tot_sink *)self->ctx;
    t->count[c->tag]++;
    if (hx_fid_rule(&t->max_fid_defined, c))
        t->fid_before_use = 0;
    switch (c->tag) {
    case PB_T_TIME_LINE:
        t->ticks += (uint64_t)(uint32_t)c->ticks;
        if (t->seen_final)
            t->order_ok = 0;
        break;
    case PB_T_SUB_INFO:
        t->seen_final = 1;
        break;
    case PB_T_SUB_CALLERS:
        t->seen_final = 1;
        t->excl_sum += c->n[1];
        if (c->s[1].len == 13 && memcmp(c->s[1].ptr, "main::RUNTIME", 13) == 0)
            t->runtime_incl += c->n[0];
        if (t->sub_of_interest[0] && ends_sub(c->s[0].ptr, c->s[0].len, t->sub_of_interest)) {
            t->incl_of_interest += c->n[0];
            t->excl_of_interest += c->n[1];
        }
        break;
    case PB_T_PID_START:
        t->pids_open++;
        break;
    case PB_T_PID_END:
        t->pids_open--;
        break;
    default:
        break;
    }
    return 0;
}

static void tot_init(tot_sink *t)
{
    memset(t, 0, sizeof *t);
    hx_sink_init(&t->sink, tot_chunk, NULL, t);
    t->fid_before_use = 1;
    t->order_ok = 1;
}

/* ---- collapsed output into memory ---------------------------------------- */
static char *collapse_mem(const unsigned char *data, size_t len, const pb_options *opt, pb_status *st, pb_error *err)
{
    char *out = NULL;
    size_t olen = 0;
    FILE *f = open_memstream(&out, &olen);
    if (!f)
        return NULL;
    *st = hx_collapse_mem(data, len, "mem", PB_FMT_UNKNOWN, opt, f, err);
    fclose(f);
    return out;
}

/* sum of the counts in collapsed text, and of lines whose leaf is `leaf` /
 * that contain `sub` (once per line) */
static void collapsed_sums(const char *text, const char *sub, uint64_t *total, uint64_t *with_sub,
                           uint64_t *leaf_sub, uint64_t *lines)
{
    const char *p = text;
    size_t sl = sub ? strlen(sub) : 0;
    *total = *with_sub = *leaf_sub = *lines = 0;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        const char *sp;
        unsigned long long n = 0;
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        for (sp = p + len; sp > p && sp[-1] != ' '; sp--)
            ;
        if (sp > p) {
            sscanf(sp, "%llu", &n);
            *total += n;
            (*lines)++;
            if (sub) {
                /* stack = [p, sp-1): frames separated by ';' */
                const char *q = p;
                int has = 0;
                const char *end = sp - 1;
                while (q < end) {
                    const char *semi = memchr(q, ';', (size_t)(end - q));
                    const char *fe = semi ? semi : end;
                    if ((size_t)(fe - q) == sl && memcmp(q, sub, sl) == 0) {
                        has = 1;
                        if (!semi)
                            *leaf_sub += n;
                    }
                    q = semi ? semi + 1 : end;
                }
                if (has)
                    *with_sub += n;
            }
        }
        p = nl ? nl + 1 : NULL;
    }
}

/* ---- building synthetic files ------------------------------------------- */
typedef hx_buf buf;

static void b_var(buf *b, uint64_t v)
{
    while (v >= 0x80) {
        hx_u8(b, (unsigned)(v & 0x7F) | 0x80);
        v >>= 7;
    }
    hx_u8(b, (unsigned)v);
}
static void set_le(unsigned char *p, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        p[i] = (unsigned char)((v >> (8 * i)) & 0xFF);
}
static void rec(buf *b, uint64_t tid, uint32_t iid, unsigned enc)
{
    hx_le(b, tid, 8);
    hx_le(b, iid, 4);
    hx_u8(b, enc);
}

/* a record of thread 7, 5 us after the last, status 1, in stack encoding
 * enc: `lead` (SUFFIX: the shared count, POP_PUSH: the pop count; -1 for
 * FULL: none), then n frames, every one `frame`.  full1: a FULL stack of
 * one frame. */
static void rec7(buf *b, unsigned enc, long lead, uint32_t n, uint32_t frame)
{
    uint32_t i;
    rec(b, 7, 0, enc);
    b_var(b, 5);
    hx_u8(b, 1);
    if (lead >= 0)
        b_var(b, (uint64_t)lead);
    b_var(b, n);
    for (i = 0; i < n; i++)
        b_var(b, frame);
}
static void full1(buf *b, uint32_t frame) { rec7(b, 1, -1, 1, frame); }

/* strings: "f.py","func_a","func_b","~","<GC>","pkg/__init__.py","Klass.meth"
 * frames: 0 f.py:func_a:10  1 f.py:func_b:20  2 ~:<GC>:0  3 pkg/__init__.py:Klass.meth:5  4 f.py:func_a:11 */
static buf make_file(const buf *region, uint32_t nsamples, uint32_t nthreads, int zstd, const buf *trailer)
{
    static const char *strs[] = {"f.py", "func_a", "func_b", "~", "<GC>", "/x/lib/python3.15/pkg/__init__.py",
                                 "Klass.meth"};
    static const uint32_t frames[][3] = {{0, 1, 10}, {0, 2, 20}, {3, 4, 0}, {5, 6, 5}, {0, 1, 11}};
    buf f = {0, 0, 0}, body = {0, 0, 0};
    size_t i, str_off, frame_off;
    unsigned char hdr[64];
    memset(hdr, 0, sizeof hdr);
    hx_put(&f, hdr, 64);
    if (zstd) {
        size_t cap = ZSTD_compressBound(region->n), got;
        unsigned char *z = (unsigned char *)malloc(cap);
        got = ZSTD_compress(z, cap, region->p, region->n, 3);
        hx_put(&f, z, got);
        free(z);
    } else {
        hx_put(&f, region->p, region->n);
    }
    str_off = f.n;
    for (i = 0; i < sizeof strs / sizeof *strs; i++) {
        b_var(&f, strlen(strs[i]));
        hx_put(&f, strs[i], strlen(strs[i]));
    }
    frame_off = f.n;
    for (i = 0; i < sizeof frames / sizeof *frames; i++) {
        b_var(&f, frames[i][0]);
        b_var(&f, frames[i][1]);
        b_var(&f, (uint64_t)frames[i][2] << 1); /* zigzag of a non-negative line */
        b_var(&f, 0);
        b_var(&f, 0);
        b_var(&f, 0);
        hx_u8(&f, 255);
    }
    if (trailer)
        hx_put(&f, trailer->p, trailer->n);
    hx_le(&f, sizeof strs / sizeof *strs, 4);
    hx_le(&f, sizeof frames / sizeof *frames, 4);
    hx_le(&f, f.n + 24, 8);
    hx_le(&f, 0, 8);
    hx_le(&f, 0, 8);
    set_le(f.p, 0x54414348u, 4);
    set_le(f.p + 4, 1, 4);
    f.p[8] = 3; f.p[9] = 15; f.p[10] = 0;
    set_le(f.p + 12, 5000000, 8);
    set_le(f.p + 20, 1000, 8);
    set_le(f.p + 28, nsamples, 4);
    set_le(f.p + 32, nthreads, 4);
    set_le(f.p + 36, str_off, 8);
    set_le(f.p + 44, frame_off, 8);
    set_le(f.p + 52, zstd ? 1 : 0, 4);
    free(body.p);
    return f;
}

static pb_status decode(const buf *f, const pb_options *opt, tot_sink *t, pb_error *err)
{
    tot_init(t);
    return pb_decode_mem(f->p, f->n, "synthetic.bin", PB_FMT_UNKNOWN, opt, &t->sink, err);
}

static void expect_error(const buf *f, pb_status want, const char *needle, const char *what)
{
    tot_sink t;
    pb_error err;
    pb_status st = decode(f, NULL, &t, &err);
    char line[2048];
    pb_error_format(&err, line, sizeof line);
    ok(st == want && (!needle || strstr(err.message, needle)), "%s -> %s", what, st ? line : "no error");
}

/* the records in r, as a one-thread file claiming nsamples samples, must fail so */
static void expect_records_error(const buf *r, uint32_t nsamples, pb_status want, const char *needle, const char *what)
{
    buf f = make_file(r, nsamples, 1, 0, NULL);
    expect_error(&f, want, needle, what);
    free(f.p);
}

/* ---- byte swap an uncompressed little-endian file to big-endian ------------ */
static uint64_t rd_var(const unsigned char *p, size_t *i)
{
    uint64_t v = 0;
    int s = 0;
    for (;;) {
        unsigned char c = p[(*i)++];
        v |= (uint64_t)(c & 0x7F) << s;
        s += 7;
        if (!(c & 0x80))
            return v;
    }
}
static void swap_bytes(unsigned char *p, int n)
{
    int i;
    for (i = 0; i < n / 2; i++) {
        unsigned char c = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = c;
    }
}
static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    int i;
    for (i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static int swap_file(unsigned char *p, size_t n)
{
    size_t i = 64, str_off = (size_t)le(p + 36, 8);
    static const int fields[][2] = {{0, 4}, {4, 4}, {12, 8}, {20, 8}, {28, 4}, {32, 4}, {36, 8}, {44, 8}, {52, 4}};
    size_t k;
    if (le(p + 52, 4) != 0)
        return -1;
    while (i < str_off) {
        unsigned enc = p[i + 12];
        uint64_t c, j;
        swap_bytes(p + i, 8);
        swap_bytes(p + i + 8, 4);
        i += 13;
        if (enc == 0) {
            c = rd_var(p, &i);
            for (j = 0; j < c; j++) {
                rd_var(p, &i);
                i++;
            }
        } else {
            rd_var(p, &i);
            i++;
            c = rd_var(p, &i);
            if (enc != 1)
                c = rd_var(p, &i);
            for (j = 0; j < c; j++)
                rd_var(p, &i);
        }
    }
    for (k = 0; k < sizeof fields / sizeof *fields; k++)
        swap_bytes(p + fields[k][0], fields[k][1]);
    swap_bytes(p + n - 32, 4);
    swap_bytes(p + n - 28, 4);
    swap_bytes(p + n - 24, 8);
    return 0;
}

/* ---- the corpus checks ------------------------------------------------------ */
static const char *const corpus[] = {"async_tasks.bin", "cpu_recursion.bin", "deep_stack.bin", "multithread.bin"};

static void check_corpus_file(const char *dir, const char *name)
{
    char path[1024], tpath[1100];
    size_t len = 0, tlen = 0;
    unsigned char *data;
    char *truth;
    unsigned long long total = 0, calls = 0, interval = 0;
    tot_sink t;
    pb_error err;
    pb_status st;
    char *coll;
    const char *p;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tpath, sizeof tpath, "%s.truth.json", path);
    data = hx_slurp(path, &len);
    truth = (char *)hx_slurp(tpath, &tlen);
    if (!data || !truth) {
        ok(0, "%s and its truth.json are readable", path);
        free(data);
        free(truth);
        return;
    }
    truth[tlen] = '\0';
    json_u64(truth, NULL, "total_samples", &total);
    json_u64(truth, NULL, "collect_calls", &calls);
    json_u64(truth, NULL, "sample_interval_us", &interval);

    /* whole file: samples = ticks / interval, TIME_LINEs = collect() calls */
    tot_init(&t);
    st = pb_decode_mem(data, len, name, PB_FMT_UNKNOWN, NULL, &t.sink, &err);
    ok(st == PB_OK, "%s decodes (%s)", name, st ? err.message : "ok");
    ok(t.ticks == total * interval, "%s: TIME_LINE ticks %llu = %llu samples x %llu us", name,
       (unsigned long long)t.ticks, total, interval);
    ok(t.count[PB_T_TIME_LINE] == calls, "%s: %llu TIME_LINEs = %llu collect() calls of CPython's reader", name,
       (unsigned long long)t.count[PB_T_TIME_LINE], calls);
    ok(t.fid_before_use && t.order_ok && t.pids_open == 0 && t.count[PB_T_PID_START] >= 1,
       "%s: dense fids defined before use, SUB_* after TIME_LINEs, PID_START/PID_END paired", name);
    ok((uint64_t)(t.excl_sum / (interval / 1e6) + 0.5) == total,
       "%s: SUB_CALLERS exclusive times add up to all samples (%.6f s)", name, t.excl_sum);
    ok((uint64_t)(t.runtime_incl / (interval / 1e6) + 0.5) == total,
       "%s: inclusive times of top-level calls (caller main::RUNTIME) add up to all samples", name);

    /* per thread: for_chunks thread => $tid */
    p = strstr(truth, "\"samples_per_thread\"");
    if (p) {
        const char *end = strchr(p, '}');
        const char *q = strchr(p, '{');
        while (q && end && q < end) {
            unsigned long long tid, n;
            const char *k = strchr(q, '"');
            pb_options opt;
            if (!k || k > end || sscanf(k, "\"%llu\": %llu", &tid, &n) != 2)
                break;
            pb_options_init(&opt);
            opt.have_thread = 1;
            opt.thread_id = tid;
            tot_init(&t);
            st = pb_decode_mem(data, len, name, PB_FMT_UNKNOWN, &opt, &t.sink, &err);
            ok(st == PB_OK && t.ticks == n * interval && t.count[PB_T_PID_START] == 1 && t.count[PB_T_PID_END] == 1,
               "%s thread %llu: %llu samples, one PID span", name, tid, n);
            q = strchr(k + 1, ',');
            if (!q)
                break;
        }
    }

    /* collapsed: counts add up; SUB_CALLERS agree with the stacks for every
     * sub on the first line */
    coll = collapse_mem(data, len, NULL, &st, &err);
    if (coll) {
        uint64_t tot, with, leaf, lines;
        unsigned long long nlines = 0;
        char sub[256];
        const char *semi, *sp;
        json_u64(truth, NULL, "collapsed_lines", &nlines);
        collapsed_sums(coll, NULL, &tot, &with, &leaf, &lines);
        ok(st == PB_OK && tot == total, "%s: collapsed counts add up to %llu samples", name, total);
        ok(lines <= nlines && lines > 0, "%s: %llu collapsed lines (CPython: %llu with line numbers)", name,
           (unsigned long long)lines, nlines);
        /* take the leaf of the first line and a mid-stack sub */
        sp = strchr(coll, ' ');
        for (semi = sp; semi > coll && semi[-1] != ';'; semi--)
            ;
        if (sp && (size_t)(sp - semi) < sizeof sub) {
            int pass;
            for (pass = 0; pass < 2; pass++) {
                memcpy(sub, semi, (size_t)(sp - semi));
                sub[sp - semi] = '\0';
                if (pass == 1) {
                    /* the frame just under the leaf */
                    const char *e = semi - 1, *b2;
                    for (b2 = e; b2 > coll && b2[-1] != ';'; b2--)
                        ;
                    if (e <= b2 || strncmp(b2, "tid:", 4) == 0)
                        break;
                    memcpy(sub, b2, (size_t)(e - b2));
                    sub[e - b2] = '\0';
                }
                collapsed_sums(coll, sub, &tot, &with, &leaf, &lines);
                tot_init(&t);
                snprintf(t.sub_of_interest, sizeof t.sub_of_interest, "%s", sub);
                pb_decode_mem(data, len, name, PB_FMT_UNKNOWN, NULL, &t.sink, &err);
                ok((uint64_t)(t.incl_of_interest / (interval / 1e6) + 0.5) == with &&
                       (uint64_t)(t.excl_of_interest / (interval / 1e6) + 0.5) == leaf,
                   "%s: %s: SUB_CALLERS incl %.3f s / excl %.3f s = stacks holding it (%llu) / ending in it (%llu)",
                   name, sub, t.incl_of_interest, t.excl_of_interest, (unsigned long long)with,
                   (unsigned long long)leaf);
            }
        }
        free(coll);
    } else {
        ok(0, "%s: collapse", name);
    }

    /* big-endian twin of an uncompressed file gives the same result */
    if (le(data + 52, 4) == 0) {
        unsigned char *be = (unsigned char *)malloc(len);
        pb_format_info info;
        char *c1, *c2;
        pb_status s1 = PB_ERR_ABORT, s2 = PB_ERR_ABORT;
        memcpy(be, data, len);
        swap_file(be, len);
        pb_detect_bytes(be, len, &info);
        c1 = collapse_mem(data, len, NULL, &s1, &err);
        c2 = collapse_mem(be, len, NULL, &s2, &err);
        ok(strcmp(info.byte_order, "big") == 0 && s1 == PB_OK && s2 == PB_OK && c1 && c2 && strcmp(c1, c2) == 0,
           "%s byte-swapped to big-endian: detected as big, same collapsed stacks (%s)", name,
           s2 ? err.message : "ok");
        free(c1);
        free(c2);
        free(be);
    }
    free(data);
    free(truth);
}

/* every prefix and single-byte flips: never a crash, always a status */
static void sweep(const char *dir, const char *name, size_t step)
{
    char path[1024];
    size_t len = 0, cut, bad = 0, i;
    unsigned char *data;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    data = hx_slurp(path, &len);
    if (!data)
        return;
    for (cut = 0; cut < len; cut += step) {
        tot_sink t;
        pb_error err;
        pb_status st = decode(&(buf){data, cut, cut}, NULL, &t, &err);
        if (st == PB_OK || !err.message[0])
            bad++;
    }
    for (i = 0; i < len; i += step) {
        static const unsigned char x[3] = {0xFF, 0x80, 0x01};
        int k;
        for (k = 0; k < 3; k++) {
            tot_sink t;
            pb_error err;
            pb_status st;
            data[i] ^= x[k];
            st = decode(&(buf){data, len, len}, NULL, &t, &err);
            data[i] ^= x[k];
            if (st != PB_OK && !err.message[0])
                bad++;
        }
    }
    ok(bad == 0, "%s: every %zu-byte-step prefix fails cleanly and byte flips never crash", name, step);
    free(data);
}

static void synthetic(void)
{
    buf r = {0, 0, 0}, f, tr = {0, 0, 0};
    tot_sink t;
    pb_error err;
    pb_status st;
    pb_options opt;
    char *coll;
    size_t i;

    /* thread 7: FULL [a10] ; SUFFIX shared=1 push [b20] -> [b20,a10]; REPEAT x3 (status 1,1,3);
     * POP_PUSH pop=5 push [<GC>] -> [<GC>] ; SUFFIX shared=0 push [meth, a11] -> [meth,a11]
     * (shared smaller than the depth)
     * thread 9 (interpreter 2): FULL [a10, b20] */
    rec(&r, 7, 0, 1); b_var(&r, 5); hx_u8(&r, 1); b_var(&r, 1); b_var(&r, 0);
    rec(&r, 7, 0, 2); b_var(&r, 1000); hx_u8(&r, 1); b_var(&r, 1); b_var(&r, 1); b_var(&r, 1);
    rec(&r, 9, 2, 1); b_var(&r, 7); hx_u8(&r, 1); b_var(&r, 2); b_var(&r, 0); b_var(&r, 1);
    rec(&r, 7, 0, 0); b_var(&r, 3); b_var(&r, 1000); hx_u8(&r, 1); b_var(&r, 1000); hx_u8(&r, 1);
    b_var(&r, 1000); hx_u8(&r, 3);
    rec(&r, 7, 0, 3); b_var(&r, 1000); hx_u8(&r, 1); b_var(&r, 5); b_var(&r, 1); b_var(&r, 2);
    rec(&r, 7, 0, 2); b_var(&r, 1000); hx_u8(&r, 1); b_var(&r, 0); b_var(&r, 2); b_var(&r, 3); b_var(&r, 4);
    f = make_file(&r, 8, 2, 0, NULL);
    coll = collapse_mem(f.p, f.n, NULL, &st, &err);
    {
        /* (frames named as CPython names them: the qualname) */
        static const char want[] = "tid:7;func_a;func_b 4\n"
                                   "tid:7;<GC> 1\n"
                                   "tid:7;func_a 1\n"
                                   "tid:7;func_a;Klass.meth 1\n"
                                   "tid:9/2;func_b;func_a 1\n";
        ok(st == PB_OK && coll && strcmp(coll, want) == 0,
           "synthetic FULL/SUFFIX/REPEAT/POP_PUSH (pop >= depth, shared < depth), 2 threads: collapsed stacks%s%s",
           st ? ": " : "", st ? err.message : "");
        if (coll && st == PB_OK && strcmp(coll, want) != 0)
            printf("# got:\n%s", coll);
    }
    free(coll);
    st = decode(&f, NULL, &t, &err);
    ok(st == PB_OK && t.ticks == 8000 && t.count[PB_T_TIME_LINE] == 7 && t.count[PB_T_PID_START] == 2 &&
           t.count[PB_T_NEW_FID] == 3,
       "synthetic: 8 samples in 7 TIME_LINEs (REPEAT split on status), 2 threads, 3 fids (one fake)");

    /* zstd: same result */
    {
        buf z = make_file(&r, 8, 2, 1, NULL);
        char *c1 = collapse_mem(f.p, f.n, NULL, &st, &err);
        pb_status st2;
        char *c2 = collapse_mem(z.p, z.n, NULL, &st2, &err);
        ok(st == PB_OK && st2 == PB_OK && c1 && c2 && strcmp(c1, c2) == 0, "zstd-compressed copy: same stacks%s%s",
           st2 ? ": " : "", st2 ? err.message : "");
        free(c1);
        free(c2);
        free(z.p);
    }
    /* stats trailer, 56 and legacy 32 bytes */
    {
        double d[4] = {1.5, 999.0, 0.25, 3.0};
        int form;
        for (form = 0; form < 2; form++) {
            buf g;
            int k;
            tr.n = 0;
            for (k = 0; k < (form ? 2 : 4); k++) {
                uint64_t u;
                memcpy(&u, &d[k], 8);
                hx_le(&tr, u, 8);
            }
            if (!form) {
                hx_le(&tr, 0xF, 4);
                hx_le(&tr, 0, 4);
            }
            hx_put(&tr, "TACHSTAT", 8);
            hx_le(&tr, 1, 4);
            hx_le(&tr, form ? 32 : 56, 4);
            g = make_file(&r, 8, 2, 0, &tr);
            st = decode(&g, NULL, &t, &err);
            /* 25 without a trailer (header_layout; profiler, profiler_version,
             * clock; thread_<pid>_samples of the 2 threads; the fold's
             * sampled_time_sec and run_wall_clock_sec included) */
            ok(st == PB_OK && t.count[PB_T_ATTRIBUTE] ==
                                  (uint64_t)(form ? 3 : 5) + 25,
               "%s stats trailer: read (%llu attributes)", form ? "legacy 32-byte" : "56-byte",
               (unsigned long long)t.count[PB_T_ATTRIBUTE]);
            free(g.p);
        }
        free(tr.p);
    }
    /* thread selection by id */
    pb_options_init(&opt);
    opt.have_thread = 1;
    opt.thread_id = 9;
    tot_init(&t);
    st = pb_decode_mem(f.p, f.n, "s.bin", PB_FMT_UNKNOWN, &opt, &t.sink, &err);
    ok(st == PB_OK && t.ticks == 1000 && t.count[PB_T_PID_START] == 1, "thread => 9 selects its one sample");
    opt.thread_id = 8;
    st = pb_decode_mem(f.p, f.n, "s.bin", PB_FMT_UNKNOWN, &opt, &t.sink, &err);
    ok(st == PB_ERR_UNSUPPORTED && strstr(err.message, "no thread 8"), "thread => 8: %s", err.message);
    free(f.p);

    /* errors */
    f = make_file(&r, 9, 2, 0, NULL);
    expect_error(&f, PB_ERR_CORRUPT, "sample count mismatch", "header claims 9 samples, data has 8");
    free(f.p);
    expect_records_error(&r, 8, PB_ERR_CORRUPT, "more threads", "header declares 1 thread, data has 2");
    f = make_file(&r, 8, 2, 0, NULL);
    set_le(f.p + 4, 2, 4);
    expect_error(&f, PB_ERR_UNSUPPORTED, "supports version 1", "format version 2");
    memcpy(f.p, "TACH", 4);
    expect_error(&f, PB_ERR_UNSUPPORTED, "format version 33554432", "literal TACH on a little-endian file");
    free(f.p);

    r.n = 0;
    full1(&r, 5);
    expect_records_error(&r, 1, PB_ERR_CORRUPT, "frame index 5 out of range", "frame index out of range");

    r.n = 0;
    full1(&r, 0);
    rec(&r, 7, 0, 0); b_var(&r, 100000); b_var(&r, 1); hx_u8(&r, 1);
    expect_records_error(&r, 100001, PB_ERR_CORRUPT, "REPEAT record: count 100000 exceeds", "REPEAT count larger than the remaining bytes");

    r.n = 0;
    rec7(&r, 1, -1, 257, 0);
    expect_records_error(&r, 1, PB_ERR_CORRUPT, "stack depth 257 exceeds 256", "FULL stack deeper than 256");

    r.n = 0;
    rec7(&r, 1, -1, 200, 0);
    rec7(&r, 3, 0, 57, 1);
    expect_records_error(&r, 2, PB_ERR_CORRUPT, "final stack depth 257", "POP_PUSH growing the stack past 256");

    r.n = 0;
    full1(&r, 0);
    rec7(&r, 2, 2, 0, 0);
    expect_records_error(&r, 2, PB_ERR_CORRUPT, "shared count 2 exceeds", "SUFFIX shared count over the depth");

    r.n = 0;
    rec(&r, 7, 0, 4);
    expect_records_error(&r, 1, PB_ERR_CORRUPT, "unknown stack encoding 4", "unknown encoding byte");

    r.n = 0;
    full1(&r, 0);
    hx_put(&r, "\0\0\0\0\0", 5);
    expect_records_error(&r, 1, PB_ERR_TRUNCATED, "5 trailing bytes", "5 trailing bytes after the last record");

    /* a truncated zstd stream */
    r.n = 0;
    for (i = 0; i < 50; i++)
        full1(&r, (uint32_t)(i % 5));
    {
        buf z = make_file(&r, 50, 1, 1, NULL);
        size_t str_off = (size_t)le(z.p + 36, 8);
        /* drop the compressed stream's last 4 bytes (keep offsets consistent) */
        memmove(z.p + str_off - 4, z.p + str_off, z.n - str_off);
        z.n -= 4;
        set_le(z.p + 36, str_off - 4, 8);
        set_le(z.p + 44, le(z.p + 44, 8) - 4, 8);
        expect_error(&z, PB_ERR_TRUNCATED, "zstd", "zstd stream cut short");
        free(z.p);
        z = make_file(&r, 50, 1, 1, NULL);
        z.p[64 + 4] ^= 0x08; /* frame header descriptor: the reserved bit */
        expect_error(&z, PB_ERR_CORRUPT, "zstd decompression error", "corrupt zstd frame header");
        free(z.p);
    }

    /* zstd bomb: 200 MB of zeros (records of thread 0 with empty REPEATs) in a
     * small file claiming 10 samples */
    {
        size_t big = 200u << 20;
        unsigned char *zeros = (unsigned char *)calloc(1, big);
        buf zr = {zeros, big, big};
        buf z = make_file(&zr, 10, 1, 1, NULL);
        ok(z.n < 64 * 1024, "zstd bomb is %zu bytes on disk", z.n);
        expect_error(&z, PB_ERR_LIMIT, "zstd bomb", "zstd bomb stops at a limit");
        free(z.p);
        free(zeros);
    }
    free(r.p);
}

int main(int argc, char **argv)
{
    const char *dir = "t/data/tachyon";
    size_t i;
    if (argc == 3 && strcmp(argv[1], "--collapse") == 0) {
        pb_error err;
        pb_status st = hx_convert("collapsed", argv[2], PB_FMT_UNKNOWN, NULL, "-", -1, &err);
        return st != PB_OK ? hx_fail(&err) : 0;
    }
    if (argc == 4 && strcmp(argv[1], "--swap") == 0) {
        size_t len;
        unsigned char *d = hx_slurp(argv[2], &len);
        FILE *o;
        if (!d || swap_file(d, len) < 0 || !(o = fopen(argv[3], "wb")) || fwrite(d, 1, len, o) != len ||
            fclose(o) != 0) {
            fprintf(stderr, "cannot swap %s (uncompressed little-endian tachyon files only)\n", argv[2]);
            return 2;
        }
        free(d);
        return 0;
    }
    if (argc > 1)
        dir = argv[1];
    for (i = 0; i < sizeof corpus / sizeof *corpus; i++)
        check_corpus_file(dir, corpus[i]);
    synthetic();
    for (i = 0; i < sizeof corpus / sizeof *corpus; i++)
        sweep(dir, corpus[i], getenv("PB_SWEEP_STEP") ? (size_t)atoi(getenv("PB_SWEEP_STEP")) : 7);
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
