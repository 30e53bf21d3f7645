/* sample_tee.h - one decode feeding a stack writer and a fold into chunks.
 *
 * convert --report to a stack target counts what a conversion loses with the loss counter (losses.h), a chunk
 * sink: the chunks are those the fold (fold_samples.h) makes of the
 * samples.  A pb_sample_tee sits between a sampling decoder and the
 * writer's sample sink and hands every call to both: the writer unchanged,
 * the fold with the frame ids it gave: the decoder gets the tee's own ids, one
 * per (writer id, fold id) pair, so a writer that takes two frames as one
 * still has the fold see two.
 * So the input is read and decoded once (pb_sample_decode, fold_samples.c,
 * when pb_options.chunk_tee is set).  It knows the fold only as a sample
 * sink: fold_samples.c makes and frees the fold.
 *
 * What the decoder sees is the writer's sink (its optional calls, each_tick),
 * except sums_stacks (0: every sample reaches the fold as the chunk path
 * gives it; a writer that sums stacks takes every sample alike) and
 * sample_ticks (the tee's own).  A sample
 * of weight 0 that a writer's sample_values() asked for is not folded (the
 * fold has no sample_values(), and the chunk path never sends one).  A
 * decoder gives a fold timestamps in the fold's ticks (ns for most) and a
 * writer µs: when they differ, the decoder says each sample's ticks with
 * sample_ticks() before its sample() (samples.h), and the fold takes those;
 * a sample that carries a timestamp without them makes the tee give up
 * (gave_up; the counts then come from a decode of their own).
 *
 * A writer that sums stacks gets each run of samples of one stack (thread and
 * ids) as one sample, its weight summed (each below 2^32 and the sum too,
 * so nothing the writer sums can wrap where it would not otherwise), with
 * the first one's timestamp: what sums_stacks promises it gives the same
 * output; the decoder sends every sample (the fold takes each).  A run ends
 * at any other call.
 *
 * A writer that sets each_tick gets every recorded sample on its own; a
 * decoder says which of them the chunk path sums into the one before
 * (tick_joins, samples.h), and the fold takes such a run as one sample (the
 * weights summed, the last one's timestamp), held until the next call.
 *
 * A span (a timeline writer's, samples.h span()) makes the tee give up: the
 * chunk path folds the spans otherwise.
 *
 * An error of the fold's (a limit of the chunk path) stops the decode, but
 * for a timeline writer (each_tick) or where its owner says so (defers:
 * a decoder's own front to the fold, fold_front): the tee stops feeding the fold and
 * returns the error at finish, after the writer's, as a decode of its own
 * after the writer's would.
 *
 * Memory: one id per distinct frame the decoder interns, and two stacks' ids.
 */
#ifndef PB_SAMPLE_TEE_H
#define PB_SAMPLE_TEE_H

#include "samples.h"

typedef struct {
    pb_sample_sink ss;    /* hand this to the decoder */
    pb_sample_sink *out;  /* the writer's sink */
    pb_sample_sink *fs;   /* the fold's sample sink */
    uint32_t *map;        /* decoder frame id -> fold frame id (UINT32_MAX: none) */
    size_t map_cap;
    uint32_t *wmap;       /* decoder frame id -> writer frame id */
    size_t wmap_cap;
    uint32_t nids;        /* decoder frame ids given */
    uint32_t *by_fold, *by_out; /* fold id (writer id once the fold stopped) -> its first decoder id */
    size_t by_fold_cap, by_out_cap;
    uint32_t *wids;       /* a stack in writer ids */
    size_t wids_cap;
    uint32_t *ids;        /* a stack in fold ids */
    size_t ids_cap;
    int ts_other_unit;    /* the fold's ticks are not µs, a sample sink's timestamps' unit */
    uint64_t ticks;       /* the next sample's timestamp in the fold's ticks (sample_ticks) */
    int ticked;           /* ... was given */
    int tagged;           /* sample_tags or sample_values came for the next sample */
    int runs;             /* the writer sums stacks: a run of samples of one stack goes to it as one */
    int run_on;           /* a run is held: */
    uint64_t run_key, run_weight, run_ts;
    uint32_t *run_ids, run_depth;
    size_t run_cap;
    int gave_up;          /* a timestamp came in that unit: the fold's chunks would not be
                           * those of the chunk path, so nothing more goes to it */
    int joins;            /* tick_joins came for the next sample */
    int held;             /* a fold sample is held (each_tick: a run may join it): */
    uint64_t held_key, held_weight, held_ts;
    uint32_t *held_ids, held_depth;
    size_t held_cap;
    int defers;           /* the fold's error waits for finish (set: each_tick; the caller may set it) */
    int fold_failed;      /* the fold's error, kept for finish: */
    pb_error fold_err, err0;
} pb_sample_tee;

/* out: the writer's sink; fold: the fold's sample sink (its owner,
 * pb_sample_decode, makes it as pb_fold_decode would and frees it);
 * ticks_per_sec: the fold's ticks (0 or 1000000: µs, as a sample sink's
 * timestamps).  The tee takes no memory until its first frame. */
void pb_sample_tee_init(pb_sample_tee *t, pb_sample_sink *out, pb_sample_sink *fold, uint64_t ticks_per_sec,
                        pb_error *err);
void pb_sample_tee_free(pb_sample_tee *t);

#endif
