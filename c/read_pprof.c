/* read_pprof.c - pprof's profile.proto (perftools.profiles.Profile: Go's
 * runtime/pprof and `go test -cpuprofile`, pprof-rs, Pyroscope and Parca
 * exports, async-profiler), gzipped (as every writer of it does) or not.
 *
 * The schema is google/pprof's proto/profile.proto; the protobuf wire format
 * is decoded here by hand on the reader primitives (reader.h): a field is a
 * LEB128 tag (field number << 3 | wire type), then a varint (wire type 0),
 * 8 or 4 bytes (1, 5) or a LEB128 length and that many bytes (2).  What we
 * use of a Profile (field numbers):
 *   1 sample_type (ValueType: 1 type, 2 unit; string indices)
 *   2 sample      (1 location_id, packed or not, leaf first; 2 value, one
 *                  per sample_type; 3 label: 1 key, 2 str, 3 num)
 *   3 mapping     (1 id, 5 filename)
 *   4 location    (1 id, 2 mapping_id, 3 address, 4 line: 1 function_id,
 *                  2 line; several lines = inlined calls, the first the
 *                  innermost, the last the function they were inlined into)
 *   5 function    (1 id, 2 name, 3 system_name, 4 filename, 5 start_line)
 *   6 string_table (string_table[0] is "")
 *   7 drop_frames, 8 keep_frames, 9 time_nanos, 10 duration_nanos,
 *   11 period_type, 12 period, 13 comment, 14 default_sample_type
 * Unknown fields are skipped by their wire type, as protobuf wants.
 *
 * Two passes.  protobuf fixes no order of fields, and Go's runtime/pprof
 * writes the samples FIRST and the string, function and location tables
 * after them, so a sample cannot be named when it is read.  Holding the
 * samples until the tables arrive would grow with the file; instead the
 * source is read twice (pb_src_rewind; a gzipped file is inflated twice):
 *   pass 1 keeps the tables (strings, functions, locations, mappings,
 *          sample types, the scalars) and skips every sample;
 *   pass 2 skips everything but the samples and streams each one to the
 *          sample sink as it is read.
 * One pass, for a sink that only sums stacks (samples.h sums_stacks, and no
 * sample_values: the stack targets that only sum; or the fold of a sink that
 * only counts, told each sum's samples: sample_sum): pass 1 keeps each
 * distinct sample as it reads it (agg_sample: its fields but its values
 * as the key of a stack table, its values summed) and sends each one once
 * at the end, in the order first seen; pass 2 is not run unless the sums
 * could differ from reading every sample (agg_usable).
 * Memory: the tables (unique strings, functions, locations) and one
 * sample, and in one pass the distinct samples (at most
 * PB_STACK_TABLE_MAX_BYTES, then pass 2); never the samples, whatever
 * their number.  Pass 2 finds a
 * location by a direct map of its id when the ids are dense (as writers
 * number them: the largest below 2 x the locations read + 64; else the
 * hash index), with its interned frames beside it, and the thread of a
 * sample's labels in a small cache of the last ones seen.  Input that cannot be
 * read twice (a pipe) is refused in C; the Perl layer copies such input to
 * a temporary file first.
 *
 * The mapping onto samples (Formats.pod, "pprof"):
 *   weight: the value of one sample type: --sample-type NAME (pb_options
 *           sample_type), else the one default_sample_type names, else the
 *           last, as pprof chooses.  A time unit (nanoseconds, microseconds,
 *           milliseconds, seconds) becomes ns (ATTRIBUTE sample_weight_unit
 *           ns); other units (count, bytes) stay as they are.  Samples of
 *           weight 0 carry nothing and are left out; a negative one (a
 *           pprof -diff_base profile) is refused.
 *   frames: each Line of each Location, innermost first, as pprof -traces
 *           lists them; name = the function's name (shown as is by the
 *           stack outputs); for nytprof.out package::name from a Go name
 *           ("runtime/pprof.Do" -> runtime::pprof::Do); file, line, and the
 *           function's start line.  A location without lines is "0x<address>"
 *           in its mapping's file.
 *   threads: the labels thread / tid (string or number) name a sample's
 *           thread, pid its process; samples with none are thread "main".
 *           Keys are dense, in order of first appearance (pid = key + 1,
 *           ATTRIBUTE thread_<pid>_pid = the pid label), found through one
 *           pb_strtab; more than max_threads of them is a limit error.
 * Bounds before bytes are read: the string table (kept whole) at most
 * max_string_bytes in all (each string and its NUL); one Sample at most the bytes max_stack_depth
 * location ids and 1 MiB of values and labels take (pass 1 checks).
 *   attributes: sample_types (all of them, "type/unit,..."), sample_type
 *           (the one read), default_sample_type, period, period_type,
 *           time_nanos (-> basetime), duration_nanos (-> profile_duration_sec),
 *           comment, drop_frames, keep_frames, application (the first
 *           mapping's file), total_samples.
 *   for a sink that takes them (samples.h): every sample type (columns),
 *           the mappings, each sample's values and labels as recorded
 *           (sample_values; then samples of weight 0 whose other values
 *           are not 0 are sent too), each frame's address, mapping and
 *           place (inlined into the next outer frame) and system name.
 *
 * Names here: pr = this reader's state ("pprof reader"; another reader has a pr of its own), msg = a
 * message held in memory, fld = one field of it, top = a field at the top level of the profile,
 * p_vt = a ValueType, p_map = a Mapping; h_ = hash callbacks of a pb_index.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "options.h"
#include "read_pprof.h"
#include "reader.h"
#include "util.h"
#include "fold_samples.h"
#include "model.h"
#include "stack_table.h"

#define P_NONE UINT32_MAX
#define P_MAX_FIELD 536870911u /* 2^29 - 1: protobuf's largest field number */

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

typedef struct {
    uint64_t id;
    uint32_t name, sysname, file; /* string indices */
    int64_t start_line;
} p_func;

typedef struct {
    uint64_t id, address, mapping;
    uint32_t line0, nlines; /* in the line pool */
    uint32_t ids;           /* first sink id in the id pool (P_NONE: not interned yet) */
} p_loc;

typedef struct {
    uint64_t func; /* function id */
    int64_t line;
} p_line;

typedef struct {
    uint64_t id, start, limit, offset;
    uint32_t file, build_id; /* string indices */
    unsigned flags;          /* PB_MAP_* (samples.h) */
    uint32_t sink_id;        /* the sink's mapping id (0: none) */
} p_map;

typedef struct {
    uint32_t type, unit;
} p_vt;

/* pass 1's distinct samples, for a sink that sums stacks (the top of the
 * file, "One pass") */
#define P_AGG_VALUES 8      /* values per sample at most */
#define P_AGG_BYTES 4096    /* bytes of a sample at most */
#define P_AGG_KEY (P_AGG_BYTES / 4 + 1)
#define P_AGG_BATCH 16      /* samples read before their stacks are probed */
typedef struct {
    int on;                 /* still gathering (else pass 2 reads the samples) */
    pb_stack_table t;       /* key: the bytes of a sample's fields but its values (as words, key = their
                             * length); kept with it: its values' sums (nv x 64 bits), its first sample's
                             * offset (64 bits), the columns that were 0 in that sample (32 bits), those
                             * 0 in any of its samples (32 bits), its samples (64 bits: sample_sum) */
    uint32_t nv;            /* values per sample (UINT32_MAX: no sample yet) */
    uint32_t neg;           /* the columns with a negative value */
    uint64_t vmax[P_AGG_VALUES]; /* each column's largest value */
    uint64_t samples;
    unsigned char *buf;     /* a sample that straddles the window, copied; a replayed one */
    size_t cbuf;
    uint32_t *key;          /* the keys of the samples read but not yet added (P_AGG_KEY words each) */
    size_t ckey;
    struct p_pend {         /* ... and the rest of them: each one's stack asked for ahead (prefetch) */
        uint32_t hash, words, bytes, zero;
        uint64_t off;
        uint64_t vals[P_AGG_VALUES];
    } pend[P_AGG_BATCH];
    unsigned npend;
} p_agg;

/* the value of a thread, tid or pid label: the string str (P_NONE: no such
 * label), or the number num when is_num */
typedef struct {
    uint32_t str;
    int is_num;
    int64_t num;
} p_label;

static int same_label(const p_label *a, const p_label *b)
{
    return a->str == b->str && a->is_num == b->is_num && a->num == b->num;
}

typedef struct {
    pb_source *s;
    pb_error *err;
    pb_rd rd;
    const pb_options *opt;
    pb_sample_sink *out;
    int gzip;
    /* pass 1: the tables */
    char *arena;
    size_t narena, carena;
    uint64_t *soff;           /* string i = arena + soff[i] .. soff[i + 1] - 1 (NUL after each) */
    size_t nstr, cstr;
    p_func *funcs;
    size_t nfuncs, cfuncs;
    p_loc *locs;
    size_t nlocs, clocs;
    p_line *lines;
    size_t nlines, clines;
    p_map *maps;
    size_t nmaps, cmaps;
    p_vt *types;
    size_t ntypes, ctypes;
    uint64_t *comments;
    size_t ncomments, ccomments;
    pb_index tfunc, tloc, tmap; /* by id */
    uint32_t *locmap;         /* location id -> its index in locs (P_NONE: none), when the ids are dense */
    uint32_t *locfr;          /* ... and its frames once interned: ids offset << 8 | count (0: not yet, or
                               * 255 frames or more: loc_ids) */
    size_t nlocmap;           /* ids below it are in locmap (0: no map, tloc finds them) */
    int64_t time_nanos, duration_nanos, period, default_type, drop_frames, keep_frames;
    p_vt period_type;
    int have_period_type;
    /* the sample type read */
    uint32_t vindex;
    uint64_t unit_ns;         /* ns per unit of weight (time units), 0: not a time */
    /* pass 2 */
    int64_t *values;          /* the sample being read: its values (one per sample type) */
    size_t cvalues;
    pb_label *labels;         /* ... and its labels, for a sink that takes them (sample_values) */
    size_t nlabels, clabels;
    uint32_t *ids;            /* sink ids of interned frames, per location line */
    size_t nids, cids;
    uint32_t *stack;          /* the sample being read: sink ids, innermost first */
    size_t cstack;
    uint64_t *slocs;          /* its location ids */
    size_t nslocs, cslocs;
    pb_strtab threads;        /* "<thread label>\0<pid label>" of each thread: key = id, in order of first appearance */
    struct p_tcache {         /* the threads of the labels recently seen (a thread's first one went through thread_of) */
        p_label thread, pid;
        uint32_t key;
        int sel, valid;
    } tcache[8];
    unsigned char *tsel;      /* per thread: selected by --thread */
    size_t ctsel;
    uint64_t samples;
    uint64_t sample_off;      /* the offset of the Sample being sent (sample_at) */
    char *pkgbuf, *abuf;      /* scratch: a Go package as Perl's, a cleaned copy */
    size_t cpkg, cabuf;
    p_agg agg;                /* pass 1's distinct samples */
    const struct p_msg *replay; /* sample_field's sample when replaying one of them */
    uint64_t replay_n;          /* ... and the samples it stands for */
} pr;

static pb_status pprof_oom(pr *r) { return pb_rd_oom(&r->rd); }

static pb_status corrupt_at(pr *r, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static pb_status corrupt_at(pr *r, uint64_t off, const char *fmt, ...)
{
    char msg[PB_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pb_fail(r->err, PB_ERR_CORRUPT, off, "%s", msg);
}

/* ---- a message held in memory: bounded field reads ------------------------ */
typedef struct p_msg {
    const unsigned char *p, *end, *start;
    uint64_t off;     /* file offset of start (logical: inflated bytes in gzip) */
    const char *rec;  /* "Sample", "Location", ... */
} msg;

typedef struct {
    uint32_t field;
    unsigned wt;
    uint64_t v;                /* wire types 0, 1, 5 */
    const unsigned char *data; /* wire type 2 */
    size_t len;
} fld;

static uint64_t msg_off(const msg *m) { return m->off + (uint64_t)(m->p - m->start); }

static inline int msg_varint(msg *m, uint64_t *v)
{
    uint64_t x = 0;
    unsigned k = 0;
    int done;
    if (m->p >= m->end)
        return -1;
    if (*m->p < 0x80) { /* the common one-byte case */
        *v = *m->p++;
        return 0;
    }
    while ((done = pb_leb128_step(&x, k, *m->p, 0)) == 0) {
        m->p++;
        if (++k > 9 || m->p >= m->end)
            return -1;
    }
    if (done < 0)
        return -1;
    m->p++;
    *v = x;
    return 0;
}

/* the next field of m: 1, 0 at its end, -1 malformed (no error recorded;
 * *tag: its tag as far as read, else 0) */
static inline int msg_next(msg *m, fld *f, uint64_t *tag)
{
    *tag = 0;
    if (m->p >= m->end)
        return 0;
    if (msg_varint(m, tag) < 0)
        return -1;
    f->field = (uint32_t)(*tag >> 3);
    f->wt = (unsigned)(*tag & 7);
    if ((*tag >> 3) == 0 || (*tag >> 3) > P_MAX_FIELD)
        return -1;
    switch (f->wt) {
    case WT_VARINT:
        return msg_varint(m, &f->v) < 0 ? -1 : 1;
    case WT_I64:
    case WT_I32: {
        size_t n = f->wt == WT_I64 ? 8 : 4;
        if ((size_t)(m->end - m->p) < n)
            return -1;
        f->v = n == 8 ? pb_le64(m->p) : pb_le32(m->p);
        m->p += n;
        return 1;
    }
    case WT_LEN:
        if (msg_varint(m, &f->v) < 0 || f->v > (uint64_t)(m->end - m->p))
            return -1;
        f->data = m->p;
        f->len = (size_t)f->v;
        m->p += f->len;
        return 1;
    default:
        return -1;
    }
}

/* the next field of m: 1, 0 at its end, or a corrupt error (returned as -1) */
static inline int msg_field(pr *r, msg *m, fld *f)
{
    uint64_t tag, at = msg_off(m);
    int k = msg_next(m, f, &tag);
    if (k >= 0)
        return k;
    corrupt_at(r, at, "%s: malformed protobuf field (a tag, varint or length that runs past the %s's %llu bytes, "
                      "or wire type %u)",
               m->rec, m->rec, (unsigned long long)(m->end - m->start), (unsigned)(tag & 7));
    return -1;
}

/* a field of a scalar type must come as one: wrong wire type is corrupt */
static int want_wt(pr *r, const msg *m, const fld *f, unsigned wt)
{
    if (f->wt == wt)
        return 0;
    corrupt_at(r, msg_off(m), "%s field %u has wire type %u, profile.proto says %u", m->rec, f->field, f->wt, wt);
    return -1;
}

/* a repeated integer field, packed (wire type 2) or not: each value to fn */
static int each_int(pr *r, msg *m, const fld *f, int (*fn)(pr *r, uint64_t v, void *ctx), void *ctx)
{
    msg pk;
    uint64_t v;
    if (f->wt == WT_VARINT)
        return fn(r, f->v, ctx);
    if (want_wt(r, m, f, WT_LEN) < 0)
        return -1;
    pk.start = pk.p = f->data;
    pk.end = f->data + f->len;
    pk.off = m->off + (uint64_t)(f->data - m->start);
    pk.rec = m->rec;
    while (pk.p < pk.end) {
        if (msg_varint(&pk, &v) < 0) {
            corrupt_at(r, msg_off(&pk), "%s field %u: a packed varint runs past its %zu bytes", m->rec, f->field,
                       f->len);
            return -1;
        }
        if (fn(r, v, ctx) < 0)
            return -1;
    }
    return 0;
}

static msg sub_msg(const msg *m, const fld *f, const char *rec)
{
    msg s;
    s.start = s.p = f->data;
    s.end = f->data + f->len;
    s.off = m->off + (uint64_t)(f->data - m->start);
    s.rec = rec;
    return s;
}

/* ---- strings ------------------------------------------------------------------ */

/* a copy of n bytes into *buf (grown), controls made spaces, NUL after */
static char *clean_copy(pr *r, char **buf, size_t *cap, const char *s, size_t n)
{
    if (n >= SIZE_MAX || pb_grow((void **)buf, cap, n + 1, 1) < 0)
        return pprof_oom(r), NULL;
    memcpy(*buf, s, n);
    (*buf)[n] = '\0';
    pb_controls_to_spaces(*buf, n);
    return *buf;
}

static const char *pprof_str_at(const pr *r, uint32_t i, size_t *len)
{
    *len = (size_t)(r->soff[i + 1] - r->soff[i] - 1);
    return r->arena + r->soff[i];
}

static pb_status add_string(pr *r, const unsigned char *p, size_t n)
{
    if (r->nstr >= r->opt->max_strings)
        return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(r->s), "more than max_strings (%u) strings",
                       r->opt->max_strings);
    if (r->nstr == 0 && n != 0)
        return corrupt_at(r, pb_src_offset(r->s), "string_table[0] must be the empty string, it is %zu bytes", n);
    if (pb_grow((void **)&r->arena, &r->carena, r->narena + n + 1, 1) < 0 ||
        pb_grow((void **)&r->soff, &r->cstr, r->nstr + 2, sizeof *r->soff) < 0)
        return pprof_oom(r);
    if (n)
        memcpy(r->arena + r->narena, p, n);
    r->arena[r->narena + n] = '\0';
    r->soff[r->nstr] = r->narena;
    r->narena += n + 1;
    r->soff[++r->nstr] = r->narena;
    return PB_OK;
}

/* ---- pass 1: the tables ---------------------------------------------------------- */
/* Where a table's message keeps its varint field i (p_slot[i]): as the
 * varint (P_U64), as int64_t (P_I64), as a string index (P_STR, uint32_t;
 * past UINT32_MAX clamped: past any table), or a bool that sets `bit` in
 * an unsigned (P_FLAG: set by any true one).  Each message is one table. */
enum { P_NO_SLOT, P_U64, P_I64, P_STR, P_FLAG };
typedef struct {
    unsigned char kind;
    unsigned short at; /* offsetof the member */
    unsigned bit;
} p_slot;

/* Read message m into rec (zeroed first, `size` bytes) by slots[1..n]: a
 * field of those with another wire type than a varint is corrupt, any other
 * field skipped (the last of a repeated one wins, but for P_FLAG).  0, or -1
 * after the error. */
static int read_varints(pr *r, msg *m, void *rec, size_t size, const p_slot *slots, uint32_t n)
{
    fld f;
    int k;
    memset(rec, 0, size);
    while ((k = msg_field(r, m, &f)) > 0) {
        const p_slot *sl = &slots[f.field >= 1 && f.field <= n ? f.field : 0];
        char *at = (char *)rec + sl->at;
        if (sl->kind == P_NO_SLOT)
            continue;
        if (want_wt(r, m, &f, WT_VARINT) < 0)
            return -1;
        switch (sl->kind) {
        case P_U64: *(uint64_t *)(void *)at = f.v; break;
        case P_I64: *(int64_t *)(void *)at = (int64_t)f.v; break;
        case P_STR: *(uint32_t *)(void *)at = (uint32_t)(f.v > UINT32_MAX ? UINT32_MAX : f.v); break;
        default: *(unsigned *)(void *)at |= f.v ? sl->bit : 0; break;
        }
    }
    return k;
}

/* ValueType: type, unit (checked when the table is complete) */
static const p_slot vt_slots[] = {{0}, {P_STR, offsetof(p_vt, type), 0}, {P_STR, offsetof(p_vt, unit), 0}};
static const p_slot func_slots[] = {{0}, {P_U64, offsetof(p_func, id), 0}, {P_STR, offsetof(p_func, name), 0},
    {P_STR, offsetof(p_func, sysname), 0}, {P_STR, offsetof(p_func, file), 0},
    {P_I64, offsetof(p_func, start_line), 0}};
static const p_slot line_slots[] = {{0}, {P_U64, offsetof(p_line, func), 0}, {P_I64, offsetof(p_line, line), 0}};
static const p_slot map_slots[] = {{0}, {P_U64, offsetof(p_map, id), 0}, {P_U64, offsetof(p_map, start), 0},
    {P_U64, offsetof(p_map, limit), 0}, {P_U64, offsetof(p_map, offset), 0}, {P_STR, offsetof(p_map, file), 0},
    {P_STR, offsetof(p_map, build_id), 0}, {P_FLAG, offsetof(p_map, flags), PB_MAP_FUNCTIONS},
    {P_FLAG, offsetof(p_map, flags), PB_MAP_FILENAMES}, {P_FLAG, offsetof(p_map, flags), PB_MAP_LINES},
    {P_FLAG, offsetof(p_map, flags), PB_MAP_INLINES}};
#define READ_VARINTS(r, m, rec, slots) read_varints(r, m, rec, sizeof *(rec), slots, sizeof slots / sizeof *slots - 1)

static int read_value_type(pr *r, msg *m, p_vt *vt) { return READ_VARINTS(r, m, vt, vt_slots); }

/* -1 after the error when a table of n entries already holds max_frames */
static int full(pr *r, uint64_t off, size_t n, const char *what)
{
    if (n < r->opt->max_frames)
        return 0;
    pb_fail(r->err, PB_ERR_LIMIT, off, "more than max_frames (%u) %s", r->opt->max_frames, what);
    return -1;
}

/* append item (elem bytes) to the table *arr of *n entries (*cap allocated): 0, or -1 out of memory */
static int push(pr *r, void **arr, size_t *n, size_t *cap, const void *item, size_t elem)
{
    return pb_append(arr, n, cap, item, 1, elem) < 0 ? (pprof_oom(r), -1) : 0;
}

static int read_function(pr *r, msg *m)
{
    p_func fn;
    if (READ_VARINTS(r, m, &fn, func_slots) < 0 || full(r, m->off, r->nfuncs, "functions") < 0)
        return -1;
    return push(r, (void **)&r->funcs, &r->nfuncs, &r->cfuncs, &fn, sizeof fn);
}

static int read_line(pr *r, msg *m, p_line *ln) { return READ_VARINTS(r, m, ln, line_slots); }

static int read_location(pr *r, msg *m)
{
    fld f;
    int k;
    p_loc lc;
    memset(&lc, 0, sizeof lc);
    lc.line0 = (uint32_t)r->nlines;
    lc.ids = P_NONE;
    while ((k = msg_field(r, m, &f)) > 0) {
        if (f.field == 4) {
            msg lm;
            if (want_wt(r, m, &f, WT_LEN) < 0 || full(r, msg_off(m), r->nlines, "location lines") < 0)
                return -1;
            if (pb_grow((void **)&r->lines, &r->clines, r->nlines + 1, sizeof *r->lines) < 0)
                return pprof_oom(r), -1;
            lm = sub_msg(m, &f, "Line");
            if (read_line(r, &lm, &r->lines[r->nlines]) < 0)
                return -1;
            r->nlines++;
            lc.nlines++;
            continue;
        }
        if (f.field >= 1 && f.field <= 3 && want_wt(r, m, &f, WT_VARINT) < 0)
            return -1;
        if (f.field == 1)
            lc.id = f.v;
        else if (f.field == 2)
            lc.mapping = f.v;
        else if (f.field == 3)
            lc.address = f.v;
    }
    if (k < 0 || full(r, m->off, r->nlocs, "locations") < 0)
        return -1;
    return push(r, (void **)&r->locs, &r->nlocs, &r->clocs, &lc, sizeof lc);
}

static int read_mapping(pr *r, msg *m)
{
    p_map mp;
    if (READ_VARINTS(r, m, &mp, map_slots) < 0 || full(r, m->off, r->nmaps, "mappings") < 0)
        return -1;
    return push(r, (void **)&r->maps, &r->nmaps, &r->cmaps, &mp, sizeof mp);
}

static int add_comment(pr *r, uint64_t v, void *ctx)
{
    (void)ctx;
    if (r->ncomments >= 64)
        return 0; /* the first 64 are plenty for an attribute */
    return push(r, (void **)&r->comments, &r->ncomments, &r->ccomments, &v, sizeof v);
}

/* ---- the top level: a stream of fields ------------------------------------------- */
/* profile.proto's wire type for each Profile field (0: unknown field, any) */
static int top_wt(uint32_t field)
{
    static const signed char wt[16] = {-1, WT_LEN, WT_LEN, WT_LEN, WT_LEN, WT_LEN, WT_LEN, WT_VARINT, WT_VARINT,
                                       WT_VARINT, WT_VARINT, WT_LEN, WT_VARINT, -2, WT_VARINT, WT_VARINT};
    return field < 16 ? wt[field] : -1;
}

typedef struct {
    uint32_t field;
    unsigned wt;
    uint64_t v;       /* varint value, or the length of a wire type 2 field */
    uint64_t off;     /* where the field's tag starts */
} top;

/* the next top-level field's tag (and value, or length): 1, 0 at the end, <0 error */
static int top_field(pr *r, top *t)
{
    int end;
    uint64_t tag;
    pb_status st;
    if ((st = pb_rd_at_end(&r->rd, &end)) != PB_OK)
        return -1;
    if (end)
        return 0;
    t->off = pb_rd_offset(&r->rd);
    r->rd.rec = "Profile field";
    if (pb_rd_leb128(&r->rd, &tag, 0, "tag") != PB_OK)
        return -1;
    t->field = (uint32_t)(tag >> 3);
    t->wt = (unsigned)(tag & 7);
    if ((tag >> 3) == 0 || (tag >> 3) > P_MAX_FIELD || (t->wt != WT_VARINT && t->wt != WT_I64 &&
                                                         t->wt != WT_LEN && t->wt != WT_I32)) {
        corrupt_at(r, t->off, "Profile field tag %llu is not a protobuf field (field number %llu, wire type %u)",
                   (unsigned long long)tag, (unsigned long long)(tag >> 3), t->wt);
        return -1;
    }
    if (top_wt(t->field) >= 0 && (unsigned)top_wt(t->field) != t->wt) {
        corrupt_at(r, t->off, "Profile field %u has wire type %u, profile.proto says %d", t->field, t->wt,
                   top_wt(t->field));
        return -1;
    }
    if (top_wt(t->field) == -2 && t->wt != WT_VARINT && t->wt != WT_LEN) {
        corrupt_at(r, t->off, "Profile field %u (comment) has wire type %u", t->field, t->wt);
        return -1;
    }
    if (t->wt == WT_VARINT || t->wt == WT_LEN)
        return pb_rd_leb128(&r->rd, &t->v, 0, t->wt == WT_LEN ? "length" : "value") == PB_OK ? 1 : -1;
    return pb_rd_skip(&r->rd, t->wt == WT_I64 ? 8 : 4, "value") == PB_OK ? 1 : -1;
}

/* the payload of a wire type 2 top-level field, in the window, as a message */
static int top_payload(pr *r, const top *t, const char *rec, msg *m)
{
    r->rd.rec = rec;
    if (t->v > SIZE_MAX - 1) {
        pb_fail(r->err, PB_ERR_TRUNCATED, pb_src_offset(r->s), "%s of %llu bytes runs past the end of the input", rec,
                (unsigned long long)t->v);
        return -1;
    }
    if (pb_rd_need(&r->rd, (size_t)t->v, "bytes") != PB_OK)
        return -1;
    m->start = m->p = r->s->p;
    m->end = r->s->p + t->v;
    m->off = pb_src_offset(r->s);
    m->rec = rec;
    r->s->p += t->v;
    return 0;
}

/* 1 when n bytes from here run past the end of a plain input of known size
 * (then truncated, which the read says, is the error rather than a limit) */
static int past_end(pr *r, uint64_t n)
{
    uint64_t size = pb_src_size(r->s), at = pb_src_offset(r->s);
    return !r->gzip && size != UINT64_MAX && (at > size || n > size - at);
}

/* ---- one pass: pass 1 keeps each distinct sample ---------------------------------
 * For a sink that sums stacks (samples.h sums_stacks: the result depends only
 * on each distinct stack's summed weight and on the order stacks are first
 * seen) pass 1 keeps each distinct sample once, as it reads it: the bytes of
 * its fields but its values (locations, labels) are the key of a stack table,
 * its values summed beside them.  After pass 1 each one is sent as one sample
 * of the summed values, in the order first seen (agg_replay), through the
 * same sample_field as pass 2's, and the input is not read again.  Anything
 * the sums could change falls back to pass 2, before any sample is sent: a
 * sample the replay would refuse (its error then comes from pass 2, at its
 * own offset), a negative value or one that would split, a sample whose
 * weight is 0 where a later one of the same key's is not, samples of
 * different numbers of values, a sample of more than P_AGG_BYTES bytes, the
 * table full (PB_STACK_TABLE_MAX_BYTES: memory stays bounded), or out of
 * memory.  Per sample: its fields walked, one hash, one probe. */
static void agg_stop(pr *r)
{
    if (!r->agg.on)
        return;
    r->agg.on = 0;
    r->agg.npend = 0;
    pb_stack_table_free(&r->agg.t);
}

/* the 64 bits at 32-bit words w */
static uint64_t agg_get(const uint32_t *w)
{
    uint64_t v;
    memcpy(&v, w, sizeof v);
    return v;
}

static void agg_put(uint32_t *w, uint64_t v) { memcpy(w, &v, sizeof v); }

/* the samples read since the last call into the table (their stacks asked
 * for as each was read): 0, or -1 when the gathering stopped */
static int agg_flush(pr *r)
{
    p_agg *a = &r->agg;
    uint32_t more[P_AGG_VALUES * 2 + 6];
    unsigned b;
    size_t i;
    for (b = 0; b < a->npend && a->on; b++) {
        const struct p_pend *q = &a->pend[b];
        uint32_t *key = a->key + (size_t)b * P_AGG_KEY;
        pb_stack_head *h = pb_stack_table_find_h(&a->t, q->hash, q->bytes, key, q->words);
        if (h) {
            uint32_t *s = pb_stack_table_more(h);
            for (i = 0; i < a->nv; i++) {
                uint64_t sum = agg_get(s + 2 * i);
                if (sum + q->vals[i] < sum)
                    break;
                agg_put(s + 2 * i, sum + q->vals[i]);
            }
            if (i < a->nv)
                agg_stop(r);
            s[2 * a->nv + 3] |= q->zero;
            agg_put(s + 2 * a->nv + 4, agg_get(s + 2 * a->nv + 4) + 1);
            continue;
        }
        for (i = 0; i < a->nv; i++)
            agg_put(more + 2 * i, q->vals[i]);
        agg_put(more + 2 * a->nv, q->off);
        more[2 * a->nv + 2] = more[2 * a->nv + 3] = q->zero;
        agg_put(more + 2 * a->nv + 4, 1);
        if (a->t.oom || pb_stack_table_add_more(&a->t, q->bytes, key, q->words, 0, 0, more, 2 * a->nv + 6) != 1)
            agg_stop(r);
    }
    a->npend = 0;
    return a->on ? 0 : -1;
}

/* a Sample (t->v bytes, at most P_AGG_BYTES) into the table: 0, or -1 (the
 * input ended: the same error as pb_rd_skip's).
 * Over 80 lines, kept whole: one walk of the sample's fields that both
 * builds the key and sums the values, in the per-sample hot path. */
static int agg_sample(pr *r, const top *t)
{
    p_agg *a = &r->agg;
    size_t n = (size_t)t->v, kn = 0, nw, i;
    uint64_t off = pb_src_offset(r->s), tag;
    uint32_t nv = 0, zero = 0;
    const unsigned char *p;
    unsigned char *kb;
    struct p_pend *q;
    msg m;
    fld f;
    int k;
    if (pb_grow((void **)&a->key, &a->ckey, (size_t)P_AGG_KEY * P_AGG_BATCH, sizeof *a->key) < 0 ||
        pb_grow((void **)&a->buf, &a->cbuf, P_AGG_BYTES, 1) < 0) {
        agg_stop(r);
        return pb_rd_skip(&r->rd, t->v, "bytes") != PB_OK ? -1 : 0;
    }
    if (pb_src_avail(r->s) >= n) {
        p = r->s->p;
        r->s->p += n;
    } else { /* as pb_rd_skip reads, each piece copied */
        size_t got = 0;
        while (got < n) {
            size_t have = pb_src_avail(r->s);
            if (have == 0) {
                int g = pb_src_need(r->s, 1);
                if (g <= 0)
                    return pb_rd_short(&r->rd, g, n - got, "bytes") != PB_OK ? -1 : 0;
                have = pb_src_avail(r->s);
            }
            if (have > n - got)
                have = n - got;
            memcpy(a->buf + got, r->s->p, have);
            r->s->p += have;
            got += have;
        }
        p = a->buf;
    }
    a->samples++;
    m.start = m.p = p;
    m.end = p + n;
    m.off = off;
    m.rec = "Sample";
    q = &a->pend[a->npend];
    kb = (unsigned char *)(a->key + (size_t)a->npend * P_AGG_KEY);
    for (;;) {
        const unsigned char *at = m.p;
        if ((k = msg_next(&m, &f, &tag)) <= 0)
            break;
        if (f.field != 2) { /* the field as it is, into the key */
            memcpy(kb + kn, at, (size_t)(m.p - at));
            kn += (size_t)(m.p - at);
            continue;
        }
        if (f.wt == WT_VARINT) {
            if (nv >= P_AGG_VALUES)
                break;
            q->vals[nv++] = f.v;
        } else if (f.wt == WT_LEN) {
            msg pk;
            pk.start = pk.p = f.data;
            pk.end = f.data + f.len;
            while (pk.p < pk.end && nv < P_AGG_VALUES && msg_varint(&pk, &q->vals[nv]) == 0)
                nv++;
            if (pk.p < pk.end)
                break;
        } else
            break;
    }
    if (k != 0 || (a->nv != UINT32_MAX && nv != a->nv)) {
        agg_stop(r); /* pass 2 says what is wrong, or reads it as it is */
        return 0;
    }
    a->nv = nv;
    for (i = 0; i < nv; i++) {
        if ((int64_t)q->vals[i] < 0)
            a->neg |= 1u << i;
        else if (q->vals[i] > a->vmax[i])
            a->vmax[i] = q->vals[i];
        if (!q->vals[i])
            zero |= 1u << i;
    }
    nw = (kn + 3) / 4;
    memset(kb + kn, 0, nw * 4 - kn);
    q->words = (uint32_t)nw;
    q->bytes = (uint32_t)kn;
    q->zero = zero;
    q->off = off;
    q->hash = pb_stack_table_hash(kn, (const uint32_t *)kb, (uint32_t)nw);
    pb_stack_table_prefetch(&a->t, q->hash);
    if (++a->npend == P_AGG_BATCH)
        agg_flush(r);
    return 0;
}

static int table_field(pr *r, const top *t)
{
    msg m;
    switch (t->field) {
    case 1:
    case 11: {
        p_vt vt;
        if (top_payload(r, t, t->field == 1 ? "sample_type" : "period_type", &m) < 0 ||
            read_value_type(r, &m, &vt) < 0)
            return -1;
        if (t->field == 11) {
            r->period_type = vt;
            r->have_period_type = 1;
            return 0;
        }
        return push(r, (void **)&r->types, &r->ntypes, &r->ctypes, &vt, sizeof vt);
    }
    case 3: return top_payload(r, t, "Mapping", &m) < 0 ? -1 : read_mapping(r, &m);
    case 4: return top_payload(r, t, "Location", &m) < 0 ? -1 : read_location(r, &m);
    case 5: return top_payload(r, t, "Function", &m) < 0 ? -1 : read_function(r, &m);
    case 6:
        /* the table is kept whole: bounded before its bytes are read (or inflated) */
        if ((t->v >= r->opt->max_string_bytes || r->narena + t->v + 1 > r->opt->max_string_bytes) &&
            !past_end(r, t->v)) {
            pb_fail(r->err, PB_ERR_LIMIT, t->off, "a string_table entry of %llu bytes would take the string table "
                    "past max_string_bytes (%llu; %zu bytes held)", (unsigned long long)t->v,
                    (unsigned long long)r->opt->max_string_bytes, r->narena);
            return -1;
        }
        if (top_payload(r, t, "string_table entry", &m) < 0)
            return -1;
        return add_string(r, m.start, (size_t)(m.end - m.start)) == PB_OK ? 0 : -1;
    case 7: r->drop_frames = (int64_t)t->v; return 0;
    case 8: r->keep_frames = (int64_t)t->v; return 0;
    case 9: r->time_nanos = (int64_t)t->v; return 0;
    case 10: r->duration_nanos = (int64_t)t->v; return 0;
    case 12: r->period = (int64_t)t->v; return 0;
    case 13:
        if (t->wt == WT_VARINT)
            return add_comment(r, t->v, NULL);
        if (top_payload(r, t, "comment", &m) < 0)
            return -1;
        {
            fld f;
            f.field = 13;
            f.wt = WT_LEN;
            f.data = m.start;
            f.len = (size_t)(m.end - m.start);
            return each_int(r, &m, &f, add_comment, NULL);
        }
    case 14: r->default_type = (int64_t)t->v; return 0;
    case 2: {
        /* a Sample: location ids (11 bytes each at most, unpacked), values, labels */
        uint64_t most = (uint64_t)r->opt->max_stack_depth * 11 + (UINT64_C(1) << 20);
        if (t->v > most && !past_end(r, t->v)) {
            pb_fail(r->err, PB_ERR_LIMIT, t->off, "a Sample of %llu bytes: more than the %llu that max_stack_depth "
                    "(%u) locations and 1 MiB of values and labels take", (unsigned long long)t->v,
                    (unsigned long long)most, r->opt->max_stack_depth);
            return -1;
        }
        if (r->agg.on && t->v <= P_AGG_BYTES)
            return agg_sample(r, t);
        agg_stop(r);
        break;
    }
    default: break;
    }
    return t->wt == WT_LEN && pb_rd_skip(&r->rd, t->v, "bytes") != PB_OK ? -1 : 0;
}

/* one pass over the Profile: each field to fn (which reads or skips its payload) */
static pb_status each_top(pr *r, int (*fn)(pr *r, const top *t))
{
    top t;
    int k;
    while ((k = top_field(r, &t)) > 0)
        if (fn(r, &t) < 0) /* the error is in r->err, or a consumer asked to stop */
            return r->err->status ? r->err->status : PB_ERR_ABORT;
    return k < 0 ? pb_rd_status(&r->rd) : PB_OK;
}

/* ---- after pass 1: indexes, checks, the sample type ---------------------------- */
static uint64_t func_id(const pr *r, uint32_t i) { return r->funcs[i].id; }
static uint64_t loc_id(const pr *r, uint32_t i) { return r->locs[i].id; }
static uint32_t pprof_h_func(const void *c, uint32_t i) { return pb_mix64(func_id((const pr *)c, i)); }
static uint32_t pprof_h_loc(const void *c, uint32_t i) { return pb_mix64(loc_id((const pr *)c, i)); }
static uint64_t map_id(const pr *r, uint32_t i) { return r->maps[i].id; }
static uint32_t h_map(const void *c, uint32_t i) { return pb_mix64(map_id((const pr *)c, i)); }

/* entry i into ix by its id; a second entry with the same id is corrupt */
static pb_status index_one(pr *r, pb_index *ix, uint32_t i, uint32_t (*hash)(const void *, uint32_t),
                           uint64_t (*id_of)(const pr *, uint32_t), const char *what)
{
    size_t k;
    uint32_t id;
    uint64_t want = id_of(r, i);
    if (pb_index_reserve(ix, i, hash, r) < 0)
        return pprof_oom(r);
    PB_INDEX_FIND(ix, pb_mix64(want), k, id, id_of(r, id) == want);
    if (id != PB_INDEX_NONE)
        return corrupt_at(r, 0, "two %s have the id %llu", what, (unsigned long long)want);
    pb_index_set(ix, k, i);
    return PB_OK;
}

static pb_status index_ids(pr *r)
{
    size_t i;
    pb_status st;
    for (i = 0; i < r->nfuncs; i++) {
        const p_func *fn = &r->funcs[i];
        if (fn->name >= r->nstr || fn->sysname >= r->nstr || fn->file >= r->nstr)
            return corrupt_at(r, 0, "function %llu names a string past the string table's %zu",
                              (unsigned long long)fn->id, r->nstr);
        if ((st = index_one(r, &r->tfunc, (uint32_t)i, pprof_h_func, func_id, "functions")) != PB_OK)
            return st;
    }
    for (i = 0; i < r->nlocs; i++)
        if ((st = index_one(r, &r->tloc, (uint32_t)i, pprof_h_loc, loc_id, "locations")) != PB_OK)
            return st;
    {   /* dense ids (1..n, as every writer numbers them): a direct map, of
         * at most 2 x the locations read + 64 entries; the rest through tloc */
        uint64_t top = 0;
        for (i = 0; i < r->nlocs; i++)
            if (r->locs[i].id > top)
                top = r->locs[i].id;
        if (r->nlocs && top < (uint64_t)r->nlocs * 2 + 64) {
            if (!(r->locmap = (uint32_t *)malloc(((size_t)top + 1) * sizeof *r->locmap)) ||
                !(r->locfr = (uint32_t *)calloc((size_t)top + 1, sizeof *r->locfr)))
                return pprof_oom(r);
            memset(r->locmap, 0xff, ((size_t)top + 1) * sizeof *r->locmap); /* P_NONE */
            for (i = 0; i < r->nlocs; i++)
                r->locmap[r->locs[i].id] = (uint32_t)i;
            r->nlocmap = (size_t)top + 1;
        }
    }
    for (i = 0; i < r->ncomments; i++)
        if (r->comments[i] >= r->nstr)
            return corrupt_at(r, 0, "comment %zu is string %llu, past the string table's %zu", i,
                              (unsigned long long)r->comments[i], r->nstr);
    for (i = 0; i < r->nmaps; i++) {
        if (r->maps[i].file >= r->nstr || r->maps[i].build_id >= r->nstr)
            return corrupt_at(r, 0, "mapping %llu names string %u, past the string table's %zu",
                              (unsigned long long)r->maps[i].id, r->maps[i].file, r->nstr);
        {   /* a mapping id given twice: the first names it (as a scan found it) */
            size_t k;
            uint32_t id;
            if (pb_index_reserve(&r->tmap, i, h_map, r) < 0)
                return pprof_oom(r);
            PB_INDEX_FIND(&r->tmap, pb_mix64(r->maps[i].id), k, id, r->maps[id].id == r->maps[i].id);
            if (id == PB_INDEX_NONE)
                pb_index_set(&r->tmap, k, (uint32_t)i);
        }
    }
    return PB_OK;
}

static const char *type_name(const pr *r, const p_vt *vt, size_t *len) { return pprof_str_at(r, vt->type, len); }

/* "type/unit,..." of every sample type into buf */
static void type_list(const pr *r, char *buf, size_t cap)
{
    size_t i, n = 0, l1, l2;
    buf[0] = '\0';
    for (i = 0; i < r->ntypes && n + 1 < cap; i++) {
        const char *t = pprof_str_at(r, r->types[i].type, &l1), *u = pprof_str_at(r, r->types[i].unit, &l2);
        n += (size_t)snprintf(buf + n, cap - n, "%s%.*s/%.*s", i ? "," : "", (int)(l1 > 200 ? 200 : l1), t,
                              (int)(l2 > 200 ? 200 : l2), u);
    }
    pb_controls_to_spaces(buf, strlen(buf));
}

static pb_status choose_type(pr *r)
{
    size_t i, len;
    const char *want = r->opt->sample_type;
    char list[1024];
    for (i = 0; i < r->ntypes; i++)
        if (r->types[i].type >= r->nstr || r->types[i].unit >= r->nstr)
            return corrupt_at(r, 0, "sample_type %zu names a string past the string table's %zu", i, r->nstr);
    if (r->default_type < 0 || (uint64_t)r->default_type >= r->nstr)
        return corrupt_at(r, 0, "default_sample_type is string %lld, past the string table's %zu",
                          (long long)r->default_type, r->nstr);
    if (r->have_period_type && (r->period_type.type >= r->nstr || r->period_type.unit >= r->nstr))
        return corrupt_at(r, 0, "period_type names a string past the string table's %zu", r->nstr);
    if (r->ntypes == 0)
        return corrupt_at(r, 0, "the profile declares no sample_type");
    if (!want && r->default_type > 0)
        want = pprof_str_at(r, (uint32_t)r->default_type, &len);
    r->vindex = (uint32_t)r->ntypes - 1;
    if (want) {
        for (i = 0; i < r->ntypes; i++)
            if (!strcmp(type_name(r, &r->types[i], &len), want))
                break;
        if (i == r->ntypes) {
            char shown[128];
            snprintf(shown, sizeof shown, "%.100s", want);
            pb_controls_to_spaces(shown, strlen(shown));
            want = shown;
            type_list(r, list, sizeof list);
            if (r->opt->sample_type)
                return pb_fail(r->err, PB_ERR_UNSUPPORTED, 0, "no sample type \"%.100s\" in this profile (its types: %s)",
                               want, list);
            return corrupt_at(r, 0, "default_sample_type \"%.100s\" is none of the sample types (%s)", want, list);
        }
        r->vindex = (uint32_t)i;
    }
    r->unit_ns = pb_time_unit_ns(pprof_str_at(r, r->types[r->vindex].unit, &len)); /* samples.h */
    return PB_OK;
}

/* ---- attributes ---------------------------------------------------------------- */
static pb_status pprof_attr(pr *r, const char *key, const char *val)
{
    return r->out->attribute(r->out, key, pb_str_c(val));
}

static pb_status attr_i64(pr *r, const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return pprof_attr(r, key, buf);
}

/* a string of the table as an attribute value: control bytes as spaces (an
 * ATTRIBUTE is one line of nytprof.out) */
static pb_status attr_str(pr *r, const char *key, uint32_t si)
{
    size_t len;
    const char *s = pprof_str_at(r, si, &len);
    /* the copy is r's (a chunk consumer may never return from attribute()) */
    char *t = clean_copy(r, &r->abuf, &r->cabuf, s, len);
    if (!t)
        return r->err->status;
    return r->out->attribute(r->out, key, pb_str_make(t, len, pb_has_high(t, len) && pb_utf8_valid(t, len)));
}

static pb_status vt_attr(pr *r, const char *key, const p_vt *vt)
{
    char buf[512];
    size_t l1, l2;
    const char *t = pprof_str_at(r, vt->type, &l1), *u = pprof_str_at(r, vt->unit, &l2);
    snprintf(buf, sizeof buf, "%.*s/%.*s", (int)(l1 > 200 ? 200 : l1), t, (int)(l2 > 200 ? 200 : l2), u);
    pb_controls_to_spaces(buf, strlen(buf));
    return pprof_attr(r, key, buf);
}

static pb_status comments_attr(pr *r)
{
    size_t i;
    pb_status st = PB_OK;
    for (i = 0; i < r->ncomments && st == PB_OK; i++) {
        char key[32];
        snprintf(key, sizeof key, i ? "comment_%zu" : "comment", i);
        st = attr_str(r, key, (uint32_t)r->comments[i]);
    }
    return st;
}

static pb_status pprof_head_attributes(pr *r)
{
    pb_status st;
    char list[1024];
    size_t len;
    const char *clock = pprof_str_at(r, r->types[r->vindex].type, &len);
    type_list(r, list, sizeof list);
    if ((st = pprof_attr(r, "profiler", "pprof (profile.proto)")) != PB_OK ||
        (st = pprof_attr(r, "compression", r->gzip ? "gzip" : "none")) != PB_OK ||
        (st = pprof_attr(r, "sample_types", list)) != PB_OK ||
        (st = vt_attr(r, "sample_type", &r->types[r->vindex])) != PB_OK ||
        (r->default_type > 0 && (st = attr_str(r, "default_sample_type", (uint32_t)r->default_type)) != PB_OK))
        return st;
    if (r->unit_ns && (st = pprof_attr(r, "sample_weight_unit", "ns")) != PB_OK)
        return st;
    if (r->unit_ns && (st = pprof_attr(r, "clock", !strncmp(clock, "cpu", 3) ? "cpu" : "wall")) != PB_OK)
        return st;
    if (r->have_period_type && (st = vt_attr(r, "period_type", &r->period_type)) != PB_OK)
        return st;
    if (r->period && (st = attr_i64(r, "period", r->period)) != PB_OK)
        return st;
    if (r->time_nanos > 0 && ((st = attr_i64(r, "time_nanos", r->time_nanos)) != PB_OK ||
                              (st = attr_i64(r, "basetime", r->time_nanos / 1000000000)) != PB_OK))
        return st;
    if (r->duration_nanos > 0) {
        char buf[64];
        if ((st = attr_i64(r, "duration_nanos", r->duration_nanos)) != PB_OK)
            return st;
        snprintf(buf, sizeof buf, "%.9f", (double)r->duration_nanos / 1e9);
        if ((st = pprof_attr(r, "profile_duration_sec", buf)) != PB_OK)
            return st;
    }
    if ((r->drop_frames > 0 && (uint64_t)r->drop_frames < r->nstr &&
         (st = attr_str(r, "drop_frames", (uint32_t)r->drop_frames)) != PB_OK) ||
        (r->keep_frames > 0 && (uint64_t)r->keep_frames < r->nstr &&
         (st = attr_str(r, "keep_frames", (uint32_t)r->keep_frames)) != PB_OK))
        return st;
    return comments_attr(r);
}

static pb_status pprof_end_attributes(pr *r)
{
    pb_status st;
    char buf[32];
    if (r->nmaps && r->maps[0].file) {
        /* the main binary's base name, as go tool pprof's "File:" line (not
         * the directory it was built in on the recording machine) */
        size_t len, k;
        const char *s = pprof_str_at(r, r->maps[0].file, &len);
        char *t = clean_copy(r, &r->abuf, &r->cabuf, s, len);
        if (!t)
            return r->err->status;
        for (k = len; k > 0 && t[k - 1] != '/'; k--)
            ;
        if (k == len)
            k = 0; /* a name ending in '/': all of it */
        st = r->out->attribute(r->out, "application",
                               pb_str_make(t + k, len - k, pb_has_high(t + k, len - k) && pb_utf8_valid(t + k, len - k)));
    } else {
        const char *f = r->err->file, *b = strrchr(f, '/');
        st = pprof_attr(r, "application", f[0] ? (b ? b + 1 : f) : "pprof");
    }
    if (st != PB_OK)
        return st;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->samples);
    return pprof_attr(r, "total_samples", buf);
}

/* ---- frames: a location's lines -> sink ids ------------------------------------ */
/* Go's "import/path.Func": package = the path up to the first "." after the
 * last "/" (looked for before any "(" or "["), "/" -> "::"; name = the rest.
 * Names of another shape have no package. */
static pb_status split_name(pr *r, const char *s, size_t len, pb_str *pkg, pb_str *name)
{
    size_t i, slash = 0, dot = len, lim = len, n = 0;
    for (i = 0; i < len; i++)
        if (s[i] == '(' || s[i] == '[' || s[i] == ' ' || (s[i] == ':' && i + 1 < len && s[i + 1] == ':')) {
            lim = i;
            break;
        }
    for (i = 0; i < lim; i++)
        if (s[i] == '/')
            slash = i + 1;
    for (i = slash; i < lim; i++)
        if (s[i] == '.') {
            dot = i;
            break;
        }
    if (dot >= lim || dot == 0 || (lim < len && s[lim] == ':')) {
        *pkg = pb_str_make("", 0, 0);
        *name = pb_str_make(s, len, pb_has_high(s, len));
        return PB_OK;
    }
    if (pb_grow((void **)&r->pkgbuf, &r->cpkg, dot * 2 + 1, 1) < 0)
        return pprof_oom(r);
    n = pb_sep_to_colons(r->pkgbuf, s, dot, '/');
    *pkg = pb_str_make(r->pkgbuf, n, pb_has_high(r->pkgbuf, n));
    *name = pb_str_make(s + dot + 1, len - dot - 1, pb_has_high(s + dot + 1, len - dot - 1));
    return PB_OK;
}

static const p_map *find_map(const pr *r, uint64_t id)
{
    size_t k;
    uint32_t i;
    PB_INDEX_FIND(&r->tmap, pb_mix64(id), k, i, r->maps[i].id == id);
    return i == PB_INDEX_NONE ? NULL : &r->maps[i];
}

/* where location lc puts its frames (samples.h): address, the sink's mapping */
static void place(const pr *r, const p_loc *lc, pb_frame *fr)
{
    const p_map *mp = find_map(r, lc->mapping);
    fr->address = lc->address;
    fr->mapping = mp ? mp->sink_id : 0;
}

static pb_status intern_line(pr *r, const p_loc *lc, const p_line *ln, uint32_t *id)
{
    pb_frame fr;
    size_t k, len, flen;
    uint32_t fi;
    const p_func *fn;
    const char *name, *file;
    pb_status st;
    memset(&fr, 0, sizeof fr);
    fr.kind = PB_FRAME_SUB;
    PB_INDEX_FIND(&r->tfunc, pb_mix64(ln->func), k, fi, r->funcs[fi].id == ln->func);
    if (fi == PB_INDEX_NONE)
        return corrupt_at(r, pb_src_offset(r->s), "location %llu names function %llu, which the profile does not define",
                          (unsigned long long)lc->id, (unsigned long long)ln->func);
    fn = &r->funcs[fi];
    name = pprof_str_at(r, fn->name, &len);
    file = pprof_str_at(r, fn->file, &flen);
    if ((st = split_name(r, name, len, &fr.package, &fr.name)) != PB_OK)
        return st;
    fr.own = pb_str_make(name, len, pb_has_high(name, len));
    fr.file = pb_str_make(file, flen, pb_has_high(file, flen));
    fr.line = ln->line > 0 && ln->line <= INT32_MAX ? (int32_t)ln->line : 0;
    fr.first_line = fn->start_line > 0 && fn->start_line <= INT32_MAX ? (int32_t)fn->start_line : 0;
    place(r, lc, &fr);
    fr.place = ln != &r->lines[lc->line0 + lc->nlines - 1] ? PB_PLACE_INLINED : 0; /* not the last Line */
    name = pprof_str_at(r, fn->sysname, &len);
    fr.sys_name = pb_str_make(name, len, pb_has_high(name, len));
    return r->out->frame(r->out, &fr, id);
}

/* a location without lines: its address, in its mapping's file */
static pb_status intern_address(pr *r, const p_loc *lc, uint32_t *id)
{
    pb_frame fr;
    char buf[32];
    size_t flen = 0;
    const p_map *mp = find_map(r, lc->mapping);
    const char *file = mp ? pprof_str_at(r, mp->file, &flen) : "";
    memset(&fr, 0, sizeof fr);
    fr.kind = PB_FRAME_XSUB;
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)lc->address);
    fr.package = pb_str_make("", 0, 0);
    fr.name = pb_str_c(buf);
    fr.own = fr.name;
    fr.file = pb_str_make(file, flen, pb_has_high(file, flen));
    place(r, lc, &fr);
    fr.place = PB_PLACE_ADDRESS;
    return r->out->frame(r->out, &fr, id);
}

/* the sink ids of location li's frames, interned the first time */
static pb_status loc_ids(pr *r, uint32_t li, const uint32_t **ids, uint32_t *n)
{
    p_loc *lc = &r->locs[li];
    uint32_t k, cnt = lc->nlines ? lc->nlines : 1;
    pb_status st;
    if (lc->ids == P_NONE) {
        if (r->nids + cnt > UINT32_MAX - 1 || pb_grow((void **)&r->ids, &r->cids, r->nids + cnt, sizeof *r->ids) < 0)
            return pprof_oom(r);
        for (k = 0; k < cnt; k++) {
            st = lc->nlines ? intern_line(r, lc, &r->lines[lc->line0 + k], &r->ids[r->nids + k])
                            : intern_address(r, lc, &r->ids[r->nids + k]);
            if (st != PB_OK)
                return st;
        }
        lc->ids = (uint32_t)r->nids;
        r->nids += cnt;
    }
    *ids = r->ids + lc->ids;
    *n = cnt;
    return PB_OK;
}

/* ---- pass 2: the samples ---------------------------------------------------------- */
typedef struct {
    uint32_t nvalues;
    int64_t value;
    p_label thread, pid; /* P_NONE: no such label */
    int named; /* the thread label came from "thread" (not "tid") */
} p_sample;

static int take_loc(pr *r, uint64_t v, void *ctx)
{
    (void)ctx;
    if (r->nslocs >= r->opt->max_stack_depth) {
        pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(r->s), "a sample of more than max_stack_depth (%u) locations",
                r->opt->max_stack_depth);
        return -1;
    }
    return push(r, (void **)&r->slocs, &r->nslocs, &r->cslocs, &v, sizeof v);
}

static int take_value(pr *r, uint64_t v, void *ctx)
{
    p_sample *sm = (p_sample *)ctx;
    if (sm->nvalues == r->vindex)
        sm->value = (int64_t)v;
    if (sm->nvalues < r->ntypes)
        r->values[sm->nvalues] = (int64_t)v;
    if (sm->nvalues < UINT32_MAX)
        sm->nvalues++;
    return 0;
}

/* a label as recorded, for a sink that takes them (checked by the caller) */
static int keep_label(pr *r, uint64_t key, uint64_t str, uint64_t num, uint64_t unit, int is_num)
{
    pb_label lb;
    size_t len;
    const char *t;
    if (key >= r->nstr || str >= r->nstr)
        return 0; /* the caller's error */
    memset(&lb, 0, sizeof lb);
    t = pprof_str_at(r, (uint32_t)key, &len);
    lb.key = pb_str_make(t, len, pb_has_high(t, len));
    t = pprof_str_at(r, (uint32_t)str, &len);
    lb.str = pb_str_make(t, len, pb_has_high(t, len));
    t = pprof_str_at(r, (uint32_t)unit, &len);
    lb.num_unit = pb_str_make(t, len, pb_has_high(t, len));
    lb.num = (int64_t)num;
    lb.is_num = is_num;
    return push(r, (void **)&r->labels, &r->nlabels, &r->clabels, &lb, sizeof lb);
}

/* a label: thread / tid name the thread, pid the process */
static int read_label(pr *r, msg *m, p_sample *sm)
{
    fld f;
    int k, is_num = 0;
    uint64_t key = 0, str = 0, num = 0, unit = 0;
    size_t len;
    const char *kn;
    while ((k = msg_field(r, m, &f)) > 0) {
        if (f.field >= 1 && f.field <= 4 && want_wt(r, m, &f, WT_VARINT) < 0)
            return -1;
        if (f.field == 1)
            key = f.v;
        else if (f.field == 2)
            str = f.v;
        else if (f.field == 3) {
            num = f.v;
            is_num = 1;
        } else if (f.field == 4)
            unit = f.v;
    }
    if (k < 0)
        return -1;
    if (unit >= r->nstr || (r->out->sample_values && keep_label(r, key, str, num, unit, is_num) < 0))
        return unit >= r->nstr ? (corrupt_at(r, m->off, "a label's num_unit is string %llu, past the string "
                                             "table's %zu", (unsigned long long)unit, r->nstr), -1) : -1;
    if (key >= r->nstr || str >= r->nstr) {
        corrupt_at(r, m->off, "a label names string %llu, past the string table's %zu",
                   (unsigned long long)(key >= r->nstr ? key : str), r->nstr);
        return -1;
    }
    kn = pprof_str_at(r, (uint32_t)key, &len);
    is_num = is_num && !str;
    if (!strcmp(kn, "thread") || (!strcmp(kn, "tid") && !sm->named)) {
        sm->named = !strcmp(kn, "thread"); /* a thread's name wins over its id */
        sm->thread = (p_label){(uint32_t)str, is_num, (int64_t)num};
    } else if (!strcmp(kn, "pid")) {
        sm->pid = (p_label){(uint32_t)str, is_num, (int64_t)num};
    }
    return 0;
}

#if defined(__GNUC__)
__attribute__((always_inline)) /* in sample_field, as when it was its only caller */
#endif
static inline int read_sample(pr *r, msg *m, p_sample *sm)
{
    fld f;
    int k;
    memset(sm, 0, sizeof *sm);
    sm->thread.str = sm->pid.str = P_NONE;
    r->nslocs = 0;
    r->nlabels = 0;
    while ((k = msg_field(r, m, &f)) > 0) {
        if (f.field == 1 && f.wt == WT_LEN) {
            /* packed location ids (as every writer packs them): decoded
             * in one loop into slocs, grown once for the field (a varint
             * is a byte at least; max_stack_depth + 1 at most) */
            msg pk = sub_msg(m, &f, m->rec);
            size_t most = r->nslocs + (f.len < r->opt->max_stack_depth ? f.len : r->opt->max_stack_depth) + 1;
            uint64_t v;
            if (pb_grow((void **)&r->slocs, &r->cslocs, most, sizeof *r->slocs) < 0)
                return pprof_oom(r), -1;
            while (pk.p < pk.end) {
                if (msg_varint(&pk, &v) < 0) {
                    corrupt_at(r, msg_off(&pk), "%s field %u: a packed varint runs past its %zu bytes", m->rec,
                               f.field, f.len);
                    return -1;
                }
                if (r->nslocs >= r->opt->max_stack_depth) /* (so nslocs < most: room) */
                    return take_loc(r, v, NULL), -1;       /* its limit error */
                r->slocs[r->nslocs++] = v;
            }
            continue;
        }
        if (f.field == 1 && each_int(r, m, &f, take_loc, NULL) < 0)
            return -1;
        if (f.field == 2 && each_int(r, m, &f, take_value, sm) < 0)
            return -1;
        if (f.field == 3) {
            msg lm;
            if (want_wt(r, m, &f, WT_LEN) < 0)
                return -1;
            lm = sub_msg(m, &f, "Label");
            if (read_label(r, &lm, sm) < 0)
                return -1;
        }
    }
    if (k < 0)
        return -1;
    if (sm->nvalues != r->ntypes) {
        corrupt_at(r, m->off, "a sample has %u values for the profile's %zu sample types", sm->nvalues, r->ntypes);
        return -1;
    }
    return 0;
}

/* a label's text: its string, or its number in decimal */
static const char *label_text(const pr *r, const p_label *l, char *buf, size_t cap)
{
    size_t len;
    if (l->str == P_NONE)
        return NULL;
    if (l->is_num) {
        snprintf(buf, cap, "%lld", (long long)l->num);
        return buf;
    }
    return pprof_str_at(r, l->str, &len);
}

/* the 1 when a thread is selected by --thread (a number or a name) */
static int pprof_thread_selected(const pr *r, const char *label)
{
    char *end;
    unsigned long long v;
    if (!r->opt->have_thread)
        return 1;
    if (r->opt->thread_name)
        return !strcmp(label, r->opt->thread_name);
    v = strtoull(label, &end, 10);
    return *label && !*end && v == r->opt->thread_id;
}

/* a thread's label and its pid label ("" none) */
static const char *thread_label(const pr *r, uint32_t i, const char **pid)
{
    const char *t = pb_strtab_ptr(&r->threads, i);
    *pid = t + strlen(t) + 1;
    return t;
}

/* the thread key of a sample (dense, in order of first appearance), found
 * through the one interner (pb_strtab: a hash index, never a scan) */
static pb_status thread_of(pr *r, const p_sample *sm, uint64_t off, uint32_t *key, int *selected)
{
    char tb[32], pb[32], attr_key[48];
    const char *t = label_text(r, &sm->thread, tb, sizeof tb);
    const char *p = label_text(r, &sm->pid, pb, sizeof pb);
    size_t lt, lp;
    uint32_t i;
    int k;
    pb_status st;
    if (!t)
        t = "main";
    if (!p)
        p = "";
    lt = strlen(t);
    lp = strlen(p);
    if (lt > SIZE_MAX / 2 - lp || pb_grow((void **)&r->abuf, &r->cabuf, lt + lp + 2, 1) < 0)
        return pprof_oom(r);
    memcpy(r->abuf, t, lt);
    r->abuf[lt] = '\0';
    memcpy(r->abuf + lt + 1, p, lp);
    r->abuf[lt + 1 + lp] = '\0';
    pb_controls_to_spaces(r->abuf, lt);
    pb_controls_to_spaces(r->abuf + lt + 1, lp);
    if ((k = pb_strtab_intern(&r->threads, r->abuf, lt + 1 + lp, &i)) < 0)
        return pprof_oom(r);
    if (k == 0) {
        if (i >= r->opt->max_threads)
            return pb_fail(r->err, PB_ERR_LIMIT, off, "more than max_threads (%u) threads (thread and tid labels)",
                           r->opt->max_threads);
        if (pb_grow((void **)&r->tsel, &r->ctsel, (size_t)i + 1, 1) < 0)
            return pprof_oom(r);
        t = thread_label(r, i, &p);
        r->tsel[i] = (unsigned char)pprof_thread_selected(r, t);
        if (r->tsel[i]) {
            if ((st = r->out->thread(r->out, i, i + 1, 0, t)) != PB_OK)
                return st;
            snprintf(attr_key, sizeof attr_key, "thread_%u_pid", (unsigned)i + 1);
            if (*p && (st = pprof_attr(r, attr_key, p)) != PB_OK)
                return st;
        }
    }
    *key = i;
    *selected = r->tsel[i];
    return PB_OK;
}

/* the weight of a sample's value, ns for a time unit */
static pb_status weight_of(pr *r, const msg *m, int64_t v, uint64_t *w)
{
    if (v < 0)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, m->off,
                       "a sample's value is negative (%lld): a pprof -diff_base profile? (diff reads two profiles)",
                       (long long)v);
    *w = (uint64_t)v;
    if (r->unit_ns > 1)
        return pb_checked_mul(r->err, *w, r->unit_ns, "a sample's weight", "ns", w);
    return PB_OK;
}

/* a sample whose weight is 0 still goes to a sink that takes all its values
 * when one of them is not 0 */
static int other_values(const pr *r)
{
    size_t i;
    if (!r->out->sample_values)
        return 0;
    for (i = 0; i < r->ntypes; i++)
        if (r->values[i])
            return 1;
    return 0;
}

/* Over 80 lines, kept whole: one Sample: its values, its locations resolved to frames and the
 * depth checks, in the order the fields are needed. */
static int sample_field(pr *r, const top *t)
{
    msg m;
    p_sample sm;
    uint64_t w;
    uint32_t key = 0, d = 0, n = 0, j;
    size_t i;
    int sel = 0;
    const uint32_t *ids = NULL;
    if (t->field != 2)
        return t->wt == WT_LEN && pb_rd_skip(&r->rd, t->v, "bytes") != PB_OK ? -1 : 0;
    if ((r->replay ? (m = *r->replay, 0) : top_payload(r, t, "Sample", &m)) < 0 || read_sample(r, &m, &sm) < 0 ||
        weight_of(r, &m, sm.value, &w) != PB_OK)
        return -1;
    r->samples++;
    if (w == 0 && !other_values(r))
        return 0;
    {   /* the labels' thread: one of the last few seen, else thread_of */
        struct p_tcache *c = &r->tcache[(sm.thread.str ^ (sm.pid.str << 1) ^ (uint32_t)sm.thread.num ^
                                         ((uint32_t)sm.pid.num << 2)) & 7];
        if (c->valid && same_label(&c->thread, &sm.thread) && same_label(&c->pid, &sm.pid)) {
            key = c->key;
            sel = c->sel;
        } else {
            if (thread_of(r, &sm, m.off, &key, &sel) != PB_OK)
                return -1;
            c->thread = sm.thread;
            c->pid = sm.pid;
            c->key = key;
            c->sel = sel;
            c->valid = 1;
        }
    }
    if (!sel)
        return 0;
    /* room for the frames: max_stack_depth at most (checked per location) */
    if (pb_grow((void **)&r->stack, &r->cstack, r->nslocs < r->opt->max_stack_depth ? r->nslocs : r->opt->max_stack_depth,
                sizeof *r->stack) < 0)
        return pprof_oom(r), -1;
    for (i = 0; i < r->nslocs; i++) {
        uint64_t id = r->slocs[i];
        uint32_t li, e = id < r->nlocmap ? r->locfr[id] : 0;
        const p_loc *lc;
        if (e && d < r->opt->max_stack_depth && (e & 255) <= r->opt->max_stack_depth - d &&
            d + (e & 255) <= r->cstack) { /* its frames, interned before */
            const uint32_t *from = r->ids + (e >> 8);
            for (j = 0; j < (e & 255); j++)
                r->stack[d++] = from[j];
            continue;
        }
        li = id < r->nlocmap ? r->locmap[id] : P_NONE;
        if (li == P_NONE) {
            size_t k;
            PB_INDEX_FIND(&r->tloc, pb_mix64(id), k, li, r->locs[li].id == id);
            if (li == PB_INDEX_NONE) {
                corrupt_at(r, m.off, "a sample names location %llu, which the profile does not define",
                           (unsigned long long)id);
                return -1;
            }
        }
        lc = &r->locs[li];
        if (lc->ids != P_NONE && lc->nlines == 1) { /* one frame, interned before */
            n = 1;
            ids = r->ids + lc->ids;
        } else if (loc_ids(r, li, &ids, &n) != PB_OK)
            return -1;
        if (id < r->nlocmap && n < 255 && lc->ids < (UINT32_C(1) << 24))
            r->locfr[id] = lc->ids << 8 | n;
        if (d + n > r->opt->max_stack_depth) {
            pb_fail(r->err, PB_ERR_LIMIT, m.off, "a sample of more than max_stack_depth (%u) frames",
                    r->opt->max_stack_depth);
            return -1;
        }
        if (d + n > r->cstack && pb_grow((void **)&r->stack, &r->cstack, d + n, sizeof *r->stack) < 0)
            return pprof_oom(r), -1;
        for (j = 0; j < n; j++)
            r->stack[d++] = ids[j];
    }
    r->sample_off = m.off;
    if (r->out->sample_values &&
        r->out->sample_values(r->out, r->values, (uint32_t)r->ntypes, r->labels, (uint32_t)r->nlabels) != PB_OK)
        return -1;
    if (r->replay && r->out->sample_sum && r->out->sample_sum(r->out, r->replay_n) != PB_OK)
        return -1;
    return r->out->sample(r->out, key, r->stack, d, w, 0) == PB_OK ? 0 : -1;
}

/* ---- one pass: the distinct samples sent (agg_sample) ------------------------------ */
/* the kept sample h as a Sample: its fields, then its values' sums packed */
static msg agg_msg(pr *r, pb_stack_head *h)
{
    p_agg *a = &r->agg;
    const uint32_t *s = pb_stack_table_more(h);
    unsigned char *b = a->buf, vb[P_AGG_VALUES * 10];
    size_t n = (size_t)h->key, nb = 0, i;
    msg m;
    for (i = 0; i < a->nv; i++) {
        uint64_t v = agg_get(s + 2 * i);
        while (v >= 0x80) {
            vb[nb++] = (unsigned char)(v | 0x80);
            v >>= 7;
        }
        vb[nb++] = (unsigned char)v;
    }
    memcpy(b, h + 1, n); /* (its fields: the stack's ids) */
    b[n++] = 2 << 3 | WT_LEN;
    b[n++] = (unsigned char)nb; /* (80 bytes at most: one byte) */
    memcpy(b + n, vb, nb);
    m.start = m.p = b;
    m.end = b + n + nb;
    m.off = agg_get(s + 2 * a->nv);
    m.rec = "Sample";
    return m;
}

/* 1 when every kept sample reads as pass 2 would read it, with no error, and
 * its sums make the same stacks and weights (agg_sample): then they are sent */
static int agg_usable(pr *r)
{
    p_agg *a = &r->agg;
    pb_error saved = *r->err;
    pb_stack_head *h;
    size_t it = 0, i;
    uint64_t u = r->unit_ns > 1 ? r->unit_ns : 1;
    int ok = 1;
    if (!a->on || !(r->out->sums_stacks || r->out->sample_sum) || r->out->sample_values)
        return 0;
    if (a->nv == UINT32_MAX)
        return 1; /* no samples */
    if (a->nv != r->ntypes || r->vindex >= a->nv || (a->neg >> r->vindex & 1) ||
        a->vmax[r->vindex] > (uint64_t)INT32_MAX / u)
        return 0; /* (so no sample's weight splits, and the sums are not charged: sample_at) */
    if (pb_grow((void **)&a->buf, &a->cbuf, P_AGG_BYTES + 2 + P_AGG_VALUES * 10, 1) < 0)
        return 0;
    while (ok && (h = pb_stack_table_next(&a->t, &it)) != NULL) {
        msg m = agg_msg(r, h);
        p_sample sm;
        uint64_t w, d = 0;
        if (read_sample(r, &m, &sm) < 0 || weight_of(r, &m, sm.value, &w) != PB_OK) {
            ok = 0;
            break;
        }
        if (w && (pb_stack_table_more(h)[2 * a->nv + 2] >> r->vindex & 1))
            ok = 0; /* its first sample was left out, a later one not */
        if (w && r->out->sample_sum && (pb_stack_table_more(h)[2 * a->nv + 3] >> r->vindex & 1))
            ok = 0; /* one of its samples was left out: it makes no TIME_LINE (sample_sum) */
        for (i = 0; ok && w && i < r->nslocs; i++) {
            uint64_t id = r->slocs[i];
            uint32_t li = id < r->nlocmap ? r->locmap[id] : P_NONE;
            if (li == P_NONE) {
                size_t k;
                PB_INDEX_FIND(&r->tloc, pb_mix64(id), k, li, r->locs[li].id == id);
                if (li == PB_INDEX_NONE) {
                    ok = 0;
                    break;
                }
            }
            d += r->locs[li].nlines ? r->locs[li].nlines : 1;
            if (d > r->opt->max_stack_depth)
                ok = 0;
        }
    }
    *r->err = saved;
    return ok;
}

/* the samples: the kept ones, each once, or pass 2 */
static pb_status agg_replay(pr *r)
{
    p_agg *a = &r->agg;
    pb_stack_head *h;
    size_t it = 0;
    top t;
    if (!agg_usable(r)) {
        agg_stop(r);
        return each_top(r, sample_field);
    }
    memset(&t, 0, sizeof t);
    t.field = 2;
    t.wt = WT_LEN;
    while ((h = pb_stack_table_next(&a->t, &it)) != NULL) {
        msg m = agg_msg(r, h);
        r->replay = &m;
        r->replay_n = agg_get(pb_stack_table_more(h) + 2 * a->nv + 4);
        if (sample_field(r, &t) < 0) {
            r->replay = NULL;
            return r->err->status ? r->err->status : PB_ERR_ABORT;
        }
    }
    r->replay = NULL;
    r->samples = a->samples;
    agg_stop(r);
    return PB_OK;
}

/* ---- the decoder ------------------------------------------------------------------- */
static void pprof_pr_free(void *p)
{
    pr *r = (pr *)p;
    PB_FREE_ALL(r->arena, r->soff, r->funcs, r->locs, r->lines, r->maps, r->types, r->comments, r->ids, r->stack,
                r->slocs, r->tsel, r->pkgbuf, r->abuf, r->values, r->labels, r->locmap, r->locfr, r->agg.buf,
                r->agg.key);
    agg_stop(r);
    pb_strtab_free(&r->threads);
    pb_index_free(&r->tfunc);
    pb_index_free(&r->tloc);
    pb_index_free(&r->tmap);
}

static void pprof_pr_init(void *p, pb_source *src, const pb_options *opt, pb_sink *warn_sink, pb_error *err)
{
    pr *r = (pr *)p;
    (void)warn_sink;
    r->s = src;
    r->err = err;
    r->opt = opt;
    pb_rd_init(&r->rd, src, err, "%s needs %zu more byte%s for its %s, only %zu left", opt->max_record_size);
}

/* the Sample being sent, and whether it is a sum (agg_replay: each of its
 * samples was at most INT32_MAX ticks, agg_usable) */
static uint64_t sample_at(void *p, int *summed)
{
    pr *r = (pr *)p;
    *summed = r->replay != NULL;
    return r->sample_off;
}

/* at the start of the input: 1 when it is gzip (1f 8b), the view then started */
static pb_status open_pass(pr *r)
{
    int gz;
    if (pb_src_need(r->s, 2) < 0)
        return pb_rd_status(&r->rd);
    gz = pb_src_avail(r->s) >= 2 && r->s->p[0] == 0x1f && r->s->p[1] == 0x8b;
    r->gzip = gz;
    if (gz && r->opt->max_decompressed_by_size && pb_src_size(r->s) != UINT64_MAX) {
        /* no max_decompressed_bytes given: a .gz inflates to no more than
         * PB_INFLATE_RATIO times its size (or PB_INFLATE_FLOOR) */
        uint64_t size = pb_src_size(r->s), cap;
        cap = size > UINT64_MAX / PB_INFLATE_RATIO ? UINT64_MAX : size * PB_INFLATE_RATIO;
        if (cap < PB_INFLATE_FLOOR)
            cap = PB_INFLATE_FLOOR;
        if (cap < r->s->max_inflated) {
            r->s->max_inflated = cap;
            r->s->max_inflated_why = "64 MiB, or 64 times the .gz file's size, unless max_decompressed_bytes is given";
        }
    }
    return gz ? pb_src_start_gzip(r->s) : PB_OK;
}

/* pass 1: the tables (and the checks they allow) */
static pb_status pprof_prepare(void *p, pb_fold_config *cfg)
{
    pr *r = (pr *)p;
    pb_status st;
    r->agg.on = cfg->sums_stacks || cfg->sums_counted; /* one pass, where the sink allows */
    r->agg.nv = UINT32_MAX;
    if ((st = open_pass(r)) != PB_OK || (st = each_top(r, table_field)) != PB_OK)
        return st;
    agg_flush(r);
    if (r->nstr == 0)
        return corrupt_at(r, pb_src_offset(r->s), "the profile has no string table (string_table[0] must be \"\")");
    if ((st = index_ids(r)) != PB_OK || (st = choose_type(r)) != PB_OK)
        return st;
    if (pb_grow((void **)&r->values, &r->cvalues, r->ntypes, sizeof *r->values) < 0)
        return pprof_oom(r);
    if ((st = pb_src_rewind(r->s)) != PB_OK)
        return st;
    return open_pass(r);
}

/* for a sink that takes them (samples.h): every sample type, the period,
 * the mappings */
static pb_status columns_and_mappings(pr *r)
{
    pb_sample_columns c;
    pb_str *names;
    pb_mapping mp;
    size_t i, len;
    const char *t;
    pb_status st = PB_OK;
    if (!r->out->columns && !r->out->mapping)
        return PB_OK;
    if (r->out->columns) {
        memset(&c, 0, sizeof c);
        if (!(names = (pb_str *)calloc(r->ntypes * 2, sizeof *names)))
            return pprof_oom(r);
        for (i = 0; i < r->ntypes; i++) {
            t = pprof_str_at(r, r->types[i].type, &len);
            names[i] = pb_str_make(t, len, pb_has_high(t, len));
            t = pprof_str_at(r, r->types[i].unit, &len);
            names[r->ntypes + i] = pb_str_make(t, len, pb_has_high(t, len));
        }
        c.type = names;
        c.unit = names + r->ntypes;
        c.n = (uint32_t)r->ntypes;
        /* --sample-type names the default; else the profile's own */
        c.dflt = r->opt->sample_type || r->default_type > 0 ? r->vindex : UINT32_MAX;
        if (r->have_period_type) {
            t = pprof_str_at(r, r->period_type.type, &len);
            c.period_type = pb_str_make(t, len, pb_has_high(t, len));
            t = pprof_str_at(r, r->period_type.unit, &len);
            c.period_unit = pb_str_make(t, len, pb_has_high(t, len));
        }
        c.period = r->period;
        st = r->out->columns(r->out, &c);
        free(names);
        if (st != PB_OK)
            return st;
    }
    for (i = 0; i < r->nmaps && r->out->mapping; i++) {
        const p_map *m = &r->maps[i];
        memset(&mp, 0, sizeof mp);
        mp.start = m->start;
        mp.limit = m->limit;
        mp.offset = m->offset;
        t = pprof_str_at(r, m->file, &len);
        mp.file = pb_str_make(t, len, pb_has_high(t, len));
        t = pprof_str_at(r, m->build_id, &len);
        mp.build_id = pb_str_make(t, len, pb_has_high(t, len));
        mp.flags = m->flags;
        if ((st = r->out->mapping(r->out, &mp, &r->maps[i].sink_id)) != PB_OK)
            return st;
    }
    return PB_OK;
}

/* pass 2: the samples, into r->out */
static pb_status pprof_decode(void *p, pb_sample_sink *out)
{
    pr *r = (pr *)p;
    pb_status st;
    r->out = out;
    if ((st = pprof_head_attributes(r)) != PB_OK || (st = columns_and_mappings(r)) != PB_OK ||
        (st = agg_replay(r)) != PB_OK)
        return st;
    if (r->opt->have_thread) {
        size_t i;
        int found = 0;
        for (i = 0; i < r->threads.n; i++)
            found |= r->tsel[i];
        if (!found) {
            char list[256];
            size_t n = 0;
            list[0] = '\0';
            for (i = 0; i < r->threads.n && n < sizeof list - 40; i++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%.30s", i ? ", " : "",
                                      pb_strtab_ptr(&r->threads, (uint32_t)i));
            if (r->opt->thread_name)
                return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED, "no thread \"%.100s\" in this profile (its threads: %s)",
                                     r->opt->thread_name, list);
            return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED, "no thread %llu in this profile (its threads: %s)",
                                 (unsigned long long)r->opt->thread_id, list);
        }
    }
    if ((st = pprof_end_attributes(r)) != PB_OK)
        return st;
    return r->out->finish(r->out);
}

/* ticks: ns, or one unit of a count or size as 1 ns; nytprof.out's time is the sampled time; a
 * weight past INT32_MAX ns splits into TIME_LINEs charged to max_statements (split) */
const pb_fold_decoder pb_pprof_decoder = {sizeof(pr), pprof_pr_init, pprof_prepare, pprof_decode, pprof_pr_free,
    {.source_format = "pprof", .ticks_per_sec = 1000000000u, .ticks_per_weight = 1, .sampled_spans = 1,
     .split = {.words = "a sample of weight {weight} needs more TIME_LINE chunks than the {left} left of max_statements",
               .sample_at = sample_at}}};

/* ---- detection ------------------------------------------------------------------------ */
/* 1 when m holds only well-formed protobuf fields (a field the prefix cuts
 * counts as well-formed); *nf: fields read, a top-level field whose header
 * is whole but whose payload runs past the prefix counted too (*cut set:
 * detection reads field headers, never needs whole fields) */
static int wire_ok(const unsigned char *p, size_t len, int depth, unsigned *nf, int *cut)
{
    msg m;
    m.start = m.p = p;
    m.end = p + len;
    *nf = 0;
    *cut = 0;
    while (m.p < m.end) {
        uint64_t tag, v;
        unsigned wt;
        uint32_t field;
        if (msg_varint(&m, &tag) < 0)
            return m.end - m.p < 10 && depth == 0; /* cut by the prefix */
        field = (uint32_t)(tag >> 3);
        wt = (unsigned)(tag & 7);
        if (field == 0 || (tag >> 3) > P_MAX_FIELD)
            return 0;
        if (depth == 0) {
            int want = top_wt(field);
            if (want == -1 || (want >= 0 && (unsigned)want != wt) || (want == -2 && wt != WT_VARINT && wt != WT_LEN))
                return 0;
        }
        if (wt == WT_VARINT) {
            if (msg_varint(&m, &v) < 0)
                return depth == 0 && m.end - m.p < 10;
        } else if (wt == WT_I64 || wt == WT_I32) {
            size_t n = wt == WT_I64 ? 8 : 4;
            if ((size_t)(m.end - m.p) < n)
                return depth == 0;
            m.p += n;
        } else if (wt == WT_LEN) {
            unsigned sub;
            int subcut;
            if (msg_varint(&m, &v) < 0)
                return depth == 0 && m.end - m.p < 10;
            if (v > (uint64_t)(m.end - m.p)) {
                /* runs past the prefix: its header counts (a length no 4 GiB input holds does not) */
                if (depth != 0 || v >= (UINT64_C(1) << 32))
                    return depth == 0;
                (*nf)++;
                *cut = 1;
                return 1;
            }
            /* a message field of a Profile: its own fields must parse */
            if (depth == 0 && field != 6 && field != 13 && !wire_ok(m.p, (size_t)v, 1, &sub, &subcut))
                return 0;
            m.p += v;
        } else {
            return 0;
        }
        (*nf)++;
    }
    return 1;
}

/* a Profile's first bytes: every field in them is one profile.proto has, of
 * its wire type, and the messages among them parse; at least 3 fields, or
 * the whole input, or 2 when the second runs past the prefix (a first
 * Sample of thousands of locations: Go writes sample_type, then samples) */
static int profile_prefix(const unsigned char *p, size_t len, int whole)
{
    unsigned nf;
    int cut;
    if (len == 0 || !wire_ok(p, len, 0, &nf, &cut))
        return 0;
    return nf >= 3 || (whole && nf >= 1) || (cut && nf >= 2);
}

/* the start of the gzip members (one after another, as the reader takes
 * them: source.c) inflated into out: bytes produced */
static size_t gunzip_prefix(const unsigned char *p, size_t len, unsigned char *out, size_t cap, int *whole)
{
    z_stream z;
    int rc;
    size_t n;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return 0;
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    while ((rc = inflate(&z, Z_SYNC_FLUSH)) == Z_STREAM_END && z.avail_out && z.avail_in >= 2 && z.next_in[0] == 0x1f &&
           z.next_in[1] == 0x8b && inflateReset(&z) == Z_OK)
        ; /* the next member */
    n = cap - z.avail_out;
    /* the whole input: the last member ended where the bytes given do */
    *whole = rc == Z_STREAM_END && z.avail_in == 0;
    inflateEnd(&z);
    return n; /* what came before a data error, too: damage further on is the decoder's to report */
}

int pb_pprof_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info)
{
    unsigned char buf[4096];
    int whole = file_size != UINT64_MAX && len >= file_size;
    if (len >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8) {
        size_t n = gunzip_prefix(p, len, buf, sizeof buf, &whole);
        if (!profile_prefix(buf, n, whole))
            return 0;
        info->compressed = 1;
        snprintf(info->compression, sizeof info->compression, "gzip");
        return 1;
    }
    if (!profile_prefix(p, len, whole))
        return 0;
    info->compressed = 0;
    snprintf(info->compression, sizeof info->compression, "none");
    return 1;
}
