/* json_ints.c - a strict reader of one JSON array of integers (json_ints.h). */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include "json_ints.h"

#define BUF_CAP (PB_JSON_INTS_WINDOW + 64u)
#define NUM_MAX 24u /* '-', 18 digits and the byte after them, with room */

static int jint_is_ws(unsigned char ch) { return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t'; }

int pb_json_ints_open(pb_json_ints *c, const unsigned char *mem, size_t len, int fd, uint64_t size, uint64_t at)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->size = size;
    if (mem) {
        c->mem = c->win = mem;
        c->base = 0;
        c->p = mem + (at < len ? at : len);
        c->end = mem + len;
        c->eof = 1;
        return 0;
    }
    if (!(c->buf = (unsigned char *)malloc(BUF_CAP)))
        return -1;
    c->win = c->p = c->end = c->buf;
    c->base = at;
    return 0;
}

void pb_json_ints_free(pb_json_ints *c)
{
    free(c->buf);
    c->buf = NULL;
}

/* at least n unread bytes: 1; fewer and nothing more to read: 0; -1 I/O */
static int fill(pb_json_ints *c, size_t n)
{
    size_t k = (size_t)(c->end - c->p);
    uint64_t off;
    if (k >= n)
        return 1;
    if (c->eof)
        return 0;
    off = pb_json_ints_offset(c);
    memmove(c->buf, c->p, k);
    c->win = c->p = c->buf;
    c->base = off;
    while (k < n && !c->eof) {
        uint64_t at = off + k;
        size_t want = BUF_CAP - k;
        ssize_t got;
        if (at >= c->size) {
            c->eof = 1;
            break;
        }
        if (want > c->size - at)
            want = (size_t)(c->size - at);
        do
            got = pread(c->fd, c->buf + k, want, (off_t)at);
        while (got < 0 && errno == EINTR);
        if (got < 0) {
            c->io_errno = errno;
            return -1;
        }
        if (got == 0)
            c->eof = 1;
        k += (size_t)got;
        c->end = c->buf + k;
    }
    return k >= n;
}

/* past white space to a byte: PB_JSON_INTS_VALUE, or _OTHER at the end, _IO */
static int jint_skip_ws(pb_json_ints *c)
{
    for (;;) {
        while (c->p < c->end && jint_is_ws(*c->p))
            c->p++;
        if (c->p < c->end)
            return PB_JSON_INTS_VALUE;
        switch (fill(c, 1)) {
        case 0: return PB_JSON_INTS_OTHER;
        case -1: return PB_JSON_INTS_IO;
        }
    }
}

int pb_json_ints_begin(pb_json_ints *c)
{
    int r = jint_skip_ws(c);
    if (r != PB_JSON_INTS_VALUE)
        return r;
    if (*c->p != '[')
        return PB_JSON_INTS_OTHER;
    c->p++;
    c->first = 1;
    return PB_JSON_INTS_VALUE;
}

int pb_json_ints_next_any(pb_json_ints *c, int64_t *v)
{
    const unsigned char *q, *e;
    uint64_t x = 0;
    unsigned n;
    int neg = 0, r;
    if (c->p >= c->end || jint_is_ws(*c->p)) {
        if ((r = jint_skip_ws(c)) != PB_JSON_INTS_VALUE)
            return r;
    }
    if (*c->p == ']') {
        c->p++;
        return PB_JSON_INTS_END; /* after '[' or an element (after a ',' an element must come) */
    }
    if (!c->first) { /* after an element: its ',' */
        if (*c->p != ',')
            return PB_JSON_INTS_OTHER;
        c->p++;
        if (c->p >= c->end || jint_is_ws(*c->p)) {
            if ((r = jint_skip_ws(c)) != PB_JSON_INTS_VALUE)
                return r;
        }
    }
    c->first = 0;
    if ((size_t)(c->end - c->p) < NUM_MAX && (r = fill(c, NUM_MAX)) < 0)
        return PB_JSON_INTS_IO;
    q = c->p;
    e = c->end;
    if (q < e && *q == '-')
        neg = 1, q++;
    if (q >= e || *q < '0' || *q > '9')
        return PB_JSON_INTS_OTHER;
    if (*q == '0') {
        q++;
    } else {
        for (n = 0; q < e && n < 18 && *q >= '0' && *q <= '9'; n++, q++)
            x = x * 10u + (uint64_t)(*q - '0');
    }
    /* what ends it must be there: no 19th digit, fraction or exponent */
    if (q >= e || !(jint_is_ws(*q) || *q == ',' || *q == ']'))
        return PB_JSON_INTS_OTHER;
    c->p = q;
    *v = neg ? -(int64_t)x : (int64_t)x;
    return PB_JSON_INTS_VALUE;
}
