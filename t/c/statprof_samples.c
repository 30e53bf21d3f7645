/* statprof_samples - decode StatProfiler traces with pb_statprofiler_samples()
 * through a test pb_sample_sink and print them the way
 * ../shared/tools/statprofiler-dump-samples prints Devel::StatProfiler::Reader's
 * view (one JSON array per trace, JSON::PP->utf8->canonical encoding), so the
 * output can be compared with <file>.samples.jsonl byte for byte.
 *
 *   statprof_samples [-q] [-t] [-n] FILE             one trace file
 *   statprof_samples [-q] [-t] [-n] -m PATH...       a genealogy (files, a directory
 *                                                    or a template); prints
 *                                                    ["thread",key,pid,ppid] lines
 *   -q  reproduce the reader's perl >= 5.36 quirk: drop a main/eval frame
 *       that directly follows a sub frame named BEGIN
 *   -t  print a last line {"truth":{...}} with the header facts, header and
 *       final metadata, eval sources, and counts, in truth.json's terms
 *   -n  no sample lines (benchmark: decode and intern only)
 *
 * Build: gcc -O2 -std=c99 -Wall -Wextra -Ic t/c/statprof_samples.c \
 *        c/read_statprofiler.c c/chunk.c c/error.c c/source.c c/decode.c \
 *        c/detect.c c/read_*.c ... -lz -lzstd -lsnappy
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pb.h"
#include "harness.h"
#include "samples.h"
#include "read_statprofiler.h"

/* ---- a growable byte buffer --------------------------------------------- */
typedef struct {
    char *p;
    size_t len, cap;
} buf_t;

static void b_put(buf_t *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->len + n + 1)
            nc *= 2;
        b->p = (char *)realloc(b->p, nc);
        if (!b->p) {
            fprintf(stderr, "out of memory\n");
            exit(3);
        }
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}
static void b_puts(buf_t *b, const char *s) { b_put(b, s, strlen(s)); }
static void b_int(buf_t *b, long long v)
{
    char t[32];
    b_put(b, t, (size_t)snprintf(t, sizeof t, "%lld", v));
}

/* the Perl string as UTF-8 bytes: flag 0 strings are Latin-1 */
static void b_utf8(buf_t *b, pb_str s)
{
    size_t i;
    if (s.utf8) {
        b_put(b, s.ptr, s.len);
        return;
    }
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (c < 0x80) {
            b_put(b, (const char *)&c, 1);
        } else {
            char t[2];
            t[0] = (char)(0xC0 | (c >> 6));
            t[1] = (char)(0x80 | (c & 0x3F));
            b_put(b, t, 2);
        }
    }
}

/* JSON::PP string escaping of UTF-8 bytes */
static void b_json_raw(buf_t *b, const char *p, size_t n)
{
    size_t i;
    b_put(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        char t[8];
        switch (c) {
        case '"': b_put(b, "\\\"", 2); break;
        case '\\': b_put(b, "\\\\", 2); break;
        case '\n': b_put(b, "\\n", 2); break;
        case '\r': b_put(b, "\\r", 2); break;
        case '\t': b_put(b, "\\t", 2); break;
        case '\f': b_put(b, "\\f", 2); break;
        case '\b': b_put(b, "\\b", 2); break;
        default:
            if (c < 0x20) {
                snprintf(t, sizeof t, "\\u%04x", c);
                b_put(b, t, 6);
            } else {
                b_put(b, (const char *)&c, 1);
            }
        }
    }
    b_put(b, "\"", 1);
}
static void b_json(buf_t *b, pb_str s)
{
    buf_t u = { 0, 0, 0 };
    b_utf8(&u, s);
    b_json_raw(b, u.p ? u.p : "", u.len);
    free(u.p);
}

/* ---- a small string map (metadata, sections) ---------------------------- */
typedef struct {
    buf_t key, val; /* UTF-8 */
    long count;
} kv_t;
typedef struct {
    kv_t *v;
    size_t n, cap;
} map_t;

static kv_t *m_get(map_t *m, const char *k, size_t klen, int create)
{
    size_t i;
    for (i = 0; i < m->n; i++)
        if (m->v[i].key.len == klen && memcmp(m->v[i].key.p, k, klen) == 0)
            return &m->v[i];
    if (!create)
        return NULL;
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 8;
        m->v = (kv_t *)realloc(m->v, m->cap * sizeof *m->v);
    }
    memset(&m->v[m->n], 0, sizeof m->v[m->n]);
    b_put(&m->v[m->n].key, k, klen);
    return &m->v[m->n++];
}
static void m_del(map_t *m, kv_t *e)
{
    size_t i = (size_t)(e - m->v);
    free(e->key.p);
    free(e->val.p);
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
    m->n--;
}
static void m_clear(map_t *m)
{
    while (m->n)
        m_del(m, &m->v[m->n - 1]);
}
static int kv_cmp(const void *a, const void *b)
{
    const kv_t *x = (const kv_t *)a, *y = (const kv_t *)b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = memcmp(x->key.p, y->key.p, n);
    if (c)
        return c;
    return x->key.len < y->key.len ? -1 : x->key.len > y->key.len;
}
/* {"k":"v",...} or {"k":count,...} sorted by key */
static void b_map(buf_t *b, map_t *m, int counts)
{
    size_t i;
    if (m->n > 1)
        qsort(m->v, m->n, sizeof *m->v, kv_cmp);
    b_put(b, "{", 1);
    for (i = 0; i < m->n; i++) {
        if (i)
            b_put(b, ",", 1);
        b_json_raw(b, m->v[i].key.p, m->v[i].key.len);
        b_put(b, ":", 1);
        if (counts)
            b_int(b, m->v[i].count);
        else
            b_json_raw(b, m->v[i].val.p ? m->v[i].val.p : "", m->v[i].val.len);
    }
    b_put(b, "}", 1);
}
static void m_set(map_t *m, pb_str k, pb_str v)
{
    buf_t kb = { 0, 0, 0 };
    kv_t *e;
    b_utf8(&kb, k);
    e = m_get(m, kb.p ? kb.p : "", kb.len, 1);
    e->val.len = 0;
    b_utf8(&e->val, v);
    if (!e->val.p)
        b_put(&e->val, "", 0);
    free(kb.p);
}

/* ---- the test sink -------------------------------------------------------- */
typedef struct {
    buf_t json;   /* the frame as a JSON array */
    int is_begin; /* sub frame named BEGIN */
    int is_me;    /* main or eval frame */
} frame_t;

typedef struct {
    pb_sample_sink ss;
    frame_t *fr;
    size_t nfr, capfr;
    buf_t op, line;
    map_t pending_meta, sections, header_meta, final_meta, attrs, evals;
    int quirk, quiet;
    uint64_t samples, records, weight, frames;
    FILE *out;
} tsink;

static pb_status t_attribute(pb_sample_sink *self, const char *key, pb_str value)
{
    tsink *t = (tsink *)self->ctx;
    m_set(&t->attrs, pb_str_c(key), value);
    return PB_OK;
}

static pb_status t_frame(pb_sample_sink *self, const pb_frame *f, uint32_t *id)
{
    tsink *t = (tsink *)self->ctx;
    frame_t *e;
    if (t->nfr == t->capfr) {
        t->capfr = t->capfr ? 2 * t->capfr : 256;
        t->fr = (frame_t *)realloc(t->fr, t->capfr * sizeof *t->fr);
    }
    e = &t->fr[t->nfr];
    memset(e, 0, sizeof *e);
    b_put(&e->json, "[", 1);
    if (f->kind == PB_FRAME_SUB || f->kind == PB_FRAME_XSUB) {
        buf_t fq = { 0, 0, 0 };
        b_utf8(&fq, f->package);
        b_put(&fq, "::", 2);
        b_utf8(&fq, f->name);
        b_json_raw(&e->json, fq.p, fq.len);
        free(fq.p);
    } else {
        b_puts(&e->json, "\"\"");
    }
    b_put(&e->json, ",", 1);
    b_json(&e->json, f->file);
    b_put(&e->json, ",", 1);
    b_int(&e->json, f->line);
    switch (f->kind) {
    case PB_FRAME_SUB:
        b_puts(&e->json, ",\"sub\",");
        b_int(&e->json, f->first_line);
        break;
    case PB_FRAME_XSUB: b_puts(&e->json, ",\"xsub\",null"); break;
    case PB_FRAME_MAIN: b_puts(&e->json, ",\"main\",null"); break;
    case PB_FRAME_EVAL: b_puts(&e->json, ",\"eval\",null"); break;
    default: b_puts(&e->json, ",\"synthetic\",null"); break;
    }
    b_put(&e->json, "]", 1);
    e->is_begin = f->kind == PB_FRAME_SUB && f->name.len == 5 && memcmp(f->name.ptr, "BEGIN", 5) == 0;
    e->is_me = f->kind == PB_FRAME_MAIN || f->kind == PB_FRAME_EVAL;
    *id = (uint32_t)t->nfr++;
    return PB_OK;
}

static pb_status t_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    tsink *t = (tsink *)self->ctx;
    (void)label;
    if (!t->quiet)
        fprintf(t->out, "[\"thread\",%llu,%u,%u]\n", (unsigned long long)key, (unsigned)pid, (unsigned)ppid);
    return PB_OK;
}

/* the op name of the next sample (the sink's sample_tags) */
static pb_status t_tags(pb_sample_sink *self, pb_str op, pb_str status)
{
    tsink *t = (tsink *)self->ctx;
    (void)status;
    t->op.len = 0;
    b_utf8(&t->op, op);
    return PB_OK;
}

static void t_warn(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "warning: %s\n", msg);
}

/* the trailing {extra} with pending metadata (and sections when given) */
static void t_extra(tsink *t, int sections)
{
    if (!sections && !t->pending_meta.n)
        return;
    b_put(&t->line, ",{", 2);
    if (sections) {
        b_puts(&t->line, "\"active_sections\":");
        b_map(&t->line, &t->sections, 1);
    }
    if (t->pending_meta.n) {
        if (sections)
            b_put(&t->line, ",", 1);
        b_puts(&t->line, "\"metadata\":");
        b_map(&t->line, &t->pending_meta, 0);
        m_clear(&t->pending_meta);
    }
    if (sections)
        b_puts(&t->line, ",\"sections_changed\":true");
    b_put(&t->line, "}", 1);
}

static pb_status t_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                          uint64_t ts)
{
    tsink *t = (tsink *)self->ctx;
    uint32_t i;
    int first = 1;
    (void)key;
    (void)ts;
    t->samples++;
    t->records++;
    t->weight += weight;
    if (t->quiet) {
        t->frames += depth;
        return PB_OK;
    }
    t->line.len = 0;
    b_put(&t->line, "[", 1);
    b_int(&t->line, (long long)weight);
    b_put(&t->line, ",", 1);
    b_json_raw(&t->line, t->op.p ? t->op.p : "", t->op.len);
    b_put(&t->line, ",[", 2);
    for (i = 0; i < depth; i++) {
        const frame_t *f = &t->fr[ids[i]];
        if (t->quirk && i > 0 && f->is_me && t->fr[ids[i - 1]].is_begin)
            continue;
        if (!first)
            b_put(&t->line, ",", 1);
        first = 0;
        b_put(&t->line, f->json.p, f->json.len);
        t->frames++;
    }
    b_put(&t->line, "]", 1);
    t_extra(t, 0);
    b_put(&t->line, "]\n", 2);
    fwrite(t->line.p, 1, t->line.len, t->out);
    return PB_OK;
}

static pb_status t_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    tsink *t = (tsink *)self->ctx;
    if (!strcmp(kind, "metadata")) {
        m_set(&t->final_meta, a, b);
        if (n)
            m_set(&t->header_meta, a, b);
        else
            m_set(&t->pending_meta, a, b);
        return PB_OK;
    }
    if (!strcmp(kind, "eval_source")) {
        m_set(&t->evals, b, a);
        return PB_OK;
    }
    if (!strcmp(kind, "section_start") || !strcmp(kind, "section_end")) {
        buf_t k = { 0, 0, 0 };
        kv_t *e;
        b_utf8(&k, a);
        e = m_get(&t->sections, k.p ? k.p : "", k.len, kind[8] == 's');
        if (e) {
            e->count += kind[8] == 's' ? 1 : -1;
            if (e->count <= 0)
                m_del(&t->sections, e);
        }
        free(k.p);
        t->records++;
        if (t->quiet)
            return PB_OK;
        t->line.len = 0;
        b_puts(&t->line, "[0,\"\",[]");
        t_extra(t, 1);
        b_put(&t->line, "]\n", 2);
        fwrite(t->line.p, 1, t->line.len, t->out);
        return PB_OK;
    }
    fprintf(stderr, "unknown note kind %s\n", kind);
    return PB_OK;
}

static void t_truth(tsink *t)
{
    /* truth.json's keys in canonical (sorted) order: a map, or a count */
    const struct {
        const char *key;
        map_t *map;
        uint64_t n;
    } keys[] = {
        {"attributes", &t->attrs, 0},
        {"eval_source", &t->evals, 0},
        {"final_metadata", &t->final_meta, 0},
        {"header_metadata", &t->header_meta, 0},
        {"num_frames", NULL, t->frames},
        {"num_reader_records", NULL, t->records},
        {"num_samples", NULL, t->samples},
        {"total_weight", NULL, t->weight},
        {"unique_frames", NULL, t->nfr},
    };
    buf_t b = { 0, 0, 0 };
    size_t i;
    b_puts(&b, "{\"truth\":{");
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        b_puts(&b, i ? ",\"" : "\"");
        b_puts(&b, keys[i].key);
        b_puts(&b, "\":");
        if (keys[i].map)
            b_map(&b, keys[i].map, 0);
        else
            b_int(&b, (long long)keys[i].n);
    }
    b_puts(&b, "}}\n");
    fwrite(b.p, 1, b.len, t->out);
    free(b.p);
}

/* the real reader's view: stacks as the file holds them (keeps_cut_stacks) */
static const pb_sample_sink sink_calls = {.attribute = t_attribute, .frame = t_frame, .thread = t_thread,
    .sample = t_sample, .note = t_note, .sample_tags = t_tags, .keeps_cut_stacks = 1};

int main(int argc, char **argv)
{
    tsink t;
    pb_sp_hooks hooks;
    pb_error err;
    pb_status st;
    int multi = 0, truth = 0, i, nfiles = 0;
    const char **files = (const char **)calloc((size_t)argc, sizeof *files);
    memset(&t, 0, sizeof t);
    t.out = stdout;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q"))
            t.quirk = 1;
        else if (!strcmp(argv[i], "-t"))
            truth = 1;
        else if (!strcmp(argv[i], "-n"))
            t.quiet = 1;
        else if (!strcmp(argv[i], "-m"))
            multi = 1;
        else
            files[nfiles++] = argv[i];
    }
    if (nfiles < 1 || (!multi && nfiles != 1)) {
        fprintf(stderr, "usage: statprof_samples [-q] [-t] [-n] FILE | -m PATH...\n");
        return 1;
    }
    pb_sample_sink_init(&t.ss, &sink_calls, &t, &err, NULL);
    hooks.warn = t_warn;
    hooks.ctx = &t;
    if (!multi) {
        pb_source src;
        pb_error_init(&err, "statprofiler", files[0]);
        st = pb_src_open_file(&src, files[0], &err);
        if (st == PB_OK) {
            st = pb_statprofiler_samples(&src, NULL, &t.ss, &hooks, 1, 0, NULL, &err);
            pb_src_close(&src);
        }
    } else {
        char **list = NULL;
        size_t n = 0;
        pb_error_init(&err, "statprofiler", files[0]);
        if (nfiles == 1 && (st = pb_statprofiler_expand(files[0], &list, &n, &err)) == PB_OK) {
            st = pb_statprofiler_files((const char *const *)list, n, NULL, &t.ss, &hooks, &err);
            pb_statprofiler_free_list(list, n);
        } else if (nfiles > 1) {
            st = pb_statprofiler_files(files, (size_t)nfiles, NULL, &t.ss, &hooks, &err);
        }
    }
    if (truth)
        t_truth(&t);
    fflush(stdout);
    return st != PB_OK ? hx_fail(&err) : 0;
}
