/* read_perf.c - Linux perf's `perf script` text: the samples of a
 * perf.data as `perf script` prints them by default or with -F field lists,
 * the text stackcollapse-perf.pl (FlameGraph), inferno, the speedscope app and the
 * Firefox Profiler read.
 *
 * A sample is a header line, then (perf record -g, --call-graph dwarf) one
 * frame per line, innermost first, then a blank line:
 *     rec 15388/15388 [001]   370.697407:     250000 cpu-clock:
 *     	ffffffff815e4b46 do_fault+0x1a6 ([kernel.kallsyms])
 *     	            ac50 _dl_new_object+0x0 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)
 *     	               0 [unknown] ([unknown])
 *     <blank>
 * Header fields, each optional as -F allows, in perf's order: comm (may
 * hold spaces; right-aligned in 16 columns when there is no call chain),
 * "tid" or "pid/tid", "[cpu]", "secs.frac:" (µs, or ns with --ns), the
 * period, "event:" (cpu-clock, cycles:u, sched:sched_switch, ...), then
 * what perf prints on the same line (without call chains the sample's one
 * frame "ip sym+off (dso)"; tracepoint fields).  Without call chains a
 * sample is that one line.  Frame lines: white space, the address in hex,
 * then "sym+0xoff (dso)" (sym, +off and (dso) each optional); --inline
 * frames are frames whose dso reads "(inlined)".  "# ..." lines (perf
 * script --header's "# ========" block) are comments; its "# event : name
 * = X" lines name the file's events, "# cmdline :" the command.
 *
 * Names (Formats.pod, "perf script"), as stackcollapse-perf.pl spells them
 * with its defaults, so our collapsed output equals its --tid output line
 * for line: "+0x.." dropped; a symbol starting with "(" is no frame;
 * "(anonymous namespace)::f" is one (stackcollapse-perf.pl drops it);
 * "a->b" (older perf's inline chains) two frames, the second "b_[i]";
 * "[unknown]" is "[<dso's file name>]" when the dso is known, else
 * "[unknown]"; ';' becomes ':'; from the first "(" on (argument lists),
 * except "(anonymous namespace)" and Go's "pkg.(*T).M", the name is cut;
 * quotes are dropped; under a comm starting "java", "Lpkg/Class;..." loses
 * its L.  A frame line with no symbol is "[unknown]" (stackcollapse drops
 * it).  For nytprof.out a name's package is what comes before its last
 * "::" outside <>, () and [] (C++, Rust: geo::Box<double>::fill ->
 * package geo::Box<double>); "[...]" names are synthetic frames.
 *
 * Events: a file may hold several (perf record -e a,b).  The samples of
 * one are read: --sample-type NAME (pb_options sample_type; the event as
 * printed, "cpu-clock", "cycles:u"), else the first the "# event :" lines
 * declare (perf record -e's first), else the first one met, as
 * stackcollapse-perf.pl does.  ATTRIBUTE sample_types
 * lists every event of the file, sample_type the one read.
 *
 * Weights: the period as printed (what stackcollapse-perf.pl and perf report
 * sum): ns for cpu-clock and task-clock (ATTRIBUTE sample_weight_unit ns,
 * clock cpu), a count of the event otherwise (cycles, instructions, page
 * faults: one count is shown as 1 ns, as a profile.proto's counts are); 1 per sample
 * when -F printed no period (shown as 1 µs: perf_prepare()).  A period of 0 carries nothing.
 *
 * Threads: each distinct (comm, pid, tid) is a thread, labelled as
 * stackcollapse-perf.pl --tid labels it, "comm-pid/tid" (spaces in comm
 * as '_', pid "?" when only the tid is printed, the comm alone when neither
 * is); keys 0.. in order of first sample, pid = key + 1.  --thread N picks
 * the tid N, --thread NAME a label or a comm.  Times: the sample's time in
 * µs to a stack sink, in ns (the fold's ticks) to the fold.
 *
 * Memory: one line (max_record_size), one sample's frame ids
 * (max_stack_depth), one entry per unique (symbol, dso) and per name
 * (max_frames), per thread and per event (max_strings).  Never the samples.
 *
 * Names here: pr = this reader's state ("perf reader"; another reader has a pr of its own), ph = a
 * sample's header line.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fold_samples.h"
#include "model.h"
#include "read_perf.h"
#include "reader.h"

typedef struct {
    const char *comm;
    size_t comm_len;
    int have_pid, have_tid, have_time, have_period;
    uint64_t pid, tid, period, time_ns;
    const char *event;
    size_t event_len;
    const char *rest; /* what follows the event on the line (trimmed) */
    size_t rest_len;
} ph;

typedef struct {
    pb_source *s;
    pb_options opt;
    pb_error *err;
    pb_sample_sink *out;
    int ts_ns;          /* timestamps to the sink in ns (the fold's ticks), else µs */
    int fold_us;        /* the fold's ticks are µs (prepare: no period) */
    pb_strtab raw;      /* "symbol\1dso\1java" as printed (offset dropped) */
    uint32_t *raw_first, *raw_count; /* per raw entry: its ids in pool */
    size_t craw_first, craw_count;
    uint32_t *pool;     /* sink ids of the raw entries' frames */
    size_t npool, cpool;
    pb_strtab names;    /* the frames' names -> sink ids */
    uint32_t *name_sink;
    size_t cname_sink;
    pb_strtab threads;
    unsigned char *selected;
    size_t csel;
    int any_selected;
    pb_strtab events;   /* every event met or declared, in order */
    int chosen;         /* its index of the event read (-1: none yet) */
    int announced;      /* the weight's attributes went out */
    int period_mode;    /* -1 undecided, 0 no period printed, 1 a period */
    /* the sample being read */
    int in_sample, take, chain; /* chain: frame lines may follow */
    uint64_t key, weight, ts, ticks; /* ticks: ts in the fold's ticks (sample_ticks) */
    int java;
    uint32_t *ids;
    size_t cids;
    uint32_t depth;
    char *buf, *key_buf;
    size_t cbuf, ckey_buf;
    uint64_t lineno, line_off, samples, taken, other; /* other: samples of events not read */
} pr;

#define P_OOM(r) pb_fail((r)->err, PB_ERR_LIMIT, pb_src_offset((r)->s), "out of memory")

static int perf_is_digit(int c) { return c >= '0' && c <= '9'; }
static int perf_is_space(int c) { return c == ' ' || c == '\t'; }
static int is_hex(int c) { return perf_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* ---- header lines -------------------------------------------------------- */
/* the token at p[*i..n) after white space: [*a, *b); 0 at the end */
static int token(const char *p, size_t n, size_t *i, size_t *a, size_t *b)
{
    size_t k = *i;
    while (k < n && perf_is_space((unsigned char)p[k]))
        k++;
    if (k == n)
        return 0;
    *a = k;
    while (k < n && !perf_is_space((unsigned char)p[k]))
        k++;
    *b = k;
    *i = k;
    return 1;
}

static int all_digits(const char *p, size_t n)
{
    size_t i;
    if (n == 0 || n > 19)
        return 0;
    for (i = 0; i < n; i++)
        if (!perf_is_digit((unsigned char)p[i]))
            return 0;
    return 1;
}

static uint64_t perf_num(const char *p, size_t n)
{
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(p[i] - '0');
    return v;
}

/* "secs.frac:" (or "secs:") as ns; 0 when t[0..n) is not one */
static int time_token(const char *t, size_t n, uint64_t *ns)
{
    const char *dot;
    size_t il, fl, i;
    uint64_t frac = 0;
    if (n < 2 || t[n - 1] != ':')
        return 0;
    n--;
    dot = (const char *)memchr(t, '.', n);
    il = dot ? (size_t)(dot - t) : n;
    fl = dot ? n - il - 1 : 0;
    if (!all_digits(t, il) || il > 10 || (dot && (fl == 0 || fl > 9 || !all_digits(dot + 1, fl))))
        return 0;
    for (i = 0; i < 9; i++)
        frac = frac * 10 + (uint64_t)(i < fl ? dot[1 + i] - '0' : 0);
    *ns = perf_num(t, il) * 1000000000u + frac;
    return 1;
}

/* the fields after the comm, from p[i..n): 1 when they are a header's */
static int header_tail(const char *p, size_t n, size_t i, ph *h)
{
    size_t a, b, k = i;
    int any = 0;
    const char *slash;
    h->have_pid = h->have_tid = h->have_time = h->have_period = 0;
    h->event = h->rest = NULL;
    h->event_len = h->rest_len = 0;
    if (!token(p, n, &k, &a, &b))
        return 0;
    /* tid, or pid/tid */
    slash = (const char *)memchr(p + a, '/', b - a);
    if (slash ? all_digits(p + a, (size_t)(slash - (p + a))) && all_digits(slash + 1, (size_t)(p + b - slash - 1))
              : all_digits(p + a, b - a)) {
        if (slash) {
            h->have_pid = 1;
            h->pid = perf_num(p + a, (size_t)(slash - (p + a)));
            h->tid = perf_num(slash + 1, (size_t)(p + b - slash - 1));
        } else {
            h->tid = perf_num(p + a, b - a);
        }
        h->have_tid = any = 1;
        if (!token(p, n, &k, &a, &b))
            return 1;
    }
    /* [cpu] */
    if (b - a >= 3 && p[a] == '[' && p[b - 1] == ']' && all_digits(p + a + 1, b - a - 2)) {
        any = 1;
        if (!token(p, n, &k, &a, &b))
            return 1;
    }
    if (time_token(p + a, b - a, &h->time_ns)) {
        h->have_time = any = 1;
        if (!token(p, n, &k, &a, &b))
            return 1;
    }
    if (all_digits(p + a, b - a)) {
        h->have_period = any = 1;
        h->period = perf_num(p + a, b - a);
        if (!token(p, n, &k, &a, &b))
            return 1;
    }
    if (b - a >= 2 && p[b - 1] == ':') { /* the event */
        uint64_t ignore;
        if (time_token(p + a, b - a, &ignore))
            return 0;
        h->event = p + a;
        h->event_len = b - a - 1;
        any = 1;
    } else if (!h->have_time) {
        return 0; /* something else after the fields: not a header */
    } else {
        k = a; /* what follows the time (no event printed) */
    }
    while (k < n && perf_is_space((unsigned char)p[k]))
        k++;
    h->rest = p + k;
    h->rest_len = n - k;
    while (h->rest_len && perf_is_space((unsigned char)h->rest[h->rest_len - 1]))
        h->rest_len--;
    return any;
}

/* 1 when p[0..n) (no LF) is a sample's header line, fields in *h.  The comm
 * is what comes before the first place the fields fit (at most 64 bytes:
 * the kernel's comm is 16); none when the line starts with them. */
static int parse_header(const char *p, size_t n, ph *h)
{
    size_t i = 0, e;
    while (i < n && perf_is_space((unsigned char)p[i]))
        i++;
    if (i == n)
        return 0;
    if (header_tail(p, n, i, h)) {
        h->comm = p + i;
        h->comm_len = 0;
        return 1;
    }
    for (e = i; e < n && e - i <= 64; e++) {
        if (!perf_is_space((unsigned char)p[e]) || e == i || perf_is_space((unsigned char)p[e - 1]))
            continue;
        if (header_tail(p, n, e, h)) {
            h->comm = p + i;
            h->comm_len = e - i;
            return 1;
        }
    }
    return 0;
}

/* ---- frame lines ---------------------------------------------------------- */
typedef struct {
    const char *sym, *dso;
    size_t sym_len, dso_len;
    int have_dso;
} pf_line;

/* "addr sym+off (dso)" at p[0..n) (leading blanks skipped): 1 and the
 * symbol (its +0x offset dropped) and dso in *f; 0 when it is not one */
static int parse_frame(const char *p, size_t n, pf_line *f)
{
    size_t i = 0, a, q, k;
    while (i < n && perf_is_space((unsigned char)p[i]))
        i++;
    a = i;
    while (i < n && is_hex((unsigned char)p[i]))
        i++;
    if (i == a || (i < n && !perf_is_space((unsigned char)p[i])))
        return 0;
    while (i < n && perf_is_space((unsigned char)p[i]))
        i++;
    while (n > i && perf_is_space((unsigned char)p[n - 1]))
        n--;
    f->have_dso = 0;
    f->dso = "";
    f->dso_len = 0;
    /* stackcollapse-perf.pl's /(.+) \((.*)\)/: the last " (" with a ")"
     * after it, the dso up to the last ")" */
    for (q = n; q > i && p[q - 1] != ')'; q--)
        ;
    if (q > i) {
        q--;
        for (k = q; k >= i + 2; k--)
            if (p[k - 2] == ' ' && p[k - 1] == '(' && k - 2 > i)
                break;
        if (k >= i + 2 && k - 2 > i) {
            f->have_dso = 1;
            f->dso = p + k;
            f->dso_len = q - k;
            n = k - 2;
        }
    }
    f->sym = p + i;
    f->sym_len = n - i;
    /* "+0x<hex>" at the end */
    for (k = f->sym_len; k > 0 && (perf_is_digit((unsigned char)f->sym[k - 1]) || (f->sym[k - 1] >= 'a' && f->sym[k - 1] <= 'f'));
         k--)
        ;
    if (k < f->sym_len && k >= 3 && f->sym[k - 1] == 'x' && f->sym[k - 2] == '0' && f->sym[k - 3] == '+')
        f->sym_len = k - 3;
    return 1;
}

static pb_status perf_bad(pr *r, size_t at, const char *what)
{
    return pb_fail(r->err, PB_ERR_CORRUPT, r->line_off + at, "line %llu %s", (unsigned long long)r->lineno, what);
}

/* ---- names ------------------------------------------------------------------ */
/* one piece of a symbol as stackcollapse-perf.pl names it, into r->buf at
 * *w (room: the caller's) */
static void tidy_piece(pr *r, const char *s, size_t n, const pf_line *f, int inlined, size_t *w)
{
    char *o = r->buf + *w;
    size_t k = 0, i, cut;
    int go = 0;
    if (n == 9 && memcmp(s, "[unknown]", 9) == 0) {
        o[k++] = '[';
        if (f->have_dso && !(f->dso_len == 9 && memcmp(f->dso, "[unknown]", 9) == 0)) {
            const char *b = f->dso;
            size_t bl = f->dso_len;
            for (i = 0; i < f->dso_len; i++)
                if (f->dso[i] == '/') {
                    b = f->dso + i + 1;
                    bl = f->dso_len - i - 1;
                }
            memcpy(o + k, b, bl);
            k += bl;
        } else {
            memcpy(o + k, "unknown", 7);
            k += 7;
        }
        o[k++] = ']';
        s = o;
        n = k;
        k = 0;
    }
    /* Go's pkg.(*T).M keeps its parentheses: ".(" and later ")." */
    for (i = 0; i + 1 < n && !go; i++)
        if (s[i] == '.' && s[i + 1] == '(') {
            size_t j;
            for (j = i + 2; j + 1 < n; j++)
                if (s[j] == ')' && s[j + 1] == '.') {
                    go = 1;
                    break;
                }
        }
    cut = n;
    if (!go)
        for (i = 0; i < n; i++)
            if (s[i] == '(' && !(n - i - 1 >= 20 && memcmp(s + i + 1, "anonymous namespace)", 20) == 0)) {
                cut = i;
                break;
            }
    for (i = 0; i < cut; i++) { /* in place is safe: k <= i */
        char c = s[i];
        if (c == '"' || c == '\'')
            continue;
        o[k++] = c == ';' ? ':' : c;
    }
    if (r->java && memchr(o, '/', k) && k && o[0] == 'L') {
        memmove(o, o + 1, k - 1);
        k--;
    }
    if (inlined) {
        int has = 0;
        for (i = 0; i + 4 <= k && !has; i++)
            has = memcmp(o + i, "_[i]", 4) == 0;
        if (!has) {
            memcpy(o + k, "_[i]", 4);
            k += 4;
        }
    }
    *w += k;
}

/* a name's package: what comes before its last "::" outside <>, () and [] */
static size_t package_len(const char *t, size_t n)
{
    size_t i, last = 0;
    int depth = 0;
    for (i = 0; i + 1 < n; i++) {
        char c = t[i];
        if (c == '<' || c == '(' || c == '[')
            depth++;
        else if ((c == '>' || c == ')' || c == ']') && depth > 0)
            depth--;
        else if (c == ':' && t[i + 1] == ':' && depth == 0 && i > 0 && i + 2 < n) {
            last = i;
            i++;
        }
    }
    return last;
}

/* the sink id of the frame named t[0..n) */
static pb_status perf_name_id(pr *r, const char *t, size_t n, uint32_t *id)
{
    uint32_t e;
    int found, u8;
    size_t pk;
    pb_frame pf;
    pb_status st;
    if (n == 0) {
        t = "[unknown]";
        n = 9;
    }
    if ((found = pb_strtab_intern(&r->names, t, n, &e)) < 0)
        return P_OOM(r);
    if (found) {
        *id = r->name_sink[e];
        return PB_OK;
    }
    if (e >= r->opt.max_frames)
        return pb_fail(r->err, PB_ERR_LIMIT, r->line_off, "more than %u unique frames (max_frames)",
                       (unsigned)r->opt.max_frames);
    if (pb_grow((void **)&r->name_sink, &r->cname_sink, (size_t)e + 1, sizeof *r->name_sink) < 0)
        return P_OOM(r);
    t = pb_strtab_ptr(&r->names, e); /* stable while the sink reads it */
    u8 = pb_utf8_valid(t, n);
    memset(&pf, 0, sizeof pf);
    pf.kind = PB_FRAME_SUB;
    pf.first_line = -1;
    pf.own = pb_str_make(t, n, u8);
    pf.name = pf.own;
    if (n >= 2 && t[0] == '[' && t[n - 1] == ']') {
        pf.kind = PB_FRAME_SYNTHETIC;
    } else if ((pk = package_len(t, n)) > 0) {
        pf.package = pb_str_make(t, pk, u8);
        pf.name = pb_str_make(t + pk + 2, n - pk - 2, u8);
    }
    if ((st = r->out->frame(r->out, &pf, id)) != PB_OK)
        return st;
    r->name_sink[e] = *id;
    return PB_OK;
}

static pb_status push_id(pr *r, uint32_t id, size_t at)
{
    if (r->depth >= r->opt.max_stack_depth)
        return pb_fail(r->err, PB_ERR_LIMIT, r->line_off + at, "a sample has more than %u frames (max_stack_depth)",
                       (unsigned)r->opt.max_stack_depth);
    if (pb_grow((void **)&r->ids, &r->cids, (size_t)r->depth + 1, sizeof *r->ids) < 0)
        return P_OOM(r);
    r->ids[r->depth++] = id;
    return PB_OK;
}

/* a frame line's frames onto the sample (innermost first) */
static pb_status frame_line(pr *r, const pf_line *f, size_t at)
{
    uint32_t e, i, id;
    int found;
    size_t kl = f->sym_len + f->dso_len + 4;
    pb_status st;
    if (pb_grow((void **)&r->key_buf, &r->ckey_buf, kl, 1) < 0)
        return P_OOM(r);
    memcpy(r->key_buf, f->sym, f->sym_len);
    r->key_buf[f->sym_len] = '\1';
    memcpy(r->key_buf + f->sym_len + 1, f->dso, f->dso_len);
    r->key_buf[f->sym_len + 1 + f->dso_len] = '\1';
    r->key_buf[f->sym_len + 2 + f->dso_len] = (char)('0' + 2 * r->java + f->have_dso);
    if ((found = pb_strtab_intern(&r->raw, r->key_buf, kl - 1, &e)) < 0)
        return P_OOM(r);
    if (!found) {
        const char *s = f->sym;
        size_t n = f->sym_len, w = 0, start, pieces = 0, k;
        if (e >= r->opt.max_frames)
            return pb_fail(r->err, PB_ERR_LIMIT, r->line_off + at, "more than %u unique frames (max_frames)",
                           (unsigned)r->opt.max_frames);
        if (pb_grow((void **)&r->raw_first, &r->craw_first, (size_t)e + 1, sizeof *r->raw_first) < 0 ||
            pb_grow((void **)&r->raw_count, &r->craw_count, (size_t)e + 1, sizeof *r->raw_count) < 0 ||
            pb_grow((void **)&r->buf, &r->cbuf, 2 * (n + f->dso_len) + 64, 1) < 0)
            return P_OOM(r);
        r->raw_first[e] = (uint32_t)r->npool;
        r->raw_count[e] = 0;
        if (n == 0) {
            s = "[unknown]";
            n = 9;
        }
        /* "(...)": not a frame (stackcollapse-perf.pl skips it); but C++'s
         * "(anonymous namespace)::f" is one (which it loses) */
        if (s[0] != '(' || (n >= 21 && memcmp(s, "(anonymous namespace)", 21) == 0)) {
            /* pieces of "a->b", outermost first; the pool keeps them innermost first */
            for (start = 0, k = 0; k <= n; k++) {
                if (k < n && !(k + 1 < n && s[k] == '-' && s[k + 1] == '>'))
                    continue;
                w = 0;
                tidy_piece(r, s + start, k - start, f, pieces > 0, &w);
                if ((st = perf_name_id(r, r->buf, w, &id)) != PB_OK)
                    return st;
                if (pb_append((void **)&r->pool, &r->npool, &r->cpool, &id, 1, sizeof id) < 0)
                    return P_OOM(r);
                pieces++;
                start = k + 2;
                k++;
            }
            for (i = 0; i < pieces / 2; i++) {
                uint32_t *p = r->pool + r->raw_first[e];
                uint32_t t = p[i];
                p[i] = p[pieces - 1 - i];
                p[pieces - 1 - i] = t;
            }
        }
        r->raw_count[e] = (uint32_t)pieces;
    }
    for (i = 0; i < r->raw_count[e]; i++)
        if ((st = push_id(r, r->pool[r->raw_first[e] + i], at)) != PB_OK)
            return st;
    return PB_OK;
}

/* ---- threads and events ------------------------------------------------------ */
static int perf_thread_selected(const pr *r, const ph *h, const char *label, size_t n)
{
    if (!r->opt.have_thread)
        return 1;
    if (r->opt.thread_name) {
        size_t l = strlen(r->opt.thread_name);
        return (l == n && memcmp(r->opt.thread_name, label, n) == 0) ||
               (l == h->comm_len && memcmp(r->opt.thread_name, h->comm, l) == 0);
    }
    return h->have_tid && h->tid == r->opt.thread_id;
}

static pb_status sample_thread(pr *r, const ph *h)
{
    char label[160];
    size_t k = 0, i;
    uint32_t e;
    int found;
    for (i = 0; i < h->comm_len && k < 64; i++)
        label[k++] = h->comm[i] == ' ' || h->comm[i] == '\t' ? '_' : h->comm[i];
    if (h->have_tid && h->have_pid)
        k += (size_t)snprintf(label + k, sizeof label - k, "-%llu/%llu", (unsigned long long)h->pid,
                              (unsigned long long)h->tid);
    else if (h->have_tid)
        k += (size_t)snprintf(label + k, sizeof label - k, "-?/%llu", (unsigned long long)h->tid);
    if ((found = pb_strtab_intern(&r->threads, label, k, &e)) < 0)
        return P_OOM(r);
    r->key = e;
    if (found) {
        r->take = r->selected[e];
        return PB_OK;
    }
    if (e >= r->opt.max_strings)
        return pb_fail(r->err, PB_ERR_LIMIT, r->line_off, "more than %u threads (max_strings)",
                       (unsigned)r->opt.max_strings);
    if (pb_grow((void **)&r->selected, &r->csel, (size_t)e + 1, 1) < 0)
        return P_OOM(r);
    r->take = r->selected[e] = (unsigned char)perf_thread_selected(r, h, label, k);
    if (!r->take)
        return PB_OK;
    r->any_selected = 1;
    label[k] = '\0';
    return r->out->thread(r->out, e, e + 1, 0, k ? label : NULL);
}

/* the event's index (interned) */
static pb_status event_index(pr *r, const char *ev, size_t n, uint32_t *e)
{
    int found = pb_strtab_intern(&r->events, ev, n, e);
    if (found < 0)
        return P_OOM(r);
    if (!found && *e >= 1000)
        return pb_fail(r->err, PB_ERR_LIMIT, r->line_off, "more than 1000 events in one file");
    return PB_OK;
}

static pb_status perf_attr(pr *r, const char *key, const char *val)
{
    return r->out->attribute(r->out, key, pb_str_make(val, strlen(val), pb_utf8_valid(val, strlen(val))));
}

/* the attributes that say what a weight is, before the first sample */
static pb_status perf_announce(pr *r, const ph *h)
{
    char buf[256];
    pb_status st;
    int ns = 0;
    r->announced = 1;
    r->period_mode = h->have_period;
    if (h->event) {
        size_t base = h->event_len;
        const char *c = (const char *)memchr(h->event, ':', h->event_len);
        if (c)
            base = (size_t)(c - h->event);
        /* without a period each sample weighs 1: "EVENT/samples", so the
         * weight reads as a sample count (samples.c pb_weight_kind_of), which
         * adds to time as every sampled profile's does */
        snprintf(buf, sizeof buf, "%.*s%s", (int)(h->event_len > 200 ? 200 : h->event_len), h->event,
                 h->have_period ? "" : "/samples");
        if ((st = perf_attr(r, "sample_type", buf)) != PB_OK)
            return st;
        ns = h->have_period && ((base == 9 && memcmp(h->event, "cpu-clock", 9) == 0) ||
                                (base == 10 && memcmp(h->event, "task-clock", 10) == 0));
    }
    if (ns) {
        if ((st = perf_attr(r, "sample_weight_unit", "ns")) != PB_OK || (st = perf_attr(r, "clock", "cpu")) != PB_OK)
            return st;
    }
    return perf_attr(r, "sample_weight", ns ? "the period, ns of CPU time"
                                       : h->have_period ? "the period, a count of the event" : "1 per sample");
}

/* ---- samples ------------------------------------------------------------------ */
static pb_status end_sample(pr *r)
{
    pb_status st = PB_OK;
    if (r->in_sample && r->take && r->weight) {
        r->taken++;
        if (!r->ts_ns && r->out->sample_ticks) /* (a tee: the fold's ticks too) */
            st = r->out->sample_ticks(r->out, r->ticks);
        if (st == PB_OK)
            st = r->out->sample(r->out, r->key, r->ids, r->depth, r->weight, r->ts);
    }
    r->in_sample = r->take = r->chain = 0;
    r->depth = 0;
    return st;
}

static pb_status start_sample(pr *r, const ph *h)
{
    pb_status st;
    uint32_t e;
    pf_line f;
    r->in_sample = 1;
    r->chain = 1;
    r->take = 1;
    r->depth = 0;
    r->samples++;
    if (h->event) {
        /* by default the first event the header block declares (perf record
         * -e's first), else the first met (as stackcollapse-perf.pl) */
        if (r->chosen < 0 && r->events.n > 0 && !r->opt.sample_type)
            r->chosen = 0;
        if ((st = event_index(r, h->event, h->event_len, &e)) != PB_OK)
            return st;
        if (r->opt.sample_type)
            r->take = strlen(r->opt.sample_type) == h->event_len &&
                      memcmp(r->opt.sample_type, h->event, h->event_len) == 0;
        else if (r->chosen < 0)
            r->chosen = (int)e;
        else
            r->take = (uint32_t)r->chosen == e;
        if (r->take && r->chosen < 0)
            r->chosen = (int)e;
        r->other += !r->take;
    }
    /* without a call chain, the sample's one frame is on its line */
    if (h->rest_len && parse_frame(h->rest, h->rest_len, &f))
        r->chain = 0;
    if (!r->take)
        return PB_OK;
    if (!r->announced && (st = perf_announce(r, h)) != PB_OK)
        return st;
    if (r->period_mode != h->have_period)
        return perf_bad(r, 0, h->have_period ? "prints a period, where the samples before it print none"
                                        : "prints no period, where the samples before it print one");
    if ((st = sample_thread(r, h)) != PB_OK || !r->take)
        return st;
    r->java = h->comm_len >= 4 && memcmp(h->comm, "java", 4) == 0;
    r->weight = h->have_period ? h->period : 1;
    r->ts = !h->have_time ? 0 : r->ts_ns ? h->time_ns : h->time_ns / 1000u;
    r->ticks = !h->have_time ? 0 : r->fold_us ? h->time_ns / 1000u : h->time_ns;
    return r->chain ? PB_OK : frame_line(r, &f, 0);
}

/* ---- "# ..." lines ----------------------------------------------------------- */
static pb_status comment(pr *r, const char *p, size_t n)
{
    size_t i = 1, k;
    char val[512];
    while (i < n && p[i] == ' ')
        i++;
    if (n - i > 7 && memcmp(p + i, "event :", 7) == 0) {
        const char *nm = memchr(p + i, '=', n - i);
        uint32_t e;
        /* "# event : name = cpu-clock, , id = { ... }, ..." */
        if (nm && (size_t)(nm - p) + 1 < n && memcmp(p + i + 7, " name ", 6) == 0) {
            size_t a = (size_t)(nm - p) + 1, b;
            while (a < n && p[a] == ' ')
                a++;
            for (b = a; b < n && p[b] != ','; b++)
                ;
            while (b > a && p[b - 1] == ' ')
                b--;
            if (b > a)
                return event_index(r, p + a, b - a, &e);
        }
        return PB_OK;
    }
    if ((n - i > 7 && memcmp(p + i, "cmdline", 7) == 0) || (n - i > 12 && memcmp(p + i, "perf version", 12) == 0)) {
        const char *c = (const char *)memchr(p + i, ':', n - i);
        int cmd = p[i] == 'c';
        if (!c)
            return PB_OK;
        for (k = (size_t)(c - p) + 1; k < n && p[k] == ' '; k++)
            ;
        snprintf(val, sizeof val, "%.*s", (int)(n - k > 400 ? 400 : n - k), p + k);
        return perf_attr(r, cmd ? "cmdline" : "perf_version", val);
    }
    return PB_OK;
}

/* ---- lines ---------------------------------------------------------------------- */
/* the next line (without its LF and CR), *eof at the end of the input */
static pb_status perf_next_line(pr *r, const char **line, size_t *len, int *eof)
{
    return pb_src_line(r->s, r->opt.max_record_size, &r->lineno, &r->line_off, r->err, line, len, eof);
}

static pb_status perf_one_line(pr *r, const char *p, size_t n)
{
    size_t i;
    ph h;
    pf_line f;
    for (i = 0; i < n; i++)
        if (((unsigned char)p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7F)
            return perf_bad(r, i, "holds a control character (not perf script text)");
    for (i = 0; i < n && perf_is_space((unsigned char)p[i]); i++)
        ;
    if (i == n) /* blank: the sample ends */
        return end_sample(r);
    if (i == 0 && p[0] == '#' && !r->in_sample)
        return comment(r, p, n);
    if (i > 0 && r->in_sample && r->chain && parse_frame(p, n, &f))
        return r->take ? frame_line(r, &f, i) : PB_OK;
    if (parse_header(p, n, &h)) {
        pb_status st = end_sample(r);
        return st != PB_OK ? st : start_sample(r, &h);
    }
    if (i > 0 && r->in_sample && r->chain)
        return PB_OK; /* a source line under a frame (perf script -F+srcline) */
    return perf_bad(r, 0, i > 0 ? "is neither a frame (address symbol (dso)) nor a sample's header"
                           : "is not a sample's header (comm tid time: period event:)");
}

/* ---- the run --------------------------------------------------------------------- */
static pb_status events_list(pr *r, char *list, size_t cap)
{
    uint32_t i;
    size_t n = 0;
    list[0] = '\0';
    for (i = 0; i < r->events.n && n + 1 < cap; i++)
        n += (size_t)snprintf(list + n, cap - n, "%s%.100s", i ? "," : "", pb_strtab_ptr(&r->events, i));
    return PB_OK;
}

static pb_status header_attrs(pr *r)
{
    pb_status st = perf_attr(r, "profiler", "perf script");
    return st != PB_OK ? st : pb_sample_file_header(r->out, r->err->file, r->s, 0);
}

static pb_status perf_decode(void *p, pb_sample_sink *out)
{
    pr *r = (pr *)p;
    pb_status st;
    char list[1024], buf[32];
    r->out = out;
    if ((st = header_attrs(r)) != PB_OK)
        return st;
    for (;;) {
        const char *line = NULL;
        size_t n = 0;
        int eof = 0;
        if ((st = perf_next_line(r, &line, &n, &eof)) != PB_OK)
            return st;
        if (eof)
            break;
        if ((st = perf_one_line(r, line, n)) != PB_OK)
            return st;
    }
    if ((st = end_sample(r)) != PB_OK)
        return st;
    events_list(r, list, sizeof list);
    if (r->opt.sample_type && !r->announced)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, 0, "no samples of event \"%.100s\" in this file (its events: %s)",
                       r->opt.sample_type, r->events.n ? list : "none named");
    if (r->samples == 0)
        return pb_fail(r->err, PB_ERR_CORRUPT, 0, "no samples (not perf script text, or an empty recording)");
    if (r->opt.have_thread && !r->any_selected) {
        char tl[256];
        size_t n = 0;
        uint32_t i;
        tl[0] = '\0';
        for (i = 0; i < r->threads.n && n < sizeof tl - 60; i++)
            n += (size_t)snprintf(tl + n, sizeof tl - n, "%s%.40s", i ? ", " : "", pb_strtab_ptr(&r->threads, i));
        if (r->opt.thread_name)
            return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED, "no thread \"%.100s\" in this file (its threads: %s%s)",
                           r->opt.thread_name, tl, i < r->threads.n ? ", ..." : "");
        return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED, "no thread %llu in this file (its threads: %s%s)",
                       (unsigned long long)r->opt.thread_id, tl, i < r->threads.n ? ", ..." : "");
    }
    if (r->events.n && (st = perf_attr(r, "sample_types", list)) != PB_OK)
        return st;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->other);
    if (r->other && (st = perf_attr(r, "perf_other_event_samples", buf)) != PB_OK)
        return st;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->taken);
    if ((st = perf_attr(r, "total_samples", buf)) != PB_OK)
        return st;
    return r->out->finish(r->out);
}

/* The fold's tick: ns, as a period is (cpu-clock, task-clock: ns; other
 * events' counts shown as 1 ns each); where perf script printed no period
 * (the first sample header in the first 64 KB says so) a sample is one
 * unit, shown as 1 µs, as folded stacks' counts are. */
static pb_status perf_prepare(void *p, pb_fold_config *cfg)
{
    pr *r = (pr *)p;
    pb_source *s = r->s;
    size_t i = 0, len;
    if (pb_src_need(s, 65536) < 0)
        return r->err->status ? r->err->status : PB_ERR_IO;
    len = pb_src_avail(s);
    while (i < len) {
        const char *t = (const char *)s->p + i, *nl = (const char *)memchr(t, '\n', len - i);
        size_t n = nl ? (size_t)(nl - t) : len - i, b;
        ph h;
        for (b = 0; b < n && perf_is_space((unsigned char)t[b]); b++)
            ;
        if (b < n && t[0] != '#') { /* the first sample's header */
            if (parse_header(t, n, &h) && !h.have_period) {
                cfg->ticks_per_sec = 1000000;
                r->ts_ns = 0;
                r->fold_us = 1;
            }
            break;
        }
        if (!nl)
            break;
        i += n + 1;
    }
    return PB_OK;
}

static void perf_pr_init(void *p, pb_source *src, const pb_options *opt, pb_sink *warn_sink, pb_error *err)
{
    pr *r = (pr *)p;
    pb_options_copy(&r->opt, opt);
    r->s = src;
    r->err = err;
    r->ts_ns = warn_sink != NULL;
    r->chosen = -1;
    r->period_mode = -1;
}

static void perf_pr_free(void *p)
{
    pr *r = (pr *)p;
    pb_strtab_free(&r->raw);
    pb_strtab_free(&r->names);
    pb_strtab_free(&r->threads);
    pb_strtab_free(&r->events);
    PB_FREE_ALL(r->raw_first, r->raw_count, r->pool, r->name_sink, r->selected, r->ids, r->buf, r->key_buf);
}

/* ticks: ns (cpu-clock, task-clock), one count as 1 ns; see perf_prepare() */
const pb_fold_decoder pb_perf_decoder = {sizeof(pr), perf_pr_init, perf_prepare, perf_decode, perf_pr_free,
    {.source_format = "perf", .ticks_per_sec = 1000000000u, .ticks_per_weight = 1, .sampled_spans = 1}};

/* ---- detection ------------------------------------------------------------------ */
int pb_perf_sniff(const unsigned char *p, size_t len, int whole)
{
    size_t i = 0;
    int headers = 0;
    const char *t = (const char *)p;
    if (len >= 10 && memcmp(p, "# ========", 10) == 0) /* perf script --header */
        return len > 11 && p[10] == '\n' && memcmp(p + 11, "# ", len - 11 < 2 ? len - 11 : 2) == 0;
    while (i < len) {
        const char *nl = (const char *)memchr(t + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (t + i)) : len - i, k, b;
        ph h;
        pf_line f;
        if (!nl && !whole)
            break; /* a line cut where the view ends */
        if (n && t[i + n - 1] == '\r')
            n--;
        for (k = 0; k < n; k++)
            if (((unsigned char)t[i + k] < 0x20 && t[i + k] != '\t') || t[i + k] == 0x7F)
                return 0;
        for (b = 0; b < n && perf_is_space((unsigned char)t[i + b]); b++)
            ;
        if (b == n || (headers == 0 && t[i] == '#')) {
            /* blank, or a comment before the first sample */
        } else if (headers && b > 0 && parse_frame(t + i, n, &f)) {
            /* a frame */
        } else if (t[i + b] != '{' && t[i + b] != '[' && t[i + b] != '<' && parse_header(t + i, n, &h) &&
                   (h.have_tid || h.have_time) && (h.event || h.have_time)) {
            /* a header: a tid or a time, and an event or a time (JSON's
             * {"key": is no event) */
            headers++;
        } else {
            return 0;
        }
        if (headers >= 4 || !nl)
            break;
        i = (size_t)(nl - t) + 1;
    }
    return headers > 0;
}
