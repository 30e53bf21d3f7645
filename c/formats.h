/* formats.h - the table of formats (c/formats.c).
 *
 * One row per format: what detection, the driver, info and formats() know
 * of it.  Rows are indexed by pb_format (pb.h); pb_format_get() returns
 * NULL for PB_FMT_UNKNOWN and out-of-range values.
 */
#ifndef PB_FORMATS_H
#define PB_FORMATS_H

#include "pb.h"
#include "format_row.h" /* pb_format_row and its fields' values */

struct pb_sample_sink; /* samples.h */

/* ---- every decoder's entry points ------------------------------------------
 * Each c/read_<format>.c defines its decoders and its row below lists them;
 * nothing else calls them by name (the driver dispatches).  A decoder whose
 * header formats.c includes for its sniffer or its run hooks (read_tachyon.h,
 * read_pynytprof.h, read_statprofiler.h) declares them there, and never
 * includes this file: the
 * table sits above the decoders, which read their row through the sink
 * (format_row.h), so no include goes back up.  Every decoder is
 * built: what a missing optional library prevents is reported by the
 * decoder itself (codecs.h).
 *
 * A fold decoder (pb_fold_decoder, fold_samples.h) is a format's one entry:
 *     extern const struct pb_fold_decoder pb_<format>_decoder;
 * its row names it (.decoder) and the driver makes chunks of it through the
 * generic fold (pb_fold_decode) or replays its samples into a stack target
 * (pb_sample_decode): Tachyon, StatProfiler, V8, pprof, pstats, perf,
 * callgrind, folded, and the span formats EasyProfiler and speedscope,
 * whose chunks come from the span fold (fold_spans.h) when the decoder says
 * so (cfg.run_spans: the driver then calls it).  A format whose profile may
 * span several files (its row's run) reads such a run through the same
 * entry: the driver hands it no source and the files in
 * pb_options.run_paths.  NYTProf's chunk stream and Pynytprof's chunk entry
 * (which fills the model, model.h) are one entry each: the driver takes
 * their stacks from their chunks (chunk_stacks.h, pb_chunks_as_samples: a
 * row that yields stacks with no stack entry).
 *
 * A chunk decoder reads src from its start (decoders read and check their
 * own magic), sends chunks to sink, and returns PB_OK or fills err:
 *     pb_status pb_read_<format>(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
 * (Pynytprof's is declared in read_pynytprof.h.)
 */
/* ---- chunk decoders ------------------------------------------------------- */
pb_status pb_read_nytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);

/* ---- fold decoders: what each delivers to a sample sink -------------------
 * Tachyon: thread keys are dense indices (0..) in order of first
 * appearance; thread() is called before a thread's first sample with
 * pid = key + 1, ppid 0 and label = thread id (or "tid/interpreter_id").
 * EasyProfiler: span stacks, weight = exclusive ns (fold_spans.h); its
 * chunks and stacks: the span fold (cfg.run_spans, and no run).
 * NYTProf, Pynytprof (no stack entry: the driver's pb_chunks_as_samples()
 * over their chunks): the profile's call events (SUB_RETURN) as stacks, as
 * nytprofcalls builds them (without call events: one-frame stacks of each
 * sub's exclusive time); weights in ns (ATTRIBUTE sample_weight_unit=ns),
 * one thread keyed 0 (the first PID_START's pid).
 * StatProfiler (read_statprofiler.h): one file, thread key 0 (thread()
 * announced with the real pid); a run, each process a thread keyed 1, 2,
 * ... (parents first; pb_statprofiler_files); the op names in
 * sample_tags(); to chunks, max_statements bounds the TIME_LINEs its
 * samples' weights split into (its pb_fold_config.split).
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
 * label = its name; weights ns (time units) or as written (bytes, none);
 * its chunks: the span fold when every chosen profile is evented (its
 * prepare() keeps cfg.run_spans after the first pass), else the sample fold. */
extern const struct pb_fold_decoder pb_easyprofiler_decoder;
extern const struct pb_fold_decoder pb_v8_decoder;
extern const struct pb_fold_decoder pb_pprof_decoder;
extern const struct pb_fold_decoder pb_perf_decoder;
extern const struct pb_fold_decoder pb_folded_decoder;
extern const struct pb_fold_decoder pb_speedscope_decoder;
/* call-graph decoders (PB_YIELDS_GRAPH): frames, then graph_func/graph_edge
 * (samples.h) on thread key 0 (pid 1), no samples; pstats: costs in ns
 * (sample_weight_unit=ns), ATTRIBUTE call_graph "exact" or "sampled". */
extern const struct pb_fold_decoder pb_pstats_decoder;
/* callgrind: thread keys = its thread: values (pid = key + 1), costs in
 * units of the event read (ATTRIBUTE graph_cost_unit; not time) */
extern const struct pb_fold_decoder pb_callgrind_decoder;

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


const pb_format_row *pb_format_get(pb_format f);
/* 1 when some format's row says file names no file on disk (fake_file) */
int pb_format_fake_file(pb_str file);
/* the row of fmt, or (PB_FMT_UNKNOWN) the first whose profiles may span
 * several files; NULL when that row has none */
const pb_format_row *pb_format_run_row(pb_format fmt);

/* The titles (titles 1) or names of the formats that yield all of `yields`
 * (0: every format), in the table's order, joined by ", " and, before the
 * last, by `last` ("NYTProf, Tachyon or StatProfiler"), into buf (cut to
 * cap). */
const char *pb_format_list(unsigned yields, int titles, const char *last, char *buf, size_t cap);

/* pb_decode_samples_file (fold_samples.h) for a consumer that needs more
 * of a format than stacks: needs = the PB_YIELDS_* bits its row must have
 * (PB_YIELDS_SAMPLES: real stack samples); a format without them is
 * refused, unsupported, naming what (the output) and the formats that have
 * them. */
pb_status pb_decode_samples_file_for(const char *path, pb_format fmt, const pb_options *opt,
                                     struct pb_sample_sink *ss, const char *what, unsigned needs, pb_error *err);

#endif
