/* write_nytprof.h - a sink that writes NYTProf v5 files (nytprof.out) that
 * the real Devel::NYTProf 6.12 reader and nytprofhtml accept.
 *
 * Feed it any chunk stream (from read_nytprof.c or a foreign decoder) through
 * pb_nytprof_writer_sink(); every chunk becomes the bytes NYTProf itself would
 * write for it (the NYTProf file format spec, sections 2-4).
 *
 * Compression (level PB_NYTPROF_WRITER_AUTO_LEVEL, the default: 3 for a
 * NYTProf stream, where the profiler's own 6 took twice as long as the whole
 * rest of a conversion for a file about 1.7 times smaller; 0, plain, for a
 * foreign one, a stream with ATTRIBUTE source_format before its first binary
 * chunk: converted profiles are long runs of small records, a TIME_LINE per
 * sample, which even level 1 takes longer to compress than the whole rest of
 * the conversion (a 99 MB .cpuprofile: 74 MB of records, 0.96 s of deflate
 * against 0.75 s for everything else, for a file 2.1 times smaller); a level
 * asked for is kept):
 *   level > 0  START_DEFLATE in the input starts the zlib stream ('z', then
 *              RFC1950 zlib, windowBits 15, memLevel 9, up to EOF).  When the
 *              input has none (foreign decoders never send one), the writer
 *              inserts "#Compressed at level N with zlib X\n" and 'z' right
 *              before the first binary chunk, as the profiler does.
 *   level 0    START_DEFLATE is dropped, everything is written plain.
 *   The COMMENT "Compressed at level N with zlib X\n" that precedes a
 *   START_DEFLATE is dropped with it (level 0), or rewritten to name the
 *   writer's level when that differs from N.
 * So: an uncompressed NYTProf file written with level 0 comes out byte for
 * byte identical; a compressed one written at its own level gives the
 * identical chunk stream (and identical inflated bytes).
 *   A file writer deflates on a thread of its own (POSIX threads; all signals
 *   blocked there) from its first full 64 KiB staging buffer of the zlib
 *   part on, so decoding and compressing overlap; the bytes are the same as
 *   on one thread.  A failure there (zlib, a write, ENOSPC) is reported with
 *   its usual message by a later chunk() or by close().  close() and abort()
 *   always join the thread; a forked child never waits on it, and its writer
 *   writes nothing (an io error: the output belongs to the parent).
 *
 * Validation: the writer refuses (PB_ERR_CORRUPT, no output left behind) a
 * stream that the real nytprofhtml would crash or die on:
 *   - the first chunk is not VERSION (or VERSION major is not 5);
 *   - no ATTRIBUTE ticks_per_sec (non-zero) before the first binary chunk;
 *   - TIME_LINE/TIME_BLOCK/SUB_INFO/SUB_CALLERS naming a fid that no earlier
 *     NEW_FID defined (SUB_CALLERS fid 0 is NYTProf's "xsub" marker: allowed);
 *   - fids that do not end up dense 1..N (NEW_FID fid 0, or a hole at close);
 *   - ATTRIBUTE nv_size other than 8 (the real reader croaks);
 *   - text chunks that cannot be written as one line (a key holding '=' or
 *     a newline, a value or COMMENT holding a newline).  A COMMENT without
 *     its trailing "\n" gets one.
 * It warns (opts.warn) when SUB_CALLERS count calls but no PID_START/PID_END
 * pair spans a positive time (nytprofhtml divides by that duration).
 * NEW_FID may define fids out of order (memory: one bit per fid, and a fid
 * may lie at most 65536 above the number of fids defined so far) and may
 * re-send a fid (a forked child does).
 *
 * Output: pb_nytprof_writer_open() opens its path through output.h (a temp
 * file created O_EXCL next to the target and renamed by close(); a device or
 * FIFO written in place; a symlink followed; "-" standard output), so on any
 * error the target is left as it was and no temp file remains.  In a forked
 * child the writer is not its own (pb_nytprof_writer_owned() is 0): abort()
 * there frees memory and touches no file.  pb_nytprof_writer_open_mem()
 * appends to a caller-owned growable buffer instead.
 *
 * Errors are reported with format "nytprof-writer", the target as file, and
 * the chunk number (VERSION is chunk 0, as for_chunks' $.) in the message.
 */
#ifndef PB_WRITE_NYTPROF_H
#define PB_WRITE_NYTPROF_H

#include <stddef.h>
#include "chunk.h"
#include "error.h"
#include "present.h"

#define PB_NYTPROF_WRITER_DEFAULT_LEVEL 3  /* a NYTProf stream's, when none is asked */
#define PB_NYTPROF_WRITER_FOREIGN_LEVEL 0  /* a converted profile's, when none is asked */
#define PB_NYTPROF_WRITER_AUTO_LEVEL (-1)  /* the one of those two the stream calls for */

typedef struct {
    int compress_level;  /* 0 (plain) .. 9; default PB_NYTPROF_WRITER_AUTO_LEVEL (above) */
    int fsync;           /* 1: fsync the temp file before the rename */
    uint32_t max_line;   /* highest line number written (0: PB_DEFAULT_MAX_LINE); a chunk past it
                            is a limit error: nytprofhtml and nytprofcalls size per-line arrays by
                            the highest line (2^31 - 1 made nytprofhtml allocate ~24 GB) */
    /* Optional: the writer's own warnings, and a decoder's non-fatal
     * warnings sent to the writer's sink (sink->warn); NULL drops them. */
    void (*warn)(void *ud, const char *msg);
    void *warn_ud;
} pb_nytprof_writer_opts;

/* A growable memory buffer owned by the caller (free(data) when done). */
typedef struct {
    unsigned char *data;
    size_t len;
    size_t cap;
} pb_membuf;

typedef struct pb_nytprof_writer pb_nytprof_writer;

/* compress_level PB_NYTPROF_WRITER_AUTO_LEVEL, no fsync, no warn callback */
void pb_nytprof_writer_opts_init(pb_nytprof_writer_opts *o);

/* Create the temp file next to path.  NULL opts means the defaults.  Returns
 * NULL with err filled: PB_ERR_IO (can't create the temp file),
 * PB_ERR_UNSUPPORTED (compress_level outside 0..9), PB_ERR_LIMIT (memory). */
pb_nytprof_writer *pb_nytprof_writer_open(const char *path, const pb_nytprof_writer_opts *o, pb_error *err);

/* Write into *out (appended from out->len; the buffer grows with realloc).
 * On error or abort, out->data is freed and *out zeroed. */
pb_nytprof_writer *pb_nytprof_writer_open_mem(pb_membuf *out, const pb_nytprof_writer_opts *o, pb_error *err);

/* The sink to hand to a decoder.  Its chunk() returns non-zero once the
 * writer has failed (the decoder then stops with PB_ERR_ABORT); the reason
 * is kept in the writer and returned by close(). */
pb_sink *pb_nytprof_writer_sink(pb_nytprof_writer *w);

/* 1 when the writer has failed (its error is waiting for close()). */
int pb_nytprof_writer_failed(const pb_nytprof_writer *w);
/* 1 in the process that opened it (always 1 for a memory writer) */
int pb_nytprof_writer_owned(const pb_nytprof_writer *w);

/* Finish: final checks, flush zlib, optional fsync, rename temp -> target.
 * Frees the writer.  Returns PB_OK, or the first error (the writer's own or
 * one found now) with err filled; then the temp file is removed and the
 * target is untouched. */
pb_status pb_nytprof_writer_close(pb_nytprof_writer *w, pb_error *err);

/* Discard everything: remove the temp file (target untouched), free the
 * memory buffer of a memory writer, free the writer.  NULL is fine. */
void pb_nytprof_writer_abort(pb_nytprof_writer *w);

/* Bytes of NYTProf stream produced so far (before compression) and bytes
 * written out (after compression), for statistics. */
uint64_t pb_nytprof_writer_bytes_in(const pb_nytprof_writer *w);
uint64_t pb_nytprof_writer_bytes_out(const pb_nytprof_writer *w);

/* The nytprof target (its row in outputs.c; convert and merge): the writer,
 * and the presentation filter in front of it (present.h), whose sink the
 * producer feeds.  open: the writer at out (compress_level -1: its default), opt
 * copied into t->opt with source_base set to input's directory when opt has
 * none (a bare name: "." when bare_is_dot, else none).  close: with the
 * producer's status st, finish the filter and commit the file, or remove it
 * and hand out the first error (the writer's own when it stopped the
 * stream). */
typedef struct {
    pb_nytprof_writer *w;
    pb_present *pr;
    pb_options opt;
    char *base;
} pb_nytprof_target;
pb_status pb_nytprof_target_open(pb_nytprof_target *t, const char *out, int compress_level, const pb_options *opt,
                                 const char *input, int bare_is_dot, void (*warn)(void *ud, const char *msg),
                                 void *ud, pb_error *err);
pb_status pb_nytprof_target_close(pb_nytprof_target *t, pb_status st, pb_error *err);

#endif
