/* fold_spans.h - begin/end spans (PB_YIELDS_SPANS: blocks) -> NYTProf chunks.
 *
 * A span decoder describes its "kinds" once (a descriptor: name, source
 * file, line; or a run-time name that borrows a descriptor's file and line),
 * then hands over each thread's spans in COMPLETION order (a span is
 * reported when it ends, children before their parent), exactly as a
 * block profiler's file stores them.  The folder rebuilds the nesting the way
 * that profiler's own reader does (a list of current roots; a new span adopts
 * the last root if it begins before that root ends, then every earlier root
 * it does not begin after) and emits, per thread:
 *
 *   PID_START, NEW_FID (a file, the first time it is used), one TIME_LINE per
 *   span at its kind's line carrying the span's exclusive ns (split over
 *   several TIME_LINEs when it exceeds an I32), SUB_INFO for every sub used,
 *   SUB_CALLERS per (caller, callee) with exact count, inclusive, exclusive
 *   and recursive time (seconds) and recursion depth, PID_END.
 *
 * Sub names: a kind name that contains "::" is kept as it is; any other name
 * is put in package "main", e.g. "main::leaf", whatever its thread, so a
 * block's sub sums its spans over every thread (as a block profiler's per-name
 * statistics do).  Two kinds with the same resulting name are one sub, whose
 * SUB_INFO file and line are the first such kind's in every thread.  Each
 * thread has its own root sub "<package>::RUNTIME" (pb_spans_thread.package):
 * the caller of its top-level spans, and the outermost frame of its call
 * events (SUB_RETURNs), so call stacks and flame graphs keep threads apart.
 *
 * Memory grows with kinds, subs, edges and the roots the rebuild keeps open
 * (plus a few bytes per distinct edge below each root), never with the number
 * of nested spans.  Times are integer ns throughout (ticks_per_sec = 1e9).
 * Strings, files and fids, subs and edges (both per thread), the stack trie
 * and the TIME_LINE split are the profile model's (model.h).
 */
#ifndef PB_FOLD_SPANS_H
#define PB_FOLD_SPANS_H

#include "options.h"
#include "samples.h"

typedef struct pb_spans pb_spans;

/* Largest nesting the folder accepts (a block profiler's reader: 254 levels). */
#define PB_SPANS_MAX_DEPTH 254

pb_spans *pb_spans_new(pb_sink *sink, const pb_options *opt, pb_error *err);
void pb_spans_free(pb_spans *f);

/* Also hand every thread's span stacks to `stacks` (collapsed output): when
 * a thread ends, one sample per distinct stack (root first ... span last),
 * ids innermost first, weight = the exclusive ns of the spans on that stack,
 * thread key = the thread id.  Stacks are kept per open root as distinct
 * paths below it, re-keyed when a parent adopts the root, so memory grows
 * with distinct stacks, not with spans.  NULL (the default): chunks only. */
void pb_spans_set_stacks(pb_spans *f, pb_sample_sink *stacks);

/* Register a kind; *key receives its dense id (0..). */
pb_status pb_spans_kind(pb_spans *f, pb_str name, pb_str file, uint32_t line, uint32_t *key);
/* The kind for run-time name `name`: found by name (across threads), else a
 * new kind with that name and base_key's file and line. */
pb_status pb_spans_dynamic_kind(pb_spans *f, pb_str name, uint32_t base_key, uint32_t *key);

typedef struct {
    uint64_t tid;
    uint32_t pid;            /* PID_START/PID_END pid */
    uint32_t ppid;
    double start_time;       /* PID_START / PID_END time (seconds) */
    double end_time;
    const char *package;     /* the thread's package: its root sub <package>::RUNTIME */
} pb_spans_thread;

pb_status pb_spans_thread_begin(pb_spans *f, const pb_spans_thread *t);
/* One span, in completion order; offset = where its record starts (errors). */
pb_status pb_spans_span(pb_spans *f, uint32_t key, uint64_t begin_ns, uint64_t end_ns, uint64_t offset);
/* Every span reported so far is final (a decoder whose spans nest by
 * construction, open and close events, calls it when its open stack
 * empties): the current roots are booked as called by the thread's RUNTIME
 * and released, so memory stays bounded by one root's subtree rather than
 * growing with top-level spans.  Nothing happens while stacks are kept
 * (pb_spans_set_stacks). */
pb_status pb_spans_seal(pb_spans *f);
/* Flush the thread: SUB_INFO, SUB_CALLERS, statistics ATTRIBUTEs, PID_END. */
pb_status pb_spans_thread_end(pb_spans *f);

/* Statistics of the thread last ended (also sent as ATTRIBUTEs). */
typedef struct {
    uint64_t spans;          /* spans folded */
    uint64_t top_level;      /* spans left as roots */
    uint32_t max_depth;      /* levels, a root alone = 1 */
} pb_spans_stats;
void pb_spans_last_stats(const pb_spans *f, pb_spans_stats *st);

/* A kind's name (NUL-terminated, valid until pb_spans_free). */
const char *pb_spans_kind_name(const pb_spans *f, uint32_t key, size_t *len);

#endif
