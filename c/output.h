/* output.h - the one way every writer puts bytes in a file the user named.
 *
 * Every writer (every row of outputs.c's table), through the API and the
 * CLI, opens its output here:
 *
 *   "-"                       standard output, written in place (when the
 *                             caller allows it: PB_OUT_STDOUT).
 *   a new name, or an         a temp file created with O_CREAT|O_EXCL
 *   existing regular file     (mkstemp: "<dir>/.<base>.XXXXXX", the base cut
 *                             to 64 bytes so long names work) in the target's
 *                             directory, renamed onto the target by
 *                             pb_output_commit().  An existing target keeps
 *                             its permission bits.
 *   a symlink                 followed to its final target (as cp and tar
 *                             do; at most 40 links), then as above: the
 *                             target is updated, the link stays a link.
 *   an existing device, FIFO  opened and written in place, never replaced
 *   or socket                 (a FIFO blocks until a reader opens it).
 *   a directory               an io error.
 *
 * Temp files are removed on every error path (pb_output_abort) and, while
 * they exist, when the process is killed by SIGINT, SIGTERM or SIGHUP whose
 * disposition was the default (a handler is installed only then, so a
 * program's own handlers, Perl's %SIG included, are never replaced).  Only
 * the process that created a temp file removes it: a forked child that
 * inherits an output neither writes, renames nor unlinks it
 * (pb_output_owned() tells; pb_output_forsake() drops it).
 *
 * A set of files (a target whose row writes one trace per thread) is written
 * into a private temp directory and renamed into place only when every file
 * is complete: see pb_outset_*.
 *
 * Errors go to the caller's pb_error (its format and file already set) as
 * PB_ERR_IO "cannot ...: <strerror>".  Plain C99 + POSIX; no Perl headers.
 */
#ifndef PB_OUTPUT_H
#define PB_OUTPUT_H

#include <stddef.h>
#include <stdio.h>
#include "error.h"

typedef struct pb_output pb_output;

#define PB_OUT_STDOUT 1u /* "-" means standard output */

pb_output *pb_output_open(const char *path, unsigned flags, pb_error *err);
int pb_output_fd(const pb_output *o);
/* the name bytes actually go to (the temp file, or the target in place) */
const char *pb_output_name(const pb_output *o);
/* 1: written in place (stdout, device, FIFO, socket); 0: a temp file */
int pb_output_in_place(const pb_output *o);
/* A stdio stream on the output, owned by it (closed by commit/abort).
 * Only for writers that finish within one C call (no fork in between). */
FILE *pb_output_stdio(pb_output *o, pb_error *err);
/* The whole life of a stdio output, for writers that finish within one C
 * call: open out_path (PB_OUT_STDOUT: "-" is standard output), run
 * write(fp, ctx, werr, err) and commit, or abort on any error so that the
 * target stays as it was.  Output errors (open, write, commit) read
 * "<who>: io: ..." with the target's name; write() reports a decoder's
 * error in err and its own (the writer's) in werr, which wins when set. */
typedef pb_status (*pb_output_fn)(FILE *fp, void *ctx, pb_error *werr, pb_error *err);
pb_status pb_output_with(const char *out_path, const char *who, pb_output_fn write, void *ctx, pb_error *err);
/* write all n bytes (retries short writes and EINTR) */
pb_status pb_output_write(pb_output *o, const void *p, size_t n, pb_error *err);
/* flush, optionally fsync, close, rename the temp file onto the target;
 * frees o whatever happens (on failure the temp file is removed). */
pb_status pb_output_commit(pb_output *o, int do_fsync, pb_error *err);
/* close and remove the temp file (only in the process that made it); frees o */
void pb_output_abort(pb_output *o);
/* 1 in the process (and thread group) that opened o, 0 in a forked child */
int pb_output_owned(const pb_output *o);
/* close the fd and free o without touching any file (a forked child's copy) */
void pb_output_forsake(pb_output *o);

/* Another temporary file (is_dir 0) or empty directory (1) the caller made
 * (the Perl layer's copy of standard input or a FIFO), removed as the temps
 * above are when a signal kills the process or it exits without removing
 * it: files before directories.  Returns a slot for pb_output_unguard (which
 * forgets it, removing nothing), or -1 (table full, name too long). */
int pb_output_guard(const char *path, int is_dir);
void pb_output_unguard(int slot);

/* ---- a set of files published together ---------------------------------- */
typedef struct pb_outset pb_outset;

/* The files will be named after out_path (symlinks followed as above):
 * pb_outset_commit gives each its final name.  The temp directory
 * "<dir>/.<base>.XXXXXX" (mode 0700) is made at once. */
pb_outset *pb_outset_open(const char *out_path, pb_error *err);
/* Create member i (0, 1, 2, ... in order) with O_CREAT|O_EXCL; returns an fd. */
int pb_outset_create(pb_outset *s, size_t i, pb_error *err);
/* Open member i again for appending (after its fd was closed to stay under
 * the fd limit); O_NOFOLLOW. */
int pb_outset_reopen(pb_outset *s, size_t i, pb_error *err);
/* the directory the final names are relative to ("" or "dir/") and the base */
const char *pb_outset_target(const pb_outset *s);
/* Rename member i to names[i] for every i < n (members must be closed), then
 * remove the temp directory.  With n == 1 and names[0] == the target, an
 * existing device or FIFO target is written in place by copying.  On failure
 * the members already renamed are removed again.  Frees s. */
pb_status pb_outset_commit(pb_outset *s, const char *const *names, size_t n, pb_error *err);
void pb_outset_abort(pb_outset *s);
int pb_outset_owned(const pb_outset *s);
void pb_outset_forsake(pb_outset *s);

#endif
