/* chunk_graph.h - a chunk stream's call graph, for the call-graph targets
 * (outputs.c: the targets that take a call graph).
 *
 * A pb_sink that keeps only what a call graph is: the files (NEW_FID), the
 * subs (SUB_INFO: fid, first line, name) and the SUB_CALLERS edges, summed
 * per (caller, call-site fid:line, callee) over threads and processes, with
 * NYTProf's numbers (count, incl, excl, reci in seconds).  Every input gives
 * these chunks: a tracing format's own (NYTProf's and the like) or those its
 * fold makes (a span format's spans, every sampled format's stacks: the
 * model's edges, fold_samples.h), so one consumer serves every input and a
 * merge (which folds its inputs into chunks for a chunk target) as well.
 *
 * What a sub's numbers are (the same sums nytprofhtml shows):
 *   calls = sum of its incoming edges' counts; excl = sum of their excl;
 *   incl = sum of their incl (NYTProf's incl is the outermost activation's
 *   only, so recursion is not counted twice).
 * An edge with count 0 is no call: the fold's record of what a function's
 * totals hold beyond its calls (fold_samples.c: an edge from the root), so
 * it adds to the sub's excl and incl but is neither a caller nor a call.
 * An exact call graph (ATTRIBUTE call_graph exact: PB_YIELDS_GRAPH) is
 * not sampled, though its fold says sampled_time_sec.
 * A sampled input (the fold's ATTRIBUTE sampled_time_sec) also has a unit
 * count: `unit_s` seconds per sample (ATTRIBUTE sample_interval_us, else one
 * tick, 1 / ticks_per_sec), or per ns when its weights are time
 * (sample_weight_unit ns); a tracing input's unit is the ns.
 *
 * Memory: O(strings + subs + edges); the statements (TIME_LINE ...) are
 * filtered out by the sink's wants[] and never built.  Plain C99.
 */
#ifndef PB_CHUNK_GRAPH_H
#define PB_CHUNK_GRAPH_H

#include "chunk.h"
#include "error.h"
#include "model.h"

typedef struct {
    uint32_t name;     /* string id */
    uint32_t fid;      /* 0: no SUB_INFO seen (a caller only) */
    uint32_t line;     /* first line */
    int has_info;
    int has_cc;        /* ATTRIBUTE "primitive_calls PID SUB" seen (fold_samples.c) */
    uint64_t cc;       /* their sum: the primitive calls where they differ from the calls */
} pb_cg_sub;

/* ATTRIBUTE "primitive_calls PID CALLEE <- CALLER": an edge's primitive calls */
typedef struct {
    uint32_t callee, caller; /* sub ids */
    uint64_t cc;
} pb_cg_prim;

typedef struct {
    uint32_t caller, callee; /* sub ids */
    uint32_t fid, line;      /* the call site */
    uint32_t hash;
    uint64_t count;
    double incl, excl, reci;
} pb_cg_edge;

typedef struct {
    pb_sink sink;
    pb_strtab str;
    uint32_t *fid_name;     /* fid -> string id + 1 (0: none) */
    uint32_t *fid_flags;    /* fid -> NEW_FID flags (PB_FID_*) */
    size_t nfid, cfid, cfflags;
    uint32_t *sub_of_name;  /* string id -> sub id + 1 (0: none) */
    size_t cson;
    pb_cg_sub *subs;
    size_t nsubs, csubs;
    pb_cg_edge *edges;
    size_t nedges, cedges;
    pb_index eix;
    pb_cg_prim *prims;      /* per (callee, caller), summed over processes; unsorted */
    size_t nprims, cprims;
    /* the stream's facts */
    int sampled;            /* ATTRIBUTE sampled_time_sec seen, and not an exact call graph */
    int exact;              /* ATTRIBUTE call_graph exact (PB_YIELDS_GRAPH): counts and times as they are */
    int counts_only;        /* ATTRIBUTE graph_edge_times none: the edges' times are not the input's (the profile module) */
    char cost_unit[64];     /* ATTRIBUTE graph_cost_unit (the graph's event: Ir ...; "" none) */
    int weight_ns;          /* ATTRIBUTE sample_weight_unit ns */
    double interval_us;     /* ATTRIBUTE sample_interval_us (0: none) */
    double ticks_per_sec;
    char source_format[32]; /* ATTRIBUTE source_format ("" none) */
    char application[512];  /* ATTRIBUTE application ("" none) */
    int oom;
} pb_cgraph;

/* set up g and its sink (g->sink: what the producer feeds) */
void pb_cgraph_init(pb_cgraph *g);
void pb_cgraph_free(pb_cgraph *g);
/* 0 when the sink ran out of memory */
static inline int pb_cgraph_ok(const pb_cgraph *g) { return !g->oom; }
/* a file's NEW_FID flags (0 when unknown) */
static inline uint32_t pb_cgraph_fid_flags(const pb_cgraph *g, uint32_t fid) { return fid < g->nfid ? g->fid_flags[fid] : 0; }
/* a file's name by fid ("" when unknown) */
pb_str pb_cgraph_file(const pb_cgraph *g, uint32_t fid);
static inline pb_str pb_cgraph_name(const pb_cgraph *g, uint32_t sub) { return pb_strtab_str(&g->str, g->subs[sub].name); }
/* the unit of a sampled input's counts, seconds (sampled only), and its name */
double pb_cgraph_unit_s(const pb_cgraph *g);
const char *pb_cgraph_unit_name(const pb_cgraph *g);
/* the language of the input's source files, from its format's row ("" unknown) */
const char *pb_cgraph_language(const pb_cgraph *g);
/* t seconds in units, rounded (no libm: the C tests link without it); saturated */
static inline uint64_t pb_cgraph_units(double t, double unit)
{
    double x = t / unit + 0.5;
    return x >= 1.0 ? (x < 18446744073709549568.0 ? (uint64_t)x : UINT64_MAX) : 0;
}
/* order[0..n) (edge indices) sorted by caller, callee, call-site line; or,
 * with callee_first, by callee, then caller (lines left as qsort leaves them) */
void pb_cgraph_order_edges(const pb_cgraph *g, uint32_t *order, size_t n, int callee_first);


/* ---- a call-graph target: the graph, then one write at the end ----------
 * open: the output at out ("-": standard output) made at once; the producer
 * feeds &t->g.sink.  close: with the producer's status st, write the graph
 * with write() and commit the file, or remove it; errors of the writer read
 * "<who>: <class>: ..." with the output's name.  Frees t. */
#include <stdio.h>
#include "output.h"
typedef pb_status (*pb_cgraph_write_fn)(const pb_cgraph *g, FILE *fp, pb_error *werr);
typedef struct {
    pb_cgraph g;
    pb_output *out;
    pb_cgraph_write_fn write;
    const char *who;
    char path[1024];
} pb_cgraph_target;
pb_cgraph_target *pb_cgraph_target_open(const char *out, const char *who, pb_cgraph_write_fn write, pb_error *err);
pb_status pb_cgraph_target_close(pb_cgraph_target *t, pb_status st, pb_error *err);

#endif
