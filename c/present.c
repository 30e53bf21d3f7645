/* present.c - foreign profiles made to read like Perl ones (see present.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "present.h"
#include "call_events.h"
#include "util.h"

/* files larger than this are not embedded (nytprofhtml holds them whole) */
#define PB_SOURCE_MAX_BYTES (UINT64_C(64) << 20)
/* names listed in the summary warning */
#define PB_MISSING_LISTED 5

struct pb_present {
    pb_sink sink;
    pb_sink *out;
    pb_error *err;
    int active;              /* a foreign stream: ATTRIBUTE source_format seen */
    int no_source;
    const char *const *roots;
    size_t nroots;
    const char *const *strip;
    size_t nstrip;
    const char *base;
    uint32_t max_line;
    char *name[2];           /* mapped names (SUB_CALLERS has two) */
    size_t name_cap[2];
    char *path;              /* candidate path */
    size_t path_cap;
    char *line;              /* getline buffer */
    size_t line_cap;
    unsigned char *done;     /* per fid: 1 when its source was handled */
    size_t done_cap;
    uint32_t embedded, missing;
    char listed[PB_MISSING_LISTED][128];
    /* call stacks for a stream that has call edges but no call events */
    double ticks_per_sec;
    int saw_return, calls_option; /* calls_option: -1 none seen, else its value */
    char **sub;                  /* sub names (mapped), by id */
    size_t *sub_len;
    size_t nsubs, csubs, csub_len;
    pb_index subix;
    struct pe_edge {
        uint32_t caller, callee;
        double incl, excl;       /* seconds */
        uint64_t count;
    } *edges;
    size_t nedges, cedges;
    pb_index edgeix;
    /* finish: per sub totals, out-edges, the DFS path */
    double *in_incl, *own;
    uint64_t *in_count;
    uint32_t *out_first, *out_edge, *stack;
    size_t visited;
    int dry;                     /* 1: only add up the weights (into total) */
    double total, scale;         /* rebuilt ticks; factor that fits them into the run */
    double t_start, t_end;       /* first PID_START, last PID_END (seconds) */
    int saw_fid, saw_pid;        /* a NEW_FID, a PID_START went by */
    double basetime;             /* ATTRIBUTE basetime */
    pb_callev cev;
    /* Pynytprof: where its subs are defined, from the source embedded */
    int pyn;                     /* ATTRIBUTE source_format pynytprof */
    struct pe_def {
        char *name;
        size_t len;
        uint32_t fid, first, last, count; /* count: definitions of this name */
    } *defs;
    size_t ndefs, cdefs;
    pb_index defix;
    struct pe_open {
        uint32_t def, indent;
    } *open;                     /* blocks open while a file is scanned */
    size_t nopen, copen;
    uint32_t last_code, deco_line; /* last line with code; first decorator line of the next def */
    uint32_t prog_fid, prog_lines; /* the first file scanned: the program (<module>) */
};

static const char *pb_memmem(const char *h, size_t hl, const char *n, size_t nl)
{
    size_t i;
    if (!h || nl > hl)
        return NULL;
    for (i = 0; i + nl <= hl; i++)
        if (h[i] == n[0] && memcmp(h + i, n, nl) == 0)
            return h + i;
    return NULL;
}

/* ---- names ----------------------------------------------------------------- */
static int after_operator(const char *in, size_t i)
{
    size_t j = i;
    while (j > 0 && (in[j - 1] == '<' || in[j - 1] == '>' || in[j - 1] == '=' || in[j - 1] == '-' ||
                     in[j - 1] == ' '))
        j--;
    return j >= 8 && memcmp(in + j - 8, "operator", 8) == 0;
}

size_t pb_nytprof_name(const char *in, size_t len, char *out, size_t cap)
{
    size_t i, w = 0;
    int angle = 0, paren = 0;
#define PUT(ch)                      \
    do {                             \
        if (w + 1 < cap)             \
            out[w] = (char)(ch);     \
        w++;                         \
    } while (0)
    for (i = 0; i < len; i++) {
        char ch = in[i];
        if (ch == '<') {
            if (!after_operator(in, i))
                angle++;
            PUT('[');
        } else if (ch == '>') {
            if (angle > 0 && !after_operator(in, i)) {
                angle--;
                PUT(']');
            } else {
                PUT('>'); /* "operator>", "->": harmless in HTML text */
            }
        } else if (ch == '(' || ch == '{') {
            paren++;
            PUT(ch);
        } else if ((ch == ')' || ch == '}') && paren > 0) {
            paren--;
            PUT(ch);
        } else if (ch == ':' && i + 1 < len && in[i + 1] == ':' && (angle > 0 || paren > 0)) {
            PUT('.');
            i++;
        } else {
            PUT(ch);
        }
    }
    if (cap)
        out[w < cap ? w : cap - 1] = '\0';
    return w;
#undef PUT
}

static int map_name(pb_present *p, int k, pb_str *s)
{
    const char *in = s->ptr ? s->ptr : "";
    size_t n = pb_nytprof_name(in, s->len, NULL, 0);
    if (pb_grow((void **)&p->name[k], &p->name_cap[k], n + 1, 1) < 0)
        return -1;
    pb_nytprof_name(in, s->len, p->name[k], n + 1);
    s->ptr = p->name[k];
    s->len = n;
    s->utf8 = 0; /* UTF-8 bytes, unflagged, as NYTProf itself writes names */
    return 0;
}

/* ---- source ---------------------------------------------------------------- */
static int set_path(pb_present *p, const char *dir, const char *rel, size_t rlen)
{
    size_t dl = dir ? strlen(dir) : 0;
    size_t need = dl + 1 + rlen + 1;
    if (pb_grow((void **)&p->path, &p->path_cap, need, 1) < 0)
        return -1;
    if (dl) {
        memcpy(p->path, dir, dl);
        if (p->path[dl - 1] != '/')
            p->path[dl++] = '/';
    }
    memcpy(p->path + dl, rel, rlen);
    p->path[dl + rlen] = '\0';
    return 0;
}

/* open p->path if it is a regular file of a size we embed */
static FILE *try_open(pb_present *p, struct stat *sb)
{
    FILE *fp;
    if (stat(p->path, sb) != 0 || !S_ISREG(sb->st_mode) || (uint64_t)sb->st_size > PB_SOURCE_MAX_BYTES)
        return NULL;
    fp = fopen(p->path, "rb");
    return fp;
}

static FILE *find_source(pb_present *p, const char *name, size_t len, struct stat *sb, int *oom)
{
    FILE *fp;
    const char *rel = name;
    size_t rlen = len, i;
    *oom = 0;
    if (set_path(p, NULL, name, len) < 0)
        goto nomem;
    if ((fp = try_open(p, sb)) != NULL)
        return fp;
    for (i = 0; i < p->nstrip; i++) {
        size_t pl = strlen(p->strip[i]);
        if (pl && pl <= len && memcmp(name, p->strip[i], pl) == 0) {
            rel = name + pl;
            rlen = len - pl;
            break;
        }
    }
    while (rlen && *rel == '/') {
        rel++;
        rlen--;
    }
    if (!rlen)
        return NULL;
    for (i = 0; i < p->nroots; i++) {
        if (set_path(p, p->roots[i], rel, rlen) < 0)
            goto nomem;
        if ((fp = try_open(p, sb)) != NULL)
            return fp;
    }
    if (p->base && *p->base) {
        /* beside the input: the relative name, else the file's base name */
        const char *bn = rel;
        size_t bl;
        if (name[0] == '/') { /* name is not NUL-terminated: the last '/' within len */
            size_t k = len;
            while (k && name[k - 1] != '/')
                k--;
            bn = name + k;
        }
        bl = (size_t)(name + len - bn);
        if (bl && set_path(p, p->base, bn, bl) < 0)
            goto nomem;
        if (bl && (fp = try_open(p, sb)) != NULL)
            return fp;
    }
    return NULL;
nomem:
    *oom = 1;
    return NULL;
}

static int fwd(pb_present *p, const pb_chunk *c)
{
    return pb_emit(p->out, c);
}

static int pe_scan_line(pb_present *p, uint32_t fid, uint32_t line, const char *s, size_t len);
static void pe_scan_end(pb_present *p, uint32_t fid, uint32_t lines);
/* a NEW_FID sent on: its file name mapped as sub names are (a file name such
 * as "<frozen runpy>" is printed into nytprofhtml's pages unescaped too) */
static int emit_fid(pb_present *p, const pb_chunk *c)
{
    pb_chunk nc = *c;
    if (map_name(p, 0, &nc.s[0]) < 0) {
        pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while mapping names");
        return -1;
    }
    return fwd(p, &nc);
}

/* NEW_FID of a file whose source may be embedded */
static int new_fid(pb_present *p, const pb_chunk *c)
{
    pb_chunk nc = *c;
    uint32_t fid = c->u[0], line = 0;
    const pb_str *nm = &c->s[0];
    struct stat sb;
    FILE *fp;
    int oom, rc;
    ssize_t got;
    if (p->no_source || (c->u[3] & (PB_FID_SAVE_SRC | PB_FID_IS_FAKE | PB_FID_IS_EVAL)) || nm->len == 0 ||
        memchr(nm->ptr, '\0', nm->len) || nm->ptr[0] == '(' || nm->ptr[0] == '<' ||
        (nm->len == 2 && memcmp(nm->ptr, "-e", 2) == 0))
        return emit_fid(p, c);
    if (fid > (1u << 24)) /* the writer refuses such a fid anyway */
        return emit_fid(p, c);
    if (pb_grow_zero((void **)&p->done, &p->done_cap, (size_t)fid + 1, 1) < 0)
        goto nomem;
    if (p->done[fid] == 2) /* source sent already (a re-sent fid) */
        return emit_fid(p, c);
    fp = find_source(p, nm->ptr, nm->len, &sb, &oom);
    if (oom)
        goto nomem;
    if (!fp) {
        if (p->done[fid] == 0) {
            p->done[fid] = 1;
            if (p->missing < PB_MISSING_LISTED)
                snprintf(p->listed[p->missing], sizeof p->listed[0], "%.*s",
                         (int)(nm->len < 120 ? nm->len : 120), nm->ptr);
            p->missing++;
        }
        /* a file we looked for and do not have: IS_FAKE, so that nytprofhtml
         * says "no source code available" on the page instead of warning
         * "Unable to open" (it opens any other file by its name) */
        nc.u[3] |= PB_FID_IS_FAKE;
        return emit_fid(p, &nc);
    }
    p->done[fid] = 2;
    p->embedded++;
    nc.u[3] |= PB_FID_HAS_SRC | PB_FID_SAVE_SRC;
    nc.u[4] = (uint32_t)sb.st_size;
    nc.u[5] = sb.st_mtime > 0 && (uint64_t)sb.st_mtime <= UINT32_MAX ? (uint32_t)sb.st_mtime : 0;
    if ((rc = emit_fid(p, &nc)) != 0) {
        fclose(fp);
        return rc;
    }
    while (line < p->max_line && (got = getline(&p->line, &p->line_cap, fp)) > 0) {
        pb_chunk sc;
        pb_chunk_src_line(&sc, fid, ++line, pb_str_make(p->line, (size_t)got, 0));
        if ((rc = fwd(p, &sc)) != 0 || (p->pyn && pe_scan_line(p, fid, line, p->line, (size_t)got) < 0)) {
            fclose(fp);
            if (rc)
                return rc;
            goto nomem;
        }
    }
    fclose(fp);
    if (p->pyn)
        pe_scan_end(p, fid, line);
    return 0;
nomem:
    pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while embedding source");
    return -1;
}


/* ---- Pynytprof: where a Python sub starts -------------------------------------
 * Pynytprof names subs (co_name) but never says where they are defined, and a
 * sub with lines 0-0 is an xsub to nytprofhtml.  While a Pynytprof file's
 * source is embedded, its `def` / `async def` / `class` headers are noted:
 * first line = the header's, or its first decorator's (CPython's
 * co_firstlineno); last line = the last line with code before one indented no
 * deeper (blank and comment lines never end a block).  A SUB_INFO with lines
 * 0-0 whose name (after the last "::") is defined once gets that fid and those
 * lines; <module> gets the whole program file (the first file scanned).
 * Names defined more than once (two classes' methods: the file has co_name
 * only), comprehensions and lambdas, and code outside the files (runpy's
 * _run_code) keep 0-0. */
static uint32_t h_def_id(const void *ctx, uint32_t i)
{
    const pb_present *p = (const pb_present *)ctx;
    return pb_hash_bytes(p->defs[i].name, p->defs[i].len);
}

static uint32_t pe_def_find(const pb_present *p, const char *name, size_t len, size_t *slot)
{
    uint32_t i;
    size_t k;
    for (k = pb_index_first(&p->defix, pb_hash_bytes(name, len)); (i = pb_index_at(&p->defix, k)) != PB_INDEX_NONE;
         k = pb_index_next(&p->defix, k))
        if (p->defs[i].len == len && memcmp(p->defs[i].name, name, len) == 0)
            break;
    if (slot)
        *slot = k;
    return i;
}

static void pe_close(pb_present *p, uint32_t indent_le)
{
    while (p->nopen && p->open[p->nopen - 1].indent >= indent_le) {
        struct pe_def *d = &p->defs[p->open[--p->nopen].def];
        if (d->count == 1)
            d->last = p->last_code;
    }
}

/* 0, or -1 out of memory */
static int pe_scan_line(pb_present *p, uint32_t fid, uint32_t line, const char *s, size_t len)
{
    size_t i = 0, n0, k;
    uint32_t indent = 0, id;
    int is_class = 0;
    if (line == 1) {
        p->nopen = 0;
        p->last_code = p->deco_line = 0;
    }
    for (; i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f'); i++)
        indent = s[i] == '\t' ? (indent / 8 + 1) * 8 : s[i] == ' ' ? indent + 1 : 0;
    if (i == len || s[i] == '\n' || s[i] == '\r' || s[i] == '#')
        return 0; /* blank or a comment */
    pe_close(p, indent);
    if (s[i] == '@') {
        if (!p->deco_line)
            p->deco_line = line;
        p->last_code = line;
        return 0;
    }
    if (len - i > 6 && memcmp(s + i, "async", 5) == 0 && (s[i + 5] == ' ' || s[i + 5] == '\t'))
        for (i += 5; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
            ;
    if (len - i > 4 && memcmp(s + i, "def", 3) == 0 && (s[i + 3] == ' ' || s[i + 3] == '\t'))
        i += 3;
    else if (len - i > 6 && memcmp(s + i, "class", 5) == 0 && (s[i + 5] == ' ' || s[i + 5] == '\t'))
        i += 5, is_class = 1;
    else
        i = len;
    for (; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
        ;
    n0 = i;
    for (; i < len && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                       (i > n0 && s[i] >= '0' && s[i] <= '9') || (unsigned char)s[i] >= 0x80);
         i++)
        ;
    if (i > n0 && i < len && (s[i] == '(' || s[i] == ' ' || s[i] == '\t' || (is_class && s[i] == ':'))) {
        struct pe_def *d;
        if (pb_index_reserve(&p->defix, p->ndefs, h_def_id, p) < 0)
            return -1;
        id = pe_def_find(p, s + n0, i - n0, &k);
        if (id == PB_INDEX_NONE) {
            if (pb_grow((void **)&p->defs, &p->cdefs, p->ndefs + 1, sizeof *p->defs) < 0)
                return -1;
            d = &p->defs[p->ndefs];
            memset(d, 0, sizeof *d);
            if (!(d->name = (char *)malloc(i - n0 + 1)))
                return -1;
            memcpy(d->name, s + n0, i - n0);
            d->name[i - n0] = '\0';
            d->len = i - n0;
            id = (uint32_t)p->ndefs++;
            pb_index_set(&p->defix, k, id);
        }
        d = &p->defs[id];
        if (++d->count == 1) {
            d->fid = fid;
            d->first = p->deco_line ? p->deco_line : line;
            d->last = line;
        }
        if (pb_grow((void **)&p->open, &p->copen, p->nopen + 1, sizeof *p->open) < 0)
            return -1;
        p->open[p->nopen].def = id;
        p->open[p->nopen++].indent = indent;
    }
    p->deco_line = 0;
    p->last_code = line;
    return 0;
}

static void pe_scan_end(pb_present *p, uint32_t fid, uint32_t lines)
{
    pe_close(p, 0);
    if (!p->prog_fid && lines) {
        p->prog_fid = fid;
        p->prog_lines = lines;
    }
}

/* a Pynytprof SUB_INFO without lines: those of its definition, if known */
static void pe_place(pb_present *p, pb_chunk *c)
{
    const char *nm = c->s[0].ptr ? c->s[0].ptr : "";
    size_t len = c->s[0].len, j;
    uint32_t id;
    if (c->u[1] || c->u[2])
        return;
    for (j = len; j >= 2; j--)
        if (nm[j - 1] == ':' && nm[j - 2] == ':')
            break;
    if (j >= 2) {
        nm += j;
        len -= j;
    }
    if (len == 8 && memcmp(nm, "<module>", 8) == 0) {
        if (p->prog_fid) {
            c->u[0] = p->prog_fid;
            c->u[1] = 1;
            c->u[2] = p->prog_lines;
        }
        return;
    }
    if (!p->ndefs || (id = pe_def_find(p, nm, len, NULL)) == PB_INDEX_NONE || p->defs[id].count != 1)
        return;
    c->u[0] = p->defs[id].fid;
    c->u[1] = p->defs[id].first;
    c->u[2] = p->defs[id].last;
}

/* ---- call stacks from call edges ---------------------------------------------
 * A stream with SUB_CALLERS but no SUB_RETURN (Pynytprof: it records caller ->
 * callee pairs, not stacks) gets call events rebuilt from its call graph, as
 * gprof does: from each root (a sub no other sub calls), a callee appears
 * under every caller with the share of its time that came through that
 * call; a sub already on the stack is recursion and stays folded into its
 * outer frame.  A sub's own weight is its exclusive time (the sum over its
 * callers) times its share; when those add up to more than the run lasted,
 * all are scaled down to fit it. */
#define PE_MAX_DEPTH 256
#define PE_MAX_NODES 50000

static uint32_t h_edge(uint32_t caller, uint32_t callee) { return pb_mix64(((uint64_t)caller << 32) | callee); }
static uint32_t h_sub_id(const void *ctx, uint32_t i)
{
    const pb_present *p = (const pb_present *)ctx;
    return pb_hash_bytes(p->sub[i], p->sub_len[i]);
}
static uint32_t h_edge_id(const void *ctx, uint32_t i)
{
    const pb_present *p = (const pb_present *)ctx;
    return h_edge(p->edges[i].caller, p->edges[i].callee);
}

static int sub_id(pb_present *p, pb_str nm, uint32_t *id)
{
    uint32_t h = pb_hash_bytes(nm.ptr ? nm.ptr : "", nm.len), i;
    size_t j;
    if (pb_index_reserve(&p->subix, p->nsubs, h_sub_id, p) < 0)
        return -1;
    for (j = pb_index_first(&p->subix, h); (i = pb_index_at(&p->subix, j)) != PB_INDEX_NONE;
         j = pb_index_next(&p->subix, j)) {
        if (p->sub_len[i] == nm.len && memcmp(p->sub[i], nm.ptr, nm.len) == 0) {
            *id = i;
            return 0;
        }
    }
    if (pb_grow((void **)&p->sub, &p->csubs, p->nsubs + 1, sizeof *p->sub) < 0 ||
        pb_grow((void **)&p->sub_len, &p->csub_len, p->nsubs + 1, sizeof *p->sub_len) < 0)
        return -1;
    p->sub[p->nsubs] = (char *)malloc(nm.len + 1);
    if (!p->sub[p->nsubs])
        return -1;
    memcpy(p->sub[p->nsubs], nm.ptr, nm.len);
    p->sub[p->nsubs][nm.len] = '\0';
    p->sub_len[p->nsubs] = nm.len;
    pb_index_set(&p->subix, j, (uint32_t)p->nsubs);
    *id = (uint32_t)p->nsubs++;
    return 0;
}

static int record_edge(pb_present *p, const pb_chunk *c)
{
    uint32_t callee, caller, h, i;
    size_t j;
    struct pe_edge *e;
    if (c->s[1].len == 0 && c->u[0] == 0)
        return 0; /* NYTProf's "is an xsub" marker */
    if (sub_id(p, c->s[0], &callee) < 0 || sub_id(p, c->s[1], &caller) < 0)
        return -1;
    h = h_edge(caller, callee);
    if (pb_index_reserve(&p->edgeix, p->nedges, h_edge_id, p) < 0)
        return -1;
    for (j = pb_index_first(&p->edgeix, h); (i = pb_index_at(&p->edgeix, j)) != PB_INDEX_NONE;
         j = pb_index_next(&p->edgeix, j)) {
        e = &p->edges[i];
        if (e->caller == caller && e->callee == callee)
            goto add;
    }
    if (pb_grow((void **)&p->edges, &p->cedges, p->nedges + 1, sizeof *p->edges) < 0)
        return -1;
    e = &p->edges[p->nedges];
    memset(e, 0, sizeof *e);
    e->caller = caller;
    e->callee = callee;
    pb_index_set(&p->edgeix, j, (uint32_t)p->nedges++);
add:
    e->incl += c->n[0] + c->n[2]; /* recursive time counts as the call's */
    e->excl += c->n[1];
    e->count += c->u[2];
    return 0;
}

static pb_str pe_name(void *ctx, uint32_t sub)
{
    pb_present *p = (pb_present *)ctx;
    return pb_str_make(p->sub[sub], p->sub_len[sub], 0);
}

static pb_status pe_walk(pb_present *p, uint32_t s, double share, size_t depth)
{
    uint32_t k;
    pb_status st;
    double w;
    size_t i;
    p->stack[depth] = s;
    w = p->own[s] * share * p->ticks_per_sec;
    if (p->dry)
        p->total += w;
    else if ((st = pb_callev_stack(&p->cev, p->stack, depth + 1,
                                   w > 0 && w * p->scale < 1.8e19 ? (uint64_t)(w * p->scale + 0.5) : 0)) != PB_OK)
        return st;
    if (++p->visited >= PE_MAX_NODES || depth + 1 >= PE_MAX_DEPTH)
        return PB_OK;
    for (k = p->out_first[s]; k < p->out_first[s + 1]; k++) {
        const struct pe_edge *e = &p->edges[p->out_edge[k]];
        double cs;
        for (i = 0; i <= depth && p->stack[i] != e->callee; i++)
            ;
        if (i <= depth)
            continue; /* recursion: folded into the outer frame */
        if (p->in_incl[e->callee] > 0)
            cs = share * (e->incl / p->in_incl[e->callee]);
        else
            cs = p->in_count[e->callee] ? share * ((double)e->count / (double)p->in_count[e->callee]) : 0;
        if (cs <= 1e-12)
            continue;
        if ((st = pe_walk(p, e->callee, cs > 1 ? 1 : cs, depth + 1)) != PB_OK)
            return st;
        if (p->visited >= PE_MAX_NODES)
            break;
    }
    return PB_OK;
}

static pb_status edge_stacks(pb_present *p)
{
    size_t n = p->nsubs, i;
    pb_status st = PB_OK;
    uint32_t s;
    p->in_incl = (double *)calloc(n + 1, sizeof *p->in_incl);
    p->own = (double *)calloc(n + 1, sizeof *p->own);
    p->in_count = (uint64_t *)calloc(n + 1, sizeof *p->in_count);
    p->out_first = (uint32_t *)calloc(n + 2, sizeof *p->out_first);
    p->out_edge = (uint32_t *)calloc(p->nedges + 1, sizeof *p->out_edge);
    p->stack = (uint32_t *)calloc(PE_MAX_DEPTH + 1, sizeof *p->stack);
    if (!p->in_incl || !p->own || !p->in_count || !p->out_first || !p->out_edge || !p->stack)
        return pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while rebuilding call stacks");
    for (i = 0; i < p->nedges; i++) {
        const struct pe_edge *e = &p->edges[i];
        p->own[e->callee] += e->excl;
        if (e->caller != e->callee) {
            p->in_incl[e->callee] += e->incl;
            p->in_count[e->callee] += e->count;
        }
        p->out_first[e->caller + 1]++;
    }
    for (i = 0; i < n; i++)
        p->out_first[i + 1] += p->out_first[i];
    {
        uint32_t *fill = (uint32_t *)malloc((n + 1) * sizeof *fill);
        if (!fill)
            return pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while rebuilding call stacks");
        memcpy(fill, p->out_first, (n + 1) * sizeof *fill);
        for (i = 0; i < p->nedges; i++)
            p->out_edge[fill[p->edges[i].caller]++] = (uint32_t)i;
        free(fill);
    }
    pb_callev_init(&p->cev, p->out, p->err, 1.0, pe_name, p);
    /* the file's own times may add up to more than the run lasted (Pynytprof
     * times each caller -> callee pair on its own): then the rebuilt stacks
     * are scaled to fit the run, so that the flame graph's total holds */
    p->scale = 1.0;
    for (p->dry = 1; p->dry >= 0 && st == PB_OK; p->dry--) {
        p->visited = 0;
        for (s = 0; s < n && st == PB_OK && p->visited < PE_MAX_NODES; s++) {
            if (p->in_count[s] || p->in_incl[s] > 0)
                continue; /* called by another sub: not a root */
            if ((st = pe_walk(p, s, 1.0, 0)) == PB_OK && !p->dry)
                st = pb_callev_end(&p->cev);
        }
        if (p->dry) {
            double run = (p->t_end - p->t_start) * p->ticks_per_sec;
            if (run > 0 && p->total > run)
                p->scale = run / p->total * 0.999;
        }
    }
    return st;
}

static int present_chunk(pb_sink *self, const pb_chunk *c)
{
    pb_present *p = (pb_present *)self->ctx;
    pb_chunk nc;
    if (c->tag == PB_T_COMMENT) {
        /* Pynytprof's banner comment would make our output pass for a
         * Pynytprof file (formats.c): say who wrote it and who converted it */
        const char *at = pb_memmem(c->s[0].ptr, c->s[0].len, "Generated by Pynytprof", 22);
        if (at) {
            size_t pre = (size_t)(at - c->s[0].ptr), rest = c->s[0].len - pre - 22;
            size_t n = pre + 60 + rest;
            if (pb_grow((void **)&p->name[0], &p->name_cap[0], n + 1, 1) < 0)
                goto nomem;
            n = (size_t)snprintf(p->name[0], n + 1, "%.*sWritten by Pynytprof, converted by Devel::ProfileBridge %s%.*s",
                                 (int)pre, c->s[0].ptr, PB_VERSION_STRING, (int)rest, at + 22);
            nc = *c;
            nc.s[0] = pb_str_make(p->name[0], n, c->s[0].utf8);
            return fwd(p, &nc);
        }
    }
    if (c->tag == PB_T_PID_START && (p->t_start == 0 || c->n[0] < p->t_start))
        p->t_start = c->n[0];
    if (c->tag == PB_T_PID_START)
        p->saw_pid = 1;
    if (c->tag == PB_T_NEW_FID)
        p->saw_fid = 1;
    if (c->tag == PB_T_ATTRIBUTE && c->s[0].len == 8 && memcmp(c->s[0].ptr, "basetime", 8) == 0) {
        char b[32];
        snprintf(b, sizeof b, "%.*s", (int)(c->s[1].len < 31 ? c->s[1].len : 31), c->s[1].ptr);
        p->basetime = strtod(b, NULL);
    }
    if (c->tag == PB_T_PID_END && c->n[0] > p->t_end)
        p->t_end = c->n[0];
    if (c->tag == PB_T_OPTION && c->s[0].len == 5 && memcmp(c->s[0].ptr, "calls", 5) == 0)
        p->calls_option = c->s[1].len > 0 && c->s[1].ptr[0] != '0';
    if (c->tag == PB_T_ATTRIBUTE && c->s[0].len == 13 && memcmp(c->s[0].ptr, "ticks_per_sec", 13) == 0) {
        char b[32];
        snprintf(b, sizeof b, "%.*s", (int)(c->s[1].len < 31 ? c->s[1].len : 31), c->s[1].ptr);
        p->ticks_per_sec = strtod(b, NULL);
    }
    if (!p->active) {
        if (c->tag == PB_T_ATTRIBUTE && c->s[0].len == 13 && memcmp(c->s[0].ptr, "source_format", 13) == 0) {
            p->active = 1;
            p->pyn = c->s[1].len == 9 && memcmp(c->s[1].ptr, "pynytprof", 9) == 0;
        }
        return fwd(p, c);
    }
    switch (c->tag) {
    case PB_T_NEW_FID:
        nc = *c;
        nc.s[0].utf8 = 0; /* bytes, as NYTProf writes file names */
        if (nc.s[0].len == 0)
            nc.u[3] |= PB_FID_IS_FAKE; /* no file at all (XS frames): nothing to open */
        return new_fid(p, &nc);
    case PB_T_SUB_RETURN:
        p->saw_return = 1;
        /* fall through */
    case PB_T_SUB_INFO:
        nc = *c;
        if (p->pyn && c->tag == PB_T_SUB_INFO)
            pe_place(p, &nc);
        if (map_name(p, 0, &nc.s[0]) < 0)
            goto nomem;
        return fwd(p, &nc);
    case PB_T_SUB_CALLERS:
        nc = *c;
        if (map_name(p, 0, &nc.s[0]) < 0 || map_name(p, 1, &nc.s[1]) < 0)
            goto nomem;
        if (!p->saw_return && record_edge(p, &nc) < 0)
            goto nomem;
        return fwd(p, &nc);
    default:
        return fwd(p, c);
    }
nomem:
    pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while mapping names");
    return -1;
}

static void present_warn(pb_sink *self, const char *msg)
{
    pb_present *p = (pb_present *)self->ctx;
    if (p->out->warn)
        p->out->warn(p->out, msg);
}

static void present_cleanup(void *ctx) { pb_present_free((pb_present *)ctx); }

pb_present *pb_present_new(pb_sink *out, const pb_options *opt, pb_error *err)
{
    pb_present *p = (pb_present *)pb_new_zeroed(sizeof *p, err);
    if (!p)
        return NULL;
    p->out = out;
    p->err = err;
    p->max_line = PB_DEFAULT_MAX_LINE;
    p->calls_option = -1;
    if (opt) {
        p->no_source = opt->no_source;
        p->roots = opt->source_roots;
        p->nroots = opt->source_roots ? opt->n_source_roots : 0;
        p->strip = opt->strip_prefixes;
        p->nstrip = opt->strip_prefixes ? opt->n_strip_prefixes : 0;
        p->base = opt->source_base;
        if (opt->max_line)
            p->max_line = opt->max_line;
    }
    p->sink.chunk = present_chunk;
    p->sink.warn = present_warn;
    p->sink.ctx = p;
    p->sink.cleanups = out->cleanups;
    pb_sink_defer(out, present_cleanup, p);
    return p;
}

pb_sink *pb_present_sink(pb_present *p) { return &p->sink; }

void pb_present_counts(const pb_present *p, uint32_t *embedded, uint32_t *missing)
{
    *embedded = p->embedded;
    *missing = p->missing;
}

static void missing_warning(pb_present *p)
{
    char msg[PB_MISSING_LISTED * 130 + 256];
    size_t w;
    uint32_t i;
    if (!p->missing || !p->out->warn)
        return;
    w = (size_t)snprintf(msg, sizeof msg, "convert: warning: the source of %u of %u files was not found (not embedded): ",
                         p->missing, p->missing + p->embedded);
    for (i = 0; i < p->missing && i < PB_MISSING_LISTED && w < sizeof msg; i++)
        w += (size_t)snprintf(msg + w, sizeof msg - w, "%s'%s'", i ? ", " : "", p->listed[i]);
    if (w < sizeof msg && p->missing > PB_MISSING_LISTED)
        w += (size_t)snprintf(msg + w, sizeof msg - w, " and %u more", p->missing - PB_MISSING_LISTED);
    if (w < sizeof msg)
        snprintf(msg + w, sizeof msg - w, "; look in more places with --source-root DIR or --strip-prefix PREFIX");
    p->out->warn(p->out, msg);
}

pb_status pb_present_finish(pb_present *p)
{
    pb_status st;
    pb_chunk c;
    if (p->active && !p->saw_return) {
        /* call events from call edges (Pynytprof), or no claim to have them */
        int have = p->nedges > 0 && p->ticks_per_sec > 0;
        if (have && (st = edge_stacks(p)) != PB_OK)
            return st;
        have = have && p->cev.emitted > 0;
        if (have ? p->calls_option != 1 : p->calls_option == 1) {
            pb_chunk_option(&c, pb_str_c("calls"), pb_str_c(have ? "1" : "0"));
            if (pb_emit(p->out, &c))
                return pb_fail(p->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
        }
    }
    if (p->active && !p->saw_fid) {
        /* a profile with nothing in it (no sample, no block): nytprofhtml
         * needs one file and one process to draw its empty report */
        pb_chunk_new_fid(&c, 1, 0, 0, PB_FID_IS_FAKE, 0, 0, pb_str_c("(empty profile)"));
        if (pb_emit(p->out, &c))
            return pb_fail(p->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
    }
    if (p->active && !p->saw_pid) {
        pb_chunk_pid_start(&c, 1, 0, p->basetime);
        if (pb_emit(p->out, &c))
            return pb_fail(p->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
        pb_chunk_pid_end(&c, 1, p->basetime);
        if (pb_emit(p->out, &c))
            return pb_fail(p->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
    }
    missing_warning(p);
    return PB_OK;
}

void pb_present_free(pb_present *p)
{
    if (!p)
        return;
    pb_sink_undefer(p->out, p);
    PB_FREE_ALL(p->name[0], p->name[1], p->path, p->line, p->done);
    {
        size_t i;
        for (i = 0; i < p->nsubs; i++)
            free(p->sub[i]);
    }
    PB_FREE_ALL(p->sub, p->sub_len, p->edges, p->in_incl, p->own, p->in_count, p->out_first, p->out_edge,
                p->stack);
    pb_index_free(&p->subix);
    pb_index_free(&p->edgeix);
    {
        size_t i;
        for (i = 0; i < p->ndefs; i++)
            free(p->defs[i].name);
    }
    PB_FREE_ALL(p->defs, p->open);
    pb_index_free(&p->defix);
    pb_callev_free(&p->cev);
    free(p);
}
