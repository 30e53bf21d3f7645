/* read_nytprof.c - Devel::NYTProf v5 decoder (the NYTProf file format spec).
 *
 * Produces exactly the chunk stream NYTProf 6.12's for_chunks delivers:
 * VERSION from the first line, then one chunk per tag byte until EOF; text
 * chunks anywhere; after `z` the rest of the file is one zlib stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nytp_codec.h"
#include "options.h"
#include "formats.h"
#include "reader.h"
#include "util.h"

typedef struct {
    pb_source *s;
    pb_error *err;
    pb_sink *sink;
    pb_rd rd;            /* the cursor; rd.rec: record being read, for messages */
    uint64_t rec_off;    /* where it started */
    char *scratch[2];    /* copies of strings that later reads could move */
    size_t scap[2];
    int deflated;
    /* salvage: processes still open, to close them with a PID_END */
    int salvage;
    struct nyt_open { uint32_t pid; double start; } *open;
    size_t nopen, copen;
    double ticks;         /* TIME_LINE/TIME_BLOCK ticks seen */
    double ticks_per_sec; /* ATTRIBUTE ticks_per_sec */
    int have_overhead;    /* ATTRIBUTE cumulative_overhead_ticks seen */
    uint32_t ret_depth;   /* depth of the last SUB_RETURN */
} nyt_rd;

/* at most this many open processes are tracked for salvage */
#define NYT_MAX_OPEN 65536

static void track_pid_start(nyt_rd *r, uint32_t pid, double t)
{
    if (r->nopen >= NYT_MAX_OPEN || pb_grow((void **)&r->open, &r->copen, r->nopen + 1, sizeof *r->open) < 0)
        return;
    r->open[r->nopen].pid = pid;
    r->open[r->nopen].start = t;
    r->nopen++;
}

static void track_pid_end(nyt_rd *r, uint32_t pid)
{
    size_t i;
    for (i = r->nopen; i-- > 0;)
        if (r->open[i].pid == pid) {
            r->open[i] = r->open[--r->nopen];
            return;
        }
}

/* salvage: a PID_END for every process the cut left open, at its start time
 * plus the ticks seen (nytprofhtml needs the pair, with a positive span) */
static pb_status close_open_pids(nyt_rd *r)
{
    pb_chunk c;
    size_t i;
    double span = r->ticks_per_sec > 0 ? r->ticks / r->ticks_per_sec : 0;
    if (!(span > 1e-6))
        span = 1e-6;
    memset(&c, 0, sizeof c);
    /* written at the end of a run: Devel::NYTProf::Data divides by it */
    if (!r->have_overhead && pb_emit_attribute(r->sink, "cumulative_overhead_ticks", "0"))
        return PB_ERR_ABORT;
    /* calls still active at the cut: nytprofcalls wants every SUB_RETURN
     * depth closed down to 1 (their names are not in the file) */
    if (r->ret_depth > 1 && r->ret_depth <= 100000) {
        uint32_t d;
        for (d = r->ret_depth - 1; d >= 1; d--) {
            pb_chunk_sub_return(&c, d, 0.0, 0.0, pb_str_c("main::__UNRETURNED_AT_CUT__"));
            if (pb_emit(r->sink, &c))
                return PB_ERR_ABORT;
        }
    }
    for (i = 0; i < r->nopen; i++) {
        pb_chunk_pid_end(&c, r->open[i].pid, r->open[i].start + span);
        if (pb_emit(r->sink, &c))
            return PB_ERR_ABORT;
    }
    r->nopen = 0;
    return PB_OK;
}

static inline pb_status rd_u32(nyt_rd *r, uint32_t *v, const char *field)
{
    return pb_rd_nytp_u32(&r->rd, v, field);
}

static inline pb_status rd_nv(nyt_rd *r, double *v, const char *field)
{
    return pb_rd_le_f64(&r->rd, v, field);
}

/* Read a string; if keep >= 0 it is copied to scratch[keep] so that later
 * reads of the same record cannot move it.  A length past the end of a plain
 * file is truncation, not a limit. */
static pb_status nytprof_rd_str(nyt_rd *r, pb_str *out, int keep, const char *field)
{
    return pb_rd_nytp_str(&r->rd, out, keep >= 0 ? &r->scratch[keep] : NULL, keep >= 0 ? &r->scap[keep] : NULL,
                          field, 1, "%s record: %s of %u bytes is longer than max_record_size (%llu bytes)");
}

/* A text chunk: the bytes up to and including "\n".  *len includes it. */
static pb_status nytprof_rd_line(nyt_rd *r, const char **line, size_t *len)
{
    return pb_rd_line(&r->rd, line, len, r->rd.max_record);
}

/* A file converted from another format (ATTRIBUTE source_format, as every
 * foreign decoder writes it) carries that format's facts: the row its name
 * gives, handed on to the sink (pb_sink.row) before the ATTRIBUTE itself;
 * NULL for a name no row has ("merged") */
static const pb_format_row *converted_from(pb_str fmt)
{
    char name[32];
    if (fmt.len >= sizeof name || memchr(fmt.ptr, 0, fmt.len))
        return NULL;
    memcpy(name, fmt.ptr, fmt.len);
    name[fmt.len] = '\0';
    return pb_format_get(pb_format_from_name(name));
}

static pb_status nytprof_text_chunk(nyt_rd *r, unsigned char tag)
{
    const char *line;
    size_t len;
    pb_chunk c;
    pb_status st;
    const char *eq;
    r->rd.rec = tag == '#' ? "COMMENT" : tag == ':' ? "ATTRIBUTE" : "OPTION";
    if ((st = nytprof_rd_line(r, &line, &len)) != PB_OK)
        return st;
    if (tag == '#') {
        pb_chunk_comment(&c, pb_str_make(line, len, 0));
        return pb_emit(r->sink, &c) ? PB_ERR_ABORT : PB_OK;
    }
    eq = (const char *)memchr(line, '=', len - 1);
    if (!eq) {
        /* NYTProf logs "attribute malformed" and skips it */
        if (r->sink->warn) {
            char msg[160];
            snprintf(msg, sizeof msg, "nytprof: %s malformed (no '=') at byte %llu, skipped",
                     r->rd.rec, (unsigned long long)r->rec_off);
            r->sink->warn(r->sink, msg);
        }
        return PB_OK;
    }
    {
        pb_str key = pb_str_make(line, (size_t)(eq - line), 0);
        pb_str val = pb_str_make(eq + 1, len - 1 - (size_t)(eq + 1 - line), 0);
        if (tag == ':' && key.len == 7 && memcmp(key.ptr, "nv_size", 7) == 0 &&
            !(val.len == 1 && val.ptr[0] == '8'))
            return pb_fail(r->err, PB_ERR_UNSUPPORTED, r->rec_off,
                           "profile written with nv_size=%.*s; this reader handles nv_size=8 (IEEE double)",
                           (int)(val.len > 20 ? 20 : val.len), val.ptr);
        if (tag == ':' && r->salvage && key.len == 13 && memcmp(key.ptr, "ticks_per_sec", 13) == 0) {
            char num[32];
            size_t n = val.len < sizeof num - 1 ? val.len : sizeof num - 1;
            memcpy(num, val.ptr, n);
            num[n] = '\0';
            r->ticks_per_sec = strtod(num, NULL);
        }
        if (tag == ':' && key.len == 25 && memcmp(key.ptr, "cumulative_overhead_ticks", 25) == 0)
            r->have_overhead = 1;
        if (tag == ':' && key.len == 13 && memcmp(key.ptr, "source_format", 13) == 0)
            r->sink->row = converted_from(val);
        if (tag == ':')
            pb_chunk_attribute(&c, key, val);
        else
            pb_chunk_option(&c, key, val);
    }
    return pb_emit(r->sink, &c) ? PB_ERR_ABORT : PB_OK;
}

/* The first line, parsed as NYTProf 6.12's reader does: sscanf(line,
 * "NYTProf %d %d\n") on the whole line, whatever its length, so any white
 * space (or none) between the fields, signs, leading zeros and trailing text
 * are accepted; the major version must be 5; a minor above 0 only warns; the
 * minor is delivered as NYTProf delivers it (as an unsigned 32-bit value). */
static pb_status nytprof_read_header(nyt_rd *r)
{
    const char *line;
    size_t len;
    pb_status st;
    int major = -1, minor = -1, fields;
    char *tmp;
    pb_chunk c;
    r->rd.rec = "header";
    if (pb_src_need(r->s, 7) <= 0 || memcmp(r->s->p, "NYTProf", 7) != 0) {
        if (r->err->status)
            return r->err->status;
        return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(r->s),
                       "not a NYTProf file: it does not start with \"NYTProf\"");
    }
    if ((st = nytprof_rd_line(r, &line, &len)) != PB_OK)
        return st;
    if (!(tmp = pb_memdup0(line, len)))
        return pb_fail(r->err, PB_ERR_LIMIT, 0, "out of memory for the %zu-byte header line", len);
    fields = sscanf(tmp, "NYTProf %d %d\n", &major, &minor);
    free(tmp);
    if (fields < 2)
        return pb_fail(r->err, PB_ERR_CORRUPT, 0, "header line is not \"NYTProf <major> <minor>\"");
    if (major != 5)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, 0,
                       "NYTProf file format version %d.%d; this reader handles major version 5", major, minor);
    if (minor > 0 && r->sink->warn) {
        char msg[128];
        snprintf(msg, sizeof msg, "nytprof: file format version 5.%d is newer than 5.0; reading it anyway", minor);
        r->sink->warn(r->sink, msg);
    }
    pb_chunk_version(&c, (uint32_t)major, (uint32_t)minor);
    return pb_emit(r->sink, &c) ? PB_ERR_ABORT : PB_OK;
}

#define RET(x) do { if ((st = (x)) != PB_OK) return st; } while (0)

/* NEW_FID, SRC_LINE, SUB_INFO, SUB_CALLERS, PID_START, PID_END into *c */
/* Over 80 lines, kept whole: one switch over the table records of the stream, each case reading its
 * fields. */
static pb_status rd_tables(nyt_rd *r, unsigned char tag, pb_chunk *c)
{
    pb_status st;
    switch (tag) {
    case '@':
        r->rd.rec = "NEW_FID";
        {
            uint32_t v[6];
            pb_str name;
            RET(rd_u32(r, &v[0], "fid"));
            RET(rd_u32(r, &v[1], "eval fid"));
            RET(rd_u32(r, &v[2], "eval line"));
            RET(rd_u32(r, &v[3], "flags"));
            RET(rd_u32(r, &v[4], "size"));
            RET(rd_u32(r, &v[5], "mtime"));
            RET(nytprof_rd_str(r, &name, -1, "file name"));
            pb_chunk_new_fid(c, v[0], v[1], v[2], v[3], v[4], v[5], name);
        }
        return PB_OK;
    case 'S':
        r->rd.rec = "SRC_LINE";
        {
            uint32_t fid, line;
            pb_str text;
            RET(rd_u32(r, &fid, "fid"));
            RET(rd_u32(r, &line, "line"));
            RET(nytprof_rd_str(r, &text, -1, "source text"));
            pb_chunk_src_line(c, fid, line, text);
        }
        return PB_OK;
    case 's':
        r->rd.rec = "SUB_INFO";
        {
            uint32_t fid, first, last;
            pb_str name;
            RET(rd_u32(r, &fid, "fid"));
            RET(nytprof_rd_str(r, &name, 0, "sub name"));
            RET(rd_u32(r, &first, "first line"));
            RET(rd_u32(r, &last, "last line"));
            pb_chunk_sub_info(c, fid, first, last, name);
        }
        return PB_OK;
    case 'c':
        r->rd.rec = "SUB_CALLERS";
        {
            uint32_t fid, line, count, depth;
            double incl = 0, excl = 0, reci = 0;
            pb_str caller, called;
            RET(rd_u32(r, &fid, "fid"));
            RET(rd_u32(r, &line, "line"));
            RET(nytprof_rd_str(r, &caller, 0, "caller name"));
            RET(rd_u32(r, &count, "call count"));
            RET(rd_nv(r, &incl, "inclusive time"));
            RET(rd_nv(r, &excl, "exclusive time"));
            RET(rd_nv(r, &reci, "recursive time"));
            RET(rd_u32(r, &depth, "recursion depth"));
            RET(nytprof_rd_str(r, &called, -1, "called sub name"));
            pb_chunk_sub_callers(c, fid, line, count, incl, excl, reci, depth, called, caller);
        }
        return PB_OK;
    case 'P':
        r->rd.rec = "PID_START";
        {
            uint32_t pid, ppid;
            double t = 0;
            RET(rd_u32(r, &pid, "pid"));
            RET(rd_u32(r, &ppid, "ppid"));
            RET(rd_nv(r, &t, "start time"));
            pb_chunk_pid_start(c, pid, ppid, t);
            if (r->salvage)
                track_pid_start(r, pid, t);
        }
        return PB_OK;
    case 'p':
        r->rd.rec = "PID_END";
        {
            uint32_t pid;
            double t = 0;
            RET(rd_u32(r, &pid, "pid"));
            RET(rd_nv(r, &t, "end time"));
            pb_chunk_pid_end(c, pid, t);
            if (r->salvage)
                track_pid_end(r, pid);
        }
        return PB_OK;
    }
    return PB_OK;
}

/* one record of fixed fields into *c: TIME_LINE, DISCOUNT, SUB_RETURN, SUB_ENTRY,
 * TIME_BLOCK here, the others in rd_tables() */
static pb_status rd_record(nyt_rd *r, unsigned char tag, pb_chunk *c)
{
    pb_status st;
    switch (tag) {
    case '+':
        r->rd.rec = "TIME_LINE";
        {
            uint32_t t, fid, line;
            RET(rd_u32(r, &t, "ticks"));
            RET(rd_u32(r, &fid, "fid"));
            RET(rd_u32(r, &line, "line"));
            pb_chunk_time_line(c, (int32_t)t, fid, line);
            r->ticks += (int32_t)t;
        }
        return PB_OK;
    case '-':
        pb_chunk_discount(c);
        return PB_OK;
    case '<':
        r->rd.rec = "SUB_RETURN";
        {
            uint32_t depth;
            double incl = 0, excl = 0;
            pb_str name;
            RET(rd_u32(r, &depth, "depth"));
            RET(rd_nv(r, &incl, "inclusive ticks"));
            RET(rd_nv(r, &excl, "exclusive ticks"));
            RET(nytprof_rd_str(r, &name, -1, "sub name"));
            pb_chunk_sub_return(c, depth, incl, excl, name);
            r->ret_depth = depth;
        }
        return PB_OK;
    case '>':
        r->rd.rec = "SUB_ENTRY";
        {
            uint32_t fid, line;
            RET(rd_u32(r, &fid, "fid"));
            RET(rd_u32(r, &line, "line"));
            pb_chunk_sub_entry(c, fid, line);
        }
        return PB_OK;
    case '*':
        r->rd.rec = "TIME_BLOCK";
        {
            uint32_t t, fid, line, bl, sl;
            RET(rd_u32(r, &t, "ticks"));
            RET(rd_u32(r, &fid, "fid"));
            RET(rd_u32(r, &line, "line"));
            RET(rd_u32(r, &bl, "block line"));
            RET(rd_u32(r, &sl, "sub line"));
            pb_chunk_time_block(c, (int32_t)t, fid, line, bl, sl);
            r->ticks += (int32_t)t;
        }
        return PB_OK;
    }
    return rd_tables(r, tag, c);
}

#undef RET

/* a byte that starts no record */
static pb_status bad_tag(nyt_rd *r, unsigned char tag)
{
    if (tag == NYTP_STRING || tag == NYTP_STRING_UTF8)
        return pb_fail(r->err, PB_ERR_CORRUPT, r->rec_off, "a string prefix (0x%02x) where a tag byte was expected",
                       tag);
    if (tag >= 0x20 && tag < 0x7f)
        return pb_fail(r->err, PB_ERR_CORRUPT, r->rec_off, "unknown tag 0x%02x ('%c')", tag, tag);
    return pb_fail(r->err, PB_ERR_CORRUPT, r->rec_off, "unknown tag 0x%02x", tag);
}

#define TRY(x) do { if ((st = (x)) != PB_OK) goto done; } while (0)
#define EMIT() do { if (pb_emit(sink, &c)) { st = PB_ERR_ABORT; goto done; } } while (0)

static void nyt_cleanup(void *p)
{
    nyt_rd *r = (nyt_rd *)p;
    free(r->scratch[0]);
    free(r->scratch[1]);
    free(r->open);
    free(r);
}

/* Over 80 lines, kept whole: the reader's one loop with its setup, salvage and release paths, so
 * every path frees the reader. */
pb_status pb_read_nytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    nyt_rd *r;
    pb_status st;
    pb_chunk c;
    uint64_t seq0 = sink->seq;
    /* on the heap, so that a consumer that never returns can release it */
    r = (nyt_rd *)calloc(1, sizeof *r);
    if (!r)
        return pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
    pb_sink_defer(sink, nyt_cleanup, r);
    r->s = src;
    r->err = err;
    r->sink = sink;
    pb_rd_init(&r->rd, src, err, PB_RD_SHORT_RECORD, opt ? opt->max_record_size : 0);
    r->salvage = opt && opt->salvage;
    memset(&c, 0, sizeof c);

    TRY(nytprof_read_header(r));
    for (;;) {
        unsigned char tag;
        int got;
        if (src->p < src->end) {
            got = 1;
        } else {
            got = pb_src_need(src, 1);
            if (got < 0) {
                st = err->status;
                goto done;
            }
            if (got == 0)
                break; /* clean end of stream */
        }
        r->rec_off = pb_src_offset(src);
        tag = *src->p++;
        switch (tag) {
        case '+':
        case '-':
        case '<':
        case '>':
        case '*':
        case '@':
        case 'S':
        case 's':
        case 'c':
        case 'P':
        case 'p':
            TRY(rd_record(r, tag, &c));
            EMIT();
            break;
        case '#':
        case ':':
        case '!':
            TRY(nytprof_text_chunk(r, tag));
            break;
        case 'z':
            if (r->deflated) {
                st = pb_fail(err, PB_ERR_CORRUPT, r->rec_off,
                             "second START_DEFLATE ('z') inside the compressed stream");
                goto done;
            }
            pb_chunk_start_deflate(&c);
            EMIT();
            r->deflated = 1;
            TRY(pb_src_start_zlib(src));
            break;
        default:
            st = bad_tag(r, tag);
            goto done;
        }
    }
    st = PB_OK;
done:
    if (st == PB_ERR_TRUNCATED && r->salvage && sink->seq > seq0) {
        uint64_t n = sink->seq - seq0;
        if (close_open_pids(r) != PB_OK) {
            st = PB_ERR_ABORT;
            err->status = PB_ERR_ABORT;
        }
        else {
            pb_src_error_to_file(src, err); /* the cut's offset in the file, not in the inflated data */
            st = pb_salvage_warn(err, sink, "%llu chunk%s", (unsigned long long)n, n == 1 ? "" : "s");
        }
    }
    return pb_decoder_done(sink, nyt_cleanup, r, st, err);
}
