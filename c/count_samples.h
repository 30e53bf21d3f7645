/* count_samples.h - the counting filter every sample target puts in front
 * of its writer when converting (pb_write, outputs.h).  Plain C, no Perl. */
#ifndef PB_COUNT_SAMPLES_H
#define PB_COUNT_SAMPLES_H

#include "samples.h"

/* A pass-through filter that counts the samples of weight > 0 (and spans)
 * that reach next: a profile with none is named empty (the caller warns),
 * whatever the target. */
typedef struct {
    pb_sample_sink ss;
    uint64_t samples;
} pb_counting;
pb_sample_sink *pb_counting_init(pb_counting *c, pb_sample_sink *next);

#endif
