/* read_pynytprof.h - what the sniffer (c/formats.c) asks the Pynytprof
 * decoder (c/read_pynytprof.c). */
#ifndef PB_READ_PYNYTPROF_H
#define PB_READ_PYNYTPROF_H

#include <stddef.h>

/* Pynytprof's dialect from a file's first bytes (read_pynytprof.c): "A".."D",
 * or "" when they do not say */
const char *pb_pynytprof_dialect(const unsigned char *p, size_t len);

#endif
