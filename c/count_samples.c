/* count_samples.c - counting what reaches a writer (count_samples.h). */
#include "count_samples.h"

typedef pb_counting counting;

static pb_status cnt_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    return self->next->attribute ? self->next->attribute(self->next, key, v) : PB_OK;
}
static pb_status cnt_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    if (weight)
        ((counting *)self->ctx)->samples++;
    return self->next->sample(self->next, key, ids, depth, weight, ts);
}
static pb_status cnt_span(pb_sample_sink *self, uint64_t key, uint32_t frame, uint64_t begin, uint64_t end)
{
    ((counting *)self->ctx)->samples++;
    return self->next->span(self->next, key, frame, begin, end);
}
static const pb_sample_sink counting_calls = {.attribute = cnt_attribute, .frame = pb_sample_pass_frame,
    .thread = pb_sample_pass_thread, .sample = cnt_sample, .note = pb_sample_pass_note,
    .finish = pb_sample_pass_finish, .span = cnt_span, .sample_tags = pb_sample_pass_sample_tags,
    .thread_root = pb_sample_pass_thread_root,
    .columns = pb_sample_pass_columns, .mapping = pb_sample_pass_mapping, .sample_values = pb_sample_pass_sample_values};

pb_sample_sink *pb_counting_init(counting *c, pb_sample_sink *next)
{
    pb_sample_sink_init(&c->ss, &counting_calls, c, next->err, next->cleanups);
    c->ss.next = next;
    c->ss.sums_stacks = next->sums_stacks; /* the count is of samples > 0: only whether it is 0 is used */
    c->ss.each_tick = next->each_tick;
    c->ss.keeps_cut_stacks = next->keeps_cut_stacks;
    if (!next->span)
        c->ss.span = NULL; /* not wanted downstream: the decoder must not fold spans for it */
    if (!next->sample_tags)
        c->ss.sample_tags = NULL; /* likewise: no tags are looked up for a sink that drops them */
    if (!next->thread_root)
        c->ss.thread_root = NULL;
    if (!next->sample_values) /* and no value columns, mappings nor labels */
        c->ss.columns = NULL, c->ss.mapping = NULL, c->ss.sample_values = NULL;
    c->samples = 0;
    return &c->ss;
}
