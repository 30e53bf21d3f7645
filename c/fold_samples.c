/* fold_samples.c - stack samples -> NYTProf chunks (see fold_samples.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fold_samples.h"
#include "call_events.h"
#include "util.h"

#define NONE UINT32_MAX
/* TIME_LINE chunks one sample may fill (each at most INT32_MAX ticks) */
#define PB_FOLD_MAX_SPLIT 65536u

/* ---- a small open-addressing index table ------------------------------ */
typedef struct {
    uint32_t idx;
    uint32_t h;
} slot;

typedef struct {
    slot *s;
    size_t cap; /* power of two */
    size_t n;
} itab;

static int itab_grow(itab *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 64, i;
    slot *ns;
    if (ncap < t->cap || ncap > SIZE_MAX / sizeof(slot))
        return -1;
    ns = (slot *)malloc(ncap * sizeof(slot));
    if (!ns)
        return -1;
    for (i = 0; i < ncap; i++)
        ns[i].idx = NONE;
    for (i = 0; i < t->cap; i++) {
        if (t->s[i].idx != NONE) {
            size_t j = t->s[i].h & (ncap - 1);
            while (ns[j].idx != NONE)
                j = (j + 1) & (ncap - 1);
            ns[j] = t->s[i];
        }
    }
    free(t->s);
    t->s = ns;
    t->cap = ncap;
    return 0;
}

/* Make sure one more entry fits (call before itab_probe when inserting). */
static int itab_reserve(itab *t)
{
    if ((t->n + 1) * 2 > t->cap)
        return itab_grow(t);
    return 0;
}

/* ---- growable arrays --------------------------------------------------- */
/* ---- model ------------------------------------------------------------- */
typedef struct {
    char *name;
    size_t len;
    uint32_t hash;
    uint32_t fid;      /* 0 until first used in a sample */
    uint32_t flags;
    int utf8;          /* non-ASCII UTF-8: deliver flagged */
    char *src;         /* source text carried by the profile (eval source), or NULL */
    size_t src_len;
    int src_utf8;
} f_file;

typedef struct {
    char *name;
    size_t len;
    uint32_t hash;
    uint32_t file;     /* file index (its fid is the SUB_INFO fid) */
    int32_t first_known; /* first line reported by the decoder, -1 none */
    uint32_t lo, hi;   /* lines seen in samples (lo > hi: none) */
    int used;
    int utf8;
} f_sub;

typedef struct {
    uint32_t sub, file, line;
} f_frame;

typedef struct {
    uint32_t parent; /* NONE for a thread root */
    uint32_t frame;  /* NONE for a thread root */
    uint32_t thread;
    uint32_t hash;
    uint64_t self_w;  /* weight of samples whose leaf this node is */
    uint64_t calls;   /* new activations observed */
} f_node;

typedef struct {
    uint64_t key;
    uint32_t pid, ppid;
    char *label;
    int started;
    uint32_t root;    /* node */
    uint32_t order;   /* rank of first sample (for PID_END order) */
    uint64_t first_ts, end_ts;
    uint64_t sampled; /* ticks the samples stand for (weight x interval) */
    uint64_t weight;  /* samples (their weights' sum) */
    uint32_t *prev;   /* previous sample's ids, innermost first */
    uint32_t *path;   /* node per depth, root->leaf */
    size_t depth, pcap, hcap;
} f_thread;

typedef struct {
    uint32_t thread, caller, callee, fid, line; /* caller NONE = root_sub */
    uint32_t hash;
    uint32_t rec_depth;
    uint64_t count, incl, excl, reci;
} f_edge;

/* finish()'s call edges */
typedef struct {
    f_edge *e;
    size_t n, cap;
    itab tab;
} edges;

struct pb_fold {
    pb_sample_sink ss;
    pb_fold_config cfg;
    pb_sink *out;
    pb_error *err;
    int header_done;
    uint32_t next_fid;
    uint32_t started_threads;

    f_file *files; size_t nfiles, cfiles; itab tfiles;
    f_sub *subs; size_t nsubs, csubs; itab tsubs;
    f_frame *frames; size_t nframes, cframes; itab tframes;
    f_node *nodes; size_t nnodes, cnodes; itab tnodes;
    f_thread *threads; size_t nthreads, cthreads; itab tthreads;
    uint32_t synth_file;
    uint32_t noframe;      /* frame id of "main::(no frame)", NONE until needed */
    char *namebuf; size_t cnamebuf;
    char *filebuf; size_t cfilebuf;
    /* finish()'s working memory, here so that pb_fold_free() releases it
     * when a consumer leaves in the middle of finish() (pb_cleanups) */
    uint64_t *fin_total, *fin_order;
    uint32_t *fin_byorder; /* thread index by order of first sample */
    edges fin_edges;
    uint32_t *fin_child, *fin_first; /* call tree children (CSR), for call events */
    uint32_t *fin_walk, *fin_subs;   /* DFS stack: node, next child; the stack's subs */
    pb_callev cev;
    int weight_ns;         /* weights are ns, not samples (merged profiles) */
};

#define OOM(f) pb_fail((f)->err, PB_ERR_LIMIT, 0, "out of memory while folding samples")

static pb_status emit(pb_fold *f, const pb_chunk *c)
{
    if (pb_emit(f->out, c))
        return pb_fail(f->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
    return PB_OK;
}

static pb_status emit_attr(pb_fold *f, const char *key, pb_str val)
{
    pb_chunk c;
    pb_chunk_attribute(&c, pb_str_c(key), val);
    return emit(f, &c);
}

static pb_status header(pb_fold *f)
{
    pb_chunk c;
    pb_status st;
    char buf[160];
    if (f->header_done)
        return PB_OK;
    f->header_done = 1;
    pb_chunk_version(&c, 5, 0);
    if ((st = emit(f, &c)) != PB_OK)
        return st;
    snprintf(buf, sizeof buf, "Perl profile database. Generated by Devel::ProfileBridge %s from a %s profile\n",
             PB_VERSION_STRING, f->cfg.source_format ? f->cfg.source_format : "sampling");
    pb_chunk_comment(&c, pb_str_c(buf));
    if ((st = emit(f, &c)) != PB_OK)
        return st;
    if (f->cfg.source_format && (st = emit_attr(f, "source_format", pb_str_c(f->cfg.source_format))) != PB_OK)
        return st;
    if ((st = emit_attr(f, "nv_size", pb_str_c("8"))) != PB_OK)
        return st;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)f->cfg.ticks_per_sec);
    if ((st = emit_attr(f, "ticks_per_sec", pb_str_c(buf))) != PB_OK)
        return st;
    /* the stream carries call events (SUB_RETURN), as NYTProf's calls=1 */
    pb_chunk_option(&c, pb_str_c("calls"), pb_str_c("1"));
    return emit(f, &c);
}

size_t pb_fold_sub_name(const pb_frame *fr, char *buf, size_t cap)
{
    /* package::name as valid UTF-8: a part without the UTF-8 flag is
     * Latin-1 and is upgraded, as Perl joins the two (util.h) */
    const char *pkg = fr->package.len ? fr->package.ptr : "main";
    size_t plen = fr->package.len ? fr->package.len : 4;
    size_t room = cap ? cap - 1 : 0, w;
    w = pb_utf8_append(buf, room, 0, pkg, plen, fr->package.len ? fr->package.utf8 : 1);
    w = pb_utf8_append(buf, room, w, "::", 2, 1);
    w = pb_utf8_append(buf, room, w, fr->name.ptr, fr->name.len, fr->name.utf8);
    if (cap)
        buf[w < room ? w : room] = '\0';
    return w;
}

/* the joined name holds characters beyond ASCII (and is then UTF-8) */
int pb_fold_sub_name_wide(const pb_frame *fr)
{
    return pb_has_high(fr->package.ptr ? fr->package.ptr : "", fr->package.len) ||
           pb_has_high(fr->name.ptr ? fr->name.ptr : "", fr->name.len);
}

pb_status pb_sample_noframe(pb_sample_sink *ss, uint32_t *id)
{
    pb_frame fr;
    if (*id != UINT32_MAX)
        return PB_OK;
    memset(&fr, 0, sizeof fr);
    fr.kind = PB_FRAME_SYNTHETIC;
    fr.package = pb_str_c("main");
    fr.name = pb_str_c("(no frame)");
    fr.file = pb_str_c("");
    return ss->frame(ss, &fr, id);
}

static char *dupmem(const char *p, size_t n)
{
    char *d = (char *)malloc(n + 1);
    if (d) {
        if (n)
            memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}

/* find or add a file by name; *idx receives it */
/* 1 when the string is flagged UTF-8 and has a non-ASCII byte */
static int wide(const char *p, size_t n, int utf8)
{
    size_t i;
    if (!utf8)
        return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)p[i] >= 0x80)
            return 1;
    return 0;
}

static pb_status intern_file(pb_fold *f, const char *name, size_t len, int synthetic, int utf8, uint32_t *idx)
{
    uint32_t h = pb_hash_bytes(name, len) ^ (uint32_t)synthetic;
    size_t j;
    f_file *fl;
    if (synthetic && f->synth_file != NONE) {
        *idx = f->synth_file;
        return PB_OK;
    }
    if (itab_reserve(&f->tfiles) < 0)
        return OOM(f);
    for (j = h & (f->tfiles.cap - 1); f->tfiles.s[j].idx != NONE; j = (j + 1) & (f->tfiles.cap - 1)) {
        const f_file *o = &f->files[f->tfiles.s[j].idx];
        if (o->hash == h && o->len == len && memcmp(o->name, name, len) == 0 &&
            (f->tfiles.s[j].idx == f->synth_file) == (synthetic != 0)) {
            *idx = f->tfiles.s[j].idx;
            return PB_OK;
        }
    }
    if (pb_grow((void **)&f->files, &f->cfiles, f->nfiles + 1, sizeof *f->files) < 0)
        return OOM(f);
    fl = &f->files[f->nfiles];
    fl->name = dupmem(name, len);
    if (!fl->name)
        return OOM(f);
    fl->len = len;
    fl->hash = h;
    fl->fid = 0;
    fl->src = NULL;
    fl->src_len = 0;
    fl->src_utf8 = 0;
    fl->utf8 = wide(name, len, utf8);
    if (synthetic)
        fl->flags = PB_FID_IS_FAKE | PB_FID_VIA_SUB;
    else if (f->cfg.fid_flags)
        fl->flags = f->cfg.fid_flags(f->cfg.fid_flags_ctx, pb_str_make(name, len, 0));
    else
        fl->flags = PB_FID_VIA_STMT | PB_FID_VIA_SUB;
    f->tfiles.s[j].idx = (uint32_t)f->nfiles;
    f->tfiles.s[j].h = h;
    f->tfiles.n++;
    if (synthetic)
        f->synth_file = (uint32_t)f->nfiles;
    *idx = (uint32_t)f->nfiles++;
    return PB_OK;
}

static pb_status intern_sub(pb_fold *f, const char *name, size_t len, uint32_t file, int32_t first_line,
                            int utf8, uint32_t *idx)
{
    uint32_t h = pb_hash_bytes(name, len);
    size_t j;
    f_sub *s;
    if (itab_reserve(&f->tsubs) < 0)
        return OOM(f);
    for (j = h & (f->tsubs.cap - 1); f->tsubs.s[j].idx != NONE; j = (j + 1) & (f->tsubs.cap - 1)) {
        f_sub *o = &f->subs[f->tsubs.s[j].idx];
        if (o->hash == h && o->len == len && memcmp(o->name, name, len) == 0) {
            if (first_line > 0 && (o->first_known < 0 || first_line < o->first_known))
                o->first_known = first_line;
            *idx = f->tsubs.s[j].idx;
            return PB_OK;
        }
    }
    if (pb_grow((void **)&f->subs, &f->csubs, f->nsubs + 1, sizeof *f->subs) < 0)
        return OOM(f);
    s = &f->subs[f->nsubs];
    s->name = dupmem(name, len);
    if (!s->name)
        return OOM(f);
    s->len = len;
    s->hash = h;
    s->file = file;
    s->first_known = first_line > 0 ? first_line : -1;
    s->lo = UINT32_MAX;
    s->hi = 0;
    s->used = 0;
    s->utf8 = wide(name, len, utf8);
    f->tsubs.s[j].idx = (uint32_t)f->nsubs;
    f->tsubs.s[j].h = h;
    f->tsubs.n++;
    *idx = (uint32_t)f->nsubs++;
    return PB_OK;
}

static pb_status ss_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    pb_fold *f = (pb_fold *)self->ctx;
    pb_status st;
    uint32_t file = 0, sub = 0, line, h;
    size_t need, j;
    int synthetic = fr->kind == PB_FRAME_SYNTHETIC;
    if ((st = header(f)) != PB_OK)
        return st;
    if (synthetic) {
        const char *sf = f->cfg.synthetic_file ? f->cfg.synthetic_file : "~";
        st = intern_file(f, sf, strlen(sf), 1, 0, &file);
    } else {
        /* as valid UTF-8 (a Latin-1 name upgraded, bad bytes escaped: util.h) */
        const char *fp = fr->file.ptr ? fr->file.ptr : "";
        size_t fl = pb_utf8_append(NULL, 0, 0, fp, fr->file.len, fr->file.utf8);
        if (pb_grow((void **)&f->filebuf, &f->cfilebuf, fl + 1, 1) < 0)
            return OOM(f);
        pb_utf8_append(f->filebuf, fl, 0, fp, fr->file.len, fr->file.utf8);
        st = intern_file(f, f->filebuf, fl, 0, pb_has_high(fp, fr->file.len), &file);
    }
    if (st != PB_OK)
        return st;
    need = pb_fold_sub_name(fr, NULL, 0) + 1;
    if (pb_grow((void **)&f->namebuf, &f->cnamebuf, need, 1) < 0)
        return OOM(f);
    pb_fold_sub_name(fr, f->namebuf, need);
    if ((st = intern_sub(f, f->namebuf, need - 1, file, synthetic ? -1 : fr->first_line,
                         pb_fold_sub_name_wide(fr), &sub)) != PB_OK)
        return st;
    line = (!synthetic && fr->line > 0) ? (uint32_t)fr->line : 0;
    h = pb_mix64(((uint64_t)sub << 32) ^ ((uint64_t)file << 20) ^ line);
    if (itab_reserve(&f->tframes) < 0)
        return OOM(f);
    for (j = h & (f->tframes.cap - 1); f->tframes.s[j].idx != NONE; j = (j + 1) & (f->tframes.cap - 1)) {
        const f_frame *o = &f->frames[f->tframes.s[j].idx];
        if (f->tframes.s[j].h == h && o->sub == sub && o->file == file && o->line == line) {
            *id = f->tframes.s[j].idx;
            return PB_OK;
        }
    }
    if (pb_grow((void **)&f->frames, &f->cframes, f->nframes + 1, sizeof *f->frames) < 0)
        return OOM(f);
    f->frames[f->nframes].sub = sub;
    f->frames[f->nframes].file = file;
    f->frames[f->nframes].line = line;
    f->tframes.s[j].idx = (uint32_t)f->nframes;
    f->tframes.s[j].h = h;
    f->tframes.n++;
    *id = (uint32_t)f->nframes++;
    return PB_OK;
}

static pb_status new_node(pb_fold *f, uint32_t parent, uint32_t frame, uint32_t thread, uint32_t h, uint32_t *idx)
{
    f_node *n;
    if (pb_grow((void **)&f->nodes, &f->cnodes, f->nnodes + 1, sizeof *f->nodes) < 0)
        return OOM(f);
    n = &f->nodes[f->nnodes];
    n->parent = parent;
    n->frame = frame;
    n->thread = thread;
    n->hash = h;
    n->self_w = 0;
    n->calls = 0;
    *idx = (uint32_t)f->nnodes++;
    return PB_OK;
}

static pb_status get_thread(pb_fold *f, uint64_t key, uint32_t *idx)
{
    uint32_t h = pb_mix64(key);
    size_t j;
    f_thread *t;
    pb_status st;
    if (itab_reserve(&f->tthreads) < 0)
        return OOM(f);
    for (j = h & (f->tthreads.cap - 1); f->tthreads.s[j].idx != NONE; j = (j + 1) & (f->tthreads.cap - 1)) {
        if (f->threads[f->tthreads.s[j].idx].key == key) {
            *idx = f->tthreads.s[j].idx;
            return PB_OK;
        }
    }
    if (pb_grow((void **)&f->threads, &f->cthreads, f->nthreads + 1, sizeof *f->threads) < 0)
        return OOM(f);
    t = &f->threads[f->nthreads];
    memset(t, 0, sizeof *t);
    t->key = key;
    t->pid = (uint32_t)f->nthreads + 1;
    f->tthreads.s[j].idx = (uint32_t)f->nthreads;
    f->tthreads.s[j].h = h;
    f->tthreads.n++;
    if ((st = new_node(f, NONE, NONE, (uint32_t)f->nthreads, 0, &t->root)) != PB_OK)
        return st;
    *idx = (uint32_t)f->nthreads++;
    return PB_OK;
}

static pb_status ss_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    pb_fold *f = (pb_fold *)self->ctx;
    uint32_t ti;
    pb_status st;
    f_thread *t;
    if ((st = header(f)) != PB_OK)
        return st;
    if ((st = get_thread(f, key, &ti)) != PB_OK)
        return st;
    t = &f->threads[ti];
    t->pid = pid;
    t->ppid = ppid;
    if (label) {
        char key[40];
        free(t->label);
        t->label = dupmem(label, strlen(label));
        if (!t->label)
            return OOM(f);
        snprintf(key, sizeof key, "thread_id_%u", pid);
        return emit_attr(f, key, pb_str_c(label));
    }
    return PB_OK;
}

static pb_status ss_attribute(pb_sample_sink *self, const char *key, pb_str value)
{
    pb_fold *f = (pb_fold *)self->ctx;
    pb_status st;
    if (!strcmp(key, "sample_weight_unit"))
        f->weight_ns = value.len == 2 && !memcmp(value.ptr, "ns", 2); /* merge.h: weights are ns */
    if ((st = header(f)) != PB_OK)
        return st;
    return emit_attr(f, key, value);
}

/* SRC_LINE per line of a file's carried source (lines keep their "\n") */
static pb_status emit_src_lines(pb_fold *f, const f_file *fl)
{
    const char *p = fl->src, *end = fl->src + fl->src_len;
    uint32_t line = 0;
    while (p < end) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl + 1 : end;
        pb_chunk c;
        pb_status st;
        pb_chunk_src_line(&c, fl->fid, ++line, pb_str_make(p, (size_t)(stop - p), fl->src_utf8));
        if ((st = emit(f, &c)) != PB_OK)
            return st;
        p = stop;
    }
    return PB_OK;
}

/* give a file its fid: NEW_FID, then its carried source if any */
static pb_status define_fid(pb_fold *f, f_file *fl)
{
    pb_chunk c;
    pb_status st;
    fl->fid = ++f->next_fid;
    if (fl->src)
        fl->flags |= PB_FID_HAS_SRC | PB_FID_SAVE_SRC;
    pb_chunk_new_fid(&c, fl->fid, 0, 0, fl->flags, 0, 0, pb_str_make(fl->name, fl->len, fl->utf8));
    if ((st = emit(f, &c)) != PB_OK)
        return st;
    return fl->src ? emit_src_lines(f, fl) : PB_OK;
}

/* eval source ("eval_source", a = text, b = "(eval N)"): kept with the
 * file of that name and delivered as SRC_LINEs of its fid.  Other notes
 * (sections, metadata) are the decoder's to present. */
static pb_status ss_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    pb_fold *f = (pb_fold *)self->ctx;
    uint32_t idx;
    f_file *fl;
    pb_status st;
    (void)n;
    if (strcmp(kind, "eval_source") != 0 || b.len == 0)
        return PB_OK;
    if ((st = header(f)) != PB_OK)
        return st;
    if ((st = intern_file(f, b.ptr, b.len, 0, b.utf8, &idx)) != PB_OK)
        return st;
    fl = &f->files[idx];
    if (fl->src)
        return PB_OK; /* the first text for a name wins */
    fl->src = dupmem(a.ptr ? a.ptr : "", a.len);
    if (!fl->src)
        return OOM(f);
    fl->src_len = a.len;
    fl->src_utf8 = a.utf8;
    return fl->fid ? emit_src_lines(f, fl) : PB_OK;
}

/* make sure the file of frame id has a fid (emitting NEW_FID) and note the line */
static pb_status use_frame(pb_fold *f, uint32_t id)
{
    const f_frame *fr = &f->frames[id];
    f_file *fl = &f->files[fr->file];
    f_sub *s = &f->subs[fr->sub];
    if (!fl->fid) {
        pb_status st = define_fid(f, fl);
        if (st != PB_OK)
            return st;
    }
    if (!s->used) {
        s->used = 1;
        /* the sub's SUB_INFO fid is its own file's, which must exist */
        if (!f->files[s->file].fid) {
            pb_status st = define_fid(f, &f->files[s->file]);
            if (st != PB_OK)
                return st;
        }
    }
    if (fr->line) {
        if (fr->line < s->lo)
            s->lo = fr->line;
        if (fr->line > s->hi)
            s->hi = fr->line;
    }
    return PB_OK;
}

static pb_status ss_sample(pb_sample_sink *self, uint64_t thread_key, const uint32_t *ids, uint32_t depth,
                           uint64_t weight, uint64_t timestamp)
{
    pb_fold *f = (pb_fold *)self->ctx;
    pb_status st;
    uint32_t ti, j, m, lim;
    f_thread *t;
    uint64_t tpw = f->cfg.ticks_per_weight;
    if ((st = header(f)) != PB_OK)
        return st;
    if ((st = get_thread(f, thread_key, &ti)) != PB_OK)
        return st;
    t = &f->threads[ti];
    if (!t->started) {
        pb_chunk c;
        t->started = 1;
        t->order = f->started_threads++;
        /* a weight > 1 sample carries the timestamp of the last of its samples */
        t->first_ts = weight > 1 && tpw && (weight - 1) <= timestamp / tpw ? timestamp - (weight - 1) * tpw : timestamp;
        t->end_ts = t->first_ts;
        pb_chunk_pid_start(&c, t->pid, t->ppid, (double)t->first_ts / (double)f->cfg.ticks_per_sec);
        if ((st = emit(f, &c)) != PB_OK)
            return st;
    }
    if (depth == 0) {
        /* a sample that caught no frame still counts, as the real readers
         * count it: its weight goes to the pseudo-sub main::(no frame), in
         * the fake fid of synthetic frames */
        if ((st = pb_sample_noframe(self, &f->noframe)) != PB_OK)
            return st;
        ids = &f->noframe;
        depth = 1;
    }
    if (pb_grow((void **)&t->prev, &t->pcap, depth, sizeof *t->prev) < 0 ||
        pb_grow((void **)&t->path, &t->hcap, depth, sizeof *t->path) < 0)
        return OOM(f);
    /* common outermost part with the previous sample of this thread */
    lim = depth < t->depth ? depth : (uint32_t)t->depth;
    for (m = 0; m < lim && t->prev[t->depth - 1 - m] == ids[depth - 1 - m]; m++)
        ;
    for (j = m; j < depth; j++) {
        uint32_t frame = ids[depth - 1 - j];
        uint32_t parent = j ? t->path[j - 1] : t->root;
        if (frame >= f->nframes)
            return pb_fail(f->err, PB_ERR_CORRUPT, 0, "sample uses frame id %u, only %zu interned", frame,
                           f->nframes);
        uint32_t h = pb_mix64(((uint64_t)parent << 32) | frame);
        size_t k;
        uint32_t node = NONE;
        if (itab_reserve(&f->tnodes) < 0)
            return OOM(f);
        for (k = h & (f->tnodes.cap - 1); f->tnodes.s[k].idx != NONE; k = (k + 1) & (f->tnodes.cap - 1)) {
            const f_node *o = &f->nodes[f->tnodes.s[k].idx];
            if (o->hash == h && o->parent == parent && o->frame == frame) {
                node = f->tnodes.s[k].idx;
                break;
            }
        }
        if (node == NONE) {
            if ((st = new_node(f, parent, frame, ti, h, &node)) != PB_OK)
                return st;
            f->tnodes.s[k].idx = node;
            f->tnodes.s[k].h = h;
            f->tnodes.n++;
            if ((st = use_frame(f, frame)) != PB_OK)
                return st;
        }
        t->path[j] = node;
        if (j > m || j >= t->depth ||
            f->frames[frame].sub != f->frames[t->prev[t->depth - 1 - j]].sub)
            f->nodes[node].calls++;
    }
    if (depth)
        memcpy(t->prev, ids, depth * sizeof *ids);
    t->depth = depth;
    if (depth) {
        f->nodes[t->path[depth - 1]].self_w += weight;
        {
            /* ticks = weight x interval, in TIME_LINEs of at most INT32_MAX
             * ticks each (no time is lost).  A sample may fill at most
             * PB_FOLD_MAX_SPLIT of them: a corrupt weight must not turn a
             * few bytes into billions of chunks. */
            const f_frame *leaf = &f->frames[ids[0]];
            uint32_t fid = f->files[leaf->file].fid;
            uint64_t left = weight;
            uint64_t per = tpw ? (uint64_t)INT32_MAX / tpw : left;
            uint64_t nchunks;
            pb_chunk c;
            if (per == 0)
                per = 1;
            nchunks = left / per + (left % per != 0);
            if (nchunks > PB_FOLD_MAX_SPLIT)
                return pb_fail_nooff(f->err, PB_ERR_LIMIT,
                                     "a sample of weight %llu x %llu ticks would need %llu TIME_LINE chunks; one "
                                     "sample may fill at most %u (%u x 2^31 ticks)",
                                     (unsigned long long)weight, (unsigned long long)tpw,
                                     (unsigned long long)nchunks, (unsigned)PB_FOLD_MAX_SPLIT,
                                     (unsigned)PB_FOLD_MAX_SPLIT);
            if (!pb_sink_wants(f->out, PB_T_TIME_LINE)) {
                f->out->seq += nchunks; /* for_chunks' $. still counts them */
            } else {
                while (left) {
                    uint64_t w = left < per ? left : per;
                    pb_chunk_time_line(&c, (int32_t)(w * tpw), fid, leaf->line);
                    if ((st = emit(f, &c)) != PB_OK)
                        return st;
                    left -= w;
                }
            }
        }
    }
    if (timestamp + tpw > t->end_ts)
        t->end_ts = timestamp + tpw; /* the last sample covers one interval */
    t->sampled += weight * tpw;
    t->weight += weight;
    return PB_OK;
}

/* ---- finish: SUB_INFO, SUB_CALLERS, PID_END ------------------------------ */
static int edge_add(edges *E, const f_edge *key, f_edge **out)
{
    uint32_t h = pb_mix64(((uint64_t)key->thread << 40) ^ ((uint64_t)key->caller << 20) ^ key->callee) ^
                 pb_mix64(((uint64_t)key->fid << 32) | key->line);
    size_t j;
    if (itab_reserve(&E->tab) < 0)
        return -1;
    for (j = h & (E->tab.cap - 1); E->tab.s[j].idx != NONE; j = (j + 1) & (E->tab.cap - 1)) {
        f_edge *o = &E->e[E->tab.s[j].idx];
        if (o->hash == h && o->thread == key->thread && o->caller == key->caller && o->callee == key->callee &&
            o->fid == key->fid && o->line == key->line) {
            *out = o;
            return 0;
        }
    }
    if (pb_grow((void **)&E->e, &E->cap, E->n + 1, sizeof *E->e) < 0)
        return -1;
    E->e[E->n] = *key;
    E->e[E->n].hash = h;
    E->tab.s[j].idx = (uint32_t)E->n;
    E->tab.s[j].h = h;
    E->tab.n++;
    *out = &E->e[E->n++];
    return 0;
}

static int cmp_edge_thread(const void *a, const void *b)
{
    /* stable by construction: compare thread order, then index */
    const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
    return *x < *y ? -1 : *x > *y;
}

static uint32_t sub_first(const f_sub *s)
{
    if (s->first_known > 0)
        return (uint32_t)s->first_known;
    return s->lo <= s->hi ? s->lo : 0;
}

static pb_str sub_name_of(void *ctx, uint32_t sub)
{
    const f_sub *s = &((pb_fold *)ctx)->subs[sub];
    return pb_str_make(s->name, s->len, s->utf8);
}

/* Call events: every thread's call tree, depth first, one stack per node
 * (its frames' subs, its own weight): one SUB_RETURN per tree node
 * (call_events.h).  Threads in order of first sample. */
static pb_status call_events(pb_fold *f, const uint32_t *by_order)
{
    size_t i, nn = f->nnodes;
    uint32_t *first, *child, *walk, *subs, r;
    pb_status st;
    first = f->fin_first = (uint32_t *)calloc(nn + 1, sizeof *first);
    child = f->fin_child = (uint32_t *)malloc((nn ? nn : 1) * sizeof *child);
    walk = f->fin_walk = (uint32_t *)malloc((nn ? nn : 1) * 2 * sizeof *walk);
    subs = f->fin_subs = (uint32_t *)malloc((nn ? nn : 1) * sizeof *subs);
    if (!first || !child || !walk || !subs)
        return OOM(f);
    /* children grouped by parent, in creation order */
    for (i = 0; i < nn; i++)
        if (f->nodes[i].parent != NONE)
            first[f->nodes[i].parent + 1]++;
    for (i = 0; i < nn; i++)
        first[i + 1] += first[i];
    for (i = 0; i < nn; i++)
        walk[i] = first[i];
    for (i = 0; i < nn; i++)
        if (f->nodes[i].parent != NONE)
            child[walk[f->nodes[i].parent]++] = (uint32_t)i;
    pb_callev_init(&f->cev, f->out, f->err, (double)f->cfg.ticks_per_weight, sub_name_of, f);
    for (r = 0; r < f->started_threads; r++) {
        size_t sp = 0;
        if (by_order[r] == NONE)
            continue;
        walk[0] = f->threads[by_order[r]].root;
        walk[1] = first[walk[0]];
        sp = 1;
        while (sp) {
            uint32_t node = walk[2 * (sp - 1)], *next = &walk[2 * (sp - 1) + 1];
            if (*next < first[node + 1]) {
                uint32_t c = child[(*next)++];
                subs[sp - 1] = f->frames[f->nodes[c].frame].sub;
                if ((st = pb_callev_stack(&f->cev, subs, sp, f->nodes[c].self_w)) != PB_OK)
                    return st;
                walk[2 * sp] = c;
                walk[2 * sp + 1] = first[c];
                sp++;
            } else {
                sp--;
            }
        }
        if ((st = pb_callev_end(&f->cev)) != PB_OK)
            return st;
    }
    return PB_OK;
}

static pb_status ss_finish(pb_sample_sink *self)
{
    pb_fold *f = (pb_fold *)self->ctx;
    pb_status st = PB_OK;
    pb_chunk c;
    uint64_t *total, *order;
    uint32_t *by_order;
    edges *E = &f->fin_edges;
    size_t i;
    const char *root = f->cfg.root_sub ? f->cfg.root_sub : "main::RUNTIME";
    uint32_t root_sub;
    double spw = (double)f->cfg.ticks_per_weight / (double)f->cfg.ticks_per_sec;
    if ((st = header(f)) != PB_OK)
        return st;
    if ((st = emit_attr(f, "cumulative_overhead_ticks", pb_str_c("0"))) != PB_OK)
        return st;
    /* thread index by order of first sample (linear in threads) */
    by_order = f->fin_byorder = (uint32_t *)malloc((f->started_threads ? f->started_threads : 1) * sizeof *by_order);
    if (!by_order)
        return OOM(f);
    for (i = 0; i < f->started_threads; i++)
        by_order[i] = NONE;
    for (i = 0; i < f->nthreads; i++)
        if (f->threads[i].started && f->threads[i].order < f->started_threads)
            by_order[f->threads[i].order] = (uint32_t)i;
    if ((st = call_events(f, by_order)) != PB_OK)
        goto done;
    /* SUB_INFO: the synthetic root, unless a frame already is that sub */
    for (i = 0; i < f->nsubs; i++)
        if (f->subs[i].used && f->subs[i].len == strlen(root) && memcmp(f->subs[i].name, root, f->subs[i].len) == 0)
            break;
    root_sub = i < f->nsubs ? (uint32_t)i : NONE;
    if (f->next_fid && root_sub == NONE) {
        pb_chunk_sub_info(&c, 1, 1, 1, pb_str_c(root));
        if ((st = emit(f, &c)) != PB_OK)
            return st;
    }
    for (i = 0; i < f->nsubs; i++) {
        const f_sub *s = &f->subs[i];
        if (!s->used)
            continue;
        pb_chunk_sub_info(&c, f->files[s->file].fid, sub_first(s), s->lo <= s->hi ? s->hi : sub_first(s),
                          pb_str_make(s->name, s->len, s->utf8));
        if ((st = emit(f, &c)) != PB_OK)
            return st;
    }
    /* inclusive weight per node: children were created after their parents */
    total = f->fin_total = (uint64_t *)malloc((f->nnodes ? f->nnodes : 1) * sizeof *total);
    if (!total)
        return OOM(f);
    for (i = 0; i < f->nnodes; i++)
        total[i] = f->nodes[i].self_w;
    for (i = f->nnodes; i-- > 0;)
        if (f->nodes[i].parent != NONE)
            total[f->nodes[i].parent] += total[i];
    for (i = 0; i < f->nnodes; i++) {
        const f_node *n = &f->nodes[i];
        f_edge key, *e;
        uint32_t callee, r = 0, p;
        if (n->parent == NONE)
            continue;
        callee = f->frames[n->frame].sub;
        /* Frames of the root sub itself (StatProfiler main and eval frames
         * are main::RUNTIME) are not calls, as in NYTProf: no edge into them,
         * and a sub called from one is called by the nearest enclosing real
         * sub (or the root), at the frame's own file and line. */
        if (callee == root_sub)
            continue;
        memset(&key, 0, sizeof key);
        key.thread = n->thread;
        key.callee = callee;
        if (f->nodes[n->parent].parent == NONE) {
            const f_sub *s = &f->subs[callee];
            key.caller = NONE;
            key.fid = f->files[s->file].fid;
            key.line = sub_first(s);
        } else {
            const f_frame *pf = &f->frames[f->nodes[n->parent].frame];
            uint32_t q = n->parent;
            while (f->nodes[q].parent != NONE && f->frames[f->nodes[q].frame].sub == root_sub)
                q = f->nodes[q].parent;
            key.caller = f->nodes[q].parent == NONE ? NONE : f->frames[f->nodes[q].frame].sub;
            key.fid = f->files[pf->file].fid;
            key.line = pf->line;
        }
        for (p = n->parent; f->nodes[p].parent != NONE; p = f->nodes[p].parent)
            if (f->frames[f->nodes[p].frame].sub == callee)
                r++;
        if (edge_add(E, &key, &e) < 0) {
            st = OOM(f);
            goto done;
        }
        e->count += n->calls;
        e->excl += n->self_w;
        if (r == 0)
            e->incl += total[i];
        else
            e->reci += total[i];
        if (r > e->rec_depth)
            e->rec_depth = r;
    }
    /* per thread (in order of first sample): its edges, then PID_END */
    order = f->fin_order = (uint64_t *)malloc((E->n ? E->n : 1) * sizeof *order);
    if (!order) {
        st = OOM(f);
        goto done;
    }
    for (i = 0; i < E->n; i++)
        order[i] = ((uint64_t)f->threads[E->e[i].thread].order << 32) | (uint64_t)i;
    qsort(order, E->n, sizeof *order, cmp_edge_thread);
    {
        size_t k = 0;
        uint32_t r;
        for (r = 0; r < f->started_threads; r++) {
            size_t ti;
            const f_thread *t = NULL;
            for (; k < E->n && (order[k] >> 32) == r; k++) {
                const f_edge *e = &E->e[order[k] & 0xFFFFFFFFu];
                const f_sub *callee = &f->subs[e->callee];
                pb_str caller = e->caller == NONE ? pb_str_c(root)
                                                  : pb_str_make(f->subs[e->caller].name, f->subs[e->caller].len, f->subs[e->caller].utf8);
                if (!pb_sink_wants(f->out, PB_T_SUB_CALLERS)) {
                    f->out->seq++;
                    continue;
                }
                pb_chunk_sub_callers(&c, e->fid, e->line, e->count > UINT32_MAX ? UINT32_MAX : (uint32_t)e->count,
                                     (double)e->incl * spw, (double)e->excl * spw, (double)e->reci * spw,
                                     e->rec_depth, pb_str_make(callee->name, callee->len, callee->utf8), caller);
                if ((st = emit(f, &c)) != PB_OK)
                    goto done;
            }
            ti = by_order[r];
            if (ti != NONE)
                t = &f->threads[ti];
            if (t) {
                uint64_t end = t->end_ts > t->first_ts ? t->end_ts : t->first_ts + 1;
                char key[48], val[24];
                snprintf(key, sizeof key, f->weight_ns ? "thread_%u_ns" : "thread_%u_samples", t->pid);
                snprintf(val, sizeof val, "%llu", (unsigned long long)t->weight);
                if ((st = emit_attr(f, key, pb_str_c(val))) != PB_OK)
                    goto done;
                /* samples without timestamps (StatProfiler): the span is the
                 * time the samples stand for, so nytprofhtml's totals add up */
                if (t->first_ts + t->sampled > end)
                    end = t->first_ts + t->sampled;
                pb_chunk_pid_end(&c, t->pid, (double)end / (double)f->cfg.ticks_per_sec);
                if ((st = emit(f, &c)) != PB_OK)
                    goto done;
            }
        }
    }
done:
    free(f->fin_total);
    free(f->fin_order);
    free(f->fin_byorder);
    free(f->fin_first);
    free(f->fin_child);
    free(f->fin_walk);
    free(f->fin_subs);
    pb_callev_free(&f->cev);
    free(E->e);
    free(E->tab.s);
    f->fin_total = f->fin_order = NULL;
    f->fin_byorder = f->fin_first = f->fin_child = f->fin_walk = f->fin_subs = NULL;
    memset(E, 0, sizeof *E);
    return st;
}

static void fold_cleanup(void *p) { pb_fold_free((pb_fold *)p); }

pb_fold *pb_fold_new(const pb_fold_config *cfg, pb_sink *out, pb_error *err)
{
    pb_fold *f = (pb_fold *)calloc(1, sizeof *f);
    if (!f) {
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    f->cfg = *cfg;
    if (!f->cfg.ticks_per_sec)
        f->cfg.ticks_per_sec = 1000000;
    f->out = out;
    f->err = err;
    f->synth_file = NONE;
    f->noframe = NONE;
    f->ss.attribute = ss_attribute;
    f->ss.frame = ss_frame;
    f->ss.thread = ss_thread;
    f->ss.sample = ss_sample;
    f->ss.note = ss_note;
    f->ss.finish = ss_finish;
    f->ss.span = NULL;
    f->ss.err = err;
    f->ss.ctx = f;
    f->ss.cleanups = out ? out->cleanups : NULL;
    if (f->cfg.ticks_per_weight > (uint64_t)INT32_MAX) {
        pb_fail(err, PB_ERR_UNSUPPORTED, 0,
                "sample interval of %llu ticks does not fit NYTProf's 32-bit tick counts",
                (unsigned long long)f->cfg.ticks_per_weight);
        free(f);
        return NULL;
    }
    pb_sink_defer(out, fold_cleanup, f);
    return f;
}

pb_sample_sink *pb_fold_sample_sink(pb_fold *f) { return &f->ss; }

void pb_fold_free(pb_fold *f)
{
    size_t i;
    if (!f)
        return;
    for (i = 0; i < f->nfiles; i++) {
        free(f->files[i].name);
        free(f->files[i].src);
    }
    for (i = 0; i < f->nsubs; i++)
        free(f->subs[i].name);
    for (i = 0; i < f->nthreads; i++) {
        free(f->threads[i].label);
        free(f->threads[i].prev);
        free(f->threads[i].path);
    }
    free(f->files);
    free(f->subs);
    free(f->frames);
    free(f->nodes);
    free(f->threads);
    free(f->tfiles.s);
    free(f->tsubs.s);
    free(f->tframes.s);
    free(f->tnodes.s);
    free(f->tthreads.s);
    free(f->namebuf);
    free(f->filebuf);
    free(f->fin_total);
    free(f->fin_order);
    free(f->fin_byorder);
    free(f->fin_first);
    free(f->fin_child);
    free(f->fin_walk);
    free(f->fin_subs);
    pb_callev_free(&f->cev);
    free(f->fin_edges.e);
    free(f->fin_edges.tab.s);
    pb_sink_undefer(f->out, f);
    free(f);
}
