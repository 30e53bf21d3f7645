/* fuzz_check.h - does an output parse?  The checks the harnesses run on what
 * a writer produced (fuzz_common.h):
 *   fz_json       one strict JSON value (RFC 8259: no trailing commas, no
 *                 control bytes or bad escapes in strings, valid UTF-8,
 *                 numbers in JSON's grammar), whitespace around it
 *   fz_json_lines every line one JSON value, the last line ended
 *   fz_collapsed  every line "<stack> <count>" (diff: two counts), stack
 *                 non-empty, no NUL or CR, ended by a newline
 *   fz_pprof      a gzip member (RFC 1952) holding a perftools.profiles.Profile
 *                 in protobuf's wire format, checked as `go tool pprof`'s
 *                 parser does: string_table[0] is "", every string index is
 *                 in the table, ids of mappings, locations and functions are
 *                 non-zero and unique, every reference names one, every
 *                 sample has as many values as there are sample types
 *   fz_pstats     one marshal value, as CPython's marshal.load reads it, of
 *                 pstats' shape: a dict of (str, int, str) keys to
 *                 (int, int, float, float, {key: int or (int, int, float,
 *                 float)}), every string UTF-8, nothing after it
 *   fz_callgrind  Valgrind's callgrind format as callgrind_annotate reads
 *                 it: the header lines, then fl=/fn=/cfl=/cfn= names
 *                 ("(id) name" once, "(id)" after, ids defined before use),
 *                 "calls=N LINE" each followed by a cost line, cost lines
 *                 "LINE COST", "totals: N" last, every line ended
 * Each returns NULL when the output parses, else what is wrong (static text).
 * Plain C99 and zlib; no allocation is left behind.
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- JSON ------------------------------------------------------------------- */
typedef struct {
    const unsigned char *p, *end;
    const char *why;
} fz_js;

static inline void fz_js_ws(fz_js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static inline int fz_js_fail(fz_js *j, const char *why)
{
    if (!j->why)
        j->why = why;
    return -1;
}

/* one UTF-8 sequence at j->p (first byte >= 0x80): shortest form, no surrogates, <= U+10FFFF */
static inline int fz_js_utf8(fz_js *j)
{
    const unsigned char *p = j->p;
    uint32_t cp;
    int n, i;
    if (*p >= 0xC2 && *p <= 0xDF)
        n = 1, cp = *p & 0x1F;
    else if (*p >= 0xE0 && *p <= 0xEF)
        n = 2, cp = *p & 0x0F;
    else if (*p >= 0xF0 && *p <= 0xF4)
        n = 3, cp = *p & 0x07;
    else
        return fz_js_fail(j, "JSON: a byte that is not UTF-8");
    if (j->end - p <= n)
        return fz_js_fail(j, "JSON: a UTF-8 sequence cut short");
    for (i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return fz_js_fail(j, "JSON: a bad UTF-8 continuation byte");
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return fz_js_fail(j, "JSON: an overlong or out-of-range UTF-8 sequence");
    j->p += n + 1;
    return 0;
}

static inline int fz_js_hex4(fz_js *j, unsigned *v)
{
    int i;
    *v = 0;
    if (j->end - j->p < 4)
        return fz_js_fail(j, "JSON: \\u cut short");
    for (i = 0; i < 4; i++) {
        unsigned c = j->p[i];
        unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
        if (d == 16)
            return fz_js_fail(j, "JSON: \\u with a non-hex digit");
        *v = *v * 16 + d;
    }
    j->p += 4;
    return 0;
}

static inline int fz_js_string(fz_js *j)
{
    j->p++; /* the opening quote */
    while (j->p < j->end) {
        unsigned c = *j->p;
        if (c == '"') {
            j->p++;
            return 0;
        }
        if (c < 0x20)
            return fz_js_fail(j, "JSON: a control byte inside a string");
        if (c >= 0x80) {
            if (fz_js_utf8(j) < 0)
                return -1;
            continue;
        }
        j->p++;
        if (c != '\\')
            continue;
        if (j->p >= j->end)
            break;
        c = *j->p++;
        if (c == 'u') {
            unsigned u, lo;
            if (fz_js_hex4(j, &u) < 0)
                return -1;
            /* a lone surrogate is legal JSON but no string any reader can hold */
            if (u >= 0xDC00 && u <= 0xDFFF)
                return fz_js_fail(j, "JSON: a lone low surrogate");
            if (u >= 0xD800 && u <= 0xDBFF) {
                if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
                    return fz_js_fail(j, "JSON: a high surrogate without its low half");
                j->p += 2;
                if (fz_js_hex4(j, &lo) < 0)
                    return -1;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return fz_js_fail(j, "JSON: a high surrogate without its low half");
            }
        } else if (!strchr("\"\\/bfnrt", (int)c) || c == 0) {
            return fz_js_fail(j, "JSON: a bad escape");
        }
    }
    return fz_js_fail(j, "JSON: a string not closed");
}

static inline int fz_js_digits(fz_js *j)
{
    const unsigned char *s = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
        j->p++;
    return j->p > s ? 0 : fz_js_fail(j, "JSON: a number without digits");
}

static inline int fz_js_number(fz_js *j)
{
    if (*j->p == '-')
        j->p++;
    if (j->p < j->end && *j->p == '0')
        j->p++;
    else if (fz_js_digits(j) < 0)
        return -1;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (fz_js_digits(j) < 0)
            return -1;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        if (fz_js_digits(j) < 0)
            return -1;
    }
    return 0;
}

static inline int fz_js_value(fz_js *j, int depth)
{
    fz_js_ws(j);
    if (j->p >= j->end)
        return fz_js_fail(j, "JSON: a value expected, end of text found");
    if (depth > 512)
        return fz_js_fail(j, "JSON: nested deeper than 512");
    switch (*j->p) {
    case '{':
    case '[': {
        unsigned char close = *j->p == '{' ? '}' : ']';
        int n = 0;
        j->p++;
        fz_js_ws(j);
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        for (;; n++) {
            if (close == '}') {
                fz_js_ws(j);
                if (j->p >= j->end || *j->p != '"')
                    return fz_js_fail(j, "JSON: an object key is not a string");
                if (fz_js_string(j) < 0)
                    return -1;
                fz_js_ws(j);
                if (j->p >= j->end || *j->p != ':')
                    return fz_js_fail(j, "JSON: ':' expected after a key");
                j->p++;
            }
            if (fz_js_value(j, depth + 1) < 0)
                return -1;
            fz_js_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == close) {
                j->p++;
                return 0;
            }
            return fz_js_fail(j, "JSON: ',' or a closing bracket expected");
        }
    }
    case '"':
        return fz_js_string(j);
    case 't':
    case 'f':
    case 'n': {
        const char *w = *j->p == 't' ? "true" : *j->p == 'f' ? "false" : "null";
        size_t l = strlen(w);
        if ((size_t)(j->end - j->p) < l || memcmp(j->p, w, l) != 0)
            return fz_js_fail(j, "JSON: a bad literal");
        j->p += l;
        return 0;
    }
    default:
        if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
            return fz_js_number(j);
        return fz_js_fail(j, "JSON: an unexpected character");
    }
}

static inline const char *fz_json(const void *data, size_t len)
{
    fz_js j;
    j.p = (const unsigned char *)data;
    j.end = j.p + len;
    j.why = NULL;
    if (fz_js_value(&j, 0) < 0)
        return j.why;
    fz_js_ws(&j);
    return j.p == j.end ? NULL : "JSON: text after the value";
}

static inline const char *fz_json_lines(const void *data, size_t len)
{
    const char *p = (const char *)data, *end = p + len;
    while (p < end) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p)), *why;
        if (!nl)
            return "JSON Lines: the last line has no newline";
        if ((why = fz_json(p, (size_t)(nl - p))) != NULL)
            return why;
        p = nl + 1;
    }
    return NULL;
}

/* ---- collapsed stacks ------------------------------------------------------- */
static inline const char *fz_collapsed(const void *data, size_t len, int ncounts)
{
    const char *p = (const char *)data, *end = p + len;
    while (p < end) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p)), *q;
        int k;
        if (!nl)
            return "collapsed: the last line has no newline";
        if (memchr(p, '\0', (size_t)(nl - p)) || memchr(p, '\r', (size_t)(nl - p)))
            return "collapsed: a NUL or CR inside a line";
        q = nl;
        for (k = 0; k < ncounts; k++) {
            const char *d = q;
            while (d > p && d[-1] >= '0' && d[-1] <= '9')
                d--;
            if (d == q || q - d > 20 || d == p || d[-1] != ' ')
                return "collapsed: a line does not end in its counts";
            q = d - 1;
        }
        if (q == p)
            return "collapsed: a line without a stack";
        p = nl + 1;
    }
    return NULL;
}

/* ---- pprof: gzip, then protobuf's wire format ------------------------------- */
typedef struct {
    const uint8_t *p, *end;
} fz_pb;

typedef struct {
    uint32_t num;
    int wt;
    uint64_t v;         /* wire types 0, 1, 5 */
    fz_pb sub;          /* wire type 2 */
} fz_pb_field;

static inline int fz_pb_varint(fz_pb *r, uint64_t *v)
{
    int shift;
    *v = 0;
    for (shift = 0; shift < 70; shift += 7) {
        uint8_t b;
        if (r->p >= r->end)
            return -1;
        b = *r->p++;
        if (shift == 63 && b > 1)
            return -1;
        *v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

/* 1: a field, 0: the end of the message, -1: broken */
static inline int fz_pb_next(fz_pb *r, fz_pb_field *f)
{
    uint64_t key, n;
    if (r->p == r->end)
        return 0;
    if (fz_pb_varint(r, &key) < 0 || (key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF)
        return -1;
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    switch (f->wt) {
    case 0:
        return fz_pb_varint(r, &f->v) < 0 ? -1 : 1;
    case 1:
    case 5:
        n = f->wt == 1 ? 8 : 4;
        if ((uint64_t)(r->end - r->p) < n)
            return -1;
        r->p += n;
        return 1;
    case 2:
        if (fz_pb_varint(r, &n) < 0 || n > (uint64_t)(r->end - r->p))
            return -1;
        f->sub.p = r->p;
        f->sub.end = r->p + n;
        r->p += n;
        return 1;
    default:
        return -1; /* groups (3, 4) and 6, 7: never written, not pprof */
    }
}

/* the integers of a repeated field, packed (wire type 2) or one at a time (0) */
typedef struct {
    uint64_t *v;
    size_t n, cap;
} fz_u64s;

static inline void fz_u64s_add(fz_u64s *a, uint64_t v)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 64;
        uint64_t *nv = (uint64_t *)realloc(a->v, nc * sizeof *nv);
        if (!nv)
            abort();
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n++] = v;
}

static inline int fz_pb_ints(const fz_pb_field *f, fz_u64s *out, size_t *count)
{
    fz_pb r = f->sub;
    uint64_t v;
    if (f->wt == 0) {
        if (out)
            fz_u64s_add(out, f->v);
        ++*count;
        return 0;
    }
    if (f->wt != 2)
        return -1;
    while (r.p < r.end) {
        if (fz_pb_varint(&r, &v) < 0)
            return -1;
        if (out)
            fz_u64s_add(out, v);
        ++*count;
    }
    return 0;
}

static inline int fz_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static inline int fz_u64s_has(const fz_u64s *a, uint64_t v)
{
    return a->n && bsearch(&v, a->v, a->n, sizeof v, fz_u64_cmp) != NULL;
}

typedef struct {
    uint64_t nstrings;
    size_t nsample_types;
    fz_u64s ids[3];  /* mapping, location, function ids */
    fz_u64s refs[3]; /* ids referenced: mapping (by locations), location (by samples), function (by lines) */
    fz_u64s strs;    /* string indexes used */
    const char *why;
} fz_pprof_ck;

#define FZ_PB_BAD(ck, w) ((ck)->why = (ck)->why ? (ck)->why : (w), -1)

/* a sub-message: its integer fields that are string indexes (mask by field
 * number), its id field (1) into ids, and the references it holds */
static inline int fz_pb_msg(fz_pprof_ck *ck, fz_pb m, uint32_t str_mask, fz_u64s *ids, int kind)
{
    fz_pb_field f;
    int r, have_id = 0;
    size_t nvals = 0;
    while ((r = fz_pb_next(&m, &f)) == 1) {
        if (f.num < 32 && (str_mask >> f.num) & 1) {
            if (f.wt != 0)
                return FZ_PB_BAD(ck, "pprof: a string index of the wrong wire type");
            fz_u64s_add(&ck->strs, f.v);
        } else if (ids && f.num == 1) {
            if (f.wt != 0 || f.v == 0)
                return FZ_PB_BAD(ck, "pprof: an id of 0 or of the wrong wire type");
            fz_u64s_add(ids, f.v);
            have_id = 1;
        } else if (kind == 'S' && f.num == 1) { /* Sample.location_id */
            size_t n = 0;
            if (fz_pb_ints(&f, &ck->refs[1], &n) < 0)
                return FZ_PB_BAD(ck, "pprof: Sample.location_id broken");
        } else if (kind == 'S' && f.num == 2) { /* Sample.value */
            if (fz_pb_ints(&f, NULL, &nvals) < 0)
                return FZ_PB_BAD(ck, "pprof: Sample.value broken");
        } else if (kind == 'S' && f.num == 3) { /* Label: key, str, num_unit */
            if (f.wt != 2 || fz_pb_msg(ck, f.sub, 1u << 1 | 1u << 2 | 1u << 4, NULL, 0) < 0)
                return FZ_PB_BAD(ck, "pprof: Sample.label broken");
        } else if (kind == 'L' && f.num == 2) { /* Location.mapping_id */
            if (f.wt != 0)
                return FZ_PB_BAD(ck, "pprof: Location.mapping_id broken");
            if (f.v)
                fz_u64s_add(&ck->refs[0], f.v);
        } else if (kind == 'L' && f.num == 4) { /* Line: function_id, line */
            fz_pb l = f.sub;
            fz_pb_field g;
            int r2;
            if (f.wt != 2)
                return FZ_PB_BAD(ck, "pprof: Location.line broken");
            while ((r2 = fz_pb_next(&l, &g)) == 1)
                if (g.num == 1 && g.wt == 0)
                    fz_u64s_add(&ck->refs[2], g.v);
            if (r2 < 0)
                return FZ_PB_BAD(ck, "pprof: a Line broken");
        }
    }
    if (r < 0)
        return FZ_PB_BAD(ck, "pprof: a sub-message broken");
    if (ids && !have_id)
        return FZ_PB_BAD(ck, "pprof: a mapping, location or function without an id");
    if (kind == 'S' && nvals != ck->nsample_types)
        return FZ_PB_BAD(ck, "pprof: a sample's values do not match sample_type");
    return 0;
}

static inline const char *fz_pprof_message(const uint8_t *p, size_t n)
{
    fz_pprof_ck ck;
    fz_pb m, m2;
    fz_pb_field f;
    int r, k;
    size_t i;
    memset(&ck, 0, sizeof ck);
    m.p = p;
    m.end = p + n;
    m2 = m;
    /* first pass: strings and sample types (fields may come in any order) */
    while ((r = fz_pb_next(&m, &f)) == 1) {
        if (f.num == 6) {
            if (f.wt != 2)
                return "pprof: string_table of the wrong wire type";
            if (ck.nstrings == 0 && f.sub.p != f.sub.end)
                return "pprof: string_table[0] is not empty";
            ck.nstrings++;
        } else if (f.num == 1) {
            ck.nsample_types++;
        }
    }
    if (r < 0)
        return "pprof: the Profile message is broken";
    if (ck.nstrings == 0)
        return "pprof: no string_table";
    while (!ck.why && (r = fz_pb_next(&m2, &f)) == 1) {
        if ((f.num >= 1 && f.num <= 5) || f.num == 11) {
            static const uint32_t strs[12] = {0, 6, 0, 1u << 5 | 1u << 6, 0, 1u << 2 | 1u << 3 | 1u << 4, 0, 0, 0, 0, 0, 6};
            static const int kind[12] = {0, 0, 'S', 'M', 'L', 'F', 0, 0, 0, 0, 0, 0};
            fz_u64s *ids = f.num == 3 ? &ck.ids[0] : f.num == 4 ? &ck.ids[1] : f.num == 5 ? &ck.ids[2] : NULL;
            if (f.wt != 2) {
                ck.why = "pprof: a message field of the wrong wire type";
                break;
            }
            fz_pb_msg(&ck, f.sub, strs[f.num], ids, kind[f.num]);
        } else if ((f.num == 7 || f.num == 8 || f.num == 14) && f.wt == 0) {
            fz_u64s_add(&ck.strs, f.v); /* drop_frames, keep_frames, default_sample_type */
        } else if (f.num == 13) {
            size_t cnt = 0;
            fz_u64s_add(&ck.strs, 0);
            if (fz_pb_ints(&f, &ck.strs, &cnt) < 0)
                ck.why = "pprof: comment broken";
        }
    }
    for (i = 0; !ck.why && i < ck.strs.n; i++)
        if (ck.strs.v[i] >= ck.nstrings)
            ck.why = "pprof: a string index past string_table";
    for (k = 0; k < 3; k++) {
        if (ck.ids[k].n)
            qsort(ck.ids[k].v, ck.ids[k].n, sizeof *ck.ids[k].v, fz_u64_cmp);
        for (i = 1; !ck.why && i < ck.ids[k].n; i++)
            if (ck.ids[k].v[i] == ck.ids[k].v[i - 1])
                ck.why = "pprof: two mappings, locations or functions share an id";
        for (i = 0; !ck.why && i < ck.refs[k].n; i++)
            if (!fz_u64s_has(&ck.ids[k], ck.refs[k].v[i]))
                ck.why = k == 0 ? "pprof: a location names a mapping that is not there"
                       : k == 1 ? "pprof: a sample names a location that is not there"
                                : "pprof: a line names a function that is not there";
    }
    for (k = 0; k < 3; k++) {
        free(ck.ids[k].v);
        free(ck.refs[k].v);
    }
    free(ck.strs.v);
    return ck.why;
}

static inline const char *fz_pprof(const void *data, size_t len)
{
    z_stream z;
    uint8_t *out = NULL;
    size_t cap = 0, n = 0;
    int rc;
    const char *why;
    if (len < 18 || ((const uint8_t *)data)[0] != 0x1f || ((const uint8_t *)data)[1] != 0x8b)
        return "pprof: not gzip";
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + 15) != Z_OK)
        abort();
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    do {
        if (n == cap) {
            uint8_t *no;
            cap = cap ? cap * 2 : 65536;
            if (cap > (size_t)1 << 30 || !(no = (uint8_t *)realloc(out, cap)))
                abort();
            out = no;
        }
        z.next_out = out + n;
        z.avail_out = (uInt)(cap - n);
        rc = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
    } while (rc == Z_OK);
    why = rc != Z_STREAM_END ? "pprof: the gzip stream is broken or cut short"
        : z.avail_in != 0    ? "pprof: bytes after the gzip member"
                             : fz_pprof_message(out, n);
    inflateEnd(&z);
    free(out);
    return why;
}

/* ---- pstats: marshal ------------------------------------------------------- */
typedef struct {
    const unsigned char *p, *end;
} fz_ms;
static inline int fz_ms_i32(fz_ms *m, int32_t *v)
{
    if (m->end - m->p < 4)
        return 0;
    *v = (int32_t)((uint32_t)m->p[0] | (uint32_t)m->p[1] << 8 | (uint32_t)m->p[2] << 16 | (uint32_t)m->p[3] << 24);
    m->p += 4;
    return 1;
}
/* UTF-8 as Python's decoder takes it (marshal: surrogates pass) */
static inline int fz_ms_utf8(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char b = p[i];
        size_t k, len = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
        if (!len || n - i < len)
            return 0;
        for (k = 1; k < len; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return 0;
        if ((b == 0xE0 && p[i + 1] < 0xA0) || (b == 0xF0 && p[i + 1] < 0x90) || (b == 0xF4 && p[i + 1] > 0x8F))
            return 0;
        i += len;
    }
    return 1;
}
/* one value of type t ('i' an int or long, 'f' a float, 's' a str, 'K' a
 * (str, int, str) key, 'E' an edge: int or (int, int, float, float)) */
static inline int fz_ms_value(fz_ms *m, int t)
{
    int32_t n;
    unsigned char c;
    if (m->p >= m->end)
        return 0;
    c = *m->p++;
    switch (t) {
    case 'i':
        if (c == 'i')
            return fz_ms_i32(m, &n);
        if (c != 'l' || !fz_ms_i32(m, &n) || n <= 0 || n > 5 || m->end - m->p < 2 * n)
            return 0;
        m->p += 2 * n;
        return m->p[-1] != 0 || m->p[-2] != 0; /* the top digit is not 0 */
    case 'f':
        if (c != 'g' || m->end - m->p < 8)
            return 0;
        m->p += 8;
        return 1;
    case 's':
        if (c != 'u' || !fz_ms_i32(m, &n) || n < 0 || m->end - m->p < n || !fz_ms_utf8(m->p, (size_t)n))
            return 0;
        m->p += n;
        return 1;
    case 'K':
        return c == '(' && fz_ms_i32(m, &n) && n == 3 && fz_ms_value(m, 's') && fz_ms_value(m, 'i') &&
               fz_ms_value(m, 's');
    default: /* 'E' */
        if (c == 'i' || c == 'l')
            return m->p--, fz_ms_value(m, 'i');
        return c == '(' && fz_ms_i32(m, &n) && n == 4 && fz_ms_value(m, 'i') && fz_ms_value(m, 'i') &&
               fz_ms_value(m, 'f') && fz_ms_value(m, 'f');
    }
}
static inline const char *fz_pstats(const void *data, size_t len)
{
    fz_ms m;
    int32_t n;
    m.p = (const unsigned char *)data;
    m.end = m.p + len;
    if (len < 2 || *m.p++ != '{')
        return "pstats: not a marshal dict";
    while (m.p < m.end && *m.p != '0') {
        if (!fz_ms_value(&m, 'K'))
            return "pstats: a key is not (str, int, str)";
        if (m.p >= m.end || *m.p++ != '(' || !fz_ms_i32(&m, &n) || n != 5 || !fz_ms_value(&m, 'i') ||
            !fz_ms_value(&m, 'i') || !fz_ms_value(&m, 'f') || !fz_ms_value(&m, 'f') || m.p >= m.end ||
            *m.p++ != '{')
            return "pstats: a value is not (cc, nc, tt, ct, callers)";
        while (m.p < m.end && *m.p != '0')
            if (!fz_ms_value(&m, 'K') || !fz_ms_value(&m, 'E'))
                return "pstats: a caller is not key: int or (nc, cc, tt, ct)";
        if (m.p >= m.end)
            return "pstats: a callers dict is not ended";
        m.p++;
    }
    if (m.p >= m.end || ++m.p != m.end)
        return "pstats: the dict is not ended, or bytes follow it";
    return NULL;
}

/* ---- callgrind ------------------------------------------------------------- */
static inline int fz_cg_num(const char **p, const char *e)
{
    const char *s = *p;
    while (*p < e && **p >= '0' && **p <= '9')
        (*p)++;
    return *p > s;
}
static inline const char *fz_callgrind(const void *data, size_t len)
{
    static const char *const head[] = {"# callgrind format", "version: 1", "creator: ", "cmd: ", "positions: line",
                                       "events: ", "summary: "};
    const char *p = (const char *)data, *end = p + len;
    unsigned char *fl_def = (unsigned char *)calloc(len + 1, 1), *fn_def = (unsigned char *)calloc(len + 1, 1);
    const char *why = NULL;
    size_t i = 0;
    int after_calls = 0, totals = 0;
    if (!fl_def || !fn_def) {
        free(fl_def);
        free(fn_def);
        return NULL; /* out of memory: not a finding */
    }
    if (len == 0 || end[-1] != '\n')
        why = "callgrind: not ended by a newline";
    while (!why && p < end) {
        const char *e = (const char *)memchr(p, '\n', (size_t)(end - p)), *q = p;
        if (memchr(p, '\0', (size_t)(e - p)) || memchr(p, '\r', (size_t)(e - p))) {
            why = "callgrind: a NUL or CR in a line";
            break;
        }
        if (i < sizeof head / sizeof head[0]) {
            if ((size_t)(e - p) < strlen(head[i]) || memcmp(p, head[i], strlen(head[i])) != 0)
                why = "callgrind: a header line is missing";
            i++;
        } else if (totals) {
            why = "callgrind: a line after totals";
        } else if (p == e) {
            ;
        } else if (after_calls) {
            if (!fz_cg_num(&q, e) || q >= e || *q++ != ' ' || !fz_cg_num(&q, e) || q != e)
                why = "callgrind: calls= is not followed by a cost line";
            after_calls = 0;
        } else if (e - p > 6 && memcmp(p, "calls=", 6) == 0) {
            q = p + 6;
            if (!fz_cg_num(&q, e) || q >= e || *q++ != ' ' || !fz_cg_num(&q, e) || q != e)
                why = "callgrind: a bad calls= line";
            after_calls = 1;
        } else if (e - p > 8 && memcmp(p, "totals: ", 8) == 0) {
            q = p + 8;
            if (!fz_cg_num(&q, e) || q != e)
                why = "callgrind: a bad totals line";
            totals = 1;
        } else if (*p >= '0' && *p <= '9') {
            if (!fz_cg_num(&q, e) || q >= e || *q++ != ' ' || !fz_cg_num(&q, e) || q != e)
                why = "callgrind: a bad cost line";
        } else {
            int fn = (e - p > 3 && memcmp(p, "fn=", 3) == 0) || (e - p > 4 && memcmp(p, "cfn=", 4) == 0);
            int fl = (e - p > 3 && memcmp(p, "fl=", 3) == 0) || (e - p > 4 && memcmp(p, "cfl=", 4) == 0);
            size_t id = 0;
            q = (const char *)memchr(p, '=', (size_t)(e - p));
            if ((!fn && !fl) || !q || q + 1 >= e || q[1] != '(') {
                why = "callgrind: an unknown line";
                break;
            }
            for (q += 2; q < e && *q >= '0' && *q <= '9'; q++)
                id = id * 10 + (size_t)(*q - '0');
            if (q >= e || *q != ')' || id == 0 || id > len) {
                why = "callgrind: a bad name id";
                break;
            }
            q++;
            if (q == e) {
                if (!(fn ? fn_def : fl_def)[id])
                    why = "callgrind: a name id used before it is defined";
            } else if (*q != ' ' || q + 1 == e || (fn ? fn_def : fl_def)[id]) {
                why = "callgrind: a name id defined twice, or without a name";
            } else
                (fn ? fn_def : fl_def)[id] = 1;
        }
        p = e + 1;
    }
    if (!why && (!totals || after_calls))
        why = "callgrind: no totals line at the end";
    free(fl_def);
    free(fn_def);
    return why;
}

#endif
