/* read_callgrind.c - Valgrind's callgrind format (the Valgrind manual's
 * "Callgrind Format Specification", version 1, as KCachegrind and
 * callgrind_annotate read it): callgrind itself, `go tool pprof -callgrind`,
 * NYTProf's nytprofcg, and every other writer of it.
 *
 * Lines: header lines "key: value" (version, creator, pid, cmd, part,
 * thread, positions, events, event, summary, totals, desc: anywhere);
 * specifications ob=, fl=, fi=, fe=, fn=, cob=, cfi=, cfl=, cfn=, calls=,
 * jump=, jcnd=, jfi=, jfn=; cost lines "positions costs...".  Name
 * compression "(id) name" defines, "(id)" refers: one id table for files
 * (fl, fi, fe, cfi, cfl, jfi), one for functions (fn, cfn, jfn), one for
 * objects (ob, cob).  Position compression: "+N", "-N" (relative to the
 * same position of the previous cost line), "*" (the same), decimal or
 * 0x hex.  A calls= line is followed by the call's cost line: the call
 * site's position and the callee's inclusive cost, which is not the
 * caller's own (after calls=0, as callgrind_annotate reads it, the caller's
 * own cost: go tool pprof -callgrind writes calls=0 with the callee's
 * inclusive cost).
 *
 * The event read: opt->sample_type (the CLI's --sample-type / --event, the
 * API's sample_type / event), else the first of "events:".  Functions are
 * (file, name) as callgrind_annotate keys them (fi/fe lines are the
 * function's own, in that file: statements there, the sub in its fl= file;
 * a call without cfi=/cfl= calls into the current file); a function with no
 * file ("???") is in its object (ob=).  Sub names: the function name, split
 * at its last "::" before any "(" into package and name, so a C++
 * ns::Class::method keeps its "::" (no package: main).  Threads: each
 * "thread:" value its own thread (callgrind --separate-threads=yes writes a
 * file per thread, each with its thread: line).
 *
 * Into the sink (a producer of the call graph, samples.h): per (thread,
 * function) graph_func: calls = the calls= counts into it, excl = its cost
 * lines' sum, incl = the inclusive costs of the calls into it (a function
 * never called: excl + its calls' inclusive costs), as callgrind_annotate
 * --inclusive=yes; graph_line per (function, file, line); graph_edge per
 * (caller, callee, call-site line): count, inclusive cost (a callee with
 * one caller: its own cost too).  ATTRIBUTEs: call_graph exact,
 * graph_events (every event, comma-separated), graph_event and
 * graph_cost_unit (the one read: an instruction count is not time; the
 * report's "seconds" are that many units / 1e9), graph_total (summary:,
 * else totals:, for that event), graph_producer (creator:).
 *
 * Memory: O(names + functions + (function, line) pairs + edges); nothing
 * grows with the file's size beyond that.
 *
 * Names here: cg = this reader's state (callgrind reader), cg_fn one function of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fold_samples.h"
#include "read_callgrind.h"
#include "model.h"
#include "reader.h"

#define CG_MAX_EVENTS 64
#define CG_MAX_POS 2
#define NONE UINT32_MAX

typedef struct {
    uint64_t num;
    uint32_t str;
} cg_id;
typedef struct {
    cg_id *e;
    size_t n, cap;
    pb_index ix;
} cg_ids;

/* a function: (thread, file, name) */
typedef struct {
    uint64_t thread;
    uint32_t file, name, obj;
    uint32_t frame; /* the sink's, NONE until flushed */
    uint64_t self, in_incl, out_incl, calls; /* in_incl: the calls into it; out_incl: self + its calls' */
    int called;
} cg_fn;
/* a statement (a = function, b = file, line; cost) or a call (a = caller,
 * b = callee, line: the call site; count calls, cost inclusive): both
 * summed per key in one kind of table */
typedef struct {
    uint32_t a, b, line;
    uint64_t count, cost;
} cg_sum;
typedef struct {
    cg_sum *e;
    size_t n, cap;
    pb_index ix;
} cg_sums;

typedef struct {
    pb_source *s;
    pb_options opt;
    pb_error *err;
    pb_sample_sink *out;
    pb_strtab str;
    cg_ids files, fns, objs;
    cg_fn *fn; size_t nfn, capfn; pb_index tfn;
    cg_sums ln, cl; /* statements, calls */
    uint64_t lineno, line_off;
    /* header */
    char events[CG_MAX_EVENTS][48];
    unsigned nevents, event;
    int have_events, npos, pos_line, pos_instr;
    int have_summary, have_totals;
    uint64_t summary, totals;
    char creator[96];
    /* state */
    uint64_t thread;
    uint32_t ob, fl, fi, fnid, cob, cfl, cfn; /* string ids, NONE */
    uint32_t cur;                             /* current function (cg_fn index), NONE */
    int64_t last[CG_MAX_POS];
    uint64_t *ncallers; /* flush: per function, its caller edges */
    uint64_t pending_calls;
    int in_call;
} cg;

#define OOM(r) pb_fail((r)->err, PB_ERR_LIMIT, (r)->line_off, "out of memory reading a callgrind file")

static pb_status callgrind_bad(cg *r, const char *what)
{
    return pb_fail(r->err, PB_ERR_CORRUPT, r->line_off, "line %llu: %s", (unsigned long long)r->lineno, what);
}

/* the next line (without its LF and CR), *eof at the end of the input */
static pb_status callgrind_next_line(cg *r, const char **line, size_t *len, int *eof)
{
    return pb_src_line(r->s, r->opt.max_record_size, &r->lineno, &r->line_off, r->err, line, len, eof);
}

/* ---- name compression ----------------------------------------------------- */
static uint32_t id_hash_of(const void *ctx, uint32_t i) { return pb_mix64(((const cg_ids *)ctx)->e[i].num); }

/* "(id) name", "(id)" or "name" -> a string id */
static pb_status name_of(cg *r, cg_ids *t, const char *p, size_t n, uint32_t *out)
{
    uint64_t num = 0;
    size_t i = 1, k;
    uint32_t j;
    int digits = 0;
    if (!n || p[0] != '(') {
        if (pb_strtab_intern(&r->str, p, n, out) < 0)
            return OOM(r);
        return PB_OK;
    }
    while (i < n && p[i] >= '0' && p[i] <= '9') {
        if (num > (UINT64_MAX - 9) / 10)
            return callgrind_bad(r, "a name's id does not fit 64 bits");
        num = num * 10 + (uint64_t)(p[i++] - '0');
        digits = 1;
    }
    if (!digits || i >= n || p[i] != ')') {
        /* not "(id)": a name that starts with "(" ("(eval 3)[x.pm:170]"), as callgrind_annotate reads it */
        if (pb_strtab_intern(&r->str, p, n, out) < 0)
            return OOM(r);
        return PB_OK;
    }
    i++;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (pb_index_reserve(&t->ix, t->n, id_hash_of, t) < 0)
        return OOM(r);
    PB_INDEX_FIND(&t->ix, pb_mix64(num), k, j, t->e[j].num == num);
    if (i >= n) {
        if (j == PB_INDEX_NONE)
            return callgrind_bad(r, "a compressed name's id is used before it is defined");
        *out = t->e[j].str;
        return PB_OK;
    }
    if (pb_strtab_intern(&r->str, p + i, n - i, out) < 0)
        return OOM(r);
    if (j != PB_INDEX_NONE) {
        t->e[j].str = *out; /* redefined: the new name from here on */
        return PB_OK;
    }
    if (pb_grow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e) < 0)
        return OOM(r);
    t->e[t->n].num = num;
    t->e[t->n].str = *out;
    pb_index_set(&t->ix, k, (uint32_t)t->n++);
    return PB_OK;
}

/* ---- tables ------------------------------------------------------------- */
static uint32_t fn_hash(uint64_t th, uint32_t file, uint32_t name)
{
    return pb_mix64(th * UINT64_C(0x9E3779B97F4A7C15) ^ ((uint64_t)file << 32 | name));
}
static uint32_t fn_hash_of(const void *ctx, uint32_t i)
{
    const cg_fn *f = &((const cg *)ctx)->fn[i];
    return fn_hash(f->thread, f->file, f->name);
}
static uint32_t sum_hash(uint32_t a, uint32_t b, uint32_t line)
{
    return pb_mix64(((uint64_t)a << 32 | b) ^ (uint64_t)line * UINT64_C(0xC2B2AE3D27D4EB4F));
}
static uint32_t sum_hash_of(const void *ctx, uint32_t i)
{
    const cg_sum *e = &((const cg_sums *)ctx)->e[i];
    return sum_hash(e->a, e->b, e->line);
}

/* the function (thread, file, name): its index, added when new */
static pb_status fn_get(cg *r, uint32_t file, uint32_t name, uint32_t *out)
{
    size_t k;
    uint32_t i;
    if (pb_index_reserve(&r->tfn, r->nfn, fn_hash_of, r) < 0)
        return OOM(r);
    PB_INDEX_FIND(&r->tfn, fn_hash(r->thread, file, name), k, i,
                  r->fn[i].thread == r->thread && r->fn[i].file == file && r->fn[i].name == name);
    if (i == PB_INDEX_NONE) {
        if (r->nfn >= 0x7FFFFFF0u || pb_grow((void **)&r->fn, &r->capfn, r->nfn + 1, sizeof *r->fn) < 0)
            return OOM(r);
        memset(&r->fn[r->nfn], 0, sizeof *r->fn);
        r->fn[r->nfn].thread = r->thread;
        r->fn[r->nfn].file = file;
        r->fn[r->nfn].name = name;
        r->fn[r->nfn].obj = r->ob;
        r->fn[r->nfn].frame = NONE;
        pb_index_set(&r->tfn, k, (uint32_t)r->nfn);
        i = (uint32_t)r->nfn++;
    }
    *out = i;
    return PB_OK;
}

/* add count and cost to the entry (a, b, line) of t, added when new;
 * what: the cost's name in the error when its sum no longer fits */
static pb_status sum_add(cg *r, cg_sums *t, uint32_t a, uint32_t b, uint32_t line, uint64_t count, uint64_t cost,
                         const char *what)
{
    size_t k;
    uint32_t i;
    if (pb_index_reserve(&t->ix, t->n, sum_hash_of, t) < 0)
        return OOM(r);
    PB_INDEX_FIND(&t->ix, sum_hash(a, b, line), k, i, t->e[i].a == a && t->e[i].b == b && t->e[i].line == line);
    if (i == PB_INDEX_NONE) {
        if (t->n >= 0x7FFFFFF0u || pb_index_add(&t->ix, k, (void **)&t->e, &t->cap, t->n, sizeof *t->e) < 0)
            return OOM(r);
        t->e[t->n].a = a;
        t->e[t->n].b = b;
        t->e[t->n].line = line;
        i = (uint32_t)t->n++;
    }
    if (t->e[i].cost > UINT64_MAX - cost)
        return pb_fail(r->err, PB_ERR_LIMIT, r->line_off, "%s does not fit 64 bits", what);
    t->e[i].count += count;
    t->e[i].cost += cost;
    return PB_OK;
}

/* ---- numbers and positions ---------------------------------------------- */
static int callgrind_is_ws(char c) { return c == ' ' || c == '\t'; }

/* an unsigned decimal or 0x hex number at p[*i..n) */
static int parse_u64(const char *p, size_t n, size_t *i, uint64_t *v)
{
    uint64_t x = 0;
    size_t j = *i;
    int any = 0;
    if (j + 1 < n && p[j] == '0' && (p[j + 1] == 'x' || p[j + 1] == 'X')) {
        j += 2;
        for (; j < n && !callgrind_is_ws(p[j]); j++) {
            char c = p[j];
            unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                       : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
            if (d > 15 || x >> 60)
                return 0;
            x = x << 4 | d;
            any = 1;
        }
    } else {
        for (; j < n && p[j] >= '0' && p[j] <= '9'; j++) {
            if (x > (UINT64_MAX - 9) / 10)
                return 0;
            x = x * 10 + (uint64_t)(p[j] - '0');
            any = 1;
        }
        if (j < n && !callgrind_is_ws(p[j]))
            return 0;
    }
    *i = j;
    *v = x;
    return any;
}

/* one subposition: absolute, +N, -N or *; relative to last */
static int parse_pos(const char *p, size_t n, size_t *i, int64_t last, int64_t *v)
{
    uint64_t x = 0;
    size_t j = *i;
    if (j < n && p[j] == '*') {
        *v = last;
        *i = j + 1;
        return j + 1 >= n || callgrind_is_ws(p[j + 1]);
    }
    if (j < n && (p[j] == '+' || p[j] == '-')) {
        char sgn = p[j++];
        if (!parse_u64(p, n, &j, &x) || x > (uint64_t)INT64_MAX / 2)
            return 0;
        *v = sgn == '+' ? last + (int64_t)x : last - (int64_t)x;
        *i = j;
        return 1;
    }
    if (!parse_u64(p, n, &j, &x) || x > (uint64_t)INT64_MAX / 2)
        return 0;
    *v = (int64_t)x;
    *i = j;
    return 1;
}

static void callgrind_skip_ws(const char *p, size_t n, size_t *i)
{
    while (*i < n && callgrind_is_ws(p[*i]))
        (*i)++;
}

/* the next blank-separated word of p[*i..n): 1 with it at p[*b..*i), 0 at the end */
static int next_word(const char *p, size_t n, size_t *i, size_t *b)
{
    callgrind_skip_ws(p, n, i);
    if (*i >= n)
        return 0;
    *b = *i;
    while (*i < n && !callgrind_is_ws(p[*i]))
        (*i)++;
    return 1;
}

/* "pos... cost..." -> the line and the chosen event's cost */
static pb_status cost_line(cg *r, const char *p, size_t n, uint32_t *line, uint64_t *cost)
{
    size_t i = 0;
    int k;
    unsigned e;
    int64_t v[CG_MAX_POS] = {0, 0};
    *line = 0;
    *cost = 0;
    for (k = 0; k < r->npos; k++) {
        callgrind_skip_ws(p, n, &i);
        if (!parse_pos(p, n, &i, r->last[k], &v[k]))
            return callgrind_bad(r, "a cost line's position is not a number, +N, -N or *");
    }
    for (k = 0; k < r->npos; k++)
        r->last[k] = v[k];
    if (r->pos_line) {
        int64_t l = v[r->npos - 1];
        *line = l > 0 && l < INT32_MAX ? (uint32_t)l : 0;
    }
    for (e = 0;; e++) {
        uint64_t x;
        callgrind_skip_ws(p, n, &i);
        if (i >= n)
            break;
        if (!parse_u64(p, n, &i, &x))
            return callgrind_bad(r, "a cost is not a number");
        if (e >= r->nevents)
            return callgrind_bad(r, "a cost line has more costs than events");
        if (e == r->event)
            *cost = x;
    }
    return PB_OK;
}

/* ---- lines -------------------------------------------------------------- */
static int starts(const char *p, size_t n, const char *w, size_t *after)
{
    size_t k = strlen(w);
    if (n < k || memcmp(p, w, k) != 0)
        return 0;
    *after = k;
    return 1;
}

/* Over 80 lines, kept whole: one branch per header key of the format, in the spec's order. */
static pb_status header_line(cg *r, const char *p, size_t n, size_t colon)
{
    size_t v = colon + 1;
    const char *key = p;
    size_t kl = colon;
    callgrind_skip_ws(p, n, &v);
    if (kl == 6 && !memcmp(key, "events", 6)) {
        size_t i = v;
        if (r->have_events)
            return callgrind_bad(r, "a second events: line");
        r->have_events = 1;
        size_t b;
        while (next_word(p, n, &i, &b)) {
            if (r->nevents >= CG_MAX_EVENTS)
                return pb_fail(r->err, PB_ERR_LIMIT, r->line_off, "more than %d events", CG_MAX_EVENTS);
            snprintf(r->events[r->nevents++], sizeof r->events[0], "%.*s", (int)(i - b), p + b);
        }
        if (!r->nevents)
            return callgrind_bad(r, "an events: line names no event");
        r->event = 0;
        if (r->opt.sample_type && *r->opt.sample_type) {
            unsigned e;
            for (e = 0; e < r->nevents && strcmp(r->events[e], r->opt.sample_type); e++)
                ;
            if (e == r->nevents) {
                char list[CG_MAX_EVENTS * 50];
                size_t w = 0;
                list[0] = '\0';
                for (e = 0; e < r->nevents && w < sizeof list; e++)
                    w += (size_t)snprintf(list + w, sizeof list - w, "%s%s", e ? ", " : "", r->events[e]);
                return pb_fail(r->err, PB_ERR_USAGE, r->line_off, "no event %s in this file (its events: %s)",
                               r->opt.sample_type, list);
            }
            r->event = e;
        }
    } else if (kl == 9 && !memcmp(key, "positions", 9)) {
        size_t i = v;
        r->npos = 0;
        r->pos_line = r->pos_instr = 0;
        size_t b;
        while (next_word(p, n, &i, &b)) {
            if (r->npos >= CG_MAX_POS)
                return pb_fail(r->err, PB_ERR_UNSUPPORTED, r->line_off, "positions: more than instr and line");
            if (i - b == 4 && !memcmp(p + b, "line", 4))
                r->pos_line = 1;
            else if ((i - b == 5 && !memcmp(p + b, "instr", 5)) || (i - b == 4 && !memcmp(p + b, "addr", 4)))
                r->pos_instr = 1;
            else
                return pb_fail(r->err, PB_ERR_UNSUPPORTED, r->line_off, "positions: %.*s (only instr and line)",
                               (int)(i - b), p + b);
            r->npos++;
        }
        if (!r->npos)
            return callgrind_bad(r, "a positions: line names no position");
        r->last[0] = r->last[1] = 0;
    } else if ((kl == 7 && !memcmp(key, "summary", 7)) || (kl == 6 && !memcmp(key, "totals", 6))) {
        size_t i = v;
        unsigned e;
        uint64_t x = 0, got = 0;
        for (e = 0;; e++) {
            callgrind_skip_ws(p, n, &i);
            if (i >= n)
                break;
            if (!parse_u64(p, n, &i, &x))
                return callgrind_bad(r, "a summary: or totals: cost is not a number");
            if (e == r->event)
                got = x;
        }
        if (key[0] == 's')
            r->summary = got, r->have_summary = 1;
        else
            r->totals = got, r->have_totals = 1;
    } else if (kl == 6 && !memcmp(key, "thread", 6)) {
        size_t i = v;
        uint64_t t;
        if (!parse_u64(p, n, &i, &t))
            return callgrind_bad(r, "a thread: line's value is not a number");
        if (t != r->thread) {
            r->thread = t;
            r->cur = NONE;
        }
    } else if (kl == 7 && !memcmp(key, "creator", 7)) {
        snprintf(r->creator, sizeof r->creator, "%.*s", (int)(n - v), p + v);
    } else if (kl == 7 && !memcmp(key, "version", 7)) {
        if (n - v != 1 || p[v] != '1')
            return pb_fail(r->err, PB_ERR_UNSUPPORTED, r->line_off, "callgrind format version %.*s (only 1)",
                           (int)(n - v < 20 ? n - v : 20), p + v);
    }
    /* pid, cmd, part, desc, event, anything else: read past */
    return PB_OK;
}

/* the current function, made when a cost or call needs it */
static pb_status current(cg *r, uint32_t *fn)
{
    pb_status st;
    if (r->cur == NONE) {
        if (r->fnid == NONE)
            return callgrind_bad(r, "a cost line before any fn=");
        if ((st = fn_get(r, r->fl, r->fnid, &r->cur)) != PB_OK)
            return st;
    }
    *fn = r->cur;
    return PB_OK;
}

/* Over 80 lines, kept whole: one branch per body line kind (cost, fn=, fl=, cfn=, calls=, ...), in
 * the spec's order. */
static pb_status body_line(cg *r, const char *p, size_t n)
{
    size_t a;
    uint32_t id, fn = 0, line = 0;
    uint64_t cost = 0;
    pb_status st;
    char c = p[0];
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*') {
        if (!r->have_events)
            return callgrind_bad(r, "a cost line before the events: line");
        if (!r->npos)
            r->npos = 1, r->pos_line = 1;
        if ((st = current(r, &fn)) != PB_OK || (st = cost_line(r, p, n, &line, &cost)) != PB_OK)
            return st;
        if (r->in_call) {
            uint32_t callee;
            uint32_t file = r->cfl != NONE ? r->cfl : (r->fi != NONE ? r->fi : r->fl);
            uint64_t save = r->thread;
            r->in_call = 0;
            if ((st = fn_get(r, file, r->cfn, &callee)) != PB_OK)
                return st;
            r->thread = save;
            r->fn[callee].called = 1;
            if (r->fn[callee].obj == NONE || r->fn[callee].obj == r->ob)
                r->fn[callee].obj = r->cob != NONE ? r->cob : r->ob;
            r->fn[callee].calls += r->pending_calls;
            if (r->fn[callee].in_incl > UINT64_MAX - cost || r->fn[fn].out_incl > UINT64_MAX - cost)
                return pb_fail(r->err, PB_ERR_LIMIT, r->line_off, "an inclusive cost does not fit 64 bits");
            r->fn[callee].in_incl += cost;
            r->fn[fn].out_incl += cost; /* the caller's, used when it is never called */
            r->cfl = NONE;
            r->cob = NONE;
            return sum_add(r, &r->cl, fn, callee, line, r->pending_calls, cost, "a call's inclusive cost");
        }
        if (r->fn[fn].self > UINT64_MAX - cost || r->fn[fn].out_incl > UINT64_MAX - cost)
            return pb_fail(r->err, PB_ERR_LIMIT, r->line_off, "a function's cost does not fit 64 bits");
        r->fn[fn].self += cost;
        r->fn[fn].out_incl += cost;
        return sum_add(r, &r->ln, fn, r->fi != NONE ? r->fi : r->fl, line, 0, cost, "a line's cost");
    }
    if (r->in_call)
        return callgrind_bad(r, "a calls= line is not followed by its cost line");
    if (starts(p, n, "fn=", &a)) {
        if ((st = name_of(r, &r->fns, p + a, n - a, &r->fnid)) != PB_OK)
            return st;
        r->fi = NONE;
        r->cur = NONE;
        return fn_get(r, r->fl, r->fnid, &r->cur);
    }
    if (starts(p, n, "fl=", &a)) {
        r->fi = NONE;
        r->cur = NONE;
        return name_of(r, &r->files, p + a, n - a, &r->fl);
    }
    if (starts(p, n, "fi=", &a) || starts(p, n, "fe=", &a)) {
        if ((st = name_of(r, &r->files, p + a, n - a, &id)) != PB_OK)
            return st;
        r->fi = id == r->fl ? NONE : id;
        return PB_OK;
    }
    if (starts(p, n, "ob=", &a))
        return name_of(r, &r->objs, p + a, n - a, &r->ob);
    if (starts(p, n, "cob=", &a))
        return name_of(r, &r->objs, p + a, n - a, &r->cob);
    if (starts(p, n, "cfi=", &a) || starts(p, n, "cfl=", &a))
        return name_of(r, &r->files, p + a, n - a, &r->cfl);
    if (starts(p, n, "cfn=", &a))
        return name_of(r, &r->fns, p + a, n - a, &r->cfn);
    if (starts(p, n, "jfi=", &a))
        return name_of(r, &r->files, p + a, n - a, &id);
    if (starts(p, n, "jfn=", &a))
        return name_of(r, &r->fns, p + a, n - a, &id);
    if (starts(p, n, "jump=", &a) || starts(p, n, "jcnd=", &a))
        return PB_OK;
    if (starts(p, n, "calls=", &a)) {
        size_t i = a;
        if (r->cfn == NONE)
            return callgrind_bad(r, "calls= without a cfn=");
        if (!parse_u64(p, n, &i, &r->pending_calls))
            return callgrind_bad(r, "calls= count is not a number");
        /* calls=0 (go tool pprof writes it): callgrind_annotate reads the
         * next cost line as the caller's own cost, and so do we */
        r->in_call = r->pending_calls > 0;
        if (!r->in_call)
            r->cfl = r->cob = NONE;
        return PB_OK;
    }
    {
        /* "key: value" */
        const char *colon = memchr(p, ':', n);
        size_t i;
        if (colon) {
            for (i = 0; p + i < colon; i++)
                if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') ||
                      p[i] == '_' || p[i] == '-'))
                    break;
            if (p + i == colon && i > 0)
                return header_line(r, p, n, (size_t)(colon - p));
        }
    }
    return callgrind_bad(r, "not a callgrind line");
}

/* ---- into the sink -------------------------------------------------------- */
static int is_unknown(cg *r, uint32_t s)
{
    return s == NONE || pb_strtab_len(&r->str, s) == 0 ||
           (pb_strtab_len(&r->str, s) == 3 && !memcmp(pb_strtab_ptr(&r->str, s), "???", 3));
}

static pb_status callgrind_frame_of(cg *r, uint32_t fi, uint32_t file, uint32_t *id)
{
    cg_fn *f = &r->fn[fi];
    pb_frame pf;
    const char *nm = pb_strtab_ptr(&r->str, f->name), *paren;
    size_t nl = pb_strtab_len(&r->str, f->name), cut = 0, i;
    uint32_t fs = file;
    int depth = 0;
    memset(&pf, 0, sizeof pf);
    /* the last "::" before any "(" and outside <...> */
    paren = memchr(nm, '(', nl);
    for (i = 0; i + 1 < (paren ? (size_t)(paren - nm) : nl); i++) {
        if (nm[i] == '<')
            depth++;
        else if (nm[i] == '>' && depth)
            depth--;
        else if (!depth && nm[i] == ':' && nm[i + 1] == ':')
            cut = i;
    }
    if (cut && cut + 2 < nl) {
        pf.package = pb_str_make(nm, cut, 1);
        pf.name = pb_str_make(nm + cut + 2, nl - cut - 2, 1);
    } else {
        pf.package = pb_str_make("", 0, 0);
        pf.name = pb_str_make(nm, nl, 1);
    }
    if (is_unknown(r, fs))
        fs = f->obj; /* no debug information: its object */
    pf.kind = PB_FRAME_SUB;
    if (is_unknown(r, fs)) {
        pf.kind = PB_FRAME_XSUB;
        pf.file = pb_str_make("", 0, 0);
    } else {
        pf.file = pb_str_make(pb_strtab_ptr(&r->str, fs), pb_strtab_len(&r->str, fs), 1);
    }
    pf.own = pb_str_make(nm, nl, 1);
    pf.line = 0;
    pf.first_line = -1;
    return r->out->frame(r->out, &pf, id);
}

static pb_status callgrind_attr(cg *r, const char *k, const char *v) { return r->out->attribute(r->out, k, pb_str_c(v)); }

static pb_status callgrind_flush(cg *r)
{
    size_t i;
    pb_status st;
    char buf[CG_MAX_EVENTS * 50];
    size_t w = 0;
    uint64_t *ncallers;
    uint64_t last_thread = UINT64_MAX;
    if ((st = callgrind_attr(r, "call_graph", "exact")) != PB_OK)
        return st;
    buf[0] = '\0';
    for (i = 0; i < r->nevents && w < sizeof buf; i++)
        w += (size_t)snprintf(buf + w, sizeof buf - w, "%s%s", i ? "," : "", r->events[i]);
    if ((st = callgrind_attr(r, "graph_events", buf)) != PB_OK || (st = callgrind_attr(r, "graph_event", r->events[r->event])) != PB_OK ||
        (st = callgrind_attr(r, "graph_cost_unit", r->events[r->event])) != PB_OK)
        return st;
    if (r->creator[0] && (st = callgrind_attr(r, "graph_producer", r->creator)) != PB_OK)
        return st;
    if (r->have_summary || r->have_totals) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)(r->have_summary && r->summary ? r->summary : r->totals));
        if ((st = callgrind_attr(r, "graph_total", buf)) != PB_OK)
            return st;
    }
    if (r->err->file[0] && (st = callgrind_attr(r, "application", r->err->file)) != PB_OK)
        return st;
    if ((st = callgrind_attr(r, "basetime", "0")) != PB_OK)
        return st;
    /* threads, then every function's frame and totals */
    for (i = 0; i < r->nfn; i++) {
        cg_fn *f = &r->fn[i];
        pb_graph_func g;
        if (f->thread != last_thread) {
            char label[24];
            last_thread = f->thread;
            snprintf(label, sizeof label, "%llu", (unsigned long long)f->thread);
            if (r->out->thread &&
                (st = r->out->thread(r->out, f->thread, (uint32_t)(f->thread < UINT32_MAX ? f->thread : 0) + 1, 0,
                                     label)) != PB_OK)
                return st;
        }
        if ((st = callgrind_frame_of(r, (uint32_t)i, f->file, &f->frame)) != PB_OK)
            return st;
        memset(&g, 0, sizeof g);
        g.frame = f->frame;
        g.nc = g.cc = f->calls;
        g.excl = f->self;
        g.incl = f->called ? f->in_incl : f->out_incl;
        if (r->out->graph_func && (st = r->out->graph_func(r->out, f->thread, &g)) != PB_OK)
            return st;
    }
    for (i = 0; i < r->ln.n; i++) {
        const cg_sum *l = &r->ln.e[i]; /* a: function, b: file */
        const cg_fn *f = &r->fn[l->a];
        uint32_t frame = f->frame;
        if (l->b != f->file && (st = callgrind_frame_of(r, l->a, l->b, &frame)) != PB_OK)
            return st;
        if (l->cost && r->out->graph_line && (st = r->out->graph_line(r->out, f->thread, frame, l->line, l->cost)) != PB_OK)
            return st;
    }
    /* a callee with one caller edge: its own cost is that edge's */
    /* (in the state: a consumer that never returns leaks nothing) */
    if (!(ncallers = r->ncallers = (uint64_t *)calloc(r->nfn ? r->nfn : 1, sizeof *ncallers)))
        return OOM(r);
    for (i = 0; i < r->cl.n; i++)
        ncallers[r->cl.e[i].b]++;
    for (i = 0; i < r->cl.n; i++) {
        const cg_sum *c = &r->cl.e[i]; /* a: caller, b: callee */
        pb_graph_edge e;
        memset(&e, 0, sizeof e);
        e.caller = r->fn[c->a].frame;
        e.callee = r->fn[c->b].frame;
        e.line = c->line;
        e.nc = e.cc = c->count;
        e.incl = c->cost;
        if (ncallers[c->b] == 1 && c->count == r->fn[c->b].calls)
            e.excl = r->fn[c->b].self;
        if (r->out->graph_edge && (st = r->out->graph_edge(r->out, r->fn[c->b].thread, &e)) != PB_OK)
            return st;
    }
    return PB_OK;
}

static void cg_init(void *p, pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    cg *r = (cg *)p;
    (void)sink;
    r->s = src;
    pb_options_copy(&r->opt, opt);
    if (!r->opt.max_record_size)
        r->opt.max_record_size = PB_DEFAULT_MAX_RECORD;
    r->err = err;
    r->ob = r->fl = r->fi = r->fnid = r->cob = r->cfl = r->cfn = r->cur = NONE;
}

static void cg_free(void *p)
{
    cg *r = (cg *)p;
    pb_strtab_free(&r->str);
    PB_FREE_ALL(r->files.e, r->fns.e, r->objs.e, r->fn, r->ln.e, r->cl.e, r->ncallers);
    PB_INDEX_FREE_ALL(&r->files.ix, &r->fns.ix, &r->objs.ix, &r->tfn, &r->ln.ix, &r->cl.ix);
}

static pb_status cg_run(void *p, pb_sample_sink *out)
{
    cg *r = (cg *)p;
    pb_status st;
    const char *line = NULL;
    size_t len = 0;
    int eof = 0;
    r->out = out;
    for (;;) {
        if ((st = callgrind_next_line(r, &line, &len, &eof)) != PB_OK)
            return st;
        if (eof)
            break;
        if (!len || line[0] == '#')
            continue;
        if ((st = body_line(r, line, len)) != PB_OK)
            return st;
    }
    if (r->in_call)
        return pb_fail(r->err, PB_ERR_TRUNCATED, pb_src_offset(r->s), "the file ends after a calls= line");
    if (!r->have_events)
        return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(r->s), "no events: line (not a callgrind file)");
    if ((st = callgrind_flush(r)) != PB_OK)
        return st;
    return out->finish(out);
}

const pb_fold_decoder pb_callgrind_decoder = {sizeof(cg), cg_init, NULL, cg_run, cg_free,
    {.source_format = "callgrind", .ticks_per_sec = 1000000000u, .ticks_per_weight = 1, .sampled_spans = 1,
     .call_graph = 1}};

/* "# callgrind format", or a first non-blank, non-comment line that is a
 * callgrind header line (version: 1, creator:, events:, positions:) */
int pb_callgrind_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info)
{
    static const char *const keys[] = {"version: 1", "version:1", "creator:", "events:", "positions:"};
    size_t i = 0, k;
    (void)file_size;
    (void)info;
    if (len >= 18 && !memcmp(p, "# callgrind format", 18))
        return 1;
    while (i < len) {
        const unsigned char *nl = memchr(p + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - p) : len;
        if (e > i && p[i] != '#') {
            for (k = 0; k < sizeof keys / sizeof *keys; k++)
                if (e - i >= strlen(keys[k]) && !memcmp(p + i, keys[k], strlen(keys[k])))
                    return 1;
            return 0;
        }
        i = e + 1;
    }
    return 0;
}
