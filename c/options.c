/* options.c - pb_options defaults and resolution, the salvage warning, and
 * what the optional libraries of this build are (options.h).  Decoders use these;
 * nothing here knows a format. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include "codecs.h"
#include "options.h"
#ifndef PB_NO_YAJL
#include <yajl/yajl_version.h>
#endif

void pb_options_init(pb_options *o)
{
    memset(o, 0, sizeof *o);
}

/* a limit not given (0) takes its default; *by_size (when not NULL) says so */
static void dflt64(uint64_t *v, uint64_t d, int *by_size)
{
    if (!*v) {
        *v = d;
        if (by_size)
            *by_size = 1;
    }
}
static void dflt32(uint32_t *v, uint32_t d)
{
    if (!*v)
        *v = d;
}

void pb_options_resolve(pb_options *o)
{
    dflt64(&o->max_decompressed_bytes, PB_DEFAULT_MAX_DECOMPRESSED, &o->max_decompressed_by_size);
    dflt64(&o->max_record_size, PB_DEFAULT_MAX_RECORD, NULL);
    dflt32(&o->max_stack_depth, PB_DEFAULT_MAX_STACK_DEPTH);
    dflt32(&o->max_strings, PB_DEFAULT_MAX_STRINGS);
    dflt32(&o->max_frames, PB_DEFAULT_MAX_FRAMES);
    dflt64(&o->max_statements, PB_DEFAULT_MAX_STATEMENTS, &o->max_statements_by_size);
    dflt32(&o->max_line, PB_DEFAULT_MAX_LINE);
    dflt32(&o->max_threads, PB_DEFAULT_MAX_THREADS);
    dflt64(&o->max_string_bytes, PB_DEFAULT_MAX_STRING_BYTES, NULL);
}

uint64_t pb_statement_budget(const pb_options *o, uint64_t size)
{
    uint64_t max = o->max_statements ? o->max_statements : PB_DEFAULT_MAX_STATEMENTS, cap;
    if ((o->max_statements && !o->max_statements_by_size) || size == UINT64_MAX)
        return max; /* the caller's own limit, or no size to scale by */
    cap = size > UINT64_MAX / PB_STATEMENTS_PER_BYTE ? UINT64_MAX : size * PB_STATEMENTS_PER_BYTE;
    if (cap < PB_STATEMENTS_FLOOR)
        cap = PB_STATEMENTS_FLOOR;
    return cap < max ? cap : max;
}

void pb_options_copy(pb_options *dst, const pb_options *src)
{
    if (src)
        *dst = *src;
    else
        pb_options_init(dst);
    pb_options_resolve(dst);
}

void pb_options_to_source(const pb_options *opt, pb_source *src)
{
    src->max_inflated = opt->max_decompressed_bytes ? opt->max_decompressed_bytes : PB_DEFAULT_MAX_DECOMPRESSED;
    src->max_window = opt->max_record_size ? opt->max_record_size : PB_DEFAULT_MAX_RECORD;
    src->progress = opt->progress;
    src->progress_ud = opt->progress_ud;
    src->progress_next = 0;
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
#ifndef PB_NO_YAJL
const int pb_have_yajl = 1;
const char *pb_yajl_version(void)
{
    static char v[24];
    int n = yajl_version();
    snprintf(v, sizeof v, "%d.%d.%d", n / 10000, n / 100 % 100, n % 100);
    return v;
}
#else
const int pb_have_yajl = 0;
const char *pb_yajl_version(void) { return ""; }
#endif

pb_status pb_decoder_done(pb_sink *sink, void (*cleanup)(void *), void *state, pb_status st, pb_error *err)
{
    pb_sink_undefer(sink, state);
    cleanup(state);
    if (st == PB_ERR_ABORT && err->status == PB_OK)
        err->status = PB_ERR_ABORT;
    return st;
}
