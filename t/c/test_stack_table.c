/* test_stack_table.c - c/stack_table.c against a plain list of the stacks
 * seen (a linear search, no hashing), on random samples from a pool of
 * stacks: the same stacks in the same order of first sight, the same sums;
 * then stacks that differ only by key or by depth; then the memory bound. */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "stack_table.h"

typedef struct {
    uint64_t key;
    uint32_t depth;
    uint32_t ids[16];
    uint64_t sum;
} ref_stack;

static uint64_t rng = 88172645463325252ULL;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

int main(void)
{
    enum { POOL = 3000, SAMPLES = 200000 };
    static ref_stack pool[POOL], seen[POOL];
    size_t nseen = 0, i, off;
    pb_stack_table t;
    pb_stack_head *h;
    int bad = 0, r;
    memset(&t, 0, sizeof t);
    /* the pool: depths 0..15, ids from a small range so that stacks share
     * prefixes and suffixes; a few keys */
    for (i = 0; i < POOL; i++) {
        uint32_t d;
        pool[i].key = next_rand() % 3;
        pool[i].depth = next_rand() % 16;
        for (d = 0; d < pool[i].depth; d++)
            pool[i].ids[d] = next_rand() % 5;
    }
    for (i = 0; i < SAMPLES && !bad; i++) {
        const ref_stack *p = &pool[next_rand() % POOL];
        uint64_t w = 1 + next_rand() % 7;
        size_t j;
        for (j = 0; j < nseen; j++)
            if (seen[j].key == p->key && seen[j].depth == p->depth &&
                !memcmp(seen[j].ids, p->ids, p->depth * sizeof *p->ids))
                break;
        if (i % 2 == 0) { /* in steps, as a sink that probes ahead does (the first on the empty table) */
            uint32_t hh = pb_stack_table_hash(p->key, p->ids, p->depth);
            pb_stack_table_prefetch(&t, hh);
            h = pb_stack_table_find_h(&t, hh, p->key, p->ids, p->depth);
        } else
            h = pb_stack_table_find(&t, p->key, p->ids, p->depth);
        if (j == nseen) {
            seen[nseen] = *p;
            seen[nseen].sum = w;
            nseen++;
            if (h || t.oom || pb_stack_table_add(&t, p->key, p->ids, p->depth, (uint32_t)j, w) != 1)
                bad = 1;
        } else {
            seen[j].sum += w;
            if (!h || h->val != j)
                bad = 1;
            else
                h->sum += w;
        }
    }
    ok(!bad, "%d random samples: a stack is found once added, with what was added for it (find, or hash, "
             "prefetch and find_h: every other one)", SAMPLES);
    ok(t.n == nseen, "as many stacks kept (%zu) as distinct ones sampled (%zu)", t.n, nseen);
    for (off = 0, i = 0; (h = pb_stack_table_next(&t, &off)) != NULL; i++)
        if (i >= nseen || h->val != i || h->sum != seen[i].sum || h->key != seen[i].key || h->depth != seen[i].depth ||
            memcmp(h + 1, seen[i].ids, h->depth * sizeof *seen[i].ids))
            bad = 1;
    ok(!bad && i == nseen, "next(): every stack in order of first sight, with its ids and its weights' sum");
    pb_stack_table_free(&t);

    {
        /* the same ids under another key, a prefix, the empty stack */
        uint32_t a[3] = {7, 8, 9};
        ok(!pb_stack_table_find(&t, 1, a, 3) && pb_stack_table_add(&t, 1, a, 3, 10, 1) == 1, "(1, 7 8 9) added");
        ok(!pb_stack_table_find(&t, 2, a, 3) && pb_stack_table_add(&t, 2, a, 3, 20, 1) == 1,
           "(2, 7 8 9): another key, another stack");
        ok(!pb_stack_table_find(&t, 1, a, 2) && pb_stack_table_add(&t, 1, a, 2, 30, 1) == 1,
           "(1, 7 8): a prefix, another stack");
        ok(!pb_stack_table_find(&t, 1, a, 0) && pb_stack_table_add(&t, 1, a, 0, 40, 1) == 1,
           "(1, empty): another stack");
        h = pb_stack_table_find(&t, 2, a, 3);
        ok(h && h->val == 20, "(2, 7 8 9) found as itself");
        h = pb_stack_table_find(&t, 1, a, 0);
        ok(h && h->val == 40, "(1, empty) found as itself");
        pb_stack_table_free(&t);
    }

    {
        /* the bound: deep distinct stacks until the table says it is full */
        static uint32_t deep[4096];
        uint32_t n = 0;
        size_t k;
        for (;;) {
            deep[0] = n;
            if (pb_stack_table_find(&t, 0, deep, 4096) || t.oom) {
                bad = 1;
                break;
            }
            if ((r = pb_stack_table_add(&t, 0, deep, 4096, n, 1)) != 1)
                break;
            n++;
        }
        ok(!bad && r == 0 && n > 0, "full after %u stacks of 4096 frames: add keeps nothing more (0)", n);
        ok(t.cpool <= PB_STACK_TABLE_MAX_BYTES, "the stacks take %zu bytes, at most %zu", t.cpool,
           (size_t)PB_STACK_TABLE_MAX_BYTES);
        deep[0] = n + 1;
        ok(!pb_stack_table_find(&t, 0, deep, 4096) && pb_stack_table_add(&t, 0, deep, 4096, 0, 1) == 0,
           "a new stack once full: not found, not kept");
        for (k = 0; k < n; k++) {
            deep[0] = (uint32_t)k;
            h = pb_stack_table_find(&t, 0, deep, 4096);
            if (!h || h->val != k)
                bad = 1;
        }
        ok(!bad, "the %u stacks kept are still found", n);
        pb_stack_table_free(&t);
    }

    {
        /* values kept with a stack (a sink's trie nodes): found with it,
         * changed in place, in next() order; stacks of every size up to a
         * few cache lines, each whole */
        uint32_t ids[40], more[42], k, d;
        size_t i2 = 0;
        bad = 0;
        for (d = 1; d <= 40 && !bad; d++) {
            for (k = 0; k < d; k++) {
                ids[k] = d * 100 + k;
                more[k] = d * 1000 + k;
            }
            more[d] = more[d + 1] = 0;
            if (pb_stack_table_find(&t, 5, ids, d) || pb_stack_table_add_more(&t, 5, ids, d, d, 0, more, d + 2) != 1)
                bad = 1;
        }
        for (d = 1; d <= 40 && !bad; d++) {
            uint32_t *m;
            for (k = 0; k < d; k++)
                ids[k] = d * 100 + k;
            h = pb_stack_table_find(&t, 5, ids, d);
            if (!h || h->val != d || h->depth != d) {
                bad = 1;
                break;
            }
            m = pb_stack_table_more(h);
            for (k = 0; k < d; k++)
                if (m[k] != d * 1000 + k)
                    bad = 1;
            if (m[d] || m[d + 1])
                bad = 1;
            m[d] = d; /* the sink's to change */
        }
        ok(!bad, "40 stacks of 1..40 frames with as many values of the sink's after them: found, values intact");
        for (d = 1; (h = pb_stack_table_next(&t, &i2)) != NULL; d++)
            if (h->depth != d || pb_stack_table_more(h)[d] != d || ((uint32_t *)(h + 1))[d - 1] != d * 100 + d - 1)
                bad = 1;
        ok(!bad && d == 41, "next(): each in order, with the value the sink changed");
        pb_stack_table_free(&t);
    }
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
