/* write_gecko.c - stack samples -> Firefox Profiler JSON (see write_gecko.h).
 *
 * Names here: gk_ = the writer's sample-sink callbacks, g_out = the buffered JSON output
 * (json_out.h) with o_puts and o_printf, g_ = this writer's types, h_ = hash callbacks of a
 * pb_index.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write_gecko.h"
#include "fold_samples.h"
#include "model.h"
#include "json_lines.h"
#include "json_out.h"
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

/* a CPython sampler's thread states, as CPython's collector names them (its
 * _finalize_markers order) */
enum { ST_HAS_GIL, ST_NO_GIL, ST_ON_CPU, ST_OFF_CPU, ST_PY, ST_NATIVE, ST_GIL_WAIT, ST_GC, ST_EXC, ST_NO_EXC, N_ST };
static const char *const st_name[N_ST] = {"Has GIL",     "No GIL",          "On CPU",        "Off CPU",
                                          "Python Code", "Native Code",     "Waiting for GIL", "GC Collecting",
                                          "Has Exception", "No Exception"};
static const unsigned char st_cat[N_ST] = {CAT_GIL,       CAT_GIL,       CAT_CPU, CAT_CPU,       CAT_CODE_TYPE,
                                           CAT_CODE_TYPE, CAT_GIL,       CAT_GC,  CAT_EXCEPTION, CAT_EXCEPTION};

/* a spooled record (tick_spool.h): a sample (x stack, y clock, a ts µs, b
 * weight) or a marker (x its name's index in the thread's mnames, y category
 * | kind << 8 | clock << 16, a begin ns, b end ns); clock: the g_clock its
 * times are on */
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
    l_row *funcs, *frames, *stacks, *mnames;
    size_t nfuncs, cfuncs, nframes, cframes, nstacks, cstacks, nmnames, cmnames;
    pb_stack_cursor cur;
    g_chain samples, markers;
    uint64_t total; /* weight */
    uint32_t cclk;  /* 1 + the clock of its last sample or span (0: none yet), and its weight on it */
    uint64_t ctot;
    /* a CPython sampler's status state (CPython's collector): start of each open state (ns) */
    int inited;
    unsigned char open[N_ST];
    uint64_t start[N_ST];
} g_thread;

/* A source's clock.  A merge's inputs each have their own (ATTRIBUTE
 * merge_input, merge.h): each input's times count from its own origin, as in
 * its own conversion. */
typedef struct {
    int used, have_ts, have_base, have_span;
    uint64_t base_us, last_ts_us, span_lo, span_hi;
    uint64_t maxw;    /* the largest weight of a thread on it */
    uint64_t span_ns; /* finish: the spread samples' extent, and how their times were found */
    const char *how;
} g_clock;
#define G_MAX_CLOCKS 0xffffu /* a marker record's clock field */

/* a per-thread interning entry: kind 0 func, 1 frame, 2 stack, 3 marker name */
typedef struct {
    uint32_t thread, a, b, val;
    unsigned char kind;
} l_key;

typedef struct {
    pb_stack_writer w; /* first (samples.h) */
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
    int all_one;
    g_clock *clk; /* clk[nclk - 1]: the current one */
    size_t nclk, cclk;
    uint32_t *touched; /* the threads with a sample or span on the current clock */
    size_t ntouched, ctouched;
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
} pb_gecko;

#define G_OOM(g) pb_fail((g)->w.err, PB_ERR_LIMIT, 0, "out of memory while building the gecko file")
#define CLK(g) (&(g)->clk[(g)->nclk - 1])

static uint32_t h_func2(uint32_t name, uint32_t file) { return pb_mix64(((uint64_t)name << 32) | file); }
static uint32_t gecko_h_func(const void *c, uint32_t i)
{
    const g_func *f = &((const pb_gecko *)c)->funcs[i];
    return h_func2(f->name, f->file);
}
static uint32_t gecko_h_thread(const void *c, uint32_t i) { return pb_mix64(((const pb_gecko *)c)->threads[i].key); }
static uint32_t h_key2(unsigned kind, uint32_t t, uint32_t a, uint32_t b)
{
    return pb_mix64(((uint64_t)t << 34) ^ ((uint64_t)kind << 32) ^ a) ^ pb_mix64(((uint64_t)b << 8) | kind);
}
static uint32_t gecko_h_key(const void *c, uint32_t i)
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
static pb_status gecko_intern(pb_gecko *g, const char *p, size_t n, uint32_t *id)
{
    return pb_strtab_intern(&g->strs, p ? p : "", n, id) < 0 ? G_OOM(g) : PB_OK;
}

static pb_status close_states(pb_gecko *g, g_thread *t, uint64_t now);

/* a merge's next input begins (merge.h): the threads it leaves end their
 * states at its last sample, as at the end of its own conversion; its
 * successor's times get a clock of their own */
static pb_status next_clock(pb_gecko *g)
{
    size_t i;
    pb_status st;
    if (!CLK(g)->used)
        return PB_OK;
    for (i = 0; i < g->ntouched; i++) {
        g_thread *t = &g->threads[g->touched[i]];
        if ((st = close_states(g, t, CLK(g)->last_ts_us * 1000u)) != PB_OK)
            return st;
        t->inited = 0;
    }
    g->ntouched = 0;
    if (g->nclk >= G_MAX_CLOCKS)
        return pb_fail(g->w.err, PB_ERR_LIMIT, 0, "more than %u merged inputs in one gecko file", G_MAX_CLOCKS);
    if (pb_grow((void **)&g->clk, &g->cclk, g->nclk + 1, sizeof *g->clk) < 0)
        return G_OOM(g);
    memset(&g->clk[g->nclk++], 0, sizeof *g->clk);
    return PB_OK;
}

/* thread ti has a sample or span on the current clock */
static pb_status touch(pb_gecko *g, uint32_t ti)
{
    g_thread *t = &g->threads[ti];
    if (t->cclk == g->nclk)
        return PB_OK;
    t->cclk = (uint32_t)g->nclk;
    t->ctot = 0;
    if (pb_grow((void **)&g->touched, &g->ctouched, g->ntouched + 1, sizeof *g->touched) < 0)
        return G_OOM(g);
    g->touched[g->ntouched++] = ti;
    return PB_OK;
}

static pb_status gk_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    pb_gecko *g = (pb_gecko *)self->ctx;
    size_t kl = strlen(key), d;
    uint32_t lid, nid;
    if (!strcmp(key, "source_format"))
        pb_sample_attr_text(v, g->source, sizeof g->source);
    if (!strcmp(key, "merge_input"))
        return next_clock(g);
    if (pb_sample_facts_take(&g->facts, self, key, v))
        return PB_OK;
    for (d = 7; d < kl && key[d] >= '0' && key[d] <= '9'; d++)
        ;
    if (kl > 12 && !strncmp(key, "thread_", 7) && d > 7 && d < 24 + 7 && !strcmp(key + d, "_name") && v.len) {
        if (pb_strtab_intern(&g->tlabels, key + 7, d - 7, &lid) < 0 || gecko_intern(g, v.ptr, v.len, &nid) != PB_OK ||
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
    if (gecko_intern(g, g->namebuf, need - 1, &name) != PB_OK || gecko_intern(g, fp, fr->file.len, &file) != PB_OK ||
        pb_index_reserve(&g->fnix, g->nfuncs, gecko_h_func, g) < 0)
        return G_OOM(g);
    PB_INDEX_FIND(&g->fnix, h_func2(name, file), j, i, g->funcs[i].name == name && g->funcs[i].file == file);
    if (i == PB_INDEX_NONE) {
        g_func *fn;
        if (!(fn = PB_GROW_ID(g->funcs, g->cfuncs, g->nfuncs)))
            return G_OOM(g);
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
    if (!(f = PB_GROW_ID(g->frames, g->cframes, g->nframes)))
        return G_OOM(g);
    f->func = i;
    f->line = fr->line > 0 ? fr->line : 0;
    f->gc = need - 1 == 4 && !memcmp(g->namebuf, "<GC>", 4);
    *id = (uint32_t)g->nframes++;
    return PB_OK;
}

static pb_status gecko_get_thread(pb_gecko *g, uint64_t key, const char *label, uint32_t pid, uint32_t *ti)
{
    size_t j;
    uint32_t i;
    g_thread *t;
    if (!label && g->have_last && g->last_key == key) {
        *ti = g->last_ti;
        return PB_OK;
    }
    if (pb_index_reserve(&g->tix, g->nthreads, gecko_h_thread, g) < 0)
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
    return gecko_get_thread((pb_gecko *)self->ctx, key, label ? label : "", pid, &ti);
}

/* a thread's local row of kind for (a, b): found or appended to rows */
static pb_status local(pb_gecko *g, uint32_t ti, unsigned kind, uint32_t a, uint32_t b, uint32_t c, l_row **rows,
                       size_t *n, size_t *cap, uint32_t *out)
{
    size_t j;
    uint32_t i, h = h_key2(kind, ti, a, b);
    if (pb_index_reserve(&g->kix, g->nkeys, gecko_h_key, g) < 0)
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

/* a marker: its name gets the thread's own string index (a raw Gecko thread
 * has its own stringTable: its functions' locations, then its marker names),
 * kept in the record's x (the thread's mnames row holds the name); y holds
 * its category, kind and clock */
static pb_status marker(pb_gecko *g, g_thread *t, uint32_t name, unsigned cat, unsigned kind, uint64_t b, uint64_t e)
{
    g_rec r;
    uint32_t ti = (uint32_t)(t - g->threads), loc;
    pb_status st;
    if ((st = local(g, ti, 3, name, 0, 0, &t->mnames, &t->nmnames, &t->cmnames, &loc)) != PB_OK)
        return st;
    r.x = loc;
    r.y = cat | kind << 8 | (uint32_t)(g->nclk - 1) << 16;
    r.a = b;
    r.b = e;
    return chain_put(g, &t->markers, &r);
}

static void open_state(g_thread *t, unsigned s, uint64_t now)
{
    if (!t->open[s]) {
        t->open[s] = 1;
        t->start[s] = now;
    }
}

static pb_status close_state(pb_gecko *g, g_thread *t, unsigned s, uint64_t now)
{
    if (!t->open[s])
        return PB_OK;
    t->open[s] = 0;
    return marker(g, t, g->st_sid[s], st_cat[s], MK_STATE, t->start[s], now);
}

/* state s opens (cond) or closes at now */
static pb_status set_state(pb_gecko *g, g_thread *t, int cond, unsigned s, uint64_t now)
{
    if (!cond)
        return close_state(g, t, s, now);
    open_state(t, s, now);
    return PB_OK;
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
    open_state(t, on, now);
    return close_state(g, t, off, now);
}

/* CPython closes every open state at the last sample's time */
static pb_status close_states(pb_gecko *g, g_thread *t, uint64_t now)
{
    unsigned k;
    pb_status st;
    for (k = 0; k < N_ST; k++)
        if ((st = close_state(g, t, k, now)) != PB_OK)
            return st;
    return PB_OK;
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
            if (gecko_intern(g, st_name[k], strlen(st_name[k]), &g->st_sid[k]) != PB_OK)
                return g->w.err->status;
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
    if ((st = set_state(g, t, req, ST_GIL_WAIT, now)) != PB_OK || (st = track(g, t, exc, ST_EXC, ST_NO_EXC, now)) != PB_OK)
        return st;
    for (d = 0; d < depth && !gc; d++)
        gc = ids[d] < g->nframes && g->frames[ids[d]].gc;
    if ((st = set_state(g, t, gc, ST_GC, now)) != PB_OK)
        return st;
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
    if (!status.ptr)
        return PB_OK; /* the source records no thread state (samples.h) */
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
    g_clock *c = CLK(g);
    int status = g->have_status;
    g->have_status = 0;
    if ((st = gecko_get_thread(g, key, NULL, 0, &ti)) != PB_OK)
        return st;
    if (!weight)
        return PB_OK;
    if ((st = pb_sample_noframe(self, &ids, &depth)) != PB_OK)
        return st;
    t = &g->threads[ti];
    /* the first sample's time is the origin (as CPython's replay takes it);
     * a 0 is a time only when another sample has one */
    c->used = 1;
    if (!c->have_base) {
        c->have_base = 1;
        c->base_us = ts;
    }
    if (ts)
        c->have_ts = 1;
    c->last_ts_us = ts;
    if ((st = touch(g, ti)) != PB_OK)
        return st;
    t = &g->threads[ti];
    t->ctot = t->ctot + weight < t->ctot ? UINT64_MAX : t->ctot + weight;
    if (t->ctot > c->maxw)
        c->maxw = t->ctot;
    if (status && (st = status_markers(g, t, ids, depth, ts * 1000u)) != PB_OK)
        return st;
    if ((st = pb_checked_add(g->w.err, &t->total, weight, "a thread's sample weight", "")) != PB_OK)
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
            return pb_fail(g->w.err, PB_ERR_CORRUPT, 0, "sample uses frame id %u, only %zu interned", id, g->nframes);
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
    r.y = (uint32_t)(g->nclk - 1);
    r.a = ts;
    r.b = weight;
    return chain_put(g, &t->samples, &r);
}

static pb_status gk_span(pb_sample_sink *self, uint64_t key, uint32_t frame, uint64_t begin, uint64_t end)
{
    pb_gecko *g = (pb_gecko *)self->ctx;
    uint32_t ti;
    pb_status st;
    g_clock *c = CLK(g);
    if ((st = gecko_get_thread(g, key, NULL, 0, &ti)) != PB_OK)
        return st;
    if (frame >= g->nframes)
        return pb_fail(g->w.err, PB_ERR_CORRUPT, 0, "span uses frame id %u, only %zu interned", frame, g->nframes);
    if (end < begin)
        end = begin;
    if (!c->have_span || begin < c->span_lo)
        c->span_lo = begin;
    if (!c->have_span || end > c->span_hi)
        c->span_hi = end;
    c->have_span = c->used = 1;
    if ((st = touch(g, ti)) != PB_OK)
        return st;
    return marker(g, &g->threads[ti], g->funcs[g->frames[frame].func].name, CAT_SPAN, MK_SPAN, begin, end);
}

/* ---- output ------------------------------------------------------------------ */
/* JSON text through a buffer of our own (json_out.h) */
typedef pb_jout g_out;
static void o_puts(const char *s, g_out *o) { pb_jout_lit(o, s, strlen(s)); }
#define o_printf(o, ...) (pb_jout_flush(o), fprintf((o)->f, __VA_ARGS__))

/* v / 10^dec as a decimal (trailing zeros of the fraction dropped) */
static void put_fixed(g_out *o, int neg, uint64_t v, unsigned dec)
{
    uint64_t p = 1, frac;
    unsigned k;
    char b[8];
    for (k = 0; k < dec; k++)
        p *= 10;
    if (neg && v)
        pb_jout_ch(o, '-');
    pb_jout_u64(o, v / p);
    frac = v % p;
    if (!frac)
        return;
    for (k = dec; k > 0; k--) {
        b[k - 1] = (char)('0' + frac % 10);
        frac /= 10;
    }
    for (k = dec; k > 0 && b[k - 1] == '0'; k--)
        ;
    pb_jout_ch(o, '.');
    pb_jout_lit(o, b, k);
}

/* a time in ms: (v - base) / 10^dec */
static void put_rel(g_out *o, uint64_t v, uint64_t base, unsigned dec)
{
    if (v >= base)
        put_fixed(o, 0, v - base, dec);
    else
        put_fixed(o, 1, base - v, dec);
}

static pb_str gecko_str_of(const char *p, size_t n) { return pb_str_make(p, n, pb_str_wide(p, n)); }

typedef struct {
    g_out *o;
    int first, have_prev;
    uint64_t cum, total; /* spread times */
    int64_t prev, prev2; /* the last two times written (µs after their clock's origin) */
    const g_clock *last; /* the clock of the last sample written */
    unsigned weight_ns;
    int weights;
    const g_thread *t;
} walk_ctx;

static void sep(walk_ctx *w)
{
    if (!w->first)
        pb_jout_ch(w->o, ',');
    w->first = 0;
}

/* a sample row: [stack, time] or [stack, time, null, weight] (samples.schema) */
static void sample_row(pb_gecko *g, void *ctx, const g_rec *r)
{
    walk_ctx *w = (walk_ctx *)ctx;
    const g_clock *c = &g->clk[r->y];
    sep(w);
    pb_jout_ch(w->o, '[');
    pb_jout_u64(w->o, r->x);
    pb_jout_ch(w->o, ',');
    if (c->have_ts) {
        /* a time before the thread's previous one is written at that one
         * (both viewers need a thread's samples in time order) */
        int64_t ts = (int64_t)r->a - (int64_t)c->base_us;
        if (w->have_prev && ts < w->prev)
            ts = w->prev;
        put_fixed(w->o, ts < 0, (uint64_t)(ts < 0 ? -ts : ts), 3);
        w->prev2 = w->have_prev ? w->prev : ts;
        w->prev = ts;
        w->have_prev = 1;
        w->last = c;
    } else {
        /* spread: the sample's share of the duration, by weight before it (ns -> ms) */
        double t = w->total ? (double)c->span_ns * ((double)w->cum / (double)w->total) : 0;
        put_fixed(w->o, 0, (uint64_t)(t + 0.5), 6);
        w->cum += r->b;
        w->last = c;
    }
    if (w->weights) {
        o_puts(",null,", w->o);
        if (w->weight_ns)
            put_fixed(w->o, 0, r->b, 6);
        else
            pb_jout_u64(w->o, r->b);
    }
    pb_jout_ch(w->o, ']');
}

/* a marker row: [name, startTime, endTime, phase 1 (interval), category, data] */
static void marker_row(pb_gecko *g, void *ctx, const g_rec *r)
{
    walk_ctx *w = (walk_ctx *)ctx;
    const g_clock *c = &g->clk[r->y >> 16];
    uint64_t base = c->have_ts ? c->base_us * 1000u : c->span_lo;
    pb_str n = pb_strtab_str(&g->strs, w->t->mnames[r->x].a);
    size_t k, l = 0;
    char ty[32];
    sep(w);
    pb_jout_ch(w->o, '[');
    pb_jout_u64(w->o, (uint64_t)(w->t->nfuncs + r->x));
    pb_jout_ch(w->o, ',');
    put_rel(w->o, r->a, base, 6);
    pb_jout_ch(w->o, ',');
    put_rel(w->o, r->b, base, 6);
    o_puts(",1,", w->o);
    pb_jout_u64(w->o, r->y & 0xff);
    if (((r->y >> 8) & 0xff) == MK_SPAN) {
        o_puts(",{\"type\":\"Span\",\"name\":", w->o);
        pb_jout_str(w->o, &n);
    } else {
        for (k = 0; k < n.len && l < sizeof ty - 1; k++)
            if (n.ptr[k] != ' ')
                ty[l++] = n.ptr[k];
        o_puts(",{\"type\":\"", w->o);
        pb_jout_lit(w->o, ty, l);
        pb_jout_ch(w->o, '"');
    }
    o_puts(",\"duration\":", w->o);
    put_fixed(w->o, 0, r->b > r->a ? r->b - r->a : 0, 6); /* a clock that went back: 0 */
    o_puts(",\"tid\":", w->o);
    n = gecko_str_of(w->t->label, strlen(w->t->label));
    pb_jout_str(w->o, &n);
    o_puts("}]", w->o);
}

static void put_int_or_null(g_out *o, int64_t v)
{
    if (v > 0)
        pb_jout_u64(o, (uint64_t)v);
    else
        o_puts("null", o);
}

/* a function's location string, one per function (its first line, not the
 * frame's), as the Firefox Profiler's importer parses a JS function ("name
 * (file:line)") or, without a line, a C++ one ("name (in file)": the file as
 * its library; "name ((eval 1))" for a file in parentheses, which the "in"
 * would cut in the speedscope app's reading), and as the speedscope app keeps a frame (name,
 * then a file in parentheses); "name ()" without a file */
static pb_status put_location(pb_gecko *g, g_out *o, const g_func *f)
{
    pb_str nm = pb_strtab_str(&g->strs, f->name), fl = pb_strtab_str(&g->strs, f->file), s;
    char num[16];
    size_t need = nm.len + fl.len + sizeof num + 4, n;
    if (pb_grow((void **)&g->namebuf, &g->cnamebuf, need, 1) < 0)
        return G_OOM(g);
    memcpy(g->namebuf, nm.ptr, nm.len);
    n = nm.len;
    g->namebuf[n++] = ' ';
    g->namebuf[n++] = '(';
    if (fl.len && f->line <= 0 && !memchr(fl.ptr, '(', fl.len) && !memchr(fl.ptr, ')', fl.len)) {
        memcpy(g->namebuf + n, "in ", 3);
        n += 3;
    }
    memcpy(g->namebuf + n, fl.ptr, fl.len);
    n += fl.len;
    if (fl.len && f->line > 0)
        n += (size_t)snprintf(g->namebuf + n, sizeof num, ":%ld", (long)f->line);
    g->namebuf[n++] = ')';
    s = gecko_str_of(g->namebuf, n);
    pb_jout_str(o, &s);
    return PB_OK;
}

/* a thread in the raw Gecko profile format; *end_ns: its samples' end (ns
 * after the time origin, for the wrapper's duration) */
/* Over 80 lines, kept whole: a thread's tables (samples, markers, stacks, frames, strings) written
 * in the order the format lists them. */
static pb_status write_thread(pb_gecko *g, g_out *o, g_thread *t, size_t ti, g_rec *tmp, int64_t *end_ns)
{
    size_t i;
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
        nm = gecko_str_of(buf, strlen(buf));
    }
    pb_jout_str(o, &nm);
    o_printf(o, ",\"processType\":\"default\",\"registerTime\":0,\"unregisterTime\":null,\"pid\":%u,\"tid\":", t->pid);
    while (*digits >= '0' && *digits <= '9')
        digits++;
    if (!*digits && *t->label && strlen(t->label) < 16 && (t->label[0] != '0' || !t->label[1])) {
        /* a JSON number: digits, no leading zero ("070" stays a string) */
        o_puts(t->label, o);
    } else {
        nm = gecko_str_of(t->label, strlen(t->label));
        pb_jout_str(o, &nm);
    }
    o_puts(",\"processName\":", o);
    nm = gecko_str_of(g->w.title, strlen(g->w.title));
    pb_jout_str(o, &nm);
    /* samples, then one of no stack where the last one ends (the speedscope app
     * closes the last sample's frames there) */
    memset(&w, 0, sizeof w);
    w.o = o;
    w.t = t;
    w.total = t->total;
    w.weight_ns = (unsigned)g->facts.weight_ns;
    w.weights = !g->all_one;
    w.first = 1;
    o_printf(o, ",\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2%s},\"weightType\":\"%s\",\"data\":[",
             w.weights ? ",\"weight\":3" : "", g->facts.weight_ns && w.weights ? "tracing-ms" : "samples");
    if ((st = chain_walk(g, &t->samples, tmp, sample_row, &w)) != PB_OK)
        return st;
    *end_ns = 0;
    if (t->samples.count) {
        if (w.last->have_ts) {
            int64_t dur = g->facts.interval_ns ? (int64_t)g->facts.interval_ns : (w.prev - w.prev2) * 1000;
            *end_ns = w.prev * 1000 + dur;
        } else {
            *end_ns = (int64_t)w.last->span_ns;
        }
        o_puts(",[null,", o);
        put_fixed(o, *end_ns < 0, (uint64_t)(*end_ns < 0 ? -*end_ns : *end_ns), 6);
        pb_jout_ch(o, ']');
    }
    o_puts("]}", o);
    /* markers */
    o_puts(",\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,\"category\":4,\"data\":5},"
           "\"data\":[",
           o);
    w.first = 1;
    if ((st = chain_walk(g, &t->markers, tmp, marker_row, &w)) != PB_OK)
        return st;
    /* stackTable: [prefix, frame] */
    o_puts("]},\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[", o);
    for (i = 0; i < t->nstacks; i++) {
        o_puts(i ? ",[" : "[", o);
        if (t->stacks[i].a)
            pb_jout_u64(o, t->stacks[i].a - 1);
        else
            o_puts("null", o);
        pb_jout_ch(o, ',');
        pb_jout_u64(o, t->stacks[i].b);
        pb_jout_ch(o, ']');
    }
    /* frameTable: the location is the thread's string of its function */
    o_puts("]},\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,\"innerWindowID\":2,\"implementation\":3,"
           "\"line\":4,\"column\":5,\"category\":6,\"subcategory\":7},\"data\":[",
           o);
    for (i = 0; i < t->nframes; i++) {
        o_puts(i ? ",[" : "[", o);
        pb_jout_u64(o, t->frames[i].a);
        o_puts(",false,null,null,", o);
        put_int_or_null(o, (int32_t)t->frames[i].b);
        o_puts(",null,", o);
        pb_jout_u64(o, g->funcs[t->frames[i].c].native ? CAT_NATIVE : CAT_CODE);
        o_puts(",0]", o);
    }
    /* stringTable: the functions' locations, then the marker names */
    o_puts("]},\"stringTable\":[", o);
    for (i = 0; i < t->nfuncs; i++) {
        if (i)
            pb_jout_ch(o, ',');
        if ((st = put_location(g, o, &g->funcs[t->funcs[i].a])) != PB_OK)
            return st;
    }
    for (i = 0; i < t->nmnames; i++) {
        pb_str s = pb_strtab_str(&g->strs, t->mnames[i].a);
        if (i || t->nfuncs)
            pb_jout_ch(o, ',');
        pb_jout_str(o, &s);
    }
    o_puts("]}", o);
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
    o->f = g->w.out;
    o->n = 0;
    st = finish_out(g, o);
    pb_jout_flush(o);
    free(o);
    if (st != PB_OK)
        return st;
    if (ferror(g->w.out) || fflush(g->w.out) != 0)
        return pb_fail_write(g->w.err, "the gecko file", errno);
    return PB_OK;
}

/* Over 80 lines, kept whole: closing states, spreading times per clock and writing the wrapper are
 * ordered steps over the same threads. */
static pb_status finish_out(pb_gecko *g, g_out *o)
{
    size_t i, k;
    uint64_t interval_ns = g->facts.interval_ns;
    int64_t end_ns = 0, duration_ns = 0;
    int one_how = 1;
    g_rec *tmp;
    pb_status st;
    /* CPython closes every open state at the last sample's time (a merged
     * input's at its own: next_clock) */
    for (i = 0; i < g->nthreads; i++)
        if ((st = close_states(g, &g->threads[i], CLK(g)->last_ts_us * 1000u)) != PB_OK)
            return st;
    /* spread times, per clock: over the spans' extent, else the recorded
     * duration, else the sampled time (weight x interval), else 1 ms a sample */
    for (i = 0; i < g->nclk; i++) {
        g_clock *c = &g->clk[i];
        uint64_t maxw = c->maxw;
        if (c->have_ts)
            c->how = "recorded";
        else if (c->have_span)
            c->span_ns = c->span_hi - c->span_lo, c->how = "spread over the spans' extent (the source records no sample times)";
        else if (g->facts.duration_ns)
            c->span_ns = g->facts.duration_ns, c->how = "spread over the recorded duration (the source records no sample times)";
        else if (g->facts.weight_ns)
            c->span_ns = maxw, c->how = "spread over the sampled time (the source records no sample times)";
        else if (interval_ns && maxw <= UINT64_MAX / interval_ns)
            c->span_ns = maxw * interval_ns,
            c->how = "spread over samples x interval (the source records no sample times nor duration)";
        else
            c->span_ns = maxw * 1000000u, c->how = "spread 1 ms a sample (the source records no sample times, duration nor interval)";
        if (i && c->how != g->clk[0].how)
            one_how = 0;
    }
    /* the old Firefox DevTools wrapper: the speedscope app imports it (systemHost),
     * the Firefox Profiler processes its "profile" as a raw Gecko profile */
    o_puts("{\"systemHost\":{\"name\":\"Firefox\"},\"profile\":{\"meta\":{\"version\":32,\"interval\":", o);
    if (interval_ns)
        put_fixed(o, 0, interval_ns, 6);
    else
        pb_jout_ch(o, '1');
    o_puts(",\"startTime\":", o);
    pb_jout_u64(o, g->facts.basetime * 1000u);
    o_printf(o, ",\"shutdownTime\":null,\"abi\":\"\",\"misc\":\"\",\"oscpu\":\"\",\"platform\":\"\",\"processType\":0,"
               "\"categories\":%s,\"stackwalk\":0,\"toolkit\":\"\",\"appBuildID\":\"\",\"CPUName\":\"\","
               "\"presymbolicated\":true,\"markerSchema\":[],\"product\":",
            cat_json);
    {
        pb_str t = gecko_str_of(g->w.title, strlen(g->w.title));
        pb_jout_str(o, &t);
    }
    o_puts(",\"importedFrom\":", o);
    {
        char from[128];
        pb_str t;
        snprintf(from, sizeof from, "Devel::ProfileBridge " PB_VERSION_STRING "%s%s%s", *g->source ? " (" : "",
                 g->source, *g->source ? ")" : "");
        t = gecko_str_of(from, strlen(from));
        pb_jout_str(o, &t);
    }
    o_puts(",\"profbridge\":{\"sampleTimes\":\"", o);
    if (one_how) {
        o_puts(g->clk[0].how, o);
    } else {
        o_puts("each merged input on its own clock", o);
        for (i = 0; i < g->nclk; i++)
            o_printf(o, "; input %zu: %s", i + 1, g->clk[i].how);
    }
    o_puts("\",\"timeOriginNs\":", o);
    pb_jout_u64(o, g->clk[0].have_ts ? g->clk[0].base_us * 1000u : g->clk[0].have_span ? g->clk[0].span_lo : 0);
    o_puts("}},\"libs\":[],\"pausedRanges\":[],\"processes\":[],\"threads\":[", o);
    if (!(tmp = (g_rec *)malloc(BLK * sizeof *tmp)))
        return G_OOM(g);
    for (i = k = 0; i < g->nthreads; i++) {
        g_thread *t = &g->threads[i];
        if (!t->samples.count && !t->markers.count)
            continue;
        if ((st = write_thread(g, o, t, k++, tmp, &end_ns)) != PB_OK) {
            free(tmp);
            return st;
        }
        if (end_ns > duration_ns)
            duration_ns = end_ns;
    }
    free(tmp);
    /* the wrapper's duration (ms): where the last thread's samples end */
    o_puts("]},\"duration\":", o);
    put_fixed(o, 0, (uint64_t)duration_ns, 6);
    o_puts("}\n", o);
    return PB_OK;
}

static const pb_sample_sink sink_calls = {.attribute = gk_attribute, .frame = gk_frame, .thread = gk_thread,
    .sample = gk_sample, .note = pb_sample_note_ignore, .finish = gk_finish, .span = gk_span,
    .sample_tags = gk_sample_tags};

static void chain_free(g_chain *c) { pb_tick_chain_free(c); }

static void gk_teardown(pb_stack_writer *w)
{
    pb_gecko *g = (pb_gecko *)w;
    size_t i;
    for (i = 0; i < g->nthreads; i++) {
        g_thread *t = &g->threads[i];
        chain_free(&t->samples);
        chain_free(&t->markers);
        pb_stack_cursor_free(&t->cur);
        PB_FREE_ALL(t->funcs, t->frames, t->stacks, t->mnames);
    }
    pb_tick_spool_close(&g->spool);
    pb_strtab_free(&g->strs);
    pb_strtab_free(&g->tlabels);
    PB_FREE_ALL(g->funcs, g->frames, g->threads, g->keys, g->namebuf, g->tname, g->clk, g->touched);
    PB_INDEX_FREE_ALL(&g->fnix, &g->tix, &g->kix);
}

pb_stack_writer *pb_gecko_new(FILE *out, const char *name, pb_error *err)
{
    pb_gecko *g = (pb_gecko *)pb_stack_writer_new(sizeof *g, &sink_calls, gk_teardown, out, name, err);
    if (!g)
        return NULL;
    pb_tick_spool_init(&g->spool, err, "the gecko writer's spool", "out of memory while building the gecko file");
    g->all_one = 1;
    if (!(g->clk = (g_clock *)calloc(1, sizeof *g->clk))) {
        pb_stack_writer_free(&g->w);
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    g->nclk = g->cclk = 1;
    g->w.ss.each_tick = 1;
    return &g->w;
}
