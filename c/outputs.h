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
 *   - a writer on an open stream (open/free, and sink for samples or
 *     chunk_sink for chunks): pb_write opens the stream through output.h and
 *     feeds the writer's sink from one input's decoder (convert), from the
 *     merge layer (merge.h: merge, and a diff when the row says PB_TO_DIFF);
 *   - a chunk writer that owns its file (chunks_open/chunks_close): convert
 *     decodes the input's chunks into its sink, merge folds every input's
 *     samples into chunks for it (pb_merge_chunks);
 *   - a writer of files of its own (files): one input's samples.
 * diff, when not the merge layer's (PB_TO_DIFF), is the row's own diff
 * writer (diff_open) on the stream pb_write opens, fed both inputs by it.
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
    PB_TO_BINARY = 512,     /* binary output: the CLI writes it to standard output only when not a terminal */
    PB_TO_DIFF = 1024       /* diffs through the merge layer (merge.h: each input marked as its side) */
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
    /* a writer on an open stream (title: the input's base name, or "merged
     * profile"; opt: the caller's options): it consumes samples (sink) or
     * chunks (chunk_sink) */
    void *(*open)(FILE *fp, const char *title, const pb_options *opt, pb_error *werr);
    pb_sample_sink *(*sink)(void *w);
    pb_sink *(*chunk_sink)(void *w);
    void (*free)(void *w);
    /* a chunk writer that owns its file: *sink is what producers feed, *opt
     * the options they read with (input: the first input's path, for its
     * directory; bare_is_dot: a bare name's directory is ".") */
    void *(*chunks_open)(const pb_write_req *rq, const char *input, int bare_is_dot, pb_sink **sink,
                         const pb_options **opt, pb_error *err);
    pb_status (*chunks_close)(void *h, pb_status st, pb_error *err);
    /* a writer of files of its own (PB_TO_FILES), at rq's out: its sample
     * sink (sink above) takes rq's one input; after a finish() that
     * succeeded, files() lists the files it wrote; free (above) removes
     * them all unless finish() succeeded.  werr: the writer's own errors. */
    void *(*files_open)(const char *out, const pb_options *opt, pb_error *werr);
    size_t (*files)(void *w, const char *const **names);
    /* a difference of its own, on fp (output.h's stream, errors about it
     * named "diff"): its writer (sink and free above) takes before's
     * samples, then diff_next(w), then after's; diff_finish(w) writes it.
     * NULL: PB_TO_DIFF says whether the merge layer diffs into the stream
     * writer */
    void *(*diff_open)(FILE *fp, pb_error *err);
    pb_status (*diff_next)(void *w);
    pb_status (*diff_finish)(void *w);
    /* what it keeps of an input, for losses() (pb_loss, formats.h): tags
     * separated by ';', each "fact" or "fact=how" (kept whole: the input
     * loses nothing of it) or "~fact=how" (kept in part: a note may say how) */
    const char *keeps;
};

/* the rows in order (NULL past the last), and by name (NULL: none) */
const pb_target *pb_target_at(size_t i);
/* the targets that carry a call graph ("--to nytprof, --to pstats"), into
 * buf: what a stack target's refusal of a call-graph input names
 * (pb_error.needs_graph_target) */
const char *pb_graph_targets(char *buf, size_t cap);
const pb_target *pb_target_named(const char *name);
/* what the target can be asked for */
int pb_target_can(const pb_target *t, pb_write_mode mode);

/* THE write driver, the only way from inputs to a target: convert, merge
 * or diff rq's inputs with t (the API, the CLI, the C tests, fuzz
 * harnesses and benches all come here).  A target that cannot do mode:
 * PB_ERR_USAGE; merge with no inputs: PB_ERR_USAGE "no profiles to merge". */
pb_status pb_write(const pb_target *t, pb_write_mode mode, pb_write_req *rq, pb_error *err);
void pb_write_req_init(pb_write_req *rq);
/* free rq's names */
void pb_write_free(pb_write_req *rq);

/* what every format's files lose (pb_loss, formats.h; { NULL } ends it) */
extern const pb_loss pb_losses_common[];

#endif
