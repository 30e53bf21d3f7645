/* fold_samples.h - stack samples -> NYTProf chunks.
 *
 * A pb_sample_sink (samples.h) that turns what a sampling decoder reports
 * into the chunk stream nytprofhtml needs (the design notes, "Mapping
 * foreign data onto chunks"; Internals.pod, THE PROFILE MODEL):
 *
 *   VERSION 5 0, COMMENT, ATTRIBUTE ticks_per_sec / nv_size / source_format
 *   ... the decoder's attributes (passed through as ATTRIBUTEs, any time)
 *   per thread, at its first sample: PID_START pid ppid t_first
 *             (sample timestamps: for weight > 1, that of the last sample;
 *             with config.sampled_spans PID_END = the last PID_START's
 *             time + the thread's share of the run's length (ATTRIBUTE
 *             profile_duration_sec, else the timestamps' span; none, or
 *             more than 9% below the sampled time: its sampled ticks), as
 *             NYTProf's reader adds up PID_END minus the last PID_START
 *             read; else last timestamp + ticks_per_weight)
 *   NEW_FID when a file is first used (dense fids 1..N, root->leaf order)
 *   TIME_LINE per sample call: ticks = weight x ticks_per_weight on the
 *             innermost frame's fid/line, in input order (a stream)
 *   at finish: ATTRIBUTE sampled_time_sec (all threads' weights x
 *             ticks_per_weight, in s), run_wall_clock_sec (first timestamp
 *             to last + one weight, over all threads; only when samples carry
 *             timestamps), cumulative_overhead_ticks (the spans' sum minus
 *             the sampled ticks: nytprofhtml's "for X (of Y)" is the sampled
 *             time of the run's length), SUB_INFO for every sub used (+
 *             root_sub on the fid of ATTRIBUTE application, else fid 1), then
 *             per thread in order of first sample: its SUB_CALLERS edges,
 *             then its PID_END.
 *
 * Sub names: package "::" name (frame's pb_str fields; an empty package
 * gives "main"); SUB_INFO lines = frame first_line when known, else the
 * smallest line seen, to the largest line seen.  Synthetic frames all live
 * in one fake fid (IS_FAKE) named config.synthetic_file.
 *
 * SUB_CALLERS per (thread, caller sub, call-site fid:line, callee sub), with
 * NYTProf's own meaning of the numbers:
 *   incl  = weight of samples whose stack holds this call while the callee is
 *           not already active further out (outermost activation only)
 *   reci  = weight of samples holding this call while the callee is already
 *           active further out (summed per nested activation)
 *   excl  = weight of samples where this call is the innermost frame
 *   rec_depth = max number of activations of the callee further out
 *   count = calls inferred from stack changes between consecutive samples of
 *           the thread: a frame present at a depth where the previous sample
 *           had a different frame (or nothing) is a new call, except that the
 *           outermost changed depth counts only if its sub changed (the same
 *           sub on another line is the same activation).
 *   Outermost frames are called by config.root_sub ("main::RUNTIME") from the
 *   callee's own fid and first line.  Times in seconds:
 *   weight x ticks_per_weight / ticks_per_sec.
 *
 * Files, fids, subs, edges, the stack trie and the TIME_LINE split are the
 * profile model's (model.h); the fold keeps only what is its own: frames
 * (sub, file, line) for the decoder's frame ids, threads, and per trie node
 * its weight and inferred calls.
 *
 * Memory: O(unique frames + distinct stack prefixes per thread + edges);
 * nothing grows with the number of samples.
 */
#ifndef PB_FOLD_SAMPLES_H
#define PB_FOLD_SAMPLES_H

#include "samples.h"

/* A sampling decoder's statement budget (pb_fold_config.split): the
 * TIME_LINE chunks beyond one that a sample of weight x ticks_per_weight
 * (after prepare) splits into come out of max_statements, charged by
 * pb_model_charge_split (model.h) in a filter that pb_fold_decode and
 * pb_sample_decode put in front of the fold or the stack target, so that a
 * conversion stops at the same sample whatever it writes.  Where decoders
 * differ, a field of the rule says how (all 0 but words and sample_at: the
 * budget of every conversion, at the sample's byte). */
typedef struct {
    /* the limit error's message (NULL: no budget): pb_model_charge_split's
     * {record} (the sample's number), {weight}, {interval}, {extra}, {left} */
    const char *words;
    /* Optional: the input offset of the sample being sent (NULL: the
     * source's offset), and *summed = 1 when it is a sum of samples (sent
     * to a sink that sums stacks) that each split into one chunk: it is not
     * charged.  state: the decoder's. */
    uint64_t (*sample_at)(void *state, int *summed);
    /* 1: the message names no byte offset (it names {record}) */
    int no_offset;
    /* 1: a sample without frames takes no TIME_LINE of its own: not charged */
    int empty_free;
    /* 1: the budget is max_statements as given (0: none); 0: the input's
     * (pb_statement_budget, bounded by the input's size) */
    int whole_max;
    /* 1: charged to chunks only (pb_fold_decode), not in front of a stack
     * target (pb_sample_decode) */
    int chunks_only;
} pb_split_rule;

typedef struct {
    const char *source_format;   /* the row's name: COMMENT + ATTRIBUTE source_format (NULL: none) */
    uint64_t ticks_per_sec;      /* unit of timestamps and ticks (1000000 = µs); 0 -> 1000000 */
    uint64_t ticks_per_weight;   /* ticks one unit of sample weight stands for (sample interval);
                                  * must be <= INT32_MAX */
    const char *root_sub;        /* caller of outermost frames (NULL: "main::RUNTIME") */
    const char *synthetic_file;  /* name of the fake fid of synthetic frames (NULL: PB_FOLD_SYNTHETIC_FILE) */
    /* Optional: NEW_FID flags of a (non-synthetic) file.  NULL: VIA_STMT|VIA_SUB,
     * i.e. no saved source, so nytprofhtml reads the file from disk. */
    uint32_t (*fid_flags)(void *ctx, pb_str file);
    void *fid_flags_ctx;
    /* Sampled input (PB_YIELDS_SAMPLES): each thread's PID_START..PID_END
     * span is the time its samples stand for (weights x ticks_per_weight),
     * so NYTProf's profiler_duration and profiler_active (the sum of the
     * spans) are the sampled total, the flame graph's width; the
     * timestamps' wall-clock length goes to ATTRIBUTE run_wall_clock_sec.
     * 0: a span runs from the first timestamp to the last one + one weight
     * (at least the sampled time), as for merged profiles. */
    int sampled_spans;
    /* threads at most (pb_options max_threads; 0: PB_DEFAULT_MAX_THREADS) */
    uint32_t max_threads;
    int no_run_length;           /* with sampled_spans: the header's Y is the sampled time too (a
                                  * merge: many runs have no one length) */
    int call_graph;              /* a call-graph source (PB_YIELDS_GRAPH): no OPTION calls=1 (there are
                                  * no call events, so nytprofhtml draws no empty flame graph) */
    /* the producer's format row (format_row.h), for a decoder's prepare():
     * pb_fold_decode and pb_sample_decode set it from the sink they are
     * given (pb_sink.row, pb_sample_sink.row); NULL: none */
    const struct pb_format_row *row;
    /* set by pb_sample_decode, for a decoder's prepare(): 1 when the sink sums
     * stacks (samples.h sums_stacks) and takes no sample_values, so that
     * each distinct sample may be sent once (a decoder may then read its
     * file in one pass) */
    int sums_stacks;
    /* its chunks hold more than the fold of its samples (notes its decoder
     * makes chunks of, facts of a run), so pb_sample_decode tees its
     * samples into a fold for convert --report's loss counter only through
     * fold_front (below); else that counts in a decode of its own */
    int no_sample_tee;
    /* Optional, for a decoder whose chunks are more than the fold of its
     * samples (no_sample_tee): after prepare, the filter its chunk path
     * puts in front of the fold (notes and facts into chunks to the chunk
     * sink), made for the sample tee's fold (convert --report to a stack
     * writer, sample_tee.h) of one source (not a run of files), so the
     * losses count in the writer's decode; NULL from it: a decode of its
     * own counts them. */
    pb_sample_sink *(*fold_front)(void *state, pb_sample_sink *fold, pb_sink *chunks); /* (state: the decoder's) */
    /* A sampling decoder's statement budget (pb_split_rule above) */
    pb_split_rule split;
    /* A span decoder (PB_YIELDS_SPANS) whose chunks come from the span fold
     * (fold_spans.h), not from this one: its run for them, set in its cfg
     * (or cleared by its prepare(), after a first pass that found
     * sampled profiles).  pb_fold_decode then calls it with the chunk sink
     * instead of making a sample fold; so does pb_sample_decode with convert
     * --report's loss counter (pb_options chunk_tee), in the same decode as
     * the samples, and always for a decoder without run (a block profiler).
     * It makes a span fold on sink, delivers the spans into it (the
     * decoder's own chunks go to sink too) and, when out is not NULL, the
     * samples to out, and finishes out.  Without run, the samples are the
     * stacks the span fold keeps (pb_spans_set_stacks(out)), and sink
     * passes ATTRIBUTEs on to out.  The decoder makes the fold, not the
     * driver: fold_spans.c reads the presentation (present.h), which reads
     * the table of formats, which includes decoders that include this
     * file. */
    pb_status (*run_spans)(void *state, pb_sink *sink, struct pb_sample_sink *out);
    /* set by pb_fold_decode when its sink only counts TIME_LINE and
     * SUB_CALLERS chunks (their wants 0, skipped counted: chunk.h), for a
     * decoder's prepare(): it may then sum as for sums_stacks, calling the
     * fold's sample_sum() (samples.h) before each summed sample: the chunk
     * counts, the other chunks and every ATTRIBUTE stay those of every
     * sample sent */
    int sums_counted;
    /* the library the decoder needs, which this build lacks ("yajl"; NULL:
     * none missing): pb_fold_decode and pb_sample_decode fail at once,
     * unsupported, "this build has no <lib> (install lib<lib>-dev and
     * rebuild Devel::ProfileBridge)", and call nothing of the decoder */
    const char *missing_library;
} pb_fold_config;

typedef struct pb_fold pb_fold;

/* The fake file of synthetic frames (CPython's "~" frames <GC>, <native>;
 * a JS engine's (garbage collector), (idle), (program); main::(no frame)), as the
 * report lists it: a name that says what it is */
#define PB_FOLD_SYNTHETIC_FILE "(frames the profiler adds, no source)"

/* NULL on out-of-memory (err filled).  The fold writes to out; nothing is
 * emitted before the first call through its sample sink. */
pb_fold *pb_fold_new(const pb_fold_config *cfg, pb_sink *out, pb_error *err);
/* The sample sink to hand to a sampling decoder.  Calls return PB_OK or an
 * error status (PB_ERR_ABORT when out asked to stop). */
pb_sample_sink *pb_fold_sample_sink(pb_fold *f);

/* Two fid_flags (pb_fold_config) most formats take: real files are
 * absolute paths, the rest fake (pb_fid_flags_absolute); or fake files are
 * named <...>, like <string> or <frozen importlib._bootstrap>, the rest
 * real (pb_fid_flags_angled).  Real: PB_FID_VIA_STMT | PB_FID_VIA_SUB;
 * fake: PB_FID_IS_FAKE | PB_FID_VIA_SUB.  ctx is not used. */
uint32_t pb_fid_flags_absolute(void *ctx, pb_str file);
uint32_t pb_fid_flags_angled(void *ctx, pb_str file);
void pb_fold_free(pb_fold *f);

/* The sub name the fold (and the collapsed writer) gives a frame:
 * package::name, "main" for an empty package.  Returns the length; writes at
 * most cap-1 bytes plus NUL into buf (like snprintf). */
size_t pb_fold_sub_name(const pb_frame *fr, char *buf, size_t cap);
/* The name a stack output (outputs.c's stack targets) shows for fr: its
 * source tool's own name (fr->own) when it has one, else package::name
 * (pb_fold_sub_name); valid UTF-8, the same contract as pb_fold_sub_name. */
size_t pb_frame_shown_name(const pb_frame *fr, char *buf, size_t cap);
/* 1 when the name pb_fold_sub_name builds is beyond ASCII (UTF-8 then) */
int pb_fold_sub_name_wide(const pb_frame *fr);

/* ---- a sampling decoder's two entry points, one call each ---------------- */
/* What a sampling decoder (read_<format>.c) gives pb_fold_decode and
 * pb_sample_decode: its state (size bytes, allocated zeroed and freed by
 * them) and the calls on it.  init: opt is a copy that lives as long as the
 * state; sink is the chunk sink for warnings (a salvage), NULL when decoding
 * to samples only.  prepare (optional): a first pass before any sample; it
 * may fill cfg (the interval read from the file).  run: replay the samples
 * into out, and finish it.  cfg: the fold's configuration (pb_fold_decode).
 * A span decoder sets cfg.run_spans (above). */
typedef struct pb_fold_decoder {
    size_t size;
    void (*init)(void *state, pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
    pb_status (*prepare)(void *state, pb_fold_config *cfg);
    pb_status (*run)(void *state, pb_sample_sink *out);
    void (*free)(void *state);
    pb_fold_config cfg;
} pb_fold_decoder;

/* decode src into a fold writing NYTProf chunks to sink.
 * The state lives on the heap and is registered with sink, so that a
 * consumer that never returns can release it. */
pb_status pb_fold_decode(pb_source *src, const pb_options *opt, pb_sink *sink, const pb_fold_decoder *dec,
                         pb_error *err);
/* decode src into any sample sink (a stack target), which the decoder finishes */
pb_status pb_sample_decode(pb_source *src, const pb_options *opt, pb_sample_sink *out, const pb_fold_decoder *dec,
                           pb_error *err);

/* the formats' decoders, and the driver of every stack-sample output
 * (pb_decode_samples_file, pb_decode_samples_mem): formats.h */

#endif
