/* write_nytprof.c - chunk stream -> NYTProf v5 file (see write_nytprof.h and
 * the NYTProf file format spec).
 *
 * Chunks are encoded into a fixed staging buffer; when it fills it goes to the
 * output, through deflate once the zlib part has started.  Memory is the
 * staging and zlib buffers plus one bit per defined fid.
 *
 * Deflate runs on a thread of its own once a file writer has filled its first
 * staging buffer after the zlib part started (the pipe below): the producer
 * (the thread that feeds chunks) fills one of PIPE_BUFS buffers while the
 * deflate thread compresses and writes the others.  deflate() with Z_NO_FLUSH
 * gives the same bytes however its input is split, so the file is byte for
 * byte what one thread writes.  Small outputs, memory writers and level 0 stay
 * on one thread.  The deflate thread's failure (zlib, a short write, ENOSPC)
 * is reported by the producer at its next buffer hand-off or at close, with
 * the message one thread gives.  The thread is joined by close and by abort;
 * in a forked child (where it does not exist) the writer neither waits on it
 * nor writes (see pipe_*).
 */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
#include "options.h"
#include "util.h"
#include "write_nytprof.h"
#include "present.h"

#define STAGE_CAP  (64 * 1024)
#define ZOUT_CAP   (64 * 1024)
#define PIPE_BUFS  4         /* staging buffers once deflate has a thread: one filling, the rest queued */
#define REC_ROOM   64        /* fixed part of the largest record (SUB_CALLERS: 1+5*5+24+2*6) */
#define FID_SLACK  65536u    /* how far a NEW_FID may run ahead of the fids defined so far */

static const char COMPRESSED_PREFIX[] = "Compressed at level ";

/* Where bytes go after staging: zlib and the output.  While the deflate
 * thread runs, only it touches this (the producer reads it after the join). */
typedef struct {
    pb_output *out;         /* a file through output.c (opened by process pid), or */
    pid_t pid;
    pb_membuf *mem;         /* a caller's memory buffer */
    const char *path;
    z_stream z;
    unsigned char *zout;
    uint64_t bytes_out;     /* bytes written to the output */
    pb_error err;           /* the failure of a write or of zlib */
    int failed;
} w_dest;

/* The deflate thread and its queue of staging buffers.  The producer fills
 * buf[(head + count) % PIPE_BUFS]; the thread compresses buf[head] (still
 * counted in count until done). */
typedef struct {
    pthread_t tid;
    pid_t pid;              /* the process the thread runs in */
    int running;            /* not yet joined */
    pthread_mutex_t mu;
    pthread_cond_t work;    /* producer -> thread: a buffer was queued, or stop */
    pthread_cond_t space;   /* thread -> producer: a buffer was done */
    unsigned char *buf[PIPE_BUFS];
    size_t len[PIPE_BUFS];
    unsigned head, count;
    int stop;               /* 1: leave once the queue is empty; 2: leave now */
    int failed;             /* dest.failed and */
    uint64_t bytes_out;     /* dest.bytes_out, as the thread last published them (under mu) */
} w_pipe;

struct pb_nytprof_writer {
    pb_sink sink;
    pb_error err;           /* the first failure, handed out by close() */
    int failed;

    int level;
    int level_auto;         /* level is the default's: a foreign stream gets FOREIGN_LEVEL */
    int do_fsync;
    uint32_t max_line;
    void (*warn)(void *ud, const char *msg);
    void *warn_ud;

    char *path;
    w_dest dest;
    w_pipe *pipe;           /* NULL until deflate gets its thread */

    unsigned char *stage;   /* plain NYTProf bytes waiting to be written */
    size_t slen;
    int deflating;          /* the zlib part has started (dest.z is live) */

    uint64_t bytes_in;      /* plain stream bytes produced */

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

/* Record a failure in x (the writer or its dest: both have err and failed);
 * evaluates to -1.  The first failure wins. */
#define w_fail(x, st, ...) ((x)->failed = 1, (void)pb_fail_nooff(&(x)->err, (st), __VA_ARGS__), -1)

/* "chunk 12 (TIME_LINE)" */
#define CHUNK_FMT "chunk %llu (%s)"
#define CHUNK_ARGS(w, tag) (unsigned long long)(w)->chunk_no, pb_tag_name[tag]

/* The dest failed: its error becomes the writer's. */
static int dest_failed(pb_nytprof_writer *w)
{
    if (!w->failed)
        w->err = w->dest.err;
    w->failed = 1;
    return -1;
}

#define NOT_OURS_FMT "the output belongs to process %ld, not to this one"

/* ---- raw output -------------------------------------------------------- */

static int out_raw(w_dest *d, const unsigned char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (d->mem) {
        pb_membuf *m = d->mem;
        if (n > (size_t)-1 / 2 - m->len)
            return w_fail(d, PB_ERR_LIMIT, "output buffer would exceed the address space");
        if (pb_grow((void **)&m->data, &m->cap, m->len + n, 1) < 0)
            return w_fail(d, PB_ERR_LIMIT, "out of memory growing the output buffer to %zu bytes", m->len + n);
        memcpy(m->data + m->len, p, n);
        m->len += n;
    } else {
        pb_error e;
        /* a forked child writing to the fd it shares with its parent would
         * corrupt the parent's file */
        if (d->pid != getpid())
            return w_fail(d, PB_ERR_IO, NOT_OURS_FMT, (long)d->pid);
        pb_error_init(&e, "nytprof-writer", d->path);
        if (pb_output_write(d->out, p, n, &e) != PB_OK)
            return w_fail(d, PB_ERR_IO, "%s", e.message);
    }
    d->bytes_out += n;
    return 0;
}

/* Push n plain bytes through deflate with the given flush mode. */
static int deflate_bytes(w_dest *d, const unsigned char *p, size_t n, int flush)
{
    d->z.next_in = (Bytef *)(uintptr_t)p;
    d->z.avail_in = (uInt)n;
    for (;;) {
        int rc;
        d->z.next_out = d->zout;
        d->z.avail_out = ZOUT_CAP;
        rc = deflate(&d->z, flush);
        if (rc == Z_STREAM_ERROR)
            return w_fail(d, PB_ERR_LIMIT, "zlib deflate failed (%s)", d->z.msg ? d->z.msg : "stream error");
        if (out_raw(d, d->zout, ZOUT_CAP - d->z.avail_out) < 0)
            return -1;
        if (flush == Z_FINISH) {
            if (rc == Z_STREAM_END)
                break;
        } else if (d->z.avail_out != 0) {
            break;
        }
    }
    return 0;
}

/* Staged bytes to the dest on this thread. */
static int dest_put(w_dest *d, int deflating, const unsigned char *p, size_t n)
{
    return deflating ? deflate_bytes(d, p, n, Z_NO_FLUSH) : out_raw(d, p, n);
}

/* ---- the deflate thread ------------------------------------------------ */

static void *pipe_main(void *arg)
{
    pb_nytprof_writer *w = (pb_nytprof_writer *)arg;
    w_pipe *p = w->pipe;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        unsigned i;
        while (p->count == 0 && !p->stop)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->count == 0 || p->stop == 2)
            break;
        i = p->head;
        pthread_mutex_unlock(&p->mu);
        if (!w->dest.failed)
            (void)deflate_bytes(&w->dest, p->buf[i], p->len[i], Z_NO_FLUSH);
        pthread_mutex_lock(&p->mu);
        p->head = (i + 1) % PIPE_BUFS;
        p->count--;
        p->failed = w->dest.failed;
        p->bytes_out = w->dest.bytes_out;
        pthread_cond_signal(&p->space);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pipe_free(w_pipe *p)
{
    size_t i;
    for (i = 0; i < PIPE_BUFS; i++)
        free(p->buf[i]);
    free(p);
}

/* Give deflate a thread; the current stage becomes the pipe's first buffer.
 * Returns 0 when it runs; -1 (nothing changed: stay on one thread) when a
 * buffer or the thread can't be had. */
static int pipe_start(pb_nytprof_writer *w)
{
    w_pipe *p = (w_pipe *)calloc(1, sizeof *p);
    sigset_t all, old;
    size_t i;
    int rc;
    if (!p || w->dest.pid != getpid()) { /* (a forked child: out_raw refuses) */
        free(p);
        return -1;
    }
    for (i = 1; i < PIPE_BUFS; i++)
        if (!(p->buf[i] = (unsigned char *)malloc(STAGE_CAP))) {
            pipe_free(p);
            return -1;
        }
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        pipe_free(p);
        return -1;
    }
    if (pthread_cond_init(&p->work, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        pipe_free(p);
        return -1;
    }
    if (pthread_cond_init(&p->space, NULL) != 0) {
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        pipe_free(p);
        return -1;
    }
    p->buf[0] = w->stage;
    p->pid = getpid();
    w->pipe = p;
    /* signals stay with the program's threads (Perl's handlers, output.c's
     * temp-file cleanup): the deflate thread blocks them all */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&p->tid, NULL, pipe_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        w->pipe = NULL;
        p->buf[0] = NULL;
        pthread_cond_destroy(&p->space);
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        pipe_free(p);
        return -1;
    }
    p->running = 1;
    return 0;
}

/* Queue the stage (slen bytes) for the thread and take the next buffer,
 * waiting while all are queued. */
static int pipe_send(pb_nytprof_writer *w)
{
    w_pipe *p = w->pipe;
    unsigned i;
    int failed;
    if (p->pid != getpid())
        return w_fail(w, PB_ERR_IO, NOT_OURS_FMT, (long)p->pid);
    pthread_mutex_lock(&p->mu);
    i = (p->head + p->count) % PIPE_BUFS;
    p->len[i] = w->slen;
    p->count++;
    pthread_cond_signal(&p->work);
    while (p->count == PIPE_BUFS)
        pthread_cond_wait(&p->space, &p->mu);
    failed = p->failed;
    pthread_mutex_unlock(&p->mu);
    w->stage = p->buf[(i + 1) % PIPE_BUFS];
    w->slen = 0;
    return failed ? dest_failed(w) : 0;
}

/* Stop the thread and join it: after the queued buffers (drain), or at once.
 * The writer then goes on on one thread (in the current stage).  In a forked
 * child the thread does not exist: nothing to wait for, and nothing of the
 * parent's (queue, mutex) is touched. */
static int pipe_end(pb_nytprof_writer *w, int drain)
{
    w_pipe *p = w->pipe;
    if (!p || !p->running)
        return 0;
    if (p->pid != getpid())
        return w_fail(w, PB_ERR_IO, NOT_OURS_FMT, (long)p->pid);
    pthread_mutex_lock(&p->mu);
    p->stop = drain ? 1 : 2;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->tid, NULL);
    p->running = 0;
    pthread_cond_destroy(&p->space);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    return w->dest.failed ? dest_failed(w) : 0;
}

/* Move the staging buffer to the output on this thread. */
static int flush_here(pb_nytprof_writer *w)
{
    int r;
    if (w->slen == 0)
        return 0;
    r = dest_put(&w->dest, w->deflating, w->stage, w->slen);
    w->slen = 0;
    return r < 0 ? dest_failed(w) : 0;
}

/* Move a full staging buffer to the output: to the deflate thread once it
 * runs (started by the first full buffer of a file writer's zlib part). */
static int flush_stage(pb_nytprof_writer *w)
{
    if (w->slen && ((w->pipe && w->pipe->running) ||
                    (!w->pipe && w->deflating && w->dest.out && pipe_start(w) == 0)))
        return pipe_send(w);
    return flush_here(w);
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
static inline void nytprof_out_put_tag(pb_nytprof_writer *w, unsigned char tag)
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

/* a record's run of k u32 fields, v[0..k-1] */
static inline void put_u32s(pb_nytprof_writer *w, const uint32_t *v, unsigned k)
{
    unsigned i;
    for (i = 0; i < k; i++)
        put_u32(w, v[i]);
}

/* ... and of k NVs */
static inline void put_nvs(pb_nytprof_writer *w, const double *v, unsigned k)
{
    unsigned i;
    for (i = 0; i < k; i++)
        put_nv(w, v[i]);
}

/* prefix + length now (needs 6 bytes of room), then the bytes */
static int put_str(pb_nytprof_writer *w, const pb_str *s, const char *what, pb_tag tag)
{
    if ((uint64_t)s->len > UINT32_MAX)
        return w_fail(w, PB_ERR_LIMIT, CHUNK_FMT ": %s is %zu bytes; the format holds at most 4 GiB - 1",
                      CHUNK_ARGS(w, tag), what, s->len);
    nytprof_out_put_tag(w, s->utf8 ? NYTP_STRING_UTF8 : NYTP_STRING);
    put_u32(w, (uint32_t)s->len);
    return put_bytes(w, s->ptr, s->len);
}

/* a record's start: its tag, its first k u32 fields and a string (the fixed
 * part needs room as above) */
static int put_head_str(pb_nytprof_writer *w, unsigned char t, const pb_chunk *c, unsigned k, const pb_str *s,
                        const char *what)
{
    nytprof_out_put_tag(w, t);
    put_u32s(w, c->u, k);
    return put_str(w, s, what, c->tag);
}

/* ---- compression ------------------------------------------------------- */

static int start_deflate(pb_nytprof_writer *w)
{
    int rc;
    if (room(w, 1) < 0)
        return -1;
    nytprof_out_put_tag(w, 'z');
    if (flush_here(w) < 0)
        return -1;
    memset(&w->dest.z, 0, sizeof w->dest.z);
    rc = deflateInit2(&w->dest.z, w->level, Z_DEFLATED, 15, 9, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK)
        return w_fail(w, PB_ERR_LIMIT, "zlib deflateInit2 failed (%d)", rc);
    if (!w->dest.zout) {
        w->dest.zout = (unsigned char *)malloc(ZOUT_CAP);
        if (!w->dest.zout) {
            deflateEnd(&w->dest.z);
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
    nytprof_out_put_tag(w, '#');
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

static int nytprof_out_key_is(const pb_str *k, const char *name)
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
        if (nytprof_out_key_is(k, "ticks_per_sec")) {
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
        } else if (nytprof_out_key_is(k, "source_format")) {
            /* a foreign stream, seen before the binary part starts */
            if (w->level_auto && !w->binary_started && !w->deflating)
                w->level = PB_NYTPROF_WRITER_FOREIGN_LEVEL;
        } else if (nytprof_out_key_is(k, "nv_size") && !(v->len == 1 && v->ptr[0] == '8')) {
            return w_fail(w, PB_ERR_UNSUPPORTED,
                          CHUNK_FMT ": nv_size is \"%.*s\"; this writer stores NVs as 8-byte doubles",
                          CHUNK_ARGS(w, c->tag), (int)(v->len > 20 ? 20 : v->len), v->ptr);
        }
    }
    if (room(w, 1) < 0)
        return -1;
    nytprof_out_put_tag(w, tag);
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

/* TIME_LINE's and TIME_BLOCK's record: tag, ticks, k u32 fields (on a
 * defined fid, with room) */
static inline void put_timed(pb_nytprof_writer *w, unsigned char t, const pb_chunk *c, unsigned k)
{
    w->have_time = 1;
    nytprof_out_put_tag(w, t);
    put_u32(w, (uint32_t)c->ticks);
    put_u32s(w, c->u, k);
}

/* a held-back "Compressed at level" COMMENT goes out before this chunk: as
 * it is, or naming our level, when a START_DEFLATE follows it (dropped with
 * it at level 0), else as it is */
static int w_pending(pb_nytprof_writer *w, pb_tag tag)
{
    if (tag != PB_T_START_DEFLATE)
        return write_pending(w);
    w->has_pending = 0;
    if (w->level > 0 && !w->deflating) {
        long lv = -1;
        pb_str t = pb_str_make(w->pending, w->pending_len, 0);
        is_compressed_comment(&t, &lv);
        return lv == w->level ? put_comment_text(w, w->pending, w->pending_len) : put_compressed_comment(w);
    }
    /* level 0 (or already deflating): the comment goes with the START_DEFLATE */
    return 0;
}

/* line numbers that would make nytprofhtml size arrays past reason; the
 * records on a file need its fid defined (SUB_CALLERS fid 0 is NYTProf's
 * "xsub" marker) */
static int check_line_fid(pb_nytprof_writer *w, const pb_chunk *c)
{
    pb_tag tag = c->tag;
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
    if ((tag == PB_T_TIME_LINE || tag == PB_T_TIME_BLOCK || tag == PB_T_SUB_INFO ||
         (tag == PB_T_SUB_CALLERS && c->u[0] != 0)) && !fid_defined(w, c->u[0]))
        return undefined_fid(w, c, c->u[0]);
    return 0;
}

static int w_version(pb_nytprof_writer *w, const pb_chunk *c)
{
    char line[64];
    int n;
    if (w->seen_version)
        return w_fail(w, PB_ERR_CORRUPT, CHUNK_FMT ": a second VERSION chunk", CHUNK_ARGS(w, c->tag));
    if (c->u[0] != 5)
        return w_fail(w, PB_ERR_UNSUPPORTED, CHUNK_FMT ": NYTProf format %lu.%lu; this writer writes major version 5",
                      CHUNK_ARGS(w, c->tag), (unsigned long)c->u[0], (unsigned long)c->u[1]);
    w->seen_version = 1;
    n = snprintf(line, sizeof line, "NYTProf %lu %lu\n", (unsigned long)c->u[0], (unsigned long)c->u[1]);
    return put_bytes(w, line, (size_t)n);
}

/* the records with strings (REC_ROOM bytes of room made) */
static int w_string_record(pb_nytprof_writer *w, const pb_chunk *c)
{
    switch (c->tag) {
    case PB_T_NEW_FID:
        return define_fid(w, c->u[0], c) < 0 ? -1 : put_head_str(w, '@', c, 6, &c->s[0], "file name");
    case PB_T_SRC_LINE:
        return put_head_str(w, 'S', c, 2, &c->s[0], "source text");
    case PB_T_SUB_INFO:
        if (put_head_str(w, 's', c, 1, &c->s[0], "sub name") < 0 || room(w, 10) < 0)
            return -1;
        put_u32s(w, c->u + 1, 2);
        return 0;
    case PB_T_SUB_CALLERS:
        if (c->u[2])
            w->have_calls = 1;
        if (put_head_str(w, 'c', c, 2, &c->s[1], "caller name") < 0 || room(w, REC_ROOM) < 0)
            return -1;
        put_u32(w, c->u[2]);
        put_nvs(w, c->n, 3);
        put_u32(w, c->u[3]);
        return put_str(w, &c->s[0], "called sub name", c->tag);
    case PB_T_SUB_RETURN:
        nytprof_out_put_tag(w, '<');
        put_u32(w, c->u[0]);
        put_nvs(w, c->n, 2);
        return put_str(w, &c->s[0], "sub name", c->tag);
    default:
        return 0;
    }
}

/* one chunk, checked, with REC_ROOM bytes of room made */
static int w_record(pb_nytprof_writer *w, const pb_chunk *c)
{
    switch (c->tag) {
    case PB_T_VERSION:
        return w_version(w, c);
    case PB_T_COMMENT:
        return w_comment(w, c);
    case PB_T_ATTRIBUTE:
        return w_attribute(w, c, ':');
    case PB_T_OPTION:
        return w_attribute(w, c, '!');
    case PB_T_START_DEFLATE:
        /* level 0 drops it; a second one (or one after we started on our own) too */
        return w->level > 0 && !w->deflating ? start_deflate(w) : 0;
    case PB_T_PID_START:
        if (!w->have_pid_start || c->n[0] < w->first_start)
            w->first_start = c->n[0];
        w->have_pid_start = 1;
        nytprof_out_put_tag(w, 'P');
        put_u32s(w, c->u, 2);
        put_nv(w, c->n[0]);
        return 0;
    case PB_T_PID_END:
        if (!w->have_pid_end || c->n[0] > w->last_end)
            w->last_end = c->n[0];
        w->have_pid_end = 1;
        nytprof_out_put_tag(w, 'p');
        put_u32(w, c->u[0]);
        put_nv(w, c->n[0]);
        return 0;
    case PB_T_TIME_LINE:
        put_timed(w, '+', c, 2);
        return 0;
    case PB_T_TIME_BLOCK:
        put_timed(w, '*', c, 4);
        return 0;
    case PB_T_DISCOUNT:
        nytprof_out_put_tag(w, '-');
        return 0;
    case PB_T_SUB_ENTRY:
        nytprof_out_put_tag(w, '>');
        put_u32s(w, c->u, 2);
        return 0;
    default:
        return w_string_record(w, c);
    }
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
        put_timed(w, '+', c, 2);
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
    if (w->has_pending && w_pending(w, tag) < 0)
        return -1;
    if (!w->binary_started && tag > PB_T_START_DEFLATE && begin_binary(w, c) < 0)
        return 1;
    if (room(w, REC_ROOM) < 0 || check_line_fid(w, c) < 0 || w_record(w, c) < 0)
        return 1;
    w->chunk_no++;
    return w->failed;
}

/* ---- open / close ------------------------------------------------------ */

void pb_nytprof_writer_opts_init(pb_nytprof_writer_opts *o)
{
    memset(o, 0, sizeof *o);
    o->compress_level = PB_NYTPROF_WRITER_AUTO_LEVEL;
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
    if ((o->compress_level < 0 && o->compress_level != PB_NYTPROF_WRITER_AUTO_LEVEL) || o->compress_level > 9) {
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
    w->dest.err = w->err;
    w->level_auto = o->compress_level == PB_NYTPROF_WRITER_AUTO_LEVEL;
    w->level = w->level_auto ? PB_NYTPROF_WRITER_DEFAULT_LEVEL : o->compress_level;
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
    (void)pipe_end(w, 0);
    if (w->deflating)
        deflateEnd(&w->dest.z);
    if (w->pipe)
        pipe_free(w->pipe); /* its buffers include the stage */
    else
        free(w->stage);
    PB_FREE_ALL(w->dest.zout, w->fid_bits, w->pending, w->path, w);
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
    w->dest.path = w->path = strdup(path);
    if (!w->path) {
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        free_writer(w);
        return NULL;
    }
    w->dest.pid = getpid();
    w->dest.out = pb_output_open(path, PB_OUT_STDOUT, err);
    if (!w->dest.out) {
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
    w->dest.mem = out;
    return w;
}

pb_sink *pb_nytprof_writer_sink(pb_nytprof_writer *w) { return &w->sink; }
int pb_nytprof_writer_failed(const pb_nytprof_writer *w) { return w->failed; }
int pb_nytprof_writer_owned(const pb_nytprof_writer *w) { return !w->dest.out || pb_output_owned(w->dest.out); }
uint64_t pb_nytprof_writer_bytes_in(const pb_nytprof_writer *w) { return w->bytes_in; }

uint64_t pb_nytprof_writer_bytes_out(const pb_nytprof_writer *w)
{
    w_pipe *p = w->pipe;
    uint64_t n;
    if (!p || !p->running || p->pid != getpid())
        return w->dest.bytes_out;
    pthread_mutex_lock(&p->mu); /* the deflate thread counts them */
    n = p->bytes_out;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void pb_nytprof_writer_abort(pb_nytprof_writer *w)
{
    if (!w)
        return;
    (void)pipe_end(w, 0); /* the thread stops writing before the file goes */
    if (w->dest.out) {
        pb_output_abort(w->dest.out); /* removes the temp file; in a forked child, touches nothing */
        w->dest.out = NULL;
    }
    if (w->dest.mem) {
        free(w->dest.mem->data);
        memset(w->dest.mem, 0, sizeof *w->dest.mem);
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
static int nytprof_out_finish(pb_nytprof_writer *w)
{
    if (w->has_pending && write_pending(w) < 0)
        return -1;
    /* the rest is on this thread; the deflate thread's failure comes first,
     * as it would have on one thread */
    if (pipe_end(w, 1) < 0)
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
    if (flush_here(w) < 0)
        return -1;
    if (w->deflating) {
        if (deflate_bytes(&w->dest, NULL, 0, Z_FINISH) < 0)
            return dest_failed(w);
        deflateEnd(&w->dest.z);
        w->deflating = 0;
    }
    return 0;
}

pb_status pb_nytprof_writer_close(pb_nytprof_writer *w, pb_error *err)
{
    if (!w)
        return err ? pb_fail_nooff(err, PB_ERR_IO, "no writer") : PB_ERR_IO;
    if (w->failed || nytprof_out_finish(w) < 0)
        return fail_close(w, err);
    if (w->dest.out) {
        pb_error e;
        pb_output *out = w->dest.out;
        w->dest.out = NULL;
        pb_error_init(&e, "nytprof-writer", w->path);
        if (pb_output_commit(out, w->do_fsync, &e) != PB_OK) {
            (void)w_fail(w, PB_ERR_IO, "%s", e.message);
            return fail_close(w, err);
        }
    }
    if (err)
        pb_error_init(err, "nytprof-writer", w->path ? w->path : "(memory)");
    w->dest.mem = NULL; /* the buffer now belongs to the caller alone */
    free_writer(w);
    return PB_OK;
}

/* ---- the nytprof target: the writer behind the presentation filter ------- */
pb_status pb_nytprof_target_open(pb_nytprof_target *t, const char *out, int compress_level, const pb_options *opt,
                                 const char *input, int bare_is_dot, void (*warn)(void *ud, const char *msg),
                                 void *ud, pb_error *err)
{
    pb_nytprof_writer_opts wo;
    const char *slash = strrchr(input, '/');
    memset(t, 0, sizeof *t);
    pb_nytprof_writer_opts_init(&wo);
    if (compress_level >= 0)
        wo.compress_level = compress_level;
    if (opt)
        wo.max_line = opt->max_line;
    wo.warn = warn;
    wo.warn_ud = ud;
    if (!(t->w = pb_nytprof_writer_open(out, &wo, err)))
        return err->status;
    if (opt)
        t->opt = *opt;
    else
        pb_options_init(&t->opt);
    /* the input's directory: where the source of relative names is looked
     * for last (present.h) */
    if (!t->opt.source_base && (slash || bare_is_dot)) {
        size_t bl = slash ? (size_t)(slash - input) : 1;
        if (!(t->base = (char *)malloc(bl + 2))) {
            pb_nytprof_writer_abort(t->w);
            return pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        }
        memcpy(t->base, slash ? (bl ? input : "/") : ".", bl ? bl : 1);
        t->base[bl ? bl : 1] = '\0';
        t->opt.source_base = t->base;
    }
    if (!(t->pr = pb_present_new(pb_nytprof_writer_sink(t->w), &t->opt, err))) {
        free(t->base);
        pb_nytprof_writer_abort(t->w);
        return err->status;
    }
    return PB_OK;
}

pb_status pb_nytprof_target_close(pb_nytprof_target *t, pb_status st, pb_error *err)
{
    if (st == PB_OK)
        st = pb_present_finish(t->pr);
    pb_present_free(t->pr);
    free(t->base);
    if (st != PB_OK) {
        if (st == PB_ERR_ABORT && pb_nytprof_writer_failed(t->w))
            return pb_nytprof_writer_close(t->w, err); /* hands out the writer's reason, removes the temp */
        pb_nytprof_writer_abort(t->w);
        return st;
    }
    return pb_nytprof_writer_close(t->w, err);
}
