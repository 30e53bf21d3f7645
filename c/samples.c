/* samples.c - the typed header facts of the sample layer (samples.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats.h"
#include "samples.h"

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

int pb_sample_facts_take(pb_sample_facts *f, const char *key, pb_str value)
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
        const pb_format_row *row = pb_format_get(pb_format_from_name(b));
        f->weight_ns = row && (row->yields & PB_YIELDS_NS_WEIGHTS); /* the table of formats says */
    }
    else if (!strcmp(key, "sample_weight_unit"))
        f->weight_ns = !strcmp(b, "ns");
    else
        return 0;
    return 1;
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
pb_status pb_sample_pass_finish(pb_sample_sink *ss) { return ss->next->finish ? ss->next->finish(ss->next) : PB_OK; }

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
static const pb_sample_sink thread_limit_calls = {.attribute = tl_attribute, .frame = pb_sample_pass_frame,
    .thread = tl_thread, .sample = tl_sample, .note = pb_sample_pass_note, .finish = pb_sample_pass_finish,
    .span = tl_span, .sample_tags = pb_sample_pass_sample_tags};

pb_sample_sink *pb_thread_limit_init(pb_thread_limit *t, pb_sample_sink *next, uint32_t max, pb_error *err)
{
    memset(t, 0, sizeof *t);
    pb_sample_sink_init(&t->ss, &thread_limit_calls, t, err, next->cleanups);
    t->ss.next = next;
    t->max = max ? max : PB_DEFAULT_MAX_THREADS;
    if (!next->span)
        t->ss.span = NULL; /* not wanted downstream: the decoder must not fold spans for it */
    if (!next->sample_tags)
        t->ss.sample_tags = NULL;
    return &t->ss;
}

void pb_thread_limit_free(pb_thread_limit *t)
{
    free(t->keys);
    pb_index_free(&t->ix);
}
