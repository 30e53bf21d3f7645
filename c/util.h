/* util.h - small helpers shared by the folds, writers and decoders:
 * overflow-checked array growth, the hashes and the one hash index
 * (pb_index) of every interning table, the UTF-8 rules. */
#ifndef PB_UTIL_H
#define PB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* pb_grow for an array read past what was written (a table by id, a
 * bitmap): the elements it adds, from the old *cap to the new, are zero. */
static inline int pb_grow_zero(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t old = *cap;
    if (pb_grow(p, cap, need, elem) < 0)
        return -1;
    if (*cap > old)
        memset((char *)*p + old * elem, 0, (*cap - old) * elem);
    return 0;
}

/* 64 -> 32 bit finaliser (MurmurHash3 fmix64) */
/* control bytes as spaces: a name from a profile in an ATTRIBUTE value (one
 * line of nytprof.out), a thread label or a message stays on its line */
static inline void pb_controls_to_spaces(char *t, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if ((unsigned char)t[i] < 0x20 || t[i] == 0x7f)
            t[i] = ' ';
}

static inline uint32_t pb_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return (uint32_t)x;
}

/* The one string hash of the tree (every interning table, every key of
 * bytes): eight bytes a step, then the bytes left, finalised and folded to
 * 32 bits. */
static inline uint32_t pb_hash_bytes(const char *p, size_t n)
{
    uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ ((uint64_t)n * UINT64_C(0xff51afd7ed558ccd));
    const unsigned char *q = (const unsigned char *)p;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        h = (h ^ w) * UINT64_C(0x100000001b3);
        h ^= h >> 29;
        q += 8;
        n -= 8;
    }
    while (n--)
        h = (h ^ *q++) * UINT64_C(0x100000001b3);
    h ^= h >> 32;
    h *= UINT64_C(0xd6e8feb86659fd93);
    h ^= h >> 32;
    return (uint32_t)(h ^ (h >> 32));
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

/* Copy n bytes of src to dst as valid UTF-8, each byte that starts no valid
 * sequence (pb_utf8_seq) replaced by U+FFFD (as CPython's
 * errors="replace" decoding of a sampler's string table); dst has room for
 * 3 x n bytes.  Returns the bytes written. */
static inline size_t pb_utf8_repair(char *dst, const char *src, size_t n)
{
    size_t i = 0, o = 0, k;
    while (i < n) {
        if (!(k = pb_utf8_seq(src, n, i))) {
            dst[o++] = (char)0xEF;
            dst[o++] = (char)0xBF;
            dst[o++] = (char)0xBD;
            i++;
            continue;
        }
        memcpy(dst + o, src + i, k);
        o += k;
        i += k;
    }
    return o;
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

/* Copy src[0..n) to dst (room for 2n bytes) with each sep byte written as
 * "::" (a foreign package path as Perl's); returns the bytes written. */
static inline size_t pb_sep_to_colons(char *dst, const char *src, size_t n, char sep)
{
    size_t i, w = 0;
    for (i = 0; i < n; i++) {
        if (src[i] == sep)
            dst[w++] = ':';
        dst[w++] = src[i] == sep ? ':' : src[i];
    }
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

/* pb_index: the one hash index of the tree.  Open addressing with linear
 * probing over entries the caller keeps in its own dense array (ids 0..n-1);
 * a slot holds id + 1 (0: empty), the table is kept at most half full, and
 * equality is the caller's.  Use:
 *
 *     if (pb_index_reserve(&ix, n, hash_of, ctx) < 0) -> out of memory
 *     for (k = pb_index_first(&ix, h); (id = pb_index_at(&ix, k)) != PB_INDEX_NONE;
 *          k = pb_index_next(&ix, k))
 *         if (entry id has this key) -> found
 *     new entry n: pb_index_set(&ix, k, n)   (k: the empty slot the loop stopped at)
 *
 * hash_of(ctx, id) gives an existing entry's hash (kept by the caller) for
 * the rehash when the table grows; reserve before probing, so that the slot
 * the probe ends on is still there to fill. */
#define PB_INDEX_NONE UINT32_MAX
typedef struct {
    uint32_t *slot;
    size_t cap; /* 0 or a power of two */
} pb_index;

/* room for entry n (so n + 1 entries) at most half full: 0, or -1 when out of memory */
static inline int pb_index_reserve(pb_index *ix, size_t n, uint32_t (*hash_of)(const void *ctx, uint32_t id),
                                   const void *ctx)
{
    size_t nc, i;
    uint32_t *t;
    if ((n + 1) * 2 <= ix->cap)
        return 0;
    nc = ix->cap ? ix->cap : 32;
    while ((n + 1) * 2 > nc) {
        if (nc > SIZE_MAX / 2 / sizeof *t)
            return -1;
        nc *= 2;
    }
    if (!(t = (uint32_t *)calloc(nc, sizeof *t)))
        return -1;
    for (i = 0; i < n; i++) {
        size_t k = hash_of(ctx, (uint32_t)i) & (nc - 1);
        while (t[k])
            k = (k + 1) & (nc - 1);
        t[k] = (uint32_t)i + 1;
    }
    free(ix->slot);
    ix->slot = t;
    ix->cap = nc;
    return 0;
}
static inline size_t pb_index_first(const pb_index *ix, uint32_t h) { return h & (ix->cap - 1); }
static inline size_t pb_index_next(const pb_index *ix, size_t k) { return (k + 1) & (ix->cap - 1); }
/* the id in slot k, or PB_INDEX_NONE when the slot is empty (or there is no table) */
static inline uint32_t pb_index_at(const pb_index *ix, size_t k)
{
    return ix->cap && ix->slot[k] ? ix->slot[k] - 1 : PB_INDEX_NONE;
}
static inline void pb_index_set(pb_index *ix, size_t k, uint32_t id) { ix->slot[k] = id + 1; }
/* A new entry n of the array *arr (*cap entries of elem bytes, grown by
 * pb_grow), zeroed, and slot k of ix (where the probe stopped) set to it:
 * 0, or -1 when out of memory.  The caller fills its key and counts n. */
static inline int pb_index_add(pb_index *ix, size_t k, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (pb_grow(arr, cap, n + 1, elem) < 0)
        return -1;
    memset((char *)*arr + n * elem, 0, elem);
    pb_index_set(ix, k, (uint32_t)n);
    return 0;
}
/* The probe in one statement: stops with k at the slot of the first entry id
 * for which EQ (an expression in id) holds, or with k at the empty slot where
 * a new entry goes and id PB_INDEX_NONE.  Reserve first.
 *     PB_INDEX_FIND(&t->ix, h, k, id, t->e[id].key == key);
 *     if (id != PB_INDEX_NONE) -> found;  else pb_index_set(&t->ix, k, n) */
#define PB_INDEX_FIND(ix, h, k, id, EQ)                                                                      \
    for ((k) = pb_index_first((ix), (h)); ((id) = pb_index_at((ix), (k))) != PB_INDEX_NONE && !(EQ);         \
         (k) = pb_index_next((ix), (k))) {                                                                  \
    }
static inline void pb_index_free(pb_index *ix)
{
    free(ix->slot);
    ix->slot = NULL;
    ix->cap = 0;
}

/* Append len bytes of p to the text *buf (*n used, *cap allocated; pb_grow),
 * which stays NUL-terminated: 0, or -1 when out of memory */
static inline int pb_text_append(char **buf, size_t *cap, size_t *n, const char *p, size_t len)
{
    if (pb_grow((void **)buf, cap, *n + len + 1, 1) < 0)
        return -1;
    memcpy(*buf + *n, p, len);
    *n += len;
    (*buf)[*n] = '\0';
    return 0;
}

/* Append count elements of elem bytes at src to the growable array *p (*n
 * used, *cap allocated; pb_grow): 0, or -1 on overflow or out of memory */
static inline int pb_append(void **p, size_t *n, size_t *cap, const void *src, size_t count, size_t elem)
{
    if (*n > SIZE_MAX - count || pb_grow(p, cap, *n + count, elem) < 0)
        return -1;
    if (count)
        memcpy((char *)*p + *n * elem, src, count * elem);
    *n += count;
    return 0;
}

/* Room for element n, one past the last, of the growable array *p (*cap
 * allocated; pb_grow) whose indexes are 32-bit ids: element n (not set; the
 * caller counts it), or NULL when out of memory or n would reach
 * UINT32_MAX - 1 (that and UINT32_MAX stay free to mark "none").
 * PB_GROW_ID(arr, cap, n) for arr of its own type. */
static inline void *pb_grow_id(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n >= UINT32_MAX - 1 || pb_grow(p, cap, n + 1, elem) < 0)
        return NULL;
    return (char *)*p + n * elem;
}
#define PB_GROW_ID(arr, cap, n) pb_grow_id((void **)&(arr), &(cap), (n), sizeof *(arr))

/* A copy of n bytes at p with a NUL after them, or NULL when out of memory. */
static inline char *pb_memdup0(const char *p, size_t n)
{
    char *d = (char *)malloc(n + 1);
    if (d) {
        if (n)
            memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}

/* fn on each of n items, through PB_FREE_ALL and PB_INDEX_FREE_ALL, which
 * list an object's buffers or indexes in one statement:
 *     PB_FREE_ALL(c->names, c->arena);  (free each; NULLs are fine)
 *     PB_INDEX_FREE_ALL(&c->tsubs, &c->tnodes);                          */
static inline void pb_each(void *const *items, size_t n, void (*fn)(void *))
{
    size_t i;
    for (i = 0; i < n; i++)
        fn(items[i]);
}
static inline void pb_index_free_v(void *ix) { pb_index_free((pb_index *)ix); }
#define PB_EACH(fn, ...) pb_each((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *), fn)
#define PB_FREE_ALL(...) PB_EACH(free, __VA_ARGS__)
#define PB_INDEX_FREE_ALL(...) PB_EACH(pb_index_free_v, __VA_ARGS__)

#endif
