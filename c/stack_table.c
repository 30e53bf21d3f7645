/* stack_table.c - whole stacks interned once (see stack_table.h). */
#include <stdlib.h>
#include <string.h>
#include "stack_table.h"

static size_t st_size(uint32_t depth) { return sizeof(pb_stack_head) + (((size_t)depth * 4 + 7) & ~(size_t)7); }

static uint32_t st_hash(uint64_t key, const uint32_t *ids, uint32_t depth)
{
    return pb_mix64(key ^ ((uint64_t)depth << 48)) ^ pb_hash_bytes((const char *)ids, (size_t)depth * sizeof *ids);
}

/* room for one more stack with the slots at most half full: 0, or -1 */
static int st_reserve(pb_stack_table *t)
{
    size_t nc, i;
    uint64_t *s;
    if ((t->n + 1) * 2 <= t->cap)
        return 0;
    nc = t->cap ? t->cap * 2 : 256;
    if (nc > SIZE_MAX / sizeof *s || !(s = (uint64_t *)calloc(nc, sizeof *s)))
        return -1;
    for (i = 0; i < t->cap; i++)
        if (t->slot[i]) {
            size_t k = (size_t)(t->slot[i] >> 32) & (nc - 1);
            while (s[k])
                k = (k + 1) & (nc - 1);
            s[k] = t->slot[i];
        }
    free(t->slot);
    t->slot = s;
    t->cap = nc;
    return 0;
}

pb_stack_head *pb_stack_table_find(pb_stack_table *t, uint64_t key, const uint32_t *ids, uint32_t depth)
{
    uint32_t h = st_hash(key, ids, depth);
    size_t k;
    uint64_t s;
    if (st_reserve(t) < 0) {
        t->oom = 1;
        return NULL;
    }
    for (k = h & (t->cap - 1); (s = t->slot[k]) != 0; k = (k + 1) & (t->cap - 1)) {
        pb_stack_head *e;
        if ((uint32_t)(s >> 32) != h)
            continue;
        e = (pb_stack_head *)(t->pool + ((size_t)(uint32_t)s - 1) * 8);
        if (e->depth == depth && e->key == key && !memcmp(e + 1, ids, (size_t)depth * sizeof *ids))
            return e;
    }
    t->pend_hash = h;
    t->pend_slot = k;
    return NULL;
}

int pb_stack_table_add(pb_stack_table *t, uint64_t key, const uint32_t *ids, uint32_t depth, uint32_t val,
                       uint64_t weight)
{
    size_t off = t->npool, need = st_size(depth);
    pb_stack_head *e;
    if (need > PB_STACK_TABLE_MAX_BYTES - off || depth > PB_STACK_TABLE_MAX_BYTES)
        return 0; /* full: the sink walks its trie for the stacks not kept */
    if (pb_grow((void **)&t->pool, &t->cpool, off + need, 1) < 0)
        return -1;
    e = (pb_stack_head *)(t->pool + off);
    e->key = key;
    e->sum = weight;
    e->depth = depth;
    e->val = val;
    memset((char *)(e + 1) + (size_t)depth * 4, 0, need - sizeof *e - (size_t)depth * 4);
    if (depth)
        memcpy(e + 1, ids, (size_t)depth * sizeof *ids);
    t->npool = off + need;
    t->slot[t->pend_slot] = ((uint64_t)t->pend_hash << 32) | (uint64_t)(off / 8 + 1);
    t->n++;
    return 1;
}

pb_stack_head *pb_stack_table_next(pb_stack_table *t, size_t *off)
{
    pb_stack_head *e;
    if (*off >= t->npool)
        return NULL;
    e = (pb_stack_head *)(t->pool + *off);
    *off += st_size(e->depth);
    return e;
}

void pb_stack_table_free(pb_stack_table *t)
{
    PB_FREE_ALL(t->slot, t->pool);
    memset(t, 0, sizeof *t);
}
