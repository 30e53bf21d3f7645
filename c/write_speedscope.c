/* write_speedscope.c - stack samples -> speedscope JSON (see write_speedscope.h).
 *
 * Names here: sc_ = the writer's sample-sink callbacks, s_out = the buffered JSON output
 * (json_out.h) and so_event one event in it, s_ = this writer's types, h_ = hash callbacks of
 * a pb_index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write_speedscope.h"
#include "fold_samples.h"
#include "model.h"
#include "json_lines.h"
#include "json_out.h"
#include "output.h"
#include "util.h"
#include "tick_spool.h"

typedef struct {
    uint32_t name, file; /* string ids */
    int32_t line;
} s_frame;

typedef struct {
    uint64_t begin, end;
    uint32_t frame, seq;
} s_span;

typedef struct {
    uint64_t key;
    char label[24];
    uint64_t total;
    uint32_t first, last; /* its stacks, a chain through s_stack.next (first seen first) */
    s_span *spans;        /* evented: the thread's spans (a span format's) */
    size_t nspans, cspans;
    pb_tick_chain ticks;  /* every sample: x its stack, a its time (µs), b its weight */
    int timed;            /* a sample had a time (not 0): the thread is written evented, at its times */
} s_thread;

typedef struct {
    uint32_t thread, hash, depth, next;
    size_t off;
    uint64_t weight;
} s_stack;

typedef struct {
    pb_stack_writer w; /* first (samples.h) */
    pb_strtab strs;
    s_frame *frames;
    size_t nframes, cframes;
    pb_index fix;
    s_thread *threads;
    size_t nthreads, cthreads;
    pb_index tix;
    s_stack *stacks;
    size_t nstacks, cstacks;
    pb_index six;
    uint32_t *pool, *path;
    size_t npool, cpool, cpath;
    char *namebuf;
    size_t cnamebuf;
    pb_sample_facts facts; /* weight_ns: weights are ns already */
    pb_tick_spool spool;   /* the threads' ticks */
    uint64_t origin;       /* the earliest sample time (µs): time 0 of every timed thread */
    int time_order;        /* 0: every thread as summed stacks, whatever times its samples have (pb_options) */
    int have_origin;
    uint64_t last_key;     /* the thread speedscope_out_get_thread() found last (spans come thread by thread) */
    uint32_t last_ti;
    int have_last;
    /* the threads' names (ATTRIBUTE thread_<label>_name: e.g. a block
     * profiler's "Main"): tlabels interns the labels, tname[label id] the name's id in
     * strs + 1 (0: none), nuse[name id] how many threads have it */
    pb_strtab tlabels;
    uint32_t *tname, *nuse;
    size_t ctname, cnuse;
} pb_speedscope;

#define NONE UINT32_MAX
#define S_OOM(s) pb_fail((s)->w.err, PB_ERR_LIMIT, 0, "out of memory while building the speedscope file")

static uint32_t speedscope_out_frame_hash(uint32_t name, uint32_t file) { return pb_mix64(((uint64_t)name << 32) | file); }
static uint32_t h_frame(const void *s, uint32_t i)
{
    const s_frame *f = &((const pb_speedscope *)s)->frames[i];
    return speedscope_out_frame_hash(f->name, f->file);
}
static uint32_t speedscope_out_h_thread(const void *s, uint32_t i) { return pb_mix64(((const pb_speedscope *)s)->threads[i].key); }
static uint32_t speedscope_out_h_stack(const void *s, uint32_t i) { return ((const pb_speedscope *)s)->stacks[i].hash; }

static pb_status sc_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    pb_speedscope *s = (pb_speedscope *)self->ctx;
    size_t kl = strlen(key), d;
    uint32_t lid, nid;
    if (pb_sample_facts_take(&s->facts, self, key, v))
        return PB_OK;
    /* thread_<label>_name: what the profile calls the thread */
    for (d = 7; d < kl && key[d] >= '0' && key[d] <= '9'; d++)
        ;
    if (kl > 12 && !strncmp(key, "thread_", 7) && d > 7 && d < sizeof s->threads->label + 7 && !strcmp(key + d, "_name") &&
        v.len) {
        if (pb_strtab_intern(&s->tlabels, key + 7, d - 7, &lid) < 0 || pb_strtab_intern(&s->strs, v.ptr, v.len, &nid) < 0 ||
            pb_grow_zero((void **)&s->tname, &s->ctname, (size_t)lid + 1, sizeof *s->tname) < 0)
            return S_OOM(s);
        s->tname[lid] = nid + 1;
    }
    return PB_OK;
}

/* the name of thread th's profile: its name (with its label when another
 * thread has it too), else "thread <label>" */
static pb_status thread_title(pb_speedscope *s, const s_thread *th, char *buf, size_t cap, int count)
{
    uint32_t lid, nid;
    int found = pb_strtab_intern(&s->tlabels, th->label, strlen(th->label), &lid);
    if (found < 0)
        return S_OOM(s);
    if (!found || lid >= s->ctname || !s->tname[lid]) {
        if (!count)
            snprintf(buf, cap, "thread %s", th->label);
        return PB_OK;
    }
    nid = s->tname[lid] - 1;
    if (count) {
        if (pb_grow_zero((void **)&s->nuse, &s->cnuse, (size_t)nid + 1, sizeof *s->nuse) < 0)
            return S_OOM(s);
        s->nuse[nid]++;
        return PB_OK;
    }
    if (s->nuse[nid] > 1)
        snprintf(buf, cap, "%.*s (%s)", (int)pb_strtab_len(&s->strs, nid), pb_strtab_ptr(&s->strs, nid), th->label);
    else
        snprintf(buf, cap, "%.*s", (int)pb_strtab_len(&s->strs, nid), pb_strtab_ptr(&s->strs, nid));
    return PB_OK;
}

static pb_status sc_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    pb_speedscope *s = (pb_speedscope *)self->ctx;
    size_t need = pb_frame_shown_name(fr, NULL, 0) + 1, j;
    uint32_t h, i, name, file;
    s_frame *f;
    if (pb_grow((void **)&s->namebuf, &s->cnamebuf, need, 1) < 0)
        return S_OOM(s);
    pb_frame_shown_name(fr, s->namebuf, need);
    if (pb_strtab_intern(&s->strs, s->namebuf, need - 1, &name) < 0 ||
        pb_strtab_intern(&s->strs, fr->file.ptr ? fr->file.ptr : "", fr->file.len, &file) < 0 ||
        pb_index_reserve(&s->fix, s->nframes, h_frame, s) < 0)
        return S_OOM(s);
    h = speedscope_out_frame_hash(name, file);
    PB_INDEX_FIND(&s->fix, h, j, i, s->frames[i].name == name && s->frames[i].file == file);
    if (i != PB_INDEX_NONE) {
        f = &s->frames[i];
        if (fr->first_line > 0 && (f->line <= 0 || fr->first_line < f->line))
            f->line = fr->first_line;
        *id = i;
        return PB_OK;
    }
    if (!(f = PB_GROW_ID(s->frames, s->cframes, s->nframes)))
        return S_OOM(s);
    f->name = name;
    f->file = file;
    f->line = fr->first_line > 0 ? fr->first_line : (fr->line > 0 ? fr->line : 0);
    *id = (uint32_t)s->nframes++;
    pb_index_set(&s->fix, j, *id);
    return PB_OK;
}

static pb_status speedscope_out_get_thread(pb_speedscope *s, uint64_t key, const char *label, uint32_t *ti)
{
    size_t j;
    s_thread *t;
    uint32_t i;
    if (!label && s->have_last && s->last_key == key) {
        *ti = s->last_ti;
        return PB_OK;
    }
    if (pb_index_reserve(&s->tix, s->nthreads, speedscope_out_h_thread, s) < 0)
        return S_OOM(s);
    PB_INDEX_FIND(&s->tix, pb_mix64(key), j, i, s->threads[i].key == key);
    if (i != PB_INDEX_NONE) {
        *ti = s->last_ti = i;
        s->last_key = key;
        s->have_last = 1;
        if (label)
            snprintf(s->threads[i].label, sizeof s->threads[i].label, "%s", label);
        return PB_OK;
    }
    if (pb_index_add(&s->tix, j, (void **)&s->threads, &s->cthreads, s->nthreads, sizeof *s->threads) < 0)
        return S_OOM(s);
    t = &s->threads[s->nthreads];
    t->key = key;
    t->first = t->last = NONE;
    if (label)
        snprintf(t->label, sizeof t->label, "%s", label);
    else
        snprintf(t->label, sizeof t->label, "%llu", (unsigned long long)key);
    *ti = s->last_ti = (uint32_t)s->nthreads++;
    s->last_key = key;
    s->have_last = 1;
    return PB_OK;
}

static pb_status sc_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    uint32_t ti;
    (void)pid, (void)ppid;
    return speedscope_out_get_thread((pb_speedscope *)self->ctx, key, label, &ti);
}

/* the sample's record in its thread's chain, for a timed thread's events */
static pb_status tick(pb_speedscope *s, uint32_t ti, uint32_t stack, uint64_t ts, uint64_t weight)
{
    pb_tick_rec r;
    if (!s->time_order)
        return PB_OK;
    r.x = stack;
    r.y = 0;
    r.a = ts;
    r.b = weight;
    if (ts)
        s->threads[ti].timed = 1;
    if (!s->have_origin || ts < s->origin)
        s->origin = ts;
    s->have_origin = 1;
    return pb_tick_put(&s->spool, &s->threads[ti].ticks, &r);
}

static pb_status sc_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    pb_speedscope *s = (pb_speedscope *)self->ctx;
    uint32_t ti, h, i, si;
    size_t j, off;
    pb_status st;
    (void)ts;
    if ((st = speedscope_out_get_thread(s, key, NULL, &ti)) != PB_OK)
        return st;
    if (!weight)
        return PB_OK;
    if ((st = pb_sample_noframe(self, &ids, &depth)) != PB_OK) /* samples.h */
        return st;
    if (pb_grow((void **)&s->path, &s->cpath, depth, sizeof *s->path) < 0)
        return S_OOM(s);
    for (i = 0; i < depth; i++) {
        if (ids[i] >= s->nframes)
            return pb_fail(s->w.err, PB_ERR_CORRUPT, 0, "sample uses frame id %u, only %zu interned", ids[i],
                           s->nframes);
        s->path[i] = ids[depth - 1 - i]; /* root first */
    }
    /* a stack's weight is at most its thread's total: checking the totals
     * (and total x interval in sc_finish) keeps every number exact */
    if ((st = pb_checked_add(s->w.err, &s->threads[ti].total, weight, "a thread's sample weight", "")) != PB_OK)
        return st;
    h = pb_mix64(ti) ^ pb_hash_bytes((const char *)s->path, depth * sizeof *s->path);
    if (pb_index_reserve(&s->six, s->nstacks, speedscope_out_h_stack, s) < 0)
        return S_OOM(s);
    PB_INDEX_FIND(&s->six, h, j, si,
                  s->stacks[si].hash == h && s->stacks[si].thread == ti && s->stacks[si].depth == depth &&
                      !memcmp(s->pool + s->stacks[si].off, s->path, depth * sizeof *s->path));
    if (si != PB_INDEX_NONE) {
        s->stacks[si].weight += weight;
        return tick(s, ti, si, ts, weight);
    }
    off = s->npool;
    if (s->nstacks >= UINT32_MAX - 1 ||
        pb_append((void **)&s->pool, &s->npool, &s->cpool, s->path, depth, sizeof *s->path) < 0 ||
        pb_grow((void **)&s->stacks, &s->cstacks, s->nstacks + 1, sizeof *s->stacks) < 0)
        return S_OOM(s);
    s->stacks[s->nstacks] =
        (s_stack){.thread = ti, .hash = h, .depth = depth, .off = off, .weight = weight, .next = NONE};
    if (s->threads[ti].last == NONE)
        s->threads[ti].first = (uint32_t)s->nstacks;
    else
        s->stacks[s->threads[ti].last].next = (uint32_t)s->nstacks;
    s->threads[ti].last = (uint32_t)s->nstacks;
    pb_index_set(&s->six, j, (uint32_t)s->nstacks++);
    return tick(s, ti, (uint32_t)s->nstacks - 1, ts, weight);
}

static pb_status sc_span(pb_sample_sink *self, uint64_t key, uint32_t frame, uint64_t begin, uint64_t end)
{
    pb_speedscope *s = (pb_speedscope *)self->ctx;
    uint32_t ti;
    s_thread *t;
    pb_status st;
    if ((st = speedscope_out_get_thread(s, key, NULL, &ti)) != PB_OK)
        return st;
    if (frame >= s->nframes)
        return pb_fail(s->w.err, PB_ERR_CORRUPT, 0, "span uses frame id %u, only %zu interned", frame, s->nframes);
    t = &s->threads[ti];
    if (!PB_GROW_ID(t->spans, t->cspans, t->nspans))
        return S_OOM(s);
    t->spans[t->nspans].begin = begin;
    t->spans[t->nspans].end = end < begin ? begin : end;
    t->spans[t->nspans].frame = frame;
    t->spans[t->nspans].seq = (uint32_t)t->nspans;
    t->nspans++;
    return PB_OK;
}

/* by begin, the longer first (a parent before its children), then as they came */
static int cmp_span(const void *a, const void *b)
{
    const s_span *x = (const s_span *)a, *y = (const s_span *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return x->seq > y->seq ? -1 : x->seq < y->seq; /* completion order: the parent came last */
}

/* Sort a thread's spans by cmp_span (a total order: seq is unique, so the
 * result is the same whatever the method).  Spans come in completion order:
 * a span is out of place by the number of spans nested in it, which the
 * nesting limit bounds, so insertion sort is linear here; on spans that
 * overlap without nesting (a corrupt file) it would not be, so past a budget
 * of moves it leaves the rest to qsort. */
static void sort_spans(s_span *a, size_t n)
{
    size_t i, budget = 64 * n + 4096;
    for (i = 1; i < n; i++) {
        s_span x = a[i];
        size_t j = i;
        while (j > 0 && cmp_span(&a[j - 1], &x) > 0) {
            j--;
            if (budget-- == 0) {
                qsort(a, n, sizeof *a, cmp_span);
                return;
            }
        }
        if (j < i) {
            memmove(a + j + 1, a + j, (i - j) * sizeof *a);
            a[j] = x;
        }
    }
}

/* JSON text through a buffer of our own (json_out.h) */
typedef pb_jout s_out;

/* one event: ,{"type":"O","frame":F,"at":T} (no comma before the first),
 * at most 1 + 20 + 10 + 6 + 20 + 1 bytes */
static void so_event(s_out *w, int first, char type, uint32_t frame, uint64_t at)
{
    char *d = pb_jout_room(w, 64), *e = d;
    unsigned n;
    if (!first)
        *e++ = ',';
    memcpy(e, "{\"type\":\"O\",\"frame\":", 20);
    e[9] = type;
    e += 20;
    n = pb_jout_ndigits(frame);
    pb_jout_digits_back(e + n, frame);
    e += n;
    memcpy(e, ",\"at\":", 6);
    e += 6;
    n = pb_jout_ndigits(at);
    pb_jout_digits_back(e + n, at);
    e += n;
    *e++ = '}';
    w->n += (size_t)(e - d);
}

/* an evented profile: open and close events in time order, properly nested
 * (a span that would outlast its parent is cut at the parent's end) */
static pb_status write_events(pb_speedscope *s, s_thread *th, s_out *w)
{
    size_t i, sp = 0;
    uint64_t lo, hi;
    int first = 1;
    struct open_s {
        uint64_t end;
        uint32_t frame;
    } *stack = NULL;
    size_t cstack = 0;
    sort_spans(th->spans, th->nspans);
    lo = th->spans[0].begin;
    hi = lo;
    for (i = 0; i < th->nspans; i++)
        if (th->spans[i].end > hi)
            hi = th->spans[i].end;
    PB_JOUT_LIT(w, ",\"unit\":\"nanoseconds\",\"startValue\":");
    pb_jout_u64(w, lo);
    PB_JOUT_LIT(w, ",\"endValue\":");
    pb_jout_u64(w, hi);
    PB_JOUT_LIT(w, ",\"events\":[");
    for (i = 0; i <= th->nspans; i++) {
        const s_span *x = i < th->nspans ? &th->spans[i] : NULL;
        uint64_t end;
        while (sp && (!x || stack[sp - 1].end <= x->begin)) {
            sp--;
            so_event(w, first, 'C', stack[sp].frame, stack[sp].end);
            first = 0;
        }
        if (!x)
            break;
        end = sp && x->end > stack[sp - 1].end ? stack[sp - 1].end : x->end;
        if (pb_grow((void **)&stack, &cstack, sp + 1, sizeof *stack) < 0) {
            free(stack);
            return S_OOM(s);
        }
        stack[sp].end = end;
        stack[sp].frame = x->frame;
        sp++;
        so_event(w, first, 'O', x->frame, x->begin);
        first = 0;
    }
    free(stack);
    PB_JOUT_LIT(w, "]");
    return PB_OK;
}

/* a timed thread: its samples in the order recorded, each open from its
 * time for its weight x unit ns, as open and close events (ns from the
 * origin): a frame stays open from one sample into the next that starts
 * where it ends and has it at the same depth; a gap leaves the thread idle;
 * a sample that would start before the one before it has ended starts at
 * that end (so every sample keeps its whole weight) */
typedef struct {
    pb_speedscope *s;
    s_out *w;
    uint64_t unit, end;
    uint32_t *open; /* the frames open, root first */
    size_t nopen, copen;
    int first;
    pb_status st;
} s_timed;

static void speedscope_out_close_to(s_timed *c, size_t m, uint64_t at)
{
    while (c->nopen > m) {
        c->nopen--;
        so_event(c->w, c->first, 'C', c->open[c->nopen], at);
        c->first = 0;
    }
}

static void timed_one(void *p, const pb_tick_rec *r)
{
    s_timed *c = (s_timed *)p;
    pb_speedscope *s = c->s;
    const s_stack *sk;
    const uint32_t *fr;
    uint64_t at, len;
    size_t m = 0, d;
    if (c->st != PB_OK)
        return;
    sk = &s->stacks[r->x];
    fr = s->pool + sk->off;
    if ((c->st = pb_checked_mul(s->w.err, r->a - s->origin, 1000u, "a sample's time", "ns", &at)) != PB_OK ||
        (c->st = pb_checked_mul(s->w.err, r->b, c->unit, "a sample's time", "ns", &len)) != PB_OK)
        return;
    if (at < c->end)
        at = c->end; /* overlaps the sample before: starts at its end */
    if (at > c->end) {
        speedscope_out_close_to(c, 0, c->end); /* idle from the end of the sample before */
    } else {
        while (m < c->nopen && m < sk->depth && c->open[m] == fr[m])
            m++;
        speedscope_out_close_to(c, m, at);
    }
    if (pb_grow((void **)&c->open, &c->copen, sk->depth, sizeof *c->open) < 0) {
        c->st = S_OOM(s);
        return;
    }
    for (d = m; d < sk->depth; d++) {
        c->open[c->nopen++] = fr[d];
        so_event(c->w, c->first, 'O', fr[d], at);
        c->first = 0;
    }
    c->end = at;
    c->st = pb_checked_add(s->w.err, &c->end, len, "a sample's end", "ns");
}

static pb_status write_timed(pb_speedscope *s, s_thread *th, s_out *w, uint64_t unit, pb_tick_rec *tmp)
{
    s_timed c;
    pb_status st;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.w = w;
    c.unit = unit;
    c.first = 1;
    c.st = PB_OK;
    PB_JOUT_LIT(w, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"events\":[");
    st = pb_tick_walk(&s->spool, &th->ticks, tmp, timed_one, &c);
    if (st == PB_OK && (st = c.st) == PB_OK) {
        speedscope_out_close_to(&c, 0, c.end);
        PB_JOUT_LIT(w, "],\"endValue\":");
        pb_jout_u64(w, c.end);
    }
    free(c.open);
    return st;
}

/* a name is UTF-8 text only when it is valid UTF-8 (the model's rule); else bytes */
static pb_str speedscope_out_str_of(const char *p, size_t n) { return pb_str_make(p, n, pb_str_wide(p, n)); }

/* Over 80 lines, kept whole: the shared frame list, then each thread's profile, written in the
 * order the file lays them out. */
static pb_status sc_finish(pb_sample_sink *self)
{
    pb_speedscope *s = (pb_speedscope *)self->ctx;
    FILE *o = s->w.out;
    size_t i;
    uint32_t k, d;
    s_out *w;
    pb_tick_rec *tmp = NULL;
    uint64_t unit = s->facts.weight_ns ? 1 : s->facts.interval_ns; /* ns per unit of weight; 0: counts */
    pb_str t = speedscope_out_str_of(s->w.title, strlen(s->w.title));
    for (i = 0; i < s->nthreads; i++) {
        uint64_t ns;
        pb_status st;
        if (unit && (st = pb_checked_mul(s->w.err, s->threads[i].total, unit, "a thread's sampled time", "ns", &ns)) !=
                        PB_OK)
            return st;
    }
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"Devel::ProfileBridge "
          PB_VERSION_STRING "\",\"name\":",
          o);
    pb_json_str(o, &t);
    fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", o);
    for (i = 0; i < s->nframes; i++) {
        const s_frame *f = &s->frames[i];
        pb_str n = pb_strtab_str(&s->strs, f->name), fl = pb_strtab_str(&s->strs, f->file);
        fputs(i ? ",{\"name\":" : "{\"name\":", o);
        pb_json_str(o, &n);
        if (fl.len) {
            fputs(",\"file\":", o);
            pb_json_str(o, &fl);
        }
        if (f->line > 0)
            fprintf(o, ",\"line\":%ld", (long)f->line);
        fputc('}', o);
    }
    fputs("]},\"profiles\":[", o);
    w = (s_out *)malloc(sizeof *w);
    if (!w)
        return S_OOM(s);
    w->f = o;
    w->n = 0;
    for (i = 0; i < s->nthreads; i++)
        if (thread_title(s, &s->threads[i], NULL, 0, 1) != PB_OK) {
            free(w);
            return s->w.err->status;
        }
    for (i = 0; i < s->nthreads; i++) {
        const s_thread *th = &s->threads[i];
        char nm[320];
        pb_str l;
        if (thread_title(s, th, nm, sizeof nm, 0) != PB_OK) {
            free(w);
            free(tmp);
            return s->w.err->status;
        }
        l = speedscope_out_str_of(nm, strlen(nm));
        if (th->nspans || (th->timed && unit)) {
            pb_status st;
            fputs(i ? ",{\"type\":\"evented\",\"name\":" : "{\"type\":\"evented\",\"name\":", o);
            pb_json_str(o, &l);
            if (th->nspans)
                st = write_events(s, (s_thread *)th, w);
            else if (!tmp && !(tmp = (pb_tick_rec *)malloc(PB_TICK_BLK * sizeof *tmp)))
                st = S_OOM(s);
            else
                st = write_timed(s, (s_thread *)th, w, unit, tmp);
            pb_jout_flush(w);
            if (st != PB_OK) {
                free(w);
                free(tmp);
                return st;
            }
            fputc('}', o);
            continue;
        }
        fputs(i ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":", o);
        pb_json_str(o, &l);
        fprintf(o, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[", unit ? "nanoseconds" : "none",
                (unsigned long long)(th->total * (unit ? unit : 1)));
        for (k = th->first; k != NONE; k = s->stacks[k].next) {
            const s_stack *st = &s->stacks[k];
            if (k == th->first)
                PB_JOUT_LIT(w, "[");
            else
                PB_JOUT_LIT(w, ",[");
            for (d = 0; d < st->depth; d++) {
                if (d)
                    PB_JOUT_LIT(w, ",");
                pb_jout_u64(w, s->pool[st->off + d]);
            }
            PB_JOUT_LIT(w, "]");
        }
        PB_JOUT_LIT(w, "],\"weights\":[");
        for (k = th->first; k != NONE; k = s->stacks[k].next) {
            if (k != th->first)
                PB_JOUT_LIT(w, ",");
            pb_jout_u64(w, s->stacks[k].weight * (unit ? unit : 1));
        }
        PB_JOUT_LIT(w, "]}");
        pb_jout_flush(w);
    }
    free(w);
    free(tmp);
    fputs("]}\n", o);
    if (ferror(o) || fflush(o) != 0)
        return pb_fail_write(s->w.err, "the speedscope file", errno);
    return PB_OK;
}

static const pb_sample_sink sink_calls = {.attribute = sc_attribute, .frame = sc_frame, .thread = sc_thread, .sample = sc_sample, .note = pb_sample_note_ignore, .finish = sc_finish, .span = sc_span};

static void sc_teardown(pb_stack_writer *w)
{
    pb_speedscope *s = (pb_speedscope *)w;
    size_t i;
    pb_strtab_free(&s->strs);
    pb_strtab_free(&s->tlabels);
    free(s->frames);
    for (i = 0; i < s->nthreads; i++) {
        free(s->threads[i].spans);
        pb_tick_chain_free(&s->threads[i].ticks);
    }
    pb_tick_spool_close(&s->spool);
    PB_FREE_ALL(s->threads, s->stacks, s->pool, s->path, s->namebuf, s->tname, s->nuse);
    PB_INDEX_FREE_ALL(&s->fix, &s->tix, &s->six);
}

pb_stack_writer *pb_speedscope_new(FILE *out, const char *name, int time_order, pb_error *err)
{
    pb_speedscope *s = (pb_speedscope *)pb_stack_writer_new(sizeof *s, &sink_calls, sc_teardown, out, name, err);
    if (!s)
        return NULL;
    s->time_order = time_order;
    if (time_order)
        s->w.ss.each_tick = 1; /* every recorded sample at its own time (samples.h) */
    else
        s->w.ss.sums_stacks = 1; /* each distinct stack once, its weight summed */
    pb_tick_spool_init(&s->spool, err, "the speedscope writer's spool", "out of memory while building the speedscope file");
    return &s->w;
}
