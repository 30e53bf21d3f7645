/* write_dump.h - the dump target (profbridge dump, dump_json). */
#ifndef PB_WRITE_DUMP_H
#define PB_WRITE_DUMP_H

#include <stdio.h>
#include "options.h"

/* The dump writer on an open stream (its row in outputs.c; pb_write opens
 * the stream through output.h: "-" is standard output, a file is written to
 * a temp file and renamed, so a failed dump leaves an existing output
 * byte-identical; writer errors read "dump: io: ..."): a chunk sink that
 * writes each chunk as a line of JSON (json_lines.h) to out.  NULL on
 * out-of-memory (werr filled). */
pb_sink *pb_dump_new(FILE *out, pb_error *werr);
void pb_dump_free(pb_sink *s);

#endif
