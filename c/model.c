/* model.c - the one profile model (see model.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

#define NONE PB_MODEL_NONE

/* ---- strings ------------------------------------------------------------ */
static uint32_t str_hash_of(const void *ctx, uint32_t id) { return ((const pb_strtab *)ctx)->e[id].hash; }

int pb_strtab_intern(pb_strtab *t, const char *p, size_t n, uint32_t *id)
{
    uint32_t h = pb_hash_bytes(p, n), i;
    size_t k;
    pb_strent *e;
    /* bytes of the arena itself (a part of an interned string) survive its growth */
    uintptr_t a = (uintptr_t)t->arena, q = (uintptr_t)p;
    size_t inside = t->arena && q >= a && q < a + t->alen ? (size_t)(q - a) + 1 : 0;
    if (n > UINT32_MAX - 1 || t->n >= UINT32_MAX - 1 || pb_index_reserve(&t->ix, t->n, str_hash_of, t) < 0)
        return -1;
    PB_INDEX_FIND(&t->ix, h, k, i, t->e[i].hash == h && t->e[i].len == n && memcmp(t->arena + t->e[i].off, p, n) == 0);
    if (i != PB_INDEX_NONE) {
        *id = i;
        return 1;
    }
    if (pb_grow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e) < 0 ||
        t->alen > SIZE_MAX - n - 1 || pb_grow((void **)&t->arena, &t->acap, t->alen + n + 1, 1) < 0)
        return -1;
    if (inside)
        p = t->arena + inside - 1;
    e = &t->e[t->n];
    e->off = t->alen;
    e->len = (uint32_t)n;
    e->hash = h;
    e->wide = pb_str_wide(p, n);
    if (n)
        memcpy(t->arena + t->alen, p, n);
    t->arena[t->alen + n] = '\0';
    t->alen += n + 1;
    pb_index_set(&t->ix, k, (uint32_t)t->n);
    *id = (uint32_t)t->n++;
    return 0;
}

void pb_strtab_free(pb_strtab *t)
{
    free(t->arena);
    free(t->e);
    pb_index_free(&t->ix);
    memset(t, 0, sizeof *t);
}

/* ---- stacks ------------------------------------------------------------- */
static uint32_t node_hash_of(const void *ctx, uint32_t id)
{
    const pb_mnode *n = &((const pb_mtrie *)ctx)->n[id];
    return pb_mtrie_hash(n->parent, n->item);
}

/* pb_mtrie_get's insertion: k = the empty slot + 1 its probe ended on, or 0
 * (the index must grow first: probe again) */
int pb_mtrie_add(pb_mtrie *t, uint32_t parent, uint32_t item, size_t k, uint32_t *id)
{
    uint32_t i;
    if (t->len >= UINT32_MAX - 1)
        return -1;
    if (!k) {
        if (pb_index_reserve(&t->ix, t->len, node_hash_of, t) < 0)
            return -1;
        PB_INDEX_FIND(&t->ix, pb_mtrie_hash(parent, item), k, i, t->n[i].parent == parent && t->n[i].item == item);
        if (i != PB_INDEX_NONE) {
            *id = i;
            return 1;
        }
    } else {
        k--;
    }
    if (pb_grow((void **)&t->n, &t->cap, t->len + 1, sizeof *t->n) < 0)
        return -1;
    t->n[t->len].parent = parent;
    t->n[t->len].item = item;
    pb_index_set(&t->ix, k, (uint32_t)t->len);
    *id = (uint32_t)t->len++;
    return 0;
}

void pb_mtrie_clear(pb_mtrie *t)
{
    t->len = 0;
    if (t->ix.cap)
        memset(t->ix.slot, 0, t->ix.cap * sizeof *t->ix.slot);
}

void pb_mtrie_free(pb_mtrie *t)
{
    free(t->n);
    pb_index_free(&t->ix);
    memset(t, 0, sizeof *t);
}

void pb_mtrie_totals(const pb_mtrie *t, const uint64_t *w, uint64_t *tot)
{
    size_t i;
    if (t->len)
        memcpy(tot, w, t->len * sizeof *tot);
    for (i = t->len; i-- > 0;)
        if (t->n[i].parent != NONE)
            tot[t->n[i].parent] += tot[i];
}

void pb_mwalk_free(pb_mwalk *wk)
{
    free(wk->tot);
    free(wk->first);
    free(wk->kids);
    free(wk->walk);
    free(wk->subs);
    memset(wk, 0, sizeof *wk);
}

pb_status pb_mtrie_replay(const pb_mtrie *t, uint32_t root, const uint64_t *w, int skip_empty,
                          uint32_t (*sub_of)(const void *ctx, uint32_t item), const void *ctx, pb_callev *cv,
                          pb_mwalk *wk, pb_error *err, const char *oom_msg)
{
    size_t np = t->len, i, sp;
    uint32_t *first, *kids, *walk, *subs, top = root == NONE ? (uint32_t)np : root;
    pb_status st;
    if (!np)
        return PB_OK;
    if (!wk->ready) {
        if (np > SIZE_MAX / 2 - 2 || pb_grow((void **)&wk->tot, &wk->ctot, np, sizeof *wk->tot) < 0 ||
            pb_grow((void **)&wk->first, &wk->cfirst, np + 2, sizeof *wk->first) < 0 ||
            pb_grow((void **)&wk->kids, &wk->ckids, np, sizeof *wk->kids) < 0 ||
            pb_grow((void **)&wk->walk, &wk->cwalk, 2 * (np + 1), sizeof *wk->walk) < 0 ||
            pb_grow((void **)&wk->subs, &wk->csubs, np + 1, sizeof *wk->subs) < 0)
            return pb_fail(err, PB_ERR_LIMIT, 0, "%s", oom_msg);
        first = wk->first;
        kids = wk->kids;
        walk = wk->walk;
        /* children grouped by parent (slot np: the roots), in creation order */
        if (skip_empty)
            pb_mtrie_totals(t, w, wk->tot);
        memset(first, 0, (np + 2) * sizeof *first);
        for (i = 0; i < np; i++)
            if (!skip_empty || wk->tot[i])
                first[(t->n[i].parent == NONE ? np : t->n[i].parent) + 1]++;
        for (i = 0; i <= np; i++)
            first[i + 1] += first[i];
        for (i = 0; i <= np; i++)
            walk[i] = first[i];
        for (i = 0; i < np; i++)
            if (!skip_empty || wk->tot[i])
                kids[walk[t->n[i].parent == NONE ? np : t->n[i].parent]++] = (uint32_t)i;
        wk->ready = 1;
    }
    first = wk->first;
    kids = wk->kids;
    walk = wk->walk;
    subs = wk->subs;
    walk[0] = top;
    walk[1] = first[top];
    sp = 1;
    while (sp) {
        uint32_t node = walk[2 * (sp - 1)], *next = &walk[2 * (sp - 1) + 1];
        if (*next < first[node + 1]) {
            uint32_t c = kids[(*next)++];
            subs[sp - 1] = sub_of(ctx, t->n[c].item);
            /* subs[0, sp - 1): the path to c's parent, as the previous call had it */
            if ((st = pb_callev_stack_known(cv, subs, sp, w[c], sp - 1)) != PB_OK)
                return st;
            walk[2 * sp] = c;
            walk[2 * sp + 1] = first[c];
            sp++;
        } else {
            sp--;
        }
    }
    return PB_OK;
}

/* ---- the model ------------------------------------------------------------ */
void pb_model_init(pb_model *m, pb_sink *out, pb_error *err, const char *oom_msg)
{
    memset(m, 0, sizeof *m);
    m->out = out;
    m->err = err;
    m->oom_msg = oom_msg;
    m->root = pb_str_c("main::RUNTIME");
}

void pb_model_free(pb_model *m)
{
    void *own[] = {m->files, m->subs, m->sub_of_str, m->edges, m->eorder, m->efirst, m->xscratch};
    size_t i;
    for (i = 0; i < sizeof own / sizeof own[0]; i++)
        free(own[i]);
    pb_strtab_free(&m->str);
    PB_INDEX_FREE_ALL(&m->fix, &m->eix);
    memset(m, 0, sizeof *m);
}

pb_status pb_model_oom(pb_model *m, uint64_t off) { return pb_fail(m->err, PB_ERR_LIMIT, off, "%s", m->oom_msg); }

/* ---- files ---- */
static uint32_t file_hash(uint32_t name, uint32_t variant) { return pb_mix64(((uint64_t)variant << 32) | name); }

static uint32_t file_hash_of(const void *ctx, uint32_t id)
{
    const pb_mfile *f = &((const pb_model *)ctx)->files[id];
    return file_hash(f->name, f->variant);
}

int pb_model_file(pb_model *m, const char *name, size_t len, uint32_t variant, uint32_t flags, uint32_t *file)
{
    uint32_t s, h, i;
    size_t k;
    pb_mfile *f;
    if (pb_strtab_intern(&m->str, name, len, &s) < 0 || pb_index_reserve(&m->fix, m->nfiles, file_hash_of, m) < 0)
        return -1;
    h = file_hash(s, variant);
    PB_INDEX_FIND(&m->fix, h, k, i, m->files[i].name == s && m->files[i].variant == variant);
    if (i != PB_INDEX_NONE) {
        *file = i;
        return 1;
    }
    if (m->nfiles >= UINT32_MAX - 1 || pb_grow((void **)&m->files, &m->cfiles, m->nfiles + 1, sizeof *m->files) < 0)
        return -1;
    f = &m->files[m->nfiles];
    f->name = s;
    f->variant = variant;
    f->flags = flags;
    f->fid = 0;
    f->src = NONE;
    f->src_utf8 = 0;
    f->eval_fid = f->eval_line = f->size = f->mtime = 0;
    f->name_utf8 = -1;
    pb_index_set(&m->fix, k, (uint32_t)m->nfiles);
    *file = (uint32_t)m->nfiles++;
    return 0;
}

int pb_model_file_new(pb_model *m, pb_str name, uint32_t flags, uint32_t eval_fid, uint32_t eval_line, uint32_t size,
                      uint32_t mtime, uint32_t *file)
{
    pb_mfile *f;
    /* a variant no other file has: counted down from the top */
    if (pb_model_file(m, name.ptr ? name.ptr : "", name.len, UINT32_MAX - (uint32_t)m->nfiles, flags, file) < 0)
        return -1;
    f = &m->files[*file];
    f->eval_fid = eval_fid, f->eval_line = eval_line, f->size = size, f->mtime = mtime;
    f->name_utf8 = name.utf8 ? 1 : 0;
    return 0;
}

/* SRC_LINE per line of a file's carried source (lines keep their "\n") */
static pb_status emit_src_lines(pb_model *m, const pb_mfile *fl)
{
    const char *p = pb_strtab_ptr(&m->str, fl->src), *end = p + pb_strtab_len(&m->str, fl->src);
    uint32_t line = 0;
    while (p < end) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl + 1 : end;
        pb_chunk c;
        pb_status st;
        pb_chunk_src_line(&c, fl->fid, ++line, pb_str_make(p, (size_t)(stop - p), fl->src_utf8));
        if ((st = pb_model_emit(m, &c)) != PB_OK)
            return st;
        p = stop;
    }
    return PB_OK;
}

pb_status pb_model_define_fid(pb_model *m, uint32_t file)
{
    pb_mfile *fl = &m->files[file];
    pb_chunk c;
    pb_str name;
    pb_status st;
    fl->fid = ++m->nfids;
    if (fl->src != NONE)
        fl->flags |= PB_FID_HAS_SRC | PB_FID_SAVE_SRC;
    name = pb_strtab_str(&m->str, fl->name);
    if (fl->name_utf8 >= 0)
        name.utf8 = fl->name_utf8;
    pb_chunk_new_fid(&c, fl->fid, fl->eval_fid, fl->eval_line, fl->flags, fl->size, fl->mtime, name);
    if ((st = pb_model_emit(m, &c)) != PB_OK)
        return st;
    return fl->src != NONE ? emit_src_lines(m, fl) : PB_OK;
}

pb_status pb_model_file_source(pb_model *m, uint32_t file, pb_str text)
{
    uint32_t s;
    if (m->files[file].src != NONE)
        return PB_OK; /* the first text for a file wins */
    if (pb_strtab_intern(&m->str, text.ptr ? text.ptr : "", text.len, &s) < 0)
        return pb_model_oom(m, 0);
    m->files[file].src = s;
    m->files[file].src_utf8 = text.utf8;
    return m->files[file].fid ? emit_src_lines(m, &m->files[file]) : PB_OK;
}

/* ---- subs ---- */
int pb_model_sub(pb_model *m, const char *name, size_t len, uint32_t file, uint32_t first, uint32_t *sub)
{
    uint32_t s;
    pb_msub *sb;
    if (pb_strtab_intern(&m->str, name, len, &s) < 0)
        return -1;
    if (s < m->nsos && m->sub_of_str[s] != NONE) {
        *sub = m->sub_of_str[s];
        return 1;
    }
    if (pb_grow((void **)&m->sub_of_str, &m->csos, (size_t)s + 1, sizeof *m->sub_of_str) < 0 ||
        pb_grow((void **)&m->subs, &m->csubs, m->nsubs + 1, sizeof *m->subs) < 0)
        return -1;
    for (; m->nsos <= s; m->nsos++)
        m->sub_of_str[m->nsos] = NONE;
    sb = &m->subs[m->nsubs];
    sb->name = s;
    sb->file = file;
    sb->first = first;
    sb->lo = UINT32_MAX;
    sb->hi = 0;
    sb->used = 0;
    sb->name_utf8 = -1;
    m->sub_of_str[s] = (uint32_t)m->nsubs;
    *sub = (uint32_t)m->nsubs++;
    return 0;
}

int pb_model_sub_new(pb_model *m, const char *name, size_t len, int utf8, uint32_t file, uint32_t *sub)
{
    uint32_t s;
    pb_msub *sb;
    if (pb_strtab_intern(&m->str, name, len, &s) < 0 ||
        pb_grow((void **)&m->subs, &m->csubs, m->nsubs + 1, sizeof *m->subs) < 0)
        return -1;
    sb = &m->subs[m->nsubs];
    sb->name = s;
    sb->file = file;
    sb->first = 0;
    sb->lo = UINT32_MAX;
    sb->hi = 0;
    sb->used = 0;
    sb->name_utf8 = utf8 ? 1 : 0;
    *sub = (uint32_t)m->nsubs++;
    return 0;
}

void pb_model_reset_subs(pb_model *m)
{
    size_t i;
    for (i = 0; i < m->nsubs; i++)
        m->sub_of_str[m->subs[i].name] = NONE;
    m->nsubs = 0;
    m->nedges = 0;
    m->eorder_n = 0;
    if (m->eix.cap)
        memset(m->eix.slot, 0, m->eix.cap * sizeof *m->eix.slot);
}

/* ---- edges ---- */
static uint32_t model_edge_hash_of(const void *ctx, uint32_t id)
{
    const pb_medge *e = &((const pb_model *)ctx)->edges[id];
    return pb_model_edge_hash(e->thread, e->caller, e->file, e->line, e->callee);
}

/* pb_model_edge's insertion: k = the empty slot + 1 its probe ended on, or 0
 * (the index must grow first: probe again) */
int pb_model_edge_add(pb_model *m, uint32_t thread, uint32_t caller, uint32_t file, uint32_t line, uint32_t callee,
                      size_t k, uint32_t *e)
{
    pb_medge *o;
    uint32_t i;
    if (!k) {
        if (m->nedges >= UINT32_MAX - 1 || pb_index_reserve(&m->eix, m->nedges, model_edge_hash_of, m) < 0)
            return -1;
        PB_INDEX_FIND(&m->eix, pb_model_edge_hash(thread, caller, file, line, callee), k, i,
                      pb_medge_is(&m->edges[i], thread, caller, file, line, callee));
        if (i != PB_INDEX_NONE) {
            *e = i;
            return 0;
        }
    } else {
        k--;
    }
    if (m->nedges >= UINT32_MAX - 1 || pb_grow((void **)&m->edges, &m->cedges, m->nedges + 1, sizeof *m->edges) < 0)
        return -1;
    o = &m->edges[m->nedges];
    memset(o, 0, sizeof *o);
    o->thread = thread, o->caller = caller, o->callee = callee;
    o->file = file, o->line = line;
    pb_index_set(&m->eix, k, (uint32_t)m->nedges);
    *e = (uint32_t)m->nedges++;
    return 0;
}

/* ---- flush ---- */
pb_status pb_model_emit_sub_info(pb_model *m, uint32_t sub)
{
    const pb_msub *s;
    uint32_t fid, first;
    pb_chunk c;
    pb_status st;
    if ((st = pb_model_fid(m, m->subs[sub].file, &fid)) != PB_OK)
        return st;
    s = &m->subs[sub];
    first = pb_model_sub_first(s);
    pb_chunk_sub_info(&c, fid, first, s->lo <= s->hi ? s->hi : first, pb_model_sub_name(m, sub));
    return pb_model_emit(m, &c);
}

pb_status pb_model_emit_sub_infos(pb_model *m, int used_only)
{
    size_t i;
    pb_status st;
    for (i = 0; i < m->nsubs; i++)
        if ((!used_only || m->subs[i].used) && (st = pb_model_emit_sub_info(m, (uint32_t)i)) != PB_OK)
            return st;
    return PB_OK;
}

/* edges grouped by thread (a stable counting sort), once per flush */
static int order_edges(pb_model *m, uint32_t nthreads)
{
    size_t i;
    if (m->eorder_n == m->nedges && m->nthreads_e == nthreads && m->nedges)
        return 0;
    if (pb_grow((void **)&m->eorder, &m->ceorder, m->nedges ? m->nedges : 1, sizeof *m->eorder) < 0 ||
        pb_grow((void **)&m->efirst, &m->cefirst, (size_t)nthreads + 2, sizeof *m->efirst) < 0)
        return -1;
    memset(m->efirst, 0, ((size_t)nthreads + 2) * sizeof *m->efirst);
    for (i = 0; i < m->nedges; i++)
        m->efirst[m->edges[i].thread + 1]++;
    for (i = 0; i < nthreads; i++)
        m->efirst[i + 1] += m->efirst[i];
    /* efirst[t+1] is used as the fill cursor of thread t, then restored */
    for (i = 0; i < m->nedges; i++)
        m->eorder[m->efirst[m->edges[i].thread]++] = (uint32_t)i;
    for (i = nthreads; i > 0; i--)
        m->efirst[i] = m->efirst[i - 1];
    m->efirst[0] = 0;
    m->eorder_n = m->nedges;
    m->nthreads_e = nthreads;
    return 0;
}

pb_status pb_model_emit_sub_callers(pb_model *m, uint32_t thread, uint32_t nthreads, const pb_mtime *tm)
{
    size_t k;
    pb_status st;
    if (!m->nedges)
        return PB_OK;
    if (order_edges(m, nthreads) < 0)
        return pb_model_oom(m, 0);
    for (k = m->efirst[thread]; k < m->efirst[thread + 1]; k++) {
        const pb_medge *e = &m->edges[m->eorder[k]];
        uint32_t fid;
        pb_chunk c;
        double excl = tm->excl_signed ? (double)(int64_t)e->excl : (double)e->excl;
        if ((st = pb_model_fid(m, e->file, &fid)) != PB_OK)
            return st;
        pb_chunk_sub_callers(&c, fid, e->line, e->count > UINT32_MAX ? UINT32_MAX : (uint32_t)e->count,
                             (double)e->incl * tm->mul / tm->div, excl * tm->mul / tm->div,
                             (double)e->reci * tm->mul / tm->div, e->rec_depth, pb_model_sub_name(m, e->callee),
                             e->caller == NONE ? m->root : pb_model_sub_name(m, e->caller));
        if ((st = pb_model_emit(m, &c)) != PB_OK)
            return st;
    }
    return PB_OK;
}

/* the exclusive time an exact edge gets of its callee's E (the rule in model.h) */
static double exact_share(const pb_medge *e, const double *E, const double *in_other, const uint64_t *calls_in,
                          const unsigned char *self)
{
    double x;
    if (self[e->callee])
        x = calls_in[e->callee] ? E[e->callee] * ((double)e->count / (double)calls_in[e->callee]) : 0;
    else
        x = in_other[e->callee] > 0 ? E[e->callee] * ((double)e->incl / in_other[e->callee]) : 0;
    return x > (double)e->incl ? (double)e->incl : x;
}

pb_status pb_model_emit_exact_callers(pb_model *m, double units_per_sec, double *sum_excl, uint64_t *max_incl)
{
    size_t n = m->nsubs, i;
    double *E, *out, *given, *in_other;
    uint64_t *calls_in;
    unsigned char *self;
    pb_status st = PB_OK;
    /* one block, held by the model: a consumer that leaves the decode never
     * runs the end of this function, pb_model_free frees it then */
    free(m->xscratch);
    if (n + 1 > SIZE_MAX / (4 * sizeof(double) + sizeof(uint64_t) + 1) ||
        !(m->xscratch = calloc(n + 1, 4 * sizeof(double) + sizeof(uint64_t) + 1)))
        return pb_model_oom(m, 0);
    E = (double *)m->xscratch;
    out = E + (n + 1);
    given = out + (n + 1);
    in_other = given + (n + 1);
    calls_in = (uint64_t *)(in_other + (n + 1));
    self = (unsigned char *)(calls_in + (n + 1));
    for (i = 0; i < m->nedges; i++) {
        const pb_medge *e = &m->edges[i];
        E[e->callee] += (double)e->incl;
        out[e->caller] += (double)e->incl;
        calls_in[e->callee] += e->count;
        if (e->caller == e->callee)
            self[e->callee] = 1;
        else {
            in_other[e->callee] += (double)e->incl;
            if (e->incl > *max_incl)
                *max_incl = e->incl;
        }
    }
    *sum_excl = 0;
    for (i = 0; i < n; i++) {
        E[i] = E[i] > out[i] ? E[i] - out[i] : 0; /* the in-edges' time less the out-edges' */
        *sum_excl += E[i];
    }
    /* the non-recursive edges first: what they take, the self edge gets the rest */
    for (i = 0; i < m->nedges; i++)
        if (m->edges[i].caller != m->edges[i].callee)
            given[m->edges[i].callee] += exact_share(&m->edges[i], E, in_other, calls_in, self);
    for (i = 0; i < m->nedges && st == PB_OK; i++) {
        const pb_medge *e = &m->edges[i];
        double ticks = (double)e->incl, incl = ticks, excl, reci = 0;
        uint32_t fid;
        pb_chunk c;
        if (e->caller == e->callee) {
            excl = E[e->callee] > given[e->callee] ? E[e->callee] - given[e->callee] : 0;
            incl = 0;
            reci = ticks;
        } else {
            excl = exact_share(e, E, in_other, calls_in, self);
        }
        if ((st = pb_model_fid(m, e->file, &fid)) != PB_OK)
            break;
        e = &m->edges[i];
        pb_chunk_sub_callers(&c, fid, e->line, e->count > UINT32_MAX ? UINT32_MAX : (uint32_t)e->count,
                             incl / units_per_sec, excl / units_per_sec, reci / units_per_sec, e->rec_depth,
                             pb_model_sub_name(m, e->callee), pb_model_sub_name(m, e->caller));
        st = pb_model_emit(m, &c);
    }
    free(m->xscratch);
    m->xscratch = NULL;
    return st;
}

/* ---- statements ---- */
/* the one wording of an exhausted statement budget */
static pb_status budget_fail(pb_model *m, uint64_t n, uint32_t fid, uint32_t line, uint64_t off)
{
    return pb_fail(m->err, PB_ERR_LIMIT, off,
                   "line %u of fid %u needs %llu more TIME_LINE chunks, more than the %llu left of "
                   "max_statements (%llu for this file%s)",
                   line, fid, (unsigned long long)n, (unsigned long long)m->budget.left,
                   (unsigned long long)m->budget_total, m->budget_note ? m->budget_note : "");
}

/* a sample's split (model.h): {record} {weight} {interval} {extra} {left}
 * in s->words filled in, anything else copied */
pb_status pb_model_charge_split(pb_split_budget *s, uint64_t weight, uint64_t ticks_per_weight, uint64_t off,
                                pb_error *err)
{
    static const char *const keys[] = {"{record}", "{weight}", "{interval}", "{extra}", "{left}"};
    uint64_t n = weight ? pb_model_split_count(weight, ticks_per_weight) : 0, vals[5];
    const char *words = s->words;
    char buf[PB_ERR_MSG_MAX];
    size_t len = 0, k;
    if (n <= 1 || pb_budget_take(&s->budget, n - 1) == 0)
        return PB_OK;
    vals[0] = s->records, vals[1] = weight, vals[2] = ticks_per_weight, vals[3] = n - 1, vals[4] = s->budget.left;
    while (*words && len + 1 < sizeof buf) {
        for (k = 0; k < 5 && strncmp(words, keys[k], strlen(keys[k])) != 0; k++)
            ;
        if (k < 5) {
            int w = snprintf(buf + len, sizeof buf - len, "%llu", (unsigned long long)vals[k]);
            if (w > 0)
                len += (size_t)w < sizeof buf - len ? (size_t)w : sizeof buf - len - 1;
            words += strlen(keys[k]);
        } else {
            buf[len++] = *words++;
        }
    }
    buf[len] = '\0';
    return s->no_offset ? pb_fail_nooff(err, PB_ERR_LIMIT, "%s", buf) : pb_fail(err, PB_ERR_LIMIT, off, "%s", buf);
}

static pb_status emit_time_line(pb_model *m, uint32_t ticks, uint32_t fid, uint32_t line)
{
    pb_chunk c;
    pb_chunk_time_line(&c, (int32_t)ticks, fid, line);
    return pb_model_emit(m, &c);
}

/* ticks in DISCOUNT+TIME_LINE pairs (count 0), at most INT32_MAX each */
static pb_status emit_uncounted(pb_model *m, uint64_t ticks, uint32_t fid, uint32_t line)
{
    pb_status st;
    while (ticks > 0) {
        uint32_t t = ticks > (uint64_t)INT32_MAX ? (uint32_t)INT32_MAX : (uint32_t)ticks;
        pb_chunk c;
        pb_chunk_discount(&c);
        if ((st = pb_model_emit(m, &c)) != PB_OK || (st = emit_time_line(m, t, fid, line)) != PB_OK)
            return st;
        ticks -= t;
    }
    return PB_OK;
}

static uint64_t pairs_for(uint64_t ticks) { return ticks / INT32_MAX + (ticks % INT32_MAX != 0); }

pb_status pb_model_statements_slow(pb_model *m, uint32_t fid, uint32_t line, uint64_t n, uint64_t ticks,
                                   uint64_t off)
{
    uint64_t q, rem, leftover = 0, i;
    pb_status st;
    if (n == 0) {
        if (pb_model_budget_take(m, 2 * pairs_for(ticks)) < 0)
            return budget_fail(m, 2 * pairs_for(ticks), fid, line, off);
        return emit_uncounted(m, ticks, fid, line);
    }
    q = ticks / n;
    rem = ticks % n;
    if (q + (rem != 0) > (uint64_t)INT32_MAX) {
        leftover = ticks - n * (uint64_t)INT32_MAX;
        q = INT32_MAX;
        rem = 0;
    }
    if (pb_model_budget_take(m, n + 2 * pairs_for(leftover)) < 0)
        return budget_fail(m, n + 2 * pairs_for(leftover), fid, line, off);
    if (!pb_sink_wants(m->out, PB_T_TIME_LINE) && !pb_sink_wants(m->out, PB_T_DISCOUNT)) {
        pb_sink_skip(m->out, PB_T_TIME_LINE, n + pairs_for(leftover)); /* for_chunks' $. still counts them */
        pb_sink_skip(m->out, PB_T_DISCOUNT, pairs_for(leftover));
        return PB_OK;
    }
    for (i = 0; i < n; i++)
        if ((st = emit_time_line(m, (uint32_t)(q + (i < rem)), fid, line)) != PB_OK)
            return st;
    return emit_uncounted(m, leftover, fid, line);
}

pb_status pb_model_time_lines_slow(pb_model *m, uint64_t units, uint64_t ticks_per_unit, int negative,
                                   int at_least_one, uint32_t fid, uint32_t line)
{
    uint64_t per = ticks_per_unit ? (uint64_t)INT32_MAX / ticks_per_unit : units;
    uint64_t n = pb_model_split_count(units, ticks_per_unit);
    pb_status st;
    if (n == 0 && at_least_one)
        n = 1;
    if (pb_model_budget_take(m, n) < 0)
        return budget_fail(m, n, fid, line, 0);
    if (!pb_sink_wants(m->out, PB_T_TIME_LINE)) {
        pb_sink_skip(m->out, PB_T_TIME_LINE, n); /* for_chunks' $. still counts them */
        return PB_OK;
    }
    if (per == 0)
        per = 1;
    do {
        uint64_t w = units < per ? units : per;
        int32_t t = (int32_t)(w * ticks_per_unit);
        pb_chunk c;
        if (!w && !at_least_one)
            break;
        pb_chunk_time_line(&c, negative ? -t : t, fid, line);
        if ((st = pb_model_emit(m, &c)) != PB_OK)
            return st;
        units -= w;
    } while (units);
    return PB_OK;
}

pb_status pb_model_skip_time_lines(pb_model *m, uint64_t n, uint32_t fid, uint32_t line)
{
    if (pb_model_budget_take(m, n) < 0)
        return budget_fail(m, n, fid, line, 0);
    pb_sink_skip(m->out, PB_T_TIME_LINE, n);
    return PB_OK;
}

void pb_model_free_fold(pb_model *m, pb_mtrie *trie, pb_mwalk *walk, pb_callev *cev)
{
    pb_model_free(m);
    pb_mtrie_free(trie);
    pb_mwalk_free(walk);
    pb_callev_free(cev);
}
