/* convert_samples.h - a profile's stacks written by a stack writer (a row
 * of the table of targets, outputs.h), and the counting filter every sample
 * target puts in front of its writer.  Plain C, no Perl. */
#ifndef PB_CONVERT_SAMPLES_H
#define PB_CONVERT_SAMPLES_H

#include <stdio.h>
#include "outputs.h"
#include "samples.h"

/* A stack output: a target with a writer that takes a pb_sample_sink on an
 * open stream (outputs.h: open, sink, free). */
typedef pb_target pb_stack_output;

/* the target named so if it is a stack output; NULL for any other name */
const pb_stack_output *pb_stack_output_named(const char *name);

/* A pass-through filter that counts the samples of weight > 0 (and spans)
 * that reach next: a profile with none is named empty (the caller warns),
 * whatever the target. */
typedef struct {
    pb_sample_sink ss;
    uint64_t samples;
} pb_counting;
pb_sample_sink *pb_counting_init(pb_counting *c, pb_sample_sink *next);

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

void pb_convert_free_names(char **names, size_t n);

#endif
