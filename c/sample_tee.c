/* sample_tee.c - a sampling decoder's calls to a writer and to a fold (sample_tee.h).
 *
 * The tee's calls are named tee_<call>; each hands the call to the writer's
 * sink first (its result decides), then to the fold's with frame ids
 * translated through map[] (the writer's through wmap[]).  The optional calls the fold has none of go to
 * the writer only, through the same pointers the writer's table has.
 */
#include <stdlib.h>
#include <string.h>
#include "sample_tee.h"
#include "util.h"

#define TEE(self) ((pb_sample_tee *)(self)->ctx)
/* a run's weight stays below this (and each of its samples' does), so no sum
 * the writer makes of runs can wrap where its sum of the samples would not */
#define TEE_RUN_MAX (UINT64_C(1) << 32)

/* the run of samples held for a writer that sums stacks, to it as one sample
 * (its weight summed, its first sample's timestamp), before any other call */
static pb_status run_flush(pb_sample_tee *t)
{
    if (!t->run_on)
        return PB_OK;
    t->run_on = 0;
    return t->out->sample(t->out, t->run_key, t->run_ids, t->run_depth, t->run_weight, t->run_ts);
}
/* the fold's status; where it defers (a timeline writer's): its error kept for
 * finish (sample_tee.h), the decode going on for the writer */
static pb_status fold_st(pb_sample_tee *t, pb_status st)
{
    pb_error *e = t->ss.err;
    if (st == PB_OK || !t->defers)
        return st;
    if (e->status == PB_OK)
        e->status = st;
    t->fold_err = *e;
    *e = t->err0;
    t->fold_failed = t->gave_up = 1;
    t->held = 0;
    return PB_OK;
}

/* the fold sample held for a run that may join it */
static pb_status held_flush(pb_sample_tee *t)
{
    if (!t->held)
        return PB_OK;
    t->held = 0;
    return fold_st(t, t->fs->sample(t->fs, t->held_key, t->held_ids, t->held_depth, t->held_weight, t->held_ts));
}

#define FLUSH(t)                                  \
    do {                                          \
        pb_status fst_ = run_flush(t);            \
        if (fst_ != PB_OK)                        \
            return fst_;                          \
    } while (0)

/* After the writer took a call (*st: its status): the held fold sample
 * flushed; 1 when the fold is to take the call too (both fine, the tee not
 * given up), else 0 with *st what the call returns */
static int fold_too(pb_sample_tee *t, pb_status *st)
{
    if (*st == PB_OK)
        *st = held_flush(t);
    return *st == PB_OK && !t->gave_up;
}
static pb_status tee_attribute(pb_sample_sink *self, const char *key, pb_str value)
{
    pb_sample_tee *t = TEE(self);
    pb_status st;
    FLUSH(t);
    st = t->out->attribute ? t->out->attribute(t->out, key, value) : PB_OK;
    return fold_too(t, &st) ? fold_st(t, t->fs->attribute(t->fs, key, value)) : st;
}

/* slot k of an id array (grown, new slots UINT32_MAX); NULL out of memory */
static uint32_t *id_slot(uint32_t **a, size_t *cap, uint32_t k)
{
    size_t old = *cap;
    if ((size_t)k >= *cap) {
        if (pb_grow((void **)a, cap, (size_t)k + 1, sizeof **a) < 0)
            return NULL;
        memset(*a + old, 0xff, (*cap - old) * sizeof **a);
    }
    return *a + k;
}

/* the decoder's id of a frame: one per (writer id, fold id) pair, so a
 * writer that takes two frames as one (collapsed: by the shown name) still
 * has the fold see two */
static pb_status tee_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    pb_sample_tee *t = TEE(self);
    uint32_t wid, fid = UINT32_MAX, *first, *w, *f;
    pb_status st;
    FLUSH(t);
    st = t->out->frame(t->out, fr, &wid);
    if (fold_too(t, &st) && (st = t->fs->frame(t->fs, fr, &fid)) != PB_OK) {
        fid = UINT32_MAX;
        if ((st = fold_st(t, st)) != PB_OK)
            return st;
    } else if (st != PB_OK) {
        return st;
    }
    /* the pair's id, if it has one: by the fold's id, else by the writer's */
    if (!(first = fid != UINT32_MAX ? id_slot(&t->by_fold, &t->by_fold_cap, fid) : id_slot(&t->by_out, &t->by_out_cap, wid)))
        goto oom;
    if (*first != UINT32_MAX && t->wmap[*first] == wid && t->map[*first] == fid) {
        *id = *first;
        return PB_OK;
    }
    if (!(w = id_slot(&t->wmap, &t->wmap_cap, t->nids)) || !(f = id_slot(&t->map, &t->map_cap, t->nids)))
        goto oom;
    *w = wid;
    *f = fid;
    if (*first == UINT32_MAX)
        *first = t->nids;
    *id = t->nids++;
    return PB_OK;
oom:
    return pb_fail(self->err, PB_ERR_LIMIT, 0, "out of memory counting the losses (frame ids)");
}

static pb_status tee_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    pb_sample_tee *t = TEE(self);
    pb_status st;
    FLUSH(t);
    st = t->out->thread ? t->out->thread(t->out, key, pid, ppid, label) : PB_OK;
    return fold_too(t, &st) ? fold_st(t, t->fs->thread(t->fs, key, pid, ppid, label)) : st;
}

static pb_status tee_sample(pb_sample_sink *self, uint64_t thread_key, const uint32_t *ids, uint32_t depth,
                            uint64_t weight, uint64_t timestamp)
{
    pb_sample_tee *t = TEE(self);
    uint32_t i;
    pb_status st = PB_OK;
    int ticked = t->ticked, tagged = t->tagged, joins = t->joins, same;
    uint64_t fts;
    const uint32_t *dids = ids; /* the decoder's ids; ids: the writer's */
    t->ticked = t->tagged = t->joins = 0;
    if (depth > t->wids_cap && pb_grow((void **)&t->wids, &t->wids_cap, depth, sizeof *t->wids) < 0)
        return pb_fail(self->err, PB_ERR_LIMIT, 0, "out of memory counting the losses (a stack)");
    for (i = 0; i < depth; i++) {
        if ((size_t)dids[i] >= t->nids)
            return pb_fail(self->err, PB_ERR_CORRUPT, 0, "a sample names frame id %u that was never interned",
                           (unsigned)dids[i]);
        t->wids[i] = t->wmap[dids[i]];
    }
    ids = t->wids;
    /* the writer sums stacks: a run of samples of one stack (its ids) goes
     * to it as one (samples.h sums_stacks); each to the fold */
    same = t->run_on && thread_key == t->run_key && depth == t->run_depth && weight && weight < TEE_RUN_MAX &&
           t->run_weight + weight < TEE_RUN_MAX && (!depth || !memcmp(ids, t->run_ids, (size_t)depth * sizeof *ids));
    if (same) {
        t->run_weight += weight;
    } else {
        FLUSH(t);
        if (t->runs && !tagged && weight && weight < TEE_RUN_MAX &&
            (depth <= t->run_cap || pb_grow((void **)&t->run_ids, &t->run_cap, depth, sizeof *t->run_ids) == 0)) {
            if (depth) /* (an empty stack may have no arrays yet) */
                memcpy(t->run_ids, ids, (size_t)depth * sizeof *ids);
            t->run_on = 1;
            t->run_key = thread_key;
            t->run_depth = depth;
            t->run_weight = weight;
            t->run_ts = timestamp;
        } else
            st = t->out->sample(t->out, thread_key, ids, depth, weight, timestamp);
    }
    if (timestamp && t->ts_other_unit && !ticked)
        t->gave_up = 1;
    if (st != PB_OK || t->gave_up || (weight == 0 && t->out->sample_values))
        return st;
    fts = t->ts_other_unit ? t->ticks : timestamp;
    if (joins && t->held && thread_key == t->held_key && depth == t->held_depth) {
        t->held_weight += weight; /* a run of the chunk path's: one sample (the last one's time) */
        t->held_ts = fts;
        return PB_OK;
    }
    if ((st = held_flush(t)) != PB_OK || t->gave_up)
        return st;
    if (depth > t->ids_cap && pb_grow((void **)&t->ids, &t->ids_cap, depth, sizeof *t->ids) < 0)
        return pb_fail(self->err, PB_ERR_LIMIT, 0, "out of memory counting the losses (a stack)");
    for (i = 0; i < depth; i++) {
        if (t->map[dids[i]] == UINT32_MAX) /* (interned after the fold stopped: not fed since) */
            return pb_fail(self->err, PB_ERR_CORRUPT, 0, "a sample names frame id %u that was never interned",
                           (unsigned)dids[i]);
        t->ids[i] = t->map[dids[i]];
    }
    if (t->ss.tick_joins) { /* each_tick: held for a run that may join it */
        if (depth > t->held_cap && pb_grow((void **)&t->held_ids, &t->held_cap, depth, sizeof *t->held_ids) < 0)
            return pb_fail(self->err, PB_ERR_LIMIT, 0, "out of memory counting the losses (a stack)");
        if (depth) /* (an empty stack may have no arrays yet) */
            memcpy(t->held_ids, t->ids, (size_t)depth * sizeof *t->ids);
        t->held = 1;
        t->held_key = thread_key;
        t->held_depth = depth;
        t->held_weight = weight;
        t->held_ts = fts;
        return PB_OK;
    }
    return fold_st(t, t->fs->sample(t->fs, thread_key, t->ids, depth, weight, fts));
}

/* the next sample joins the held one in the fold (samples.h tick_joins) */
static pb_status tee_tick_joins(pb_sample_sink *self)
{
    TEE(self)->joins = 1;
    return PB_OK;
}

/* the next sample's timestamp in the fold's ticks: kept for tee_sample */
static pb_status tee_sample_ticks(pb_sample_sink *self, uint64_t ticks)
{
    pb_sample_tee *t = TEE(self);
    t->ticks = ticks;
    t->ticked = 1;
    return PB_OK;
}

static pb_status tee_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    pb_sample_tee *t = TEE(self);
    pb_status st;
    FLUSH(t);
    st = t->out->note ? t->out->note(t->out, kind, a, b, n) : PB_OK;
    return fold_too(t, &st) ? fold_st(t, t->fs->note(t->fs, kind, a, b, n)) : st;
}

static pb_status tee_finish(pb_sample_sink *self)
{
    pb_sample_tee *t = TEE(self);
    pb_status st;
    FLUSH(t);
    st = t->out->finish ? t->out->finish(t->out) : PB_OK;
    if (fold_too(t, &st))
        st = fold_st(t, t->fs->finish(t->fs));
    if (st == PB_OK && t->fold_failed) { /* the fold's error, after the writer's work */
        *self->err = t->fold_err;
        return t->fold_err.status;
    }
    return st;
}

/* the writer's own optional calls, its own ids: straight through */
static pb_status tee_sample_tags(pb_sample_sink *self, pb_str op, pb_str status)
{
    pb_sample_tee *t = TEE(self);
    FLUSH(t);
    t->tagged = 1; /* (its sample goes to the writer as it is) */
    return t->out->sample_tags(t->out, op, status);
}

static pb_status tee_thread_root(pb_sample_sink *self, uint64_t key, pb_str root)
{
    pb_sample_tee *t = TEE(self);
    FLUSH(t);
    return t->out->thread_root(t->out, key, root);
}

static pb_status tee_columns(pb_sample_sink *self, const pb_sample_columns *c)
{
    pb_sample_tee *t = TEE(self);
    FLUSH(t);
    return t->out->columns(t->out, c);
}

static pb_status tee_mapping(pb_sample_sink *self, const pb_mapping *m, uint32_t *id)
{
    pb_sample_tee *t = TEE(self);
    FLUSH(t);
    return t->out->mapping(t->out, m, id);
}

static pb_status tee_sample_values(pb_sample_sink *self, const int64_t *values, uint32_t n, const pb_label *labels,
                                   uint32_t nlabels)
{
    pb_sample_tee *t = TEE(self);
    FLUSH(t);
    t->tagged = 1;
    return t->out->sample_values(t->out, values, n, labels, nlabels);
}

static pb_status tee_span(pb_sample_sink *self, uint64_t thread_key, uint32_t frame, uint64_t begin_ns,
                          uint64_t end_ns)
{
    pb_sample_tee *t = TEE(self);
    FLUSH(t);
    /* a span the chunk path would fold otherwise: its chunks come from a decode of their own */
    t->gave_up = 1;
    if ((size_t)frame >= t->nids)
        return pb_fail(self->err, PB_ERR_CORRUPT, 0, "a span names frame id %u that was never interned", (unsigned)frame);
    return t->out->span(t->out, thread_key, t->wmap[frame], begin_ns, end_ns);
}

static const pb_sample_sink tee_calls = {.attribute = tee_attribute, .frame = tee_frame, .thread = tee_thread,
    .sample = tee_sample, .note = tee_note, .finish = tee_finish, .sample_ticks = tee_sample_ticks};

void pb_sample_tee_init(pb_sample_tee *t, pb_sample_sink *out, pb_sample_sink *fold, uint64_t ticks_per_sec,
                        pb_error *err)
{
    memset(t, 0, sizeof *t);
    t->out = out;
    t->fs = fold;
    pb_sample_sink_init(&t->ss, &tee_calls, t, err, out->cleanups);
    /* what the decoder may call: the writer's optional calls */
    t->ss.sample_tags = out->sample_tags ? tee_sample_tags : NULL;
    t->ss.thread_root = out->thread_root ? tee_thread_root : NULL;
    t->ss.columns = out->columns ? tee_columns : NULL;
    t->ss.mapping = out->mapping ? tee_mapping : NULL;
    t->ss.sample_values = out->sample_values ? tee_sample_values : NULL;
    t->ss.span = out->span ? tee_span : NULL;
    t->ss.each_tick = out->each_tick;
    t->ss.tick_joins = out->each_tick ? tee_tick_joins : NULL;
    t->ss.row = out->row;
    t->err0 = *err;
    t->defers = out->each_tick;
    t->ts_other_unit = ticks_per_sec != 0 && ticks_per_sec != 1000000;
    /* every sample to the fold as the chunk path gives them (a decoder
     * that sends no sample_ticks where they differ makes the tee give up) */
    t->ss.sums_stacks = 0;
    t->runs = out->sums_stacks && !out->each_tick;
}

void pb_sample_tee_free(pb_sample_tee *t)
{
    free(t->map);
    free(t->wmap);
    free(t->wids);
    free(t->by_fold);
    free(t->by_out);
    free(t->ids);
    free(t->run_ids);
    free(t->held_ids);
    memset(t, 0, sizeof *t);
}
