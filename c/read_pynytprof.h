/* read_pynytprof.h - what the sniffer (c/formats.c) asks the Pynytprof
 * decoder (c/read_pynytprof.c). */
#ifndef PB_READ_PYNYTPROF_H
#define PB_READ_PYNYTPROF_H

#include <stddef.h>
#include "pb.h"

struct pb_sample_sink; /* samples.h */

/* The decoder's entry points (the row in formats.c lists them; formats.h
 * says what they give) */
pb_status pb_read_pynytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_pynytprof_samples(pb_source *src, const pb_options *opt, struct pb_sample_sink *out,
                                    pb_error *err);

/* Pynytprof's dialect from a file's first bytes (read_pynytprof.c): "A".."D",
 * or "" when they do not say */
const char *pb_pynytprof_dialect(const unsigned char *p, size_t len);

#endif
