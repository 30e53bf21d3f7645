/* pb.h - Devel::ProfileBridge C core: options, format detection, decoders.
 *
 * Every decoder has the same shape:
 *     pb_status pb_read_<format>(pb_source *src, const pb_options *opt,
 *                                pb_sink *sink, pb_error *err);
 * It reads src from its current position (just after nothing: decoders
 * read and check their own magic), sends chunks to sink, and returns PB_OK
 * or fills err.  pb_decode_file() / pb_decode_mem() detect the format and
 * dispatch through the table of formats (c/formats.c, formats.h); options
 * live in c/options.c.
 */
#ifndef PB_H
#define PB_H

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

/* ---- formats ---------------------------------------------------------- */
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

const char *pb_format_name(pb_format f);
pb_format pb_format_from_name(const char *name);

/* Sniff the first bytes (as many as are there, up to 4096 is plenty). */
void pb_detect_bytes(const unsigned char *p, size_t len, pb_format_info *info);
/* ... of a file of file_size bytes (UINT64_MAX: unknown), as pb_detect_file
 * sniffs its first up to 4096 */
void pb_detect_bytes_sized(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);
/* Open, sniff, close ("-": standard input; gzip looked through; an input
 * read once kept for the next open, pb_src_keep). PB_ERR_IO if the file can't be read. */
pb_status pb_detect_file(const char *path, pb_format_info *info, pb_error *err);

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

/* ---- decoding --------------------------------------------------------- */
typedef pb_status (*pb_decoder_fn)(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
/* 1 when this build has a decoder for f (its row names one), else 0 */
int pb_format_decodes(pb_format f);

/* Detect (unless format != PB_FMT_UNKNOWN) and decode a whole file or buffer. */
pb_status pb_decode_file(const char *path, pb_format format, const pb_options *opt,
                         pb_sink *sink, pb_error *err);
pb_status pb_decode_mem(const void *data, size_t len, const char *name, pb_format format,
                        const pb_options *opt, pb_sink *sink, pb_error *err);
/* Decode a profile of several files (n paths) through the decoder of
 * format's row (PB_FMT_UNKNOWN: the first row whose profiles span several
 * files), as pb_decode_file() a path its run hook claims (for_chunks'
 * files =>); err is initialised here. */
pb_status pb_decode_run(const char *const *paths, size_t n, pb_format format, const pb_options *opt, pb_sink *sink,
                        pb_error *err);

/* The format of src from its first 4 KB (the source stays at its start):
 * PB_ERR_CORRUPT "not a profile ..." (format "profbridge") when unknown. */
pb_status pb_detect_source(pb_source *src, pb_format *format, pb_error *err);

/* How src's decoder reads it (source.h's input section): gzip inflated
 * unless the format reads gzip itself, a spooled copy of an input that
 * cannot seek for a format that seeks (PB_SEEKS) or that the caller reads
 * again (opt->reread; quiet 2 also).  *format: the format given, or
 * detected (quiet: an unknown one is no error); info: the sniffed facts,
 * or NULL.  pb_decode_source does it when the caller did not. */
pb_status pb_settle_input(pb_source *src, pb_format *format, pb_format_info *info, const pb_options *opt, int quiet,
                          pb_error *err);

/* Decode from a source the caller opened (and will close): lets a caller
 * that may be unwound (a Perl callback dying) own the resources. */
pb_status pb_decode_source(pb_source *src, const char *name, pb_format format, const pb_options *opt,
                          pb_sink *sink, pb_error *err);
/* pb_decode_file of path, which the caller opened in src (pb_src_open_file;
 * the caller closes it): a profile of several files that path names (a
 * run's root file) is found from the bytes in src, path not opened again. */
pb_status pb_decode_opened(pb_source *src, const char *path, pb_format format, const pb_options *opt, pb_sink *sink,
                           pb_error *err);

/* the optional libraries this build was compiled with (codecs.h): 1 or 0 */
extern const int pb_have_zstd, pb_have_snappy, pb_have_yajl;
/* their versions ("1.2.13"; "" when absent or, for snappy, not reported) */
const char *pb_zlib_version(void);
const char *pb_zstd_version(void);
const char *pb_yajl_version(void); /* the streaming JSON parser of the JSON formats */

#endif
