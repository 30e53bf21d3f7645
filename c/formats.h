/* formats.h - the table of formats (c/formats.c).
 *
 * One row per format: what detection, the driver, info and formats() know
 * of it.  Rows are indexed by pb_format (pb.h); pb_format_get() returns
 * NULL for PB_FMT_UNKNOWN and out-of-range values.
 */
#ifndef PB_FORMATS_H
#define PB_FORMATS_H

#include "pb.h"

struct pb_sample_sink; /* samples.h */

/* ---- every decoder's entry points ------------------------------------------
 * Each c/read_<format>.c defines its decoders and its row below lists them;
 * nothing else calls them by name (the driver dispatches).  Every decoder is
 * built: what a missing optional library prevents is reported by the
 * decoder itself (codecs.h).
 *
 * A chunk decoder reads src from its start (decoders read and check their
 * own magic), sends chunks to sink, and returns PB_OK or fills err:
 *     pb_status pb_read_<format>(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
 * A stack decoder replays a file into any pb_sample_sink (samples.h) and
 * calls its finish():
 *     pb_status pb_read_<format>_samples(pb_source *src, const pb_options *opt, pb_sample_sink *out,
 *                                        pb_error *err);
 */
/* ---- chunk decoders ------------------------------------------------------- */
pb_status pb_read_nytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_pynytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_easyprofiler(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_tachyon(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_statprofiler(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_v8(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_pprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_perf(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_folded(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_speedscope(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_pstats(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_callgrind(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);

/* ---- stack decoders -------------------------------------------------------
 * Tachyon: thread keys are dense indices (0..) in order of first
 * appearance; thread() is called before a thread's first sample with
 * pid = key + 1, ppid 0 and label = thread id (or "tid/interpreter_id").
 * EasyProfiler: span stacks, weight = exclusive ns (fold_spans.h).
 * NYTProf, Pynytprof: the profile's call events (SUB_RETURN) as stacks, as
 * nytprofcalls builds them (without call events: one-frame stacks of each
 * sub's exclusive time); weights in ns (ATTRIBUTE sample_weight_unit=ns),
 * one thread keyed 0 (the first PID_START's pid); pb_chunks_as_samples().
 * StatProfiler: one file, thread key 0 (thread() announced with the real
 * pid), no op names.
 * V8: a .cpuprofile's samples, weights in ns (sample_weight_unit=ns), one
 * thread keyed 0 (pid 1, label "main"), timestamps in µs.
 * pprof: a profile.proto's samples of one sample type (weights ns for a
 * time unit), threads from the thread/tid/pid labels.
 * perf: `perf script` text, the samples of one event, weight the period
 * (ns for cpu-clock/task-clock: sample_weight_unit=ns) or 1; thread keys 0..
 * per (comm, pid, tid), pid = key + 1; timestamps µs.
 * folded: one sample per line, weight as written (two-column lines: the
 * column the sample type picks), timestamps 0; thread keys 0.. by root
 * frames (tid:, pid:, ...), pid = key + 1, each announced with its root
 * frames as written (thread_root); frames carry their text (verbatim).
 * speedscope: each profile a thread keyed by its index, pid = key + 1,
 * label = its name; weights ns (time units) or as written (bytes, none). */
pb_status pb_read_tachyon_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_easyprofiler_stacks(pb_source *src, const pb_options *opt, struct pb_sample_sink *out,
                                      pb_error *err);
pb_status pb_read_nytprof_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_pynytprof_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_statprofiler_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out,
                                       pb_error *err);
pb_status pb_read_v8_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_pprof_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_perf_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_folded_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_speedscope_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out,
                                     pb_error *err);
/* call-graph decoders (PB_YIELDS_GRAPH): frames, then graph_func/graph_edge
 * (samples.h) on thread key 0 (pid 1), no samples; pstats: costs in ns
 * (sample_weight_unit=ns), ATTRIBUTE call_graph "exact" or "sampled". */
pb_status pb_read_pstats_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
/* callgrind: thread keys = its thread: values (pid = key + 1), costs in
 * units of the event read (ATTRIBUTE graph_cost_unit; not time) */
pb_status pb_read_callgrind_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out,
                                    pb_error *err);

/* ---- sniffers that live with their decoders --------------------------------
 * read_pprof.c: a pprof profile.proto (gzipped or not) starts p[0..len).
 * read_folded.c: 1 when every non-blank line of p[0..len) is "stack
 * weight" (whole: p is the whole input, so its last line counts even
 * without a newline; else a line cut at len is only checked for NULs, and a
 * first line longer than len must be 16 or more frames).
 * read_perf.c: 1 when p[0..len) starts `perf script` text (a "# ========"
 * header block, or sample headers and frame lines; whole as above). */
int pb_pprof_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);
int pb_folded_sniff(const unsigned char *p, size_t len, int whole);
int pb_perf_sniff(const unsigned char *p, size_t len, int whole);
/* read_pstats.c: a marshal dict whose first key is a pstats key */
int pb_pstats_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);
/* read_callgrind.c: "# callgrind format" or a callgrind header line first */
int pb_callgrind_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);

/* c/chunk_stacks.c: the stacks of a chunk decoder's stream (call events),
 * for a format whose stacks are its chunks' (NYTProf, Pynytprof) */
pb_status pb_chunks_as_samples(pb_status (*dec)(pb_source *, const pb_options *, pb_sink *, pb_error *),
                               pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);

/* the formats' ids (pb_format, pb.h): the rows of formats[] in c/formats.c, in order */
enum {
    PB_FMT_NYTPROF = 1,
    PB_FMT_PYNYTPROF,
    PB_FMT_EASYPROFILER,
    PB_FMT_TACHYON,
    PB_FMT_STATPROFILER,
    PB_FMT_V8,
    PB_FMT_PPROF,
    PB_FMT_SPEEDSCOPE, /* JSON with its schema URL or shape */
    PB_FMT_PSTATS,     /* a marshal dict of a shape */
    PB_FMT_PERF,       /* text */
    PB_FMT_CALLGRIND,  /* text */
    PB_FMT_FOLDED, /* text: the last row, after every binary format */
    PB_FMT_COUNT
};

/* what a format's files can give (pb_format_row.yields) */
enum {
    PB_YIELDS_CHUNKS = 1,  /* a chunk stream (every format) */
    PB_YIELDS_STACKS = 2,  /* stacks with weights for the stack outputs (collapsed, pprof, speedscope, merge) */
    PB_YIELDS_SAMPLES = 4, /* real stack samples with frames and lines: StatProfiler output can carry them */
    PB_YIELDS_SPANS = 8,   /* timed spans (begin, end): speedscope's evented profiles */
    PB_YIELDS_NS_WEIGHTS = 16, /* its stacks' weights are ns already, not samples (ATTRIBUTE source_format
                                * names the format: samples.h, pb_sample_facts_take) */
    PB_READS_GZIP = 32,       /* its decoder reads a gzip-compressed file itself (source.c's gzip view):
                               * the Perl API makes no inflated copy of one (_format_rows' reads_gzip) */
    PB_NO_SUB_LINES = 64,     /* its subs come without definition lines: the presentation filter finds
                               * them in the embedded source (def lines, present.c) */
    PB_YIELDS_GRAPH = 128     /* a call graph with exact counts (pstats, callgrind: the graph_* calls of
                               * the sample sink, samples.h); without PB_YIELDS_STACKS it has no stacks,
                               * and a stack target refuses it.  In a target's consumes: it takes a call
                               * graph as well (its sink has graph_func) */
};

/* What a conversion cannot carry of a format's files (losses() in the Perl
 * API, which counts and words them: Devel::ProfileBridge::_losses_of).  A
 * row lists its own rules; pb_losses_common (outputs.h) those of every
 * format.  Notes are "tag=text" alternatives, one per line: the first tag
 * the target keeps (pb_target.keeps, whole or in part) words it, "*" is the
 * default.  In a text: {how} the matched tag's how; {keepers} the targets
 * that keep the fact whole ("--to A keeps them (how)", "--to A (how) and
 * --to B (how) keep them"), {to_keep} the same without how, {to} their
 * --to list; {where:TAG} how the targets that keep TAG keep it; {attr:NAME}
 * the input's ATTRIBUTE NAME. */
typedef struct {
    const char *what;   /* what is lost: "bookmarks" (NULL ends a list) */
    /* how the input counts it: "attr:NAME" (an ATTRIBUTE's value), "pct:NAME"
     * (a positive % value), "sum:GLOB" / "keys:GLOB" (the sum of / the number
     * of ATTRIBUTEs whose key matches; * any text, # digits), "status:NAME"
     * (the samples of a "k:count,..." histogram with k != 0),
     * "comments:GLOB|GLOB" (COMMENTs that start so), "chunks:TAG" */
    const char *count;
    const char *fact;   /* a target that keeps it whole has no such loss; NULL: none does */
    unsigned flags;     /* PB_LOSS_* */
    const char *notes;
} pb_loss;

enum {
    PB_LOSS_STACKS = 1, /* only the stack outputs (targets that consume stacks) lose it */
    PB_LOSS_LATE = 2    /* listed after the common rules that are not late */
};

typedef struct {
    pb_format format;
    const char *name;   /* as in the API, the CLI and error messages: "tachyon" */
    const char *title;  /* as the profiler calls itself: "Tachyon" */
    /* 1 when p[0..len) (the first up to 4 KB) starts a file of this format;
     * fills info's details.  file_size: UINT64_MAX when unknown. */
    int (*sniff)(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);
    pb_decoder_fn chunks;         /* file -> chunks (pb.h) */
    /* file -> pb_sample_sink (a pb_sample_decoder_fn, fold_samples.h); NULL: no stacks */
    pb_status (*stacks)(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
    unsigned yields;              /* PB_YIELDS_* */
    const char *library;          /* the library a file may need beyond the C library ("zstd"), or NULL */
    /* Optional, for a profile that spans several files: does path name one
     * (1: *paths, *n filled, to be freed with run_free; 0: no; -1: error),
     * how to free that list, and the decoders of such a list.  run_stacks'
     * extra is what a stack consumer offers this format beyond the sample
     * sink (NULL: nothing; StatProfiler: the writer's pb_sp_hooks). */
    int (*run)(const char *path, const pb_options *opt, char ***paths, size_t *n, pb_error *err);
    void (*run_free)(char **paths, size_t n);
    pb_status (*run_chunks)(const char *const *paths, size_t n, const pb_options *opt, pb_sink *sink,
                            pb_error *err);
    pb_status (*run_stacks)(const char *const *paths, size_t n, const pb_options *opt, struct pb_sample_sink *ss,
                            const void *extra, pb_error *err);
    /* the run's files a directory or a template names (for_chunks' files =>),
     * and what they are called in messages ("Devel::StatProfiler traces") */
    pb_status (*run_expand)(const char *spec, char ***paths, size_t *n, pb_error *err);
    const char *run_what;
    /* how its files need `library`: PB_LIB_BUILTIN (always linked: nothing
     * to report), PB_LIB_SOME_FILES (features() lists "<name>-<library>"),
     * PB_LIB_EVERY_FILE (no library, no format); library_note: what is
     * unsupported without it ("compressed Tachyon files") */
    int library_use;
    const char *library_note;
    /* the language of the profiled program's source files ("python", "c",
     * "perl", "js", "go"; "any": folded stacks name any language's files):
     * which files the presentation filter embeds (source_names below,
     * present.c); NULL for NYTProf itself */
    const char *language;
    /* what a conversion cannot carry of its files ({ NULL } ends it) */
    const pb_loss *losses;
    /* the words of its header comment that its sniffer looks for ("Generated
     * by <title>"), or NULL: the presentation filter rewords them ("Written by
     * <title>, converted by ...") so that a converted file does not pass for one */
    const char *banner;
    /* the profiled program's source files, which the presentation filter
     * may embed (present.c, the source policy): what its warning calls them
     * ("Python"), their names' extensions, space-separated (".py .pyw"),
     * and the interpreter a "#!" first line names in a script without an
     * extension ("python"; NULL: none).  NULL names: the row of the first
     * format of the same `language` says; language "any": every row's. */
    const char *source_what;
    const char *source_names;
    const char *source_shebang;
    /* the file names of the profiler's own frames, which the source tool's
     * views drop wherever they sit in a stack (CPython's replay: the frames of
     * profiling/sampling/_sync_coordinator.py, which runs the program): "\n"-
     * separated suffixes of a frame's file name, or NULL.  Its decoder drops
     * them from every stack (pb_format_own_frame) and never takes one for the
     * program. */
    const char *own_frames;
} pb_format_row;

enum { PB_LIB_BUILTIN = 0, PB_LIB_SOME_FILES, PB_LIB_EVERY_FILE };

const pb_format_row *pb_format_get(pb_format f);
/* 1 when a frame of file[0..len) is one of the profiler's own (row->own_frames) */
int pb_format_own_frame(const pb_format_row *row, const char *file, size_t len);
/* the row of fmt, or (PB_FMT_UNKNOWN) the first whose profiles may span
 * several files; NULL when that row has none */
const pb_format_row *pb_format_run_row(pb_format fmt);

/* The titles (titles 1) or names of the formats that yield all of `yields`
 * (0: every format), in the table's order, joined by ", " and, before the
 * last, by `last` ("NYTProf, Tachyon or StatProfiler"), into buf (cut to
 * cap). */
const char *pb_format_list(unsigned yields, int titles, const char *last, char *buf, size_t cap);
/* the targets that carry a call graph ("--to nytprof, --to pstats"), into buf */
const char *pb_graph_targets(char *buf, size_t cap);

/* pb_decode_samples_file (fold_samples.h) with the consumer's extra for the
 * format's run decoder (see run_stacks above).  With an extra and a format
 * that has a run decoder, one file that is not a run is read as a run of
 * one, so the extra reaches it. */
pb_status pb_decode_samples_file_extra(const char *path, pb_format fmt, const pb_options *opt,
                                       struct pb_sample_sink *ss, const char *what, const void *extra, pb_error *err);

#endif
