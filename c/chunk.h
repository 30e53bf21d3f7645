/* chunk.h - the chunk vocabulary shared by every decoder and writer.
 *
 * A chunk is exactly one Devel::NYTProf::ReadStream callback (NYTProf 6.12):
 * the same tag names, the same arguments in the same order and of the same
 * types.  See the NYTProf file format spec, section 3.
 *
 * Arguments are stored by kind, in callback order within each kind:
 *   'u' unsigned ints  -> u[0..]     (fid, line, pid, count, ...)
 *   'i' the I32 tick count of TIME_LINE/TIME_BLOCK -> ticks
 *   'n' NVs            -> n[0..]     (times; SUB_CALLERS times are seconds)
 *   's' strings        -> s[0..]
 * pb_tag_sig[tag] spells the callback's argument signature ("iuu" for
 * TIME_LINE), so a consumer can walk the arguments generically, and the
 * pb_chunk_* constructors below name them for the producers.
 *
 * Strings point into memory owned by the producer and are valid only for the
 * duration of the sink call.  Plain C99; no Perl headers.
 */
#ifndef PB_CHUNK_H
#define PB_CHUNK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum {
    PB_T_VERSION = 0,
    PB_T_COMMENT,
    PB_T_ATTRIBUTE,
    PB_T_OPTION,
    PB_T_START_DEFLATE,
    PB_T_PID_START,
    PB_T_PID_END,
    PB_T_NEW_FID,
    PB_T_TIME_LINE,
    PB_T_TIME_BLOCK,
    PB_T_DISCOUNT,
    PB_T_SRC_LINE,
    PB_T_SUB_INFO,
    PB_T_SUB_CALLERS,
    PB_T_SUB_ENTRY,
    PB_T_SUB_RETURN,
    PB_TAG_COUNT
} pb_tag;

/* tag names exactly as for_chunks passes them */
extern const char *const pb_tag_name[PB_TAG_COUNT];
/* argument signatures, as in NYTProf.xs callback_info[] */
extern const char *const pb_tag_sig[PB_TAG_COUNT];
/* PB_TAG_COUNT when the name is unknown */
pb_tag pb_tag_from_name(const char *name, size_t len);

typedef struct {
    const char *ptr;
    size_t len;
    int utf8; /* 1: the bytes are UTF-8 and the Perl string is flagged (STRING_UTF8) */
} pb_str;

typedef struct {
    pb_tag tag;
    int32_t ticks;   /* 'i' */
    uint32_t u[6];   /* 'u' in order */
    double n[3];     /* 'n' in order */
    pb_str s[2];     /* 's' in order */
} pb_chunk;

/* NEW_FID flags (NYTProf.xs) */
#define PB_FID_IS_PMC       0x001
#define PB_FID_VIA_STMT     0x002
#define PB_FID_VIA_SUB      0x004
#define PB_FID_IS_AUTOSPLIT 0x008
#define PB_FID_HAS_SRC      0x010
#define PB_FID_SAVE_SRC     0x020
#define PB_FID_IS_ALIAS     0x040
#define PB_FID_IS_FAKE      0x080
#define PB_FID_IS_EVAL      0x100

/* ---- the sink: where chunks go -------------------------------------- */
typedef struct pb_sink pb_sink;

/* What producers own while they call a sink that may never return to them.
 * A Perl callback that dies leaves through longjmp, past every C frame of
 * the decode; the XS layer then runs these (newest first) when it releases
 * the sink.  Each context is heap memory and is freed by its function. */
#define PB_MAX_CLEANUPS 8
typedef struct pb_cleanups {
    struct {
        void (*fn)(void *ctx);
        void *ctx;
    } e[PB_MAX_CLEANUPS];
    int n;
} pb_cleanups;
struct pb_sink {
    /* Called once per chunk, in stream order.  Return 0 to go on; any other
     * value stops the decoder, which returns PB_ERR_ABORT (the sink keeps
     * its own reason, e.g. a Perl exception). */
    int (*chunk)(pb_sink *self, const pb_chunk *c);
    /* Optional: a non-fatal diagnostic from a decoder ("<format>: file
     * has 0 blocks ..."). NULL means drop it. */
    void (*warn)(pb_sink *self, const char *msg);
    /* Optional fast filter: wants[tag] == 0 means the sink ignores that tag,
     * so producers may skip building it.  NULL means every tag is wanted. */
    const unsigned char *wants;
    /* Optional, with wants: per tag, the chunks a producer skipped because
     * the sink does not want them (pb_sink_skip), for a sink that counts
     * what it does not read (info).  NULL: only seq counts them. */
    uint64_t *skipped;
    /* Chunks produced so far, filtered ones included.  Inside chunk(),
     * seq - 1 is this chunk's sequence number (for_chunks' $.: VERSION is 0). */
    uint64_t seq;
    void *ctx;
    /* Optional: set by a consumer that can leave without returning (see
     * pb_cleanups); NULL when chunk() and warn() always return. */
    pb_cleanups *cleanups;
    /* The format whose facts the stream carries, typed (format_row.h): its
     * producer's row, set by the driver (formats.c) before the decoder runs;
     * the NYTProf decoder hands on the row its file's ATTRIBUTE source_format
     * names (a file converted from another format).  NULL: none (a merge).
     * The presentation filter reads it (present.c). */
    const struct pb_format_row *row;
};

static inline int pb_sink_wants(const pb_sink *s, pb_tag t)
{
    return s->wants == NULL || s->wants[t];
}

/* n chunks of tag t the sink does not want, not built: still counted (seq, skipped) */
static inline void pb_sink_skip(pb_sink *s, pb_tag t, uint64_t n)
{
    s->seq += n;
    if (s->skipped)
        s->skipped[t] += n;
}

/* Register heap state that fn(ctx) frees, for as long as this producer may
 * call the consumer; remove it before freeing it normally.  A NULL table
 * means the consumer always returns; a full one only means that memory is
 * not reclaimed after a longjmp. */
static inline void pb_cleanups_add(pb_cleanups *c, void (*fn)(void *), void *ctx)
{
    if (!c || !ctx || c->n >= PB_MAX_CLEANUPS)
        return;
    c->e[c->n].fn = fn;
    c->e[c->n].ctx = ctx;
    c->n++;
}

static inline void pb_cleanups_remove(pb_cleanups *c, void *ctx)
{
    int i;
    if (!c || !ctx)
        return;
    for (i = c->n - 1; i >= 0; i--)
        if (c->e[i].ctx == ctx) {
            for (; i + 1 < c->n; i++)
                c->e[i] = c->e[i + 1];
            c->n--;
            return;
        }
}

static inline void pb_sink_defer(pb_sink *s, void (*fn)(void *), void *ctx)
{
    pb_cleanups_add(s ? s->cleanups : NULL, fn, ctx);
}

static inline void pb_sink_undefer(pb_sink *s, void *ctx)
{
    pb_cleanups_remove(s ? s->cleanups : NULL, ctx);
}

/* Run (newest first) and forget whatever is still registered. */
static inline void pb_cleanups_run(pb_cleanups *c)
{
    while (c->n > 0) {
        c->n--;
        c->e[c->n].fn(c->e[c->n].ctx);
    }
}

/* ---- constructors: producers fill chunks by name, not by slot -------- */
static inline pb_str pb_str_make(const char *p, size_t len, int utf8)
{
    pb_str s;
    s.ptr = p;
    s.len = len;
    s.utf8 = utf8;
    return s;
}
static inline pb_str pb_str_c(const char *p) { return pb_str_make(p, strlen(p), 0); }

static inline void pb_chunk_version(pb_chunk *c, uint32_t major, uint32_t minor)
{ c->tag = PB_T_VERSION; c->u[0] = major; c->u[1] = minor; }
/* text includes its trailing "\n", as for_chunks delivers it */
static inline void pb_chunk_comment(pb_chunk *c, pb_str text)
{ c->tag = PB_T_COMMENT; c->s[0] = text; }
static inline void pb_chunk_attribute(pb_chunk *c, pb_str key, pb_str value)
{ c->tag = PB_T_ATTRIBUTE; c->s[0] = key; c->s[1] = value; }
static inline void pb_chunk_option(pb_chunk *c, pb_str key, pb_str value)
{ c->tag = PB_T_OPTION; c->s[0] = key; c->s[1] = value; }
static inline void pb_chunk_start_deflate(pb_chunk *c) { c->tag = PB_T_START_DEFLATE; }
static inline void pb_chunk_pid_start(pb_chunk *c, uint32_t pid, uint32_t ppid, double time_of_day)
{ c->tag = PB_T_PID_START; c->u[0] = pid; c->u[1] = ppid; c->n[0] = time_of_day; }
static inline void pb_chunk_pid_end(pb_chunk *c, uint32_t pid, double time_of_day)
{ c->tag = PB_T_PID_END; c->u[0] = pid; c->n[0] = time_of_day; }
static inline void pb_chunk_new_fid(pb_chunk *c, uint32_t fid, uint32_t eval_fid, uint32_t eval_line,
                                    uint32_t flags, uint32_t size, uint32_t mtime, pb_str name)
{
    c->tag = PB_T_NEW_FID;
    c->u[0] = fid; c->u[1] = eval_fid; c->u[2] = eval_line;
    c->u[3] = flags; c->u[4] = size; c->u[5] = mtime;
    c->s[0] = name;
}
static inline void pb_chunk_time_line(pb_chunk *c, int32_t ticks, uint32_t fid, uint32_t line)
{ c->tag = PB_T_TIME_LINE; c->ticks = ticks; c->u[0] = fid; c->u[1] = line; }
static inline void pb_chunk_time_block(pb_chunk *c, int32_t ticks, uint32_t fid, uint32_t line,
                                       uint32_t block_line, uint32_t sub_line)
{
    c->tag = PB_T_TIME_BLOCK; c->ticks = ticks;
    c->u[0] = fid; c->u[1] = line; c->u[2] = block_line; c->u[3] = sub_line;
}
static inline void pb_chunk_discount(pb_chunk *c) { c->tag = PB_T_DISCOUNT; }
static inline void pb_chunk_src_line(pb_chunk *c, uint32_t fid, uint32_t line, pb_str text)
{ c->tag = PB_T_SRC_LINE; c->u[0] = fid; c->u[1] = line; c->s[0] = text; }
static inline void pb_chunk_sub_info(pb_chunk *c, uint32_t fid, uint32_t first_line,
                                     uint32_t last_line, pb_str name)
{ c->tag = PB_T_SUB_INFO; c->u[0] = fid; c->u[1] = first_line; c->u[2] = last_line; c->s[0] = name; }
/* incl/excl/reci_time are seconds, as NYTProf writes SUB_CALLERS */
static inline void pb_chunk_sub_callers(pb_chunk *c, uint32_t fid, uint32_t line, uint32_t count,
                                        double incl, double excl, double reci, uint32_t rec_depth,
                                        pb_str called, pb_str caller)
{
    c->tag = PB_T_SUB_CALLERS;
    c->u[0] = fid; c->u[1] = line; c->u[2] = count; c->u[3] = rec_depth;
    c->n[0] = incl; c->n[1] = excl; c->n[2] = reci;
    c->s[0] = called; c->s[1] = caller;
}
static inline void pb_chunk_sub_entry(pb_chunk *c, uint32_t fid, uint32_t line)
{ c->tag = PB_T_SUB_ENTRY; c->u[0] = fid; c->u[1] = line; }
/* incl/excl are ticks (NV) */
static inline void pb_chunk_sub_return(pb_chunk *c, uint32_t depth, double incl, double excl, pb_str subname)
{ c->tag = PB_T_SUB_RETURN; c->u[0] = depth; c->n[0] = incl; c->n[1] = excl; c->s[0] = subname; }

/* Send one chunk, honouring the sink's filter.  Returns the sink's status. */
static inline int pb_emit(pb_sink *s, const pb_chunk *c)
{
    if (s->wants && !s->wants[c->tag]) {
        pb_sink_skip(s, c->tag, 1);
        return 0;
    }
    s->seq++;
    return s->chunk(s, c);
}

/* Convenience for producers of text chunks. */
int pb_emit_attribute(pb_sink *s, const char *key, const char *value);
int pb_emit_attribute_u64(pb_sink *s, const char *key, uint64_t value);
int pb_emit_attribute_double(pb_sink *s, const char *key, double value);
/* value in its shortest "%.*g" form (15 to 17 digits) that reads back as
 * the same double, into buf (64 bytes are enough); returns buf */
char *pb_fmt_double(char *buf, size_t size, double value);
int pb_emit_comment(pb_sink *s, const char *text_with_newline);

/* A sink that counts chunks per tag (profbridge info). */
typedef struct {
    pb_sink sink;
    uint64_t count[PB_TAG_COUNT];
} pb_count_sink;
void pb_count_sink_init(pb_count_sink *cs);

#endif
