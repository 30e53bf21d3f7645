/* read_pynytprof.h - what the sniffer (c/formats.c) asks the Pynytprof
 * decoder (c/read_pynytprof.c). */
#ifndef PB_READ_PYNYTPROF_H
#define PB_READ_PYNYTPROF_H

#include <stddef.h>
#include "options.h"

/* The decoder's one entry (the row in formats.c names it; formats.h says
 * what it gives): its chunks, the files, subs, edges and statements through
 * the model (model.h); the driver takes its stacks from them
 * (chunk_stacks.h) */
pb_status pb_read_pynytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);

/* Pynytprof's dialect from a file's first bytes (read_pynytprof.c): "A".."D",
 * or "" when they do not say */
const char *pb_pynytprof_dialect(const unsigned char *p, size_t len);

#endif
