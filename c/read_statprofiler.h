/* read_statprofiler.h - Devel::StatProfiler traces, the sample-level reader
 * API of read_statprofiler.c (format: Devel::ProfileBridge::Formats; the
 * developers' spec is statprofiler-format.md).
 *
 * Reader: pb_statprofiler_decoder, the format's one entry (below), reads
 * a trace or a run; pb_statprofiler_samples() decodes one trace file into
 * pb_sample_sink calls; pb_statprofiler_files() reads a whole genealogy
 * (rotated ordinals and forked children).  Header facts go to
 * sink->attribute, frames to sink->frame (each distinct frame record once),
 * samples to sink->sample (ids innermost first, weight in ticks of
 * sample_interval_us; a stack cut at the depth limit ends in the pseudo-frame
 * main::(truncated), see PB_SP_CUT_NAME), and to sink->note:
 *     "metadata"      a=key b=value  n=1 header record 200, n=0 body record 200
 *     "section_start" a=name                                   (record 198)
 *     "section_end"   a=name                                   (record 199)
 *     "eval_source"   a=source text  b="(eval N)"  n=N         (record 8)
 * Attribute keys: source_format ("statprofiler"), statprofiler_format_version,
 * perl_version ("5.36.0"), sample_interval_us, stack_depth, genealogy_id,
 * genealogy_ordinal, parent_id, parent_ordinal.
 *
 * The op name of each sample goes to sink->sample_tags (op; no status),
 * just before its sample(), when the sink has that call.  A stack cut at
 * the trace's depth limit hangs under the pseudo-frame main::(truncated)
 * (PB_SP_CUT_NAME) unless the sink keeps cut stacks (keeps_cut_stacks,
 * samples.h): then it arrives as the file holds it.
 *
 * Plain C99 (POSIX for opendir/stat); no Perl headers.
 */
#ifndef PB_READ_STATPROFILER_H
#define PB_READ_STATPROFILER_H

#include "samples.h"

#define PB_SP_PACKET_MAX 32000u   /* largest decompressed packet */
#define PB_SP_ID_BYTES 24         /* genealogy id: 6 little-endian uint32 */

/* ---- reader ------------------------------------------------------------ */
typedef struct {
    /* non-fatal diagnostics (unknown body record skipped, no end marker) */
    void (*warn)(void *ctx, const char *msg);
    void *ctx;
} pb_sp_hooks;

/* A sample cut at the trace's depth limit: as many frames as the header's
 * stack depth (record 203) and the outermost is not a main frame (the
 * profiler adds the main frame only when the limit left room for it).  Such
 * a stack gets one synthetic frame main::(truncated) outermost, so it hangs
 * under that pseudo-sub instead of becoming a root of its own. */
#define PB_SP_CUT_NAME "(truncated)"

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
 * io, or unsupported "no process PID in this run").  src: path already
 * open (pb_src_open_file, at its start) or NULL: path's own header is read
 * from the bytes its window holds, path not opened again. */
int pb_statprofiler_run(const char *path, pb_source *src, const pb_options *opt, char ***paths, size_t *n,
                        pb_error *err);

/* The format's one entry (a pb_fold_decoder, fold_samples.h; the row in
 * formats.c names it, formats.h says what it gives): one trace from its
 * source, or, with no source, the run in opt->run_paths (the files
 * pb_statprofiler_run found, read as pb_statprofiler_files reads them). */
struct pb_fold_decoder;
extern const struct pb_fold_decoder pb_statprofiler_decoder;

#endif
