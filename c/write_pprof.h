/* write_pprof.h - stack samples -> pprof's profile.proto, gzipped.
 *
 * A pb_sample_sink (samples.h) that writes the perftools.profiles.Profile
 * message (github.com/google/pprof, proto/profile.proto) that `go tool
 * pprof`, Pyroscope, Parca, Grafana and the speedscope app read:
 *
 *   sampled input (PB_YIELDS_SAMPLES; ATTRIBUTE sample_interval_us):
 *     sample_type  [samples/count, <clock>/nanoseconds], clock "cpu" when
 *                  the file says its clock is CPU time, else "wall";
 *     values       [weight, weight x interval in ns];
 *     period_type  <clock>/nanoseconds, period = the interval in ns;
 *   span input (PB_YIELDS_SPANS; weights are exclusive ns):
 *     sample_type  [wall/nanoseconds], values [ns], no period;
 *
 * one Sample per distinct (thread, stack), locations leaf first, labels
 * "thread" (the thread's id as text) and "pid" (a number); one Location per
 * distinct (function, line) with one Line; one Function per distinct
 * (name, file, first line), its name the sub name the fold gives
 * (package::name), system_name left empty (pprof blanks a frame whose
 * system_name differs), filename as recorded; one Mapping (has_functions,
 * has_filenames, has_line_numbers).  time_nanos from ATTRIBUTE basetime,
 * duration_nanos from the profile's duration (the stats trailer, else the
 * span of sample timestamps plus one interval, else the largest thread's
 * sampled time).
 *
 * A source with value columns (pprof; samples.h: columns, mapping,
 * sample_values) is written as it was: its sample types, default, period
 * type and period; its mappings; one Location per distinct run of frames
 * the source placed together (address, mapping, its inlined Lines); the
 * function's system_name when the source gave one; each sample's values
 * (summed per stack and label set) and its own labels instead of
 * "thread" and "pid"; the comments, drop_frames and keep_frames
 * (ATTRIBUTEs comment*, drop_frames, keep_frames); time_nanos and
 * duration_nanos exactly (ATTRIBUTEs of the same names).
 *
 * The message is encoded here (protobuf's wire format: varints, tags,
 * length-delimited fields; repeated scalars packed) and deflated with zlib
 * into gzip (RFC 1952).  Memory grows with distinct frames, stacks and
 * strings, never with the number of samples.
 */
#ifndef PB_WRITE_PPROF_H
#define PB_WRITE_PPROF_H

#include <stdio.h>
#include "samples.h"

/* The gzipped message goes to out at finish().  NULL on out-of-memory (err
 * filled).  Its sink: pb_stack_writer_sink; freed by pb_stack_writer_free
 * (samples.h). */
pb_stack_writer *pb_pprof_new(FILE *out, pb_error *err);

/* A file to a pprof file: pb_write (outputs.h), the pprof row. */

#endif
