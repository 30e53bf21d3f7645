/* chunk_stacks.c - NYTProf-like chunk streams (PB_YIELDS_CHUNKS only) as stack samples, so that
 * every stack output (outputs.c's stack targets, merge, diff) reads them.
 *
 * NYTProf's call events say which sub returned, at which depth, with its
 * exclusive ticks (SUB_RETURN; the `calls` option, on by default).  The
 * frames a return leaves open are named only when they return in their
 * turn, so every open depth keeps a bag of stacks relative to it: when the
 * frame at depth d returns as sub N, the bag's stacks get N as their root
 * (and N itself its own ticks) and join the bag of depth d-1, equal stacks
 * merged.  What reaches depth 0 is whole stacks, as nytprofcalls builds them
 * (outermost sub first; the main program is not a frame).  So memory grows
 * with distinct stacks per open frame, never with the number of calls.
 * A profile without call events (calls=0, a tracer of call edges) gives one-frame
 * stacks: each sub with its exclusive time from SUB_CALLERS.
 *
 * Weights are nanoseconds (ticks x 1e9 / ticks_per_sec); the sink is told so
 * with ATTRIBUTE sample_weight_unit=ns.  A frame's file and line are its
 * sub's SUB_INFO fid and first line.
 *
 * Names here: cs_ = chunk stacks (this file's types and helpers).
 */
#include <stdlib.h>
#include <string.h>
#include "chunk_stacks.h"
#include "fold_samples.h"
#include "model.h"
#include "source.h"
#include "util.h"

#define NONE UINT32_MAX
#define CS_MAX_DEPTH 65536

typedef struct {
    uint32_t path;
    double w; /* ticks */
} cs_ent;

typedef struct {
    pb_sink sink;
    pb_sample_sink *out;
    pb_sink *tee; /* convert --report's loss counter (pb_options.chunk_tee): every chunk first */
    pb_error *err;
    pb_source *src; /* where a failure is detected: the decoder's position */
    /* names */
    pb_strtab names;
    /* SUB_INFO per name, files per fid */
    uint32_t *sub_fid, *sub_line;
    size_t csub_fid, csub_line, nsubinfo;
    char **fid_name;
    size_t cfid;
    double tps;
    uint32_t pid;
    int have_pid, saw_return;
    /* paths (a trie) and the open depths' bags */
    pb_mtrie paths; /* item: the name id (model.h) */
    uint32_t *stamp, *pos;
    size_t cstamp, cpos;
    cs_ent *pool, *scratch;
    size_t npool, cpool, cscratch;
    size_t *lvl;              /* lvl[k]: where depth k's bag starts in pool (k = 0..depth) */
    uint32_t *gen;            /* gen[k]: the stamp of depth k's bag */
    size_t clvl, cgen, depth;
    uint32_t next_gen;
    uint32_t *chain;
    size_t cchain;
    /* flat fallback: exclusive seconds per callee name */
    double *flat;
    size_t cflat;
} chunk_stacks;

static uint32_t new_gen(chunk_stacks *c);
static void compact(chunk_stacks *c);

#define CS_OOM(c) pb_fail((c)->err, PB_ERR_LIMIT, 0, "out of memory while building stacks from call events")

static int cstacks_name_id(chunk_stacks *c, const char *p, size_t n, uint32_t *id)
{
    return pb_strtab_intern(&c->names, p, n, id) < 0 ? -1 : 0;
}

static int path_id(chunk_stacks *c, uint32_t parent, uint32_t name, uint32_t *id)
{
    int r = pb_mtrie_get(&c->paths, parent, name, id);
    if (r != 0)
        return r < 0 ? -1 : 0;
    if (pb_grow((void **)&c->stamp, &c->cstamp, c->paths.len, sizeof *c->stamp) < 0 ||
        pb_grow((void **)&c->pos, &c->cpos, c->paths.len, sizeof *c->pos) < 0)
        return -1;
    c->stamp[*id] = 0;
    return 0;
}

/* N above path p (NONE: the path [N]) */
static int prepend(chunk_stacks *c, uint32_t n, uint32_t p, uint32_t *out)
{
    size_t len = 0, i;
    uint32_t q;
    for (; p != NONE; p = c->paths.n[p].parent) {
        if (pb_grow((void **)&c->chain, &c->cchain, len + 1, sizeof *c->chain) < 0)
            return -1;
        c->chain[len++] = c->paths.n[p].item; /* leaf first */
    }
    if (path_id(c, NONE, n, &q) < 0)
        return -1;
    for (i = len; i-- > 0;)
        if (path_id(c, q, c->chain[i], &q) < 0)
            return -1;
    *out = q;
    return 0;
}

/* make depth d the deepest open one */
static int open_to(chunk_stacks *c, size_t d)
{
    if (pb_grow((void **)&c->lvl, &c->clvl, d + 1, sizeof *c->lvl) < 0 ||
        pb_grow((void **)&c->gen, &c->cgen, d + 1, sizeof *c->gen) < 0)
        return -1;
    if (c->depth == 0 && c->gen[0] == 0) {
        c->lvl[0] = 0;
        c->gen[0] = new_gen(c);
    }
    while (c->depth < d) {
        c->depth++;
        c->lvl[c->depth] = c->npool;
        c->gen[c->depth] = new_gen(c);
        if (c->next_gen == 1)
            compact(c);
    }
    return 0;
}

static uint32_t new_gen(chunk_stacks *c)
{
    if (++c->next_gen == UINT32_MAX) {
        /* stamps wrap: forget them all (the open bags are re-stamped by
         * compact(), which the caller runs next) */
        memset(c->stamp, 0, c->paths.len * sizeof *c->stamp);
        c->next_gen = 1;
    }
    return c->next_gen;
}

/* Merge equal stacks inside every open bag.  A stack a deeper bag also held
 * may have been added to its shallower bag twice; this bounds such copies
 * (run when the pool outgrows twice the distinct stacks). */
static void compact(chunk_stacks *c)
{
    size_t k, i, w = 0;
    for (k = 0; k <= c->depth; k++) {
        size_t from = c->lvl[k], to = k < c->depth ? c->lvl[k + 1] : c->npool;
        uint32_t g = new_gen(c);
        c->lvl[k] = w;
        c->gen[k] = g;
        for (i = from; i < to; i++) {
            uint32_t p = c->pool[i].path;
            if (c->stamp[p] == g) {
                c->pool[c->pos[p]].w += c->pool[i].w;
            } else {
                c->stamp[p] = g;
                c->pos[p] = (uint32_t)w;
                c->pool[w++] = c->pool[i];
            }
        }
    }
    c->npool = w;
}

static int add(chunk_stacks *c, size_t level, uint32_t path, double w)
{
    if (c->stamp[path] == c->gen[level] && c->pos[path] >= c->lvl[level] && c->pos[path] < c->npool &&
        c->pool[c->pos[path]].path == path) {
        c->pool[c->pos[path]].w += w;
        return 0;
    }
    if (c->npool >= UINT32_MAX - 1 || pb_grow((void **)&c->pool, &c->cpool, c->npool + 1, sizeof *c->pool) < 0)
        return -1;
    c->pool[c->npool].path = path;
    c->pool[c->npool].w = w;
    c->stamp[path] = c->gen[level];
    c->pos[path] = (uint32_t)c->npool++;
    return 0;
}

static pb_status sub_return(chunk_stacks *c, uint32_t d, double excl, pb_str name)
{
    uint32_t n, q;
    size_t start, cnt, i;
    if (d == 0 || d > CS_MAX_DEPTH)
        return pb_fail(c->err, PB_ERR_CORRUPT, pb_src_offset(c->src), "SUB_RETURN at depth %u (1..%u)", d,
                       (unsigned)CS_MAX_DEPTH);
    if (cstacks_name_id(c, name.ptr ? name.ptr : "", name.len, &n) < 0 || open_to(c, d) < 0)
        return CS_OOM(c);
    if (c->npool > 2 * c->paths.len + 4096)
        compact(c);
    /* deeper frames that never returned: their stacks stay in depth d's bag */
    c->depth = d;
    start = c->lvl[d];
    cnt = c->npool - start;
    if (pb_grow((void **)&c->scratch, &c->cscratch, cnt + 1, sizeof *c->scratch) < 0)
        return CS_OOM(c);
    if (cnt)
        memcpy(c->scratch, c->pool + start, cnt * sizeof *c->scratch);
    c->npool = start;
    c->depth = d - 1;
    for (i = 0; i < cnt; i++)
        if (prepend(c, n, c->scratch[i].path, &q) < 0 || add(c, d - 1, q, c->scratch[i].w) < 0)
            return CS_OOM(c);
    if (path_id(c, NONE, n, &q) < 0 || add(c, d - 1, q, excl > 0 ? excl : 0) < 0)
        return CS_OOM(c);
    return PB_OK;
}

static int cs_chunk(pb_sink *self, const pb_chunk *ch)
{
    chunk_stacks *c = (chunk_stacks *)self->ctx;
    uint32_t id;
    pb_status st = PB_OK;
    if (c->tee && pb_emit(c->tee, ch))
        return 1;
    switch (ch->tag) {
    case PB_T_ATTRIBUTE:
        if (ch->s[0].len == 13 && !memcmp(ch->s[0].ptr, "ticks_per_sec", 13)) {
            char b[32];
            snprintf(b, sizeof b, "%.*s", (int)(ch->s[1].len < 31 ? ch->s[1].len : 31), ch->s[1].ptr);
            c->tps = strtod(b, NULL);
        }
        return 0;
    case PB_T_PID_START:
        if (!c->have_pid) {
            c->have_pid = 1;
            c->pid = ch->u[0];
        }
        return 0;
    case PB_T_NEW_FID:
        if (ch->u[0] < (1u << 24)) {
            if (pb_grow_zero((void **)&c->fid_name, &c->cfid, (size_t)ch->u[0] + 1, sizeof *c->fid_name) < 0)
                break;
            if (!c->fid_name[ch->u[0]] && !(c->fid_name[ch->u[0]] = pb_memdup0(ch->s[0].ptr, ch->s[0].len)))
                break;
        }
        return 0;
    case PB_T_SUB_INFO:
        if (cstacks_name_id(c, ch->s[0].ptr, ch->s[0].len, &id) < 0)
            break;
        if (id >= c->nsubinfo) {
            /* zero past nsubinfo: pb_grow_zero made them so, and nothing writes there */
            if (pb_grow_zero((void **)&c->sub_fid, &c->csub_fid, (size_t)id + 1, sizeof *c->sub_fid) < 0 ||
                pb_grow_zero((void **)&c->sub_line, &c->csub_line, (size_t)id + 1, sizeof *c->sub_line) < 0)
                break;
            c->nsubinfo = (size_t)id + 1;
        }
        if (!c->sub_fid[id]) {
            c->sub_fid[id] = ch->u[0];
            c->sub_line[id] = ch->u[1];
        }
        return 0;
    case PB_T_SUB_CALLERS:
        /* exclusive seconds per callee, for a profile without call events */
        if (cstacks_name_id(c, ch->s[0].ptr, ch->s[0].len, &id) < 0)
            break;
        if (pb_grow_zero((void **)&c->flat, &c->cflat, (size_t)id + 1, sizeof *c->flat) < 0)
            break;
        c->flat[id] += ch->n[1] > 0 ? ch->n[1] : 0;
        return 0;
    case PB_T_SUB_RETURN:
        c->saw_return = 1;
        st = sub_return(c, ch->u[0], ch->n[1], ch->s[0]);
        return st != PB_OK;
    default:
        return 0;
    }
    CS_OOM(c);
    return 1;
}

/* a frame for name id n: package::name split at the last "::" */
static pb_status cstacks_frame_of(chunk_stacks *c, uint32_t n, uint32_t *fid_out)
{
    pb_frame fr;
    const char *nm = pb_strtab_ptr(&c->names, n);
    size_t len = pb_strtab_len(&c->names, n), cut = 0, j;
    uint32_t fid = n < c->nsubinfo ? c->sub_fid[n] : 0;
    memset(&fr, 0, sizeof fr);
    for (j = 0; j + 1 < len; j++)
        if (nm[j] == ':' && nm[j + 1] == ':')
            cut = j;
    fr.kind = PB_FRAME_SUB;
    if (cut) {
        fr.package = pb_str_make(nm, cut, pb_str_wide(nm, cut));
        fr.name = pb_str_make(nm + cut + 2, len - cut - 2, pb_str_wide(nm + cut + 2, len - cut - 2));
    } else {
        fr.package = pb_str_c("main");
        fr.name = pb_str_make(nm, len, pb_str_wide(nm, len));
    }
    fr.file = fid < c->cfid && c->fid_name[fid] ? pb_str_c(c->fid_name[fid]) : pb_str_c("");
    fr.line = fr.first_line = n < c->nsubinfo ? (int32_t)(c->sub_line[n] & 0x7FFFFFFF) : 0;
    return c->out->frame(c->out, &fr, fid_out);
}

/* a stack's weight in ns as the sink's uint64_t, rounded; past 2^64 ns
 * (584 years: times no profile holds, or not a number) it is an error, not
 * a conversion out of range */
static pb_status weight_ns(chunk_stacks *c, double w, uint64_t *out)
{
    if (!(w + 0.5 < 18446744073709551616.0))
        return pb_fail_nooff(c->err, PB_ERR_CORRUPT, "a stack's time, %g ns, is out of range (2^64 ns at most)", w);
    *out = (uint64_t)(w + 0.5);
    return PB_OK;
}

static pb_status emit_all(chunk_stacks *c)
{
    pb_sample_sink *o = c->out;
    double ns_per_tick = c->tps > 0 ? 1e9 / c->tps : 1000.0;
    uint32_t *fid_of = NULL, *ids = NULL;
    size_t i, cids = 0;
    uint64_t wns = 0;
    pb_status st;
    char label[16];
    snprintf(label, sizeof label, "%u", c->pid);
    if ((st = o->attribute(o, "sample_weight_unit", pb_str_c("ns"))) != PB_OK ||
        (st = o->thread(o, 0, c->pid ? c->pid : 1, 0, label)) != PB_OK)
        return st;
    fid_of = (uint32_t *)malloc((c->names.n ? c->names.n : 1) * sizeof *fid_of);
    if (!fid_of)
        return CS_OOM(c);
    for (i = 0; i < c->names.n; i++)
        fid_of[i] = NONE;
    st = PB_OK;
    if (c->saw_return) {
        for (i = 0; i < c->npool && st == PB_OK; i++) {
            uint32_t p = c->pool[i].path;
            size_t n = 0;
            double w = c->pool[i].w * ns_per_tick;
            if (w < 0.5)
                continue;
            for (; p != NONE; p = c->paths.n[p].parent) {
                uint32_t nm = c->paths.n[p].item;
                if (pb_grow((void **)&ids, &cids, n + 1, sizeof *ids) < 0) {
                    st = CS_OOM(c);
                    break;
                }
                if (fid_of[nm] == NONE && (st = cstacks_frame_of(c, nm, &fid_of[nm])) != PB_OK)
                    break;
                ids[n++] = fid_of[nm]; /* innermost first, as samples are */
            }
            if (st == PB_OK && (st = weight_ns(c, w, &wns)) == PB_OK)
                st = o->sample(o, 0, ids, (uint32_t)n, wns, 0);
        }
    } else {
        for (i = 0; i < c->cflat && i < c->names.n && st == PB_OK; i++) {
            double w = c->flat[i] * 1e9;
            if (w < 0.5)
                continue;
            if ((st = weight_ns(c, w, &wns)) == PB_OK && (st = cstacks_frame_of(c, (uint32_t)i, &fid_of[i])) == PB_OK)
                st = o->sample(o, 0, &fid_of[i], 1, wns, 0);
        }
    }
    free(fid_of);
    free(ids);
    return st != PB_OK ? st : o->finish(o);
}

static void cs_free(chunk_stacks *c)
{
    size_t i;
    for (i = 0; i < c->cfid; i++)
        free(c->fid_name[i]);
    PB_FREE_ALL(c->fid_name, c->sub_fid, c->sub_line, c->stamp, c->pos,
                c->pool, c->scratch, c->lvl, c->gen, c->chain, c->flat);
    pb_strtab_free(&c->names);
    pb_mtrie_free(&c->paths);
    free(c);
}

static void cs_cleanup(void *p) { cs_free((chunk_stacks *)p); }

pb_status pb_chunks_as_samples(pb_decoder_fn dec, pb_source *src, const pb_options *opt, pb_sample_sink *out,
                                   pb_error *err)
{
    chunk_stacks *c = (chunk_stacks *)calloc(1, sizeof *c);
    pb_status st;
    if (!c)
        return pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
    c->out = out;
    c->err = err;
    c->src = src;
    c->sink.chunk = cs_chunk;
    c->sink.ctx = c;
    c->sink.cleanups = out->cleanups;
    if (opt && opt->chunk_tee) { /* the loss counter counts the chunks of this decode */
        c->tee = opt->chunk_tee;
        c->tee->row = out->row;
        if (opt->chunk_teed)
            *opt->chunk_teed = 1;
    }
    pb_cleanups_add(out->cleanups, cs_cleanup, c);
    st = dec(src, opt, &c->sink, err);
    if (st == PB_OK)
        st = emit_all(c);
    else if (st == PB_ERR_ABORT && err->status == PB_OK)
        st = err->status = PB_ERR_LIMIT;
    else if (st == PB_ERR_ABORT)
        st = err->status; /* this sink's own failure (CORRUPT, LIMIT) or the consumer's */
    pb_cleanups_remove(out->cleanups, c);
    cs_free(c);
    return st;
}
