/* source.h - a byte source for decoders.
 *
 * Reads a file (in bounded memory: a window buffer that grows only when a
 * single record needs more bytes than it holds, and only as far as bytes
 * really arrive) or a memory block, tracks the logical byte offset for error
 * messages, and can switch mid-stream to a zlib- or zstd-inflating view.
 *
 * Fast path: decoders read from src->p .. src->end directly after
 * pb_src_need(src, n) said n bytes are there.  pb_src_need() returns:
 *   1  n bytes are available at src->p
 *   0  the input ended first (src->end - src->p bytes remain)
 *  -1  an error (I/O, corrupt compressed data, limit) is in src->err
 *
 * Offsets: pb_src_offset() is the position in the logical stream, i.e. in
 * the file for plain data, and raw-offset-of-the-view-start plus inflated
 * bytes inside a compressed view (NYTProf's own "pos" counts the same way).
 */
#ifndef PB_SOURCE_H
#define PB_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "error.h"

typedef enum { PB_VIEW_PLAIN = 0, PB_VIEW_ZLIB, PB_VIEW_ZSTD } pb_view;

/* compressed block starts kept for error offsets (a ring, newest last) */
#define PB_SRC_BLOCKS 64

typedef struct pb_source {
    /* fast-path window: unread bytes are [p, end) */
    const unsigned char *p;
    const unsigned char *end;

    /* window buffer (file input, or any compressed view) */
    unsigned char *buf;
    size_t cap;
    uint64_t buf_off;        /* logical offset of the byte at `base` */
    const unsigned char *base; /* start of the current window (buf or mem) */

    /* raw input: a FILE* or a memory block */
    FILE *fp;
    int own_fp;
    const unsigned char *mem;
    size_t mem_len;
    uint64_t raw_pos;        /* next raw byte to read from the input */
    uint64_t raw_limit;      /* raw bytes past this are not part of the view (UINT64_MAX: none) */
    uint64_t raw_size;       /* total raw size when known (files: fstat), else UINT64_MAX */
    int raw_eof;

    /* compressed view */
    pb_view view;
    void *zstate;            /* z_stream* or ZSTD_DStream* */
    unsigned char *rawbuf;   /* compressed input staging */
    size_t rawcap, rawlen, rawoff;
    int z_done;              /* the compressed stream reported its end */
    int gz_members;          /* a gzip view: members follow one another to EOF (RFC 1952 2.2) */
    int gz_between;          /* a gzip view: a member ended; another (or EOF) must follow */
    uint64_t inflated;       /* bytes produced by the current view */
    uint64_t max_inflated;   /* limit: max_decompressed_bytes (0: none) */
    const char *max_inflated_why; /* how max_inflated was chosen, for its error (NULL: the option itself) */
    uint64_t max_window;     /* limit: largest single record (max_record_size) */

    pb_error *err;
    const char *format;      /* for error messages */

    /* where the compressed blocks of the current view begin in the file:
     * (inflated offset, raw offset) pairs, the newest PB_SRC_BLOCKS kept */
    int blocks_on;
    uint64_t view_off;       /* logical offset of the view's first byte */
    struct { uint64_t out, raw; } blk[PB_SRC_BLOCKS];
    unsigned nblk, blk_head;
    size_t zstd_hint;        /* zstd: input size to the end of the next block */
    int zstd_at_block;       /* zstd: the next input byte starts a block */

    /* a decoder's own view (pb_src_open_view): makes n bytes available at p,
     * managing buf/cap/base/buf_off itself; returns as pb_src_need() */
    int (*fill)(struct pb_source *s, size_t n);
    void *fill_ctx;

    /* progress (pb_options.progress): called from the one place raw bytes are read */
    void (*progress)(void *ud, uint64_t done, uint64_t total);
    void *progress_ud;
    uint64_t progress_next;  /* raw offset of the next call */

    /* the input itself (source.c's input section): a path, standard input
     * ("-") or another stream, gzip members inflated under every view, a
     * spooled copy for a decoder that seeks */
    const char *in_path;     /* the name the caller gave (pb_src_open_file), or NULL */
    int in_stream;           /* standard input, a FIFO or a device: read once, no seeking */
    int in_once;             /* so from its open on (in_stream also covers inflated gzip) */
    int in_settled;          /* the driver has chosen how its decoder reads it (formats.c) */
    int gunzipped;           /* read through the gzip layer below (also once spooled) */
    int in_failed;           /* the error is this section's own (gzip, the copy): it names the input itself */
    void *gz;                /* that layer while it reads (source.c), or NULL */
    uint64_t in_mtime;       /* the profile's date when the bytes read no longer have it (0: fstat) */
} pb_source;

/* Open a file; "-" is standard input, and a FIFO or device is read as a
 * stream (once, no seeking): see the input section below.  On failure
 * returns PB_ERR_IO with the error filled. */
pb_status pb_src_open_file(pb_source *s, const char *path, pb_error *err);
/* Read from memory (not copied; must outlive the source). */
void pb_src_open_mem(pb_source *s, const void *data, size_t len, pb_error *err);
void pb_src_close(pb_source *s);
/* A stream the decoder produces itself (e.g. Snappy-compressed packets)
 * read through the same cursor: fill(s, n) makes n bytes available at s->p
 * (growing s->buf / s->cap, moving s->base and s->buf_off as it compacts;
 * pb_src_close frees s->buf) and returns 1, 0 or -1 as pb_src_need().
 * offset: the logical offset of the stream's first byte, for messages. */
void pb_src_open_view(pb_source *s, int (*fill)(pb_source *s, size_t n), void *ctx, uint64_t offset,
                      pb_error *err);

/* Slow path of pb_src_need(); do not call directly. */
int pb_src_fill(pb_source *s, size_t n);

static inline int pb_src_need(pb_source *s, size_t n)
{
    if ((size_t)(s->end - s->p) >= n)
        return 1;
    return pb_src_fill(s, n);
}
static inline size_t pb_src_avail(const pb_source *s) { return (size_t)(s->end - s->p); }
static inline uint64_t pb_src_offset(const pb_source *s)
{
    return s->buf_off + (uint64_t)(s->p - s->base);
}
/* 1 at end of input (nothing more will come), 0 if a byte is there, -1 error */
int pb_src_at_eof(pb_source *s);

/* Switch the rest of the input (from the current position) to an inflating
 * view.  Bytes already buffered are handed to the inflater first.
 * raw_end: raw offset where the compressed data stops (UINT64_MAX: to EOF). */
pb_status pb_src_start_zlib(pb_source *s);
pb_status pb_src_start_zstd(pb_source *s, uint64_t raw_end);
/* The gzip members (RFC 1952: each a header, deflate data, CRC-32 and size
 * trailer, all checked by zlib) from the current position to EOF as one
 * view, as gzip -d and Go's gzip reader read them: the zlib view with
 * gzip's wrapper (a gzipped profile.proto).  Bytes after a member
 * that do not start another are a corrupt error, never ignored.  Offsets
 * in errors count inflated bytes (the logical offset: no block mapping). */
pb_status pb_src_start_gzip(pb_source *s);
/* Back to the first byte of the input as plain data, any view ended (a
 * format whose tables may come after the records that use them is read
 * twice: its row says so).  Files and memory; a pipe gives PB_ERR_IO. */
pb_status pb_src_rewind(pb_source *s);
/* After a compressed view: 1 if the compressed stream ended cleanly. */
int pb_src_view_finished(const pb_source *s);

/* Random access (plain input only, no view active): move to a raw offset.
 * Returns PB_OK, or an error if the offset lies past the end. */
pb_status pb_src_seek(pb_source *s, uint64_t offset);
/* Restrict the plain input to raw offsets < limit (UINT64_MAX to lift). */
void pb_src_set_limit(pb_source *s, uint64_t limit);

/* The file offset for a logical offset: itself outside a compressed view;
 * inside one, where the compressed block that produced that byte begins
 * (zlib: exact deflate block starts; zstd: the start of the block the
 * decompressor was given).  Offsets older than the blocks kept map to the
 * oldest kept. */
uint64_t pb_src_file_offset(const pb_source *s, uint64_t logical);
/* After a decoder failed: turn err's offset into a file offset (above). */
void pb_src_error_to_file(const pb_source *s, pb_error *err);

/* Total input size if known (UINT64_MAX otherwise). */
static inline uint64_t pb_src_size(const pb_source *s) { return s->raw_size; }

/* The next line of a text format from s (the newline not included, a CR
 * before it dropped), in the source's buffer until the next read: *line_off
 * receives its offset, *lineno counts it; *eof 1 when nothing was left.  A
 * line longer than max_record bytes is a limit error ("line N is longer
 * than M bytes (max_record_size)"); a read error keeps its status.  The
 * one line reader of the text decoders. */
pb_status pb_src_line(pb_source *s, uint64_t max_record, uint64_t *lineno, uint64_t *line_off, pb_error *err,
                      const char **line, size_t *len, int *eof);

/* ---- the input: standard input, gzip members, a spooled copy ----------
 * The one place inputs are opened (formats.c's driver decides, by the
 * format's row, which of these a decoder needs):
 *  - pb_src_peek_gzip: 1 when the input starts with gzip's magic (1f 8b),
 *    0 not, -1 error; the bytes peeked stay in the window for the decoder.
 *  - pb_src_gunzip: from the input's first byte on, the bytes every view
 *    reads are the inflated gzip members (any number, RFC 1952 2.2), read
 *    forward as a stream; offsets count inflated bytes.  At most `limit`
 *    inflated bytes, else "gzip: limit: inflates to more than
 *    max_decompressed_bytes (N) at byte <compressed offset> of <file>"; a
 *    damaged or cut gzip is "gzip: corrupt: <file>: cannot inflate: ...".
 *    The decoder's name for the input (err->file, which decoders name the
 *    application from) loses a ".gz".
 *  - pb_src_can_seek: a regular file (or memory) read as it is.
 *  - pb_src_spool: the rest of an input that cannot seek (from its first
 *    byte: nothing may have been consumed) into an O_EXCL temporary file,
 *    unlinked at once (removed on every path, a kill included), bounded by
 *    `limit` bytes, dated as the profile (pb_src_mtime); the source then
 *    reads that file, seekable, of known size.
 *  - pb_src_mtime: the profile's date: the first gzip member's header
 *    time when it has one, else the input's mtime (fstat); 0 unknown.
 *  - pb_src_name_error: an error's file as the user gave it ("standard
 *    input" for "-"; "<file> (gunzipped)" for an error inside inflated
 *    data; the gzip layer's own errors name the file itself). */
int pb_src_peek_gzip(pb_source *s);
pb_status pb_src_gunzip(pb_source *s, uint64_t limit);
int pb_src_can_seek(const pb_source *s);
pb_status pb_src_spool(pb_source *s, uint64_t limit);
uint64_t pb_src_mtime(const pb_source *s);
void pb_src_name_error(const pb_source *s, pb_error *err);
/* A spooled input that can be read only once (in_once) kept for one more
 * open of the same name in this process (pb_options.reread): the next
 * pb_src_open_file(name) reads the copy.  pb_src_forget_kept drops it. */
void pb_src_keep(const pb_source *s);
void pb_src_forget_kept(void);

/* ---- a cursor that reads a region of the input again -----------------------
 * For a decoder that reads its input in two passes and, in the second, parts
 * of it from where the first noted them (two JSON arrays of a profile read
 * in lockstep: its samples and their times or weights): each cursor reads
 * blocks from a byte offset on, from the memory
 * block or with pread on the file into a buffer of its own, so several
 * cursors walk one input at once and the source's own position and window
 * are left alone.  Plain input only (a file of known size or a memory block,
 * no view): the caller checks that a pipe, which cannot be read again, is
 * not one.  Memory: one block per cursor (file input). */
typedef struct {
    const unsigned char *mem; /* the memory block (mem_len bytes), or NULL: */
    size_t mem_len;
    int fd;                   /* the file, read with pread up to size bytes */
    uint64_t size;
    uint64_t pos;             /* the next byte to read */
    size_t block;             /* bytes per block at the most */
    unsigned char *buf;       /* file input: the block read (allocated at the first read) */
    const char *skip;         /* bytes dropped before the first one returned (NULL: none) */
} pb_src_cursor;

/* A cursor on s's input from byte offset at, blocks of at most block bytes;
 * skip: a set of bytes passed over before the first byte returned (": \t\r\n"
 * after a JSON key: its value follows), or NULL.  Allocates nothing. */
void pb_src_cursor_open(pb_src_cursor *c, const pb_source *s, uint64_t at, size_t block, const char *skip);
/* The next block: *b and *n (*n 0: the input ended), c->pos then the byte
 * after it.  PB_OK, or (err filled, at c->pos) PB_ERR_LIMIT "out of memory"
 * or PB_ERR_IO "cannot read the input again: ...". */
pb_status pb_src_cursor_next(pb_src_cursor *c, const unsigned char **b, size_t *n, pb_error *err);
void pb_src_cursor_free(pb_src_cursor *c);

#endif
