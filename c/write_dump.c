/* write_dump.c - the dump target: a profile's chunk stream as JSON Lines
 * (one chunk a line, json_lines.c's conventions), written through
 * output.h's temp file and rename. */
#include <stdio.h>
#include "write_dump.h"
#include "json_lines.h"
#include "output.h"

typedef struct {
    const char *in;
    pb_format fmt;
    const pb_options *opt;
} json_args;

static pb_status json_write(FILE *fp, void *ctx, pb_error *werr, pb_error *err)
{
    const json_args *a = (const json_args *)ctx;
    pb_sink sink;
    (void)werr;
    pb_json_sink_init(&sink, fp);
    return pb_decode_file(a->in, a->fmt, a->opt, &sink, err);
}

pb_status pb_convert_json_lines(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                                pb_error *err)
{
    json_args a;
    a.in = in;
    a.fmt = fmt;
    a.opt = opt;
    return pb_output_with(out_path, "dump", json_write, &a, err);
}
