/* write_statprofiler.c - Devel::StatProfiler trace writer (records and a
 * pb_sample_sink).  See write_statprofiler.h and the StatProfiler trace
 * format spec.
 *
 * Names here: k_ functions and types belong to the sink writer (pb_spw_sink, "k" in the code):
 * k_frame and k_thread its frames and threads, k_s a name's string; spw_ = StatProfiler writer.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include "codecs.h"
#include "count_samples.h"
#include "output.h"
#include "model.h"
#include "util.h"
#include "write_statprofiler.h"

enum { W_HEADER = 0, W_BODY, W_SAMPLE, W_CLOSED, W_FAILED };

/* packet buffers handed from suspended members to resumed ones (a sink's
 * pool: at most as many sets as writers holding an fd) */
typedef struct {
    unsigned char **buf;
    char **zbuf;
    size_t n, cap;
} spw_spares;

#define ZPRE 16 /* room before the compressed bytes: magic (14) + packet length (2) */

struct pb_spw {
    spw_spares *spares; /* members of a sink: buffers come from / go to it */
    int magic_pending;  /* the 14-byte magic goes out with the first packet */
    pb_output *out;   /* pb_spw_open: a file of its own (output.h) */
    pb_outset *set;   /* pb_spw_open_member: member `member` of a set */
    size_t member;
    int fd;           /* -1 while suspended (then buf and zbuf are freed) */
    pid_t pid;        /* the process that opened it: the only one that writes */
    char *path;       /* the name in messages */
    unsigned char *buf; /* PB_SPW_PACKET_MAX bytes of logical stream */
    size_t len;
    char *zbuf;
    size_t zcap;
    int state;
    pb_spw_header h;
    pb_error *err;    /* the API writer's own; a sink's members share the sink's */
    int own_err;
    uint64_t samples, bytes;
    int ended;        /* suspended with an end marker written after byte end_at */
    uint64_t end_at;
    int check_pid;    /* an API writer: refuse calls from a forked child */
    unsigned char *hdrbuf; /* header metadata records, until the header goes out */
    size_t hlen, hcap;
};

/* ---- encoding ------------------------------------------------------------ */
static size_t vlen(uint32_t v)
{
    return v < (1u << 7) ? 1 : v < (1u << 14) ? 2 : v < (1u << 21) ? 3 : v < (1u << 28) ? 4 : 5;
}
/* most significant group first, the high bit set on all but the last byte */
static inline size_t venc(unsigned char *o, uint32_t v)
{
    size_t n = vlen(v), i = n - 1;
    o[i] = (unsigned char)(v & 0x7f);
    while (i-- > 0) {
        v >>= 7;
        o[i] = (unsigned char)((v & 0x7f) | 0x80);
    }
    return n;
}
static size_t slen(pb_str s) { return 1 + vlen((uint32_t)s.len) + s.len; }

static pb_status w_fail(pb_spw *w, pb_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static pb_status w_fail(pb_spw *w, pb_status st, const char *fmt, ...)
{
    va_list ap;
    pb_error_init(w->err, "statprofiler-writer", w->path); /* each failing call reports its own reason */
    va_start(ap, fmt);
    pb_vfail_nooff(w->err, st, fmt, ap);
    va_end(ap);
    if (st == PB_ERR_IO)
        w->state = W_FAILED;
    return st;
}

/* make sure the packet buffers exist (they are freed while suspended) */
static pb_status w_buffers(pb_spw *w)
{
    if (!w->buf && w->spares && w->spares->n) {
        w->spares->n--;
        w->buf = w->spares->buf[w->spares->n];
        w->zbuf = w->spares->zbuf[w->spares->n];
    }
    w->zcap = snappy_max_compressed_length(PB_SPW_PACKET_MAX);
    if (!w->buf && !(w->buf = (unsigned char *)malloc(PB_SPW_PACKET_MAX)))
        return w_fail(w, PB_ERR_LIMIT, "out of memory");
    if (!w->zbuf && !(w->zbuf = (char *)malloc(ZPRE + w->zcap)))
        return w_fail(w, PB_ERR_LIMIT, "out of memory");
    return PB_OK;
}

static void w_release_buffers(pb_spw *w)
{
    spw_spares *sp = w->spares;
    if (sp && w->buf && w->zbuf && sp->n < sp->cap) {
        sp->buf[sp->n] = w->buf;
        sp->zbuf[sp->n] = w->zbuf;
        sp->n++;
    } else {
        free(w->buf);
        free(w->zbuf);
    }
    w->buf = NULL;
    w->zbuf = NULL;
}

static pb_status w_raw(pb_spw *w, const void *p, size_t n)
{
    const char *b = (const char *)p;
    while (n) {
        ssize_t k = write(w->fd, b, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return w_fail(w, PB_ERR_IO, "cannot write %s: %s", w->path, strerror(errno));
        }
        b += k;
        n -= (size_t)k;
    }
    return PB_OK;
}

/* one packet: 2-byte big-endian length + Snappy bytes, in one write (with
 * the file's magic in front of the first) */
static pb_status w_packet(pb_spw *w)
{
    size_t zl = w->zcap;
    char *z = w->zbuf + ZPRE, *from;
    pb_status st;
    if (w->len == 0)
        return PB_OK;
    if (snappy_compress((const char *)w->buf, w->len, z, &zl) != SNAPPY_OK || zl > 0xFFFF)
        return w_fail(w, PB_ERR_IO, "snappy compression of a packet failed (%s)", w->path);
    z[-2] = (char)(zl >> 8);
    z[-1] = (char)zl;
    from = z - 2;
    if (w->magic_pending) {
        from -= 14;
        memcpy(from, "=statprofiler\001", 14);
    }
    if ((st = w_raw(w, from, (size_t)(z + zl - from))) != PB_OK)
        return st;
    w->bytes += (uint64_t)(z + zl - from);
    w->magic_pending = 0;
    w->len = 0;
    return PB_OK;
}

/* append bytes to the logical stream, cutting packets at 32000 */
static pb_status w_put(pb_spw *w, const unsigned char *p, size_t n)
{
    if (n < PB_SPW_PACKET_MAX - w->len) { /* fits, short of filling the packet */
        memcpy(w->buf + w->len, p, n);
        w->len += n;
        return PB_OK;
    }
    while (n) {
        size_t room = PB_SPW_PACKET_MAX - w->len, k = n < room ? n : room;
        pb_status st;
        memcpy(w->buf + w->len, p, k);
        w->len += k;
        p += k;
        n -= k;
        if (w->len == PB_SPW_PACKET_MAX && (st = w_packet(w)) != PB_OK)
            return st;
    }
    return PB_OK;
}
static pb_status w_varint(pb_spw *w, uint32_t v)
{
    unsigned char t[5];
    return w_put(w, t, venc(t, v));
}
static pb_status w_string(pb_spw *w, pb_str s)
{
    pb_status st;
    unsigned char f = s.utf8 ? 1 : 0;
    if (s.len > UINT32_MAX)
        return w_fail(w, PB_ERR_LIMIT, "a string longer than 4 GiB cannot be written (%s)", w->path);
    if ((st = w_put(w, &f, 1)) != PB_OK || (st = w_varint(w, (uint32_t)s.len)) != PB_OK)
        return st;
    return w_put(w, (const unsigned char *)s.ptr, s.len);
}
static pb_status w_tag(pb_spw *w, unsigned tag, size_t payload)
{
    unsigned char t = (unsigned char)tag;
    pb_status st;
    if (payload > UINT32_MAX)
        return w_fail(w, PB_ERR_LIMIT, "a record longer than 4 GiB cannot be written (%s)", w->path);
    if ((st = w_put(w, &t, 1)) != PB_OK)
        return st;
    return w_varint(w, (uint32_t)payload);
}

/* ---- header ---------------------------------------------------------------- */
void pb_spw_header_init(pb_spw_header *h)
{
    memset(h, 0, sizeof *h);
    h->perl_revision = 5;
    h->perl_version = 36;
    h->perl_subversion = 0;
}

static pb_status w_header(pb_spw *w)
{
    unsigned char t[64];
    size_t n = 0;
    pb_status st;
    if (w->state != W_HEADER)
        return PB_OK;
    t[n++] = 201;
    n += venc(t + n, w->h.perl_revision);
    n += venc(t + n, w->h.perl_version);
    n += venc(t + n, w->h.perl_subversion);
    t[n++] = 202;
    n += venc(t + n, w->h.interval_us);
    t[n++] = 203;
    n += venc(t + n, w->h.depth);
    t[n++] = 205;
    n += venc(t + n, w->h.ordinal);
    n += venc(t + n, w->h.parent_ordinal);
    if ((st = w_put(w, t, n)) != PB_OK || (st = w_put(w, w->h.id, PB_SPW_ID_BYTES)) != PB_OK ||
        (st = w_put(w, w->h.parent_id, PB_SPW_ID_BYTES)) != PB_OK)
        return st;
    if (w->hlen && (st = w_put(w, w->hdrbuf, w->hlen)) != PB_OK)
        return st;
    t[0] = 254;
    if ((st = w_put(w, t, 1)) != PB_OK)
        return st;
    free(w->hdrbuf);
    w->hdrbuf = NULL;
    w->hlen = w->hcap = 0;
    w->state = W_BODY;
    return w_packet(w); /* the header is its own packet, as StatProfiler flushes it */
}

static void put_le32(unsigned char *o, uint32_t v)
{
    o[0] = (unsigned char)v;
    o[1] = (unsigned char)(v >> 8);
    o[2] = (unsigned char)(v >> 16);
    o[3] = (unsigned char)(v >> 24);
}

/* an id as a trace file's name holds it: its six words as "%08x" each */
static void id_hex(const unsigned char id[PB_SPW_ID_BYTES], char out[49])
{
    int i;
    for (i = 0; i < 6; i++) {
        const unsigned char *q = id + 4 * i;
        snprintf(out + 8 * i, 9, "%08x", (unsigned)q[0] | (unsigned)q[1] << 8 | (unsigned)q[2] << 16 |
                                             (unsigned)q[3] << 24);
    }
}

/* the writer without its file */
static pb_spw *spw_new(const char *name, const pb_spw_header *h, spw_spares *spares, pid_t pid,
                       pb_error *shared_err, pb_error *err)
{
    pb_spw *w = (pb_spw *)calloc(1, sizeof *w);
    if (!w) {
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return NULL;
    }
    w->fd = -1;
    w->pid = pid;
    w->spares = spares;
    w->err = shared_err;
    if (!w->err) {
        w->err = (pb_error *)malloc(sizeof *w->err);
        w->own_err = 1;
    }
    w->path = strdup(name);
    if (w->err)
        pb_error_init(w->err, "statprofiler-writer", name);
    if (!w->err || !w->path || w_buffers(w) != PB_OK) {
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        pb_spw_free(w);
        return NULL;
    }
    if (h)
        w->h = *h;
    else
        pb_spw_header_init(&w->h);
    if (!w->h.interval_us)
        w->h.interval_us = 10000;
    if (!w->h.depth)
        w->h.depth = 20;
    if (!w->h.ordinal)
        w->h.ordinal = 1;
    if (!w->h.have_id) {
        static unsigned seq;
        uint32_t t = (uint32_t)time(NULL);
        uint32_t r = (uint32_t)w->pid * 2654435761u ^ t ^ (uint32_t)(uintptr_t)w ^ (++seq * 0x9E3779B9u);
        int i;
        put_le32(w->h.id, (uint32_t)w->pid);
        put_le32(w->h.id + 4, seq);
        put_le32(w->h.id + 8, t);
        for (i = 0; i < 3; i++) {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            put_le32(w->h.id + 12 + 4 * i, r);
        }
        w->h.have_id = 1;
    }
    return w;
}

pb_spw *pb_spw_open(const char *path, const pb_spw_header *h, pb_error *err)
{
    pb_spw *w;
    pb_error_init(err, "statprofiler-writer", path);
    if (!PB_HAVE_SNAPPY) {
        pb_fail_nooff(err, PB_ERR_UNSUPPORTED, PB_NO_CODEC_MSG("snappy", "libsnappy-dev"));
        return NULL;
    }
    if (!(w = spw_new(path, h, NULL, getpid(), NULL, err)))
        return NULL;
    if (!(w->out = pb_output_open(path, 0, err))) {
        pb_spw_free(w);
        return NULL;
    }
    w->fd = pb_output_fd(w->out);
    w->check_pid = 1;
    w->magic_pending = 1;
    return w;
}

static pb_spw *open_member(pb_outset *set, size_t member, const char *name, const pb_spw_header *h,
                           spw_spares *spares, pid_t pid, pb_error *shared_err, pb_error *err)
{
    pb_spw *w;
    if (!PB_HAVE_SNAPPY) {
        pb_fail_nooff(err, PB_ERR_UNSUPPORTED, PB_NO_CODEC_MSG("snappy", "libsnappy-dev"));
        return NULL;
    }
    if (!(w = spw_new(name, h, spares, pid, shared_err, err)))
        return NULL;
    w->set = set;
    w->member = member;
    if ((w->fd = pb_outset_create(set, member, err)) < 0) {
        pb_spw_free(w);
        return NULL;
    }
    w->magic_pending = 1;
    return w;
}

pb_spw *pb_spw_open_member(pb_outset *set, size_t member, const char *name, const pb_spw_header *h, pb_error *err)
{
    return open_member(set, member, name, h, NULL, getpid(), NULL, err);
}

int pb_spw_suspended(const pb_spw *w) { return w->fd < 0; }

/* A suspended member is left complete: its pending records, then an end
 * marker in a packet of its own, whose start (end_at) resume() truncates
 * back to.  So a thread that never comes back costs no reopen at finish. */
pb_status pb_spw_suspend(pb_spw *w)
{
    pb_status st = PB_OK;
    if (!w->set || w->fd < 0)
        return PB_OK;
    if (w->state == W_HEADER)
        st = w_header(w);
    if (st == PB_OK && w->state == W_BODY && (st = w_packet(w)) == PB_OK) {
        unsigned char end[2] = {197, 0};
        w->end_at = w->bytes;
        if ((st = w_put(w, end, 2)) == PB_OK && (st = w_packet(w)) == PB_OK)
            w->ended = 1;
    }
    if (close(w->fd) != 0 && st == PB_OK)
        st = w_fail(w, PB_ERR_IO, "cannot write %s: %s", w->path, strerror(errno));
    w->fd = -1;
    w_release_buffers(w);
    return st;
}

pb_status pb_spw_resume(pb_spw *w, pb_error *err)
{
    pb_status st;
    if (w->fd >= 0)
        return PB_OK;
    if (!w->set)
        return w_fail(w, PB_ERR_USAGE, "the writer of %s is not part of a set", w->path);
    if ((st = w_buffers(w)) != PB_OK)
        return st;
    if ((w->fd = pb_outset_reopen(w->set, w->member, err)) < 0) {
        w->state = W_FAILED;
        *w->err = *err;
        return err->status;
    }
    if (w->ended) { /* take the end marker back */
        if (ftruncate(w->fd, (off_t)w->end_at) != 0)
            return w_fail(w, PB_ERR_IO, "cannot write %s: %s", w->path, strerror(errno));
        w->bytes = w->end_at;
        w->ended = 0;
    }
    return PB_OK;
}

static pb_status w_check(pb_spw *w, const char *what, int want_sample)
{
    if (w->check_pid && w->pid != getpid())
        return w_fail(w, PB_ERR_USAGE,
                      "%s: this writer was opened by process %ld (before a fork); only that process writes %s",
                      what, (long)w->pid, w->path);
    if (w->state == W_CLOSED)
        return w_fail(w, PB_ERR_USAGE, strcmp(what, "close") == 0 ? "close called twice" : "%s after close", what);
    if (w->fd < 0)
        return w_fail(w, PB_ERR_USAGE, "%s on a suspended writer", what);
    if (w->state == W_FAILED)
        return w->err->status ? w->err->status : PB_ERR_IO;
    if (want_sample > 0 && w->state != W_SAMPLE)
        return w_fail(w, PB_ERR_USAGE, "%s outside a sample (call start_sample first)", what);
    if (want_sample == 0 && w->state == W_SAMPLE)
        return w_fail(w, PB_ERR_USAGE, "%s inside a sample (call end_sample first)", what);
    return w_header(w);
}

pb_status pb_spw_header_metadata(pb_spw *w, pb_str key, pb_str value)
{
    size_t need = 1 + 5 + slen(key) + slen(value), n = 0;
    unsigned char *q;
    if (w->state != W_HEADER)
        return w_fail(w, PB_ERR_USAGE, "header metadata after the first body record (%s)", w->path);
    if (pb_grow((void **)&w->hdrbuf, &w->hcap, w->hlen + need, 1) < 0)
        return w_fail(w, PB_ERR_LIMIT, "out of memory (%s)", w->path);
    q = w->hdrbuf + w->hlen;
    q[n++] = 200;
    n += venc(q + n, (uint32_t)(slen(key) + slen(value)));
    q[n++] = key.utf8 ? 1 : 0;
    n += venc(q + n, (uint32_t)key.len);
    memcpy(q + n, key.ptr, key.len);
    n += key.len;
    q[n++] = value.utf8 ? 1 : 0;
    n += venc(q + n, (uint32_t)value.len);
    memcpy(q + n, value.ptr, value.len);
    n += value.len;
    w->hlen += n;
    return PB_OK;
}

#define CHECK(what, ws) do { pb_status c_ = w_check(w, what, ws); if (c_ != PB_OK) return c_; } while (0)
#define TRY(x) do { pb_status t_ = (x); if (t_ != PB_OK) return t_; } while (0)

pb_status pb_spw_start_sample(pb_spw *w, uint32_t weight, pb_str op_name)
{
    CHECK("start_sample", 0);
    TRY(w_tag(w, 1, vlen(weight) + slen(op_name)));
    TRY(w_varint(w, weight));
    TRY(w_string(w, op_name));
    w->state = W_SAMPLE;
    return PB_OK;
}

/* a string at q, as w_string() puts it; returns the byte after it */
static unsigned char *statprofiler_out_str_at(unsigned char *q, pb_str s)
{
    *q++ = s.utf8 ? 1 : 0;
    q += venc(q, (uint32_t)s.len);
    memcpy(q, s.ptr, s.len);
    return q + s.len;
}

pb_status pb_spw_sub_frame(pb_spw *w, pb_str package, pb_str name, pb_str file, int32_t line, int32_t first_line)
{
    size_t payload = slen(package) + slen(name) + slen(file) + vlen((uint32_t)line) + vlen((uint32_t)first_line);
    CHECK("sub_frame", 1);
    if (payload <= UINT32_MAX && 6 + payload < PB_SPW_PACKET_MAX - w->len) {
        /* the whole record fits the packet, short of filling it: the bytes
         * the calls below put, in one go (the bulk of a converted trace) */
        unsigned char *q = w->buf + w->len;
        *q++ = 3;
        q += venc(q, (uint32_t)payload);
        q = statprofiler_out_str_at(statprofiler_out_str_at(statprofiler_out_str_at(q, package), name), file);
        q += venc(q, (uint32_t)line);
        q += venc(q, (uint32_t)first_line);
        w->len = (size_t)(q - w->buf);
        return PB_OK;
    }
    TRY(w_tag(w, 3, payload));
    TRY(w_string(w, package));
    TRY(w_string(w, name));
    TRY(w_string(w, file));
    TRY(w_varint(w, (uint32_t)line));
    return w_varint(w, (uint32_t)first_line);
}

pb_status pb_spw_xsub_frame(pb_spw *w, pb_str package, pb_str name)
{
    CHECK("xsub_frame", 1);
    TRY(w_tag(w, 5, slen(package) + slen(name)));
    TRY(w_string(w, package));
    return w_string(w, name);
}

static pb_status w_file_line(pb_spw *w, unsigned tag, pb_str file, int32_t line)
{
    TRY(w_tag(w, tag, slen(file) + vlen((uint32_t)line)));
    TRY(w_string(w, file));
    return w_varint(w, (uint32_t)line);
}

pb_status pb_spw_main_frame(pb_spw *w, pb_str file, int32_t line)
{
    CHECK("main_frame", 1);
    return w_file_line(w, 6, file, line);
}

pb_status pb_spw_eval_frame(pb_spw *w, pb_str file, int32_t line)
{
    CHECK("eval_frame", 1);
    return w_file_line(w, 4, file, line);
}

pb_status pb_spw_end_sample(pb_spw *w)
{
    CHECK("end_sample", 1);
    TRY(w_tag(w, 2, 0));
    w->state = W_BODY;
    w->samples++;
    return PB_OK;
}

pb_status pb_spw_eval_source(pb_spw *w, pb_str text, uint32_t eval_n)
{
    CHECK("eval_source", -1);
    TRY(w_tag(w, 8, slen(text) + vlen(eval_n)));
    TRY(w_string(w, text));
    return w_varint(w, eval_n);
}

static pb_status w_section(pb_spw *w, unsigned tag, pb_str name)
{
    TRY(w_tag(w, tag, slen(name)));
    return w_string(w, name);
}
pb_status pb_spw_section_start(pb_spw *w, pb_str name)
{
    CHECK("section_start", 0);
    return w_section(w, 198, name);
}
pb_status pb_spw_section_end(pb_spw *w, pb_str name)
{
    CHECK("section_end", 0);
    return w_section(w, 199, name);
}

pb_status pb_spw_metadata(pb_spw *w, pb_str key, pb_str value)
{
    CHECK("metadata", 0);
    TRY(w_tag(w, 200, slen(key) + slen(value)));
    TRY(w_string(w, key));
    return w_string(w, value);
}

pb_status pb_spw_close(pb_spw *w)
{
    if (w->ended && w->fd < 0 && w->state == W_BODY) {
        w->state = W_CLOSED; /* suspended complete: nothing left to write */
        return PB_OK;
    }
    CHECK("close", 0);
    TRY(w_tag(w, 197, 0));
    TRY(w_packet(w));
    if (w->out) {
        pb_output *out = w->out;
        pb_error e;
        w->out = NULL;
        w->fd = -1;
        pb_error_init(&e, "statprofiler-writer", w->path);
        if (pb_output_commit(out, 0, &e) != PB_OK) {
            w->state = W_FAILED;
            *w->err = e;
            return e.status;
        }
    } else {
        int bad = close(w->fd) != 0;
        w->fd = -1;
        if (bad)
            return w_fail(w, PB_ERR_IO, "cannot write %s: %s", w->path, strerror(errno));
    }
    w->state = W_CLOSED;
    return PB_OK;
}

void pb_spw_free(pb_spw *w)
{
    if (!w)
        return;
    /* not closed: nothing is published (the temp file goes); in a forked
     * child nothing is written or removed at all */
    if (w->out)
        pb_output_abort(w->out);
    else if (w->fd >= 0)
        close(w->fd);
    free(w->path);
    w_release_buffers(w);
    free(w->hdrbuf);
    if (w->own_err)
        free(w->err);
    free(w);
}

const pb_error *pb_spw_error(const pb_spw *w) { return w->err; }
int pb_spw_in_sample(const pb_spw *w) { return w->state == W_SAMPLE; }
int pb_spw_is_closed(const pb_spw *w) { return w->state == W_CLOSED; }
uint64_t pb_spw_samples(const pb_spw *w) { return w->samples; }
uint64_t pb_spw_bytes_written(const pb_spw *w) { return w->bytes; }

/* ---- the sample sink ---------------------------------------------------------- */
typedef struct {
    pb_frame_kind kind;
    uint32_t pkg, name, file; /* string ids in the sink's table */
    unsigned char putf8, nutf8, futf8;
    int32_t line, first_line;
} k_frame;

typedef struct {
    uint64_t key;
    uint32_t pid;
    pb_spw *w;
    uint64_t used;   /* clock of the last write, for the fd pool */
    uint64_t rem_ns; /* ns weights: what the ticks written so far left over (< 1 µs) */
} k_thread;

typedef struct {
    unsigned char *k, *v;
    size_t kl, vl;
    int ku, vu;
} k_meta;

struct pb_spw_sink {
    pb_sample_sink ss;
    pb_error *err;
    pb_error own_err;
    char *out;
    pb_outset *set;   /* every trace is a member until all are complete */
    pb_index tab;     /* thread key -> th[] */
    size_t *openidx;       /* threads whose writer holds an fd */
    size_t nopen, maxopen; /* how many, and the pool size */
    uint64_t clock;
    pid_t mypid;
    spw_spares spares;
    pb_error member_err; /* the members' errors (one at a time: the first stops the sink) */
    pb_spw_header h;
    pb_sample_facts facts; /* what the weights are: ns, samples, or neither */
    int units_checked;
    k_frame *fr;
    size_t nfr, capfr;
    pb_strtab strs;
    k_thread *th;
    size_t nth, capth;
    k_meta *hm; /* header metadata, replayed into each trace */
    size_t nhm, caphm;
    char *op;
    size_t oplen, opcap;
    char **names;
    size_t nnames;
    int finished;
};

static pb_status k_oom(pb_spw_sink *k) { return pb_fail_nooff(k->err, PB_ERR_LIMIT, "out of memory"); }

static pb_status k_writer_fail(pb_spw_sink *k, pb_spw *w)
{
    const pb_error *e = pb_spw_error(w);
    pb_error_init(k->err, "statprofiler-writer", e->file);
    return pb_fail_nooff(k->err, e->status ? e->status : PB_ERR_IO, "%s", e->message);
}

static pb_status k_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    pb_spw_sink *k = (pb_spw_sink *)self->ctx;
    char buf[32];
    pb_sample_facts_take(&k->facts, self, key, v);
    pb_sample_attr_text(v, buf, sizeof buf);
    if (!strcmp(key, "sample_interval_us") || !strcmp(key, "interval_us"))
        k->h.interval_us = (uint32_t)strtoul(buf, NULL, 10);
    else if (!strcmp(key, "stack_depth"))
        k->h.depth = (uint32_t)strtoul(buf, NULL, 10);
    else if (!strcmp(key, "perl_version")) {
        unsigned a = 0, b = 0, c = 0;
        if (sscanf(buf, "%u.%u.%u", &a, &b, &c) >= 2) {
            k->h.perl_revision = a;
            k->h.perl_version = b;
            k->h.perl_subversion = c;
        }
    }
    return PB_OK;
}

static pb_status k_frame_cb(pb_sample_sink *self, const pb_frame *f, uint32_t *id)
{
    pb_spw_sink *k = (pb_spw_sink *)self->ctx;
    k_frame *e;
    if (!(e = PB_GROW_ID(k->fr, k->capfr, k->nfr)))
        return k_oom(k);
    if (pb_strtab_intern(&k->strs, f->package.ptr ? f->package.ptr : "", f->package.len, &e->pkg) < 0 ||
        pb_strtab_intern(&k->strs, f->name.ptr ? f->name.ptr : "", f->name.len, &e->name) < 0 ||
        pb_strtab_intern(&k->strs, f->file.ptr ? f->file.ptr : "", f->file.len, &e->file) < 0)
        return k_oom(k);
    e->kind = f->kind;
    e->putf8 = (unsigned char)f->package.utf8;
    e->nutf8 = (unsigned char)f->name.utf8;
    e->futf8 = (unsigned char)f->file.utf8;
    e->line = f->line;
    e->first_line = f->first_line;
    *id = (uint32_t)k->nfr++;
    return PB_OK;
}

/* Close the fd of the least recently used writer (not `keep`) while the
 * pool is full.  The pool (k->openidx, at most k->maxopen entries) is sized
 * from RLIMIT_NOFILE, so a low ulimit -n still works; eviction scans only
 * the pool, so it costs the same with 10 threads or 100,000. */
static pb_status k_make_room(pb_spw_sink *k, size_t keep)
{
    while (k->nopen >= k->maxopen) {
        size_t i, lru = (size_t)-1;
        for (i = 0; i < k->nopen; i++)
            if (k->openidx[i] != keep && (lru == (size_t)-1 || k->th[k->openidx[i]].used < k->th[k->openidx[lru]].used))
                lru = i;
        if (lru == (size_t)-1)
            break;
        if (pb_spw_suspend(k->th[k->openidx[lru]].w) != PB_OK)
            return k_writer_fail(k, k->th[k->openidx[lru]].w);
        k->openidx[lru] = k->openidx[--k->nopen];
    }
    return PB_OK;
}

/* give thread ti's writer an fd */
static pb_status k_use(pb_spw_sink *k, size_t ti)
{
    k_thread *t = &k->th[ti];
    pb_status st;
    t->used = ++k->clock;
    if (!pb_spw_suspended(t->w) || pb_spw_is_closed(t->w))
        return PB_OK;
    if ((st = k_make_room(k, ti)) != PB_OK)
        return st;
    if (pb_spw_resume(t->w, k->err) != PB_OK)
        return k->err->status;
    k->openidx[k->nopen++] = ti;
    return PB_OK;
}

static uint32_t statprofiler_out_h_thread(const void *k, uint32_t i) { return pb_mix64(((const pb_spw_sink *)k)->th[i].key); }

/* Before the first trace's header: what a tick is.  A StatProfiler record's
 * weight counts ticks of the header's interval (µs), so ns weights (recorded
 * times, span times, a merge) are written as 1 µs ticks
 * (interval 1), a sample count keeps its interval (sample_interval_us, or
 * a profile.proto's period), and weights that are neither (bytes, objects) have no
 * place in the format: an unsupported error (the target cannot carry them). */
static pb_status k_units(pb_spw_sink *k)
{
    if (k->units_checked)
        return PB_OK;
    k->units_checked = 1;
    if (k->facts.weight_ns) {
        k->h.interval_us = 1;
    } else if (k->facts.kind == PB_WEIGHT_OTHER) {
        char unit[96];
        pb_weight_kind_of(k->facts.sample_type, unit, sizeof unit);
        return pb_fail_nooff(k->err, PB_ERR_UNSUPPORTED,
                             "the weights are %s (sample type %s), not samples or time: StatProfiler records hold "
                             "ticks of a sampling interval (--sample-type picks another of the profile's types)",
                             unit, k->facts.sample_type);
    } else if (!k->h.interval_us && k->facts.period_ns >= 1000 && k->facts.period_ns % 1000 == 0 &&
               k->facts.period_ns / 1000 <= UINT32_MAX) {
        k->h.interval_us = (uint32_t)(k->facts.period_ns / 1000);
    }
    return PB_OK;
}

static k_thread *k_thread_get(pb_spw_sink *k, uint64_t key, uint32_t pid, pb_status *st)
{
    size_t i, j;
    uint32_t ti;
    k_thread *t;
    pb_spw_header h;
    char hex[49], *name;
    size_t ol = strlen(k->out);
    *st = PB_OK;
    if ((*st = k_units(k)) != PB_OK)
        return NULL;
    if (pb_index_reserve(&k->tab, k->nth, statprofiler_out_h_thread, k) < 0) {
        *st = k_oom(k);
        return NULL;
    }
    PB_INDEX_FIND(&k->tab, pb_mix64(key), j, ti, k->th[ti].key == key);
    if (ti != PB_INDEX_NONE)
        return (*st = k_use(k, ti)) == PB_OK ? &k->th[ti] : NULL;
    if (k->nth >= UINT32_MAX - 1) {
        *st = pb_fail_nooff(k->err, PB_ERR_LIMIT, "more than 4 billion threads");
        return NULL;
    }
    if (pb_grow((void **)&k->th, &k->capth, k->nth + 1, sizeof *k->th) < 0) {
        *st = k_oom(k);
        return NULL;
    }
    t = &k->th[k->nth];
    memset(t, 0, sizeof *t);
    t->key = key;
    t->pid = pid;
    h = k->h;
    h.have_id = 1;
    {
        uint32_t words[6];
        int jj;
        words[0] = pid ? pid : (uint32_t)k->mypid;
        words[1] = (uint32_t)key;
        words[2] = (uint32_t)time(NULL);
        words[3] = (uint32_t)(key >> 32) ^ 0x5bd1e995u;
        words[4] = (uint32_t)k->mypid * 2654435761u;
        words[5] = (uint32_t)k->nth * 0x9E3779B9u ^ words[2];
        for (jj = 0; jj < 6; jj++)
            put_le32(h.id + 4 * jj, words[jj]);
    }
    /* the name it will have: "<out>.<48 hex id>.00000001" (or <out> alone) */
    name = (char *)malloc(ol + 64);
    if (!name) {
        *st = k_oom(k);
        return NULL;
    }
    id_hex(h.id, hex);
    snprintf(name, ol + 64, "%s.%s.%08x", k->out, hex, 1u);
    /* room in the fd pool first */
    if ((*st = k_make_room(k, (size_t)-1)) != PB_OK) {
        free(name);
        return NULL;
    }
    t->w = open_member(k->set, k->nth, name, &h, &k->spares, k->mypid, &k->member_err, k->err);
    free(name);
    if (!t->w) {
        *st = k->err->status;
        return NULL;
    }
    k->openidx[k->nopen++] = k->nth;
    t->used = ++k->clock;
    pb_index_set(&k->tab, j, (uint32_t)k->nth++); /* j: where the probe above ended */
    for (i = 0; i < k->nhm; i++) {
        if (pb_spw_header_metadata(t->w, pb_str_make((const char *)k->hm[i].k, k->hm[i].kl, k->hm[i].ku),
                                   pb_str_make((const char *)k->hm[i].v, k->hm[i].vl, k->hm[i].vu)) != PB_OK) {
            *st = k_writer_fail(k, t->w);
            return NULL;
        }
    }
    return t;
}

static pb_status k_thread_cb(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    pb_spw_sink *k = (pb_spw_sink *)self->ctx;
    pb_status st;
    (void)ppid;
    (void)label;
    k_thread_get(k, key, pid, &st);
    return st;
}

/* a frame's string: its bytes from the table, its UTF-8 flag as the frame gave it */
static pb_str k_s(pb_spw_sink *k, uint32_t id, int utf8)
{
    return pb_str_make(pb_strtab_ptr(&k->strs, id), pb_strtab_len(&k->strs, id), utf8);
}

static pb_status k_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                          uint64_t ts)
{
    pb_spw_sink *k = (pb_spw_sink *)self->ctx;
    pb_status st;
    k_thread *t = k_thread_get(k, key, 0, &st);
    uint32_t i;
    (void)ts;
    if (!t)
        return st;
    if (k->facts.weight_ns) { /* ns -> 1 µs ticks; the sub-µs rest carried to the thread's next sample */
        uint64_t ns = weight;
        weight = ns / 1000u + (ns % 1000u + t->rem_ns) / 1000u;
        t->rem_ns = (ns % 1000u + t->rem_ns) % 1000u;
        if (weight > UINT32_MAX)
            return pb_fail_nooff(k->err, PB_ERR_LIMIT,
                                 "a sample of %llu ns (%llu ticks of 1 us) does not fit a StatProfiler record's "
                                 "weight (at most %lu ticks)",
                                 (unsigned long long)ns, (unsigned long long)weight, (unsigned long)UINT32_MAX);
    } else if (weight > UINT32_MAX) {
        return pb_fail_nooff(k->err, PB_ERR_LIMIT,
                             "a sample of weight %llu does not fit a StatProfiler record's weight (at most %lu ticks)",
                             (unsigned long long)weight, (unsigned long)UINT32_MAX);
    }
    if (pb_spw_start_sample(t->w, (uint32_t)weight, pb_str_make(k->op ? k->op : "", k->oplen, 0)) != PB_OK)
        return k_writer_fail(k, t->w);
    k->oplen = 0;
    for (i = 0; i < depth; i++) {
        const k_frame *f;
        pb_str pkg, name, file;
        if (ids[i] >= k->nfr)
            return pb_fail_nooff(k->err, PB_ERR_CORRUPT, "sample refers to frame id %u of %zu", (unsigned)ids[i],
                                 k->nfr);
        f = &k->fr[ids[i]];
        pkg = k_s(k, f->pkg, f->putf8);
        name = k_s(k, f->name, f->nutf8);
        file = k_s(k, f->file, f->futf8);
        switch (f->kind) {
        case PB_FRAME_SUB:
            st = pb_spw_sub_frame(t->w, pkg, name, file, f->line, f->first_line);
            break;
        case PB_FRAME_MAIN:
            st = pb_spw_main_frame(t->w, file, f->line);
            break;
        case PB_FRAME_EVAL:
            st = pb_spw_eval_frame(t->w, file, f->line);
            break;
        default: /* XSUB and synthetic */
            st = pb_spw_xsub_frame(t->w, pkg, name);
            break;
        }
        if (st != PB_OK)
            return k_writer_fail(k, t->w);
    }
    if (pb_spw_end_sample(t->w) != PB_OK)
        return k_writer_fail(k, t->w);
    return PB_OK;
}

static unsigned char *k_dup(pb_str s)
{
    unsigned char *p = (unsigned char *)malloc(s.len + 1);
    if (p && s.len)
        memcpy(p, s.ptr, s.len);
    return p;
}

static pb_status k_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    pb_spw_sink *k = (pb_spw_sink *)self->ctx;
    size_t i;
    pb_status st = PB_OK;
    if (!strcmp(kind, "metadata") && n == 1) {
        k_meta *m;
        if (pb_grow((void **)&k->hm, &k->caphm, k->nhm + 1, sizeof *k->hm) < 0)
            return k_oom(k);
        m = &k->hm[k->nhm];
        m->k = k_dup(a);
        m->v = k_dup(b);
        if (!m->k || !m->v) {
            free(m->k);
            free(m->v);
            return k_oom(k);
        }
        m->kl = a.len;
        m->vl = b.len;
        m->ku = a.utf8;
        m->vu = b.utf8;
        k->nhm++;
        for (i = 0; i < k->nth; i++)
            if (pb_spw_header_metadata(k->th[i].w, a, b) != PB_OK)
                return k_writer_fail(k, k->th[i].w);
        return PB_OK;
    }
    /* body records go to every trace (sections and metadata describe the run) */
    if (k->nth == 0 && !k_thread_get(k, 0, 0, &st))
        return st;
    for (i = 0; i < k->nth; i++) {
        pb_spw *w = k->th[i].w;
        if ((st = k_use(k, i)) != PB_OK)
            return st;
        if (!strcmp(kind, "metadata"))
            st = pb_spw_metadata(w, a, b);
        else if (!strcmp(kind, "section_start"))
            st = pb_spw_section_start(w, a);
        else if (!strcmp(kind, "section_end"))
            st = pb_spw_section_end(w, a);
        else if (!strcmp(kind, "eval_source"))
            st = pb_spw_eval_source(w, a, n);
        if (st != PB_OK)
            return k_writer_fail(k, w);
    }
    return PB_OK;
}

static pb_status k_finish(pb_sample_sink *self)
{
    pb_spw_sink *k = (pb_spw_sink *)self->ctx;
    size_t i, ol;
    pb_status st = PB_OK;
    pb_outset *set;
    if (k->finished)
        return PB_OK;
    k->finished = 1;
    ol = strlen(pb_outset_target(k->set));
    if (k->nth == 0 && !k_thread_get(k, 0, 0, &st))
        return st;
    k->names = (char **)calloc(k->nth, sizeof *k->names);
    if (!k->names)
        return k_oom(k);
    /* every trace complete first ... */
    for (i = 0; i < k->nth; i++) {
        int held = !pb_spw_suspended(k->th[i].w);
        if (pb_spw_close(k->th[i].w) != PB_OK)
            return k_writer_fail(k, k->th[i].w);
        if (held) { /* closed: its fd is back */
            size_t j;
            for (j = 0; j < k->nopen; j++)
                if (k->openidx[j] == i) {
                    k->openidx[j] = k->openidx[--k->nopen];
                    break;
                }
        }
    }
    /* ... then named: <out> for one thread, <out>.<48 hex id>.00000001 each for several */
    for (i = 0; i < k->nth; i++) {
        char *name = (char *)malloc(ol + 64);
        if (!name)
            return k_oom(k);
        if (k->nth == 1) {
            memcpy(name, pb_outset_target(k->set), ol + 1);
        } else {
            char hex[49];
            id_hex(k->th[i].w->h.id, hex);
            snprintf(name, ol + 64, "%s.%s.%08x", pb_outset_target(k->set), hex, 1u);
        }
        k->names[k->nnames++] = name;
    }
    set = k->set;
    k->set = NULL;
    return pb_outset_commit(set, (const char *const *)k->names, k->nnames, k->err);
}

/* the op name of the next sample, from a decoder's tags (samples.h: a
 * StatProfiler trace's op names, a CPython sampler's opcodes); StatProfiler
 * records have no place for thread status */
static pb_status k_sample_tags(pb_sample_sink *self, pb_str op, pb_str status)
{
    pb_spw_sink *k = (pb_spw_sink *)self->ctx;
    (void)status;
    if (pb_grow((void **)&k->op, &k->opcap, op.len + 1, 1) < 0)
        return pb_fail_nooff(k->err, PB_ERR_LIMIT, "out of memory");
    if (op.len)
        memcpy(k->op, op.ptr, op.len);
    k->oplen = op.len;
    return PB_OK;
}

static const pb_sample_sink sink_calls = {.attribute = k_attribute, .frame = k_frame_cb,
    .thread = k_thread_cb, .sample = k_sample, .note = k_note, .finish = k_finish, .sample_tags = k_sample_tags,
    .keeps_cut_stacks = 1 /* StatProfiler records hold a cut stack as it is */};

pb_spw_sink *pb_spw_sink_new(const char *out_path, pb_error *err)
{
    pb_spw_sink *k;
    struct rlimit rl;
    pb_error_init(err, "statprofiler-writer", out_path);
    /* without snappy the first trace fails (open_member): the driver's
     * refusals of an input (empty, a call graph) come first, as for every
     * target */
    k = (pb_spw_sink *)calloc(1, sizeof *k);
    if (!k) {
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return NULL;
    }
    k->err = err ? err : &k->own_err;
    /* the fd pool: 64, or a quarter of a low RLIMIT_NOFILE (at least 1) */
    k->maxopen = 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < k->maxopen)
        k->maxopen = rl.rlim_cur >= 8 ? (size_t)(rl.rlim_cur / 4) : 1;
    k->mypid = getpid();
    k->out = strdup(out_path);
    k->openidx = (size_t *)malloc(k->maxopen * sizeof *k->openidx);
    k->spares.cap = k->maxopen;
    k->spares.buf = (unsigned char **)malloc(k->maxopen * sizeof *k->spares.buf);
    k->spares.zbuf = (char **)malloc(k->maxopen * sizeof *k->spares.zbuf);
    if (!k->out || !k->openidx || !k->spares.buf || !k->spares.zbuf) {
        PB_FREE_ALL(k->spares.buf, k->spares.zbuf, k->out, k->openidx);
        free(k);
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return NULL;
    }
    if (!(k->set = pb_outset_open(out_path, k->err))) {
        PB_FREE_ALL(k->spares.buf, k->spares.zbuf, k->out, k->openidx);
        free(k);
        return NULL;
    }
    pb_spw_header_init(&k->h);
    pb_sample_sink_init(&k->ss, &sink_calls, k, k->err, NULL);
    return k;
}

pb_sample_sink *pb_spw_sink_base(pb_spw_sink *k) { return &k->ss; }

size_t pb_spw_sink_files(const pb_spw_sink *k, const char *const **names)
{
    *names = (const char *const *)k->names;
    return k->nnames;
}

void pb_spw_sink_free(pb_spw_sink *k)
{
    size_t i;
    if (!k)
        return;
    for (i = 0; i < k->nth; i++)
        pb_spw_free(k->th[i].w);
    for (i = 0; i < k->spares.n; i++) {
        free(k->spares.buf[i]);
        free(k->spares.zbuf[i]);
    }
    free(k->spares.buf);
    free(k->spares.zbuf);
    pb_outset_abort(k->set); /* not committed: a failed conversion leaves nothing behind */
    for (i = 0; i < k->nhm; i++) {
        free(k->hm[i].k);
        free(k->hm[i].v);
    }
    for (i = 0; i < k->nnames; i++)
        free(k->names[i]);
    PB_FREE_ALL(k->names, k->hm, k->th, k->openidx, k->fr, k->op, k->out);
    pb_strtab_free(&k->strs);
    pb_index_free(&k->tab);
    free(k);
}
