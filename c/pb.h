/* pb.h - Devel::ProfileBridge C core: what a caller of it includes (the
 * XS, the C tests, the fuzz harnesses, the benches).
 *
 * Every decoder has the same shape:
 *     pb_status pb_read_<format>(pb_source *src, const pb_options *opt,
 *                                pb_sink *sink, pb_error *err);
 * It reads src from its current position (just after nothing: decoders
 * read and check their own magic), sends chunks to sink, and returns PB_OK
 * or fills err.  pb_decode_file() / pb_decode_mem() detect the format and
 * dispatch through the table of formats (c/formats.c, formats.h).
 *
 * The parts, each declared in the header of the .c that defines it:
 *   options.h     pb_options, their defaults and the statement budget, the
 *                 salvage warning, the optional libraries (c/options.c)
 *   format_row.h  a row of the table, pb_format_info and its facts
 *                 (c/format_row.c)
 *   formats.h     the table of formats, detection and the driver:
 *                 pb_detect_*, pb_decode_* (c/formats.c)
 * Code inside the core includes the part it needs, never this file.
 */
#ifndef PB_H
#define PB_H

#include "options.h"
#include "format_row.h"
#include "formats.h"

#endif
