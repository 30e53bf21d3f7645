/* json_feed.h - feeding yajl block by block, the part the decoders of JSON
 * formats share (the two that read with yajl): a parser's place in the input, its
 * errors said the one way, pass 1 over the whole input, and a cursor over
 * one array of it from where its key ends (pass 2: two cursors in lockstep).
 *
 * A decoder keeps one pb_json_feed in each of its parser states (f below);
 * its yajl callbacks keep depth (the containers open) and stop the parse
 * (return 0) after setting one of: done (on purpose: a cursor's array
 * ended), fail and why (a complaint about the input), or fail and
 * sink_failed (a sink's status, its error already filled, or an abort).
 * Memory: yajl's parser and one block per cursor (file input).  Plain C99;
 * only in a build with yajl (PB_NO_YAJL unset). */
#ifndef PB_JSON_FEED_H
#define PB_JSON_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "error.h"
#include "options.h"
#include "source.h"

#ifndef PB_NO_YAJL
#include <yajl/yajl_parse.h>
#define PB_HAVE_YAJL 1
#else
#define PB_HAVE_YAJL 0
#endif

/* A build without yajl: a JSON format's decoder (fold_samples.h) is a stub
 * whose cfg.missing_library makes the driver refuse it, saying why */
#define PB_JSON_DECODER_WITHOUT_YAJL(decoder, format)                                                     \
    const pb_fold_decoder decoder = {.cfg = {.source_format = format, .ticks_per_sec = 1000000000u,       \
                                             .ticks_per_weight = 1, .missing_library = "yajl"}}

/* What a JSON decoder's init is given (fold_samples.h), kept as one: into
 * a fold (warn_sink given) its timestamps go to the sink in ns, the fold's
 * ticks, else in µs (ts_ns) */
typedef struct {
    pb_source *s;
    const pb_options *opt;
    pb_error *err;
    pb_sink *warn_sink;
    int ts_ns;
} pb_json_io;
static inline void pb_json_io_init(pb_json_io *io, pb_source *src, const pb_options *opt, pb_sink *warn_sink,
                                   pb_error *err)
{
    io->s = src;
    io->opt = opt;
    io->err = err;
    io->warn_sink = warn_sink;
    io->ts_ns = warn_sink != NULL;
}

/* A key a decoder knows in the objects of one context: its name and the
 * decoder's number for it; a table of them ends with name NULL */
typedef struct {
    const char *name;
    int key;
} pb_json_key;
/* the number of key k (n bytes, as yajl gives it) in keys (NULL: none),
 * else 0 (the decoder's "another key") */
static inline int pb_json_key_of(const pb_json_key *keys, const unsigned char *k, size_t n)
{
    for (; keys && keys->name; keys++)
        if (strlen(keys->name) == n && !memcmp(keys->name, k, n))
            return keys->key;
    return 0;
}

#define PB_JSON_BLOCK 65536u    /* bytes of the input parsed at a time */
#define PB_JSON_MAX_NEST 512u /* JSON nested deeper than this is refused */
#define PB_JSON_CTX 16u       /* levels whose context is kept; deeper is context 0 */

typedef struct {
    void *h;                    /* the yajl_handle */
    const unsigned char *chunk; /* the block being parsed, its length and its offset */
    size_t chunk_len;
    uint64_t chunk_off;
    unsigned depth;             /* containers open (the callbacks count them) */
    unsigned char ctx[PB_JSON_CTX]; /* what each open container is to the decoder (its own numbers) */
    int done;                   /* a callback stopped the parse on purpose */
    pb_status fail;             /* a callback's complaint (in why), or a sink's status (sink_failed) */
    int sink_failed;
    char why[200];
    pb_src_cursor rd;           /* a cursor: its array's bytes (source.h) */
    int started;                /* a cursor: 1 reading from the first byte, 2 from its array's key */
} pb_json_feed;

/* Pass 2's two cursors in lockstep (two arrays a decoder pairs item by
 * item: its samples and their times or weights): cursor i (0, 1) is
 * stepped (step(ctx, i): one more block) until it has an item queued
 * (queued(ctx, i) > 0) or its array ended (f[i]->done); pair(ctx) takes one
 * item of each; it ends when either has none (PB_OK) or at the first
 * status not PB_OK. */
typedef struct {
    void *ctx;
    pb_json_feed *f[2];
    size_t (*queued)(void *ctx, int i);
    pb_status (*step)(void *ctx, int i);
    pb_status (*pair)(void *ctx);
} pb_json_lockstep;
pb_status pb_json_lockstep_run(const pb_json_lockstep *l);

/* the innermost open container's context (0: none open, or deeper than
 * PB_JSON_CTX: the decoder's number for a container it skips) */
static inline int pb_json_feed_ctx(const pb_json_feed *f)
{
    return f->depth && f->depth <= PB_JSON_CTX ? f->ctx[f->depth - 1] : 0;
}
/* a container of context c opens: 1, or 0 (a yajl callback's stop, the
 * complaint made) when it would be nested deeper than PB_JSON_MAX_NEST */
int pb_json_feed_push(pb_json_feed *f, int c);
/* the innermost container closes: its context, or -1 when none is open */
static inline int pb_json_feed_pop(pb_json_feed *f)
{
    int c = pb_json_feed_ctx(f);
    if (!f->depth)
        return -1;
    f->depth--;
    return c;
}

/* A parser of f (zeroed by the caller) whose callbacks are cb (a const
 * yajl_callbacks *) with ctx; one_value: the parse ends after the first
 * value (a cursor that starts at its array stops after it).  0, or -1 when
 * out of memory. */
int pb_json_feed_open(pb_json_feed *f, const void *cb, void *ctx, int one_value);
/* yajl's parser and the cursor's block freed (again: nothing) */
void pb_json_feed_close(pb_json_feed *f);

/* b[0..n) at byte off of the input into the parser (n 0: the input ends
 * there).  PB_OK; PB_OK too when a callback stopped it with done; else the
 * error, in err at the byte yajl stopped at: the callback's complaint, the
 * sink's error, or "bad JSON: " and yajl's message (PB_ERR_CORRUPT). */
pb_status pb_json_feed_block(pb_json_feed *f, const unsigned char *b, size_t n, uint64_t off, pb_error *err);
/* the input ends at off: as pb_json_feed_block, and a document still open
 * there is PB_ERR_TRUNCATED ("the JSON object ends before it is closed") */
pb_status pb_json_feed_end(pb_json_feed *f, uint64_t off, pb_error *err);
/* pass 1: the rest of s, in blocks of at most block bytes, then its end */
pb_status pb_json_feed_source(pb_json_feed *f, pb_source *s, size_t block, pb_error *err);
/* A cursor: one block more of its array into the parser, read from byte at
 * of s (where the array's key ends: its ':' and white space are passed
 * over; 0 unknown: from the first byte), opened at the first call, blocks
 * of at most block bytes.  At the end of the input the parse is completed
 * and *unclosed set when the array did not close (f->done unset: the caller
 * says which array, at f->rd.pos); cut_ends: the end of the input ends the
 * array instead (salvage: f->done set, nothing said).  PB_OK or the error. */
pb_status pb_json_feed_cursor(pb_json_feed *f, const pb_source *s, uint64_t at, size_t block, int cut_ends,
                              pb_error *err, int *unclosed);

#endif
