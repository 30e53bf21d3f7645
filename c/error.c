/* error.c - the error record. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"

const char *pb_status_class(pb_status st)
{
    switch (st) {
    case PB_OK: return "ok";
    case PB_ERR_TRUNCATED: return "truncated";
    case PB_ERR_CORRUPT: return "corrupt";
    case PB_ERR_UNSUPPORTED: return "unsupported";
    case PB_ERR_LIMIT: return "limit";
    case PB_ERR_IO: return "io";
    case PB_ERR_ABORT: return "abort";
    case PB_ERR_USAGE: return "usage";
    }
    return "unknown";
}

void pb_error_init(pb_error *e, const char *format, const char *file)
{
    memset(e, 0, sizeof *e);
    e->format = format ? format : "profbridge";
    if (file) {
        strncpy(e->file, file, sizeof e->file - 1);
        e->file[sizeof e->file - 1] = '\0';
    }
}

static pb_status vfail(pb_error *e, pb_status st, int has_off, uint64_t off, const char *fmt, va_list ap)
{
    if (e->status != PB_OK)
        return e->status; /* first error wins */
    e->status = st;
    e->has_offset = has_off;
    e->offset = off;
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    return st;
}

pb_status pb_fail(pb_error *e, pb_status st, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    pb_status r;
    va_start(ap, fmt);
    r = vfail(e, st, 1, offset, fmt, ap);
    va_end(ap);
    return r;
}

pb_status pb_fail_nooff(pb_error *e, pb_status st, const char *fmt, ...)
{
    va_list ap;
    pb_status r;
    va_start(ap, fmt);
    r = vfail(e, st, 0, 0, fmt, ap);
    va_end(ap);
    return r;
}

pb_status pb_vfail_nooff(pb_error *e, pb_status st, const char *fmt, va_list ap)
{
    return vfail(e, st, 0, 0, fmt, ap);
}

void pb_error_format(const pb_error *e, char *buf, size_t bufsize)
{
    if (e->has_offset)
        snprintf(buf, bufsize, "%s: %s: %s at byte %llu of %s", e->format, pb_status_class(e->status),
                 e->message, (unsigned long long)e->offset, e->file[0] ? e->file : "(memory)");
    else if (e->file[0])
        snprintf(buf, bufsize, "%s: %s: %s: %s", e->format, pb_status_class(e->status), e->file, e->message);
    else /* no file to name (a usage error about a handle): none is made up */
        snprintf(buf, bufsize, "%s: %s: %s", e->format, pb_status_class(e->status), e->message);
}

void *pb_new_zeroed(size_t size, pb_error *e)
{
    void *p = calloc(1, size);
    if (!p)
        pb_fail(e, PB_ERR_LIMIT, 0, "out of memory");
    return p;
}
