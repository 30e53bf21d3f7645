/* reader.h - the reader primitives every decoder (read_*.c) is built on.
 *
 * A decoder reads a pb_source (source.h) through a pb_rd: a bounded cursor
 * that knows the record being read (for messages), how the decoder words a
 * record cut short, and max_record_size.  Every read checks its bounds
 * first (pb_rd_need), fast path inline: when the window holds the bytes,
 * a read is a pointer compare and a load.  One failure path per kind:
 *   truncated  pb_rd_short()  "<rec> needs N more bytes for its <field>..."
 *              in the decoder's own words (short_fmt, below)
 *   limit      pb_rd_oom()    "out of memory" at the current offset
 *   an error the source already recorded (I/O, inflate, window limit) is
 *   returned as it is.
 * Also here: the fixed-width loads of both byte orders, each varint flavour
 * the formats use (NYTProf's prefix varint, LEB128, big-endian base-128),
 * length-prefixed and newline-terminated strings, growth of byte buffers,
 * and the options preamble of every decoder entry point.
 *
 * Plain C99, no Perl headers: static inline here, the failure and slow
 * paths in reader.c.
 */
#ifndef PB_READER_H
#define PB_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "error.h"
#include "nytp_codec.h"
#include "options.h"
#include "source.h"
#include "util.h"

/* ---- fixed-width loads (p must hold the bytes: pb_rd_need first) --------- */
/* little-endian: NYTProf NVs (nytprof-format.md 2), and the binary formats whose
 * specs say so (their rows' readers) */
static inline uint16_t pb_le16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t pb_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t pb_le64(const unsigned char *p) { return (uint64_t)pb_le32(p) | ((uint64_t)pb_le32(p + 4) << 32); }
/* an IEEE double stored little-endian (NYTProf NV, a Python tracer's f64) */
static inline double pb_le_f64(const unsigned char *p) { return nytp_nv_decode(p); }
/* big-endian: packet lengths of a format whose spec says u16 BE */
static inline uint16_t pb_be16(const unsigned char *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t pb_be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* the writer's byte order (for a format whose spec puts fields in the
 * writer's native order, the magic tells which): a native load, swapped
 * when swap is set */
static inline uint32_t pb_bswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}
static inline uint64_t pb_bswap64(uint64_t v)
{
    return ((uint64_t)pb_bswap32((uint32_t)v) << 32) | pb_bswap32((uint32_t)(v >> 32));
}
static inline uint32_t pb_load32(const unsigned char *p, int swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return swap ? pb_bswap32(v) : v;
}
static inline uint64_t pb_load64(const unsigned char *p, int swap)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return swap ? pb_bswap64(v) : v;
}
static inline double pb_load_f64(const unsigned char *p, int swap)
{
    uint64_t u = pb_load64(p, swap);
    double d;
    memcpy(&d, &u, 8);
    return d;
}
/* 1 when this machine stores integers little-endian */
static inline int pb_host_little(void)
{
    uint32_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* ---- the cursor ---------------------------------------------------------- */
/* How a decoder words "the input ended inside a record": a printf format
 * taking, in this order, (const char *rec, size_t n, const char *plural
 * ("" or "s"), const char *field, size_t bytes_left).  Use "%.0s" to leave
 * an argument out. */
#define PB_RD_SHORT_RECORD "%s record needs %zu more byte%s for its %s, the input has %zu"

typedef struct {
    pb_source *s;
    pb_error *err;
    const char *rec;        /* the record being read, for messages */
    const char *short_fmt;  /* truncation message (above) */
    uint64_t max_record;    /* max_record_size: longest string or line */
} pb_rd;

static inline void pb_rd_init(pb_rd *r, pb_source *s, pb_error *err, const char *short_fmt, uint64_t max_record)
{
    r->s = s;
    r->err = err;
    r->rec = "";
    r->short_fmt = short_fmt;
    r->max_record = max_record ? max_record : PB_DEFAULT_MAX_RECORD;
}

static inline uint64_t pb_rd_offset(const pb_rd *r) { return pb_src_offset(r->s); }
static inline size_t pb_rd_avail(const pb_rd *r) { return pb_src_avail(r->s); }

/* The status of an error the source (or an earlier step) recorded. */
static inline pb_status pb_rd_status(const pb_rd *r) { return r->err->status ? r->err->status : PB_ERR_IO; }

/* After pb_src_need() gave got <= 0 for n bytes: the source's error, or
 * "truncated" in the decoder's words (short_fmt) at the current offset. */
pb_status pb_rd_short(pb_rd *r, int got, size_t n, const char *field);

/* n bytes at r->s->p, or the failure (truncated / the source's error) */
static inline pb_status pb_rd_need(pb_rd *r, size_t n, const char *field)
{
    int got;
    if ((size_t)(r->s->end - r->s->p) >= n)
        return PB_OK;
    got = pb_src_need(r->s, n);
    return got > 0 ? PB_OK : pb_rd_short(r, got, n, field);
}

/* *end = 1 when the input has ended (nothing more will come), 0 when a byte
 * follows; or the source's error */
static inline pb_status pb_rd_at_end(pb_rd *r, int *end)
{
    int e = pb_src_at_eof(r->s);
    if (e < 0)
        return pb_rd_status(r);
    *end = e;
    return PB_OK;
}

/* After a format's end marker: msg holds fmt (which takes the offset of
 * the first unread byte, as unsigned long long) when bytes follow, else "". */
pb_status pb_rd_trailing(pb_rd *r, const char *fmt, char *msg, size_t size);

/* the one out-of-memory exit: "out of memory" (limit) at the current offset */
pb_status pb_rd_oom(pb_rd *r);

/* Copy n bytes into a growing byte buffer (*buf, *cap), NUL-terminated. */
static inline pb_status pb_rd_copy(pb_rd *r, char **buf, size_t *cap, const void *p, size_t n)
{
    if (n >= SIZE_MAX || pb_grow((void **)buf, cap, n + 1, 1) < 0)
        return pb_rd_oom(r);
    memcpy(*buf, p, n);
    (*buf)[n] = '\0';
    return PB_OK;
}

/* ---- fixed-width reads ---------------------------------------------------- */
/* an 8-byte little-endian IEEE double (NYTProf NV: nytprof-format.md 2) */
static inline pb_status pb_rd_le_f64(pb_rd *r, double *v, const char *field)
{
    pb_status st = pb_rd_need(r, 8, field);
    if (st != PB_OK)
        return st;
    *v = pb_le_f64(r->s->p);
    r->s->p += 8;
    return PB_OK;
}

/* ---- NYTProf's prefix varint (nytprof-format.md 2, nytp_codec.h) --------- */
/* the slow path of pb_rd_nytp_u32 (fewer than 5 bytes in the window) */
pb_status pb_rd_nytp_u32_slow(pb_rd *r, uint32_t *v, const char *field);

static inline pb_status pb_rd_nytp_u32(pb_rd *r, uint32_t *v, const char *field)
{
    pb_source *s = r->s;
    if (s->end - s->p >= 5) {
        unsigned len = nytp_u32_len(*s->p);
        *v = nytp_u32_decode(s->p);
        s->p += len;
        return PB_OK;
    }
    return pb_rd_nytp_u32_slow(r, v, field);
}

/* A NYTProf string (nytprof-format.md 2): prefix 0x27 (bytes) or 0x22
 * (UTF-8), u32 length, the bytes.  *out points into the source window (valid
 * until the next read) unless keep/keepcap are given: then it is copied
 * there.  A length over max_record_size is a limit error; with
 * past_eof_truncates, not when it also runs past the end of a plain file of
 * known size (then it is truncation).  limit_fmt: the message, taking (rec,
 * field, len as unsigned) and, when it has a fourth conversion,
 * max_record_size as unsigned long long. */
pb_status pb_rd_nytp_str(pb_rd *r, pb_str *out, char **keep, size_t *keepcap, const char *field,
                         int past_eof_truncates, const char *limit_fmt);

/* A text line (NYTProf's header, ATTRIBUTE/OPTION/COMMENT records:
 * nytprof-format.md 3): the bytes up to and including "\n", in the window.
 * max_line: no newline within that many bytes is a limit error
 * (UINT64_MAX: only the source's own window limit applies). */
pb_status pb_rd_line(pb_rd *r, const char **line, size_t *len, uint64_t max_line);

/* ---- LEB128 ("varints are unsigned LEB128", as a format's spec says) ----
 * At most 10 bytes; with max32, a value over 2^32-1 is malformed. */
/* the slow path of pb_rd_leb128 (near the end of the window) */
pb_status pb_rd_leb128_slow(pb_rd *r, uint64_t *v, int max32, const char *field);

/* one byte b (the k-th, from 0) of a LEB128 varint into *x: 1 the varint
 * ends here, 0 more bytes follow, -1 malformed (an 11th byte, bits past 64,
 * or with max32 past 32) */
static inline int pb_leb128_step(uint64_t *x, unsigned k, unsigned char b, int max32)
{
    if (k == 9 && b > 1)
        return -1;
    *x |= (uint64_t)(b & 0x7F) << (7 * k);
    if (b & 0x80)
        return k == 9 ? -1 : 0;
    return max32 && *x > UINT32_MAX ? -1 : 1;
}

static inline pb_status pb_rd_leb128(pb_rd *r, uint64_t *v, int max32, const char *field)
{
    pb_source *s = r->s;
    if (s->end - s->p >= 10) {
        const unsigned char *p = s->p;
        uint64_t x = 0;
        unsigned k = 0;
        int done;
        if (!(p[0] & 0x80)) { /* the common one-byte case */
            s->p = p + 1;
            *v = p[0];
            return PB_OK;
        }
        while ((done = pb_leb128_step(&x, k, p[k], max32)) == 0)
            k++;
        if (done > 0) {
            s->p = p + k + 1;
            *v = x;
            return PB_OK;
        }
    }
    return pb_rd_leb128_slow(r, v, max32, field);
}

static inline pb_status pb_rd_leb128_u32(pb_rd *r, uint32_t *v, const char *field)
{
    uint64_t x;
    pb_status st = pb_rd_leb128(r, &x, 1, field);
    *v = (uint32_t)x;
    return st;
}

/* zigzag (signed varints: line numbers, where a spec says so) */
static inline int32_t pb_unzigzag32(uint32_t v) { return (int32_t)((v >> 1) ^ (0u - (v & 1u))); }

/* ---- big-endian base-128 (where a format's spec says "varints
 * are big-endian base-128", at most 5 bytes for a u32) --------------------- */
/* the slow path of pb_rd_be128_u32 (near the end of the window, or malformed) */
pb_status pb_rd_be128_u32_slow(pb_rd *r, uint32_t *v, const char *field);

static inline pb_status pb_rd_be128_u32(pb_rd *r, uint32_t *v, const char *field)
{
    pb_source *s = r->s;
    if (s->end - s->p >= 5) {
        const unsigned char *q = s->p;
        uint32_t x = 0;
        int i;
        for (i = 0; i < 5; i++) {
            unsigned b = q[i];
            x = (x << 7) | (b & 0x7f);
            if (!(b & 0x80)) {
                s->p = q + i + 1;
                *v = x;
                return PB_OK;
            }
        }
    }
    return pb_rd_be128_u32_slow(r, v, field);
}

/* skip n bytes (any number: the window need not hold them at once); cut
 * short, the message counts the bytes still to come */
pb_status pb_rd_skip(pb_rd *r, uint64_t n, const char *field);

/* ---- options ---------------------------------------------------------------- */

#endif
