/* convert.c - decoder -> NYTProf writer, all in C (see convert.h). */
#include <stdlib.h>
#include <string.h>
#include "convert.h"
#include "json_lines.h"
#include "output.h"
#include "present.h"

pb_status pb_convert_file_warn(const char *in, pb_format fmt, const pb_options *opt, const char *out,
                               int compress_level, void (*warn)(void *ud, const char *msg), void *ud,
                               pb_error *err)
{
    pb_nytprof_writer_opts wo;
    pb_nytprof_writer *w;
    pb_present *pr;
    pb_status st;
    pb_nytprof_writer_opts_init(&wo);
    if (compress_level >= 0)
        wo.compress_level = compress_level;
    if (opt)
        wo.max_line = opt->max_line;
    wo.warn = warn;
    wo.warn_ud = ud;
    w = pb_nytprof_writer_open(out, &wo, err);
    if (!w)
        return err->status;
    /* a foreign stream passes the presentation filter: names, source */
    {
        pb_options po;
        char *base = NULL;
        const char *slash = strrchr(in, '/');
        if (opt)
            po = *opt;
        else
            pb_options_init(&po);
        if (!po.source_base) {
            size_t bl = slash ? (size_t)(slash - in) : 1;
            base = (char *)malloc(bl + 1);
            if (!base) {
                pb_nytprof_writer_abort(w);
                return pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
            }
            memcpy(base, slash ? in : ".", bl);
            if (slash && bl == 0) {
                base[0] = '/';
                bl = 1;
            }
            base[bl] = '\0';
            po.source_base = base;
        }
        pr = pb_present_new(pb_nytprof_writer_sink(w), &po, err);
        if (!pr) {
            free(base);
            pb_nytprof_writer_abort(w);
            return err->status;
        }
        st = pb_decode_file(in, fmt, &po, pb_present_sink(pr), err);
        if (st == PB_OK)
            st = pb_present_finish(pr);
        pb_present_free(pr);
        free(base);
    }
    if (st != PB_OK) {
        if (st == PB_ERR_ABORT && pb_nytprof_writer_failed(w))
            return pb_nytprof_writer_close(w, err); /* hands out the writer's reason, removes the temp */
        pb_nytprof_writer_abort(w);
        return st;
    }
    return pb_nytprof_writer_close(w, err);
}

pb_status pb_convert_file(const char *in, pb_format fmt, const pb_options *opt, const char *out,
                          int compress_level, pb_error *err)
{
    return pb_convert_file_warn(in, fmt, opt, out, compress_level, NULL, NULL, err);
}

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
