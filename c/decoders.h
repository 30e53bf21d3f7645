/* decoders.h - every decoder's entry points, in one place.
 *
 * Each c/read_<format>.c defines its decoders and the table of formats
 * (c/formats.c) lists them in the format's row; nothing else calls them by
 * name (the driver, formats.c, dispatches).  Every decoder is built: what a
 * missing optional library prevents is reported by the decoder itself
 * (codecs.h).  Included by pb.h.
 *
 * A chunk decoder reads src from its start (decoders read and check their
 * own magic), sends chunks to sink, and returns PB_OK or fills err:
 *     pb_status pb_read_<format>(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
 * A stack decoder replays a file into any pb_sample_sink (samples.h) and
 * calls its finish():
 *     pb_status pb_read_<format>_samples(pb_source *src, const pb_options *opt, pb_sample_sink *out,
 *                                        pb_error *err);
 */
#ifndef PB_DECODERS_H
#define PB_DECODERS_H

#include "pb.h"

struct pb_sample_sink;

/* ---- chunk decoders ------------------------------------------------------- */
pb_status pb_read_nytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_pynytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_easyprofiler(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_tachyon(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_statprofiler(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);

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
 * pid), no op names. */
pb_status pb_read_tachyon_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_easyprofiler_stacks(pb_source *src, const pb_options *opt, struct pb_sample_sink *out,
                                      pb_error *err);
pb_status pb_read_nytprof_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_pynytprof_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);
pb_status pb_read_statprofiler_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out,
                                       pb_error *err);

/* c/chunk_stacks.c: the stacks of a chunk decoder's stream (call events),
 * for a format whose stacks are its chunks' (NYTProf, Pynytprof) */
pb_status pb_chunks_as_samples(pb_status (*dec)(pb_source *, const pb_options *, pb_sink *, pb_error *),
                               pb_source *src, const pb_options *opt, struct pb_sample_sink *out, pb_error *err);

#endif
