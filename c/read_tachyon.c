/* read_tachyon.c - CPython Tachyon binary profiles (profiling.sampling
 * --binary), format version 1, as the Tachyon format spec describes it.
 *
 * Layout: 64-byte header | sample region [64, string_table_offset) (plain or
 * one zstd stream) | string table | frame table | [stats trailer] | 32-byte
 * footer.  Fixed-width fields are in the writer's byte order (magic
 * 0x54414348; read swapped => swap them all); varints are LEB128.
 *
 * Order of work: header, footer, string table, frame table and trailer are
 * read first (random access), then the sample region is replayed once, front
 * to back, in bounded memory (zstd through the source's streaming view; the
 * frame has no content size and is never inflated whole).  Stacks are rebuilt
 * per (thread_id, interpreter_id) exactly as the reference reader does, and
 * handed to a pb_sample_sink: frames are interned lazily (frame index ->
 * sink id cache) the first time a sample uses them; a REPEAT run becomes one
 * sample call per run of equal status bytes (weight = samples in it, the
 * timestamp that of the last of them), as the reference reader's collect()
 * calls; for a sink that sets each_tick (samples.h: a timeline) one sample
 * call per sample, at its own time.
 *
 * Python specifics live here, not in the fold:
 *   package of a frame (from its file name):
 *     "~"                  synthetic frame (<GC>, <native>): no package, fake fid
 *     "<frozen a.b>"       a::b
 *     other "<...>", ""    main
 *     a path               the part after the last ".../site-packages/",
 *                          ".../dist-packages/" or ".../lib/pythonX.Y/"
 *                          directory, else the base name; ".py"/".pyw"
 *                          dropped; "/" and "." become "::"; a trailing
 *                          "__init__" names its package (pkg/__init__.py -> pkg)
 *   name: the function's qualname with "." -> "::"  (Class.method -> Class::method)
 *   sub = package::name, e.g. asyncio/base_events.py + BaseEventLoop.run_forever
 *         -> asyncio::base_events::BaseEventLoop::run_forever
 *   files named "<...>" (frozen modules, <string>) get IS_FAKE: no source on disk.
 * Threads: key = dense index in order of first appearance in the sample
 * region, pid = key + 1, ppid 0, label = thread id ("tid/iid" when the
 * interpreter id is not 0); ATTRIBUTE thread_id_<pid> = label.
 *
 * Names here: tr = this reader's state (Tachyon reader).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "options.h"
#include "read_tachyon.h"
#include "python.h"
#include "reader.h"
#include "util.h"
#include "fold_samples.h"
#include "model.h"

#define T_MAGIC 0x54414348u
#define T_MAGIC_SWAPPED 0x48434154u
#define T_HEADER 64
#define T_FOOTER 32
#define T_MAX_DEPTH 256
#define T_NONE UINT32_MAX
#define T_NO_OPCODE 255            /* the writer stores 255 for "no opcode" */
/* the most bytes one sample can take in the sample region: a FULL record
 * (13 + ts varint 10 + status 1 + depth varint 2 + 256 x 5) */
#define T_MAX_SAMPLE_BYTES (13 + 10 + 1 + 2 + T_MAX_DEPTH * 5)

typedef struct {
    uint32_t file, func;
    int32_t line;
    unsigned char opcode;          /* T_NO_OPCODE: none recorded */
    unsigned char own;             /* the profiler's own frame (its row's own_frames): dropped */
} t_frame;

typedef struct {
    size_t at;
    uint32_t len;
} t_str;

typedef struct {
    uint64_t tid;
    uint32_t iid;
    uint32_t index;
    int selected;
    uint64_t ts;
    uint64_t samples;
    uint32_t start, cap;           /* stack = slots [start, cap), innermost first */
    uint32_t *fidx;                /* frame table indices */
    uint32_t *ids;                 /* sink ids (selected threads only) */
} t_thread;

typedef struct {
    pb_source *s;
    pb_error *err;
    pb_rd rd;                      /* the cursor */
    const pb_options *opt;
    pb_sample_sink *out;
    const struct pb_format_row *row; /* its format's row (own_frames), from the fold's config */
    int swap;
    /* header */
    uint32_t version;
    unsigned char pyver[3];
    uint64_t start_time, interval;
    uint64_t sample_count;
    uint32_t thread_count, compression;
    int layout;                    /* PB_TACH_314 / PB_TACH_315 */
    uint32_t mode_field;           /* 3.15 header offset 60: the bit field (read_tachyon.h, PB_TACH_MODE_BITS ...) */
    uint64_t str_off, frame_off, size, footer_off;
    uint32_t nstrings_decl, nframes_decl;
    /* tables */
    char *strbuf;
    size_t strused, strcap;
    t_str *strs;
    size_t nstr, cstr;
    t_frame *frames;
    size_t nframes, cframes;
    uint32_t *cache;
    /* stats trailer */
    int have_stats;
    uint32_t stats_size, stats_flags;
    double stats[4];
    /* replay */
    t_thread **threads;
    size_t nthreads, cthreads;
    pb_index tix; /* threads by (tid, iid) */
    uint64_t total;
    uint64_t hist[256];
    uint64_t op_samples;           /* samples whose innermost frame has an opcode */
    uint32_t app_frame, app_dist;
    int any_own;                   /* some frame is the profiler's own (t_frame.own) */
    uint32_t *kept;                /* a sample's ids without those */
    size_t ckept;
    uint32_t max_depth;
    char *pkgbuf, *namebuf;
    size_t pkgcap, namecap;
    /* salvage of a file cut before its tables: frames have no names */
    int header_ok;                 /* the 64-byte header parsed and is version 1 */
    int blind;                     /* replaying without string/frame tables */
    size_t ccache;                 /* cache entries allocated (blind mode) */
    pb_error lost;                 /* why the tables are missing (blind mode) */
    pb_sink *warn_sink;            /* chunk sink for the salvage warning (NULL: none) */
} tr;

static pb_status tachyon_oom(tr *r) { return pb_rd_oom(&r->rd); }

/* Need n bytes at s->p, for `what` of record `rec`: truncated error if the
 * input (or the region) ends first. */
static inline pb_status tachyon_need(tr *r, size_t n, const char *rec, const char *what)
{
    r->rd.rec = rec;
    return pb_rd_need(&r->rd, n, what);
}

/* LEB128 varint of at most 10 bytes; with max32, values over 2^32-1 are
 * rejected. */
static inline pb_status varint(tr *r, uint64_t *v, int max32, const char *rec, const char *what)
{
    r->rd.rec = rec;
    return pb_rd_leb128(&r->rd, v, max32, what);
}

static inline pb_status varint32(tr *r, uint32_t *v, const char *rec, const char *what)
{
    r->rd.rec = rec;
    return pb_rd_leb128_u32(&r->rd, v, what);
}

/* ---- header, footer, tables --------------------------------------------- */
#define STR_OFF_AT(r) ((r)->layout == PB_TACH_315 ? 40 : 36)
#define FRAME_OFF_AT(r) ((r)->layout == PB_TACH_315 ? 48 : 44)

/* the header's fields as one layout reads them */
static void tachyon_header_fields(const unsigned char *h, int swap, int layout, pb_tach_header *t)
{
    memset(t, 0, sizeof *t);
    t->layout = layout;
    if (layout == PB_TACH_315) {
        t->sample_count = pb_load64(h + 28, swap);
        t->thread_count = pb_load32(h + 36, swap);
        t->str_off = pb_load64(h + 40, swap);
        t->frame_off = pb_load64(h + 48, swap);
        t->compression = pb_load32(h + 56, swap);
        t->mode_field = pb_load32(h + 60, swap);
    } else {
        t->sample_count = pb_load32(h + 28, swap);
        t->thread_count = pb_load32(h + 32, swap);
        t->str_off = pb_load64(h + 36, swap);
        t->frame_off = pb_load64(h + 44, swap);
        t->compression = pb_load32(h + 52, swap);
    }
}

/* structurally possible: tables after the header, strings first; the pre-rc
 * layout leaves bytes 56..63 zero */
static int header_possible(const unsigned char *h, const pb_tach_header *t)
{
    static const unsigned char zero[8];
    if (t->layout == PB_TACH_314 && memcmp(h + 56, zero, 8) != 0)
        return 0;
    return t->str_off >= T_HEADER && t->frame_off >= t->str_off;
}

int pb_tachyon_header(const unsigned char *h, int swap, uint64_t file_size, pb_tach_header *th)
{
    pb_tach_header a, b;
    int pa, pb_, fa, fb;
    tachyon_header_fields(h, swap, PB_TACH_314, &a);
    tachyon_header_fields(h, swap, PB_TACH_315, &b);
    pa = header_possible(h, &a);
    pb_ = header_possible(h, &b);
    /* with the size known, the tables must also end before the footer:
     * read in the wrong layout, a table offset takes the thread count or
     * an offset's other half and lands far past any real file */
    if (file_size != UINT64_MAX && file_size >= T_HEADER + T_FOOTER) {
        fa = pa && a.frame_off <= file_size - T_FOOTER;
        fb = pb_ && b.frame_off <= file_size - T_FOOTER;
        if (fa != fb) {
            *th = fa ? a : b;
            return th->layout;
        }
    }
    /* size unknown, or a file cut short (salvage): the structure decides; if
     * both readings are possible, the smaller string table offset is the
     * real one (the other holds a count in an offset's high half) */
    if (pa && pb_)
        *th = b.str_off < a.str_off ? b : a;
    else if (pa || pb_)
        *th = pa ? a : b;
    else {
        *th = a;
        return 0;
    }
    return th->layout;
}

const char *pb_tachyon_mode_name(uint32_t mode_field)
{
    static const char *const names[] = {"wall", "cpu", "gil", "all", "exception"};
    uint32_t m = PB_TACH_MODE_BITS(mode_field);
    return m >= 1 && m <= 5 ? names[m - 1] : NULL;
}

const char *pb_tachyon_capture_name(unsigned k)
{
    static const char *const names[] = {"all_threads", "native", "gc", "opcodes", "blocking"};
    return k < 5 ? names[k] : NULL;
}

/* "all_threads,gc": the capture features of a header field that records
 * them (buf: at least 48 bytes) */
static const char *capture_text(uint32_t field, char *buf, size_t cap)
{
    size_t n = 0;
    unsigned k;
    buf[0] = '\0';
    for (k = 0; k < 5; k++)
        if (PB_TACH_CAPTURE(field) & (1u << k))
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "", pb_tachyon_capture_name(k));
    return buf;
}

/* Thread status flags of a sample (the status byte; tachyon-format.md,
 * CPython's THREAD_STATUS_* constants) as comma-separated names; bits CPython
 * does not name become "bit6", "bit7".  buf: at least 96 bytes. */
static size_t tachyon_status_text(unsigned status, char *buf, size_t cap)
{
    static const char *const names[8] = {"has_gil", "on_cpu", "unknown", "gil_requested", "has_exception",
                                         "main_thread", "bit6", "bit7"};
    size_t n = 0;
    unsigned k;
    buf[0] = '\0';
    for (k = 0; k < 8; k++) {
        size_t l;
        if (!(status & (1u << k)))
            continue;
        l = strlen(names[k]);
        if (n + (n != 0) + l >= cap)
            break; /* the 8 names and their commas take 72 bytes */
        if (n)
            buf[n++] = ',';
        memcpy(buf + n, names[k], l + 1);
        n += l;
    }
    return n; /* once per sample (outputs that name frames per sample): no snprintf */
}

/* CPython 3.15's opcode names, 0..254 (opcode.opname with the specialised
 * instructions of opcode._specialized_opmap, as the profiler's own
 * opcode_utils shows them; taken from a real 3.15.2); NULL: no instruction
 * has that number (CPython shows "<N>").  255 is the format's "none". */
static const char *const py315_opnames[255] = {
    "CACHE", "BINARY_SLICE", "BUILD_TEMPLATE", "BINARY_OP_INPLACE_ADD_UNICODE", "CALL_FUNCTION_EX",
    "CHECK_EG_MATCH", "CHECK_EXC_MATCH", "CLEANUP_THROW", "DELETE_SUBSCR", "END_FOR", "END_SEND", "EXIT_INIT_CHECK",
    "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "GET_AITER", "GET_ANEXT", "GET_LEN", "RESERVED", "INTERPRETER_EXIT",
    "LOAD_BUILD_CLASS", "LOAD_LOCALS", "MAKE_FUNCTION", "MATCH_KEYS", "MATCH_MAPPING", "MATCH_SEQUENCE", "NOP",
    "NOT_TAKEN", "POP_EXCEPT", "POP_ITER", "POP_TOP", "PUSH_EXC_INFO", "PUSH_NULL", "RETURN_GENERATOR",
    "RETURN_VALUE", "SETUP_ANNOTATIONS", "STORE_SLICE", "STORE_SUBSCR", "TO_BOOL", "UNARY_INVERT", "UNARY_NEGATIVE",
    "UNARY_NOT", "WITH_EXCEPT_START", "BINARY_OP", "BUILD_INTERPOLATION", "BUILD_LIST", "BUILD_MAP", "BUILD_SET",
    "BUILD_SLICE", "BUILD_STRING", "BUILD_TUPLE", "CALL", "CALL_INTRINSIC_1", "CALL_INTRINSIC_2", "CALL_KW",
    "COMPARE_OP", "CONTAINS_OP", "CONVERT_VALUE", "COPY", "COPY_FREE_VARS", "DELETE_ATTR", "DELETE_DEREF",
    "DELETE_FAST", "DELETE_GLOBAL", "DELETE_NAME", "DICT_MERGE", "DICT_UPDATE", "END_ASYNC_FOR", "EXTENDED_ARG",
    "FOR_ITER", "GET_AWAITABLE", "GET_ITER", "IMPORT_FROM", "IMPORT_NAME", "IS_OP", "JUMP_BACKWARD",
    "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_FORWARD", "LIST_APPEND", "LIST_EXTEND", "LOAD_ATTR", "LOAD_COMMON_CONSTANT",
    "LOAD_CONST", "LOAD_DEREF", "LOAD_FAST", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_BORROW",
    "LOAD_FAST_BORROW_LOAD_FAST_BORROW", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_FROM_DICT_OR_DEREF",
    "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_SMALL_INT", "LOAD_SPECIAL", "LOAD_SUPER_ATTR",
    "MAKE_CELL", "MAP_ADD", "MATCH_CLASS", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_IF_TRUE", "RAISE_VARARGS", "RERAISE", "SEND", "SET_ADD", "SET_FUNCTION_ATTRIBUTE", "SET_UPDATE",
    "STORE_ATTR", "STORE_DEREF", "STORE_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "STORE_GLOBAL",
    "STORE_NAME", "SWAP", "UNPACK_EX", "UNPACK_SEQUENCE", "YIELD_VALUE", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    NULL, "RESUME", "BINARY_OP_ADD_FLOAT", "BINARY_OP_ADD_INT", "BINARY_OP_ADD_UNICODE", "BINARY_OP_EXTEND",
    "BINARY_OP_MULTIPLY_FLOAT", "BINARY_OP_MULTIPLY_INT", "BINARY_OP_SUBSCR_DICT", "BINARY_OP_SUBSCR_GETITEM",
    "BINARY_OP_SUBSCR_LIST_INT", "BINARY_OP_SUBSCR_LIST_SLICE", "BINARY_OP_SUBSCR_STR_INT",
    "BINARY_OP_SUBSCR_TUPLE_INT", "BINARY_OP_SUBSCR_USTR_INT", "BINARY_OP_SUBTRACT_FLOAT", "BINARY_OP_SUBTRACT_INT",
    "CALL_ALLOC_AND_ENTER_INIT", "CALL_BOUND_METHOD_EXACT_ARGS", "CALL_BOUND_METHOD_GENERAL", "CALL_BUILTIN_CLASS",
    "CALL_BUILTIN_FAST", "CALL_BUILTIN_FAST_WITH_KEYWORDS", "CALL_BUILTIN_O", "CALL_EX_NON_PY_GENERAL",
    "CALL_EX_PY", "CALL_ISINSTANCE", "CALL_KW_BOUND_METHOD", "CALL_KW_NON_PY", "CALL_KW_PY", "CALL_LEN",
    "CALL_LIST_APPEND", "CALL_METHOD_DESCRIPTOR_FAST", "CALL_METHOD_DESCRIPTOR_FAST_WITH_KEYWORDS",
    "CALL_METHOD_DESCRIPTOR_NOARGS", "CALL_METHOD_DESCRIPTOR_O", "CALL_NON_PY_GENERAL", "CALL_PY_EXACT_ARGS",
    "CALL_PY_GENERAL", "CALL_STR_1", "CALL_TUPLE_1", "CALL_TYPE_1", "COMPARE_OP_FLOAT", "COMPARE_OP_INT",
    "COMPARE_OP_STR", "CONTAINS_OP_DICT", "CONTAINS_OP_SET", "FOR_ITER_GEN", "FOR_ITER_LIST", "FOR_ITER_RANGE",
    "FOR_ITER_TUPLE", "FOR_ITER_VIRTUAL", "GET_ITER_SELF", "GET_ITER_VIRTUAL", "JUMP_BACKWARD_JIT",
    "JUMP_BACKWARD_NO_JIT", "LOAD_ATTR_CLASS", "LOAD_ATTR_CLASS_WITH_METACLASS_CHECK",
    "LOAD_ATTR_GETATTRIBUTE_OVERRIDDEN", "LOAD_ATTR_INSTANCE_VALUE", "LOAD_ATTR_METHOD_LAZY_DICT",
    "LOAD_ATTR_METHOD_NO_DICT", "LOAD_ATTR_METHOD_WITH_VALUES", "LOAD_ATTR_MODULE",
    "LOAD_ATTR_NONDESCRIPTOR_NO_DICT", "LOAD_ATTR_NONDESCRIPTOR_WITH_VALUES", "LOAD_ATTR_PROPERTY",
    "LOAD_ATTR_SLOT", "LOAD_ATTR_WITH_HINT", "LOAD_GLOBAL_BUILTIN", "LOAD_GLOBAL_MODULE", "LOAD_SUPER_ATTR_ATTR",
    "LOAD_SUPER_ATTR_METHOD", "RESUME_CHECK", "RESUME_CHECK_JIT", "SEND_ASYNC_GEN", "SEND_GEN", "SEND_VIRTUAL",
    "STORE_ATTR_INSTANCE_VALUE", "STORE_ATTR_SLOT", "STORE_ATTR_WITH_HINT", "STORE_SUBSCR_DICT",
    "STORE_SUBSCR_LIST_INT", "TO_BOOL_ALWAYS_TRUE", "TO_BOOL_BOOL", "TO_BOOL_INT", "TO_BOOL_LIST", "TO_BOOL_NONE",
    "TO_BOOL_STR", "UNPACK_SEQUENCE_LIST", "UNPACK_SEQUENCE_TUPLE", "UNPACK_SEQUENCE_TWO_TUPLE", NULL, NULL, NULL,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "INSTRUMENTED_END_FOR",
    "INSTRUMENTED_POP_ITER", "INSTRUMENTED_END_SEND", "INSTRUMENTED_FOR_ITER", "INSTRUMENTED_INSTRUCTION",
    "INSTRUMENTED_JUMP_FORWARD", "INSTRUMENTED_NOT_TAKEN", "INSTRUMENTED_POP_JUMP_IF_TRUE",
    "INSTRUMENTED_POP_JUMP_IF_FALSE", "INSTRUMENTED_POP_JUMP_IF_NONE", "INSTRUMENTED_POP_JUMP_IF_NOT_NONE",
    "INSTRUMENTED_RESUME", "INSTRUMENTED_RETURN_VALUE", "INSTRUMENTED_YIELD_VALUE", "INSTRUMENTED_END_ASYNC_FOR",
    "INSTRUMENTED_LOAD_SUPER_ATTR", "INSTRUMENTED_CALL", "INSTRUMENTED_CALL_KW", "INSTRUMENTED_CALL_FUNCTION_EX",
    "INSTRUMENTED_JUMP_BACKWARD", "INSTRUMENTED_LINE", "ENTER_EXECUTOR",
};

/* the name of opcode op of this file into buf (at least 16 bytes): CPython
 * 3.15's name when the file is a 3.15 one, else (a pre-release build, whose
 * numbering may differ) "<N>" as CPython shows an unknown number */
static pb_str opcode_name(const tr *r, unsigned op, char *buf, size_t cap)
{
    if (op < 255 && r->layout == PB_TACH_315 && r->pyver[0] == 3 && r->pyver[1] == 15 && py315_opnames[op])
        return pb_str_c(py315_opnames[op]);
    {
        /* "<N>", as snprintf(buf, cap, "<%u>", op) writes it (cap >= 16),
         * without snprintf: this runs once per sample */
        char t[12];
        size_t k = sizeof t, n = 0;
        do {
            t[--k] = (char)('0' + op % 10);
            op /= 10;
        } while (op && k);
        if (cap < 16)
            return pb_str_c("");
        buf[n++] = '<';
        memcpy(buf + n, t + k, sizeof t - k);
        n += sizeof t - k;
        buf[n++] = '>';
        buf[n] = '\0';
    }
    return pb_str_c(buf);
}

/* Over 80 lines, kept whole: one check per header field, in the layout's order, each with its own
 * message. */
static pb_status tachyon_read_header(tr *r)
{
    pb_source *s = r->s;
    unsigned char h[T_HEADER];
    uint32_t magic_native;
    int got = pb_src_need(s, T_HEADER);
    if (got < 0)
        return r->err->status;
    if (got == 0)
        return pb_fail(r->err, PB_ERR_TRUNCATED, 0, "file has %zu bytes, too small for the 64-byte header",
                       pb_src_avail(s));
    memcpy(h, s->p, T_HEADER);
    s->p += T_HEADER;
    memcpy(&magic_native, h, 4);
    if (magic_native == T_MAGIC) {
        r->swap = 0;
    } else if (magic_native == T_MAGIC_SWAPPED) {
        r->swap = 1;
    } else {
        uint32_t le = pb_le32(h);
        return pb_fail(r->err, PB_ERR_CORRUPT, 0,
                       "header: invalid magic number 0x%08x (expected 0x54414348, \"HCAT\" little-endian or "
                       "\"TACH\" big-endian)%s",
                       le, le == 0 ? "; an all-zero header means the profiler did not finish writing" : "");
    }
    r->version = pb_load32(h + 4, r->swap);
    memcpy(r->pyver, h + 8, 3);
    if (r->version != 1)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, 4,
                       "header: format version %u (written by Python %u.%u.%u); this reader supports version 1",
                       r->version, r->pyver[0], r->pyver[1], r->pyver[2]);
    r->start_time = pb_load64(h + 12, r->swap);
    r->interval = pb_load64(h + 20, r->swap);
    r->size = pb_src_size(s);
    {
        pb_tach_header th;
        r->layout = pb_tachyon_header(h, r->swap, r->size, &th);
        if (!r->layout) {
            pb_tach_header a, b;
            tachyon_header_fields(h, r->swap, PB_TACH_314, &a);
            tachyon_header_fields(h, r->swap, PB_TACH_315, &b);
            return pb_fail(r->err, PB_ERR_CORRUPT, 28,
                           "header: neither v1 header layout is consistent (read as pre-3.15: string table at %llu, "
                           "frame table at %llu, reserved bytes 56..63 %s; read as 3.15.0: string table at %llu, "
                           "frame table at %llu): the tables must start at 64 or later, strings first",
                           (unsigned long long)a.str_off, (unsigned long long)a.frame_off,
                           memcmp(h + 56, "\0\0\0\0\0\0\0\0", 8) ? "not zero" : "zero",
                           (unsigned long long)b.str_off, (unsigned long long)b.frame_off);
        }
        r->sample_count = th.sample_count;
        r->thread_count = th.thread_count;
        r->str_off = th.str_off;
        r->frame_off = th.frame_off;
        r->compression = th.compression;
        r->mode_field = th.mode_field;
    }
    if (r->layout == PB_TACH_315 && PB_TACH_MODE_INVALID(r->mode_field))
        return pb_fail(r->err, PB_ERR_CORRUPT, 60,
                       "header: invalid profiling mode in the field at offset 60 (0x%x: bits 0-2 are %u; 1..5 are "
                       "wall, cpu, gil, all, exception, 0 none), as CPython's reader says",
                       r->mode_field, PB_TACH_MODE_BITS(r->mode_field));
    if (r->compression > 1)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, r->layout == PB_TACH_315 ? 56 : 52,
                       "header: compression type %u; this reader knows 0 (none) and 1 (zstd)", r->compression);
    r->header_ok = 1;
    if (r->size == UINT64_MAX)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, 0,
                       "tachyon profiles keep their tables at the end: the input must be a regular file");
    if (r->size < T_HEADER + T_FOOTER)
        return pb_fail(r->err, PB_ERR_TRUNCATED, r->size,
                       "file has %llu bytes, too small for the 64-byte header and the 32-byte footer",
                       (unsigned long long)r->size);
    r->footer_off = r->size - T_FOOTER;
    if (r->str_off < T_HEADER)
        return pb_fail(r->err, PB_ERR_CORRUPT, STR_OFF_AT(r), "header: string table offset %llu is before the data section (64)",
                       (unsigned long long)r->str_off);
    if (r->str_off > r->footer_off)
        return pb_fail(r->err, PB_ERR_TRUNCATED, STR_OFF_AT(r),
                       "header: string table offset %llu is past the footer: the file has only %llu bytes "
                       "(truncated?)",
                       (unsigned long long)r->str_off, (unsigned long long)r->size);
    if (r->frame_off < r->str_off)
        return pb_fail(r->err, PB_ERR_CORRUPT, FRAME_OFF_AT(r),
                       "header: frame table offset %llu is before the string table offset %llu",
                       (unsigned long long)r->frame_off, (unsigned long long)r->str_off);
    if (r->frame_off > r->footer_off)
        return pb_fail(r->err, PB_ERR_TRUNCATED, FRAME_OFF_AT(r),
                       "header: frame table offset %llu is past the footer: the file has only %llu bytes "
                       "(truncated?)",
                       (unsigned long long)r->frame_off, (unsigned long long)r->size);
    return PB_OK;
}

static pb_status read_footer(tr *r)
{
    pb_status st;
    pb_src_set_limit(r->s, UINT64_MAX);
    if ((st = pb_src_seek(r->s, r->footer_off)) != PB_OK)
        return st;
    if ((st = tachyon_need(r, T_FOOTER, "footer", "counts")) != PB_OK)
        return st;
    r->nstrings_decl = pb_load32(r->s->p, r->swap);
    r->nframes_decl = pb_load32(r->s->p + 4, r->swap);
    return PB_OK;
}

static pb_status read_strings(tr *r)
{
    pb_source *s = r->s;
    pb_status st;
    uint32_t i;
    uint64_t room = r->frame_off - r->str_off;
    if (r->nstrings_decl > r->opt->max_strings)
        return pb_fail(r->err, PB_ERR_LIMIT, r->footer_off, "footer: %u strings exceed max_strings (%u)",
                       r->nstrings_decl, r->opt->max_strings);
    if (r->nstrings_decl > room)
        return pb_fail(r->err, PB_ERR_CORRUPT, r->footer_off,
                       "footer: %u strings cannot fit in the %llu-byte string table", r->nstrings_decl,
                       (unsigned long long)room);
    if ((st = pb_src_seek(s, r->str_off)) != PB_OK)
        return st;
    pb_src_set_limit(s, r->frame_off);
    for (i = 0; i < r->nstrings_decl; i++) {
        uint32_t len;
        int got;
        if ((st = varint32(r, &len, "string table entry", "length")) != PB_OK) {
            if (r->err->status == PB_ERR_TRUNCATED) {
                r->err->status = PB_ERR_CORRUPT;
                snprintf(r->err->message, sizeof r->err->message,
                         "string table overflow: string %u of %u starts at the frame table", i, r->nstrings_decl);
            }
            return r->err->status;
        }
        if (len > r->opt->max_record_size)
            return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(s),
                           "string table entry %u of %u is %u bytes long, more than max_record_size (%llu)", i,
                           r->nstrings_decl, len, (unsigned long long)r->opt->max_record_size);
        got = pb_src_need(s, len);
        if (got < 0)
            return r->err->status;
        if (got == 0)
            return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(s),
                           "string table overflow: string %u of %u is %u bytes long, only %zu left before the "
                           "frame table",
                           i, r->nstrings_decl, len, pb_src_avail(s));
        if ((uint64_t)len * 3 + 1 > SIZE_MAX - r->strused ||
            pb_grow((void **)&r->strbuf, &r->strcap, r->strused + (size_t)len * 3 + 1, 1) < 0 ||
            pb_grow((void **)&r->strs, &r->cstr, r->nstr + 1, sizeof *r->strs) < 0)
            return tachyon_oom(r);
        {
            size_t out = pb_utf8_repair(r->strbuf + r->strused, (const char *)s->p, len);
            r->strbuf[r->strused + out] = '\0';
            r->strs[r->nstr].at = r->strused;
            r->strs[r->nstr].len = (uint32_t)out;
            r->nstr++;
            r->strused += out + 1;
        }
        s->p += len;
    }
    return PB_OK;
}

static pb_status read_frames(tr *r, uint64_t *end)
{
    pb_source *s = r->s;
    pb_status st;
    uint32_t i;
    uint64_t room = r->footer_off - r->frame_off;
    static const char *const fields[6] = {"filename index", "funcname index", "lineno", "end_lineno delta",
                                          "column", "end_column delta"};
    if (r->nframes_decl > r->opt->max_frames)
        return pb_fail(r->err, PB_ERR_LIMIT, r->footer_off + 4, "footer: %u frames exceed max_frames (%u)",
                       r->nframes_decl, r->opt->max_frames);
    if ((uint64_t)r->nframes_decl * 7 > room)
        return pb_fail(r->err, PB_ERR_CORRUPT, r->footer_off + 4,
                       "footer: %u frames (7 bytes or more each) cannot fit in the %llu-byte frame table",
                       r->nframes_decl, (unsigned long long)room);
    if ((st = pb_src_seek(s, r->frame_off)) != PB_OK)
        return st;
    pb_src_set_limit(s, r->footer_off);
    for (i = 0; i < r->nframes_decl; i++) {
        uint32_t v[6];
        int k;
        for (k = 0; k < 6; k++) {
            if ((st = varint32(r, &v[k], "frame table entry", fields[k])) != PB_OK) {
                if (r->err->status == PB_ERR_TRUNCATED) {
                    r->err->status = PB_ERR_CORRUPT;
                    snprintf(r->err->message, sizeof r->err->message,
                             "frame table entry %u of %u runs into the footer (reading its %s)", i,
                             r->nframes_decl, fields[k]);
                }
                return r->err->status;
            }
        }
        if (pb_src_need(s, 1) <= 0) {
            if (r->err->status)
                return r->err->status;
            return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(s),
                           "frame table entry %u of %u runs into the footer (reading its opcode)", i,
                           r->nframes_decl);
        }
        if (pb_grow((void **)&r->frames, &r->cframes, r->nframes + 1, sizeof *r->frames) < 0)
            return tachyon_oom(r);
        r->frames[r->nframes].opcode = *s->p++;
        r->frames[r->nframes].file = v[0];
        r->frames[r->nframes].func = v[1];
        r->frames[r->nframes].line = pb_unzigzag32(v[2]);
        r->frames[r->nframes].own = v[0] < r->nstr && pb_sample_own_frame(r->row,
                                                                          r->strbuf + r->strs[v[0]].at,
                                                                          r->strs[v[0]].len);
        r->any_own |= r->frames[r->nframes].own;
        r->nframes++;
    }
    *end = pb_src_offset(s);
    if (r->nframes) {
        size_t n;
        r->cache = (uint32_t *)malloc(r->nframes * sizeof *r->cache);
        if (!r->cache)
            return tachyon_oom(r);
        for (n = 0; n < r->nframes; n++)
            r->cache[n] = T_NONE;
    }
    return PB_OK;
}

/* Optional stats trailer right before the footer: 56 bytes (duration s,
 * sample rate Hz, error rate %, missed samples %: 4 f64; flags, reserved,
 * "TACHSTAT", version, size) or the legacy 32 bytes (duration and rate,
 * "TACHSTAT", version, size); CPython 3.15.2 writes the 56 bytes on every
 * file.  Found by its signature; ignored when it
 * would overlap the frame table. */
static pb_status read_trailer(tr *r, uint64_t frames_end)
{
    pb_source *s = r->s;
    pb_status st;
    uint32_t size;
    unsigned char t[56];
    int k;
    if (r->footer_off < frames_end + 32)
        return PB_OK;
    pb_src_set_limit(s, UINT64_MAX);
    if ((st = pb_src_seek(s, r->footer_off - 16)) != PB_OK)
        return st;
    if ((st = tachyon_need(r, 16, "stats trailer", "signature")) != PB_OK)
        return st;
    if (memcmp(s->p, "TACHSTAT", 8) != 0)
        return PB_OK;
    size = pb_load32(s->p + 12, r->swap);
    if ((size != 56 && size != 32) || r->footer_off - frames_end < size)
        return PB_OK;
    if ((st = pb_src_seek(s, r->footer_off - size)) != PB_OK)
        return st;
    if ((st = tachyon_need(r, size, "stats trailer", "fields")) != PB_OK)
        return st;
    memcpy(t, s->p, size);
    r->have_stats = 1;
    r->stats_size = size;
    for (k = 0; k < (size == 56 ? 4 : 2); k++)
        r->stats[k] = pb_load_f64(t + 8 * k, r->swap);
    /* duration and rate are always there; the 56-byte form's flags word says
     * bit 0 = error rate present, bit 1 = missed samples present */
    r->stats_flags = size == 56 ? pb_load32(t + 32, r->swap) : 0;
    return PB_OK;
}

/* ---- attributes ----------------------------------------------------------- */
static pb_status tachyon_attr(tr *r, const char *key, const char *val)
{
    return r->out->attribute(r->out, key, pb_str_c(val));
}
static pb_status tachyon_attr_u64(tr *r, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return tachyon_attr(r, key, buf);
}
static pb_status attr_f64(tr *r, const char *key, double v)
{
    char buf[64];
    return tachyon_attr(r, key, pb_fmt_double(buf, sizeof buf, v));
}

/* NYTProf's basetime is wall-clock seconds, but the header's start time is
 * a monotonic clock (time since boot): the file's mtime (written when the
 * profile ended) minus the profile's duration (the stats trailer's, else
 * samples x interval) is the best wall-clock start the file offers.  Without
 * a file (a buffer) the monotonic seconds remain. */
static uint64_t tachyon_wall_start(tr *r)
{
    struct stat sb;
    double dur;
    uint64_t d;
    if (!r->s->fp || fstat(fileno(r->s->fp), &sb) != 0 || sb.st_mtime <= 0)
        return r->start_time / 1000000u;
    dur = r->have_stats && r->stats[0] > 0 && r->stats[0] < 1e9
              ? r->stats[0]
              : (double)r->sample_count * (double)r->interval / 1e6;
    d = dur > 0 && dur < 1e9 ? (uint64_t)(dur + 0.5) : 0;
    return (uint64_t)sb.st_mtime > d ? (uint64_t)sb.st_mtime - d : (uint64_t)sb.st_mtime;
}

static pb_status header_attributes(tr *r)
{
    pb_status st;
    char buf[64];
    static const char *const stat_names[4] = {"profile_duration_sec", "profile_sample_rate", "profile_error_rate",
                                              "profile_missed_samples"};
    const char *mode = pb_tachyon_mode_name(r->mode_field);
    char feat[64];
    int k;
    snprintf(buf, sizeof buf, "%u.%u.%u", r->pyver[0], r->pyver[1], r->pyver[2]);
    if ((st = tachyon_attr_u64(r, "source_format_version", r->version)) != PB_OK ||
        (st = tachyon_attr(r, "python_version", buf)) != PB_OK ||
        (st = tachyon_attr_u64(r, "basetime", tachyon_wall_start(r))) != PB_OK ||
        (st = tachyon_attr_u64(r, "start_time_us", r->start_time)) != PB_OK ||
        (st = tachyon_attr_u64(r, "sample_interval_us", r->interval)) != PB_OK ||
        (st = tachyon_attr_u64(r, "total_samples", r->sample_count)) != PB_OK ||
        (st = tachyon_attr_u64(r, "thread_count", r->thread_count)) != PB_OK ||
        (st = tachyon_attr(r, "compression", r->compression ? "zstd" : "none")) != PB_OK ||
        (st = tachyon_attr(r, "byte_order", (r->swap ? !pb_host_little() : pb_host_little()) ? "little" : "big")) != PB_OK ||
        (st = tachyon_attr(r, "header_layout", r->layout == PB_TACH_315 ? "3.15" : "3.14")) != PB_OK)
        return st;
    /* the 3.15 header's field at 60: mode and capture features, as
     * CPython's get_info() reports them */
    if (r->mode_field) {
        if ((st = tachyon_attr_u64(r, "profiling_mode_field", r->mode_field)) != PB_OK)
            return st;
        if (mode && (st = tachyon_attr(r, "profiling_mode", mode)) != PB_OK)
            return st;
        if (PB_TACH_HAS_CAPTURE(r->mode_field) &&
            (st = tachyon_attr(r, "capture_features", capture_text(r->mode_field, feat, sizeof feat))) != PB_OK)
            return st;
    }
    /* who made it and what its times mean (Devel::ProfileBridge, "Times") */
    if ((st = tachyon_attr(r, "profiler", "CPython sampling profiler (profiling.sampling, binary format)")) != PB_OK ||
        (st = tachyon_attr(r, "profiler_version", buf)) != PB_OK ||
        (st = tachyon_attr(r, "clock", mode ? mode : "not recorded (the profiler's default is wall-clock)")) != PB_OK)
        return st;
    if (r->have_stats) {
        for (k = 0; k < 4; k++)
            if (k < 2 || (r->stats_flags & (1u << (k - 2))))
                if ((st = attr_f64(r, stat_names[k], r->stats[k])) != PB_OK)
                    return st;
        if ((st = tachyon_attr_u64(r, "profile_stats_trailer_bytes", r->stats_size)) != PB_OK)
            return st;
    }
    return PB_OK;
}

/* ---- frames -> sink ids ----------------------------------------------------- */
/* sink id of frame index fi (already range-checked) */
static pb_status tachyon_intern(tr *r, uint32_t fi, uint64_t off, uint32_t *id)
{
    const t_frame *fr = &r->frames[fi];
    pb_frame pf;
    pb_status st;
    const char *file, *func;
    size_t flen, fnlen;
    if (fr->file >= r->nstr || fr->func >= r->nstr)
        return pb_fail(r->err, PB_ERR_CORRUPT, off,
                       "frame %u names string %u, but the string table has %zu entries", fi,
                       fr->file >= r->nstr ? fr->file : fr->func, r->nstr);
    file = r->strbuf + r->strs[fr->file].at;
    flen = r->strs[fr->file].len;
    func = r->strbuf + r->strs[fr->func].at;
    fnlen = r->strs[fr->func].len;
    memset(&pf, 0, sizeof pf);
    /* own: CPython's own name, the qualname */
    if (pb_python_frame(&pf, &r->pkgbuf, &r->pkgcap, &r->namebuf, &r->namecap, file, flen, func, fnlen, NULL) < 0)
        return tachyon_oom(r);
    pf.line = fr->line;
    pf.first_line = -1;
    if ((st = r->out->frame(r->out, &pf, id)) != PB_OK)
        return st;
    r->cache[fi] = *id;
    return PB_OK;
}

/* ---- replay ------------------------------------------------------------------ */
static uint32_t tmix(uint64_t tid, uint32_t iid)
{
    return pb_mix64(tid ^ ((uint64_t)iid * UINT64_C(0x9E3779B97F4A7C15)));
}

static uint32_t thread_hash(const void *ctx, uint32_t i)
{
    const t_thread *t = ((const tr *)ctx)->threads[i];
    return tmix(t->tid, t->iid);
}

static pb_status tachyon_get_thread(tr *r, uint64_t tid, uint32_t iid, uint64_t rec_off, t_thread **out)
{
    size_t k;
    uint32_t i;
    t_thread *t;
    pb_status st;
    uint32_t h = tmix(tid, iid);
    PB_INDEX_FIND(&r->tix, h, k, i, r->threads[i]->tid == tid && r->threads[i]->iid == iid);
    if (i != PB_INDEX_NONE) {
        *out = r->threads[i];
        return PB_OK;
    }
    if (r->nthreads >= r->thread_count)
        return pb_fail(r->err, PB_ERR_CORRUPT, rec_off,
                       "sample record of thread %llu (interpreter %u): the sample data holds more threads than "
                       "the %u the header declares",
                       (unsigned long long)tid, iid, r->thread_count);
    if (pb_index_reserve(&r->tix, r->nthreads, thread_hash, r) < 0)
        return tachyon_oom(r);
    if (pb_grow((void **)&r->threads, &r->cthreads, r->nthreads + 1, sizeof *r->threads) < 0)
        return tachyon_oom(r);
    t = (t_thread *)malloc(sizeof *t);
    if (!t)
        return tachyon_oom(r);
    t->tid = tid;
    t->iid = iid;
    t->index = (uint32_t)r->nthreads;
    t->selected = !r->opt->have_thread || (!r->opt->thread_name && r->opt->thread_id == tid);
    t->ts = r->start_time;
    t->samples = 0;
    t->start = t->cap = 0;
    t->fidx = t->ids = NULL;
    r->threads[r->nthreads++] = t;
    PB_INDEX_FIND(&r->tix, h, k, i, 0); /* to the first empty slot (the index grew) */
    pb_index_set(&r->tix, k, t->index);
    if (t->selected) {
        char label[48];
        if (iid)
            snprintf(label, sizeof label, "%llu/%u", (unsigned long long)tid, iid);
        else
            snprintf(label, sizeof label, "%llu", (unsigned long long)tid);
        if ((st = r->out->thread(r->out, t->index, t->index + 1, 0, label)) != PB_OK)
            return st;
    }
    *out = t;
    return PB_OK;
}

/* room for a stack of nd frames (the stack stays anchored at the end) */
static pb_status grow_stack(tr *r, t_thread *t, uint32_t nd)
{
    uint32_t ncap = t->cap ? t->cap : 16, depth = t->cap - t->start;
    uint32_t *nf, *ni;
    while (ncap < nd)
        ncap *= 2;
    nf = (uint32_t *)malloc(ncap * sizeof *nf);
    ni = (uint32_t *)malloc(ncap * sizeof *ni);
    if (!nf || !ni) {
        free(nf);
        free(ni);
        return tachyon_oom(r);
    }
    if (depth) {
        memcpy(nf + ncap - depth, t->fidx + t->start, depth * sizeof *nf);
        memcpy(ni + ncap - depth, t->ids + t->start, depth * sizeof *ni);
    }
    free(t->fidx);
    free(t->ids);
    t->fidx = nf;
    t->ids = ni;
    t->start = ncap - depth;
    t->cap = ncap;
    return PB_OK;
}

/* read n frame indices (innermost first) into t->fidx[at..at+n) */
static pb_status read_frames_into(tr *r, t_thread *t, uint32_t at, uint32_t n, const char *rec)
{
    uint32_t k;
    pb_status st;
    for (k = 0; k < n; k++) {
        uint32_t fi;
        uint64_t off = pb_src_offset(r->s);
        if ((st = varint32(r, &fi, rec, "frame index")) != PB_OK) {
            if (st == PB_ERR_TRUNCATED && r->err->status == PB_ERR_TRUNCATED)
                snprintf(r->err->message, sizeof r->err->message, "%s needs %u more frame ind%s (of %u)", rec,
                         n - k, n - k == 1 ? "ex" : "ices", n);
            return st;
        }
        if (r->blind ? fi >= r->opt->max_frames : fi >= r->nframes) {
            if (r->blind)
                return pb_fail(r->err, PB_ERR_LIMIT, off, "%s: frame index %u exceeds max_frames (%u)", rec, fi,
                               r->opt->max_frames);
            return pb_fail(r->err, PB_ERR_CORRUPT, off, "%s: frame index %u out of range (frame count %zu)", rec, fi,
                           r->nframes);
        }
        t->fidx[at + k] = fi;
    }
    return PB_OK;
}

/* Blind mode (salvage without tables): frame index N becomes the synthetic
 * frame "<frame N>"; the id cache grows with the largest index seen. */
static pb_status blind_ids(tr *r, t_thread *t, uint32_t at, uint32_t n)
{
    uint32_t k;
    pb_status st;
    for (k = at; k < at + n; k++) {
        uint32_t fi = t->fidx[k];
        if (fi >= r->ccache) {
            size_t old = r->ccache, j;
            if (pb_grow((void **)&r->cache, &r->ccache, (size_t)fi + 1, sizeof *r->cache) < 0)
                return tachyon_oom(r);
            for (j = old; j < r->ccache; j++)
                r->cache[j] = T_NONE;
        }
        if (r->cache[fi] == T_NONE) {
            char name[32];
            pb_frame pf;
            uint32_t id;
            memset(&pf, 0, sizeof pf);
            snprintf(name, sizeof name, "<frame %u>", fi);
            pf.kind = PB_FRAME_SYNTHETIC;
            pf.package = pb_str_make("", 0, 0);
            pf.name = pf.own = pb_str_c(name);
            pf.file = pb_str_make("~", 1, 0);
            pf.line = 0;
            pf.first_line = -1;
            if ((st = r->out->frame(r->out, &pf, &id)) != PB_OK)
                return st;
            r->cache[fi] = id;
        }
        t->ids[k] = r->cache[fi];
    }
    return PB_OK;
}

/* ids for the n frames pushed at t->fidx[at..] (selected threads) */
static pb_status ids_for(tr *r, t_thread *t, uint32_t at, uint32_t n, uint64_t off)
{
    uint32_t k;
    pb_status st;
    if (r->blind)
        return blind_ids(r, t, at, n);
    for (k = at; k < at + n; k++) {
        uint32_t fi = t->fidx[k], id = r->cache[fi];
        if (id == T_NONE && !r->frames[fi].own) {
            const t_frame *fr = &r->frames[fi];
            if ((st = tachyon_intern(r, fi, off, &id)) != PB_OK)
                return st;
            /* the main script: the <module> frame nearest the root */
            if (fr->func < r->nstr && fr->file < r->nstr && r->strs[fr->func].len == 8 &&
                memcmp(r->strbuf + r->strs[fr->func].at, "<module>", 8) == 0 && r->strs[fr->file].len > 0 &&
                r->strbuf[r->strs[fr->file].at] != '<' &&
                (t->cap - 1 - k) < r->app_dist) {
                r->app_dist = t->cap - 1 - k;
                r->app_frame = fi;
            }
        }
        t->ids[k] = id;
    }
    return PB_OK;
}

/* one sample (or a run of weight samples of one status) of thread t */
static pb_status emit_sample(tr *r, t_thread *t, uint64_t weight, uint64_t ts, unsigned status)
{
    unsigned op = T_NO_OPCODE;
    pb_status st;
    if (t->cap > t->start && !r->blind)
        op = r->frames[t->fidx[t->start]].opcode;
    if (op != T_NO_OPCODE)
        r->op_samples += weight;
    if (r->out->sample_tags) {
        char obuf[16], sbuf[96];
        pb_str ops = op != T_NO_OPCODE ? opcode_name(r, op, obuf, sizeof obuf) : pb_str_make("", 0, 0);
        size_t sl = tachyon_status_text(status, sbuf, sizeof sbuf);
        if ((st = r->out->sample_tags(r->out, ops, pb_str_make(sbuf, sl, 0))) != PB_OK)
            return st;
    }
    if (r->any_own && !r->blind && t->cap > t->start) {
        /* without the profiler's own frames (the row's own_frames), as
         * CPython's collectors see the stack */
        uint32_t k, n = 0;
        if (pb_grow((void **)&r->kept, &r->ckept, t->cap - t->start, sizeof *r->kept) < 0)
            return tachyon_oom(r);
        for (k = t->start; k < t->cap; k++)
            if (!r->frames[t->fidx[k]].own)
                r->kept[n++] = t->ids[k];
        return r->out->sample(r->out, t->index, r->kept, n, weight, ts);
    }
    return r->out->sample(r->out, t->index, t->ids ? t->ids + t->start : NULL, t->cap - t->start, weight, ts);
}

static pb_status count_samples(tr *r, uint64_t n, uint64_t off)
{
    r->total += n;
    if (r->total > r->sample_count)
        return pb_fail(r->err, PB_ERR_CORRUPT, off,
                       "sample count mismatch: the header declares %llu samples, the sample data holds more",
                       (unsigned long long)r->sample_count);
    return PB_OK;
}

/* a REPEAT record (encoding 0): count samples of the thread's current
 * stack, a run of one status sent as one sample of that many */
static pb_status replay_repeat(tr *r, t_thread *t, uint64_t rec_off, uint64_t region_end)
{
    pb_source *s = r->s;
    pb_status st;
    uint64_t delta;
    unsigned status;
    uint32_t count, i;
    uint64_t n = 0, ts_last = 0;
    int bstatus = -1;
    if ((st = varint32(r, &count, "REPEAT record", "count")) != PB_OK)
        return st;
    if (!r->compression) {
        uint64_t at = pb_src_offset(s), left = region_end > at ? region_end - at : 0;
        if (count > left / 2)
            return pb_fail(r->err, PB_ERR_CORRUPT, rec_off,
                           "REPEAT record: count %u exceeds the %llu samples the %llu remaining bytes can "
                           "hold (2 bytes each at least)",
                           count, (unsigned long long)(left / 2), (unsigned long long)left);
    }
    if ((st = count_samples(r, count, rec_off)) != PB_OK)
        return st;
    t->samples += count;
    for (i = 0; i < count; i++) {
        if (s->end - s->p >= 11 && !(s->p[0] & 0x80)) {
            delta = s->p[0];
            status = s->p[1];
            s->p += 2;
        } else {
            if ((st = varint(r, &delta, 0, "REPEAT record", "timestamp delta")) != PB_OK)
                return st;
            if ((st = tachyon_need(r, 1, "REPEAT record", "status byte")) != PB_OK)
                return st;
            status = *s->p++;
        }
        if ((int)status != bstatus || r->out->each_tick) { /* each_tick: every sample its own (samples.h) */
            if (n && t->selected && (st = emit_sample(r, t, n, ts_last, (unsigned)bstatus)) != PB_OK)
                return st;
            /* (the run goes on: a tee's fold takes it as one, samples.h tick_joins) */
            if (n && (int)status == bstatus && t->selected && r->out->tick_joins &&
                (st = r->out->tick_joins(r->out)) != PB_OK)
                return st;
            bstatus = (int)status;
            n = 0;
        }
        t->ts += delta;
        ts_last = t->ts;
        r->hist[status]++;
        n++;
    }
    return n && t->selected ? emit_sample(r, t, n, ts_last, (unsigned)bstatus) : PB_OK;
}

/* a FULL, SUFFIX or POP_PUSH record (encoding 1..3): the new stack, one sample */
static pb_status replay_stack(tr *r, t_thread *t, unsigned enc, uint64_t rec_off)
{
    pb_source *s = r->s;
    pb_status st;
    uint64_t delta;
    unsigned status;
    static const char *const names[4] = {"REPEAT record", "FULL record", "SUFFIX record", "POP_PUSH record"};
    const char *rec = names[enc];
    uint32_t a, b, depth = t->cap - t->start, keep, push, nd;
    if ((st = varint(r, &delta, 0, rec, "timestamp delta")) != PB_OK)
        return st;
    if ((st = tachyon_need(r, 1, rec, "status byte")) != PB_OK)
        return st;
    status = *s->p++;
    if ((st = varint32(r, &a, rec, enc == 1 ? "depth" : enc == 2 ? "shared count" : "pop count")) != PB_OK)
        return st;
    if (enc == 1) {
        keep = 0;
        push = a;
        if (a > r->max_depth)
            return pb_fail(r->err, a > T_MAX_DEPTH ? PB_ERR_CORRUPT : PB_ERR_LIMIT, rec_off,
                           "FULL record: stack depth %u exceeds %u (%s)", a, r->max_depth,
                           a > T_MAX_DEPTH ? "the format's maximum" : "max_stack_depth");
    } else {
        if ((st = varint32(r, &b, rec, enc == 2 ? "new frame count" : "push count")) != PB_OK)
            return st;
        if (enc == 2) {
            if (a > depth)
                return pb_fail(r->err, PB_ERR_CORRUPT, rec_off,
                               "SUFFIX record: shared count %u exceeds the current stack depth %u", a, depth);
            keep = a;
        } else {
            keep = a >= depth ? 0 : depth - a;
        }
        push = b;
        if ((uint64_t)keep + push > r->max_depth)
            return pb_fail(r->err, (uint64_t)keep + push > T_MAX_DEPTH ? PB_ERR_CORRUPT : PB_ERR_LIMIT,
                           rec_off, "%s: final stack depth %llu exceeds %u (%s)", rec,
                           (unsigned long long)keep + push, r->max_depth,
                           (uint64_t)keep + push > T_MAX_DEPTH ? "the format's maximum" : "max_stack_depth");
    }
    nd = keep + push;
    if (nd > t->cap && (st = grow_stack(r, t, nd)) != PB_OK)
        return st;
    if ((st = read_frames_into(r, t, t->cap - nd, push, rec)) != PB_OK)
        return st;
    t->start = t->cap - nd;
    t->ts += delta;
    r->hist[status]++;
    t->samples++;
    if ((st = count_samples(r, 1, rec_off)) != PB_OK)
        return st;
    if (t->selected) {
        if ((st = ids_for(r, t, t->start, push, rec_off)) != PB_OK)
            return st;
        if ((st = emit_sample(r, t, 1, t->ts, status)) != PB_OK)
            return st;
    }
    return PB_OK;
}

static pb_status tachyon_replay(tr *r)
{
    pb_source *s = r->s;
    pb_status st;
    uint64_t region_end = r->str_off;
    for (;;) {
        uint64_t rec_off = pb_src_offset(s), tid;
        uint32_t iid;
        unsigned enc;
        t_thread *t = NULL;
        int got = pb_src_need(s, 13);
        if (got < 0)
            return r->err->status;
        if (got == 0) {
            size_t left = pb_src_avail(s);
            if (left == 0)
                break;
            return pb_fail(r->err, PB_ERR_TRUNCATED, rec_off,
                           "sample record header needs 13 bytes (thread id, interpreter id, encoding): %zu "
                           "trailing byte%s before the string table", left, left == 1 ? "" : "s");
        }
        tid = pb_load64(s->p, r->swap);
        iid = pb_load32(s->p + 8, r->swap);
        enc = s->p[12];
        s->p += 13;
        if ((st = tachyon_get_thread(r, tid, iid, rec_off, &t)) != PB_OK)
            return st;
        if (enc == 0) {
            if ((st = replay_repeat(r, t, rec_off, region_end)) != PB_OK)
                return st;
            continue;
        }
        if (enc > 3)
            return pb_fail(r->err, PB_ERR_CORRUPT, rec_off + 12,
                           "unknown stack encoding %u (expected 0 REPEAT, 1 FULL, 2 SUFFIX or 3 POP_PUSH)", enc);
        if ((st = replay_stack(r, t, enc, rec_off)) != PB_OK)
            return st;
    }
    if (r->total != r->sample_count && !r->blind)
        return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(s),
                       "sample count mismatch: the header declares %llu samples, the sample data holds %llu",
                       (unsigned long long)r->sample_count, (unsigned long long)r->total);
    return PB_OK;
}

static pb_status tachyon_end_attributes(tr *r)
{
    pb_status st;
    char buf[32 * 256 + 1];
    size_t n = 0;
    int k;
    if (r->app_frame != T_NONE) {
        const t_frame *fr = &r->frames[r->app_frame];
        st = r->out->attribute(r->out, "application",
                               pb_str_make(r->strbuf + r->strs[fr->file].at, r->strs[fr->file].len, 1));
    } else {
        const char *f = r->err->file;
        const char *b = strrchr(f, '/');
        st = tachyon_attr(r, "application", f[0] ? (b ? b + 1 : f) : "tachyon");
    }
    if (st != PB_OK)
        return st;
    buf[0] = '\0';
    for (k = 0; k < 256; k++)
        if (r->hist[k])
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%d:%llu", n ? "," : "", k,
                                  (unsigned long long)r->hist[k]);
    if (r->op_samples && (st = tachyon_attr_u64(r, "opcode_samples", r->op_samples)) != PB_OK)
        return st;
    return tachyon_attr(r, "sample_status_counts", buf);
}

static void tr_free(void *p)
{
    tr *r = (tr *)p;
    size_t i;
    for (i = 0; i < r->nthreads; i++)
        PB_FREE_ALL(r->threads[i]->fidx, r->threads[i]->ids, r->threads[i]);
    PB_FREE_ALL(r->strbuf, r->strs, r->frames, r->cache, r->threads, r->pkgbuf, r->namebuf, r->kept);
    pb_index_free(&r->tix);
}

/* header + tables; leaves src at the start of the sample region; the fold's
 * weight is the sampling interval */
static pb_status tachyon_prepare(void *p, pb_fold_config *cfg)
{
    tr *r = (tr *)p;
    pb_status st;
    uint64_t frames_end = 0;
    r->row = cfg->row;
    st = tachyon_read_header(r);
    if (st == PB_ERR_TRUNCATED && r->opt->salvage && r->header_ok && r->size != UINT64_MAX &&
        r->size >= T_HEADER) {
        /* cut before its tables: replay the samples that are there, with
         * unnamed frames (see blind_ids) */
        r->lost = *r->err;
        r->err->status = PB_OK;
        r->err->message[0] = '\0';
        r->blind = 1;
        if (r->str_off > r->size)
            r->str_off = r->size;
    } else if (st != PB_OK || (st = read_footer(r)) != PB_OK || (st = read_strings(r)) != PB_OK ||
               (st = read_frames(r, &frames_end)) != PB_OK || (st = read_trailer(r, frames_end)) != PB_OK) {
        return st;
    }
    pb_src_set_limit(r->s, UINT64_MAX);
    if ((st = pb_src_seek(r->s, T_HEADER)) != PB_OK)
        return st;
    pb_src_set_limit(r->s, r->str_off);
    cfg->ticks_per_weight = r->interval;
    return PB_OK;
}

static pb_status tachyon_end_attributes(tr *r);

/* salvage: close the fold on the samples replayed so far, then warn with the
 * error that stopped us (the lost tables in blind mode, else the cut) */
static pb_status salvage_end(tr *r)
{
    pb_status st;
    pb_error why = r->blind ? r->lost : *r->err;
    r->err->status = PB_OK;
    if ((st = tachyon_end_attributes(r)) != PB_OK || (st = r->out->finish(r->out)) != PB_OK) {
        if (r->err->status == PB_OK)
            r->err->status = st;
        return st;
    }
    *r->err = why;
    return pb_salvage_warn(r->err, r->warn_sink, "%llu sample%s%s", (unsigned long long)r->total,
                           r->total == 1 ? "" : "s",
                           r->blind ? " with unnamed frames \"<frame N>\" (the names were in the lost tables)" : "");
}

static pb_status tachyon_decode(void *p, pb_sample_sink *out)
{
    tr *r = (tr *)p;
    pb_status st;
    uint64_t bound = 0, lim = r->opt->max_decompressed_bytes;
    r->out = out;
    if ((st = header_attributes(r)) != PB_OK)
        return st;
    if (r->compression == 1) {
        if ((st = pb_src_start_zstd(r->s, r->str_off)) != PB_OK)
            return st;
        /* a zstd bomb can't pass for samples: cap the inflated region at what
         * the header's sample count could occupy */
        bound = r->sample_count > (UINT64_MAX - 65536) / T_MAX_SAMPLE_BYTES
                    ? UINT64_MAX
                    : r->sample_count * T_MAX_SAMPLE_BYTES + 65536;
        if (!lim || bound < lim)
            r->s->max_inflated = bound;
    }
    st = tachyon_replay(r);
    if (r->opt->salvage && (r->blind || st == PB_ERR_TRUNCATED) && (st == PB_OK || st == PB_ERR_TRUNCATED))
        return salvage_end(r);
    if (st == PB_ERR_LIMIT && bound && r->s->max_inflated == bound &&
        strstr(r->err->message, "max_decompressed_bytes")) {
        snprintf(r->err->message, sizeof r->err->message,
                 "zstd sample region inflates past %llu bytes, more than the header's %llu samples can occupy "
                 "(zstd bomb?)",
                 (unsigned long long)bound, (unsigned long long)r->sample_count);
    }
    if (st != PB_OK)
        return st;
    if (r->opt->have_thread) {
        size_t i;
        int found = 0;
        for (i = 0; i < r->nthreads; i++)
            found |= r->threads[i]->selected;
        if (!found) {
            char list[256];
            size_t n = 0;
            list[0] = '\0';
            for (i = 0; i < r->nthreads && n < sizeof list - 40; i++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%llu", i ? ", " : "",
                                      (unsigned long long)r->threads[i]->tid);
            if (r->opt->thread_name) /* a name is not a thread id: never thread 0 */
                return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED,
                               "no thread \"%.100s\": Tachyon threads are numbered (its threads: %s%s)",
                               r->opt->thread_name, list, i < r->nthreads ? ", ..." : "");
            return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED, "no thread %llu in this profile (its threads: %s%s)",
                           (unsigned long long)r->opt->thread_id, list, i < r->nthreads ? ", ..." : "");
        }
    }
    if ((st = tachyon_end_attributes(r)) != PB_OK)
        return st;
    return r->out->finish(r->out);
}

static void tr_init(void *p, pb_source *src, const pb_options *opt, pb_sink *warn_sink, pb_error *err)
{
    tr *r = (tr *)p;
    r->s = src;
    r->err = err;
    pb_rd_init(&r->rd, src, err, "%s needs %zu more byte%s for its %s, only %zu left", opt->max_record_size);
    r->opt = opt;
    r->warn_sink = warn_sink;
    r->app_frame = T_NONE;
    r->app_dist = UINT32_MAX;
    r->max_depth = opt->max_stack_depth && opt->max_stack_depth < T_MAX_DEPTH ? opt->max_stack_depth : T_MAX_DEPTH;
}

/* nytprof.out's time is the sampled time; the weight: tachyon_prepare(); weight x interval ticks split into
 * TIME_LINEs charged to max_statements (split): a huge interval turns a few bytes into many */
const pb_fold_decoder pb_tachyon_decoder = {sizeof(tr), tr_init, tachyon_prepare, tachyon_decode, tr_free,
    {.source_format = "tachyon", .ticks_per_sec = 1000000, .fid_flags = pb_fid_flags_angled, .sampled_spans = 1,
     .split = {.words = "sample of weight {weight} x {interval} us needs {extra} more TIME_LINE chunks than the "
                        "{left} left of max_statements"}}};
