/* source.c - bounded-memory byte source with zlib / zstd views. */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "codecs.h"
#include "pb_limits.h"
#include "source.h"

#define PLAIN_BUF  (64 * 1024)
#define VIEW_BUF   (256 * 1024)
#define RAW_BUF    (64 * 1024)

/* a source before it is opened: no limit on the raw bytes, size unknown,
 * the default window and decompression limits, everything else zero */
static const pb_source fresh_source = {
    .raw_limit = UINT64_MAX,
    .raw_size = UINT64_MAX,
    .max_window = PB_DEFAULT_MAX_RECORD,
    .max_inflated = PB_DEFAULT_MAX_DECOMPRESSED,
};

static void reset(pb_source *s, pb_error *err)
{
    *s = fresh_source;
    s->err = err;
    s->format = err && err->format ? err->format : "profbridge";
}

static int is_stdin(const char *path) { return path[0] == '-' && !path[1]; }

/* the spooled copy of an input read once, kept for one more open (pb_src_keep) */
static struct {
    int fd;
    char path[PB_ERR_FILE_MAX];
} kept = { -1, "" };

void pb_src_forget_kept(void)
{
    if (kept.fd >= 0)
        close(kept.fd);
    kept.fd = -1;
}

void pb_src_keep(const pb_source *s)
{
    if (!s->in_once || s->in_stream || !s->fp || !s->in_path || strlen(s->in_path) >= sizeof kept.path)
        return;
    pb_src_forget_kept();
    kept.fd = dup(fileno(s->fp));
    snprintf(kept.path, sizeof kept.path, "%s", s->in_path);
}

/* the kept copy of path, if any: opened (once) as a plain file */
static int open_kept(pb_source *s, const char *path)
{
    int fd;
    if (kept.fd < 0 || strcmp(kept.path, path) != 0)
        return 0;
    fd = kept.fd;
    kept.fd = -1;
    if (lseek(fd, 0, SEEK_SET) != 0 || !(s->fp = fdopen(fd, "rb"))) {
        close(fd);
        return 0;
    }
    s->own_fp = 1;
    return 1;
}

pb_status pb_src_open_file(pb_source *s, const char *path, pb_error *err)
{
    struct stat st;
    int from_kept;
    reset(s, err);
    s->in_path = path;
    if ((from_kept = open_kept(s, path))) {
        if (is_stdin(path) && err)
            snprintf(err->file, sizeof err->file, "stdin");
    } else if (is_stdin(path)) {
        s->fp = stdin;
        clearerr(stdin); /* an earlier end of input (fd 0 may have been reopened since) */
        /* the decoders' name for it (an application named after it); errors say "standard input" */
        if (err)
            snprintf(err->file, sizeof err->file, "stdin");
    } else if (!(s->fp = fopen(path, "rb"))) {
        return pb_fail_nooff(err, PB_ERR_IO, "cannot open: %s", strerror(errno));
    } else {
        s->own_fp = 1;
    }
    s->in_stream = s->in_once = 1;
    if (fstat(fileno(s->fp), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            if (s->own_fp)
                fclose(s->fp);
            s->fp = NULL;
            return pb_fail_nooff(err, PB_ERR_IO, "cannot read: is a directory");
        }
        if (S_ISREG(st.st_mode) && (!is_stdin(path) || from_kept)) {
            s->raw_size = (uint64_t)st.st_size;
            s->in_stream = 0;
            s->in_once = from_kept; /* (the copy of an input read once) */
        }
    }
    s->cap = PLAIN_BUF;
    s->buf = (unsigned char *)malloc(s->cap);
    if (!s->buf) {
        if (s->own_fp)
            fclose(s->fp);
        s->fp = NULL;
        return pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
    }
    s->base = s->p = s->end = s->buf;
    return PB_OK;
}

void pb_src_open_mem(pb_source *s, const void *data, size_t len, pb_error *err)
{
    reset(s, err);
    s->mem = (const unsigned char *)data;
    s->mem_len = len;
    s->raw_size = len;
    s->base = s->p = s->mem;
    s->end = s->mem + len;
    s->raw_pos = len;
}

void pb_src_open_view(pb_source *s, int (*fill)(pb_source *s, size_t n), void *ctx, uint64_t offset,
                      pb_error *err)
{
    reset(s, err);
    s->fill = fill;
    s->fill_ctx = ctx;
    s->buf_off = offset;
}

static void end_view(pb_source *s)
{
    if (s->zstate) {
        if (s->view == PB_VIEW_ZLIB) {
            inflateEnd((z_stream *)s->zstate);
            free(s->zstate);
        } else if (s->view == PB_VIEW_ZSTD) {
            ZSTD_freeDStream((ZSTD_DStream *)s->zstate);
        }
        s->zstate = NULL;
    }
}

static void gz_end(pb_source *s);

void pb_src_close(pb_source *s)
{
    end_view(s);
    gz_end(s);
    if (s->fp && s->own_fp)
        fclose(s->fp);
    s->fp = NULL;
    free(s->buf);
    s->buf = NULL;
    free(s->rawbuf);
    s->rawbuf = NULL;
    s->p = s->end = s->base = NULL;
}

static size_t gz_read(pb_source *s, unsigned char *dst, size_t max);

/* Read raw input bytes (file or memory) honouring raw_limit. */
static size_t raw_read(pb_source *s, unsigned char *dst, size_t max)
{
    size_t got;
    if (s->raw_limit != UINT64_MAX) {
        if (s->raw_pos >= s->raw_limit)
            return 0;
        if ((uint64_t)max > s->raw_limit - s->raw_pos)
            max = (size_t)(s->raw_limit - s->raw_pos);
    }
    if (max == 0)
        return 0;
    if (s->mem) {
        if (s->raw_pos >= s->mem_len)
            return 0;
        got = s->mem_len - (size_t)s->raw_pos;
        if (got > max)
            got = max;
        memcpy(dst, s->mem + s->raw_pos, got);
    } else {
        if (s->raw_eof)
            return 0;
        got = s->gz ? gz_read(s, dst, max) : fread(dst, 1, max, s->fp);
        if (got == (size_t)-1)
            return got;
        if (got < max) {
            if (ferror(s->fp)) {
                pb_fail(s->err, PB_ERR_IO, s->raw_pos + got, "read error: %s", strerror(errno));
                return (size_t)-1;
            }
            s->raw_eof = 1;
        }
    }
    s->raw_pos += got;
    if (s->progress && s->raw_pos >= s->progress_next) {
        s->progress(s->progress_ud, s->raw_pos, s->raw_size);
        s->progress_next = s->raw_pos + (UINT64_C(1) << 20);
    }
    return got;
}

/* Move unread bytes to the start of buf (allocating buf for memory inputs
 * that switched to a view) and make room for n bytes if n is allowed. */
static int compact_and_grow(pb_source *s, size_t n)
{
    size_t avail = (size_t)(s->end - s->p);
    s->buf_off += (uint64_t)(s->p - s->base);
    if (s->buf && s->p != s->buf && avail)
        memmove(s->buf, s->p, avail);
    s->base = s->p = s->buf;
    s->end = s->buf + avail;
    (void)n;
    return 0;
}

/* Grow the window only when it is full of real bytes: never more than twice
 * what actually arrived. */
static int grow_if_full(pb_source *s, size_t n)
{
    size_t avail = (size_t)(s->end - s->p);
    size_t ncap;
    unsigned char *nb;
    if (avail < s->cap)
        return 0;
    if ((uint64_t)n > s->max_window) {
        pb_fail(s->err, PB_ERR_LIMIT, pb_src_offset(s),
                "record of %llu bytes exceeds max_record_size (%llu)", (unsigned long long)n,
                (unsigned long long)s->max_window);
        return -1;
    }
    ncap = s->cap * 2;
    if (ncap < s->cap || (uint64_t)ncap > s->max_window + 1024)
        ncap = (size_t)s->max_window + 1024;
    /* to exactly ncap (pb_grow would double past the cap): a new window
     * with the live bytes, which compaction put at the start of buf */
    nb = (unsigned char *)malloc(ncap);
    if (!nb) {
        pb_fail(s->err, PB_ERR_LIMIT, pb_src_offset(s), "out of memory growing the read window to %zu bytes", ncap);
        return -1;
    }
    if (avail)
        memcpy(nb, s->p, avail);
    free(s->buf);
    s->buf = nb;
    s->cap = ncap;
    s->base = s->p = nb;
    s->end = nb + avail;
    return 0;
}

static int fill_plain(pb_source *s, size_t n)
{
    if (s->mem) {
        /* the whole (limited) block is already in the window */
        return 0;
    }
    /* a record that cannot fit in what remains of the file is truncated,
     * whatever its size: say so without buffering the rest of the file */
    if (s->raw_size != UINT64_MAX) {
        uint64_t lim = s->raw_limit < s->raw_size ? s->raw_limit : s->raw_size;
        uint64_t left = lim > s->raw_pos ? lim - s->raw_pos : 0;
        if ((uint64_t)(s->end - s->p) + left < (uint64_t)n)
            return 0;
    }
    compact_and_grow(s, n);
    while ((size_t)(s->end - s->p) < n) {
        size_t got;
        if (grow_if_full(s, n) < 0)
            return -1;
        got = raw_read(s, (unsigned char *)s->end, s->cap - (size_t)(s->end - s->buf));
        if (got == (size_t)-1)
            return -1;
        if (got == 0)
            return 0;
        s->end += got;
    }
    return 1;
}

static int refill_raw(pb_source *s)
{
    size_t got;
    if (s->rawoff < s->rawlen)
        return 1;
    s->rawoff = s->rawlen = 0;
    got = raw_read(s, s->rawbuf, s->rawcap);
    if (got == (size_t)-1)
        return -1;
    s->rawlen = got;
    return got > 0;
}

/* raw offset of the next compressed byte to be consumed */
static uint64_t raw_next(const pb_source *s)
{
    return s->raw_pos - (uint64_t)s->rawlen + (uint64_t)s->rawoff;
}

static void note_block(pb_source *s, uint64_t raw)
{
    unsigned last = (s->blk_head + s->nblk - 1) % PB_SRC_BLOCKS;
    if (s->nblk && s->blk[last].out == s->inflated) {
        s->blk[last].raw = raw; /* no output since: the later start wins */
        return;
    }
    if (s->nblk == PB_SRC_BLOCKS) {
        s->blk_head = (s->blk_head + 1) % PB_SRC_BLOCKS;
        s->nblk--;
    }
    last = (s->blk_head + s->nblk) % PB_SRC_BLOCKS;
    s->blk[last].out = s->inflated;
    s->blk[last].raw = raw;
    s->nblk++;
}

uint64_t pb_src_file_offset(const pb_source *s, uint64_t logical)
{
    uint64_t rel, best;
    unsigned i;
    if (!s->blocks_on || logical < s->view_off || !s->nblk)
        return logical;
    rel = logical - s->view_off;
    best = s->blk[s->blk_head].raw;
    for (i = 0; i < s->nblk; i++) {
        unsigned k = (s->blk_head + i) % PB_SRC_BLOCKS;
        if (s->blk[k].out > rel)
            break;
        best = s->blk[k].raw;
    }
    return best;
}

void pb_src_error_to_file(const pb_source *s, pb_error *err)
{
    if (err->status != PB_OK && err->has_offset)
        err->offset = pb_src_file_offset(s, err->offset);
}

/* produced more bytes of a view's output at s->end: count them against
 * max_decompressed_bytes */
static int took_output(pb_source *s, size_t produced)
{
    s->end += produced;
    s->inflated += produced;
    if (s->max_inflated && s->inflated > s->max_inflated) {
        pb_fail(s->err, PB_ERR_LIMIT, pb_src_offset(s), "decompressed data exceeds max_decompressed_bytes (%llu%s%s)",
                (unsigned long long)s->max_inflated, s->max_inflated_why ? ": " : "",
                s->max_inflated_why ? s->max_inflated_why : "");
        return -1;
    }
    return 0;
}

/* One call of a view's decompressor (fill_view's step): compressed bytes
 * from rawbuf[rawoff, rawlen) into the `room` bytes at s->end, through
 * took_output(); sets z_done at the end of the stream; 0, or -1 with the
 * error in s->err. */
static int step_zlib(pb_source *s, size_t room)
{
    z_stream *z = (z_stream *)s->zstate;
    int r;
    z->next_in = s->rawbuf + s->rawoff;
    z->avail_in = (uInt)(s->rawlen - s->rawoff);
    z->next_out = (Bytef *)s->end;
    z->avail_out = (uInt)room;
    r = inflate(z, Z_BLOCK);
    s->rawoff = s->rawlen - z->avail_in;
    if (took_output(s, room - z->avail_out) < 0)
        return -1;
    if (r == Z_OK && (z->data_type & 128)) {
        /* at a deflate block boundary: the next block starts in the last
         * byte taken when bits of it are left over, else at the next */
        uint64_t at = raw_next(s);
        note_block(s, (z->data_type & 7) && at > 0 ? at - 1 : at);
    }
    if (r == Z_STREAM_END && s->gz_members) {
        s->gz_between = 1; /* another member, or the end of the input, follows */
    } else if (r == Z_STREAM_END) {
        s->z_done = 1;
    } else if (r != Z_OK && r != Z_BUF_ERROR) {
        /* (Z_BUF_ERROR: no progress possible with this input: need more raw bytes) */
        pb_fail(s->err, PB_ERR_CORRUPT, pb_src_offset(s) + (uint64_t)(s->end - s->p),
                "zlib inflate failed (%d: %s)", r, z->msg ? z->msg : "corrupt data");
        return -1;
    }
    return 0;
}

static int step_zstd(pb_source *s, size_t room)
{
    ZSTD_DStream *zd = (ZSTD_DStream *)s->zstate;
    ZSTD_inBuffer in;
    ZSTD_outBuffer out;
    size_t r;
    int exact;
    in.src = s->rawbuf;
    in.size = s->rawlen;
    in.pos = s->rawoff;
    /* one block per call (the decompressor's own hint of the input it
     * wants next), so that each block's start in the file is known */
    exact = s->zstd_hint && s->zstd_hint <= in.size - in.pos;
    if (exact)
        in.size = in.pos + s->zstd_hint;
    if (s->zstd_at_block)
        note_block(s, raw_next(s));
    out.dst = (void *)s->end;
    out.size = room;
    out.pos = 0;
    r = ZSTD_decompressStream(zd, &out, &in);
    if (ZSTD_isError(r)) {
        pb_fail(s->err, PB_ERR_CORRUPT, pb_src_offset(s) + (uint64_t)(s->end - s->p),
                "zstd decompression error: %s", ZSTD_getErrorName(r));
        return -1;
    }
    s->zstd_at_block = exact && in.pos == in.size;
    s->zstd_hint = r;
    s->rawoff = in.pos;
    if (took_output(s, out.pos) < 0)
        return -1;
    s->z_done = (r == 0);
    return 0;
}

/* The window of a compressed view holds n bytes: 1; the stream ended first
 * (done_ends: at its end marker, whatever follows; else where the input
 * ends after a complete stream): 0; else -1 with cut (the input ends inside
 * the stream) or the error in s->err. */
static int fill_view(pb_source *s, size_t n, int done_ends, const char *cut, int (*step)(pb_source *, size_t))
{
    compact_and_grow(s, n);
    while ((size_t)(s->end - s->p) < n) {
        int rr;
        if (done_ends && s->z_done)
            return 0;
        if (grow_if_full(s, n) < 0)
            return -1;
        rr = refill_raw(s);
        if (rr < 0)
            return -1;
        if (s->gz_between) {
            /* after a gzip member: the end of the input, or the next member */
            if (rr == 0) {
                s->z_done = 1;
                return 0;
            }
            if (s->rawbuf[s->rawoff] != 0x1f || (s->rawlen - s->rawoff > 1 && s->rawbuf[s->rawoff + 1] != 0x8b)) {
                pb_fail(s->err, PB_ERR_CORRUPT, pb_src_offset(s) + (uint64_t)(s->end - s->p),
                        "bytes after a gzip member (from byte %llu of the file) are not another gzip member",
                        (unsigned long long)raw_next(s));
                return -1;
            }
            if (inflateReset((z_stream *)s->zstate) != Z_OK) {
                pb_fail(s->err, PB_ERR_LIMIT, pb_src_offset(s), "zlib inflateReset failed");
                return -1;
            }
            s->gz_between = 0;
        }
        if (rr == 0) {
            if (s->z_done)
                return 0;
            pb_fail(s->err, PB_ERR_TRUNCATED, pb_src_offset(s) + (uint64_t)(s->end - s->p), "%s", cut);
            return -1;
        }
        if (step(s, s->cap - (size_t)(s->end - s->buf)) < 0)
            return -1;
    }
    return 1;
}

int pb_src_fill(pb_source *s, size_t n)
{
    if (s->err && s->err->status != PB_OK)
        return -1;
    if (s->fill)
        return s->fill(s, n);
    switch (s->view) {
    case PB_VIEW_ZLIB: return fill_view(s, n, 1, "zlib stream ends before its end marker (file truncated?)", step_zlib);
    case PB_VIEW_ZSTD:
        return fill_view(s, n, 0, "zstd frame ends before it is complete: the input stops inside it (file truncated?)",
                         step_zstd);
    default: return fill_plain(s, n);
    }
}

int pb_src_at_eof(pb_source *s)
{
    int r = pb_src_need(s, 1);
    if (r < 0)
        return -1;
    return r == 0;
}

/* Hand over [p, end) as the start of the compressed input and empty the window. */
static pb_status begin_view(pb_source *s, uint64_t raw_end)
{
    size_t left = (size_t)(s->end - s->p);
    uint64_t off0 = pb_src_offset(s);
    s->rawcap = RAW_BUF;
    if (s->mem) {
        /* memory: no staging of leftovers needed, just restart raw reads here */
        s->raw_pos = (uint64_t)(s->p - s->mem);
        left = 0;
    }
    if (left > s->rawcap)
        s->rawcap = left;
    s->rawbuf = (unsigned char *)malloc(s->rawcap);
    if (!s->rawbuf)
        return pb_fail(s->err, PB_ERR_LIMIT, off0, "out of memory");
    if (left)
        memcpy(s->rawbuf, s->p, left);
    s->rawlen = left;
    s->rawoff = 0;
    if (raw_end != UINT64_MAX) {
        /* leftovers already read past raw_end are cut off */
        uint64_t start_raw = s->raw_pos - left;
        if (raw_end < start_raw)
            raw_end = start_raw;
        if (raw_end - start_raw < left)
            s->rawlen = (size_t)(raw_end - start_raw);
        s->raw_limit = raw_end;
    }
    if (!s->buf || s->cap < VIEW_BUF) {
        /* its bytes were handed over above: a fresh window will do */
        unsigned char *nb = (unsigned char *)malloc(VIEW_BUF);
        if (!nb)
            return pb_fail(s->err, PB_ERR_LIMIT, off0, "out of memory");
        free(s->buf);
        s->buf = nb;
        s->cap = VIEW_BUF;
    }
    s->buf_off = off0;
    s->base = s->p = s->end = s->buf;
    s->inflated = 0;
    s->z_done = 0;
    s->gz_members = s->gz_between = 0;
    /* the first block begins where the compressed data does */
    s->blocks_on = 1;
    s->view_off = off0;
    s->nblk = s->blk_head = 0;
    note_block(s, s->raw_pos - (uint64_t)s->rawlen);
    return PB_OK;
}

/* a zlib (wbits 15) or gzip (15 + 16: gzip header and trailer) view */
static pb_status start_inflate(pb_source *s, int wbits)
{
    z_stream *z;
    pb_status st = begin_view(s, UINT64_MAX);
    if (st != PB_OK)
        return st;
    z = (z_stream *)calloc(1, sizeof *z);
    if (!z)
        return pb_fail(s->err, PB_ERR_LIMIT, pb_src_offset(s), "out of memory");
    if (inflateInit2(z, wbits) != Z_OK) {
        free(z);
        return pb_fail(s->err, PB_ERR_LIMIT, pb_src_offset(s), "zlib inflateInit2 failed");
    }
    s->zstate = z;
    s->view = PB_VIEW_ZLIB;
    if (wbits > 15) {
        s->gz_members = 1;
        s->blocks_on = 0; /* offsets in inflated bytes */
    }
    return PB_OK;
}

pb_status pb_src_start_zlib(pb_source *s) { return start_inflate(s, 15); }

pb_status pb_src_start_gzip(pb_source *s) { return start_inflate(s, 15 + 16); }

pb_status pb_src_start_zstd(pb_source *s, uint64_t raw_end)
{
    ZSTD_DStream *zd;
    pb_status st;
    if (!PB_HAVE_ZSTD)
        return pb_fail(s->err, PB_ERR_UNSUPPORTED, pb_src_offset(s), PB_NO_CODEC_MSG("zstd", "libzstd-dev"));
    st = begin_view(s, raw_end);
    if (st != PB_OK)
        return st;
    zd = ZSTD_createDStream();
    if (!zd)
        return pb_fail(s->err, PB_ERR_LIMIT, pb_src_offset(s), "out of memory");
    s->zstd_hint = ZSTD_initDStream(zd);
    s->zstd_at_block = 1;
    s->zstate = zd;
    s->view = PB_VIEW_ZSTD;
    return PB_OK;
}

int pb_src_view_finished(const pb_source *s) { return s->z_done; }

pb_status pb_src_seek(pb_source *s, uint64_t offset)
{
    if (s->view != PB_VIEW_PLAIN)
        return pb_fail(s->err, PB_ERR_CORRUPT, pb_src_offset(s), "seek inside a compressed view");
    if (s->raw_size != UINT64_MAX && offset > s->raw_size)
        return pb_fail(s->err, PB_ERR_TRUNCATED, offset, "offset past the end of the file (size %llu)",
                       (unsigned long long)s->raw_size);
    if (s->mem) {
        s->base = s->mem;
        s->buf_off = 0;
        s->p = s->mem + offset;
        s->end = s->mem + s->mem_len;
        if (s->raw_limit != UINT64_MAX && s->raw_limit < s->mem_len)
            s->end = s->mem + (s->raw_limit > offset ? s->raw_limit : offset);
        return PB_OK;
    }
    if (fseeko(s->fp, (off_t)offset, SEEK_SET) != 0)
        return pb_fail(s->err, PB_ERR_IO, offset, "seek failed: %s", strerror(errno));
    s->raw_pos = offset;
    s->raw_eof = 0;
    s->buf_off = offset;
    s->base = s->p = s->end = s->buf;
    return PB_OK;
}

pb_status pb_src_rewind(pb_source *s)
{
    pb_status st;
    end_view(s);
    s->view = PB_VIEW_PLAIN;
    free(s->rawbuf);
    s->rawbuf = NULL;
    s->rawcap = s->rawlen = s->rawoff = 0;
    s->z_done = 0;
    s->gz_members = s->gz_between = 0;
    s->inflated = 0;
    s->blocks_on = 0;
    s->nblk = s->blk_head = 0;
    s->raw_limit = UINT64_MAX;
    if (s->mem)
        s->raw_pos = s->mem_len;
    if (s->fill)
        return pb_fail(s->err, PB_ERR_USAGE, pb_src_offset(s), "a decoder's own view cannot be read twice");
    st = pb_src_seek(s, 0);
    if (st == PB_ERR_IO && s->err)
        snprintf(s->err->message, sizeof s->err->message,
                 "cannot go back to the start of the input (%s): this format is read twice, so it needs a file, "
                 "not a pipe", strerror(errno));
    return st;
}

void pb_src_set_limit(pb_source *s, uint64_t limit)
{
    s->raw_limit = limit;
    if (s->view != PB_VIEW_PLAIN)
        return;
    if (s->mem) {
        size_t e = limit < s->mem_len ? (size_t)limit : s->mem_len;
        if (s->mem + e < s->p)
            e = (size_t)(s->p - s->mem);
        s->end = s->mem + e;
        return;
    }
    /* cut buffered bytes that lie past the limit */
    if (limit != UINT64_MAX) {
        uint64_t end_off = s->buf_off + (uint64_t)(s->end - s->base);
        if (end_off > limit) {
            uint64_t keep = limit > pb_src_offset(s) ? limit - pb_src_offset(s) : 0;
            s->end = s->p + keep;
        }
    } else if (s->raw_eof == 0) {
        /* nothing to do: further reads go on */
    }
}

pb_status pb_src_line(pb_source *s, uint64_t max_record, uint64_t *lineno, uint64_t *line_off, pb_error *err,
                      const char **line, size_t *len, int *eof)
{
    size_t scanned = 0;
    *line_off = pb_src_offset(s);
    for (;;) {
        size_t avail = pb_src_avail(s);
        const unsigned char *nl = avail > scanned ? memchr(s->p + scanned, '\n', avail - scanned) : NULL;
        int got;
        if (nl || (scanned = avail) > max_record) {
            if (!nl || (uint64_t)(nl - s->p) > max_record)
                return pb_fail(err, PB_ERR_LIMIT, *line_off, "line %llu is longer than %llu bytes (max_record_size)",
                               (unsigned long long)*lineno + 1, (unsigned long long)max_record);
            *line = (const char *)s->p;
            *len = (size_t)(nl - s->p);
            s->p = nl + 1;
            break;
        }
        if ((got = pb_src_need(s, avail + 1)) < 0)
            return err->status ? err->status : PB_ERR_IO;
        if (got == 0) {
            *eof = avail == 0;
            *line = (const char *)s->p;
            *len = avail;
            s->p += avail;
            break;
        }
    }
    (*lineno)++;
    if (*len && (*line)[*len - 1] == '\r')
        (*len)--;
    return PB_OK;
}

/* ---- the input: standard input, gzip members, a spooled copy ------------
 * (source.h).  The gzip layer sits below every view: raw_read() takes its
 * bytes from gz_read(), so that the views a format opens itself (zlib,
 * zstd) read inflated gzip data as they read a file. */

typedef struct {
    z_stream z;
    gz_header hdr;           /* the first member's header: its time dates the profile */
    unsigned char *in;       /* compressed bytes staged (the peeked ones first) */
    size_t cap;
    int between;             /* a member ended: another member, or the end, follows */
    int ended;
    uint64_t out, limit;     /* inflated bytes so far, and their bound */
    uint64_t raw;            /* compressed bytes consumed */
    int failed;              /* the error in s->err is the layer's own */
    uint64_t fail_off;
} gz_layer;

static void gz_end(pb_source *s)
{
    gz_layer *g = (gz_layer *)s->gz;
    if (!g)
        return;
    inflateEnd(&g->z);
    free(g->in);
    free(g);
    s->gz = NULL;
}

/* the layer's own error: format "gzip", the file's own name (no offset
 * but for a limit, at the compressed byte reached) */
static size_t gz_fail(pb_source *s, pb_status st, const char *what, const char *detail)
{
    gz_layer *g = (gz_layer *)s->gz;
    if (s->err && s->err->status == PB_OK) {
        s->err->format = "gzip";
        s->in_failed = g->failed = 1;
        g->fail_off = g->raw;
        if (st == PB_ERR_LIMIT)
            pb_fail(s->err, st, g->raw, "%s", what);
        else
            pb_fail_nooff(s->err, st, "%s%s", what, detail ? detail : "");
    }
    return (size_t)-1;
}

/* up to max inflated bytes into dst: fewer only at the end of the last member */
static size_t gz_read(pb_source *s, unsigned char *dst, size_t max)
{
    gz_layer *g = (gz_layer *)s->gz;
    char what[128];
    g->z.next_out = dst;
    g->z.avail_out = (uInt)max;
    while (g->z.avail_out && !g->ended) {
        uInt before;
        int r;
        if (!g->z.avail_in) {
            size_t n = fread(g->in, 1, g->cap, s->fp);
            if (!n && ferror(s->fp))
                return gz_fail(s, PB_ERR_IO, "cannot read: ", strerror(errno));
            g->z.next_in = g->in;
            g->z.avail_in = (uInt)n;
            if (!n) {
                if (g->between) {
                    g->ended = 1;
                    break;
                }
                return gz_fail(s, PB_ERR_CORRUPT, "cannot inflate: the input ends inside a gzip member", NULL);
            }
        }
        if (g->between) {
            if (g->z.next_in[0] != 0x1f || (g->z.avail_in > 1 && g->z.next_in[1] != 0x8b)) {
                snprintf(what, sizeof what, "bytes after a gzip member (from byte %llu) are not another gzip member",
                         (unsigned long long)g->raw);
                return gz_fail(s, PB_ERR_CORRUPT, what, NULL);
            }
            if (inflateReset(&g->z) != Z_OK)
                return gz_fail(s, PB_ERR_CORRUPT, "cannot inflate: zlib inflateReset failed", NULL);
            g->between = 0;
        }
        before = g->z.avail_in;
        r = inflate(&g->z, Z_NO_FLUSH);
        g->raw += before - g->z.avail_in;
        if (r == Z_STREAM_END)
            g->between = 1;
        else if (r != Z_OK && r != Z_BUF_ERROR)
            return gz_fail(s, PB_ERR_CORRUPT, "cannot inflate: ", g->z.msg ? g->z.msg : "corrupt data");
    }
    g->out += max - g->z.avail_out;
    if (g->out > g->limit) {
        snprintf(what, sizeof what, "inflates to more than max_decompressed_bytes (%llu)",
                 (unsigned long long)g->limit);
        return gz_fail(s, PB_ERR_LIMIT, what, NULL);
    }
    if (g->ended && !g->out)
        return gz_fail(s, PB_ERR_CORRUPT, "the gzip stream inflates to nothing", NULL);
    return max - g->z.avail_out;
}

int pb_src_peek_gzip(pb_source *s)
{
    int r;
    if (!s->fp || s->gz || s->view != PB_VIEW_PLAIN || s->fill || pb_src_offset(s) != 0)
        return 0;
    if ((r = pb_src_need(s, 2)) < 0)
        return -1;
    return r && s->p[0] == 0x1f && s->p[1] == 0x8b;
}

pb_status pb_src_gunzip(pb_source *s, uint64_t limit)
{
    size_t have = (size_t)(s->end - s->p);
    gz_layer *g;
    size_t n;
    if (!s->fp || s->gz || s->view != PB_VIEW_PLAIN || s->fill || pb_src_offset(s) != 0)
        return pb_fail(s->err, PB_ERR_USAGE, pb_src_offset(s), "gzip is read only from the input's first byte");
    g = (gz_layer *)calloc(1, sizeof *g);
    if (g)
        g->cap = have > RAW_BUF ? have : RAW_BUF;
    if (!g || !(g->in = (unsigned char *)malloc(g->cap))) {
        free(g);
        return pb_fail(s->err, PB_ERR_LIMIT, 0, "out of memory");
    }
    if (inflateInit2(&g->z, 15 + 16) != Z_OK) {
        free(g->in);
        free(g);
        return pb_fail(s->err, PB_ERR_LIMIT, 0, "zlib inflateInit2 failed");
    }
    inflateGetHeader(&g->z, &g->hdr);
    g->limit = limit;
    /* the peeked bytes are the first compressed ones */
    memcpy(g->in, s->p, have);
    g->z.next_in = g->in;
    g->z.avail_in = (uInt)have;
    s->gz = g;
    s->gunzipped = 1;
    s->in_stream = 1;
    s->base = s->p = s->end = s->buf;
    s->buf_off = s->raw_pos = 0;
    s->raw_eof = 0;
    s->raw_size = UINT64_MAX;
    /* the decoders' name: the file without .gz (as gzip -d names it) */
    n = s->err ? strlen(s->err->file) : 0;
    if (n > 3 && s->in_path && !is_stdin(s->in_path) && !strcasecmp(s->err->file + n - 3, ".gz"))
        s->err->file[n - 3] = '\0';
    return PB_OK;
}

int pb_src_can_seek(const pb_source *s) { return s->mem || (s->fp && !s->in_stream && !s->gz); }

uint64_t pb_src_mtime(const pb_source *s)
{
    const gz_layer *g = (const gz_layer *)s->gz;
    struct stat sb;
    if (g && g->hdr.done == 1 && g->hdr.time)
        return g->hdr.time;
    if (s->in_mtime)
        return s->in_mtime;
    if (s->fp && fstat(fileno(s->fp), &sb) == 0 && sb.st_mtime > 0)
        return (uint64_t)sb.st_mtime;
    return 0;
}

/* the copy's own error, naming the input itself: a limit at the byte
 * reached; the system's refusal as gzip's (an inflated copy) or ours */
static pb_status source_spool_fail(pb_source *s, FILE *fp, pb_status st, uint64_t off, const char *what)
{
    int e = errno;
    if (fp)
        fclose(fp);
    if (s->err && s->err->status == PB_OK) {
        s->in_failed = 1;
        s->err->format = s->gunzipped && st != PB_ERR_LIMIT ? "gzip" : "profbridge";
        if (st == PB_ERR_LIMIT)
            pb_fail(s->err, st, off, "%s", what);
        else
            pb_fail_nooff(s->err, st, "%s: %s", s->gunzipped ? "cannot write a temporary file"
                                                             : "cannot spool to a temporary file", strerror(e));
    }
    return s->err ? s->err->status : st;
}

pb_status pb_src_spool(pb_source *s, uint64_t limit)
{
    const char *dir = getenv("TMPDIR");
    char path[PB_ERR_FILE_MAX], what[160];
    unsigned char *chunk;
    uint64_t total = 0, mtime;
    FILE *fp;
    int fd;
    if (!s->fp || s->view != PB_VIEW_PLAIN || s->fill || s->buf_off != 0 || s->p != s->base)
        return pb_fail(s->err, PB_ERR_USAGE, pb_src_offset(s), "an input is spooled only from its first byte");
    snprintf(path, sizeof path, "%s/profbridge-in-XXXXXX", dir && *dir ? dir : "/tmp");
    if ((fd = mkstemp(path)) < 0) /* O_CREAT | O_EXCL */
        return source_spool_fail(s, NULL, PB_ERR_IO, 0, NULL);
    unlink(path); /* nameless from now on: gone on every path, a kill included */
    if (!(fp = fdopen(fd, "w+b"))) {
        close(fd);
        return source_spool_fail(s, NULL, PB_ERR_IO, 0, NULL);
    }
    snprintf(what, sizeof what, "holds more than max_decompressed_bytes (%llu) bytes to copy to a temporary file",
             (unsigned long long)limit);
    /* the bytes peeked (detection's) first, then the rest */
    for (chunk = s->buf;;) {
        size_t n = (size_t)(s->end - s->p);
        if (n && (total += n) > limit)
            return source_spool_fail(s, fp, PB_ERR_LIMIT, limit, what);
        if (n && fwrite(s->p, 1, n, fp) != n)
            return source_spool_fail(s, fp, PB_ERR_IO, 0, NULL);
        s->p = s->end = s->base = chunk;
        if (!(n = raw_read(s, chunk, s->cap)))
            break;
        if (n == (size_t)-1) {
            fclose(fp);
            return s->err->status;
        }
        s->end = chunk + n;
    }
    if (fflush(fp) != 0)
        return source_spool_fail(s, fp, PB_ERR_IO, 0, NULL);
    /* dated as the profile: the decoders that date a run by its file's mtime read it */
    if ((mtime = pb_src_mtime(s)) != 0) {
        struct timespec ts[2];
        ts[0].tv_sec = ts[1].tv_sec = (time_t)mtime;
        ts[0].tv_nsec = ts[1].tv_nsec = 0;
        (void)futimens(fd, ts);
    }
    gz_end(s);
    if (s->own_fp)
        fclose(s->fp);
    s->fp = fp;
    s->own_fp = 1;
    s->in_stream = 0;
    if (fseeko(fp, 0, SEEK_SET) != 0)
        return source_spool_fail(s, NULL, PB_ERR_IO, 0, NULL);
    s->raw_pos = 0;
    s->raw_eof = 0;
    s->raw_size = total;
    s->base = s->p = s->end = s->buf;
    s->buf_off = 0;
    return PB_OK;
}

void pb_src_name_error(const pb_source *s, pb_error *err)
{
    const gz_layer *g = (const gz_layer *)s->gz;
    const char *user;
    if (!err || err->status == PB_OK || !s->in_path)
        return;
    user = is_stdin(s->in_path) ? "standard input" : s->in_path;
    if (s->in_failed) {
        if (g && g->failed)
            err->offset = g->fail_off; /* a compressed offset: no view maps it */
        snprintf(err->file, sizeof err->file, "%s", user);
    } else if (s->gunzipped) {
        snprintf(err->file, sizeof err->file, "%s (gunzipped)", user);
    } else {
        snprintf(err->file, sizeof err->file, "%s", user);
    }
}

/* ---- a cursor that reads a region of the input again (source.h) ---------- */
void pb_src_cursor_open(pb_src_cursor *c, const pb_source *s, uint64_t at, size_t block, const char *skip)
{
    memset(c, 0, sizeof *c);
    c->mem = s->mem;
    c->mem_len = s->mem_len;
    c->fd = s->fp ? fileno(s->fp) : -1;
    c->size = s->raw_size;
    c->pos = at;
    c->block = block ? block : PLAIN_BUF;
    c->skip = skip;
}

/* one block from c->pos on (0 bytes at the end of the input) */
static pb_status cursor_read(pb_src_cursor *c, const unsigned char **b, size_t *n, pb_error *err)
{
    ssize_t got;
    if (c->mem) {
        *n = c->pos < c->mem_len ? (size_t)(c->mem_len - c->pos < c->block ? c->mem_len - c->pos : c->block) : 0;
        *b = c->mem + (*n ? c->pos : 0);
        return PB_OK;
    }
    if (!c->buf && !(c->buf = (unsigned char *)malloc(c->block)))
        return pb_fail(err, PB_ERR_LIMIT, c->pos, "out of memory");
    *n = c->size != UINT64_MAX && c->pos < c->size ? (size_t)(c->size - c->pos < c->block ? c->size - c->pos : c->block)
                                                   : 0;
    do
        got = *n && c->fd >= 0 ? pread(c->fd, c->buf, *n, (off_t)c->pos) : 0;
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return pb_fail(err, PB_ERR_IO, c->pos, "cannot read the input again: %s", strerror(errno));
    *n = (size_t)got;
    *b = c->buf;
    return PB_OK;
}

pb_status pb_src_cursor_next(pb_src_cursor *c, const unsigned char **b, size_t *n, pb_error *err)
{
    pb_status st;
    for (;;) {
        size_t k = 0;
        if ((st = cursor_read(c, b, n, err)) != PB_OK)
            return st;
        if (c->skip)
            while (k < *n && strchr(c->skip, (*b)[k]) && (*b)[k])
                k++;
        *b += k;
        *n -= k;
        c->pos += k;
        if (*n || !k) /* bytes, or the end */
            break;
    }
    if (*n)
        c->skip = NULL; /* only before the first byte */
    c->pos += *n;
    return PB_OK;
}

void pb_src_cursor_free(pb_src_cursor *c)
{
    free(c->buf);
    c->buf = NULL;
}
