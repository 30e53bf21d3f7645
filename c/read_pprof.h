/* read_pprof.h - a pprof profile.proto (gzipped or not): its sniffer; its
 * decoder, pb_pprof_decoder, is declared with every format's (formats.h).  The table
 * (c/formats.c) includes this header; read_pprof.c includes no header above
 * it. */
#ifndef PB_READ_PPROF_H
#define PB_READ_PPROF_H

#include "format_row.h" /* pb_format_info */

/* 1 when a pprof profile.proto (gzipped or not) starts p[0..len); fills
 * info (file_size: UINT64_MAX when unknown) */
int pb_pprof_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);

#endif
