/* write_pprof.c - stack samples -> gzipped profile.proto (see write_pprof.h).
 *
 * Names here: pp_ = the writer's sample-sink callbacks, pbuf = a protobuf message being written, h_
 * = hash callbacks of a pb_index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "write_pprof.h"
#include "fold_samples.h"
#include "model.h"
#include "output.h"
#include "util.h"

#define NONE UINT32_MAX

/* ---- protobuf wire format -------------------------------------------------- */
typedef struct {
    unsigned char *p;
    size_t n, cap;
    int oom;
} pbuf;

static void put(pbuf *b, const void *d, size_t n)
{
    if (b->oom || pb_grow((void **)&b->p, &b->cap, b->n + n, 1) < 0) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put_varint(pbuf *b, uint64_t v)
{
    unsigned char t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (unsigned char)v;
    put(b, t, n);
}

enum { WT_VARINT = 0, WT_LEN = 2 };

static void pprof_out_put_tag(pbuf *b, uint32_t field, int wt) { put_varint(b, ((uint64_t)field << 3) | (uint64_t)wt); }

/* a scalar field (proto3: zero is the default and is left out) */
static void put_u(pbuf *b, uint32_t field, uint64_t v)
{
    if (v) {
        pprof_out_put_tag(b, field, WT_VARINT);
        put_varint(b, v);
    }
}

static void put_len(pbuf *b, uint32_t field, const void *d, size_t n)
{
    pprof_out_put_tag(b, field, WT_LEN);
    put_varint(b, n);
    put(b, d, n);
}

/* ---- interning -------------------------------------------------------------- */
typedef struct {
    uint32_t name, file, hash, sys; /* string indices */
    int64_t start_line;
} p_func;

typedef struct {
    uint32_t func, hash; /* function index (id = index + 1; NONE: an address only) */
    int64_t line;
    uint64_t address;    /* where the source puts the frame (samples.h), 0 none */
    uint32_t mapping, place;
} p_loc;

typedef struct {
    uint64_t start, limit, offset;
    uint32_t file, build_id; /* string indices */
    unsigned flags;          /* PB_MAP_* */
} p_map;

typedef struct {
    uint64_t key;
    uint32_t label; /* string index */
    uint32_t pid;
    uint64_t weight;
} p_thread;

typedef struct {
    uint32_t thread, hash, depth;
    uint32_t op, status; /* string indices of the sample's tags (samples.h), 0: none */
    int base;       /* a diff's BEFORE side: values negated, label pprof::base */
    uint32_t labels; /* the source's labels (sample_values): an entry of labsets */
    size_t off;     /* in the location pool */
    size_t voff;    /* the source's values (ncols of them) in vpool */
    uint64_t weight;
} p_stack;

typedef struct pb_pprof {
    pb_stack_writer w; /* first (samples.h) */
    pb_strtab strs;
    p_func *funcs;
    size_t nfuncs, cfuncs;
    pb_index tfuncs;
    p_loc *locs;
    size_t nlocs, clocs;
    pb_index tlocs;
    p_thread *threads;
    size_t nthreads, cthreads;
    pb_index tthreads;
    p_stack *stacks;
    size_t nstacks, cstacks;
    pb_index tstacks;
    uint32_t *pool;
    size_t npool, cpool;
    char *namebuf;
    size_t cnamebuf;
    /* facts from the decoder's attributes and the samples */
    pb_sample_facts facts;   /* weight_ns: span time (a span format) or a merge's ns */
    int base;                /* diff: the samples now coming are the base's */
    uint32_t tag_op, tag_status; /* the next sample's tags (sample_tags), string indices, 0: none */
    uint32_t last_op, last_status; /* the last tags interned (0: none yet) */
    uint64_t ts_min, ts_max;
    pbuf msg, sub, sub2;
    /* what a source with value columns (pprof) tells beside the samples
     * (samples.h: columns, mapping, sample_values; attributes time_nanos,
     * duration_nanos, comment*, drop_frames, keep_frames) */
    uint32_t *cols;          /* its sample types: type, unit string ids (2 per column) */
    uint32_t ncols, dflt, period_type, period_unit;
    int64_t period;
    int have_cols, src_labels, placed;
    int64_t *vpool, *pend_values; /* the stacks' values; the next sample's */
    size_t nvpool, cvpool, cpend;
    uint32_t pend_labels;    /* the next sample's labels (labsets entry) */
    int have_pend;
    pb_strtab labsets;       /* label sets: (key, str, num, num_unit, is_num) records */
    pb_strtab locruns;       /* locations: runs of frame ids (uint32) */
    p_map *maps;
    size_t nmaps, cmaps;
    uint64_t time_nanos, duration_nanos;
    uint32_t *comments;
    size_t ncomments, ccomments;
    uint32_t drop_frames, keep_frames;
} pb_pprof;

#define OOM(p) pb_fail((p)->w.err, PB_ERR_LIMIT, 0, "out of memory while building the pprof profile")

static uint32_t pprof_out_h_func(const void *p, uint32_t i) { return ((const pb_pprof *)p)->funcs[i].hash; }
static uint32_t pprof_out_h_loc(const void *p, uint32_t i) { return ((const pb_pprof *)p)->locs[i].hash; }
static uint32_t pprof_out_h_thread(const void *p, uint32_t i) { return pb_mix64(((const pb_pprof *)p)->threads[i].key); }
static uint32_t pprof_out_h_stack(const void *p, uint32_t i) { return ((const pb_pprof *)p)->stacks[i].hash; }

static int str_id(pb_pprof *p, const char *s, size_t n, uint32_t *id)
{
    return pb_strtab_intern(&p->strs, s, n, id) < 0 ? -1 : 0;
}

static uint32_t str_c(pb_pprof *p, const char *s, int *bad)
{
    uint32_t id = 0;
    if (str_id(p, s, strlen(s), &id) < 0)
        *bad = 1;
    return id;
}

/* ---- the sample sink -------------------------------------------------------- */
static pb_status pp_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    char buf[64];
    if (pb_sample_facts_take(&p->facts, self, key, v))
        return PB_OK;
    pb_sample_attr_text(v, buf, sizeof buf);
    if (!strcmp(key, "diff_side"))
        p->base = strcmp(buf, "before") == 0; /* merge.h: pb_merge_samples, a diff */
    else if (!strcmp(key, "time_nanos"))
        p->time_nanos = strtoull(buf, NULL, 10);
    else if (!strcmp(key, "duration_nanos"))
        p->duration_nanos = strtoull(buf, NULL, 10);
    else if (!strcmp(key, "drop_frames") || !strcmp(key, "keep_frames") || !strcmp(key, "comment") ||
             !strncmp(key, "comment_", 8)) {
        uint32_t id;
        if (str_id(p, v.ptr ? v.ptr : "", v.len, &id) < 0)
            return OOM(p);
        if (key[0] == 'd')
            p->drop_frames = id;
        else if (key[0] == 'k')
            p->keep_frames = id;
        else if (pb_append((void **)&p->comments, &p->ncomments, &p->ccomments, &id, 1, sizeof id) < 0)
            return OOM(p);
    }
    else if (!strcmp(key, "source_begin_ns"))
        p->ts_min = strtoull(buf, NULL, 10);
    else if (!strcmp(key, "source_end_ns")) {
        uint64_t e = strtoull(buf, NULL, 10);
        if (e > p->ts_min)
            p->facts.duration_ns = e - p->ts_min;
    }
    return PB_OK;
}

static pb_status pp_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    size_t need = pb_frame_shown_name(fr, NULL, 0) + 1, j;
    uint32_t name, file, sys, h, i, fi = NONE;
    int64_t first = fr->first_line > 0 ? fr->first_line : 0, line = fr->line > 0 ? fr->line : 0;
    if (pb_grow((void **)&p->namebuf, &p->cnamebuf, need, 1) < 0)
        return OOM(p);
    pb_frame_shown_name(fr, p->namebuf, need);
    if (str_id(p, p->namebuf, need - 1, &name) < 0 ||
        str_id(p, fr->file.ptr ? fr->file.ptr : "", fr->file.len, &file) < 0)
        return OOM(p);
    sys = 0; /* none unless the source names one (pprof demangles a system name) */
    if (fr->sys_name.len && str_id(p, fr->sys_name.ptr, fr->sys_name.len, &sys) < 0)
        return OOM(p);
    if (fr->address || fr->mapping || fr->place)
        p->placed = 1;
    if (fr->place & PB_PLACE_ADDRESS)
        goto location; /* no function: the address is all there is */
    /* the function */
    h = pb_mix64(((uint64_t)name << 32) ^ ((uint64_t)file << 8) ^ (uint64_t)first ^ ((uint64_t)sys << 40));
    if (pb_index_reserve(&p->tfuncs, p->nfuncs, pprof_out_h_func, p) < 0)
        return OOM(p);
    PB_INDEX_FIND(&p->tfuncs, h, j, i,
                  p->funcs[i].hash == h && p->funcs[i].name == name && p->funcs[i].file == file &&
                      p->funcs[i].start_line == first && p->funcs[i].sys == sys);
    fi = i;
    if (fi == NONE) {
        if (!PB_GROW_ID(p->funcs, p->cfuncs, p->nfuncs))
            return OOM(p);
        p->funcs[p->nfuncs].name = name;
        p->funcs[p->nfuncs].file = file;
        p->funcs[p->nfuncs].sys = sys;
        p->funcs[p->nfuncs].start_line = first;
        p->funcs[p->nfuncs].hash = h;
        fi = (uint32_t)p->nfuncs++;
        pb_index_set(&p->tfuncs, j, fi);
    }
location:
    /* the frame: (function, line, and where the source puts it) */
    h = pb_mix64(((uint64_t)fi << 32) ^ (uint64_t)line) ^ pb_mix64(fr->address ^ ((uint64_t)fr->mapping << 32) ^
                                                                   ((uint64_t)fr->place << 60));
    if (pb_index_reserve(&p->tlocs, p->nlocs, pprof_out_h_loc, p) < 0)
        return OOM(p);
    PB_INDEX_FIND(&p->tlocs, h, j, i,
                  p->locs[i].hash == h && p->locs[i].func == fi && p->locs[i].line == line &&
                      p->locs[i].address == fr->address && p->locs[i].mapping == fr->mapping &&
                      p->locs[i].place == fr->place);
    if ((*id = i) != PB_INDEX_NONE)
        return PB_OK;
    if (!PB_GROW_ID(p->locs, p->clocs, p->nlocs))
        return OOM(p);
    p->locs[p->nlocs].func = fi;
    p->locs[p->nlocs].line = line;
    p->locs[p->nlocs].hash = h;
    p->locs[p->nlocs].address = fr->address;
    p->locs[p->nlocs].mapping = fr->mapping;
    p->locs[p->nlocs].place = fr->place;
    *id = (uint32_t)p->nlocs++;
    pb_index_set(&p->tlocs, j, *id);
    return PB_OK;
}

static pb_status pprof_out_get_thread(pb_pprof *p, uint64_t key, uint32_t *ti)
{
    uint32_t i;
    size_t j;
    if (pb_index_reserve(&p->tthreads, p->nthreads, pprof_out_h_thread, p) < 0)
        return OOM(p);
    PB_INDEX_FIND(&p->tthreads, pb_mix64(key), j, i, p->threads[i].key == key);
    if ((*ti = i) != PB_INDEX_NONE)
        return PB_OK;
    if (!PB_GROW_ID(p->threads, p->cthreads, p->nthreads))
        return OOM(p);
    memset(&p->threads[p->nthreads], 0, sizeof *p->threads);
    p->threads[p->nthreads].key = key;
    {
        char l[24];
        snprintf(l, sizeof l, "%llu", (unsigned long long)key);
        if (str_id(p, l, strlen(l), &p->threads[p->nthreads].label) < 0)
            return OOM(p);
    }
    *ti = (uint32_t)p->nthreads++;
    pb_index_set(&p->tthreads, j, *ti);
    return PB_OK;
}

static pb_status pp_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    uint32_t ti;
    pb_status st;
    (void)ppid;
    if ((st = pprof_out_get_thread(p, key, &ti)) != PB_OK)
        return st;
    p->threads[ti].pid = pid;
    if (label && str_id(p, label, strlen(label), &p->threads[ti].label) < 0)
        return OOM(p);
    return PB_OK;
}

/* str_id, first trying the string *last names (a sample's tags are mostly
 * its predecessor's); *last becomes the id */
static int str_id_last(pb_pprof *p, pb_str s, uint32_t *last, uint32_t *id)
{
    if (*last && pb_strtab_len(&p->strs, *last) == s.len &&
        memcmp(pb_strtab_ptr(&p->strs, *last), s.ptr, s.len) == 0) {
        *id = *last;
        return 0;
    }
    if (str_id(p, s.ptr, s.len, id) < 0)
        return -1;
    *last = *id;
    return 0;
}

/* what the source records about the next sample: its labels opcode and
 * thread_status (samples.h) */
static pb_status pp_sample_tags(pb_sample_sink *self, pb_str op, pb_str status)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    p->tag_op = p->tag_status = 0;
    if ((op.len && str_id_last(p, op, &p->last_op, &p->tag_op) < 0) ||
        (status.len && str_id_last(p, status, &p->last_status, &p->tag_status) < 0))
        return OOM(p);
    return PB_OK;
}

static pb_status add_values(pb_pprof *p, const p_stack *st, int pend);

static pb_status pp_sample(pb_sample_sink *self, uint64_t thread_key, const uint32_t *ids, uint32_t depth,
                           uint64_t weight, uint64_t ts)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    uint32_t ti, h, i, op = p->tag_op, status = p->tag_status;
    size_t j, off;
    pb_status st;
    uint32_t labels = p->have_pend ? p->pend_labels : 0;
    int pend = p->have_pend;
    p->tag_op = p->tag_status = 0; /* the tags are this sample's only */
    p->have_pend = 0;               /* so are the values and labels */
    if ((st = pprof_out_get_thread(p, thread_key, &ti)) != PB_OK)
        return st;
    /* a stack's weight is at most its thread's: checking the threads' sums
     * (and their products with the interval, in pp_finish) covers both */
    if ((st = pb_checked_add(p->w.err, &p->threads[ti].weight, weight, "a thread's sample weight", "")) != PB_OK)
        return st;
    if (ts) {
        if (!p->ts_min || ts < p->ts_min)
            p->ts_min = ts;
        if (ts > p->ts_max)
            p->ts_max = ts;
    }
    if (weight == 0 && !pend)
        return PB_OK;
    if ((st = pb_sample_noframe(self, &ids, &depth)) != PB_OK) /* samples.h */
        return st;
    for (i = 0; i < depth; i++)
        if (ids[i] >= p->nlocs)
            return pb_fail(p->w.err, PB_ERR_CORRUPT, 0, "sample uses frame id %u, only %zu interned", ids[i], p->nlocs);
    h = pb_mix64(ti ^ ((uint64_t)p->base << 40) ^ ((uint64_t)op << 20) ^ ((uint64_t)status << 44)) ^
        pb_hash_bytes((const char *)ids, depth * sizeof *ids) ^ pb_mix64((uint64_t)labels << 8);
    if (pb_index_reserve(&p->tstacks, p->nstacks, pprof_out_h_stack, p) < 0)
        return OOM(p);
    PB_INDEX_FIND(&p->tstacks, h, j, i,
                  p->stacks[i].hash == h && p->stacks[i].thread == ti && p->stacks[i].depth == depth &&
                      p->stacks[i].base == p->base && p->stacks[i].op == op && p->stacks[i].status == status &&
                      p->stacks[i].labels == labels && memcmp(p->pool + p->stacks[i].off, ids, depth * sizeof *ids) == 0);
    if (i != PB_INDEX_NONE) {
        p->stacks[i].weight += weight;
        return add_values(p, &p->stacks[i], pend);
    }
    off = p->npool;
    if (p->nstacks >= UINT32_MAX - 1 || pb_append((void **)&p->pool, &p->npool, &p->cpool, ids, depth, sizeof *ids) < 0 ||
        pb_grow((void **)&p->stacks, &p->cstacks, p->nstacks + 1, sizeof *p->stacks) < 0)
        return OOM(p);
    p->stacks[p->nstacks] = (p_stack){.thread = ti, .hash = h, .depth = depth, .op = op, .status = status,
                                      .base = p->base, .labels = labels, .off = off, .voff = p->nvpool,
                                      .weight = weight};
    if (p->have_cols) {
        static const int64_t zero = 0;
        for (i = 0; i < p->ncols; i++)
            if (pb_append((void **)&p->vpool, &p->nvpool, &p->cvpool, &zero, 1, sizeof zero) < 0)
                return OOM(p);
    }
    pb_index_set(&p->tstacks, j, (uint32_t)p->nstacks++);
    return add_values(p, &p->stacks[p->nstacks - 1], pend);
}

/* the source's values of the sample (pend: pp_sample_values gave them) into the stack's sums */
static pb_status add_values(pb_pprof *p, const p_stack *st, int pend)
{
    uint32_t i;
    if (!pend || !p->have_cols)
        return PB_OK;
    for (i = 0; i < p->ncols; i++) {
        int64_t *v = &p->vpool[st->voff + i];
        if ((p->pend_values[i] > 0 && *v > INT64_MAX - p->pend_values[i]) ||
            (p->pend_values[i] < 0 && *v < INT64_MIN - p->pend_values[i]))
            return pb_fail(p->w.err, PB_ERR_LIMIT, 0, "a stack's sum of sample values does not fit 63 bits");
        *v += p->pend_values[i];
    }
    return PB_OK;
}

/* ---- a source with value columns (samples.h) ---------------------------------- */
static pb_status pp_columns(pb_sample_sink *self, const pb_sample_columns *c)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    uint32_t i;
    if (p->have_cols || c->n == 0)
        return PB_OK; /* the first source's columns (a merge does not send them) */
    if (!(p->cols = (uint32_t *)calloc((size_t)c->n * 2, sizeof *p->cols)) ||
        pb_grow((void **)&p->pend_values, &p->cpend, c->n, sizeof *p->pend_values) < 0)
        return OOM(p);
    for (i = 0; i < c->n; i++)
        if (str_id(p, c->type[i].ptr ? c->type[i].ptr : "", c->type[i].len, &p->cols[2 * i]) < 0 ||
            str_id(p, c->unit[i].ptr ? c->unit[i].ptr : "", c->unit[i].len, &p->cols[2 * i + 1]) < 0)
            return OOM(p);
    p->ncols = c->n;
    p->dflt = c->dflt < c->n ? p->cols[2 * c->dflt] : 0;
    if ((c->period_type.len || c->period_unit.len) &&
        (str_id(p, c->period_type.ptr, c->period_type.len, &p->period_type) < 0 ||
         str_id(p, c->period_unit.ptr, c->period_unit.len, &p->period_unit) < 0))
        return OOM(p);
    p->period = c->period;
    p->have_cols = 1;
    return PB_OK;
}

static pb_status pp_mapping(pb_sample_sink *self, const pb_mapping *m, uint32_t *id)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    p_map mp;
    memset(&mp, 0, sizeof mp);
    mp.start = m->start;
    mp.limit = m->limit;
    mp.offset = m->offset;
    mp.flags = m->flags;
    if (p->nmaps >= UINT32_MAX - 1 || str_id(p, m->file.ptr ? m->file.ptr : "", m->file.len, &mp.file) < 0 ||
        str_id(p, m->build_id.ptr ? m->build_id.ptr : "", m->build_id.len, &mp.build_id) < 0 ||
        pb_append((void **)&p->maps, &p->nmaps, &p->cmaps, &mp, 1, sizeof mp) < 0)
        return OOM(p);
    *id = (uint32_t)p->nmaps;
    return PB_OK;
}

/* one label record of a label set (labsets): key, str, num_unit string ids, num, is_num */
typedef struct {
    uint32_t key, str, unit, is_num;
    int64_t num;
} p_label;

static pb_status pp_sample_values(pb_sample_sink *self, const int64_t *values, uint32_t n, const pb_label *labels,
                                  uint32_t nlabels)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    uint32_t i;
    p_label lb;
    if (!p->have_cols || n != p->ncols)
        return PB_OK;
    memcpy(p->pend_values, values, (size_t)n * sizeof *values);
    p->src_labels = 1;
    /* the label set as one string of records, interned */
    p->sub2.n = 0;
    for (i = 0; i < nlabels; i++) {
        memset(&lb, 0, sizeof lb);
        if (str_id(p, labels[i].key.ptr ? labels[i].key.ptr : "", labels[i].key.len, &lb.key) < 0 ||
            str_id(p, labels[i].str.ptr ? labels[i].str.ptr : "", labels[i].str.len, &lb.str) < 0 ||
            str_id(p, labels[i].num_unit.ptr ? labels[i].num_unit.ptr : "", labels[i].num_unit.len, &lb.unit) < 0)
            return OOM(p);
        lb.num = labels[i].num;
        lb.is_num = (uint32_t)labels[i].is_num;
        put(&p->sub2, &lb, sizeof lb);
    }
    if (p->sub2.oom || pb_strtab_intern(&p->labsets, p->sub2.p ? (const char *)p->sub2.p : "", p->sub2.n,
                                        &p->pend_labels) < 0)
        return OOM(p);
    p->have_pend = 1;
    return PB_OK;
}

/* ---- finish: the message, gzipped ------------------------------------------- */
static void value_type(pbuf *msg, pbuf *sub, uint32_t field, uint32_t type, uint32_t unit)
{
    sub->n = 0;
    put_u(sub, 1, type);
    put_u(sub, 2, unit);
    put_len(msg, field, sub->p ? sub->p : (unsigned char *)"", sub->n);
}

static pb_status gzip_out(pb_pprof *p)
{
    z_stream z;
    unsigned char buf[65536];
    int rc;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return OOM(p);
    z.next_in = p->msg.p;
    z.avail_in = (uInt)p->msg.n; /* (the message is checked below 4 GiB) */
    do {
        z.next_out = buf;
        z.avail_out = sizeof buf;
        rc = deflate(&z, Z_FINISH);
        if (rc == Z_STREAM_ERROR) {
            deflateEnd(&z);
            return pb_fail_nooff(p->w.err, PB_ERR_IO, "zlib deflate failed");
        }
        if (fwrite(buf, 1, sizeof buf - z.avail_out, p->w.out) != sizeof buf - z.avail_out) {
            deflateEnd(&z);
            return pb_fail_write(p->w.err, "the pprof profile", errno);
        }
    } while (rc != Z_STREAM_END);
    deflateEnd(&z);
    return PB_OK;
}

/* one label thread_status=<flag> per flag of the comma-separated string
 * status (a string index) */
/* one Label {key, str, num} of a sample (0: the field is left out), built in s2, into s */
static void put_label(pbuf *s, pbuf *s2, uint32_t key, uint32_t str, uint64_t num)
{
    s2->n = 0;
    put_u(s2, 1, key);
    put_u(s2, 2, str);
    put_u(s2, 3, num);
    put_len(s, 3, s2->p, s2->n);
}

static pb_status put_status_labels(pb_pprof *p, pbuf *s, pbuf *s2, uint32_t key, uint32_t status)
{
    size_t n = pb_strtab_len(&p->strs, status), from = 0, i;
    /* a copy: interning the flags may move the arena */
    if (pb_grow((void **)&p->namebuf, &p->cnamebuf, n + 1, 1) < 0)
        return PB_ERR_LIMIT;
    memcpy(p->namebuf, pb_strtab_ptr(&p->strs, status), n);
    for (i = 0; i <= n; i++) {
        uint32_t v;
        if (i < n && p->namebuf[i] != ',')
            continue;
        if (i > from) {
            if (str_id(p, p->namebuf + from, i - from, &v) < 0)
                return PB_ERR_LIMIT;
            put_label(s, s2, key, v, 0);
        }
        from = i + 1;
    }
    return PB_OK;
}

/* the string ids of the names pp_finish writes */
typedef struct {
    uint32_t samples, count, clock, ns, thread, pid, base, truth, op, status;
} pp_keys;

static int pp_keys_get(pb_pprof *p, pp_keys *k)
{
    int bad = 0;
    k->samples = str_c(p, "samples", &bad);
    k->count = str_c(p, "count", &bad);
    k->clock = str_c(p, p->facts.weight_ns ? "wall" : p->facts.cpu ? "cpu" : "wall", &bad);
    k->ns = str_c(p, "nanoseconds", &bad);
    k->thread = str_c(p, "thread", &bad);
    k->pid = str_c(p, "pid", &bad);
    k->base = str_c(p, "pprof::base", &bad);
    k->truth = str_c(p, "true", &bad);
    k->op = str_c(p, "opcode", &bad);
    k->status = str_c(p, "thread_status", &bad);
    return bad ? -1 : 0;
}

/* a time column (ns) beside the counts: not for counts without an interval */
#define PP_TIME_COLUMN(p) ((p)->facts.weight_ns || (p)->facts.interval_ns)

/* one Sample: locations leaf first (the sink's order), values, labels */
static pb_status put_sample(pb_pprof *p, const p_stack *st, const pp_keys *k)
{
    pbuf *m = &p->msg, *s = &p->sub, *s2 = &p->sub2;
    const p_thread *t = &p->threads[st->thread];
    /* int64 values; a diff's base side is negative (two's complement varint) */
    uint64_t v1 = st->weight, v2 = p->facts.weight_ns ? st->weight : st->weight * p->facts.interval_ns;
    uint32_t d, e, loc;
    s->n = 0;
    s2->n = 0;
    for (d = 0; d < st->depth; d++) {
        if (!p->placed) {
            put_varint(s2, (uint64_t)p->pool[st->off + d] + 1);
            continue;
        }
        /* frames placed by the source: a run of inlined frames and the one
         * they were inlined into is one Location */
        for (e = d; e + 1 < st->depth && (p->locs[p->pool[st->off + e]].place & PB_PLACE_INLINED); e++)
            ;
        if (pb_strtab_intern(&p->locruns, (const char *)(p->pool + st->off + d), (size_t)(e - d + 1) * sizeof *p->pool,
                             &loc) < 0)
            return OOM(p);
        put_varint(s2, (uint64_t)loc + 1);
        d = e;
    }
    put_len(s, 1, s2->p, s2->n);
    s2->n = 0;
    if (st->base) {
        v1 = (uint64_t)0 - v1;
        v2 = (uint64_t)0 - v2;
    }
    if (p->have_cols) {
        for (d = 0; d < p->ncols; d++)
            put_varint(s2, (uint64_t)p->vpool[st->voff + d]);
    } else {
        if (!p->facts.weight_ns)
            put_varint(s2, v1);
        if (PP_TIME_COLUMN(p))
            put_varint(s2, v2);
    }
    put_len(s, 2, s2->p, s2->n);
    if (st->base)
        put_label(s, s2, k->base, k->truth, 0);
    if (p->src_labels) {
        /* the source's own labels, as recorded */
        size_t n = pb_strtab_len(&p->labsets, st->labels), at;
        const char *rec = pb_strtab_ptr(&p->labsets, st->labels);
        p_label lb;
        for (at = 0; at + sizeof lb <= n; at += sizeof lb) {
            memcpy(&lb, rec + at, sizeof lb);
            s2->n = 0;
            put_u(s2, 1, lb.key);
            if (lb.is_num)
                put_u(s2, 3, (uint64_t)lb.num);
            else
                put_u(s2, 2, lb.str);
            put_u(s2, 4, lb.unit);
            put_len(s, 3, s2->p, s2->n);
        }
    } else {
        put_label(s, s2, k->thread, t->label, 0);
        if (t->pid)
            put_label(s, s2, k->pid, 0, t->pid);
    }
    if (st->op)
        put_label(s, s2, k->op, st->op, 0);
    if (st->status && put_status_labels(p, s, s2, k->status, st->status) != PB_OK)
        return OOM(p);
    put_len(m, 2, s->p, s->n);
    return PB_OK;
}

/* the locations of frames placed by the source (runs of frame ids, put_sample) */
static void put_placed_locations(pb_pprof *p)
{
    pbuf *m = &p->msg, *s = &p->sub, *s2 = &p->sub2;
    size_t i, k, n;
    uint32_t f;
    for (i = 0; i < p->locruns.n; i++) {
        const char *run = pb_strtab_ptr(&p->locruns, (uint32_t)i);
        n = pb_strtab_len(&p->locruns, (uint32_t)i) / sizeof f;
        memcpy(&f, run + (n - 1) * sizeof f, sizeof f); /* the outermost: where the code is */
        s->n = 0;
        put_u(s, 1, i + 1);
        put_u(s, 2, p->locs[f].mapping);
        put_u(s, 3, p->locs[f].address);
        for (k = 0; k < n; k++) {
            memcpy(&f, run + k * sizeof f, sizeof f);
            if (p->locs[f].func == NONE)
                continue; /* an address only */
            s2->n = 0;
            put_u(s2, 1, (uint64_t)p->locs[f].func + 1);
            put_u(s2, 2, (uint64_t)p->locs[f].line);
            put_len(s, 4, s2->p, s2->n);
        }
        put_len(m, 4, s->p, s->n);
    }
}

/* the mapping, locations, functions and the string table */
static void put_tables(pb_pprof *p)
{
    pbuf *m = &p->msg, *s = &p->sub, *s2 = &p->sub2;
    size_t i;
    for (i = 0; i < p->nmaps; i++) {
        /* the source's mappings */
        const p_map *mp = &p->maps[i];
        s->n = 0;
        put_u(s, 1, i + 1);
        put_u(s, 2, mp->start);
        put_u(s, 3, mp->limit);
        put_u(s, 4, mp->offset);
        put_u(s, 5, mp->file);
        put_u(s, 6, mp->build_id);
        put_u(s, 7, (mp->flags & PB_MAP_FUNCTIONS) != 0);
        put_u(s, 8, (mp->flags & PB_MAP_FILENAMES) != 0);
        put_u(s, 9, (mp->flags & PB_MAP_LINES) != 0);
        put_u(s, 10, (mp->flags & PB_MAP_INLINES) != 0);
        put_len(m, 3, s->p, s->n);
    }
    if (!p->placed) {
        /* one mapping: the functions, file names and lines are known */
        s->n = 0;
        put_u(s, 1, 1);
        put_u(s, 7, 1);
        put_u(s, 8, 1);
        put_u(s, 9, 1);
        if (!p->nmaps)
            put_len(m, 3, s->p, s->n);
    } else {
        put_placed_locations(p);
    }
    for (i = 0; i < p->nlocs && !p->placed; i++) {
        s->n = 0;
        s2->n = 0;
        put_u(s, 1, i + 1);
        put_u(s, 2, 1);
        put_u(s2, 1, (uint64_t)p->locs[i].func + 1);
        put_u(s2, 2, (uint64_t)p->locs[i].line);
        put_len(s, 4, s2->p, s2->n);
        put_len(m, 4, s->p, s->n);
    }
    for (i = 0; i < p->nfuncs; i++) {
        s->n = 0;
        put_u(s, 1, i + 1);
        put_u(s, 2, p->funcs[i].name);
        put_u(s, 3, p->funcs[i].sys);
        put_u(s, 4, p->funcs[i].file);
        put_u(s, 5, (uint64_t)p->funcs[i].start_line);
        put_len(m, 5, s->p, s->n);
    }
    for (i = 0; i < p->strs.n; i++)
        put_len(m, 6, pb_strtab_ptr(&p->strs, (uint32_t)i), pb_strtab_len(&p->strs, (uint32_t)i));
}

static pb_status pp_finish(pb_sample_sink *self)
{
    pb_pprof *p = (pb_pprof *)self->ctx;
    pbuf *m = &p->msg, *s = &p->sub, *s2 = &p->sub2;
    pp_keys k;
    size_t i;
    uint64_t dur = p->facts.duration_ns;
    pb_status st;
    if (pp_keys_get(p, &k) < 0)
        return OOM(p);
    /* every value is an int64: weight x interval must not wrap */
    for (i = 0; i < p->nthreads; i++) {
        uint64_t ns;
        if (!p->facts.weight_ns &&
            (st = pb_checked_mul(p->w.err, p->threads[i].weight, p->facts.interval_ns, "a thread's sampled time",
                                 "ns", &ns)) != PB_OK)
            return st;
    }
    /* sample_type: the source's columns; else counts without an interval
     * (a pprof input's bytes or counts) have no time column, which would be
     * all zeros */
    for (i = 0; i < p->ncols; i++)
        value_type(m, s, 1, p->cols[2 * i], p->cols[2 * i + 1]);
    if (!p->have_cols && !p->facts.weight_ns)
        value_type(m, s, 1, k.samples, k.count);
    if (!p->have_cols && PP_TIME_COLUMN(p))
        value_type(m, s, 1, k.clock, k.ns);
    for (i = 0; i < p->nstacks; i++)
        if ((st = put_sample(p, &p->stacks[i], &k)) != PB_OK)
            return st;
    if (p->placed && p->locruns.n > UINT32_MAX - 1)
        return OOM(p);
    put_tables(p);
    if (p->drop_frames)
        put_u(m, 7, p->drop_frames);
    if (p->keep_frames)
        put_u(m, 8, p->keep_frames);
    if (p->time_nanos && p->time_nanos <= (uint64_t)INT64_MAX)
        put_u(m, 9, p->time_nanos);
    else if (p->facts.basetime && p->facts.basetime < UINT64_C(9000000000))
        put_u(m, 9, p->facts.basetime * UINT64_C(1000000000));
    if (p->duration_nanos && p->duration_nanos <= (uint64_t)INT64_MAX)
        dur = p->duration_nanos;
    if (!dur && p->ts_max > p->ts_min && !p->facts.weight_ns &&
        p->ts_max - p->ts_min <= ((uint64_t)INT64_MAX - p->facts.interval_ns) / 1000u)
        dur = (p->ts_max - p->ts_min) * 1000u + p->facts.interval_ns; /* timestamps are µs */
    if (!dur && !p->facts.weight_ns)
        for (i = 0; i < p->nthreads; i++)
            if (p->threads[i].weight * p->facts.interval_ns > dur)
                dur = p->threads[i].weight * p->facts.interval_ns;
    put_u(m, 10, dur);
    if (p->have_cols) {
        /* the source's period and default */
        if (p->period_type || p->period_unit)
            value_type(m, s, 11, p->period_type, p->period_unit);
        put_u(m, 12, (uint64_t)p->period);
        for (i = 0; i < p->ncomments; i++) {
            pprof_out_put_tag(m, 13, WT_VARINT);
            put_varint(m, p->comments[i]);
        }
        put_u(m, 14, p->dflt);
    } else {
        /* period_type: what a period is, also for a merge's or a span format's
         * ns (whose period, no fixed interval, stays 0) */
        if (PP_TIME_COLUMN(p))
            value_type(m, s, 11, k.clock, k.ns);
        if (!p->facts.weight_ns)
            put_u(m, 12, p->facts.interval_ns);
        /* counts with no interval (folded stacks, a pprof input's bytes): the
         * counts are the only sample type; default_sample_type names them */
        if (!p->facts.weight_ns && !p->facts.interval_ns)
            put_u(m, 14, k.samples);
    }
    if (m->oom || s->oom || s2->oom)
        return OOM(p);
    if (m->n > UINT32_MAX)
        return pb_fail(p->w.err, PB_ERR_LIMIT, 0, "the pprof profile would exceed 4 GiB");
    return gzip_out(p);
}

static const pb_sample_sink sink_calls = {.sums_stacks = 1, .attribute = pp_attribute, .frame = pp_frame, .thread = pp_thread,
    .sample = pp_sample, .note = pb_sample_note_ignore, .finish = pp_finish, .sample_tags = pp_sample_tags,
    .columns = pp_columns, .mapping = pp_mapping, .sample_values = pp_sample_values};

/* ---- life ---------------------------------------------------------------------- */
static void pp_teardown(pb_stack_writer *w)
{
    pb_pprof *p = (pb_pprof *)w;
    PB_FREE_ALL(p->funcs, p->locs, p->threads, p->stacks, p->pool, p->namebuf, p->msg.p,
                p->sub.p, p->sub2.p, p->cols, p->vpool, p->pend_values, p->maps, p->comments);
    pb_strtab_free(&p->strs);
    pb_strtab_free(&p->labsets);
    pb_strtab_free(&p->locruns);
    PB_INDEX_FREE_ALL(&p->tfuncs, &p->tlocs, &p->tthreads, &p->tstacks);
}

pb_stack_writer *pb_pprof_new(FILE *out, pb_error *err)
{
    pb_pprof *p = (pb_pprof *)pb_stack_writer_new(sizeof *p, &sink_calls, pp_teardown, out, NULL, err);
    uint32_t zero;
    if (!p)
        return NULL;
    if (str_id(p, "", 0, &zero) < 0) { /* string_table[0] must be "" */
        pb_stack_writer_free(&p->w);
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    return &p->w;
}
