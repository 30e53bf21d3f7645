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

#endif
