/* call_events.c - whole stacks -> SUB_RETURN records (see call_events.h). */
#include <string.h>
#include "call_events.h"
#include "util.h"

void pb_callev_init(pb_callev *cv, pb_sink *out, pb_error *err, double ticks_per_weight, pb_callev_name_fn name,
                    void *name_ctx)
{
    memset(cv, 0, sizeof *cv);
    cv->out = out;
    cv->err = err;
    cv->ticks_per_weight = ticks_per_weight;
    cv->name = name;
    cv->name_ctx = name_ctx;
}

/* close frames until `keep` remain open */
static pb_status call_events_close_to(pb_callev *cv, size_t keep)
{
    while (cv->depth > keep) {
        size_t d = --cv->depth;
        const struct pb_callev_frame *fr = &cv->f[d];
        pb_chunk c;
        if (d > 0)
            cv->f[d - 1].incl += fr->incl;
        cv->emitted++;
        if (!pb_sink_wants(cv->out, PB_T_SUB_RETURN)) {
            pb_sink_skip(cv->out, PB_T_SUB_RETURN, 1); /* for_chunks' $. still counts it */
            continue;
        }
        pb_chunk_sub_return(&c, (uint32_t)d + 1, fr->incl, fr->excl, cv->name(cv->name_ctx, fr->sub));
        if (pb_emit(cv->out, &c))
            return pb_fail(cv->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
    }
    return PB_OK;
}

pb_status pb_callev_stack(pb_callev *cv, const uint32_t *subs, size_t depth, uint64_t weight)
{
    return pb_callev_stack_known(cv, subs, depth, weight, 0);
}

pb_status pb_callev_stack_known(pb_callev *cv, const uint32_t *subs, size_t depth, uint64_t weight, size_t known)
{
    size_t b = cv->base, k, i;
    pb_status st;
    double w = (double)weight * cv->ticks_per_weight;
    /* the base frames stand below the stack: frame i is subs[i - b] */
    depth += b;
    known += b;
    k = known < cv->depth ? known : cv->depth;
    if (k > depth)
        k = depth;
    while (k < depth && k < cv->depth && cv->f[k].sub == subs[k - b])
        k++;
    if ((st = call_events_close_to(cv, k)) != PB_OK)
        return st;
    if (pb_grow((void **)&cv->f, &cv->cap, depth, sizeof *cv->f) < 0)
        return pb_fail(cv->err, PB_ERR_LIMIT, 0, "out of memory for call events");
    for (i = cv->depth; i < depth; i++) {
        cv->f[i].sub = subs[i - b];
        cv->f[i].incl = cv->f[i].excl = 0;
    }
    cv->depth = depth;
    if (depth) {
        cv->f[depth - 1].incl += w;
        cv->f[depth - 1].excl += w;
    }
    return PB_OK;
}

pb_status pb_callev_base(pb_callev *cv, uint32_t sub)
{
    pb_status st;
    if ((st = call_events_close_to(cv, cv->base)) != PB_OK)
        return st;
    if (pb_grow((void **)&cv->f, &cv->cap, cv->depth + 1, sizeof *cv->f) < 0)
        return pb_fail(cv->err, PB_ERR_LIMIT, 0, "out of memory for call events");
    cv->f[cv->depth].sub = sub;
    cv->f[cv->depth].incl = cv->f[cv->depth].excl = 0;
    cv->depth++;
    cv->base++;
    return PB_OK;
}

pb_status pb_callev_end(pb_callev *cv)
{
    cv->base = 0;
    return call_events_close_to(cv, 0);
}

void pb_callev_free(pb_callev *cv)
{
    free(cv->f);
    cv->f = NULL;
    cv->depth = cv->cap = cv->base = 0;
}
