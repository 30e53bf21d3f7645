/* outputs.h - THE table of targets (c/outputs.c) and the one write driver.
 *
 * Every output this distribution writes is one row of targets[] in
 * c/outputs.c: its name (convert's to =>, the CLI's --to, and the name in its
 * I/O errors), what it consumes from an input (PB_YIELDS_*, formats.h), its
 * writer entry, the options it takes and whether it can merge or diff.
 * convert, merge, diff and dump, in C, in the XS (one XSUB) and in Perl (the
 * rows, through Devel::ProfileBridge::_targets), go through pb_write() below.
 *
 * A writer entry is one of:
 *   - a stack writer on an open stream (open/sink/free): it consumes a sample
 *     sink; convert, merge and diff put the stream through output.h;
 *   - a chunk writer that owns its file (chunks_open/chunks_close): convert
 *     decodes the input's chunks into its sink, merge folds every input's
 *     samples into chunks for it;
 *   - a whole conversion (convert): anything else (files of its own).
 * diff, when a target has it, is its own entry.
 *
 * Adding a target: a c/write_<target>.c with its writer, and one row
 * (Internals.pod, "ADDING AN OUTPUT").
 */
#ifndef PB_OUTPUTS_H
#define PB_OUTPUTS_H

#include <stdio.h>
#include "fold_samples.h"
#include "formats.h"

/* pb_target.flags: what the target takes */
enum {
    PB_TO_CONVERT = 1,      /* a convert(to => NAME) target (dump is written by dump_json only) */
    PB_TO_DEFAULT = 2,      /* convert's and merge's target when none is named */
    PB_TO_DIFF_DEFAULT = 4, /* diff's target when none is named */
    PB_TO_STDOUT = 8,       /* out "-" is standard output when converting */
    PB_TO_MERGE_STDOUT = 16, /* ... and when merging */
    PB_TO_COMPRESS = 32,    /* takes compress => 0..9 */
    PB_TO_SOURCE = 64,      /* takes the source options (source, source_any, source_root, strip_prefix) */
    PB_TO_SALVAGE = 128,    /* takes salvage => 1 (a cut stream is finished) */
    PB_TO_FILES = 256,      /* writes files of its own: convert returns their names */
    PB_TO_BINARY = 512      /* binary output: the CLI writes it to standard output only when not a terminal */
};

/* what is written (pb_write's mode) */
typedef enum { PB_WRITE_CONVERT, PB_WRITE_MERGE, PB_WRITE_DIFF } pb_write_mode;

/* One write: the inputs (convert, dump: one; diff: before and after; merge:
 * n), how to read them, where to write; what was written comes back. */
typedef struct {
    const char *const *in;
    size_t n;
    pb_format fmt;                  /* PB_FMT_UNKNOWN: detect */
    const pb_options *opt;
    const char *out;                /* "-": standard output (PB_TO_STDOUT) */
    int level;                      /* compress level 0..9, -1 the writer's default */
    void (*warn)(void *ud, const char *msg); /* the writer's non-fatal warnings (NULL drops them) */
    void *ud;
    /* convert to a chunk writer: a sink that sees the input's chunks on
     * their way and hands each on to *chunk_tee_next, which the driver sets
     * to the writer's sink (losses.h's counter: --report counts in the one
     * decode); NULL: none.  chunk_teed (out): it was used. */
    pb_sink *chunk_tee;
    pb_sink **chunk_tee_next;
    int chunk_teed;
    /* out */
    uint64_t samples;               /* samples of weight > 0 (and spans) written, where counted */
    char **names;                   /* PB_TO_FILES: the files written (pb_write_free) */
    size_t n_names;
} pb_write_req;

typedef struct pb_target pb_target;
struct pb_target {
    const char *name;     /* "pprof" */
    const char *what;     /* "pprof output": names it in the error for an input that lacks what it consumes */
    unsigned consumes;    /* PB_YIELDS_* an input must give */
    unsigned flags;       /* PB_TO_* */
    const char *library;  /* the optional library its writer needs ("snappy"), or NULL */
    const char *empty;    /* an input with no samples: the end of the warning ("the output is empty"); NULL: none */
    /* a stack writer on an open stream (title: the input's base name) */
    void *(*open)(FILE *fp, const char *title, pb_error *werr);
    pb_sample_sink *(*sink)(void *w);
    void (*free)(void *w);
    /* a chunk writer that owns its file: *sink is what producers feed, *opt
     * the options they read with (input: the first input's path, for its
     * directory; bare_is_dot: a bare name's directory is ".") */
    void *(*chunks_open)(const pb_write_req *rq, const char *input, int bare_is_dot, pb_sink **sink,
                         const pb_options **opt, pb_error *err);
    pb_status (*chunks_close)(void *h, pb_status st, pb_error *err);
    /* a whole conversion (NULL: the driver's, from the entries above) */
    pb_status (*convert)(pb_write_req *rq, pb_error *err);
    /* the difference of in[0] (before) and in[1] (after); NULL: none */
    pb_status (*diff)(pb_write_req *rq, pb_error *err);
    /* what it keeps of an input, for losses() (pb_loss, formats.h): tags
     * separated by ';', each "fact" or "fact=how" (kept whole: the input
     * loses nothing of it) or "~fact=how" (kept in part: a note may say how) */
    const char *keeps;
};

/* the rows in order (NULL past the last), and by name (NULL: none) */
const pb_target *pb_target_at(size_t i);
const pb_target *pb_target_named(const char *name);
/* what the target can be asked for */
int pb_target_can(const pb_target *t, pb_write_mode mode);

/* THE write driver: convert, merge or diff rq's inputs with t.  A target
 * that cannot do mode: PB_ERR_USAGE. */
pb_status pb_write(const pb_target *t, pb_write_mode mode, pb_write_req *rq, pb_error *err);
void pb_write_req_init(pb_write_req *rq);
/* free rq's names */
void pb_write_free(pb_write_req *rq);

/* what every format's files lose (pb_loss, formats.h; { NULL } ends it) */
extern const pb_loss pb_losses_common[];

/* the diff of the pprof row (pb_merge_diff, merge.h) */
pb_status pb_diff_pprof(const char *before, const char *after, const pb_options *opt, const char *out_path,
                        pb_error *err);

#endif
