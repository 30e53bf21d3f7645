/* samples.h - the stack-sample layer shared by the sampling formats.
 *
 * Sampling decoders (Tachyon, StatProfiler) do not build chunks themselves:
 * they describe frames once (interned to a small integer id) and then hand
 * over samples as arrays of frame ids, innermost first.  Consumers:
 *   - fold_samples.c: samples -> NYTProf chunks (fids, subs, TIME_LINE,
 *     SUB_CALLERS edges) sent to a pb_sink;
 *   - write_statprofiler.c: samples -> StatProfiler records;
 *   - collapsed stacks (flamegraph.pl input).
 *
 * Memory in every consumer grows with unique frames/stacks/edges, never with
 * the number of samples.
 */
#ifndef PB_SAMPLES_H
#define PB_SAMPLES_H

#include "pb.h"
#include "util.h"

typedef enum {
    PB_FRAME_SUB = 0,  /* a function/sub with a source file */
    PB_FRAME_XSUB,     /* native code with no source (StatProfiler xsub) */
    PB_FRAME_MAIN,     /* top-level code of a file (StatProfiler main frame) */
    PB_FRAME_EVAL,     /* string-eval code, file "(eval N)" */
    PB_FRAME_SYNTHETIC /* Tachyon "~" frames: <GC>, <native>, ... */
} pb_frame_kind;

typedef struct {
    pb_frame_kind kind;
    pb_str package;     /* "pkg::mod" ("" for none) */
    pb_str name;        /* "Class::method", "<GC>", "__ANON__"; sub name = package::name */
    pb_str file;        /* source file as recorded ("" for none) */
    int32_t line;       /* line executing in this frame (0/-1 unknown) */
    int32_t first_line; /* first line of the function (0/-1 unknown) */
    pb_str own;         /* the source tool's own name for the function, shown by the
                         * stack outputs (pprof, speedscope, collapsed): CPython's
                         * qualname ("Thread.run", "<module>"), EasyProfiler's block
                         * name ("leaf", "ns::C::f"); empty (len 0): package::name,
                         * as for Perl.  nytprof.out always shows package::name. */
} pb_frame;

typedef struct pb_sample_sink pb_sample_sink;
struct pb_sample_sink {
    /* Header facts, before any sample: an ATTRIBUTE-style key/value. */
    pb_status (*attribute)(pb_sample_sink *self, const char *key, pb_str value);
    /* Intern a frame; *id receives a dense id (0..).  The same frame
     * content may be interned more than once; consumers dedupe. */
    pb_status (*frame)(pb_sample_sink *self, const pb_frame *fr, uint32_t *id);
    /* A thread/process appears: key is what samples use; label is its id
     * as text (tid, pid); parent_key is 0 when none.  Optional to call:
     * consumers create threads on first sample too. */
    pb_status (*thread)(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label);
    /* One sample: ids innermost first; weight = number of ticks it stands
     * for; timestamp in the source's unit (µs), 0 if unknown. */
    pb_status (*sample)(pb_sample_sink *self, uint64_t thread_key, const uint32_t *ids, uint32_t depth,
                        uint64_t weight, uint64_t timestamp);
    /* Text that is not a sample: sections, eval source, metadata.  kind is
     * "section_start", "section_end", "eval_source", "metadata"; n is the
     * eval number for eval_source. */
    pb_status (*note)(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n);
    /* End of input: flush everything. */
    pb_status (*finish)(pb_sample_sink *self);
    /* Optional (NULL: not wanted): one span of a span format (EasyProfiler
     * block), in completion order, as the span fold meets it: the frame id
     * of its sub, begin and end in ns.  The thread's stacks still follow as
     * samples when the thread ends. */
    pb_status (*span)(pb_sample_sink *self, uint64_t thread_key, uint32_t frame, uint64_t begin_ns,
                      uint64_t end_ns);
    /* Optional (NULL: not wanted): what the source records about the next
     * sample besides its stack, called just before that sample() by a
     * decoder that has it (Tachyon): op = the instruction executing in the
     * innermost frame (CPython's opcode name, files made with --opcodes; len
     * 0: none); status = the thread's state flags as comma-separated names
     * ("has_gil,on_cpu,main_thread"; len 0: none).  Both stay valid only
     * during the call. */
    pb_status (*sample_tags)(pb_sample_sink *self, pb_str op, pb_str status);
    pb_error *err;
    void *ctx;
    /* Optional: the chunk consumer's cleanup table when these calls can
     * reach one that may never return (see pb_cleanups in chunk.h). */
    pb_cleanups *cleanups;
    /* Set by pb_sample_sink_init and pb_sample_noframe (below) only. */
    uint32_t noframe;
    /* A filter's downstream sink, for the pb_sample_pass_* calls below (NULL
     * in a consumer that ends the chain). */
    pb_sample_sink *next;
};

/* Set up a sink from a constant table of its calls (each consumer keeps one,
 * with designated initializers for the calls above), its context, the error record, and the cleanup table (NULL
 * when none). */
static inline void pb_sample_sink_init(pb_sample_sink *ss, const pb_sample_sink *calls, void *ctx, pb_error *err,
                                       pb_cleanups *cleanups)
{
    *ss = *calls;
    ss->ctx = ctx;
    ss->err = err;
    ss->cleanups = cleanups;
    ss->noframe = UINT32_MAX;
}

/* The facts a consumer takes from the header attributes, typed.  Keys:
 * sample_interval_us, clock ("cpu..." or wall), basetime (seconds since
 * the epoch), profile_duration_sec, source_format (EasyProfiler's weights
 * are ns of span time), sample_weight_unit ("ns": a merged profile, see
 * merge.h).  Zero where not given. */
typedef struct {
    uint64_t interval_ns; /* sample_interval_us x 1000 */
    uint64_t basetime;
    uint64_t duration_ns; /* profile_duration_sec, when in (0, 1e9) s */
    int cpu;              /* the clock is CPU time */
    int weight_ns;        /* weights are ns, not sample counts */
} pb_sample_facts;

/* Exact arithmetic where weights meet intervals (merge, pprof, speedscope,
 * the nytprof fold): *out = a x b, or *total += add, when the result stays
 * at most INT64_MAX (pprof's values are int64; NYTProf's times, speedscope's
 * numbers and a merge's ns must not wrap either); otherwise a `limit` error
 * "<what> of a x b <unit> does not fit 63 bits" and no change. */
pb_status pb_checked_mul(pb_error *err, uint64_t a, uint64_t b, const char *what, const char *unit, uint64_t *out);
pb_status pb_checked_add(pb_error *err, uint64_t *total, uint64_t add, const char *what, const char *unit);
/* sample_interval_us as ns, saturated at UINT64_MAX (which the checks above
 * then refuse for any sample) */
uint64_t pb_interval_us_to_ns(uint64_t us);

/* Take one attribute into *f: 1 when the key is one of the above, else 0. */
int pb_sample_facts_take(pb_sample_facts *f, const char *key, pb_str value);

/* The attribute's value as a NUL-terminated string in buf (cut to cap - 1 bytes). */
const char *pb_sample_attr_text(pb_str value, char *buf, size_t cap);

/* A sample that caught no frame still counts, as the real readers count it:
 * when *depth is 0, its weight goes to the pseudo-sub main::(no frame) (a
 * synthetic frame, so in the fake fid of synthetic frames), interned through
 * ss->frame() the first time (its id kept in the sink after that), and
 * *ids, *depth become that one frame.  Otherwise nothing. */
pb_status pb_sample_noframe(pb_sample_sink *ss, const uint32_t **ids, uint32_t *depth);

/* A filter's calls that hand their arguments to ss->next unchanged (thread
 * and finish skip a next sink that has none). */
pb_status pb_sample_pass_frame(pb_sample_sink *ss, const pb_frame *fr, uint32_t *id);
pb_status pb_sample_pass_thread(pb_sample_sink *ss, uint64_t key, uint32_t pid, uint32_t ppid, const char *label);
pb_status pb_sample_pass_note(pb_sample_sink *ss, const char *kind, pb_str a, pb_str b, uint32_t n);
pb_status pb_sample_pass_sample_tags(pb_sample_sink *ss, pb_str op, pb_str status);
pb_status pb_sample_pass_finish(pb_sample_sink *ss);

/* ---- max_threads for every stack target -----------------------------------
 * A filter in front of a sample consumer (formats.c puts one before every
 * stack target): the thread keys it sees, through one pb_index; the key
 * past max threads is a `limit` error "more than max_threads (N) threads"
 * (a target may write one file per thread: StatProfiler). */
typedef struct {
    pb_sample_sink ss;
    uint32_t max;
    uint64_t *keys;
    size_t n, cap;
    pb_index ix;
    uint64_t last; /* the key of the previous call (most samples repeat it) */
} pb_thread_limit;

pb_sample_sink *pb_thread_limit_init(pb_thread_limit *t, pb_sample_sink *next, uint32_t max, pb_error *err);
void pb_thread_limit_free(pb_thread_limit *t);

/* attribute() and note() for a consumer that has no use for them */
pb_status pb_sample_attribute_ignore(pb_sample_sink *self, const char *key, pb_str value);
pb_status pb_sample_note_ignore(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n);

/* ---- a thread's walk down a stack trie ------------------------------------
 * A consumer that keeps stacks as a trie walks each sample from the root.
 * Consecutive samples of a thread mostly share their outer frames, so the
 * cursor keeps the previous sample's frames and trie path, and the walk of
 * the next starts where the two part:
 *     if (pb_stack_cursor_begin(&t->cur, ids, depth, &m) < 0) -> out of memory
 *     for (j = m; j < depth; j++) t->cur.path[j] = node of ids[depth - 1 - j]
 *                                 under (j ? t->cur.path[j - 1] : the root);
 *     pb_stack_cursor_end(&t->cur, ids, depth);                               */
typedef struct {
    uint32_t *prev; /* the previous sample's ids, innermost first */
    uint32_t *path; /* trie node per depth, root first */
    size_t depth, pcap, hcap;
} pb_stack_cursor;

/* Room for a sample of depth frames; *m = how many outermost frames it
 * shares with the previous sample (path[0 .. *m - 1] hold for it too).
 * 0, or -1 when out of memory. */
static inline int pb_stack_cursor_begin(pb_stack_cursor *c, const uint32_t *ids, uint32_t depth, uint32_t *m)
{
    uint32_t i, lim;
    if (pb_grow((void **)&c->prev, &c->pcap, depth, sizeof *c->prev) < 0 ||
        pb_grow((void **)&c->path, &c->hcap, depth, sizeof *c->path) < 0)
        return -1;
    lim = depth < c->depth ? depth : (uint32_t)c->depth;
    for (i = 0; i < lim && c->prev[c->depth - 1 - i] == ids[depth - 1 - i]; i++)
        ;
    *m = i;
    return 0;
}
/* The sample is walked: it becomes the previous one. */
static inline void pb_stack_cursor_end(pb_stack_cursor *c, const uint32_t *ids, uint32_t depth)
{
    if (depth)
        memcpy(c->prev, ids, depth * sizeof *ids);
    c->depth = depth;
}
static inline void pb_stack_cursor_free(pb_stack_cursor *c) { PB_FREE_ALL(c->prev, c->path); }

#endif
