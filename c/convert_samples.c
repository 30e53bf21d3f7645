/* convert_samples.c - sample profiles to collapsed stacks or StatProfiler records. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collapsed.h"
#include "convert_samples.h"
#include "formats.h"
#include "output.h"
#include "write_pprof.h"
#include "write_speedscope.h"
#include "write_statprofiler.h"


/* ---- the stack outputs ---------------------------------------------------- */
static void *collapsed_open(FILE *fp, const char *title, pb_error *werr)
{
    (void)title;
    return pb_collapse_new(fp, werr);
}
static pb_sample_sink *collapsed_sink(void *w) { return pb_collapse_sample_sink((pb_collapse *)w); }
static void collapsed_free(void *w) { pb_collapse_free((pb_collapse *)w); }

static void *pprof_open(FILE *fp, const char *title, pb_error *werr)
{
    (void)title;
    return pb_pprof_new(fp, werr);
}
static pb_sample_sink *pprof_sink(void *w) { return pb_pprof_sample_sink((pb_pprof *)w); }
static void pprof_free(void *w) { pb_pprof_free((pb_pprof *)w); }

static void *speedscope_open(FILE *fp, const char *title, pb_error *werr) { return pb_speedscope_new(fp, title, werr); }
static pb_sample_sink *speedscope_sink(void *w) { return pb_speedscope_sample_sink((pb_speedscope *)w); }
static void speedscope_free(void *w) { pb_speedscope_free((pb_speedscope *)w); }

static const pb_stack_output stack_outputs[] = {
    { "collapsed", "collapsed output", collapsed_open, collapsed_sink, collapsed_free },
    { "pprof", "pprof output", pprof_open, pprof_sink, pprof_free },
    { "speedscope", "speedscope output", speedscope_open, speedscope_sink, speedscope_free },
};

const pb_stack_output *pb_stack_output_named(const char *name)
{
    size_t i;
    for (i = 0; i < sizeof stack_outputs / sizeof stack_outputs[0]; i++)
        if (strcmp(stack_outputs[i].name, name) == 0)
            return &stack_outputs[i];
    return NULL;
}

/* ---- counting what reaches a writer -------------------------------------
 * A pass-through filter that counts the samples of weight > 0 (and spans):
 * a profile with none is named empty (the caller warns), whatever the target. */
typedef struct {
    pb_sample_sink ss;
    uint64_t samples;
} counting;

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
    .finish = pb_sample_pass_finish, .span = cnt_span, .sample_tags = pb_sample_pass_sample_tags};

static pb_sample_sink *counting_init(counting *c, pb_sample_sink *next)
{
    pb_sample_sink_init(&c->ss, &counting_calls, c, next->err, next->cleanups);
    c->ss.next = next;
    if (!next->span)
        c->ss.span = NULL; /* not wanted downstream: the decoder must not fold spans for it */
    if (!next->sample_tags)
        c->ss.sample_tags = NULL; /* likewise: no tags are looked up for a sink that drops them */
    c->samples = 0;
    return &c->ss;
}

typedef struct {
    const char *in, *after; /* after: a diff's second input */
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
    st = pb_decode_samples_file(a->in, a->fmt, a->opt, counting_init(&c, a->o->sink(w)), a->o->what, err);
    ((stacks_args *)ctx)->samples = c.samples;
    a->o->free(w);
    return st;
}

/* one output life (output.h) around write, with these arguments */
static pb_status with_output(const char *out_path, const char *name,
                             pb_output_fn write, const char *in,
                             const char *after, pb_format fmt, const pb_options *opt, const pb_stack_output *o,
                             uint64_t *samples, pb_error *err)
{
    stacks_args a;
    pb_status st;
    a.in = in;
    a.after = after;
    a.fmt = fmt;
    a.opt = opt;
    a.o = o;
    a.samples = 0;
    st = pb_output_with(out_path, name, write, &a, err);
    if (samples)
        *samples = a.samples;
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
    return with_output(out_path, o->name, stacks_write, in, NULL, fmt, opt, o, samples, err);
}

pb_status pb_convert_collapsed(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                               pb_error *err)
{
    return pb_convert_stacks(in, fmt, opt, out_path, &stack_outputs[0], err);
}

static pb_status diff_write(FILE *fp, void *ctx, pb_error *werr, pb_error *err)
{
    const stacks_args *a = (const stacks_args *)ctx;
    (void)werr;
    return pb_collapse_diff_files(a->in, a->after, a->opt, fp, err);
}

pb_status pb_convert_diff_collapsed(const char *before, const char *after, const pb_options *opt,
                                    const char *out_path, pb_error *err)
{
    return with_output(out_path, "diff", diff_write, before, after, PB_FMT_UNKNOWN, opt, NULL, NULL, err);
}

void pb_convert_free_names(char **names, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

pb_status pb_convert_statprofiler(const char *in, pb_format fmt, const pb_options *opt_in, const char *out_path,
                                  char ***names_out, size_t *n_out, pb_error *err)
{
    return pb_convert_statprofiler_n(in, fmt, opt_in, out_path, names_out, n_out, NULL, err);
}

pb_status pb_convert_statprofiler_n(const char *in, pb_format fmt, const pb_options *opt_in, const char *out_path,
                                    char ***names_out, size_t *n_out, uint64_t *samples, pb_error *err)
{
    counting c;
    pb_options opt;
    pb_spw_sink *k;
    pb_status st;
    pb_error werr;
    pb_sp_hooks hooks;
    const pb_format_row *row;
    if (names_out)
        *names_out = NULL;
    if (n_out)
        *n_out = 0;
    pb_options_copy(&opt, opt_in);
    if (fmt == PB_FMT_UNKNOWN) {
        pb_format_info info;
        pb_error_init(err, "profbridge", in);
        if ((st = pb_detect_file(in, &info, err)) != PB_OK) /* a directory: a StatProfiler run */
            return st;
        fmt = info.format;
        if (fmt == PB_FMT_UNKNOWN) {
            struct stat sb;
            if (stat(in, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0)
                return pb_fail(err, PB_ERR_CORRUPT, 0, "empty file: not a profile"); /* as every other target says */
        }
    }
    pb_error_init(err, fmt ? pb_format_name(fmt) : "profbridge", in);
    row = pb_format_get(fmt);
    if (!row || !(row->yields & PB_YIELDS_SAMPLES))
        return pb_fail_nooff(err, PB_ERR_UNSUPPORTED,
                             "%s profiles have no stack samples: StatProfiler output needs Tachyon or StatProfiler "
                             "input",
                             fmt ? pb_format_name(fmt) : "unrecognised");
    pb_error_init(&werr, "statprofiler-writer", out_path);
    k = pb_spw_sink_new(out_path, &werr);
    if (!k) {
        *err = werr;
        return err->status;
    }
    /* through the driver, which resolves a run (a directory or a root's
     * first file); the writer's hooks (eval source, sections, op names)
     * reach the decoder of a format that takes them */
    hooks = pb_spw_sink_hooks(k);
    st = pb_decode_samples_file_extra(in, fmt, &opt, counting_init(&c, pb_spw_sink_base(k)), "StatProfiler output",
                                      &hooks, err);
    if (samples)
        *samples = c.samples;
    if (st != PB_OK && werr.status != PB_OK &&
        (err->status == PB_OK || err->status == PB_ERR_ABORT || !err->message[0]))
        *err = werr; /* the writer's reason (a decoder passes a sink's status on without a message) */
    else if (st != PB_OK && err->status == PB_OK)
        pb_fail_nooff(err, st, "the StatProfiler writer failed");
    if (st == PB_OK && names_out) {
        const char *const *names;
        size_t n = pb_spw_sink_files(k, &names), i;
        char **copy = (char **)calloc(n ? n : 1, sizeof *copy);
        for (i = 0; copy && i < n; i++)
            copy[i] = strdup(names[i]);
        *names_out = copy;
        if (n_out)
            *n_out = copy ? n : 0;
    }
    pb_spw_sink_free(k);
    return st;
}
