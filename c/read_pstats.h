/* read_pstats.h - Python's pstats (a marshal dict): its sniffer; its decoder,
 * pb_pstats_decoder, is declared with every format's (formats.h).  The table
 * (c/formats.c) includes this header; read_pstats.c includes no header above
 * it. */
#ifndef PB_READ_PSTATS_H
#define PB_READ_PSTATS_H

#include "format_row.h" /* pb_format_info */

/* 1 when p[0..len) is a marshal dict whose first key is a pstats key;
 * fills info */
int pb_pstats_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);

#endif
