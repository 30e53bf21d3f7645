/* read_perf.h - `perf script` text: its sniffer; its decoder,
 * pb_perf_decoder, is declared with every format's (formats.h).  The table
 * (c/formats.c) includes this header; read_perf.c includes no header above
 * it. */
#ifndef PB_READ_PERF_H
#define PB_READ_PERF_H

#include "format_row.h" /* pb_format_info */

/* 1 when p[0..len) starts `perf script` text (a "# ========" header
 * block, or sample headers and frame lines; whole as pb_folded_sniff's) */
int pb_perf_sniff(const unsigned char *p, size_t len, int whole);

#endif
