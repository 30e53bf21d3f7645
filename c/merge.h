/* merge.h - many profiles of one program folded into one.
 *
 * Every input (Tachyon, StatProfiler, EasyProfiler; NYTProf and Pynytprof
 * through chunk_stacks.c; a StatProfiler run counts as one input) is decoded through the sample
 * driver (formats.c) into ONE consumer: the fold that writes
 * nytprof.out (fold_samples.h, through present.h), the collapsed writer
 * (write_collapsed.h), the pprof writer (write_pprof.h) or the speedscope writer
 * (write_speedscope.h).  Between them sits a
 * sample sink that
 *   - puts every weight in nanoseconds: a sample stands for its input's
 *     sampling interval (ATTRIBUTE sample_interval_us), an EasyProfiler
 *     stack weight already is ns; so inputs of different intervals and
 *     formats add up (sample timestamps, µs, become ns too);
 *   - keeps each input's threads apart (a thread is (input, thread key));
 *     a pid an earlier input already used gets the next free number;
 *   - passes frames through: the consumer unifies them by name, file and
 *     line, so memory grows with distinct frames and stacks, never with
 *     the number of inputs or samples;
 *   - passes the first input's attributes (the consumer's header), and
 *     holds back each input's finish() until the last.
 */
#ifndef PB_MERGE_H
#define PB_MERGE_H

#include "fold_samples.h"
#include "outputs.h"

/* to: "nytprof" (compress_level 0..9, -1 default), "collapsed", "pprof",
 * "speedscope".  out_path "-" is standard output for all but nytprof.  warn gets the
 * presentation filter's warnings (nytprof).  Errors: the failing input's
 * decoder error;
 * PB_ERR_USAGE for an unknown target or no inputs. */
pb_status pb_merge_files(const char *const *in, size_t n, const pb_options *opt, const char *to,
                         const char *out_path, int compress_level, void (*warn)(void *ud, const char *msg),
                         void *ud, pb_error *err);

/* The difference of two profiles through stack output t (outputs.h):
 * AFTER's samples, and BEFORE's negated, each marked as its side (pprof:
 * the label pprof::base=true, what pprof -diff_base builds), weights in ns
 * as above; `go tool pprof` shows the change (pb_diff_pprof, outputs.h). */
pb_status pb_merge_diff(const pb_target *t, const char *before, const char *after, const pb_options *opt,
                        const char *out_path, pb_error *err);


#endif
