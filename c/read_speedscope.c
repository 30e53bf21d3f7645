/* read_speedscope.c - speedscope's own JSON file format (the
 * file-format-schema.json of speedscope 1.25), as py-spy, rbspy,
 * pyinstrument, dotnet-trace, austin2speedscope, speedscope's own "Export"
 * and our --to speedscope write it: a stack decoder feeding a
 * pb_sample_sink, the chunk decoder that folds it (fold_samples.h), and,
 * for a file whose chosen profiles are all evented, a chunk decoder over
 * the span fold (fold_spans.h), as every span format's blocks are folded.
 *
 * The file is one JSON object, keys in any order:
 *   $schema   "https://www.speedscope.app/file-format-schema.json"
 *   shared    {frames: [{name, file?, line?, col?}]}
 *   profiles  [{type "sampled", name, unit, startValue, endValue,
 *               samples [[frame index, root first]], weights [number]}
 *              | {type "evented", name, unit, startValue, endValue,
 *               events [{type "O"|"C", frame, at}]}]
 *   name, exporter, activeProfileIndex   (kept as ATTRIBUTEs)
 * unit: nanoseconds, microseconds, milliseconds, seconds (time: weights and
 * times become ns, rounded to the nearest ns; ATTRIBUTE
 * sample_weight_unit=ns), bytes or none (weights as written, one unit = one
 * tick, as a count is taken everywhere).  Profiles of different kinds of
 * unit (time, bytes, none) are never added up: such a file is refused
 * unless --thread picks profiles of one kind.
 *
 * Threads: each profile is a thread, key = its index in profiles (0..),
 * pid = key + 1, label = its name; --thread N picks profile N, --thread
 * NAME the profiles so named.
 *
 * Samples.  A sampled profile's sample i is its stack (root first in the
 * JSON, innermost first to the sink) with weights[i]; zero weights stand for
 * nothing and are not reported.  An evented profile is a sequence of O
 * (open frame) and C (close frame) events with nondecreasing `at`: the time
 * between two events belongs to the stack open then (speedscope's own
 * reading); as samples, one per such interval.  A C must close the frame
 * the last open O opened, and a profile must close every frame it opens:
 * anything else is `corrupt` at the event.  For the chunk stream, a file
 * whose chosen profiles are all evented goes through the span fold: each
 * O..C pair is one span, so SUB_CALLERS counts are the exact numbers of
 * O events and the times exact.  (Mixed files, and evented profiles that
 * nest deeper than the span fold's PB_SPANS_MAX_DEPTH: the evented profiles
 * as samples; counts are then inferred as for any sampled profile.)
 *
 * Frames: name as written (the stack outputs show it); file and line as
 * written (line 1-based, as speedscope shows it); col has no place in the
 * model (ATTRIBUTE speedscope_column_frames counts the frames that had
 * one).  nytprof.out's sub: a name with "::" split at its last "::", else
 * main::name; "<...>" and "(...)" names without a file are synthetic.
 *
 * Bounded memory and two passes, as the other JSON reader: `shared` may come after
 * `profiles`, and the samples, weights and events arrays can be most of the
 * file.  Pass 1 parses the whole input once (yajl's push parser), keeping
 * the frames and each profile's head (type, name, unit, start/end, counts)
 * and noting where each array starts (the byte after its key, when the key
 * lies in the block fed; else 0: the cursor parses from the document's
 * start and takes only its profile's array); it also checks each evented
 * profile's nesting.  Pass 2, profile by profile: a sampled profile's
 * samples and weights through two cursors in lockstep (a cursor is fed one
 * 64 KB block only when its queue is empty), an evented profile's events
 * through one.  Memory: frames, profile heads, one block's worth of queued
 * items, and the open stack.  The input must be seekable (a pipe is
 * refused: save it first).
 *
 * Names here: ssr = this reader's state (speedscope reader), ssp = one JSON parser with its place
 * in the document (speedscope parse), ss_ = the reader's types and helpers (ss_prof one profile,
 * ss_frame one shared frame).
 */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "codecs.h"
#include "fold_samples.h"
#include "fold_spans.h"
#include "json_feed.h"
#include "options.h"
#include "reader.h"
#include "samples.h"
#include "util.h"

#if !PB_HAVE_YAJL
PB_JSON_DECODER_WITHOUT_YAJL(pb_speedscope_decoder, "speedscope");
#else

#define SS_NONE UINT32_MAX

/* contexts (C_SKIP 0: json_feed.h's context of a level not kept), and
 * what an error calls each */
enum { C_SKIP, C_TOP, C_SHARED, C_FRAMES, C_FRAME, C_PROFILES, C_PROFILE, C_SAMPLES, C_STACK, C_WEIGHTS, C_EVENTS,
       C_EVENT, C_N };
static const char *const ctx_names[C_N] = {"the file", "the file's object", "shared", "shared.frames", "a frame",
    "profiles", "a profile", "a profile's samples", "a sample's stack", "a profile's weights", "a profile's events",
    "an event"};
/* keys */
enum { K_OTHER, K_SCHEMA, K_SHARED, K_PROFILES, K_NAME, K_EXPORTER, K_ACTIVE, K_FRAMES, K_FILE, K_LINE, K_COL,
       K_TYPE, K_UNIT, K_START, K_END, K_SAMPLES, K_WEIGHTS, K_EVENTS, K_FRAME, K_AT };
/* the keys of each context's objects */
static const pb_json_key top_keys[] = {{"$schema", K_SCHEMA}, {"shared", K_SHARED}, {"profiles", K_PROFILES},
    {"name", K_NAME}, {"exporter", K_EXPORTER}, {"activeProfileIndex", K_ACTIVE}, {NULL, 0}};
static const pb_json_key shared_keys[] = {{"frames", K_FRAMES}, {NULL, 0}};
static const pb_json_key frame_keys[] = {{"name", K_NAME}, {"file", K_FILE}, {"line", K_LINE}, {"col", K_COL},
    {NULL, 0}};
static const pb_json_key profile_keys[] = {{"type", K_TYPE}, {"name", K_NAME}, {"unit", K_UNIT},
    {"startValue", K_START}, {"endValue", K_END}, {"samples", K_SAMPLES}, {"weights", K_WEIGHTS},
    {"events", K_EVENTS}, {NULL, 0}};
static const pb_json_key event_keys[] = {{"type", K_TYPE}, {"frame", K_FRAME}, {"at", K_AT}, {NULL, 0}};
static const pb_json_key *const ctx_keys[C_N] = {[C_TOP] = top_keys, [C_SHARED] = shared_keys,
    [C_FRAME] = frame_keys, [C_PROFILE] = profile_keys, [C_EVENT] = event_keys};
/* the arrays of a profile (a cursor's target) */
enum { A_SAMPLES, A_WEIGHTS, A_EVENTS };
/* profile types; unit kinds */
enum { P_NONE, P_SAMPLED, P_EVENTED };
enum { U_UNKNOWN, U_NONE, U_NS, U_US, U_MS, U_S, U_BYTES };

typedef struct {
    size_t name_at, file_at;
    uint32_t name_len, file_len;
    int32_t line, col;
    uint32_t sink_id, kind;
    unsigned char have_name;
} ss_frame;

typedef struct {
    int type, unit;
    size_t name_at;
    uint32_t name_len;
    double start, end;
    unsigned char have_name, have_start, have_end, have[3], selected;
    uint64_t count[3];  /* samples, weights, events */
    uint64_t at[3];     /* where each array's key ends (0: unknown) */
    double first_at;    /* evented: the first event's at */
    double last_at;     /* pass 1: the last event's at */
    uint64_t off;       /* where the profile's object starts */
} ss_prof;

typedef struct ssr ssr;

typedef struct {
    pb_json_feed j;      /* the parser, its block, depth and complaint (j.done: a cursor's array ended) */
    ssr *r;
    int target;          /* 0: pass 1; else 1 + A_* */
    uint32_t tprof;      /* a cursor's profile */
    int key;
    uint32_t prof_i;     /* profiles opened so far */
    int in_target;       /* inside the target profile */
    /* the event being read */
    int ev_type;
    double ev_frame, ev_at;
    unsigned ev_have;
    /* queues: samples (frame indices of each stack, flat) or weights */
    uint32_t *qids;
    size_t nqids, cqids;
    size_t *qstart;      /* each stack's start in qids; qstart[nq] = nqids */
    uint64_t *qoff;
    size_t nq, cq, cqoff, qhead;
    double *qw;
    size_t nqw, cqw;
} ssp;

struct ssr {
    pb_json_io io;
    pb_sample_sink *out;
    ss_frame *frames;
    size_t nframes, cframes;
    ss_prof *profs;
    size_t nprofs, cprofs;
    char *str;
    size_t nstr, cstr;
    int have_schema, have_shared, have_frames, have_profiles, have_active, have_top_name, have_exporter;
    double active;
    size_t top_name_at, exporter_at;
    uint32_t top_name_len, exporter_len;
    uint32_t *open;      /* open frames (pass 1's nesting check, pass 2's stack) */
    uint64_t *open_at;   /* pass 2: when each opened (ns) */
    size_t nopen, copen, copen_at;
    uint32_t *ids;
    size_t cids;
    int unit_kind;       /* of the chosen profiles: U_NONE, U_NS (any time unit), U_BYTES */
    int64_t base_ns;
    uint32_t cur;        /* pass 2's profile */
    int64_t last_ns;     /* pass 2: the previous event's time / the sampled clock */
    uint64_t col_frames, emitted;
    size_t max_nest;     /* pass 1: the deepest nesting of O events */
    pb_spans *spans;     /* the evented chunk path */
    pb_sink *sink;
    ssp p1, c[2];
};

static pb_status speedscope_oom(ssr *r, uint64_t off) { return pb_fail(r->io.err, PB_ERR_LIMIT, off, "out of memory"); }

/* without libm: |x| < lim (NaN fails), and x rounded half away from 0
 * (|x| well inside int64) */
static int within(double x, double lim) { return x > -lim && x < lim; }
static int64_t round_i64(double x) { return x >= 0 ? (int64_t)(x + 0.5) : -(int64_t)(-x + 0.5); }

#define P(x) ((ssp *)(x))

static int speedscope_complain(ssp *p, pb_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int speedscope_complain(ssp *p, pb_status st, const char *fmt, ...)
{
    if (!p->j.fail) {
        va_list ap;
        va_start(ap, fmt);
        p->j.fail = st;
        vsnprintf(p->j.why, sizeof p->j.why, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* a sink's failure inside a callback: its status kept, yajl told to stop */
static int sink_fail(ssp *p, pb_status st)
{
    if (!p->j.fail) {
        p->j.fail = st;
        p->j.sink_failed = 1;
    }
    return 0;
}

static int speedscope_cur_ctx(const ssp *p) { return pb_json_feed_ctx(&p->j); }

static int speedscope_key_is(const unsigned char *k, size_t n, const char *s) { return n == strlen(s) && !memcmp(k, s, n); }

static int unit_of(const unsigned char *s, size_t n)
{
    return speedscope_key_is(s, n, "none") ? U_NONE : speedscope_key_is(s, n, "nanoseconds") ? U_NS : speedscope_key_is(s, n, "microseconds") ? U_US
         : speedscope_key_is(s, n, "milliseconds") ? U_MS : speedscope_key_is(s, n, "seconds") ? U_S : speedscope_key_is(s, n, "bytes") ? U_BYTES
         : U_UNKNOWN;
}

static const char *unit_name(int u)
{
    static const char *const n[] = { "?", "none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes" };
    return u >= 0 && u <= U_BYTES ? n[u] : "?";
}

/* ns per unit (time units), else 1 */
static double unit_factor(int u) { return u == U_US ? 1e3 : u == U_MS ? 1e6 : u == U_S ? 1e9 : 1.0; }
/* what can be added up: every time unit is ns */
static int unit_kind(int u) { return u >= U_NS && u <= U_S ? U_NS : u; }

/* the profile a callback is in (pass 1: the last opened) */
static ss_prof *prof_now(ssp *p) { return &p->r->profs[p->target ? p->tprof : p->r->nprofs - 1]; }

static int ss_map_key(void *ctx, const unsigned char *k, size_t n)
{
    ssp *p = P(ctx);
    int c = speedscope_cur_ctx(p);
    p->key = c > 0 && c < C_N ? pb_json_key_of(ctx_keys[c], k, n) : K_OTHER;
    if (c == C_TOP) {
        if (!p->target && p->key == K_PROFILES && p->r->have_profiles)
            return speedscope_complain(p, PB_ERR_CORRUPT, "the file has two \"profiles\" keys");
        if (!p->target && p->key == K_SHARED && p->r->have_shared)
            return speedscope_complain(p, PB_ERR_CORRUPT, "the file has two \"shared\" keys");
    } else if (c == C_PROFILE) {
        if (!p->target && (p->key == K_SAMPLES || p->key == K_WEIGHTS || p->key == K_EVENTS)) {
            int a = p->key == K_SAMPLES ? A_SAMPLES : p->key == K_WEIGHTS ? A_WEIGHTS : A_EVENTS;
            ss_prof *pr = prof_now(p);
            if (pr->have[a])
                return speedscope_complain(p, PB_ERR_CORRUPT, "profile %zu has two \"%.*s\" keys", p->r->nprofs - 1, (int)n,
                                (const char *)k);
            if (k >= p->j.chunk && k + n < p->j.chunk + p->j.chunk_len && k[n] == '"')
                pr->at[a] = p->j.chunk_off + (uint64_t)(k - p->j.chunk) + n + 1;
        }
    }
    return 1;
}

static int new_frame(ssp *p)
{
    ssr *r = p->r;
    ss_frame *f;
    if (r->nframes >= r->io.opt->max_frames)
        return speedscope_complain(p, PB_ERR_LIMIT, "more frames than max_frames (%u) allows", (unsigned)r->io.opt->max_frames);
    if (pb_grow((void **)&r->frames, &r->cframes, r->nframes + 1, sizeof *r->frames) < 0)
        return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
    f = &r->frames[r->nframes++];
    memset(f, 0, sizeof *f);
    f->line = f->col = -1;
    f->sink_id = f->kind = SS_NONE;
    return 1;
}

static int new_prof(ssp *p)
{
    ssr *r = p->r;
    ss_prof *pr;
    if (r->nprofs >= r->io.opt->max_frames || r->nprofs >= UINT32_MAX - 1)
        return speedscope_complain(p, PB_ERR_LIMIT, "more profiles than max_frames (%u) allows", (unsigned)r->io.opt->max_frames);
    if (pb_grow((void **)&r->profs, &r->cprofs, r->nprofs + 1, sizeof *r->profs) < 0)
        return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
    pr = &r->profs[r->nprofs++];
    memset(pr, 0, sizeof *pr);
    pr->off = p->j.chunk_off + (p->j.h ? yajl_get_bytes_consumed(p->j.h) : 0);
    r->nopen = 0;
    return 1;
}

/* the context a container opens, or C_SKIP; *ok 0: the wrong kind of value */
static int speedscope_open_ctx(ssp *p, int is_map, int *ok)
{
    int c = speedscope_cur_ctx(p), k = p->key;
    *ok = 1;
    if (p->j.depth == 0) {
        if (p->target && p->j.started == 2) {
            *ok = !is_map;
            p->in_target = 1;
            return p->target - 1 == A_SAMPLES ? C_SAMPLES : p->target - 1 == A_WEIGHTS ? C_WEIGHTS : C_EVENTS;
        }
        *ok = is_map;
        return C_TOP;
    }
    switch (c) {
    case C_TOP:
        if (k == K_SHARED)
            return (*ok = is_map) ? C_SHARED : C_SKIP;
        if (k == K_PROFILES)
            return (*ok = !is_map) ? C_PROFILES : C_SKIP;
        if (k == K_SCHEMA || k == K_NAME || k == K_EXPORTER || k == K_ACTIVE)
            *ok = 0;
        return C_SKIP;
    case C_SHARED:
        if (k == K_FRAMES)
            return (*ok = !is_map) ? C_FRAMES : C_SKIP;
        return C_SKIP;
    case C_FRAMES:
        return (*ok = is_map) ? C_FRAME : C_SKIP;
    case C_PROFILES:
        return (*ok = is_map) ? C_PROFILE : C_SKIP;
    case C_PROFILE:
        if (k == K_SAMPLES || k == K_WEIGHTS || k == K_EVENTS) {
            *ok = !is_map;
            return k == K_SAMPLES ? C_SAMPLES : k == K_WEIGHTS ? C_WEIGHTS : C_EVENTS;
        }
        if (k == K_TYPE || k == K_NAME || k == K_UNIT || k == K_START || k == K_END)
            *ok = 0;
        return C_SKIP;
    case C_SAMPLES:
        return (*ok = !is_map) ? C_STACK : C_SKIP;
    case C_EVENTS:
        return (*ok = is_map) ? C_EVENT : C_SKIP;
    case C_STACK:
    case C_WEIGHTS:
        *ok = 0;
        return C_SKIP;
    case C_FRAME:
        if (k == K_NAME || k == K_FILE || k == K_LINE || k == K_COL)
            *ok = 0;
        return C_SKIP;
    case C_EVENT:
        if (k == K_TYPE || k == K_FRAME || k == K_AT)
            *ok = 0;
        return C_SKIP;
    default:
        return C_SKIP;
    }
}

static const char *ctx_what(int c) { return c >= 0 && c < C_N ? ctx_names[c] : "the file"; }

static int ss_open(void *ctx, int is_map)
{
    ssp *p = P(ctx);
    int ok, c = speedscope_open_ctx(p, is_map, &ok), pc = speedscope_cur_ctx(p);
    if (!ok) {
        if (p->j.depth == 0)
            return speedscope_complain(p, PB_ERR_CORRUPT, "a speedscope file is a JSON object; this is an array");
        return speedscope_complain(p, PB_ERR_CORRUPT, "%s where %s belongs (in %s)", is_map ? "an object" : "an array",
                        pc == C_FRAMES || pc == C_PROFILES || pc == C_EVENTS ? "an object"
                        : pc == C_SAMPLES ? "an array of frame indices" : "a different value",
                        ctx_what(pc));
    }
    if (!pb_json_feed_push(&p->j, c))
        return 0;
    p->key = K_OTHER;
    if (c == C_PROFILE) {
        p->prof_i++;
        if (p->target && p->j.started != 2)
            p->in_target = p->prof_i - 1 == p->tprof;
    }
    if (c == C_EVENT)
        p->ev_have = 0;
    if (!p->target) {
        ssr *r = p->r;
        if (c == C_SHARED)
            r->have_shared = 1;
        if (c == C_FRAMES)
            r->have_frames = 1;
        if (c == C_PROFILES)
            r->have_profiles = 1;
        if (c == C_FRAME)
            return new_frame(p);
        if (c == C_PROFILE)
            return new_prof(p);
        if (c == C_SAMPLES || c == C_WEIGHTS || c == C_EVENTS)
            prof_now(p)->have[c == C_SAMPLES ? A_SAMPLES : c == C_WEIGHTS ? A_WEIGHTS : A_EVENTS] = 1;
        if (c == C_STACK)
            prof_now(p)->count[A_SAMPLES]++, r->nopen = 0;
    } else if (c == C_STACK && p->in_target) {
        if (pb_grow((void **)&p->qstart, &p->cq, p->nq + 2, sizeof *p->qstart) < 0 ||
            pb_grow((void **)&p->qoff, &p->cqoff, p->nq + 1, sizeof *p->qoff) < 0)
            return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
        p->qstart[p->nq] = p->nqids;
        p->qoff[p->nq] = p->j.chunk_off + yajl_get_bytes_consumed(p->j.h);
    }
    return 1;
}

static int ss_start_map(void *ctx) { return ss_open(ctx, 1); }
static int ss_start_array(void *ctx) { return ss_open(ctx, 0); }

/* an event, complete: pass 1 checks it; a cursor hands it on */
static int event_pass1(ssp *p);
static int event_cursor(ssp *p);

static int ss_close(void *ctx)
{
    ssp *p = P(ctx);
    int c = pb_json_feed_pop(&p->j);
    if (c < 0)
        return 1;
    p->key = K_OTHER;
    if (c == C_FRAME && !p->target && !p->r->frames[p->r->nframes - 1].have_name)
        return speedscope_complain(p, PB_ERR_CORRUPT, "frame %zu has no \"name\"", p->r->nframes - 1);
    if (c == C_EVENT) {
        if ((p->ev_have & 7) != 7)
            return speedscope_complain(p, PB_ERR_CORRUPT, "an event lacks its %s",
                            !(p->ev_have & 1) ? "\"type\"" : !(p->ev_have & 2) ? "\"frame\"" : "\"at\"");
        if (!p->target)
            return event_pass1(p);
        if (p->in_target)
            return event_cursor(p);
    }
    if (c == C_STACK && p->target && p->in_target)
        p->nq++;
    if (c == C_PROFILE && !p->target) {
        ssr *r = p->r;
        ss_prof *pr = prof_now(p);
        size_t i = r->nprofs - 1;
        if (pr->type == P_NONE)
            return speedscope_complain(p, PB_ERR_CORRUPT, "profile %zu has no \"type\" (sampled or evented)", i);
        if (pr->unit == U_UNKNOWN)
            return speedscope_complain(p, PB_ERR_CORRUPT, "profile %zu has no \"unit\"", i);
        if (pr->type == P_SAMPLED && (!pr->have[A_SAMPLES] || !pr->have[A_WEIGHTS]))
            return speedscope_complain(p, PB_ERR_CORRUPT, "sampled profile %zu has no \"%s\" array", i,
                            pr->have[A_SAMPLES] ? "weights" : "samples");
        if (pr->type == P_SAMPLED && pr->count[A_SAMPLES] != pr->count[A_WEIGHTS])
            return speedscope_complain(p, PB_ERR_CORRUPT, "sampled profile %zu has %llu samples but %llu weights", i,
                            (unsigned long long)pr->count[A_SAMPLES], (unsigned long long)pr->count[A_WEIGHTS]);
        if (pr->type == P_EVENTED && !pr->have[A_EVENTS])
            return speedscope_complain(p, PB_ERR_CORRUPT, "evented profile %zu has no \"events\" array", i);
        if (pr->type == P_EVENTED && r->nopen)
            return speedscope_complain(p, PB_ERR_CORRUPT, "evented profile %zu ends with %zu frame%s still open (frame %u "
                            "last)", i, r->nopen, r->nopen == 1 ? "" : "s", r->open[r->nopen - 1]);
    }
    if (p->target && p->in_target && (c == C_SAMPLES || c == C_WEIGHTS || c == C_EVENTS) &&
        c == (p->target - 1 == A_SAMPLES ? C_SAMPLES : p->target - 1 == A_WEIGHTS ? C_WEIGHTS : C_EVENTS)) {
        p->j.done = 1;
        return 0; /* this cursor's array is read */
    }
    return 1;
}

/* a non-negative integer frame index, or -1 */
static int64_t index_of(double v) { return v >= 0 && v < 4294967295.0 && v == (double)(int64_t)v ? (int64_t)v : -1; }

static int ss_number(ssp *p, double v, int64_t iv, int integral)
{
    int c = speedscope_cur_ctx(p), k = p->key;
    ssr *r = p->r;
    if (!p->j.depth)
        return speedscope_complain(p, PB_ERR_CORRUPT, "a speedscope file is a JSON object; this is a number");
    if (c == C_STACK) {
        int64_t ix = integral ? (iv >= 0 && iv < (int64_t)UINT32_MAX ? iv : -1) : index_of(v);
        if (ix < 0)
            return speedscope_complain(p, PB_ERR_CORRUPT, "a sample's frame index is not a non-negative integer");
        if (!p->target) {
            if (++r->nopen > r->io.opt->max_stack_depth)
                return speedscope_complain(p, PB_ERR_LIMIT, "a sample's stack is deeper than max_stack_depth (%u)",
                                (unsigned)r->io.opt->max_stack_depth);
            return 1;
        }
        if (!p->in_target)
            return 1;
        if (pb_grow((void **)&p->qids, &p->cqids, p->nqids + 1, sizeof *p->qids) < 0)
            return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
        p->qids[p->nqids++] = (uint32_t)ix;
        return 1;
    }
    if (c == C_WEIGHTS) {
        if (!(v >= 0) || v > 9e18)
            return speedscope_complain(p, PB_ERR_CORRUPT, "a weight is %g: not a number of 0 or more", v);
        if (!p->target) {
            prof_now(p)->count[A_WEIGHTS]++;
            return 1;
        }
        if (!p->in_target)
            return 1;
        if (pb_grow((void **)&p->qw, &p->cqw, p->nqw + 1, sizeof *p->qw) < 0)
            return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
        p->qw[p->nqw++] = v;
        return 1;
    }
    if (c == C_EVENT) {
        if (k == K_FRAME)
            p->ev_frame = v, p->ev_have |= 2;
        else if (k == K_AT)
            p->ev_at = v, p->ev_have |= 4;
        return 1;
    }
    if (c == C_SAMPLES || c == C_EVENTS || c == C_FRAMES || c == C_PROFILES)
        return speedscope_complain(p, PB_ERR_CORRUPT, "a number where %s belongs (in %s)",
                        c == C_SAMPLES ? "an array of frame indices" : "an object", ctx_what(c));
    if (p->target)
        return 1;
    if (c == C_TOP && k == K_ACTIVE)
        r->active = v, r->have_active = 1;
    else if (c == C_TOP && (k == K_SCHEMA || k == K_NAME || k == K_EXPORTER))
        return speedscope_complain(p, PB_ERR_CORRUPT, "a number as the file's %s", k == K_SCHEMA ? "$schema" : k == K_NAME ? "name" : "exporter");
    else if (c == C_FRAME && (k == K_LINE || k == K_COL)) {
        int32_t x = v >= 0 && v < 2147483647.0 ? (int32_t)v : -1;
        if (k == K_LINE)
            r->frames[r->nframes - 1].line = x;
        else
            r->frames[r->nframes - 1].col = x;
    } else if (c == C_FRAME && (k == K_NAME || k == K_FILE)) {
        return speedscope_complain(p, PB_ERR_CORRUPT, "a frame's %s is a number, not a string", k == K_NAME ? "name" : "file");
    } else if (c == C_PROFILE && (k == K_START || k == K_END)) {
        ss_prof *pr = prof_now(p);
        if (!within(v, 9e15))
            return speedscope_complain(p, PB_ERR_CORRUPT, "a profile's %s is out of range", k == K_START ? "startValue" : "endValue");
        if (k == K_START)
            pr->start = v, pr->have_start = 1;
        else
            pr->end = v, pr->have_end = 1;
    } else if (c == C_PROFILE && (k == K_TYPE || k == K_NAME || k == K_UNIT)) {
        return speedscope_complain(p, PB_ERR_CORRUPT, "a number as a profile's %s", k == K_TYPE ? "type" : k == K_NAME ? "name" : "unit");
    }
    return 1;
}

static int ss_integer(void *ctx, long long v) { return ss_number(P(ctx), (double)v, (int64_t)v, 1); }
static int ss_double(void *ctx, double d) { return ss_number(P(ctx), d, 0, 0); }

static int ss_other(ssp *p, const char *what)
{
    int c = speedscope_cur_ctx(p), k = p->key;
    if (!p->j.depth)
        return speedscope_complain(p, PB_ERR_CORRUPT, "a speedscope file is a JSON object; this is %s", what);
    if (c == C_STACK || c == C_WEIGHTS)
        return speedscope_complain(p, PB_ERR_CORRUPT, "%s in %s, where numbers belong", what, ctx_what(c));
    if (c == C_SAMPLES || c == C_EVENTS || c == C_FRAMES || c == C_PROFILES)
        return speedscope_complain(p, PB_ERR_CORRUPT, "%s where %s belongs (in %s)", what,
                        c == C_SAMPLES ? "an array of frame indices" : "an object", ctx_what(c));
    if (c == C_EVENT && (k == K_FRAME || k == K_AT))
        return speedscope_complain(p, PB_ERR_CORRUPT, "an event's %s is %s, not a number", k == K_FRAME ? "frame" : "at", what);
    if (c == C_PROFILE && (k == K_START || k == K_END))
        return speedscope_complain(p, PB_ERR_CORRUPT, "a profile's %s is %s, not a number", k == K_START ? "startValue" : "endValue", what);
    if (c == C_TOP && (k == K_SHARED || k == K_PROFILES))
        return speedscope_complain(p, PB_ERR_CORRUPT, "the file's %s is %s", k == K_SHARED ? "shared" : "profiles", what);
    if (c == C_SHARED && k == K_FRAMES)
        return speedscope_complain(p, PB_ERR_CORRUPT, "shared.frames is %s, not an array", what);
    if (c == C_PROFILE && (k == K_SAMPLES || k == K_WEIGHTS || k == K_EVENTS))
        return speedscope_complain(p, PB_ERR_CORRUPT, "a profile's %s is %s, not an array",
                        k == K_SAMPLES ? "samples" : k == K_WEIGHTS ? "weights" : "events", what);
    return 1;
}

static int ss_null(void *ctx) { return ss_other(P(ctx), "null"); }
static int ss_boolean(void *ctx, int b) { (void)b; return ss_other(P(ctx), "a boolean"); }

/* a string kept in r->str: *at, *len */
static int keep(ssp *p, const unsigned char *s, size_t n, size_t *at, uint32_t *len)
{
    ssr *r = p->r;
    if (n > r->io.opt->max_record_size || n > UINT32_MAX - 1)
        return speedscope_complain(p, PB_ERR_LIMIT, "a string longer than max_record_size");
    if (pb_grow((void **)&r->str, &r->cstr, r->nstr + n + 1, 1) < 0)
        return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
    memcpy(r->str + r->nstr, s, n);
    r->str[r->nstr + n] = '\0';
    *at = r->nstr;
    *len = (uint32_t)n;
    r->nstr += n + 1;
    return 1;
}

static int ss_string(void *ctx, const unsigned char *s, size_t n)
{
    ssp *p = P(ctx);
    ssr *r = p->r;
    int c = speedscope_cur_ctx(p), k = p->key;
    if (c == C_EVENT && k == K_TYPE) {
        if (n != 1 || (s[0] != 'O' && s[0] != 'C'))
            return speedscope_complain(p, PB_ERR_CORRUPT, "an event's type is \"%.*s\", not \"O\" or \"C\"", n > 20 ? 20 : (int)n,
                            (const char *)s);
        p->ev_type = s[0];
        p->ev_have |= 1;
        return 1;
    }
    if (c != C_TOP && c != C_FRAME && c != C_PROFILE)
        return ss_other(p, "a string");
    if (c == C_PROFILE && (k == K_START || k == K_END || k == K_SAMPLES || k == K_WEIGHTS || k == K_EVENTS))
        return ss_other(p, "a string");
    if (c == C_TOP && (k == K_SHARED || k == K_PROFILES || k == K_ACTIVE))
        return ss_other(p, "a string");
    if (p->target)
        return 1;
    if (c == C_TOP) {
        if (k == K_SCHEMA)
            r->have_schema = 1;
        else if (k == K_NAME)
            return (r->have_top_name = 1) && keep(p, s, n, &r->top_name_at, &r->top_name_len);
        else if (k == K_EXPORTER)
            return (r->have_exporter = 1) && keep(p, s, n, &r->exporter_at, &r->exporter_len);
    } else if (c == C_FRAME) {
        ss_frame *f = &r->frames[r->nframes - 1];
        if (k == K_NAME)
            return (f->have_name = 1) && keep(p, s, n, &f->name_at, &f->name_len);
        if (k == K_FILE)
            return keep(p, s, n, &f->file_at, &f->file_len);
        if (k == K_LINE || k == K_COL)
            return speedscope_complain(p, PB_ERR_CORRUPT, "a frame's %s is a string, not a number", k == K_LINE ? "line" : "col");
    } else {
        ss_prof *pr = prof_now(p);
        if (k == K_TYPE) {
            pr->type = speedscope_key_is(s, n, "sampled") ? P_SAMPLED : speedscope_key_is(s, n, "evented") ? P_EVENTED : P_NONE;
            if (pr->type == P_NONE)
                return speedscope_complain(p, PB_ERR_UNSUPPORTED, "a profile of type \"%.*s\" (speedscope 1.25 knows sampled "
                                "and evented)", n > 40 ? 40 : (int)n, (const char *)s);
        } else if (k == K_UNIT) {
            if ((pr->unit = unit_of(s, n)) == U_UNKNOWN)
                return speedscope_complain(p, PB_ERR_UNSUPPORTED, "a profile's unit is \"%.*s\" (speedscope 1.25 knows none, "
                                "nanoseconds, microseconds, milliseconds, seconds, bytes)", n > 40 ? 40 : (int)n,
                                (const char *)s);
        } else if (k == K_NAME) {
            return (pr->have_name = 1) && keep(p, s, n, &pr->name_at, &pr->name_len);
        }
    }
    return 1;
}

static int event_pass1(ssp *p)
{
    ssr *r = p->r;
    ss_prof *pr = prof_now(p);
    int64_t f = index_of(p->ev_frame);
    if (f < 0)
        return speedscope_complain(p, PB_ERR_CORRUPT, "an event's frame is not a non-negative integer");
    if (!within(p->ev_at, 9e15))
        return speedscope_complain(p, PB_ERR_CORRUPT, "an event's at is out of range");
    if (pr->count[A_EVENTS] && p->ev_at < pr->last_at)
        return speedscope_complain(p, PB_ERR_CORRUPT, "an event's at (%.17g) is before the previous event's (%.17g)", p->ev_at,
                        pr->last_at);
    if (!pr->count[A_EVENTS])
        pr->first_at = p->ev_at;
    pr->last_at = p->ev_at;
    pr->count[A_EVENTS]++;
    if (p->ev_type == 'O') {
        if (r->nopen >= r->io.opt->max_stack_depth)
            return speedscope_complain(p, PB_ERR_LIMIT, "frames nest deeper than max_stack_depth (%u)",
                            (unsigned)r->io.opt->max_stack_depth);
        if (pb_grow((void **)&r->open, &r->copen, r->nopen + 1, sizeof *r->open) < 0)
            return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
        r->open[r->nopen++] = (uint32_t)f;
        if (r->nopen > r->max_nest)
            r->max_nest = r->nopen;
        return 1;
    }
    if (!r->nopen)
        return speedscope_complain(p, PB_ERR_CORRUPT, "a C event closes frame %lld, but no frame is open", (long long)f);
    if (r->open[r->nopen - 1] != (uint32_t)f)
        return speedscope_complain(p, PB_ERR_CORRUPT, "a C event closes frame %lld, but frame %u was opened last", (long long)f,
                        r->open[r->nopen - 1]);
    r->nopen--;
    return 1;
}

static const yajl_callbacks ss_callbacks = {
    ss_null, ss_boolean, ss_integer, ss_double, NULL, ss_string,
    ss_start_map, ss_map_key, ss_close, ss_start_array, ss_close
};

/* ---- feeding a parser ---------------------------------------------------- */
static pb_status speedscope_parser_new(ssr *r, ssp *p, int target, uint32_t tprof)
{
    memset(p, 0, sizeof *p);
    p->r = r;
    p->target = target;
    p->tprof = tprof;
    return pb_json_feed_open(&p->j, &ss_callbacks, p, target) < 0 ? speedscope_oom(r, 0) : PB_OK;
}

static void speedscope_parser_free(ssp *p)
{
    pb_json_feed_close(&p->j);
    PB_FREE_ALL(p->qids, p->qstart, p->qoff, p->qw);
    memset(p, 0, sizeof *p);
}

static pb_status speedscope_pass1(ssr *r)
{
    ssp *pp = &r->p1;
    pb_status st;
    if ((st = speedscope_parser_new(r, pp, 0, 0)) != PB_OK)
        return st;
    st = pb_json_feed_source(&pp->j, r->io.s, PB_JSON_BLOCK, r->io.err);
    speedscope_parser_free(pp);
    return st;
}

/* one block more for cursor c */
static pb_status speedscope_cursor_step(ssr *r, ssp *c)
{
    int unclosed = 0;
    pb_status st = pb_json_feed_cursor(&c->j, r->io.s, r->profs[c->tprof].at[c->target - 1], PB_JSON_BLOCK, 0, r->io.err,
                                       &unclosed);
    if (unclosed)
        st = pb_fail(r->io.err, PB_ERR_TRUNCATED, c->j.rd.pos, "a profile's array ends before it is closed (did the "
                     "file change?)");
    return st;
}

/* ---- frames to the sinks ---------------------------------------------------- */
static int is_synthetic(const char *s, size_t n)
{
    return n >= 2 && ((s[0] == '<' && s[n - 1] == '>') || (s[0] == '(' && s[n - 1] == ')') ||
                      (s[0] == '[' && s[n - 1] == ']'));
}

static pb_status sink_frame(ssr *r, uint32_t i, uint64_t off, uint32_t *id)
{
    ss_frame *f;
    pb_frame pf;
    const char *name;
    size_t n, k;
    int u8;
    pb_status st;
    if (i >= r->nframes)
        return pb_fail(r->io.err, PB_ERR_CORRUPT, off, "frame index %u, but shared.frames has %zu frames", i, r->nframes);
    f = &r->frames[i];
    if (f->sink_id != SS_NONE) {
        *id = f->sink_id;
        return PB_OK;
    }
    name = r->str + f->name_at;
    n = f->name_len;
    u8 = pb_utf8_valid(name, n);
    memset(&pf, 0, sizeof pf);
    pf.kind = PB_FRAME_SUB;
    pf.own = pf.name = pb_str_make(name, n, u8);
    pf.package = pb_str_make("", 0, 0);
    pf.file = pb_str_make(r->str + f->file_at, f->file_len, pb_utf8_valid(r->str + f->file_at, f->file_len));
    pf.line = pf.first_line = f->line > 0 ? f->line : -1;
    if (!n)
        pf.own = pf.name = pb_str_make("(anonymous)", 11, 0);
    if (!f->file_len && is_synthetic(name, n)) {
        pf.kind = PB_FRAME_SYNTHETIC;
        pf.line = pf.first_line = -1;
    } else {
        for (k = n; k >= 2; k--)
            if (name[k - 1] == ':' && name[k - 2] == ':') {
                if (k > 2 && k < n) {
                    pf.package = pb_str_make(name, k - 2, u8);
                    pf.name = pb_str_make(name + k, n - k, u8);
                }
                break;
            }
    }
    if ((st = r->out->frame(r->out, &pf, &f->sink_id)) != PB_OK)
        return st;
    *id = f->sink_id;
    return PB_OK;
}

/* a time or weight in the profile's unit, as ns (time units) or as written, rounded */
static int to_ticks(const ssr *r, double v, int64_t *out)
{
    double x = v * unit_factor(r->profs[r->cur].unit);
    if (!within(x, 4e18))
        return -1;
    *out = round_i64(x);
    return 0;
}

/* one sample of the current profile: stack ids innermost first already in r->ids */
static pb_status speedscope_emit(ssr *r, uint32_t depth, uint64_t w, uint64_t off)
{
    const uint32_t *ids = r->ids;
    int64_t t0 = r->last_ns - r->base_ns;
    uint64_t t = t0 < 0 ? 0 : (uint64_t)t0;
    pb_status st;
    (void)off;
    if (!w)
        return PB_OK;
    /* (the fold's ns, to a sink that asks as well: samples.h sample_ticks) */
    if (!r->io.ts_ns && r->out->sample_ticks && (st = r->out->sample_ticks(r->out, t + w - 1)) != PB_OK)
        return st;
    t = r->io.ts_ns ? t + w - 1 : t / 1000u;
    if ((st = pb_sample_noframe(r->out, &ids, &depth)) != PB_OK)
        return st;
    r->emitted++;
    return r->out->sample(r->out, r->cur, ids, depth, w, t);
}

/* pass 2 of an event (cursor): as samples (the stack open between events)
 * or as spans */
static int event_cursor(ssp *p)
{
    ssr *r = p->r;
    uint32_t f = (uint32_t)index_of(p->ev_frame);
    uint64_t off = p->j.chunk_off + yajl_get_bytes_consumed(p->j.h);
    int64_t t;
    pb_status st = PB_OK;
    if (to_ticks(r, p->ev_at, &t) < 0)
        return speedscope_complain(p, PB_ERR_CORRUPT, "an event's at does not fit 63 bits of ns");
    if (f >= r->nframes)
        return speedscope_complain(p, PB_ERR_CORRUPT, "an event names frame %u, but shared.frames has %zu frames", f, r->nframes);
    if (t < r->last_ns)
        t = r->last_ns; /* rounding cannot go back */
    if (r->out && r->nopen && t > r->last_ns) {
        uint32_t d = 0;
        size_t i;
        if (pb_grow((void **)&r->ids, &r->cids, r->nopen, sizeof *r->ids) < 0)
            return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
        for (i = r->nopen; i-- > 0;) {
            if ((st = sink_frame(r, r->open[i], off, &r->ids[d])) != PB_OK)
                return sink_fail(p, st);
            d++;
        }
        if ((st = speedscope_emit(r, d, (uint64_t)(t - r->last_ns), off)) != PB_OK)
            return sink_fail(p, st);
    }
    r->last_ns = t;
    if (p->ev_type == 'O') {
        if (pb_grow((void **)&r->open, &r->copen, r->nopen + 1, sizeof *r->open) < 0 ||
            pb_grow((void **)&r->open_at, &r->copen_at, r->nopen + 1, sizeof *r->open_at) < 0)
            return speedscope_complain(p, PB_ERR_LIMIT, "out of memory");
        r->open[r->nopen] = f;
        r->open_at[r->nopen++] = (uint64_t)(t - r->base_ns);
        return 1;
    }
    if (!r->nopen || r->open[r->nopen - 1] != f)
        return speedscope_complain(p, PB_ERR_CORRUPT, "a C event closes frame %u, which is not the frame open last (did the file "
                        "change?)", f);
    r->nopen--;
    if (r->out && r->out->span) {
        /* a timeline consumer (samples.h span()) also takes each O..C pair
         * as a span, in the samples' clock (ns after the earliest startValue) */
        uint32_t id;
        if ((st = sink_frame(r, f, off, &id)) != PB_OK ||
            (st = r->out->span(r->out, r->cur, id, r->open_at[r->nopen], (uint64_t)(t - r->base_ns))) != PB_OK)
            return sink_fail(p, st);
    }
    if (r->spans) {
        ss_frame *fr = &r->frames[f];
        if (fr->kind == SS_NONE) {
            const char *nm = fr->name_len ? r->str + fr->name_at : "(anonymous)";
            size_t nl = fr->name_len ? fr->name_len : 11;
            if ((st = pb_spans_kind(r->spans, pb_str_make(nm, nl, pb_utf8_valid(nm, nl)),
                                    pb_str_make(r->str + fr->file_at, fr->file_len, 1),
                                    fr->line > 0 ? (uint32_t)fr->line : 0, &fr->kind)) != PB_OK)
                return sink_fail(p, st);
        }
        if ((st = pb_spans_span(r->spans, fr->kind, r->open_at[r->nopen], (uint64_t)(t - r->base_ns), off)) != PB_OK)
            return sink_fail(p, st);
        /* nothing open: no later span can hold the ones before */
        if (!r->nopen && (st = pb_spans_seal(r->spans)) != PB_OK)
            return sink_fail(p, st);
    }
    return 1;
}

/* pairs of (stack, weight) from the heads of both queues */
static pb_status speedscope_pair_up(ssr *r, ssp *a, ssp *b)
{
    size_t m = a->nq - a->qhead < b->nqw - b->qhead ? a->nq - a->qhead : b->nqw - b->qhead, k;
    pb_status st;
    for (k = 0; k < m; k++) {
        size_t s = a->qhead + k, from = a->qstart[s], to = s + 1 < a->nq ? a->qstart[s + 1] : a->nqids, i;
        uint32_t d = 0;
        int64_t w;
        uint64_t off = a->qoff[s];
        if (to_ticks(r, b->qw[b->qhead + k], &w) < 0 || w > INT64_MAX - r->last_ns)
            return pb_fail(r->io.err, PB_ERR_CORRUPT, b->j.chunk_off, "the weights add up past 63 bits of ns");
        if (pb_grow((void **)&r->ids, &r->cids, to - from + 1, sizeof *r->ids) < 0)
            return speedscope_oom(r, off);
        for (i = to; i-- > from;)
            if ((st = sink_frame(r, a->qids[i], off, &r->ids[d++])) != PB_OK)
                return st;
        if ((st = speedscope_emit(r, d, (uint64_t)w, off)) != PB_OK)
            return st;
        r->last_ns += w;
    }
    a->qhead += m;
    b->qhead += m;
    if (a->qhead == a->nq)
        a->qhead = a->nq = a->nqids = 0;
    if (b->qhead == b->nqw)
        b->qhead = b->nqw = 0;
    return PB_OK;
}

static pb_status prof_start_ns(ssr *r, uint32_t i, int64_t *out)
{
    const ss_prof *pr = &r->profs[i];
    double v = pr->have_start ? pr->start : 0;
    if (pr->type == P_EVENTED && pr->count[A_EVENTS] && (!pr->have_start || pr->first_at < v))
        v = pr->first_at;
    v *= unit_factor(pr->unit);
    if (!within(v, 4e18))
        return pb_fail(r->io.err, PB_ERR_CORRUPT, pr->off, "profile %u's startValue does not fit 63 bits of ns", i);
    *out = round_i64(v);
    return PB_OK;
}

/* a sampled profile's pass 2 in lockstep (json_feed.h): samples, cursor c[0], and weights, c[1] */
static size_t ss_queued(void *ctx, int i)
{
    const ssp *c = &((ssr *)ctx)->c[i];
    return (i ? c->nqw : c->nq) - c->qhead;
}
static pb_status ss_step(void *ctx, int i) { return speedscope_cursor_step((ssr *)ctx, &((ssr *)ctx)->c[i]); }
static pb_status ss_pair(void *ctx) { return speedscope_pair_up((ssr *)ctx, &((ssr *)ctx)->c[0], &((ssr *)ctx)->c[1]); }

static pb_status pass2_profile(ssr *r, uint32_t i)
{
    ss_prof *pr = &r->profs[i];
    ssp *a = &r->c[0], *b = &r->c[1];
    pb_status st;
    r->cur = i;
    r->nopen = 0;
    if ((st = prof_start_ns(r, i, &r->last_ns)) != PB_OK)
        return st;
    if (pr->type == P_EVENTED) {
        if ((st = speedscope_parser_new(r, a, 1 + A_EVENTS, i)) != PB_OK)
            return st;
        while (st == PB_OK && !a->j.done)
            st = speedscope_cursor_step(r, a);
        speedscope_parser_free(a);
        if (st == PB_OK && r->nopen)
            st = pb_fail(r->io.err, PB_ERR_CORRUPT, pr->off, "evented profile %u ends with frames open (did the file "
                         "change?)", i);
        return st;
    }
    if ((st = speedscope_parser_new(r, a, 1 + A_SAMPLES, i)) != PB_OK || (st = speedscope_parser_new(r, b, 1 + A_WEIGHTS, i)) != PB_OK)
        return st;
    {
        pb_json_lockstep l = {r, {&a->j, &b->j}, ss_queued, ss_step, ss_pair};
        st = pb_json_lockstep_run(&l);
    }
    if (st == PB_OK && (a->nq != a->qhead || b->nqw != b->qhead))
        st = pb_fail(r->io.err, PB_ERR_CORRUPT, pr->off, "profile %u's samples and weights differ in number (did the "
                     "file change?)", i);
    speedscope_parser_free(a);
    speedscope_parser_free(b);
    return st;
}

/* ---- choosing profiles, attributes --------------------------------------- */
static int speedscope_name_is(const ssr *r, const ss_prof *pr, const char *s)
{
    return pr->name_len == strlen(s) && !memcmp(r->str + pr->name_at, s, pr->name_len);
}

static pb_status choose(ssr *r, int *all_evented)
{
    size_t i, nsel = 0, nk[U_BYTES + 1];
    char list[200];
    size_t len = 0;
    int kinds = 0;
    memset(nk, 0, sizeof nk);
    if (!r->have_shared || !r->have_frames)
        return pb_fail(r->io.err, PB_ERR_CORRUPT, 0, "no \"shared\": {\"frames\": [...]}: not a speedscope file");
    if (!r->have_profiles)
        return pb_fail(r->io.err, PB_ERR_CORRUPT, 0, "no \"profiles\" array: not a speedscope file");
    if (!r->io.s->mem && (!r->io.s->fp || pb_src_size(r->io.s) == UINT64_MAX))
        return pb_fail(r->io.err, PB_ERR_UNSUPPORTED, 0, "a speedscope file is read in two passes and this input cannot "
                       "be read again (a pipe?): save it to a file first");
    *all_evented = 1;
    for (i = 0; i < r->nprofs; i++) {
        ss_prof *pr = &r->profs[i];
        if (r->io.opt->have_thread) {
            if (r->io.opt->thread_name ? !speedscope_name_is(r, pr, r->io.opt->thread_name) : r->io.opt->thread_id != i)
                continue;
        }
        pr->selected = 1;
        nsel++;
        if (!nk[unit_kind(pr->unit)]++)
            kinds++;
        if (pr->type != P_EVENTED)
            *all_evented = 0;
    }
    if (r->io.opt->have_thread && !nsel) {
        for (i = 0; i < r->nprofs && len + 60 < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%zu \"%.30s\"", i ? ", " : "", i,
                                    r->str + r->profs[i].name_at);
        if (r->io.opt->thread_name)
            return pb_fail_nooff(r->io.err, PB_ERR_UNSUPPORTED, "no profile named \"%.100s\" in this file (profiles: %s)",
                           r->io.opt->thread_name, r->nprofs ? list : "none");
        return pb_fail_nooff(r->io.err, PB_ERR_UNSUPPORTED, "no profile %llu in this file (profiles: %s)",
                       (unsigned long long)r->io.opt->thread_id, r->nprofs ? list : "none");
    }
    if (kinds > 1) {
        for (i = 0; i < r->nprofs && len + 60 < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%zu %s", i ? ", " : "", i,
                                    unit_name(r->profs[i].unit));
        return pb_fail(r->io.err, PB_ERR_UNSUPPORTED, 0, "the profiles are in units that do not add up (%s): pick "
                       "profiles of one kind with --thread", list);
    }
    r->unit_kind = U_NONE;
    for (i = 0; i < r->nprofs; i++)
        if (r->profs[i].selected)
            r->unit_kind = unit_kind(r->profs[i].unit);
    if (!nsel)
        *all_evented = 0;
    /* one clock for every profile: the earliest start */
    r->base_ns = INT64_MAX;
    for (i = 0; i < r->nprofs; i++) {
        int64_t s;
        pb_status st;
        if (!r->profs[i].selected)
            continue;
        if ((st = prof_start_ns(r, (uint32_t)i, &s)) != PB_OK)
            return st;
        if (s < r->base_ns)
            r->base_ns = s;
    }
    if (r->base_ns == INT64_MAX)
        r->base_ns = 0;
    for (i = 0; i < r->nframes; i++)
        if (r->frames[i].col >= 0)
            r->col_frames++;
    return PB_OK;
}

/* the attributes, as (key, value) through fn */
static pb_status attributes(ssr *r, pb_status (*fn)(void *, const char *, pb_str), void *ctx)
{
    pb_status st;
    char buf[64];
    size_t i;
    if ((st = fn(ctx, "source_format", pb_str_c("speedscope"))) != PB_OK)
        return st;
    /* ATTRIBUTE values are one line each */
    if (r->have_exporter)
        pb_controls_to_spaces(r->str + r->exporter_at, r->exporter_len);
    if (r->have_top_name)
        pb_controls_to_spaces(r->str + r->top_name_at, r->top_name_len);
    if (r->have_exporter && (st = fn(ctx, "speedscope_exporter", pb_str_make(r->str + r->exporter_at,
                                                                              r->exporter_len, 1))) != PB_OK)
        return st;
    if (r->have_top_name && (st = fn(ctx, "application", pb_str_make(r->str + r->top_name_at, r->top_name_len, 1))) !=
        PB_OK)
        return st;
    if (!r->have_top_name && r->io.err->file[0] && (st = fn(ctx, "application", pb_str_c(r->io.err->file))) != PB_OK)
        return st;
    if (r->have_active) {
        snprintf(buf, sizeof buf, "%.17g", r->active);
        if ((st = fn(ctx, "speedscope_active_profile", pb_str_c(buf))) != PB_OK)
            return st;
    }
    snprintf(buf, sizeof buf, "%zu", r->nprofs);
    if ((st = fn(ctx, "speedscope_profiles", pb_str_c(buf))) != PB_OK)
        return st;
    if (r->unit_kind == U_NS && (st = fn(ctx, "sample_weight_unit", pb_str_c("ns"))) != PB_OK)
        return st;
    if ((st = fn(ctx, "speedscope_unit", pb_str_c(r->unit_kind == U_NS ? "ns" : unit_name(r->unit_kind)))) != PB_OK)
        return st;
    if (r->col_frames) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->col_frames);
        if ((st = fn(ctx, "speedscope_column_frames", pb_str_c(buf))) != PB_OK)
            return st;
    }
    for (i = 0; i < r->nprofs; i++) {
        const ss_prof *pr = &r->profs[i];
        char key[64];
        if (!pr->selected)
            continue;
        snprintf(key, sizeof key, "thread_id_%zu", i + 1);
        snprintf(buf, sizeof buf, "%zu", i);
        if ((st = fn(ctx, key, pb_str_c(buf))) != PB_OK)
            return st;
        snprintf(key, sizeof key, "thread_%zu_name", i + 1);
        if ((st = fn(ctx, key, pb_str_make(r->str + pr->name_at, pr->name_len, 1))) != PB_OK)
            return st;
        snprintf(key, sizeof key, "thread_%zu_%s", i + 1, pr->type == P_EVENTED ? "events" : "samples");
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)pr->count[pr->type == P_EVENTED ? A_EVENTS : A_SAMPLES]);
        if ((st = fn(ctx, key, pb_str_c(buf))) != PB_OK)
            return st;
        snprintf(key, sizeof key, "thread_%zu_unit", i + 1);
        if ((st = fn(ctx, key, pb_str_c(unit_name(pr->unit)))) != PB_OK)
            return st;
    }
    return PB_OK;
}

static pb_status to_sample_sink(void *ctx, const char *key, pb_str v)
{
    pb_sample_sink *o = (pb_sample_sink *)ctx;
    return o->attribute(o, key, v);
}

/* a thread's label: its profile's name (printable ASCII, cut), else its index */
static void label_of(const ssr *r, uint32_t i, char *buf, size_t cap)
{
    const ss_prof *pr = &r->profs[i];
    size_t k, n = 0;
    for (k = 0; k < pr->name_len && n + 1 < cap; k++) {
        unsigned char c = (unsigned char)r->str[pr->name_at + k];
        buf[n++] = c >= 0x20 && c != 0x7f ? (char)c : '_';
    }
    buf[n] = '\0';
    if (!n)
        snprintf(buf, cap, "%u", i);
}

/* pb_fold_decoder.prepare: the first pass, which tells which fold makes
 * the chunks: every chosen profile evented -> spans */
static pb_status ss_prepare(void *state, pb_fold_config *cfg)
{
    ssr *r = (ssr *)state;
    pb_status st;
    int all_evented = 0;
    if ((st = speedscope_pass1(r)) != PB_OK || (st = choose(r, &all_evented)) != PB_OK)
        return st;
    /* sampled (or mixed), or deeper than the span fold nests: the sample fold */
    if (!all_evented || r->max_nest > PB_SPANS_MAX_DEPTH)
        cfg->run_spans = NULL;
    return PB_OK;
}

/* one profile's samples (a thread keyed by its index) */
static pb_status thread_out(ssr *r, uint32_t i)
{
    char label[128];
    label_of(r, i, label, sizeof label);
    return r->out->thread(r->out, i, i + 1, 0, label);
}

static pb_status speedscope_decode(void *state, pb_sample_sink *out)
{
    ssr *r = (ssr *)state;
    pb_status st;
    uint32_t i;
    r->out = out;
    if ((st = attributes(r, to_sample_sink, out)) != PB_OK)
        return st;
    for (i = 0; i < r->nprofs; i++) {
        if (!r->profs[i].selected)
            continue;
        if ((st = thread_out(r, i)) != PB_OK || (st = pass2_profile(r, i)) != PB_OK)
            return st;
    }
    return out->finish(out);
}

static void ss_free(void *state)
{
    ssr *r = (ssr *)state;
    speedscope_parser_free(&r->p1);
    speedscope_parser_free(&r->c[0]);
    speedscope_parser_free(&r->c[1]);
    PB_FREE_ALL(r->frames, r->profs, r->str, r->open, r->open_at, r->ids);
    memset(r, 0, sizeof *r);
}

static void ss_init(void *state, pb_source *src, const pb_options *opt, pb_sink *warn_sink, pb_error *err)
{
    pb_json_io_init(&((ssr *)state)->io, src, opt, warn_sink, err);
}

/* ---- the evented chunk path: spans ------------------------------------------ */
static pb_status to_chunk_sink(void *ctx, const char *key, pb_str v)
{
    pb_sink *s = (pb_sink *)ctx;
    pb_chunk c;
    memset(&c, 0, sizeof c);
    c.tag = PB_T_ATTRIBUTE;
    c.s[0] = pb_str_c(key);
    c.s[1] = v;
    return pb_emit(s, &c) ? PB_ERR_ABORT : PB_OK;
}

/* pb_fold_config.run_spans (every chosen profile evented): the
 * span fold on sink; with out (convert --report's loss counter beside a
 * stack output) the samples go to out too, in the same pass */
static pb_status spans_run(void *state, pb_sink *sink, pb_sample_sink *out)
{
    ssr *r = (ssr *)state;
    pb_chunk c;
    pb_status st;
    uint32_t i;
    r->out = out;
    memset(&c, 0, sizeof c);
    pb_chunk_version(&c, 5, 0);
    if (pb_emit(sink, &c))
        return PB_ERR_ABORT;
    pb_chunk_option(&c, pb_str_c("calls"), pb_str_c("1"));
    if (pb_emit(sink, &c) || pb_emit_attribute(sink, "ticks_per_sec", "1000000000") ||
        pb_emit_attribute(sink, "cumulative_overhead_ticks", "0"))
        return PB_ERR_ABORT;
    if ((st = attributes(r, to_chunk_sink, sink)) != PB_OK || (out && (st = attributes(r, to_sample_sink, out)) != PB_OK))
        return st;
    if (r->io.s->fp) {
        struct stat sb;
        if (fstat(fileno(r->io.s->fp), &sb) == 0 && sb.st_mtime > 0 && pb_emit_attribute_u64(sink, "basetime",
                                                                                          (uint64_t)sb.st_mtime))
            return PB_ERR_ABORT;
    }
    if (!(r->spans = pb_spans_new(sink, r->io.opt, r->io.err)))
        return speedscope_oom(r, 0);
    for (i = 0; i < r->nprofs && st == PB_OK; i++) {
        pb_spans_thread th;
        ss_prof *pr = &r->profs[i];
        char pkg[32];
        int64_t s = 0, e;
        if (!pr->selected)
            continue;
        memset(&th, 0, sizeof th);
        th.tid = i + 1; /* as pid: info's thread_<pid>_* facts */
        th.pid = i + 1;
        r->cur = i;
        if ((st = prof_start_ns(r, i, &s)) != PB_OK)
            break;
        e = s;
        if (pr->count[A_EVENTS] && to_ticks(r, pr->last_at, &e) < 0)
            e = s;
        if (pr->have_end) {
            int64_t x;
            if (to_ticks(r, pr->end, &x) == 0 && x > e)
                e = x;
        }
        th.start_time = (double)(s - r->base_ns) / 1e9;
        th.end_time = (double)(e - r->base_ns) / 1e9;
        snprintf(pkg, sizeof pkg, "thread_%u", i);
        th.package = r->nprofs == 1 ? "main" : pkg;
        if ((st = pb_spans_thread_begin(r->spans, &th)) != PB_OK || (out && (st = thread_out(r, i)) != PB_OK) ||
            (st = pass2_profile(r, i)) != PB_OK)
            break;
        st = pb_spans_thread_end(r->spans);
    }
    pb_spans_free(r->spans);
    r->spans = NULL;
    if (st == PB_OK && out)
        st = out->finish(out);
    return st;
}

const pb_fold_decoder pb_speedscope_decoder = {sizeof(ssr), ss_init, ss_prepare, speedscope_decode, ss_free,
    {.source_format = "speedscope", .ticks_per_sec = 1000000000u, .ticks_per_weight = 1,
     .fid_flags = pb_fid_flags_absolute, .sampled_spans = 1, .run_spans = spans_run}};

#endif /* PB_HAVE_YAJL */
