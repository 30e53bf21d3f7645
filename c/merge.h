/* merge.h - many profiles of one program folded into one.
 *
 * Every input (every format; the NYTProf-like chunk streams through
 * chunk_stacks.c; a run of trace files counts as one input) is decoded through the sample
 * driver (formats.c) into ONE consumer, which the write driver (pb_write,
 * outputs.h) hands in: a target's sample sink, or the fold into a chunk
 * target's chunks.  This file names no target.  Between them sits a
 * sample sink that
 *   - puts every weight in nanoseconds: a sample stands for its input's
 *     sampling interval (ATTRIBUTE sample_interval_us), a span format's
 *     stack weight already is ns; so inputs of different intervals and
 *     formats add up;
 *   - keeps each input's threads apart (a thread is (input, thread key));
 *     a pid an earlier input already used gets the next free number;
 *   - passes frames through: the consumer unifies them by name, file and
 *     line, so memory grows with distinct frames and stacks, never with
 *     the number of inputs or samples;
 *   - passes the first input's attributes (the consumer's header), and
 *     holds back each input's finish() until the last;
 *   - passes span() and sample_tags() to a consumer that takes them, and
 *     sets each_tick as the consumer does.
 * Sample times: the fold's (pb_merge_chunks) are rebased to 0 at each
 * input's first sample, in ns; a sample consumer's (pb_merge_samples) stay
 * as the decoder gave them (µs; spans ns), each input on its own clock, and
 * before each input's calls the consumer hears ATTRIBUTE merge_input (its
 * 0-based index; not in a diff): a timeline target counts each
 * input's times from that input's own origin.
 */
#ifndef PB_MERGE_H
#define PB_MERGE_H

#include "fold_samples.h"

/* The inputs a merge reads: in[0..n) without those whose every trace file
 * another input stands for (a run of trace files and its members; see
 * merge.c), *keep (free it) and *nkeep.  Errors (in err, whose format and
 * file the caller set): PB_ERR_USAGE for no inputs, or an input that shares
 * some but not all of its trace files with another. */
pb_status pb_merge_inputs(const char *const *in, size_t n, const pb_options *opt, const char ***keep, size_t *nkeep,
                          pb_error *err);

/* Every input's samples through the merge layer above into target, then
 * target's finish().  diff (two inputs): AFTER's samples, and BEFORE's
 * negated, each marked as its side (ATTRIBUTE diff_side before/after, which
 * a writer that diffs marks in its own way), weights in ns as above.
 * opt->jobs > 1 (not for a diff): the inputs are decoded in that many
 * worker processes.  Errors: the failing input's decoder error. */
pb_status pb_merge_samples(const char *const *in, size_t n, const pb_options *opt, int diff, pb_sample_sink *target,
                           pb_error *err);

/* The same folded into chunks (fold_samples.h, as "merged": weights in ns)
 * for sink, a chunk writer's. */
pb_status pb_merge_chunks(const char *const *in, size_t n, const pb_options *opt, pb_sink *sink, pb_error *err);

#endif
