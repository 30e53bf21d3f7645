/* read_tachyon.c - placeholder until the tachyon decoder lands: the format is
 * recognised by detect.c and reported as not yet supported. */
#include "pb.h"

const int pb_have_tachyon = 0;

pb_status pb_read_tachyon(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    (void)opt;
    (void)sink;
    return pb_fail(err, PB_ERR_UNSUPPORTED, pb_src_offset(src), "tachyon files are recognised but not yet supported");
}
