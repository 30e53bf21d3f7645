/* fuzz_common.h - the whole path every harness drives (libFuzzer).
 *
 * One input is:
 *   1. decoded (format forced, or detected for fuzz_detect) straight into the
 *      NYTProf writer writing to memory -- so sampling decoders go through
 *      fold_samples.c and EasyProfiler through fold_spans.c, and every chunk
 *      reaches write_nytprof.c;
 *   2. when decoding succeeded and the writer accepted the stream, the bytes
 *      it wrote are decoded again with the NYTProf decoder, which must
 *      succeed (a writer that produces a file we cannot read is a finding);
 *   3. for sampling formats, also replayed into the collapsed-stack sink;
 *   4. decoded once more into a consumer that never returns: it longjmps out
 *      at a chunk picked from the input's bytes (or at the first warning),
 *      as a dying Perl callback does, and what the decoder registered in
 *      the pb_cleanups table is released -- LeakSanitizer reports anything
 *      a decoder or fold holds without registering it.  A decode that
 *      returns must leave the table empty.
 * Every failure must be a filled error record of a decode class.
 *
 * Variation without touching the bytes: size bit 0 turns on salvage, size
 * bit 1 makes the writer compress (level 1) instead of writing plain.
 * Limits are lowered (FUZZ_* below) so that one input can neither take
 * seconds nor gigabytes; the defaults themselves are tested in t/80-limits.t.
 * Plain C99 + libFuzzer's entry point; links c/ only.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pb.h"
#include "write_nytprof.h"
#include "present.h"
#include "fold_samples.h"
#include "collapsed.h"
#include "write_pprof.h"
#include "write_speedscope.h"
#include "../t/c/harness.h"

#define FUZZ_MAX_DECOMPRESSED (UINT64_C(64) << 20)
#define FUZZ_MAX_RECORD       (UINT64_C(16) << 20)
#define FUZZ_MAX_STACK_DEPTH  512
#define FUZZ_MAX_STRINGS      200000u
#define FUZZ_MAX_FRAMES       200000u
#define FUZZ_MAX_STATEMENTS   (UINT64_C(1) << 20)

static unsigned long fuzz_sink_sum;

static void fuzz_die(const char *what, const pb_error *err, pb_status st)
{
    char buf[2048];
    pb_error_format(err, buf, sizeof buf);
    fprintf(stderr, "FUZZ FINDING: %s (status %d, record status %d): %s\n", what, (int)st, (int)err->status, buf);
    abort();
}

/* a failure must carry a decode class, a format and a message */
static void fuzz_check_error(const char *what, pb_status st, const pb_error *err, int allow_abort)
{
    if (st == PB_OK)
        return;
    if (st != err->status)
        fuzz_die("returned status differs from the error record", err, st);
    if (!(st == PB_ERR_TRUNCATED || st == PB_ERR_CORRUPT || st == PB_ERR_UNSUPPORTED || st == PB_ERR_LIMIT ||
          (allow_abort && st == PB_ERR_ABORT)))
        fuzz_die(what, err, st);
    if (err->message[0] == '\0' || err->format == NULL)
        fuzz_die("error record without a message or format", err, st);
}

static int fuzz_touch_chunk(pb_sink *self, const pb_chunk *c)
{
    (void)self;
    fuzz_sink_sum = hx_touch(c, fuzz_sink_sum);
    return 0;
}

static void fuzz_warn_sink(pb_sink *self, const char *msg)
{
    (void)self;
    fuzz_sink_sum += strlen(msg);
}

static void fuzz_warn_ud(void *ud, const char *msg)
{
    (void)ud;
    fuzz_sink_sum += strlen(msg);
}

/* the lowered limits (everything else as pb_options_init leaves it); salvage by the size's bit 0 */
static void fuzz_options(pb_options *o, size_t size)
{
    static const pb_options limits = {.max_decompressed_bytes = FUZZ_MAX_DECOMPRESSED,
                                      .max_record_size = FUZZ_MAX_RECORD,
                                      .max_stack_depth = FUZZ_MAX_STACK_DEPTH,
                                      .max_strings = FUZZ_MAX_STRINGS,
                                      .max_frames = FUZZ_MAX_FRAMES,
                                      .max_statements = FUZZ_MAX_STATEMENTS};
    *o = limits;
    o->salvage = (int)(size & 1);
}

/* the writer's output must read back with our own NYTProf decoder */
static void fuzz_read_back(const pb_membuf *mb)
{
    pb_sink sink;
    pb_error err;
    pb_options o;
    pb_status st;
    hx_sink_init(&sink, fuzz_touch_chunk, fuzz_warn_sink, NULL);
    pb_options_init(&o);
    o.max_decompressed_bytes = UINT64_C(1) << 30;
    st = pb_decode_mem(mb->data, mb->len, "(written)", PB_FMT_NYTPROF, &o, &sink, &err);
    if (st != PB_OK)
        fuzz_die("the NYTProf writer's output does not read back", &err, st);
}

/* step 4: a consumer that leaves through longjmp (harness.h; state kept
 * static), at the first warning or at a chunk picked from the input */
static void fuzz_leave(const uint8_t *data, size_t size, pb_format fmt)
{
    static hx_jumper jumper;
    static pb_source src;
    static pb_sink sink;
    static pb_error err;
    static pb_options opt;
    uint32_t h = 2166136261u, bits;
    size_t i;
    for (i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    /* 1 .. 2^15: early chunks often, the fold's last ones sometimes */
    bits = h % 16;
    hx_jumper_sink(&jumper, &sink, 1 + ((h >> 4) & ((UINT32_C(1) << bits) - 1)), 1);
    fuzz_options(&opt, size);
    pb_error_init(&err, fmt ? pb_format_name(fmt) : "profbridge", "fuzz.in");
    pb_src_open_mem(&src, data, size, &err);
    if (setjmp(jumper.jump) == 0) {
        pb_decode_source(&src, "fuzz.in", fmt, &opt, &sink, &err);
        if (jumper.table.n != 0)
            fuzz_die("a decode that returned left cleanups registered", &err, err.status);
    }
    /* what the XS layer does when Perl unwinds past the decoder */
    pb_cleanups_run(&jumper.table);
    pb_src_close(&src);
    fuzz_sink_sum += jumper.sum;
}

/* writer_must_accept: a stream from a foreign decoder that decoded cleanly
 * must be one the writer accepts (the folds promise valid streams). */
static void fuzz_convert(const uint8_t *data, size_t size, pb_format fmt, int writer_must_accept)
{
    pb_options opt;
    pb_nytprof_writer_opts wo;
    pb_nytprof_writer *w;
    pb_present *pr;
    pb_membuf mb;
    pb_error err, werr;
    pb_status st, cst;

    fuzz_leave(data, size, fmt);
    fuzz_options(&opt, size);
    pb_nytprof_writer_opts_init(&wo);
    wo.compress_level = (size & 2) ? 1 : 0;
    wo.warn = fuzz_warn_ud;
    memset(&mb, 0, sizeof mb);
    w = pb_nytprof_writer_open_mem(&mb, &wo, &werr);
    if (!w)
        fuzz_die("cannot open the memory writer", &werr, werr.status);
    /* through the presentation filter, as convert does (no file look-ups:
     * names, call events rebuilt from edges) */
    opt.no_source = 1;
    pr = pb_present_new(pb_nytprof_writer_sink(w), &opt, &err);
    if (!pr)
        fuzz_die("cannot make the presentation filter", &err, err.status);
    st = pb_decode_mem(data, size, "fuzz.in", fmt, &opt, pb_present_sink(pr), &err);
    if (st == PB_OK)
        st = pb_present_finish(pr);
    pb_present_free(pr);
    if (st == PB_ERR_ABORT && pb_nytprof_writer_failed(w)) {
        /* the writer refused a chunk: its reason comes out of close() */
        cst = pb_nytprof_writer_close(w, &werr);
        if (cst == PB_OK)
            fuzz_die("the writer failed but close() succeeded", &werr, cst);
        /* the one refusal a valid stream may meet: a line past max_line
         * (a documented limit that protects nytprofhtml, write_nytprof.h) */
        if (writer_must_accept && !(cst == PB_ERR_LIMIT && strstr(werr.message, "max_line")))
            fuzz_die("the writer refused a chunk of a foreign decoder's stream", &werr, cst);
        fuzz_check_error("writer failed with a non-decode class", cst, &werr, 0);
        return;
    }
    if (st != PB_OK) {
        fuzz_check_error("decoder failed with a non-decode class", st, &err, 0);
        pb_nytprof_writer_abort(w);
        return;
    }
    cst = pb_nytprof_writer_close(w, &werr);
    if (cst != PB_OK) {
        if (writer_must_accept)
            fuzz_die("the writer refused a stream that decoded cleanly", &werr, cst);
        free(mb.data);
        return;
    }
    fuzz_read_back(&mb);
    free(mb.data);
}

/* sampling formats: the same bytes into the collapsed-stack sink */
static void fuzz_collapse(const uint8_t *data, size_t size, pb_format fmt)
{
    static FILE *devnull;
    pb_options opt;
    pb_error err;
    pb_status st;
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    if (!devnull)
        return;
    fuzz_options(&opt, size);
    /* the stack-sample outputs by turn: collapsed, pprof, speedscope */
    if (size % 3 == 0) {
        st = pb_collapse_mem(data, size, "fuzz.in", fmt, &opt, devnull, &err);
        fuzz_check_error("collapse failed with a non-decode class", st, &err, 0);
    } else if (size % 3 == 1) {
        pb_pprof *pp = pb_pprof_new(devnull, &err);
        if (!pp)
            return;
        st = pb_decode_samples_mem(data, size, "fuzz.in", fmt, &opt, pb_pprof_sample_sink(pp), "pprof", &err);
        pb_pprof_free(pp);
        fuzz_check_error("pprof failed with a non-decode class", st, &err, 0);
    } else {
        pb_speedscope *sc = pb_speedscope_new(devnull, "fuzz", &err);
        if (!sc)
            return;
        st = pb_decode_samples_mem(data, size, "fuzz.in", fmt, &opt, pb_speedscope_sample_sink(sc), "speedscope",
                                   &err);
        pb_speedscope_free(sc);
        fuzz_check_error("speedscope failed with a non-decode class", st, &err, 0);
    }
}

/* libFuzzer's entry point: each harness defines it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the whole of a harness for one format: fuzz_convert, then for a format
 * with stacks (FUZZ_STACKS) fuzz_collapse too; libFuzzer's return value */
enum { FUZZ_CHUNKS_ONLY = 0, FUZZ_STACKS = 1 };
static inline int fuzz_format(const uint8_t *data, size_t size, pb_format fmt, int writer_must_accept, int stacks)
{
    fuzz_convert(data, size, fmt, writer_must_accept);
    if (stacks)
        fuzz_collapse(data, size, fmt);
    return 0;
}

#endif
