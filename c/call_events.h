/* call_events.h - whole stacks -> NYTProf call events (SUB_RETURN).
 *
 * nytprofhtml draws its flame graph, and nytprofcalls prints its stacks,
 * from SUB_RETURN records alone (the NYTProf file format spec, section 3;
 * NYTProf's `calls` option): SUB_RETURN depth d closes the frame at depth d
 * (the outermost frame is depth 1) and adds its excl ticks to the stack that
 * ends there; frames a return skips over are opened implicitly.  So a set of
 * weighted stacks is replayed as returns:
 *
 *     pb_callev_stack(A;B;C, w1)  pb_callev_stack(A;B;D, w2)  pb_callev_end()
 *     -> < 3 C w1   < 3 D w2   < 2 B 0   < 1 A 0
 *
 * Consecutive stacks share their common outer frames (a frame is closed only
 * when the next stack leaves it), so stacks handed over in depth-first order
 * (a call tree, a sorted list) cost one SUB_RETURN per tree node, and a run of
 * identical stacks costs nothing more than its first.  Each SUB_RETURN carries
 * incl = the weight of everything below and at that frame since it opened,
 * excl = the weight of stacks ending exactly there, both in ticks
 * (weight x ticks_per_weight), as NYTProf writes them.
 *
 * Frames are sub ids of the caller's own numbering; names come from a
 * callback when a frame is closed.  Memory: one entry per frame of the
 * deepest stack.  Threads must not interleave: end() one before the next.
 */
#ifndef PB_CALL_EVENTS_H
#define PB_CALL_EVENTS_H

#include "chunk.h"
#include "error.h"

typedef pb_str (*pb_callev_name_fn)(void *ctx, uint32_t sub);

typedef struct {
    pb_sink *out;
    pb_error *err;
    double ticks_per_weight;
    pb_callev_name_fn name;
    void *name_ctx;
    struct pb_callev_frame {
        uint32_t sub;
        double incl, excl;  /* ticks */
    } *f;                   /* open frames, outermost first */
    size_t depth, cap;
    size_t base;            /* frames opened by pb_callev_base(), below every stack */
    uint64_t emitted;       /* SUB_RETURN chunks sent */
} pb_callev;

void pb_callev_init(pb_callev *cv, pb_sink *out, pb_error *err, double ticks_per_weight, pb_callev_name_fn name,
                    void *name_ctx);
/* One stack, outermost frame first, with its weight (0 is allowed: it opens
 * the frames).  PB_ERR_ABORT when the consumer stopped, PB_ERR_LIMIT (memory). */
pb_status pb_callev_stack(pb_callev *cv, const uint32_t *subs, size_t depth, uint64_t weight);
/* The same, when the caller knows that subs[0, known) are the outermost
 * subs of the previous stack (a depth-first walk: the path to the parent):
 * only the rest is compared, so a walk costs the number of its nodes, not
 * nodes x depth. */
pb_status pb_callev_stack_known(pb_callev *cv, const uint32_t *subs, size_t depth, uint64_t weight, size_t known);
/* Open `sub` below every later stack until pb_callev_end() (a thread's own
 * root frame): the stacks handed over after it are taken as standing on it,
 * and a weight given with depth 0 is its own.  Closes the stacks open above
 * the frames already opened this way. */
pb_status pb_callev_base(pb_callev *cv, uint32_t sub);
/* Close every open frame (end of a thread's stacks), base frames included. */
pb_status pb_callev_end(pb_callev *cv);
void pb_callev_free(pb_callev *cv);

#endif
