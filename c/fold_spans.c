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
#include "util.h"

#define NONE UINT32_MAX
/* TIME_LINE chunks allowed for one span: 65536 x INT32_MAX ns is ~39 hours
 * of exclusive time in one block; beyond that the data is taken as corrupt. */
#define MAX_SPLIT 65536u

/* ---- a string table: bytes -> dense id ------------------------------- */
typedef struct {
    char *arena;
    size_t alen, acap;
    size_t *off;       /* per id: offset in arena (string is NUL-terminated there) */
    uint32_t *len;
    uint32_t n, cap;
    uint32_t *slot;    /* open addressing: id+1, 0 = empty */
    uint32_t mask;     /* slots - 1 */
} strtab;

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

static void strtab_free(strtab *t)
{
    free(t->arena);
    free(t->off);
    free(t->len);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

static void strtab_clear(strtab *t)
{
    t->alen = 0;
    t->n = 0;
    if (t->slot)
        memset(t->slot, 0, ((size_t)t->mask + 1) * sizeof *t->slot);
}

static const char *strtab_str(const strtab *t, uint32_t id) { return t->arena + t->off[id]; }

static int strtab_rehash(strtab *t, uint32_t nslots)
{
    uint32_t *ns = (uint32_t *)calloc(nslots, sizeof *ns);
    uint32_t i;
    if (!ns)
        return -1;
    for (i = 0; i < t->n; i++) {
        uint32_t h = (uint32_t)hash_bytes(t->arena + t->off[i], t->len[i]) & (nslots - 1);
        while (ns[h])
            h = (h + 1) & (nslots - 1);
        ns[h] = i + 1;
    }
    free(t->slot);
    t->slot = ns;
    t->mask = nslots - 1;
    return 0;
}

/* 1 found, 0 added, -1 out of memory */
static int strtab_intern(strtab *t, const char *p, size_t n, uint32_t *id)
{
    uint32_t h;
    if (!t->slot && strtab_rehash(t, 64))
        return -1;
    h = (uint32_t)hash_bytes(p, n) & t->mask;
    while (t->slot[h]) {
        uint32_t i = t->slot[h] - 1;
        if (t->len[i] == n && memcmp(t->arena + t->off[i], p, n) == 0) {
            *id = i;
            return 1;
        }
        h = (h + 1) & t->mask;
    }
    if (n > UINT32_MAX - 1)
        return -1;
    if (t->n == t->cap) {
        uint32_t nc = t->cap ? t->cap * 2 : 64;
        size_t *no = (size_t *)realloc(t->off, nc * sizeof *no);
        uint32_t *nl;
        if (!no)
            return -1;
        t->off = no;
        nl = (uint32_t *)realloc(t->len, nc * sizeof *nl);
        if (!nl)
            return -1;
        t->len = nl;
        t->cap = nc;
    }
    if (t->alen + n + 1 > t->acap) {
        size_t nc = t->acap ? t->acap : 4096;
        char *na;
        while (nc < t->alen + n + 1)
            nc *= 2;
        na = (char *)realloc(t->arena, nc);
        if (!na)
            return -1;
        t->arena = na;
        t->acap = nc;
    }
    memcpy(t->arena + t->alen, p, n);
    t->arena[t->alen + n] = '\0';
    t->off[t->n] = t->alen;
    t->len[t->n] = (uint32_t)n;
    t->alen += n + 1;
    t->slot[h] = t->n + 1;
    *id = t->n++;
    if ((uint64_t)t->n * 2 > (uint64_t)t->mask + 1 && strtab_rehash(t, (t->mask + 1) * 2))
        return -1;
    return 0;
}

/* ---- records ----------------------------------------------------------- */
typedef struct {
    uint32_t name;   /* in kind_names */
    uint32_t file;   /* in files */
    uint32_t line;
} fs_kind;

typedef struct {
    uint32_t name;   /* in sub_names */
    uint32_t file;   /* files index, NONE for the root */
    uint32_t line;
} fs_sub;

typedef struct {
    uint32_t caller, callee;
    uint32_t rec_depth;
    uint32_t next;   /* hash chain */
    uint64_t count;
    uint64_t incl, excl, reci; /* ns, modular arithmetic */
} fs_edge;

typedef struct {
    uint64_t begin, end;
    uint64_t incl;   /* end - begin */
    uint64_t excl;   /* incl - children's incl (modular) */
    uint32_t sub;
    uint32_t height; /* levels, a leaf = 1 */
    size_t map_off;  /* its entries in the pool */
    size_t pmap_off; /* its stack entries in the path pool (stacks only) */
} fs_root;

/* stacks: a path is a sub below a parent path (NONE: a root's own sub) */
typedef struct {
    uint32_t parent, sub;
} fs_path;

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

    strtab files;           /* file names */
    uint32_t *fid_of_file;  /* 0 = no NEW_FID sent yet */
    uint32_t fid_cap;
    uint32_t next_fid;

    strtab kind_names;      /* static kind names are not deduplicated: */
    fs_kind *kinds;         /* kinds[key] */
    uint32_t nkinds, kinds_cap;
    strtab dyn_names;       /* run-time names -> dyn_kind[] */
    uint32_t *dyn_kind;
    uint32_t dyn_cap;

    /* per thread */
    int in_thread;
    pb_spans_thread th;
    char *package;
    strtab sub_names;
    fs_sub *subs;
    uint32_t nsubs, subs_cap;
    uint32_t *sub_of_kind;  /* NONE = not yet */
    uint32_t sok_cap;
    uint32_t root_sub;

    fs_edge *edges;
    uint32_t nedges, edges_cap;
    uint32_t *edge_head;    /* hash buckets */
    uint32_t edge_mask;

    fs_root *top;
    size_t ntop, top_cap;
    fs_ment *pool;
    size_t npool, pool_cap;
    fs_ment *scratch;
    size_t scratch_cap;
    uint32_t *edge_pos;     /* per edge: position in scratch (valid if edge_stamp == stamp) */
    uint32_t *edge_stamp;
    uint32_t ep_cap;
    uint32_t stamp;

    pb_spans_stats cur, last;

    /* stacks (pb_spans_set_stacks): paths relative to each open root, their
     * entries in a pool in root order like the edge entries above */
    pb_sample_sink *stacks;
    fs_path *paths;
    size_t npaths, paths_cap;
    uint32_t *path_slot;    /* open addressing: path+1, 0 = empty */
    size_t path_slots;
    fs_pent *ppool, *pscratch;
    size_t nppool, ppool_cap, pscratch_cap;
    uint32_t *path_pos, *path_stamp;
    size_t pp_cap;
    uint32_t pstamp;
    uint32_t *chain;        /* a path's subs, leaf first */
    size_t chain_cap;
    uint32_t *sub_frame;    /* per sub: frame id in `stacks`, NONE = not yet */
    size_t sf_cap, sf_n;    /* sf_n: entries valid for this thread */
    uint32_t *rchain;       /* a path's subs, root first (call events) */
    size_t rchain_cap;
    /* call events' working memory, here so that pb_spans_free() releases it
     * when a consumer leaves in the middle (pb_cleanups) */
    uint64_t *ce_w;
    uint32_t *ce_first, *ce_kids, *ce_walk;
    size_t ce_w_cap, ce_first_cap, ce_kids_cap, ce_walk_cap;
    pb_callev cev;          /* the thread's stacks as SUB_RETURNs */
};

static pb_status oom(pb_spans *f, uint64_t off)
{
    return pb_fail(f->err, PB_ERR_LIMIT, off, "out of memory while folding spans");
}

static int grow32(void **p, uint32_t *cap, size_t need, size_t elem)
{
    size_t c = *cap;
    int r;
    if (need > UINT32_MAX / 2)
        return -1;
    r = pb_grow(p, &c, need, elem);
    *cap = (uint32_t)c;
    return r;
}

static void spans_cleanup(void *p) { pb_spans_free((pb_spans *)p); }

static int is_utf8(const char *s, size_t n);

static pb_str spans_sub_name(void *ctx, uint32_t sub)
{
    pb_spans *f = (pb_spans *)ctx;
    const char *nm = strtab_str(&f->sub_names, f->subs[sub].name);
    size_t nl = f->sub_names.len[f->subs[sub].name];
    return pb_str_make(nm, nl, is_utf8(nm, nl));
}

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
    f->next_fid = 1;
    pb_callev_init(&f->cev, sink, err, 1.0, spans_sub_name, f);
    pb_sink_defer(sink, spans_cleanup, f);
    return f;
}

void pb_spans_free(pb_spans *f)
{
    if (!f)
        return;
    strtab_free(&f->files);
    strtab_free(&f->kind_names);
    strtab_free(&f->dyn_names);
    strtab_free(&f->sub_names);
    free(f->fid_of_file);
    free(f->kinds);
    free(f->dyn_kind);
    free(f->package);
    free(f->subs);
    free(f->sub_of_kind);
    free(f->edges);
    free(f->edge_head);
    free(f->top);
    free(f->pool);
    free(f->scratch);
    free(f->edge_pos);
    free(f->edge_stamp);
    free(f->paths);
    free(f->rchain);
    free(f->ce_w);
    free(f->ce_first);
    free(f->ce_kids);
    free(f->ce_walk);
    pb_callev_free(&f->cev);
    free(f->path_slot);
    free(f->ppool);
    free(f->pscratch);
    free(f->path_pos);
    free(f->path_stamp);
    free(f->chain);
    free(f->sub_frame);
    pb_sink_undefer(f->sink, f);
    free(f);
}

/* ---- fids ------------------------------------------------------------- */
/* names with bytes >= 0x80 that are valid UTF-8 are flagged UTF-8 (util.h) */
static int is_utf8(const char *s, size_t n) { return pb_has_high(s, n) && pb_utf8_valid(s, n); }

static pb_status file_fid(pb_spans *f, uint32_t file, uint32_t *fid)
{
    if (f->fid_of_file[file] == 0) {
        pb_chunk c;
        const char *name = strtab_str(&f->files, file);
        size_t len = f->files.len[file];
        pb_str s;
        if (len == 0) {
            name = "(unknown file)";
            len = strlen(name);
        }
        s = pb_str_make(name, len, is_utf8(name, len));
        f->fid_of_file[file] = f->next_fid++;
        memset(&c, 0, sizeof c);
        pb_chunk_new_fid(&c, f->fid_of_file[file], 0, 0, PB_FID_VIA_STMT | PB_FID_VIA_SUB, 0, 0, s);
        if (pb_emit(f->sink, &c))
            return PB_ERR_ABORT;
    }
    *fid = f->fid_of_file[file];
    return PB_OK;
}

static pb_status intern_file(pb_spans *f, pb_str file, uint32_t *id)
{
    int r = strtab_intern(&f->files, file.ptr, file.len, id);
    if (r < 0)
        return oom(f, 0);
    if (r == 0) {
        if (grow32((void **)&f->fid_of_file, &f->fid_cap, (size_t)*id + 1, sizeof *f->fid_of_file))
            return oom(f, 0);
        f->fid_of_file[*id] = 0;
    }
    return PB_OK;
}

/* ---- kinds ------------------------------------------------------------ */
static pb_status add_kind(pb_spans *f, pb_str name, uint32_t file, uint32_t line, uint32_t *key)
{
    uint32_t nid;
    int r;
    if (f->nkinds >= f->max_names)
        return pb_fail(f->err, PB_ERR_LIMIT, 0, "more than %u distinct block names (max_strings)", f->max_names);
    if (grow32((void **)&f->kinds, &f->kinds_cap, (size_t)f->nkinds + 1, sizeof *f->kinds))
        return oom(f, 0);
    /* kind names are stored once per distinct text */
    r = strtab_intern(&f->kind_names, name.ptr, name.len, &nid);
    if (r < 0)
        return oom(f, 0);
    f->kinds[f->nkinds].name = nid;
    f->kinds[f->nkinds].file = file;
    f->kinds[f->nkinds].line = line;
    *key = f->nkinds++;
    return PB_OK;
}

pb_status pb_spans_kind(pb_spans *f, pb_str name, pb_str file, uint32_t line, uint32_t *key)
{
    uint32_t fi;
    pb_status st = intern_file(f, file, &fi);
    if (st != PB_OK)
        return st;
    return add_kind(f, name, fi, line, key);
}

const char *pb_spans_kind_name(const pb_spans *f, uint32_t key, size_t *len)
{
    if (key >= f->nkinds) {
        *len = 0;
        return "";
    }
    *len = f->kind_names.len[f->kinds[key].name];
    return strtab_str(&f->kind_names, f->kinds[key].name);
}

pb_status pb_spans_dynamic_kind(pb_spans *f, pb_str name, uint32_t base_key, uint32_t *key)
{
    uint32_t d;
    int r;
    pb_status st;
    if (base_key >= f->nkinds)
        return pb_fail(f->err, PB_ERR_CORRUPT, 0, "run-time name for unknown kind %u", base_key);
    r = strtab_intern(&f->dyn_names, name.ptr, name.len, &d);
    if (r < 0)
        return oom(f, 0);
    if (r == 1) {
        *key = f->dyn_kind[d];
        return PB_OK;
    }
    if (grow32((void **)&f->dyn_kind, &f->dyn_cap, (size_t)d + 1, sizeof *f->dyn_kind))
        return oom(f, 0);
    st = add_kind(f, name, f->kinds[base_key].file, f->kinds[base_key].line, key);
    if (st != PB_OK)
        return st;
    f->dyn_kind[d] = *key;
    return PB_OK;
}

/* ---- subs and edges (per thread) ---------------------------------------- */
static pb_status new_sub(pb_spans *f, const char *name, size_t len, uint32_t file, uint32_t line, uint32_t *sub)
{
    uint32_t id;
    int r = strtab_intern(&f->sub_names, name, len, &id);
    if (r < 0)
        return oom(f, 0);
    if (r == 1) {
        *sub = id;
        return PB_OK;
    }
    if (grow32((void **)&f->subs, &f->subs_cap, (size_t)id + 1, sizeof *f->subs))
        return oom(f, 0);
    f->subs[id].name = id;
    f->subs[id].file = file;
    f->subs[id].line = line;
    f->nsubs = id + 1;
    *sub = id;
    return PB_OK;
}

static pb_status sub_for_kind(pb_spans *f, uint32_t key, uint32_t *sub, uint64_t off)
{
    const fs_kind *k;
    const char *kn;
    size_t kl, pl;
    char stackbuf[512];
    char *buf = stackbuf;
    pb_status st;
    if (key < f->sok_cap && f->sub_of_kind[key] != NONE) {
        *sub = f->sub_of_kind[key];
        return PB_OK;
    }
    if (key >= f->nkinds)
        return pb_fail(f->err, PB_ERR_CORRUPT, off, "span of unknown kind %u", key);
    if (key >= f->sok_cap) {
        uint32_t old = f->sok_cap, i;
        if (grow32((void **)&f->sub_of_kind, &f->sok_cap, (size_t)f->nkinds, sizeof *f->sub_of_kind))
            return oom(f, off);
        for (i = old; i < f->sok_cap; i++)
            f->sub_of_kind[i] = NONE;
    }
    k = &f->kinds[key];
    kn = strtab_str(&f->kind_names, k->name);
    kl = f->kind_names.len[k->name];
    pl = strlen(f->package);
    if (kl >= 2 && strstr(kn, "::") != NULL && memchr(kn, '\0', kl) == NULL) {
        st = new_sub(f, kn, kl, k->file, k->line, sub);
    } else {
        size_t need = pl + 2 + kl;
        if (need > sizeof stackbuf) {
            buf = (char *)malloc(need);
            if (!buf)
                return oom(f, off);
        }
        memcpy(buf, f->package, pl);
        memcpy(buf + pl, "::", 2);
        memcpy(buf + pl + 2, kn, kl);
        st = new_sub(f, buf, need, k->file, k->line, sub);
        if (buf != stackbuf)
            free(buf);
    }
    if (st == PB_OK)
        f->sub_of_kind[key] = *sub;
    return st;
}

static uint32_t edge_hash(uint32_t a, uint32_t b)
{
    uint64_t k = ((uint64_t)a << 32) | b;
    k *= 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(k >> 32);
}

static pb_status get_edge(pb_spans *f, uint32_t caller, uint32_t callee, uint32_t *edge, uint64_t off)
{
    uint32_t h, e;
    if (f->edge_head) {
        h = edge_hash(caller, callee) & f->edge_mask;
        for (e = f->edge_head[h]; e != NONE; e = f->edges[e].next)
            if (f->edges[e].caller == caller && f->edges[e].callee == callee) {
                *edge = e;
                return PB_OK;
            }
    }
    if (grow32((void **)&f->edges, &f->edges_cap, (size_t)f->nedges + 1, sizeof *f->edges))
        return oom(f, off);
    if (grow32((void **)&f->edge_pos, &f->ep_cap, (size_t)f->nedges + 1, sizeof *f->edge_pos))
        return oom(f, off);
    {
        uint32_t cap = f->ep_cap;
        void *ns = realloc(f->edge_stamp, (size_t)cap * sizeof *f->edge_stamp);
        if (!ns)
            return oom(f, off);
        f->edge_stamp = (uint32_t *)ns;
    }
    e = f->nedges++;
    memset(&f->edges[e], 0, sizeof f->edges[e]);
    f->edges[e].caller = caller;
    f->edges[e].callee = callee;
    f->edge_stamp[e] = 0;
    if (!f->edge_head || (uint64_t)f->nedges > (uint64_t)f->edge_mask + 1) {
        uint32_t nb = f->edge_head ? (f->edge_mask + 1) * 2 : 256, i;
        uint32_t *heads = (uint32_t *)malloc((size_t)nb * sizeof *heads);
        if (!heads)
            return oom(f, off);
        for (i = 0; i < nb; i++)
            heads[i] = NONE;
        for (i = 0; i < f->nedges; i++) {
            uint32_t hh = edge_hash(f->edges[i].caller, f->edges[i].callee) & (nb - 1);
            f->edges[i].next = heads[hh];
            heads[hh] = i;
        }
        free(f->edge_head);
        f->edge_head = heads;
        f->edge_mask = nb - 1;
    } else {
        h = edge_hash(caller, callee) & f->edge_mask;
        f->edges[e].next = f->edge_head[h];
        f->edge_head[h] = e;
    }
    *edge = e;
    return PB_OK;
}

/* ---- chunks ------------------------------------------------------------- */
static int emit_attr(pb_spans *f, const char *key, const char *val)
{
    return pb_emit_attribute(f->sink, key, val);
}

static pb_status time_line(pb_spans *f, uint64_t excl, uint32_t file, uint32_t line, uint64_t off)
{
    pb_chunk c;
    uint32_t fid;
    pb_status st;
    int neg = (int64_t)excl < 0;
    uint64_t mag = neg ? (uint64_t)0 - excl : excl;
    if (mag / (uint64_t)INT32_MAX >= MAX_SPLIT)
        return pb_fail(f->err, PB_ERR_LIMIT, off,
                       "block's exclusive time of %s%llu ns is beyond %u x 2^31 ns (about 39 hours); "
                       "its timestamps look corrupt", neg ? "-" : "", (unsigned long long)mag, MAX_SPLIT);
    if ((st = file_fid(f, file, &fid)) != PB_OK)
        return st;
    memset(&c, 0, sizeof c);
    do {
        uint64_t part = mag > (uint64_t)INT32_MAX ? (uint64_t)INT32_MAX : mag;
        pb_chunk_time_line(&c, neg ? -(int32_t)part : (int32_t)part, fid, line);
        if (pb_emit(f->sink, &c))
            return PB_ERR_ABORT;
        mag -= part;
    } while (mag > 0);
    return PB_OK;
}

pb_status pb_spans_thread_begin(pb_spans *f, const pb_spans_thread *t)
{
    pb_chunk c;
    size_t pl;
    uint32_t i;
    if (f->in_thread)
        return pb_fail(f->err, PB_ERR_CORRUPT, 0, "thread started inside a thread");
    f->in_thread = 1;
    f->th = *t;
    free(f->package);
    pl = strlen(t->package ? t->package : "main");
    f->package = (char *)malloc(pl + 1);
    if (!f->package)
        return oom(f, 0);
    memcpy(f->package, t->package ? t->package : "main", pl + 1);
    f->th.package = f->package;
    strtab_clear(&f->sub_names);
    f->nsubs = 0;
    f->sf_n = 0; /* sub ids are per thread: their frame ids too */
    for (i = 0; i < f->sok_cap; i++)
        f->sub_of_kind[i] = NONE;
    f->nedges = 0;
    if (f->edge_head)
        for (i = 0; i <= f->edge_mask; i++)
            f->edge_head[i] = NONE;
    f->ntop = 0;
    f->npool = 0;
    memset(&f->cur, 0, sizeof f->cur);
    /* the synthetic root */
    {
        size_t need = pl + 2 + 7;
        char *buf = (char *)malloc(need);
        pb_status st;
        if (!buf)
            return oom(f, 0);
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
        memset(f->edge_stamp, 0, (size_t)f->nedges * sizeof *f->edge_stamp);
        f->stamp = 1;
    }
    /* worst case every pool entry plus one own edge per child */
    if (pb_grow((void **)&f->scratch, &f->scratch_cap, (f->npool - from) + (f->ntop - k), sizeof *f->scratch))
        return oom(f, off);
    /* entries below the adopted roots */
    for (p = from; p < f->npool; p++) {
        fs_ment m = f->pool[p];
        fs_edge *e = &f->edges[m.edge];
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
        fs_edge *e;
        if ((st = get_edge(f, s, x->sub, &ed, off)) != PB_OK)
            return st;
        e = &f->edges[ed];
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
        return oom(f, off);
    memcpy(f->pool + from, f->scratch, nout * sizeof *f->pool);
    f->npool = from + nout;
    *children_incl = sum;
    *height = h;
    return PB_OK;
}


/* ---- stacks ------------------------------------------------------------- */
void pb_spans_set_stacks(pb_spans *f, pb_sample_sink *stacks) { f->stacks = stacks; }

static uint32_t path_hash(uint32_t parent, uint32_t sub)
{
    return pb_mix64(((uint64_t)parent << 32) | sub);
}

static int path_rehash(pb_spans *f, size_t nslots)
{
    uint32_t *ns = (uint32_t *)calloc(nslots, sizeof *ns);
    size_t i;
    if (!ns)
        return -1;
    for (i = 0; i < f->npaths; i++) {
        size_t h = path_hash(f->paths[i].parent, f->paths[i].sub) & (nslots - 1);
        while (ns[h])
            h = (h + 1) & (nslots - 1);
        ns[h] = (uint32_t)i + 1;
    }
    free(f->path_slot);
    f->path_slot = ns;
    f->path_slots = nslots;
    return 0;
}

static int path_intern(pb_spans *f, uint32_t parent, uint32_t sub, uint32_t *id)
{
    size_t h;
    if ((f->npaths + 1) * 2 > f->path_slots && path_rehash(f, f->path_slots ? f->path_slots * 2 : 256))
        return -1;
    for (h = path_hash(parent, sub) & (f->path_slots - 1); f->path_slot[h]; h = (h + 1) & (f->path_slots - 1)) {
        const fs_path *o = &f->paths[f->path_slot[h] - 1];
        if (o->parent == parent && o->sub == sub) {
            *id = f->path_slot[h] - 1;
            return 0;
        }
    }
    if (f->npaths >= UINT32_MAX - 1 || pb_grow((void **)&f->paths, &f->paths_cap, f->npaths + 1, sizeof *f->paths) ||
        pb_grow((void **)&f->path_pos, &f->pp_cap, f->npaths + 1, sizeof *f->path_pos))
        return -1;
    {
        size_t c = f->pp_cap;
        uint32_t *ns = (uint32_t *)realloc(f->path_stamp, c * sizeof *ns);
        if (!ns)
            return -1;
        memset(ns + f->npaths, 0, (c - f->npaths) * sizeof *ns);
        f->path_stamp = ns;
    }
    f->paths[f->npaths].parent = parent;
    f->paths[f->npaths].sub = sub;
    f->path_slot[h] = (uint32_t)f->npaths + 1;
    *id = (uint32_t)f->npaths++;
    return 0;
}

/* the subs of path p, leaf first; returns how many */
static int path_chain(pb_spans *f, uint32_t p, size_t *n)
{
    *n = 0;
    for (; p != NONE; p = f->paths[p].parent) {
        if (pb_grow((void **)&f->chain, &f->chain_cap, *n + 1, sizeof *f->chain))
            return -1;
        f->chain[(*n)++] = f->paths[p].sub;
    }
    return 0;
}

/* s above path p: the path [s, p...] */
static int path_prepend(pb_spans *f, uint32_t s, uint32_t p, uint32_t *out)
{
    size_t n, i;
    uint32_t q;
    if (path_chain(f, p, &n) || path_intern(f, NONE, s, &q))
        return -1;
    for (i = n; i-- > 0;)
        if (path_intern(f, q, f->chain[i], &q))
            return -1;
    *out = q;
    return 0;
}

/* R (sub s) adopts the roots from k on: their stack entries, with s above
 * each, replace them at the tail of the path pool (equal paths merged) */
static pb_status adopt_stacks(pb_spans *f, size_t k, uint32_t s, uint64_t off)
{
    size_t from = f->top[k].pmap_off, p, nout = 0;
    if (++f->pstamp == 0) {
        memset(f->path_stamp, 0, f->npaths * sizeof *f->path_stamp);
        f->pstamp = 1;
    }
    if (pb_grow((void **)&f->pscratch, &f->pscratch_cap, f->nppool - from + 1, sizeof *f->pscratch))
        return oom(f, off);
    for (p = from; p < f->nppool; p++) {
        uint32_t q;
        if (path_prepend(f, s, f->ppool[p].path, &q))
            return oom(f, off);
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
    if (path_intern(f, NONE, s, &q) ||
        pb_grow((void **)&f->ppool, &f->ppool_cap, f->nppool + 1, sizeof *f->ppool))
        return oom(f, off);
    f->ppool[f->nppool].path = q;
    f->ppool[f->nppool++].ns = excl;
    return PB_OK;
}

/* Call events (call_events.h): the thread's stacks are the paths of a
 * prefix-closed trie (a path's parent is interned before it), so a depth-first
 * walk gives one SUB_RETURN per distinct stack, whatever the order in which
 * roots adopted each other.  Subtrees that hold no time are left out. */
static pb_status call_events(pb_spans *f)
{
    size_t np = f->npaths, i, sp;
    uint64_t *w, *tot;
    uint32_t *first, *kids, *walk;
    pb_status st = PB_OK;
    if (!np)
        return PB_OK;
    /* ce_w holds the weights (np) and then the subtree totals (np) */
    if (np > SIZE_MAX / 2 - 2 || pb_grow((void **)&f->ce_w, &f->ce_w_cap, 2 * np, sizeof *f->ce_w) ||
        pb_grow((void **)&f->ce_first, &f->ce_first_cap, np + 2, sizeof *f->ce_first) ||
        pb_grow((void **)&f->ce_kids, &f->ce_kids_cap, np, sizeof *f->ce_kids) ||
        pb_grow((void **)&f->ce_walk, &f->ce_walk_cap, 2 * (np + 1), sizeof *f->ce_walk) ||
        pb_grow((void **)&f->rchain, &f->rchain_cap, np + 1, sizeof *f->rchain))
        return oom(f, 0);
    w = f->ce_w;
    tot = f->ce_w + np;
    first = f->ce_first;
    kids = f->ce_kids;
    walk = f->ce_walk;
    memset(w, 0, np * sizeof *w);
    memset(first, 0, (np + 2) * sizeof *first);
    for (i = 0; i < f->nppool; i++)
        w[f->ppool[i].path] += f->ppool[i].ns;
    /* subtree totals (children after parents), and children per parent (slot np: roots) */
    memcpy(tot, w, np * sizeof *tot);
    for (i = np; i-- > 0;)
        if (f->paths[i].parent != NONE)
            tot[f->paths[i].parent] += tot[i];
    for (i = 0; i < np; i++)
        if (tot[i])
            first[(f->paths[i].parent == NONE ? np : f->paths[i].parent) + 1]++;
    for (i = 0; i <= np; i++)
        first[i + 1] += first[i];
    for (i = 0; i <= np; i++)
        walk[i] = first[i];
    for (i = 0; i < np; i++)
        if (tot[i])
            kids[walk[f->paths[i].parent == NONE ? np : f->paths[i].parent]++] = (uint32_t)i;
    /* depth first from the roots (node np) */
    walk[0] = (uint32_t)np;
    walk[1] = first[np];
    sp = 1;
    while (sp && st == PB_OK) {
        uint32_t node = walk[2 * (sp - 1)], *next = &walk[2 * (sp - 1) + 1];
        if (*next < first[node + 1]) {
            uint32_t c = kids[(*next)++];
            f->rchain[sp - 1] = f->paths[c].sub;
            st = pb_callev_stack(&f->cev, f->rchain, sp, w[c]);
            walk[2 * sp] = c;
            walk[2 * sp + 1] = first[c];
            sp++;
        } else {
            sp--;
        }
    }
    if (st == PB_OK)
        st = pb_callev_end(&f->cev);
    return st;
}

/* the stacks sink's frame id for sub (interned the first time this thread) */
static pb_status sub_frame_id(pb_spans *f, uint32_t sub, uint32_t *id)
{
    pb_sample_sink *ss = f->stacks;
    if (sub >= f->sf_n) {
        if (pb_grow((void **)&f->sub_frame, &f->sf_cap, (size_t)sub + 1, sizeof *f->sub_frame))
            return oom(f, 0);
        for (; f->sf_n <= sub; f->sf_n++)
            f->sub_frame[f->sf_n] = NONE;
    }
    if (f->sub_frame[sub] == NONE) {
        const fs_sub *sb = &f->subs[sub];
        const char *nm = strtab_str(&f->sub_names, sb->name);
        size_t nl = f->sub_names.len[sb->name], cut = 0, j;
        pb_frame fr;
        pb_status st;
        memset(&fr, 0, sizeof fr);
        for (j = 0; j + 1 < nl; j++)
            if (nm[j] == ':' && nm[j + 1] == ':')
                cut = j;
        fr.kind = PB_FRAME_SUB;
        fr.package = pb_str_make(nm, cut, is_utf8(nm, cut));
        fr.name = cut ? pb_str_make(nm + cut + 2, nl - cut - 2, is_utf8(nm + cut + 2, nl - cut - 2))
                      : pb_str_make(nm, nl, is_utf8(nm, nl));
        fr.file = sb->file == NONE ? pb_str_c("") : pb_str_make(strtab_str(&f->files, sb->file), f->files.len[sb->file], 0);
        fr.line = fr.first_line = (int32_t)sb->line;
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

    if ((st = call_events(f)) != PB_OK)
        return st;
    for (p = 0; ss && p < f->nppool; p++) {
        if (f->ppool[p].ns == 0)
            continue;
        if (path_chain(f, f->ppool[p].path, &n))
            return oom(f, 0);
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
    f->npaths = 0;
    if (f->path_slot)
        memset(f->path_slot, 0, f->path_slots * sizeof *f->path_slot);
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
    if (f->subs[f->root_sub].file == NONE) {
        /* RUNTIME's SUB_INFO: line 1 of the first file the thread uses */
        f->subs[f->root_sub].file = f->kinds[key].file;
        f->subs[f->root_sub].line = 1;
    }
    if (n > 0 && begin_ns < f->top[n - 1].end) {
        k = n - 1;
        while (k > 0 && !(begin_ns > f->top[k - 1].begin))
            k--;
    }
    pmap_off = k < n ? f->top[k].pmap_off : f->nppool;
    if (k < n) {
        map_off = f->top[k].map_off; /* R's entries replace the adopted roots' */
        if ((st = adopt_stacks(f, k, s, offset)) != PB_OK)
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
                           : "block nesting is %u levels deep; the limit is %u (EasyProfiler's reader stops at 254)",
                       height, f->max_depth);
    if (pb_grow((void **)&f->top, &f->top_cap, f->ntop + 1, sizeof *f->top))
        return oom(f, offset);
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

pb_status pb_spans_thread_end(pb_spans *f)
{
    pb_chunk c;
    pb_status st;
    size_t i;
    uint32_t e;
    char key[96], val[32];
    if (!f->in_thread)
        return PB_OK;
    /* the remaining roots are called by RUNTIME */
    for (i = 0; i < f->ntop; i++) {
        const fs_root *x = &f->top[i];
        uint32_t ed;
        if ((st = get_edge(f, f->root_sub, x->sub, &ed, 0)) != PB_OK)
            return st;
        f->edges[ed].count++;
        f->edges[ed].incl += x->incl;
        f->edges[ed].excl += x->excl;
    }
    f->cur.top_level = f->ntop;
    if ((st = flush_stacks(f)) != PB_OK)
        return st;
    f->ntop = 0;
    f->npool = 0;
    memset(&c, 0, sizeof c);

    snprintf(key, sizeof key, "thread_%llu_blocks", (unsigned long long)f->th.tid);
    snprintf(val, sizeof val, "%llu", (unsigned long long)f->cur.spans);
    if (emit_attr(f, key, val))
        return PB_ERR_ABORT;
    snprintf(key, sizeof key, "thread_%llu_top_level", (unsigned long long)f->th.tid);
    snprintf(val, sizeof val, "%llu", (unsigned long long)f->cur.top_level);
    if (emit_attr(f, key, val))
        return PB_ERR_ABORT;
    snprintf(key, sizeof key, "thread_%llu_max_depth", (unsigned long long)f->th.tid);
    snprintf(val, sizeof val, "%u", f->cur.max_depth);
    if (emit_attr(f, key, val))
        return PB_ERR_ABORT;

    if (f->nedges > 0) {
        uint32_t sub;
        /* SUB_INFO for every sub that has a call (RUNTIME included) */
        for (sub = 0; sub < f->nsubs; sub++) {
            const fs_sub *sb = &f->subs[sub];
            uint32_t fid, first, last;
            const char *nm = strtab_str(&f->sub_names, sb->name);
            size_t nl = f->sub_names.len[sb->name];
            if ((st = file_fid(f, sb->file, &fid)) != PB_OK)
                return st;
            first = last = sb->line;
            pb_chunk_sub_info(&c, fid, first, last, pb_str_make(nm, nl, is_utf8(nm, nl)));
            if (pb_emit(f->sink, &c))
                return PB_ERR_ABORT;
        }
        for (e = 0; e < f->nedges; e++) {
            const fs_edge *ed = &f->edges[e];
            const fs_sub *caller = &f->subs[ed->caller];
            const fs_sub *callee = &f->subs[ed->callee];
            const fs_sub *site = ed->caller == f->root_sub ? callee : caller;
            const char *cn = strtab_str(&f->sub_names, caller->name);
            size_t cl = f->sub_names.len[caller->name];
            const char *dn = strtab_str(&f->sub_names, callee->name);
            size_t dl = f->sub_names.len[callee->name];
            uint32_t fid;
            if ((st = file_fid(f, site->file, &fid)) != PB_OK)
                return st;
            pb_chunk_sub_callers(&c, fid, site->line, ed->count > UINT32_MAX ? UINT32_MAX : (uint32_t)ed->count,
                                 (double)ed->incl / 1e9, (double)(int64_t)ed->excl / 1e9, (double)ed->reci / 1e9,
                                 ed->rec_depth, pb_str_make(dn, dl, is_utf8(dn, dl)),
                                 pb_str_make(cn, cl, is_utf8(cn, cl)));
            if (pb_emit(f->sink, &c))
                return PB_ERR_ABORT;
        }
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
