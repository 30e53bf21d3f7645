/* read_v8.c - V8 .cpuprofile JSON (node --cpu-prof, Chrome DevTools' "Save
 * profile", Deno, VS Code): a stack decoder feeding a pb_sample_sink, and
 * the chunk decoder that folds it (fold_samples.h), as every sampled format's.
 *
 * The file is one JSON object (the DevTools protocol's Profiler.Profile):
 *   nodes       [{id, callFrame {functionName, url, lineNumber, columnNumber,
 *                 scriptId}, hitCount, children [ids], positionTicks}]
 *               (a node may name its "parent" id instead of children)
 *   samples     [node id of each sample's innermost frame]
 *   timeDeltas  [µs from the previous sample (the first: from startTime)]
 *   startTime, endTime   µs (a monotonic clock)
 * Keys in any order.  A sample's stack is its node and the node's ancestors
 * (parent links from children); "(root)" is the tree's root, not a frame.
 *
 * Weights.  Sample i lasts from its timestamp (startTime + timeDeltas[0..i])
 * to the next sample's: timeDeltas[i + 1] µs, as the speedscope app's importer
 * (import/chrome.ts) gives it; a negative delta counts 0 (the speedscope app's
 * substitution).  The last sample, which the speedscope app gives 0, lasts to
 * endTime here (0 when endTime is before it), so the weights add up to
 * endTime less the first sample's time.  (DevTools' bottom-up and top-down
 * trees give every hit the mean interval instead; not followed.)  Weights go to the sink in ns
 * (ATTRIBUTE sample_weight_unit=ns, as merged profiles); zero-weight samples
 * stand for no time and are not reported.
 *
 * Frames.  functionName, "(anonymous)" when empty (as DevTools and
 * the speedscope app show it); "(program)", "(idle)", "(garbage collector)" and
 * functions without a url are synthetic frames under their own names.
 * The line is lineNumber + 1 (the JSON's are 0-based); the column has no
 * place in the model (losses() counts the frames that had one).  A frame's
 * package (nytprof.out's sub name package::name) is the url's file name
 * without its extension ("file:///a/fib.js" -> fib), a node: url's path
 * ("node:internal/timers" -> node::internal::timers).
 *
 * Bounded memory.  The nodes are kept (one per unique stack node: the
 * profile's frames); samples and timeDeltas are two parallel arrays that
 * can hold 100 MB between them and are never held.
 *
 * The fast path (a file or a memory block: input that can be read again).
 * Pass 1 feeds yajl the document except the two arrays: a scanner of the
 * bytes fed (strings, nesting) finds the "samples" and "timeDeltas" keys of
 * the top object, and each array is read by json_ints.h's strict integer
 * reader instead (yajl is handed "[]" in its place), which counts it and
 * notes what pass 2 could trip on: the node ids sampled (a bitmap), the
 * range of the running timestamp, the largest delta.  After pass 1 those are
 * checked against the tree (every id a node, every sampled stack acyclic and
 * within max_stack_depth, every time within 2^52 µs); pass 2 then reads the
 * two arrays in lockstep with two more integer readers and cannot fail but
 * for a file that changed.  A consumer that only sums stacks (the sink's
 * sums_stacks, samples.h) gets each node's stack once, with its weight
 * summed per node, at the end, in the order of the nodes' first samples;
 * for it pass 1 only skims each array to its first ']' (memchr) and pass 2
 * makes every check (the strict form, each array ending at that ']', the
 * ids, the times, the stacks): the sink hears nothing before both passes
 * are through, so anything amiss can still take the general path.  Any
 * other consumer (the fold, a timeline) gets every sample in order with its
 * time, the stacks built once per node (a bounded cache), and the node as
 * the stack's id where the sink takes one (sample_stack_id, samples.h: the
 * fold then never compares a repeated stack's frames).  Pass 1 seeks past
 * an array the integer reader read (the source does not read it again).  Anything the
 * fast path does not take - an array the strict reader does not accept (a
 * fraction, a number past 18 digits, the file cut inside it: its error is
 * yajl's), a sample that pass 2 would refuse, node ids from 2^22, times
 * from 2^52 µs or deltas from 2^40, an escaped key, a pipe - sends the whole
 * input through the path below from its first byte, so every error and
 * every output is that path's.
 *
 * The general path.  Pass 1 parses the whole
 * file once with yajl's push parser, keeping the nodes and startTime/endTime,
 * counting the two arrays and noting where each starts (the byte after its
 * key, from the key pointer yajl hands over when the key lies in the block
 * fed; else 0: the cursor then parses the document from the start and takes
 * only that array).  Pass 2 opens two cursors on the same input
 * (pb_src_cursor, source.h: pread on the file, or the memory block), each
 * a yajl parser over its own array;
 * they advance in lockstep: a cursor is fed one 64 KB block only when its
 * queue of parsed numbers is empty, so a queue never holds more than one
 * block's numbers (32 K), and pairs are taken from the heads of both.  An
 * input read twice must be seekable: a pipe is refused (save it first).
 *
 * yajl (libyajl-dev) is optional at build time like zstd: without it
 * (PB_NO_YAJL) the sniffer still names the format and the decoders fail
 * "unsupported: this build has no yajl".
 *
 * Names here: v8r = this reader's state (V8 reader), v8p = one JSON parser with its place in the
 * document (V8 parse).
 */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "codecs.h"
#include "fold_samples.h"
#include "json_feed.h"
#include "json_ints.h"
#include "options.h"
#include "reader.h"
#include "samples.h"
#include "util.h"

#if !PB_HAVE_YAJL
PB_JSON_DECODER_WITHOUT_YAJL(pb_v8_decoder, "v8");
#else

#define V8_NONE UINT32_MAX
#define V8_SEEN_IDS (1u << 22)   /* the fast path: sampled node ids below this (a 512 KB bitmap) */
#define V8_TIME_MAX (INT64_C(1) << 52) /* the fast path: µs times and sums below this (ns below 2^62) */
#define V8_DELTA_MAX (INT64_C(1) << 40)
#define V8_STACK_CACHE (1u << 20) /* frame ids of the stacks kept per node (4 MB) */

/* what a key names, in the map it is in */
enum { K_OTHER, K_NODES, K_SAMPLES, K_DELTAS, K_START, K_END, K_ID, K_CALLFRAME, K_CHILDREN, K_PARENT,
       K_POSTICKS, K_FNAME, K_URL, K_LINE, K_COL };
/* what a container is (C_SKIP 0: json_feed.h's context of a level not kept) */
enum { C_SKIP, C_TOP, C_NODES, C_NODE, C_CALLFRAME, C_CHILDREN, C_SAMPLES, C_DELTAS, C_POSTICKS, C_N };
/* the keys of each context's objects */
static const pb_json_key top_keys[] = {{"nodes", K_NODES}, {"samples", K_SAMPLES}, {"timeDeltas", K_DELTAS},
    {"startTime", K_START}, {"endTime", K_END}, {NULL, 0}};
static const pb_json_key node_keys[] = {{"id", K_ID}, {"callFrame", K_CALLFRAME}, {"children", K_CHILDREN},
    {"parent", K_PARENT}, {"positionTicks", K_POSTICKS}, {NULL, 0}};
static const pb_json_key callframe_keys[] = {{"functionName", K_FNAME}, {"url", K_URL}, {"lineNumber", K_LINE},
    {"columnNumber", K_COL}, {NULL, 0}};
static const pb_json_key *const ctx_keys[C_N] = {[C_TOP] = top_keys, [C_NODE] = node_keys,
    [C_CALLFRAME] = callframe_keys};
/* node kinds */
enum { N_FUNC, N_ROOT, N_SYNTH };

typedef struct {
    int64_t id;
    uint32_t parent; /* node index, V8_NONE */
    uint32_t frame;  /* sink frame id, V8_NONE until first used */
    size_t name_at, url_at;
    uint32_t name_len, url_len;
    int32_t line, col; /* 0-based as in the JSON, -1 none */
    unsigned char kind, have_id, have_frame;
    uint32_t stack_at, stack_len; /* its stack in the cache (stack_at V8_NONE: not there) */
    uint64_t w;        /* the fast path's sums: weight in µs, */
    int64_t t0;        /* and when its first sample began */
} v8_node;

typedef struct {
    uint32_t node;  /* index of the node that said it */
    int is_child;   /* 1: node's child is `other`; 0: node's parent is `other` */
    int64_t other;
    uint64_t off;
} v8_edge;

typedef struct v8r v8r;

/* one yajl parser with its place in the document */
typedef struct {
    pb_json_feed j;        /* the parser, its block, depth and complaint (j.done: a cursor's array ended) */
    v8r *r;
    int target;            /* pass 1: 0; a cursor: C_SAMPLES or C_DELTAS */
    int key;
    /* a cursor: numbers parsed, not yet paired (a ring would save nothing:
     * the queue is drained before it is refilled) */
    int64_t *q;
    size_t qn, qhead, qcap;
} v8p;

struct v8r {
    pb_json_io io;        /* its handles; io.ts_ns: timestamps in ns (the fold's ticks), else µs */
    pb_sample_sink *out;
    v8_node *nodes;
    size_t nnodes, cnodes;
    v8_edge *edges;
    size_t nedges, cedges;
    char *str;
    size_t nstr, cstr;
    pb_index ix;
    uint32_t *dense; /* node index by id, when the ids are small (dense_ids) */
    size_t ndense;
    int have_nodes, have_start, have_end;
    int64_t start_us, end_us;
    uint64_t nsamples, ndeltas;
    uint64_t paired;      /* pass 2: (sample, delta) pairs read, checked against pass 1's counts */
    struct stat st0;      /* the file before pass 1 (have_stat), compared after pass 2 */
    int have_stat;
    int have_samples, have_deltas;
    uint64_t samples_at, deltas_at; /* where each array's key ends (0: unknown) */
    uint64_t pos_ticks;   /* positionTicks entries (per-line hits): not carried */
    uint64_t col_frames;  /* nodes with a columnNumber: not carried */
    uint64_t synth_ns[3]; /* weight of samples whose innermost frame is (program), (idle), (garbage collector) */
    uint32_t *ids;
    size_t cids;
    char *pkg;
    size_t cpkg;
    uint64_t emitted;
    uint32_t last_node, last_depth; /* the stack in ids */
    /* the parsers: pass 1's, then the two cursors (here, not on the stack:
     * a consumer that never returns leaves them to v8_free) */
    v8p p1, cur[2];
    /* salvage (opt->salvage): a file cut short after its nodes, inside the
     * arrays: the samples both arrays still pair, then the cut as a warning */
    int nodes_closed, salvaging;
    pb_error lost;
    /* the fast path (see the top) */
    uint64_t arr_at[2];   /* where the '[' of samples (0) and timeDeltas (1) is */
    uint64_t arr_end[2];  /* skimmed: the byte after the first ']' after it */
    int skim, skim_open, skim_which; /* pass 1 only finds each array's end (sums) */
    int arr_fast[2];      /* read by the integer reader in pass 1 */
    uint64_t *seen;       /* node ids sampled, a bitmap of V8_SEEN_IDS */
    int big_ids, big_times;
    int64_t dsum, dmin, dmax; /* the running sum of timeDeltas, its least and largest */
    uint64_t dpos;        /* the sum of the positive deltas after the first (weights, µs) */
    uint32_t *pool;       /* the stacks of nodes, frame ids innermost first */
    size_t npool, cpool;
    uint32_t *order;      /* sums: the nodes in the order of their first samples */
    size_t norder, corder;
};

static const char *const synth_names[3] = { "(program)", "(idle)", "(garbage collector)" };

static pb_status v8_oom(v8r *r, uint64_t off) { return pb_fail(r->io.err, PB_ERR_LIMIT, off, "out of memory"); }

/* ---- pass 1 and the cursors: yajl callbacks ------------------------------- */
#define P(ctx) ((v8p *)(ctx))

/* a complaint from inside a callback: kept, and yajl told to stop */
static int v8_complain(v8p *p, pb_status st, const char *fmt, const char *a)
{
    if (!p->j.fail) {
        p->j.fail = st;
        snprintf(p->j.why, sizeof p->j.why, fmt, a);
    }
    return 0;
}

static int v8_cur_ctx(const v8p *p) { return pb_json_feed_ctx(&p->j); }

static const char *ctx_name(int c)
{
    switch (c) {
    case C_NODES: return "nodes";
    case C_SAMPLES: return "samples";
    case C_DELTAS: return "timeDeltas";
    case C_CHILDREN: return "a node's children";
    default: return "the profile";
    }
}

static int v8_map_key(void *ctx, const unsigned char *k, size_t n)
{
    v8p *p = P(ctx);
    int c = v8_cur_ctx(p);
    p->key = c > 0 && c < C_N ? pb_json_key_of(ctx_keys[c], k, n) : K_OTHER;
    if (c == C_TOP) {
        if (!p->target && (p->key == K_SAMPLES || p->key == K_DELTAS)) {
            v8r *r = p->r;
            uint64_t *at = p->key == K_SAMPLES ? &r->samples_at : &r->deltas_at;
            int *seen = p->key == K_SAMPLES ? &r->have_samples : &r->have_deltas;
            if (*seen)
                return v8_complain(p, PB_ERR_CORRUPT, "the profile has two \"%s\" keys", p->key == K_SAMPLES ? "samples" : "timeDeltas");
            /* the key's bytes in the block fed, then its closing quote: the
             * cursor starts after them */
            if (k >= p->j.chunk && k + n < p->j.chunk + p->j.chunk_len && k[n] == '"')
                *at = p->j.chunk_off + (uint64_t)(k - p->j.chunk) + n + 1;
        }
        if (!p->target && p->key == K_NODES && p->r->have_nodes)
            return v8_complain(p, PB_ERR_CORRUPT, "the profile has two \"%s\" keys", "nodes");
    }
    return 1;
}

/* the context a container opens (is_map: '{' else '['), or -1 when it is
 * the wrong kind of value for its place */
static int v8_open_ctx(v8p *p, int is_map, int *ok)
{
    int c = v8_cur_ctx(p), k = p->key;
    *ok = 1;
    if (p->j.depth == 0) {
        if (p->target && p->j.started == 2) {
            *ok = !is_map; /* a cursor started at its array */
            return p->target;
        }
        *ok = is_map;
        return C_TOP;
    }
    if (c == C_TOP && (k == K_NODES || k == K_SAMPLES || k == K_DELTAS)) {
        int want = k == K_NODES ? C_NODES : k == K_SAMPLES ? C_SAMPLES : C_DELTAS;
        *ok = !is_map;
        if (p->target)
            return want == p->target ? want : C_SKIP;
        return want;
    }
    if (c == C_SAMPLES || c == C_DELTAS || c == C_CHILDREN) {
        *ok = 0;
        return C_SKIP;
    }
    if (p->target)
        return C_SKIP;
    if (c == C_NODES) {
        *ok = is_map;
        return C_NODE;
    }
    if (c == C_NODE && k == K_CALLFRAME)
        return (*ok = is_map) ? C_CALLFRAME : C_SKIP;
    if (c == C_NODE && k == K_CHILDREN)
        return (*ok = !is_map) ? C_CHILDREN : C_SKIP;
    if (c == C_NODE && k == K_POSTICKS && !is_map)
        return C_POSTICKS;
    if (c == C_POSTICKS)
        p->r->pos_ticks++;
    return C_SKIP;
}

static int v8_new_node(v8p *p)
{
    v8r *r = p->r;
    v8_node *n;
    if (r->nnodes >= r->io.opt->max_frames)
        return v8_complain(p, PB_ERR_LIMIT, "more nodes than max_frames allows%s", "");
    if (pb_grow((void **)&r->nodes, &r->cnodes, r->nnodes + 1, sizeof *r->nodes) < 0)
        return v8_complain(p, PB_ERR_LIMIT, "out of memory%s", "");
    n = &r->nodes[r->nnodes++];
    memset(n, 0, sizeof *n);
    n->parent = V8_NONE;
    n->frame = V8_NONE;
    n->stack_at = V8_NONE;
    n->line = n->col = -1;
    return 1;
}

static int v8_open(void *ctx, int is_map)
{
    v8p *p = P(ctx);
    int ok, c = v8_open_ctx(p, is_map, &ok);
    if (!ok) {
        int pc = v8_cur_ctx(p);
        if (p->j.depth == 0)
            return v8_complain(p, PB_ERR_CORRUPT, "%s", "a .cpuprofile is a JSON object; this is an array");
        if (pc == C_SAMPLES || pc == C_DELTAS || pc == C_CHILDREN)
            return v8_complain(p, PB_ERR_CORRUPT, "an element of %s is not a number", ctx_name(pc));
        return v8_complain(p, PB_ERR_CORRUPT, "%s", pc == C_NODES ? "an element of nodes is not an object"
                                                 : is_map ? "an object where an array belongs (nodes, samples, "
                                                            "timeDeltas, children)"
                                                          : "an array where an object belongs (callFrame)");
    }
    if (!pb_json_feed_push(&p->j, c))
        return 0;
    p->key = K_OTHER;
    if (!p->target) {
        if (c == C_NODES)
            p->r->have_nodes = 1;
        if (c == C_SAMPLES)
            p->r->have_samples = 1;
        if (c == C_DELTAS)
            p->r->have_deltas = 1;
        if (c == C_NODE)
            return v8_new_node(p);
    }
    return 1;
}

static int v8_start_map(void *ctx) { return v8_open(ctx, 1); }
static int v8_start_array(void *ctx) { return v8_open(ctx, 0); }

static int v8_close(void *ctx)
{
    v8p *p = P(ctx);
    int c = pb_json_feed_pop(&p->j);
    if (c < 0)
        return 1;
    if (c == C_NODE) {
        v8_node *n = &p->r->nodes[p->r->nnodes - 1];
        if (!n->have_id)
            return v8_complain(p, PB_ERR_CORRUPT, "a node has no %s", "\"id\"");
        if (!n->have_frame)
            return v8_complain(p, PB_ERR_CORRUPT, "a node has no %s", "\"callFrame\"");
    }
    if (p->target && c == p->target) {
        p->j.done = 1;
        return 0; /* this cursor's array is read: stop here */
    }
    if (!p->target && c == C_NODES)
        p->r->nodes_closed = 1;
    /* restore the key context of the map this container was a value in */
    p->key = K_OTHER;
    return 1;
}

static int v8_add_edge(v8p *p, int is_child, int64_t other)
{
    v8r *r = p->r;
    if (pb_grow((void **)&r->edges, &r->cedges, r->nedges + 1, sizeof *r->edges) < 0)
        return v8_complain(p, PB_ERR_LIMIT, "out of memory%s", "");
    r->edges[r->nedges].node = (uint32_t)(r->nnodes - 1);
    r->edges[r->nedges].is_child = is_child;
    r->edges[r->nedges].other = other;
    r->edges[r->nedges].off = p->j.chunk_off;
    r->nedges++;
    return 1;
}

/* a number in a samples/timeDeltas array: counted (pass 1) or queued (a cursor) */
static int array_number(v8p *p, int c, int64_t v)
{
    if (!p->target) {
        if (c == C_SAMPLES)
            p->r->nsamples++;
        else
            p->r->ndeltas++;
        return 1;
    }
    if (c != p->target)
        return 1;
    if (pb_grow((void **)&p->q, &p->qcap, p->qn + 1, sizeof *p->q) < 0)
        return v8_complain(p, PB_ERR_LIMIT, "out of memory%s", "");
    p->q[p->qn++] = v;
    return 1;
}

/* a number in the node being read */
static int node_number(v8p *p, int c, int64_t v, int integral)
{
    v8_node *n;
    int k = p->key;
    if (c != C_NODE && c != C_CALLFRAME && c != C_CHILDREN)
        return 1;
    n = &p->r->nodes[p->r->nnodes - 1];
    if (c == C_NODE && (k == K_ID || k == K_PARENT)) {
        if (!integral)
            return v8_complain(p, PB_ERR_CORRUPT, "a node's %s is not an integer", k == K_ID ? "id" : "parent");
        if (k == K_PARENT)
            return v8_add_edge(p, 0, v);
        if (n->have_id)
            return v8_complain(p, PB_ERR_CORRUPT, "a node has two %s", "ids");
        n->id = v;
        n->have_id = 1;
    } else if (c == C_CALLFRAME && (k == K_LINE || k == K_COL)) {
        int32_t x = integral && v >= 0 && v < INT32_MAX ? (int32_t)v : -1;
        if (k == K_LINE)
            n->line = x;
        else
            n->col = x;
    } else if (c == C_CHILDREN) {
        if (!integral)
            return v8_complain(p, PB_ERR_CORRUPT, "a child id of a node is not an integer%s", "");
        return v8_add_edge(p, 1, v);
    }
    return 1;
}

static int v8_number(v8p *p, int64_t v, int integral)
{
    int c = v8_cur_ctx(p);
    if (!p->j.depth)
        return v8_complain(p, PB_ERR_CORRUPT, "%s", "a .cpuprofile is a JSON object; this is a number");
    if (c == C_SAMPLES || c == C_DELTAS) {
        if (!integral)
            return v8_complain(p, PB_ERR_CORRUPT, "an element of %s is not an integer", ctx_name(c));
        return array_number(p, c, v);
    }
    if (p->target)
        return 1;
    if (c == C_TOP && (p->key == K_START || p->key == K_END)) {
        v8r *r = p->r;
        if (p->key == K_START)
            r->start_us = v, r->have_start = 1;
        else
            r->end_us = v, r->have_end = 1;
        return 1;
    }
    if (c == C_NODES)
        return v8_complain(p, PB_ERR_CORRUPT, "%s", "an element of nodes is not an object");
    return node_number(p, c, v, integral);
}

static int v8_integer(void *ctx, long long v) { return v8_number(P(ctx), (int64_t)v, 1); }

static int v8_double(void *ctx, double d)
{
    v8p *p = P(ctx);
    /* startTime/endTime written as doubles (some tools): whole µs */
    if (v8_cur_ctx(p) == C_TOP && (p->key == K_START || p->key == K_END) && d > -9e15 && d < 9e15)
        return v8_number(p, (int64_t)d, 1);
    return v8_number(p, 0, 0);
}

/* a value that is not a number where one belongs */
static int v8_other(v8p *p, const char *what)
{
    int c = v8_cur_ctx(p);
    if (!p->j.depth)
        return v8_complain(p, PB_ERR_CORRUPT, "a .cpuprofile is a JSON object; this is %s", what);
    if (c == C_SAMPLES || c == C_DELTAS || c == C_CHILDREN)
        return v8_complain(p, PB_ERR_CORRUPT, "an element of %s is not a number", ctx_name(c));
    if (p->target)
        return 1;
    if (c == C_NODES)
        return v8_complain(p, PB_ERR_CORRUPT, "%s", "an element of nodes is not an object");
    if (c == C_TOP && (p->key == K_NODES || p->key == K_SAMPLES || p->key == K_DELTAS))
        return v8_complain(p, PB_ERR_CORRUPT, "%s where an array belongs (nodes, samples, timeDeltas)", what);
    if (c == C_NODE && (p->key == K_ID || p->key == K_CALLFRAME || p->key == K_CHILDREN))
        return v8_complain(p, PB_ERR_CORRUPT, "%s as a node's id, callFrame or children", what);
    return 1;
}

static int v8_null(void *ctx) { return v8_other(P(ctx), "null"); }
static int v8_boolean(void *ctx, int b) { (void)b; return v8_other(P(ctx), "a boolean"); }

static int v8_string(void *ctx, const unsigned char *s, size_t n)
{
    v8p *p = P(ctx);
    v8r *r = p->r;
    v8_node *nd;
    if (p->target || v8_cur_ctx(p) != C_CALLFRAME || (p->key != K_FNAME && p->key != K_URL))
        return v8_other(p, "a string");
    nd = &r->nodes[r->nnodes - 1];
    if (n > r->io.opt->max_record_size || n > UINT32_MAX)
        return v8_complain(p, PB_ERR_LIMIT, "a name longer than max_record_size%s", "");
    if (pb_grow((void **)&r->str, &r->cstr, r->nstr + n + 1, 1) < 0)
        return v8_complain(p, PB_ERR_LIMIT, "out of memory%s", "");
    memcpy(r->str + r->nstr, s, n);
    if (p->key == K_FNAME)
        nd->name_at = r->nstr, nd->name_len = (uint32_t)n;
    else
        nd->url_at = r->nstr, nd->url_len = (uint32_t)n;
    r->nstr += n;
    nd->have_frame = 1;
    return 1;
}

static const yajl_callbacks v8_callbacks = {
    v8_null, v8_boolean, v8_integer, v8_double, NULL, v8_string,
    v8_start_map, v8_map_key, v8_close, v8_start_array, v8_close
};

/* ---- feeding a parser (json_feed.c) ---------------------------------------- */
static pb_status v8_parser_new(v8r *r, v8p *p, int target)
{
    memset(p, 0, sizeof *p);
    p->r = r;
    p->target = target;
    /* a cursor that starts at its array stops after it */
    return pb_json_feed_open(&p->j, &v8_callbacks, p, target) < 0 ? v8_oom(r, 0) : PB_OK;
}

static void v8_parser_free(v8p *p)
{
    pb_json_feed_close(&p->j);
    free(p->q);
    p->q = NULL;
}

static pb_status feed(v8p *p, const unsigned char *b, size_t n, uint64_t off)
{
    return pb_json_feed_block(&p->j, b, n, off, p->r->io.err);
}

/* pass 1: the whole input through the source */
static pb_status v8_pass1(v8r *r)
{
    v8p *pp = &r->p1;
    pb_status st;
    if ((st = v8_parser_new(r, pp, 0)) != PB_OK)
        return st;
    st = pb_json_feed_source(&pp->j, r->io.s, PB_JSON_BLOCK, r->io.err);
    v8_parser_free(pp);
    return st;
}

/* ---- the node tree ----------------------------------------------------------- */
static uint32_t node_hash(const void *ctx, uint32_t i)
{
    return pb_mix64((uint64_t)((const v8r *)ctx)->nodes[i].id);
}

static uint32_t node_of(v8r *r, int64_t id)
{
    size_t k;
    uint32_t i;
    if (r->dense)
        return id >= 0 && (uint64_t)id < r->ndense ? r->dense[id] : V8_NONE;
    if (!r->ix.cap)
        return V8_NONE;
    PB_INDEX_FIND(&r->ix, pb_mix64((uint64_t)id), k, i, r->nodes[i].id == id);
    return i;
}

static int v8_name_is(const v8r *r, const v8_node *n, const char *s)
{
    return n->name_len == strlen(s) && !memcmp(r->str + n->name_at, s, n->name_len);
}

/* ids 0 .. 4 x nodes (node's and DevTools' are 1..N): a table by id for
 * the samples' lookups instead of the hash */
static pb_status dense_ids(v8r *r)
{
    size_t i, n = 0;
    for (i = 0; i < r->nnodes; i++) {
        if (r->nodes[i].id < 0 || (uint64_t)r->nodes[i].id >= 4 * (uint64_t)r->nnodes + 16)
            return PB_OK;
        if ((size_t)r->nodes[i].id >= n)
            n = (size_t)r->nodes[i].id + 1;
    }
    if (!(r->dense = (uint32_t *)malloc((n ? n : 1) * sizeof *r->dense)))
        return v8_oom(r, 0);
    for (i = 0; i < n; i++)
        r->dense[i] = V8_NONE;
    for (i = 0; i < r->nnodes; i++)
        r->dense[r->nodes[i].id] = (uint32_t)i;
    r->ndense = n;
    return PB_OK;
}

/* index the ids, link parents, classify */
static pb_status build_tree(v8r *r)
{
    size_t i, k;
    uint32_t j;
    for (i = 0; i < r->nnodes; i++) {
        v8_node *n = &r->nodes[i];
        if (pb_index_reserve(&r->ix, i, node_hash, r) < 0)
            return v8_oom(r, 0);
        PB_INDEX_FIND(&r->ix, pb_mix64((uint64_t)n->id), k, j, r->nodes[j].id == n->id);
        if (j != PB_INDEX_NONE)
            return pb_fail(r->io.err, PB_ERR_CORRUPT, 0, "two nodes have the id %lld", (long long)n->id);
        pb_index_set(&r->ix, k, (uint32_t)i);
        n->kind = v8_name_is(r, n, "(root)") ? N_ROOT : N_FUNC;
        if (n->col >= 0)
            r->col_frames++;
    }
    for (i = 0; i < r->nedges; i++) {
        const v8_edge *e = &r->edges[i];
        uint32_t o = node_of(r, e->other), child = e->is_child ? o : e->node, parent = e->is_child ? e->node : o;
        if (o == V8_NONE)
            return pb_fail(r->io.err, PB_ERR_CORRUPT, e->off, "a node names %s %lld, which no node has",
                           e->is_child ? "a child" : "a parent", (long long)e->other);
        if (r->nodes[child].parent != V8_NONE && r->nodes[child].parent != parent)
            return pb_fail(r->io.err, PB_ERR_CORRUPT, e->off, "node %lld has two parents",
                           (long long)r->nodes[child].id);
        r->nodes[child].parent = parent;
    }
    return dense_ids(r);
}

/* nytprof.out's package of a url: the file's name without its extension,
 * a node: url's path with "::" */
static pb_status put_pkg(v8r *r, const char *u, size_t n, size_t *len)
{
    size_t i, s = 0, e = n, w = 0, from;
    int node = n > 5 && !memcmp(u, "node:", 5);
    if (pb_grow((void **)&r->pkg, &r->cpkg, n * 2 + 8, 1) < 0)
        return v8_oom(r, 0);
    if (node) {
        memcpy(r->pkg, "node::", 6);
        w = 6;
        s = 5;
    } else {
        for (i = 0; i < n; i++)
            if (u[i] == '/' || u[i] == '\\')
                s = i + 1;
        for (i = n; i > s; i--)
            if (u[i - 1] == '.') {
                e = i - 1;
                break;
            }
    }
    from = w;
    for (i = s; i < e; i++) {
        unsigned char c = (unsigned char)u[i];
        if (c == '/') {
            r->pkg[w++] = ':';
            r->pkg[w++] = ':';
        } else {
            r->pkg[w++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? (char)c : '_';
        }
    }
    if (w == from) {
        memcpy(r->pkg + w, "main", 4);
        w += 4;
    }
    *len = w;
    return PB_OK;
}

static pb_status v8_intern(v8r *r, v8_node *n)
{
    pb_frame f;
    const char *name = r->str + n->name_at, *url = r->str + n->url_at;
    size_t plen = 0, nlen = n->name_len;
    unsigned k;
    pb_status st;
    memset(&f, 0, sizeof f);
    if (!nlen) /* as DevTools and the speedscope app show a function without a name */
        name = "(anonymous)", nlen = 11;
    f.own = f.name = pb_str_make(name, nlen, 1);
    f.line = f.first_line = n->line >= 0 && n->line < INT32_MAX ? n->line + 1 : -1;
    for (k = 0; k < 3; k++)
        if (nlen == strlen(synth_names[k]) && !memcmp(name, synth_names[k], nlen))
            break;
    if (k < 3 || !n->url_len) {
        f.kind = PB_FRAME_SYNTHETIC;
        f.package = pb_str_make("", 0, 0);
        f.file = pb_str_make("", 0, 0);
        f.line = f.first_line = -1;
        n->kind = k < 3 ? (unsigned char)(N_SYNTH + k) : N_SYNTH + 3;
    } else {
        if ((st = put_pkg(r, url, n->url_len, &plen)) != PB_OK)
            return st;
        f.kind = PB_FRAME_SUB;
        f.package = pb_str_make(r->pkg, plen, 0);
        /* file:///x is the file /x; any other url as it is */
        if (n->url_len > 7 && !memcmp(url, "file://", 7))
            f.file = pb_str_make(url + 7, n->url_len - 7, 1);
        else
            f.file = pb_str_make(url, n->url_len, 1);
    }
    return r->out->frame(r->out, &f, &n->frame);
}

/* the stack of node i into r->ids, innermost first */
static pb_status stack_of(v8r *r, uint32_t i, uint32_t *depth, uint64_t off)
{
    uint32_t d = 0, steps = 0, max = r->io.opt->max_stack_depth;
    pb_status st;
    for (; i != V8_NONE; i = r->nodes[i].parent) {
        v8_node *n = &r->nodes[i];
        if (++steps > r->nnodes)
            return pb_fail(r->io.err, PB_ERR_CORRUPT, off, "the node tree has a cycle through node %lld",
                           (long long)n->id);
        if (n->kind == N_ROOT)
            continue;
        if (d >= max)
            return pb_fail(r->io.err, PB_ERR_LIMIT, off, "a sample's stack is deeper than max_stack_depth (%u)", max);
        if (n->frame == V8_NONE && (st = v8_intern(r, n)) != PB_OK)
            return st;
        if (pb_grow((void **)&r->ids, &r->cids, d + 1, sizeof *r->ids) < 0)
            return v8_oom(r, off);
        r->ids[d++] = n->frame;
    }
    *depth = d;
    return PB_OK;
}

/* ---- pass 2: the two cursors in lockstep ------------------------------------- */
/* one block more for cursor c: 0 read, or the error */
static pb_status v8_cursor_step(v8r *r, v8p *c)
{
    int unclosed = 0;
    pb_status st = pb_json_feed_cursor(&c->j, r->io.s, c->target == C_SAMPLES ? r->samples_at : r->deltas_at, PB_JSON_BLOCK,
                                       r->salvaging, r->io.err, &unclosed);
    if (unclosed)
        st = pb_fail(r->io.err, PB_ERR_TRUNCATED, c->j.rd.pos, "%s ends before its array is closed (did the file change?)",
                     ctx_name(c->target));
    return st;
}

/* the sample with weight w µs that began at ts µs */
static pb_status v8_emit(v8r *r, uint32_t node, int64_t ts, int64_t w, uint64_t off)
{
    uint32_t depth = 0;
    uint64_t wns, t;
    pb_status st;
    v8_node *n = &r->nodes[node];
    const uint32_t *ids;
    if (w <= 0)
        return PB_OK;
    if ((uint64_t)w > UINT64_MAX / 1000u / 4u)
        return pb_fail(r->io.err, PB_ERR_CORRUPT, off, "a sample lasts %lld µs, past any profile's length", (long long)w);
    wns = (uint64_t)w * 1000u;
    if (n->stack_at != V8_NONE) { /* built before */
        depth = n->stack_len;
        ids = r->pool + n->stack_at;
    } else {
        if (node != r->last_node) { /* runs of one node are common: its stack is walked once */
            if ((st = stack_of(r, node, &r->last_depth, off)) != PB_OK)
                return st;
            r->last_node = node;
            /* kept for the node's next samples while the cache has room */
            if (r->npool + r->last_depth <= V8_STACK_CACHE &&
                pb_append((void **)&r->pool, &r->npool, &r->cpool, r->ids, r->last_depth, sizeof *r->ids) == 0) {
                n->stack_at = (uint32_t)(r->npool - r->last_depth);
                n->stack_len = r->last_depth;
            }
        }
        depth = r->last_depth;
        ids = r->ids;
    }
    if (n->kind >= N_SYNTH && n->kind < N_SYNTH + 3)
        r->synth_ns[n->kind - N_SYNTH] += wns;
    /* the fold (ns ticks) takes a sample's last tick; a stack sink its start, µs */
    t = ts < 0 ? 0 : (uint64_t)ts;
    if (!r->io.ts_ns && r->out->sample_ticks && (st = r->out->sample_ticks(r->out, t * 1000u + wns - 1)) != PB_OK)
        return st; /* (a tee: the fold's ticks too) */
    t = r->io.ts_ns ? t * 1000u + wns - 1 : t;
    if (!depth && (st = pb_sample_noframe(r->out, &ids, &depth)) != PB_OK)
        return st;
    r->emitted++;
    /* a sample's node names its stack (the sink may key on it) */
    if (r->out->sample_stack_id)
        return r->out->sample_stack_id(r->out, 0, node, ids, depth, wns, t);
    return r->out->sample(r->out, 0, ids, depth, wns, t);
}

/* after pass 2: the same counts, other numbers (the file's size, time or
 * inode moved between the two passes) are an error too */
static pb_status same_file(v8r *r)
{
    struct stat now;
    if (!r->have_stat)
        return PB_OK;
    if (fstat(fileno(r->io.s->fp), &now) != 0 || now.st_size != r->st0.st_size || now.st_ino != r->st0.st_ino ||
        now.st_mtim.tv_sec != r->st0.st_mtim.tv_sec || now.st_mtim.tv_nsec != r->st0.st_mtim.tv_nsec)
        return pb_fail(r->io.err, PB_ERR_CORRUPT, 0,
                       "the file changed while it was read (its size or modification time moved between the two "
                       "passes)");
    return PB_OK;
}

/* pairs of (node id, delta) from the heads of both queues */
static pb_status v8_pair_up(v8r *r, v8p *a, v8p *b, int64_t *ts, uint32_t *prev, int64_t *prev_ts)
{
    size_t k, m = a->qn - a->qhead < b->qn - b->qhead ? a->qn - a->qhead : b->qn - b->qhead;
    pb_status st;
    for (k = 0; k < m; k++) {
        int64_t id = a->q[a->qhead + k], d = b->q[b->qhead + k];
        uint32_t node = node_of(r, id);
        if (node == V8_NONE)
            return pb_fail(r->io.err, PB_ERR_CORRUPT, a->j.chunk_off, "a sample names node %lld, which no node has",
                           (long long)id);
        if ((d > 0 && *ts > INT64_MAX - d) || (d < 0 && *ts < INT64_MIN - d))
            return pb_fail(r->io.err, PB_ERR_CORRUPT, b->j.chunk_off, "timeDeltas add up past 63 bits");
        *ts += d;
        if (*prev != V8_NONE && (st = v8_emit(r, *prev, *prev_ts, d, a->j.chunk_off)) != PB_OK)
            return st;
        *prev = node;
        *prev_ts = *ts;
    }
    r->paired += m;
    a->qhead += m;
    b->qhead += m;
    if (a->qhead == a->qn)
        a->qhead = a->qn = 0;
    if (b->qhead == b->qn)
        b->qhead = b->qn = 0;
    return PB_OK;
}

/* pass 2 in lockstep (json_feed.h): samples, cursor cur[0], and timeDeltas, cur[1]; the time so far */
typedef struct {
    v8r *r;
    int64_t ts, prev_ts;
    uint32_t prev;
} v8_pass2;
static size_t v8_queued(void *ctx, int i)
{
    const v8p *c = &((v8_pass2 *)ctx)->r->cur[i];
    return c->qn - c->qhead;
}
static pb_status v8_step(void *ctx, int i) { return v8_cursor_step(((v8_pass2 *)ctx)->r, &((v8_pass2 *)ctx)->r->cur[i]); }
static pb_status v8_pair(void *ctx)
{
    v8_pass2 *p = (v8_pass2 *)ctx;
    return v8_pair_up(p->r, &p->r->cur[0], &p->r->cur[1], &p->ts, &p->prev, &p->prev_ts);
}

static pb_status pass2(v8r *r)
{
    v8p *a = &r->cur[0], *b = &r->cur[1];
    pb_status st;
    v8_pass2 p = {r, r->start_us, 0, V8_NONE};
    pb_json_lockstep l = {&p, {&a->j, &b->j}, v8_queued, v8_step, v8_pair};
    if ((st = v8_parser_new(r, a, C_SAMPLES)) != PB_OK || (st = v8_parser_new(r, b, C_DELTAS)) != PB_OK)
        return st;
    st = pb_json_lockstep_run(&l);
    /* pass 2 read what pass 1 counted, or the file changed in between (a
     * longer array leaves numbers queued; a shorter one pairs fewer) */
    if (st == PB_OK && !r->salvaging && (r->paired != r->nsamples || a->qn != a->qhead || b->qn != b->qhead))
        st = pb_fail(r->io.err, PB_ERR_CORRUPT, a->j.chunk_off,
                     "the file changed while it was read: pass 1 counted %llu samples and timeDeltas, pass 2 "
                     "paired %llu and the arrays no longer match", (unsigned long long)r->nsamples,
                     (unsigned long long)r->paired);
    if (st == PB_OK)
        st = same_file(r);
    /* the last sample lasts to endTime (salvaged: its end was cut off) */
    if (st == PB_OK && p.prev != V8_NONE && r->have_end && !r->salvaging)
        st = v8_emit(r, p.prev, p.prev_ts, r->end_us - p.prev_ts, pb_src_offset(r->io.s));
    v8_parser_free(a);
    v8_parser_free(b);
    return st;
}

/* ---- the decoders -------------------------------------------------------------- */
static pb_status v8_attr_u64(v8r *r, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return r->out->attribute(r->out, key, pb_str_c(buf));
}

/* ATTRIBUTE application (nytprofhtml's "For ..."): the profile does not
 * name the program; the base name of the first script in node order with a
 * file: url (node's main module comes before the modules it loads), else
 * "node" */
static pb_status v8_application(v8r *r)
{
    size_t i;
    for (i = 0; i < r->nnodes; i++) {
        const v8_node *n = &r->nodes[i];
        const char *u = r->str + n->url_at;
        if (n->url_len > 7 && !memcmp(u, "file://", 7) && !memchr(u, '\n', n->url_len)) {
            /* its base name, as `node app.js` names it (not the directory
             * of the recording machine) */
            size_t k = n->url_len;
            while (k > 7 && u[k - 1] != '/')
                k--;
            if (k == n->url_len)
                k = 7;
            return r->out->attribute(r->out, "application", pb_str_make(u + k, n->url_len - k, 1));
        }
    }
    return r->out->attribute(r->out, "application", pb_str_c("node"));
}

/* NYTProf's basetime is wall-clock seconds; startTime is a monotonic clock:
 * the file's mtime (written when the profile ended) less the profile's
 * length, as for other sampled formats; a buffer keeps the monotonic seconds */
static uint64_t v8_wall_start(const v8r *r)
{
    struct stat sb;
    uint64_t d = r->have_end && r->end_us > r->start_us ? (uint64_t)(r->end_us - r->start_us) / 1000000u : 0;
    if (!r->io.s->fp || fstat(fileno(r->io.s->fp), &sb) != 0 || sb.st_mtime <= 0)
        return r->start_us > 0 ? (uint64_t)r->start_us / 1000000u : 0;
    return (uint64_t)sb.st_mtime > d ? (uint64_t)sb.st_mtime - d : (uint64_t)sb.st_mtime;
}

static pb_status v8_head_attributes(v8r *r)
{
    pb_sample_sink *o = r->out;
    pb_status st;
    char buf[64];
    if ((st = v8_application(r)) != PB_OK || (st = v8_attr_u64(r, "basetime", v8_wall_start(r))) != PB_OK)
        return st;
    if ((st = o->attribute(o, "sample_weight_unit", pb_str_c("ns"))) != PB_OK ||
        (st = o->attribute(o, "v8_nodes", pb_str_c((snprintf(buf, sizeof buf, "%zu", r->nnodes), buf)))) != PB_OK ||
        (st = v8_attr_u64(r, "v8_samples", r->nsamples)) != PB_OK)
        return st;
    if (r->have_start && r->have_end && r->end_us >= r->start_us) {
        snprintf(buf, sizeof buf, "%.6f", (double)(r->end_us - r->start_us) / 1e6);
        if ((st = o->attribute(o, "profile_duration_sec", pb_str_c(buf))) != PB_OK)
            return st;
    }
    return o->thread(o, 0, 1, 0, "main");
}

static pb_status tail_attributes(v8r *r)
{
    static const char *const keys[3] = { "v8_program_ns", "v8_idle_ns", "v8_gc_ns" };
    pb_status st = PB_OK;
    unsigned k;
    for (k = 0; k < 3 && st == PB_OK; k++)
        st = v8_attr_u64(r, keys[k], r->synth_ns[k]);
    if (st == PB_OK && r->col_frames)
        st = v8_attr_u64(r, "v8_column_frames", r->col_frames);
    if (st == PB_OK && r->pos_ticks)
        st = v8_attr_u64(r, "v8_position_ticks", r->pos_ticks);
    return st;
}

static pb_status check_shape(v8r *r)
{
    if (!r->have_nodes)
        return pb_fail(r->io.err, PB_ERR_CORRUPT, 0, "no \"nodes\" array: not a .cpuprofile");
    if (!r->have_samples || !r->have_deltas)
        return pb_fail(r->io.err, PB_ERR_UNSUPPORTED, 0, "no \"%s\" array (a profile without samples, or an older "
                       "format with timestamps)", r->have_samples ? "timeDeltas" : "samples");
    if (r->nsamples != r->ndeltas && !r->salvaging)
        return pb_fail(r->io.err, PB_ERR_CORRUPT, 0, "samples has %llu entries but timeDeltas %llu",
                       (unsigned long long)r->nsamples, (unsigned long long)r->ndeltas);
    if (!r->have_start)
        return pb_fail(r->io.err, PB_ERR_CORRUPT, 0, "no \"startTime\"");
    if (r->io.opt->have_thread && (r->io.opt->thread_name ? strcmp(r->io.opt->thread_name, "main") : r->io.opt->thread_id != 0))
        return pb_fail_nooff(r->io.err, PB_ERR_UNSUPPORTED, "a .cpuprofile has one thread, 0 (\"main\")");
    if (!r->io.s->mem && (!r->io.s->fp || pb_src_size(r->io.s) == UINT64_MAX))
        return pb_fail(r->io.err, PB_ERR_UNSUPPORTED, 0,
                       "a .cpuprofile is read in two passes and this input cannot be read again (a pipe?): "
                       "save it to a file first");
    return PB_OK;
}

/* ---- the fast path (see the top) ------------------------------------------- */
/* the bytes fed to yajl in pass 1, scanned for the top object's "samples"
 * and "timeDeltas" keys: where the array of one begins */
typedef struct {
    unsigned depth;
    int in_str, esc, capture, pending, which, seen_top, top_obj;
    unsigned char key[12];
    unsigned klen;
    int kbad;
} v8scan;

/* the index of the '[' of samples or timeDeltas (s->which: 0, 1) in b[0 .. n), or n */
static size_t scan_to_array(v8scan *s, const unsigned char *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char ch = b[i];
        if (s->in_str) {
            if (s->esc)
                s->esc = 0;
            else if (ch == '\\')
                s->esc = s->kbad = 1; /* an escaped key is left to yajl */
            else if (ch == '"')
                s->in_str = 0, s->pending = s->capture, s->capture = 0;
            else if (s->capture && s->klen < sizeof s->key)
                s->key[s->klen++] = ch;
            else
                s->kbad = 1;
            continue;
        }
        switch (ch) {
        case ' ': case '\t': case '\n': case '\r':
            break;
        case '"':
            s->in_str = 1;
            s->pending = 0;
            s->capture = s->depth == 1 && s->top_obj;
            s->klen = 0;
            s->kbad = 0;
            break;
        case ':':
            s->pending = s->pending == 1 && !s->kbad && ((s->klen == 7 && !memcmp(s->key, "samples", 7) && (s->which = 0, 1)) ||
                                                         (s->klen == 10 && !memcmp(s->key, "timeDeltas", 10) && (s->which = 1, 1)))
                         ? 2 : 0;
            break;
        case '[':
            if (s->pending == 2) {
                s->pending = 0;
                return i;
            }
            s->depth++;
            break;
        case '{':
            if (!s->depth && !s->seen_top)
                s->top_obj = 1;
            s->seen_top = 1;
            s->depth++;
            s->pending = 0;
            break;
        case '}': case ']':
            if (s->depth)
                s->depth--;
            s->pending = 0;
            break;
        default:
            s->pending = 0;
        }
    }
    return n;
}

static int v8_ints_open(v8r *r, pb_json_ints *c, uint64_t at)
{
    return pb_json_ints_open(c, r->io.s->mem, r->io.s->mem_len, r->io.s->mem ? -1 : fileno(r->io.s->fp), pb_src_size(r->io.s), at);
}

/* pass 1: the array (which: 0 samples, 1 timeDeltas) whose '[' is at byte
 * at, counted and noted; *end: the byte after its ']'; *other: not the
 * strict form (nothing else is said) */
static pb_status fast_array(v8r *r, int which, uint64_t at, uint64_t *end, int *other)
{
    pb_json_ints c;
    int64_t v;
    int k;
    uint64_t n = 0;
    if (v8_ints_open(r, &c, at) < 0)
        return v8_oom(r, at);
    if (which == 0)
        pb_json_ints_runs(&c); /* node ids come in runs */
    k = pb_json_ints_begin(&c);
    if (which == 0) {
        if (!r->seen && !(r->seen = (uint64_t *)calloc(V8_SEEN_IDS / 64u, sizeof *r->seen))) {
            pb_json_ints_free(&c);
            return v8_oom(r, at);
        }
        int64_t last = -1;
        while (k == PB_JSON_INTS_VALUE && (k = pb_json_ints_next(&c, &v)) == PB_JSON_INTS_VALUE) {
            n++;
            if (v == last) /* runs of one node are common */
                continue;
            last = v;
            if (v >= 0 && v < (int64_t)V8_SEEN_IDS)
                r->seen[v >> 6] |= UINT64_C(1) << (v & 63);
            else
                r->big_ids = 1;
        }
        r->nsamples = n;
    } else {
        int64_t sum = 0, lo = 0, hi = 0;
        uint64_t pos = 0;
        while (k == PB_JSON_INTS_VALUE && (k = pb_json_ints_next(&c, &v)) == PB_JSON_INTS_VALUE) {
            if (v <= -V8_DELTA_MAX || v >= V8_DELTA_MAX || sum <= -V8_TIME_MAX || sum >= V8_TIME_MAX) {
                r->big_times = 1;
                v = 0;
            }
            sum += v;
            if (sum < lo)
                lo = sum;
            if (sum > hi)
                hi = sum;
            if (v > 0 && n && pos < (uint64_t)V8_TIME_MAX)
                pos += (uint64_t)v;
            n++;
        }
        r->ndeltas = n;
        r->dsum = sum, r->dmin = lo, r->dmax = hi, r->dpos = pos;
    }
    *end = pb_json_ints_offset(&c);
    pb_json_ints_free(&c);
    if (k != PB_JSON_INTS_END) {
        *other = 1;
        return PB_OK;
    }
    r->arr_at[which] = at;
    r->arr_fast[which] = 1;
    return PB_OK;
}

/* pass 1 of the fast path: as pass1, the arrays read by fast_array */
static pb_status pass1_fast(v8r *r, int *other)
{
    v8p *pp = &r->p1;
    v8scan sc;
    pb_status st;
    int got = 0; /* (set by the loop's first test) */
    uint64_t skip_to = 0; /* the bytes before it are an array's, read */
    memset(&sc, 0, sizeof sc);
    if ((st = v8_parser_new(r, pp, 0)) != PB_OK)
        return st;
    while (st == PB_OK && !*other && (got = pb_src_need(r->io.s, 1)) > 0) {
        size_t i = 0, j, n = pb_src_avail(r->io.s);
        const unsigned char *b = r->io.s->p;
        uint64_t off = pb_src_offset(r->io.s), end = 0;
        if (n > PB_JSON_BLOCK) /* the blocks of pass1, so yajl's errors fall where they do there */
            n = PB_JSON_BLOCK;
        if (skip_to > off)
            i = skip_to - off >= n ? n : (size_t)(skip_to - off);
        while (i < n && st == PB_OK) {
            if (r->skim_open) { /* a skimmed array: to its first ']', which pass 2 checks is its end */
                const unsigned char *q = (const unsigned char *)memchr(b + i, ']', n - i);
                if (!q) {
                    i = n;
                    break;
                }
                i = (size_t)(q - b) + 1;
                r->skim_open = 0;
                r->arr_end[r->skim_which] = off + i;
                continue;
            }
            j = i + scan_to_array(&sc, b + i, n - i);
            if (j > i)
                st = feed(pp, b + i, j - i, off + i);
            if (st != PB_OK || j == n)
                break;
            if (r->skim) {
                r->arr_at[sc.which] = off + j;
                r->arr_fast[sc.which] = 1;
                r->skim_open = 1;
                r->skim_which = sc.which;
                st = feed(pp, (const unsigned char *)"[]", 2, off + j);
                i = j + 1;
                continue;
            }
            if ((st = fast_array(r, sc.which, off + j, &end, other)) != PB_OK || *other)
                break;
            st = feed(pp, (const unsigned char *)"[]", 2, off + j);
            skip_to = end;
            i = skip_to - off >= n ? n : (size_t)(skip_to - off);
        }
        r->io.s->p += n;
        /* the rest of an array the integer reader read is not read again */
        if (st == PB_OK && !*other && skip_to > pb_src_offset(r->io.s))
            st = pb_src_seek(r->io.s, skip_to);
    }
    if (r->skim_open)
        *other = 1; /* the input ends inside an array */
    if (st == PB_OK && !*other && got < 0)
        st = r->io.err->status ? r->io.err->status : PB_ERR_IO;
    if (st == PB_OK && !*other)
        st = pb_json_feed_end(&pp->j, pb_src_offset(r->io.s), r->io.err);
    v8_parser_free(pp);
    return st;
}

/* 1 when the stack of node i has no cycle and is within max_stack_depth
 * (dep: each node's depth, UINT32_MAX where not known yet) */
static int stack_ok(v8r *r, uint32_t *dep, uint32_t i)
{
    size_t len = 0;
    uint32_t d;
    while (i != V8_NONE && dep[i] == UINT32_MAX) {
        if (pb_grow((void **)&r->ids, &r->cids, len + 1, sizeof *r->ids) < 0)
            return 0;
        r->ids[len++] = i;
        dep[i] = UINT32_MAX - 1; /* on this walk */
        i = r->nodes[i].parent;
    }
    if (i != V8_NONE && dep[i] == UINT32_MAX - 1) /* a cycle */
        return 0;
    d = i == V8_NONE ? 0 : dep[i];
    while (len) {
        i = r->ids[--len];
        d += r->nodes[i].kind != N_ROOT;
        dep[i] = d;
        if (d > r->io.opt->max_stack_depth)
            return 0;
    }
    return 1;
}

/* after pass 1 of the fast path and build_tree: 1 when pass 2 cannot fail
 * (as the general path's would not), else 0: the general path then reads */
static int fast_ok(v8r *r)
{
    uint32_t *dep = NULL;
    size_t w, nw = V8_SEEN_IDS / 64u;
    int ok = 1;
    if (!r->arr_fast[0] || !r->arr_fast[1] || r->big_ids || r->big_times || r->nsamples != r->ndeltas)
        return 0;
    /* every running time (from startTime) and endTime in [0, 2^52) µs */
    if (r->start_us < 0 || r->start_us >= V8_TIME_MAX || r->start_us + r->dmin < 0 ||
        r->start_us + r->dmax >= V8_TIME_MAX || (r->have_end && (r->end_us < 0 || r->end_us >= V8_TIME_MAX)))
        return 0;
    if (!r->nnodes || !(dep = (uint32_t *)malloc(r->nnodes * sizeof *dep)))
        return 0;
    for (w = 0; w < r->nnodes; w++)
        dep[w] = UINT32_MAX; /* not yet known */
    /* every sampled id a node's; its stack acyclic, within max_stack_depth */
    for (w = 0; w < nw && ok; w++) {
        uint64_t bits = r->seen[w];
        while (bits && ok) {
            int64_t id = (int64_t)(w * 64u) + __builtin_ctzll(bits);
            uint32_t i = node_of(r, id);
            bits &= bits - 1;
            if (i == V8_NONE) {
                ok = 0;
                break;
            }
            ok = stack_ok(r, dep, i);
        }
    }
    free(dep);
    return ok;
}

/* the fast path's sums: weight w µs (> 0) of a sample of node i that began at ts */
static pb_status add_weight(v8r *r, uint32_t i, int64_t ts, int64_t w)
{
    v8_node *n = &r->nodes[i];
    if (!n->w) {
        if (pb_grow((void **)&r->order, &r->corder, r->norder + 1, sizeof *r->order) < 0)
            return v8_oom(r, 0);
        r->order[r->norder++] = i;
        n->t0 = ts;
    }
    n->w += (uint64_t)w;
    return PB_OK;
}

static pb_status changed(v8r *r, uint64_t off, const pb_json_ints *c)
{
    if (c && c->io_errno)
        return pb_fail(r->io.err, PB_ERR_IO, off, "cannot read the input again: %s", strerror(c->io_errno));
    return pb_fail(r->io.err, PB_ERR_CORRUPT, off, "the file changed while it was read: pass 2 does not read the "
                   "samples and timeDeltas pass 1 counted (%llu)", (unsigned long long)r->nsamples);
}

/* pass 2 of the fast path: both arrays in lockstep; sums: weights summed
 * per node (send_sums sends them).  Skimmed arrays (other given): what
 * pass 1 did not check is checked here, and anything amiss is *other */
/* Over 80 lines, kept whole: both arrays read in lockstep in one loop; the checks pass 1 skipped
 * happen where the values are. */
static pb_status pass2_fast(v8r *r, int sums, int *other)
{
    pb_json_ints a, b;
    pb_status st = PB_OK;
    int ka, kb;
    int64_t id, d, ts = r->start_us, prev_ts = 0;
    uint32_t prev = V8_NONE, run = V8_NONE; /* sums: the node of the run of samples being added up */
    int64_t run_ts = 0, run_w = 0;
    uint64_t k = 0, tot = 0;
    if (v8_ints_open(r, &a, r->arr_at[0]) < 0)
        return v8_oom(r, r->arr_at[0]);
    if (v8_ints_open(r, &b, r->arr_at[1]) < 0) {
        pb_json_ints_free(&a);
        return v8_oom(r, r->arr_at[1]);
    }
    pb_json_ints_runs(&a);
    ka = pb_json_ints_begin(&a);
    kb = pb_json_ints_begin(&b);
    while (ka == PB_JSON_INTS_VALUE && kb == PB_JSON_INTS_VALUE) {
        uint32_t node;
        ka = pb_json_ints_next(&a, &id);
        kb = pb_json_ints_next(&b, &d);
        if (ka != PB_JSON_INTS_VALUE || kb != PB_JSON_INTS_VALUE)
            break;
        node = r->dense && id >= 0 && (uint64_t)id < r->ndense ? r->dense[id] : node_of(r, id);
        /* what pass 1 saw holds, or the file changed */
        if (node == V8_NONE || (++k > r->nsamples && !other) || d <= -V8_DELTA_MAX || d >= V8_DELTA_MAX ||
            ts + d < 0 || ts + d >= V8_TIME_MAX) {
            if (other)
                *other = 1;
            else
                st = changed(r, pb_json_ints_offset(&a), NULL);
            break;
        }
        ts += d;
        if (d > 0 && prev != V8_NONE)
            tot += (uint64_t)d;
        if (prev != V8_NONE && d > 0) {
            if (!sums) {
                if ((st = v8_emit(r, prev, prev_ts, d, pb_json_ints_offset(&a))) != PB_OK)
                    break;
            } else if (prev == run) {
                run_w += d;
                r->emitted++;
            } else {
                if (run != V8_NONE && (st = add_weight(r, run, run_ts, run_w)) != PB_OK)
                    break;
                run = prev, run_ts = prev_ts, run_w = d;
                r->emitted++;
            }
        }
        prev = node;
        prev_ts = ts;
    }
    if (other && !*other) {
        /* each array ends where pass 1 skimmed it to, the two together;
         * the weights, the last's too, within 2^51 µs */
        if (ka != PB_JSON_INTS_END || kb != PB_JSON_INTS_END || pb_json_ints_offset(&a) != r->arr_end[0] ||
            pb_json_ints_offset(&b) != r->arr_end[1] || tot >= (uint64_t)V8_TIME_MAX / 2u ||
            (r->have_end && (r->end_us < 0 || r->end_us >= V8_TIME_MAX || r->end_us - ts >= V8_TIME_MAX / 2)))
            *other = 1;
        r->nsamples = r->ndeltas = k;
    }
    if (st == PB_OK && !other && (ka != PB_JSON_INTS_END || kb != PB_JSON_INTS_END || k != r->nsamples))
        st = changed(r, pb_json_ints_offset(ka != PB_JSON_INTS_END ? &a : &b), ka != PB_JSON_INTS_END ? &a : &b);
    pb_json_ints_free(&a);
    pb_json_ints_free(&b);
    if (other && *other)
        return st;
    if (st == PB_OK)
        st = same_file(r);
    /* the last sample lasts to endTime */
    if (st == PB_OK && prev != V8_NONE && r->have_end && r->end_us > prev_ts) {
        if (!sums) {
            st = v8_emit(r, prev, prev_ts, r->end_us - prev_ts, pb_src_offset(r->io.s));
        } else if (prev == run) {
            run_w += r->end_us - prev_ts;
            r->emitted++;
        } else {
            if (run != V8_NONE)
                st = add_weight(r, run, run_ts, run_w);
            run = prev, run_ts = prev_ts, run_w = r->end_us - prev_ts;
            r->emitted++;
        }
    }
    if (st == PB_OK && run != V8_NONE)
        st = add_weight(r, run, run_ts, run_w);
    return st;
}

/* the sums: each node's stack once, in the order of the nodes' first samples */
static pb_status send_sums(v8r *r)
{
    pb_status st = PB_OK;
    uint64_t e = r->emitted;
    size_t i;
    for (i = 0; i < r->norder && st == PB_OK; i++)
        st = v8_emit(r, r->order[i], r->nodes[r->order[i]].t0, (int64_t)r->nodes[r->order[i]].w, 0);
    r->emitted = e;
    return st;
}

/* skimmed: the stacks of the nodes with weight, acyclic and within max_stack_depth */
static int sums_ok(v8r *r)
{
    uint32_t *dep = (uint32_t *)malloc((r->nnodes ? r->nnodes : 1) * sizeof *dep);
    size_t i;
    int ok = dep != NULL;
    for (i = 0; ok && i < r->nnodes; i++)
        dep[i] = UINT32_MAX;
    for (i = 0; ok && i < r->norder; i++)
        ok = stack_ok(r, dep, r->order[i]);
    free(dep);
    return ok;
}

static void v8_free(void *p);

/* the fast path left: back to the state before pass 1, the input at its start */
static pb_status v8_restart(v8r *r)
{
    v8r keep = *r;
    r->io.err->status = PB_OK;
    v8_free(r);
    r->io = keep.io, r->out = keep.out, r->have_stat = keep.have_stat, r->st0 = keep.st0;
    r->last_node = V8_NONE;
    return pb_src_rewind(r->io.s);
}

static pb_status v8_decode(void *p, pb_sample_sink *out)
{
    v8r *r = (v8r *)p;
    pb_status st;
    r->out = out;
    r->have_stat = r->io.s->fp && fstat(fileno(r->io.s->fp), &r->st0) == 0;
    if (r->io.s->view == PB_VIEW_PLAIN && pb_src_offset(r->io.s) == 0 &&
        (r->io.s->mem || (r->io.s->fp && pb_src_size(r->io.s) != UINT64_MAX))) {
        int other = 0;
        /* a consumer of sums: pass 1 only skims the arrays (to their first
         * ']'), pass 2 reads and checks them, and nothing reaches the sink
         * before both passes found nothing amiss */
        r->skim = !r->io.ts_ns && out->sums_stacks;
        st = pass1_fast(r, &other);
        if (r->skim) {
            if (st == PB_OK && !other && check_shape(r) == PB_OK && build_tree(r) == PB_OK &&
                (st = pass2_fast(r, 1, &other)) == PB_OK && !other && sums_ok(r)) {
                if ((st = v8_head_attributes(r)) != PB_OK || (st = send_sums(r)) != PB_OK ||
                    (st = tail_attributes(r)) != PB_OK)
                    return st;
                return r->out->finish(r->out);
            }
            st = PB_OK; /* any error: the general path says it */
            other = 1;
        }
        if (st == PB_OK && !other) {
            if ((st = check_shape(r)) != PB_OK || (st = build_tree(r)) != PB_OK)
                return st;
            if (fast_ok(r)) {
                /* sums: what the last sample adds stays within 2^51 µs too */
                int sums = !r->io.ts_ns && out->sums_stacks && r->dpos < (uint64_t)V8_TIME_MAX / 2u &&
                           (!r->have_end || r->end_us - (r->start_us + r->dsum) < V8_TIME_MAX / 2);
                if ((st = v8_head_attributes(r)) != PB_OK || (st = pass2_fast(r, sums, NULL)) != PB_OK ||
                    (sums && (st = send_sums(r)) != PB_OK) || (st = tail_attributes(r)) != PB_OK)
                    return st;
                return r->out->finish(r->out);
            }
        } else if (st != PB_OK && !(st == PB_ERR_TRUNCATED && r->io.opt->salvage)) {
            return st;
        }
        if ((st = v8_restart(r)) != PB_OK) /* the general path, from the first byte */
            return st;
    }
    st = v8_pass1(r);
    if (st == PB_ERR_TRUNCATED && r->io.opt->salvage && r->nodes_closed && r->have_samples && r->have_deltas &&
        r->have_start) {
        r->lost = *r->io.err; /* salvage: the samples before the cut */
        r->io.err->status = PB_OK;
        r->salvaging = 1;
        st = PB_OK;
    }
    if (st != PB_OK || (st = check_shape(r)) != PB_OK || (st = build_tree(r)) != PB_OK ||
        (st = v8_head_attributes(r)) != PB_OK || (st = pass2(r)) != PB_OK || (st = tail_attributes(r)) != PB_OK ||
        (st = r->out->finish(r->out)) != PB_OK)
        return st;
    if (!r->salvaging)
        return PB_OK;
    *r->io.err = r->lost;
    return pb_salvage_warn(r->io.err, r->io.warn_sink, "%llu sample%s", (unsigned long long)r->emitted,
                           r->emitted == 1 ? "" : "s");
}

static void v8_free(void *p)
{
    v8r *r = (v8r *)p;
    v8_parser_free(&r->p1);
    v8_parser_free(&r->cur[0]);
    v8_parser_free(&r->cur[1]);
    pb_index_free(&r->ix);
    PB_FREE_ALL(r->nodes, r->edges, r->str, r->ids, r->pkg, r->dense, r->seen, r->pool, r->order);
    memset(r, 0, sizeof *r);
}

/* into a fold (warn_sink given): timestamps in ns, the fold's ticks */
static void v8_init(void *p, pb_source *src, const pb_options *opt, pb_sink *warn_sink, pb_error *err)
{
    v8r *r = (v8r *)p;
    pb_json_io_init(&r->io, src, opt, warn_sink, err);
    r->last_node = V8_NONE;
}

/* ticks: ns, the weights' unit; NEW_FID flags: a script on disk (file: urls,
 * absolute paths) may be found and embedded; node:internal/..., http(s)
 * urls and the like are fake */
const pb_fold_decoder pb_v8_decoder = {sizeof(v8r), v8_init, NULL, v8_decode, v8_free,
    {.source_format = "v8", .ticks_per_sec = 1000000000u, .ticks_per_weight = 1, .fid_flags = pb_fid_flags_absolute,
     .sampled_spans = 1}};

#endif /* PB_HAVE_YAJL */
