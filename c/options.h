/* options.h - what every part of the C core below the table of formats
 * shares of a decode (c/options.c): the library's version, pb_options (the
 * limits, the selection, the source policy, the progress hook) and their
 * defaults, the statement budget, a decoder's salvage warning and last step
 * (pb_decoder_done), and the optional libraries this build has.  Nothing
 * here knows a format: a format's row and the facts its sniffer finds are
 * format_row.h's, the table and the driver formats.h's; pb.h is the
 * umbrella a caller of the C core includes.
 */
#ifndef PB_OPTIONS_H
#define PB_OPTIONS_H

#include "chunk.h"
#include "error.h"
#include "source.h"

#define PB_VERSION_STRING "0.01"

typedef struct {
    /* resource limits (0 = use the default below) */
    uint64_t max_decompressed_bytes; /* per compressed view */
    int max_decompressed_by_size;    /* set by pb_options_resolve when it was not given: a decoder of a
                                      * wholly compressed file (a .gz profile) may then bound it by the
                                      * file's size (PB_INFLATE_RATIO) */
    uint64_t max_record_size;        /* largest single record / string */
    uint32_t max_stack_depth;        /* frames in one sample / nesting depth */
    uint32_t max_strings;            /* string table entries, unique names */
    uint32_t max_frames;             /* frame table entries, unique frames */
    uint64_t max_statements;         /* TIME_LINE chunks synthesised from statement counts */
    int max_statements_by_size;      /* set by pb_options_resolve when max_statements was not given:
                                      * pb_statement_budget() then also bounds it by the input's size */
    uint32_t max_line;               /* writing nytprof.out: highest line number (nytprofhtml sizes arrays by it) */
    uint32_t max_threads;            /* threads (and processes) of one profile: every reader, every target */
    uint64_t max_string_bytes;       /* bytes of a string table held whole (a protobuf's), one string or all */

    /* selection */
    int have_thread;                 /* only this thread (sampling/span formats) */
    uint64_t thread_id;
    const char *thread_name;         /* or by name (formats whose threads have names) */
    int have_pid;                    /* runs of trace files: only this process */
    uint32_t pid;
    /* a profile of several files (its row's run hook found them: formats.c's
     * driver sets these, and hands the row's decoder no source) */
    const char *const *run_paths;
    size_t run_n;

    int salvage;                     /* deliver what came before a truncation, then warn */

    const char *sample_type;         /* formats with several sample types: the one to read (NULL: the
                                      * profile's default) */

    /* writing nytprof.out from a foreign profile: where its source files are
     * (present.h); the arrays are the caller's for the call */
    int no_source;                   /* 1: embed no source */
    int source_any;                  /* 1: embed any regular file named (no policy; present.h) */
    const char *const *source_roots; /* directories searched, in order */
    size_t n_source_roots;
    const char *const *strip_prefixes; /* removed from a file's name before the roots */
    size_t n_strip_prefixes;
    const char *source_base;         /* searched last for relative names: the input's directory */

    int jobs;                        /* merge: worker processes that decode the inputs (0, 1: none) */
    int no_time_order;               /* a timeline target: every thread as summed stacks, even where its
                                      * samples have times (0: those threads evented, at their times) */

    /* progress: called as input bytes are read, at most once per MiB read
     * (done = file offset reached, total = file size or UINT64_MAX) */
    void (*progress)(void *ud, uint64_t done, uint64_t total);
    void *progress_ud;

    /* A chunk sink that also wants the chunks a fold of a sampling decoder's
     * samples makes, while the samples go to a stack writer (convert
     * --report's loss counter: sample_tee.h); *chunk_teed set to 1 when
     * they went there.  NULL: none. */
    struct pb_sink *chunk_tee;
    int *chunk_teed;

    /* the caller may read this input again in this process (convert
     * --report's second, counting decode): standard input or a FIFO is
     * spooled, and the next open of the same name reads that copy
     * (pb_src_keep, source.h) */
    int reread;
} pb_options;

/* the limits and the progress hook of opt (resolved) onto a source */
void pb_options_to_source(const pb_options *opt, pb_source *src);

#include "pb_limits.h" /* the default limits (PB_DEFAULT_*) */

/* max_statements not given: no more than PB_STATEMENTS_PER_BYTE synthesised
 * chunks per byte of input, and never fewer than PB_STATEMENTS_FLOOR (a few
 * bytes of counts can claim billions of statements; a real profile's lines
 * rarely ask for more, and max_statements => N lifts it) */
#define PB_STATEMENTS_PER_BYTE 4096u
#define PB_STATEMENTS_FLOOR (UINT64_C(1) << 24)
/* The statement budget for an input of `size` bytes (UINT64_MAX: unknown):
 * max_statements when given, else min(the default, max(FLOOR, PER_BYTE x size)). */
uint64_t pb_statement_budget(const pb_options *o, uint64_t size);

void pb_options_init(pb_options *o);
/* fill zeros with defaults */
void pb_options_resolve(pb_options *o);
/* *dst = *src (defaults when src is NULL), resolved */
void pb_options_copy(pb_options *dst, const pb_options *src);

/* Salvage (opt->salvage): a decoder that met a `truncated` error after
 * delivering a usable prefix calls this after flushing what it holds.  It
 * turns the error into one warning on sink->warn,
 *     "<format>: truncated: <what> at byte N of F; salvaged <done> before it"
 * (done: printf-style, e.g. "1234 samples"), clears err and returns PB_OK. */
pb_status pb_salvage_warn(pb_error *err, pb_sink *sink, const char *done_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A chunk decoder's last step: release its state (registered on sink with
 * pb_sink_defer) with cleanup, and when st is PB_ERR_ABORT (the consumer
 * stopped) see that err says so.  Returns st. */
pb_status pb_decoder_done(pb_sink *sink, void (*cleanup)(void *), void *state, pb_status st, pb_error *err);

/* the optional libraries this build was compiled with (codecs.h): 1 or 0 */
extern const int pb_have_zstd, pb_have_snappy, pb_have_yajl;
/* their versions ("1.2.13"; "" when absent or, for snappy, not reported) */
const char *pb_zlib_version(void);
const char *pb_zstd_version(void);
const char *pb_yajl_version(void); /* the streaming JSON parser of the JSON formats */

#endif
