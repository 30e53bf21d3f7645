/* harness.h - what the programs that drive the C core from outside share:
 * the C tests and tools here (t/c), the fuzz harnesses (fuzz/) and the
 * benchmarks (bench/).
 *   hx_buf       a byte buffer to build files with (aborts when out of memory)
 *   hx_slurp     a whole file into memory
 *   hx_touch     every string of a chunk read into a checksum (so that ASan
 *                sees a stale pointer)
 *   hx_null_sink a sample sink that takes everything and keeps the weights
 *   hx_sink_init a chunk sink set up from its two calls and its ctx
 *   hx_fid_rule  NYTProf's fid rule checked on one chunk of a stream
 *   hx_jumper    a consumer that leaves through longjmp, as a dying Perl
 *                callback does
 *   hx_fail      the error line on stderr; 2, the exit status of a failed run
 *   hx_write     inputs to a target (a row of c/outputs.c) through the one
 *                write driver, pb_write: the path users take
 *   hx_collapse_mem  a profile in memory (the C sources' memory view, which
 *                no user path reads) through the collapsed writer to a stream
 */
#ifndef PB_HARNESS_H
#define PB_HARNESS_H

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outputs.h"
#include "pb.h"
#include "samples.h"
#include "write_collapsed.h"

/* ---- building files ---------------------------------------------------- */
typedef struct {
    unsigned char *p;
    size_t n, cap;
} hx_buf;

static inline void hx_put(hx_buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        unsigned char *np;
        while (nc < b->n + n)
            nc *= 2;
        if (!(np = (unsigned char *)realloc(b->p, nc)))
            abort();
        b->p = np;
        b->cap = nc;
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}
static inline void hx_u8(hx_buf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    hx_put(b, &c, 1);
}
/* v as n bytes, little-endian */
static inline void hx_le(hx_buf *b, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        hx_u8(b, (unsigned)((v >> (8 * i)) & 0xFF));
}

/* the whole file (NULL when it cannot be read); *len its size */
static inline unsigned char *hx_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    hx_buf b = {NULL, 0, 0};
    unsigned char tmp[65536];
    size_t got;
    if (!f)
        return NULL;
    while ((got = fread(tmp, 1, sizeof tmp, f)) > 0)
        hx_put(&b, tmp, got);
    if (ferror(f)) {
        fclose(f);
        free(b.p);
        return NULL;
    }
    fclose(f);
    hx_put(&b, "", 1); /* never NULL, even for an empty file; NUL-terminated */
    *len = b.n - 1;
    return b.p;
}

/* ---- consumers --------------------------------------------------------- */
/* sum*31 + every byte of the chunk's strings */
static inline unsigned long hx_touch(const pb_chunk *c, unsigned long sum)
{
    const char *sig = pb_tag_sig[c->tag];
    int si = 0;
    for (; *sig; sig++) {
        if (*sig == 's') {
            size_t i;
            for (i = 0; i < c->s[si].len; i++)
                sum = sum * 31u + (unsigned char)c->s[si].ptr[i];
            si++;
        }
    }
    return sum;
}

/* *s zeroed, then calling chunk (and warn, which may be NULL) with ctx */
static inline void hx_sink_init(pb_sink *s, int (*chunk)(pb_sink *, const pb_chunk *),
                                void (*warn)(pb_sink *, const char *), void *ctx)
{
    memset(s, 0, sizeof *s);
    s->chunk = chunk;
    s->warn = warn;
    s->ctx = ctx;
}

/* NYTProf's fid rule, one chunk at a time: NEW_FIDs come dense from 1, and
 * the fid of a TIME_LINE or SUB_INFO is one already defined (a SUB_CALLERS's
 * caller fid may be 0, "no file", but no fid not yet defined).  *max_fid is
 * the last NEW_FID (0 at the start of a stream).  NULL when c keeps the
 * rule, else what it broke. */
static inline const char *hx_fid_rule(uint32_t *max_fid, const pb_chunk *c)
{
    switch (c->tag) {
    case PB_T_NEW_FID: {
        int dense = c->u[0] == *max_fid + 1;
        *max_fid = c->u[0];
        return dense ? NULL : "fids not dense";
    }
    case PB_T_TIME_LINE:
    case PB_T_SUB_INFO:
        if (c->u[0] == 0 || c->u[0] > *max_fid)
            return c->tag == PB_T_TIME_LINE ? "TIME_LINE on an undefined fid" : "SUB_INFO on an undefined fid";
        return NULL;
    case PB_T_SUB_CALLERS:
        return c->u[0] > *max_fid ? "SUB_CALLERS on an undefined fid" : NULL;
    default:
        return NULL;
    }
}

/* A consumer that leaves without returning, as a dying Perl callback does:
 * its sink's chunk() longjmps to `jump` at chunk number `at` (0: never), its
 * warn() at the first warning when on_warn; what the decoder registered in
 * `table` is then the caller's to release (pb_cleanups_run), as the XS
 * layer does.  registered: table.n when it left (-1: it has not).  Keep it
 * static: a longjmp must not lose it.
 *   static hx_jumper j;  hx_jumper_sink(&j, &sink, at, 0);
 *   if (setjmp(j.jump) == 0) { decode into &sink }  pb_cleanups_run(&j.table); */
typedef struct {
    jmp_buf jump;
    pb_cleanups table;
    uint64_t seen, at; /* chunks so far; where to leave */
    int on_warn, registered;
    unsigned long sum; /* hx_touch over every chunk, and the warnings' lengths */
} hx_jumper;

static inline int hx_jumper_chunk(pb_sink *self, const pb_chunk *c)
{
    hx_jumper *j = (hx_jumper *)self->ctx;
    j->sum = hx_touch(c, j->sum);
    if (++j->seen == j->at) {
        j->registered = j->table.n;
        longjmp(j->jump, 1);
    }
    return 0;
}
static inline void hx_jumper_warn(pb_sink *self, const char *msg)
{
    hx_jumper *j = (hx_jumper *)self->ctx;
    j->sum += strlen(msg);
    if (j->on_warn) {
        j->registered = j->table.n;
        longjmp(j->jump, 2);
    }
}
/* j reset (its table empty) and *s a sink into it */
static inline void hx_jumper_sink(hx_jumper *j, pb_sink *s, uint64_t at, int on_warn)
{
    memset(&j->table, 0, sizeof j->table);
    j->seen = 0;
    j->at = at;
    j->on_warn = on_warn;
    j->registered = -1;
    hx_sink_init(s, hx_jumper_chunk, hx_jumper_warn, j);
    s->cleanups = &j->table;
}

/* a sample sink that accepts everything; ctx points to a uint64_t that adds up the weights (or is NULL) */
static inline pb_status hx_null_attribute(pb_sample_sink *s, const char *k, pb_str v)
{
    (void)s, (void)k, (void)v;
    return PB_OK;
}
static inline pb_status hx_null_frame(pb_sample_sink *s, const pb_frame *f, uint32_t *id)
{
    (void)s, (void)f;
    *id = 0;
    return PB_OK;
}
static inline pb_status hx_null_thread(pb_sample_sink *s, uint64_t k, uint32_t p, uint32_t pp, const char *l)
{
    (void)s, (void)k, (void)p, (void)pp, (void)l;
    return PB_OK;
}
static inline pb_status hx_null_sample(pb_sample_sink *s, uint64_t k, const uint32_t *ids, uint32_t d, uint64_t w,
                                       uint64_t ts)
{
    (void)k, (void)ids, (void)d, (void)ts;
    if (s->ctx)
        *(uint64_t *)s->ctx += w;
    return PB_OK;
}
static inline pb_status hx_null_note(pb_sample_sink *s, const char *k, pb_str a, pb_str b, uint32_t n)
{
    (void)s, (void)k, (void)a, (void)b, (void)n;
    return PB_OK;
}
static inline pb_status hx_null_finish(pb_sample_sink *s)
{
    (void)s;
    return PB_OK;
}
static inline void hx_null_sink(pb_sample_sink *ss, uint64_t *weights, pb_error *err)
{
    static const pb_sample_sink null_sink = {.attribute = hx_null_attribute, .frame = hx_null_frame,
        .thread = hx_null_thread, .sample = hx_null_sample, .note = hx_null_note, .finish = hx_null_finish};
    pb_sample_sink_init(ss, &null_sink, weights, err, NULL);
}

/* ---- errors ------------------------------------------------------------ */
static inline int hx_fail(const pb_error *err)
{
    char line[2048];
    pb_error_format(err, line, sizeof line);
    fprintf(stderr, "%s\n", line);
    return 2;
}

/* ---- writing through the one driver (pb_write, outputs.h) --------------- */
/* in[0..n) (fmt PB_FMT_UNKNOWN: detect) to the target named to, as mode
 * (convert, merge, diff) at out ("-": standard output; stdout is flushed
 * first), compress level 0..9 (-1: the writer's default).  rq, when not
 * NULL, receives what was written (samples, names: pb_write_free it);
 * warn as pb_write_req's. */
static inline pb_status hx_write(const char *to, pb_write_mode mode, const char *const *in, size_t n, pb_format fmt,
                                 const pb_options *opt, const char *out, int level,
                                 void (*warn)(void *ud, const char *msg), pb_write_req *rq, pb_error *err)
{
    const pb_target *t = pb_target_named(to);
    pb_write_req r;
    pb_status st;
    pb_write_req_init(&r);
    if (rq)
        *rq = r;
    if (!t) {
        pb_error_init(err, "harness", out);
        return pb_fail_nooff(err, PB_ERR_USAGE, "no target named '%s'", to);
    }
    r.in = in;
    r.n = n;
    r.fmt = fmt;
    r.opt = opt;
    r.out = out;
    r.level = level;
    r.warn = warn;
    if (strcmp(out, "-") == 0)
        fflush(stdout);
    st = pb_write(t, mode, &r, err);
    if (rq)
        *rq = r;
    else
        pb_write_free(&r);
    return st;
}
/* one input converted */
static inline pb_status hx_convert(const char *to, const char *in, pb_format fmt, const pb_options *opt,
                                   const char *out, int level, pb_error *err)
{
    return hx_write(to, PB_WRITE_CONVERT, &in, 1, fmt, opt, out, level, NULL, NULL, err);
}

/* a profile in memory (fmt PB_FMT_UNKNOWN: detect) as collapsed stacks on out */
static inline pb_status hx_collapse_mem(const void *data, size_t len, const char *name, pb_format fmt,
                                        const pb_options *opt, FILE *out, pb_error *err)
{
    pb_stack_writer *c;
    pb_status st;
    pb_error_init(err, fmt ? pb_format_name(fmt) : "profbridge", name);
    if (!(c = pb_collapse_new(out, err)))
        return err->status;
    st = pb_decode_samples_mem(data, len, name, fmt, opt, pb_stack_writer_sink(c), "collapsed output", err);
    pb_stack_writer_free(c);
    return st;
}

#endif
