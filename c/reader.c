/* reader.c - the out-of-line parts of reader.h: failure paths, slow paths
 * and the longer reads (see reader.h for what each one follows). */
#include <stdio.h>
#include "reader.h"

/* After pb_src_need() gave got <= 0 for n bytes: the source's error, or
 * "truncated" in the decoder's words at the current offset. */
pb_status pb_rd_short(pb_rd *r, int got, size_t n, const char *field)
{
    if (got < 0)
        return pb_rd_status(r);
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
    return pb_fail(r->err, PB_ERR_TRUNCATED, pb_src_offset(r->s), r->short_fmt, r->rec, n, n == 1 ? "" : "s",
                   field, pb_src_avail(r->s));
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}

pb_status pb_rd_trailing(pb_rd *r, const char *fmt, char *msg, size_t size)
{
    int end;
    pb_status st = pb_rd_at_end(r, &end);
    msg[0] = '\0';
    if (st == PB_OK && !end) {
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
        snprintf(msg, size, fmt, (unsigned long long)pb_src_offset(r->s));
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    }
    return st;
}

/* the one out-of-memory exit: "out of memory" (limit) at the current offset */
pb_status pb_rd_oom(pb_rd *r)
{
    return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(r->s), "out of memory");
}

pb_status pb_rd_nytp_u32_slow(pb_rd *r, uint32_t *v, const char *field)
{
    pb_source *s = r->s;
    unsigned len;
    pb_status st;
    if ((st = pb_rd_need(r, 1, field)) != PB_OK)
        return st;
    len = nytp_u32_len(*s->p);
    if ((st = pb_rd_need(r, len, field)) != PB_OK)
        return st;
    *v = nytp_u32_decode(s->p);
    s->p += len;
    return PB_OK;
}

/* nytprof-format.md 2 (see reader.h) */
pb_status pb_rd_nytp_str(pb_rd *r, pb_str *out, char **keep, size_t *keepcap, const char *field,
                         int past_eof_truncates, const char *limit_fmt)
{
    pb_source *s = r->s;
    unsigned char prefix;
    uint32_t len;
    pb_status st;
    if ((st = pb_rd_need(r, 1, field)) != PB_OK)
        return st;
    prefix = *s->p;
    if (prefix != NYTP_STRING && prefix != NYTP_STRING_UTF8)
        return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(s),
                       "%s record: %s should start with a string prefix (0x27 or 0x22), found 0x%02x", r->rec, field,
                       prefix);
    s->p++;
    if ((st = pb_rd_nytp_u32(r, &len, field)) != PB_OK)
        return st;
    if (len > r->max_record &&
        !(past_eof_truncates && s->view == PB_VIEW_PLAIN && pb_src_size(s) != UINT64_MAX &&
          pb_src_offset(s) + len > pb_src_size(s))) {
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
        return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(s), limit_fmt, r->rec, field, len,
                       (unsigned long long)r->max_record);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    }
    if ((st = pb_rd_need(r, len, field)) != PB_OK)
        return st;
    if (keep) {
        if ((st = pb_rd_copy(r, keep, keepcap, s->p, len)) != PB_OK)
            return st;
        *out = pb_str_make(*keep, len, prefix == NYTP_STRING_UTF8);
    } else {
        *out = pb_str_make((const char *)s->p, len, prefix == NYTP_STRING_UTF8);
    }
    s->p += len;
    return PB_OK;
}

/* nytprof-format.md 3 (see reader.h) */
pb_status pb_rd_line(pb_rd *r, const char **line, size_t *len, uint64_t max_line)
{
    pb_source *s = r->s;
    size_t scanned = 0;
    for (;;) {
        const unsigned char *nl;
        size_t avail = pb_src_avail(s);
        int got;
        if (avail > scanned) {
            nl = (const unsigned char *)memchr(s->p + scanned, '\n', avail - scanned);
            if (nl) {
                *line = (const char *)s->p;
                *len = (size_t)(nl - s->p) + 1;
                s->p = nl + 1;
                return PB_OK;
            }
            scanned = avail;
        }
        if (scanned >= max_line)
            return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(s),
                           "%s text: no newline in its first %llu bytes (max_record_size)", r->rec,
                           (unsigned long long)max_line);
        got = pb_src_need(s, avail + 1);
        if (got < 0)
            return pb_rd_status(r);
        if (got == 0)
            return pb_fail(r->err, PB_ERR_TRUNCATED, pb_src_offset(s) + avail, "%s text has no terminating newline",
                           r->rec);
    }
}

pb_status pb_rd_leb128_slow(pb_rd *r, uint64_t *v, int max32, const char *field)
{
    pb_source *s = r->s;
    uint64_t x = 0;
    unsigned k;
    int done = 0;
    for (k = 0; !done; k++) {
        int got = pb_src_need(s, k + 1);
        if (got < 0)
            return pb_rd_status(r);
        if (got == 0)
            return pb_fail(r->err, PB_ERR_TRUNCATED, pb_src_offset(s), "%s ends inside its %s varint", r->rec, field);
        done = pb_leb128_step(&x, k, s->p[k], max32);
    }
    if (done < 0)
        return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(s), "%s has a malformed %s varint (more than %s bits)",
                       r->rec, field, max32 ? "32" : "64");
    s->p += k;
    *v = x;
    return PB_OK;
}

pb_status pb_rd_be128_u32_slow(pb_rd *r, uint32_t *v, const char *field)
{
    pb_source *s = r->s;
    uint32_t x = 0;
    int i;
    pb_status st;
    for (i = 0; i < 5; i++) {
        unsigned b;
        if ((st = pb_rd_need(r, 1, field)) != PB_OK)
            return st;
        b = *s->p++;
        x = (x << 7) | (b & 0x7f);
        if (!(b & 0x80)) {
            *v = x;
            return PB_OK;
        }
    }
    return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(s) - 5, "%s record: varint %s is longer than 5 bytes",
                   r->rec, field);
}

/* skip n bytes (any number: the window need not hold them at once); cut
 * short, the message counts all n - (skipped) bytes still to come */
pb_status pb_rd_skip(pb_rd *r, uint64_t n, const char *field)
{
    pb_source *s = r->s;
    while (n > 0) {
        size_t have = pb_src_avail(s);
        if (have == 0) {
            int got = pb_src_need(s, 1);
            if (got <= 0)
                return pb_rd_short(r, got, (size_t)n, field);
            have = pb_src_avail(s);
        }
        if ((uint64_t)have > n)
            have = (size_t)n;
        s->p += have;
        n -= have;
    }
    return PB_OK;
}

