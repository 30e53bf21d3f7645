/* decode_samples.c - the driver of the stack-sample outputs (collapsed,
 * pprof): detect, resolve a StatProfiler run, decode into a pb_sample_sink.
 * See fold_samples.h. */
#include <string.h>
#include "fold_samples.h"
#include "read_statprofiler.h"

/* c/read_statprofiler.c (declared in c/read_statprofiler.h) */
pb_status pb_read_statprofiler_samples(pb_source *src, const pb_options *opt, pb_sample_sink *out, pb_error *err);

pb_sample_decoder_fn pb_sample_decoder_for(pb_format f)
{
    switch (f) {
    case PB_FMT_TACHYON: return pb_read_tachyon_samples;
    case PB_FMT_EASYPROFILER: return pb_read_easyprofiler_stacks;
    case PB_FMT_STATPROFILER: return pb_have_statprofiler ? pb_read_statprofiler_samples : NULL;
    case PB_FMT_NYTPROF: return pb_read_nytprof_samples;
    case PB_FMT_PYNYTPROF: return pb_read_pynytprof_samples;
    default: return NULL;
    }
}

static pb_status samples_src(pb_source *src, pb_format fmt, const pb_options *opt_in, pb_sample_sink *ss,
                             const char *what, pb_error *err)
{
    pb_options opt;
    pb_sample_decoder_fn fn;
    pb_status st;
    if (opt_in)
        opt = *opt_in;
    else
        pb_options_init(&opt);
    pb_options_resolve(&opt);
    pb_options_to_source(&opt, src);
    if (fmt == PB_FMT_UNKNOWN && (st = pb_detect_source(src, &fmt, err)) != PB_OK)
        return st;
    err->format = pb_format_name(fmt);
    src->format = err->format;
    fn = pb_sample_decoder_for(fmt);
    if (!fn)
        return pb_fail(err, PB_ERR_UNSUPPORTED, 0,
                       "%s profiles have no stacks for %s (it needs Tachyon, StatProfiler or EasyProfiler input)",
                       pb_format_name(fmt), what);
    st = fn(src, &opt, ss, err);
    if (st != PB_OK && err->status == PB_OK)
        err->status = st;
    pb_src_error_to_file(src, err);
    return st;
}

pb_status pb_decode_samples_file(const char *path, pb_format fmt, const pb_options *opt, pb_sample_sink *ss,
                                 const char *what, pb_error *err)
{
    pb_source src;
    pb_status st;
    char **run;
    size_t nrun;
    int r;
    pb_error_init(err, fmt ? pb_format_name(fmt) : "profbridge", path);
    if ((fmt == PB_FMT_UNKNOWN || fmt == PB_FMT_STATPROFILER) && pb_have_statprofiler) {
        /* a StatProfiler run: the whole genealogy (read_statprofiler.h);
         * each file's decoder resolves the options itself */
        if ((r = pb_statprofiler_run(path, opt, &run, &nrun, err)) < 0)
            return err->status;
        if (r > 0) {
            st = pb_statprofiler_files((const char *const *)run, nrun, opt, ss, NULL, err);
            pb_statprofiler_free_list(run, nrun);
            return st;
        }
    }
    st = pb_src_open_file(&src, path, err);
    if (st != PB_OK)
        return st;
    st = samples_src(&src, fmt, opt, ss, what, err);
    pb_src_close(&src);
    return st;
}

pb_status pb_decode_samples_mem(const void *data, size_t len, const char *name, pb_format fmt, const pb_options *opt,
                                pb_sample_sink *ss, const char *what, pb_error *err)
{
    pb_source src;
    pb_status st;
    pb_error_init(err, fmt ? pb_format_name(fmt) : "profbridge", name);
    pb_src_open_mem(&src, data, len, err);
    st = samples_src(&src, fmt, opt, ss, what, err);
    pb_src_close(&src);
    return st;
}
