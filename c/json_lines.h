/* json_lines.h - chunks as JSON Lines (profbridge dump). */
#ifndef PB_JSON_LINES_H
#define PB_JSON_LINES_H

#include <stdio.h>
#include <string.h>
#include "options.h"

/* Write one chunk as ["TAG",args...]\n */
void pb_json_chunk(FILE *out, const pb_chunk *c);
/* The one JSON string escaper: the n bytes at p as a JSON string, quotes
 * included, given to put() in pieces.  utf8: the bytes are UTF-8 characters
 * (a byte that starts no valid sequence, and every byte when utf8 is 0, is
 * the character of its value); '"' and '\\' are escaped, other characters
 * below 0x20, 0x7F and (unless PB_JSON_RAW_UTF8) non-ASCII ones as \uXXXX
 * (a surrogate pair above U+FFFF).
 *   PB_JSON_SHORT     \n \r \t \b \f instead of their \u00XX
 *   PB_JSON_RAW_UTF8  a valid UTF-8 sequence passes through as it is */
#define PB_JSON_SHORT 1u
#define PB_JSON_RAW_UTF8 2u
typedef void (*pb_json_put)(void *ctx, const char *s, size_t n);
void pb_json_escape(const char *p, size_t n, int utf8, unsigned flags, pb_json_put put, void *ctx);
/* One JSON string to out: ASCII only, short escapes; s->utf8 says whether
 * the bytes are UTF-8 characters (else each byte is a character). */
void pb_json_str(FILE *out, const pb_str *s);
/* A sink that writes every chunk it gets to out. */
void pb_json_sink_init(pb_sink *sink, FILE *out);

#endif
