/* merge.c - many profiles folded into one (see merge.h).
 *
 * Names here: mg_ = the merge's sample-sink callbacks (the merger), sp_ = the workers' spool
 * (sp_put writes a record, sp_io reports a write error), h_ = hash callbacks of a pb_index, th_hash
 * = a thread key's hash.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "merge.h"
#include "model.h"
#include "util.h"
#include "formats.h"

typedef struct {
    uint32_t input;
    uint64_t key;    /* the decoder's thread key */
    uint64_t out;    /* the consumer's thread key */
} m_thread;

typedef struct {
    pb_sample_sink ss;
    pb_sample_sink *target;
    pb_error *err;
    uint32_t input;          /* 0-based, the one being read */
    uint64_t scale;          /* ns per unit of weight for this input (1: already ns) */
    uint64_t ts_base;        /* this input's first sample timestamp (0: none yet) */
    m_thread *threads;
    size_t nthreads, cthreads;
    pb_index tix;            /* (input, key) -> threads[] */
    uint32_t *pids;          /* pids given out */
    size_t npids, cpids;
    pb_index pix;            /* pid -> pids[] */
    uint32_t next_pid;
    int diff;                /* two inputs: tell the target which side is coming */
    pb_strtab labels;        /* thread labels -> */
    uint64_t *label_out;     /* (by label id) the consumer's thread */
    size_t clabel_out;
    const char *const *in;   /* the inputs' names (for messages) */
    pb_sample_facts facts;   /* this input's: what its weights are */
    int have_interval;       /* this input gave sample_interval_us */
    int unit_checked;        /* this input's unit was compared with the first's */
    pb_units units;          /* the first input's unit: the others' must add to it */
    int graph_only;          /* every input is a call graph (PB_YIELDS_GRAPH): their facts head the result */
    int own_clocks;          /* a sample consumer (pb_merge_samples): times stay on each input's own clock, in
                              * the source's units, its start marked (ATTRIBUTE merge_input); else (the fold)
                              * rebased to 0 per input, in ns */
} merger;

#define M_OOM(m) pb_fail((m)->err, PB_ERR_LIMIT, 0, "out of memory while merging profiles")

static uint32_t th_hash(uint32_t input, uint64_t key) { return pb_mix64(key ^ ((uint64_t)input << 40)) ^ input; }
static uint32_t merge_h_thread(const void *ctx, uint32_t i)
{
    const m_thread *t = &((const merger *)ctx)->threads[i];
    return th_hash(t->input, t->key);
}
static uint32_t h_pid(const void *ctx, uint32_t i) { return pb_mix64(((const merger *)ctx)->pids[i]); }

/* 1 when pid is given out already, else 0 with *slot the empty slot its probe ends on */
static int pid_find(const merger *m, uint32_t pid, size_t *slot)
{
    size_t j;
    uint32_t i;
    if (!m->pix.cap)
        return 0;
    PB_INDEX_FIND(&m->pix, pb_mix64(pid), j, i, m->pids[i] == pid);
    *slot = j;
    return i != PB_INDEX_NONE;
}

/* give out pid, or (when another input has it: take) the next free number: 0, or -1 out of memory */
static int pid_take(merger *m, uint32_t *pid, int take_free)
{
    size_t j;
    if (pb_index_reserve(&m->pix, m->npids, h_pid, m) < 0 ||
        pb_grow((void **)&m->pids, &m->cpids, m->npids + 1, sizeof *m->pids) < 0 || m->npids >= UINT32_MAX - 1)
        return -1;
    if (take_free || pid_find(m, *pid, &j)) {
        while (m->next_pid == 0 || pid_find(m, m->next_pid, &j))
            m->next_pid++;
        *pid = m->next_pid++;
    }
    m->pids[m->npids] = *pid;
    pb_index_set(&m->pix, j, (uint32_t)m->npids++);
    return 0;
}

/* the consumer's key for this input's thread (new threads get the next key) */
static pb_status map_thread(merger *m, uint64_t key, uint64_t *out, int *fresh)
{
    size_t j;
    uint32_t i;
    *fresh = 0;
    if (pb_index_reserve(&m->tix, m->nthreads, merge_h_thread, m) < 0)
        return M_OOM(m);
    PB_INDEX_FIND(&m->tix, th_hash(m->input, key), j, i, m->threads[i].input == m->input && m->threads[i].key == key);
    if (i != PB_INDEX_NONE) {
        *out = m->threads[i].out;
        return PB_OK;
    }
    if (m->nthreads >= UINT32_MAX - 1 || pb_grow((void **)&m->threads, &m->cthreads, m->nthreads + 1, sizeof *m->threads) < 0)
        return M_OOM(m);
    m->threads[m->nthreads].input = m->input;
    m->threads[m->nthreads].key = key;
    m->threads[m->nthreads].out = m->nthreads;
    *out = m->nthreads;
    pb_index_set(&m->tix, j, (uint32_t)m->nthreads++);
    *fresh = 1;
    return PB_OK;
}

/* a thread of the same label in another input (the main thread of several
 * runs, say) is the same thread: its weights add.  The thread just mapped
 * (the last one) takes the label's consumer key (*known = 1: the consumer
 * has that thread already), or gives it its own. */
static pb_status map_label(merger *m, const char *label, uint64_t out, int *known)
{
    uint32_t i;
    int found = pb_strtab_intern(&m->labels, label, strlen(label), &i);
    *known = 0;
    if (found < 0 || pb_grow((void **)&m->label_out, &m->clabel_out, m->labels.n, sizeof *m->label_out) < 0)
        return M_OOM(m);
    if ((*known = found))
        m->threads[m->nthreads - 1].out = m->label_out[i];
    else
        m->label_out[i] = out;
    return PB_OK;
}

/* input idx begins: its own scale, clock and units */
static void mg_input(merger *m, uint32_t idx)
{
    m->input = idx;
    m->scale = 1;
    m->ts_base = 0;
    memset(&m->facts, 0, sizeof m->facts);
    m->have_interval = 0;
    m->unit_checked = 0;
}

static pb_status mg_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    merger *m = (merger *)self->ctx;
    pb_sample_facts_take(&m->facts, self, key, v);
    if (!strcmp(key, "sample_interval_us")) {
        char b[32];
        m->scale = pb_interval_us_to_ns(strtoull(pb_sample_attr_text(v, b, sizeof b), NULL, 10));
        if (!m->scale)
            m->scale = 1;
        m->have_interval = 1;
        return PB_OK; /* the merged weights are ns, whatever the interval */
    }
    /* profile.proto sample counts: a sample stands for the period (period_type a time) */
    if (!m->have_interval && !m->facts.weight_ns && m->facts.kind == PB_WEIGHT_SAMPLES && m->facts.period_ns)
        m->scale = m->facts.period_ns;
    if (!strcmp(key, "graph_cost_unit")) {
        /* a call graph's event ("Ir"): a unit of its own, never time (samples.h) */
        pb_sample_attr_text(v, m->facts.sample_type, sizeof m->facts.sample_type);
        m->facts.kind = PB_WEIGHT_OTHER;
    }
    if (m->input > 0 && m->own_clocks && !strncmp(key, "thread_", 7) && strlen(key) > 12 &&
        !strcmp(key + strlen(key) - 5, "_name"))
        return m->target->attribute(m->target, key, v); /* every input's thread names (thread_<label>_name) */
    if (m->input > 0 || !strcmp(key, "source_format") || !strcmp(key, "clock"))
        return PB_OK; /* the first input's facts head the result */
    /* one input's total is not the sum's; a graph's facts only when the result is all graph */
    if (!strcmp(key, "graph_total") || (!m->graph_only && (!strcmp(key, "call_graph") || !strncmp(key, "graph_", 6))))
        return PB_OK;
    return m->target->attribute(m->target, key, v);
}

static pb_status mg_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    merger *m = (merger *)self->ctx;
    uint64_t out;
    int fresh, known;
    pb_status st;
    if ((st = map_thread(m, key, &out, &fresh)) != PB_OK)
        return st;
    if (fresh && label && *label && ((st = map_label(m, label, out, &known)) != PB_OK || known))
        return st;
    /* a pid another input used first gets the next free number */
    if (fresh && pid_take(m, &pid, 0) < 0)
        return M_OOM(m);
    return m->target->thread(m->target, out, pid, ppid, label);
}

/* before an input's first sample or call-graph fact: its unit checked
 * against the first input's (weights of different units never add), and
 * the consumer's key for thread key (a thread the decoder never announced
 * gets a pid of its own) */
static pb_status out_thread(merger *m, uint64_t key, uint64_t *out)
{
    int fresh;
    pb_status st;
    if (!m->unit_checked) {
        m->unit_checked = 1;
        if ((st = pb_units_check(&m->units, &m->facts, m->in ? m->in[0] : NULL, m->err)) != PB_OK)
            return st;
    }
    if ((st = map_thread(m, key, out, &fresh)) != PB_OK)
        return st;
    if (fresh) {
        uint32_t pid;
        if (pid_take(m, &pid, 1) < 0)
            return M_OOM(m);
        if ((st = m->target->thread(m->target, *out, pid, 0, NULL)) != PB_OK)
            return st;
    }
    return PB_OK;
}

static pb_status mg_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    merger *m = (merger *)self->ctx;
    uint64_t out;
    pb_status st;
    if ((st = out_thread(m, key, &out)) != PB_OK)
        return st;
    if ((st = pb_checked_mul(m->err, weight, m->scale, "a sample's weight", "ns", &weight)) != PB_OK)
        return st;
    /* every input's clock starts at 0: inputs come from different clocks
     * (monotonic, none), and NYTProf's reader adds up each process's span
     * from the last PID_START */
    if (ts && !m->own_clocks) {
        if (!m->ts_base)
            m->ts_base = ts;
        ts = ts > m->ts_base ? ts - m->ts_base : 0;
        if (m->scale > 1)
            ts = ts <= UINT64_MAX / 1000u ? ts * 1000u : UINT64_MAX;
    }
    return m->target->sample(m->target, out, ids, depth, weight, ts);
}

/* a call graph's facts (samples.h): on the consumer's thread, costs in ns
 * where the input's weights are samples x an interval (as samples'), summed
 * per function and per edge by the consumer (the fold) */
/* the consumer's thread of key, and a function's or an edge's own and inclusive costs in ns */
static pb_status graph_costs(merger *m, uint64_t key, uint64_t *out, const char *what, uint64_t *excl, uint64_t *incl)
{
    pb_status st;
    if ((st = out_thread(m, key, out)) != PB_OK || (st = pb_checked_mul(m->err, *excl, m->scale, what, "ns", excl)) != PB_OK)
        return st;
    return pb_checked_mul(m->err, *incl, m->scale, what, "ns", incl);
}

static pb_status mg_graph_func(pb_sample_sink *self, uint64_t key, const pb_graph_func *g)
{
    merger *m = (merger *)self->ctx;
    pb_graph_func c = *g;
    uint64_t out;
    pb_status st = graph_costs(m, key, &out, "a function's cost", &c.excl, &c.incl);
    return st != PB_OK ? st : m->target->graph_func(m->target, out, &c);
}

static pb_status mg_graph_edge(pb_sample_sink *self, uint64_t key, const pb_graph_edge *g)
{
    merger *m = (merger *)self->ctx;
    pb_graph_edge c = *g;
    uint64_t out;
    pb_status st = graph_costs(m, key, &out, "an edge's cost", &c.excl, &c.incl);
    return st != PB_OK ? st : m->target->graph_edge(m->target, out, &c);
}

static pb_status mg_graph_line(pb_sample_sink *self, uint64_t key, uint32_t frame, uint32_t line, uint64_t cost)
{
    merger *m = (merger *)self->ctx;
    uint64_t out;
    pb_status st;
    if ((st = out_thread(m, key, &out)) != PB_OK ||
        (st = pb_checked_mul(m->err, cost, m->scale, "a line's cost", "ns", &cost)) != PB_OK)
        return st;
    return m->target->graph_line ? m->target->graph_line(m->target, out, frame, line, cost) : PB_OK;
}

/* a span (PB_YIELDS_SPANS: a block, an event) on the consumer's thread,
 * its times (ns) on the input's own clock as sample times are */
static pb_status mg_span(pb_sample_sink *self, uint64_t key, uint32_t frame, uint64_t begin, uint64_t end)
{
    merger *m = (merger *)self->ctx;
    uint64_t out;
    pb_status st;
    if ((st = out_thread(m, key, &out)) != PB_OK)
        return st;
    return m->target->span(m->target, out, frame, begin, end);
}

/* an input begins (mg_input): a sample consumer hears of it (merge.h) */
static pb_status mark_input(merger *m, uint32_t idx)
{
    char b[24];
    mg_input(m, idx);
    if (!m->own_clocks || m->diff)
        return PB_OK;
    snprintf(b, sizeof b, "%u", idx);
    return m->target->attribute(m->target, "merge_input", pb_str_c(b));
}

static pb_status mg_finish(pb_sample_sink *self)
{
    (void)self; /* each input ends here; the target finishes after the last */
    return PB_OK;
}


/* ---- --jobs: decoding in worker processes --------------------------------
 * Worker w decodes the inputs [w*n/J, (w+1)*n/J) into a spool file of what
 * its decoders said: one record per sink call.  The parent then replays the
 * spools in input order through the merge layer above, so the result is the
 * same as with one process; only the decoding runs in parallel.  Records: a
 * tag byte, then fields in the machine's own order (writer and reader are
 * one program on one machine).
 *
 * Nothing is taken on trust:
 *   - a spool is a file made with mkstemp() in $TMPDIR (else /tmp) and
 *     unlinked at once, so it is gone on every path, a SIGKILL included;
 *   - each input's records end with R_DONE (its completion record); the
 *     parent replays a spool only when every input of the worker's share is
 *     there, in order, up to the byte count the worker reported;
 *   - each worker has a pipe to the parent (not the spool, which may be what
 *     filled the disk): progress messages (the parent calls the caller's
 *     progress hook: worker code never runs a callback of the caller's), then
 *     one final report: "done, N spool bytes", or the worker's real error
 *     (a decoder's, or the spool's write error with its errno: ENOSPC is
 *     named as such).  A worker that ends without a report, or with an exit
 *     status other than 0, failed;
 *   - workers die with the parent (PR_SET_PDEATHSIG on Linux, and a check
 *     that the parent is still the one that forked them). */
enum { R_INPUT = 'I', R_ATTR = 'A', R_FRAME = 'F', R_THREAD = 'T', R_SAMPLE = 'S', R_NOTE = 'N', R_END = 'E',
       R_DONE = 'D', R_GFUNC = 'G', R_GEDGE = 'H', R_GLINE = 'L', R_SPAN = 'P', R_TAGS = 'U' };
/* what the parent's consumer takes besides stacks: the worker's spool sink offers the same to its decoders */
enum { W_GRAPH = 1, W_SPAN = 2, W_TAGS = 4, W_EACH_TICK = 8 };
/* pipe messages */
enum { P_PROGRESS = 'p', P_OK = 'k', P_ERROR = 'x' };

typedef struct {
    pb_sample_sink ss;
    FILE *fp;
    uint32_t nframes;
    int wfail;        /* a spool write failed: errno in werrno */
    int werrno;
} spooler;

static int sp_put_w(spooler *w, const void *p, size_t n)
{
    if (w->wfail)
        return -1;
    if (fwrite(p, 1, n, w->fp) != n) {
        w->wfail = 1;
        w->werrno = errno ? errno : EIO;
        return -1;
    }
    return 0;
}
#define sp_put(fp, p, n) sp_put_w(w, (p), (n))
static int sp_str_w(spooler *w, pb_str s)
{
    uint64_t n = s.len;
    unsigned char u = !s.ptr ? 2 : s.utf8 ? 1 : 0; /* 2: no string (a NULL pointer, samples.h) */
    return sp_put(w->fp, &n, sizeof n) || sp_put(w->fp, &u, 1) || (n && sp_put(w->fp, s.ptr, s.len)) ? -1 : 0;
}
#define sp_str(fp, s) sp_str_w(w, (s))

/* "No space left on device (ENOSPC)": the errno's text, and its name for the
 * ones a full or missing spool directory gives */
static const char *errno_text(int e, char *buf, size_t cap)
{
    const char *name = e == ENOSPC ? "ENOSPC" : e == EDQUOT ? "EDQUOT" : e == EFBIG ? "EFBIG" : e == EIO ? "EIO"
                     : e == EROFS ? "EROFS" : e == EACCES ? "EACCES" : e == ENOENT ? "ENOENT" : NULL;
    if (name)
        snprintf(buf, cap, "%s (%s)", strerror(e), name);
    else
        snprintf(buf, cap, "%s", strerror(e));
    return buf;
}

static char spool_dir[PB_ERR_FILE_MAX]; /* where spools go: $TMPDIR, else /tmp */

/* a spool write error is the worker's error, whatever the decoder was
 * doing: "merge: io: <spool dir>: cannot write a merge worker's spool: ..." */
static pb_status merge_spool_fail(pb_error *err, int e)
{
    char b[128];
    pb_error_init(err, "merge", spool_dir);
    return pb_fail_nooff(err, PB_ERR_IO, "cannot write a merge worker's spool: %s", errno_text(e ? e : EIO, b, sizeof b));
}

static pb_status sp_io(pb_sample_sink *self)
{
    spooler *w = (spooler *)self->ctx;
    return merge_spool_fail(self->err, w->werrno);
}

static pb_status sp_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_ATTR;
    if (sp_put(w->fp, &t, 1) || sp_str(w->fp, pb_str_c(key)) || sp_str(w->fp, v))
        return sp_io(self);
    return PB_OK;
}
static pb_status merge_sp_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_FRAME, k = (unsigned char)fr->kind;
    if (sp_put(w->fp, &t, 1) || sp_put(w->fp, &k, 1) || sp_str(w->fp, fr->package) || sp_str(w->fp, fr->name) ||
        sp_str(w->fp, fr->file) || sp_put(w->fp, &fr->line, sizeof fr->line) ||
        sp_put(w->fp, &fr->first_line, sizeof fr->first_line) || sp_str(w->fp, fr->own) ||
        sp_str(w->fp, fr->verbatim) || sp_put(w->fp, &fr->address, sizeof fr->address) ||
        sp_put(w->fp, &fr->place, sizeof fr->place) || sp_str(w->fp, fr->sys_name))
        return sp_io(self);
    *id = w->nframes++;
    return PB_OK;
}
static pb_status sp_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_THREAD, has = label ? 1 : 0;
    if (sp_put(w->fp, &t, 1) || sp_put(w->fp, &key, sizeof key) || sp_put(w->fp, &pid, sizeof pid) ||
        sp_put(w->fp, &ppid, sizeof ppid) || sp_put(w->fp, &has, 1) || (label && sp_str(w->fp, pb_str_c(label))))
        return sp_io(self);
    return PB_OK;
}
static pb_status sp_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_SAMPLE;
    if (sp_put(w->fp, &t, 1) || sp_put(w->fp, &key, sizeof key) || sp_put(w->fp, &depth, sizeof depth) ||
        (depth && sp_put(w->fp, ids, depth * sizeof *ids)) || sp_put(w->fp, &weight, sizeof weight) ||
        sp_put(w->fp, &ts, sizeof ts))
        return sp_io(self);
    return PB_OK;
}
static pb_status sp_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_NOTE;
    if (sp_put(w->fp, &t, 1) || sp_str(w->fp, pb_str_c(kind)) || sp_str(w->fp, a) || sp_str(w->fp, b) ||
        sp_put(w->fp, &n, sizeof n))
        return sp_io(self);
    return PB_OK;
}
static pb_status sp_finish(pb_sample_sink *self)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_END;
    return sp_put(w->fp, &t, 1) ? sp_io(self) : PB_OK;
}

/* a record of the threads' facts: its type, the thread key, then up to three fields as they are in
 * memory (one program, one machine) */
static pb_status sp_keyed(pb_sample_sink *self, unsigned char t, uint64_t key, const void *a, size_t na, const void *b,
                          size_t nb, const void *c, size_t nc)
{
    spooler *w = (spooler *)self->ctx;
    if (sp_put(w->fp, &t, 1) || sp_put(w->fp, &key, sizeof key) || sp_put(w->fp, a, na) ||
        (nb && sp_put(w->fp, b, nb)) || (nc && sp_put(w->fp, c, nc)))
        return sp_io(self);
    return PB_OK;
}

/* a span: thread key, frame id, begin and end (ns) */
static pb_status sp_span(pb_sample_sink *self, uint64_t key, uint32_t frame, uint64_t begin, uint64_t end)
{
    return sp_keyed(self, R_SPAN, key, &frame, sizeof frame, &begin, sizeof begin, &end, sizeof end);
}
/* the next sample's tags: opcode, status */
static pb_status sp_sample_tags(pb_sample_sink *self, pb_str op, pb_str status)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_TAGS;
    if (sp_put(w->fp, &t, 1) || sp_str(w->fp, op) || sp_str(w->fp, status))
        return sp_io(self);
    return PB_OK;
}

/* a call graph's records: the structs as they are */
static pb_status sp_graph_func(pb_sample_sink *self, uint64_t key, const pb_graph_func *g)
{
    return sp_keyed(self, R_GFUNC, key, g, sizeof *g, NULL, 0, NULL, 0);
}
static pb_status sp_graph_edge(pb_sample_sink *self, uint64_t key, const pb_graph_edge *g)
{
    return sp_keyed(self, R_GEDGE, key, g, sizeof *g, NULL, 0, NULL, 0);
}
static pb_status sp_graph_line(pb_sample_sink *self, uint64_t key, uint32_t frame, uint32_t line, uint64_t cost)
{
    return sp_keyed(self, R_GLINE, key, &frame, sizeof frame, &line, sizeof line, &cost, sizeof cost);
}

static const pb_sample_sink spool_calls = {.attribute = sp_attribute, .frame = merge_sp_frame, .thread = sp_thread,
    .sample = sp_sample, .note = sp_note, .finish = sp_finish, .graph_func = sp_graph_func,
    .graph_edge = sp_graph_edge, .graph_line = sp_graph_line, .span = sp_span, .sample_tags = sp_sample_tags};

/* the worker's end of its pipe */
static int pipe_all(int fd, const void *p, size_t n)
{
    const char *c = (const char *)p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

typedef struct {
    int fd;
    uint64_t acc, cur; /* bytes of files finished, of the file being read */
} w_progress;

static void worker_progress(void *ud, uint64_t done, uint64_t total)
{
    w_progress *p = (w_progress *)ud;
    unsigned char msg[1 + sizeof(uint64_t)];
    uint64_t v;
    (void)total;
    if (done < p->cur) /* the next file of a run (or of the share) */
        p->acc += p->cur;
    p->cur = done;
    v = p->acc + p->cur;
    msg[0] = P_PROGRESS;
    memcpy(msg + 1, &v, sizeof v);
    (void)pipe_all(p->fd, msg, sizeof msg);
}

static void worker_report_error(int fd, const pb_error *err, pb_status st)
{
    /* P_ERROR, status, has_offset (bit 1: needs_graph_target), offset, then format, file, message as (u32 length, bytes) */
    unsigned char buf[1 + 4 + 4 + 8 + 3 * 4 + 64 + PB_ERR_FILE_MAX + PB_ERR_MSG_MAX];
    size_t o = 0, k;
    int32_t s32 = (int32_t)(err->status ? err->status : st ? st : PB_ERR_IO),
            h = (err->has_offset ? 1 : 0) | (err->needs_graph_target ? 2 : 0); /* bit 1: pb_error.needs_graph_target */
    const char *str[3];
    str[0] = err->format ? err->format : "merge";
    str[1] = err->file;
    str[2] = err->message;
    buf[o++] = P_ERROR;
    memcpy(buf + o, &s32, 4), o += 4;
    memcpy(buf + o, &h, 4), o += 4;
    memcpy(buf + o, &err->offset, 8), o += 8;
    for (k = 0; k < 3; k++) {
        uint32_t len = (uint32_t)strnlen(str[k], k == 0 ? 63 : k == 1 ? PB_ERR_FILE_MAX - 1 : PB_ERR_MSG_MAX - 1);
        memcpy(buf + o, &len, 4), o += 4;
        memcpy(buf + o, str[k], len), o += len;
    }
    (void)pipe_all(fd, buf, o);
}

/* the worker: decode inputs [from, to) into fp; the outcome goes to pipe fd;
 * want (W_*): what the parent's consumer takes besides stacks (call graphs,
 * else the decoder refuses them; spans; sample tags; every sample with its
 * own time) */
static int worker(FILE *fp, int fd, const char *const *in, size_t from, size_t to, const pb_options *opt,
                  unsigned want)
{
    spooler sw, *w = &sw;
    pb_error err;
    pb_options o;
    w_progress prog;
    size_t i;
    long end;
    memset(&sw, 0, sizeof sw);
    sw.fp = fp;
    memset(&prog, 0, sizeof prog);
    prog.fd = fd;
    pb_options_copy(&o, opt);
    /* never the caller's hook here: its code (a Perl sub) runs in the parent */
    o.progress = opt->progress ? worker_progress : NULL;
    o.progress_ud = &prog;
    pb_error_init(&err, "merge", in[from]);
    pb_sample_sink_init(&sw.ss, &spool_calls, &sw, &err, NULL);
    if (!(want & W_GRAPH))
        sw.ss.graph_func = NULL, sw.ss.graph_edge = NULL, sw.ss.graph_line = NULL;
    if (!(want & W_SPAN))
        sw.ss.span = NULL;
    if (!(want & W_TAGS))
        sw.ss.sample_tags = NULL;
    sw.ss.each_tick = (want & W_EACH_TICK) ? 1 : 0;
    for (i = from; i < to; i++) {
        unsigned char t = R_INPUT, d = R_DONE;
        uint64_t idx = i;
        pb_status st;
        if (sp_put(fp, &t, 1) || sp_put(fp, &idx, sizeof idx)) {
            merge_spool_fail(&err, sw.werrno);
            worker_report_error(fd, &err, PB_ERR_IO);
            return 2;
        }
        st = pb_decode_samples_file(in[i], PB_FMT_UNKNOWN, &o, &sw.ss, "a merge", &err);
        if (st == PB_OK && (sp_put(fp, &d, 1) || sp_put(fp, &idx, sizeof idx)))
            st = PB_ERR_IO;
        if (sw.wfail) /* the spool's error, not what the decoder made of it */
            st = merge_spool_fail(&err, sw.werrno);
        if (st != PB_OK) {
            worker_report_error(fd, &err, st);
            return 2;
        }
        if (prog.cur) {
            prog.acc += prog.cur;
            prog.cur = 0;
        }
    }
    errno = 0;
    if (fflush(fp) != 0 || ferror(fp) || (end = ftell(fp)) < 0) {
        merge_spool_fail(&err, errno);
        worker_report_error(fd, &err, PB_ERR_IO);
        return 2;
    }
    {
        unsigned char msg[1 + sizeof(uint64_t)];
        uint64_t v = (uint64_t)end;
        msg[0] = P_OK;
        memcpy(msg + 1, &v, sizeof v);
        if (pipe_all(fd, msg, sizeof msg) < 0)
            return 1;
    }
    return 0;
}
#undef sp_put
#undef sp_str

/* reading a spool back */
typedef struct {
    FILE *fp;
    char *buf[6];
    size_t cap[6];
    unsigned char none[6]; /* the last string read into buf[k] was no string (a NULL pointer) */
} spool_rd;

static int rd(spool_rd *r, void *p, size_t n) { return n == 0 || fread(p, 1, n, r->fp) == n ? 0 : -1; }
static int merge_rd_str(spool_rd *r, int k, pb_str *s)
{
    uint64_t n;
    unsigned char u;
    if (rd(r, &n, sizeof n) || rd(r, &u, 1) || n > SIZE_MAX - 1 ||
        pb_grow((void **)&r->buf[k], &r->cap[k], (size_t)n + 1, 1) < 0 || rd(r, r->buf[k], (size_t)n))
        return -1;
    r->buf[k][n] = '\0';
    *s = pb_str_make(r->buf[k], (size_t)n, u == 1);
    r->none[k] = u == 2;
    return 0;
}

/* replay a worker's spool, which must hold inputs [from, to), each ended by
 * its completion record */
/* Over 80 lines, kept whole: one loop over the spool's record kinds, each a few lines; the record
 * format reads best in one place. */
static pb_status merge_replay(merger *m, spool_rd *r, size_t from, size_t to, uint32_t **map, size_t *cmap, pb_error *err)
{
    int c;
    uint32_t nf = 0, *ids = NULL;
    size_t cids = 0, next = from;
    int open_input = 0;
    pb_status st = PB_OK;
#define BAD() do { st = pb_fail_nooff(err, PB_ERR_IO, "a merge worker's spool is cut short or damaged (input %zu of %zu)", next + 1, to); goto out; } while (0)
    while (st == PB_OK && (c = fgetc(r->fp)) != EOF) {
        if (c != R_INPUT && !open_input)
            BAD();
        switch (c) {
        case R_INPUT: {
            uint64_t idx;
            if (open_input || rd(r, &idx, sizeof idx) || idx != next)
                BAD();
            open_input = 1;
            st = mark_input(m, (uint32_t)idx);
            break;
        }
        case R_DONE: {
            uint64_t idx;
            if (rd(r, &idx, sizeof idx) || idx != next)
                BAD();
            open_input = 0;
            next++;
            break;
        }
        case R_ATTR: {
            pb_str k, v;
            if (merge_rd_str(r, 0, &k) || merge_rd_str(r, 1, &v))
                BAD();
            st = mg_attribute(&m->ss, k.ptr, v);
            break;
        }
        case R_FRAME: {
            pb_frame fr;
            unsigned char kind;
            memset(&fr, 0, sizeof fr);
            if (rd(r, &kind, 1) || merge_rd_str(r, 0, &fr.package) || merge_rd_str(r, 1, &fr.name) || merge_rd_str(r, 2, &fr.file) ||
                rd(r, &fr.line, sizeof fr.line) || rd(r, &fr.first_line, sizeof fr.first_line) ||
                merge_rd_str(r, 3, &fr.own) || merge_rd_str(r, 4, &fr.verbatim) || rd(r, &fr.address, sizeof fr.address) ||
                rd(r, &fr.place, sizeof fr.place) || merge_rd_str(r, 5, &fr.sys_name))
                BAD();
            fr.kind = (pb_frame_kind)kind;
            if (pb_grow((void **)map, cmap, (size_t)nf + 1, sizeof **map) < 0) {
                st = M_OOM(m);
                break;
            }
            st = pb_sample_pass_frame(&m->ss, &fr, &(*map)[nf]);
            nf++;
            break;
        }
        case R_THREAD: {
            uint64_t key;
            uint32_t pid, ppid;
            unsigned char has;
            pb_str l;
            if (rd(r, &key, sizeof key) || rd(r, &pid, sizeof pid) || rd(r, &ppid, sizeof ppid) || rd(r, &has, 1) ||
                (has && merge_rd_str(r, 0, &l)))
                BAD();
            st = mg_thread(&m->ss, key, pid, ppid, has ? l.ptr : NULL);
            break;
        }
        case R_SAMPLE: {
            uint64_t key, weight, ts;
            uint32_t depth, i;
            if (rd(r, &key, sizeof key) || rd(r, &depth, sizeof depth) || depth > (1u << 20) ||
                pb_grow((void **)&ids, &cids, (size_t)depth + 1, sizeof *ids) < 0 ||
                rd(r, ids, depth * sizeof *ids) || rd(r, &weight, sizeof weight) || rd(r, &ts, sizeof ts))
                BAD();
            for (i = 0; i < depth; i++) {
                if (ids[i] >= nf)
                    BAD();
                ids[i] = (*map)[ids[i]];
            }
            st = mg_sample(&m->ss, key, ids, depth, weight, ts);
            break;
        }
        case R_NOTE: {
            pb_str k, a, b;
            uint32_t n;
            if (merge_rd_str(r, 0, &k) || merge_rd_str(r, 1, &a) || merge_rd_str(r, 2, &b) || rd(r, &n, sizeof n))
                BAD();
            st = pb_sample_pass_note(&m->ss, k.ptr, a, b, n);
            break;
        }
        case R_SPAN: {
            uint64_t key, b, e;
            uint32_t frame;
            if (!m->ss.span || rd(r, &key, sizeof key) || rd(r, &frame, sizeof frame) || rd(r, &b, sizeof b) ||
                rd(r, &e, sizeof e) || frame >= nf)
                BAD();
            st = mg_span(&m->ss, key, (*map)[frame], b, e);
            break;
        }
        case R_TAGS: {
            pb_str op, status;
            if (!m->ss.sample_tags || merge_rd_str(r, 0, &op) || merge_rd_str(r, 1, &status))
                BAD();
            if (r->none[1])
                status.ptr = NULL; /* the source records no thread state (samples.h) */
            st = pb_sample_pass_sample_tags(&m->ss, op, status);
            break;
        }
        case R_GFUNC:
        case R_GEDGE: {
            uint64_t key;
            pb_graph_func gf;
            pb_graph_edge ge;
            if (!m->ss.graph_func || rd(r, &key, sizeof key) ||
                (c == R_GFUNC ? rd(r, &gf, sizeof gf) : rd(r, &ge, sizeof ge)))
                BAD();
            if (c == R_GFUNC) {
                if (gf.frame >= nf)
                    BAD();
                gf.frame = (*map)[gf.frame];
                st = mg_graph_func(&m->ss, key, &gf);
            } else {
                if (ge.callee >= nf || (ge.caller != PB_GRAPH_ROOT && ge.caller >= nf))
                    BAD();
                ge.callee = (*map)[ge.callee];
                if (ge.caller != PB_GRAPH_ROOT)
                    ge.caller = (*map)[ge.caller];
                st = mg_graph_edge(&m->ss, key, &ge);
            }
            break;
        }
        case R_GLINE: {
            uint64_t key, cost;
            uint32_t frame, line;
            if (!m->ss.graph_func || rd(r, &key, sizeof key) || rd(r, &frame, sizeof frame) ||
                rd(r, &line, sizeof line) || rd(r, &cost, sizeof cost) || frame >= nf)
                BAD();
            st = mg_graph_line(&m->ss, key, (*map)[frame], line, cost);
            break;
        }
        case R_END:
            break;
        default:
            BAD();
        }
    }
    if (st == PB_OK && (ferror(r->fp) || open_input || next != to))
        BAD();
out:
#undef BAD
    free(ids);
    return st;
}

/* what the parent knows of one worker */
typedef struct {
    pid_t pid;
    int fd;             /* read end of its pipe, -1 once at EOF */
    FILE *spool;
    size_t from, to;
    uint64_t done;      /* progress: bytes read */
    int reported;       /* 0 none, 1 ok, 2 error */
    uint64_t spool_bytes;
    pb_error err;       /* its error (reported == 2) */
    unsigned char *buf; /* pipe bytes not parsed yet */
    size_t len, cap;
} m_worker;

/* the caller's progress hook, in this process: bytes read by all workers */
typedef struct {
    const m_worker *wk;
    size_t nw;
    const pb_options *opt;
    uint64_t total, last;
} m_progress;

static void report_progress(m_progress *p)
{
    uint64_t sum = 0;
    size_t i;
    if (!p->opt->progress)
        return;
    for (i = 0; i < p->nw; i++)
        sum += p->wk[i].done;
    if (sum != p->last) { /* each worker's source says at most one per MiB */
        p->last = sum;
        p->opt->progress(p->opt->progress_ud, sum, p->total);
    }
}

/* parse whole messages in w->buf; -1 on a malformed message */
static int parse_pipe(m_worker *w, m_progress *prog)
{
    size_t o = 0;
    while (o < w->len) {
        unsigned char t = w->buf[o];
        size_t avail = w->len - o;
        if (t == P_PROGRESS || t == P_OK) {
            uint64_t v;
            if (avail < 9)
                break;
            memcpy(&v, w->buf + o + 1, 8);
            if (t == P_PROGRESS) {
                w->done = v;
                report_progress(prog);
            } else {
                if (w->reported)
                    return -1;
                w->reported = 1;
                w->spool_bytes = v;
            }
            o += 9;
        } else if (t == P_ERROR) {
            size_t p = o + 17, k;
            uint32_t len[3];
            const unsigned char *str[3];
            int32_t s32, h;
            if (avail < 17)
                break;
            for (k = 0; k < 3; k++) {
                if (w->len - p < 4)
                    break;
                memcpy(&len[k], w->buf + p, 4);
                if (len[k] > (k == 0 ? 63u : k == 1 ? PB_ERR_FILE_MAX - 1u : PB_ERR_MSG_MAX - 1u))
                    return -1;
                if (w->len - p - 4 < len[k])
                    break;
                str[k] = w->buf + p + 4;
                p += 4 + len[k];
            }
            if (k < 3)
                break; /* not all here yet */
            if (w->reported)
                return -1;
            memcpy(&s32, w->buf + o + 1, 4);
            memcpy(&h, w->buf + o + 5, 4);
            {
                char fmt[64], file[PB_ERR_FILE_MAX];
                pb_format f;
                memcpy(fmt, str[0], len[0]);
                fmt[len[0]] = '\0';
                memcpy(file, str[1], len[1]);
                file[len[1]] = '\0';
                f = pb_format_from_name(fmt);
                /* format names are static strings: the parent's own */
                pb_error_init(&w->err, f != PB_FMT_UNKNOWN ? pb_format_name(f) : !strcmp(fmt, "profbridge") ? "profbridge"
                                       : "merge", file);
                memcpy(w->err.message, str[2], len[2]);
                w->err.message[len[2]] = '\0';
            }
            memcpy(&w->err.offset, w->buf + o + 9, 8);
            w->err.has_offset = h & 1;
            w->err.needs_graph_target = (h >> 1) & 1;
            w->err.status = s32 > PB_OK && s32 <= PB_ERR_USAGE ? (pb_status)s32 : PB_ERR_IO;
            w->reported = 2;
            o = p;
        } else {
            return -1;
        }
    }
    memmove(w->buf, w->buf + o, w->len - o);
    w->len -= o;
    return 0;
}

/* read every worker's pipe until all are at EOF, passing progress on */
static void collect_pipes(m_worker *wk, size_t nw, const pb_options *opt, uint64_t total)
{
    size_t open_n = nw, i;
    struct pollfd *pf = (struct pollfd *)calloc(nw, sizeof *pf);
    m_progress prog = {.wk = wk, .nw = nw, .opt = opt, .total = total, .last = 0};
    for (i = 0; i < nw; i++)
        if (wk[i].fd < 0)
            open_n--;
    while (open_n > 0) {
        size_t np = 0;
        if (pf) {
            for (i = 0; i < nw; i++) {
                pf[i].fd = wk[i].fd;
                pf[i].events = POLLIN;
                pf[i].revents = 0;
            }
            np = nw;
            if (poll(pf, (nfds_t)np, -1) < 0 && errno != EINTR)
                break;
        }
        for (i = 0; i < nw; i++) {
            ssize_t k;
            if (wk[i].fd < 0 || (pf && !pf[i].revents))
                continue;
            if (pb_grow((void **)&wk[i].buf, &wk[i].cap, wk[i].len + 4096, 1) < 0) {
                close(wk[i].fd), wk[i].fd = -1, open_n--;
                wk[i].reported = -1;
                continue;
            }
            k = read(wk[i].fd, wk[i].buf + wk[i].len, 4096);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                close(wk[i].fd);
                wk[i].fd = -1;
                open_n--;
                if (wk[i].len)
                    wk[i].reported = -1; /* a message cut short */
                continue;
            }
            wk[i].len += (size_t)k;
            if (parse_pipe(&wk[i], &prog) < 0) {
                close(wk[i].fd), wk[i].fd = -1, open_n--;
                wk[i].reported = -1;
            }
        }
    }
    free(pf);
}

/* a spool file in $TMPDIR, unlinked at once */
static FILE *merge_spool_open(pb_error *err)
{
    const char *dir = getenv("TMPDIR");
    char *path;
    size_t dl;
    int fd, e;
    FILE *fp;
    char b[128];
    if (!dir || !*dir)
        dir = "/tmp";
    dl = strlen(dir);
    snprintf(spool_dir, sizeof spool_dir, "%s", dir);
    if (!(path = (char *)malloc(dl + 40))) {
        pb_fail(err, PB_ERR_LIMIT, 0, "out of memory while merging profiles");
        return NULL;
    }
    snprintf(path, dl + 40, "%s%sprofbridge-merge-XXXXXX", dir, dir[dl - 1] == '/' ? "" : "/");
    fd = mkstemp(path);
    if (fd < 0) {
        e = errno;
        pb_fail_nooff(err, PB_ERR_IO, "cannot make a merge worker's spool file in %s: %s", dir, errno_text(e, b, sizeof b));
        free(path);
        return NULL;
    }
    unlink(path);
    free(path);
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (!(fp = fdopen(fd, "w+b"))) {
        e = errno;
        close(fd);
        pb_fail_nooff(err, PB_ERR_IO, "cannot make a merge worker's spool file in %s: %s", dir, errno_text(e, b, sizeof b));
        return NULL;
    }
    return fp;
}

/* Over 80 lines, kept whole: start, feed, wait for and replay the workers in one place, so that
 * every worker started is waited for on every error path. */
static pb_status merge_jobs(merger *m, const char *const *in, size_t n, const pb_options *opt, int jobs,
                            pb_error *err)
{
    m_worker *wk;
    size_t w, nw = (size_t)jobs < n ? (size_t)jobs : n;
    pb_status st = PB_OK;
    uint32_t *map = NULL;
    size_t cmap = 0;
    spool_rd r;
    uint64_t total = 0;
    pid_t parent = getpid();
    wk = (m_worker *)calloc(nw, sizeof *wk);
    if (!wk)
        return M_OOM(m);
    for (w = 0; w < nw; w++)
        wk[w].fd = -1;
    if (opt->progress) {
        size_t i;
        for (i = 0; i < n && total != UINT64_MAX; i++) {
            struct stat sb;
            if (stat(in[i], &sb) == 0 && S_ISREG(sb.st_mode))
                total += (uint64_t)sb.st_size;
            else
                total = UINT64_MAX;
        }
    }
    fflush(NULL);
    for (w = 0; w < nw; w++) {
        int pfd[2];
        wk[w].from = w * n / nw;
        wk[w].to = (w + 1) * n / nw;
        if (!(wk[w].spool = merge_spool_open(err))) {
            st = err->status;
            break;
        }
        if (pipe(pfd) < 0) {
            st = pb_fail_nooff(err, PB_ERR_IO, "cannot make a pipe to a merge worker: %s", strerror(errno));
            break;
        }
        wk[w].pid = fork();
        if (wk[w].pid < 0) {
            st = pb_fail_nooff(err, PB_ERR_IO, "cannot start a merge worker: %s", strerror(errno));
            close(pfd[0]);
            close(pfd[1]);
            wk[w].pid = 0;
            break;
        }
        if (wk[w].pid == 0) {
            size_t k;
            close(pfd[0]);
            for (k = 0; k < w; k++) /* the other workers' pipes are not this one's */
                if (wk[k].fd >= 0)
                    close(wk[k].fd);
#ifdef __linux__
            prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
            if (getppid() != parent) /* the parent died before prctl */
                _exit(1);
            _exit(worker(wk[w].spool, pfd[1], in, wk[w].from, wk[w].to, opt,
                         (m->ss.graph_func ? W_GRAPH : 0u) | (m->ss.span ? W_SPAN : 0u) |
                             (m->ss.sample_tags ? W_TAGS : 0u) | (m->ss.each_tick ? W_EACH_TICK : 0u)));
        }
        close(pfd[1]);
        wk[w].fd = pfd[0];
        (void)fcntl(wk[w].fd, F_SETFD, FD_CLOEXEC);
    }
    collect_pipes(wk, nw, opt, total);
    /* wait for every worker started, whatever happened */
    for (w = 0; w < nw; w++) {
        int ws = 0;
        if (wk[w].pid <= 0)
            continue;
        while (waitpid(wk[w].pid, &ws, 0) < 0 && errno == EINTR)
            ;
        if (st != PB_OK)
            continue;
        if (wk[w].reported == 2) {
            /* the worker's own error: the earliest input's wins (workers go in input order) */
            *err = wk[w].err;
            st = err->status;
        } else if (!(WIFEXITED(ws) && WEXITSTATUS(ws) == 0) || wk[w].reported != 1) {
            pb_error_init(err, "merge", in[wk[w].from]);
            if (WIFSIGNALED(ws))
                st = pb_fail_nooff(err, PB_ERR_IO, "a merge worker (inputs %zu to %zu) was killed by signal %d",
                             wk[w].from + 1, wk[w].to, WTERMSIG(ws));
            else
                st = pb_fail_nooff(err, PB_ERR_IO, "a merge worker (inputs %zu to %zu) ended (exit status %d) without "
                             "reporting its inputs complete", wk[w].from + 1, wk[w].to,
                             WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
        }
    }
    memset(&r, 0, sizeof r);
    for (w = 0; w < nw && st == PB_OK; w++) {
        struct stat sb;
        memset(&sb, 0, sizeof sb);
        if (fflush(wk[w].spool) != 0 || fstat(fileno(wk[w].spool), &sb) != 0 ||
            (uint64_t)sb.st_size != wk[w].spool_bytes) {
            pb_error_init(err, "merge", in[wk[w].from]);
            st = pb_fail_nooff(err, PB_ERR_IO, "a merge worker's spool holds %lld bytes, not the %llu it wrote",
                         (long long)sb.st_size, (unsigned long long)wk[w].spool_bytes);
            break;
        }
        rewind(wk[w].spool);
        r.fp = wk[w].spool;
        pb_error_init(err, "merge", in[wk[w].from]);
        st = merge_replay(m, &r, wk[w].from, wk[w].to, &map, &cmap, err);
    }
    for (w = 0; w < nw; w++) {
        if (wk[w].spool)
            fclose(wk[w].spool);
        if (wk[w].fd >= 0)
            close(wk[w].fd);
        free(wk[w].buf);
    }
    PB_FREE_ALL(r.buf[0], r.buf[1], r.buf[2], r.buf[3], r.buf[4], r.buf[5], map, wk);
    return st;
}

static const pb_sample_sink merge_calls = {.attribute = mg_attribute, .frame = pb_sample_pass_frame,
    .thread = mg_thread, .sample = mg_sample, .note = pb_sample_pass_note, .finish = mg_finish,
    .graph_func = mg_graph_func, .graph_edge = mg_graph_edge, .graph_line = mg_graph_line, .span = mg_span,
    .sample_tags = pb_sample_pass_sample_tags};

static pb_status merge_into(merger *m, const char *const *in, size_t n, const pb_options *opt, pb_error *err)
{
    size_t i;
    pb_status st;
    pb_sample_sink_init(&m->ss, &merge_calls, m, err, m->target->cleanups);
    m->ss.next = m->target;
    m->ss.each_tick = m->target->each_tick;
    if (!m->target->graph_func) /* a stack consumer: a call-graph input is refused (formats.c) */
        m->ss.graph_func = NULL, m->ss.graph_edge = NULL, m->ss.graph_line = NULL;
    if (!m->target->span) /* not wanted: the decoder must not fold spans for it */
        m->ss.span = NULL;
    if (!m->target->sample_tags)
        m->ss.sample_tags = NULL;
    m->err = err;
    m->in = in;
    m->next_pid = 1;
    /* every weight is ns in the result */
    if ((st = m->target->attribute(m->target, "sample_weight_unit", pb_str_c("ns"))) != PB_OK)
        return st;
    if (!m->diff && opt && opt->jobs > 1 && n > 1) {
        if ((st = merge_jobs(m, in, n, opt, opt->jobs, err)) != PB_OK)
            return st;
        return m->target->finish(m->target);
    }
    for (i = 0; i < n; i++) {
        if ((st = mark_input(m, (uint32_t)i)) != PB_OK)
            return st;
        if (m->diff && (st = m->target->attribute(m->target, "diff_side", pb_str_c(i ? "after" : "before"))) != PB_OK)
            return st;
        st = pb_decode_samples_file(in[i], PB_FMT_UNKNOWN, opt, &m->ss, "a merge", err);
        if (st != PB_OK)
            return st;
    }
    return m->target->finish(m->target);
}

static void merger_free(merger *m)
{
    pb_strtab_free(&m->labels);
    PB_FREE_ALL(m->label_out, m->threads, m->pids);
    PB_INDEX_FREE_ALL(&m->tix, &m->pix);
}

/* every input's row yields one of `yields` (a directory is a run of
 * trace files) */
static int all_yield(const char *const *in, size_t n, unsigned yields)
{
    size_t i;
    for (i = 0; i < n; i++) {
        pb_format_info info;
        pb_error e;
        pb_error_init(&e, "merge", in[i]);
        memset(&info, 0, sizeof info);
        if (pb_detect_file(in[i], &info, &e) != PB_OK || !pb_format_get(info.format) ||
            !(pb_format_get(info.format)->yields & yields))
            return 0;
    }
    return n > 0;
}

/* the row of every input's format when they all have one and the same, else NULL */
static const pb_format_row *common_row(const char *const *in, size_t n)
{
    const pb_format_row *row = NULL;
    size_t i;
    for (i = 0; i < n; i++) {
        pb_format_info info;
        pb_error e;
        pb_error_init(&e, "merge", in[i]);
        memset(&info, 0, sizeof info);
        if (pb_detect_file(in[i], &info, &e) != PB_OK || !pb_format_get(info.format) ||
            (row && row != pb_format_get(info.format)))
            return NULL;
        row = pb_format_get(info.format);
    }
    return row;
}

/* a file that a format's row says is no file on disk (fake_file,
 * format_row.h): IS_FAKE, as that format's decoder flags it in a convert */
static uint32_t merged_fid_flags(void *ctx, pb_str file)
{
    (void)ctx;
    if (pb_format_fake_file(file))
        return PB_FID_IS_FAKE | PB_FID_VIA_SUB;
    return PB_FID_VIA_STMT | PB_FID_VIA_SUB;
}

/* every input's samples folded into chunks for sink (merge.h) */
pb_status pb_merge_chunks(const char *const *in, size_t n, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    pb_fold *fold;
    pb_fold_config cfg;
    merger m;
    pb_status st;
    memset(&cfg, 0, sizeof cfg);
    cfg.source_format = "merged";
    cfg.ticks_per_sec = 1000000000u; /* ns: the merged weights' unit */
    cfg.ticks_per_weight = 1;
    /* every input is sampled (PB_YIELDS_SAMPLES) or a call graph: the
     * merged chunks' time is then the sampled time too (fold_samples.h,
     * sampled_spans); all call graphs: no call events (call_graph) */
    cfg.sampled_spans = all_yield(in, n, PB_YIELDS_SAMPLES | PB_YIELDS_GRAPH);
    cfg.call_graph = all_yield(in, n, PB_YIELDS_GRAPH);
    if (cfg.call_graph) {
        /* call graphs of one format: the result is that format's graph (its
         * language names its functions in the call-graph targets) */
        const pb_format_row *row = common_row(in, n);
        if (row)
            cfg.source_format = row->name;
    }
    cfg.no_run_length = 1; /* the inputs' runs have no one length: "for X (of X)" */
    cfg.fid_flags = merged_fid_flags;
    cfg.max_threads = opt ? opt->max_threads : 0;
    memset(&m, 0, sizeof m);
    if (!(fold = pb_fold_new(&cfg, sink, err))) {
        st = err->status ? err->status : PB_ERR_LIMIT;
    } else {
        m.target = pb_fold_sample_sink(fold);
        m.graph_only = cfg.call_graph;
        st = merge_into(&m, in, n, opt, err);
    }
    pb_fold_free(fold);
    merger_free(&m);
    return st;
}

/* every input's samples, merged, into target (merge.h) */
pb_status pb_merge_samples(const char *const *in, size_t n, const pb_options *opt, int diff, pb_sample_sink *target,
                           pb_error *err)
{
    merger m;
    pb_status st;
    memset(&m, 0, sizeof m);
    m.diff = diff;
    m.target = target;
    m.own_clocks = 1;
    st = merge_into(&m, in, n, opt, err);
    merger_free(&m);
    return st;
}

/* ---- each trace counted once -----------------------------------------------
 * An input of a format whose row has run_files stands for trace files: a run (a directory, or a
 * root's first file) for all of its run's, a single trace for itself.  The
 * shell hands a run's first file and its members alike (trace.out.*), a
 * user may give a directory and its files, or one file by two paths.  Every
 * trace file (device and inode) is read once: the inputs that stand for the
 * most files go first; an input all of whose files an earlier one covers is
 * left out (its traces are in the result, once); one that shares some but not
 * all of its files with another is refused (a usage error: the result would
 * count those twice).  Other formats' inputs are each one profile: the same
 * file given twice counts twice, as asked. */
typedef struct {
    uint64_t dev, ino;
} m_key;
typedef struct {
    m_key *keys;
    size_t n, cap;
    pb_index ix;
} m_keyset;
static uint32_t merge_key_hash(m_key k) { return pb_mix64(k.ino ^ (k.dev << 40) ^ (k.dev >> 24)); }
static uint32_t merge_h_key(const void *ctx, uint32_t i) { return merge_key_hash(((const m_keyset *)ctx)->keys[i]); }
/* 1 when k is in the set; else 0, and with add, put it there (-1: out of memory) */
static int keyset_has(m_keyset *s, m_key k, int add)
{
    size_t j;
    uint32_t i;
    if (pb_index_reserve(&s->ix, s->n, merge_h_key, s) < 0)
        return -1;
    PB_INDEX_FIND(&s->ix, merge_key_hash(k), j, i, s->keys[i].dev == k.dev && s->keys[i].ino == k.ino);
    if (i != PB_INDEX_NONE)
        return 1;
    if (add) {
        if (pb_grow((void **)&s->keys, &s->cap, s->n + 1, sizeof *s->keys) < 0)
            return -1;
        s->keys[s->n] = k;
        pb_index_set(&s->ix, j, (uint32_t)s->n++);
    }
    return 0;
}

typedef struct {
    size_t input;
    size_t nfiles;
    m_key *files;
    const pb_format_row *row; /* the format whose run they are */
} m_traces;

static int cmp_traces(const void *a, const void *b)
{
    const m_traces *x = (const m_traces *)a, *y = (const m_traces *)b;
    if (x->nfiles != y->nfiles)
        return x->nfiles > y->nfiles ? -1 : 1;
    return x->input < y->input ? -1 : x->input > y->input;
}

/* the trace files input path stands for in the format of row, whose
 * profiles may span several files (0: none, not that format; -1: out of
 * memory) */
static int run_files(const pb_format_row *row, const char *path, const pb_options *opt, m_key **files, size_t *n)
{
    char **run = NULL;
    size_t nrun = 0, i;
    pb_error e;
    struct stat sb;
    int r;
    *files = NULL;
    *n = 0;
    if (!row || !row->run)
        return 0;
    pb_error_init(&e, row->name, path);
    r = row->run(path, NULL, opt, &run, &nrun, &e);
    if (r < 0)
        return 0; /* the decoder will say why */
    if (r == 0) {
        pb_format_info info;
        memset(&info, 0, sizeof info);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || pb_detect_file(path, &info, &e) != PB_OK ||
            info.format != row->format)
            return 0;
        if (!(*files = (m_key *)malloc(sizeof **files)))
            return -1;
        (*files)[0].dev = (uint64_t)sb.st_dev;
        (*files)[0].ino = (uint64_t)sb.st_ino;
        *n = 1;
        return 0;
    }
    if (!(*files = (m_key *)calloc(nrun ? nrun : 1, sizeof **files))) {
        row->run_free(run, nrun);
        return -1;
    }
    for (i = 0; i < nrun; i++)
        if (stat(run[i], &sb) == 0) {
            (*files)[*n].dev = (uint64_t)sb.st_dev;
            (*files)[(*n)++].ino = (uint64_t)sb.st_ino;
        }
    row->run_free(run, nrun);
    return 0;
}

/* the same for every format whose rows have runs (format_row.h); *rowp: the
 * one that claims path */
static int trace_files(const char *path, const pb_options *opt, m_key **files, size_t *n, const pb_format_row **rowp)
{
    int f, r;
    for (f = 1; f < PB_FMT_COUNT; f++) {
        const pb_format_row *row = pb_format_get((pb_format)f);
        if (!row->run)
            continue;
        if ((r = run_files(row, path, opt, files, n)) != 0 || *n) {
            *rowp = row;
            return r;
        }
        free(*files);
    }
    *files = NULL;
    return 0;
}

/* in[0..n) without the inputs whose traces another input reads:
 * *keep (malloc'ed) and *nkeep; an error for a partial overlap */
static pb_status once_each(const char *const *in, size_t n, const pb_options *opt, const char ***keep, size_t *nkeep,
                           pb_error *err)
{
    m_traces *t = (m_traces *)calloc(n ? n : 1, sizeof *t);
    unsigned char *drop = (unsigned char *)calloc(n ? n : 1, 1);
    size_t i, j, nt = 0;
    m_keyset seen;
    pb_status st = PB_OK;
    memset(&seen, 0, sizeof seen);
    *nkeep = 0;
    *keep = (const char **)calloc(n ? n : 1, sizeof **keep);
    if (!t || !drop || !*keep) {
        st = pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory while merging profiles");
        goto out;
    }
    for (i = 0; i < n; i++) {
        m_key *f;
        size_t nf;
        const pb_format_row *row = NULL;
        if (trace_files(in[i], opt, &f, &nf, &row) < 0) {
            st = pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory while merging profiles");
            goto out;
        }
        if (!nf) {
            free(f);
            continue;
        }
        t[nt].input = i;
        t[nt].files = f;
        t[nt].row = row;
        t[nt++].nfiles = nf;
    }
    qsort(t, nt, sizeof *t, cmp_traces);
    for (i = 0; i < nt && st == PB_OK; i++) {
        size_t had = 0;
        for (j = 0; j < t[i].nfiles; j++) {
            int r = keyset_has(&seen, t[i].files[j], 0);
            if (r < 0) {
                st = pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory while merging profiles");
                goto out;
            }
            had += (size_t)r;
        }
        if (had == t[i].nfiles) {
            drop[t[i].input] = 1; /* every trace of it is read with another input */
            continue;
        }
        if (had) {
            pb_error_init(err, "merge", in[t[i].input]);
            st = pb_fail_nooff(err, PB_ERR_USAGE,
                               "shares %zu of its %zu %s trace files with another input, but not all: "
                               "give each run once (its directory or its first file), or each trace file once",
                               had, t[i].nfiles, t[i].row->title);
            goto out;
        }
        for (j = 0; j < t[i].nfiles; j++)
            if (keyset_has(&seen, t[i].files[j], 1) < 0) {
                st = pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory while merging profiles");
                goto out;
            }
    }
    for (i = *nkeep = 0; i < n; i++)
        if (!drop[i])
            (*keep)[(*nkeep)++] = in[i];
out:
    for (i = 0; i < nt; i++)
        free(t[i].files);
    pb_index_free(&seen.ix);
    PB_FREE_ALL(t, drop, seen.keys);
    if (st != PB_OK) {
        free((void *)*keep);
        *keep = NULL;
    }
    return st;
}

pb_status pb_merge_inputs(const char *const *in, size_t n, const pb_options *opt, const char ***keep, size_t *nkeep,
                          pb_error *err)
{
    *keep = NULL;
    *nkeep = 0;
    if (!n)
        return pb_fail_nooff(err, PB_ERR_USAGE, "no profiles to merge");
    return once_each(in, n, opt, keep, nkeep, err);
}
