/* stack_table.h - whole stacks interned once, for the stack sinks.
 *
 * A sink that keeps stacks as a trie (the collapsed writer, the fold) would
 * walk each sample's frames one hash probe at a time, two dependent cache
 * misses a frame; successive samples seldom share much, but a profile holds
 * few distinct stacks.  The table maps a whole stack (a key, the sink's
 * thread, and its frame ids) to what the sink found for it the first time
 * (its leaf node) and sums its weight: one hash of the ids, one probe.
 * Per sample:
 *
 *     h = pb_stack_table_find(&t, key, ids, depth);
 *     h == NULL: not kept (or out of memory: t.oom) -> walk the trie to leaf,
 *                then pb_stack_table_add(&t, key, ids, depth, leaf, weight):
 *                1 kept (its weight with it), 0 not kept (the table is full:
 *                the weight is the sink's to put), -1 out of memory
 *     else: h->val is the leaf, h->sum += weight (checked)
 *
 * with no other call on the table between find and add.  pb_stack_table_next
 * visits the stacks kept.  Memory grows with the distinct stacks only, and at
 * most to PB_STACK_TABLE_MAX_BYTES: past that a new stack is not kept (find
 * answers NULL for it each time, and the sink walks its trie as it would
 * without the table).
 */
#ifndef PB_STACK_TABLE_H
#define PB_STACK_TABLE_H

#include "options.h"
#include "util.h"

#define PB_STACK_TABLE_MAX_BYTES ((size_t)16 << 20) /* the stacks' ids and heads, without the index */

typedef struct {
    uint64_t key;
    uint64_t sum;   /* the weights of the samples with this stack (the sink's to use) */
    uint32_t depth;
    uint32_t val;   /* the sink's: the stack's leaf */
} pb_stack_head;    /* followed by its depth ids, then what the sink keeps with them
                     * (pb_stack_table_add_more), padded to 8 bytes */

typedef struct {
    uint32_t *slot;  /* the hash's top bits | (the stack's byte offset / 8 + 1); 0: empty (stack_table.c) */
    size_t cap, n;   /* slots (a power of two, at most 3/4 full), stacks */
    char *pool;      /* the stacks: head, ids (on cache lines: stack_table.c) */
    size_t npool, cpool;
    char *mem;       /* what holds the pool */
    uint32_t *order; /* each stack's byte offset / 8, in the order added */
    size_t corder;
    size_t pend_slot; /* find's miss: the slot add fills, the stack's hash */
    uint32_t pend_hash;
    int oom;          /* find ran out of memory */
} pb_stack_table;

pb_stack_head *pb_stack_table_find(pb_stack_table *t, uint64_t key, const uint32_t *ids, uint32_t depth);
/* the same in steps, for a sink that sees its stacks some samples ahead:
 * h = pb_stack_table_hash(key, ids, depth); pb_stack_table_prefetch(&t, h)
 * asks the CPU for the stack that h likely names (no change; a hint only),
 * and a later pb_stack_table_find_h(&t, h, ...) finds it without waiting */
uint32_t pb_stack_table_hash(uint64_t key, const uint32_t *ids, uint32_t depth);
void pb_stack_table_prefetch(const pb_stack_table *t, uint32_t h);
pb_stack_head *pb_stack_table_find_h(pb_stack_table *t, uint32_t h, uint64_t key, const uint32_t *ids,
                                     uint32_t depth);
/* keep the stack find just missed, with its first weight: 1, 0 when the
 * table is full (nothing kept), or -1 when out of memory */
int pb_stack_table_add(pb_stack_table *t, uint64_t key, const uint32_t *ids, uint32_t depth, uint32_t val,
                       uint64_t weight);
/* the same, and n values of the sink's kept after the ids (pb_stack_table_more:
 * a trie's nodes for the stack, read with it in one probe) */
int pb_stack_table_add_more(pb_stack_table *t, uint64_t key, const uint32_t *ids, uint32_t depth, uint32_t val,
                            uint64_t weight, const uint32_t *more, uint32_t n);
static inline uint32_t *pb_stack_table_more(pb_stack_head *h) { return (uint32_t *)(h + 1) + h->depth; }
/* the stacks kept, in the order added: *i = 0 first; NULL after the last */
pb_stack_head *pb_stack_table_next(pb_stack_table *t, size_t *i);
void pb_stack_table_free(pb_stack_table *t);

#endif
