/* decode.c - options, the decoder table, and detect-then-decode. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include "codecs.h"
#include "pb.h"
#include "read_statprofiler.h"

void pb_options_init(pb_options *o)
{
    memset(o, 0, sizeof *o);
}

pb_status pb_salvage_warn(pb_error *err, pb_sink *sink, const char *done_fmt, ...)
{
    char line[PB_ERR_MSG_MAX + PB_ERR_FILE_MAX + 160];
    char done[128];
    char msg[sizeof line + sizeof done + 32];
    va_list ap;
    va_start(ap, done_fmt);
    vsnprintf(done, sizeof done, done_fmt, ap);
    va_end(ap);
    pb_error_format(err, line, sizeof line);
    snprintf(msg, sizeof msg, "%s; salvaged %s before it", line, done);
    err->status = PB_OK;
    err->message[0] = '\0';
    err->has_offset = 0;
    err->offset = 0;
    if (sink && sink->warn)
        sink->warn(sink, msg);
    return PB_OK;
}

void pb_options_resolve(pb_options *o)
{
    if (!o->max_decompressed_bytes) o->max_decompressed_bytes = PB_DEFAULT_MAX_DECOMPRESSED;
    if (!o->max_record_size) o->max_record_size = PB_DEFAULT_MAX_RECORD;
    if (!o->max_stack_depth) o->max_stack_depth = PB_DEFAULT_MAX_STACK_DEPTH;
    if (!o->max_strings) o->max_strings = PB_DEFAULT_MAX_STRINGS;
    if (!o->max_frames) o->max_frames = PB_DEFAULT_MAX_FRAMES;
    if (!o->max_statements) o->max_statements = PB_DEFAULT_MAX_STATEMENTS;
    if (!o->max_line) o->max_line = PB_DEFAULT_MAX_LINE;
}

/* One line per decoder; a format without one here is "recognised but not
 * yet supported". */
pb_decoder_fn pb_decoder_for(pb_format f)
{
    switch (f) {
    case PB_FMT_NYTPROF: return pb_read_nytprof;
    case PB_FMT_PYNYTPROF: return pb_have_pynytprof ? pb_read_pynytprof : NULL;
    case PB_FMT_EASYPROFILER: return pb_have_easyprofiler ? pb_read_easyprofiler : NULL;
    case PB_FMT_TACHYON: return pb_have_tachyon ? pb_read_tachyon : NULL;
    case PB_FMT_STATPROFILER: return pb_have_statprofiler ? pb_read_statprofiler : NULL;
    default: return NULL;
    }
}

pb_status pb_detect_source(pb_source *src, pb_format *format, pb_error *err)
{
    pb_format_info info;
    size_t n;
    size_t want = 4096;
    if (pb_src_size(src) != UINT64_MAX && pb_src_size(src) < want)
        want = (size_t)pb_src_size(src);
    pb_src_need(src, want);
    if (err->status)
        return err->status;
    n = pb_src_avail(src);
    pb_detect_bytes(src->p, n, &info);
    if (info.format == PB_FMT_UNKNOWN) {
        err->format = "profbridge";
        if (n == 0)
            return pb_fail(err, PB_ERR_CORRUPT, 0, "empty file: not a profile");
        return pb_fail(err, PB_ERR_CORRUPT, 0,
                       "not a profile this distribution recognises (NYTProf, Pynytprof, EasyProfiler, "
                       "Tachyon, StatProfiler); first bytes %02x %02x %02x %02x",
                       n > 0 ? src->p[0] : 0, n > 1 ? src->p[1] : 0, n > 2 ? src->p[2] : 0, n > 3 ? src->p[3] : 0);
    }
    *format = info.format;
    return PB_OK;
}

pb_status pb_decode_source(pb_source *src, const char *name, pb_format format, const pb_options *opt_in,
                          pb_sink *sink, pb_error *err)
{
    pb_options opt;
    pb_decoder_fn fn;
    pb_status st;
    if (opt_in)
        opt = *opt_in;
    else
        pb_options_init(&opt);
    pb_options_resolve(&opt);
    pb_options_to_source(&opt, src);
    if (format == PB_FMT_UNKNOWN && (st = pb_detect_source(src, &format, err)) != PB_OK)
        return st;
    err->format = pb_format_name(format);
    src->format = err->format;
    fn = pb_decoder_for(format);
    if (!fn)
        return pb_fail(err, PB_ERR_UNSUPPORTED, 0,
                       "%s files are recognised but not yet supported by this version (%s)",
                       pb_format_name(format), PB_VERSION_STRING);
    (void)name;
    st = fn(src, &opt, sink, err);
    if (st != PB_OK && err->status == PB_OK)
        err->status = st;
    pb_src_error_to_file(src, err); /* offsets in the file, also in compressed data */
    return st;
}

pb_status pb_decode_file(const char *path, pb_format format, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    pb_source src;
    pb_status st;
    char **run;
    size_t nrun;
    int r;
    pb_error_init(err, format ? pb_format_name(format) : "profbridge", path);
    /* a StatProfiler run (a directory, or a root's first file): the whole
     * fork genealogy, as for_chunks(files => ...) reads it */
    if ((format == PB_FMT_UNKNOWN || format == PB_FMT_STATPROFILER) && pb_have_statprofiler) {
        if ((r = pb_statprofiler_run(path, opt, &run, &nrun, err)) < 0)
            return err->status;
        if (r > 0) {
            st = pb_read_statprofiler_files((const char *const *)run, nrun, opt, sink, err);
            pb_statprofiler_free_list(run, nrun);
            return st;
        }
    }
    st = pb_src_open_file(&src, path, err);
    if (st != PB_OK)
        return st;
    st = pb_decode_source(&src, path, format, opt, sink, err);
    pb_src_close(&src);
    return st;
}

pb_status pb_decode_mem(const void *data, size_t len, const char *name, pb_format format, const pb_options *opt,
                        pb_sink *sink, pb_error *err)
{
    pb_source src;
    pb_status st;
    pb_error_init(err, format ? pb_format_name(format) : "profbridge", name);
    pb_src_open_mem(&src, data, len, err);
    st = pb_decode_source(&src, name, format, opt, sink, err);
    pb_src_close(&src);
    return st;
}

const int pb_have_zstd = PB_HAVE_ZSTD;
const int pb_have_snappy = PB_HAVE_SNAPPY;
const char *pb_zlib_version(void) { return zlibVersion(); }
const char *pb_zstd_version(void)
{
#if PB_HAVE_ZSTD
    return ZSTD_versionString();
#else
    return "";
#endif
}

void pb_options_to_source(const pb_options *opt, pb_source *src)
{
    src->max_inflated = opt->max_decompressed_bytes ? opt->max_decompressed_bytes : PB_DEFAULT_MAX_DECOMPRESSED;
    src->max_window = opt->max_record_size ? opt->max_record_size : PB_DEFAULT_MAX_RECORD;
    src->progress = opt->progress;
    src->progress_ud = opt->progress_ud;
    src->progress_next = 0;
}
