/* write_speedscope.h - stack samples -> speedscope's file format (JSON).
 *
 * A pb_sample_sink (samples.h) that writes the file format speedscope opens
 * (https://www.speedscope.app/file-format-schema.json, published in the
 * speedscope npm package as dist/release/file-format-schema.json): one
 * "sampled" profile per thread (named "thread <id>"), its samples the
 * thread's distinct stacks, root first, in order of first appearance, with
 * their weights; shared frames {name, file, line} per distinct function
 * (name as the fold gives it, package::name; file as recorded; line its
 * first line when known).  Weights are nanoseconds: a sample's weight x the
 * file's interval (ATTRIBUTE sample_interval_us), a span format's stack's
 * exclusive ns, a merged profile's ns (merge.h); with no interval, unit
 * "none" and sample counts.  Memory grows with distinct frames and stacks.
 *
 * A thread whose spans the decoder hands over (a span format's blocks, through
 * the sink's span()) is an "evented" profile instead: an open and a close
 * event per block at its real begin and end (ns), sorted and properly nested
 * (a block that would outlast its parent is cut at the parent's end).  That
 * form lists every block, so its memory grows with the blocks of the file.
 *
 * Every sample reaches the sink (it sets each_tick and not sums_stacks,
 * samples.h) and is spooled (tick_spool.h: 24 bytes a sample on disk, one
 * block per thread in memory).  A thread with a sample time other than 0,
 * whose weights are time (ns or an interval), is an "evented" profile at
 * those times: each sample open from (its time - the earliest sample's) x
 * 1000 ns for weight x unit ns, idle between samples, frames shared by
 * consecutive touching samples kept open; a sample that would begin before
 * the one before it ends begins at that end, so each keeps its whole
 * weight.  Any other thread is the "sampled" profile above.
 */
#ifndef PB_WRITE_SPEEDSCOPE_H
#define PB_WRITE_SPEEDSCOPE_H

#include <stdio.h>
#include "samples.h"

/* name: the file's "name" (NULL: "profile").  time_order: 1 writes a thread
 * whose samples have times as an evented profile at those times; 0 writes
 * every thread as summed stacks (pb_options.no_time_order).  JSON goes to out
 * at finish().  NULL on out-of-memory (err filled).  Its sink:
 * pb_stack_writer_sink; freed by pb_stack_writer_free (samples.h). */
pb_stack_writer *pb_speedscope_new(FILE *out, const char *name, int time_order, pb_error *err);

/* A file to a speedscope file: pb_write (outputs.h), the speedscope row. */

#endif
