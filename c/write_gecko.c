/* write_gecko.c - stack samples -> Firefox Profiler JSON (see write_gecko.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write_gecko.h"
#include "fold_samples.h"
#include "model.h"
#include "json_lines.h"
#include "util.h"
#include "tick_spool.h"

/* the categories (meta.categories), CPython's indices where it has them */
enum { CAT_OTHER, CAT_CODE, CAT_NATIVE, CAT_GC, CAT_GIL, CAT_CPU, CAT_CODE_TYPE, CAT_SPAN, CAT_EXCEPTION };
static const char *const cat_json =
    "[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Code\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Native\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"GC\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"GIL\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"CPU\",\"color\":\"purple\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Code Type\",\"color\":\"red\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Span\",\"color\":\"magenta\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Exception\",\"color\":\"lightblue\",\"subcategories\":[\"Other\"]}]";

/* Tachyon's thread states, as CPython's collector names them (its
 * _finalize_markers order) */
enum { ST_HAS_GIL, ST_NO_GIL, ST_ON_CPU, ST_OFF_CPU, ST_PY, ST_NATIVE, ST_GIL_WAIT, ST_GC, ST_EXC, ST_NO_EXC, N_ST };
static const char *const st_name[N_ST] = {"Has GIL",     "No GIL",          "On CPU",        "Off CPU",
                                          "Python Code", "Native Code",     "Waiting for GIL", "GC Collecting",
                                          "Has Exception", "No Exception"};
static const unsigned char st_cat[N_ST] = {CAT_GIL,       CAT_GIL,       CAT_CPU, CAT_CPU,       CAT_CODE_TYPE,
                                           CAT_CODE_TYPE, CAT_GIL,       CAT_GC,  CAT_EXCEPTION, CAT_EXCEPTION};

/* a spooled record (tick_spool.h): a sample (x stack, a ts µs, b weight) or
 * a marker (x name string, y category | kind << 8, a begin ns, b end ns) */
typedef pb_tick_rec g_rec;
enum { MK_STATE = 1, MK_SPAN = 2 };
#define BLK PB_TICK_BLK

typedef pb_tick_chain g_chain;

typedef struct {
    uint32_t name, file; /* string ids */
    int32_t line;        /* first line (0: unknown) */
    unsigned char native;
} g_func;

typedef struct {
    uint32_t func; /* g_func */
    int32_t line;
    unsigned char gc; /* CPython's "<GC>" frame */
} g_frame;

typedef struct {
    uint32_t a, b, c; /* local stack: prefix + 1, frame; frame: func, line; func: g_func */
} l_row;

typedef struct {
    uint64_t key;
    char label[24];
    uint32_t pid;
    int main_thread;
    l_row *funcs, *frames, *stacks;
    size_t nfuncs, cfuncs, nframes, cframes, nstacks, cstacks;
    pb_stack_cursor cur;
    g_chain samples, markers;
    uint64_t total; /* weight */
    /* Tachyon status state (CPython's collector): start of each open state (ns) */
    int inited;
    unsigned char open[N_ST];
    uint64_t start[N_ST];
} g_thread;

/* a per-thread interning entry: kind 0 func, 1 frame, 2 stack */
typedef struct {
    uint32_t thread, a, b, val;
    unsigned char kind;
} l_key;

struct pb_gecko {
    pb_sample_sink ss;
    FILE *out;
    pb_error *err;
    char *title;
    pb_strtab strs;
    g_func *funcs;
    size_t nfuncs, cfuncs;
    pb_index fnix;
    g_frame *frames;
    size_t nframes, cframes;
    g_thread *threads;
    size_t nthreads, cthreads;
    pb_index tix;
    l_key *keys;
    size_t nkeys, ckeys;
    pb_index kix;
    char *namebuf;
    size_t cnamebuf;
    pb_sample_facts facts;
    uint64_t last_key;
    uint32_t last_ti;
    int have_last;
    pb_tick_spool spool;
    /* times */
    int have_ts, have_base, have_span, all_one;
    uint64_t base_us, last_ts_us, span_lo, span_hi;
    uint64_t nsamples;
    /* the next sample's status (sample_tags) */
    int have_status;
    unsigned status;
    uint32_t st_sid[N_ST];
    int st_interned;
    /* thread names (ATTRIBUTE thread_<label>_name) */
    pb_strtab tlabels;
    uint32_t *tname;
    size_t ctname;
    char source[64];
};

#define G_OOM(g) pb_fail((g)->err, PB_ERR_LIMIT, 0, "out of memory while building the gecko file")

static uint32_t h_func2(uint32_t name, uint32_t file) { return pb_mix64(((uint64_t)name << 32) | file); }
static uint32_t h_func(const void *c, uint32_t i)
{
    const g_func *f = &((const pb_gecko *)c)->funcs[i];
    return h_func2(f->name, f->file);
}
static uint32_t h_thread(const void *c, uint32_t i) { return pb_mix64(((const pb_gecko *)c)->threads[i].key); }
static uint32_t h_key2(unsigned kind, uint32_t t, uint32_t a, uint32_t b)
{
    return pb_mix64(((uint64_t)t << 34) ^ ((uint64_t)kind << 32) ^ a) ^ pb_mix64(((uint64_t)b << 8) | kind);
}
static uint32_t h_key(const void *c, uint32_t i)
{
    const l_key *k = &((const pb_gecko *)c)->keys[i];
    return h_key2(k->kind, k->thread, k->a, k->b);
}

/* ---- the spool (tick_spool.h) ------------------------------------------------ */
static pb_status chain_put(pb_gecko *g, g_chain *c, const g_rec *r) { return pb_tick_put(&g->spool, c, r); }

/* walk a chain's records in order: fn(g, ctx, rec) for each */
typedef void (*rec_fn)(pb_gecko *g, void *ctx, const g_rec *r);
typedef struct {
    pb_gecko *g;
    rec_fn fn;
    void *ctx;
} walk_hop;
static void walk_one(void *p, const g_rec *r)
{
    walk_hop *h = (walk_hop *)p;
    h->fn(h->g, h->ctx, r);
}
static pb_status chain_walk(pb_gecko *g, const g_chain *c, g_rec *tmp, rec_fn fn, void *ctx)
{
    walk_hop h;
    h.g = g;
    h.fn = fn;
    h.ctx = ctx;
    return pb_tick_walk(&g->spool, c, tmp, walk_one, &h);
}

/* ---- interning --------------------------------------------------------------- */
static pb_status intern(pb_gecko *g, const char *p, size_t n, uint32_t *id)
{
    return pb_strtab_intern(&g->strs, p ? p : "", n, id) < 0 ? G_OOM(g) : PB_OK;
}

static pb_status gk_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    pb_gecko *g = (pb_gecko *)self->ctx;
    size_t kl = strlen(key), d;
    uint32_t lid, nid;
    if (!strcmp(key, "source_format"))
        pb_sample_attr_text(v, g->source, sizeof g->source);
    if (pb_sample_facts_take(&g->facts, self, key, v))
        return PB_OK;
    for (d = 7; d < kl && key[d] >= '0' && key[d] <= '9'; d++)
        ;
    if (kl > 12 && !strncmp(key, "thread_", 7) && d > 7 && d < 24 + 7 && !strcmp(key + d, "_name") && v.len) {
        if (pb_strtab_intern(&g->tlabels, key + 7, d - 7, &lid) < 0 || intern(g, v.ptr, v.len, &nid) != PB_OK ||
            pb_grow_zero((void **)&g->tname, &g->ctname, (size_t)lid + 1, sizeof *g->tname) < 0)
            return G_OOM(g);
        g->tname[lid] = nid + 1;
    }
    return PB_OK;
}

static pb_status gk_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    pb_gecko *g = (pb_gecko *)self->ctx;
    size_t need = pb_frame_shown_name(fr, NULL, 0) + 1, j;
    uint32_t name, file, i;
    g_frame *f;
    const char *fp = fr->file.ptr ? fr->file.ptr : "";
    if (pb_grow((void **)&g->namebuf, &g->cnamebuf, need, 1) < 0)
        return G_OOM(g);
    pb_frame_shown_name(fr, g->namebuf, need);
    if (intern(g, g->namebuf, need - 1, &name) != PB_OK || intern(g, fp, fr->file.len, &file) != PB_OK ||
        pb_index_reserve(&g->fnix, g->nfuncs, h_func, g) < 0)
        return G_OOM(g);
    PB_INDEX_FIND(&g->fnix, h_func2(name, file), j, i, g->funcs[i].name == name && g->funcs[i].file == file);
    if (i == PB_INDEX_NONE) {
        g_func *fn;
        if (g->nfuncs >= UINT32_MAX - 1 || pb_grow((void **)&g->funcs, &g->cfuncs, g->nfuncs + 1, sizeof *g->funcs) < 0)
            return G_OOM(g);
        fn = &g->funcs[g->nfuncs];
        fn->name = name;
        fn->file = file;
        fn->line = fr->first_line > 0 ? fr->first_line : 0;
        /* CPython's rule: code with a source file; "<...>" names none but <stdin> and <string> */
        fn->native = fr->kind == PB_FRAME_XSUB || fr->kind == PB_FRAME_SYNTHETIC || !fr->file.len ||
                     (fp[0] == '<' && !(fr->file.len == 7 && !memcmp(fp, "<stdin>", 7)) &&
                      !(fr->file.len == 8 && !memcmp(fp, "<string>", 8)));
        i = (uint32_t)g->nfuncs++;
        pb_index_set(&g->fnix, j, i);
    } else if (fr->first_line > 0 && (g->funcs[i].line <= 0 || fr->first_line < g->funcs[i].line)) {
        g->funcs[i].line = fr->first_line;
    }
    if (g->nframes >= UINT32_MAX - 1 || pb_grow((void **)&g->frames, &g->cframes, g->nframes + 1, sizeof *g->frames) < 0)
        return G_OOM(g);
    f = &g->frames[g->nframes];
    f->func = i;
    f->line = fr->line > 0 ? fr->line : 0;
    f->gc = need - 1 == 4 && !memcmp(g->namebuf, "<GC>", 4);
    *id = (uint32_t)g->nframes++;
    return PB_OK;
}

static pb_status get_thread(pb_gecko *g, uint64_t key, const char *label, uint32_t pid, uint32_t *ti)
{
    size_t j;
    uint32_t i;
    g_thread *t;
    if (!label && g->have_last && g->last_key == key) {
        *ti = g->last_ti;
        return PB_OK;
    }
    if (pb_index_reserve(&g->tix, g->nthreads, h_thread, g) < 0)
        return G_OOM(g);
    PB_INDEX_FIND(&g->tix, pb_mix64(key), j, i, g->threads[i].key == key);
    if (i == PB_INDEX_NONE) {
        if (pb_grow((void **)&g->threads, &g->cthreads, g->nthreads + 1, sizeof *g->threads) < 0)
            return G_OOM(g);
        t = &g->threads[g->nthreads];
        memset(t, 0, sizeof *t);
        t->key = key;
        snprintf(t->label, sizeof t->label, "%llu", (unsigned long long)key);
        i = (uint32_t)g->nthreads++;
        pb_index_set(&g->tix, j, i);
    }
    if (label) {
        if (*label) /* else its key stays its name */
            snprintf(g->threads[i].label, sizeof g->threads[i].label, "%s", label);
        g->threads[i].pid = pid;
    }
    *ti = g->last_ti = i;
    g->last_key = key;
    g->have_last = 1;
    return PB_OK;
}

static pb_status gk_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    uint32_t ti;
    (void)ppid;
    return get_thread((pb_gecko *)self->ctx, key, label ? label : "", pid, &ti);
}

/* a thread's local row of kind for (a, b): found or appended to rows */
static pb_status local(pb_gecko *g, uint32_t ti, unsigned kind, uint32_t a, uint32_t b, uint32_t c, l_row **rows,
                       size_t *n, size_t *cap, uint32_t *out)
{
    size_t j;
    uint32_t i, h = h_key2(kind, ti, a, b);
    if (pb_index_reserve(&g->kix, g->nkeys, h_key, g) < 0)
        return G_OOM(g);
    PB_INDEX_FIND(&g->kix, h, j, i,
                  g->keys[i].kind == kind && g->keys[i].thread == ti && g->keys[i].a == a && g->keys[i].b == b);
    if (i != PB_INDEX_NONE) {
        *out = g->keys[i].val;
        return PB_OK;
    }
    if (g->nkeys >= UINT32_MAX - 1 || *n >= UINT32_MAX - 1 ||
        pb_grow((void **)&g->keys, &g->ckeys, g->nkeys + 1, sizeof *g->keys) < 0 ||
        pb_grow((void **)rows, cap, *n + 1, sizeof **rows) < 0)
        return G_OOM(g);
    (*rows)[*n].a = a;
    (*rows)[*n].b = b;
    (*rows)[*n].c = c;
    g->keys[g->nkeys] = (l_key){.thread = ti, .a = a, .b = b, .val = (uint32_t)*n, .kind = (unsigned char)kind};
    pb_index_set(&g->kix, j, (uint32_t)g->nkeys++);
    *out = (uint32_t)(*n)++;
    return PB_OK;
}

static pb_status marker(pb_gecko *g, g_thread *t, uint32_t name, unsigned cat, unsigned kind, uint64_t b, uint64_t e)
{
    g_rec r;
    r.x = name;
    r.y = cat | kind << 8;
    r.a = b;
    r.b = e;
    return chain_put(g, &t->markers, &r);
}

/* CPython's _track_state_transition: active state a, inactive i */
static pb_status track(pb_gecko *g, g_thread *t, int cond, unsigned a, unsigned i, uint64_t now)
{
    unsigned on = cond ? a : i, off = cond ? i : a;
    if (!t->inited) {
        t->open[on] = 1;
        t->start[on] = now;
        return PB_OK;
    }
    if (!t->open[on]) {
        t->open[on] = 1;
        t->start[on] = now;
    }
    if (t->open[off]) {
        t->open[off] = 0;
        return marker(g, t, g->st_sid[off], st_cat[off], MK_STATE, t->start[off], now);
    }
    return PB_OK;
}

static pb_status close_state(pb_gecko *g, g_thread *t, unsigned s, uint64_t now)
{
    if (!t->open[s])
        return PB_OK;
    t->open[s] = 0;
    return marker(g, t, g->st_sid[s], st_cat[s], MK_STATE, t->start[s], now);
}

/* the status markers of one sample at now (ns in the source's clock) */
static pb_status status_markers(pb_gecko *g, g_thread *t, const uint32_t *ids, uint32_t depth, uint64_t now)
{
    unsigned s = g->status, k;
    int gil = s & 1, cpu = (s >> 1) & 1, req = (s >> 3) & 1, exc = (s >> 4) & 1, gc = 0;
    pb_status st;
    uint32_t d;
    if (!g->st_interned) {
        for (k = 0; k < N_ST; k++)
            if (intern(g, st_name[k], strlen(st_name[k]), &g->st_sid[k]) != PB_OK)
                return g->err->status;
        g->st_interned = 1;
    }
    if (s & 32)
        t->main_thread = 1;
    if ((st = track(g, t, gil, ST_HAS_GIL, ST_NO_GIL, now)) != PB_OK ||
        (st = track(g, t, cpu, ST_ON_CPU, ST_OFF_CPU, now)) != PB_OK)
        return st;
    if (gil)
        st = track(g, t, 1, ST_PY, ST_NATIVE, now);
    else if (cpu)
        st = track(g, t, 1, ST_NATIVE, ST_PY, now);
    else if (t->inited && (st = close_state(g, t, ST_PY, now)) == PB_OK)
        st = close_state(g, t, ST_NATIVE, now);
    if (st != PB_OK)
        return st;
    if (req) {
        if (!t->open[ST_GIL_WAIT]) {
            t->open[ST_GIL_WAIT] = 1;
            t->start[ST_GIL_WAIT] = now;
        }
    } else if ((st = close_state(g, t, ST_GIL_WAIT, now)) != PB_OK) {
        return st;
    }
    if ((st = track(g, t, exc, ST_EXC, ST_NO_EXC, now)) != PB_OK)
        return st;
    for (d = 0; d < depth && !gc; d++)
        gc = ids[d] < g->nframes && g->frames[ids[d]].gc;
    if (gc) {
        if (!t->open[ST_GC]) {
            t->open[ST_GC] = 1;
            t->start[ST_GC] = now;
        }
    } else if ((st = close_state(g, t, ST_GC, now)) != PB_OK) {
        return st;
    }
    t->inited = 1;
    return PB_OK;
}

static pb_status gk_sample_tags(pb_sample_sink *self, pb_str op, pb_str status)
{
    pb_gecko *g = (pb_gecko *)self->ctx;
    static const char *const names[6] = {"has_gil", "on_cpu", "unknown", "gil_requested", "has_exception",
                                         "main_thread"};
    size_t i = 0, k;
    (void)op;
    g->status = 0;
    g->have_status = 1;
    while (i < status.len) {
        size_t e = i;
        while (e < status.len && status.ptr[e] != ',')
            e++;
        for (k = 0; k < 6; k++)
            if (strlen(names[k]) == e - i && !memcmp(status.ptr + i, names[k], e - i))
                g->status |= 1u << k;
        i = e + 1;
    }
    return PB_OK;
}

static pb_status gk_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    pb_gecko *g = (pb_gecko *)self->ctx;
    uint32_t ti, m, j, prefix;
    g_thread *t;
    g_rec r;
    pb_status st;
    int status = g->have_status;
    g->have_status = 0;
    if ((st = get_thread(g, key, NULL, 0, &ti)) != PB_OK)
        return st;
    if (!weight)
        return PB_OK;
    if ((st = pb_sample_noframe(self, &ids, &depth)) != PB_OK)
        return st;
    t = &g->threads[ti];
    /* the first sample's time is the origin (as CPython's replay takes it);
     * a 0 is a time only when another sample has one */
    if (!g->have_base) {
        g->have_base = 1;
        g->base_us = ts;
    }
    if (ts)
        g->have_ts = 1;
    g->last_ts_us = ts;
    if (status && (st = status_markers(g, t, ids, depth, ts * 1000u)) != PB_OK)
        return st;
    if ((st = pb_checked_add(g->err, &t->total, weight, "a thread's sample weight", "")) != PB_OK)
        return st;
    if (weight != 1)
        g->all_one = 0;
    g->nsamples++;
    /* the stack, root first, through the thread's cursor */
    if (pb_stack_cursor_begin(&t->cur, ids, depth, &m) < 0)
        return G_OOM(g);
    for (j = m; j < depth; j++) {
        uint32_t id = ids[depth - 1 - j], fn, fr;
        const g_frame *f;
        if (id >= g->nframes)
            return pb_fail(g->err, PB_ERR_CORRUPT, 0, "sample uses frame id %u, only %zu interned", id, g->nframes);
        f = &g->frames[id];
        if ((st = local(g, ti, 0, f->func, 0, 0, &t->funcs, &t->nfuncs, &t->cfuncs, &fn)) != PB_OK ||
            (st = local(g, ti, 1, fn, (uint32_t)f->line, f->func, &t->frames, &t->nframes, &t->cframes, &fr)) !=
                PB_OK)
            return st;
        t = &g->threads[ti];
        prefix = j ? t->cur.path[j - 1] + 1 : 0;
        if ((st = local(g, ti, 2, prefix, fr, f->func, &t->stacks, &t->nstacks, &t->cstacks, &t->cur.path[j])) !=
            PB_OK)
            return st;
    }
    pb_stack_cursor_end(&t->cur, ids, depth);
    r.x = depth ? t->cur.path[depth - 1] : 0;
    r.y = 0;
    r.a = ts;
    r.b = weight;
    return chain_put(g, &t->samples, &r);
}

static pb_status gk_span(pb_sample_sink *self, uint64_t key, uint32_t frame, uint64_t begin, uint64_t end)
{
    pb_gecko *g = (pb_gecko *)self->ctx;
    uint32_t ti;
    pb_status st;
    if ((st = get_thread(g, key, NULL, 0, &ti)) != PB_OK)
        return st;
    if (frame >= g->nframes)
        return pb_fail(g->err, PB_ERR_CORRUPT, 0, "span uses frame id %u, only %zu interned", frame, g->nframes);
    if (end < begin)
        end = begin;
    if (!g->have_span || begin < g->span_lo)
        g->span_lo = begin;
    if (!g->have_span || end > g->span_hi)
        g->span_hi = end;
    g->have_span = 1;
    return marker(g, &g->threads[ti], g->funcs[g->frames[frame].func].name, CAT_SPAN, MK_SPAN, begin, end);
}

/* ---- output ------------------------------------------------------------------ */
/* JSON text through a buffer of our own: the columns are millions of short
 * numbers, too many for a stdio call each */
typedef struct {
    FILE *f;
    size_t n;
    char b[1 << 16];
} g_out;

static void o_flush(g_out *o)
{
    if (o->n)
        fwrite(o->b, 1, o->n, o->f); /* a failed write: ferror() at finish */
    o->n = 0;
}
static void o_lit(g_out *o, const char *p, size_t n)
{
    if (n > sizeof o->b - o->n) {
        o_flush(o);
        if (n > sizeof o->b) {
            fwrite(p, 1, n, o->f);
            return;
        }
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void o_puts(const char *s, g_out *o) { o_lit(o, s, strlen(s)); }
static void o_ch(int c, g_out *o)
{
    if (o->n == sizeof o->b)
        o_flush(o);
    o->b[o->n++] = (char)c;
}
static void o_json(g_out *o, const pb_str *s)
{
    o_flush(o);
    pb_json_str(o->f, s);
}
#define o_printf(o, ...) (o_flush(o), fprintf((o)->f, __VA_ARGS__))

static void put_u64(g_out *o, uint64_t v)
{
    char b[24], *e = b + sizeof b;
    do {
        *--e = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    o_lit(o, e, (size_t)(b + sizeof b - e));
}

/* v / 10^dec as a decimal (trailing zeros of the fraction dropped) */
static void put_fixed(g_out *o, int neg, uint64_t v, unsigned dec)
{
    uint64_t p = 1, frac;
    unsigned k;
    char b[8];
    for (k = 0; k < dec; k++)
        p *= 10;
    if (neg && v)
        o_ch('-', o);
    put_u64(o, v / p);
    frac = v % p;
    if (!frac)
        return;
    for (k = dec; k > 0; k--) {
        b[k - 1] = (char)('0' + frac % 10);
        frac /= 10;
    }
    for (k = dec; k > 0 && b[k - 1] == '0'; k--)
        ;
    o_ch('.', o);
    o_lit(o, b, k);
}

/* a time in ms: (v - base) / 10^dec */
static void put_rel(g_out *o, uint64_t v, uint64_t base, unsigned dec)
{
    if (v >= base)
        put_fixed(o, 0, v - base, dec);
    else
        put_fixed(o, 1, base - v, dec);
}

static pb_str str_of(const char *p, size_t n) { return pb_str_make(p, n, pb_str_wide(p, n)); }

typedef struct {
    g_out *o;
    int col, first;
    uint64_t cum, total, span_ns; /* spread times */
    unsigned weight_ns;
    const g_thread *t;
} walk_ctx;

enum { COL_STACK, COL_TIME, COL_WEIGHT, COL_DATA, COL_NAME, COL_START, COL_END, COL_PHASE, COL_CAT };

static void sep(walk_ctx *w)
{
    if (!w->first)
        o_ch(',', w->o);
    w->first = 0;
}

static void sample_col(pb_gecko *g, void *ctx, const g_rec *r)
{
    walk_ctx *w = (walk_ctx *)ctx;
    sep(w);
    if (w->col == COL_STACK) {
        put_u64(w->o, r->x);
    } else if (w->col == COL_WEIGHT) {
        if (w->weight_ns)
            put_fixed(w->o, 0, r->b, 6);
        else
            put_u64(w->o, r->b);
    } else if (g->have_ts) {
        put_rel(w->o, r->a, g->base_us, 3);
    } else {
        /* spread: the sample's share of the duration, by weight before it (ns -> ms) */
        double t = w->total ? (double)w->span_ns * ((double)w->cum / (double)w->total) : 0;
        put_fixed(w->o, 0, (uint64_t)(t + 0.5), 6);
        w->cum += r->b;
    }
}

static void marker_col(pb_gecko *g, void *ctx, const g_rec *r)
{
    walk_ctx *w = (walk_ctx *)ctx;
    uint64_t base = g->have_ts ? g->base_us * 1000u : g->span_lo;
    sep(w);
    switch (w->col) {
    case COL_DATA: {
        pb_str n = pb_strtab_str(&g->strs, r->x);
        size_t k, l = 0;
        char ty[32];
        if ((r->y >> 8) == MK_SPAN) {
            o_puts("{\"type\":\"Span\",\"name\":", w->o);
            o_json(w->o, &n);
        } else {
            for (k = 0; k < n.len && l < sizeof ty - 1; k++)
                if (n.ptr[k] != ' ')
                    ty[l++] = n.ptr[k];
            o_puts("{\"type\":\"", w->o);
            o_lit(w->o, ty, l);
            o_ch('"', w->o);
        }
        o_puts(",\"duration\":", w->o);
        put_fixed(w->o, 0, r->b > r->a ? r->b - r->a : 0, 6); /* a clock that went back: 0 */
        o_puts(",\"tid\":", w->o);
        n = str_of(w->t->label, strlen(w->t->label));
        o_json(w->o, &n);
        o_ch('}', w->o);
        break;
    }
    case COL_NAME: put_u64(w->o, r->x); break;
    case COL_START: put_rel(w->o, r->a, base, 6); break;
    case COL_END: put_rel(w->o, r->b, base, 6); break;
    case COL_PHASE: o_ch('1', w->o); break;
    default: put_u64(w->o, r->y & 0xff); break;
    }
}

static void put_key(g_out *o, int *first, const char *k)
{
    if (!*first)
        o_ch(',', o);
    *first = 0;
    o_ch('"', o);
    o_puts(k, o);
    o_puts("\":", o);
}

/* a column of n: fn(i) for each, or null when fn is NULL */
static void null_col(g_out *o, int *first, const char *k, size_t n, const char *v)
{
    size_t i;
    put_key(o, first, k);
    o_ch('[', o);
    for (i = 0; i < n; i++) {
        if (i)
            o_ch(',', o);
        o_puts(v, o);
    }
    o_ch(']', o);
}

static void put_int_or_null(g_out *o, int64_t v)
{
    if (v > 0)
        put_u64(o, (uint64_t)v);
    else
        o_puts("null", o);
}

static pb_status write_thread(pb_gecko *g, g_out *o, g_thread *t, size_t ti, g_rec *tmp, uint64_t span_ns)
{
    size_t i;
    int first = 1, c;
    pb_status st;
    walk_ctx w;
    uint32_t lid;
    pb_str nm;
    char buf[64];
    int found = pb_strtab_intern(&g->tlabels, t->label, strlen(t->label), &lid);
    const char *digits = t->label;
    if (found < 0)
        return G_OOM(g);
    o_puts(ti ? ",{\"name\":" : "{\"name\":", o);
    if (found && lid < g->ctname && g->tname[lid]) {
        nm = pb_strtab_str(&g->strs, g->tname[lid] - 1);
    } else {
        snprintf(buf, sizeof buf, "Thread-%s", t->label);
        nm = str_of(buf, strlen(buf));
    }
    o_json(o, &nm);
    o_printf(o, ",\"isMainThread\":%s,\"processStartupTime\":0,\"processShutdownTime\":null,\"registerTime\":0,"
               "\"unregisterTime\":null,\"pausedRanges\":[],\"pid\":\"%u\",\"tid\":",
            t->main_thread ? "true" : "false", t->pid);
    while (*digits >= '0' && *digits <= '9')
        digits++;
    if (!*digits && *t->label && strlen(t->label) < 16 && (t->label[0] != '0' || !t->label[1])) {
        /* a JSON number: digits, no leading zero ("070" stays a string) */
        o_puts(t->label, o);
    } else {
        nm = str_of(t->label, strlen(t->label));
        o_json(o, &nm);
    }
    o_puts(",\"processType\":\"default\",\"processName\":", o);
    nm = str_of(g->title, strlen(g->title));
    o_json(o, &nm);
    /* samples */
    o_puts(",\"samples\":{", o);
    memset(&w, 0, sizeof w);
    w.o = o;
    w.t = t;
    w.total = t->total;
    w.span_ns = span_ns;
    w.weight_ns = (unsigned)g->facts.weight_ns;
    for (c = COL_STACK; c <= COL_WEIGHT; c++) {
        if (c == COL_WEIGHT && g->all_one)
            break;
        put_key(o, &first, c == COL_STACK ? "stack" : c == COL_TIME ? "time" : "weight");
        o_ch('[', o);
        w.col = c;
        w.first = 1;
        w.cum = 0;
        if ((st = chain_walk(g, &t->samples, tmp, sample_col, &w)) != PB_OK)
            return st;
        o_ch(']', o);
    }
    if (g->all_one)
        o_puts(",\"weight\":null", o);
    null_col(o, &first, "eventDelay", t->samples.count, "null");
    o_printf(o, ",\"weightType\":\"%s\",\"length\":%llu}", g->facts.weight_ns && !g->all_one ? "tracing-ms" : "samples",
            (unsigned long long)t->samples.count);
    /* stackTable: frame, category, subcategory, prefix */
    o_puts(",\"stackTable\":{\"frame\":[", o);
    for (i = 0; i < t->nstacks; i++) {
        if (i)
            o_ch(',', o);
        put_u64(o, t->stacks[i].b);
    }
    o_puts("],\"category\":[", o);
    for (i = 0; i < t->nstacks; i++) {
        o_puts(i ? "," : "", o);
        put_u64(o, g->funcs[t->stacks[i].c].native ? CAT_NATIVE : CAT_CODE);
    }
    o_ch(']', o);
    first = 0;
    null_col(o, &first, "subcategory", t->nstacks, "0");
    o_puts(",\"prefix\":[", o);
    for (i = 0; i < t->nstacks; i++) {
        o_puts(i ? "," : "", o);
        if (t->stacks[i].a)
            put_u64(o, t->stacks[i].a - 1);
        else
            o_puts("null", o);
    }
    o_printf(o, "],\"length\":%llu}", (unsigned long long)t->nstacks);
    /* frameTable */
    o_puts(",\"frameTable\":{", o);
    first = 1;
    null_col(o, &first, "address", t->nframes, "-1");
    o_puts(",\"category\":[", o);
    for (i = 0; i < t->nframes; i++) {
        o_puts(i ? "," : "", o);
        put_u64(o, g->funcs[t->frames[i].c].native ? CAT_NATIVE : CAT_CODE);
    }
    o_ch(']', o);
    null_col(o, &first, "subcategory", t->nframes, "0");
    o_puts(",\"func\":[", o);
    for (i = 0; i < t->nframes; i++) {
        o_puts(i ? "," : "", o);
        put_u64(o, t->frames[i].a);
    }
    o_ch(']', o);
    null_col(o, &first, "innerWindowID", t->nframes, "null");
    null_col(o, &first, "implementation", t->nframes, "null");
    null_col(o, &first, "optimizations", t->nframes, "null");
    o_puts(",\"line\":[", o);
    for (i = 0; i < t->nframes; i++) {
        o_puts(i ? "," : "", o);
        put_int_or_null(o, (int32_t)t->frames[i].b);
    }
    o_ch(']', o);
    null_col(o, &first, "column", t->nframes, "null");
    null_col(o, &first, "inlineDepth", t->nframes, "0");
    null_col(o, &first, "nativeSymbol", t->nframes, "null");
    o_printf(o, ",\"length\":%llu}", (unsigned long long)t->nframes);
    /* funcTable */
    o_puts(",\"funcTable\":{\"name\":[", o);
    for (i = 0; i < t->nfuncs; i++) {
        o_puts(i ? "," : "", o);
        put_u64(o, g->funcs[t->funcs[i].a].name);
    }
    o_puts("],\"isJS\":[", o);
    for (i = 0; i < t->nfuncs; i++)
        o_puts(i ? (g->funcs[t->funcs[i].a].native ? ",false" : ",true")
                : (g->funcs[t->funcs[i].a].native ? "false" : "true"),
              o);
    o_puts("],\"relevantForJS\":[", o);
    for (i = 0; i < t->nfuncs; i++)
        o_puts(i ? ",false" : "false", o);
    first = 0;
    o_ch(']', o);
    null_col(o, &first, "resource", t->nfuncs, "-1");
    o_puts(",\"fileName\":[", o);
    for (i = 0; i < t->nfuncs; i++) {
        const g_func *f = &g->funcs[t->funcs[i].a];
        o_puts(i ? "," : "", o);
        if (pb_strtab_len(&g->strs, f->file))
            put_u64(o, f->file);
        else
            o_puts("null", o);
    }
    o_puts("],\"lineNumber\":[", o);
    for (i = 0; i < t->nfuncs; i++) {
        o_puts(i ? "," : "", o);
        put_int_or_null(o, g->funcs[t->funcs[i].a].line);
    }
    o_ch(']', o);
    null_col(o, &first, "columnNumber", t->nfuncs, "null");
    o_printf(o, ",\"length\":%llu}", (unsigned long long)t->nfuncs);
    o_puts(",\"resourceTable\":{\"lib\":[],\"name\":[],\"host\":[],\"type\":[],\"length\":0},"
          "\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],\"length\":0}",
          o);
    /* markers: data, name, startTime, endTime, phase, category */
    o_puts(",\"markers\":{", o);
    first = 1;
    for (c = COL_DATA; c <= COL_CAT; c++) {
        static const char *const nms[] = {"data", "name", "startTime", "endTime", "phase", "category"};
        put_key(o, &first, nms[c - COL_DATA]);
        o_ch('[', o);
        w.col = c;
        w.first = 1;
        if ((st = chain_walk(g, &t->markers, tmp, marker_col, &w)) != PB_OK)
            return st;
        o_ch(']', o);
    }
    o_printf(o, ",\"length\":%llu}}", (unsigned long long)t->markers.count);
    return PB_OK;
}

static pb_status finish_out(pb_gecko *g, g_out *o);
static pb_status gk_finish(pb_sample_sink *self)
{
    pb_gecko *g = (pb_gecko *)self->ctx;
    g_out *o;
    pb_status st;
    if (!(o = (g_out *)malloc(sizeof *o)))
        return G_OOM(g);
    o->f = g->out;
    o->n = 0;
    st = finish_out(g, o);
    o_flush(o);
    free(o);
    if (st != PB_OK)
        return st;
    if (ferror(g->out) || fflush(g->out) != 0)
        return pb_fail_write(g->err, "the gecko file", errno);
    return PB_OK;
}

static pb_status finish_out(pb_gecko *g, g_out *o)
{
    size_t i, k;
    uint64_t span_ns = 0, interval_ns = g->facts.interval_ns, maxw = 0;
    const char *how;
    g_rec *tmp;
    pb_status st;
    /* CPython closes every open state at the last sample's time */
    for (i = 0; i < g->nthreads; i++)
        for (k = 0; k < N_ST; k++)
            if ((st = close_state(g, &g->threads[i], (unsigned)k, g->last_ts_us * 1000u)) != PB_OK)
                return st;
    /* spread times: over the spans' extent, else the recorded duration, else
     * the sampled time (weight x interval), else 1 ms a sample */
    for (i = 0; i < g->nthreads; i++)
        if (g->threads[i].total > maxw)
            maxw = g->threads[i].total;
    if (g->have_ts)
        how = "recorded";
    else if (g->have_span)
        span_ns = g->span_hi - g->span_lo, how = "spread over the spans' extent (the source records no sample times)";
    else if (g->facts.duration_ns)
        span_ns = g->facts.duration_ns, how = "spread over the recorded duration (the source records no sample times)";
    else if (g->facts.weight_ns)
        span_ns = maxw, how = "spread over the sampled time (the source records no sample times)";
    else if (interval_ns && maxw <= UINT64_MAX / interval_ns)
        span_ns = maxw * interval_ns,
        how = "spread over samples x interval (the source records no sample times nor duration)";
    else
        span_ns = maxw * 1000000u, how = "spread 1 ms a sample (the source records no sample times, duration nor interval)";
    o_puts("{\"meta\":{\"interval\":", o);
    if (interval_ns)
        put_fixed(o, 0, interval_ns, 6);
    else
        o_ch('1', o);
    o_puts(",\"startTime\":", o);
    put_u64(o, g->facts.basetime * 1000u);
    o_printf(o, ",\"abi\":\"\",\"misc\":\"\",\"oscpu\":\"\",\"platform\":\"\",\"processType\":0,\"categories\":%s,"
               "\"stackwalk\":0,\"toolkit\":\"\",\"version\":32,\"preprocessedProfileVersion\":57,\"appBuildID\":\"\","
               "\"CPUName\":\"\",\"product\":",
            cat_json);
    {
        pb_str t = str_of(g->title, strlen(g->title));
        o_json(o, &t);
    }
    o_puts(",\"symbolicated\":true,\"markerSchema\":[],\"importedFrom\":", o);
    {
        char from[128];
        pb_str t;
        snprintf(from, sizeof from, "Devel::ProfileBridge " PB_VERSION_STRING "%s%s%s", *g->source ? " (" : "",
                 g->source, *g->source ? ")" : "");
        t = str_of(from, strlen(from));
        o_json(o, &t);
    }
    o_puts(",\"extensions\":{\"id\":[],\"name\":[],\"baseURL\":[],\"length\":0},\"profbridge\":{\"sampleTimes\":\"",
          o);
    o_puts(how, o);
    o_puts("\",\"timeOriginNs\":", o);
    put_u64(o, g->have_ts ? g->base_us * 1000u : g->have_span ? g->span_lo : 0);
    o_puts("}},\"libs\":[],\"threads\":[", o);
    if (!(tmp = (g_rec *)malloc(BLK * sizeof *tmp)))
        return G_OOM(g);
    for (i = k = 0; i < g->nthreads; i++) {
        g_thread *t = &g->threads[i];
        if (!t->samples.count && !t->markers.count)
            continue;
        if ((st = write_thread(g, o, t, k++, tmp, span_ns)) != PB_OK) {
            free(tmp);
            return st;
        }
    }
    free(tmp);
    o_puts("],\"pages\":[],\"shared\":{\"stringArray\":[", o);
    for (i = 0; i < g->strs.n; i++) {
        pb_str s = pb_strtab_str(&g->strs, (uint32_t)i);
        if (i)
            o_ch(',', o);
        o_json(o, &s);
    }
    o_puts("],\"sources\":{\"length\":0,\"uuid\":[],\"filename\":[]}}}\n", o);
    return PB_OK;
}

static const pb_sample_sink sink_calls = {.attribute = gk_attribute, .frame = gk_frame, .thread = gk_thread,
    .sample = gk_sample, .note = pb_sample_note_ignore, .finish = gk_finish, .span = gk_span,
    .sample_tags = gk_sample_tags};

pb_gecko *pb_gecko_new(FILE *out, const char *name, pb_error *err)
{
    pb_gecko *g = (pb_gecko *)calloc(1, sizeof *g);
    if (!g || !(g->title = pb_memdup0(name ? name : "profile", strlen(name ? name : "profile")))) {
        free(g);
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    g->out = out;
    g->err = err;
    pb_tick_spool_init(&g->spool, err, "the gecko writer's spool", "out of memory while building the gecko file");
    g->all_one = 1;
    pb_sample_sink_init(&g->ss, &sink_calls, g, err, NULL);
    g->ss.each_tick = 1;
    return g;
}

pb_sample_sink *pb_gecko_sample_sink(pb_gecko *g) { return &g->ss; }

static void chain_free(g_chain *c) { pb_tick_chain_free(c); }

void pb_gecko_free(pb_gecko *g)
{
    size_t i;
    if (!g)
        return;
    for (i = 0; i < g->nthreads; i++) {
        g_thread *t = &g->threads[i];
        chain_free(&t->samples);
        chain_free(&t->markers);
        pb_stack_cursor_free(&t->cur);
        PB_FREE_ALL(t->funcs, t->frames, t->stacks);
    }
    pb_tick_spool_close(&g->spool);
    pb_strtab_free(&g->strs);
    pb_strtab_free(&g->tlabels);
    PB_FREE_ALL(g->funcs, g->frames, g->threads, g->keys, g->namebuf, g->title, g->tname);
    PB_INDEX_FREE_ALL(&g->fnix, &g->tix, &g->kix);
    free(g);
}
