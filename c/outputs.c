/* outputs.c - THE table of targets, and the one write driver (outputs.h).
 *
 * Every output this distribution writes is one row of targets[] below.
 * Nothing else in c/, xs/ or lib/ lists them: the API's and the CLI's
 * validation, their messages, features() and the help's lists of targets
 * are made from these rows (Devel::ProfileBridge::_targets).
 */
#include <stdlib.h>
#include <string.h>
#include "write_collapsed.h"
#include "convert.h"
#include "convert_samples.h"
#include "json_lines.h"
#include "write_dump.h"
#include "write_gecko.h"
#include "merge.h"
#include "outputs.h"
#include "write_pprof.h"
#include "write_speedscope.h"
#include "write_statprofiler.h"

/* ---- the writer entries ---------------------------------------------------- */
static void *collapsed_open(FILE *fp, const char *t, pb_error *werr) { return (void)t, pb_collapse_new(fp, werr); }
static pb_sample_sink *collapsed_sink(void *w) { return pb_collapse_sample_sink((pb_collapse *)w); }
static void collapsed_free(void *w) { pb_collapse_free((pb_collapse *)w); }
static pb_status collapsed_diff(pb_write_req *rq, pb_error *err)
{
    return pb_convert_diff_collapsed(rq->in[0], rq->in[1], rq->opt, rq->out, err);
}

static void *pprof_open(FILE *fp, const char *t, pb_error *werr) { return (void)t, pb_pprof_new(fp, werr); }
static pb_sample_sink *pprof_sink(void *w) { return pb_pprof_sample_sink((pb_pprof *)w); }
static void pprof_free(void *w) { pb_pprof_free((pb_pprof *)w); }
static pb_status pprof_diff(pb_write_req *rq, pb_error *err)
{
    return pb_merge_diff(pb_target_named("pprof"), rq->in[0], rq->in[1], rq->opt, rq->out, err);
}

static void *speedscope_open(FILE *fp, const char *title, pb_error *werr) { return pb_speedscope_new(fp, title, werr); }
static pb_sample_sink *speedscope_sink(void *w) { return pb_speedscope_sample_sink((pb_speedscope *)w); }
static void speedscope_free(void *w) { pb_speedscope_free((pb_speedscope *)w); }

static void *gecko_open(FILE *fp, const char *title, pb_error *werr) { return pb_gecko_new(fp, title, werr); }
static pb_sample_sink *gecko_sink(void *w) { return pb_gecko_sample_sink((pb_gecko *)w); }
static void gecko_free(void *w) { pb_gecko_free((pb_gecko *)w); }

/* nytprof.out: the writer behind the presentation filter (convert.h) */
static void *nytprof_open(const pb_write_req *rq, const char *input, int bare_is_dot, pb_sink **sink,
                          const pb_options **opt, pb_error *err)
{
    pb_nytprof_target *t = (pb_nytprof_target *)malloc(sizeof *t);
    if (!t) {
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    if (pb_nytprof_target_open(t, rq->out, rq->level, rq->opt, input, bare_is_dot, rq->warn, rq->ud, err) != PB_OK) {
        free(t);
        return NULL;
    }
    *sink = pb_present_sink(t->pr);
    *opt = &t->opt;
    return t;
}
static pb_status nytprof_close(void *h, pb_status st, pb_error *err)
{
    st = pb_nytprof_target_close((pb_nytprof_target *)h, st, err);
    free(h);
    return st;
}

static pb_status statprofiler_convert(pb_write_req *rq, pb_error *err)
{
    return pb_convert_statprofiler_n(rq->in[0], rq->fmt, rq->opt, rq->out, &rq->names, &rq->n_names, &rq->samples,
                                     err);
}

static pb_status dump_convert(pb_write_req *rq, pb_error *err)
{
    return pb_convert_json_lines(rq->in[0], rq->fmt, rq->opt, rq->out, err);
}

/* ---- THE table ------------------------------------------------------------- */
#define STACKS(name) name##_open, name##_sink, name##_free, NULL, NULL
#define CHUNKS(name) NULL, NULL, NULL, name##_open, name##_close
#define OWN NULL, NULL, NULL, NULL, NULL
static const pb_target targets[] = {
    { "nytprof", "nytprof output", PB_YIELDS_CHUNKS,
      PB_TO_CONVERT | PB_TO_DEFAULT | PB_TO_STDOUT | PB_TO_COMPRESS | PB_TO_SOURCE | PB_TO_SALVAGE | PB_TO_BINARY,
      NULL, NULL,
      CHUNKS(nytprof), NULL, NULL,
      "attributes=nytprof.out;comments;lines;~wall_clock=ATTRIBUTE run_wall_clock_sec (the report's \"(of ...)\": the run's length)" },
    { "collapsed", "collapsed output", PB_YIELDS_STACKS,
      PB_TO_CONVERT | PB_TO_DIFF_DEFAULT | PB_TO_STDOUT | PB_TO_MERGE_STDOUT, NULL, "the output is empty",
      STACKS(collapsed), NULL, collapsed_diff, "" },
    { "statprofiler", "StatProfiler output", PB_YIELDS_SAMPLES, PB_TO_CONVERT | PB_TO_FILES, "snappy",
      "the trace holds none", OWN, statprofiler_convert, NULL,
      "opcode=op name;op_names;sections;metadata;lines;wall_clock" },
    { "pprof", "pprof output", PB_YIELDS_STACKS, PB_TO_CONVERT | PB_TO_STDOUT | PB_TO_MERGE_STDOUT | PB_TO_BINARY, NULL,
      "the output is empty", STACKS(pprof), NULL, pprof_diff,
      "thread_status=label thread_status;opcode=label opcode;lines;~wall_clock=duration_nanos" },
    { "speedscope", "speedscope output", PB_YIELDS_STACKS, PB_TO_CONVERT | PB_TO_STDOUT | PB_TO_MERGE_STDOUT, NULL,
      "the output is empty", STACKS(speedscope), NULL, NULL, "" },
    { "gecko", "gecko output", PB_YIELDS_STACKS, PB_TO_CONVERT | PB_TO_STDOUT | PB_TO_MERGE_STDOUT, NULL,
      "the output is empty", STACKS(gecko), NULL, NULL, "thread_status=interval markers, as CPython's --gecko writes them;lines;~wall_clock=the samples' times" },
    { "dump", "dump", PB_YIELDS_CHUNKS, PB_TO_STDOUT, NULL, NULL, OWN, dump_convert, NULL, "" },
};
#define N_TARGETS (sizeof targets / sizeof targets[0])

/* what every format's files lose (outputs.h), around each row's own rules */
const pb_loss pb_losses_common[] = {
    /* sampled input: reports count samples x interval, not the clock */
    { "the run's wall-clock length, s", "attr:run_wall_clock_sec", "wall_clock", 0,
      "wall_clock=reports show the sampled time, {attr:sampled_time_sec} s (samples x interval); the wall clock is "
      "{how}\n*=reports show the sampled time, {attr:sampled_time_sec} s (samples x interval); dropped" },
    { "embedded source lines", "chunks:SRC_LINE", NULL, PB_LOSS_STACKS | PB_LOSS_LATE,
      "*=no stack output carries source" },
    { NULL, NULL, NULL, 0, NULL }
};

const pb_target *pb_target_at(size_t i) { return i < N_TARGETS ? &targets[i] : NULL; }

const pb_target *pb_target_named(const char *name)
{
    size_t i;
    for (i = 0; name && i < N_TARGETS; i++)
        if (strcmp(targets[i].name, name) == 0)
            return &targets[i];
    return NULL;
}

int pb_target_can(const pb_target *t, pb_write_mode mode)
{
    switch (mode) {
    case PB_WRITE_CONVERT: return t->convert || t->open || t->chunks_open;
    case PB_WRITE_MERGE: return t->open || t->chunks_open;
    default: return t->diff != NULL;
    }
}

/* ---- the one driver ---------------------------------------------------------- */
void pb_write_req_init(pb_write_req *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->level = -1;
}

void pb_write_free(pb_write_req *rq)
{
    pb_convert_free_names(rq->names, rq->n_names);
    rq->names = NULL;
    rq->n_names = 0;
}

/* a chunk writer: the input's chunks into its sink */
static pb_status convert_chunks(const pb_target *t, pb_write_req *rq, pb_error *err)
{
    pb_sink *sink;
    const pb_options *opt;
    void *h = t->chunks_open(rq, rq->in[0], 1, &sink, &opt, err);
    if (!h)
        return err->status;
    return t->chunks_close(h, pb_decode_file(rq->in[0], rq->fmt, opt, sink, err), err);
}

pb_status pb_write(const pb_target *t, pb_write_mode mode, pb_write_req *rq, pb_error *err)
{
    if (!pb_target_can(t, mode)) {
        pb_error_init(err, t->name, rq->out);
        return pb_fail_nooff(err, PB_ERR_USAGE, "%s cannot %s", t->name,
                             mode == PB_WRITE_MERGE ? "merge" : mode == PB_WRITE_DIFF ? "diff" : "convert");
    }
    if (mode == PB_WRITE_MERGE)
        return pb_merge_files(rq->in, rq->n, rq->opt, t->name, rq->out, rq->level, rq->warn, rq->ud, err);
    if (mode == PB_WRITE_DIFF)
        return t->diff(rq, err);
    if (t->convert)
        return t->convert(rq, err);
    if (t->chunks_open)
        return convert_chunks(t, rq, err);
    return pb_convert_stacks_n(rq->in[0], rq->fmt, rq->opt, rq->out, t, &rq->samples, err);
}

/* ---- the stack writers by name (convert_samples.h) --------------------------- */
const pb_stack_output *pb_stack_output_named(const char *name)
{
    const pb_target *t = pb_target_named(name);
    return t && t->open ? t : NULL;
}

pb_status pb_diff_pprof(const char *before, const char *after, const pb_options *opt, const char *out_path,
                        pb_error *err)
{
    return pb_merge_diff(pb_target_named("pprof"), before, after, opt, out_path, err);
}
