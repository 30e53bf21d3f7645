/* fuzz_common.h - the whole path every harness drives (libFuzzer).
 *
 * One input is:
 *   1. written to a file in a private directory and converted (format forced,
 *      or detected for fuzz_detect) to nytprof.out through the write driver
 *      users take (pb_write, outputs.h) -- so sampling decoders go through
 *      fold_samples.c and EasyProfiler through fold_spans.c, and every chunk
 *      passes the presentation filter and reaches write_nytprof.c;
 *   2. when decoding succeeded and the writer accepted the stream, the file
 *      it wrote is decoded again with the NYTProf decoder, which must
 *      succeed (a writer that produces a file we cannot read is a finding);
 *   3. written to a file and converted through the write driver users take
 *      (pb_write, outputs.h) to a stack writer (every format has stacks:
 *      NYTProf and Pynytprof through chunk_stacks.c) -- collapsed, pprof or
 *      speedscope by the input's size -- and what it wrote must parse
 *      (fuzz_check.h: collapsed lines, pprof's protobuf, speedscope's JSON);
 *   4. decoded once more into a consumer that never returns: it longjmps out
 *      at a chunk picked from the input's bytes (or at the first warning),
 *      as a dying Perl callback does, and what the decoder registered in
 *      the pb_cleanups table is released -- LeakSanitizer reports anything
 *      a decoder or fold holds without registering it.  A decode that
 *      returns must leave the table empty.
 * Every failure must be a filled error record of a decode class.
 *
 * Variation without touching the bytes: size bit 0 turns on salvage, size
 * bit 1 makes the writer compress (level 1) instead of writing plain.  A
 * failure leaves no file behind (no output, no temporary).
 * Limits are lowered (FUZZ_* below) so that one input can neither take
 * seconds nor gigabytes; the defaults themselves are tested in t/80-limits.t.
 * Steps 1 to 3 and the harnesses over files (fuzz_writers.c, fuzz_merge.c) use
 * the file helpers at the end: a private directory, and the check that it
 * holds nothing but what the harness put there.
 * Plain C99 + POSIX + libFuzzer's entry point; links c/ only.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pb.h"
#include "write_nytprof.h"
#include "present.h"
#include "fold_samples.h"
#include "json_lines.h"
#include "write_statprofiler.h"
#include "../t/c/harness.h"
#include "fuzz_check.h"

#define FUZZ_MAX_DECOMPRESSED (UINT64_C(64) << 20)
#define FUZZ_MAX_RECORD       (UINT64_C(16) << 20)
#define FUZZ_MAX_STACK_DEPTH  512
#define FUZZ_MAX_STRINGS      200000u
#define FUZZ_MAX_FRAMES       200000u
#define FUZZ_MAX_STATEMENTS   (UINT64_C(1) << 20)

static unsigned long fuzz_sink_sum;

static inline void fuzz_die(const char *what, const pb_error *err, pb_status st)
{
    char buf[2048];
    pb_error_format(err, buf, sizeof buf);
    fprintf(stderr, "FUZZ FINDING: %s (status %d, record status %d): %s\n", what, (int)st, (int)err->status, buf);
    abort();
}

/* an output that does not parse (why from fuzz_check.h; NULL: it does) */
static inline void fuzz_parses(const char *what, const char *why, const void *out, size_t len)
{
    if (!why)
        return;
    fprintf(stderr, "FUZZ FINDING: %s does not parse: %s (%zu bytes)\n", what, why, len);
    fwrite(out, 1, len < 4096 ? len : 4096, stderr);
    fputc('\n', stderr);
    abort();
}

/* a failure must carry a decode class, a format and a message */
static inline void fuzz_check_error(const char *what, pb_status st, const pb_error *err, int allow_abort)
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

static inline int fuzz_touch_chunk(pb_sink *self, const pb_chunk *c)
{
    (void)self;
    fuzz_sink_sum = hx_touch(c, fuzz_sink_sum);
    return 0;
}

static inline void fuzz_warn_sink(pb_sink *self, const char *msg)
{
    (void)self;
    fuzz_sink_sum += strlen(msg);
}

static inline void fuzz_warn_ud(void *ud, const char *msg)
{
    (void)ud;
    fuzz_sink_sum += strlen(msg);
}

/* the lowered limits (everything else as pb_options_init leaves it); salvage by the size's bit 0 */
static inline void fuzz_options(pb_options *o, size_t size)
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
static inline void fuzz_read_back(const pb_membuf *mb)
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
static inline void fuzz_leave(const uint8_t *data, size_t size, pb_format fmt)
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

/* ---- the harnesses over files (fuzz_writers.c, fuzz_merge.c) ----------------
 * One private directory per process ($TMPDIR or /tmp, removed at exit)
 * holds the inputs and the outputs; src/ in it holds source files that
 * NEW_FID names find (the nytprof target embeds source: present.c's look-ups
 * through source_roots and source_base, both src/). */
static char fuzz_dirname[512];

static inline void fuzz_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", fuzz_dirname, name);
}

/* remove a directory and what it holds (one level of subdirectories) */
static inline void fuzz_rmdir(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    struct stat sb;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode) && depth < 2)
            fuzz_rmdir(p, depth + 1);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static inline void fuzz_dir_remove(void)
{
    if (fuzz_dirname[0])
        fuzz_rmdir(fuzz_dirname, 0);
}

static inline void fuzz_spew(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/* the directory, made on the first call */
static inline const char *fuzz_dir(void)
{
    static const char *const src[][2] = {
        {"recursion.pl", "sub fib { my $n = shift; $n < 2 ? $n : fib($n - 1) + fib($n - 2) }\nprint fib(20), \"\\n\";\n"},
        {"fib.py", "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\nprint(fib(20))\n"},
        {"deep_stack.py", "def f(n):\n    return f(n - 1) if n else 0\n"},
        {"evals.pl", "eval 'sub x { 1 }'; x();\n"},
        {"empty.pl", ""},
        {"no_newline.py", "x = 1"},
        {"bytes.pl", "\xff\xfe\x01 ;\r\n\x80\n"},
    };
    char p[1024];
    size_t i;
    if (fuzz_dirname[0])
        return fuzz_dirname;
    {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dirname, sizeof fuzz_dirname, "%s/pb-fuzz-XXXXXX", t && *t ? t : "/tmp");
    }
    if (!mkdtemp(fuzz_dirname)) {
        perror("mkdtemp");
        abort();
    }
    atexit(fuzz_dir_remove);
    fuzz_path(p, sizeof p, "src");
    if (mkdir(p, 0700) != 0)
        abort();
    for (i = 0; i < sizeof src / sizeof src[0]; i++) {
        char f[1100];
        snprintf(f, sizeof f, "%s/%s", p, src[i][0]);
        fuzz_spew(f, src[i][1], strlen(src[i][1]));
    }
    return fuzz_dirname;
}

/* the source look-ups of the nytprof target: src/ as root and as base */
static inline void fuzz_source_options(pb_options *o)
{
    static char srcdir[600];
    static const char *roots[1];
    fuzz_path(srcdir, sizeof srcdir, "src");
    roots[0] = srcdir;
    o->no_source = 0;
    o->source_roots = roots;
    o->n_source_roots = 1;
    o->source_base = srcdir;
}

/* one run's input: data written to <dir>/in (its path in in), the output's
 * path in out, options from size (fuzz_options) */
static inline void fuzz_input(char *in, char *out, size_t cap, const uint8_t *data, size_t size, pb_options *opt)
{
    fuzz_dir();
    fuzz_path(in, cap, "in");
    fuzz_path(out, cap, "out");
    fuzz_spew(in, data, size);
    fuzz_options(opt, size);
}

/* the directory holds only the names in keep (NULL-terminated); else a
 * finding: what left a file behind */
static inline void fuzz_dir_only(const char *const *keep, const char *what, const pb_error *err, pb_status st)
{
    DIR *d = opendir(fuzz_dirname);
    struct dirent *e;
    if (!d)
        abort();
    while ((e = readdir(d)) != NULL) {
        size_t k;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "src"))
            continue;
        for (k = 0; keep[k] && strcmp(keep[k], e->d_name) != 0; k++)
            ;
        if (!keep[k]) {
            fprintf(stderr, "FUZZ FINDING: %s left %s/%s\n", what, fuzz_dirname, e->d_name);
            fuzz_die(what, err, st);
        }
    }
    closedir(d);
}

/* an output file that must be there and parse (check: fuzz_check.h's, with
 * ncounts for fz_collapsed); removed afterwards */
static inline void fuzz_check_file(const char *path, const char *what, int kind, int ncounts)
{
    size_t len = 0;
    /* the checks of fuzz_check.h by kind ('c', 'n', 's' below) */
    static const struct {
        int kind;
        const char *(*check)(const void *data, size_t len);
    } checks[] = {{'p', fz_pprof}, {'j', fz_json}, {'l', fz_json_lines}, {'y', fz_pstats}, {'g', fz_callgrind}};
    unsigned char *out = hx_slurp(path, &len);
    const char *why;
    size_t i;
    if (!out) {
        fprintf(stderr, "FUZZ FINDING: %s: success, but no file %s\n", what, path);
        abort();
    }
    for (i = 0; i < sizeof checks / sizeof *checks && checks[i].kind != kind; i++)
        ;
    switch (i < sizeof checks / sizeof *checks ? 'x' : kind) {
    case 'x':
        why = checks[i].check(out, len);
        break;
    case 'c':
        why = fz_collapsed(out, len, ncounts);
        break;
    case 'n': { /* nytprof.out: our own NYTProf decoder reads it back */
        pb_membuf mb;
        mb.data = out;
        mb.len = len;
        fuzz_read_back(&mb);
        why = NULL;
        break;
    }
    default: /* 's': a StatProfiler trace, read back with our reader */
    {
        pb_sink sink;
        pb_sample_sink ss;
        uint64_t weights = 0;
        pb_error err;
        pb_options o;
        pb_status st;
        pb_options_init(&o);
        /* its stacks must read back whole */
        hx_null_sink(&ss, &weights, &err);
        st = pb_decode_samples_file(path, PB_FMT_STATPROFILER, &o, &ss, "samples", &err);
        if (st != PB_OK)
            fuzz_die("the StatProfiler writer's trace does not read back", &err, st);
        /* and as chunks, but for the documented limits of the nytprof
         * model (an interval past 32-bit ticks is "unsupported") */
        hx_sink_init(&sink, fuzz_touch_chunk, fuzz_warn_sink, NULL);
        st = pb_decode_file(path, PB_FMT_STATPROFILER, &o, &sink, &err);
        if (st != PB_OK && st != PB_ERR_UNSUPPORTED && st != PB_ERR_LIMIT)
            fuzz_die("the StatProfiler writer's trace does not read back as chunks", &err, st);
        why = NULL;
    }
    }
    fuzz_parses(what, why, out, len);
    free(out);
    unlink(path);
}

/* merge and diff refuse inputs whose weights are of different units (a
 * heap profile's bytes and a CPU profile's time) with a usage error: the
 * caller chose the inputs, and the refusal is the promise, not a defect */
static inline int fuzz_units_refusal(pb_status st, const pb_error *err)
{
    return st == PB_ERR_USAGE && err->status == st && strstr(err->message, "weights of different units never add");
}

/* the one check of a target after the call: a failure is a decode class (or
 * the units refusal) and leaves nothing; a success leaves the output, which
 * parses */
static inline void fuzz_target_done(const char *what, pb_status st, const pb_error *err, const char *const *inputs,
                             const char *out, int kind, int ncounts)
{
    if (st != PB_OK) {
        if (!fuzz_units_refusal(st, err))
            fuzz_check_error(what, st, err, 0);
        fuzz_dir_only(inputs, "a failed conversion", err, st);
        return;
    }
    fuzz_check_file(out, what, kind, ncounts);
    fuzz_dir_only(inputs, "a conversion (its temporary files)", err, st);
}

/* steps 1 and 2: the bytes, as a file in the private directory, converted
 * to nytprof.out through the write driver (pb_write, as convert does: the
 * presentation filter, no source look-ups), which must read back.
 * writer_must_accept: a stream from a foreign decoder that decoded cleanly
 * must be one the writer accepts (the folds promise valid streams). */
static inline void fuzz_convert(const uint8_t *data, size_t size, pb_format fmt, int writer_must_accept)
{
    static const char *const keep[] = {"in", NULL};
    char in[600], out[600];
    const char *ins[1];
    pb_options opt;
    pb_error err;
    pb_status st;

    fuzz_leave(data, size, fmt);
    fuzz_input(in, out, sizeof in, data, size, &opt);
    opt.no_source = 1;
    ins[0] = in;
    st = hx_write("nytprof", PB_WRITE_CONVERT, ins, 1, fmt, &opt, out, (size & 2) ? 1 : 0, fuzz_warn_ud, NULL, &err);
    if (st != PB_OK) {
        /* the writer's refusal comes out as its own error */
        int by_writer = err.format && strcmp(err.format, "nytprof-writer") == 0;
        /* the one refusal a valid stream may meet: a line past max_line
         * (a documented limit that protects nytprofhtml, write_nytprof.h) */
        if (by_writer && writer_must_accept && !(st == PB_ERR_LIMIT && strstr(err.message, "max_line")))
            fuzz_die("the writer refused a foreign decoder's stream", &err, st);
        fuzz_check_error(by_writer ? "writer failed with a non-decode class" : "decoder failed with a non-decode class",
                         st, &err, 0);
        fuzz_dir_only(keep, "a failed conversion to nytprof", &err, st);
    } else {
        fuzz_check_file(out, "nytprof output", 'n', 0);
        fuzz_dir_only(keep, "a conversion to nytprof (its temporary files)", &err, st);
    }
    unlink(in);
}

/* formats with stacks: the same bytes, as a file in the private directory,
 * through the write driver (pb_write) into a stack writer -- collapsed,
 * pprof or speedscope by the input's size -- as convert does; what it wrote
 * must parse (fuzz_check.h: collapsed lines, pprof's protobuf, speedscope's
 * JSON) and nothing else may be left */
static inline void fuzz_collapse(const uint8_t *data, size_t size, pb_format fmt)
{
    static const char *const keep[] = {"in", NULL};
    static const char *const to[] = {"collapsed", "pprof", "speedscope"};
    static const int kind[] = {'c', 'p', 'j'};
    char in[600], out[600];
    const char *ins[1];
    pb_options opt;
    pb_error err;
    pb_status st;
    int which = (int)(size % 3);
    fuzz_input(in, out, sizeof in, data, size, &opt);
    ins[0] = in;
    st = hx_write(to[which], PB_WRITE_CONVERT, ins, 1, fmt, &opt, out, -1, NULL, NULL, &err);
    fuzz_target_done(to[which], st, &err, keep, out, kind[which], 1);
    unlink(in);
}

/* libFuzzer's entry point: each harness defines it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the whole of a harness for one format: fuzz_convert, then fuzz_collapse;
 * libFuzzer's return value */
static inline int fuzz_format(const uint8_t *data, size_t size, pb_format fmt, int writer_must_accept)
{
    fuzz_convert(data, size, fmt, writer_must_accept);
    fuzz_collapse(data, size, fmt);
    return 0;
}


#endif
