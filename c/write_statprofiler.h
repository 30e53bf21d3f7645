/* write_statprofiler.h - Devel::StatProfiler traces: the record writer and
 * the writer as a pb_sample_sink (the reader is read_statprofiler.h).
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

#include "output.h"
#include "samples.h"

/* the trace format's sizes (the developers' spec, statprofiler-format.md) */
#define PB_SPW_ID_BYTES 24         /* a genealogy id: 6 little-endian uint32 */
#define PB_SPW_PACKET_MAX 32000u   /* the largest packet before compression */

/* ---- writer: records ---------------------------------------------------- */
typedef struct pb_spw pb_spw;

typedef struct {
    uint32_t perl_revision, perl_version, perl_subversion; /* 5, 36, 0 */
    uint32_t interval_us;                                  /* 0: 10000 */
    uint32_t depth;                                        /* 0: 20 */
    int have_id;                                           /* 0: make one: pid, 0, time, 3 random words */
    unsigned char id[PB_SPW_ID_BYTES];
    uint32_t ordinal;                                      /* 0: 1 */
    unsigned char parent_id[PB_SPW_ID_BYTES];               /* zeros for a root */
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
 * time, random), which the StatProfiler reader's directory or template
 * expansion finds again.
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
/* err: the writer's own error record, initialised here, filled by any
 * failing call (its sink's calls return the status) */
pb_spw_sink *pb_spw_sink_new(const char *out_path, pb_error *err);
pb_sample_sink *pb_spw_sink_base(pb_spw_sink *k);
/* number of files written by finish() and their final names */
size_t pb_spw_sink_files(const pb_spw_sink *k, const char *const **names);
void pb_spw_sink_free(pb_spw_sink *k);

#endif
