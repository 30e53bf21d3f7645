/* convert_samples.h - conversions of stack-sample profiles (Tachyon,
 * StatProfiler) to sample formats: collapsed stacks (flamegraph.pl input)
 * and Devel::StatProfiler records.  Plain C, no Perl. */
#ifndef PB_CONVERT_SAMPLES_H
#define PB_CONVERT_SAMPLES_H

#include <stdio.h>
#include "pb.h"

/* Collapsed stacks of in (fmt PB_FMT_UNKNOWN: detect) to out_path, through
 * a temporary file in the same directory renamed at the end (on error the
 * target is untouched and no temporary file remains).  out_path "-" writes
 * to standard output.  See collapsed.h for the line format. */
pb_status pb_convert_collapsed(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                               pb_error *err);

/* The per-stack difference of two profiles as collapsed stacks with two
 * weight columns, "outer;...;inner BEFORE AFTER" (difffolded.pl's output,
 * flamegraph.pl's input; collapsed.h), threads merged, to out_path as
 * above. */
pb_status pb_convert_diff_collapsed(const char *before, const char *after, const pb_options *opt,
                                    const char *out_path, pb_error *err);

/* Devel::StatProfiler records of in: one trace file at out_path for a
 * single thread, or "<out_path>.<48 hex id>.00000001" per thread (see
 * write_statprofiler.h).  StatProfiler inputs keep their op names.  Each
 * trace is written as "<name>_" and renamed when complete; a failed
 * conversion removes them.  On success names and n (may be NULL) receive the
 * files written: free with pb_convert_free_names(). */
pb_status pb_convert_statprofiler(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                                  char ***names, size_t *n, pb_error *err);
void pb_convert_free_names(char **names, size_t n);

#endif
