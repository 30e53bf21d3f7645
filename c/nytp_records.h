/* nytp_records.h - the layouts of NYTProf's binary records
 * (the NYTProf file format spec, section 4), described once for the readers of
 * NYTProf's record stream: a reader of a dialect whose tokens are
 * NYTProf's records reads through it.  read_nytprof.c does not yet: read
 * through these layouts (even only its cold records) it measured 1.2-1.3x
 * slower on a 10 MB profile, for a cause not found yet.
 *
 * A layout lists a record's fields in file order: the kind (NYTProf u32
 * varint, 8-byte NV, NYTProf string), where the value goes in a nytp_rec,
 * and the field's name for the messages ("SUB_INFO record needs 3 more
 * bytes for its first line, ...").  nytp_read_record() reads a record by
 * its layout with the reader primitives of reader.h; what differs between
 * the two readers' string reads (the limit message, whether a length past
 * the end of a plain file is truncation) is set once in the nytp_rec.
 *
 * The records a profile holds millions of have their own inline reads:
 * nytp_read_time() (TIME_LINE, TIME_BLOCK) here; SUB_ENTRY and SUB_RETURN
 * are read by read_nytprof.c alone (the dialects never write them).  The
 * layouts serve the colder records.
 */
#ifndef PB_NYTP_RECORDS_H
#define PB_NYTP_RECORDS_H

#include <stdlib.h>
#include "reader.h"

enum { NYTP_U32, NYTP_NV, NYTP_STR };

typedef struct {
    unsigned char kind; /* NYTP_U32, NYTP_NV, NYTP_STR */
    unsigned char at;   /* index into nytp_rec's u, nv or s */
    const char *name;   /* for the messages */
} nytp_field;

typedef struct {
    const char *name;   /* the record, for the messages */
    unsigned char n;    /* fields */
    nytp_field f[9];
} nytp_layout;

enum { NYTP_NEW_FID, NYTP_SRC_LINE, NYTP_SUB_INFO, NYTP_SUB_CALLERS, NYTP_PID_START, NYTP_PID_END };

#define U_(at, name) { NYTP_U32, at, name }
#define NV_(at, name) { NYTP_NV, at, name }
#define S_(at, name) { NYTP_STR, at, name }
static const nytp_layout nytp_layouts[] = {
    /* '@' fid, eval fid, eval line, flags, size, mtime, name */
    { "NEW_FID", 7,
      { U_(0, "fid"), U_(1, "eval fid"), U_(2, "eval line"), U_(3, "flags"), U_(4, "size"), U_(5, "mtime"),
        S_(0, "file name") } },
    /* 'S' */
    { "SRC_LINE", 3, { U_(0, "fid"), U_(1, "line"), S_(0, "source text") } },
    /* 's' */
    { "SUB_INFO", 4, { U_(0, "fid"), S_(0, "sub name"), U_(1, "first line"), U_(2, "last line") } },
    /* 'c' */
    { "SUB_CALLERS", 9,
      { U_(0, "fid"), U_(1, "line"), S_(1, "caller name"), U_(2, "call count"), NV_(0, "inclusive time"),
        NV_(1, "exclusive time"), NV_(2, "recursive time"), U_(3, "recursion depth"), S_(0, "called sub name") } },
    /* 'P' */
    { "PID_START", 3, { U_(0, "pid"), U_(1, "ppid"), NV_(0, "start time") } },
    /* 'p' */
    { "PID_END", 2, { U_(0, "pid"), NV_(0, "end time") } },
};
#undef U_
#undef NV_
#undef S_

/* a record's values, and how its reader reads strings */
typedef struct {
    uint32_t u[6];
    double nv[3];
    pb_str s[2];
    char *keep[2];              /* copies of strings that later fields' reads could move */
    size_t keepcap[2];
    int copy_all;               /* copy every string (NUL-terminated), not only those */
    int past_eof_truncates;     /* see pb_rd_nytp_str */
    const char *limit_fmt;      /* its limit message */
} nytp_rec;

static inline void nytp_rec_init(nytp_rec *v, int copy_all, int past_eof_truncates, const char *limit_fmt)
{
    memset(v, 0, sizeof *v);
    v->copy_all = copy_all;
    v->past_eof_truncates = past_eof_truncates;
    v->limit_fmt = limit_fmt;
}

static inline void nytp_rec_free(nytp_rec *v)
{
    free(v->keep[0]);
    free(v->keep[1]);
    v->keep[0] = v->keep[1] = NULL;
}

/* Record `rec` (NYTP_*), from after its tag byte; rd->rec names it. */
static pb_status nytp_read_record(pb_rd *rd, nytp_rec *v, int rec)
{
    const nytp_layout *L = &nytp_layouts[rec];
    pb_status st = PB_OK;
    unsigned i;
    rd->rec = L->name;
    for (i = 0; i < L->n && st == PB_OK; i++) {
        const nytp_field *f = &L->f[i];
        if (f->kind == NYTP_U32)
            st = pb_rd_nytp_u32(rd, &v->u[f->at], f->name);
        else if (f->kind == NYTP_NV)
            st = pb_rd_le_f64(rd, &v->nv[f->at], f->name);
        else if (v->copy_all || i + 1 < L->n) /* fields follow: copied */
            st = pb_rd_nytp_str(rd, &v->s[f->at], &v->keep[f->at], &v->keepcap[f->at], f->name,
                                v->past_eof_truncates, v->limit_fmt);
        else
            st = pb_rd_nytp_str(rd, &v->s[f->at], NULL, NULL, f->name, v->past_eof_truncates, v->limit_fmt);
    }
    return st;
}

/* TIME_LINE ('+': ticks, fid, line) or, with block, TIME_BLOCK ('*': then
 * block line, sub line) into v[0..2] or v[0..4]; inline, for the hot loop */
static inline pb_status nytp_read_time(pb_rd *rd, int block, uint32_t *v)
{
    pb_status st;
    rd->rec = block ? "TIME_BLOCK" : "TIME_LINE";
    if ((st = pb_rd_nytp_u32(rd, &v[0], "ticks")) != PB_OK || (st = pb_rd_nytp_u32(rd, &v[1], "fid")) != PB_OK ||
        (st = pb_rd_nytp_u32(rd, &v[2], "line")) != PB_OK || !block)
        return st;
    if ((st = pb_rd_nytp_u32(rd, &v[3], "block line")) != PB_OK)
        return st;
    return pb_rd_nytp_u32(rd, &v[4], "sub line");
}

/* A text record (nytprof-format.md 3: '#' COMMENT, ':' ATTRIBUTE, '!'
 * OPTION), from after its tag byte; rd->rec names it.  *line: the bytes up
 * to and including "\n" (in the window); for ':' and '!', *kv = 1 and the
 * key and value around the first '=', or *kv = 0 when there is none
 * (NYTProf skips such a line: NYTP_TEXT_MALFORMED). */
static inline int nytp_text_tag(int tag) { return tag == '#' || tag == ':' || tag == '!'; }

#define NYTP_TEXT_MALFORMED "%s malformed (no '=') at byte %llu, skipped"

static pb_status nytp_read_text(pb_rd *rd, unsigned char tag, uint64_t max_line, pb_str *line, pb_str *key,
                                pb_str *val, int *kv)
{
    const char *p, *eq;
    size_t len;
    pb_status st;
    rd->rec = tag == '#' ? "COMMENT" : tag == ':' ? "ATTRIBUTE" : "OPTION";
    if ((st = pb_rd_line(rd, &p, &len, max_line)) != PB_OK)
        return st;
    *line = pb_str_make(p, len, 0);
    eq = tag == '#' ? NULL : (const char *)memchr(p, '=', len - 1);
    *kv = eq != NULL;
    if (eq) {
        *key = pb_str_make(p, (size_t)(eq - p), 0);
        *val = pb_str_make(eq + 1, len - 1 - (size_t)(eq + 1 - p), 0);
    }
    return PB_OK;
}

#endif
