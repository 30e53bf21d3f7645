/* json_out.h - JSON text through a buffer of our own, for the writers whose
 * output is millions of short items (the timeline writers'
 * columns, events and samples): a stdio call each would cost
 * more than the item.  A failed write is not reported here: the writer
 * checks ferror() on its FILE when it finishes.
 *
 * Names here: pb_jout = the buffer and its FILE ("JSON out"); pb_jout_room
 * gives room for a few bytes the caller writes itself (then adds to n),
 * pb_jout_lit copies bytes of any length, pb_jout_u64 writes a decimal,
 * pb_jout_str a JSON string (json_lines.h's pb_json_str).  Header only: every
 * call is small and inlined in the writers' loops. */
#ifndef PB_JSON_OUT_H
#define PB_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "json_lines.h" /* pb_json_str */
#include "util.h"

typedef struct {
    FILE *f;
    size_t n;        /* bytes held in b */
    char b[1 << 16];
} pb_jout;

static inline void pb_jout_flush(pb_jout *w)
{
    if (w->n)
        fwrite(w->b, 1, w->n, w->f); /* a failed write: ferror() at finish */
    w->n = 0;
}

/* room for n more bytes (n well below the buffer's size) */
static inline char *pb_jout_room(pb_jout *w, size_t n)
{
    if (sizeof w->b - w->n < n)
        pb_jout_flush(w);
    return w->b + w->n;
}

/* n bytes of p, however many */
static inline void pb_jout_lit(pb_jout *w, const char *p, size_t n)
{
    if (n > sizeof w->b - w->n) {
        pb_jout_flush(w);
        if (n > sizeof w->b) {
            fwrite(p, 1, n, w->f);
            return;
        }
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
#define PB_JOUT_LIT(w, s) pb_jout_lit((w), (s), sizeof(s) - 1)

static inline void pb_jout_ch(pb_jout *w, int c)
{
    if (w->n == sizeof w->b)
        pb_jout_flush(w);
    w->b[w->n++] = (char)c;
}

static inline void pb_jout_str(pb_jout *w, const pb_str *s)
{
    pb_jout_flush(w);
    pb_json_str(w->f, s);
}

static const char pb_jout_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* v's decimal digits, written backwards ending at e (32-bit steps where they do) */
static inline void pb_jout_digits_back(char *e, uint64_t v)
{
    while (v >= UINT64_C(100000000)) {
        uint32_t r = (uint32_t)(v % UINT64_C(100000000)), i;
        v /= UINT64_C(100000000);
        for (i = 0; i < 4; i++) {
            e -= 2;
            memcpy(e, pb_jout_digits + 2 * (r % 100), 2);
            r /= 100;
        }
    }
    {
        uint32_t u = (uint32_t)v;
        while (u >= 100) {
            e -= 2;
            memcpy(e, pb_jout_digits + 2 * (u % 100), 2);
            u /= 100;
        }
        if (u >= 10) {
            e -= 2;
            memcpy(e, pb_jout_digits + 2 * u, 2);
        } else {
            *--e = (char)('0' + u);
        }
    }
}

/* how many decimal digits v has */
static inline unsigned pb_jout_ndigits(uint64_t v)
{
    unsigned n = 1;
    while (v >= 10000) {
        v /= 10000;
        n += 4;
    }
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

static inline void pb_jout_u64(pb_jout *w, uint64_t v)
{
    unsigned n = pb_jout_ndigits(v);
    char *d = pb_jout_room(w, 20);
    pb_jout_digits_back(d + n, v);
    w->n += n;
}

#endif
