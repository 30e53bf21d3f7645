/* fold_samples.c - stack samples -> NYTProf chunks (see fold_samples.h).
 *
 * Names here: ss_ = the fold's sample-sink callbacks (sample sink), gf_ = the hash of graph
 * functions (exact call graphs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fold_samples.h"
#include "sample_tee.h"
#include "call_events.h"
#include "model.h"
#include "stack_table.h"
#include "util.h"

#define NONE PB_MODEL_NONE
/* TIME_LINE chunks one sample may fill (each at most INT32_MAX ticks) */
#define PB_FOLD_MAX_SPLIT 65536u
/* entries of the fold's cache of kept stacks (a power of two) */
#define FOLD_SCACHE 4096u
/* the model file variant of the fake file of synthetic frames */
#define SYNTH_VARIANT 1

/* what the decoder's frame ids stand for: a sub on a line of a file */
typedef struct {
    uint32_t sub, file, line;  /* model sub and file */
} f_frame;

typedef struct {
    uint64_t key;
    uint32_t pid, ppid;
    char *label;
    int started;
    uint32_t root;    /* trie node */
    uint32_t order;   /* rank of first sample (for PID_END order) */
    uint64_t first_ts, end_ts;
    uint64_t sampled; /* ticks the samples stand for (weight x interval) */
    uint64_t weight;  /* samples (their weights' sum) */
    pb_stack_cursor cur; /* the previous sample and its trie path (samples.h) */
    size_t lazy;         /* the kept stack whose nodes are that path (its byte offset in the stack
                          * table's pool + 1: copied into cur.path only when a walk needs it), or 0 */
    uint32_t sid1;       /* the producer's stack id of that sample + 1 (sample_stack_id), 0: none */
} f_thread;

/* a function of a call-graph source, per thread: its totals as the source counted them */
typedef struct {
    uint32_t thread, sub, frame;
    uint64_t nc, cc, excl, incl;
    uint64_t snc, sexcl, sincl, over; /* its graph edges' sums (not a merged stack input's); finish: incl to move to reci */
    int told;                         /* graph_func() named it (else only edges did) */
} g_func;

struct pb_fold {
    pb_sample_sink ss;
    pb_fold_config cfg;
    pb_sink *out;
    pb_error *err;
    int header_done;
    uint32_t started_threads;

    pb_model m;            /* files, subs, edges */
    f_frame *frames; size_t nframes, cframes; pb_index tframes;
    /* the threads' stacks: trie nodes (item: a frame id; a thread's root:
     * parent NONE, item = the thread) and per node: */
    pb_mtrie nodes;
    uint64_t *self_w;      /* weight of samples whose leaf this node is */
    uint64_t *calls;       /* new activations observed */
    uint32_t *nthread;     /* its thread */
    size_t cself, ccalls, cnthread;
    f_thread *threads; size_t nthreads, cthreads; pb_index tthreads;
    pb_stack_table stacks; /* (thread, ids) -> its nodes (root first, as a cursor's path: kept with it,
                            * pb_stack_table_more), once walked; the number of its samples since:
                            * val, and 64 bits after the nodes (stack_hits); sum: their weight
                            * (calls_flush puts both on the nodes) */
    char *namebuf; size_t cnamebuf;
    char *filebuf; size_t cfilebuf;
    /* finish()'s working memory, here so that pb_fold_free() releases it
     * when a consumer leaves in the middle of finish() (pb_cleanups) */
    uint64_t *fin_total;
    uint32_t *fin_byorder; /* thread index by order of first sample */
    pb_mwalk walk;
    pb_callev cev;
    int weight_ns;         /* weights are ns, not samples (merged profiles) */
    int have_ts;           /* some sample carried a timestamp */
    char other_unit[96];   /* the weights are neither time nor samples: their unit ("bytes") */
    char *app;             /* ATTRIBUTE application: the root sub's file when a frame's */
    pb_sample_facts facts; /* the header's facts: the run's length (profile_duration_sec) */
    double *fin_end;       /* finish: each thread's PID_END time (s), by order */
    /* a call-graph source (graph_func/graph_edge/graph_line, samples.h) */
    g_func *gf; size_t ngf, cgf; pb_index tgf;
    uint64_t *ecc; size_t cecc, necc; /* per model edge: its primitive calls */
    int graph_lines;       /* the source gave line costs */
    uint64_t last_key;     /* the thread of the previous sample (most samples repeat it) */
    uint32_t last_ti;      /* its index, or NONE */
    /* kept stacks by a hash of their thread, depth and innermost two frames
     * (pool byte offset / 8 + 1; 0: none): most samples find theirs here,
     * without hashing all their frames (checked against the kept ids) */
    uint32_t scache[FOLD_SCACHE];
    /* kept stacks by the producer's stack id (sample_stack_id, samples.h), as scache */
    uint32_t *sid_at; size_t csid;
    uint64_t sum_n;        /* sample_sum(): the samples the next sample stands for (0: one) */
};

#define OOM(f) pb_fail((f)->err, PB_ERR_LIMIT, 0, "out of memory while folding samples")

static pb_status fold_emit(pb_fold *f, const pb_chunk *c) { return pb_model_emit(&f->m, c); }

static pb_status fold_emit_attr(pb_fold *f, const char *key, pb_str val)
{
    pb_chunk c;
    pb_chunk_attribute(&c, pb_str_c(key), val);
    return fold_emit(f, &c);
}

static pb_status fold_header(pb_fold *f)
{
    pb_chunk c;
    pb_status st;
    char buf[160];
    if (f->header_done)
        return PB_OK;
    f->header_done = 1;
    pb_chunk_version(&c, 5, 0);
    if ((st = fold_emit(f, &c)) != PB_OK)
        return st;
    snprintf(buf, sizeof buf, "Perl profile database. Generated by Devel::ProfileBridge %s from a %s profile\n",
             PB_VERSION_STRING, f->cfg.source_format ? f->cfg.source_format : "sampling");
    pb_chunk_comment(&c, pb_str_c(buf));
    if ((st = fold_emit(f, &c)) != PB_OK)
        return st;
    if (f->cfg.source_format && (st = fold_emit_attr(f, "source_format", pb_str_c(f->cfg.source_format))) != PB_OK)
        return st;
    if ((st = fold_emit_attr(f, "nv_size", pb_str_c("8"))) != PB_OK)
        return st;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)f->cfg.ticks_per_sec);
    if ((st = fold_emit_attr(f, "ticks_per_sec", pb_str_c(buf))) != PB_OK)
        return st;
    /* the stream carries call events (SUB_RETURN), as NYTProf's calls=1 */
    if (f->cfg.call_graph)
        return PB_OK;
    pb_chunk_option(&c, pb_str_c("calls"), pb_str_c("1"));
    return fold_emit(f, &c);
}

size_t pb_fold_sub_name(const pb_frame *fr, char *buf, size_t cap)
{
    /* package::name as valid UTF-8: a part without the UTF-8 flag is
     * Latin-1 and is upgraded, as Perl joins the two (util.h) */
    const char *pkg = fr->package.len ? fr->package.ptr : "main";
    size_t plen = fr->package.len ? fr->package.len : 4;
    size_t room = cap ? cap - 1 : 0, w;
    w = pb_utf8_append(buf, room, 0, pkg, plen, fr->package.len ? fr->package.utf8 : 1);
    w = pb_utf8_append(buf, room, w, "::", 2, 1);
    w = pb_utf8_append(buf, room, w, fr->name.ptr, fr->name.len, fr->name.utf8);
    if (cap)
        buf[w < room ? w : room] = '\0';
    return w;
}

size_t pb_frame_shown_name(const pb_frame *fr, char *buf, size_t cap)
{
    size_t room = cap ? cap - 1 : 0, w;
    if (!fr->own.len)
        return pb_fold_sub_name(fr, buf, cap);
    w = pb_utf8_append(buf, room, 0, fr->own.ptr, fr->own.len, fr->own.utf8);
    if (cap)
        buf[w < room ? w : room] = '\0';
    return w;
}

/* the joined name holds characters beyond ASCII (and is then UTF-8) */
int pb_fold_sub_name_wide(const pb_frame *fr)
{
    return pb_has_high(fr->package.ptr ? fr->package.ptr : "", fr->package.len) ||
           pb_has_high(fr->name.ptr ? fr->name.ptr : "", fr->name.len);
}

static uint32_t fold_frame_hash(uint32_t sub, uint32_t file, uint32_t line)
{
    return pb_mix64(((uint64_t)sub << 32) ^ ((uint64_t)file << 20) ^ line);
}

static uint32_t frame_hash_of(const void *ctx, uint32_t id)
{
    const f_frame *o = &((const pb_fold *)ctx)->frames[id];
    return fold_frame_hash(o->sub, o->file, o->line);
}

static pb_status ss_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    pb_fold *f = (pb_fold *)self->ctx;
    pb_status st;
    uint32_t file = 0, sub = 0, line, h, i;
    size_t need, k;
    int r, synthetic = fr->kind == PB_FRAME_SYNTHETIC;
    if ((st = fold_header(f)) != PB_OK)
        return st;
    if (synthetic) {
        const char *sf = f->cfg.synthetic_file ? f->cfg.synthetic_file : PB_FOLD_SYNTHETIC_FILE;
        r = pb_model_file(&f->m, sf, strlen(sf), SYNTH_VARIANT, PB_FID_IS_FAKE | PB_FID_VIA_SUB, &file);
    } else {
        /* as valid UTF-8 (a Latin-1 name upgraded, bad bytes escaped: util.h) */
        const char *fp = fr->file.ptr ? fr->file.ptr : "";
        size_t fl = pb_utf8_append(NULL, 0, 0, fp, fr->file.len, fr->file.utf8);
        if (pb_grow((void **)&f->filebuf, &f->cfilebuf, fl + 1, 1) < 0)
            return OOM(f);
        pb_utf8_append(f->filebuf, fl, 0, fp, fr->file.len, fr->file.utf8);
        r = pb_model_file(&f->m, f->filebuf, fl, 0, PB_FID_VIA_STMT | PB_FID_VIA_SUB, &file);
        if (r == 0 && f->cfg.fid_flags)
            f->m.files[file].flags = f->cfg.fid_flags(f->cfg.fid_flags_ctx, pb_str_make(f->filebuf, fl, 0));
    }
    if (r < 0)
        return OOM(f);
    need = pb_fold_sub_name(fr, NULL, 0) + 1;
    if (pb_grow((void **)&f->namebuf, &f->cnamebuf, need, 1) < 0)
        return OOM(f);
    pb_fold_sub_name(fr, f->namebuf, need);
    {
        /* the sub's first line: the smallest the decoder reports */
        uint32_t first = !synthetic && fr->first_line > 0 ? (uint32_t)fr->first_line : 0;
        if ((r = pb_model_sub(&f->m, f->namebuf, need - 1, file, first, &sub)) < 0)
            return OOM(f);
        if (r == 1 && first && (!f->m.subs[sub].first || first < f->m.subs[sub].first))
            f->m.subs[sub].first = first;
    }
    line = (!synthetic && fr->line > 0) ? (uint32_t)fr->line : 0;
    h = fold_frame_hash(sub, file, line);
    if (pb_index_reserve(&f->tframes, f->nframes, frame_hash_of, f) < 0)
        return OOM(f);
    PB_INDEX_FIND(&f->tframes, h, k, i,
                  f->frames[i].sub == sub && f->frames[i].file == file && f->frames[i].line == line);
    if ((*id = i) != PB_INDEX_NONE)
        return PB_OK;
    if (pb_index_add(&f->tframes, k, (void **)&f->frames, &f->cframes, f->nframes, sizeof *f->frames) < 0)
        return OOM(f);
    f->frames[f->nframes].sub = sub;
    f->frames[f->nframes].file = file;
    f->frames[f->nframes].line = line;
    *id = (uint32_t)f->nframes++;
    return PB_OK;
}

/* the trie node (parent, item) of thread; *added: it is new */
static inline pb_status get_node(pb_fold *f, uint32_t parent, uint32_t item, uint32_t thread, uint32_t *idx, int *added)
{
    size_t n = f->nodes.len + 1;
    int r;
    if ((n > f->cself || n > f->ccalls || n > f->cnthread) &&
        (pb_grow((void **)&f->self_w, &f->cself, n, sizeof *f->self_w) < 0 ||
         pb_grow((void **)&f->calls, &f->ccalls, n, sizeof *f->calls) < 0 ||
         pb_grow((void **)&f->nthread, &f->cnthread, n, sizeof *f->nthread) < 0))
        return OOM(f);
    if ((r = pb_mtrie_get(&f->nodes, parent, item, idx)) < 0)
        return OOM(f);
    *added = r == 0;
    if (r == 0) {
        f->self_w[*idx] = 0;
        f->calls[*idx] = 0;
        f->nthread[*idx] = thread;
    }
    return PB_OK;
}

static uint32_t thread_hash_of(const void *ctx, uint32_t id)
{
    return pb_mix64(((const pb_fold *)ctx)->threads[id].key);
}

static pb_status fold_get_thread(pb_fold *f, uint64_t key, uint32_t *idx)
{
    uint32_t h = pb_mix64(key), i;
    size_t k;
    f_thread *t;
    pb_status st;
    int added;
    if (f->last_ti != NONE && f->last_key == key) { /* most samples repeat the previous one's thread */
        *idx = f->last_ti;
        return PB_OK;
    }
    if (pb_index_reserve(&f->tthreads, f->nthreads, thread_hash_of, f) < 0)
        return OOM(f);
    PB_INDEX_FIND(&f->tthreads, h, k, i, f->threads[i].key == key);
    if ((*idx = i) != PB_INDEX_NONE)
        goto found;
    if (f->nthreads >= (f->cfg.max_threads ? f->cfg.max_threads : PB_DEFAULT_MAX_THREADS))
        return pb_fail_nooff(f->err, PB_ERR_LIMIT, "more than max_threads (%u) threads",
                             f->cfg.max_threads ? f->cfg.max_threads : PB_DEFAULT_MAX_THREADS);
    if (pb_grow((void **)&f->threads, &f->cthreads, f->nthreads + 1, sizeof *f->threads) < 0)
        return OOM(f);
    t = (f_thread *)memset(&f->threads[f->nthreads], 0, sizeof *t);
    t->key = key;
    t->pid = (uint32_t)f->nthreads + 1;
    if ((st = get_node(f, NONE, (uint32_t)f->nthreads, (uint32_t)f->nthreads, &t->root, &added)) != PB_OK)
        return st;
    pb_index_set(&f->tthreads, k, (uint32_t)f->nthreads);
    *idx = (uint32_t)f->nthreads++;
found:
    f->last_key = key;
    f->last_ti = *idx;
    return PB_OK;
}

static pb_status ss_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    pb_fold *f = (pb_fold *)self->ctx;
    uint32_t ti;
    pb_status st;
    f_thread *t;
    if ((st = fold_header(f)) != PB_OK)
        return st;
    if ((st = fold_get_thread(f, key, &ti)) != PB_OK)
        return st;
    t = &f->threads[ti];
    t->pid = pid;
    t->ppid = ppid;
    if (label) {
        char key[40];
        free(t->label);
        t->label = pb_memdup0(label, strlen(label));
        if (!t->label)
            return OOM(f);
        snprintf(key, sizeof key, "thread_id_%u", pid);
        return fold_emit_attr(f, key, pb_str_make(label, strlen(label), pb_utf8_valid(label, strlen(label))));
    }
    return PB_OK;
}

static pb_status ss_attribute(pb_sample_sink *self, const char *key, pb_str value)
{
    pb_fold *f = (pb_fold *)self->ctx;
    pb_status st;
    if (!strcmp(key, "sample_weight_unit"))
        f->weight_ns = value.len == 2 && !memcmp(value.ptr, "ns", 2); /* merge.h: weights are ns */
    if (!strcmp(key, "sample_type")) {
        char t[96];
        pb_sample_attr_text(value, t, sizeof t);
        if (pb_weight_kind_of(t, f->other_unit, sizeof f->other_unit) != PB_WEIGHT_OTHER)
            f->other_unit[0] = '\0';
    }
    pb_sample_facts_take(&f->facts, self, key, value);
    if (!strcmp(key, "application")) {
        free(f->app);
        if (!(f->app = pb_memdup0(value.ptr ? value.ptr : "", value.len)))
            return OOM(f);
    }
    if ((st = fold_header(f)) != PB_OK)
        return st;
    return fold_emit_attr(f, key, value);
}

/* eval source ("eval_source", a = text, b = "(eval N)"): kept with the
 * file of that name and delivered as SRC_LINEs of its fid.  Other notes
 * (sections, metadata) are the decoder's to present. */
static pb_status ss_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    pb_fold *f = (pb_fold *)self->ctx;
    uint32_t idx;
    pb_status st;
    int r;
    (void)n;
    if (strcmp(kind, "eval_source") != 0 || b.len == 0)
        return PB_OK;
    if ((st = fold_header(f)) != PB_OK)
        return st;
    if ((r = pb_model_file(&f->m, b.ptr, b.len, 0, PB_FID_VIA_STMT | PB_FID_VIA_SUB, &idx)) < 0)
        return OOM(f);
    if (r == 0 && f->cfg.fid_flags)
        f->m.files[idx].flags = f->cfg.fid_flags(f->cfg.fid_flags_ctx, pb_str_make(b.ptr, b.len, 0));
    return pb_model_file_source(&f->m, idx, a);
}

/* make sure the file of frame id has a fid (emitting NEW_FID) and note the line */
static pb_status use_frame(pb_fold *f, uint32_t id)
{
    const f_frame *fr = &f->frames[id];
    pb_msub *s = &f->m.subs[fr->sub];
    uint32_t fid;
    pb_status st;
    if ((st = pb_model_fid(&f->m, fr->file, &fid)) != PB_OK)
        return st;
    if (!s->used) {
        s->used = 1;
        /* the sub's SUB_INFO fid is its own file's, which must exist */
        if ((st = pb_model_fid(&f->m, s->file, &fid)) != PB_OK)
            return st;
    }
    pb_model_sub_line(&f->m, fr->sub, fr->line);
    return PB_OK;
}

/* a thread's first sample (or call-graph fact): PID_START */
static pb_status start_thread(pb_fold *f, f_thread *t, uint64_t weight, uint64_t timestamp)
{
    pb_chunk c;
    uint64_t tpw = f->cfg.ticks_per_weight;
    t->started = 1;
    t->order = f->started_threads++;
    /* a weight > 1 sample carries the timestamp of the last of its samples */
    t->first_ts = weight > 1 && tpw && (weight - 1) <= timestamp / tpw ? timestamp - (weight - 1) * tpw : timestamp;
    t->end_ts = t->first_ts;
    pb_chunk_pid_start(&c, t->pid, t->ppid, (double)t->first_ts / (double)f->cfg.ticks_per_sec);
    return fold_emit(f, &c);
}

/* a kept stack's count of samples past its val (64 bits after its nodes):
 * add how (> 0), reset it (how < 0), or read it (0) */
static uint64_t stack_hits(pb_stack_head *h, int64_t how)
{
    uint64_t n;
    uint32_t *at = pb_stack_table_more(h) + h->depth;
    memcpy(&n, at, sizeof n);
    n = how < 0 ? 0 : n + (uint64_t)how;
    memcpy(at, &n, sizeof n);
    return n;
}

/* the cache slot of a stack (ss_sample) */
static inline uint32_t scache_slot(uint32_t ti, const uint32_t *ids, uint32_t depth)
{
    uint64_t k = ((uint64_t)ti << 56) ^ ((uint64_t)depth << 40) ^ (depth ? (uint64_t)ids[0] << 20 : 0) ^
                 (depth > 1 ? ids[1] : 0);
    return pb_mix64(k) & (FOLD_SCACHE - 1);
}

/* a kept stack by the producer's stack id (sid < PB_STACK_ID_MAX), of thread ti: its head, or NULL */
static inline pb_stack_head *sid_find(pb_fold *f, uint32_t sid, uint32_t ti)
{
    pb_stack_head *h;
    if (sid >= f->csid || !f->sid_at[sid])
        return NULL;
    h = (pb_stack_head *)(f->stacks.pool + (size_t)(f->sid_at[sid] - 1) * 8);
    return h->key == ti ? h : NULL;
}

/* the stack id names the kept stack h (pool byte offset / 8) from now on */
static inline void sid_keep(pb_fold *f, uint32_t sid, size_t off8)
{
    if (sid < PB_STACK_ID_MAX && pb_grow_zero((void **)&f->sid_at, &f->csid, (size_t)sid + 1, sizeof *f->sid_at) == 0)
        f->sid_at[sid] = (uint32_t)off8 + 1;
}

/* Over 80 lines, kept whole: the per-sample hot path: the stack cursor, the stack table and the
 * per-node charges in one pass, kept together so nothing is looked up twice.  sid: the producer's
 * stack id (sample_stack_id), NONE when it names none (sample). */
static inline pb_status fold_sample(pb_sample_sink *self, uint64_t thread_key, uint32_t sid, const uint32_t *ids,
                                    uint32_t depth, uint64_t weight, uint64_t timestamp)
{
    pb_fold *f = (pb_fold *)self->ctx;
    pb_status st;
    uint32_t ti, j, m;
    f_thread *t;
    pb_stack_head *h;
    uint64_t tpw = f->cfg.ticks_per_weight, sum_n = f->sum_n;
    f->sum_n = 0;
    if ((st = fold_header(f)) != PB_OK)
        return st;
    if ((st = fold_get_thread(f, thread_key, &ti)) != PB_OK)
        return st;
    t = &f->threads[ti];
    if (!t->started && (st = start_thread(f, t, weight, timestamp)) != PB_OK)
        return st;
    if (!depth && (st = pb_sample_noframe(self, &ids, &depth)) != PB_OK) /* samples.h */
        return st;
    /* the stack of the previous sample of this thread again, a kept one:
     * its nodes take no activation (each would take one, counted by val,
     * and give it back, as m = depth), only its weight */
    if (t->lazy && depth &&
        (sid != NONE ? sid + 1 == t->sid1 : depth == t->cur.depth && !memcmp(t->cur.prev, ids, depth * sizeof *ids))) {
        h = (pb_stack_head *)(f->stacks.pool + t->lazy - 1);
        h->sum += weight;
        goto timed;
    }
    /* m: the outermost frames in common with the previous sample of this thread */
    if (pb_stack_cursor_begin(&t->cur, ids, depth, &m) < 0)
        return OOM(f);
    /* a stack seen before: its nodes from m on are its leaf's ancestors,
     * no probe for them (the path stays the sample's, root first) */
    {
        /* the cache first (a kept stack of this thread, depth and frames), then the table */
        h = sid != NONE ? sid_find(f, sid, ti) : NULL;
        if (!h) {
            uint32_t c = scache_slot(ti, ids, depth), e = f->scache[c];
            h = e ? (pb_stack_head *)(f->stacks.pool + (size_t)(e - 1) * 8) : NULL;
            if (!h || h->key != ti || h->depth != depth || memcmp(h + 1, ids, (size_t)depth * sizeof *ids) != 0) {
                h = pb_stack_table_find(&f->stacks, ti, ids, depth);
                if (h)
                    f->scache[c] = (uint32_t)(((char *)h - f->stacks.pool) / 8 + 1);
            }
            if (h && sid != NONE)
                sid_keep(f, sid, (size_t)((char *)h - f->stacks.pool) / 8);
        }
    }
    if (h != NULL) {
        /* each node of the stack takes an activation but its outer m
         * (those it shares with the previous sample), and the m-th only when
         * its sub changed: counted as one for each node (val: the
         * samples of the stack, onto calls by calls_flush) less those here,
         * on nodes the previous sample touched (no miss on the others) */
        const uint32_t *pp = pb_stack_table_more(h);
        if (++h->val == UINT32_MAX) { /* the count: val, then the 64 bits after the nodes */
            stack_hits(h, UINT32_MAX);
            h->val = 0;
        }
        h->sum += weight; /* (as self_w takes it: onto the leaf by calls_flush) */
        for (j = 0; j < m; j++)
            f->calls[pp[j]]--;
        if (m < depth && !(m >= t->cur.depth ||
                           f->frames[ids[depth - 1 - m]].sub != f->frames[t->cur.prev[t->cur.depth - 1 - m]].sub))
            f->calls[pp[m]]--;
        t->lazy = (size_t)((char *)h - f->stacks.pool) + 1; /* its nodes are the path */
    } else if (f->stacks.oom) {
        return OOM(f);
    } else if (t->lazy) {
        /* the walk starts below the m nodes shared with the previous sample */
        const uint32_t *lp = pb_stack_table_more((pb_stack_head *)(f->stacks.pool + t->lazy - 1));
        for (j = 0; j < m; j++)
            t->cur.path[j] = lp[j];
        t->lazy = 0;
    }
    for (j = h ? depth : m; j < depth; j++) {
        uint32_t frame = ids[depth - 1 - j];
        uint32_t parent = j ? t->cur.path[j - 1] : t->root;
        if (frame >= f->nframes)
            return pb_fail(f->err, PB_ERR_CORRUPT, 0, "sample uses frame id %u, only %zu interned", frame,
                           f->nframes);
        uint32_t node;
        int added;
        if ((st = get_node(f, parent, frame, ti, &node, &added)) != PB_OK)
            return st;
        if (added && (st = use_frame(f, frame)) != PB_OK)
            return st;
        t->cur.path[j] = node;
        if (j > m || j >= t->cur.depth ||
            f->frames[frame].sub != f->frames[t->cur.prev[t->cur.depth - 1 - j]].sub)
            f->calls[node]++;
    }
    if (!h) {
        /* its path, and a count of 0 after it (two u32) */
        if (pb_grow((void **)&t->cur.path, &t->cur.hcap, (size_t)depth + 2, sizeof *t->cur.path) < 0)
            return OOM(f);
        t->cur.path[depth] = t->cur.path[depth + 1] = 0;
        int kept = pb_stack_table_add_more(&f->stacks, ti, ids, depth, 0, 0, t->cur.path, depth + 2);
        if (kept < 0)
            return OOM(f);
        if (kept && sid != NONE)
            sid_keep(f, sid, f->stacks.order[f->stacks.n - 1]);
    }
    pb_stack_cursor_end(&t->cur, ids, depth);
    t->sid1 = sid + 1; /* (NONE + 1: 0) */
timed:
    if (depth) {
        /* ticks = weight x interval, in TIME_LINEs of at most INT32_MAX
         * ticks each (no time is lost).  A sample may fill at most
         * PB_FOLD_MAX_SPLIT of them: a corrupt weight must not turn a few
         * bytes into billions of chunks. */
        const f_frame *leaf = &f->frames[ids[0]];
        uint64_t nchunks = !(weight >> 31) && !(tpw >> 31) && weight * tpw <= (uint64_t)INT32_MAX
                               ? 1 : pb_model_split_count(weight, tpw); /* (one, without a division) */
        if (!h)
            f->self_w[t->cur.path[depth - 1]] += weight;
        if (sum_n || (!pb_sink_wants(f->out, PB_T_TIME_LINE) && nchunks <= PB_FOLD_MAX_SPLIT)) {
            /* TIME_LINEs the sink only counts: n samples of one each (sample_sum), or this one's */
            if ((st = pb_model_skip_time_lines(&f->m, sum_n ? sum_n : weight ? nchunks : 0,
                                               f->m.files[leaf->file].fid, leaf->line)) != PB_OK)
                return st;
        } else if (nchunks > PB_FOLD_MAX_SPLIT)
            return pb_fail_nooff(f->err, PB_ERR_LIMIT,
                                 "a sample of weight %llu x %llu ticks would need %llu TIME_LINE chunks; one "
                                 "sample may fill at most %u (%u x 2^31 ticks)",
                                 (unsigned long long)weight, (unsigned long long)tpw, (unsigned long long)nchunks,
                                 (unsigned)PB_FOLD_MAX_SPLIT, (unsigned)PB_FOLD_MAX_SPLIT);
        else if ((st = pb_model_time_lines(&f->m, weight, tpw, 0, 0, f->m.files[leaf->file].fid, leaf->line)) !=
                 PB_OK)
            return st;
    }
    if (timestamp)
        f->have_ts = 1;
    {
        /* ticks, exact: a wrapped sum would end the process before it starts */
        uint64_t end = timestamp, ticks;
        if (!(timestamp >> 62) && !(tpw >> 31) && !(weight >> 31) && !(t->sampled >> 62)) {
            /* none of the three can wrap: the sums without the calls */
            end += tpw;
            t->sampled += weight * tpw;
        } else if ((st = pb_checked_add(f->err, &end, tpw, "a sample's end", "ticks")) != PB_OK ||
            (st = pb_checked_mul(f->err, weight, tpw, "a sample's time", "ticks", &ticks)) != PB_OK ||
            (st = pb_checked_add(f->err, &t->sampled, ticks, "a thread's sampled time", "ticks")) != PB_OK)
            return st;
        if (t->first_ts > (uint64_t)INT64_MAX - t->sampled)
            return pb_fail_nooff(f->err, PB_ERR_LIMIT, "a thread's end of %llu + %llu ticks does not fit 63 bits",
                                 (unsigned long long)t->first_ts, (unsigned long long)t->sampled);
        if (end > t->end_ts)
            t->end_ts = end; /* the last sample covers one interval */
    }
    t->weight += weight;
    return PB_OK;
}

static pb_status ss_sample(pb_sample_sink *self, uint64_t thread_key, const uint32_t *ids, uint32_t depth,
                           uint64_t weight, uint64_t timestamp)
{
    return fold_sample(self, thread_key, NONE, ids, depth, weight, timestamp);
}

static pb_status ss_sample_stack_id(pb_sample_sink *self, uint64_t thread_key, uint32_t stack_id,
                                    const uint32_t *ids, uint32_t depth, uint64_t weight, uint64_t timestamp)
{
    return fold_sample(self, thread_key, stack_id < PB_STACK_ID_MAX ? stack_id : NONE, ids, depth, weight, timestamp);
}

/* the next sample stands for n (fold_samples.h sums_counted) */
static pb_status ss_sample_sum(pb_sample_sink *self, uint64_t n)
{
    ((pb_fold *)self->ctx)->sum_n = n;
    return PB_OK;
}

/* the next double above a positive finite x (nextafter(x, +inf), without libm) */
static double next_up(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    u++;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* a sub name that cannot be part of an ATTRIBUTE key (NYTProf's "key=value"
 * line: no '=' or newline): its primitive calls are not written (a
 * fuzz-made name; nytprof.out's writer would refuse the key) */
static int attr_key_unfit(pb_str n)
{
    return n.len && (memchr(n.ptr, '=', n.len) != NULL || memchr(n.ptr, '\n', n.len) != NULL);
}

/* ---- call-graph input (samples.h, pb_graph_*) ------------------------------
 * A call-graph source's functions and edges go straight into the model: each
 * edge is a SUB_CALLERS edge with the source's count, incl and excl; what a
 * function's totals hold beyond its edges' sums (a function called from
 * outside the profile) is an edge from the root sub.  Recursion: where its
 * edges' incl add up to more than the function's (cProfile counts an edge's
 * incl per caller-callee pair), the excess moves to the edges' reci, the
 * self-edges' first, then those with recursive calls, so that the edges'
 * incl add up to the function's, as NYTProf's own.  Primitive calls (cc)
 * that differ from the calls are ATTRIBUTEs "primitive_calls PID SUB" and
 * "primitive_calls PID SUB <- CALLER". */
static uint32_t gf_hash(uint32_t thread, uint32_t sub) { return pb_mix64(((uint64_t)thread << 32) | sub); }
static uint32_t gf_hash_of(const void *ctx, uint32_t id)
{
    const g_func *g = &((const pb_fold *)ctx)->gf[id];
    return gf_hash(g->thread, g->sub);
}

/* ecc as long as the model's edges, new ones 0 */
static int grow_ecc(pb_fold *f)
{
    if (pb_grow((void **)&f->ecc, &f->cecc, f->m.nedges ? f->m.nedges : 1, sizeof *f->ecc) < 0)
        return -1;
    while (f->necc < f->m.nedges)
        f->ecc[f->necc++] = 0;
    return 0;
}

/* the g_func of (thread order, sub), added when new */
static pb_status graph_fn_of(pb_fold *f, uint32_t thread, uint32_t sub, uint32_t frame, uint32_t *idx)
{
    size_t k;
    uint32_t i;
    if (pb_index_reserve(&f->tgf, f->ngf, gf_hash_of, f) < 0)
        return OOM(f);
    PB_INDEX_FIND(&f->tgf, gf_hash(thread, sub), k, i, f->gf[i].thread == thread && f->gf[i].sub == sub);
    if (i == PB_INDEX_NONE) {
        if (pb_index_add(&f->tgf, k, (void **)&f->gf, &f->cgf, f->ngf, sizeof *f->gf) < 0)
            return OOM(f);
        f->gf[f->ngf].thread = thread;
        f->gf[f->ngf].sub = sub;
        f->gf[f->ngf].frame = frame;
        i = (uint32_t)f->ngf++;
    }
    *idx = i;
    return PB_OK;
}

/* the started thread of key, and the frame checked */
static pb_status graph_thread(pb_fold *f, uint64_t key, uint32_t frame, f_thread **tp)
{
    uint32_t ti;
    pb_status st;
    if ((st = fold_header(f)) != PB_OK || (st = fold_get_thread(f, key, &ti)) != PB_OK)
        return st;
    *tp = &f->threads[ti];
    if (!(*tp)->started && (st = start_thread(f, *tp, 0, 0)) != PB_OK)
        return st;
    if (frame >= f->nframes)
        return pb_fail(f->err, PB_ERR_CORRUPT, 0, "call graph uses frame id %u, only %zu interned", frame, f->nframes);
    return use_frame(f, frame);
}

static pb_status ss_graph_func(pb_sample_sink *self, uint64_t key, const pb_graph_func *g)
{
    pb_fold *f = (pb_fold *)self->ctx;
    f_thread *t;
    uint32_t i = 0;
    uint64_t ticks;
    pb_status st;
    if ((st = graph_thread(f, key, g->frame, &t)) != PB_OK ||
        (st = graph_fn_of(f, t->order, f->frames[g->frame].sub, g->frame, &i)) != PB_OK)
        return st;
    f->gf[i].told = 1;
    f->gf[i].nc += g->nc;
    f->gf[i].cc += g->cc;
    f->gf[i].excl += g->excl;
    f->gf[i].incl += g->incl;
    if ((st = pb_checked_mul(f->err, g->excl, f->cfg.ticks_per_weight, "a function's cost", "ticks", &ticks)) != PB_OK ||
        (st = pb_checked_add(f->err, &t->sampled, ticks, "a thread's cost", "ticks")) != PB_OK)
        return st;
    t->weight += g->excl;
    return PB_OK;
}

static pb_status ss_graph_edge(pb_sample_sink *self, uint64_t key, const pb_graph_edge *g)
{
    pb_fold *f = (pb_fold *)self->ctx;
    f_thread *t;
    uint32_t e, file, line, caller = NONE, callee;
    pb_medge *me;
    pb_status st;
    if ((st = graph_thread(f, key, g->callee, &t)) != PB_OK)
        return st;
    callee = f->frames[g->callee].sub;
    if (g->caller == PB_GRAPH_ROOT) {
        file = f->m.subs[callee].file;
        line = pb_model_sub_first(&f->m.subs[callee]);
    } else {
        if (g->caller >= f->nframes)
            return pb_fail(f->err, PB_ERR_CORRUPT, 0, "call graph uses frame id %u, only %zu interned", g->caller,
                           f->nframes);
        if ((st = use_frame(f, g->caller)) != PB_OK)
            return st;
        caller = f->frames[g->caller].sub;
        file = f->frames[g->caller].file;
        line = g->line ? g->line : f->frames[g->caller].line;
        if ((st = pb_model_fid(&f->m, file, &e)) != PB_OK)
            return st;
    }
    if (pb_model_edge(&f->m, t->order, caller, file, line, callee, &e) < 0 || grow_ecc(f) < 0)
        return OOM(f);
    me = &f->m.edges[e];
    me->count += g->nc;
    me->incl += g->incl;
    me->excl += g->excl;
    f->ecc[e] += g->cc;
    if (g->cc < g->nc && me->rec_depth < 1)
        me->rec_depth = 1;
    /* the callee's graph edges summed here: a merged stack input's edges
     * into the same sub are not the graph's */
    if ((st = graph_fn_of(f, t->order, callee, g->callee, &e)) != PB_OK)
        return st;
    f->gf[e].snc += g->nc;
    f->gf[e].sexcl += g->excl;
    f->gf[e].sincl += g->incl;
    return PB_OK;
}

static pb_status ss_graph_line(pb_sample_sink *self, uint64_t key, uint32_t frame, uint32_t line, uint64_t cost)
{
    pb_fold *f = (pb_fold *)self->ctx;
    f_thread *t;
    const f_frame *fr;
    pb_status st;
    uint64_t n;
    if ((st = graph_thread(f, key, frame, &t)) != PB_OK)
        return st;
    f->graph_lines = 1;
    fr = &f->frames[frame];
    pb_model_sub_line(&f->m, fr->sub, line);
    n = pb_model_split_count(cost, f->cfg.ticks_per_weight);
    if (n > PB_FOLD_MAX_SPLIT)
        return pb_fail_nooff(f->err, PB_ERR_LIMIT, "a line's cost of %llu x %llu ticks would need %llu TIME_LINE chunks",
                             (unsigned long long)cost, (unsigned long long)f->cfg.ticks_per_weight,
                             (unsigned long long)n);
    return pb_model_time_lines(&f->m, cost, f->cfg.ticks_per_weight, 0, 0, f->m.files[fr->file].fid, line);
}

/* finish: the root edges, reci, the def-line statements, primitive calls */
/* Over 80 lines, kept whole: three ordered steps (root edges, excess inclusive time to reci in
 * three passes, primitive calls) that share the edge arrays it grows. */
static pb_status graph_finish(pb_fold *f, const uint32_t *by_order)
{
    size_t i, n = f->m.nedges;
    int pass;
    pb_status st;
    char key[64], val[24];
    if (!f->ngf)
        return PB_OK;
    if (grow_ecc(f) < 0)
        return OOM(f);
    for (i = 0; i < f->ngf; i++)
        f->gf[i].over = f->gf[i].told && f->gf[i].sincl > f->gf[i].incl ? f->gf[i].sincl - f->gf[i].incl : 0;
    /* the excess incl to reci: self-edges, then edges with recursive calls, then any */
    for (pass = 0; pass < 3; pass++) {
        for (i = 0; i < n; i++) {
            pb_medge *e = &f->m.edges[i];
            uint32_t k;
            size_t slot;
            uint64_t mv;
            if (pass == 0 && e->caller != e->callee)
                continue;
            if (pass == 1 && !(f->ecc[i] < e->count))
                continue;
            PB_INDEX_FIND(&f->tgf, gf_hash(e->thread, e->callee), slot, k,
                          f->gf[k].thread == e->thread && f->gf[k].sub == e->callee);
            if (k == PB_INDEX_NONE || !f->gf[k].over)
                continue;
            mv = e->incl < f->gf[k].over ? e->incl : f->gf[k].over;
            e->incl -= mv;
            e->reci += mv;
            f->gf[k].over -= mv;
        }
    }
    for (i = 0; i < f->ngf; i++) {
        g_func *g = &f->gf[i];
        const pb_msub *s = &f->m.subs[g->sub];
        uint32_t e;
        pb_str nm = pb_model_sub_name(&f->m, g->sub);
        uint32_t pid = by_order[g->thread] != NONE ? f->threads[by_order[g->thread]].pid : g->thread + 1;
        if (!g->told)
            continue; /* only edges named it */
        if (g->nc > g->snc || g->excl > g->sexcl || g->incl > g->sincl) {
            /* called from outside the profile (or more than its edges say) */
            if (pb_model_edge(&f->m, g->thread, NONE, s->file, pb_model_sub_first(s), g->sub, &e) < 0 ||
                grow_ecc(f) < 0)
                return OOM(f);
            f->m.edges[e].count += g->nc > g->snc ? g->nc - g->snc : 0;
            f->m.edges[e].excl += g->excl > g->sexcl ? g->excl - g->sexcl : 0;
            f->m.edges[e].incl += g->incl > g->sincl ? g->incl - g->sincl : 0;
        }
        if (!f->graph_lines) {
            /* its own cost on its def line */
            const f_frame *fr = &f->frames[g->frame];
            if (pb_model_split_count(g->excl, f->cfg.ticks_per_weight) > PB_FOLD_MAX_SPLIT)
                return pb_fail_nooff(f->err, PB_ERR_LIMIT, "a function's cost of %llu x %llu ticks is too large",
                                     (unsigned long long)g->excl, (unsigned long long)f->cfg.ticks_per_weight);
            if ((st = pb_model_time_lines(&f->m, g->excl, f->cfg.ticks_per_weight, 0, 0, f->m.files[fr->file].fid,
                                          fr->line)) != PB_OK)
                return st;
        }
        if (g->cc != g->nc && !attr_key_unfit(nm)) {
            /* (the key in the fold's own buffer: a consumer that never returns leaks nothing) */
            size_t kl = nm.len + 48;
            snprintf(val, sizeof val, "%llu", (unsigned long long)g->cc);
            if (pb_grow((void **)&f->namebuf, &f->cnamebuf, kl, 1) < 0)
                return OOM(f);
            snprintf(f->namebuf, kl, "primitive_calls %u %.*s", pid, (int)nm.len, nm.ptr);
            if ((st = fold_emit_attr(f, f->namebuf, pb_str_c(val))) != PB_OK)
                return st;
        }
    }
    for (i = 0; i < n; i++) {
        const pb_medge *e = &f->m.edges[i];
        pb_str a, b;
        size_t kl;
        if (f->ecc[i] == e->count || e->caller == NONE)
            continue;
        a = pb_model_sub_name(&f->m, e->callee);
        b = pb_model_sub_name(&f->m, e->caller);
        if (attr_key_unfit(a) || attr_key_unfit(b))
            continue;
        kl = a.len + b.len + 48;
        if (pb_grow((void **)&f->namebuf, &f->cnamebuf, kl, 1) < 0)
            return OOM(f);
        snprintf(key, sizeof key, "%llu", (unsigned long long)f->ecc[i]);
        snprintf(f->namebuf, kl, "primitive_calls %u %.*s <- %.*s",
                 by_order[e->thread] != NONE ? f->threads[by_order[e->thread]].pid : e->thread + 1, (int)a.len, a.ptr,
                 (int)b.len, b.ptr);
        if ((st = fold_emit_attr(f, f->namebuf, pb_str_c(key))) != PB_OK)
            return st;
    }
    return PB_OK;
}

/* ---- finish: SUB_INFO, SUB_CALLERS, PID_END ------------------------------ */
static pb_str sub_name_of(void *ctx, uint32_t sub) { return pb_model_sub_name(&((pb_fold *)ctx)->m, sub); }

static uint32_t frame_sub(const void *ctx, uint32_t frame) { return ((const pb_fold *)ctx)->frames[frame].sub; }

/* Call events: every thread's call tree, depth first, one stack per node
 * (its frames' subs, its own weight): one SUB_RETURN per tree node
 * (call_events.h).  Threads in order of first sample. */
static pb_status fold_call_events(pb_fold *f, const uint32_t *by_order)
{
    uint32_t r;
    pb_status st;
    pb_callev_init(&f->cev, f->out, f->err, (double)f->cfg.ticks_per_weight, sub_name_of, f);
    pb_mwalk_reset(&f->walk);
    for (r = 0; r < f->started_threads; r++) {
        if (by_order[r] == NONE)
            continue;
        if ((st = pb_mtrie_replay(&f->nodes, f->threads[by_order[r]].root, f->self_w, 0, frame_sub, f, &f->cev,
                                  &f->walk, f->err, f->m.oom_msg)) != PB_OK ||
            (st = pb_callev_end(&f->cev)) != PB_OK)
            return st;
    }
    return PB_OK;
}

/* Per node of the call trees, in time linear in the nodes (walking up the
 * path from every node was quadratic in stack depth):
 *   rec[i]: how many of i's ancestors (below its thread's root) run i's sub
 *           (its recursion depth), from one depth-first walk that keeps, per
 *           sub, the nearest node of that sub on the path;
 *   eff[i]: i, or for a frame of the root sub (a Perl sampler's main and
 *           eval frames) the nearest ancestor that is not one (or the thread's
 *           root): the caller a call from i is credited to.
 * Both malloc'd (the caller frees them). */
static pb_status node_depths(pb_fold *f, uint32_t root_sub, uint32_t **rec_out, uint32_t **eff_out)
{
    const pb_mnode *nd = f->nodes.n;
    size_t nn = f->nodes.len, ns = f->m.nsubs, i, sp;
    size_t cells = nn ? nn : 1;
    uint32_t *rec = (uint32_t *)malloc(cells * sizeof *rec), *eff = (uint32_t *)malloc(cells * sizeof *eff);
    uint32_t *first = (uint32_t *)calloc(nn + 2, sizeof *first), *kids = (uint32_t *)malloc(cells * sizeof *kids);
    uint32_t *stk = (uint32_t *)malloc(cells * sizeof *stk), *saved = (uint32_t *)malloc(cells * sizeof *saved);
    uint32_t *top = (uint32_t *)malloc((ns ? ns : 1) * sizeof *top), *cur = (uint32_t *)malloc(cells * sizeof *cur);
    *rec_out = *eff_out = NULL;
    if (!rec || !eff || !first || !kids || !stk || !saved || !top || !cur) {
        PB_FREE_ALL(rec, eff, first, kids, stk, saved, top, cur);
        return OOM(f);
    }
    /* children grouped by parent (counted at first[p + 2]), eff[] in
     * creation order (a parent before its children) */
    for (i = 0; i < nn; i++) {
        if (nd[i].parent == NONE) {
            eff[i] = (uint32_t)i;
            continue;
        }
        first[nd[i].parent + 2]++;
        eff[i] = f->frames[nd[i].item].sub == root_sub ? eff[nd[i].parent] : (uint32_t)i;
    }
    for (i = 0; i < nn; i++)
        first[i + 2] += first[i + 1];
    for (i = 0; i < nn; i++)
        if (nd[i].parent != NONE)
            kids[first[nd[i].parent + 1]++] = (uint32_t)i;
    /* now first[p] .. first[p + 1] are p's children; eff is done */
    for (i = 0; i < ns; i++)
        top[i] = NONE;
    for (i = 0; i < nn; i++) {
        if (nd[i].parent != NONE)
            continue;
        rec[i] = 0;
        stk[0] = (uint32_t)i;
        cur[0] = first[i];
        sp = 1;
        while (sp) {
            uint32_t node = stk[sp - 1];
            if (cur[sp - 1] < first[node + 1]) {
                uint32_t c = kids[cur[sp - 1]++], sub = f->frames[nd[c].item].sub;
                saved[c] = sub < ns ? top[sub] : NONE;
                rec[c] = saved[c] == NONE ? 0 : rec[saved[c]] + 1;
                if (sub < ns)
                    top[sub] = c;
                stk[sp] = c;
                cur[sp] = first[c];
                sp++;
            } else {
                if (nd[node].parent != NONE) { /* (a root has no frame) */
                    uint32_t sub = f->frames[nd[node].item].sub;
                    if (sub < ns)
                        top[sub] = saved[node];
                }
                sp--;
            }
        }
    }
    PB_FREE_ALL(first, kids, stk, saved, top, cur);
    *rec_out = rec;
    *eff_out = eff;
    return PB_OK;
}

/* the SUB_CALLERS edges of every node: see fold_samples.h */
static pb_status build_edges(pb_fold *f, uint32_t root_sub)
{
    const pb_mnode *nd = f->nodes.n;
    size_t i, nn = f->nodes.len;
    uint64_t *total = f->fin_total = (uint64_t *)malloc((nn ? nn : 1) * sizeof *total);
    if (!total)
        return OOM(f);
    uint32_t *rec, *eff;
    pb_status st;
    /* inclusive weight per node: children were created after their parents */
    pb_mtrie_totals(&f->nodes, f->self_w, total);
    if ((st = node_depths(f, root_sub, &rec, &eff)) != PB_OK)
        return st;
    for (i = 0; i < nn; i++) {
        const pb_mnode *n = &nd[i];
        uint32_t callee, caller, file, line, r = 0, ei;
        pb_medge *e;
        if (n->parent == NONE)
            continue;
        callee = f->frames[n->item].sub;
        /* Frames of the root sub itself (a Perl sampler's main and eval
         * frames are main::RUNTIME) are not calls, as in NYTProf: no edge into them,
         * and a sub called from one is called by the nearest enclosing real
         * sub (or the root), at the frame's own file and line. */
        if (callee == root_sub)
            continue;
        if (nd[n->parent].parent == NONE) {
            const pb_msub *s = &f->m.subs[callee];
            caller = NONE;
            file = s->file;
            line = pb_model_sub_first(s);
        } else {
            const f_frame *pf = &f->frames[nd[n->parent].item];
            uint32_t q = eff[n->parent];
            caller = nd[q].parent == NONE ? NONE : f->frames[nd[q].item].sub;
            file = pf->file;
            line = pf->line;
        }
        r = rec[i];
        /* edges are per thread in order of first sample */
        if (pb_model_edge(&f->m, f->threads[f->nthread[i]].order, caller, file, line, callee, &ei) < 0) {
            free(rec);
            free(eff);
            return OOM(f);
        }
        e = &f->m.edges[ei];
        e->count += f->calls[i];
        e->excl += f->self_w[i];
        if (r == 0)
            e->incl += total[i];
        else
            e->reci += total[i];
        if (r > e->rec_depth)
            e->rec_depth = r;
    }
    free(rec);
    free(eff);
    return PB_OK;
}

/* a started thread into the run's totals: its sampled ticks, the first
 * timestamp and the last end of any thread */
static void thread_totals(const f_thread *t, uint64_t *sampled, uint64_t *first, uint64_t *last)
{
    *sampled += t->sampled;
    if (t->first_ts < *first)
        *first = t->first_ts;
    if (t->end_ts > *last)
        *last = t->end_ts;
}

/* Sampled input: what the spans say (the sampled total) and what the
 * clock said (the run's wall-clock length), both in seconds. */
static pb_status span_attributes(pb_fold *f)
{
    char buf[40];
    size_t i;
    uint64_t sampled = 0, first = UINT64_MAX, last = 0;
    double tps = (double)f->cfg.ticks_per_sec;
    pb_status st;
    for (i = 0; i < f->nthreads; i++) {
        const f_thread *t = &f->threads[i];
        if (!t->started)
            continue;
        thread_totals(t, &sampled, &first, &last);
    }
    st = fold_emit_attr(f, "sampled_time_sec", pb_str_c(pb_fmt_double(buf, sizeof buf, (double)sampled / tps)));
    if (st != PB_OK || !f->have_ts || last <= first)
        return st;
    return fold_emit_attr(f, "run_wall_clock_sec", pb_str_c(pb_fmt_double(buf, sizeof buf, (double)(last - first) / tps)));
}

/* Each thread's PID_END time (f->fin_end, by order of first sample) and
 * ATTRIBUTE cumulative_overhead_ticks, so that nytprofhtml's header "for X
 * (of Y)" reads X = profiler_active = the sampled time (all threads'
 * samples x interval) and Y = profiler_duration = the run's length where
 * the source records it (ATTRIBUTE profile_duration_sec: a stats
 * trailer, a recorded duration, or end time - start time; else, for
 * samples with timestamps, the first to the last), else the sampled time
 * too (also when the threads' sampled time exceeds the run's length by
 * more than NYTProf's leeway, see below).  NYTProf's reader adds up PID_END
 * minus the last PID_START it read
 * (ours all come first, in order of first sample) as doubles in seconds:
 * that sum is profiler_duration; profiler_active is it minus
 * cumulative_overhead_ticks / ticks_per_sec (negative when threads sampled
 * in parallel hold a little more time than the run lasted). */
/* Over 80 lines, kept whole: the run's duration rules (sampled spans, run lengths, overhead) must
 * be applied in this order over the same threads. */
static pb_status pid_ends(pb_fold *f, const uint32_t *by_order)
{
    double tps = (double)f->cfg.ticks_per_sec, s0, dur = 0, act;
    uint64_t last_start, sampled = 0, run = 0, cum = 0, placed = 0, first = UINT64_MAX, last = 0, exact = 0;
    int64_t ov = 0;
    uint32_t r;
    char val[32];
    last_start = f->started_threads && by_order[f->started_threads - 1] != NONE
                     ? f->threads[by_order[f->started_threads - 1]].first_ts
                     : 0;
    s0 = (double)last_start / tps;
    for (r = 0; r < f->started_threads; r++) {
        const f_thread *t = by_order[r] != NONE ? &f->threads[by_order[r]] : NULL;
        if (!t)
            continue;
        thread_totals(t, &sampled, &first, &last);
    }
    if (f->cfg.sampled_spans && !f->cfg.no_run_length && sampled) {
        if (f->facts.duration_ns)
            run = (uint64_t)((double)f->facts.duration_ns * tps / 1e9 + 0.5);
        else if (f->have_ts && last > first)
            run = last - first;
        /* NYTProf's reader warns when the statements' time exceeds
         * profiler_duration by more than 10% ("The sum of the statement
         * timings is ..."): threads sampled in parallel hold more time than
         * the run lasted, and then Y stays the sampled time (the run's
         * length is still ATTRIBUTE profile_duration_sec / run_wall_clock_sec) */
        if ((double)sampled > (double)run * 1.09)
            run = 0;
    }
    for (r = 0; r < f->started_threads; r++) {
        const f_thread *t = by_order[r] != NONE ? &f->threads[by_order[r]] : NULL;
        uint64_t end;
        double e;
        if (!t) {
            f->fin_end[r] = 0;
            continue;
        }
        end = t->end_ts > t->first_ts ? t->end_ts : t->first_ts + 1;
        if (f->cfg.sampled_spans) {
            /* the span is the thread's share of the run (or its sampled
             * time), so the spans add up to the run's length */
            uint64_t span = t->sampled;
            if (run) {
                cum += t->sampled;
                span = (uint64_t)((double)run * ((double)cum / (double)sampled) + 0.5) - placed;
                placed += span;
            }
            end = last_start + span;
        } else if (t->first_ts + t->sampled > end) {
            end = t->first_ts + t->sampled;
        }
        e = (double)end / tps;
        if (f->cfg.sampled_spans) {
            /* NYTProf sums the spans in seconds, as doubles: each end is
             * raised by a few ulps until the running double sum is not below
             * the exact one */
            int k;
            exact += end - last_start;
            for (k = 0; k < 64 && (dur + (e - s0)) * tps < (double)exact; k++)
                e = next_up(e);
            dur += e - s0;
        }
        f->fin_end[r] = e;
    }
    if (f->cfg.sampled_spans && run) {
        /* nytprofhtml hands flamegraph.pl profiler_active x ticks_per_sec as
         * --total, which warns (and ignores it) when it falls short of the
         * stacks' exact sum: the overhead is the largest that leaves
         * profiler_active at least the sampled time, in the reader's own
         * double arithmetic */
        double want = dur * tps - (double)sampled;
        ov = want >= 9.2e18 ? INT64_MAX : want <= -9.2e18 ? -INT64_MAX : (int64_t)want;
        for (r = 0; r < 64; r++) {
            act = dur - (double)ov / tps;
            if (act * tps >= (double)sampled)
                break;
            ov--;
        }
    }
    snprintf(val, sizeof val, "%lld", (long long)ov);
    return fold_emit_attr(f, "cumulative_overhead_ticks", pb_str_c(val));
}

/* the activations and weights counted per stack (ss_sample) onto its nodes, once */
static void calls_flush(pb_fold *f)
{
    size_t i = 0;
    uint32_t j;
    pb_stack_head *h;
    while ((h = pb_stack_table_next(&f->stacks, &i)) != NULL) {
        const uint32_t *pp = pb_stack_table_more(h);
        uint64_t n = stack_hits(h, 0) + h->val;
        for (j = 0; j < h->depth; j++)
            f->calls[pp[j]] += n;
        if (h->depth)
            f->self_w[pp[h->depth - 1]] += h->sum;
        stack_hits(h, -1);
        h->sum = 0;
        h->val = 0;
    }
}

/* Over 80 lines, kept whole: the fold's closing sequence: attributes, thread order, PID_ENDs, call
 * events, SUB_INFOs, edges; the order is the chunk stream's, read top to bottom. */
static pb_status ss_finish(pb_sample_sink *self)
{
    pb_fold *f = (pb_fold *)self->ctx;
    pb_status st = PB_OK;
    pb_chunk c;
    uint32_t *by_order, r;
    size_t i;
    const char *root = f->cfg.root_sub ? f->cfg.root_sub : "main::RUNTIME";
    uint32_t root_sub;
    pb_mtime tm;
    tm.mul = (double)f->cfg.ticks_per_weight / (double)f->cfg.ticks_per_sec;
    tm.div = 1;
    tm.excl_signed = 0;
    f->m.root = pb_str_c(root);
    calls_flush(f);
    if ((st = fold_header(f)) != PB_OK)
        return st;
    /* weights that are not time (bytes, objects): what they are, for info */
    if (f->other_unit[0] && !f->weight_ns && (st = fold_emit_attr(f, "sample_weight_other_unit", pb_str_c(f->other_unit))) != PB_OK)
        return st;
    if (f->cfg.sampled_spans && (st = span_attributes(f)) != PB_OK)
        return st;
    /* thread index by order of first sample (linear in threads) */
    by_order = f->fin_byorder = (uint32_t *)malloc((f->started_threads ? f->started_threads : 1) * sizeof *by_order);
    f->fin_end = (double *)malloc((f->started_threads ? f->started_threads : 1) * sizeof *f->fin_end);
    if (!by_order || !f->fin_end)
        return OOM(f);
    for (i = 0; i < f->started_threads; i++)
        by_order[i] = NONE;
    for (i = 0; i < f->nthreads; i++)
        if (f->threads[i].started && f->threads[i].order < f->started_threads)
            by_order[f->threads[i].order] = (uint32_t)i;
    if ((st = pid_ends(f, by_order)) != PB_OK)
        goto done;
    if ((st = fold_call_events(f, by_order)) != PB_OK)
        goto done;
    /* SUB_INFO: the synthetic root, unless a frame already is that sub */
    for (i = 0; i < f->m.nsubs; i++) {
        pb_str nm = pb_model_sub_name(&f->m, (uint32_t)i);
        if (f->m.subs[i].used && nm.len == strlen(root) && memcmp(nm.ptr, root, nm.len) == 0)
            break;
    }
    root_sub = i < f->m.nsubs ? (uint32_t)i : NONE;
    if (f->m.nfids && root_sub == NONE) {
        /* in the program's file, as NYTProf puts main::RUNTIME in the
         * script (ATTRIBUTE application, when a frame is of that file), else
         * in fid 1 */
        uint32_t root_fid = 0;
        for (i = 0; f->app && i < f->m.nfiles; i++) {
            const char *nm = pb_strtab_ptr(&f->m.str, f->m.files[i].name), *b = strrchr(nm, '/');
            if (!f->m.files[i].fid || f->m.files[i].variant != 0)
                continue;
            if (!strcmp(nm, f->app)) {
                root_fid = f->m.files[i].fid; /* the program's path */
                break;
            }
            if (!root_fid && !strchr(f->app, '/') && b && !strcmp(b + 1, f->app))
                root_fid = f->m.files[i].fid; /* its base name (formats that give one) */
        }
        if (!root_fid)
            root_fid = 1;
        pb_chunk_sub_info(&c, root_fid, 1, 1, pb_str_c(root));
        if ((st = fold_emit(f, &c)) != PB_OK)
            goto done;
    }
    if ((st = graph_finish(f, by_order)) != PB_OK || (st = pb_model_emit_sub_infos(&f->m, 1)) != PB_OK ||
        (st = build_edges(f, root_sub)) != PB_OK)
        goto done;
    /* per thread (in order of first sample): its edges, then PID_END */
    for (r = 0; r < f->started_threads; r++) {
        const f_thread *t = by_order[r] != NONE ? &f->threads[by_order[r]] : NULL;
        if ((st = pb_model_emit_sub_callers(&f->m, r, f->started_threads, &tm)) != PB_OK)
            goto done;
        if (t) {
            char key[48], val[24];
            snprintf(key, sizeof key, f->weight_ns ? "thread_%u_ns" : "thread_%u_samples", t->pid);
            snprintf(val, sizeof val, "%llu", (unsigned long long)t->weight);
            if ((st = fold_emit_attr(f, key, pb_str_c(val))) != PB_OK)
                goto done;
            pb_chunk_pid_end(&c, t->pid, f->fin_end[r]);
            if ((st = fold_emit(f, &c)) != PB_OK)
                goto done;
        }
    }
done:
    free(f->fin_total);
    free(f->fin_byorder);
    free(f->fin_end);
    f->fin_end = NULL;
    pb_mwalk_free(&f->walk);
    pb_callev_free(&f->cev);
    f->fin_total = NULL;
    f->fin_byorder = NULL;
    return st;
}

void pb_fold_free(pb_fold *f)
{
    size_t i;
    if (!f)
        return;
    for (i = 0; i < f->nthreads; i++) {
        free(f->threads[i].label);
        pb_stack_cursor_free(&f->threads[i].cur);
    }
    pb_stack_table_free(&f->stacks);
    PB_FREE_ALL(f->frames, f->self_w, f->calls, f->nthread, f->threads, f->namebuf, f->filebuf, f->fin_total,
                f->fin_byorder, f->app, f->fin_end, f->gf, f->ecc, f->sid_at);
    pb_model_free_fold(&f->m, &f->nodes, &f->walk, &f->cev);
    PB_INDEX_FREE_ALL(&f->tframes, &f->tthreads, &f->tgf);
    pb_sink_undefer(f->out, f);
    free(f);
}

static void fold_cleanup(void *p) { pb_fold_free((pb_fold *)p); }

static const pb_sample_sink sink_calls = {.attribute = ss_attribute, .frame = ss_frame, .thread = ss_thread,
    .sample = ss_sample, .sample_stack_id = ss_sample_stack_id, .note = ss_note, .finish = ss_finish, .graph_func = ss_graph_func,
    .graph_edge = ss_graph_edge, .graph_line = ss_graph_line};

pb_fold *pb_fold_new(const pb_fold_config *cfg, pb_sink *out, pb_error *err)
{
    pb_fold *f;
    if (cfg->ticks_per_weight > (uint64_t)INT32_MAX) {
        pb_fail(err, PB_ERR_UNSUPPORTED, 0, "sample interval of %llu ticks does not fit NYTProf's 32-bit tick counts",
                (unsigned long long)cfg->ticks_per_weight);
        return NULL;
    }
    if (!(f = (pb_fold *)pb_new_zeroed(sizeof *f, err)))
        return NULL;
    f->cfg = *cfg;
    f->cfg.ticks_per_sec = cfg->ticks_per_sec ? cfg->ticks_per_sec : 1000000;
    f->out = out;
    f->err = err;
    f->last_ti = NONE;
    pb_model_init(&f->m, out, err, "out of memory while folding samples");
    pb_sample_sink_init(&f->ss, &sink_calls, f, err, out ? out->cleanups : NULL);
    f->ss.row = cfg->row;
    if (cfg->sums_counted)
        f->ss.sample_sum = ss_sample_sum;
    pb_sink_defer(out, fold_cleanup, f);
    return f;
}

pb_sample_sink *pb_fold_sample_sink(pb_fold *f) { return &f->ss; }

uint32_t pb_fid_flags_absolute(void *ctx, pb_str file)
{
    (void)ctx;
    if (file.len && file.ptr[0] == '/')
        return PB_FID_VIA_STMT | PB_FID_VIA_SUB;
    return PB_FID_IS_FAKE | PB_FID_VIA_SUB;
}

uint32_t pb_fid_flags_angled(void *ctx, pb_str file)
{
    (void)ctx;
    if (file.len >= 2 && file.ptr[0] == '<' && file.ptr[file.len - 1] == '>')
        return PB_FID_IS_FAKE | PB_FID_VIA_SUB;
    return PB_FID_VIA_STMT | PB_FID_VIA_SUB;
}

/* ---- a sampling decoder's entry points ---------------------------------- */
typedef struct {
    const pb_fold_decoder *dec;
    pb_options opt;
    union { void *p; uint64_t u; long double d; } state[]; /* dec->size bytes */
} decode_job;

static void decode_job_free(void *p)
{
    decode_job *j = (decode_job *)p;
    j->dec->free(j->state);
    free(j);
}

static decode_job *decode_job_new(const pb_fold_decoder *dec, pb_source *src, const pb_options *opt,
                                  pb_sink *sink, pb_error *err)
{
    decode_job *j = (decode_job *)malloc(sizeof *j + dec->size);
    if (!j) {
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    j->dec = dec;
    pb_options_copy(&j->opt, opt);
    memset(j->state, 0, dec->size);
    dec->init(j->state, src, &j->opt, sink, err);
    return j;
}

/* ---- the statement budget of a decoder's samples (pb_fold_config's
 * split, pb_split_rule): a filter in front of the fold or the stack target,
 * so that a conversion stops at the same sample whatever it writes */
typedef struct {
    pb_sample_sink ss;
    pb_split_budget budget;
    const pb_fold_decoder *dec;
    void *state;
    pb_source *src;
    uint64_t tpw;
} split_budget;

/* PB_OK, or the error when the sample splits into more TIME_LINEs than are left */
static pb_status sb_charge(pb_sample_sink *self, uint32_t depth, uint64_t weight)
{
    split_budget *b = (split_budget *)self->ctx;
    const pb_split_rule *r = &b->dec->cfg.split;
    b->budget.records++;
    if (!depth && r->empty_free)
        return PB_OK;
    if ((weight >> 31) || (b->tpw >> 31) || weight * b->tpw > (uint64_t)INT32_MAX) { /* it splits */
        int summed = 0;
        uint64_t off = r->no_offset ? 0 : r->sample_at ? r->sample_at(b->state, &summed)
                       : b->src ? pb_src_offset(b->src) : 0;
        pb_status st;
        if (!summed && (st = pb_model_charge_split(&b->budget, weight, b->tpw, off, self->err)) != PB_OK)
            return st;
    }
    return PB_OK;
}
static pb_status sb_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    pb_status st = sb_charge(self, depth, weight);
    return st != PB_OK ? st : self->next->sample(self->next, key, ids, depth, weight, ts);
}
static pb_status sb_sample_stack_id(pb_sample_sink *self, uint64_t key, uint32_t sid, const uint32_t *ids,
                                    uint32_t depth, uint64_t weight, uint64_t ts)
{
    pb_status st = sb_charge(self, depth, weight);
    return st != PB_OK ? st : self->next->sample_stack_id(self->next, key, sid, ids, depth, weight, ts);
}
/* (a summed sample's parts split into one TIME_LINE each: sample_at says it is summed) */
static pb_status sb_sample_sum(pb_sample_sink *self, uint64_t n) { return self->next->sample_sum(self->next, n); }
static pb_status sb_sample_ticks(pb_sample_sink *self, uint64_t t) { return self->next->sample_ticks(self->next, t); }
static pb_status sb_tick_joins(pb_sample_sink *self) { return self->next->tick_joins(self->next); }
static pb_status sb_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    return self->next->attribute ? self->next->attribute(self->next, key, v) : PB_OK;
}
static const pb_sample_sink split_budget_calls = {.attribute = sb_attribute, .frame = pb_sample_pass_frame,
    .thread = pb_sample_pass_thread, .sample = sb_sample, .sample_stack_id = sb_sample_stack_id,
    .sample_sum = sb_sample_sum, .sample_ticks = sb_sample_ticks, .tick_joins = sb_tick_joins, .note = pb_sample_pass_note,
    .finish = pb_sample_pass_finish, .sample_tags = pb_sample_pass_sample_tags,
    .thread_root = pb_sample_pass_thread_root, .columns = pb_sample_pass_columns,
    .mapping = pb_sample_pass_mapping, .sample_values = pb_sample_pass_sample_values,
    .graph_func = pb_sample_pass_graph_func, .graph_edge = pb_sample_pass_graph_edge,
    .graph_line = pb_sample_pass_graph_line};

/* the budget (decode_begin) */
static void split_budget_set(split_budget *b, const pb_fold_decoder *dec, decode_job *j, pb_source *src)
{
    b->dec = dec;
    b->state = j->state;
    b->src = src; /* NULL: a run of files, which the decoder opens itself */
    memset(&b->budget, 0, sizeof b->budget);
    b->budget.words = dec->cfg.split.words;
    b->budget.no_offset = dec->cfg.split.no_offset;
    if (dec->cfg.split.whole_max && j->opt.max_statements)
        pb_budget_set(&b->budget.budget, j->opt.max_statements);
    else if (!dec->cfg.split.whole_max)
        pb_budget_set(&b->budget.budget, pb_statement_budget(&j->opt, src ? pb_src_size(src) : UINT64_MAX));
}

/* next, or (split.words) the filter in front of it; tpw: the fold's, after
 * prepare; to_chunks: next folds into chunks (split.chunks_only) */
static pb_sample_sink *split_budget_in_front(split_budget *b, pb_sample_sink *next, uint64_t tpw, int to_chunks,
                                             pb_error *err)
{
    pb_sample_sink *ss = &b->ss;
    if (!b->dec->cfg.split.words || (b->dec->cfg.split.chunks_only && !to_chunks))
        return next;
    b->tpw = tpw;
    pb_sample_sink_init(ss, &split_budget_calls, b, err, next->cleanups);
    ss->next = next;
    ss->row = next->row;
    ss->sums_stacks = next->sums_stacks;
    ss->each_tick = next->each_tick;
    ss->keeps_cut_stacks = next->keeps_cut_stacks;
    /* the optional calls only where they are wanted (as pb_thread_limit_init) */
    ss->span = next->span ? ss->span : NULL;
    ss->sample_tags = next->sample_tags ? ss->sample_tags : NULL;
    ss->thread_root = next->thread_root ? ss->thread_root : NULL;
    ss->sample_stack_id = next->sample_stack_id ? ss->sample_stack_id : NULL;
    ss->sample_sum = next->sample_sum ? ss->sample_sum : NULL;
    ss->sample_ticks = next->sample_ticks ? ss->sample_ticks : NULL;
    ss->tick_joins = next->tick_joins ? ss->tick_joins : NULL;
    if (!next->sample_values)
        ss->columns = NULL, ss->mapping = NULL, ss->sample_values = NULL;
    if (!next->graph_func)
        ss->graph_func = NULL, ss->graph_edge = NULL, ss->graph_line = NULL;
    return ss;
}

/* A span decoder's chunks when a sample sink is the target: its ATTRIBUTEs
 * (source_format, times, clock) go to out, every chunk to tee (convert
 * --report's loss counter) when there is one */
typedef struct {
    pb_sink sink;
    pb_sample_sink *out;
    pb_sink *tee;
    unsigned char wants[PB_TAG_COUNT];
} span_chunks;

static int span_chunk(pb_sink *self, const pb_chunk *c)
{
    span_chunks *sc = (span_chunks *)self->ctx;
    char key[128];
    if (sc->tee && pb_emit(sc->tee, c))
        return 1;
    if (!sc->out || c->tag != PB_T_ATTRIBUTE || c->s[0].len >= sizeof key)
        return 0;
    memcpy(key, c->s[0].ptr, c->s[0].len);
    key[c->s[0].len] = '\0';
    return sc->out->attribute(sc->out, key, c->s[1]) != PB_OK;
}

static void span_chunks_init(span_chunks *sc, pb_sample_sink *out, pb_sink *tee)
{
    int t;
    memset(sc, 0, sizeof *sc);
    sc->out = out;
    sc->tee = tee;
    for (t = 0; t < PB_TAG_COUNT; t++)
        sc->wants[t] = (out && t == PB_T_ATTRIBUTE) || (tee && (!tee->wants || tee->wants[t]));
    sc->sink.chunk = span_chunk;
    sc->sink.ctx = sc;
    sc->sink.wants = sc->wants;
    sc->sink.cleanups = out ? out->cleanups : tee->cleanups;
}

/* a span decoder's decode (cfg.run_spans): chunks to sink, samples (if any) to out */
static pb_status span_decode(decode_job *j, const pb_fold_config *cfg, pb_sink *sink, pb_sample_sink *out,
                             pb_error *err)
{
    pb_status st = cfg->run_spans(j->state, sink, out);
    if (st == PB_ERR_ABORT && err->status == PB_OK)
        err->status = PB_ERR_ABORT;
    return st;
}

/* the decoder's job, its budget b set (before prepare, which may start a
 * view over src); NULL after the error, or when this build cannot run the
 * decoder (cfg.missing_library).  sink: the chunk sink (NULL: samples) */
static decode_job *decode_begin(const pb_fold_decoder *dec, pb_source *src, const pb_options *opt, pb_sink *sink,
                                split_budget *b, pb_error *err)
{
    decode_job *j;
    if (dec->cfg.missing_library) {
        pb_fail(err, PB_ERR_UNSUPPORTED, 0, "this build has no %s (install lib%s-dev and rebuild Devel::ProfileBridge)",
                dec->cfg.missing_library, dec->cfg.missing_library);
        return NULL;
    }
    if ((j = decode_job_new(dec, src, opt, sink, err)) != NULL)
        split_budget_set(b, dec, j, src);
    return j;
}

/* the decoder's run into next, through the budget's filter where its rule
 * wants one (to_chunks: next folds into chunks) */
static pb_status decode_run(decode_job *j, split_budget *b, pb_sample_sink *next, const pb_fold_config *cfg,
                            int to_chunks, pb_error *err)
{
    return j->dec->run(j->state, split_budget_in_front(b, next, cfg->ticks_per_weight, to_chunks, err));
}

pb_status pb_fold_decode(pb_source *src, const pb_options *opt, pb_sink *sink, const pb_fold_decoder *dec,
                         pb_error *err)
{
    pb_fold_config cfg = dec->cfg;
    pb_fold *fold = NULL;
    pb_status st = PB_OK;
    split_budget b;
    decode_job *j = decode_begin(dec, src, opt, sink, &b, err);
    if (!j)
        return err->status;
    pb_sink_defer(sink, decode_job_free, j);
    cfg.max_threads = j->opt.max_threads;
    cfg.row = sink->row;
    /* a sink that only counts the chunks whose contents the order of the
     * samples sets (TIME_LINE, SUB_CALLERS' call counts): summed stacks
     * make the same counts (sample_sum) */
    cfg.sums_counted = sink->skipped && !pb_sink_wants(sink, PB_T_TIME_LINE) && !pb_sink_wants(sink, PB_T_SUB_CALLERS);
    if (dec->prepare)
        st = dec->prepare(j->state, &cfg);
    if (st == PB_OK && cfg.run_spans)
        st = span_decode(j, &cfg, sink, NULL, err);
    else if (st == PB_OK && !(fold = pb_fold_new(&cfg, sink, err)))
        st = err->status;
    else if (st == PB_OK)
        st = decode_run(j, &b, pb_fold_sample_sink(fold), &cfg, 1, err);
    pb_fold_free(fold);
    pb_sink_undefer(sink, j);
    decode_job_free(j);
    return st;
}

pb_status pb_sample_decode(pb_source *src, const pb_options *opt, pb_sample_sink *out, const pb_fold_decoder *dec,
                           pb_error *err)
{
    pb_fold_config cfg = dec->cfg;
    pb_status st = PB_OK;
    split_budget b;
    decode_job *j = decode_begin(dec, src, opt, NULL, &b, err);
    if (!j)
        return err->status;
    cfg.row = out->row;
    cfg.sums_stacks = out->sums_stacks && !out->sample_values;
    if (dec->prepare)
        st = dec->prepare(j->state, &cfg);
    if (st == PB_OK && cfg.run_spans && (!dec->run || j->opt.chunk_tee)) {
        /* a span decoder: its stacks are its span fold's (no run), or the
         * loss counter takes the chunks of its span fold, in this decode */
        span_chunks sc;
        pb_sink *tee = j->opt.chunk_tee;
        if (tee)
            tee->row = cfg.row;
        span_chunks_init(&sc, dec->run ? NULL : out, tee);
        st = span_decode(j, &cfg, &sc.sink, out, err);
        if (tee && j->opt.chunk_teed)
            *j->opt.chunk_teed = 1;
    } else if (st == PB_OK && j->opt.chunk_tee && !out->graph_func && (!cfg.no_sample_tee || (cfg.fold_front && src))) {
        /* the samples folded into chunks as well, in this decode (convert
         * --report's loss counter: sample_tee.h; a timeline's each_tick
         * too, its runs joined for the fold); not for a call graph, nor
         * when the tee gave up (timestamps in another unit than the fold's
         * ticks, a timeline's spans) or the decoder's chunks
         * are more than its samples (no_sample_tee): those count in a
         * decode of their own (the caller sees chunk_teed unset) */
        pb_sample_tee tee;
        pb_fold *fold;
        pb_sample_sink *fs = NULL;
        cfg.max_threads = j->opt.max_threads;
        j->opt.chunk_tee->row = cfg.row;
        if (!(fold = pb_fold_new(&cfg, j->opt.chunk_tee, err)))
            st = err->status ? err->status : PB_ERR_LIMIT;
        else if (!(fs = cfg.no_sample_tee ? cfg.fold_front(j->state, pb_fold_sample_sink(fold), j->opt.chunk_tee)
                                          : pb_fold_sample_sink(fold))) /* (the decoder's own front, or none) */
            st = decode_run(j, &b, out, &cfg, 0, err);
        if (fs) {
            pb_sample_tee_init(&tee, out, fs, cfg.ticks_per_sec, err);
            tee.defers |= cfg.no_sample_tee; /* (the writer's errors first, as without the tee) */
            st = decode_run(j, &b, &tee.ss, &cfg, 1, err);
            if (j->opt.chunk_teed && !tee.gave_up)
                *j->opt.chunk_teed = 1;
            pb_sample_tee_free(&tee);
        }
        pb_fold_free(fold);
    } else if (st == PB_OK)
        st = decode_run(j, &b, out, &cfg, 0, err);
    decode_job_free(j);
    return st;
}
