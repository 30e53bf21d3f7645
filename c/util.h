/* util.h - small helpers shared by the folds, writers and decoders:
 * overflow-checked array growth and the hashes of the interning tables. */
#ifndef PB_UTIL_H
#define PB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Make *p (an array of *cap elements of elem bytes) hold at least need
 * elements, doubling from 16.  Returns 0, or -1 on overflow or when
 * realloc fails (then *p and *cap are unchanged). */
static inline int pb_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *np;
    if (need <= *cap)
        return 0;
    ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return -1;
        ncap *= 2;
    }
    if (ncap > SIZE_MAX / elem)
        return -1;
    np = realloc(*p, ncap * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = ncap;
    return 0;
}

/* 64 -> 32 bit finaliser (MurmurHash3 fmix64) */
static inline uint32_t pb_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return (uint32_t)x;
}

/* FNV-1a over bytes, finalised */
static inline uint32_t pb_hash_bytes(const char *p, size_t n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= UINT64_C(1099511628211);
    }
    return pb_mix64(h);
}

/* The length of the valid UTF-8 sequence starting at p[i] (1..4), by the
 * rules pb_utf8_append uses (no overlong forms, no surrogates, nothing past
 * U+10FFFF), or 0 when the bytes there are not valid UTF-8. */
static inline size_t pb_utf8_seq(const char *p, size_t n, size_t i)
{
    unsigned char c = (unsigned char)p[i];
    size_t more = 0, k;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        more = 1;
    else if (c >= 0xE0 && c <= 0xEF)
        more = 2;
    else if (c >= 0xF0 && c <= 0xF4)
        more = 3;
    else
        return 0;
    for (k = 1; k <= more; k++)
        if (i + k >= n || ((unsigned char)p[i + k] & 0xC0) != 0x80)
            return 0;
    if (more == 2 && ((c == 0xE0 && (unsigned char)p[i + 1] < 0xA0) || (c == 0xED && (unsigned char)p[i + 1] >= 0xA0)))
        return 0;
    if (more == 3 && ((c == 0xF0 && (unsigned char)p[i + 1] < 0x90) || (c == 0xF4 && (unsigned char)p[i + 1] >= 0x90)))
        return 0;
    return more + 1;
}

/* 1 when all n bytes are valid UTF-8 (pb_utf8_seq's rules; ASCII is) */
static inline int pb_utf8_valid(const char *p, size_t n)
{
    size_t i = 0, k;
    while (i < n) {
        if (!(k = pb_utf8_seq(p, n, i)))
            return 0;
        i += k;
    }
    return 1;
}

/* Append n bytes of src to dst (capacity cap, w bytes used) as valid UTF-8
 * and return the new length (which may exceed cap: then only what fits was
 * written; call again with room for the result).  src_utf8: src is declared
 * UTF-8 (a sequence that is not valid UTF-8 is escaped visibly, byte by
 * byte, as "\xNN"); otherwise src is Latin-1 (as a Perl string without the
 * UTF-8 flag) and bytes 0x80..0xFF become their two-byte UTF-8 form.  No NUL
 * is written. */
static inline size_t pb_utf8_append(char *dst, size_t cap, size_t w, const char *src, size_t n, int src_utf8)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i = 0;
#define PB_PUT(ch) do { if (w < cap) dst[w] = (char)(ch); w++; } while (0)
    while (i < n) {
        unsigned char c = (unsigned char)src[i];
        size_t more = 0, k;
        if (c < 0x80) {
            PB_PUT(c);
            i++;
            continue;
        }
        if (!src_utf8) {
            PB_PUT(0xC0 | (c >> 6));
            PB_PUT(0x80 | (c & 0x3F));
            i++;
            continue;
        }
        k = pb_utf8_seq(src, n, i);
        more = k ? k - 1 : 0;
        if (!more) {
            PB_PUT('\\');
            PB_PUT('x');
            PB_PUT(hex[c >> 4]);
            PB_PUT(hex[c & 15]);
            i++;
            continue;
        }
        for (k = 0; k <= more; k++)
            PB_PUT(src[i + k]);
        i += more + 1;
    }
#undef PB_PUT
    return w;
}

/* 1 if any byte of p is 0x80 or above */
static inline int pb_has_high(const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if ((unsigned char)p[i] >= 0x80)
            return 1;
    return 0;
}

#endif
