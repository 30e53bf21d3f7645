/* merge.c - many profiles folded into one (see merge.h). */
#include <stdlib.h>
#include <string.h>
#include "merge.h"
#include "collapsed.h"
#include "output.h"
#include "present.h"
#include "util.h"
#include "write_nytprof.h"
#include "write_pprof.h"
#include "write_speedscope.h"

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
    uint32_t *tslot;         /* open addressing: index + 1 */
    size_t tslots;
    uint32_t *pids;          /* pids given out (open addressing, 0 empty) */
    size_t npids, pslots;
    uint32_t next_pid;
    int diff;                /* two inputs: tell the target which side is coming */
} merger;

#define M_OOM(m) pb_fail((m)->err, PB_ERR_LIMIT, 0, "out of memory while merging profiles")

static uint32_t th_hash(uint32_t input, uint64_t key) { return pb_mix64(key ^ ((uint64_t)input << 40)) ^ input; }

static int pid_used(const merger *m, uint32_t pid)
{
    size_t j;
    if (!m->pslots)
        return 0;
    for (j = pb_mix64(pid) & (m->pslots - 1); m->pids[j]; j = (j + 1) & (m->pslots - 1))
        if (m->pids[j] == pid)
            return 1;
    return 0;
}

static int pid_add(merger *m, uint32_t pid)
{
    size_t j;
    if ((m->npids + 1) * 2 > m->pslots) {
        size_t ns = m->pslots ? m->pslots * 2 : 64, i;
        uint32_t *t = (uint32_t *)calloc(ns, sizeof *t);
        if (!t)
            return -1;
        for (i = 0; i < m->pslots; i++)
            if (m->pids[i]) {
                size_t k = pb_mix64(m->pids[i]) & (ns - 1);
                while (t[k])
                    k = (k + 1) & (ns - 1);
                t[k] = m->pids[i];
            }
        free(m->pids);
        m->pids = t;
        m->pslots = ns;
    }
    for (j = pb_mix64(pid) & (m->pslots - 1); m->pids[j]; j = (j + 1) & (m->pslots - 1))
        if (m->pids[j] == pid)
            return 0;
    m->pids[j] = pid;
    m->npids++;
    return 0;
}

/* the consumer's key for this input's thread (new threads get the next key) */
static pb_status map_thread(merger *m, uint64_t key, uint64_t *out, int *fresh)
{
    uint32_t h = th_hash(m->input, key);
    size_t j;
    *fresh = 0;
    if ((m->nthreads + 1) * 2 > m->tslots) {
        size_t ns = m->tslots ? m->tslots * 2 : 64, i;
        uint32_t *t = (uint32_t *)calloc(ns, sizeof *t);
        if (!t)
            return M_OOM(m);
        for (i = 0; i < m->nthreads; i++) {
            size_t k = th_hash(m->threads[i].input, m->threads[i].key) & (ns - 1);
            while (t[k])
                k = (k + 1) & (ns - 1);
            t[k] = (uint32_t)i + 1;
        }
        free(m->tslot);
        m->tslot = t;
        m->tslots = ns;
    }
    for (j = h & (m->tslots - 1); m->tslot[j]; j = (j + 1) & (m->tslots - 1)) {
        const m_thread *t = &m->threads[m->tslot[j] - 1];
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
    m->tslot[j] = (uint32_t)++m->nthreads;
    *fresh = 1;
    return PB_OK;
}

static pb_status mg_attribute(pb_sample_sink *self, const char *key, pb_str v)
{
    merger *m = (merger *)self->ctx;
    if (!strcmp(key, "sample_interval_us")) {
        char b[32];
        snprintf(b, sizeof b, "%.*s", (int)(v.len < 31 ? v.len : 31), v.ptr ? v.ptr : "");
        m->scale = strtoull(b, NULL, 10) * 1000u;
        if (!m->scale)
            m->scale = 1;
        return PB_OK; /* the merged weights are ns, whatever the interval */
    }
    if (m->input > 0 || !strcmp(key, "source_format") || !strcmp(key, "clock"))
        return PB_OK; /* the first input's facts head the result */
    return m->target->attribute(m->target, key, v);
}

static pb_status mg_frame(pb_sample_sink *self, const pb_frame *fr, uint32_t *id)
{
    merger *m = (merger *)self->ctx;
    return m->target->frame(m->target, fr, id);
}

static pb_status mg_thread(pb_sample_sink *self, uint64_t key, uint32_t pid, uint32_t ppid, const char *label)
{
    merger *m = (merger *)self->ctx;
    uint64_t out;
    int fresh;
    pb_status st;
    if ((st = map_thread(m, key, &out, &fresh)) != PB_OK)
        return st;
    if (fresh) {
        /* a pid another input used first gets the next free number */
        if (pid_used(m, pid)) {
            while (pid_used(m, m->next_pid) || m->next_pid == 0)
                m->next_pid++;
            pid = m->next_pid++;
        }
        if (pid_add(m, pid) < 0)
            return M_OOM(m);
    }
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
        while (pid_used(m, m->next_pid) || m->next_pid == 0)
            m->next_pid++;
        if (pid_add(m, m->next_pid) < 0)
            return M_OOM(m);
        if ((st = m->target->thread(m->target, out, m->next_pid++, 0, NULL)) != PB_OK)
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

static pb_status mg_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    merger *m = (merger *)self->ctx;
    return m->target->note(m->target, kind, a, b, n);
}

static pb_status mg_finish(pb_sample_sink *self)
{
    (void)self; /* each input ends here; the target finishes after the last */
    return PB_OK;
}

static pb_status merge_into(merger *m, const char *const *in, size_t n, const pb_options *opt, pb_error *err)
{
    size_t i;
    pb_status st;
    m->ss.attribute = mg_attribute;
    m->ss.frame = mg_frame;
    m->ss.thread = mg_thread;
    m->ss.sample = mg_sample;
    m->ss.note = mg_note;
    m->ss.finish = mg_finish;
    m->ss.span = NULL;
    m->ss.err = err;
    m->ss.ctx = m;
    m->ss.cleanups = m->target->cleanups;
    m->err = err;
    m->next_pid = 1;
    /* every weight is ns in the result */
    if ((st = m->target->attribute(m->target, "sample_weight_unit", pb_str_c("ns"))) != PB_OK)
        return st;
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
    free(m->threads);
    free(m->tslot);
    free(m->pids);
}

static pb_status merge_nytprof(const char *const *in, size_t n, const pb_options *opt, const char *out_path,
                               int level, void (*warn)(void *, const char *), void *ud, pb_error *err)
{
    pb_nytprof_writer_opts wo;
    pb_nytprof_writer *w;
    pb_present *pr;
    pb_fold *fold;
    pb_fold_config cfg;
    pb_options po;
    merger m;
    pb_status st;
    char *base = NULL;
    const char *slash = strrchr(in[0], '/');
    pb_nytprof_writer_opts_init(&wo);
    if (level >= 0)
        wo.compress_level = level;
    if (opt)
        wo.max_line = opt->max_line;
    wo.warn = warn;
    wo.warn_ud = ud;
    if (!(w = pb_nytprof_writer_open(out_path, &wo, err)))
        return err->status;
    if (opt)
        po = *opt;
    else
        pb_options_init(&po);
    if (!po.source_base && slash) {
        size_t bl = (size_t)(slash - in[0]);
        if ((base = (char *)malloc(bl + 2)) != NULL) {
            memcpy(base, bl ? in[0] : "/", bl ? bl : 1);
            base[bl ? bl : 1] = '\0';
            po.source_base = base;
        }
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.source_format = "merged";
    cfg.ticks_per_sec = 1000000000u; /* ns: the merged weights' unit */
    cfg.ticks_per_weight = 1;
    memset(&m, 0, sizeof m);
    st = PB_OK;
    pr = pb_present_new(pb_nytprof_writer_sink(w), &po, err);
    fold = pr ? pb_fold_new(&cfg, pb_present_sink(pr), err) : NULL;
    if (!fold) {
        st = err->status ? err->status : PB_ERR_LIMIT;
    } else {
        m.target = pb_fold_sample_sink(fold);
        st = merge_into(&m, in, n, &po, err);
        if (st == PB_OK)
            st = pb_present_finish(pr);
    }
    pb_fold_free(fold);
    pb_present_free(pr);
    merger_free(&m);
    free(base);
    if (st != PB_OK) {
        if (st == PB_ERR_ABORT && pb_nytprof_writer_failed(w))
            return pb_nytprof_writer_close(w, err);
        pb_nytprof_writer_abort(w);
        return st;
    }
    return pb_nytprof_writer_close(w, err);
}

pb_status pb_merge_files(const char *const *in, size_t n, const pb_options *opt, const char *to,
                         const char *out_path, int compress_level, void (*warn)(void *ud, const char *msg),
                         void *ud, pb_error *err)
{
    pb_output *out;
    FILE *fp;
    pb_error werr;
    merger m;
    pb_status st;
    pb_collapse *c = NULL;
    pb_pprof *pp = NULL;
    pb_speedscope *sc = NULL;
    int is_pprof, is_ss;
    pb_error_init(err, "merge", out_path);
    if (!n)
        return pb_fail_nooff(err, PB_ERR_USAGE, "no profiles to merge");
    if (!strcmp(to, "nytprof"))
        return merge_nytprof(in, n, opt, out_path, compress_level, warn, ud, err);
    is_pprof = !strcmp(to, "pprof");
    is_ss = !strcmp(to, "speedscope");
    if (!is_pprof && !is_ss && strcmp(to, "collapsed"))
        return pb_fail_nooff(err, PB_ERR_USAGE, "cannot merge into '%s' (nytprof, collapsed, pprof, speedscope)", to);
    pb_error_init(&werr, to, strcmp(out_path, "-") == 0 ? "standard output" : out_path);
    out = pb_output_open(out_path, PB_OUT_STDOUT, &werr);
    if (!out || !(fp = pb_output_stdio(out, &werr))) {
        pb_output_abort(out);
        *err = werr;
        return err->status;
    }
    memset(&m, 0, sizeof m);
    if (is_pprof)
        pp = pb_pprof_new(fp, &werr);
    else if (is_ss)
        sc = pb_speedscope_new(fp, "merged profile", &werr);
    else
        c = pb_collapse_new(fp, &werr);
    if (!pp && !c && !sc) {
        pb_output_abort(out);
        *err = werr;
        return err->status;
    }
    m.target = is_pprof ? pb_pprof_sample_sink(pp) : is_ss ? pb_speedscope_sample_sink(sc) : pb_collapse_sample_sink(c);
    st = merge_into(&m, in, n, opt, err);
    pb_pprof_free(pp);
    pb_speedscope_free(sc);
    pb_collapse_free(c);
    merger_free(&m);
    if (st != PB_OK) {
        pb_output_abort(out);
        if (werr.status != PB_OK)
            *err = werr;
        return st;
    }
    if (pb_output_commit(out, 0, &werr) != PB_OK) {
        *err = werr;
        return err->status;
    }
    return PB_OK;
}

pb_status pb_diff_pprof(const char *before, const char *after, const pb_options *opt, const char *out_path,
                        pb_error *err)
{
    pb_output *out;
    FILE *fp;
    pb_error werr;
    merger m;
    pb_status st;
    pb_pprof *pp;
    const char *in[2];
    in[0] = before;
    in[1] = after;
    pb_error_init(&werr, "pprof", strcmp(out_path, "-") == 0 ? "standard output" : out_path);
    out = pb_output_open(out_path, PB_OUT_STDOUT, &werr);
    if (!out || !(fp = pb_output_stdio(out, &werr)) || !(pp = pb_pprof_new(fp, &werr))) {
        pb_output_abort(out);
        *err = werr;
        return err->status;
    }
    memset(&m, 0, sizeof m);
    m.target = pb_pprof_sample_sink(pp);
    m.diff = 1;
    st = merge_into(&m, in, 2, opt, err);
    pb_pprof_free(pp);
    merger_free(&m);
    if (st != PB_OK) {
        pb_output_abort(out);
        if (werr.status != PB_OK)
            *err = werr;
        return st;
    }
    if (pb_output_commit(out, 0, &werr) != PB_OK) {
        *err = werr;
        return err->status;
    }
    return PB_OK;
}
