/* read_folded.c - Brendan Gregg's folded stacks ("collapsed stacks"): the
 * input of flamegraph.pl, written by the stackcollapse-*.pl scripts,
 * inferno, py-spy --format raw, rbspy, nytprofcalls, CPython's
 * `python -m profiling.sampling replay --collapsed` and our own
 * folded-stacks target (outputs.c).
 *
 * One stack per line, root first, frames separated by ';', then white space
 * and the stack's weight, an integer:
 *     tid:5081;threading.py:Thread.run:1161;multithread.py:sorter:30 1264
 * (LF or CRLF; the last line may lack its newline; blank lines are skipped;
 * a UTF-8 byte order mark at the start is skipped.)
 *
 * Two columns: "stack BEFORE AFTER" (difffolded.pl's and our diff's output,
 * flamegraph.pl's differential input).  The first stack line decides (a line
 * ending in two numbers has two, as flamegraph.pl reads it); every line then
 * has as many.  The two are sample types "before/samples" and "after/samples"
 * (ATTRIBUTEs sample_types, sample_type, as for other formats with several):
 * --sample-type picks one, else AFTER (the last; flamegraph.pl's widths).
 *
 * Threads and processes: a line may start with root frames that name them,
 * as the tools write them: "pid:N" or py-spy's `process N:"cmd"`, then
 * "tid:N" (CPython, ours) or py-spy's "thread (0x...)".  Each distinct
 * root (as written) becomes a thread of the profile (keys 0.. in order of
 * first use, pid = key + 1), labelled by the thread's text ("5081"; "P/T"
 * when a process root comes first); lines without a root are one more
 * thread.
 *
 * Frames: "file:func:line" (CPython's shape: a line number of 1-9 digits
 * after the last ':', a non-empty file before the first ':', a non-empty
 * function between, no "::" anywhere) are a frame of that function in that
 * file at that line: its own name (shown by the stack outputs) the
 * function, its nytprof.out sub the file's stem "::" the function with its
 * dots as "::" (threading.py:Thread.run -> threading::Thread::run, as the
 * Python readers name it, python.h).  Any other frame is a function name as it is:
 * Perl's pkg::sub split at its last "::", a "<...>" name (CPython's <GC>,
 * <native>) a synthetic frame, anything else main::<name>; these have no
 * file.  \xHH in a frame is the byte HH (our collapsed writer escapes ';',
 * '\', CR, LF and NUL so).  Names are UTF-8 (as in most formats): a byte
 * that starts no valid sequence reaches every output as \xNN.
 *
 * Round trip: each frame carries its text as written (pb_frame verbatim)
 * and each thread its root frames as written (the sink's thread_root, ""
 * for lines without), which the collapsed writer writes back as they are:
 * folded in, folded out gives the input's own lines, weights summed per
 * identical line.
 *
 * Weights: counts, taken as they are (a folded file does not say what
 * its numbers count: CPython's are samples, nytprofcalls' NYTProf ticks,
 * ours the source's weights).  No sample interval is claimed; nytprof.out
 * shows one unit of weight as one µs (ticks_per_sec 1000000, one tick per
 * unit), and a merge, which adds time in ns, takes one unit as 1 ns (as for
 * any input without an interval).
 *
 * Memory: the line being read (at most max_record_size bytes: longer is a
 * `limit` error), its frame ids (at most max_stack_depth), and one entry per
 * unique frame text (at most max_frames) and per thread (its root frames and
 * label).
 *
 * Names here: fr = this reader's state (folded reader).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fold_samples.h"
#include "model.h"
#include "read_folded.h"
#include "reader.h"

typedef struct {
    pb_source *s;
    pb_options opt;
    pb_error *err;
    pb_sample_sink *out;
    pb_strtab frames;   /* frame texts as written (escapes and all) */
    uint32_t *sink_id;  /* per frames entry: its id in out */
    size_t csink;
    pb_strtab threads;  /* threads' root frames as written: the key is the entry */
    pb_strtab labels;   /* the threads' labels ("5081", "7/1"; "" for no root), each once */
    unsigned char *selected; /* per thread: --thread takes it */
    size_t csel;
    int columns;        /* weight columns per line: 0 before the first line, 1 or 2 */
    int column;         /* two columns: the one read (0 BEFORE, 1 AFTER) */
    uint64_t first_line; /* the first stack line's number (its columns rule) */
    int any_selected;
    uint32_t *ids;      /* the line's frame ids, innermost first */
    size_t cids;
    char *buf, *buf2;   /* a frame's unescaped text; its nytprof names */
    size_t cbuf, cbuf2;
    uint64_t lineno, line_off;
} fr;

#define F_OOM(r) pb_fail((r)->err, PB_ERR_LIMIT, pb_src_offset((r)->s), "out of memory")

static int folded_is_digit(int c) { return c >= '0' && c <= '9'; }
static int folded_is_space(int c) { return c == ' ' || c == '\t'; }

/* The line's weight: the digits after its last run of blanks.  *stack_len
 * = what comes before that (trailing blanks dropped).  0, or -1 when the
 * line has no such ending; -2 when the number needs more than 63 bits. */
static int split_weight(const char *p, size_t n, size_t *stack_len, uint64_t *w)
{
    size_t k = n, i;
    uint64_t v = 0;
    while (k > 0 && folded_is_digit((unsigned char)p[k - 1]))
        k--;
    if (k == n || k == 0 || !folded_is_space((unsigned char)p[k - 1]))
        return -1;
    for (i = k; i > 0 && folded_is_space((unsigned char)p[i - 1]); i--)
        ;
    *stack_len = i; /* also for -2: its error points at the weight */
    for (i = k; i < n; i++) {
        if (v > (UINT64_C(0x7FFFFFFFFFFFFFFF) - (uint64_t)(p[i] - '0')) / 10)
            return -2;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    *w = v;
    return 0;
}

/* The line's weights: one column, or two (the differential form
 * "stack BEFORE AFTER" that difffolded.pl writes and flamegraph.pl reads:
 * a line that ends in two numbers has two, as flamegraph.pl takes it).
 * *cols = 1 or 2, w[0] BEFORE and w[1] AFTER (one column: both the one);
 * split_weight's -1 and -2 otherwise. */
static int split_weights(const char *p, size_t n, size_t *stack_len, uint64_t w[2], int *cols)
{
    size_t sl2;
    uint64_t v;
    int rc = split_weight(p, n, stack_len, &w[1]);
    if (rc < 0)
        return rc;
    *cols = 1;
    w[0] = w[1];
    if ((rc = split_weight(p, *stack_len, &sl2, &v)) == -2)
        return -2;
    if (rc == 0 && sl2 > 0) {
        *cols = 2;
        w[0] = v;
        *stack_len = sl2;
    }
    return 0;
}

/* a UTF-8 byte order mark: skipped where the input starts */
static size_t bom_len(const unsigned char *p, size_t n)
{
    return n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? 3 : 0;
}

/* 1 when the n bytes at p are a folded line (blank lines are not) */
static int line_shape(const unsigned char *p, size_t n)
{
    size_t i, sl;
    uint64_t w;
    if (n && p[n - 1] == '\r')
        n--;
    for (i = 0; i < n; i++)
        if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7F)
            return 0;
    return split_weight((const char *)p, n, &sl, &w) == 0 && sl > 0 && !folded_is_space(p[0]);
}

/* a first line longer than what the sniffer sees (a deep stack): at least
 * 16 non-empty frames, no control bytes, no braces (JSON, CSS, minified
 * code), not starting with [ */
static int long_first_line(const unsigned char *p, size_t n)
{
    size_t i, frames = 0, flen = 0;
    if (n == 0 || folded_is_space(p[0]) || p[0] == '[')
        return 0;
    for (i = 0; i < n; i++) {
        if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7F || p[i] == '{' || p[i] == '}')
            return 0;
        if (p[i] != ';') {
            flen++;
        } else if (flen == 0) {
            return 0;
        } else {
            frames++;
            flen = 0;
        }
    }
    return frames >= 16;
}

int pb_folded_sniff(const unsigned char *p, size_t len, int whole)
{
    size_t i = bom_len(p, len), good = 0;
    while (i < len) {
        const unsigned char *nl = (const unsigned char *)memchr(p + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (p + i)) : len - i;
        int blank = n == 0 || (n == 1 && p[i] == '\r');
        if (!nl && !whole) /* a line cut where the view ends */
            return good > 0 ? !memchr(p + i, 0, n) : i == bom_len(p, len) && long_first_line(p + i, n);
        if (!blank) {
            if (!line_shape(p + i, n))
                return 0;
            good++;
        }
        i += n + 1;
    }
    return good > 0;
}

/* the next line (without its LF and CR), *eof at the end of the input */
static pb_status folded_next_line(fr *r, const char **line, size_t *len, int *eof)
{
    return pb_src_line(r->s, r->opt.max_record_size, &r->lineno, &r->line_off, r->err, line, len, eof);
}

static pb_status folded_bad(fr *r, size_t at, const char *what)
{
    return pb_fail(r->err, PB_ERR_CORRUPT, r->line_off + at, "line %llu %s", (unsigned long long)r->lineno, what);
}

/* ---- frames ---------------------------------------------------------------- */
static int hexval(int c)
{
    return folded_is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
}

/* t[0..n) with each \xHH as its byte, into r->buf; the length */
static size_t unescape(fr *r, const char *t, size_t n)
{
    size_t i, w = 0;
    for (i = 0; i < n; i++) {
        int hi, lo;
        if (t[i] == '\\' && i + 3 < n && t[i + 1] == 'x' && (hi = hexval((unsigned char)t[i + 2])) >= 0 &&
            (lo = hexval((unsigned char)t[i + 3])) >= 0) {
            r->buf[w++] = (char)(hi * 16 + lo);
            i += 3;
        } else {
            r->buf[w++] = t[i];
        }
    }
    return w;
}

/* CPython's "file:func:line": 1 with the two colons and the line, else 0 */
static int cpython_shape(const char *t, size_t n, size_t *c1, size_t *c2, int32_t *line)
{
    size_t k = n, i;
    int32_t v = 0;
    const char *c;
    while (k > 0 && folded_is_digit((unsigned char)t[k - 1]))
        k--;
    if (k == n || n - k > 9 || k < 4 || t[k - 1] != ':')
        return 0;
    for (i = 0; i + 1 < k - 1; i++)
        if (t[i] == ':' && t[i + 1] == ':')
            return 0;
    if (!(c = (const char *)memchr(t, ':', k - 1)) || c == t || (size_t)(c - t) + 1 >= k - 1)
        return 0;
    for (i = k; i < n; i++)
        v = v * 10 + (t[i] - '0');
    *c1 = (size_t)(c - t);
    *c2 = k - 1;
    *line = v;
    return 1;
}

/* the nytprof.out names of a CPython frame into r->buf2: the file's stem
 * (<frozen X>: X; other <...>: none, i.e. main), then the function with
 * its dots as "::" (empty: __ANON__) */
static void python_names(fr *r, const char *file, size_t flen, const char *func, size_t fnlen, int u8, pb_frame *pf)
{
    size_t b = flen, e = flen, w = 0, i;
    if (flen > 9 && memcmp(file, "<frozen ", 8) == 0 && file[flen - 1] == '>') {
        b = 8;
        e = flen - 1;
    } else if (file[0] != '<') {
        while (b > 0 && file[b - 1] != '/' && file[b - 1] != '\\')
            b--;
        for (i = e; i > b + 1; i--)
            if (file[i - 1] == '.') {
                e = i - 1;
                break;
            }
    }
    memcpy(r->buf2, file + b, e - b);
    pf->package = pb_str_make(r->buf2, e - b, u8);
    w = e - b + pb_sep_to_colons(r->buf2 + (e - b), func, fnlen, '.');
    pf->name = pb_str_make(r->buf2 + (e - b), w - (e - b), u8);
}

/* a frame as the sink wants it, from its unescaped text t[0..n) (r->buf) */
static void describe(fr *r, const char *t, size_t n, pb_frame *pf)
{
    size_t c1, c2, k;
    int32_t line;
    /* names are UTF-8, as every other reader declares them: a byte that
     * starts no valid sequence (util.h, pb_utf8_seq) reaches every output as
     * \xNN (pb_utf8_append), the escape this reader reads back as the byte */
    const int u8 = 1;
    memset(pf, 0, sizeof *pf);
    pf->kind = PB_FRAME_SUB;
    pf->first_line = -1;
    pf->own = pb_str_make(t, n, u8);
    if (cpython_shape(t, n, &c1, &c2, &line)) {
        python_names(r, t, c1, t + c1 + 1, c2 - c1 - 1, u8, pf);
        pf->own = pb_str_make(t + c1 + 1, c2 - c1 - 1, u8);
        pf->file = pb_str_make(t, c1, u8);
        pf->line = line;
        return;
    }
    pf->name = pf->own;
    if (n >= 2 && t[0] == '<' && t[n - 1] == '>') {
        pf->kind = PB_FRAME_SYNTHETIC;
        return;
    }
    for (k = n; k >= 2; k--)
        if (t[k - 1] == ':' && t[k - 2] == ':') {
            if (k > 2 && k < n) {
                pf->package = pb_str_make(t, k - 2, u8);
                pf->name = pb_str_make(t + k, n - k, u8);
            }
            break;
        }
}

/* the sink's id of the frame written t[0..n) at line offset at */
static pb_status frame_id(fr *r, const char *t, size_t n, size_t at, uint32_t *id)
{
    uint32_t e;
    int found;
    pb_frame pf;
    pb_status st;
    size_t u;
    if (n == 0)
        return folded_bad(r, at, "has an empty frame (two ';' in a row, or one at an end)");
    if ((found = pb_strtab_intern(&r->frames, t, n, &e)) < 0)
        return F_OOM(r);
    if (found) {
        *id = r->sink_id[e];
        return PB_OK;
    }
    if (e >= r->opt.max_frames)
        return pb_fail(r->err, PB_ERR_LIMIT, r->line_off + at, "more than %u unique frames (max_frames)",
                       (unsigned)r->opt.max_frames);
    if (pb_grow((void **)&r->sink_id, &r->csink, (size_t)e + 1, sizeof *r->sink_id) < 0 ||
        pb_grow((void **)&r->buf, &r->cbuf, n + 1, 1) < 0 || pb_grow((void **)&r->buf2, &r->cbuf2, 2 * n + 1, 1) < 0)
        return F_OOM(r);
    u = unescape(r, t, n);
    describe(r, r->buf, u, &pf);
    pf.verbatim = pb_str_make(t, n, 1); /* the collapsed writer writes it back as it is */
    if ((st = r->out->frame(r->out, &pf, id)) != PB_OK)
        return st;
    r->sink_id[e] = *id;
    return PB_OK;
}

/* ---- threads --------------------------------------------------------------- */
/* the length of a root frame f[0..n) of the kind asked for (process or
 * thread), with its label at *lab, *llen; 0 when it is not one */
static int root_frame(const char *f, size_t n, int process, const char **lab, size_t *llen)
{
    const char *tag = process ? "pid:" : "tid:";
    const char *py = process ? "process " : "thread (";
    size_t k;
    if (n > 4 && memcmp(f, tag, 4) == 0) {
        *lab = f + 4;
        *llen = n - 4;
        return 1;
    }
    if (n <= 8 || memcmp(f, py, 8) != 0)
        return 0;
    if (process) { /* process N:"command line" */
        for (k = 8; k < n && folded_is_digit((unsigned char)f[k]); k++)
            ;
        if (k == 8 || (k < n && f[k] != ':'))
            return 0;
        *lab = f + 8;
        *llen = k - 8;
        return 1;
    }
    if (f[n - 1] != ')' || n == 9)
        return 0;
    *lab = f + 8;
    *llen = n - 9;
    return 1;
}

/* --thread: the label (its thread part after a '/') as a decimal or 0x
 * number, or the whole label as a name */
static int folded_thread_selected(const fr *r, const char *label, size_t n)
{
    const char *t = label, *slash = (const char *)memchr(label, '/', n);
    size_t tl = n;
    unsigned long long v;
    char num[32], *end;
    if (!r->opt.have_thread)
        return 1;
    if (r->opt.thread_name)
        return strlen(r->opt.thread_name) == n && memcmp(r->opt.thread_name, label, n) == 0;
    if (slash) {
        t = slash + 1;
        tl = n - (size_t)(t - label);
    }
    if (tl == 0 || tl >= sizeof num || !folded_is_digit((unsigned char)t[0]))
        return 0;
    memcpy(num, t, tl);
    num[tl] = '\0';
    v = strtoull(num, &end, 0);
    return *end == '\0' && v == r->opt.thread_id;
}

/* the thread of the line's root frames (stack[0..*skip)), announced to the
 * sink when new; *skip = bytes of root frames and their ';'; *take = 0 when
 * --thread leaves it out.  Threads are told apart by their root frames as
 * written (the round trip writes them back so). */
static pb_status line_thread(fr *r, const char *stack, size_t n, size_t *skip, uint64_t *key, int *take)
{
    const char *lab[2] = {NULL, NULL};
    size_t llen[2] = {0, 0}, at = 0, k, rl;
    int which;
    char label[512];
    uint32_t e, li;
    int found;
    pb_status st;
    for (which = 1; which >= 0; which--) {
        const char *semi = (const char *)memchr(stack + at, ';', n - at);
        size_t fl = semi ? (size_t)(semi - (stack + at)) : n - at;
        if (root_frame(stack + at, fl, which, &lab[which], &llen[which]))
            at += fl + (semi ? 1 : 0);
    }
    *skip = at;
    rl = at && stack[at - 1] == ';' ? at - 1 : at; /* the root frames without their last ';' */
    if ((found = pb_strtab_intern(&r->threads, stack, rl, &e)) < 0)
        return F_OOM(r);
    *key = e;
    if (found) {
        *take = r->selected[e];
        return PB_OK;
    }
    k = (size_t)snprintf(label, sizeof label, "%.*s%s%.*s", (int)(llen[1] < 200 ? llen[1] : 200),
                         lab[1] ? lab[1] : "", lab[1] && lab[0] ? "/" : "", (int)(llen[0] < 200 ? llen[0] : 200),
                         lab[0] ? lab[0] : "");
    if (pb_strtab_intern(&r->labels, label, k, &li) < 0 ||
        pb_grow((void **)&r->selected, &r->csel, (size_t)e + 1, 1) < 0)
        return F_OOM(r);
    *take = r->selected[e] = (unsigned char)folded_thread_selected(r, label, k);
    if (!*take)
        return PB_OK;
    r->any_selected = 1;
    if (!pb_utf8_valid(label, k)) { /* the names' rule: a byte that is not UTF-8 as \xNN */
        char shown[4 * sizeof label];
        size_t w = pb_utf8_append(shown, sizeof shown - 1, 0, label, k, 1);
        shown[w] = '\0';
        st = r->out->thread(r->out, e, e + 1, 0, shown);
    } else {
        st = r->out->thread(r->out, e, e + 1, 0, k ? label : NULL);
    }
    if (st != PB_OK)
        return st;
    return r->out->thread_root ? r->out->thread_root(r->out, e, pb_str_make(stack, rl, 1)) : PB_OK;
}

/* --thread named none of the file's threads */
static pb_status no_such_thread(fr *r)
{
    char list[256];
    size_t n = 0;
    uint32_t i;
    list[0] = '\0';
    for (i = 0; i < r->labels.n && n < sizeof list - 60; i++) {
        const char *l = pb_strtab_ptr(&r->labels, i);
        /* lines without root frames are one thread that no --thread names */
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%.40s", i ? ", " : "", *l ? l : "(lines without tid:)");
    }
    if (r->opt.thread_name)
        return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED, "no thread \"%.100s\" in this file (its threads: %s%s)",
                       r->opt.thread_name, list, i < r->labels.n ? ", ..." : "");
    return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED, "no thread %llu in this file (its threads: %s%s)",
                   (unsigned long long)r->opt.thread_id, list, i < r->labels.n ? ", ..." : "");
}

/* ---- lines ------------------------------------------------------------------ */
/* The two-column form's sample types, picked as any format's are (--sample-type
 * NAME, else the last: AFTER, the column flamegraph.pl draws a
 * differential graph's widths by), announced before the first stack. */
static const char *const column_type[2] = {"before/samples", "after/samples"};

static pb_status choose_column(fr *r, int cols)
{
    const char *want = r->opt.sample_type;
    pb_status st;
    r->columns = cols;
    r->first_line = r->lineno;
    if (cols == 1)
        return PB_OK; /* one weight: no sample types (--sample-type is for formats with several) */
    r->column = 1;
    if (want) {
        size_t wl = strlen(want);
        for (r->column = 1; r->column >= 0; r->column--)
            if (!strncmp(column_type[r->column], want, wl) && column_type[r->column][wl] == '/')
                break;
        if (r->column < 0)
            return pb_fail_nooff(r->err, PB_ERR_UNSUPPORTED,
                           "no sample type \"%.100s\" in this file (its types: %s, %s: the two weight columns)", want,
                           column_type[0], column_type[1]);
    }
    if ((st = r->out->attribute(r->out, "sample_types", pb_str_c("before/samples,after/samples"))) != PB_OK)
        return st;
    return r->out->attribute(r->out, "sample_type", pb_str_c(column_type[r->column]));
}

static pb_status folded_one_line(fr *r, const char *p, size_t n)
{
    size_t sl, skip, i, start, depth = 0;
    uint64_t ws[2], w, key;
    pb_status st;
    int rc, take, cols;
    for (i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
            return folded_bad(r, i, "holds a control character (not a text line of folded stacks)");
    if ((rc = split_weights(p, n, &sl, ws, &cols)) == -2)
        return pb_fail(r->err, PB_ERR_LIMIT, r->line_off + sl, "line %llu: its weight does not fit 63 bits",
                       (unsigned long long)r->lineno);
    if (rc < 0)
        return folded_bad(r, n, "does not end in white space and a weight (an integer)");
    if (sl == 0)
        return folded_bad(r, 0, "has a weight but no stack");
    if (!r->columns && (st = choose_column(r, cols)) != PB_OK)
        return st;
    if (cols != r->columns)
        return pb_fail(r->err, PB_ERR_CORRUPT, r->line_off + sl,
                       "line %llu has %s weight column%s where line %llu has %s (the two-column form is "
                       "\"stack BEFORE AFTER\" on every line)", (unsigned long long)r->lineno,
                       cols == 2 ? "two" : "one", cols == 2 ? "s" : "", (unsigned long long)r->first_line,
                       r->columns == 2 ? "two" : "one");
    w = ws[r->column];
    if ((st = line_thread(r, p, sl, &skip, &key, &take)) != PB_OK || !take)
        return st;
    for (start = skip, i = skip; i <= sl && skip < sl; i++) {
        if (i < sl && p[i] != ';')
            continue;
        if (depth >= r->opt.max_stack_depth)
            return pb_fail(r->err, PB_ERR_LIMIT, r->line_off + start,
                           "line %llu has more than %u frames (max_stack_depth)", (unsigned long long)r->lineno,
                           (unsigned)r->opt.max_stack_depth);
        if (pb_grow((void **)&r->ids, &r->cids, depth + 1, sizeof *r->ids) < 0)
            return F_OOM(r);
        if ((st = frame_id(r, p + start, i - start, start, &r->ids[depth])) != PB_OK)
            return st;
        depth++;
        start = i + 1;
    }
    for (i = 0; i < depth / 2; i++) { /* innermost first */
        uint32_t t = r->ids[i];
        r->ids[i] = r->ids[depth - 1 - i];
        r->ids[depth - 1 - i] = t;
    }
    if (w == 0) /* nothing to count (nytprofcalls writes such lines) */
        return PB_OK;
    return r->out->sample(r->out, key, r->ids, (uint32_t)depth, w, 0);
}

/* what nytprofhtml's page header names: the file, and when it was written
 * (a folded file keeps no date: its mtime stands for the run's) */
static pb_status folded_header(fr *r) { return pb_sample_file_header(r->out, r->err->file, r->s, 0); }

static pb_status folded_decode(void *p, pb_sample_sink *out)
{
    fr *r = (fr *)p;
    pb_status st;
    int got;
    r->out = out;
    if ((st = folded_header(r)) != PB_OK)
        return st;
    /* a UTF-8 byte order mark (a Windows editor's) is no part of the first frame */
    if ((got = pb_src_need(r->s, 3)) < 0)
        return r->err->status ? r->err->status : PB_ERR_IO;
    if (got > 0 && bom_len(r->s->p, pb_src_avail(r->s)))
        r->s->p += 3;
    for (;;) {
        const char *p = NULL;
        size_t n = 0, i;
        int eof = 0;
        if ((st = folded_next_line(r, &p, &n, &eof)) != PB_OK)
            return st;
        if (eof)
            break;
        for (i = 0; i < n && folded_is_space((unsigned char)p[i]); i++)
            ;
        if (i == n)
            continue; /* blank */
        if (i > 0)
            return folded_bad(r, 0, "starts with white space");
        if ((st = folded_one_line(r, p, n)) != PB_OK)
            return st;
    }
    if (r->opt.have_thread && !r->any_selected)
        return no_such_thread(r);
    return r->out->finish(r->out);
}

static void fr_init(void *p, pb_source *src, const pb_options *opt, pb_sink *warn_sink, pb_error *err)
{
    fr *r = (fr *)p;
    (void)warn_sink;
    pb_options_copy(&r->opt, opt);
    r->s = src;
    r->err = err;
}

static void fr_free(void *p)
{
    fr *r = (fr *)p;
    pb_strtab_free(&r->frames);
    pb_strtab_free(&r->threads);
    pb_strtab_free(&r->labels);
    PB_FREE_ALL(r->sink_id, r->selected, r->ids, r->buf, r->buf2);
}

/* a unit of weight shows as 1 µs (see the top) */
const pb_fold_decoder pb_folded_decoder = {sizeof(fr), fr_init, NULL, folded_decode, fr_free,
    {.source_format = "folded", .ticks_per_sec = 1000000, .ticks_per_weight = 1, .fid_flags = pb_fid_flags_angled,
     .sampled_spans = 1}};
