/* stack_table.c - whole stacks interned once (see stack_table.h). */
#include <stdlib.h>
#include <string.h>
#include "stack_table.h"

/* A slot is 32 bits, so that the index of a few ten thousand stacks stays in
 * the cache (a probe costs one miss, on the stack itself): the stack's byte
 * offset / 8 + 1 in the low ST_OFF_BITS bits (the pool is at most
 * PB_STACK_TABLE_MAX_BYTES), and the top bits of its hash above them (a
 * stack whose tag differs is not looked at); 0: empty. */
#define ST_OFF_BITS 22
#define ST_OFF_MASK ((UINT32_C(1) << ST_OFF_BITS) - 1)
#define ST_TAG(h) ((h) & ~ST_OFF_MASK)
#define ST_LINE 64
typedef char st_pool_fits_the_slots[(PB_STACK_TABLE_MAX_BYTES / 8 + 1) <= ST_OFF_MASK ? 1 : -1];

static size_t st_size(uint32_t depth) { return sizeof(pb_stack_head) + (((size_t)depth * 4 + 7) & ~(size_t)7); }

static uint32_t st_hash(uint64_t key, const uint32_t *ids, uint32_t depth)
{
    return pb_mix64(key ^ ((uint64_t)depth << 48)) ^ pb_hash_bytes((const char *)ids, (size_t)depth * sizeof *ids);
}

static pb_stack_head *st_at(const pb_stack_table *t, uint32_t s)
{
    return (pb_stack_head *)(t->pool + ((size_t)(s & ST_OFF_MASK) - 1) * 8);
}

/* room for one more stack with the slots at most 3/4 full: 0, or -1 */
static int st_reserve(pb_stack_table *t)
{
    size_t nc, i;
    uint32_t *s;
    if ((t->n + 1) * 4 <= t->cap * 3)
        return 0;
    nc = t->cap ? t->cap * 2 : 1024;
    if (nc > SIZE_MAX / sizeof *s || !(s = (uint32_t *)calloc(nc, sizeof *s)))
        return -1;
    for (i = 0; i < t->n; i++) {
        const pb_stack_head *e = (const pb_stack_head *)(t->pool + (size_t)t->order[i] * 8);
        uint32_t h = st_hash(e->key, (const uint32_t *)(e + 1), e->depth);
        size_t k = h & (nc - 1);
        while (s[k])
            k = (k + 1) & (nc - 1);
        s[k] = ST_TAG(h) | (t->order[i] + 1);
    }
    free(t->slot);
    t->slot = s;
    t->cap = nc;
    return 0;
}

static int st_same(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

uint32_t pb_stack_table_hash(uint64_t key, const uint32_t *ids, uint32_t depth) { return st_hash(key, ids, depth); }

void pb_stack_table_prefetch(const pb_stack_table *t, uint32_t h)
{
    uint32_t s;
    size_t k;
    if (!t->cap)
        return;
    for (k = h & (t->cap - 1); (s = t->slot[k]) != 0; k = (k + 1) & (t->cap - 1))
        if (ST_TAG(s) == ST_TAG(h)) {
#if defined(__GNUC__)
            __builtin_prefetch(st_at(t, s), 1);
#endif
            return;
        }
}

#if defined(__GNUC__)
#define ST_INLINE __attribute__((always_inline)) inline /* the probe in each caller, as before find_h */
#else
#define ST_INLINE inline
#endif
static ST_INLINE pb_stack_head *st_find(pb_stack_table *t, uint32_t h, uint64_t key, const uint32_t *ids,
                                        uint32_t depth);

pb_stack_head *pb_stack_table_find(pb_stack_table *t, uint64_t key, const uint32_t *ids, uint32_t depth)
{
    return st_find(t, st_hash(key, ids, depth), key, ids, depth);
}

pb_stack_head *pb_stack_table_find_h(pb_stack_table *t, uint32_t h, uint64_t key, const uint32_t *ids, uint32_t depth)
{
    return st_find(t, h, key, ids, depth);
}

static ST_INLINE pb_stack_head *st_find(pb_stack_table *t, uint32_t h, uint64_t key, const uint32_t *ids,
                                        uint32_t depth)
{
    uint32_t tag = ST_TAG(h), s;
    size_t k;
    if (st_reserve(t) < 0) {
        t->oom = 1;
        return NULL;
    }
    for (k = h & (t->cap - 1); (s = t->slot[k]) != 0; k = (k + 1) & (t->cap - 1)) {
        pb_stack_head *e;
        if (ST_TAG(s) != tag)
            continue;
        e = st_at(t, s);
        if (e->depth == depth && e->key == key && st_same((const uint32_t *)(e + 1), ids, depth))
            return e;
    }
    t->pend_hash = h;
    t->pend_slot = k;
    return NULL;
}

/* the pool at least n bytes, its start on a cache line (ST_LINE): 0, or -1 */
static int st_grow_pool(pb_stack_table *t, size_t n)
{
    size_t nc = t->cpool ? t->cpool : 4096;
    char *mem, *pool;
    if (n <= t->cpool)
        return 0;
    while (nc < n)
        nc *= 2;
    if (nc > PB_STACK_TABLE_MAX_BYTES)
        nc = PB_STACK_TABLE_MAX_BYTES; /* (n is at most that: add checks) */
    if (!(mem = (char *)malloc(nc + ST_LINE - 1)))
        return -1;
    pool = mem + ((ST_LINE - (uintptr_t)mem % ST_LINE) % ST_LINE);
    if (t->npool)
        memcpy(pool, t->pool, t->npool);
    free(t->mem);
    t->mem = mem;
    t->pool = pool;
    t->cpool = nc;
    return 0;
}

int pb_stack_table_add(pb_stack_table *t, uint64_t key, const uint32_t *ids, uint32_t depth, uint32_t val,
                       uint64_t weight)
{
    return pb_stack_table_add_more(t, key, ids, depth, val, weight, NULL, 0);
}

int pb_stack_table_add_more(pb_stack_table *t, uint64_t key, const uint32_t *ids, uint32_t depth, uint32_t val,
                            uint64_t weight, const uint32_t *more, uint32_t nmore)
{
    size_t off = t->npool, need;
    pb_stack_head *e;
    if (depth > PB_STACK_TABLE_MAX_BYTES || nmore > PB_STACK_TABLE_MAX_BYTES)
        return 0;
    need = st_size(depth + nmore);
    /* a stack that fits a cache line is not split over two (a probe that
     * finds it then reads one line); a longer one starts on a line */
    if (need > ST_LINE - off % ST_LINE && off % ST_LINE)
        off += ST_LINE - off % ST_LINE;
    if (off > PB_STACK_TABLE_MAX_BYTES || need > PB_STACK_TABLE_MAX_BYTES - off)
        return 0; /* full: the sink walks its trie for the stacks not kept */
    if (st_grow_pool(t, off + need) < 0 || pb_grow((void **)&t->order, &t->corder, t->n + 1, sizeof *t->order) < 0)
        return -1;
    e = (pb_stack_head *)(t->pool + off);
    e->key = key;
    e->sum = weight;
    e->depth = depth;
    e->val = val;
    memset((char *)(e + 1) + ((size_t)depth + nmore) * 4, 0, need - sizeof *e - ((size_t)depth + nmore) * 4);
    if (depth)
        memcpy(e + 1, ids, (size_t)depth * sizeof *ids);
    if (nmore)
        memcpy((uint32_t *)(e + 1) + depth, more, (size_t)nmore * sizeof *more);
    t->npool = off + need;
    t->slot[t->pend_slot] = ST_TAG(t->pend_hash) | (uint32_t)(off / 8 + 1);
    t->order[t->n++] = (uint32_t)(off / 8);
    return 1;
}

pb_stack_head *pb_stack_table_next(pb_stack_table *t, size_t *i)
{
    if (*i >= t->n)
        return NULL;
    return (pb_stack_head *)(t->pool + (size_t)t->order[(*i)++] * 8);
}

void pb_stack_table_free(pb_stack_table *t)
{
    PB_FREE_ALL(t->slot, t->mem, t->order);
    memset(t, 0, sizeof *t);
}
