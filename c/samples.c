/* samples.c - the typed header facts of the sample layer (samples.h).
 *
 * Names here: tl_ = the thread limit (pb_thread_limit) and its sink callbacks, uf_ = the units
 * filter's sink callbacks (weights of different units never add).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samples.h"
#include "source.h"

const char *pb_sample_attr_text(pb_str value, char *buf, size_t cap)
{
    size_t n = value.len < cap - 1 ? value.len : cap - 1;
    if (n)
        memcpy(buf, value.ptr, n);
    buf[n] = '\0';
    return buf;
}

uint64_t pb_interval_us_to_ns(uint64_t us)
{
    return us > UINT64_MAX / 1000u ? UINT64_MAX : us * 1000u;
}

pb_status pb_checked_mul(pb_error *err, uint64_t a, uint64_t b, const char *what, const char *unit, uint64_t *out)
{
    if (b && a > (uint64_t)INT64_MAX / b)
        return pb_fail_nooff(err, PB_ERR_LIMIT, "%s of %llu x %llu%s%s does not fit 63 bits", what,
                             (unsigned long long)a, (unsigned long long)b, *unit ? " " : "", unit);
    *out = a * b;
    return PB_OK;
}

pb_status pb_checked_add(pb_error *err, uint64_t *total, uint64_t add, const char *what, const char *unit)
{
    if (*total > (uint64_t)INT64_MAX || add > (uint64_t)INT64_MAX - *total)
        return pb_fail_nooff(err, PB_ERR_LIMIT, "%s of %llu + %llu%s%s does not fit 63 bits", what,
                             (unsigned long long)*total, (unsigned long long)add, *unit ? " " : "", unit);
    *total += add;
    return PB_OK;
}

int pb_sample_facts_take(pb_sample_facts *f, const pb_sample_sink *from, const char *key, pb_str value)
{
    char b[64];
    pb_sample_attr_text(value, b, sizeof b);
    if (!strcmp(key, "sample_interval_us"))
        f->interval_ns = pb_interval_us_to_ns(strtoull(b, NULL, 10));
    else if (!strcmp(key, "clock"))
        f->cpu = strncmp(b, "cpu", 3) == 0;
    else if (!strcmp(key, "basetime"))
        f->basetime = strtoull(b, NULL, 10);
    else if (!strcmp(key, "profile_duration_sec")) {
        double d = strtod(b, NULL);
        if (d > 0 && d < 1e9)
            f->duration_ns = (uint64_t)(d * 1e9);
    } else if (!strcmp(key, "source_format")) {
        /* the producer's row says (format_row.h) */
        f->weight_ns = from && from->row && (from->row->yields & PB_YIELDS_NS_WEIGHTS);
    }
    else if (!strcmp(key, "sample_weight_unit"))
        f->weight_ns = !strcmp(b, "ns");
    else {
        if (!strcmp(key, "sample_type")) {
            pb_sample_attr_text(value, f->sample_type, sizeof f->sample_type);
            f->kind = pb_weight_kind_of(f->sample_type, b, sizeof b);
        } else if (!strcmp(key, "period")) {
            f->period_raw = strtoull(b, NULL, 10);
        } else if (!strcmp(key, "period_type")) {
            const char *slash = strrchr(b, '/');
            f->period_unit_ns = pb_time_unit_ns(slash ? slash + 1 : b);
        }
        f->period_ns = f->period_unit_ns && f->period_raw <= UINT64_MAX / f->period_unit_ns
                           ? f->period_raw * f->period_unit_ns
                           : 0;
        return 0;
    }
    return 1;
}

uint64_t pb_time_unit_ns(const char *u)
{
    if (!strcmp(u, "nanoseconds") || !strcmp(u, "ns"))
        return 1;
    if (!strcmp(u, "microseconds") || !strcmp(u, "us"))
        return 1000;
    if (!strcmp(u, "milliseconds") || !strcmp(u, "ms"))
        return 1000000;
    if (!strcmp(u, "seconds") || !strcmp(u, "s"))
        return 1000000000;
    return 0;
}

pb_weight_kind pb_weight_kind_of(const char *type_unit, char *unit, size_t cap)
{
    const char *slash = type_unit ? strrchr(type_unit, '/') : NULL;
    const char *u = slash ? slash + 1 : "";
    size_t tl = slash ? (size_t)(slash - type_unit) : type_unit ? strlen(type_unit) : 0;
    if (!type_unit || !*type_unit || !strcmp(u, "samples") || (tl == 7 && !memcmp(type_unit, "samples", 7))) {
        snprintf(unit, cap, "samples");
        return PB_WEIGHT_SAMPLES;
    }
    if (pb_time_unit_ns(u)) {
        snprintf(unit, cap, "ns");
        return PB_WEIGHT_TIME;
    }
    snprintf(unit, cap, "%s", *u ? u : type_unit);
    return PB_WEIGHT_OTHER;
}

pb_status pb_sample_noframe(pb_sample_sink *ss, const uint32_t **ids, uint32_t *depth)
{
    pb_frame fr;
    if (*depth)
        return PB_OK;
    if (ss->noframe == UINT32_MAX) {
        pb_status st;
        memset(&fr, 0, sizeof fr);
        fr.kind = PB_FRAME_SYNTHETIC;
        fr.package = pb_str_c("main");
        fr.name = pb_str_c("(no frame)");
        fr.file = pb_str_c("");
        if ((st = ss->frame(ss, &fr, &ss->noframe)) != PB_OK)
            return st;
    }
    *ids = &ss->noframe;
    *depth = 1;
    return PB_OK;
}

pb_status pb_sample_attribute_ignore(pb_sample_sink *self, const char *key, pb_str value)
{
    (void)self, (void)key, (void)value;
    return PB_OK;
}

pb_status pb_sample_note_ignore(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    (void)self, (void)kind, (void)a, (void)b, (void)n;
    return PB_OK;
}

pb_status pb_sample_pass_frame(pb_sample_sink *ss, const pb_frame *fr, uint32_t *id)
{
    return ss->next->frame(ss->next, fr, id);
}

pb_status pb_sample_pass_thread(pb_sample_sink *ss, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    return ss->next->thread ? ss->next->thread(ss->next, key, pid, ppid, label) : PB_OK;
}

pb_status pb_sample_pass_note(pb_sample_sink *ss, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    return ss->next->note(ss->next, kind, a, b, n);
}

pb_status pb_sample_pass_sample_tags(pb_sample_sink *ss, pb_str op, pb_str status)
{
    return ss->next->sample_tags ? ss->next->sample_tags(ss->next, op, status) : PB_OK;
}
pb_status pb_sample_pass_thread_root(pb_sample_sink *ss, uint64_t key, pb_str root)
{
    return ss->next->thread_root ? ss->next->thread_root(ss->next, key, root) : PB_OK;
}
pb_status pb_sample_pass_columns(pb_sample_sink *ss, const pb_sample_columns *c)
{
    return ss->next->columns ? ss->next->columns(ss->next, c) : PB_OK;
}

pb_status pb_sample_pass_mapping(pb_sample_sink *ss, const pb_mapping *m, uint32_t *id)
{
    *id = 0;
    return ss->next->mapping ? ss->next->mapping(ss->next, m, id) : PB_OK;
}

pb_status pb_sample_pass_sample_values(pb_sample_sink *ss, const int64_t *values, uint32_t n, const pb_label *labels,
                                       uint32_t nlabels)
{
    return ss->next->sample_values ? ss->next->sample_values(ss->next, values, n, labels, nlabels) : PB_OK;
}

pb_status pb_sample_pass_finish(pb_sample_sink *ss) { return ss->next->finish ? ss->next->finish(ss->next) : PB_OK; }

pb_status pb_sample_pass_graph_func(pb_sample_sink *ss, uint64_t thread_key, const pb_graph_func *g)
{
    return ss->next->graph_func ? ss->next->graph_func(ss->next, thread_key, g) : PB_OK;
}

pb_status pb_sample_pass_graph_edge(pb_sample_sink *ss, uint64_t thread_key, const pb_graph_edge *g)
{
    return ss->next->graph_edge ? ss->next->graph_edge(ss->next, thread_key, g) : PB_OK;
}

pb_status pb_sample_pass_graph_line(pb_sample_sink *ss, uint64_t thread_key, uint32_t frame, uint32_t line,
                                    uint64_t cost)
{
    return ss->next->graph_line ? ss->next->graph_line(ss->next, thread_key, frame, line, cost) : PB_OK;
}

pb_status pb_units_check(pb_units *u, const pb_sample_facts *f, const char *first, pb_error *err)
{
    char unit[96];
    const char *type;
    pb_weight_kind kind = f->weight_ns ? PB_WEIGHT_TIME : f->kind;
    if (kind == PB_WEIGHT_TIME)
        snprintf(unit, sizeof unit, "ns");
    else
        pb_weight_kind_of(f->sample_type, unit, sizeof unit);
    type = f->sample_type[0] ? f->sample_type : unit;
    if (kind == PB_WEIGHT_SAMPLES)
        kind = PB_WEIGHT_TIME; /* samples x the interval: time */
    if (!u->have) {
        u->have = 1;
        u->kind0 = kind;
        snprintf(u->unit0, sizeof u->unit0, "%s", unit);
        snprintf(u->type0, sizeof u->type0, "%s", type);
        return PB_OK;
    }
    if (kind == u->kind0 && (kind == PB_WEIGHT_TIME || !strcmp(unit, u->unit0)))
        return PB_OK;
    return pb_fail_nooff(err, PB_ERR_USAGE,
                         "its weights are %s (%s), those of %s are %s (%s): weights of different units never add "
                         "(--sample-type picks another of a profile's sample types)",
                         unit, type, first ? first : "the first input", u->unit0, u->type0);
}

static pb_status uf_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    pb_units_filter *g = (pb_units_filter *)self->ctx;
    pb_sample_facts_take(&g->facts, self, key, v);
    return self->next->attribute(self->next, key, v);
}

static pb_status uf_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    pb_units_filter *g = (pb_units_filter *)self->ctx;
    pb_status st;
    if (!g->checked) {
        g->checked = 1;
        if ((st = pb_units_check(&g->units, &g->facts, g->first, self->err)) != PB_OK)
            return st;
    }
    return self->next->sample(self->next, key, ids, depth, weight, ts);
}

static pb_status uf_span(pb_sample_sink *self, uint64_t key, uint32_t frame, uint64_t b, uint64_t e)
{
    return self->next->span(self->next, key, frame, b, e);
}

static pb_status uf_finish(pb_sample_sink *self) { return self->next->finish(self->next); }

void pb_units_filter_init(pb_units_filter *g, pb_sample_sink *next, const char *first, pb_error *err)
{
    static const pb_sample_sink calls = {.attribute = uf_attribute, .frame = pb_sample_pass_frame,
        .thread = pb_sample_pass_thread, .sample = uf_sample, .note = pb_sample_pass_note, .finish = uf_finish};
    memset(g, 0, sizeof *g);
    pb_sample_sink_init(&g->ss, &calls, g, err, next->cleanups);
    g->ss.next = next;
    g->ss.each_tick = next->each_tick;
    g->ss.keeps_cut_stacks = next->keeps_cut_stacks;
    if (next->span)
        g->ss.span = uf_span;
    if (next->sample_tags)
        g->ss.sample_tags = pb_sample_pass_sample_tags;
    g->first = first;
}

void pb_units_filter_next_input(pb_units_filter *g)
{
    memset(&g->facts, 0, sizeof g->facts);
    g->checked = 0;
}

/* ---- max_threads (samples.h) -------------------------------------------- */
static uint32_t tl_hash_of(const void *ctx, uint32_t i) { return pb_mix64(((const pb_thread_limit *)ctx)->keys[i]); }

static pb_status tl_check(pb_thread_limit *t, uint64_t key)
{
    size_t k;
    uint32_t i;
    if (t->n && key == t->last)
        return PB_OK;
    if (pb_index_reserve(&t->ix, t->n, tl_hash_of, t) < 0)
        return pb_fail_nooff(t->ss.err, PB_ERR_LIMIT, "out of memory");
    PB_INDEX_FIND(&t->ix, pb_mix64(key), k, i, t->keys[i] == key);
    if (i == PB_INDEX_NONE) {
        if (t->n >= t->max)
            return pb_fail_nooff(t->ss.err, PB_ERR_LIMIT, "more than max_threads (%u) threads", t->max);
        if (pb_grow((void **)&t->keys, &t->cap, t->n + 1, sizeof *t->keys) < 0)
            return pb_fail_nooff(t->ss.err, PB_ERR_LIMIT, "out of memory");
        t->keys[t->n] = key;
        pb_index_set(&t->ix, k, (uint32_t)t->n++);
    }
    t->last = key;
    return PB_OK;
}

static pb_status tl_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    return self->next->attribute ? self->next->attribute(self->next, key, v) : PB_OK;
}
static pb_status tl_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    pb_status st = tl_check((pb_thread_limit *)self->ctx, key);
    return st != PB_OK ? st : pb_sample_pass_thread(self, key, pid, ppid, label);
}
static pb_status tl_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    pb_status st = tl_check((pb_thread_limit *)self->ctx, key);
    return st != PB_OK ? st : self->next->sample(self->next, key, ids, depth, weight, ts);
}
static pb_status tl_span(pb_sample_sink *self, uint64_t key, uint32_t frame, uint64_t begin, uint64_t end)
{
    pb_status st = tl_check((pb_thread_limit *)self->ctx, key);
    return st != PB_OK ? st : self->next->span(self->next, key, frame, begin, end);
}
static pb_status tl_graph_func(pb_sample_sink *self, uint64_t key, const pb_graph_func *g)
{
    pb_status st = tl_check((pb_thread_limit *)self->ctx, key);
    return st != PB_OK ? st : pb_sample_pass_graph_func(self, key, g);
}
static const pb_sample_sink thread_limit_calls = {.attribute = tl_attribute, .frame = pb_sample_pass_frame,
    .thread = tl_thread, .sample = tl_sample, .note = pb_sample_pass_note, .finish = pb_sample_pass_finish,
    .span = tl_span, .sample_tags = pb_sample_pass_sample_tags, .thread_root = pb_sample_pass_thread_root,
    .columns = pb_sample_pass_columns, .mapping = pb_sample_pass_mapping, .sample_values = pb_sample_pass_sample_values,
    .graph_func = tl_graph_func, .graph_edge = pb_sample_pass_graph_edge, .graph_line = pb_sample_pass_graph_line};

pb_sample_sink *pb_thread_limit_init(pb_thread_limit *t, pb_sample_sink *next, uint32_t max, pb_error *err)
{
    memset(t, 0, sizeof *t);
    pb_sample_sink_init(&t->ss, &thread_limit_calls, t, err, next->cleanups);
    t->ss.next = next;
    t->ss.sums_stacks = next->sums_stacks;
    t->ss.each_tick = next->each_tick;
    t->ss.keeps_cut_stacks = next->keeps_cut_stacks;
    t->max = max ? max : PB_DEFAULT_MAX_THREADS;
    if (!next->span)
        t->ss.span = NULL; /* not wanted downstream: the decoder must not fold spans for it */
    if (!next->sample_tags)
        t->ss.sample_tags = NULL;
    if (!next->thread_root)
        t->ss.thread_root = NULL;
    if (!next->sample_values) /* the optional calls only where they are wanted, as pb_counting passes them */
        t->ss.columns = NULL, t->ss.mapping = NULL, t->ss.sample_values = NULL;
    if (!next->graph_func) /* a stack consumer: a call-graph source is refused for it (formats.c) */
        t->ss.graph_func = NULL, t->ss.graph_edge = NULL, t->ss.graph_line = NULL;
    return &t->ss;
}

void pb_thread_limit_free(pb_thread_limit *t)
{
    free(t->keys);
    pb_index_free(&t->ix);
}

int pb_sample_own_frame(const pb_format_row *row, const char *file, size_t len)
{
    const char *p = row ? row->own_frames : NULL;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n && n <= len && memcmp(file + len - n, p, n) == 0)
            return 1;
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

pb_status pb_sample_file_header(pb_sample_sink *out, const char *file, pb_source *src, int always)
{
    char buf[32];
    unsigned long long t = pb_src_mtime(src); /* the file's, or its gzip header's */
    pb_status st;
    if (file[0] && (st = out->attribute(out, "application", pb_str_c(file))) != PB_OK)
        return st;
    if (!t && !always)
        return PB_OK;
    snprintf(buf, sizeof buf, "%llu", t);
    return out->attribute(out, "basetime", pb_str_c(buf));
}

pb_stack_writer *pb_stack_writer_new(size_t size, const pb_sample_sink *calls, void (*teardown)(pb_stack_writer *w),
                                     FILE *out, const char *title, pb_error *err)
{
    pb_stack_writer *w = (pb_stack_writer *)calloc(1, size);
    if (!title)
        title = "profile";
    if (!w || !(w->title = pb_memdup0(title, strlen(title)))) {
        free(w);
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    pb_sample_sink_init(&w->ss, calls, w, err, NULL);
    w->out = out;
    w->err = err;
    w->teardown = teardown;
    return w;
}

void pb_stack_writer_free(pb_stack_writer *w)
{
    if (!w)
        return;
    if (w->teardown)
        w->teardown(w);
    free(w->title);
    free(w);
}
