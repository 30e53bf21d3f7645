/* merge.c - many profiles folded into one (see merge.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "merge.h"
#include "convert.h"
#include "convert_samples.h"
#include "output.h"
#include "util.h"

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
    struct m_label {
        char *label;
        uint32_t hash;
        uint64_t out;
    } *labels;               /* thread label -> the consumer's thread */
    size_t nlabels, clabels;
    pb_index lix;
} merger;

#define M_OOM(m) pb_fail((m)->err, PB_ERR_LIMIT, 0, "out of memory while merging profiles")

static uint32_t th_hash(uint32_t input, uint64_t key) { return pb_mix64(key ^ ((uint64_t)input << 40)) ^ input; }
static uint32_t h_thread(const void *ctx, uint32_t i)
{
    const m_thread *t = &((const merger *)ctx)->threads[i];
    return th_hash(t->input, t->key);
}
static uint32_t h_pid(const void *ctx, uint32_t i) { return pb_mix64(((const merger *)ctx)->pids[i]); }
static uint32_t h_label(const void *ctx, uint32_t i) { return ((const merger *)ctx)->labels[i].hash; }

/* 1 when pid is given out already, else 0 with *slot the empty slot its probe ends on */
static int pid_find(const merger *m, uint32_t pid, size_t *slot)
{
    size_t j;
    uint32_t i;
    if (!m->pix.cap)
        return 0;
    for (j = pb_index_first(&m->pix, pb_mix64(pid)); (i = pb_index_at(&m->pix, j)) != PB_INDEX_NONE;
         j = pb_index_next(&m->pix, j))
        if (m->pids[i] == pid)
            return 1;
    *slot = j;
    return 0;
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
    if (pb_index_reserve(&m->tix, m->nthreads, h_thread, m) < 0)
        return M_OOM(m);
    for (j = pb_index_first(&m->tix, th_hash(m->input, key)); (i = pb_index_at(&m->tix, j)) != PB_INDEX_NONE;
         j = pb_index_next(&m->tix, j)) {
        const m_thread *t = &m->threads[i];
        if (t->input == m->input && t->key == key) {
            *out = t->out;
            return PB_OK;
        }
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
    uint32_t h = pb_hash_bytes(label, strlen(label)), i;
    size_t j;
    *known = 0;
    if (pb_index_reserve(&m->lix, m->nlabels, h_label, m) < 0)
        return M_OOM(m);
    for (j = pb_index_first(&m->lix, h); (i = pb_index_at(&m->lix, j)) != PB_INDEX_NONE; j = pb_index_next(&m->lix, j))
        if (m->labels[i].hash == h && !strcmp(m->labels[i].label, label)) {
            m->threads[m->nthreads - 1].out = m->labels[i].out;
            *known = 1;
            return PB_OK;
        }
    if (pb_grow((void **)&m->labels, &m->clabels, m->nlabels + 1, sizeof *m->labels) < 0 ||
        !(m->labels[m->nlabels].label = (char *)malloc(strlen(label) + 1)))
        return M_OOM(m);
    strcpy(m->labels[m->nlabels].label, label);
    m->labels[m->nlabels].hash = h;
    m->labels[m->nlabels].out = out;
    pb_index_set(&m->lix, j, (uint32_t)m->nlabels++);
    return PB_OK;
}

static pb_status mg_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    merger *m = (merger *)self->ctx;
    if (!strcmp(key, "sample_interval_us")) {
        char b[32];
        m->scale = strtoull(pb_sample_attr_text(v, b, sizeof b), NULL, 10) * 1000u;
        if (!m->scale)
            m->scale = 1;
        return PB_OK; /* the merged weights are ns, whatever the interval */
    }
    if (m->input > 0 || !strcmp(key, "source_format") || !strcmp(key, "clock"))
        return PB_OK; /* the first input's facts head the result */
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

static pb_status mg_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                           uint64_t ts)
{
    merger *m = (merger *)self->ctx;
    uint64_t out;
    int fresh;
    pb_status st;
    if ((st = map_thread(m, key, &out, &fresh)) != PB_OK)
        return st;
    if (fresh) {
        /* a thread the decoder never announced: give it a pid of its own */
        uint32_t pid;
        if (pid_take(m, &pid, 1) < 0)
            return M_OOM(m);
        if ((st = m->target->thread(m->target, out, pid, 0, NULL)) != PB_OK)
            return st;
    }
    if (m->scale > 1 && weight > UINT64_MAX / m->scale)
        return pb_fail(m->err, PB_ERR_LIMIT, 0, "a sample's weight does not fit 64 bits of ns");
    /* every input's clock starts at 0: inputs come from different clocks
     * (monotonic, none), and NYTProf's reader adds up each process's span
     * from the last PID_START */
    if (ts) {
        if (!m->ts_base)
            m->ts_base = ts;
        ts = ts > m->ts_base ? ts - m->ts_base : 0;
        if (m->scale > 1)
            ts = ts <= UINT64_MAX / 1000u ? ts * 1000u : UINT64_MAX;
    }
    return m->target->sample(m->target, out, ids, depth, weight * m->scale, ts);
}

static pb_status mg_finish(pb_sample_sink *self)
{
    (void)self; /* each input ends here; the target finishes after the last */
    return PB_OK;
}


/* ---- --jobs: decoding in worker processes --------------------------------
 * Worker w decodes the inputs [w*n/J, (w+1)*n/J) into a spool file (an
 * unlinked temp file) of what its decoders said: one record per sink call.
 * The parent then replays the spools in input order through the merge
 * layer above, so the result is the same as with one process; only the
 * decoding runs in parallel.  Records: a tag byte, then fields in the
 * machine's own order (writer and reader are one program on one machine). */
enum { R_INPUT = 'I', R_ATTR = 'A', R_FRAME = 'F', R_THREAD = 'T', R_SAMPLE = 'S', R_NOTE = 'N', R_END = 'E',
       R_ERROR = 'X' };

typedef struct {
    pb_sample_sink ss;
    FILE *fp;
    uint32_t nframes;
} spooler;

static int sp_put(FILE *fp, const void *p, size_t n) { return fwrite(p, 1, n, fp) == n ? 0 : -1; }
static int sp_str(FILE *fp, pb_str s)
{
    uint64_t n = s.len;
    unsigned char u = s.utf8 ? 1 : 0;
    return sp_put(fp, &n, sizeof n) || sp_put(fp, &u, 1) || (n && sp_put(fp, s.ptr, s.len)) ? -1 : 0;
}
static pb_status sp_io(pb_sample_sink *self)
{
    return pb_fail(self->err, PB_ERR_IO, 0, "cannot write a merge worker's spool: %s", strerror(errno));
}

static pb_status sp_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_ATTR;
    if (sp_put(w->fp, &t, 1) || sp_str(w->fp, pb_str_c(key)) || sp_str(w->fp, v))
        return sp_io(self);
    return PB_OK;
}
static pb_status sp_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    spooler *w = (spooler *)self->ctx;
    unsigned char t = R_FRAME, k = (unsigned char)fr->kind;
    if (sp_put(w->fp, &t, 1) || sp_put(w->fp, &k, 1) || sp_str(w->fp, fr->package) || sp_str(w->fp, fr->name) ||
        sp_str(w->fp, fr->file) || sp_put(w->fp, &fr->line, sizeof fr->line) ||
        sp_put(w->fp, &fr->first_line, sizeof fr->first_line) || sp_str(w->fp, fr->own))
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

static const pb_sample_sink spool_calls = {.attribute = sp_attribute, .frame = sp_frame, .thread = sp_thread, .sample = sp_sample, .note = sp_note, .finish = sp_finish};

/* the worker: decode its inputs into fp; an error becomes an R_ERROR record */
static int worker(FILE *fp, const char *const *in, size_t from, size_t to, const pb_options *opt)
{
    spooler w;
    pb_error err;
    size_t i;
    memset(&w, 0, sizeof w);
    w.fp = fp;
    pb_sample_sink_init(&w.ss, &spool_calls, &w, &err, NULL);
    for (i = from; i < to; i++) {
        unsigned char t = R_INPUT;
        uint64_t idx = i;
        pb_status st;
        if (sp_put(fp, &t, 1) || sp_put(fp, &idx, sizeof idx))
            return 1;
        st = pb_decode_samples_file(in[i], PB_FMT_UNKNOWN, opt, &w.ss, "a merge", &err);
        if (st != PB_OK) {
            unsigned char x = R_ERROR;
            int32_t s32 = (int32_t)(err.status ? err.status : st);
            sp_put(fp, &x, 1);
            sp_put(fp, &s32, sizeof s32);
            sp_put(fp, &err.offset, sizeof err.offset);
            sp_put(fp, &err.has_offset, sizeof err.has_offset);
            sp_str(fp, pb_str_c(err.format ? err.format : "merge"));
            sp_str(fp, pb_str_c(err.file));
            sp_str(fp, pb_str_c(err.message));
            fflush(fp);
            return 2;
        }
    }
    return fflush(fp) == 0 ? 0 : 1;
}

/* reading a spool back */
typedef struct {
    FILE *fp;
    char *buf[4];
    size_t cap[4];
} spool_rd;

static int rd(spool_rd *r, void *p, size_t n) { return n == 0 || fread(p, 1, n, r->fp) == n ? 0 : -1; }
static int rd_str(spool_rd *r, int k, pb_str *s)
{
    uint64_t n;
    unsigned char u;
    if (rd(r, &n, sizeof n) || rd(r, &u, 1) || n > SIZE_MAX - 1 ||
        pb_grow((void **)&r->buf[k], &r->cap[k], (size_t)n + 1, 1) < 0 || rd(r, r->buf[k], (size_t)n))
        return -1;
    r->buf[k][n] = '\0';
    *s = pb_str_make(r->buf[k], (size_t)n, u);
    return 0;
}

static pb_status replay(merger *m, spool_rd *r, uint32_t **map, size_t *cmap, pb_error *err)
{
    int c;
    uint32_t nf = 0, *ids = NULL;
    size_t cids = 0;
    pb_status st = PB_OK;
#define BAD() do { st = pb_fail(err, PB_ERR_IO, 0, "a merge worker's spool is cut short"); goto out; } while (0)
    while (st == PB_OK && (c = fgetc(r->fp)) != EOF) {
        switch (c) {
        case R_INPUT: {
            uint64_t idx;
            if (rd(r, &idx, sizeof idx))
                BAD();
            m->input = (uint32_t)idx;
            m->scale = 1;
            m->ts_base = 0;
            break;
        }
        case R_ATTR: {
            pb_str k, v;
            if (rd_str(r, 0, &k) || rd_str(r, 1, &v))
                BAD();
            st = mg_attribute(&m->ss, k.ptr, v);
            break;
        }
        case R_FRAME: {
            pb_frame fr;
            unsigned char kind;
            memset(&fr, 0, sizeof fr);
            if (rd(r, &kind, 1) || rd_str(r, 0, &fr.package) || rd_str(r, 1, &fr.name) || rd_str(r, 2, &fr.file) ||
                rd(r, &fr.line, sizeof fr.line) || rd(r, &fr.first_line, sizeof fr.first_line) ||
                rd_str(r, 3, &fr.own))
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
                (has && rd_str(r, 0, &l)))
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
            if (rd_str(r, 0, &k) || rd_str(r, 1, &a) || rd_str(r, 2, &b) || rd(r, &n, sizeof n))
                BAD();
            st = pb_sample_pass_note(&m->ss, k.ptr, a, b, n);
            break;
        }
        case R_END:
            break;
        case R_ERROR: {
            int32_t s32;
            uint64_t off;
            int has;
            pb_str fmt, file, msg;
            if (rd(r, &s32, sizeof s32) || rd(r, &off, sizeof off) || rd(r, &has, sizeof has) || rd_str(r, 0, &fmt) ||
                rd_str(r, 1, &file) ||
                rd_str(r, 2, &msg))
                BAD();
            /* the worker's error, as the input's decoder gave it */
            {
                pb_format f = pb_format_from_name(fmt.ptr);
                pb_error_init(err, f != PB_FMT_UNKNOWN ? pb_format_name(f)
                                   : !strcmp(fmt.ptr, "profbridge") ? "profbridge" : "merge", file.ptr);
            }
            err->offset = off;
            err->has_offset = has;
            snprintf(err->message, sizeof err->message, "%s", msg.ptr);
            err->status = (pb_status)s32;
            st = err->status ? err->status : PB_ERR_IO;
            break;
        }
        default:
            BAD();
        }
    }
out:
#undef BAD
    free(ids);
    return st;
}

static pb_status merge_jobs(merger *m, const char *const *in, size_t n, const pb_options *opt, int jobs,
                            pb_error *err)
{
    FILE **spool;
    pid_t *pid;
    size_t w, nw = (size_t)jobs < n ? (size_t)jobs : n;
    pb_status st = PB_OK;
    uint32_t *map = NULL;
    size_t cmap = 0;
    spool_rd r;
    spool = (FILE **)calloc(nw, sizeof *spool);
    pid = (pid_t *)calloc(nw, sizeof *pid);
    if (!spool || !pid) {
        free(spool);
        free(pid);
        return M_OOM(m);
    }
    fflush(NULL);
    for (w = 0; w < nw; w++) {
        if (!(spool[w] = tmpfile())) {
            st = pb_fail(err, PB_ERR_IO, 0, "cannot make a merge worker's spool file: %s", strerror(errno));
            break;
        }
        pid[w] = fork();
        if (pid[w] < 0) {
            st = pb_fail(err, PB_ERR_IO, 0, "cannot start a merge worker: %s", strerror(errno));
            break;
        }
        if (pid[w] == 0)
            _exit(worker(spool[w], in, w * n / nw, (w + 1) * n / nw, opt));
    }
    /* wait for every worker started, whatever happened */
    for (w = 0; w < nw; w++) {
        int ws;
        if (pid[w] > 0) {
            while (waitpid(pid[w], &ws, 0) < 0 && errno == EINTR)
                ;
            if (st == PB_OK && !(WIFEXITED(ws) && WEXITSTATUS(ws) <= 2))
                st = pb_fail(err, PB_ERR_IO, 0, "a merge worker died (%s %d)",
                             WIFSIGNALED(ws) ? "signal" : "exit status", WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
        }
    }
    memset(&r, 0, sizeof r);
    for (w = 0; w < nw && st == PB_OK; w++) {
        rewind(spool[w]);
        r.fp = spool[w];
        st = replay(m, &r, &map, &cmap, err);
    }
    for (w = 0; w < nw; w++)
        if (spool[w])
            fclose(spool[w]);
    PB_FREE_ALL(r.buf[0], r.buf[1], r.buf[2], r.buf[3], map, spool, pid);
    return st;
}

static const pb_sample_sink merge_calls = {.attribute = mg_attribute, .frame = pb_sample_pass_frame,
    .thread = mg_thread, .sample = mg_sample, .note = pb_sample_pass_note, .finish = mg_finish};

static pb_status merge_into(merger *m, const char *const *in, size_t n, const pb_options *opt, pb_error *err)
{
    size_t i;
    pb_status st;
    pb_sample_sink_init(&m->ss, &merge_calls, m, err, m->target->cleanups);
    m->ss.next = m->target;
    m->err = err;
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
        m->input = (uint32_t)i;
        m->scale = 1;
        m->ts_base = 0;
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
    size_t i;
    for (i = 0; i < m->nlabels; i++)
        free(m->labels[i].label);
    PB_FREE_ALL(m->labels, m->threads, m->pids);
    pb_index_free(&m->lix);
    pb_index_free(&m->tix);
    pb_index_free(&m->pix);
}

/* a file named "<...>" (CPython's "<frozen runpy>", "<string>") is no file on
 * disk: IS_FAKE, as the Tachyon decoder flags it in a convert */
static uint32_t merged_fid_flags(void *ctx, pb_str file)
{
    (void)ctx;
    if (file.len >= 2 && file.ptr[0] == '<' && file.ptr[file.len - 1] == '>')
        return PB_FID_IS_FAKE | PB_FID_VIA_SUB;
    return PB_FID_VIA_STMT | PB_FID_VIA_SUB;
}

static pb_status merge_nytprof(const char *const *in, size_t n, const pb_options *opt, const char *out_path,
                               int level, void (*warn)(void *, const char *), void *ud, pb_error *err)
{
    pb_nytprof_target t;
    pb_fold *fold;
    pb_fold_config cfg;
    merger m;
    pb_status st = pb_nytprof_target_open(&t, out_path, level, opt, in[0], 0, warn, ud, err);
    if (st != PB_OK)
        return st;
    memset(&cfg, 0, sizeof cfg);
    cfg.source_format = "merged";
    cfg.ticks_per_sec = 1000000000u; /* ns: the merged weights' unit */
    cfg.ticks_per_weight = 1;
    cfg.fid_flags = merged_fid_flags;
    memset(&m, 0, sizeof m);
    if (!(fold = pb_fold_new(&cfg, pb_present_sink(t.pr), err))) {
        st = err->status ? err->status : PB_ERR_LIMIT;
    } else {
        m.target = pb_fold_sample_sink(fold);
        st = merge_into(&m, in, n, &t.opt, err);
    }
    pb_fold_free(fold);
    merger_free(&m);
    return pb_nytprof_target_close(&t, st, err);
}

typedef struct {
    const char *const *in;
    size_t n;
    const pb_options *opt;
    const char *to;         /* "collapsed", "pprof", "speedscope" */
    int diff;
} merge_args;

/* the consumer the target names, behind the merge layer, into fp */
static pb_status merge_write(FILE *fp, void *ctx, pb_error *werr, pb_error *err)
{
    const merge_args *a = (const merge_args *)ctx;
    merger m;
    pb_status st;
    const pb_stack_output *o = pb_stack_output_named(a->to);
    void *w;
    memset(&m, 0, sizeof m);
    m.diff = a->diff;
    if (!(w = o->open(fp, "merged profile", werr)))
        return werr->status;
    m.target = o->sink(w);
    st = merge_into(&m, a->in, a->n, a->opt, err);
    o->free(w);
    merger_free(&m);
    return st;
}

pb_status pb_merge_files(const char *const *in, size_t n, const pb_options *opt, const char *to,
                         const char *out_path, int compress_level, void (*warn)(void *ud, const char *msg),
                         void *ud, pb_error *err)
{
    merge_args a;
    pb_error_init(err, "merge", out_path);
    if (!n)
        return pb_fail_nooff(err, PB_ERR_USAGE, "no profiles to merge");
    if (!strcmp(to, "nytprof"))
        return merge_nytprof(in, n, opt, out_path, compress_level, warn, ud, err);
    if (!pb_stack_output_named(to))
        return pb_fail_nooff(err, PB_ERR_USAGE, "cannot merge into '%s' (nytprof, collapsed, pprof, speedscope)", to);
    a.in = in;
    a.n = n;
    a.opt = opt;
    a.to = to;
    a.diff = 0;
    return pb_output_with(out_path, to, merge_write, &a, err);
}

pb_status pb_diff_pprof(const char *before, const char *after, const pb_options *opt, const char *out_path,
                        pb_error *err)
{
    merge_args a;
    const char *in[2];
    in[0] = before;
    in[1] = after;
    a.in = in;
    a.n = 2;
    a.opt = opt;
    a.to = "pprof";
    a.diff = 1;
    return pb_output_with(out_path, "pprof", merge_write, &a, err);
}
