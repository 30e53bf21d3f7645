/* read_callgrind.h - callgrind's text format: its sniffer; its decoder,
 * pb_callgrind_decoder, is declared with every format's (formats.h).  The table
 * (c/formats.c) includes this header; read_callgrind.c includes no header
 * above it. */
#ifndef PB_READ_CALLGRIND_H
#define PB_READ_CALLGRIND_H

#include "format_row.h" /* pb_format_info */

/* 1 when "# callgrind format" or a callgrind header line comes first in
 * p[0..len); fills info */
int pb_callgrind_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);

#endif
