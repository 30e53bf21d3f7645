/* write_collapsed.h - stack samples -> collapsed stacks (flamegraph.pl input).
 *
 * One line per distinct stack per thread:
 *     tid:<thread label>;<sub>;<sub>;...;<sub> <samples>
 * subs root -> leaf, named as the stack outputs show them
 * (pb_frame_shown_name: the source tool's own name, else package::name),
 * the count being the summed sample weight.  A frame with a verbatim text
 * (folded stacks in) is written as that text, and a thread whose root frames
 * the source gave (the sink's thread_root) starts its lines with them (or
 * with nothing) instead of tid:<label>: folded in, folded out keeps the
 * input's lines.  Lines are sorted by count (descending), then by text, as
 * CPython's CollapsedStackCollector sorts them.  Samples with an empty stack
 * are dropped (as CPython does).  Memory grows with distinct stacks, never
 * with the number of samples.
 */
#ifndef PB_WRITE_COLLAPSED_H
#define PB_WRITE_COLLAPSED_H

#include <stdio.h>
#include "fold_samples.h"

typedef struct pb_collapse pb_collapse;

/* Lines go to out at finish().  NULL on out-of-memory (err filled).  Its
 * sink: pb_stack_writer_sink; freed by pb_stack_writer_free (samples.h). */
pb_stack_writer *pb_collapse_new(FILE *out, pb_error *err);

/* Diff mode (difffolded.pl's input): both profiles' stacks, threads merged,
 * one line per stack "outer;...;inner BEFORE AFTER" (weights as above, 0
 * where a side lacks the stack), sorted by BEFORE + AFTER then text.  Feed
 * BEFORE, call pb_collapse_diff_side(c, 1) (PB_OK, or PB_ERR_LIMIT when a
 * stack's weight passes 64 bits), feed AFTER, then pb_collapse_diff_write()
 * (the decoders' finish() writes nothing): the collapsed row's diff, whose
 * two inputs pb_write's driver feeds (outputs.c). */
pb_collapse *pb_collapse_diff_new(FILE *out, pb_error *err);
pb_status pb_collapse_diff_side(pb_collapse *c, int after);
pb_status pb_collapse_diff_write(pb_collapse *c);

#endif
