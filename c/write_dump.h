/* write_dump.h - the dump target (profbridge dump, dump_json). */
#ifndef PB_WRITE_DUMP_H
#define PB_WRITE_DUMP_H

#include "pb.h"

/* The chunk stream of in as JSON Lines (json_lines.h) to out_path, through
 * output.h: "-" is standard output; a file is written to a temp file and
 * renamed, so a failed dump leaves an existing output byte-identical.
 * Writer errors read "dump: io: ...". */
pb_status pb_convert_json_lines(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                                pb_error *err);

#endif
