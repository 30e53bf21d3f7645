/* write_gecko.h - stack samples -> a raw Gecko profile (meta.version 32:
 * meta, libs, threads[], processes, pausedRanges) inside the old Firefox
 * DevTools wrapper {"systemHost":{"name":"Firefox"}, "profile": ...,
 * "duration": ms}: the Firefox Profiler processes the "profile" as a Gecko
 * profile, the speedscope app imports the wrapper as a Firefox profile.
 *
 * A pb_sample_sink (samples.h).  Each thread is a track with its own
 * stringTable (its functions' location strings "name (file:line)", "name
 * (in file)" or "name ()", then its marker names), stackTable (prefix,
 * frame), frameTable (location, ..., line, category) and { schema, data }
 * rows of samples (stack, time, eventDelay, weight) and markers, the
 * samples closed by one of no stack where the last one ends (its time +
 * the interval; the speedscope app times a sample until the next one).  Times are
 * milliseconds after the profile's
 * first sample (meta.profbridge.timeOriginNs holds that sample's time in the
 * source's clock, ns):
 *   - a sample at its recorded time where the source records one (the
 *     sample()'s timestamp, µs); the sink asks the decoder for one call per
 *     recorded sample (samples.h, each_tick), so a sampler's REPEAT run keeps
 *     every sample's time;
 *   - where no sample has a time (the formats whose rows give none:
 *     counts, summed stacks), each thread's samples spread evenly (by
 *     weight) over the recorded duration, and meta.profbridge.sampleTimes
 *     says "spread" (never a fake precision);
 *   - spans (PB_YIELDS_SPANS: blocks, evented profiles): interval
 *     markers on their thread at their begin and end (ns);
 *   - a CPython sampler's thread status (sample_tags): the interval markers CPython's
 *     collector writes ("Has GIL", "No GIL", "On CPU", "Off CPU", "Python
 *     Code", "Native Code", "Waiting for GIL", "GC Collecting", "Has
 *     Exception", "No Exception"), at the same times;
 *   - a merge (merge.h): ATTRIBUTE merge_input starts the next input's
 *     clock, so each input's samples and markers count from that input's
 *     own origin and are spread (where it records no times) over its own
 *     extent, as in its own conversion; its threads' open states end at
 *     its last sample (at most 65535 inputs: a `limit` error past that).
 * A weight column (absent when every weight is 1) holds each sample's
 * weight, weightType "samples", or "tracing-ms" when the weights are time
 * (ns, written as ms); the Firefox Profiler counts each sample once,
 * the speedscope app weighs it by its time to the next.  A sample whose recorded
 * time is before its thread's previous one is written at that one.
 *
 * Memory grows with distinct frames and stacks per thread; samples and
 * markers go to a temporary spool file (mkstemp in $TMPDIR, else /tmp,
 * unlinked at once) in blocks per thread, read back thread by thread at
 * finish().
 */
#ifndef PB_WRITE_GECKO_H
#define PB_WRITE_GECKO_H

#include <stdio.h>
#include "samples.h"

/* name: the process's name (NULL: "profile").  JSON goes to out at finish().
 * NULL on out-of-memory (err filled).  Its sink: pb_stack_writer_sink; freed
 * by pb_stack_writer_free (samples.h). */
pb_stack_writer *pb_gecko_new(FILE *out, const char *name, pb_error *err);

#endif
