/* formats.h - the table of formats and the one driver (c/formats.c).
 *
 * One row per format: what detection, the driver, info and formats() know
 * of it.  Rows are indexed by pb_format (format_row.h); pb_format_get()
 * returns NULL for PB_FMT_UNKNOWN and out-of-range values.
 *
 * It declares what c/formats.c defines: the rows' ids, the calls on the
 * table, format detection (pb_detect_*) and the driver (pb_decode_*,
 * pb_decode_samples_*); and one decoder entry point per format, which its
 * row names: the fold decoders (pb_<format>_decoder) and the NYTProf chunk
 * stream (pb_read_nytprof, defined in read_nytprof.c: the one prototype
 * here whose definition lives in another .c).  Tachyon's, StatProfiler's
 * and Pynytprof's entries, and every sniffer that lives with its decoder,
 * are declared in that decoder's header (read_<format>.h), which formats.c
 * includes.
 */
#ifndef PB_FORMATS_H
#define PB_FORMATS_H

#include "format_row.h" /* pb_format_row and its fields' values, pb_format_info */

struct pb_sample_sink; /* samples.h */

/* ---- every decoder's entry points ------------------------------------------
 * Each c/read_<format>.c defines its decoders and its row below lists them;
 * nothing else calls them by name (the driver dispatches).  A decoder whose
 * header formats.c includes for its sniffer or its run hooks
 * (read_<format>.h) never includes this file (Tachyon, Pynytprof and
 * StatProfiler declare their entries there too): the table sits above the
 * decoders, which read their row through the sink (format_row.h), so no
 * include goes back up.  Every decoder is built: what a missing optional
 * library prevents is reported by the decoder itself (codecs.h).
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

/* ---- sniffers that live with their decoders: read_pprof.h, read_folded.h,
 * read_perf.h, read_pstats.h, read_callgrind.h (with Tachyon's,
 * Pynytprof's and StatProfiler's in their headers) */

/* the formats' ids (pb_format, format_row.h): the rows of formats[] in c/formats.c, in order */
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

/* ---- the driver (c/formats.c) ---------------------------------------------- */
const char *pb_format_name(pb_format f);
pb_format pb_format_from_name(const char *name);

/* Sniff the first bytes (as many as are there, up to 4096 is plenty). */
void pb_detect_bytes(const unsigned char *p, size_t len, pb_format_info *info);
/* ... of a file of file_size bytes (UINT64_MAX: unknown), as pb_detect_file
 * sniffs its first up to 4096 */
void pb_detect_bytes_sized(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);
/* Open, sniff, close ("-": standard input; gzip looked through; an input
 * read once kept for the next open, pb_src_keep). PB_ERR_IO if the file can't be read. */
pb_status pb_detect_file(const char *path, pb_format_info *info, pb_error *err);

/* 1 when this build has a decoder for f (its row names one), else 0 */
int pb_format_decodes(pb_format f);

/* Detect (unless format != PB_FMT_UNKNOWN) and decode a whole file or buffer. */
pb_status pb_decode_file(const char *path, pb_format format, const pb_options *opt,
                         pb_sink *sink, pb_error *err);
pb_status pb_decode_mem(const void *data, size_t len, const char *name, pb_format format,
                        const pb_options *opt, pb_sink *sink, pb_error *err);
/* Decode a profile of several files (n paths) through the decoder of
 * format's row (PB_FMT_UNKNOWN: the first row whose profiles span several
 * files), as pb_decode_file() a path its run hook claims (for_chunks'
 * files =>); err is initialised here. */
pb_status pb_decode_run(const char *const *paths, size_t n, pb_format format, const pb_options *opt, pb_sink *sink,
                        pb_error *err);

/* The format of src from its first 4 KB (the source stays at its start):
 * PB_ERR_CORRUPT "not a profile ..." (format "profbridge") when unknown. */
pb_status pb_detect_source(pb_source *src, pb_format *format, pb_error *err);

/* How src's decoder reads it (source.h's input section): gzip inflated
 * unless the format reads gzip itself, a spooled copy of an input that
 * cannot seek for a format that seeks (PB_SEEKS) or that the caller reads
 * again (opt->reread; quiet 2 also).  *format: the format given, or
 * detected (quiet: an unknown one is no error); info: the sniffed facts,
 * or NULL.  pb_decode_source does it when the caller did not. */
pb_status pb_settle_input(pb_source *src, pb_format *format, pb_format_info *info, const pb_options *opt, int quiet,
                          pb_error *err);

/* Decode from a source the caller opened (and will close): lets a caller
 * that may be unwound (a Perl callback dying) own the resources. */
pb_status pb_decode_source(pb_source *src, const char *name, pb_format format, const pb_options *opt,
                          pb_sink *sink, pb_error *err);
/* pb_decode_file of path, which the caller opened in src (pb_src_open_file;
 * the caller closes it): a profile of several files that path names (a
 * run's root file) is found from the bytes in src, path not opened again. */
pb_status pb_decode_opened(pb_source *src, const char *path, pb_format format, const pb_options *opt, pb_sink *sink,
                           pb_error *err);

/* The driver of every stack-sample output: detect (fmt
 * PB_FMT_UNKNOWN), read a run of trace files whole (a directory or a root's
 * first file), decode into ss, which the decoder finishes.  what names the
 * output in the error for a format without stacks ("collapsed output"):
 * PB_ERR_UNSUPPORTED.  opt may be NULL. */
pb_status pb_decode_samples_file(const char *path, pb_format fmt, const pb_options *opt, struct pb_sample_sink *ss,
                                 const char *what, pb_error *err);
pb_status pb_decode_samples_mem(const void *data, size_t len, const char *name, pb_format fmt, const pb_options *opt,
                                struct pb_sample_sink *ss, const char *what, pb_error *err);

/* pb_decode_samples_file (above) for a consumer that needs more
 * of a format than stacks: needs = the PB_YIELDS_* bits its row must have
 * (PB_YIELDS_SAMPLES: real stack samples); a format without them is
 * refused, unsupported, naming what (the output) and the formats that have
 * them. */
pb_status pb_decode_samples_file_for(const char *path, pb_format fmt, const pb_options *opt,
                                     struct pb_sample_sink *ss, const char *what, unsigned needs, pb_error *err);

#endif
