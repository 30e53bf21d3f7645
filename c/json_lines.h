/* json_lines.h - chunks as JSON Lines (profbridge dump). */
#ifndef PB_JSON_LINES_H
#define PB_JSON_LINES_H

#include <stdio.h>
#include <string.h>
#include "chunk.h"

/* Write one chunk as ["TAG",args...]\n */
void pb_json_chunk(FILE *out, const pb_chunk *c);
/* One JSON string: ASCII only, \uXXXX escapes; s->utf8 says whether the
 * bytes are UTF-8 characters (else each byte is a character). */
void pb_json_str(FILE *out, const pb_str *s);
/* A sink that writes every chunk it gets to out. */
void pb_json_sink_init(pb_sink *sink, FILE *out);

#endif
