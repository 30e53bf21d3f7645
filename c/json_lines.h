/* json_lines.h - chunks as JSON Lines (profbridge dump). */
#ifndef PB_JSON_LINES_H
#define PB_JSON_LINES_H

#include <stdio.h>
#include <string.h>
#include "pb.h"

/* Write one chunk as ["TAG",args...]\n */
void pb_json_chunk(FILE *out, const pb_chunk *c);
/* One JSON string: ASCII only, \uXXXX escapes; s->utf8 says whether the
 * bytes are UTF-8 characters (else each byte is a character). */
void pb_json_str(FILE *out, const pb_str *s);
/* A sink that writes every chunk it gets to out. */
void pb_json_sink_init(pb_sink *sink, FILE *out);

/* The chunk stream of in as JSON Lines (json_lines.h) to out_path, through
 * output.h: "-" is standard output; a file is written to a temp file and
 * renamed, so a failed dump leaves an existing output byte-identical.
 * Writer errors read "dump: io: ...". */
pb_status pb_convert_json_lines(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                                pb_error *err);

#endif
