/* json_ints.h - a strict reader of one JSON array of integers, for the
 * large number arrays of JSON profiles (a CPU profile's samples and
 * time deltas): a JSON parser would hand each number over through a callback
 * after lexing it into a buffer; this reads them straight from the bytes.
 *
 * It reads a memory block, or a file descriptor with pread (its own 64 KB
 * window, so several readers can walk one file at once), from a byte offset
 * where the array's '[' is (white space before it is skipped).  It accepts
 * only what it can read fast and exactly: '[', integers of at most 18 digits
 * (JSON's form: an optional '-', no leading zero) separated by ',' and the
 * four JSON white space bytes, ']'.  Anything else - a fraction, an
 * exponent, a longer number, another value, the input ending inside the
 * array - is not an error here but PB_JSON_INTS_OTHER: the caller then
 * reads the array with its JSON parser, which says exactly what is wrong and
 * where.  Every read is bounds-checked; memory is the window only.  Plain
 * C99 + POSIX pread, no Perl. */
#ifndef PB_JSON_INTS_H
#define PB_JSON_INTS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PB_JSON_INTS_WINDOW 65536u

enum {
    PB_JSON_INTS_VALUE = 1, /* *v holds the next integer */
    PB_JSON_INTS_END = 0,   /* the array's ']' was read */
    PB_JSON_INTS_OTHER = -1, /* not the strict form above (or the input ended): read it another way */
    PB_JSON_INTS_IO = -2    /* the file could not be read: errno in io_errno */
};

typedef struct {
    const unsigned char *p, *end; /* unread bytes of the window */
    const unsigned char *win;     /* the window's first byte, at offset base */
    uint64_t base;
    const unsigned char *mem;     /* a memory block (its whole length is the window), or */
    int fd;                       /* a file read with pread, to size bytes */
    uint64_t size;
    unsigned char *buf;           /* the file's window (PB_JSON_INTS_WINDOW + a little) */
    int eof;                      /* nothing past end */
    int first;                    /* the next element is the array's first */
    int io_errno;
    /* pb_json_ints_runs: the bytes ",digits," of an element read (up to 6
     * digits), masked, its length without the last ',' and its value */
    int runs;
    uint64_t run_w, run_mask;
    unsigned run_len;
    int64_t run_v;
} pb_json_ints;

/* A reader of mem (len bytes), or of the file fd of size bytes when mem is
 * NULL, at byte offset at.  0, or -1 when out of memory. */
int pb_json_ints_open(pb_json_ints *c, const unsigned char *mem, size_t len, int fd, uint64_t size, uint64_t at);
void pb_json_ints_free(pb_json_ints *c);
/* white space, then the array's '[': PB_JSON_INTS_VALUE when it is there */
int pb_json_ints_begin(pb_json_ints *c);
/* the next element: PB_JSON_INTS_VALUE (*v), _END, _OTHER or _IO */
int pb_json_ints_next_any(pb_json_ints *c, int64_t *v);
/* For an array whose values come in runs (a profile's samples: one node
 * for many samples in a row): the text of an element read in the common
 * form (',', 1 to 6 digits, ',') is kept, and an element of the same bytes
 * is then taken without being parsed again (what it is and ends with is
 * the same).  Set after open; the values read are the same either way. */
static inline void pb_json_ints_runs(pb_json_ints *c) { c->runs = 1; }
static inline int pb_json_ints_end_byte(unsigned char ch)
{
    return ch == ',' || ch == ']' || ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
}
#if defined(__GNUC__)
__attribute__((always_inline)) /* (its callers' loops are the readers' hot paths) */
#endif
static inline int pb_json_ints_next(pb_json_ints *c, int64_t *v)
{
    /* the common case inline: ",digits" with room for any number in the window */
    const unsigned char *q = c->p;
    if (c->run_mask && c->end - q > 24) { /* the kept element again (pb_json_ints_runs) */
        uint64_t w;
        memcpy(&w, q, 8);
        if (!((w ^ c->run_w) & c->run_mask)) {
            c->p = q + c->run_len;
            *v = c->run_v;
            return PB_JSON_INTS_VALUE;
        }
    }
    if (c->end - q > 24 && q[0] == ',' && q[1] >= '1' && q[1] <= '9' && !c->first) {
        uint64_t x = (uint64_t)(q[1] - '0');
        unsigned n = 1;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        {
            /* up to 7 digits at once, without a branch per digit: the 8
             * bytes after the ',' less '0' (a digit is then 0..9, and only
             * a digit is: xor is one to one), the first byte that is not a
             * digit found by its high bit, the digits moved to the top
             * (zeros before them) and added up in pairs, fours, eights */
            uint64_t w, d, nd;
            memcpy(&w, q + 1, 8);
            d = w ^ UINT64_C(0x3030303030303030);
            nd = (((d & UINT64_C(0x7F7F7F7F7F7F7F7F)) + UINT64_C(0x7676767676767676)) | d) &
                 UINT64_C(0x8080808080808080);
            if (nd) {
                n = (unsigned)__builtin_ctzll(nd) >> 3; /* 1..7 digits (the first is one) */
                if (pb_json_ints_end_byte((unsigned char)(w >> (n * 8)))) { /* q[1 + n], in w */
                    d <<= (8 - n) * 8;
                    d = (d * 10u + (d >> 8)) & UINT64_C(0x00FF00FF00FF00FF);
                    d = (d * 100u + (d >> 16)) & UINT64_C(0x0000FFFF0000FFFF);
                    d = (d * 10000u + (d >> 32)) & UINT64_C(0xFFFFFFFF);
                    c->p = q + 1 + n;
                    *v = (int64_t)d;
                    if (c->runs && n <= 6 && q[1 + n] == ',') { /* kept: ",digits," */
                        c->run_w = (w << 8) | ',';
                        c->run_mask = n == 6 ? ~UINT64_C(0) : (UINT64_C(1) << ((n + 2) * 8)) - 1u;
                        c->run_len = 1 + n;
                        c->run_v = (int64_t)d;
                    }
                    return PB_JSON_INTS_VALUE;
                }
                return pb_json_ints_next_any(c, v); /* a fraction, an exponent, ...: said there */
            }
            n = 1;
        }
#endif
        for (q += 2; n < 18 && *q >= '0' && *q <= '9'; n++, q++)
            x = x * 10u + (uint64_t)(*q - '0');
        if (pb_json_ints_end_byte(*q)) {
            c->p = q;
            *v = (int64_t)x;
            return PB_JSON_INTS_VALUE;
        }
    }
    return pb_json_ints_next_any(c, v);
}
/* the offset of the next byte to read */
static inline uint64_t pb_json_ints_offset(const pb_json_ints *c) { return c->base + (uint64_t)(c->p - c->win); }

#endif
