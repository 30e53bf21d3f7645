/* write_collapsed.c - stack samples -> collapsed stacks (see write_collapsed.h).
 *
 * Names here: cs_ = the collapsed writer's sample-sink callbacks, h_ = hash callbacks of a
 * pb_index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write_collapsed.h"
#include "output.h"
#include "model.h"
#include "stack_table.h"
#include "util.h"

#define NONE UINT32_MAX

typedef struct {
    uint32_t parent, sub, thread, h;
    uint64_t count;
    uint64_t count2;  /* diff mode: the AFTER side's weight (count: BEFORE's) */
} c_node;

typedef struct {
    uint64_t key;
    char *label;
    char *written;  /* the source's root frames for it (thread_root), NULL: "tid:<label>" */
    uint32_t root;
    pb_stack_cursor cur; /* samples.h */
} c_thread;

struct pb_collapse {
    pb_stack_writer w; /* first (samples.h) */
    pb_strtab subs;     /* the frames' names as written (ids: the frame ids) */
    c_node *nodes; size_t nnodes, cnodes; pb_index tnodes; /* every node, roots too */
    c_thread *threads; size_t nthreads, cthreads; pb_index tthreads;
    pb_stack_table stacks; /* (thread, ids) -> its leaf node, once walked */
    uint64_t last_key;  /* the thread of the last sample (most samples repeat it), when have_last */
    uint32_t last_ti;
    int have_last;
    char *namebuf; size_t cnamebuf;
    int diff, side;     /* diff mode (pb_collapse_diff_new): which input is being read */
};

#define C_OOM(c) pb_fail((c)->w.err, PB_ERR_LIMIT, 0, "out of memory while collapsing stacks")

static uint32_t h_node(const void *c, uint32_t i) { return ((const pb_collapse *)c)->nodes[i].h; }
static uint32_t collapsed_h_thread(const void *c, uint32_t i) { return pb_mix64(((const pb_collapse *)c)->threads[i].key); }

#define C_ESCAPED(ch) ((ch) == ';' || (ch) == '\n' || (ch) == '\r' || (ch) == '\0' || (ch) == '\\')

/* a frame the source wrote as a stack line's frame (pb_frame verbatim): its
 * text as it is, but for the bytes a line cannot hold (';', CR, LF, NUL) and
 * bytes that are not UTF-8 (pb_utf8_seq), as \xNN: the escape a folded-stacks
 * reader reads back as that byte ("\" stays, the text's own escapes with it).
 * frames: several, their ';' kept (a thread's root frames). */
static pb_status verbatim_name(pb_collapse *c, pb_str v, int frames, size_t *len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i = 0, w = 0, k;
    if (pb_grow((void **)&c->namebuf, &c->cnamebuf, 4 * v.len + 1, 1) < 0)
        return C_OOM(c);
    while (i < v.len) {
        unsigned char ch = (unsigned char)v.ptr[i];
        k = pb_utf8_seq(v.ptr, v.len, i);
        if (k && !(k == 1 && ch != '\\' && !(frames && ch == ';') && C_ESCAPED(ch))) {
            memcpy(c->namebuf + w, v.ptr + i, k);
            w += k;
            i += k;
            continue;
        }
        c->namebuf[w++] = '\\';
        c->namebuf[w++] = 'x';
        c->namebuf[w++] = hex[ch >> 4];
        c->namebuf[w++] = hex[ch & 15];
        i++;
    }
    c->namebuf[w] = '\0';
    *len = w;
    return PB_OK;
}

static pb_status cs_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    pb_collapse *c = (pb_collapse *)self->ctx;
    size_t need = 0;
    pb_status st;
    if (fr->verbatim.len) {
        if ((st = verbatim_name(c, fr->verbatim, 0, &need)) != PB_OK)
            return st;
        if (pb_strtab_intern(&c->subs, c->namebuf, need, id) < 0)
            return C_OOM(c);
        return PB_OK;
    }
    need = pb_frame_shown_name(fr, NULL, 0) + 1;
    if (pb_grow((void **)&c->namebuf, &c->cnamebuf, need, 1) < 0)
        return C_OOM(c);
    pb_frame_shown_name(fr, c->namebuf, need);
    need--;
    /* the line format's own characters may not appear inside a name: ";"
     * separates frames, a newline ends the line; they (and CR, NUL) are
     * written as \xNN, so a crafted name can't add stacks; and "\" itself
     * as \x5C, so a literal "\x3B" in a name is not read back as an
     * escaped ";" (every \xNN in a line is an escape) */
    {
        size_t k, extra = 0;
        for (k = 0; k < need; k++)
            if (C_ESCAPED(c->namebuf[k]))
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
                if (C_ESCAPED(ch)) {
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
    if (pb_strtab_intern(&c->subs, c->namebuf, need, id) < 0)
        return C_OOM(c);
    return PB_OK;
}

/* a new node, indexed at slot k of tnodes (where the probe for it ended) */
static pb_status collapsed_new_node(pb_collapse *c, uint32_t parent, uint32_t sub, uint32_t thread, uint32_t h, size_t k,
                          uint32_t *idx)
{
    c_node *n;
    if (!(n = PB_GROW_ID(c->nodes, c->cnodes, c->nnodes)))
        return C_OOM(c);
    n->parent = parent;
    n->sub = sub;
    n->thread = thread;
    n->h = h;
    n->count = n->count2 = 0;
    *idx = (uint32_t)c->nnodes++;
    pb_index_set(&c->tnodes, k, *idx);
    return PB_OK;
}

/* the thread of the last sample, kept for the next */
static pb_status remember_thread(pb_collapse *c, uint64_t key, uint32_t ti)
{
    c->last_key = key;
    c->last_ti = ti;
    c->have_last = 1;
    return PB_OK;
}

static pb_status collapsed_get_thread(pb_collapse *c, uint64_t key, uint32_t *idx)
{
    uint32_t i;
    size_t j;
    c_thread *t;
    char buf[32];
    if (c->have_last && c->last_key == key) { /* most samples repeat the previous one's thread */
        *idx = c->last_ti;
        return PB_OK;
    }
    if (pb_index_reserve(&c->tthreads, c->nthreads, collapsed_h_thread, c) < 0)
        return C_OOM(c);
    PB_INDEX_FIND(&c->tthreads, pb_mix64(key), j, i, c->threads[i].key == key);
    if ((*idx = i) != PB_INDEX_NONE)
        return remember_thread(c, key, i);
    if (pb_index_add(&c->tthreads, j, (void **)&c->threads, &c->cthreads, c->nthreads, sizeof *c->threads) < 0)
        return C_OOM(c);
    t = &c->threads[c->nthreads];
    t->key = key;
    *idx = (uint32_t)c->nthreads++;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)key);
    if (!(t->label = pb_memdup0(buf, strlen(buf))))
        return C_OOM(c);
    /* the thread's root: no lookup asks for it (no parent is NONE), but it
     * is in the index, so it hashes by its thread: with one hash for every
     * root, each new thread probed past all the roots before it (quadratic
     * in threads) */
    {
        uint32_t h = pb_mix64(((uint64_t)NONE << 32) | *idx);
        if (pb_index_reserve(&c->tnodes, c->nnodes, h_node, c) < 0)
            return C_OOM(c);
        PB_INDEX_FIND(&c->tnodes, h, j, i, 0); /* to the first empty slot */
        pb_status st = collapsed_new_node(c, NONE, NONE, *idx, h, j, &c->threads[*idx].root);
        return st != PB_OK ? st : remember_thread(c, key, *idx);
    }
}

static pb_status cs_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    pb_collapse *c = (pb_collapse *)self->ctx;
    uint32_t ti;
    pb_status st;
    char *l;
    (void)pid;
    (void)ppid;
    if ((st = collapsed_get_thread(c, key, &ti)) != PB_OK)
        return st;
    if (!label)
        return PB_OK;
    if (!(l = pb_memdup0(label, strlen(label))))
        return C_OOM(c);
    free(c->threads[ti].label);
    c->threads[ti].label = l;
    return PB_OK;
}

static pb_status cs_thread_root(pb_sample_sink *self, uint64_t key, pb_str root)
{
    pb_collapse *c = (pb_collapse *)self->ctx;
    uint32_t ti;
    pb_status st;
    size_t n = 0;
    char *r;
    if ((st = collapsed_get_thread(c, key, &ti)) != PB_OK)
        return st;
    if (root.len && (st = verbatim_name(c, root, 1, &n)) != PB_OK) /* as the frames: valid UTF-8 */
        return st;
    if (!(r = pb_memdup0(n ? c->namebuf : "", n)))
        return C_OOM(c);
    free(c->threads[ti].written);
    c->threads[ti].written = r;
    return PB_OK;
}

static pb_status walk(pb_collapse *c, c_thread *t, uint32_t ti, const uint32_t *ids, uint32_t depth);

static pb_status cs_sample(pb_sample_sink *self, uint64_t thread_key, const uint32_t *ids, uint32_t depth,
                           uint64_t weight, uint64_t timestamp)
{
    pb_collapse *c = (pb_collapse *)self->ctx;
    uint32_t ti, leaf;
    c_thread *t;
    pb_stack_head *h;
    pb_status st;
    int r;
    (void)timestamp;
    if ((st = pb_sample_noframe(self, &ids, &depth)) != PB_OK) /* samples.h */
        return st;
    if (c->diff)
        thread_key = 0; /* a diff compares stacks, whatever thread ran them */
    if ((st = collapsed_get_thread(c, thread_key, &ti)) != PB_OK)
        return st;
    t = &c->threads[ti];
    /* a stack seen before: its weight summed in the table, no walk (the
     * cursor keeps the last walked sample and its path, still true for each
     * other); collapsed_flush() moves the sums to the nodes */
    if ((h = pb_stack_table_find(&c->stacks, ti, ids, depth)) != NULL)
        return pb_checked_add(c->w.err, &h->sum, weight, "a stack's weight", "");
    if (c->stacks.oom)
        return C_OOM(c);
    if ((st = walk(c, t, ti, ids, depth)) != PB_OK)
        return st;
    leaf = t->cur.path[depth - 1];
    if ((r = pb_stack_table_add(&c->stacks, ti, ids, depth, leaf, weight)) < 0)
        return C_OOM(c);
    if (r == 1)
        return PB_OK;
    /* not kept (the table is full): on its node; exact sums (a merge's
     * weights are ns: they can reach 2^63) */
    return pb_checked_add(c->w.err, c->side ? &c->nodes[leaf].count2 : &c->nodes[leaf].count, weight,
                          "a stack's weight", "");
}

/* the trie nodes of a stack not seen before: t->cur.path */
static pb_status walk(pb_collapse *c, c_thread *t, uint32_t ti, const uint32_t *ids, uint32_t depth)
{
    uint32_t m, j;
    pb_status st;
    if (pb_stack_cursor_begin(&t->cur, ids, depth, &m) < 0)
        return C_OOM(c);
    for (j = m; j < depth; j++) {
        uint32_t sub = ids[depth - 1 - j];
        uint32_t parent = j ? t->cur.path[j - 1] : t->root;
        if (sub >= c->subs.n)
            return pb_fail(c->w.err, PB_ERR_CORRUPT, 0, "sample uses frame id %u, only %zu interned", sub, c->subs.n);
        uint32_t h = pb_mix64(((uint64_t)parent << 32) | sub);
        uint32_t node;
        size_t k;
        if (pb_index_reserve(&c->tnodes, c->nnodes, h_node, c) < 0)
            return C_OOM(c);
        PB_INDEX_FIND(&c->tnodes, h, k, node,
                      c->nodes[node].h == h && c->nodes[node].parent == parent && c->nodes[node].sub == sub);
        if (node == PB_INDEX_NONE && (st = collapsed_new_node(c, parent, sub, ti, h, k, &node)) != PB_OK)
            return st;
        t->cur.path[j] = node;
    }
    pb_stack_cursor_end(&t->cur, ids, depth);
    return PB_OK;
}

/* the table's sums onto their leaves (before the lines, and when a diff's
 * side changes) */
static pb_status collapsed_flush(pb_collapse *c)
{
    size_t off = 0;
    pb_stack_head *h;
    pb_status st;
    while ((h = pb_stack_table_next(&c->stacks, &off)) != NULL) {
        if (h->sum && (st = pb_checked_add(c->w.err, c->side ? &c->nodes[h->val].count2 : &c->nodes[h->val].count,
                                           h->sum, "a stack's weight", "")) != PB_OK)
            return st;
        h->sum = 0;
    }
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
    if ((st = collapsed_flush(c)) != PB_OK)
        return st;
    for (i = 0; i < c->nnodes; i++) {
        const c_node *n = &c->nodes[i];
        const c_thread *t;
        size_t len, pos, pre;
        uint32_t p;
        char *text;
        if ((!n->count && !n->count2) || n->parent == NONE)
            continue;
        t = &c->threads[n->thread];
        /* the line's root: none in diff mode, the source's own, or tid:<label> */
        pre = c->diff ? 0 : t->written ? strlen(t->written) : 4 + strlen(t->label);
        len = pre;
        for (p = (uint32_t)i; c->nodes[p].parent != NONE; p = c->nodes[p].parent)
            len += 1 + pb_strtab_len(&c->subs, c->nodes[p].sub);
        if (!pre)
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
            size_t n = pb_strtab_len(&c->subs, c->nodes[p].sub);
            pos -= n;
            memcpy(text + pos, pb_strtab_ptr(&c->subs, c->nodes[p].sub), n);
            if (pos)
                text[--pos] = ';';
        }
        if (!c->diff && t->written) {
            memcpy(text, t->written, pre);
        } else if (!c->diff) {
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
        int w = c->diff ? fprintf(c->w.out, "%s %llu %llu\n", lines[i].text,
                                  (unsigned long long)(lines[i].count - lines[i].count2),
                                  (unsigned long long)lines[i].count2)
                        : fprintf(c->w.out, "%s %llu\n", lines[i].text, (unsigned long long)lines[i].count);
        if (w < 0) {
            st = pb_fail_write(c->w.err, "the collapsed stacks", errno);
            goto done;
        }
    }
    if (fflush(c->w.out) != 0)
        st = pb_fail_write(c->w.err, "the collapsed stacks", errno);
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
    pb_collapse *c = (pb_collapse *)pb_collapse_new(out, err);
    if (c)
        c->diff = 1;
    return c;
}

pb_status pb_collapse_diff_side(pb_collapse *c, int after)
{
    pb_status st = collapsed_flush(c); /* the sums so far are the side's before */
    c->side = after ? 1 : 0;
    return st;
}

pb_status pb_collapse_diff_write(pb_collapse *c) { return write_lines(c); }

static const pb_sample_sink sink_calls = {.sums_stacks = 1, .attribute = pb_sample_attribute_ignore, .frame = cs_frame,
    .thread = cs_thread, .sample = cs_sample, .note = pb_sample_note_ignore, .finish = cs_finish,
    .thread_root = cs_thread_root};

static void cs_teardown(pb_stack_writer *w)
{
    pb_collapse *c = (pb_collapse *)w;
    size_t i;
    for (i = 0; i < c->nthreads; i++) {
        free(c->threads[i].label);
        free(c->threads[i].written);
        pb_stack_cursor_free(&c->threads[i].cur);
    }
    PB_FREE_ALL(c->nodes, c->threads, c->namebuf);
    pb_strtab_free(&c->subs);
    pb_stack_table_free(&c->stacks);
    PB_INDEX_FREE_ALL(&c->tnodes, &c->tthreads);
}

pb_stack_writer *pb_collapse_new(FILE *out, pb_error *err)
{
    return pb_stack_writer_new(sizeof(pb_collapse), &sink_calls, cs_teardown, out, NULL, err);
}
