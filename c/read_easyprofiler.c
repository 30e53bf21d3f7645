/* read_easyprofiler.c - EasyProfiler .prof decoder, every version from 0.1.0
 * to 2.1.0 (the EasyProfiler format spec), folded into NYTProf
 * chunks by fold_spans.c.
 *
 * The file is read as a stream, one record at a time: counts and sizes in
 * the header (blocks_count, memory_size, descriptors_memory_size) are never
 * used to size anything; every u16-sized record is checked against the bytes
 * that really follow.  Timestamps are converted one by one exactly as the
 * real reader does: ns = (u64)((double)t * (1e9 / cpu_frequency)), with
 * cpu_frequency 0 meaning "already ns".  Blocks that end before profiling
 * began are dropped and earlier begins are clamped to it, as the reader does.
 *
 * On purpose unlike the real reader:
 *  - a file with 0 blocks (dumped while a top-level block was open, upstream
 *    #135/#218) is read, with a warning, instead of refused;
 *  - context switches of files before 1.3.0 are read with their u32 target
 *    tid (the current reader reads them with the 1.3 layout and garbles the
 *    name);
 *  - a block whose end lies before its begin is given length 0 (warning)
 *    instead of an unsigned wrap-around;
 *  - the number of records is not required to equal the header's count
 *    (warning).
 *
 * Chunk stream: VERSION 5 0, ATTRIBUTEs (ticks_per_sec=1000000000,
 * source_format, source_format_version, cpu_frequency, pid, ...), then per
 * thread: ATTRIBUTEs thread_<tid>_name/_pid, PID_START, NEW_FIDs, TIME_LINEs,
 * one COMMENT per value record (see value_comment()), SUB_INFO, SUB_CALLERS,
 * statistics ATTRIBUTEs, PID_END; at the end bookmark ATTRIBUTEs.
 *
 * Names here: ep_ = this reader's helpers and types (ep_rd reads a field, ep_buf a buffer, ep_desc
 * a block descriptor); cs_count = a thread's context switches.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "options.h"
#include "fold_samples.h"
#include "fold_spans.h"
#include "json_lines.h"
#include "reader.h"
#include "util.h"

#define EP_SIGNATURE 0x45617379u
#define V(a, b, c) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | (uint32_t)(c))

enum { EP_EVENT = 0, EP_BLOCK = 1, EP_VALUE = 2 };

typedef struct {
    uint32_t key;     /* fold kind */
    uint8_t type;
    uint8_t present;  /* 0: null slot */
} ep_desc;

typedef struct {
    char *p;
    size_t len, cap;
    int oom;
} ep_buf;

typedef struct {
    pb_source *s;
    pb_error *err;
    pb_rd rd;         /* the cursor */
    pb_sink *sink;
    const pb_options *opt;
    pb_spans *fold;
    uint32_t version;
    int tid64;
    int64_t freq;
    double factor;
    uint64_t begin_ns, end_ns;
    uint64_t pid;
    int have_pid;
    uint64_t blocks_count;
    uint32_t threads_count;
    uint32_t desc_count;
    uint16_t bookmarks_count;
    ep_desc *desc;
    uint32_t ndesc;
    size_t desc_cap;
    uint64_t records;
    uint64_t dropped;
    int warned_backwards;
    int matched;
    ep_buf text;
    char threads_seen[320];
    /* read_thread()'s name and package while it calls the sink */
    unsigned char *cur_name;
    char *cur_pkg;
    char *app;        /* the first descriptor's file: the program (ATTRIBUTE application) */
} ep_rd;

/* n bytes for `what` (a whole record or its fixed part) */
static pb_status easyprofiler_need(ep_rd *r, size_t n, const char *what)
{
    r->rd.rec = what;
    return pb_rd_need(&r->rd, n, "");
}

/* every record is at most 65535 bytes; max_record_size may say less */
static pb_status rec_limit(ep_rd *r, size_t size, uint64_t off, const char *what)
{
    if (r->opt->max_record_size && (uint64_t)size > r->opt->max_record_size)
        return pb_fail(r->err, PB_ERR_LIMIT, off, "%s of %zu bytes is longer than max_record_size (%llu bytes)", what,
                       size, (unsigned long long)r->opt->max_record_size);
    return PB_OK;
}

/* a record's 2-byte size at off (size_what names it when the file ends
 * first), within max_record_size (rec_what) */
static pb_status record_size(ep_rd *r, uint64_t off, const char *size_what, const char *rec_what, uint16_t *size)
{
    pb_status st;
    if ((st = easyprofiler_need(r, 2, size_what)) != PB_OK)
        return st;
    *size = pb_le16(r->s->p);
    return rec_limit(r, *size, off, rec_what);
}

/* thread tid's u32 count of its `noun` records ("context switch", "block"),
 * taken */
static pb_status thread_count(ep_rd *r, uint64_t tid, const char *noun, uint32_t *count)
{
    char what[112];
    pb_status st;
    snprintf(what, sizeof what, "thread %llu %s count", (unsigned long long)tid, noun);
    if ((st = easyprofiler_need(r, 4, what)) != PB_OK)
        return st;
    r->rd.rec = ""; /* not the message buffer that ends here */
    *count = pb_le32(r->s->p);
    r->s->p += 4;
    return PB_OK;
}

/* the file ends inside the record of `size` bytes at off that the label
 * (a printf format, formatted only here) names: the source's own error, or
 * "<label> claims <size> bytes, the file has <n> left" */
static pb_status record_cut(ep_rd *r, uint64_t off, unsigned size, const char *label_fmt, ...)
{
    char label[128];
    va_list ap;
    if (r->err->status)
        return r->err->status;
    va_start(ap, label_fmt);
    vsnprintf(label, sizeof label, label_fmt, ap);
    va_end(ap);
    return pb_fail(r->err, PB_ERR_TRUNCATED, off, "%s claims %u bytes, the file has %zu left", label, size,
                   pb_src_avail(r->s) >= 2 ? pb_src_avail(r->s) - 2 : 0);
}

static void easyprofiler_warn(ep_rd *r, const char *msg)
{
    if (r->sink->warn) {
        char buf[600];
        snprintf(buf, sizeof buf, "easyprofiler: %s", msg);
        r->sink->warn(r->sink, buf);
    }
}

/* ns = (u64)(t * (1e9 / cpu_frequency)), as EASY_CONVERT_TO_NANO */
static int conv(const ep_rd *r, uint64_t t, uint64_t *ns)
{
    double v;
    if (r->freq == 0) {
        *ns = t;
        return 0;
    }
    v = (double)t * r->factor;
    if (!(v < 18446744073709551616.0))
        return -1;
    *ns = (uint64_t)v;
    return 0;
}

/* ---- text helpers ----------------------------------------------------- */
static void buf_add(ep_buf *b, const char *p, size_t n)
{
    if (b->oom)
        return;
    if (pb_grow((void **)&b->p, &b->cap, b->len + n + 1, 1) < 0) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_str(ep_buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_fmt_u64(ep_buf *b, uint64_t v)
{
    char t[32];
    snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    buf_str(b, t);
}

static int valid_utf8(const unsigned char *s, size_t n) { return pb_utf8_valid((const char *)s, n); }

static void buf_put(void *b, const char *p, size_t n) { buf_add((ep_buf *)b, p, n); }

/* A JSON string (json_lines.h): UTF-8 passes through when the bytes are
 * valid UTF-8, otherwise bytes >= 0x80 become \u00XX (Latin-1). */
static void buf_json_str(ep_buf *b, const unsigned char *s, size_t n)
{
    pb_json_escape((const char *)s, n, valid_utf8(s, n), PB_JSON_RAW_UTF8, buf_put, b);
}

static void buf_double(ep_buf *b, double v, int prec)
{
    char t[48];
    if (v != v) {
        buf_str(b, "\"NaN\"");
        return;
    }
    if (v - v != 0) {
        buf_str(b, v > 0 ? "\"Inf\"" : "\"-Inf\"");
        return;
    }
    snprintf(t, sizeof t, "%.*g", prec, v);
    buf_str(b, t);
}

static const char *const type_names[13] = {
    "bool", "char", "int8", "uint8", "int16", "uint16", "int32", "uint32",
    "int64", "uint64", "float", "double", "string",
};
static const unsigned char type_size[13] = {1, 1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 1};

static void buf_elem(ep_buf *b, unsigned type, const unsigned char *p)
{
    char t[32];
    switch (type) {
    case 0: buf_str(b, p[0] ? "true" : "false"); return;
    case 1:
    case 2: snprintf(t, sizeof t, "%d", (int)(signed char)p[0]); break;
    case 3: snprintf(t, sizeof t, "%u", (unsigned)p[0]); break;
    case 4: snprintf(t, sizeof t, "%d", (int)(int16_t)pb_le16(p)); break;
    case 5: snprintf(t, sizeof t, "%u", (unsigned)pb_le16(p)); break;
    case 6: snprintf(t, sizeof t, "%ld", (long)(int32_t)pb_le32(p)); break;
    case 7: snprintf(t, sizeof t, "%lu", (unsigned long)pb_le32(p)); break;
    case 8: snprintf(t, sizeof t, "%lld", (long long)(int64_t)pb_le64(p)); break;
    case 9: snprintf(t, sizeof t, "%llu", (unsigned long long)pb_le64(p)); break;
    case 10: {
        uint32_t u = pb_le32(p);
        float fv;
        memcpy(&fv, &u, 4);
        buf_double(b, (double)fv, 9);
        return;
    }
    case 11: {
        uint64_t u = pb_le64(p);
        double dv;
        memcpy(&dv, &u, 8);
        buf_double(b, dv, 17);
        return;
    }
    default: return;
    }
    buf_str(b, t);
}

/* One value record as a COMMENT:
 *   value {"thread":T,"t_ns":N,"name":"...","type":"int32","array":0,"id":"0x...","value":V}\n
 * V is a JSON number/true/false, an array of them, or a string (type
 * "string"); when the data does not fit its type, "hex" holds the raw bytes
 * instead of "value".  Types: bool char int8 uint8 int16 uint16 int32 uint32
 * int64 uint64 float double string (or "type_N" for unknown N). */
static pb_status value_comment(ep_rd *r, uint64_t tid, uint64_t t_ns, const char *name, size_t name_len,
                               const unsigned char *tail, size_t tlen)
{
    ep_buf *b = &r->text;
    unsigned type = tail[4];
    int is_array = tail[5] != 0;
    uint64_t id = pb_le64(tail + 6);
    size_t dsize = pb_le16(tail + 2);
    const unsigned char *d = tail + 14;
    char t[64];
    pb_chunk c;
    int fits;
    (void)tlen;
    b->len = 0;
    buf_str(b, "value {\"thread\":");
    buf_fmt_u64(b, tid);
    buf_str(b, ",\"t_ns\":");
    buf_fmt_u64(b, t_ns);
    buf_str(b, ",\"name\":");
    buf_json_str(b, (const unsigned char *)name, name_len);
    if (type < 13)
        snprintf(t, sizeof t, ",\"type\":\"%s\"", type_names[type]);
    else
        snprintf(t, sizeof t, ",\"type\":\"type_%u\"", type);
    buf_str(b, t);
    snprintf(t, sizeof t, ",\"array\":%d,\"id\":\"0x%llx\"", is_array, (unsigned long long)id);
    buf_str(b, t);
    if (type == 12) {
        fits = 1;
    } else if (type < 13) {
        fits = is_array ? dsize % type_size[type] == 0 : dsize == type_size[type];
    } else {
        fits = 0;
    }
    if (!fits) {
        size_t i;
        buf_str(b, ",\"hex\":\"");
        for (i = 0; i < dsize; i++) {
            snprintf(t, sizeof t, "%02x", d[i]);
            buf_add(b, t, 2);
        }
        buf_str(b, "\"");
    } else if (type == 12) {
        size_t n = 0;
        while (n < dsize && d[n])
            n++;
        buf_str(b, ",\"value\":");
        buf_json_str(b, d, n);
    } else if (is_array) {
        size_t i;
        buf_str(b, ",\"value\":[");
        for (i = 0; i < dsize; i += type_size[type]) {
            if (i)
                buf_add(b, ",", 1);
            buf_elem(b, type, d + i);
        }
        buf_str(b, "]");
    } else {
        buf_str(b, ",\"value\":");
        buf_elem(b, type, d);
    }
    buf_str(b, "}\n");
    if (b->oom)
        return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(r->s), "out of memory formatting a value record");
    memset(&c, 0, sizeof c);
    pb_chunk_comment(&c, pb_str_make(b->p, b->len, 0));
    return pb_emit(r->sink, &c) ? PB_ERR_ABORT : PB_OK;
}

/* Attribute values are text lines in nytprof.out: no newlines. */
static int emit_attr_bytes(ep_rd *r, const char *key, const unsigned char *v, size_t n)
{
    pb_chunk c;
    size_t i;
    int high = 0;
    ep_buf *b = &r->text;
    b->len = 0;
    buf_add(b, (const char *)v, n);
    buf_add(b, "", 0);
    if (b->oom)
        return -1;
    for (i = 0; i < n; i++) {
        if (b->p[i] == '\n' || b->p[i] == '\r')
            b->p[i] = ' ';
        if ((unsigned char)b->p[i] >= 0x80)
            high = 1;
    }
    pb_chunk_attribute(&c, pb_str_c(key), pb_str_make(b->p, n, high && valid_utf8(v, n)));
    return pb_emit(r->sink, &c);
}

/* ---- header ------------------------------------------------------------ */
/* the fields after signature and version (p: the header; easyprofiler_need() done) */
static pb_status easyprofiler_header_fields(ep_rd *r, const unsigned char *p, uint64_t *begin, uint64_t *end)
{
    uint32_t v = r->version;
    p += 8;
    if (v < V(2, 0, 0)) {
        if (v > V(1, 0, 0)) {
            r->have_pid = 1;
            if (v < V(1, 3, 0)) {
                r->pid = pb_le32(p);
                p += 4;
            } else {
                r->pid = pb_le64(p);
                p += 8;
            }
        }
        r->freq = (int64_t)pb_le64(p);
        *begin = pb_le64(p + 8);
        *end = pb_le64(p + 16);
        r->blocks_count = pb_le32(p + 24);
        /* memory_size u64 at +28 and descriptors_memory_size at +40 are not used */
        r->desc_count = pb_le32(p + 36);
    } else {
        r->have_pid = 1;
        r->pid = pb_le64(p);
        r->freq = (int64_t)pb_le64(p + 8);
        *begin = pb_le64(p + 16);
        *end = pb_le64(p + 24);
        /* memory_size +32, descriptors_memory_size +40 */
        r->blocks_count = pb_le32(p + 48);
        r->desc_count = pb_le32(p + 52);
        if (v >= V(2, 1, 0)) {
            uint16_t pad;
            r->threads_count = pb_le32(p + 56);
            r->bookmarks_count = pb_le16(p + 60);
            pad = pb_le16(p + 62);
            if (pad != 0)
                return pb_fail(r->err, PB_ERR_CORRUPT, 70, "file header padding is 0x%04x, expected 0", pad);
        }
    }
    if (r->freq < 0)
        return pb_fail(r->err, PB_ERR_CORRUPT, 8, "cpu_frequency %lld is negative", (long long)r->freq);
    if (r->freq)
        r->factor = 1e9 / (double)r->freq;
    if (conv(r, *begin, &r->begin_ns) || conv(r, *end, &r->end_ns))
        return pb_fail(r->err, PB_ERR_CORRUPT, 8,
                       "file header times do not fit in 64 bits of ns at cpu_frequency %lld Hz",
                       (long long)r->freq);
    return PB_OK;
}

/* the stream's head: VERSION, OPTION calls, the file's ATTRIBUTEs (vs: the
 * file version as text) */
static pb_status header_chunks(ep_rd *r, const char *vs)
{
    pb_chunk c;
    char t[64];
    memset(&c, 0, sizeof c);
    pb_chunk_version(&c, 5, 0);
    if (pb_emit(r->sink, &c))
        return PB_ERR_ABORT;
    pb_chunk_option(&c, pb_str_c("calls"), pb_str_c("1")); /* the stream carries SUB_RETURNs */
    if (pb_emit(r->sink, &c))
        return PB_ERR_ABORT;
    if (pb_emit_attribute(r->sink, "ticks_per_sec", "1000000000") ||
        pb_emit_attribute(r->sink, "source_format", "easyprofiler") ||
        pb_emit_attribute(r->sink, "source_format_version", vs))
        return PB_ERR_ABORT;
    if (r->s->fp) {
        /* the file carries no wall-clock time: basetime (NYTProf's $^T) is
         * estimated as the file's mtime (or its gzip header's) minus the profiled duration */
        uint64_t mt = pb_src_mtime(r->s);
        if (mt) {
            uint64_t dur = r->end_ns > r->begin_ns ? (r->end_ns - r->begin_ns + 500000000u) / 1000000000u : 0;
            if (pb_emit_attribute_u64(r->sink, "basetime", mt > dur ? mt - dur : mt))
                return PB_ERR_ABORT;
        }
    }
    snprintf(t, sizeof t, "%lld", (long long)r->freq);
    if (pb_emit_attribute(r->sink, "cpu_frequency", t))
        return PB_ERR_ABORT;
    if (pb_emit_attribute(r->sink, "profiler", "EasyProfiler") ||
        pb_emit_attribute(r->sink, "profiler_version", vs) ||
        pb_emit_attribute(r->sink, "clock", r->freq ? "CPU timestamp counter, converted to ns at cpu_frequency"
                                                    : "steady clock, ns"))
        return PB_ERR_ABORT;
    if (r->have_pid && pb_emit_attribute_u64(r->sink, "pid", r->pid))
        return PB_ERR_ABORT;
    if (pb_emit_attribute_u64(r->sink, "source_begin_ns", r->begin_ns) ||
        pb_emit_attribute_u64(r->sink, "source_end_ns", r->end_ns) ||
        pb_emit_attribute_u64(r->sink, "source_blocks_count", r->blocks_count) ||
        pb_emit_attribute(r->sink, "cumulative_overhead_ticks", "0"))
        return PB_ERR_ABORT;
    return PB_OK;
}

static pb_status easyprofiler_read_header(ep_rd *r)
{
    const unsigned char *p;
    uint32_t sig, v;
    size_t hsize;
    uint64_t begin, end;
    pb_status st;
    char vs[32], t[64];

    if ((st = easyprofiler_need(r, 8, "file header (signature and version)")) != PB_OK)
        return st;
    p = r->s->p;
    sig = pb_le32(p);
    v = pb_le32(p + 4);
    if (sig != EP_SIGNATURE)
        return pb_fail(r->err, PB_ERR_CORRUPT, 0, "file signature is 0x%08x, expected 0x%08x (\"ysaE\")", sig,
                       EP_SIGNATURE);
    if (v < V(0, 1, 0))
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, 4,
                       "file version %u.%u.%u is older than 0.1.0, the first EasyProfiler file format", v >> 24,
                       (v >> 16) & 0xFF, v & 0xFFFF);
    r->version = v;
    r->tid64 = v >= V(1, 3, 0);
    /* whole header, signature and version included */
    if (v <= V(1, 0, 0))
        hsize = 56;
    else if (v < V(1, 3, 0))
        hsize = 60;
    else if (v < V(2, 1, 0))
        hsize = 64;
    else
        hsize = 72;
    snprintf(vs, sizeof vs, "%u.%u.%u", v >> 24, (v >> 16) & 0xFF, v & 0xFFFF);
    snprintf(t, sizeof t, "file header of version %s", vs);
    if ((st = easyprofiler_need(r, hsize, t)) != PB_OK)
        return st;
    if ((st = easyprofiler_header_fields(r, r->s->p, &begin, &end)) != PB_OK || (st = header_chunks(r, vs)) != PB_OK)
        return st;
    if (r->blocks_count == 0)
        easyprofiler_warn(r, "the file has 0 blocks (a dump taken while a top-level block is still open writes none; "
                "upstream issues #135 and #218). EasyProfiler's own reader refuses such a file; it is read "
                "here as a profile without calls");
    r->s->p += hsize;
    return PB_OK;
}

/* ---- descriptors --------------------------------------------------------- */
static pb_status read_descriptors(ep_rd *r, uint32_t count)
{
    uint32_t i;
    pb_status st;
    for (i = 0; i < count; i++) {
        const unsigned char *p;
        uint64_t off = pb_src_offset(r->s);
        uint16_t size, name_len;
        ep_desc *d;
        size_t nl, fl;
        int32_t line;
        if (pb_src_need(r->s, 2) <= 0) {
            char what[96];
            snprintf(what, sizeof what, "descriptor %u of %u: its record size", i, count);
            if ((st = easyprofiler_need(r, 2, what)) != PB_OK)
                return st;
        }
        size = pb_le16(r->s->p);
        if ((st = rec_limit(r, size, off, "descriptor record")) != PB_OK)
            return st;
        if (r->ndesc >= UINT32_C(1) << 30)
            return pb_fail(r->err, PB_ERR_LIMIT, off, "descriptor table: more than 2^30 descriptors");
        if (pb_grow((void **)&r->desc, &r->desc_cap, (size_t)r->ndesc + 1, sizeof *r->desc) < 0)
            return pb_fail(r->err, PB_ERR_LIMIT, off, "out of memory reading descriptors");
        d = &r->desc[r->ndesc];
        memset(d, 0, sizeof *d);
        if (size == 0) {
            r->s->p += 2; /* a null slot */
            r->ndesc++;
            continue;
        }
        if (pb_src_need(r->s, 2 + (size_t)size) <= 0)
            return record_cut(r, off, size, "descriptor %u record", i);
        p = r->s->p + 2;
        if (size < 16)
            return pb_fail(r->err, PB_ERR_CORRUPT, off,
                           "descriptor %u record is %u bytes, shorter than its 16 fixed bytes", i, size);
        line = (int32_t)pb_le32(p + 4);
        d->type = p[12];
        name_len = pb_le16(p + 14);
        if (name_len > size - 16)
            return pb_fail(r->err, PB_ERR_CORRUPT, off,
                           "descriptor %u name is %u bytes, but only %u bytes of the record follow", i,
                           name_len, size - 16);
        nl = 0;
        while (nl < name_len && p[16 + nl])
            nl++;
        fl = 0;
        while (16 + (size_t)name_len + fl < size && p[16 + name_len + fl])
            fl++;
        if ((st = pb_spans_kind(r->fold, pb_str_make((const char *)p + 16, nl, 0),
                                pb_str_make((const char *)p + 16 + name_len, fl, 0),
                                line < 0 ? 0u : (uint32_t)line, &d->key)) != PB_OK)
            return st;
        if (fl && !r->app) {
            if (!(r->app = pb_memdup0((const char *)p + 16 + name_len, fl)))
                return pb_fail(r->err, PB_ERR_LIMIT, off, "out of memory reading descriptors");
            pb_controls_to_spaces(r->app, fl); /* the ATTRIBUTE is one line */
        }
        d->present = 1;
        r->ndesc++;
        r->s->p += 2 + (size_t)size;
    }
    return PB_OK;
}

/* ATTRIBUTE application (nytprofhtml's "Profile of ..."): the file holds no
 * program name; EasyProfiler registers a block descriptor when the program
 * first runs that block, so the first descriptor's source file is the
 * program's (ep_basic.cpp); without one, the input's base name */
static pb_status easyprofiler_application(ep_rd *r)
{
    const char *f = r->err->file, *b = strrchr(f, '/');
    const char *app = r->app ? r->app : f[0] ? (b ? b + 1 : f) : "easyprofiler";
    return pb_emit_attribute(r->sink, "application", app) ? PB_ERR_ABORT : PB_OK;
}

/* ---- threads --------------------------------------------------------------- */
static int easyprofiler_thread_selected(const ep_rd *r, uint64_t tid, const unsigned char *name, size_t nl)
{
    const pb_options *o = r->opt;
    if (!o->have_thread)
        return 1;
    if (o->thread_name) {
        const char *tn = o->thread_name;
        size_t tl = strlen(tn), i;
        uint64_t v = 0;
        if (tl == nl && memcmp(tn, name, nl) == 0)
            return 1;
        if (tl == 0 || tl > 20)
            return 0;
        for (i = 0; i < tl; i++) {
            if (tn[i] < '0' || tn[i] > '9')
                return 0;
            v = v * 10 + (uint64_t)(tn[i] - '0');
        }
        return v == tid;
    }
    return tid == o->thread_id;
}

/* The package of this thread's root sub <package>::RUNTIME (its blocks' subs
 * are in package "main" whatever the thread: fold_spans.h): "main" for the
 * thread named "Main" (EasyProfiler's EASY_MAIN_THREAD) and for a thread named
 * "main"; "thread_<tid>" for an unnamed thread; otherwise the thread name with every
 * ASCII character outside [A-Za-z0-9_] made "_" (and "_" put in front of a
 * leading digit). */
static char *thread_package(uint64_t tid, const unsigned char *name, size_t nl)
{
    char *pk;
    size_t i, o = 0;
    if (nl == 0) {
        pk = (char *)malloc(32);
        if (pk)
            snprintf(pk, 32, "thread_%llu", (unsigned long long)tid);
        return pk;
    }
    if ((nl == 4 && memcmp(name, "Main", 4) == 0) || (nl == 4 && memcmp(name, "main", 4) == 0)) {
        pk = (char *)malloc(5);
        if (pk)
            memcpy(pk, "main", 5);
        return pk;
    }
    pk = (char *)malloc(nl + 2);
    if (!pk)
        return NULL;
    if (name[0] >= '0' && name[0] <= '9')
        pk[o++] = '_';
    for (i = 0; i < nl; i++) {
        unsigned char ch = name[i];
        int ok = ch >= 0x80 || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_';
        pk[o++] = ok ? (char)ch : '_';
    }
    pk[o] = '\0';
    return pk;
}

/* free read_thread()'s name and package (kept in r while the sink runs, so
 * that ep_cleanup() releases them when a consumer never returns) */
static void drop_name(ep_rd *r)
{
    free(r->cur_pkg);
    r->cur_pkg = NULL;
    free(r->cur_name);
    r->cur_name = NULL;
}

/* a selected thread starts: its ATTRIBUTEs and the fold's PID_START */
static pb_status thread_begin(ep_rd *r, uint64_t tid, const unsigned char *name, size_t nl, uint64_t toff)
{
    pb_spans_thread th;
    char key[96];
    char *pkg = r->cur_pkg = thread_package(tid, name, nl);
    pb_status st;
    if (!pkg)
        return pb_fail(r->err, PB_ERR_LIMIT, toff, "out of memory");
    r->matched = 1;
    snprintf(key, sizeof key, "thread_%llu_name", (unsigned long long)tid);
    if (emit_attr_bytes(r, key, name, nl))
        return r->text.oom ? pb_fail(r->err, PB_ERR_LIMIT, toff, "out of memory") : PB_ERR_ABORT;
    snprintf(key, sizeof key, "thread_%llu_pid", (unsigned long long)tid);
    if (pb_emit_attribute_u64(r->sink, key, (uint32_t)tid))
        return PB_ERR_ABORT;
    memset(&th, 0, sizeof th);
    th.tid = tid;
    th.pid = (uint32_t)tid;
    th.ppid = r->have_pid && (uint32_t)r->pid != (uint32_t)tid ? (uint32_t)r->pid : 0;
    th.start_time = (double)r->begin_ns / 1e9;
    th.end_time = (double)r->end_ns / 1e9;
    th.package = pkg;
    st = pb_spans_thread_begin(r->fold, &th);
    free(pkg);
    r->cur_pkg = NULL;
    return st;
}

/* a thread's id and name, taken; *sel: the thread is one we fold (begun) */
static pb_status thread_head(ep_rd *r, uint32_t index, uint64_t *tidp, int *sel)
{
    const unsigned char *p;
    uint64_t tid, toff = pb_src_offset(r->s);
    size_t tsz = r->tid64 ? 8 : 4, nl;
    uint16_t name_size;
    unsigned char *name;
    pb_status st = PB_OK;
    char what[112];

    snprintf(what, sizeof what, "thread %u id and name size", index);
    if ((st = easyprofiler_need(r, tsz + 2, what)) != PB_OK)
        return st;
    p = r->s->p;
    *tidp = tid = r->tid64 ? pb_le64(p) : pb_le32(p);
    name_size = pb_le16(p + tsz);
    r->s->p += tsz + 2;
    if ((st = rec_limit(r, name_size, toff, "thread name")) != PB_OK)
        return st;
    snprintf(what, sizeof what, "thread %llu name of %u bytes", (unsigned long long)tid, name_size);
    if ((st = easyprofiler_need(r, name_size, what)) != PB_OK)
        return st;
    nl = 0;
    while (nl < name_size && r->s->p[nl])
        nl++;
    name = r->cur_name = (unsigned char *)malloc(nl + 1);
    if (!name)
        return pb_fail(r->err, PB_ERR_LIMIT, toff, "out of memory");
    memcpy(name, r->s->p, nl);
    name[nl] = 0;
    r->s->p += name_size;
    {
        size_t used = strlen(r->threads_seen);
        if (used + 40 < sizeof r->threads_seen)
            snprintf(r->threads_seen + used, sizeof r->threads_seen - used, "%s%llu \"%.*s\"", used ? ", " : "",
                     (unsigned long long)tid, (int)(nl > 24 ? 24 : nl), (const char *)name);
    }
    *sel = easyprofiler_thread_selected(r, tid, name, nl);
    if (*sel)
        st = thread_begin(r, tid, name, nl, toff);
    drop_name(r);
    return st;
}

/* the thread's context switches (begin, end, target tid, name): counted,
 * those that end after profiling began in *kept */
static pb_status context_switches(ep_rd *r, uint64_t tid, uint64_t *kept)
{
    size_t tsz = r->tid64 ? 8 : 4;
    uint32_t cs_count, i;
    pb_status st;
    if ((st = thread_count(r, tid, "context switch", &cs_count)) != PB_OK)
        return st;
    for (i = 0; i < cs_count; i++) {
        uint64_t off = pb_src_offset(r->s), e_ns;
        uint16_t size;
        if ((st = record_size(r, off, "context switch record size", "context switch record", &size)) != PB_OK)
            return st;
        if (pb_src_need(r->s, 2 + (size_t)size) <= 0)
            return record_cut(r, off, size, "context switch record");
        if (size < 16 + tsz)
            return pb_fail(r->err, PB_ERR_CORRUPT, off,
                           "context switch record is %u bytes, shorter than begin, end and a %zu-byte target tid",
                           size, tsz);
        if (conv(r, pb_le64(r->s->p + 10), &e_ns))
            return pb_fail(r->err, PB_ERR_CORRUPT, off, "context switch record: end time does not fit in 64 bits of ns at the file's cpu_frequency");
        if (e_ns > r->begin_ns)
            (*kept)++;
        r->records++;
        r->s->p += 2 + (size_t)size;
    }
    return PB_OK;
}

/* block record i of count: the whole record in the window (the fast path
 * when it already is) */
static pb_status block_window(ep_rd *r, uint64_t tid, uint32_t i, uint32_t count)
{
    pb_status st;
    uint16_t size;
    if ((size_t)(r->s->end - r->s->p) >= 2 && (size_t)(r->s->end - r->s->p) >= 2 + (size_t)pb_le16(r->s->p))
        return PB_OK;
    if (pb_src_need(r->s, 2) <= 0) {
        char what[112];
        snprintf(what, sizeof what, "block record %u of %u in thread %llu: its size", i, count,
                 (unsigned long long)tid);
        if ((st = easyprofiler_need(r, 2, what)) != PB_OK)
            return st;
    }
    size = pb_le16(r->s->p);
    if (pb_src_need(r->s, 2 + (size_t)size) <= 0)
        return record_cut(r, pb_src_offset(r->s), size, "block record %u of thread %llu", i, (unsigned long long)tid);
    return PB_OK;
}

/* a block record's descriptor (the record is in the window) */
static pb_status block_desc(ep_rd *r, const unsigned char *q, uint64_t off, const ep_desc **dp)
{
    uint32_t id = pb_le32(q + 18);
    if (id >= r->ndesc)
        return pb_fail(r->err, PB_ERR_CORRUPT, off, "block record uses descriptor %u, but the file has %u descriptors",
                       id, r->ndesc);
    *dp = &r->desc[id];
    if (!(*dp)->present)
        return pb_fail(r->err, PB_ERR_CORRUPT, off, "block record uses descriptor %u, whose slot is empty", id);
    return PB_OK;
}

/* a block record's kind: its descriptor's, or its run-time name's; a value
 * record's header checked */
static pb_status block_kind(ep_rd *r, const ep_desc *d, const unsigned char *q, uint16_t size, uint64_t off,
                            uint32_t *key_id)
{
    const unsigned char *tail = q + 22;
    size_t tlen = (size_t)size - 20;
    *key_id = d->key;
    if (d->type == EP_VALUE) {
        if (tlen < 14)
            return pb_fail(r->err, PB_ERR_CORRUPT, off,
                           "value record is %u bytes, shorter than the 34 bytes of a value header", size);
        if ((size_t)pb_le16(tail + 2) > tlen - 14)
            return pb_fail(r->err, PB_ERR_CORRUPT, off,
                           "value record claims %u data bytes, but only %zu bytes of the record follow",
                           pb_le16(tail + 2), tlen - 14);
    } else if (tlen > 0 && tail[0] != 0) {
        size_t n = 0;
        while (n < tlen && tail[n])
            n++;
        return pb_spans_dynamic_kind(r->fold, pb_str_make((const char *)tail, n, 0), d->key, key_id);
    }
    return PB_OK;
}

/* one block record of a selected thread, begin clamped to the profile's */
static pb_status fold_block(ep_rd *r, uint64_t tid, const ep_desc *d, uint32_t key_id, uint64_t b_ns, uint64_t e_ns,
                            const unsigned char *q, uint16_t size, uint64_t off)
{
    pb_status st;
    if (b_ns < r->begin_ns)
        b_ns = r->begin_ns;
    if (e_ns < b_ns) {
        if (!r->warned_backwards) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "block record at byte %llu ends before it begins; given length 0 (further such "
                     "records are not reported)", (unsigned long long)off);
            easyprofiler_warn(r, msg);
            r->warned_backwards = 1;
        }
        e_ns = b_ns;
    }
    if (d->type == EP_VALUE) {
        /* name: the value descriptor's own name */
        size_t nlen;
        const char *np = pb_spans_kind_name(r->fold, key_id, &nlen);
        if ((st = value_comment(r, tid, b_ns, np, nlen, q + 22, (size_t)size - 20)) != PB_OK)
            return st;
    }
    return pb_spans_span(r->fold, key_id, b_ns, e_ns, off);
}

/* the thread's blocks: folded when sel, else only checked */
static pb_status blocks(ep_rd *r, uint64_t tid, int sel)
{
    uint32_t blk_count, i;
    pb_status st;
    if ((st = thread_count(r, tid, "block", &blk_count)) != PB_OK)
        return st;
    for (i = 0; i < blk_count; i++) {
        uint64_t off, b_ns, e_ns;
        uint16_t size;
        uint32_t key_id;
        const unsigned char *q;
        const ep_desc *d = NULL;
        if ((st = block_window(r, tid, i, blk_count)) != PB_OK)
            return st;
        off = pb_src_offset(r->s);
        q = r->s->p;
        size = pb_le16(q);
        if ((st = rec_limit(r, size, off, "block record")) != PB_OK)
            return st;
        if (size < 20)
            return pb_fail(r->err, PB_ERR_CORRUPT, off,
                           "block record is %u bytes, shorter than its begin, end and descriptor id (20)", size);
        if ((st = block_desc(r, q, off, &d)) != PB_OK)
            return st;
        if (conv(r, pb_le64(q + 2), &b_ns) || conv(r, pb_le64(q + 10), &e_ns))
            return pb_fail(r->err, PB_ERR_CORRUPT, off, "block record: begin or end time does not fit in 64 bits of ns at the file's cpu_frequency");
        r->records++;
        if ((st = block_kind(r, d, q, size, off, &key_id)) != PB_OK)
            return st;
        if (e_ns < r->begin_ns)
            r->dropped++;
        else if (sel && (st = fold_block(r, tid, d, key_id, b_ns, e_ns, q, size, off)) != PB_OK)
            return st;
        r->s->p += 2 + (size_t)size;
    }
    return PB_OK;
}

static pb_status read_thread(ep_rd *r, uint32_t index)
{
    uint64_t tid = 0, cs_kept = 0;
    int sel = 0;
    pb_status st;
    char key[96];
    if ((st = thread_head(r, index, &tid, &sel)) != PB_OK || (st = context_switches(r, tid, &cs_kept)) != PB_OK ||
        (st = blocks(r, tid, sel)) != PB_OK)
        return st;
    if (sel) {
        snprintf(key, sizeof key, "thread_%llu_context_switches", (unsigned long long)tid);
        if (pb_emit_attribute_u64(r->sink, key, cs_kept))
            return PB_ERR_ABORT;
        if ((st = pb_spans_thread_end(r->fold)) != PB_OK)
            return st;
    }
    return PB_OK;
}

/* ---- tail (2.1+) ----------------------------------------------------------- */
/* the signature word (EP_SIGNATURE) at the cursor, taken: need_what names it
 * when the file ends first, what when it differs */
static pb_status signature(ep_rd *r, const char *need_what, const char *what)
{
    uint64_t off = pb_src_offset(r->s);
    pb_status st;
    if ((st = easyprofiler_need(r, 4, need_what)) != PB_OK)
        return st;
    if (pb_le32(r->s->p) != EP_SIGNATURE)
        return pb_fail(r->err, PB_ERR_CORRUPT, off, "%s is 0x%08x, expected 0x%08x", what, pb_le32(r->s->p),
                       EP_SIGNATURE);
    r->s->p += 4;
    return PB_OK;
}

static pb_status read_tail(ep_rd *r)
{
    uint64_t off;
    uint32_t i;
    int eof;
    pb_status st = pb_rd_at_end(&r->rd, &eof);
    if (st != PB_OK || eof)
        return st; /* at EOF the reader skips the checks */
    if ((st = signature(r, "end signature", "end signature after the last thread")) != PB_OK)
        return st;
    if (r->bookmarks_count == 0)
        goto trailing;
    for (i = 0; i < r->bookmarks_count; i++) {
        uint16_t size;
        const unsigned char *p;
        size_t tl;
        char key[64], t[32];
        uint64_t pos;
        off = pb_src_offset(r->s);
        if ((st = record_size(r, off, "bookmark record size", "bookmark record", &size)) != PB_OK)
            return st;
        if (pb_src_need(r->s, 2 + (size_t)size) <= 0)
            return record_cut(r, off, size, "bookmark %u record", i);
        if (size < 13)
            return pb_fail(r->err, PB_ERR_CORRUPT, off,
                           "bookmark %u record is %u bytes, shorter than position, color and a NUL (13)", i, size);
        p = r->s->p + 2;
        pos = pb_le64(p);
        tl = 0;
        while (12 + tl < size && p[12 + tl])
            tl++;
        snprintf(key, sizeof key, "bookmark_%u_pos_ns", i);
        if (pb_emit_attribute_u64(r->sink, key, pos))
            return PB_ERR_ABORT;
        snprintf(key, sizeof key, "bookmark_%u_color", i);
        snprintf(t, sizeof t, "0x%08x", pb_le32(p + 8));
        if (pb_emit_attribute(r->sink, key, t))
            return PB_ERR_ABORT;
        snprintf(key, sizeof key, "bookmark_%u_text", i);
        if (emit_attr_bytes(r, key, p + 12, tl))
            return r->text.oom ? pb_fail(r->err, PB_ERR_LIMIT, off, "out of memory") : PB_ERR_ABORT;
        r->s->p += 2 + (size_t)size;
    }
    if ((st = signature(r, "signature after the bookmarks", "signature after the bookmarks")) != PB_OK)
        return st;
trailing: {
        char msg[128];
        if ((st = pb_rd_trailing(&r->rd, "bytes after the end signature at byte %llu are ignored", msg,
                                 sizeof msg)) == PB_OK && msg[0])
            easyprofiler_warn(r, msg);
        return st;
    }
}

/* after the last record: the warnings about the file as a whole, and the
 * error for a --thread that matched none */
static pb_status read_end(ep_rd *r)
{
    const pb_options *opt = r->opt;
    if (r->records != r->blocks_count) {
        char msg[200];
        snprintf(msg, sizeof msg, "the header counts %llu blocks and context switches, the file holds %llu",
                 (unsigned long long)r->blocks_count, (unsigned long long)r->records);
        easyprofiler_warn(r, msg);
    }
    if (r->dropped) {
        char msg[160];
        snprintf(msg, sizeof msg, "%llu block%s ended before profiling began and %s dropped (as the real reader does)",
                 (unsigned long long)r->dropped, r->dropped == 1 ? "" : "s", r->dropped == 1 ? "was" : "were");
        easyprofiler_warn(r, msg);
    }
    if (opt->have_thread && !r->matched) {
        if (opt->thread_name)
            return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED,
                           "no thread named or numbered \"%.100s\" in this file (threads: %s)", opt->thread_name,
                           r->threads_seen);
        return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED, "no thread %llu in this file (threads: %s)",
                       (unsigned long long)opt->thread_id, r->threads_seen);
    }
    return PB_OK;
}

/* everything the reader owns but its fold (which releases itself) */
static void ep_free(void *state)
{
    ep_rd *r = (ep_rd *)state;
    PB_FREE_ALL(r->desc, r->text.p, r->cur_name, r->cur_pkg, r->app);
    memset(r, 0, sizeof *r);
}

static void ep_init(void *state, pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    ep_rd *r = (ep_rd *)state;
    (void)sink; /* run_spans gets the chunk sink */
    r->s = src;
    r->err = err;
    pb_rd_init(&r->rd, src, err, "%s needs %zu byte%s%.0s, the file has %zu left", opt->max_record_size);
    r->opt = opt;
}

static pb_status ep_blocks(ep_rd *r)
{
    pb_status st;
    uint32_t t;
    if ((st = easyprofiler_read_header(r)) != PB_OK || (st = read_descriptors(r, r->desc_count)) != PB_OK ||
        (st = easyprofiler_application(r)) != PB_OK)
        return st;
    for (t = 0;; t++) {
        if (r->version >= V(2, 1, 0)) {
            if (t == r->threads_count)
                break;
        } else {
            int eof;
            if ((st = pb_rd_at_end(&r->rd, &eof)) != PB_OK)
                return st;
            if (eof)
                break;
        }
        if ((st = read_thread(r, t)) != PB_OK)
            return st;
    }
    if (r->version >= V(2, 1, 0) && (st = read_tail(r)) != PB_OK)
        return st;
    return read_end(r);
}

/* pb_fold_config.run_spans: the span fold on sink; out (the stack
 * outputs): the span stacks weighted by exclusive ns, thread key = thread
 * id (sink passes the ATTRIBUTEs on to it: source_format, times, clock) */
static pb_status ep_run(void *state, pb_sink *sink, pb_sample_sink *out)
{
    ep_rd *r = (ep_rd *)state;
    pb_error *err = r->err;
    pb_status st;
    r->sink = sink;
    if (!(r->fold = pb_spans_new(sink, r->opt, err)))
        return pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
    if (out)
        pb_spans_set_stacks(r->fold, out);
    st = ep_blocks(r);
    if (st == PB_ERR_TRUNCATED && r->opt->salvage && r->records > 0) {
        /* salvage: fold the blocks read so far; the open thread is closed
         * (its SUB_INFO, SUB_CALLERS, PID_END) as if its data ended here */
        pb_error keep = *err;
        err->status = PB_OK;
        st = pb_spans_thread_end(r->fold);
        if (st == PB_OK) {
            *err = keep;
            st = pb_salvage_warn(err, sink, "%llu block and context switch record%s",
                                 (unsigned long long)r->records, r->records == 1 ? "" : "s");
        } else if (err->status == PB_OK) {
            err->status = st; /* the sink stopped */
        }
    }
    pb_spans_free(r->fold);
    r->fold = NULL;
    if (st == PB_OK && out)
        st = out->finish(out);
    return st;
}

/* the span fold gives the chunks and the stacks alike (run NULL) */
const pb_fold_decoder pb_easyprofiler_decoder = {sizeof(ep_rd), ep_init, NULL, NULL, ep_free, {.run_spans = ep_run}};
