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
    uint64_t max_record_size;        /* largest single record / string */
    uint32_t max_stack_depth;        /* frames in one sample / nesting depth */
    uint32_t max_strings;            /* string table entries, unique names */
    uint32_t max_frames;             /* frame table entries, unique frames */
    uint64_t max_statements;         /* TIME_LINE chunks synthesised from statement counts */
    int max_statements_by_size;      /* set by pb_options_resolve when max_statements was not given:
                                      * pb_statement_budget() then also bounds it by the input's size */
    uint32_t max_line;               /* writing nytprof.out: highest line number (nytprofhtml sizes arrays by it) */

    /* selection */
    int have_thread;                 /* only this thread (sampling/span formats) */
    uint64_t thread_id;
    const char *thread_name;         /* or by name (EasyProfiler) */
    int have_pid;                    /* StatProfiler runs: only this process */
    uint32_t pid;

    int salvage;                     /* deliver what came before a truncation, then warn */

    const char *sample_type;         /* pprof: the sample type to read (NULL: the profile's default) */

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

    /* progress: called as input bytes are read, at most once per MiB read
     * (done = file offset reached, total = file size or UINT64_MAX) */
    void (*progress)(void *ud, uint64_t done, uint64_t total);
    void *progress_ud;
} pb_options;

/* the limits and the progress hook of opt (resolved) onto a source */
void pb_options_to_source(const pb_options *opt, pb_source *src);

#define PB_DEFAULT_MAX_DECOMPRESSED (UINT64_C(4) << 30)  /* 4 GiB */
#define PB_DEFAULT_MAX_RECORD       (UINT64_C(256) << 20) /* 256 MiB */
#define PB_DEFAULT_MAX_STACK_DEPTH  4096
#define PB_DEFAULT_MAX_STRINGS      50000000u
#define PB_DEFAULT_MAX_FRAMES       50000000u
#define PB_DEFAULT_MAX_STATEMENTS   (UINT64_C(1) << 28)
#define PB_DEFAULT_MAX_LINE         (1u << 22)  /* 4,194,304 */

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
typedef enum {
    PB_FMT_UNKNOWN = 0,
    PB_FMT_NYTPROF,
    PB_FMT_PYNYTPROF,
    PB_FMT_EASYPROFILER,
    PB_FMT_TACHYON,
    PB_FMT_STATPROFILER,
    PB_FMT_V8,
    PB_FMT_PPROF,
    PB_FMT_FOLDED,       /* text: the last row, after every binary format (formats.c) */
    PB_FMT_COUNT
} pb_format;

typedef struct {
    pb_format format;
    const char *name;       /* "nytprof", ... or NULL when unknown */
    char version[32];       /* "5.0", "2.1.0", "1", ... ("" unknown) */
    int compressed;         /* 1 zlib/zstd/snappy in use, 0 not, -1 unknown */
    char compression[16];   /* "zlib", "zstd", "snappy", "none" */
    char byte_order[8];     /* "little", "big" or "" */
    char dialect[8];        /* Pynytprof: "A".."D" */
    char layout[8];         /* Tachyon header layout: "3.14" or "3.15" ("" unknown) */
    int mode;               /* Tachyon profiling mode (header offset 60, bits 0-2 less 1): 0 wall .. 4
                             * exception, as CPython's get_info(); -1 none stored (or one CPython refuses) */
    int capture;            /* Tachyon capture features (offset 60, bits 4-8: PB_TACH_CAPTURE_*), -1 when the
                             * header says none are recorded (bit 3 clear) */
    size_t run_files;       /* StatProfiler run (a directory): its trace files; 0 otherwise */
    int supported;          /* a decoder exists in this build */
} pb_format_info;

const char *pb_format_name(pb_format f);
pb_format pb_format_from_name(const char *name);

/* Sniff the first bytes (as many as are there, up to 4096 is plenty). */
void pb_detect_bytes(const unsigned char *p, size_t len, pb_format_info *info);
/* Tachyon v1 has two incompatible 64-byte headers (tachyon-format.md,
 * "Versions that exist"): the pre-rc one (u32 sample count at 28) and the
 * Python 3.15 one (u64 sample count at 28, every later field 4 bytes on,
 * a u32 bit field at 60; "VERIFIED against a real CPython 3.15.2").  pb_tachyon_header() decides which one h holds
 * from the header's own consistency (reserved bytes, table offsets in order,
 * inside file_size when that is known: UINT64_MAX otherwise) and fills *th.
 * swap: the file's byte order is not the host's.  Returns the layout
 * (PB_TACH_314 / PB_TACH_315), or 0 when neither reading is consistent. */
enum { PB_TACH_314 = 314, PB_TACH_315 = 315 };
typedef struct {
    int layout;
    uint64_t sample_count;
    uint32_t thread_count, compression, mode_field;
    uint64_t str_off, frame_off;
} pb_tach_header;
int pb_tachyon_header(const unsigned char *h, int swap, uint64_t file_size, pb_tach_header *th);
/* Pynytprof's dialect from a file's first bytes (read_pynytprof.c): "A".."D",
 * or "" when they do not say */
const char *pb_pynytprof_dialect(const unsigned char *p, size_t len);
/* Folded stacks (read_folded.c): 1 when every non-blank line of p[0..len)
 * is "stack weight" (whole: p is the whole input, so its last line counts
 * even without a newline; else a line cut at len is only checked for NULs,
 * and a first line longer than len must be 16 or more frames) */
int pb_folded_sniff(const unsigned char *p, size_t len, int whole);
/* The 3.15 header's field at offset 60, as CPython 3.15.2 reads it: bits
 * 0-2 = profiling mode + 1 (0 not stored; 1 wall, 2 cpu, 3 gil, 4 all,
 * 5 exception; 6 and 7 CPython's reader refuses), bit 3 = capture features
 * recorded, bits 4-8 = the features (CPython's capture_config names below);
 * higher bits ignored. */
#define PB_TACH_MODE_BITS(field) ((field) & 7u)
#define PB_TACH_MODE_INVALID(field) (PB_TACH_MODE_BITS(field) >= 6u)
#define PB_TACH_HAS_CAPTURE(field) (((field) >> 3) & 1u)
#define PB_TACH_CAPTURE(field) (((field) >> 4) & 0x1Fu)
enum {
    PB_TACH_CAPTURE_ALL_THREADS = 1,
    PB_TACH_CAPTURE_NATIVE = 2,
    PB_TACH_CAPTURE_GC = 4,
    PB_TACH_CAPTURE_OPCODES = 8,
    PB_TACH_CAPTURE_BLOCKING = 16
};
/* name of the field's profiling mode: "wall", "cpu", "gil", "all",
 * "exception"; NULL when none is stored (bits 0-2 zero) or CPython refuses it */
const char *pb_tachyon_mode_name(uint32_t mode_field);
/* name of capture feature bit k (0..4): "all_threads", "native", "gc",
 * "opcodes", "blocking"; NULL past them */
const char *pb_tachyon_capture_name(unsigned k);

/* Open, sniff, close. PB_ERR_IO if the file can't be read. */
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

/* ---- decoding --------------------------------------------------------- */
typedef pb_status (*pb_decoder_fn)(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
/* NULL when there is no decoder for f in this build */
pb_decoder_fn pb_decoder_for(pb_format f);

/* Detect (unless format != PB_FMT_UNKNOWN) and decode a whole file or buffer. */
pb_status pb_decode_file(const char *path, pb_format format, const pb_options *opt,
                         pb_sink *sink, pb_error *err);
pb_status pb_decode_mem(const void *data, size_t len, const char *name, pb_format format,
                        const pb_options *opt, pb_sink *sink, pb_error *err);

/* The format of src from its first 4 KB (the source stays at its start):
 * PB_ERR_CORRUPT "not a profile ..." (format "profbridge") when unknown. */
pb_status pb_detect_source(pb_source *src, pb_format *format, pb_error *err);

/* Decode from a source the caller opened (and will close): lets a caller
 * that may be unwound (a Perl callback dying) own the resources. */
pb_status pb_decode_source(pb_source *src, const char *name, pb_format format, const pb_options *opt,
                          pb_sink *sink, pb_error *err);

/* decoders: each c/read_<format>.c defines its function, and the table of
 * formats (c/formats.c) lists it; every decoder is built (what a missing
 * optional library prevents is reported by the decoder itself, codecs.h) */
pb_status pb_read_nytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_pynytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_easyprofiler(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_tachyon(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_statprofiler(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_v8(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_folded(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
pb_status pb_read_pprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err);
/* read_pprof.c: a pprof profile.proto (gzipped or not) starts p[0..len) */
int pb_pprof_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info);

/* the optional libraries this build was compiled with (codecs.h): 1 or 0 */
extern const int pb_have_zstd, pb_have_snappy, pb_have_yajl;
/* their versions ("1.2.13"; "" when absent or, for snappy, not reported) */
const char *pb_zlib_version(void);
const char *pb_zstd_version(void);
const char *pb_yajl_version(void); /* read_v8.c: the JSON parser of .cpuprofile files */

#endif
