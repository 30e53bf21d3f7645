/* collapsed.c - stack samples -> collapsed stacks (see collapsed.h). */
#include <stdlib.h>
#include <string.h>
#include "collapsed.h"
#include "util.h"
#include "read_statprofiler.h"

#define NONE UINT32_MAX

typedef struct {
    uint32_t idx, h;
} c_slot;

typedef struct {
    c_slot *s;
    size_t cap, n;
} c_tab;

static int c_reserve(c_tab *t)
{
    size_t ncap, i;
    c_slot *ns;
    if ((t->n + 1) * 2 <= t->cap)
        return 0;
    ncap = t->cap ? t->cap * 2 : 64;
    if (ncap > SIZE_MAX / sizeof *ns)
        return -1;
    ns = (c_slot *)malloc(ncap * sizeof *ns);
    if (!ns)
        return -1;
    for (i = 0; i < ncap; i++)
        ns[i].idx = NONE;
    for (i = 0; i < t->cap; i++)
        if (t->s[i].idx != NONE) {
            size_t j = t->s[i].h & (ncap - 1);
            while (ns[j].idx != NONE)
                j = (j + 1) & (ncap - 1);
            ns[j] = t->s[i];
        }
    free(t->s);
    t->s = ns;
    t->cap = ncap;
    return 0;
}

typedef struct {
    char *name;
    size_t len;
    uint32_t h;
} c_sub;

typedef struct {
    uint32_t parent, sub, thread, h;
    uint64_t count;
    uint64_t count2;  /* diff mode: the AFTER side's weight (count: BEFORE's) */
} c_node;

typedef struct {
    uint64_t key;
    char *label;
    uint32_t root;
    uint32_t *prev, *path;
    size_t depth, pcap, hcap;
} c_thread;

struct pb_collapse {
    pb_sample_sink ss;
    FILE *out;
    pb_error *err;
    c_sub *subs; size_t nsubs, csubs; c_tab tsubs;
    c_node *nodes; size_t nnodes, cnodes; c_tab tnodes;
    c_thread *threads; size_t nthreads, cthreads; c_tab tthreads;
    char *namebuf; size_t cnamebuf;
    uint32_t noframe;   /* sub id of main::(no frame), NONE until needed */
    int diff, side;     /* diff mode (pb_collapse_diff_new): which input is being read */
};

#define C_OOM(c) pb_fail((c)->err, PB_ERR_LIMIT, 0, "out of memory while collapsing stacks")

static pb_status cs_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    pb_collapse *c = (pb_collapse *)self->ctx;
    size_t need = pb_fold_sub_name(fr, NULL, 0) + 1, j;
    uint32_t h;
    c_sub *s;
    if (pb_grow((void **)&c->namebuf, &c->cnamebuf, need, 1) < 0)
        return C_OOM(c);
    pb_fold_sub_name(fr, c->namebuf, need);
    need--;
    /* the line format's own characters may not appear inside a name: ";"
     * separates frames, a newline ends the line; they (and CR, NUL) are
     * written as \xNN, so a crafted name can't add stacks */
    {
        size_t k, extra = 0;
        for (k = 0; k < need; k++)
            if (c->namebuf[k] == ';' || c->namebuf[k] == '\n' || c->namebuf[k] == '\r' || c->namebuf[k] == '\0')
                extra += 3;
        if (extra) {
            static const char hex[] = "0123456789ABCDEF";
            size_t w;
            if (pb_grow((void **)&c->namebuf, &c->cnamebuf, need + extra + 1, 1) < 0)
                return C_OOM(c);
            w = need + extra;
            c->namebuf[w] = '\0';
            for (k = need; k-- > 0;) {
                unsigned char ch = (unsigned char)c->namebuf[k];
                if (ch == ';' || ch == '\n' || ch == '\r' || ch == '\0') {
                    c->namebuf[--w] = hex[ch & 15];
                    c->namebuf[--w] = hex[ch >> 4];
                    c->namebuf[--w] = 'x';
                    c->namebuf[--w] = '\\';
                } else {
                    c->namebuf[--w] = (char)ch;
                }
            }
            need += extra;
        }
    }
    h = pb_hash_bytes(c->namebuf, need);
    if (c_reserve(&c->tsubs) < 0)
        return C_OOM(c);
    for (j = h & (c->tsubs.cap - 1); c->tsubs.s[j].idx != NONE; j = (j + 1) & (c->tsubs.cap - 1)) {
        const c_sub *o = &c->subs[c->tsubs.s[j].idx];
        if (o->h == h && o->len == need && memcmp(o->name, c->namebuf, need) == 0) {
            *id = c->tsubs.s[j].idx;
            return PB_OK;
        }
    }
    if (pb_grow((void **)&c->subs, &c->csubs, c->nsubs + 1, sizeof *c->subs) < 0)
        return C_OOM(c);
    s = &c->subs[c->nsubs];
    s->name = (char *)malloc(need + 1);
    if (!s->name)
        return C_OOM(c);
    memcpy(s->name, c->namebuf, need + 1);
    s->len = need;
    s->h = h;
    c->tsubs.s[j].idx = (uint32_t)c->nsubs;
    c->tsubs.s[j].h = h;
    c->tsubs.n++;
    *id = (uint32_t)c->nsubs++;
    return PB_OK;
}

static pb_status new_node(pb_collapse *c, uint32_t parent, uint32_t sub, uint32_t thread, uint32_t h,
                          uint32_t *idx)
{
    c_node *n;
    if (pb_grow((void **)&c->nodes, &c->cnodes, c->nnodes + 1, sizeof *c->nodes) < 0)
        return C_OOM(c);
    n = &c->nodes[c->nnodes];
    n->parent = parent;
    n->sub = sub;
    n->thread = thread;
    n->h = h;
    n->count = n->count2 = 0;
    *idx = (uint32_t)c->nnodes++;
    return PB_OK;
}

static pb_status get_thread(pb_collapse *c, uint64_t key, uint32_t *idx)
{
    uint32_t h = pb_mix64(key);
    size_t j;
    c_thread *t;
    char buf[32];
    if (c_reserve(&c->tthreads) < 0)
        return C_OOM(c);
    for (j = h & (c->tthreads.cap - 1); c->tthreads.s[j].idx != NONE; j = (j + 1) & (c->tthreads.cap - 1))
        if (c->threads[c->tthreads.s[j].idx].key == key) {
            *idx = c->tthreads.s[j].idx;
            return PB_OK;
        }
    if (pb_grow((void **)&c->threads, &c->cthreads, c->nthreads + 1, sizeof *c->threads) < 0)
        return C_OOM(c);
    t = &c->threads[c->nthreads];
    memset(t, 0, sizeof *t);
    t->key = key;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)key);
    t->label = (char *)malloc(strlen(buf) + 1);
    if (!t->label)
        return C_OOM(c);
    strcpy(t->label, buf);
    c->tthreads.s[j].idx = (uint32_t)c->nthreads;
    c->tthreads.s[j].h = h;
    c->tthreads.n++;
    *idx = (uint32_t)c->nthreads++;
    return new_node(c, NONE, NONE, *idx, 0, &c->threads[*idx].root);
}

static pb_status cs_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    pb_collapse *c = (pb_collapse *)self->ctx;
    uint32_t ti;
    pb_status st;
    char *l;
    (void)pid;
    (void)ppid;
    if ((st = get_thread(c, key, &ti)) != PB_OK)
        return st;
    if (!label)
        return PB_OK;
    l = (char *)malloc(strlen(label) + 1);
    if (!l)
        return C_OOM(c);
    strcpy(l, label);
    free(c->threads[ti].label);
    c->threads[ti].label = l;
    return PB_OK;
}

static pb_status cs_attribute(pb_sample_sink *self, const char *key, pb_str value)
{
    (void)self; (void)key; (void)value;
    return PB_OK;
}

static pb_status cs_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    (void)self; (void)kind; (void)a; (void)b; (void)n;
    return PB_OK;
}

static pb_status cs_sample(pb_sample_sink *self, uint64_t thread_key, const uint32_t *ids, uint32_t depth,
                           uint64_t weight, uint64_t timestamp)
{
    pb_collapse *c = (pb_collapse *)self->ctx;
    uint32_t ti, m, lim, j;
    c_thread *t;
    pb_status st;
    (void)timestamp;
    if (depth == 0) {
        /* a frameless sample counts, under main::(no frame) (fold_samples.h) */
        if ((st = pb_sample_noframe(self, &c->noframe)) != PB_OK)
            return st;
        ids = &c->noframe;
        depth = 1;
    }
    if (c->diff)
        thread_key = 0; /* a diff compares stacks, whatever thread ran them */
    if ((st = get_thread(c, thread_key, &ti)) != PB_OK)
        return st;
    t = &c->threads[ti];
    if (pb_grow((void **)&t->prev, &t->pcap, depth, sizeof *t->prev) < 0 ||
        pb_grow((void **)&t->path, &t->hcap, depth, sizeof *t->path) < 0)
        return C_OOM(c);
    lim = depth < t->depth ? depth : (uint32_t)t->depth;
    for (m = 0; m < lim && t->prev[t->depth - 1 - m] == ids[depth - 1 - m]; m++)
        ;
    for (j = m; j < depth; j++) {
        uint32_t sub = ids[depth - 1 - j];
        uint32_t parent = j ? t->path[j - 1] : t->root;
        if (sub >= c->nsubs)
            return pb_fail(c->err, PB_ERR_CORRUPT, 0, "sample uses frame id %u, only %zu interned", sub, c->nsubs);
        uint32_t h = pb_mix64(((uint64_t)parent << 32) | sub);
        uint32_t node = NONE;
        size_t k;
        if (c_reserve(&c->tnodes) < 0)
            return C_OOM(c);
        for (k = h & (c->tnodes.cap - 1); c->tnodes.s[k].idx != NONE; k = (k + 1) & (c->tnodes.cap - 1)) {
            const c_node *o = &c->nodes[c->tnodes.s[k].idx];
            if (o->h == h && o->parent == parent && o->sub == sub) {
                node = c->tnodes.s[k].idx;
                break;
            }
        }
        if (node == NONE) {
            if ((st = new_node(c, parent, sub, ti, h, &node)) != PB_OK)
                return st;
            c->tnodes.s[k].idx = node;
            c->tnodes.s[k].h = h;
            c->tnodes.n++;
        }
        t->path[j] = node;
    }
    memcpy(t->prev, ids, depth * sizeof *ids);
    t->depth = depth;
    if (c->side)
        c->nodes[t->path[depth - 1]].count2 += weight;
    else
        c->nodes[t->path[depth - 1]].count += weight;
    return PB_OK;
}

typedef struct {
    char *text;
    size_t len;
    uint64_t count, count2;
} c_line;

static int cmp_line(const void *a, const void *b)
{
    const c_line *x = (const c_line *)a, *y = (const c_line *)b;
    size_t n;
    int r;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    n = x->len < y->len ? x->len : y->len;
    r = memcmp(x->text, y->text, n);
    if (r)
        return r;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* the lines: "tid:<label>;stack count" per thread, or in diff mode
 * "stack before after" (difffolded.pl's format), threads merged */
static pb_status write_lines(pb_collapse *c)
{
    c_line *lines = NULL;
    size_t nlines = 0, clines = 0, i;
    pb_status st = PB_OK;
    for (i = 0; i < c->nnodes; i++) {
        const c_node *n = &c->nodes[i];
        const c_thread *t;
        size_t len, pos, pre;
        uint32_t p;
        char *text;
        if ((!n->count && !n->count2) || n->parent == NONE)
            continue;
        t = &c->threads[n->thread];
        pre = c->diff ? 0 : 4 + strlen(t->label);
        len = pre;
        for (p = (uint32_t)i; c->nodes[p].parent != NONE; p = c->nodes[p].parent)
            len += 1 + c->subs[c->nodes[p].sub].len;
        if (c->diff)
            len--; /* no ';' before the first frame */
        text = (char *)malloc(len + 1);
        if (!text || pb_grow((void **)&lines, &clines, nlines + 1, sizeof *lines) < 0) {
            free(text);
            st = C_OOM(c);
            goto done;
        }
        pos = len;
        text[pos] = '\0';
        for (p = (uint32_t)i; c->nodes[p].parent != NONE; p = c->nodes[p].parent) {
            const c_sub *s = &c->subs[c->nodes[p].sub];
            pos -= s->len;
            memcpy(text + pos, s->name, s->len);
            if (pos)
                text[--pos] = ';';
        }
        if (!c->diff) {
            memcpy(text, "tid:", 4);
            memcpy(text + 4, t->label, strlen(t->label));
        }
        lines[nlines].text = text;
        lines[nlines].len = len;
        lines[nlines].count = n->count + n->count2; /* the sort key */
        lines[nlines].count2 = n->count2;
        nlines++;
    }
    if (nlines)
        qsort(lines, nlines, sizeof *lines, cmp_line);
    for (i = 0; i < nlines; i++) {
        int w = c->diff ? fprintf(c->out, "%s %llu %llu\n", lines[i].text,
                                  (unsigned long long)(lines[i].count - lines[i].count2),
                                  (unsigned long long)lines[i].count2)
                        : fprintf(c->out, "%s %llu\n", lines[i].text, (unsigned long long)lines[i].count);
        if (w < 0) {
            st = pb_fail(c->err, PB_ERR_IO, 0, "cannot write the collapsed stacks");
            goto done;
        }
    }
    if (fflush(c->out) != 0)
        st = pb_fail(c->err, PB_ERR_IO, 0, "cannot write the collapsed stacks");
done:
    for (i = 0; i < nlines; i++)
        free(lines[i].text);
    free(lines);
    return st;
}

static pb_status cs_finish(pb_sample_sink *self)
{
    pb_collapse *c = (pb_collapse *)self->ctx;
    /* diff mode: each input finishes; the lines come from pb_collapse_diff_write() */
    return c->diff ? PB_OK : write_lines(c);
}

pb_collapse *pb_collapse_diff_new(FILE *out, pb_error *err)
{
    pb_collapse *c = pb_collapse_new(out, err);
    if (c)
        c->diff = 1;
    return c;
}

void pb_collapse_diff_side(pb_collapse *c, int after) { c->side = after ? 1 : 0; }

pb_status pb_collapse_diff_write(pb_collapse *c) { return write_lines(c); }

pb_collapse *pb_collapse_new(FILE *out, pb_error *err)
{
    pb_collapse *c = (pb_collapse *)calloc(1, sizeof *c);
    if (!c) {
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    c->out = out;
    c->err = err;
    c->noframe = NONE;
    c->ss.attribute = cs_attribute;
    c->ss.frame = cs_frame;
    c->ss.thread = cs_thread;
    c->ss.sample = cs_sample;
    c->ss.note = cs_note;
    c->ss.finish = cs_finish;
    c->ss.span = NULL;
    c->ss.err = err;
    c->ss.ctx = c;
    return c;
}

pb_sample_sink *pb_collapse_sample_sink(pb_collapse *c) { return &c->ss; }

void pb_collapse_free(pb_collapse *c)
{
    size_t i;
    if (!c)
        return;
    for (i = 0; i < c->nsubs; i++)
        free(c->subs[i].name);
    for (i = 0; i < c->nthreads; i++) {
        free(c->threads[i].label);
        free(c->threads[i].prev);
        free(c->threads[i].path);
    }
    free(c->subs);
    free(c->nodes);
    free(c->threads);
    free(c->tsubs.s);
    free(c->tnodes.s);
    free(c->tthreads.s);
    free(c->namebuf);
    free(c);
}

/* ---- running a file through it (the driver in formats.c) --------------------- */
pb_status pb_collapse_file(const char *path, pb_format fmt, const pb_options *opt, FILE *out, pb_error *err)
{
    pb_collapse *c;
    pb_status st;
    pb_error_init(err, fmt ? pb_format_name(fmt) : "profbridge", path);
    if (!(c = pb_collapse_new(out, err)))
        return err->status;
    st = pb_decode_samples_file(path, fmt, opt, pb_collapse_sample_sink(c), "collapsed output", err);
    pb_collapse_free(c);
    return st;
}

pb_status pb_collapse_mem(const void *data, size_t len, const char *name, pb_format fmt, const pb_options *opt,
                          FILE *out, pb_error *err)
{
    pb_collapse *c;
    pb_status st;
    pb_error_init(err, fmt ? pb_format_name(fmt) : "profbridge", name);
    if (!(c = pb_collapse_new(out, err)))
        return err->status;
    st = pb_decode_samples_mem(data, len, name, fmt, opt, pb_collapse_sample_sink(c), "collapsed output", err);
    pb_collapse_free(c);
    return st;
}

pb_status pb_collapse_diff_files(const char *before, const char *after, const pb_options *opt, FILE *out,
                                 pb_error *err)
{
    pb_collapse *c;
    pb_status st;
    pb_error_init(err, "profbridge", before);
    if (!(c = pb_collapse_diff_new(out, err)))
        return err->status;
    st = pb_decode_samples_file(before, PB_FMT_UNKNOWN, opt, pb_collapse_sample_sink(c), "a diff", err);
    if (st == PB_OK) {
        pb_collapse_diff_side(c, 1);
        st = pb_decode_samples_file(after, PB_FMT_UNKNOWN, opt, pb_collapse_sample_sink(c), "a diff", err);
    }
    if (st == PB_OK)
        st = pb_collapse_diff_write(c);
    pb_collapse_free(c);
    return st;
}
