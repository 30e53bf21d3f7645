/* chunk_graph.c - a chunk stream's call graph (chunk_graph.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chunk_graph.h"
#include "formats.h"

static const unsigned char cg_wants[PB_TAG_COUNT] = {
    [PB_T_ATTRIBUTE] = 1, [PB_T_NEW_FID] = 1, [PB_T_SUB_INFO] = 1, [PB_T_SUB_CALLERS] = 1,
};

static int cgraph_oom(pb_cgraph *g)
{
    g->oom = 1;
    return 1; /* stops the producer: PB_ERR_ABORT, which the writer turns into its limit error */
}

static void copy_text(char *dst, size_t cap, pb_str s)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    memcpy(dst, s.ptr, n);
    dst[n] = '\0';
}

static int str_is(pb_str s, const char *lit) { return s.len == strlen(lit) && memcmp(s.ptr, lit, s.len) == 0; }

static double str_num(pb_str s)
{
    char buf[64];
    copy_text(buf, sizeof buf, s);
    return strtod(buf, NULL);
}

/* the sub of a name, made on first use: 0, or -1 out of memory */
static int sub_of(pb_cgraph *g, pb_str name, uint32_t *sub)
{
    uint32_t id;
    if (pb_strtab_intern(&g->str, name.ptr, name.len, &id) < 0 ||
        pb_grow_zero((void **)&g->sub_of_name, &g->cson, (size_t)id + 1, sizeof *g->sub_of_name) < 0)
        return -1;
    if (!g->sub_of_name[id]) {
        pb_cg_sub *s;
        if (g->nsubs >= UINT32_MAX - 1 || pb_grow((void **)&g->subs, &g->csubs, g->nsubs + 1, sizeof *g->subs) < 0)
            return -1;
        s = &g->subs[g->nsubs];
        memset(s, 0, sizeof *s);
        s->name = id;
        g->sub_of_name[id] = (uint32_t)++g->nsubs;
    }
    *sub = g->sub_of_name[id] - 1;
    return 0;
}

static uint32_t edge_hash(uint32_t caller, uint32_t callee, uint32_t fid, uint32_t line)
{
    return pb_mix64(((uint64_t)caller << 32 | callee) ^ ((uint64_t)fid << 32 | line) * 0x9E3779B97F4A7C15ull);
}
static uint32_t cgraph_edge_hash_of(const void *ctx, uint32_t id) { return ((const pb_cgraph *)ctx)->edges[id].hash; }

static int sub_of(pb_cgraph *g, pb_str name, uint32_t *sub);

/* ATTRIBUTE "primitive_calls PID SUB" or "primitive_calls PID SUB <- CALLER"
 * = cc (fold_samples.c): into the sub, or the (callee, caller) list; 0, or -1
 * out of memory (anything else is not one: ignored) */
static int primitive_calls(pb_cgraph *g, pb_str k, pb_str v)
{
    const char *p = k.ptr + 16, *e = k.ptr + k.len, *a;
    uint32_t callee, caller;
    uint64_t cc;
    double d;
    if (k.len < 16 || memcmp(k.ptr, "primitive_calls ", 16) != 0)
        return 0;
    d = str_num(v);
    if (!(d >= 0 && d < 1.8e19)) /* not a count (NaN too): not one */
        return 0;
    cc = (uint64_t)d;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    if (p == k.ptr + 16 || p >= e || *p != ' ')
        return 0;
    p++;
    for (a = p; a + 4 <= e && memcmp(a, " <- ", 4) != 0; a++)
        ;
    if (a + 4 > e) { /* the sub's */
        if (sub_of(g, pb_str_make(p, (size_t)(e - p), k.utf8), &callee) < 0)
            return -1;
        g->subs[callee].has_cc = 1;
        g->subs[callee].cc += cc;
        return 0;
    }
    if (sub_of(g, pb_str_make(p, (size_t)(a - p), k.utf8), &callee) < 0 ||
        sub_of(g, pb_str_make(a + 4, (size_t)(e - a - 4), k.utf8), &caller) < 0 ||
        pb_grow((void **)&g->prims, &g->cprims, g->nprims + 1, sizeof *g->prims) < 0)
        return -1;
    g->prims[g->nprims].callee = callee;
    g->prims[g->nprims].caller = caller;
    g->prims[g->nprims++].cc = cc;
    return 0;
}

/* Over 80 lines, kept whole: one switch over the four chunk kinds a call graph is built from; each
 * case is short and reads best beside the others. */
static int on_chunk(pb_sink *self, const pb_chunk *c)
{
    pb_cgraph *g = (pb_cgraph *)self->ctx;
    switch (c->tag) {
    case PB_T_ATTRIBUTE:
        if (str_is(c->s[0], "sampled_time_sec"))
            g->sampled = !g->exact;
        else if (str_is(c->s[0], "call_graph") && str_is(c->s[1], "exact"))
            g->exact = 1, g->sampled = 0;
        else if (str_is(c->s[0], "graph_edge_times"))
            g->counts_only = str_is(c->s[1], "none");
        else if (str_is(c->s[0], "graph_cost_unit") && !g->cost_unit[0])
            copy_text(g->cost_unit, sizeof g->cost_unit, c->s[1]);
        else if (str_is(c->s[0], "sample_weight_unit"))
            g->weight_ns = str_is(c->s[1], "ns");
        else if (str_is(c->s[0], "sample_interval_us"))
            g->interval_us = str_num(c->s[1]);
        else if (str_is(c->s[0], "ticks_per_sec"))
            g->ticks_per_sec = str_num(c->s[1]);
        else if (str_is(c->s[0], "source_format") && !g->source_format[0])
            copy_text(g->source_format, sizeof g->source_format, c->s[1]);
        else if (str_is(c->s[0], "application") && !g->application[0])
            copy_text(g->application, sizeof g->application, c->s[1]);
        else if (primitive_calls(g, c->s[0], c->s[1]) < 0)
            return cgraph_oom(g);
        return 0;
    case PB_T_NEW_FID: {
        uint32_t fid = c->u[0], id;
        if (pb_strtab_intern(&g->str, c->s[0].ptr, c->s[0].len, &id) < 0 ||
            pb_grow_zero((void **)&g->fid_name, &g->cfid, (size_t)fid + 1, sizeof *g->fid_name) < 0 ||
            pb_grow_zero((void **)&g->fid_flags, &g->cfflags, (size_t)fid + 1, sizeof *g->fid_flags) < 0)
            return cgraph_oom(g);
        g->fid_flags[fid] = c->u[3];
        if ((size_t)fid + 1 > g->nfid)
            g->nfid = (size_t)fid + 1;
        g->fid_name[fid] = id + 1;
        return 0;
    }
    case PB_T_SUB_INFO: {
        uint32_t s;
        if (sub_of(g, c->s[0], &s) < 0)
            return cgraph_oom(g);
        if (!g->subs[s].has_info) { /* the first definition (a fork's copy repeats it) */
            g->subs[s].has_info = 1;
            g->subs[s].fid = c->u[0];
            g->subs[s].line = c->u[1];
        }
        return 0;
    }
    case PB_T_SUB_CALLERS: {
        uint32_t caller, callee, h, i;
        size_t k;
        pb_cg_edge *e;
        /* NYTProf's per-sub placeholder edge (no caller, nothing counted) */
        if (c->s[1].len == 0)
            return 0;
        if (sub_of(g, c->s[0], &callee) < 0 || sub_of(g, c->s[1], &caller) < 0 ||
            pb_index_reserve(&g->eix, g->nedges, cgraph_edge_hash_of, g) < 0)
            return cgraph_oom(g);
        h = edge_hash(caller, callee, c->u[0], c->u[1]);
        PB_INDEX_FIND(&g->eix, h, k, i,
                      g->edges[i].caller == caller && g->edges[i].callee == callee && g->edges[i].fid == c->u[0] &&
                          g->edges[i].line == c->u[1]);
        if (i == PB_INDEX_NONE) {
            if (g->nedges >= UINT32_MAX - 1 ||
                pb_grow((void **)&g->edges, &g->cedges, g->nedges + 1, sizeof *g->edges) < 0)
                return cgraph_oom(g);
            i = (uint32_t)g->nedges++;
            e = &g->edges[i];
            memset(e, 0, sizeof *e);
            e->caller = caller;
            e->callee = callee;
            e->fid = c->u[0];
            e->line = c->u[1];
            e->hash = h;
            pb_index_set(&g->eix, k, i);
        }
        e = &g->edges[i];
        e->count += c->u[2];
        e->incl += c->n[0];
        e->excl += c->n[1];
        e->reci += c->n[2];
        return 0;
    }
    default:
        return 0;
    }
}

void pb_cgraph_init(pb_cgraph *g)
{
    memset(g, 0, sizeof *g);
    g->sink.chunk = on_chunk;
    g->sink.wants = cg_wants;
    g->sink.ctx = g;
}

void pb_cgraph_free(pb_cgraph *g)
{
    pb_strtab_free(&g->str);
    PB_FREE_ALL(g->fid_name, g->fid_flags, g->sub_of_name, g->subs, g->edges, g->prims);
    pb_index_free(&g->eix);
    memset(g, 0, sizeof *g);
}

pb_str pb_cgraph_file(const pb_cgraph *g, uint32_t fid)
{
    if (fid < g->nfid && g->fid_name[fid])
        return pb_strtab_str(&g->str, g->fid_name[fid] - 1);
    return pb_str_make("", 0, 0);
}

static const pb_cgraph *order_g;
static int order_callee_first;
static int cmp_u32(uint32_t a, uint32_t b) { return a < b ? -1 : a > b; }
static int by_edge(const void *a, const void *b)
{
    const pb_cg_edge *x = &order_g->edges[*(const uint32_t *)a], *y = &order_g->edges[*(const uint32_t *)b];
    int c = order_callee_first ? cmp_u32(x->callee, y->callee) : cmp_u32(x->caller, y->caller);
    if (!c)
        c = order_callee_first ? cmp_u32(x->caller, y->caller) : cmp_u32(x->callee, y->callee);
    return c || order_callee_first ? c : cmp_u32(x->line, y->line);
}
void pb_cgraph_order_edges(const pb_cgraph *g, uint32_t *order, size_t n, int callee_first)
{
    order_g = g;
    order_callee_first = callee_first;
    qsort(order, n, sizeof *order, by_edge);
}

double pb_cgraph_unit_s(const pb_cgraph *g)
{
    if (!g->sampled || g->weight_ns)
        return 1e-9;
    if (g->interval_us > 0)
        return g->interval_us * 1e-6;
    return g->ticks_per_sec > 0 ? 1.0 / g->ticks_per_sec : 1e-6;
}

/* an exact graph's event (e.g. instructions: a count, 1e-9 "seconds" each) keeps its name */
const char *pb_cgraph_unit_name(const pb_cgraph *g)
{
    if (g->exact && g->cost_unit[0])
        return g->cost_unit;
    return g->sampled && !g->weight_ns ? "samples" : "ns";
}

const char *pb_cgraph_language(const pb_cgraph *g)
{
    int f;
    for (f = 0; f < PB_FMT_COUNT && g->source_format[0]; f++) {
        const pb_format_row *r = pb_format_get((pb_format)f);
        if (r && r->name && strcmp(r->name, g->source_format) == 0)
            return r->language ? r->language : "";
    }
    return "";
}

/* ---- the target -------------------------------------------------------- */
pb_cgraph_target *pb_cgraph_target_open(const char *out, const char *who, pb_cgraph_write_fn write, pb_error *err)
{
    pb_cgraph_target *t = (pb_cgraph_target *)malloc(sizeof *t);
    pb_error_init(err, who, out);
    if (!t) {
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return NULL;
    }
    pb_cgraph_init(&t->g);
    t->write = write;
    t->who = who;
    snprintf(t->path, sizeof t->path, "%s", out);
    if (!(t->out = pb_output_open(out, PB_OUT_STDOUT, err))) {
        free(t);
        return NULL;
    }
    return t;
}

pb_status pb_cgraph_target_close(pb_cgraph_target *t, pb_status st, pb_error *err)
{
    pb_error werr;
    FILE *fp;
    pb_error_init(&werr, t->who, t->path);
    if (st == PB_ERR_ABORT && t->g.oom) {
        /* the sink stopped the producer: the writer's reason */
        pb_fail_nooff(&werr, PB_ERR_LIMIT, "out of memory for the call graph");
        st = PB_ERR_LIMIT;
        *err = werr;
    }
    if (st == PB_OK) {
        if (!(fp = pb_output_stdio(t->out, &werr)))
            st = werr.status;
        else if ((st = t->write(&t->g, fp, &werr)) == PB_OK && (fflush(fp) != 0 || ferror(fp)))
            st = pb_fail_write(&werr, "the output", errno);
        if (st == PB_OK)
            st = pb_output_commit(t->out, 0, &werr);
        else
            pb_output_abort(t->out);
        if (st != PB_OK)
            *err = werr;
    } else
        pb_output_abort(t->out);
    pb_cgraph_free(&t->g);
    free(t);
    return st;
}
