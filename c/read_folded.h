/* read_folded.h - folded stacks ("stack weight" lines): its sniffer; its
 * decoder, pb_folded_decoder, is declared with every format's (formats.h).  The table
 * (c/formats.c) includes this header; read_folded.c includes no header above
 * it. */
#ifndef PB_READ_FOLDED_H
#define PB_READ_FOLDED_H

#include "format_row.h" /* pb_format_info */

/* 1 when every non-blank line of p[0..len) is "stack weight" (whole: p is
 * the whole input, so its last line counts even without a newline; else a
 * line cut at len is only checked for NULs, and a first line longer than
 * len must be 16 or more frames) */
int pb_folded_sniff(const unsigned char *p, size_t len, int whole);

#endif
