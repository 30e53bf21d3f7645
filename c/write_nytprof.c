/* write_nytprof.c - chunk stream -> NYTProf v5 file (see write_nytprof.h and
 * ../shared/specs/nytprof-format.md).
 *
 * Chunks are encoded into a fixed staging buffer; when it fills it goes to the
 * output, through deflate once the zlib part has started.  Memory is the
 * staging and zlib buffers plus one bit per defined fid.
 */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>
#include "nytp_codec.h"
#include "output.h"
#include "pb.h"
#include "util.h"
#include "write_nytprof.h"

#define STAGE_CAP  (64 * 1024)
#define ZOUT_CAP   (64 * 1024)
#define REC_ROOM   64        /* fixed part of the largest record (SUB_CALLERS: 1+5*5+24+2*6) */
#define FID_SLACK  65536u    /* how far a NEW_FID may run ahead of the fids defined so far */

static const char COMPRESSED_PREFIX[] = "Compressed at level ";

struct pb_nytprof_writer {
    pb_sink sink;
    pb_error err;           /* the first failure, handed out by close() */
    int failed;

    int level;
    int do_fsync;
    uint32_t max_line;
    void (*warn)(void *ud, const char *msg);
    void *warn_ud;

    /* output: a file through output.c, or a caller's memory buffer */
    pb_output *out;
    char *path;
    pb_membuf *mem;

    unsigned char *stage;   /* plain NYTProf bytes waiting to be written */
    size_t slen;

    z_stream z;
    int deflating;
    unsigned char *zout;

    uint64_t bytes_in;      /* plain stream bytes produced */
    uint64_t bytes_out;     /* bytes written to the output */

    /* validation state */
    uint64_t chunk_no;      /* number of the chunk being written (VERSION: 0) */
    int seen_version;
    int have_tps;
    int binary_started;
    unsigned char *fid_bits;
    size_t fid_bytes;
    uint32_t max_fid;
    uint32_t n_fids;        /* distinct fids defined */
    int have_calls;         /* a SUB_CALLERS with a non-zero count */
    int have_time;          /* a TIME_LINE / TIME_BLOCK: some statement or sample was timed */
    int have_pid_start, have_pid_end;
    double first_start, last_end;

    /* a "Compressed at level ..." COMMENT held back until we know whether a
     * START_DEFLATE follows it */
    char *pending;
    size_t pending_len, pending_cap;
    int has_pending;
};

/* ---- errors ------------------------------------------------------------ */

static int w_fail(pb_nytprof_writer *w, pb_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int w_fail(pb_nytprof_writer *w, pb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pb_vfail_nooff(&w->err, st, fmt, ap);
    va_end(ap);
    w->failed = 1;
    return -1;
}

/* "chunk 12 (TIME_LINE)" */
#define CHUNK_FMT "chunk %llu (%s)"
#define CHUNK_ARGS(w, tag) (unsigned long long)(w)->chunk_no, pb_tag_name[tag]

/* ---- raw output -------------------------------------------------------- */

static int out_raw(pb_nytprof_writer *w, const unsigned char *p, size_t n)
{
    size_t total = n;
    if (n == 0)
        return 0;
    if (w->mem) {
        pb_membuf *m = w->mem;
        if (n > (size_t)-1 / 2 - m->len)
            return w_fail(w, PB_ERR_LIMIT, "output buffer would exceed the address space");
        if (pb_grow((void **)&m->data, &m->cap, m->len + n, 1) < 0)
            return w_fail(w, PB_ERR_LIMIT, "out of memory growing the output buffer to %zu bytes", m->len + n);
        memcpy(m->data + m->len, p, n);
        m->len += n;
    } else {
        pb_error e;
        pb_error_init(&e, "nytprof-writer", w->path);
        if (pb_output_write(w->out, p, n, &e) != PB_OK)
            return w_fail(w, PB_ERR_IO, "%s", e.message);
    }
    w->bytes_out += total;
    return 0;
}

/* Push n plain bytes through deflate with the given flush mode. */
static int deflate_bytes(pb_nytprof_writer *w, const unsigned char *p, size_t n, int flush)
{
    w->z.next_in = (Bytef *)(uintptr_t)p;
    w->z.avail_in = (uInt)n;
    for (;;) {
        int rc;
        size_t have;
        w->z.next_out = w->zout;
        w->z.avail_out = ZOUT_CAP;
        rc = deflate(&w->z, flush);
        if (rc == Z_STREAM_ERROR)
            return w_fail(w, PB_ERR_LIMIT, "zlib deflate failed (%s)", w->z.msg ? w->z.msg : "stream error");
        have = ZOUT_CAP - w->z.avail_out;
        if (out_raw(w, w->zout, have) < 0)
            return -1;
        if (flush == Z_FINISH) {
            if (rc == Z_STREAM_END)
                break;
        } else if (w->z.avail_out != 0) {
            break;
        }
    }
    return 0;
}

/* Move the staging buffer to the output. */
static int flush_stage(pb_nytprof_writer *w)
{
    int r;
    if (w->slen == 0)
        return 0;
    if (w->deflating)
        r = deflate_bytes(w, w->stage, w->slen, Z_NO_FLUSH);
    else
        r = out_raw(w, w->stage, w->slen);
    w->slen = 0;
    return r;
}

static inline int room(pb_nytprof_writer *w, size_t n)
{
    if (STAGE_CAP - w->slen < n)
        return flush_stage(w);
    return 0;
}

static int put_bytes(pb_nytprof_writer *w, const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    w->bytes_in += n;
    while (n > 0) {
        size_t k = STAGE_CAP - w->slen;
        if (k == 0) {
            if (flush_stage(w) < 0)
                return -1;
            k = STAGE_CAP;
        }
        if (k > n)
            k = n;
        memcpy(w->stage + w->slen, p, k);
        w->slen += k;
        p += k;
        n -= k;
    }
    return 0;
}

/* The fast helpers below assume room() made REC_ROOM bytes available. */
static inline void put_tag(pb_nytprof_writer *w, unsigned char tag)
{
    w->stage[w->slen++] = tag;
    w->bytes_in++;
}

static inline void put_u32(pb_nytprof_writer *w, uint32_t v)
{
    unsigned k = nytp_u32_encode(w->stage + w->slen, v);
    w->slen += k;
    w->bytes_in += k;
}

static inline void put_nv(pb_nytprof_writer *w, double d)
{
    nytp_nv_encode(w->stage + w->slen, d);
    w->slen += 8;
    w->bytes_in += 8;
}

/* prefix + length now (needs 6 bytes of room), then the bytes */
static int put_str(pb_nytprof_writer *w, const pb_str *s, const char *what, pb_tag tag)
{
    if ((uint64_t)s->len > UINT32_MAX)
        return w_fail(w, PB_ERR_LIMIT, CHUNK_FMT ": %s is %zu bytes; the format holds at most 4 GiB - 1",
                      CHUNK_ARGS(w, tag), what, s->len);
    put_tag(w, s->utf8 ? NYTP_STRING_UTF8 : NYTP_STRING);
    put_u32(w, (uint32_t)s->len);
    return put_bytes(w, s->ptr, s->len);
}

/* ---- compression ------------------------------------------------------- */

static int start_deflate(pb_nytprof_writer *w)
{
    int rc;
    if (room(w, 1) < 0)
        return -1;
    put_tag(w, 'z');
    if (flush_stage(w) < 0)
        return -1;
    memset(&w->z, 0, sizeof w->z);
    rc = deflateInit2(&w->z, w->level, Z_DEFLATED, 15, 9, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK)
        return w_fail(w, PB_ERR_LIMIT, "zlib deflateInit2 failed (%d)", rc);
    if (!w->zout) {
        w->zout = (unsigned char *)malloc(ZOUT_CAP);
        if (!w->zout) {
            deflateEnd(&w->z);
            return w_fail(w, PB_ERR_LIMIT, "out of memory");
        }
    }
    w->deflating = 1;
    return 0;
}

/* The profiler's own comment line: "#Compressed at level 6 with zlib 1.2.13\n" */
static int put_compressed_comment(pb_nytprof_writer *w)
{
    char line[128];
    int n = snprintf(line, sizeof line, "#%s%d with zlib %s\n", COMPRESSED_PREFIX, w->level, zlibVersion());
    if (n < 0 || (size_t)n >= sizeof line)
        n = snprintf(line, sizeof line, "#%s%d with zlib\n", COMPRESSED_PREFIX, w->level);
    return put_bytes(w, line, (size_t)n);
}

static int is_compressed_comment(const pb_str *t, long *level)
{
    size_t pl = sizeof COMPRESSED_PREFIX - 1;
    char num[16];
    size_t i = 0;
    if (t->len <= pl || memcmp(t->ptr, COMPRESSED_PREFIX, pl) != 0)
        return 0;
    while (pl + i < t->len && i + 1 < sizeof num && t->ptr[pl + i] >= '0' && t->ptr[pl + i] <= '9') {
        num[i] = t->ptr[pl + i];
        i++;
    }
    num[i] = '\0';
    *level = i ? strtol(num, NULL, 10) : -1;
    return 1;
}

/* ---- text chunks ------------------------------------------------------- */

static int put_comment_text(pb_nytprof_writer *w, const char *p, size_t len)
{
    if (room(w, 1) < 0)
        return -1;
    put_tag(w, '#');
    if (put_bytes(w, p, len) < 0)
        return -1;
    if (len == 0 || p[len - 1] != '\n')
        return put_bytes(w, "\n", 1);
    return 0;
}

static int write_pending(pb_nytprof_writer *w)
{
    w->has_pending = 0;
    return put_comment_text(w, w->pending, w->pending_len);
}

static int w_comment(pb_nytprof_writer *w, const pb_chunk *c)
{
    const pb_str *t = &c->s[0];
    const char *nl = t->len ? (const char *)memchr(t->ptr, '\n', t->len) : NULL;
    long lv;
    if (nl && nl != t->ptr + t->len - 1)
        return w_fail(w, PB_ERR_CORRUPT, CHUNK_FMT ": comment text holds a newline before its end",
                      CHUNK_ARGS(w, c->tag));
    if (!w->deflating && is_compressed_comment(t, &lv)) {
        if (pb_grow((void **)&w->pending, &w->pending_cap, t->len, 1) < 0)
            return w_fail(w, PB_ERR_LIMIT, "out of memory");
        memcpy(w->pending, t->ptr, t->len);
        w->pending_len = t->len;
        w->has_pending = 1;
        return 0;
    }
    return put_comment_text(w, t->ptr, t->len);
}

static int check_text(pb_nytprof_writer *w, const pb_chunk *c)
{
    const pb_str *k = &c->s[0], *v = &c->s[1];
    if (k->len && (memchr(k->ptr, '=', k->len) || memchr(k->ptr, '\n', k->len)))
        return w_fail(w, PB_ERR_CORRUPT, CHUNK_FMT ": key \"%.*s\" holds '=' or a newline",
                      CHUNK_ARGS(w, c->tag), (int)(k->len > 60 ? 60 : k->len), k->ptr);
    if (v->len && memchr(v->ptr, '\n', v->len))
        return w_fail(w, PB_ERR_CORRUPT, CHUNK_FMT ": value of \"%.*s\" holds a newline",
                      CHUNK_ARGS(w, c->tag), (int)(k->len > 60 ? 60 : k->len), k->ptr);
    return 0;
}

static int key_is(const pb_str *k, const char *name)
{
    size_t n = strlen(name);
    return k->len == n && memcmp(k->ptr, name, n) == 0;
}

static int w_attribute(pb_nytprof_writer *w, const pb_chunk *c, unsigned char tag)
{
    const pb_str *k = &c->s[0], *v = &c->s[1];
    if (check_text(w, c) < 0)
        return -1;
    if (tag == ':') {
        if (key_is(k, "ticks_per_sec")) {
            /* Perl numifies the value; 0 (or no number) makes nytprofhtml divide by zero */
            char num[64];
            double d;
            size_t n = v->len < sizeof num - 1 ? v->len : sizeof num - 1;
            memcpy(num, v->ptr, n);
            num[n] = '\0';
            {
                const char *q = num;
                while (*q == ' ' || *q == '\t' || *q == '+' || *q == '-')
                    q++;
                /* Perl reads "0x10" as 0; strtod as 16 */
                d = q[0] == '0' && (q[1] == 'x' || q[1] == 'X') ? 0 : strtod(num, NULL);
            }
            if (!(d > 0 || d < 0) || d - d != 0)
                return w_fail(w, PB_ERR_CORRUPT,
                              CHUNK_FMT ": ticks_per_sec is \"%s\"; nytprofhtml needs a non-zero number",
                              CHUNK_ARGS(w, c->tag), num);
            w->have_tps = 1;
        } else if (key_is(k, "nv_size") && !(v->len == 1 && v->ptr[0] == '8')) {
            return w_fail(w, PB_ERR_UNSUPPORTED,
                          CHUNK_FMT ": nv_size is \"%.*s\"; this writer stores NVs as 8-byte doubles",
                          CHUNK_ARGS(w, c->tag), (int)(v->len > 20 ? 20 : v->len), v->ptr);
        }
    }
    if (room(w, 1) < 0)
        return -1;
    put_tag(w, tag);
    if (put_bytes(w, k->ptr, k->len) < 0 || put_bytes(w, "=", 1) < 0 || put_bytes(w, v->ptr, v->len) < 0)
        return -1;
    return put_bytes(w, "\n", 1);
}

/* ---- fids -------------------------------------------------------------- */

static inline int fid_defined(const pb_nytprof_writer *w, uint32_t fid)
{
    return fid <= w->max_fid && fid != 0 && (w->fid_bits[fid >> 3] >> (fid & 7) & 1);
}

static int define_fid(pb_nytprof_writer *w, uint32_t fid, const pb_chunk *c)
{
    if (fid == 0)
        return w_fail(w, PB_ERR_CORRUPT, CHUNK_FMT ": fid 0; fids are numbered from 1",
                      CHUNK_ARGS(w, c->tag));
    if (fid > w->max_fid) {
        size_t need;
        if (fid - w->n_fids > FID_SLACK)
            return w_fail(w, PB_ERR_CORRUPT,
                          CHUNK_FMT ": fid %lu when only %lu fids are defined; fids must be dense 1..N",
                          CHUNK_ARGS(w, c->tag), (unsigned long)fid, (unsigned long)w->n_fids);
        need = (size_t)(fid >> 3) + 1;
        if (pb_grow_zero((void **)&w->fid_bits, &w->fid_bytes, need, 1) < 0)
            return w_fail(w, PB_ERR_LIMIT, "out of memory");
        w->max_fid = fid;
    }
    if (!(w->fid_bits[fid >> 3] >> (fid & 7) & 1)) {
        w->fid_bits[fid >> 3] |= (unsigned char)(1u << (fid & 7));
        w->n_fids++;
    }
    return 0;
}

static int undefined_fid(pb_nytprof_writer *w, const pb_chunk *c, uint32_t fid)
{
    return w_fail(w, PB_ERR_CORRUPT,
                  CHUNK_FMT ": fid %lu is used before any NEW_FID defined it (nytprofhtml would die or crash)",
                  CHUNK_ARGS(w, c->tag), (unsigned long)fid);
}

/* ---- the sink ---------------------------------------------------------- */

/* Called for the first chunk that is not VERSION/COMMENT/ATTRIBUTE/OPTION/START_DEFLATE. */
static int begin_binary(pb_nytprof_writer *w, const pb_chunk *c)
{
    w->binary_started = 1;
    if (!w->have_tps)
        return w_fail(w, PB_ERR_CORRUPT,
                      CHUNK_FMT ": no ATTRIBUTE ticks_per_sec before the first binary chunk "
                      "(nytprofhtml divides by it)", CHUNK_ARGS(w, c->tag));
    if (w->level > 0 && !w->deflating) {
        if (put_compressed_comment(w) < 0)
            return -1;
        return start_deflate(w);
    }
    return 0;
}

static int w_chunk(pb_sink *self, const pb_chunk *c)
{
    pb_nytprof_writer *w = (pb_nytprof_writer *)self->ctx;
    pb_tag tag = c->tag;

    /* The bulk of a converted profile: a TIME_LINE on a defined fid, once the
     * binary part has started, with room in the stage.  The same checks and
     * bytes as the general path below, in fewer steps. */
    if (tag == PB_T_TIME_LINE && w->binary_started && !w->failed && !w->has_pending &&
        STAGE_CAP - w->slen >= REC_ROOM && c->u[1] <= w->max_line && fid_defined(w, c->u[0])) {
        w->have_time = 1;
        put_tag(w, '+');
        put_u32(w, (uint32_t)c->ticks);
        put_u32(w, c->u[0]);
        put_u32(w, c->u[1]);
        w->chunk_no++;
        return 0;
    }
    if (w->failed)
        return 1;
    if ((unsigned)tag >= PB_TAG_COUNT)
        return w_fail(w, PB_ERR_CORRUPT, "chunk %llu: unknown tag %d", (unsigned long long)w->chunk_no, (int)tag);
    if (!w->seen_version && tag != PB_T_VERSION)
        return w_fail(w, PB_ERR_CORRUPT, CHUNK_FMT ": the stream must start with a VERSION chunk",
                      CHUNK_ARGS(w, tag));
    if (w->has_pending) {
        if (tag == PB_T_START_DEFLATE) {
            w->has_pending = 0;
            if (w->level > 0 && !w->deflating) {
                long lv = -1;
                pb_str t = pb_str_make(w->pending, w->pending_len, 0);
                is_compressed_comment(&t, &lv);
                if ((lv == w->level ? put_comment_text(w, w->pending, w->pending_len)
                                    : put_compressed_comment(w)) < 0)
                    return -1;
            }
            /* level 0 (or already deflating): the comment goes with the START_DEFLATE */
        } else if (write_pending(w) < 0) {
            return -1;
        }
    }
    if (!w->binary_started && tag > PB_T_START_DEFLATE && begin_binary(w, c) < 0)
        return 1;
    if (room(w, REC_ROOM) < 0)
        return 1;
    {
        /* line numbers that would make nytprofhtml size arrays past reason */
        uint64_t line = 0;
        switch (tag) {
        case PB_T_TIME_LINE: case PB_T_TIME_BLOCK: case PB_T_SRC_LINE: case PB_T_SUB_CALLERS: case PB_T_SUB_ENTRY:
            line = c->u[1];
            break;
        case PB_T_SUB_INFO:
            line = c->u[1] > c->u[2] ? c->u[1] : c->u[2];
            break;
        default:
            break;
        }
        if (line > w->max_line)
            return w_fail(w, PB_ERR_LIMIT,
                          CHUNK_FMT ": line %llu is past max_line (%lu): nytprofhtml and nytprofcalls size "
                          "per-line tables by the highest line",
                          CHUNK_ARGS(w, tag), (unsigned long long)line, (unsigned long)w->max_line);
    }

    switch (tag) {
    case PB_T_VERSION:
        if (w->seen_version)
            return w_fail(w, PB_ERR_CORRUPT, CHUNK_FMT ": a second VERSION chunk", CHUNK_ARGS(w, tag));
        if (c->u[0] != 5)
            return w_fail(w, PB_ERR_UNSUPPORTED,
                          CHUNK_FMT ": NYTProf format %lu.%lu; this writer writes major version 5",
                          CHUNK_ARGS(w, tag), (unsigned long)c->u[0], (unsigned long)c->u[1]);
        w->seen_version = 1;
        {
            char line[64];
            int n = snprintf(line, sizeof line, "NYTProf %lu %lu\n", (unsigned long)c->u[0], (unsigned long)c->u[1]);
            if (put_bytes(w, line, (size_t)n) < 0)
                return 1;
        }
        break;
    case PB_T_COMMENT:
        if (w_comment(w, c) < 0)
            return 1;
        break;
    case PB_T_ATTRIBUTE:
        if (w_attribute(w, c, ':') < 0)
            return 1;
        break;
    case PB_T_OPTION:
        if (w_attribute(w, c, '!') < 0)
            return 1;
        break;
    case PB_T_START_DEFLATE:
        /* level 0 drops it; a second one (or one after we started on our own) too */
        if (w->level > 0 && !w->deflating && start_deflate(w) < 0)
            return 1;
        break;
    case PB_T_PID_START:
        if (!w->have_pid_start || c->n[0] < w->first_start)
            w->first_start = c->n[0];
        w->have_pid_start = 1;
        put_tag(w, 'P');
        put_u32(w, c->u[0]);
        put_u32(w, c->u[1]);
        put_nv(w, c->n[0]);
        break;
    case PB_T_PID_END:
        if (!w->have_pid_end || c->n[0] > w->last_end)
            w->last_end = c->n[0];
        w->have_pid_end = 1;
        put_tag(w, 'p');
        put_u32(w, c->u[0]);
        put_nv(w, c->n[0]);
        break;
    case PB_T_NEW_FID:
        if (define_fid(w, c->u[0], c) < 0)
            return 1;
        put_tag(w, '@');
        put_u32(w, c->u[0]);
        put_u32(w, c->u[1]);
        put_u32(w, c->u[2]);
        put_u32(w, c->u[3]);
        put_u32(w, c->u[4]);
        put_u32(w, c->u[5]);
        if (put_str(w, &c->s[0], "file name", tag) < 0)
            return 1;
        break;
    case PB_T_TIME_LINE:
        if (!fid_defined(w, c->u[0]))
            return undefined_fid(w, c, c->u[0]);
        w->have_time = 1;
        put_tag(w, '+');
        put_u32(w, (uint32_t)c->ticks);
        put_u32(w, c->u[0]);
        put_u32(w, c->u[1]);
        break;
    case PB_T_TIME_BLOCK:
        if (!fid_defined(w, c->u[0]))
            return undefined_fid(w, c, c->u[0]);
        w->have_time = 1;
        put_tag(w, '*');
        put_u32(w, (uint32_t)c->ticks);
        put_u32(w, c->u[0]);
        put_u32(w, c->u[1]);
        put_u32(w, c->u[2]);
        put_u32(w, c->u[3]);
        break;
    case PB_T_DISCOUNT:
        put_tag(w, '-');
        break;
    case PB_T_SRC_LINE:
        put_tag(w, 'S');
        put_u32(w, c->u[0]);
        put_u32(w, c->u[1]);
        if (put_str(w, &c->s[0], "source text", tag) < 0)
            return 1;
        break;
    case PB_T_SUB_INFO:
        if (!fid_defined(w, c->u[0]))
            return undefined_fid(w, c, c->u[0]);
        put_tag(w, 's');
        put_u32(w, c->u[0]);
        if (put_str(w, &c->s[0], "sub name", tag) < 0 || room(w, 10) < 0)
            return 1;
        put_u32(w, c->u[1]);
        put_u32(w, c->u[2]);
        break;
    case PB_T_SUB_CALLERS:
        if (c->u[0] != 0 && !fid_defined(w, c->u[0]))
            return undefined_fid(w, c, c->u[0]);
        if (c->u[2])
            w->have_calls = 1;
        put_tag(w, 'c');
        put_u32(w, c->u[0]);
        put_u32(w, c->u[1]);
        if (put_str(w, &c->s[1], "caller name", tag) < 0 || room(w, REC_ROOM) < 0)
            return 1;
        put_u32(w, c->u[2]);
        put_nv(w, c->n[0]);
        put_nv(w, c->n[1]);
        put_nv(w, c->n[2]);
        put_u32(w, c->u[3]);
        if (put_str(w, &c->s[0], "called sub name", tag) < 0)
            return 1;
        break;
    case PB_T_SUB_ENTRY:
        put_tag(w, '>');
        put_u32(w, c->u[0]);
        put_u32(w, c->u[1]);
        break;
    case PB_T_SUB_RETURN:
        put_tag(w, '<');
        put_u32(w, c->u[0]);
        put_nv(w, c->n[0]);
        put_nv(w, c->n[1]);
        if (put_str(w, &c->s[0], "sub name", tag) < 0)
            return 1;
        break;
    case PB_TAG_COUNT:
        break;
    }
    w->chunk_no++;
    return w->failed;
}

/* ---- open / close ------------------------------------------------------ */

void pb_nytprof_writer_opts_init(pb_nytprof_writer_opts *o)
{
    memset(o, 0, sizeof *o);
    o->compress_level = PB_NYTPROF_WRITER_DEFAULT_LEVEL;
}

/* decoders' warnings (sink->warn) go to the caller's callback */
static void w_warn(pb_sink *self, const char *msg)
{
    pb_nytprof_writer *w = (pb_nytprof_writer *)self->ctx;
    if (w->warn)
        w->warn(w->warn_ud, msg);
}

static pb_nytprof_writer *new_writer(const pb_nytprof_writer_opts *o, const char *path, pb_error *err)
{
    pb_nytprof_writer_opts def;
    pb_nytprof_writer *w;
    if (!o) {
        pb_nytprof_writer_opts_init(&def);
        o = &def;
    }
    pb_error_init(err, "nytprof-writer", path);
    if (o->compress_level < 0 || o->compress_level > 9) {
        pb_fail_nooff(err, PB_ERR_UNSUPPORTED, "compress level %d is not 0..9", o->compress_level);
        return NULL;
    }
    w = (pb_nytprof_writer *)calloc(1, sizeof *w);
    if (!w || !(w->stage = (unsigned char *)malloc(STAGE_CAP))) {
        free(w);
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return NULL;
    }
    pb_error_init(&w->err, "nytprof-writer", path);
    w->level = o->compress_level;
    w->max_line = o->max_line ? o->max_line : PB_DEFAULT_MAX_LINE;
    w->do_fsync = o->fsync;
    w->warn = o->warn;
    w->warn_ud = o->warn_ud;
    w->sink.chunk = w_chunk;
    w->sink.warn = w_warn;
    w->sink.ctx = w;
    return w;
}

static void free_writer(pb_nytprof_writer *w)
{
    if (w->deflating)
        deflateEnd(&w->z);
    free(w->stage);
    free(w->zout);
    free(w->fid_bits);
    free(w->pending);
    free(w->path);
    free(w);
}

pb_nytprof_writer *pb_nytprof_writer_open(const char *path, const pb_nytprof_writer_opts *o, pb_error *err)
{
    pb_nytprof_writer *w;
    if (!path || !*path) {
        pb_error_init(err, "nytprof-writer", "");
        pb_fail_nooff(err, PB_ERR_IO, "no output file name");
        return NULL;
    }
    w = new_writer(o, path, err);
    if (!w)
        return NULL;
    w->path = strdup(path);
    if (!w->path) {
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        free_writer(w);
        return NULL;
    }
    w->out = pb_output_open(path, PB_OUT_STDOUT, err);
    if (!w->out) {
        free_writer(w);
        return NULL;
    }
    return w;
}

pb_nytprof_writer *pb_nytprof_writer_open_mem(pb_membuf *out, const pb_nytprof_writer_opts *o, pb_error *err)
{
    pb_nytprof_writer *w = new_writer(o, "(memory)", err);
    if (!w)
        return NULL;
    w->mem = out;
    return w;
}

pb_sink *pb_nytprof_writer_sink(pb_nytprof_writer *w) { return &w->sink; }
int pb_nytprof_writer_failed(const pb_nytprof_writer *w) { return w->failed; }
int pb_nytprof_writer_owned(const pb_nytprof_writer *w) { return !w->out || pb_output_owned(w->out); }
uint64_t pb_nytprof_writer_bytes_in(const pb_nytprof_writer *w) { return w->bytes_in; }
uint64_t pb_nytprof_writer_bytes_out(const pb_nytprof_writer *w) { return w->bytes_out; }

void pb_nytprof_writer_abort(pb_nytprof_writer *w)
{
    if (!w)
        return;
    if (w->out) {
        pb_output_abort(w->out); /* removes the temp file; in a forked child, touches nothing */
        w->out = NULL;
    }
    if (w->mem) {
        free(w->mem->data);
        memset(w->mem, 0, sizeof *w->mem);
    }
    free_writer(w);
}

static pb_status fail_close(pb_nytprof_writer *w, pb_error *err)
{
    if (err)
        *err = w->err;
    pb_nytprof_writer_abort(w);
    return err ? err->status : PB_ERR_IO;
}

/* the final checks, then flush */
static int finish(pb_nytprof_writer *w)
{
    if (w->has_pending && write_pending(w) < 0)
        return -1;
    if (!w->seen_version)
        return w_fail(w, PB_ERR_CORRUPT, "the stream had no chunks (not even VERSION)");
    if (!w->have_tps)
        return w_fail(w, PB_ERR_CORRUPT, "no ATTRIBUTE ticks_per_sec in the stream (nytprofhtml divides by it)");
    if (w->n_fids != w->max_fid) {
        uint32_t f;
        for (f = 1; f <= w->max_fid; f++)
            if (!fid_defined(w, f))
                break;
        return w_fail(w, PB_ERR_CORRUPT,
                      "fids are not dense: fid %lu was never defined but fid %lu was (nytprofhtml needs 1..N)",
                      (unsigned long)f, (unsigned long)w->max_fid);
    }
    if (!w->have_time && !w->have_calls && w->warn)
        w->warn(w->warn_ud, "nytprof-writer: warning: the profile holds no samples, timed statements or sub "
                            "calls: nytprofhtml will show an empty report");
    if (w->have_calls && w->warn &&
        (!w->have_pid_start || !w->have_pid_end || !(w->last_end > w->first_start)))
        w->warn(w->warn_ud, "nytprof-writer: the profile has sub calls but no PID_START/PID_END pair with "
                            "end > start; nytprofhtml will die dividing by the profile's duration");
    if (flush_stage(w) < 0)
        return -1;
    if (w->deflating) {
        if (deflate_bytes(w, NULL, 0, Z_FINISH) < 0)
            return -1;
        deflateEnd(&w->z);
        w->deflating = 0;
    }
    return 0;
}

pb_status pb_nytprof_writer_close(pb_nytprof_writer *w, pb_error *err)
{
    if (!w)
        return err ? pb_fail_nooff(err, PB_ERR_IO, "no writer") : PB_ERR_IO;
    if (w->failed || finish(w) < 0)
        return fail_close(w, err);
    if (w->out) {
        pb_error e;
        pb_output *out = w->out;
        w->out = NULL;
        pb_error_init(&e, "nytprof-writer", w->path);
        if (pb_output_commit(out, w->do_fsync, &e) != PB_OK) {
            w_fail(w, PB_ERR_IO, "%s", e.message);
            return fail_close(w, err);
        }
    }
    if (err)
        pb_error_init(err, "nytprof-writer", w->path ? w->path : "(memory)");
    w->mem = NULL; /* the buffer now belongs to the caller alone */
    free_writer(w);
    return PB_OK;
}
