/* convert.c - decoder -> NYTProf writer, all in C (see convert.h). */
#include <stdlib.h>
#include <string.h>
#include "convert.h"
#include "present.h"

pb_status pb_nytprof_target_open(pb_nytprof_target *t, const char *out, int compress_level, const pb_options *opt,
                                 const char *input, int bare_is_dot, void (*warn)(void *ud, const char *msg),
                                 void *ud, pb_error *err)
{
    pb_nytprof_writer_opts wo;
    const char *slash = strrchr(input, '/');
    memset(t, 0, sizeof *t);
    pb_nytprof_writer_opts_init(&wo);
    if (compress_level >= 0)
        wo.compress_level = compress_level;
    if (opt)
        wo.max_line = opt->max_line;
    wo.warn = warn;
    wo.warn_ud = ud;
    if (!(t->w = pb_nytprof_writer_open(out, &wo, err)))
        return err->status;
    if (opt)
        t->opt = *opt;
    else
        pb_options_init(&t->opt);
    /* the input's directory: where the source of relative names is looked
     * for last (present.h) */
    if (!t->opt.source_base && (slash || bare_is_dot)) {
        size_t bl = slash ? (size_t)(slash - input) : 1;
        if (!(t->base = (char *)malloc(bl + 2))) {
            pb_nytprof_writer_abort(t->w);
            return pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        }
        memcpy(t->base, slash ? (bl ? input : "/") : ".", bl ? bl : 1);
        t->base[bl ? bl : 1] = '\0';
        t->opt.source_base = t->base;
    }
    if (!(t->pr = pb_present_new(pb_nytprof_writer_sink(t->w), &t->opt, err))) {
        free(t->base);
        pb_nytprof_writer_abort(t->w);
        return err->status;
    }
    return PB_OK;
}

pb_status pb_nytprof_target_close(pb_nytprof_target *t, pb_status st, pb_error *err)
{
    if (st == PB_OK)
        st = pb_present_finish(t->pr);
    pb_present_free(t->pr);
    free(t->base);
    if (st != PB_OK) {
        if (st == PB_ERR_ABORT && pb_nytprof_writer_failed(t->w))
            return pb_nytprof_writer_close(t->w, err); /* hands out the writer's reason, removes the temp */
        pb_nytprof_writer_abort(t->w);
        return st;
    }
    return pb_nytprof_writer_close(t->w, err);
}

pb_status pb_convert_file_warn(const char *in, pb_format fmt, const pb_options *opt, const char *out,
                               int compress_level, void (*warn)(void *ud, const char *msg), void *ud,
                               pb_error *err)
{
    pb_nytprof_target t;
    pb_status st = pb_nytprof_target_open(&t, out, compress_level, opt, in, 1, warn, ud, err);
    if (st != PB_OK)
        return st;
    /* a foreign stream passes the presentation filter: names, source */
    st = pb_decode_file(in, fmt, &t.opt, pb_present_sink(t.pr), err);
    return pb_nytprof_target_close(&t, st, err);
}

pb_status pb_convert_file(const char *in, pb_format fmt, const pb_options *opt, const char *out,
                          int compress_level, pb_error *err)
{
    return pb_convert_file_warn(in, fmt, opt, out, compress_level, NULL, NULL, err);
}
