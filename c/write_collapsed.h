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

/* Lines go to out at finish().  NULL on out-of-memory (err filled). */
pb_collapse *pb_collapse_new(FILE *out, pb_error *err);
pb_sample_sink *pb_collapse_sample_sink(pb_collapse *c);
void pb_collapse_free(pb_collapse *c);

/* Decode a sampling profile (fmt PB_FMT_UNKNOWN: detect) and write its
 * collapsed stacks to out.  opt may be NULL; opt->have_thread selects one
 * thread.  PB_ERR_UNSUPPORTED for formats without stack samples. */
pb_status pb_collapse_file(const char *path, pb_format fmt, const pb_options *opt, FILE *out, pb_error *err);
pb_status pb_collapse_mem(const void *data, size_t len, const char *name, pb_format fmt, const pb_options *opt,
                          FILE *out, pb_error *err);

/* Diff mode (difffolded.pl's input): both profiles' stacks, threads merged,
 * one line per stack "outer;...;inner BEFORE AFTER" (weights as above, 0
 * where a side lacks the stack), sorted by BEFORE + AFTER then text.  Feed
 * BEFORE, call pb_collapse_diff_side(c, 1) (PB_OK, or PB_ERR_LIMIT when a
 * stack's weight passes 64 bits), feed AFTER, then pb_collapse_diff_write()
 * (the decoders' finish() writes nothing). */
pb_collapse *pb_collapse_diff_new(FILE *out, pb_error *err);
pb_status pb_collapse_diff_side(pb_collapse *c, int after);
pb_status pb_collapse_diff_write(pb_collapse *c);
/* The two files through the sample driver (formats.c) into out. */
pb_status pb_collapse_diff_files(const char *before, const char *after, const pb_options *opt, FILE *out,
                                 pb_error *err);

/* The per-stack difference of two profiles as collapsed stacks with two
 * weight columns, "outer;...;inner BEFORE AFTER" (difffolded.pl's output,
 * flamegraph.pl's input), threads merged, to out_path through output.h
 * ("-": standard output; a file is written to a temp file and renamed). */
pb_status pb_convert_diff_collapsed(const char *before, const char *after, const pb_options *opt,
                                    const char *out_path, pb_error *err);

#endif
