/* convert_samples.h - conversions of stack-sample profiles (Tachyon,
 * StatProfiler) to sample formats: collapsed stacks (flamegraph.pl input)
 * and Devel::StatProfiler records.  Plain C, no Perl. */
#ifndef PB_CONVERT_SAMPLES_H
#define PB_CONVERT_SAMPLES_H

#include <stdio.h>
#include "samples.h"

/* A stack output: a writer that takes a pb_sample_sink on an open stream
 * (collapsed.h, write_pprof.h, write_speedscope.h). */
typedef struct {
    const char *name; /* "pprof": convert's to => and the output's name in I/O errors */
    const char *what; /* "pprof output": names it in the error for an input without stacks */
    void *(*open)(FILE *fp, const char *title, pb_error *werr); /* title: the input's base name */
    pb_sample_sink *(*sink)(void *w);
    void (*free)(void *w);
} pb_stack_output;

/* "collapsed", "pprof", "speedscope"; NULL for any other name */
const pb_stack_output *pb_stack_output_named(const char *name);

/* The stacks of in (fmt PB_FMT_UNKNOWN: detect; a StatProfiler run whole)
 * written by o to out_path through output.h ("-": standard output; a file
 * is written to a temp file and renamed, so a failed conversion leaves the
 * target as it was).  Formats without stacks: PB_ERR_UNSUPPORTED. */
pb_status pb_convert_stacks(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                            const pb_stack_output *o, pb_error *err);

/* pb_convert_stacks, and *samples (may be NULL) receives the number of
 * samples of weight > 0 (and spans) written: 0 for an empty profile */
pb_status pb_convert_stacks_n(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                              const pb_stack_output *o, uint64_t *samples, pb_error *err);

/* pb_convert_stacks with the collapsed output (collapsed.h: the line format) */
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
/* pb_convert_statprofiler, and *samples (may be NULL) as above */
pb_status pb_convert_statprofiler_n(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                                    char ***names, size_t *n, uint64_t *samples, pb_error *err);
void pb_convert_free_names(char **names, size_t n);

#endif
