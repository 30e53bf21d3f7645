/* convert.h - decode a profile in C straight into the NYTProf writer.
 *
 * No Perl is involved: decoder -> pb_nytprof_writer sink -> nytprof.out.
 * On any error (decoding, the writer's checks, I/O) the target file is left
 * as it was and no temporary file remains.
 */
#ifndef PB_CONVERT_H
#define PB_CONVERT_H

#include "pb.h"
#include "present.h"
#include "write_nytprof.h"

/* The nytprof.out end of a conversion (convert, merge): the writer, and the
 * presentation filter in front of it (present.h), whose sink the producer
 * feeds.  open: the writer at out (compress_level -1: its default), opt
 * copied into t->opt with source_base set to input's directory when opt has
 * none (a bare name: "." when bare_is_dot, else none).  close: with the
 * producer's status st, finish the filter and commit the file, or remove it
 * and hand out the first error (the writer's own when it stopped the
 * stream). */
typedef struct {
    pb_nytprof_writer *w;
    pb_present *pr;
    pb_options opt;
    char *base;
} pb_nytprof_target;
pb_status pb_nytprof_target_open(pb_nytprof_target *t, const char *out, int compress_level, const pb_options *opt,
                                 const char *input, int bare_is_dot, void (*warn)(void *ud, const char *msg),
                                 void *ud, pb_error *err);
pb_status pb_nytprof_target_close(pb_nytprof_target *t, pb_status st, pb_error *err);

/* fmt PB_FMT_UNKNOWN: detect.  opt NULL: defaults.  compress_level 0..9
 * (-1: the writer's default, 6).  Errors from the decoder keep the input's
 * format and name; errors from the writer read "nytprof-writer: ...". */
pb_status pb_convert_file(const char *in, pb_format fmt, const pb_options *opt, const char *out,
                          int compress_level, pb_error *err);

/* Same, with a callback for the decoder's non-fatal warnings (NULL drops them). */
pb_status pb_convert_file_warn(const char *in, pb_format fmt, const pb_options *opt, const char *out,
                               int compress_level, void (*warn)(void *ud, const char *msg), void *ud,
                               pb_error *err);

#endif
