/* fold_spans.c - begin/end spans -> NYTProf chunks (see fold_spans.h).
 *
 * How exact SUB_CALLERS come out of a stream in completion order without
 * keeping subtrees:
 *
 * NYTProf books a call of sub S from caller C on the edge (C,S): count,
 * exclusive time always, and inclusive time either as "incl" (S was not
 * already active on the stack) or as "reci" with rec_depth = max number of
 * S frames above it.  Call that number j.  j is only final once the whole
 * ancestor chain is known, but it only ever grows: when a new span R (sub S)
 * adopts a root X, every node below X whose sub is S gets one more S
 * ancestor.  So each open root keeps, per distinct edge in its subtree,
 *     exposed = inclusive ns of the calls on that edge that still have j = 0
 *     maxj    = the largest j among the calls on that edge
 * and global per-edge totals are booked as if every j were final.  When R
 * (sub S) adopts X, for X's entries whose callee is S the exposed ns move
 * from incl to reci, maxj grows by one and rec_depth takes the new maxj.
 * The entries of the open roots live in one pool in the same order as the
 * roots, so the adopted roots' entries are always the pool's tail.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "fold_spans.h"
#include "call_events.h"
#include "model.h"
#include "present.h"

#define NONE PB_MODEL_NONE
/* TIME_LINE chunks allowed for one span: 65536 x INT32_MAX ns is ~39 hours
 * of exclusive time in one block; beyond that the data is taken as corrupt. */
#define MAX_SPLIT 65536u
/* the model file variant of a kind without a file: NEW_FID "(unknown file)" */
#define NOFILE_VARIANT 2
/* the package of every block name without "::", whatever its thread (the
 * thread's own package names its root sub only) */
#define BLOCK_PACKAGE "main"
/* get_edge()'s direct-mapped cache (a power of 2) */
#define EDGE_CACHE 256

/* ---- records ----------------------------------------------------------- */
typedef struct {
    uint32_t name;   /* string id */
    uint32_t file;   /* model file */
    uint32_t line;
} fs_kind;

typedef struct {
    uint64_t begin, end;
    uint64_t incl;   /* end - begin */
    uint64_t excl;   /* incl - children's incl (modular) */
    uint32_t sub;
    uint32_t height; /* levels, a leaf = 1 */
    size_t map_off;  /* its entries in the pool */
    size_t pmap_off; /* its stack entries in the path pool (stacks only) */
} fs_root;

typedef struct {
    uint32_t path;
    uint64_t ns;     /* exclusive ns of the spans on exactly this path */
} fs_pent;

typedef struct {
    uint32_t edge;
    uint32_t maxj;
    uint64_t exposed;
} fs_ment;

struct pb_spans {
    pb_sink *sink;
    pb_error *err;
    uint32_t max_depth;
    uint32_t max_names;
    uint32_t max_threads, nthreads; /* threads begun, at most max_threads */

    pb_model m;             /* strings, files and fids; subs and edges (per thread) */

    fs_kind *kinds;         /* kinds[key] */
    size_t nkinds, kinds_cap;
    uint32_t *dyn_kind;     /* per string id: the kind of that run-time name, NONE */
    size_t dyn_n, dyn_cap;
    uint32_t *def_kind;     /* per string id of a sub name: the kind whose file and
                             * line define that sub in every thread, NONE */
    size_t def_n, def_cap;
    unsigned char *info_sent; /* per string id of a sub name: its SUB_INFO is out
                               * (NYTProf's reader wants one per name per file) */
    size_t is_n, is_cap;

    /* per thread */
    int in_thread;
    pb_spans_thread th;
    char *package;
    uint32_t *sub_of_kind;  /* NONE = not yet */
    size_t sok_n, sok_cap;
    uint32_t root_sub;

    fs_root *top;
    size_t ntop, top_cap;
    fs_ment *pool;
    size_t npool, pool_cap;
    fs_ment *scratch;
    size_t scratch_cap;
    struct {                /* recent edges caller -> callee (the thread's: reset with its subs) */
        uint32_t caller, callee, edge;
    } ecache[EDGE_CACHE];
    uint32_t *edge_pos;     /* per edge: position in scratch (valid if edge_stamp == stamp) */
    uint32_t *edge_stamp;
    size_t ep_cap, es_cap;
    uint32_t stamp;

    pb_spans_stats cur, last;

    /* stacks (pb_spans_set_stacks): paths relative to each open root (a trie
     * of (parent path, sub)), their entries in a pool in root order like the
     * edge entries above */
    pb_sample_sink *stacks;
    pb_mtrie paths;
    fs_pent *ppool, *pscratch;
    size_t nppool, ppool_cap, pscratch_cap;
    uint32_t *path_pos, *path_stamp;
    size_t pp_cap, ps_cap;
    uint32_t *pre_of, *pre_stamp; /* per path p: [s, p...] in this adoption (pre_stamp == pstamp) */
    size_t po_cap, pr_cap;
    uint32_t pstamp;
    uint32_t *root_path;    /* per sub: the path [sub] (NONE: not yet) */
    size_t rp_cap, rp_n;    /* rp_n: entries valid for this thread */
    uint32_t *chain;        /* a path's subs, leaf first */
    size_t chain_cap;
    uint32_t *sub_frame;    /* per sub: frame id in `stacks`, NONE = not yet */
    size_t sf_cap, sf_n;    /* sf_n: entries valid for this thread */
    uint32_t *kind_of_sub;  /* per sub: the first block kind that named it (its
                             * span format's name for the stacks), NONE = none */
    size_t ks_cap, ks_n;    /* ks_n: entries valid for this thread */
    /* call events' working memory, here so that pb_spans_free() releases it
     * when a consumer leaves in the middle (pb_cleanups) */
    uint64_t *ce_w;
    size_t ce_w_cap;
    pb_mwalk walk;
    pb_callev cev;          /* the thread's stacks as SUB_RETURNs */
};

static pb_status spans_oom(pb_spans *f, uint64_t off) { return pb_model_oom(&f->m, off); }

static void spans_cleanup(void *p) { pb_spans_free((pb_spans *)p); }

static pb_str spans_sub_name(void *ctx, uint32_t sub) { return pb_model_sub_name(&((pb_spans *)ctx)->m, sub); }

pb_spans *pb_spans_new(pb_sink *sink, const pb_options *opt, pb_error *err)
{
    pb_spans *f = (pb_spans *)calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->sink = sink;
    f->err = err;
    f->max_depth = PB_SPANS_MAX_DEPTH;
    if (opt && opt->max_stack_depth && opt->max_stack_depth < f->max_depth)
        f->max_depth = opt->max_stack_depth;
    f->max_names = opt && opt->max_strings ? opt->max_strings : PB_DEFAULT_MAX_STRINGS;
    f->max_threads = opt && opt->max_threads ? opt->max_threads : PB_DEFAULT_MAX_THREADS;
    memset(f->ecache, 0xff, sizeof f->ecache);
    pb_model_init(&f->m, sink, err, "out of memory while folding spans");
    f->m.quiet_abort = 1; /* the span decoder reports a stopped consumer itself */
    pb_callev_init(&f->cev, sink, err, 1.0, spans_sub_name, f);
    pb_sink_defer(sink, spans_cleanup, f);
    return f;
}

void pb_spans_free(pb_spans *f)
{
    if (!f)
        return;
    PB_FREE_ALL(f->kinds, f->dyn_kind, f->def_kind, f->info_sent, f->package, f->sub_of_kind, f->kind_of_sub, f->top, f->pool, f->scratch, f->edge_pos,
                f->edge_stamp, f->ce_w, f->ppool, f->pscratch, f->path_pos, f->path_stamp, f->pre_of,
                f->pre_stamp, f->root_path, f->chain, f->sub_frame);
    pb_model_free_fold(&f->m, &f->paths, &f->walk, &f->cev);
    pb_sink_undefer(f->sink, f);
    free(f);
}

/* ---- kinds ------------------------------------------------------------ */
static pb_status add_kind(pb_spans *f, pb_str name, uint32_t file, uint32_t line, uint32_t *key)
{
    uint32_t nid;
    if (f->nkinds >= f->max_names)
        return pb_fail(f->err, PB_ERR_LIMIT, 0, "more than %u distinct block names (max_strings)", f->max_names);
    if (pb_grow((void **)&f->kinds, &f->kinds_cap, f->nkinds + 1, sizeof *f->kinds) < 0 ||
        pb_strtab_intern(&f->m.str, name.ptr, name.len, &nid) < 0) /* kind names are stored once per text */
        return spans_oom(f, 0);
    f->kinds[f->nkinds].name = nid;
    f->kinds[f->nkinds].file = file;
    f->kinds[f->nkinds].line = line;
    *key = (uint32_t)f->nkinds++;
    return PB_OK;
}

pb_status pb_spans_kind(pb_spans *f, pb_str name, pb_str file, uint32_t line, uint32_t *key)
{
    uint32_t fi;
    int r = file.len ? pb_model_file(&f->m, file.ptr, file.len, 0, PB_FID_VIA_STMT | PB_FID_VIA_SUB, &fi)
                     : pb_model_file(&f->m, "(unknown file)", 14, NOFILE_VARIANT, PB_FID_VIA_STMT | PB_FID_VIA_SUB, &fi);
    if (r < 0)
        return spans_oom(f, 0);
    return add_kind(f, name, fi, line, key);
}

const char *pb_spans_kind_name(const pb_spans *f, uint32_t key, size_t *len)
{
    if (key >= f->nkinds) {
        *len = 0;
        return "";
    }
    *len = pb_strtab_len(&f->m.str, f->kinds[key].name);
    return pb_strtab_ptr(&f->m.str, f->kinds[key].name);
}

pb_status pb_spans_dynamic_kind(pb_spans *f, pb_str name, uint32_t base_key, uint32_t *key)
{
    uint32_t d;
    pb_status st;
    if (base_key >= f->nkinds)
        return pb_fail(f->err, PB_ERR_CORRUPT, 0, "run-time name for unknown kind %u", base_key);
    if (pb_strtab_intern(&f->m.str, name.ptr, name.len, &d) < 0 ||
        pb_grow((void **)&f->dyn_kind, &f->dyn_cap, (size_t)d + 1, sizeof *f->dyn_kind) < 0)
        return spans_oom(f, 0);
    for (; f->dyn_n <= d; f->dyn_n++)
        f->dyn_kind[f->dyn_n] = NONE;
    if (f->dyn_kind[d] != NONE) {
        *key = f->dyn_kind[d];
        return PB_OK;
    }
    st = add_kind(f, name, f->kinds[base_key].file, f->kinds[base_key].line, key);
    if (st != PB_OK)
        return st;
    f->dyn_kind[d] = *key;
    return PB_OK;
}

/* ---- subs and edges (per thread) ---------------------------------------- */
static pb_status new_sub(pb_spans *f, const char *name, size_t len, uint32_t file, uint32_t line, uint32_t *sub)
{
    return pb_model_sub(&f->m, name, len, file, line, sub) < 0 ? spans_oom(f, 0) : PB_OK;
}

/* the sub named `name`, defined (SUB_INFO's file and first line) by the
 * first kind that gave any thread a sub of that name, so that every thread's
 * SUB_INFO of one sub agrees */
static pb_status block_sub(pb_spans *f, const char *name, size_t len, uint32_t key, uint32_t *sub, uint64_t off)
{
    uint32_t nid;
    const fs_kind *d;
    if (pb_strtab_intern(&f->m.str, name, len, &nid) < 0 ||
        pb_grow((void **)&f->def_kind, &f->def_cap, (size_t)nid + 1, sizeof *f->def_kind) < 0)
        return spans_oom(f, off);
    for (; f->def_n <= nid; f->def_n++)
        f->def_kind[f->def_n] = NONE;
    if (f->def_kind[nid] == NONE)
        f->def_kind[nid] = key;
    d = &f->kinds[f->def_kind[nid]];
    return new_sub(f, name, len, d->file, d->line, sub);
}

static pb_status sub_for_kind(pb_spans *f, uint32_t key, uint32_t *sub, uint64_t off)
{
    const fs_kind *k;
    const char *kn;
    size_t kl, pl = sizeof BLOCK_PACKAGE - 1;
    char stackbuf[512];
    char *buf = stackbuf;
    pb_status st;
    if (key < f->sok_n && f->sub_of_kind[key] != NONE) {
        *sub = f->sub_of_kind[key];
        return PB_OK;
    }
    if (key >= f->nkinds)
        return pb_fail(f->err, PB_ERR_CORRUPT, off, "span of unknown kind %u", key);
    if (key >= f->sok_n) {
        if (pb_grow((void **)&f->sub_of_kind, &f->sok_cap, f->nkinds, sizeof *f->sub_of_kind))
            return spans_oom(f, off);
        for (; f->sok_n < f->nkinds; f->sok_n++)
            f->sub_of_kind[f->sok_n] = NONE;
    }
    k = &f->kinds[key];
    kn = pb_strtab_ptr(&f->m.str, k->name);
    kl = pb_strtab_len(&f->m.str, k->name);
    /* a name with a package (a "::" outside brackets: not the std:: of
     * "operator<<(std::ostream&, const T&)") is kept; others go into main */
    if (kl >= 2 && memchr(kn, '\0', kl) == NULL && pb_name_package_end(kn, kl) != (size_t)-1) {
        st = block_sub(f, kn, kl, key, sub, off);
    } else {
        size_t need = pl + 2 + kl;
        if (need > sizeof stackbuf) {
            buf = (char *)malloc(need);
            if (!buf)
                return spans_oom(f, off);
        }
        memcpy(buf, BLOCK_PACKAGE, pl);
        memcpy(buf + pl, "::", 2);
        memcpy(buf + pl + 2, kn, kl);
        st = block_sub(f, buf, need, key, sub, off);
        if (buf != stackbuf)
            free(buf);
    }
    if (st == PB_OK) {
        f->sub_of_kind[key] = *sub;
        if (*sub >= f->ks_n) {
            if (pb_grow((void **)&f->kind_of_sub, &f->ks_cap, (size_t)*sub + 1, sizeof *f->kind_of_sub))
                return spans_oom(f, off);
            for (; f->ks_n <= *sub; f->ks_n++)
                f->kind_of_sub[f->ks_n] = NONE;
        }
        if (f->kind_of_sub[*sub] == NONE)
            f->kind_of_sub[*sub] = key;
    }
    return st;
}

/* the thread's edge caller -> callee, at the caller's file and line; a call
 * from the root (a top-level block) at the callee's file and line 0: the
 * source does not record where the program entered the block, and the
 * block's own line already holds the calls it makes (nytprofhtml lists line
 * 0 as "not associated with a specific line") */
static pb_status get_edge(pb_spans *f, uint32_t caller, uint32_t callee, uint32_t *edge, uint64_t off)
{
    const pb_msub *site = &f->m.subs[caller == f->root_sub ? callee : caller];
    size_t n = f->m.nedges;
    /* a thread's subs keep their file and line, so caller and callee name the edge */
    unsigned h = (unsigned)(pb_mix64(((uint64_t)caller << 32) | callee) & (EDGE_CACHE - 1));
    if (f->ecache[h].edge != NONE && f->ecache[h].caller == caller && f->ecache[h].callee == callee) {
        *edge = f->ecache[h].edge;
        return PB_OK;
    }
    if (pb_model_edge(&f->m, 0, caller, site->file, caller == f->root_sub ? 0 : site->first, callee, edge) < 0)
        return spans_oom(f, off);
    f->ecache[h].caller = caller;
    f->ecache[h].callee = callee;
    f->ecache[h].edge = *edge;
    if (f->m.nedges > n) {
        if (pb_grow((void **)&f->edge_pos, &f->ep_cap, f->m.nedges, sizeof *f->edge_pos) ||
            pb_grow((void **)&f->edge_stamp, &f->es_cap, f->m.nedges, sizeof *f->edge_stamp))
            return spans_oom(f, off);
        f->edge_stamp[*edge] = 0;
    }
    return PB_OK;
}

/* ---- chunks ------------------------------------------------------------- */
static int spans_emit_attr(pb_spans *f, const char *key, const char *val)
{
    return pb_emit_attribute(f->sink, key, val);
}

static pb_status time_line(pb_spans *f, uint64_t excl, uint32_t file, uint32_t line, uint64_t off)
{
    uint32_t fid;
    pb_status st;
    int neg = (int64_t)excl < 0;
    uint64_t mag = neg ? (uint64_t)0 - excl : excl;
    if (mag / (uint64_t)INT32_MAX >= MAX_SPLIT)
        return pb_fail(f->err, PB_ERR_LIMIT, off,
                       "block's exclusive time of %s%llu ns is beyond %u x 2^31 ns (about 39 hours); "
                       "its timestamps look corrupt", neg ? "-" : "", (unsigned long long)mag, MAX_SPLIT);
    if ((st = pb_model_fid(&f->m, file, &fid)) != PB_OK)
        return st;
    return pb_model_time_lines(&f->m, mag, 1, neg, 1, fid, line);
}

pb_status pb_spans_thread_begin(pb_spans *f, const pb_spans_thread *t)
{
    pb_chunk c;
    size_t pl;
    uint32_t i;
    if (f->in_thread)
        return pb_fail(f->err, PB_ERR_CORRUPT, 0, "thread started inside a thread");
    if (f->nthreads >= f->max_threads)
        return pb_fail_nooff(f->err, PB_ERR_LIMIT, "more than max_threads (%u) threads", f->max_threads);
    f->nthreads++;
    f->in_thread = 1;
    f->th = *t;
    free(f->package);
    pl = strlen(t->package ? t->package : "main");
    f->package = (char *)malloc(pl + 1);
    if (!f->package)
        return spans_oom(f, 0);
    memcpy(f->package, t->package ? t->package : "main", pl + 1);
    f->th.package = f->package;
    pb_model_reset_subs(&f->m); /* subs and edges are per thread */
    memset(f->ecache, 0xff, sizeof f->ecache);
    f->rp_n = 0;
    f->sf_n = 0; /* sub ids are per thread: their frame ids too */
    f->ks_n = 0;
    for (i = 0; i < f->sok_n; i++)
        f->sub_of_kind[i] = NONE;
    f->ntop = 0;
    f->npool = 0;
    memset(&f->cur, 0, sizeof f->cur);
    /* the synthetic root */
    {
        size_t need = pl + 2 + 7;
        char *buf = (char *)malloc(need);
        pb_status st;
        if (!buf)
            return spans_oom(f, 0);
        memcpy(buf, f->package, pl);
        memcpy(buf + pl, "::RUNTIME", 9);
        /* a fresh id even if a block is itself called "RUNTIME" */
        st = new_sub(f, buf, need, NONE, 1, &f->root_sub);
        free(buf);
        if (st != PB_OK)
            return st;
    }
    memset(&c, 0, sizeof c);
    pb_chunk_pid_start(&c, t->pid, t->ppid, t->start_time);
    return pb_emit(f->sink, &c) ? PB_ERR_ABORT : PB_OK;
}

/* Add (or merge) an entry of the map being built in scratch. */
static void put_entry(pb_spans *f, size_t *nout, uint32_t e, uint32_t maxj, uint64_t exposed)
{
    if (f->edge_stamp[e] == f->stamp) {
        fs_ment *m = &f->scratch[f->edge_pos[e]];
        m->exposed += exposed;
        if (m->maxj < maxj)
            m->maxj = maxj;
    } else {
        f->edge_stamp[e] = f->stamp;
        f->edge_pos[e] = (uint32_t)*nout;
        f->scratch[*nout].edge = e;
        f->scratch[*nout].maxj = maxj;
        f->scratch[*nout].exposed = exposed;
        (*nout)++;
    }
}

/* R (sub s) adopts top[k..ntop): book the edges and build R's entry map. */
static pb_status adopt(pb_spans *f, size_t k, uint32_t s, uint64_t *children_incl, uint32_t *height, uint64_t off)
{
    size_t i, p, from = f->top[k].map_off, nout = 0;
    uint32_t h = 0;
    uint64_t sum = 0;
    pb_status st;
    if (++f->stamp == 0) {
        memset(f->edge_stamp, 0, (size_t)f->m.nedges * sizeof *f->edge_stamp);
        f->stamp = 1;
    }
    /* worst case every pool entry plus one own edge per child */
    if (pb_grow((void **)&f->scratch, &f->scratch_cap, (f->npool - from) + (f->ntop - k), sizeof *f->scratch))
        return spans_oom(f, off);
    /* entries below the adopted roots */
    for (p = from; p < f->npool; p++) {
        fs_ment m = f->pool[p];
        pb_medge *e = &f->m.edges[m.edge];
        if (e->callee == s) {
            /* one more s frame above these calls */
            e->incl -= m.exposed;
            e->reci += m.exposed;
            m.exposed = 0;
            m.maxj++;
            if (e->rec_depth < m.maxj)
                e->rec_depth = m.maxj;
        }
        put_entry(f, &nout, m.edge, m.maxj, m.exposed);
    }
    /* the adopted roots themselves: calls s -> child */
    for (i = k; i < f->ntop; i++) {
        const fs_root *x = &f->top[i];
        uint32_t ed;
        pb_medge *e;
        if ((st = get_edge(f, s, x->sub, &ed, off)) != PB_OK)
            return st;
        e = &f->m.edges[ed];
        e->count++;
        e->excl += x->excl;
        if (x->sub == s) {
            e->reci += x->incl;
            if (e->rec_depth < 1)
                e->rec_depth = 1;
            put_entry(f, &nout, ed, 1, 0);
        } else {
            e->incl += x->incl;
            put_entry(f, &nout, ed, 0, x->incl);
        }
        sum += x->incl;
        if (h < x->height)
            h = x->height;
    }
    f->ntop = k;
    f->npool = from;
    if (pb_grow((void **)&f->pool, &f->pool_cap, from + nout, sizeof *f->pool))
        return spans_oom(f, off);
    memcpy(f->pool + from, f->scratch, nout * sizeof *f->pool);
    f->npool = from + nout;
    *children_incl = sum;
    *height = h;
    return PB_OK;
}


/* ---- stacks ------------------------------------------------------------- */
void pb_spans_set_stacks(pb_spans *f, pb_sample_sink *stacks) { f->stacks = stacks; }

static int path_intern(pb_spans *f, uint32_t parent, uint32_t sub, uint32_t *id)
{
    int r = pb_mtrie_get(&f->paths, parent, sub, id);
    if (r < 0)
        return -1;
    if (r == 0) {
        if (pb_grow((void **)&f->path_pos, &f->pp_cap, f->paths.len, sizeof *f->path_pos) ||
            pb_grow((void **)&f->path_stamp, &f->ps_cap, f->paths.len, sizeof *f->path_stamp) ||
            pb_grow((void **)&f->pre_of, &f->po_cap, f->paths.len, sizeof *f->pre_of) ||
            pb_grow((void **)&f->pre_stamp, &f->pr_cap, f->paths.len, sizeof *f->pre_stamp))
            return -1;
        f->path_stamp[*id] = 0;
        f->pre_stamp[*id] = 0;
    }
    return 0;
}

/* the path [s] (a thread's paths go at its end, with its sub ids) */
static int root_path(pb_spans *f, uint32_t s, uint32_t *id)
{
    if (s >= f->rp_n) {
        if (pb_grow((void **)&f->root_path, &f->rp_cap, (size_t)s + 1, sizeof *f->root_path))
            return -1;
        for (; f->rp_n <= s; f->rp_n++)
            f->root_path[f->rp_n] = NONE;
    }
    if (f->root_path[s] == NONE && path_intern(f, NONE, s, &f->root_path[s]))
        return -1;
    *id = f->root_path[s];
    return 0;
}

/* the subs of path p, leaf first; returns how many */
static int path_chain(pb_spans *f, uint32_t p, size_t *n)
{
    *n = 0;
    for (; p != NONE; p = f->paths.n[p].parent) {
        if (pb_grow((void **)&f->chain, &f->chain_cap, *n + 1, sizeof *f->chain))
            return -1;
        f->chain[(*n)++] = f->paths.n[p].item;
    }
    return 0;
}

/* s above path p: the path [s, p...].  Within one adoption (one s) each
 * path's result is kept, so a path costs one intern once its parent's is
 * known; paths are still created in the same order (top down, entry by
 * entry) as by interning every prefix anew. */
static int path_prepend(pb_spans *f, uint32_t s, uint32_t p, uint32_t *out)
{
    size_t n = 0, i;
    uint32_t q;
    for (; p != NONE && f->pre_stamp[p] != f->pstamp; p = f->paths.n[p].parent) {
        if (pb_grow((void **)&f->chain, &f->chain_cap, n + 1, sizeof *f->chain))
            return -1;
        f->chain[n++] = p;
    }
    if (p != NONE)
        q = f->pre_of[p];
    else if (root_path(f, s, &q))
        return -1;
    for (i = n; i-- > 0;) {
        uint32_t c = f->chain[i];
        if (path_intern(f, q, f->paths.n[c].item, &q))
            return -1;
        f->pre_stamp[c] = f->pstamp;
        f->pre_of[c] = q;
    }
    *out = q;
    return 0;
}

/* The path pool's entries from `from` on, with sub s above each (NONE: as
 * they are), replaced by one entry per distinct path (their ns summed):
 * R (sub s) adopting the roots from k on (from: their first entry), or a
 * seal merging every entry (from 0, s NONE) */
static pb_status merge_paths(pb_spans *f, size_t from, uint32_t s, uint64_t off)
{
    size_t p, nout = 0;
    if (++f->pstamp == 0) {
        memset(f->path_stamp, 0, f->paths.len * sizeof *f->path_stamp);
        memset(f->pre_stamp, 0, f->paths.len * sizeof *f->pre_stamp);
        f->pstamp = 1;
    }
    if (pb_grow((void **)&f->pscratch, &f->pscratch_cap, f->nppool - from + 1, sizeof *f->pscratch))
        return spans_oom(f, off);
    for (p = from; p < f->nppool; p++) {
        uint32_t q = f->ppool[p].path;
        if (s != NONE && path_prepend(f, s, q, &q))
            return spans_oom(f, off);
        if (f->path_stamp[q] == f->pstamp) {
            f->pscratch[f->path_pos[q]].ns += f->ppool[p].ns;
        } else {
            f->path_stamp[q] = f->pstamp;
            f->path_pos[q] = (uint32_t)nout;
            f->pscratch[nout].path = q;
            f->pscratch[nout++].ns = f->ppool[p].ns;
        }
    }
    memcpy(f->ppool + from, f->pscratch, nout * sizeof *f->ppool);
    f->nppool = from + nout;
    return PB_OK;
}

/* a span's own stack entry: [s] with its exclusive ns */
static pb_status own_stack(pb_spans *f, uint32_t s, uint64_t excl, uint64_t off)
{
    uint32_t q;
    if (root_path(f, s, &q) || pb_grow((void **)&f->ppool, &f->ppool_cap, f->nppool + 1, sizeof *f->ppool))
        return spans_oom(f, off);
    f->ppool[f->nppool].path = q;
    f->ppool[f->nppool++].ns = excl;
    return PB_OK;
}

static uint32_t path_sub(const void *ctx, uint32_t sub)
{
    (void)ctx;
    return sub;
}

/* Call events (call_events.h): the thread's stacks are the paths of a
 * prefix-closed trie (a path's parent is interned before it), so a depth-first
 * walk gives one SUB_RETURN per distinct stack, whatever the order in which
 * roots adopted each other.  Subtrees that hold no time are left out. */
static pb_status spans_call_events(pb_spans *f)
{
    size_t np = f->paths.len, i;
    uint64_t any = 0;
    pb_status st;
    if (!np)
        return PB_OK;
    if (pb_grow((void **)&f->ce_w, &f->ce_w_cap, np, sizeof *f->ce_w))
        return spans_oom(f, 0);
    memset(f->ce_w, 0, np * sizeof *f->ce_w);
    for (i = 0; i < f->nppool; i++) {
        f->ce_w[f->ppool[i].path] += f->ppool[i].ns;
        any |= f->ppool[i].ns;
    }
    /* a named thread's stacks stand on its root sub (<package>::RUNTIME):
     * block subs are shared by every thread, this frame keeps the threads
     * apart; the main thread's root is NYTProf's main::RUNTIME, the caller of
     * top-level code, which no Perl profile has as a frame of its own, so its
     * stacks start at its top-level blocks */
    if (any && strcmp(f->package, BLOCK_PACKAGE) != 0 && (st = pb_callev_base(&f->cev, f->root_sub)) != PB_OK)
        return st;
    pb_mwalk_reset(&f->walk);
    if ((st = pb_mtrie_replay(&f->paths, NONE, f->ce_w, 1, path_sub, NULL, &f->cev, &f->walk, f->err,
                               f->m.oom_msg)) != PB_OK)
        return st;
    return pb_callev_end(&f->cev);
}

/* the stacks sink's frame id for sub (interned the first time this thread) */
static pb_status sub_frame_id(pb_spans *f, uint32_t sub, uint32_t *id)
{
    pb_sample_sink *ss = f->stacks;
    if (sub >= f->sf_n) {
        if (pb_grow((void **)&f->sub_frame, &f->sf_cap, (size_t)sub + 1, sizeof *f->sub_frame))
            return spans_oom(f, 0);
        for (; f->sf_n <= sub; f->sf_n++)
            f->sub_frame[f->sf_n] = NONE;
    }
    if (f->sub_frame[sub] == NONE) {
        const pb_msub *sb = &f->m.subs[sub];
        const pb_mfile *fl = sb->file == NONE ? NULL : &f->m.files[sb->file];
        const char *nm = pb_strtab_ptr(&f->m.str, sb->name);
        size_t nl = pb_strtab_len(&f->m.str, sb->name), cut;
        pb_frame fr;
        pb_status st;
        memset(&fr, 0, sizeof fr);
        cut = pb_name_package_end(nm, nl);
        if (cut == (size_t)-1)
            cut = 0;
        fr.kind = PB_FRAME_SUB;
        fr.package = pb_str_make(nm, cut, pb_str_wide(nm, cut));
        fr.name = cut ? pb_str_make(nm + cut + 2, nl - cut - 2, pb_str_wide(nm + cut + 2, nl - cut - 2))
                      : pb_str_make(nm, nl, pb_str_wide(nm, nl));
        fr.file = sb->file == NONE || fl->variant == NOFILE_VARIANT
                      ? pb_str_c("")
                      : pb_str_make(pb_strtab_ptr(&f->m.str, fl->name), pb_strtab_len(&f->m.str, fl->name), 0);
        fr.line = fr.first_line = (int32_t)sb->first;
        if (sub < f->ks_n && f->kind_of_sub[sub] != NONE) {
            /* the block's name as its profiler shows it, without our package */
            const fs_kind *k = &f->kinds[f->kind_of_sub[sub]];
            const char *kn = pb_strtab_ptr(&f->m.str, k->name);
            size_t kl = pb_strtab_len(&f->m.str, k->name);
            fr.own = pb_str_make(kn, kl, pb_str_wide(kn, kl));
        }
        if ((st = ss->frame(ss, &fr, &f->sub_frame[sub])) != PB_OK)
            return st;
    }
    *id = f->sub_frame[sub];
    return PB_OK;
}

/* thread end: every remaining entry is a whole stack; one sample each */
static pb_status flush_stacks(pb_spans *f)
{
    size_t p, i, n;
    pb_status st;
    pb_sample_sink *ss = f->stacks;
    char label[32];
    snprintf(label, sizeof label, "%llu", (unsigned long long)f->th.tid);
    if (ss && (st = ss->thread(ss, f->th.tid, f->th.pid, f->th.ppid, label)) != PB_OK)
        return st;

    if ((st = spans_call_events(f)) != PB_OK)
        return st;
    for (p = 0; ss && p < f->nppool; p++) {
        if (f->ppool[p].ns == 0)
            continue;
        if (path_chain(f, f->ppool[p].path, &n))
            return spans_oom(f, 0);
        for (i = 0; i < n; i++) {
            uint32_t fid;
            if ((st = sub_frame_id(f, f->chain[i], &fid)) != PB_OK)
                return st;
            f->chain[i] = fid;
        }
        if ((st = ss->sample(ss, f->th.tid, f->chain, (uint32_t)n, f->ppool[p].ns, 0)) != PB_OK)
            return st;
    }

    /* paths and sub ids are per thread */
    f->nppool = 0;
    pb_mtrie_clear(&f->paths);
    f->rp_n = 0;
    return PB_OK;
}

pb_status pb_spans_span(pb_spans *f, uint32_t key, uint64_t begin_ns, uint64_t end_ns, uint64_t offset)
{
    uint32_t s, height = 0;
    size_t n = f->ntop, k = n;
    uint64_t children = 0, incl;
    size_t map_off, pmap_off;
    pb_status st;
    fs_root *r;
    if (!f->in_thread)
        return pb_fail(f->err, PB_ERR_CORRUPT, offset, "span outside a thread");
    if ((st = sub_for_kind(f, key, &s, offset)) != PB_OK)
        return st;
    if (f->m.subs[f->root_sub].file == NONE) {
        /* RUNTIME's SUB_INFO: line 1 of the first file the thread uses */
        f->m.subs[f->root_sub].file = f->kinds[key].file;
        f->m.subs[f->root_sub].first = 1;
    }
    if (n > 0 && begin_ns < f->top[n - 1].end) {
        k = n - 1;
        while (k > 0 && !(begin_ns > f->top[k - 1].begin))
            k--;
    }
    pmap_off = k < n ? f->top[k].pmap_off : f->nppool;
    if (k < n) {
        map_off = f->top[k].map_off; /* R's entries replace the adopted roots' */
        if ((st = merge_paths(f, f->top[k].pmap_off, s, offset)) != PB_OK)
            return st;
        if ((st = adopt(f, k, s, &children, &height, offset)) != PB_OK)
            return st;
    } else {
        map_off = f->npool;
    }
    height++;
    if (height > f->max_depth)
        return pb_fail(f->err, PB_ERR_LIMIT, offset,
                       f->max_depth < PB_SPANS_MAX_DEPTH
                           ? "block nesting is %u levels deep, more than max_stack_depth (%u)"
                           : "block nesting is %u levels deep; the limit is %u, where the profiler's own reader stops",
                       height, f->max_depth);
    if (pb_grow((void **)&f->top, &f->top_cap, f->ntop + 1, sizeof *f->top))
        return spans_oom(f, offset);
    r = &f->top[f->ntop];
    r->begin = begin_ns;
    r->end = end_ns;
    incl = end_ns - begin_ns;
    r->incl = incl;
    r->excl = incl - children;
    r->sub = s;
    r->height = height;
    r->map_off = map_off;
    r->pmap_off = pmap_off;
    if ((st = own_stack(f, s, r->excl, offset)) != PB_OK)
        return st;
    if (f->stacks && f->stacks->span) {
        uint32_t fid;
        if ((st = sub_frame_id(f, s, &fid)) != PB_OK ||
            (st = f->stacks->span(f->stacks, f->th.tid, fid, begin_ns, end_ns)) != PB_OK)
            return st;
    }
    f->ntop++;
    f->cur.spans++;
    if (height > f->cur.max_depth)
        f->cur.max_depth = height;
    return time_line(f, r->excl, f->kinds[key].file, f->kinds[key].line, offset);
}

/* the thread's roots so far (f->top) are called by RUNTIME: their edges
 * from the root sub, and its top-level count */
static pb_status roots_to_runtime(pb_spans *f)
{
    size_t i;
    pb_status st;
    for (i = 0; i < f->ntop; i++) {
        const fs_root *x = &f->top[i];
        uint32_t ed;
        if ((st = get_edge(f, f->root_sub, x->sub, &ed, 0)) != PB_OK)
            return st;
        f->m.edges[ed].count++;
        f->m.edges[ed].incl += x->incl;
        f->m.edges[ed].excl += x->excl;
    }
    f->cur.top_level += f->ntop;
    return PB_OK;
}

pb_status pb_spans_seal(pb_spans *f)
{
    pb_status st;
    if (!f->in_thread || f->stacks)
        return PB_OK;
    if ((st = roots_to_runtime(f)) != PB_OK)
        return st;
    f->ntop = 0;
    f->npool = 0;
    /* the sealed roots' stack entries: one per distinct path */
    return f->nppool > 1 ? merge_paths(f, 0, NONE, 0) : PB_OK;
}

pb_status pb_spans_thread_end(pb_spans *f)
{
    pb_chunk c;
    pb_status st;
    size_t i;
    char key[96], val[32];
    if (!f->in_thread)
        return PB_OK;
    /* the remaining roots are called by RUNTIME */
    if ((st = roots_to_runtime(f)) != PB_OK)
        return st;
    if ((st = flush_stacks(f)) != PB_OK)
        return st;
    f->ntop = 0;
    f->npool = 0;
    memset(&c, 0, sizeof c);

    snprintf(key, sizeof key, "thread_%llu_blocks", (unsigned long long)f->th.tid);
    snprintf(val, sizeof val, "%llu", (unsigned long long)f->cur.spans);
    if (spans_emit_attr(f, key, val))
        return PB_ERR_ABORT;
    snprintf(key, sizeof key, "thread_%llu_top_level", (unsigned long long)f->th.tid);
    snprintf(val, sizeof val, "%llu", (unsigned long long)f->cur.top_level);
    if (spans_emit_attr(f, key, val))
        return PB_ERR_ABORT;
    snprintf(key, sizeof key, "thread_%llu_max_depth", (unsigned long long)f->th.tid);
    snprintf(val, sizeof val, "%u", f->cur.max_depth);
    if (spans_emit_attr(f, key, val))
        return PB_ERR_ABORT;

    if (f->m.nedges > 0) {
        /* SUB_INFO for every sub of the thread (RUNTIME included) that no
         * earlier thread announced, then the edges */
        pb_mtime tm;
        tm.mul = 1;
        tm.div = 1e9;
        tm.excl_signed = 1;
        for (i = 0; i < f->m.nsubs; i++) {
            uint32_t nid = f->m.subs[i].name;
            if (pb_grow((void **)&f->info_sent, &f->is_cap, (size_t)nid + 1, 1) < 0)
                return spans_oom(f, 0);
            for (; f->is_n <= nid; f->is_n++)
                f->info_sent[f->is_n] = 0;
            f->m.subs[i].used = !f->info_sent[nid];
            f->info_sent[nid] = 1;
        }
        if ((st = pb_model_emit_sub_infos(&f->m, 1)) != PB_OK || (st = pb_model_emit_sub_callers(&f->m, 0, 1, &tm)) != PB_OK)
            return st;
    }
    {
        double end = f->th.end_time;
        if (!(end > f->th.start_time))
            end = f->th.start_time + 1e-6;
        pb_chunk_pid_end(&c, f->th.pid, end);
        if (pb_emit(f->sink, &c))
            return PB_ERR_ABORT;
    }
    f->last = f->cur;
    f->in_thread = 0;
    return PB_OK;
}

void pb_spans_last_stats(const pb_spans *f, pb_spans_stats *st)
{
    *st = f->last;
}
