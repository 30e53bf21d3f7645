/* samples.h - the stack-sample layer shared by the sampling formats.
 *
 * Sampling decoders (those whose row yields samples) do not build chunks themselves:
 * they describe frames once (interned to a small integer id) and then hand
 * over samples as arrays of frame ids, innermost first.  Consumers:
 *   - fold_samples.c: samples -> NYTProf chunks (fids, subs, TIME_LINE,
 *     SUB_CALLERS edges) sent to a pb_sink;
 *   - a record writer (outputs.c's table): samples -> its records;
 *   - collapsed stacks (flamegraph.pl input).
 *
 * Memory in every consumer grows with unique frames/stacks/edges, never with
 * the number of samples.
 */
#ifndef PB_SAMPLES_H
#define PB_SAMPLES_H

#include "options.h"
#include "format_row.h"
#include "util.h"

typedef enum {
    PB_FRAME_SUB = 0,  /* a function/sub with a source file */
    PB_FRAME_XSUB,     /* native code with no source (a Perl sampler's xsub frame) */
    PB_FRAME_MAIN,     /* top-level code of a file (a Perl sampler's main frame) */
    PB_FRAME_EVAL,     /* string-eval code, file "(eval N)" */
    PB_FRAME_SYNTHETIC /* a sampler's own "~" frames: <GC>, <native>, ... */
} pb_frame_kind;

typedef struct {
    pb_frame_kind kind;
    pb_str package;     /* "pkg::mod" ("" for none) */
    pb_str name;        /* "Class::method", "<GC>", "__ANON__"; sub name = package::name */
    pb_str file;        /* source file as recorded ("" for none) */
    int32_t line;       /* line executing in this frame (0/-1 unknown) */
    int32_t first_line; /* first line of the function (0/-1 unknown) */
    pb_str own;         /* the source tool's own name for the function, shown by the
                         * stack outputs (outputs.c's stack targets): CPython's
                         * qualname ("Thread.run", "<module>"), a span format's block
                         * name ("leaf", "ns::C::f"); empty (len 0): package::name,
                         * as for Perl.  nytprof.out always shows package::name. */
    pb_str verbatim;    /* the frame exactly as the source's own stack line wrote
                         * it (folded stacks: "file.py:func:12", escapes and
                         * all), written back unchanged by the collapsed writer
                         * (a byte that is not UTF-8 as \xNN), so folded in,
                         * folded out keeps the input's lines; len 0: none */
    /* Where the source's machine code puts it (a profile.proto Location; zero where
     * not known, and every consumer but the writer of that target ignores them):
     * address, mapping = an id from the sink's mapping() (0: none), and
     * place, PB_PLACE_*. */
    uint64_t address;
    uint32_t mapping;
    uint32_t place;
    pb_str sys_name;    /* the source's system name of the function (a Location's
                         * Function.system_name: a mangled C++ name); len 0: as shown */
} pb_frame;
enum {
    PB_PLACE_INLINED = 1, /* inlined into the next outer frame of each stack it is in (the two are
                           * Lines of one Location) */
    PB_PLACE_ADDRESS = 2  /* the address is all the source knows (a Location without Lines): the
                           * frame's name is its address */
};

/* A binary or library the samples' addresses lie in (a profile.proto Mapping) */
typedef struct {
    uint64_t start, limit, offset;
    pb_str file, build_id;
    unsigned flags; /* PB_MAP_*: what the profile resolved for it */
} pb_mapping;
enum { PB_MAP_FUNCTIONS = 1, PB_MAP_FILENAMES = 2, PB_MAP_LINES = 4, PB_MAP_INLINES = 8 };

/* The value columns of a source that records several per sample (a profile.proto's
 * sample_type, "samples/count" beside "cpu/nanoseconds"; a heap profile's
 * four), and what one period of its sampling is */
typedef struct {
    const pb_str *type, *unit; /* n each */
    uint32_t n;
    uint32_t dflt;             /* the default column (UINT32_MAX: none named) */
    pb_str period_type, period_unit; /* len 0: none */
    int64_t period;
} pb_sample_columns;

/* A sample's label as the source records it: a text, or a number with its
 * unit (num_unit len 0: none) */
typedef struct {
    pb_str key, str, num_unit;
    int64_t num;
    int is_num;
} pb_label;

/* ---- call graphs: exact facts of a tracing profiler (PB_YIELDS_GRAPH) ----
 * A call-graph source has no stacks: it reports, per thread, each
 * function's totals and each caller edge's, as the profiler counted them.
 * Costs are in the source's weight unit (as sample weights: ns when the
 * source says sample_weight_unit=ns, else what ATTRIBUTE graph_cost_unit
 * names: "Ir" instructions are not time). */
#define PB_GRAPH_ROOT UINT32_MAX /* an edge's caller: called from outside the profile */
#define PB_STACK_ID_MAX (1u << 22) /* sample_stack_id: the stack ids a consumer keys on (a table by id) */
typedef struct {
    uint32_t frame;     /* the function: a frame id (its file, its def line as line) */
    uint64_t nc, cc;    /* calls; primitive calls (those not made while it was already running) */
    uint64_t excl, incl; /* its own cost; with its callees' (outermost activations only) */
} pb_graph_func;
typedef struct {
    uint32_t caller;    /* frame id, or PB_GRAPH_ROOT */
    uint32_t callee;    /* frame id */
    uint32_t line;      /* the call site's line in the caller (0: not known) */
    uint64_t nc, cc;    /* calls on this edge; those of them that were primitive */
    uint64_t excl, incl; /* the callee's own cost in these calls; with its callees' */
} pb_graph_edge;

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
    /* Optional (NULL: not offered; the producer calls sample()): sample()
     * with the stack named by the producer, for a producer whose stacks are
     * the nodes of a tree it keeps (a call tree whose node a sample names:
     * the node is its stack).  Within one decode, two calls with the same stack_id carry the
     * same ids and depth, so a consumer may key what it keeps for a stack on
     * stack_id (below PB_STACK_ID_MAX; others it takes as sample()) instead
     * of comparing or hashing the frames.  A filter leaves it NULL unless it
     * passes it on unchanged. */
    pb_status (*sample_stack_id)(pb_sample_sink *self, uint64_t thread_key, uint32_t stack_id,
                                 const uint32_t *ids, uint32_t depth, uint64_t weight, uint64_t timestamp);
    /* Text that is not a sample: sections, eval source, metadata.  kind is
     * "section_start", "section_end", "eval_source", "metadata"; n is the
     * eval number for eval_source. */
    pb_status (*note)(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n);
    /* End of input: flush everything. */
    pb_status (*finish)(pb_sample_sink *self);
    /* Optional (NULL: not wanted): one span of a span format (PB_YIELDS_SPANS:
     * block), in completion order, as the span fold meets it: the frame id
     * of its sub, begin and end in ns.  The thread's stacks still follow as
     * samples when the thread ends. */
    pb_status (*span)(pb_sample_sink *self, uint64_t thread_key, uint32_t frame, uint64_t begin_ns,
                      uint64_t end_ns);
    /* Optional (NULL: not wanted): what the source records about the next
     * sample besides its stack, called just before that sample() by a
     * decoder that has it: op = the instruction executing in the
     * innermost frame (a CPython sampler's opcode name, files made with
     * --opcodes; a Perl sampler's op name; len 0: none); status = the
     * thread's state flags as comma-separated names
     * ("has_gil,on_cpu,main_thread"; len 0: no flag set; ptr NULL: the
     * source records no thread state).  Both stay valid only
     * during the call. */
    pb_status (*sample_tags)(pb_sample_sink *self, pb_str op, pb_str status);
    /* Optional (NULL: not wanted): the next sample's timestamp in the fold's
     * ticks (pb_fold_config.ticks_per_sec, as the decoder gives a fold its
     * samples), called just before that sample() by a decoder whose fold
     * ticks are not µs: the sample tee (sample_tee.h) hands sample()'s µs to
     * the writer and these ticks to the fold, in one decode. */
    pb_status (*sample_ticks)(pb_sample_sink *self, uint64_t ticks);
    /* Optional (NULL: not wanted), set by a consumer that sums stacks but
     * counts the samples too (the fold of a sink that only counts chunks:
     * info; fold_samples.h sums_counted): called just before a summed
     * sample() by a decoder that sums for it: that sample stands for n
     * samples of timestamp 0, each of a weight > 0 that alone fills one
     * TIME_LINE.  A decoder that cannot say so sends every sample. */
    pb_status (*sample_sum)(pb_sample_sink *self, uint64_t n);
    /* Optional (NULL: not wanted), set by the sample tee (sample_tee.h) for
     * a consumer that sets each_tick: called just before a sample() that a
     * decoder sends on its own only for each_tick (below), where it would
     * otherwise have summed it into the sample before (a sampler's REPEAT
     * run).  The tee's fold then takes the run as one sample, as the chunk
     * path gives it: the weights summed, the last one's timestamp. */
    pb_status (*tick_joins)(pb_sample_sink *self);
    /* Optional (NULL: not wanted): how the source's own stack lines name a
     * thread, after thread() announced it: the root frames written before
     * its stacks, exactly as written (folded stacks: "tid:5081",
     * "pid:7;tid:1"; len 0: its lines have none).  The collapsed writer
     * writes them instead of its "tid:<label>".  Valid only during the call. */
    pb_status (*thread_root)(pb_sample_sink *self, uint64_t key, pb_str root);
    /* Optional (NULL: not wanted), from a source with several value
     * columns (profile.proto): columns() once before any sample; mapping() for each
     * binary (*id: what frames' mapping then names, 1..); sample_values()
     * just before each sample(): all its values, one per column, and its
     * labels as recorded (the source's thread labels among them).  A source
     * that offers them also sends the samples whose weight (the chosen
     * column's value) is 0 when another of their values is not.  Every
     * pointer stays valid only during the call. */
    pb_status (*columns)(pb_sample_sink *self, const pb_sample_columns *c);
    pb_status (*mapping)(pb_sample_sink *self, const pb_mapping *m, uint32_t *id);
    pb_status (*sample_values)(pb_sample_sink *self, const int64_t *values, uint32_t n, const pb_label *labels,
                               uint32_t nlabels);
    /* Optional (NULL: the consumer takes stacks only, and a call-graph
     * source is refused for it: formats.c), from a call-graph source
     * (PB_YIELDS_GRAPH, formats.h), after thread() and the frames they
     * name, in any order: graph_func() once per (thread, function),
     * graph_edge() once per (thread, caller, callee, call-site line),
     * graph_line() per (thread, function, line) with the cost spent on
     * that line where the source knows it (else the fold puts a function's
     * excl on its def line).  No sample() is called. */
    pb_status (*graph_func)(pb_sample_sink *self, uint64_t thread_key, const pb_graph_func *g);
    pb_status (*graph_edge)(pb_sample_sink *self, uint64_t thread_key, const pb_graph_edge *g);
    pb_status (*graph_line)(pb_sample_sink *self, uint64_t thread_key, uint32_t frame, uint32_t line, uint64_t cost);
    pb_error *err;
    void *ctx;
    /* Optional: the chunk consumer's cleanup table when these calls can
     * reach one that may never return (see pb_cleanups in chunk.h). */
    pb_cleanups *cleanups;
    /* Set (1) in its table by a consumer whose result depends only on each
     * distinct stack's summed weight and on the order stacks are first
     * seen: never on a sample's timestamp, on how many samples there were,
     * or on their order otherwise (the stack
     * writers).  A decoder may then hand over each distinct stack once, its
     * weight summed, in the order of its first sample and with that
     * sample's timestamp (a reader of a timed format does).  0, the default: every
     * sample, in order, with its own timestamp (the fold, a timeline, a
     * writer of sample records).  A pass-through filter copies its next's.
     * (a profile.proto writer takes a duration from the first and last timestamps
     * only for weights that are sample counts: a decoder that sums sends
     * ns weights, ATTRIBUTE sample_weight_unit=ns.) */
    int sums_stacks;
    /* Set by pb_sample_sink_init and pb_sample_noframe (below) only. */
    uint32_t noframe;
    /* A filter's downstream sink, for the pb_sample_pass_* calls below (NULL
     * in a consumer that ends the chain). */
    pb_sample_sink *next;
    /* The producer's format, typed (format_row.h): set on every sink of the
     * chain (through next) by the driver before the decoder runs
     * (pb_sample_sink_set_row); NULL when no format's decoder feeds the sink
     * (a test's direct call, a merge's own replay).  Consumers read its
     * fields (yields, language, ...), never the format's name. */
    const struct pb_format_row *row;
    /* Set by a consumer that wants one sample() per recorded sample where
     * the source gives each its own time (a timeline: the timed stack targets): a
     * decoder that would send a run of samples as one weighted sample (a
     * sampler's REPEAT run) then sends each with weight 1 and its timestamp.
     * Filters copy it from their next sink. */
    uint32_t each_tick;
    /* Set by a consumer that writes a stack the source cut at its depth
     * limit as the source holds it (a writer of the source's own records);
     * 0, the default: a decoder that can tell such a stack hangs it under a
     * pseudo-frame that says so (main::(truncated)), so it does not become a
     * root of its own.  Filters copy it from their next sink. */
    uint32_t keeps_cut_stacks;
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

/* The producer's row on ss and every sink after it (next) */
static inline void pb_sample_sink_set_row(pb_sample_sink *ss, const struct pb_format_row *row)
{
    for (; ss; ss = ss->next)
        ss->row = row;
}

/* The facts a consumer takes from the header attributes, typed.  Keys:
 * sample_interval_us, clock ("cpu..." or wall), basetime (seconds since
 * the epoch), profile_duration_sec, source_format (then the producer's row
 * says whether its weights are ns already: PB_YIELDS_NS_WEIGHTS, an
 * a span format's span time), sample_weight_unit ("ns": a merged profile, see
 * merge.h).  Zero where not given. */
typedef enum {
    PB_WEIGHT_SAMPLES = 0, /* sample counts: ticks of the sampling interval (no sample_type, or type "samples") */
    PB_WEIGHT_TIME,        /* a time unit: the decoder gives ns (sample_weight_unit ns) */
    PB_WEIGHT_OTHER        /* anything else (bytes, a count of objects): never time */
} pb_weight_kind;

typedef struct {
    uint64_t interval_ns; /* sample_interval_us x 1000 */
    uint64_t basetime;
    uint64_t duration_ns; /* profile_duration_sec, when in (0, 1e9) s */
    int cpu;              /* the clock is CPU time */
    int weight_ns;        /* weights are ns, not sample counts */
    /* sample_type ("type/unit", as profile.proto's: the one the decoder reads), as
     * text, what it counts (pb_weight_kind_of), and period x period_type
     * in ns when that is a time (a profile.proto's sampling interval) */
    char sample_type[96];
    pb_weight_kind kind;
    uint64_t period_ns;
    uint64_t period_raw, period_unit_ns;
} pb_sample_facts;

/* ns per unit of a time unit ("nanoseconds", "ns", "microseconds", "us",
 * "milliseconds", "ms", "seconds", "s"); 0 for any other unit. */
uint64_t pb_time_unit_ns(const char *unit);
/* What the weights of sample type `type_unit` ("type/unit"; NULL or "":
 * none, the weights are sample counts) are, and into unit (cap bytes) the
 * word that names them in messages: "ns" (a time), "samples", or the
 * type's own unit ("bytes", "count").  Two inputs' weights add only when
 * both are time (ns, or samples x an interval) or both are the same unit. */
pb_weight_kind pb_weight_kind_of(const char *type_unit, char *unit, size_t cap);

/* Exact arithmetic where weights meet intervals (merge, the stack targets,
 * the nytprof fold): *out = a x b, or *total += add, when the result stays
 * at most INT64_MAX (profile.proto's values are int64; NYTProf's times, JSON's
 * numbers and a merge's ns must not wrap either); otherwise a `limit` error
 * "<what> of a x b <unit> does not fit 63 bits" and no change. */
pb_status pb_checked_mul(pb_error *err, uint64_t a, uint64_t b, const char *what, const char *unit, uint64_t *out);
pb_status pb_checked_add(pb_error *err, uint64_t *total, uint64_t add, const char *what, const char *unit);
/* sample_interval_us as ns, saturated at UINT64_MAX (which the checks above
 * then refuse for any sample) */
uint64_t pb_interval_us_to_ns(uint64_t us);

/* Weights of different units never add (merge, diff): each input's facts
 * are checked, at its first sample, against the first input's.  Time (ns,
 * or samples x an interval) adds to time; another unit (bytes, count) only
 * to the same unit.  Zero the struct before the first input. */
typedef struct {
    int have;             /* the first input's unit is known */
    pb_weight_kind kind0; /* PB_WEIGHT_TIME or PB_WEIGHT_OTHER */
    char unit0[96], type0[96];
} pb_units;
/* PB_OK, or a usage error in err naming both units: "its weights are
 * bytes (inuse_space/bytes), those of <first> are ns (cpu/nanoseconds):
 * weights of different units never add ..." */
pb_status pb_units_check(pb_units *u, const pb_sample_facts *f, const char *first, pb_error *err);

/* A filter sink that runs pb_units_check for each input before its first
 * sample, and passes every call to next: for a consumer that reads several
 * inputs one after the other (the collapsed diff). */
typedef struct {
    pb_sample_sink ss;
    pb_sample_facts facts;
    pb_units units;
    int checked;
    const char *first;
} pb_units_filter;
void pb_units_filter_init(pb_units_filter *g, pb_sample_sink *next, const char *first, pb_error *err);
/* the next input begins */
void pb_units_filter_next_input(pb_units_filter *g);

/* Take one attribute that reached sink `from` (whose row says what its
 * producer's weights are) into *f: 1 when the key is one of the above, else
 * 0 (sample_type, period and period_type are recorded too, but give 0: other
 * consumers may want them as well). */
int pb_sample_facts_take(pb_sample_facts *f, const pb_sample_sink *from, const char *key, pb_str value);

/* The attribute's value as a NUL-terminated string in buf (cut to cap - 1 bytes). */
const char *pb_sample_attr_text(pb_str value, char *buf, size_t cap);

/* What nytprofhtml's page header names, for a format whose files keep no
 * date: ATTRIBUTE application = file (when not ""), and basetime = the
 * date of src's file (pb_src_mtime: its gzip header's, or its mtime), which
 * stands for the run's (when it has none: "0" with always, else no
 * basetime). */
pb_status pb_sample_file_header(pb_sample_sink *out, const char *file, pb_source *src, int always);

/* A sample that caught no frame still counts, as the real readers count it:
 * when *depth is 0, its weight goes to the pseudo-sub main::(no frame) (a
 * synthetic frame, so in the fake fid of synthetic frames), interned through
 * ss->frame() the first time (its id kept in the sink after that), and
 * *ids, *depth become that one frame.  Otherwise nothing. */
pb_status pb_sample_noframe(pb_sample_sink *ss, const uint32_t **ids, uint32_t *depth);

/* 1 when a frame of file[0..len) is one of the profiler's own (row->own_frames,
 * format_row.h; row NULL: none is) */
int pb_sample_own_frame(const struct pb_format_row *row, const char *file, size_t len);

/* A filter's calls that hand their arguments to ss->next unchanged (thread
 * and finish skip a next sink that has none). */
pb_status pb_sample_pass_frame(pb_sample_sink *ss, const pb_frame *fr, uint32_t *id);
pb_status pb_sample_pass_thread(pb_sample_sink *ss, uint64_t key, uint32_t pid, uint32_t ppid, const char *label);
pb_status pb_sample_pass_note(pb_sample_sink *ss, const char *kind, pb_str a, pb_str b, uint32_t n);
pb_status pb_sample_pass_sample_tags(pb_sample_sink *ss, pb_str op, pb_str status);
pb_status pb_sample_pass_thread_root(pb_sample_sink *ss, uint64_t key, pb_str root);
pb_status pb_sample_pass_columns(pb_sample_sink *ss, const pb_sample_columns *c);
pb_status pb_sample_pass_mapping(pb_sample_sink *ss, const pb_mapping *m, uint32_t *id);
pb_status pb_sample_pass_sample_values(pb_sample_sink *ss, const int64_t *values, uint32_t n, const pb_label *labels,
                                       uint32_t nlabels);
pb_status pb_sample_pass_finish(pb_sample_sink *ss);
pb_status pb_sample_pass_graph_func(pb_sample_sink *ss, uint64_t thread_key, const pb_graph_func *g);
pb_status pb_sample_pass_graph_edge(pb_sample_sink *ss, uint64_t thread_key, const pb_graph_edge *g);
pb_status pb_sample_pass_graph_line(pb_sample_sink *ss, uint64_t thread_key, uint32_t frame, uint32_t line,
                                    uint64_t cost);

/* ---- max_threads for every stack target -----------------------------------
 * A filter in front of a sample consumer (formats.c puts one before every
 * stack target): the thread keys it sees, through one pb_index; the key
 * past max threads is a `limit` error "more than max_threads (N) threads"
 * (a target may write one file per thread: its row says so). */
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

/* ---- a stack target's writer (outputs.c's STACKS rows) ---------------------
 * The first member of each writer on an open stream that consumes samples
 * (each STACKS row's): its
 * sink (ctx: the writer), the stream it writes, the error record and the
 * profile's title (the driver's: the input's base name or "merged
 * profile"; NULL: "profile").  pb_stack_writer_new allocates a writer of
 * size bytes (zeroed) and sets them up, calls' sink with them; NULL on
 * out-of-memory (err filled).  The table reaches every such writer's sink
 * through pb_stack_writer_sink and frees it with pb_stack_writer_free:
 * teardown (NULL: none) frees what the writer holds besides these, then
 * the rest goes (w NULL: nothing). */
typedef struct pb_stack_writer pb_stack_writer;
struct pb_stack_writer {
    pb_sample_sink ss;
    FILE *out;
    pb_error *err;
    char *title;
    void (*teardown)(pb_stack_writer *w);
};
pb_stack_writer *pb_stack_writer_new(size_t size, const pb_sample_sink *calls, void (*teardown)(pb_stack_writer *w),
                                     FILE *out, const char *title, pb_error *err);
static inline pb_sample_sink *pb_stack_writer_sink(pb_stack_writer *w) { return &w->ss; }
void pb_stack_writer_free(pb_stack_writer *w);

#endif
