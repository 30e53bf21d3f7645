/* tick_spool.h - fixed records per sample or marker, spooled to disk.
 *
 * A writer that must keep every recorded sample in order (a timeline: each
 * sample at its own time) cannot hold them in memory: it puts them, 24
 * bytes each, into chains (one per thread and kind), each chain a block of
 * PB_TICK_BLK records in memory and its full blocks in one unlinked
 * temporary file shared by all chains (made in $TMPDIR, else /tmp, at the
 * first full block: a small profile never touches the disk).  At the end
 * the writer walks each chain front to back.  Memory: one block per chain
 * and 8 bytes per spooled block.
 *
 * What the four fields mean is the writer's (a sample: stack, time, weight;
 * a marker: name, kind, begin, end).
 */
#ifndef PB_TICK_SPOOL_H
#define PB_TICK_SPOOL_H

#include "options.h"

typedef struct {
    uint32_t x, y;
    uint64_t a, b;
} pb_tick_rec;

#define PB_TICK_BLK 256 /* records per spooled block */

typedef struct {
    pb_tick_rec *buf; /* the block being filled */
    size_t n;         /* records in buf */
    uint64_t *blocks; /* spool offsets of its full blocks */
    size_t nblocks, cblocks;
    uint64_t count;   /* records put */
} pb_tick_chain;

typedef struct {
    int fd;        /* -1: not made yet */
    uint64_t end;  /* bytes in it */
    pb_error *err;
    const char *what; /* for messages: "the <writer>'s spool" */
    const char *oom;  /* the out-of-memory message */
} pb_tick_spool;

/* Set up (no file yet); what and oom are kept, not copied. */
void pb_tick_spool_init(pb_tick_spool *s, pb_error *err, const char *what, const char *oom);
/* Append r to chain c: PB_OK, or a limit (memory) or io error in s->err. */
pb_status pb_tick_put(pb_tick_spool *s, pb_tick_chain *c, const pb_tick_rec *r);
/* Walk c's records in the order put: fn(ctx, rec) for each; tmp is room
 * for PB_TICK_BLK records.  PB_OK, or an io error. */
typedef void (*pb_tick_fn)(void *ctx, const pb_tick_rec *r);
pb_status pb_tick_walk(pb_tick_spool *s, const pb_tick_chain *c, pb_tick_rec *tmp, pb_tick_fn fn, void *ctx);
void pb_tick_chain_free(pb_tick_chain *c);
/* Close the file (it has no name: its space goes with it). */
void pb_tick_spool_close(pb_tick_spool *s);

#endif
