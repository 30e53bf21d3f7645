/* error.h - the one error record every C function fills.
 *
 * C code never prints, croaks or exits: it returns a status (pb_status) and
 * fills a pb_error.  The XS glue turns that into one exception whose text is
 *     "<format>: <class>: <what> at byte <offset> of <file>"
 * (pb_error_format() builds exactly that line).
 */
#ifndef PB_ERROR_H
#define PB_ERROR_H

#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>

typedef enum {
    PB_OK = 0,
    PB_ERR_TRUNCATED,   /* input ended inside a record */
    PB_ERR_CORRUPT,     /* bytes that can't be valid */
    PB_ERR_UNSUPPORTED, /* a valid file of a version/feature we don't read */
    PB_ERR_LIMIT,       /* a resource limit tripped */
    PB_ERR_IO,          /* the OS refused: open/read/write/rename */
    PB_ERR_ABORT,       /* the sink asked to stop (e.g. a Perl callback died) */
    PB_ERR_USAGE        /* the caller misused an API: a call out of order, a handle not ours */
} pb_status;

#define PB_ERR_MSG_MAX 512
#define PB_ERR_FILE_MAX 1024

typedef struct {
    pb_status status;
    const char *format;          /* a format's or target's name: "nytprof", ... (static string) */
    uint64_t offset;             /* byte offset in the input where it was detected */
    int has_offset;
    char message[PB_ERR_MSG_MAX];/* <what>: names the record and what was expected */
    char file[PB_ERR_FILE_MAX];  /* the input's name */
    /* set with an "a call graph, not stacks" refusal (a stack target given a
     * call-graph input), whose message ends "... a target that carries a
     * call graph": the write driver (outputs.c) names those targets after it */
    int needs_graph_target;
} pb_error;

/* "truncated", "corrupt", "unsupported", "limit", "io", "abort", "usage" */
const char *pb_status_class(pb_status st);

void pb_error_init(pb_error *e, const char *format, const char *file);
/* Fill the record (first error wins: a second call does not overwrite) and
 * return st, so decoders can `return pb_fail(...)`. */
pb_status pb_fail(pb_error *e, pb_status st, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Same, for errors that have no meaningful offset (open failures). */
pb_status pb_fail_nooff(pb_error *e, pb_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* pb_fail_nooff for a writer's own printf-style failure helper */
pb_status pb_vfail_nooff(pb_error *e, pb_status st, const char *fmt, va_list ap);
/* An output that could not be written: "cannot write <what>: <strerror(e)>"
 * (EIO when e is 0), class io, no offset (the record's file is the output). */
pb_status pb_fail_write(pb_error *e, const char *what, int errnum);
/* bytes of s as a message may show them: control bytes (C0, DEL, and C1
 * as UTF-8) as \xHH, so a name from a profile cannot drive the terminal or
 * split a one-line error.  Writes at most cap - 1 bytes and a NUL. */
void pb_escape_controls(const char *s, char *out, size_t cap);
/* calloc(1, size) for a new object, or NULL after pb_fail(e, PB_ERR_LIMIT, 0,
 * "out of memory"). */
void *pb_new_zeroed(size_t size, pb_error *e);
/* Write the one-line message into buf ("<format>: <class>: <what> at byte N of F"). */
void pb_error_format(const pb_error *e, char *buf, size_t bufsize);

#endif
