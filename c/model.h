/* model.h - the one profile model the folds fill and flush to chunks.
 *
 * What a decoder of a foreign format knows (files, subs, who called whom,
 * stacks with weights) is kept here once, and turned into NYTProf chunks here
 * once (the design notes, "Mapping foreign data onto chunks"; Internals.pod,
 * THE PROFILE MODEL):
 *
 *   strings  one interning table (pb_strtab): one arena, one pb_index, and
 *            one UTF-8 rule, pb_str_wide(): a string is delivered flagged
 *            UTF-8 when it has a byte >= 0x80 and is valid UTF-8 (util.h).
 *   files    name (+ a variant the producer uses to keep apart two files of
 *            one name, e.g. the fake file of synthetic frames) -> model file;
 *            its fid is given on first use, in first-use order, and its
 *            NEW_FID (with the flags given when the file was added, plus
 *            HAS_SRC|SAVE_SRC and its SRC_LINEs when it carries source) is
 *            sent then, once: pb_model_fid().
 *   subs     name -> sub (its file and first line as first added; lines seen
 *            widen [lo, hi]) -> SUB_INFO at flush, in sub order.
 *   edges    (thread, caller sub, call-site file:line, callee sub) with
 *            count, incl, excl, reci (in the producer's weight unit) and
 *            rec_depth -> SUB_CALLERS at flush, per thread in creation order;
 *            exact edges (count and incl only, each call timed on its own)
 *            get their exclusive and recursive times from the model:
 *            pb_model_emit_exact_callers().
 *   producer ids  a producer that keys files and subs by its own ids
 *            adds them with pb_model_file_new() and
 *            pb_model_sub_new(): two of one name stay two, names flagged
 *            UTF-8 as the producer says, NEW_FID with its size, mtime and
 *            eval fid/line; SUB_INFO at once: pb_model_emit_sub_info().
 *   stacks   pb_mtrie: (parent, item) -> node, a prefix tree of stacks, and
 *            its replay as call events (SUB_RETURN, call_events.h).
 *   TIME_LINE  pb_model_time_lines(): a weight split into chunks of at most
 *            INT32_MAX ticks, charged to the statement budget.
 *   statement counts  pb_model_statements(): n executions of a line with
 *            their summed ticks (a profiler that counts statements) as n
 *            counted TIME_LINEs plus DISCOUNT pairs for what is over
 *            INT32_MAX, charged to the statement budget.
 *
 * The statement budget (max_statements, pb_budget below): a model's is off
 * until pb_model_set_budget(); then pb_model_time_lines() and
 * pb_model_statements() take the chunks they are about to send from it, and
 * fail with the model's one wording ("line L of fid F needs N more TIME_LINE
 * chunks, more than the R left of max_statements (T for this file<note>)")
 * when they are more than is left.  A decoder that synthesises statements
 * from counts in its file turns it on (pb_statement_budget()); the folds'
 * chunk counts are bounded per sample by their own split limits, and a
 * sampling decoder's samples are charged by pb_model_charge_split() (below)
 * in the driver's filter in front of the fold or a stack target
 * (fold_samples.c): no decoder charges a budget of its own.
 *
 * Memory: O(unique strings + files + subs + edges + trie nodes); nothing
 * grows with the number of samples or spans.  Plain C99.
 */
#ifndef PB_MODEL_H
#define PB_MODEL_H

#include "call_events.h"
#include "chunk.h"
#include "error.h"
#include "util.h"

#define PB_MODEL_NONE UINT32_MAX

/* ---- strings ------------------------------------------------------------ */
/* the one UTF-8 rule: flag a string UTF-8 when it holds a non-ASCII byte and
 * is valid UTF-8 (pb_utf8_seq's rules) */
static inline int pb_str_wide(const char *p, size_t n) { return pb_has_high(p, n) && pb_utf8_valid(p, n); }

typedef struct {
    size_t off;        /* in the arena, NUL-terminated there */
    uint32_t len, hash;
    int wide;          /* pb_str_wide() of the bytes */
} pb_strent;

typedef struct {
    char *arena;
    size_t alen, acap;
    pb_strent *e;
    size_t n, cap;
    pb_index ix;
} pb_strtab;

/* Find or add n bytes: 1 found, 0 added, -1 out of memory (or longer than 4 GiB - 2). */
int pb_strtab_intern(pb_strtab *t, const char *p, size_t n, uint32_t *id);
static inline const char *pb_strtab_ptr(const pb_strtab *t, uint32_t id) { return t->arena + t->e[id].off; }
static inline size_t pb_strtab_len(const pb_strtab *t, uint32_t id) { return t->e[id].len; }
static inline pb_str pb_strtab_str(const pb_strtab *t, uint32_t id)
{
    return pb_str_make(t->arena + t->e[id].off, t->e[id].len, t->e[id].wide);
}
void pb_strtab_free(pb_strtab *t);

/* ---- the statement budget (max_statements) -----------------------------
 * Every producer of synthesised TIME_LINE/DISCOUNT chunks charges them here:
 * the model (pb_model_budget_take) and a sampled profile's split
 * (pb_model_charge_split). */
typedef struct {
    uint64_t left; /* statements left when on */
    int on;
} pb_budget;
static inline void pb_budget_set(pb_budget *b, uint64_t max_statements)
{
    b->left = max_statements;
    b->on = 1;
}
/* 0: n more synthesised chunks are allowed (and are now taken); -1: not
 * (the producer fails with its own message; b->left chunks are left) */
static inline int pb_budget_take(pb_budget *b, uint64_t n)
{
    if (!b->on)
        return 0;
    if (n > b->left)
        return -1;
    b->left -= n;
    return 0;
}

/* ---- stacks: a prefix tree of (parent, item) ----------------------------- */
typedef struct {
    uint32_t parent;   /* PB_MODEL_NONE: a root */
    uint32_t item;     /* the producer's: a frame, a sub, a thread for a root */
} pb_mnode;

typedef struct {
    pb_mnode *n;       /* nodes in creation order: a parent before its children */
    size_t len, cap;
    pb_index ix;
} pb_mtrie;

static inline uint32_t pb_mtrie_hash(uint32_t parent, uint32_t item) { return pb_mix64(((uint64_t)parent << 32) | item); }
int pb_mtrie_add(pb_mtrie *t, uint32_t parent, uint32_t item, size_t k, uint32_t *id);
/* Find or add the node (parent, item): 1 found, 0 added, -1 out of memory. */
static inline int pb_mtrie_get(pb_mtrie *t, uint32_t parent, uint32_t item, uint32_t *id)
{
    size_t k;
    uint32_t i;
    if ((t->len + 1) * 2 > t->ix.cap)
        return pb_mtrie_add(t, parent, item, 0, id); /* grows the index first */
    PB_INDEX_FIND(&t->ix, pb_mtrie_hash(parent, item), k, i, t->n[i].parent == parent && t->n[i].item == item);
    if (i != PB_INDEX_NONE) {
        *id = i;
        return 1;
    }
    return pb_mtrie_add(t, parent, item, k + 1, id);
}
void pb_mtrie_clear(pb_mtrie *t);
void pb_mtrie_free(pb_mtrie *t);
/* tot[i] = w[i] + the w of every node below i (tot has t->len entries) */
void pb_mtrie_totals(const pb_mtrie *t, const uint64_t *w, uint64_t *tot);

/* Working memory of a replay, kept by the producer so that its cleanup frees
 * it when a consumer leaves in the middle (pb_cleanups). */
typedef struct {
    uint64_t *tot;
    uint32_t *first, *kids, *walk, *subs;
    size_t ctot, cfirst, ckids, cwalk, csubs;
    int ready;         /* first/kids built for the trie as it is */
} pb_mwalk;
void pb_mwalk_free(pb_mwalk *wk);

/* Replay the stacks below `root` (PB_MODEL_NONE: below every root of the
 * trie) as call events: depth first, children in creation order, one
 * pb_callev_stack() per node with the subs of its path (sub_of(ctx, item),
 * outermost first) and weight w[node].  skip_empty: leave out subtrees whose
 * weights sum to 0.  Call pb_mwalk_reset() when the trie changed; several
 * roots of one trie share one build.  Does not end the thread (pb_callev_end).
 * Out of memory: PB_ERR_LIMIT with oom_msg. */
pb_status pb_mtrie_replay(const pb_mtrie *t, uint32_t root, const uint64_t *w, int skip_empty,
                          uint32_t (*sub_of)(const void *ctx, uint32_t item), const void *ctx, pb_callev *cv,
                          pb_mwalk *wk, pb_error *err, const char *oom_msg);
static inline void pb_mwalk_reset(pb_mwalk *wk) { wk->ready = 0; }

/* ---- the model ------------------------------------------------------------ */
typedef struct {
    uint32_t name;     /* string id */
    uint32_t variant;  /* key part (0: an ordinary file) */
    uint32_t flags;    /* NEW_FID flags */
    uint32_t fid;      /* 0 until pb_model_fid() */
    uint32_t src;      /* string id of carried source text, PB_MODEL_NONE: none */
    int src_utf8;
    uint32_t eval_fid, eval_line, size, mtime; /* NEW_FID's (0: none; pb_model_file_new) */
    int name_utf8;     /* -1: the name flagged by its bytes (pb_str_wide), else as given */
} pb_mfile;

typedef struct {
    uint32_t name;     /* string id */
    uint32_t file;     /* model file: SUB_INFO's fid */
    uint32_t first;    /* first line as the producer knows it (0: unknown) */
    uint32_t lo, hi;   /* lines seen (lo > hi: none) */
    int used;
    int name_utf8;     /* -1: the name flagged by its bytes (pb_str_wide), else as given */
} pb_msub;

typedef struct {
    uint32_t thread, caller, file, line, callee; /* caller PB_MODEL_NONE: the root (pb_model.root) */
    uint32_t rec_depth;
    uint64_t count, incl, excl, reci;            /* the producer's weight unit */
} pb_medge;

/* SUB_CALLERS seconds = (double)units * mul / div; excl_signed: excl is
 * modular arithmetic that may have gone below 0 (read as int64_t) */
typedef struct {
    double mul, div;
    int excl_signed;
} pb_mtime;

typedef struct {
    pb_sink *out;
    pb_error *err;
    const char *oom_msg;   /* "out of memory while folding samples" */
    int quiet_abort;       /* a stopped consumer: return PB_ERR_ABORT without filling err */
    pb_strtab str;
    pb_mfile *files;
    size_t nfiles, cfiles;
    pb_index fix;
    uint32_t nfids;        /* fids given (fid = nfids after each) */
    pb_msub *subs;
    size_t nsubs, csubs;
    uint32_t *sub_of_str;  /* per string id: its sub, PB_MODEL_NONE */
    size_t csos, nsos;
    pb_medge *edges;
    size_t nedges, cedges;
    pb_index eix;
    uint32_t *eorder, *efirst; /* edges by thread (built at flush) */
    size_t ceorder, cefirst, eorder_n;
    uint32_t nthreads_e;
    pb_str root;           /* caller name of root edges */
    pb_budget budget;      /* the statement budget (off in the folds) */
    uint64_t budget_total; /* the budget as set (for its message) */
    const char *budget_note; /* NULL, or said after the total in its message
                              * (how the budget was bounded and is lifted) */
    void *xscratch;        /* pb_model_emit_exact_callers' arrays (freed here
                            * too: a consumer may leave in the middle) */
} pb_model;

void pb_model_init(pb_model *m, pb_sink *out, pb_error *err, const char *oom_msg);
void pb_model_free(pb_model *m);
/* the out-of-memory failure (oom_msg) at offset off */
pb_status pb_model_oom(pb_model *m, uint64_t off);

/* Send one chunk: PB_OK, or PB_ERR_ABORT when the consumer stopped. */
static inline pb_status pb_model_emit(pb_model *m, const pb_chunk *c)
{
    if (pb_emit(m->out, c)) {
        if (m->quiet_abort)
            return PB_ERR_ABORT;
        return pb_fail(m->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
    }
    return PB_OK;
}

/* ---- files ---- */
/* Find or add (name, variant); flags are the NEW_FID flags of a new file
 * (ignored when it exists).  1 found, 0 added, -1 out of memory. */
int pb_model_file(pb_model *m, const char *name, size_t len, uint32_t variant, uint32_t flags, uint32_t *file);
/* The source text a file carries (the first one given wins): SRC_LINEs after
 * its NEW_FID, or now when it already has its fid. */
pb_status pb_model_file_source(pb_model *m, uint32_t file, pb_str text);
pb_status pb_model_define_fid(pb_model *m, uint32_t file);
/* A new file whatever its name (a producer that keys files by its own ids,
 * two ids of one name staying two), its name flagged as `name`
 * is, with NEW_FID's eval fid/line, size and mtime: 0, -1 out of memory.
 * Its fid is given on first use as any file's (pb_model_fid). */
int pb_model_file_new(pb_model *m, pb_str name, uint32_t flags, uint32_t eval_fid, uint32_t eval_line, uint32_t size,
                      uint32_t mtime, uint32_t *file);
/* The file's fid, sending its NEW_FID (and source) the first time. */
static inline pb_status pb_model_fid(pb_model *m, uint32_t file, uint32_t *fid)
{
    pb_status st = PB_OK;
    if (!m->files[file].fid)
        st = pb_model_define_fid(m, file);
    *fid = m->files[file].fid;
    return st;
}

/* ---- subs ---- */
/* Find or add the sub of this name (file and first line are a new sub's;
 * first 0 = unknown): 1 found, 0 added, -1 out of memory. */
int pb_model_sub(pb_model *m, const char *name, size_t len, uint32_t file, uint32_t first, uint32_t *sub);
/* A new sub whatever its name (a producer that keys subs by its own ids,
 * its sids), its name flagged UTF-8 as `utf8` says, first line
 * unknown; pb_model_sub() does not find it by its name: 0, -1 out of memory */
int pb_model_sub_new(pb_model *m, const char *name, size_t len, int utf8, uint32_t file, uint32_t *sub);
static inline pb_str pb_model_sub_name(const pb_model *m, uint32_t sub)
{
    pb_str s = pb_strtab_str(&m->str, m->subs[sub].name);
    if (m->subs[sub].name_utf8 >= 0)
        s.utf8 = m->subs[sub].name_utf8;
    return s;
}
/* a line executing in the sub */
static inline void pb_model_sub_line(pb_model *m, uint32_t sub, uint32_t line)
{
    pb_msub *s = &m->subs[sub];
    if (line) {
        if (line < s->lo)
            s->lo = line;
        if (line > s->hi)
            s->hi = line;
    }
}
/* SUB_INFO's first line: the producer's, else the smallest line seen, else 0 */
static inline uint32_t pb_model_sub_first(const pb_msub *s) { return s->first ? s->first : s->lo <= s->hi ? s->lo : 0; }
/* Forget every sub and edge (a producer whose subs are per thread). */
void pb_model_reset_subs(pb_model *m);

/* ---- edges ---- */
static inline uint32_t pb_model_edge_hash(uint32_t thread, uint32_t caller, uint32_t file, uint32_t line,
                                          uint32_t callee)
{
    return pb_mix64((((uint64_t)caller << 32) | callee) ^ ((uint64_t)line * UINT64_C(0x9E3779B97F4A7C15)) ^
                    ((uint64_t)file << 21) ^ ((uint64_t)thread << 43));
}
/* 1 when edge o is (thread, caller, file:line, callee) */
static inline int pb_medge_is(const pb_medge *o, uint32_t thread, uint32_t caller, uint32_t file, uint32_t line,
                              uint32_t callee)
{
    return o->caller == caller && o->callee == callee && o->line == line && o->file == file && o->thread == thread;
}
int pb_model_edge_add(pb_model *m, uint32_t thread, uint32_t caller, uint32_t file, uint32_t line, uint32_t callee,
                      size_t k, uint32_t *e);
/* Find or add an edge (its index in m->edges): 0, -1 out of memory. */
static inline int pb_model_edge(pb_model *m, uint32_t thread, uint32_t caller, uint32_t file, uint32_t line,
                                uint32_t callee, uint32_t *e)
{
    size_t k;
    uint32_t i;
    if ((m->nedges + 1) * 2 > m->eix.cap)
        return pb_model_edge_add(m, thread, caller, file, line, callee, 0, e); /* grows the index first */
    PB_INDEX_FIND(&m->eix, pb_model_edge_hash(thread, caller, file, line, callee), k, i,
                  pb_medge_is(&m->edges[i], thread, caller, file, line, callee));
    if (i != PB_INDEX_NONE) {
        *e = i;
        return 0;
    }
    return pb_model_edge_add(m, thread, caller, file, line, callee, k + 1, e);
}

/* ---- flush ---- */
/* SUB_INFO for every sub (used_only: those marked used), in sub order. */
pb_status pb_model_emit_sub_infos(pb_model *m, int used_only);
/* SUB_INFO for one sub, now (a producer that sends them as it learns them) */
pb_status pb_model_emit_sub_info(pb_model *m, uint32_t sub);
/* Exact call edges (a profiler that times each call on its own: an edge's
 * incl is the summed time of its calls, a recursive call's time also inside
 * its caller's) as SUB_CALLERS with NYTProf's meaning, every edge
 * in creation order, seconds = units / units_per_sec:
 *   the exclusive time of sub s, exact: E(s) = its in-edges' incl - its
 *     out-edges' incl, 0 when below 0 (a root, whose own call is not timed);
 *   a self edge (s -> s) is recursion: incl 0, its time in reci;
 *   E(s) is shared among s's in-edges: without a self edge by their incl;
 *     with one, each other edge by its count (every call of s taken to cost
 *     the same), at most its incl, and the self edge the rest.
 * *sum_excl: the sum of E(s) (time the run spent); *max_incl raised to the
 * largest non-recursive edge's incl. */
pb_status pb_model_emit_exact_callers(pb_model *m, double units_per_sec, double *sum_excl, uint64_t *max_incl);
/* SUB_CALLERS for the edges of `thread` (the producer's numbering, below
 * nthreads), in creation order. */
pb_status pb_model_emit_sub_callers(pb_model *m, uint32_t thread, uint32_t nthreads, const pb_mtime *tm);

/* ---- statements ---- */
static inline void pb_model_set_budget(pb_model *m, uint64_t max_statements)
{
    pb_budget_set(&m->budget, max_statements);
    m->budget_total = max_statements;
}
static inline int pb_model_budget_take(pb_model *m, uint64_t n) { return pb_budget_take(&m->budget, n); }
/* TIME_LINE chunks that `units` of weight take at ticks_per_unit ticks each
 * (at most INT32_MAX ticks a chunk) */
static inline uint64_t pb_model_split_count(uint64_t units, uint64_t ticks_per_unit)
{
    uint64_t per = ticks_per_unit ? (uint64_t)INT32_MAX / ticks_per_unit : units;
    if (per == 0)
        per = 1;
    return units / per + (units % per != 0);
}
/* A sampling decoder's split budget as it runs (pb_fold_config.split,
 * fold_samples.h, sets it up): a sample of `weight` x ticks_per_weight ticks
 * splits into TIME_LINE chunks of at most INT32_MAX ticks, and those beyond
 * one come out of budget. */
typedef struct {
    pb_budget budget;
    uint64_t records;  /* the samples asked about, this one included */
    const char *words; /* the limit message: {record} (records), {weight},
                        * {interval} (ticks_per_weight), {extra} (the chunks
                        * wanted) and {left} (those left) filled in */
    int no_offset;     /* 1: the message names no byte offset */
} pb_split_budget;
/* Charge one sample (records already counts it): PB_OK, or a `limit` error
 * worded s->words, at byte off unless s->no_offset (s->budget unchanged). */
pb_status pb_model_charge_split(pb_split_budget *s, uint64_t weight, uint64_t ticks_per_weight, uint64_t off,
                                pb_error *err);
/* Send the TIME_LINEs of `units` x ticks_per_unit ticks on fid:line (count:
 * pb_model_split_count(), checked by the caller against its limit); negative:
 * the ticks are below 0; at_least_one: 0 units still give one TIME_LINE of 0
 * ticks.  Filtered out by the sink, they are only counted (for_chunks' $.). */
pb_status pb_model_time_lines_slow(pb_model *m, uint64_t units, uint64_t ticks_per_unit, int negative,
                                   int at_least_one, uint32_t fid, uint32_t line);
static inline pb_status pb_model_time_lines(pb_model *m, uint64_t units, uint64_t ticks_per_unit, int negative,
                                            int at_least_one, uint32_t fid, uint32_t line)
{
    /* the common case: one chunk */
    if (!m->budget.on && (units || at_least_one) && !(units >> 31) && !(ticks_per_unit >> 31) &&
        units * (ticks_per_unit ? ticks_per_unit : 1) <= (uint64_t)INT32_MAX && /* (no division: a product < 2^62) */
        pb_sink_wants(m->out, PB_T_TIME_LINE)) {
        pb_chunk c;
        int32_t t = (int32_t)(units * ticks_per_unit);
        pb_chunk_time_line(&c, negative ? -t : t, fid, line);
        return pb_model_emit(m, &c);
    }
    return pb_model_time_lines_slow(m, units, ticks_per_unit, negative, at_least_one, fid, line);
}

/* n TIME_LINEs of fid:line (one each) for a sink that does not want them
 * (pb_sink_wants): charged to the budget as pb_model_time_lines() charges
 * them, and only counted (pb_sink_skip) */
pb_status pb_model_skip_time_lines(pb_model *m, uint64_t n, uint32_t fid, uint32_t line);

/* n executions of fid:line taking `ticks` in all: n counted TIME_LINEs
 * whose ticks sum to `ticks` (ticks / n each, the first ticks % n one more;
 * at most INT32_MAX a chunk), and what is over INT32_MAX a chunk in
 * DISCOUNT+TIME_LINE pairs of at most INT32_MAX (NYTProf counts them 0);
 * n = 0: the pairs only.  The chunks are charged to the budget first; off
 * is the input's offset for its message.  Filtered out by the sink, they are
 * only counted. */
pb_status pb_model_statements_slow(pb_model *m, uint32_t fid, uint32_t line, uint64_t n, uint64_t ticks,
                                   uint64_t off);
static inline pb_status pb_model_statements(pb_model *m, uint32_t fid, uint32_t line, uint64_t n, uint64_t ticks,
                                            uint64_t off)
{
    /* the common case (a statement log: one execution a call): one chunk */
    if (n == 1 && ticks <= (uint64_t)INT32_MAX && pb_budget_take(&m->budget, 1) == 0) {
        pb_chunk c;
        pb_chunk_time_line(&c, (int32_t)ticks, fid, line);
        return pb_model_emit(m, &c);
    }
    return pb_model_statements_slow(m, fid, line, n, ticks, off);
}

/* A fold's model in one call: the model, the stack trie, the walk over it
 * and the call events replayed from it (fold_samples.c, fold_spans.c) */
void pb_model_free_fold(pb_model *m, pb_mtrie *trie, pb_mwalk *walk, pb_callev *cev);

#endif
