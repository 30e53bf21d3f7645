/* write_statprofiler.h - Devel::StatProfiler traces: the record writer, the
 * writer as a pb_sample_sink, and the sample-level reader API of
 * read_statprofiler.c (../shared/specs/statprofiler-format.md).
 *
 * Reader: pb_statprofiler_samples() decodes one trace file into
 * pb_sample_sink calls; pb_statprofiler_files() reads a whole genealogy
 * (rotated ordinals and forked children).  Header facts go to
 * sink->attribute, frames to sink->frame (each distinct frame record once),
 * samples to sink->sample (ids innermost first, weight in ticks of
 * sample_interval_us), and to sink->note:
 *     "metadata"      a=key b=value  n=1 header record 200, n=0 body record 200
 *     "section_start" a=name                                   (record 198)
 *     "section_end"   a=name                                   (record 199)
 *     "eval_source"   a=source text  b="(eval N)"  n=N         (record 8)
 * Attribute keys: source_format ("statprofiler"), statprofiler_format_version,
 * perl_version ("5.36.0"), sample_interval_us, stack_depth, genealogy_id,
 * genealogy_ordinal, parent_id, parent_ordinal.
 *
 * The op name of each sample is not part of pb_sample_sink; callers that
 * want it (the test dumper, the writer sink) pass pb_sp_hooks.
 *
 * Writer: pb_spw_* write one trace.  pb_spw_open() writes through output.h
 * (an O_EXCL temp file next to the target, renamed by pb_spw_close(), so an
 * interrupted or failed run never leaves a file that looks complete, and
 * pb_spw_free() without close leaves nothing).  Records go into a
 * 32000-byte buffer that is Snappy-compressed (libsnappy) into one packet
 * whenever it fills; the header is flushed as its own packet.  Declared
 * record lengths are the true payload sizes.  Output is written with
 * write(2) from the writer's own buffer (no stdio), and only by the process
 * that opened it: after a fork every call in the child fails with a usage
 * error and pb_spw_free() there writes and removes nothing.
 *
 * Plain C99 (POSIX for getpid/rename/opendir); no Perl headers.
 */
#ifndef PB_WRITE_STATPROFILER_H
#define PB_WRITE_STATPROFILER_H

#include "samples.h"
#include "output.h"

#define PB_SP_PACKET_MAX 32000u   /* largest decompressed packet */
#define PB_SP_ID_BYTES 24         /* genealogy id: 6 little-endian uint32 */

/* ---- reader ------------------------------------------------------------ */
typedef struct {
    /* called just before each sink->sample() with that sample's op name */
    void (*op_name)(void *ctx, pb_str op);
    /* non-fatal diagnostics (unknown body record skipped, no end marker) */
    void (*warn)(void *ctx, const char *msg);
    void *ctx;
} pb_sp_hooks;

/* header of one trace file */
typedef struct {
    uint32_t format_version;
    uint32_t perl_revision, perl_version, perl_subversion;
    uint32_t interval_us;   /* record 202 */
    uint32_t depth;         /* record 203 */
    uint32_t ordinal, parent_ordinal;
    unsigned char id[PB_SP_ID_BYTES], parent_id[PB_SP_ID_BYTES];
    int have_genealogy;
} pb_sp_header;

/* "%08x" x 6 of the id words: 48 hex digits + NUL */
void pb_sp_id_hex(const unsigned char id[PB_SP_ID_BYTES], char out[49]);
/* word 0 of the id (the pid) */
uint32_t pb_sp_id_pid(const unsigned char id[PB_SP_ID_BYTES]);

#define PB_SP_ANNOUNCE_THREAD 1u /* call sink->thread(thread_key, pid, parent pid, "<pid>") */
#define PB_SP_NO_HEADER_FACTS 2u /* no attributes and no header metadata notes (later files of a run) */
/* One file from src's current position (magic first).  Samples use
 * thread_key.  With PB_SP_ANNOUNCE_THREAD, sink->thread() is called once
 * with the pid (id word 0), the parent pid (parent id word 0, 0 for a root)
 * and the pid as label.  sink->finish() is NOT called (several files can
 * feed one sink).  hdr (may be NULL) receives the header.  hooks may be NULL. */
pb_status pb_statprofiler_samples(pb_source *src, const pb_options *opt, pb_sample_sink *sink,
                                  const pb_sp_hooks *hooks, uint64_t thread_key, unsigned flags,
                                  pb_sp_header *hdr, pb_error *err);

/* Read only the header of a file (for ordering a genealogy). */
pb_status pb_statprofiler_read_header(const char *path, pb_sp_header *hdr, pb_error *err);

/* A whole trace: paths in any order (or one directory / template, see
 * pb_statprofiler_expand).  Files are grouped by genealogy id; each id is one
 * process (thread_key 1, 2, ... in order: roots first, then children after
 * their parent), announced with sink->thread(key, pid, parent pid, label);
 * its files are read in ordinal order.  Attributes come from the first file.
 * Calls sink->finish() at the end. */
pb_status pb_statprofiler_files(const char *const *paths, size_t n, const pb_options *opt,
                                pb_sample_sink *sink, const pb_sp_hooks *hooks, pb_error *err);

/* Expand a directory (every "*.<48 hex>.<8 hex>" file in it) or a template
 * prefix ("dir/statprof.out" -> "dir/statprof.out.<48 hex>.<8 hex>") into a
 * sorted, malloc'ed list of paths; free with pb_statprofiler_free_list. */
pb_status pb_statprofiler_expand(const char *dir_or_template, char ***paths, size_t *n, pb_error *err);
void pb_statprofiler_free_list(char **paths, size_t n);

/* A StatProfiler run named by one path: a directory of traces, or the first
 * file (ordinal 1) of a root process (zero parent id) whose template has
 * more files (its rotations and its forked children).  With opt->have_pid,
 * only the files of that process (id word 0), also for a single trace file.
 * Returns 1 with *paths / *n filled (free with pb_statprofiler_free_list),
 * 0 when path is to be read as the one file it is, -1 on error (in err:
 * io, or unsupported "no process PID in this run"). */
int pb_statprofiler_run(const char *path, const pb_options *opt, char ***paths, size_t *n, pb_error *err);

/* pb_sample_decoder_fn for fold_samples.h's table: one file, thread key 0
 * (thread() announced with the real pid), no op names; calls finish(). */
pb_status pb_read_statprofiler_samples(pb_source *src, const pb_options *opt, pb_sample_sink *out, pb_error *err);

/* Chunk-level entry for several files (the fold in between), like
 * pb_read_statprofiler() for one.  err is initialised here. */
pb_status pb_read_statprofiler_files(const char *const *paths, size_t n, const pb_options *opt,
                                     pb_sink *sink, pb_error *err);

/* ---- writer: records ---------------------------------------------------- */
typedef struct pb_spw pb_spw;

typedef struct {
    uint32_t perl_revision, perl_version, perl_subversion; /* 5, 36, 0 */
    uint32_t interval_us;                                  /* 0: 10000 */
    uint32_t depth;                                        /* 0: 20 */
    int have_id;                                           /* 0: make one: pid, 0, time, 3 random words */
    unsigned char id[PB_SP_ID_BYTES];
    uint32_t ordinal;                                      /* 0: 1 */
    unsigned char parent_id[PB_SP_ID_BYTES];               /* zeros for a root */
    uint32_t parent_ordinal;
} pb_spw_header;

void pb_spw_header_init(pb_spw_header *h);

/* Open a trace for path (output.h: temp file, renamed at close).  Returns
 * NULL with err filled (PB_ERR_IO) on failure.  The header is written at the
 * first body record (or close), so header metadata can be added until then. */
pb_spw *pb_spw_open(const char *path, const pb_spw_header *h, pb_error *err);
/* A trace that is member `member` of set (named `name` in messages);
 * pb_spw_close() completes it and pb_outset_commit() publishes it. */
pb_spw *pb_spw_open_member(pb_outset *set, size_t member, const char *name, const pb_spw_header *h, pb_error *err);
/* Members only: give the fd back (flushing a short packet and freeing the
 * packet buffers: a suspended writer holds ~200 bytes), and take it again. */
pb_status pb_spw_suspend(pb_spw *w);
pb_status pb_spw_resume(pb_spw *w, pb_error *err);
int pb_spw_suspended(const pb_spw *w);
/* Header record 200; only before the first body record. */
pb_status pb_spw_header_metadata(pb_spw *w, pb_str key, pb_str value);

pb_status pb_spw_start_sample(pb_spw *w, uint32_t weight, pb_str op_name);
pb_status pb_spw_sub_frame(pb_spw *w, pb_str package, pb_str name, pb_str file, int32_t line,
                           int32_t first_line);
pb_status pb_spw_xsub_frame(pb_spw *w, pb_str package, pb_str name);
pb_status pb_spw_main_frame(pb_spw *w, pb_str file, int32_t line);
pb_status pb_spw_eval_frame(pb_spw *w, pb_str file, int32_t line);
pb_status pb_spw_end_sample(pb_spw *w);
/* record 8: allowed inside or outside a sample */
pb_status pb_spw_eval_source(pb_spw *w, pb_str text, uint32_t eval_n);
pb_status pb_spw_section_start(pb_spw *w, pb_str name);
pb_status pb_spw_section_end(pb_spw *w, pb_str name);
/* body record 200 */
pb_status pb_spw_metadata(pb_spw *w, pb_str key, pb_str value);
/* Write the end marker (197), flush, close, and (pb_spw_open) rename the
 * temp file onto the path.  A second close is a usage error. */
pb_status pb_spw_close(pb_spw *w);
/* Free.  A writer that was not closed publishes nothing: its temp file is
 * removed (in the process that opened it; a forked child touches no file). */
void pb_spw_free(pb_spw *w);

/* the first error, filled by any failing call above; "" when none */
const pb_error *pb_spw_error(const pb_spw *w);
int pb_spw_in_sample(const pb_spw *w);
int pb_spw_is_closed(const pb_spw *w);
uint64_t pb_spw_samples(const pb_spw *w);
uint64_t pb_spw_bytes_written(const pb_spw *w);

/* ---- writer: a pb_sample_sink ------------------------------------------ */
/* Any sampling decoder -> StatProfiler.  One thread_key -> out_path.
 * Several -> one trace per thread, named like Devel::StatProfiler's
 * template mode "<out_path>.<48 hex id>.00000001" (id = pid, thread key,
 * time, random), which pb_statprofiler_expand(out_path) finds again.
 * Atomic: every trace is written into a private temp directory next to
 * out_path (pb_outset) and renamed into place by finish() only when all are
 * complete; pb_spw_sink_free() before that removes them all.  Thread lookup
 * is a hash; at most 64 traces hold an fd at once (fewer under a low
 * RLIMIT_NOFILE), the others are suspended (~200 bytes each).
 * Frames are written innermost first as received; PB_FRAME_SUB ->
 * sub frame (package, name, file, line, first_line), XSUB -> xsub frame,
 * MAIN -> main frame, EVAL -> eval frame, SYNTHETIC -> xsub frame with
 * package "" (e.g. "<GC>").  Interval and perl version come from the
 * attributes sample_interval_us / interval_us and perl_version. */
typedef struct pb_spw_sink pb_spw_sink;
pb_spw_sink *pb_spw_sink_new(const char *out_path, pb_error *err);
pb_sample_sink *pb_spw_sink_base(pb_spw_sink *k);
/* pass as hooks to pb_statprofiler_samples to keep op names */
pb_sp_hooks pb_spw_sink_hooks(pb_spw_sink *k);
/* number of files written by finish() and their final names */
size_t pb_spw_sink_files(const pb_spw_sink *k, const char *const **names);
void pb_spw_sink_free(pb_spw_sink *k);

#endif
