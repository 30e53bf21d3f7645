/* format_row.h - the shape of one row of the table of formats (formats.c).
 *
 * What every layer below the table reads of a format: its types, and
 * what a sniffer fills (pb_format_info, with pb_info_fact: c/format_row.c,
 * so that a decoder's sniffer adds facts without the table's header).  A
 * decoder's producer (pb_sink.row, chunk.h; pb_sample_sink.row, samples.h)
 * carries its format's row as a typed pointer, set by the driver
 * (formats.c), so the model, the presentation filter, merge and the writers
 * read a format's facts (its language, source-file names, files that are
 * none on disk, whether a profile spans several files, its weights' unit)
 * from the row's fields, never by looking its name up again.  The table
 * itself and the calls on it: formats.h.
 */
#ifndef PB_FORMAT_ROW_H
#define PB_FORMAT_ROW_H

#include "options.h"

/* a format is a row of the table of formats: its id (PB_FMT_<NAME>) is
 * declared there (formats.h), with the rows; 0 is none, or unknown */
typedef int pb_format;
#define PB_FMT_UNKNOWN 0

/* A fact about a file that only its format has (a header layout, a
 * dialect): the row's sniffer adds them (c/formats.c), info shows them
 * without knowing them: as "key: value (note)" (PB_FACT_TEXT), as a list
 * of the comma-separated items of value, "none" when empty (PB_FACT_LIST),
 * or beside the format's name, "name (key value)" (PB_FACT_BESIDE); in
 * --json and detect_format() as key => value (a list: an array). */
enum { PB_FACT_TEXT, PB_FACT_LIST, PB_FACT_BESIDE };
#define PB_MAX_FACTS 6
typedef struct {
    const char *key; /* static: "layout" */
    int type;        /* PB_FACT_* */
    char value[64];
    char note[48];   /* "" or what the text adds after the value */
} pb_fact;

typedef struct {
    pb_format format;
    const char *name;       /* "nytprof", ... or NULL when unknown */
    char version[32];       /* "5.0", "2.1.0", "1", ... ("" unknown) */
    int compressed;         /* 1 zlib/zstd/snappy in use, 0 not, -1 unknown */
    char compression[16];   /* "zlib", "zstd", "snappy", "none" */
    char byte_order[8];     /* "little", "big" or "" */
    pb_fact facts[PB_MAX_FACTS]; /* what else the format's sniffer found (its row, c/formats.c) */
    size_t n_facts;
    size_t run_files;       /* a profile of several files (a directory): its files; 0 otherwise */
    int supported;          /* a decoder exists in this build */
} pb_format_info;

/* add a fact to info (dropped past PB_MAX_FACTS; value and note cut to fit) */
void pb_info_fact(pb_format_info *info, const char *key, int type, const char *value, const char *note);
/* the value of info's fact `key`, or NULL */
const char *pb_info_fact_value(const pb_format_info *info, const char *key);

/* a format's chunk decoder: file -> chunks (formats.h) */
typedef pb_status (*pb_decoder_fn)(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);

struct pb_sample_sink; /* samples.h */
struct pb_fold_decoder; /* fold_samples.h */

/* what a format's files can give (pb_format_row.yields) */
enum {
    PB_YIELDS_CHUNKS = 1,  /* a chunk stream (every format) */
    PB_YIELDS_STACKS = 2,  /* stacks with weights for the stack outputs (outputs.c's stack targets, merge) */
    PB_YIELDS_SAMPLES = 4, /* real stack samples with frames and lines: a record target can carry them */
    PB_YIELDS_SPANS = 8,   /* timed spans (begin, end): a timeline's evented profiles */
    PB_YIELDS_NS_WEIGHTS = 16, /* its stacks' weights are ns already, not samples (read through the
                                * producer's row at its ATTRIBUTE source_format: samples.h,
                                * pb_sample_facts_take) */
    PB_READS_GZIP = 32,       /* its decoder reads a gzip-compressed file itself (source.c's gzip view):
                               * the driver hands it the gzip bytes, not the gzip layer's (source.h) */
    PB_NO_SUB_LINES = 64,     /* its subs come without definition lines: the presentation filter finds
                               * them in the embedded source (def lines, present.c) */
    PB_YIELDS_GRAPH = 128,    /* a call graph with exact counts (a tracing profiler's: the graph_* calls of
                               * the sample sink, samples.h); without PB_YIELDS_STACKS it has no stacks,
                               * and a stack target refuses it.  In a target's consumes: it takes a call
                               * graph as well (its sink has graph_func) */
    PB_SEEKS = 256            /* its decoder seeks or reads its input twice (pb_src_seek, pb_src_rewind):
                               * an input that cannot seek (standard input, a pipe, inflated gzip) is
                               * handed to it as a spooled copy (pb_src_spool, source.h) */
};

/* What a conversion cannot carry of a format's files (losses() in the Perl
 * API, which counts and words them: Devel::ProfileBridge::_losses_of).  A
 * row lists its own rules; pb_losses_common (outputs.h) those of every
 * format.  Notes are "tag=text" alternatives, one per line: the first tag
 * the target keeps (pb_target.keeps, whole or in part) words it, "*" is the
 * default.  In a text: {how} the matched tag's how; {keepers} the targets
 * that keep the fact whole ("--to A keeps them (how)", "--to A (how) and
 * --to B (how) keep them"), {to_keep} the same without how, {to} their
 * --to list; {where:TAG} how the targets that keep TAG keep it; {attr:NAME}
 * the input's ATTRIBUTE NAME. */
typedef struct {
    const char *what;   /* what is lost: "bookmarks" (NULL ends a list) */
    /* how the input counts it: "attr:NAME" (an ATTRIBUTE's value), "pct:NAME"
     * (a positive % value), "sum:GLOB" / "keys:GLOB" (the sum of / the number
     * of ATTRIBUTEs whose key matches; * any text, # digits), "status:NAME"
     * (the samples of a "k:count,..." histogram with k != 0),
     * "comments:GLOB|GLOB" (COMMENTs that start so), "chunks:TAG" */
    const char *count;
    const char *fact;   /* a target that keeps it whole has no such loss; NULL: none does */
    unsigned flags;     /* PB_LOSS_* */
    const char *notes;
} pb_loss;

enum {
    PB_LOSS_STACKS = 1, /* only the stack outputs (targets that consume stacks) lose it */
    PB_LOSS_LATE = 2    /* listed after the common rules that are not late */
};

typedef struct pb_format_row {
    pb_format format;
    const char *name;   /* as in the API, the CLI and error messages: lower case, one word */
    const char *title;  /* as the profiler calls itself */
    /* 1 when p[0..len) (the first up to 4 KB) starts a file of this format;
     * fills info's details.  file_size: UINT64_MAX when unknown. */
    int (*sniff)(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);
    /* the format's one decoder (fold_samples.h): the generic fold builds
     * chunks from it (pb_fold_decode) and stack targets read its samples
     * (pb_sample_decode); NULL: the format's own entries below */
    const struct pb_fold_decoder *decoder;
    /* file -> chunks (formats.h); with PB_YIELDS_STACKS, its stacks are its
     * chunks' call events (the driver's pb_chunks_as_samples, chunk_stacks.h) */
    pb_decoder_fn chunks;
    unsigned yields;              /* PB_YIELDS_* */
    const char *library;          /* the library a file may need beyond the C library ("zstd"), or NULL */
    /* Optional, for a profile that spans several files: does path name one
     * (1: *paths, *n filled, to be freed with run_free; 0: no; -1: error),
     * and how to free that list.  Its decoder reads such a list (no source;
     * the list in pb_options.run_paths, set by the driver).  src: path
     * already open at its start (pb_src_open_file), for the hook to peek at
     * without opening it again, or NULL. */
    int (*run)(const char *path, struct pb_source *src, const pb_options *opt, char ***paths, size_t *n,
               pb_error *err);
    void (*run_free)(char **paths, size_t n);
    /* the run's files a directory or a template names (for_chunks' files =>),
     * and what they are called in messages ("<title> traces") */
    pb_status (*run_expand)(const char *spec, char ***paths, size_t *n, pb_error *err);
    const char *run_what;
    /* how its files need `library`: PB_LIB_BUILTIN (always linked: nothing
     * to report), PB_LIB_SOME_FILES (features() lists "<name>-<library>"),
     * PB_LIB_EVERY_FILE (no library, no format); library_note: what is
     * unsupported without it ("compressed <title> files") */
    int library_use;
    const char *library_note;
    /* the language of the profiled program's source files ("python", "c",
     * "perl", "js", "go"; "any": folded stacks name any language's files):
     * which files the presentation filter embeds (source_names below,
     * present.c); NULL for NYTProf itself */
    const char *language;
    /* what a conversion cannot carry of its files ({ NULL } ends it) */
    const pb_loss *losses;
    /* the words of its header comment that its sniffer looks for ("Generated
     * by <title>"), or NULL: the presentation filter rewords them ("Written by
     * <title>, converted by ...") so that a converted file does not pass for one */
    const char *banner;
    /* the profiled program's source files, which the presentation filter
     * may embed (present.c, the source policy): what its warning calls them
     * ("Python"), their names' extensions, space-separated (".py .pyw"),
     * and the interpreter a "#!" first line names in a script without an
     * extension ("python"; NULL: none).  NULL names: the row of the first
     * format of the same `language` says; language "any": every row's. */
    const char *source_what;
    const char *source_names;
    const char *source_shebang;
    /* the file names of the profiler's own frames, which the source tool's
     * views drop wherever they sit in a stack (CPython's replay: the frames of
     * profiling/sampling/_sync_coordinator.py, which runs the program): "\n"-
     * separated suffixes of a frame's file name, or NULL.  Its decoder drops
     * them from every stack (pb_sample_own_frame, samples.h; the row from
     * pb_fold_config.row) and never takes one for the program. */
    const char *own_frames;
    /* 1 when a file name in its profiles names no file on disk, wherever
     * the profile is read (CPython's "<frozen runpy>", node's "node:fs"):
     * a merge, which cannot ask each input's decoder, flags such a file
     * IS_FAKE as the decoder does in a convert (pb_format_fake_file,
     * formats.h); NULL: none of its names is known to be so */
    int (*fake_file)(pb_str file);
} pb_format_row;

enum { PB_LIB_BUILTIN = 0, PB_LIB_SOME_FILES, PB_LIB_EVERY_FILE };

#endif
