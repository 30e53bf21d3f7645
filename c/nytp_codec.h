/* nytp_codec.h - NYTProf's integer, NV and string encodings
 * (the NYTProf file format spec, section 2).
 *
 * u32: first byte d: <0x80 -> d; <0xC0 -> (d&0x7F) + 1 byte; <0xE0 -> (d&0x1F)
 * + 2 bytes; <0xFF -> (d&0x0F) + 3 bytes; 0xFF -> 4 bytes; big-endian after
 * the prefix.  i32 is the same applied to the two's-complement bit pattern.
 */
#ifndef PB_NYTP_CODEC_H
#define PB_NYTP_CODEC_H

#include <stdint.h>
#include <string.h>

/* total length of the varint whose first byte is d */
static inline unsigned nytp_u32_len(unsigned char d)
{
    if (d < 0x80) return 1;
    if (d < 0xC0) return 2;
    if (d < 0xE0) return 3;
    if (d < 0xFF) return 4;
    return 5;
}

/* decode from p, which must hold nytp_u32_len(p[0]) bytes */
static inline uint32_t nytp_u32_decode(const unsigned char *p)
{
    unsigned char d = p[0];
    if (d < 0x80) return d;
    if (d < 0xC0) return ((uint32_t)(d & 0x7F) << 8) | p[1];
    if (d < 0xE0) return ((uint32_t)(d & 0x1F) << 16) | ((uint32_t)p[1] << 8) | p[2];
    if (d < 0xFF) return ((uint32_t)(d & 0x0F) << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    return ((uint32_t)p[1] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 8) | p[4];
}

/* encode v into out (5 bytes of room); returns the length */
static inline unsigned nytp_u32_encode(unsigned char *out, uint32_t v)
{
    if (v < 0x80) { out[0] = (unsigned char)v; return 1; }
    if (v < 0x4000) { out[0] = (unsigned char)(0x80 | (v >> 8)); out[1] = (unsigned char)v; return 2; }
    if (v < 0x200000) {
        out[0] = (unsigned char)(0xC0 | (v >> 16)); out[1] = (unsigned char)(v >> 8); out[2] = (unsigned char)v;
        return 3;
    }
    if (v < 0x10000000) {
        out[0] = (unsigned char)(0xE0 | (v >> 24)); out[1] = (unsigned char)(v >> 16);
        out[2] = (unsigned char)(v >> 8); out[3] = (unsigned char)v;
        return 4;
    }
    out[0] = 0xFF; out[1] = (unsigned char)(v >> 24); out[2] = (unsigned char)(v >> 16);
    out[3] = (unsigned char)(v >> 8); out[4] = (unsigned char)v;
    return 5;
}

/* NV: the raw 8-byte little-endian IEEE double (nv_size=8, x86_64) */
static inline double nytp_nv_decode(const unsigned char *p)
{
    double d;
    uint64_t u = 0;
    int i;
    for (i = 7; i >= 0; i--)
        u = (u << 8) | p[i];
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline void nytp_nv_encode(unsigned char *out, double d)
{
    uint64_t u;
    int i;
    memcpy(&u, &d, sizeof u);
    for (i = 0; i < 8; i++) {
        out[i] = (unsigned char)(u & 0xFF);
        u >>= 8;
    }
}

#define NYTP_STRING      0x27 /* ' */
#define NYTP_STRING_UTF8 0x22 /* " */

#endif
