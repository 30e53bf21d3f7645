/* outputs.c - THE table of targets, and the one write driver (outputs.h).
 *
 * Every output this distribution writes is one row of targets[] below.
 * Nothing else in c/, xs/ or lib/ lists them: the API's and the CLI's
 * validation, their messages, features() and the help's lists of targets
 * are made from these rows (Devel::ProfileBridge::_targets).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdlib.h>
#include <string.h>
#include "count_samples.h"
#include "write_gecko.h"
#include "merge.h"
#include "output.h"
#include "outputs.h"
#include "write_callgrind.h"
#include "write_collapsed.h"
#include "write_dump.h"
#include "write_nytprof.h"
#include "write_pprof.h"
#include "write_pstats.h"
#include "write_speedscope.h"
#include "write_statprofiler.h"

/* ---- the writer entries ---------------------------------------------------- */
/* a stack writer's sink and free: every one is a pb_stack_writer (samples.h) */
static pb_sample_sink *stacks_sink(void *w) { return pb_stack_writer_sink((pb_stack_writer *)w); }
static void stacks_free(void *w) { pb_stack_writer_free((pb_stack_writer *)w); }

static void *collapsed_open(FILE *fp, const char *t, const pb_options *o, pb_error *werr) { return (void)t, (void)o, pb_collapse_new(fp, werr); }
static void *collapsed_diff_open(FILE *fp, pb_error *err) { return pb_collapse_diff_new(fp, err); }
static pb_status collapsed_diff_next(void *w) { return pb_collapse_diff_side((pb_collapse *)w, 1); }
static pb_status collapsed_diff_finish(void *w) { return pb_collapse_diff_write((pb_collapse *)w); }

static void *pprof_open(FILE *fp, const char *t, const pb_options *o, pb_error *werr) { return (void)t, (void)o, pb_pprof_new(fp, werr); }

static void *speedscope_open(FILE *fp, const char *title, const pb_options *o, pb_error *werr)
{
    return pb_speedscope_new(fp, title, !(o && o->no_time_order), werr);
}

static void *gecko_open(FILE *fp, const char *title, const pb_options *o, pb_error *werr) { return (void)o, pb_gecko_new(fp, title, werr); }

/* nytprof.out: the writer behind the presentation filter (write_nytprof.h) */
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

/* the call-graph targets: the input's chunks into a call graph (chunk_graph.h), written at the end */
static void *cgraph_open(const pb_write_req *rq, const char *who, pb_cgraph_write_fn write, pb_sink **sink,
                         const pb_options **opt, pb_error *err)
{
    pb_cgraph_target *t = pb_cgraph_target_open(rq->out, who, write, err);
    if (t) {
        *sink = &t->g.sink;
        *opt = rq->opt;
    }
    return t;
}
static pb_status cgraph_close(void *h, pb_status st, pb_error *err) { return pb_cgraph_target_close(h, st, err); }
static void *pstats_open(const pb_write_req *rq, const char *input, int bare_is_dot, pb_sink **sink,
                         const pb_options **opt, pb_error *err)
{
    return (void)input, (void)bare_is_dot, cgraph_open(rq, "pstats", pb_pstats_write, sink, opt, err);
}
#define pstats_close cgraph_close
static void *callgrind_open(const pb_write_req *rq, const char *input, int bare_is_dot, pb_sink **sink,
                            const pb_options **opt, pb_error *err)
{
    return (void)input, (void)bare_is_dot, cgraph_open(rq, "callgrind", pb_callgrind_write, sink, opt, err);
}
#define callgrind_close cgraph_close

static void *statprofiler_files_open(const char *out, const pb_options *opt, pb_error *werr)
{
    return (void)opt, pb_spw_sink_new(out, werr);
}
static pb_sample_sink *statprofiler_sink(void *w) { return pb_spw_sink_base((pb_spw_sink *)w); }
static size_t statprofiler_files(void *w, const char *const **names) { return pb_spw_sink_files((pb_spw_sink *)w, names); }
static void statprofiler_free(void *w) { pb_spw_sink_free((pb_spw_sink *)w); }

static void *dump_open(FILE *fp, const char *t, const pb_options *o, pb_error *werr) { return (void)t, (void)o, pb_dump_new(fp, werr); }
static pb_sink *dump_sink(void *w) { return (pb_sink *)w; }
static void dump_free(void *w) { pb_dump_free((pb_sink *)w); }

/* ---- THE table ------------------------------------------------------------- */
/* a writer on an open stream that consumes samples (a pb_stack_writer) */
#define STACKS(name) .open = name##_open, .sink = stacks_sink, .free = stacks_free
static const pb_target targets[] = {
    { .name = "nytprof", .what = "nytprof output", .consumes = PB_YIELDS_CHUNKS,
      .flags = PB_TO_CONVERT | PB_TO_DEFAULT | PB_TO_STDOUT | PB_TO_COMPRESS | PB_TO_SOURCE | PB_TO_SALVAGE
             | PB_TO_BINARY,
      .chunks_open = nytprof_open, .chunks_close = nytprof_close,
      .keeps = "attributes=nytprof.out;comments;lines;~wall_clock=ATTRIBUTE run_wall_clock_sec (the report's \"(of "
               "...)\": the run's length)" },
    { .name = "collapsed", .what = "collapsed output", .consumes = PB_YIELDS_STACKS,
      .flags = PB_TO_CONVERT | PB_TO_DIFF_DEFAULT | PB_TO_STDOUT | PB_TO_MERGE_STDOUT,
      .empty = "the output is empty",
      STACKS(collapsed), .diff_open = collapsed_diff_open, .diff_next = collapsed_diff_next,
      .diff_finish = collapsed_diff_finish,
      .keeps = "" },
    { .name = "statprofiler", .what = "StatProfiler output", .consumes = PB_YIELDS_SAMPLES,
      .flags = PB_TO_CONVERT | PB_TO_FILES, .library = "snappy",
      .empty = "the trace holds none",
      .files_open = statprofiler_files_open, .sink = statprofiler_sink, .files = statprofiler_files,
      .free = statprofiler_free,
      .keeps = "opcode=op name;sections;metadata;lines;wall_clock" },
    { .name = "pprof", .what = "pprof output", .consumes = PB_YIELDS_STACKS,
      .flags = PB_TO_CONVERT | PB_TO_STDOUT | PB_TO_MERGE_STDOUT | PB_TO_BINARY | PB_TO_DIFF,
      .empty = "the output is empty",
      STACKS(pprof),
      .keeps = "thread_status=label thread_status;opcode=label opcode;lines;~wall_clock=duration_nanos" },
    { .name = "speedscope", .what = "speedscope output", .consumes = PB_YIELDS_STACKS,
      .flags = PB_TO_CONVERT | PB_TO_STDOUT | PB_TO_MERGE_STDOUT,
      .empty = "the output is empty",
      STACKS(speedscope),
      .keeps = "" },
    { .name = "gecko", .what = "gecko output", .consumes = PB_YIELDS_STACKS,
      .flags = PB_TO_CONVERT | PB_TO_STDOUT | PB_TO_MERGE_STDOUT,
      .empty = "the output is empty",
      STACKS(gecko),
      .keeps = "thread_status=interval markers, as CPython's --gecko writes them;lines;~wall_clock=the samples' times" },
    { .name = "pstats", .what = "pstats output", .consumes = PB_YIELDS_CHUNKS,
      .flags = PB_TO_CONVERT | PB_TO_STDOUT | PB_TO_BINARY,
      .chunks_open = pstats_open, .chunks_close = pstats_close,
      .keeps = "" },
    { .name = "callgrind", .what = "callgrind output", .consumes = PB_YIELDS_CHUNKS,
      .flags = PB_TO_CONVERT | PB_TO_STDOUT,
      .chunks_open = callgrind_open, .chunks_close = callgrind_close,
      .keeps = "" },
    { .name = "dump", .what = "dump", .consumes = PB_YIELDS_CHUNKS,
      .flags = PB_TO_STDOUT,
      .open = dump_open, .chunk_sink = dump_sink, .free = dump_free,
      .keeps = "" },
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
    case PB_WRITE_CONVERT: return t->files_open || t->open || t->chunks_open;
    case PB_WRITE_MERGE: return (t->open && t->sink) || t->chunks_open;
    default: return t->diff_open || ((t->flags & PB_TO_DIFF) && t->open && t->sink);
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
    size_t i;
    for (i = 0; i < rq->n_names; i++)
        free(rq->names[i]);
    free(rq->names);
    rq->names = NULL;
    rq->n_names = 0;
}

/* one write: what the producer reads (for merge: each input once) */
typedef struct {
    const pb_target *t;
    pb_write_mode mode;
    const char *const *in;
    size_t n;
    pb_format fmt;
    const pb_options *opt;
    uint64_t samples; /* out (convert to a sample writer): samples of weight > 0 written */
    pb_write_req *rq; /* its chunk_tee: the loss counter of --report */
} write_job;

/* the options of a convert's decode: with --report's loss counter, to
 * which a sampling decoder folds its samples too (sample_tee.h) */
static const pb_options *convert_options(write_job *j, pb_options *o)
{
    if (j->mode != PB_WRITE_CONVERT || !j->rq->chunk_tee)
        return j->opt;
    pb_options_copy(o, j->opt);
    *j->rq->chunk_tee_next = NULL;
    o->chunk_tee = j->rq->chunk_tee;
    o->chunk_teed = &j->rq->chunk_teed;
    return o;
}

/* the producer: one input's decoder (convert) or the merge layer (merge.h)
 * into a writer on the stream output.h opened */
static pb_status stream_write(FILE *fp, void *ctx, pb_error *werr, pb_error *err)
{
    write_job *j = (write_job *)ctx;
    const pb_target *t = j->t;
    const char *title = "merged profile";
    pb_counting c;
    pb_status st;
    void *w;
    if (j->mode == PB_WRITE_CONVERT) {
        const char *base = strrchr(j->in[0], '/');
        title = base ? base + 1 : j->in[0];
    }
    if (!(w = t->open(fp, title, j->opt, werr)))
        return werr->status;
    if (t->chunk_sink) {
        st = pb_decode_file(j->in[0], j->fmt, j->opt, t->chunk_sink(w), err);
    } else if (j->mode == PB_WRITE_CONVERT) {
        pb_options o;
        st = pb_decode_samples_file_for(j->in[0], j->fmt, convert_options(j, &o), pb_counting_init(&c, t->sink(w)),
                                        t->what, t->consumes, err);
        j->samples = c.samples;
    } else {
        st = pb_merge_samples(j->in, j->n, j->opt, j->mode == PB_WRITE_DIFF, t->sink(w), err);
    }
    t->free(w);
    return st;
}

/* a writer of files of its own: the input's samples into its sink; after
 * a complete write, the names of the files it wrote into rq */
static pb_status files_write(write_job *j, pb_error *err)
{
    const pb_target *t = j->t;
    pb_write_req *rq = j->rq;
    pb_counting c;
    pb_options o;
    pb_error werr;
    pb_status st;
    void *w;
    memset(&werr, 0, sizeof werr);
    if (!(w = t->files_open(rq->out, j->opt, &werr))) {
        *err = werr;
        return err->status;
    }
    st = pb_decode_samples_file_for(j->in[0], j->fmt, convert_options(j, &o), pb_counting_init(&c, t->sink(w)),
                                    t->what, t->consumes, err);
    j->samples = c.samples;
    if (st != PB_OK && werr.status != PB_OK &&
        (err->status == PB_OK || err->status == PB_ERR_ABORT || !err->message[0])) {
        *err = werr; /* the writer's reason (a decoder passes a sink's status on without a message) */
        st = err->status;
    } else if (st != PB_OK && err->status == PB_OK) {
        pb_fail_nooff(err, st, "the %s writer failed", t->name);
    }
    if (st == PB_OK) {
        const char *const *names;
        size_t n = t->files(w, &names), i;
        if (!(rq->names = (char **)calloc(n ? n : 1, sizeof *rq->names))) {
            st = pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        } else {
            for (i = 0; i < n; i++)
                if (!(rq->names[rq->n_names++] = strdup(names[i])))
                    st = pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        }
    }
    t->free(w);
    return st;
}

/* a difference the target writes itself (its diff_open) on the stream:
 * before's samples, then after's, through the sample driver */
static pb_status diff_write(FILE *fp, void *ctx, pb_error *werr, pb_error *err)
{
    const write_job *j = (const write_job *)ctx;
    const pb_target *t = j->t;
    pb_units_filter g; /* bytes and ns are never set side by side */
    pb_status st;
    void *w;
    (void)werr;
    pb_error_init(err, "profbridge", j->in[0]);
    if (!(w = t->diff_open(fp, err)))
        return err->status;
    pb_units_filter_init(&g, t->sink(w), j->in[0], err);
    st = pb_decode_samples_file(j->in[0], PB_FMT_UNKNOWN, j->opt, &g.ss, "a diff", err);
    if (st == PB_OK) {
        st = t->diff_next(w);
        pb_units_filter_next_input(&g);
    }
    if (st == PB_OK)
        st = pb_decode_samples_file(j->in[1], PB_FMT_UNKNOWN, j->opt, &g.ss, "a diff", err);
    if (st == PB_OK)
        st = t->diff_finish(w);
    t->free(w);
    return st;
}

/* a chunk writer that owns its file: the input's chunks (convert), or every
 * input's samples folded into chunks (merge) */
static pb_status chunks_write(const write_job *j, pb_write_req *rq, pb_error *err)
{
    pb_sink *sink;
    const pb_options *opt;
    pb_status st;
    void *h = j->t->chunks_open(rq, j->in[0], j->mode == PB_WRITE_CONVERT, &sink, &opt, err);
    if (!h)
        return err->status;
    if (rq->chunk_tee && j->mode == PB_WRITE_CONVERT) { /* the chunks pass it first (--report's loss counter) */
        *rq->chunk_tee_next = sink;
        rq->chunk_tee->cleanups = sink->cleanups;
        sink = rq->chunk_tee;
        rq->chunk_teed = 1;
    }
    if (j->mode == PB_WRITE_CONVERT)
        st = pb_decode_file(j->in[0], j->fmt, opt, sink, err);
    else
        st = pb_merge_chunks(j->in, j->n, opt, sink, err);
    return j->t->chunks_close(h, st, err);
}

/* the targets that carry a call graph: nytprof.out (chunks) and those that
 * take one (consumes PB_YIELDS_GRAPH), as "--to a, --to b" */
const char *pb_graph_targets(char *buf, size_t cap)
{
    size_t i, n = 0;
    const pb_target *t;
    buf[0] = '\0';
    for (i = 0; (t = pb_target_at(i)) != NULL; i++) {
        if (!(t->flags & PB_TO_CONVERT) || !(t->consumes & (PB_YIELDS_CHUNKS | PB_YIELDS_GRAPH)))
            continue;
        if (n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "%s--to %s", n ? ", " : "", t->name);
    }
    return buf;
}

pb_status pb_write(const pb_target *t, pb_write_mode mode, pb_write_req *rq, pb_error *err)
{
    write_job j;
    const char **once = NULL;
    pb_status st;
    if (!pb_target_can(t, mode)) {
        pb_error_init(err, t->name, rq->out);
        return pb_fail_nooff(err, PB_ERR_USAGE, "%s cannot %s", t->name,
                             mode == PB_WRITE_MERGE ? "merge" : mode == PB_WRITE_DIFF ? "diff" : "convert");
    }
    memset(&j, 0, sizeof j);
    j.t = t;
    j.mode = mode;
    j.in = rq->in;
    j.n = rq->n;
    j.fmt = rq->fmt;
    j.opt = rq->opt;
    j.rq = rq;
    if (mode == PB_WRITE_DIFF && t->diff_open)
        return pb_output_with(rq->out, "diff", diff_write, &j, err);
    if (mode == PB_WRITE_MERGE) {
        /* every trace file once (merge.h) */
        pb_error_init(err, "merge", rq->out);
        if ((st = pb_merge_inputs(rq->in, rq->n, rq->opt, &once, &j.n, err)) != PB_OK)
            return st;
        j.in = once;
        pb_error_init(err, "merge", rq->out);
    }
    if (t->chunks_open)
        st = chunks_write(&j, rq, err);
    else if (t->open)
        st = pb_output_with(rq->out, t->name, stream_write, &j, err);
    else
        st = files_write(&j, err);
    if (mode == PB_WRITE_CONVERT)
        rq->samples = j.samples;
    free((void *)once);
    if (st == PB_ERR_UNSUPPORTED && err->needs_graph_target) {
        /* "... convert it to a target that carries a call graph": name them */
        size_t n = strlen(err->message);
        char list[256];
        snprintf(err->message + n, sizeof err->message - n, ": %s", pb_graph_targets(list, sizeof list));
        err->needs_graph_target = 0;
    }
    return st;
}
