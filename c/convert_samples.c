/* convert_samples.c - a profile's stacks through a stack writer (convert_samples.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "convert_samples.h"
#include "output.h"

/* ---- counting what reaches a writer (convert_samples.h) ------------------- */
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
    c->ss.each_tick = next->each_tick;
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

typedef struct {
    const char *in;
    pb_format fmt;
    const pb_options *opt;
    const pb_stack_output *o;
    uint64_t samples; /* out: samples of weight > 0 written */
} stacks_args;

static pb_status stacks_write(FILE *fp, void *ctx, pb_error *werr, pb_error *err)
{
    const stacks_args *a = (const stacks_args *)ctx;
    const char *base = strrchr(a->in, '/');
    void *w = a->o->open(fp, base ? base + 1 : a->in, werr);
    pb_status st;
    counting c;
    if (!w)
        return werr->status;
    st = pb_decode_samples_file(a->in, a->fmt, a->opt, pb_counting_init(&c, a->o->sink(w)), a->o->what, err);
    ((stacks_args *)ctx)->samples = c.samples;
    a->o->free(w);
    return st;
}

pb_status pb_convert_stacks(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                            const pb_stack_output *o, pb_error *err)
{
    return pb_convert_stacks_n(in, fmt, opt, out_path, o, NULL, err);
}

pb_status pb_convert_stacks_n(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                              const pb_stack_output *o, uint64_t *samples, pb_error *err)
{
    stacks_args a = {.in = in, .fmt = fmt, .opt = opt, .o = o, .samples = 0};
    pb_status st = pb_output_with(out_path, o->name, stacks_write, &a, err);
    if (samples)
        *samples = a.samples;
    return st;
}

void pb_convert_free_names(char **names, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
