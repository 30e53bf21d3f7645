/* read_pynytprof.c - Pynytprof output, all four dialects
 * (the Pynytprof format spec), turned into a valid NYTProf chunk stream.
 *
 * Dialects (pb_pynytprof_dialect() tells them apart from the first bytes):
 *   A  "NYTPROF\0", u32 5, u64 hlen, then framed H A F D C S E
 *   B  NYTProf-style text header, a blank line, then framed F S D C E
 *   C  text header, raw P (u32 pid, u32 ppid, f64), framed S F D(statement log) C, raw E
 *   D  text header, raw P (u32 LE pid/ppid, f64), then NYTProf varint tokens (@ p ...)
 * Framed chunk = u8 tag + u32 LE payload length + payload; integers little-endian;
 * strings NUL-terminated; ticks are the header's ticks_per_sec (100 ns).
 *
 * The reader fills the profile model (model.h; `pyn` is this reader's state,
 * r->m its model): files (pb_model_file_new, NEW_FID at once), subs
 * (pb_model_sub_new, SUB_INFO at once), the C records as exact call edges
 * (pb_model_emit_exact_callers at the end), and the S records and the
 * statement log as statement counts (pb_model_statements, which charges the
 * statement budget).  Header ATTRIBUTEs, PID chunks and dialect D's tokens
 * other than NEW_FID are sent as read.
 *
 * Mapping (documented for the POD):
 *   - file fids are renumbered densely 1.. in order of first appearance (fid 0 -> 1).
 *     Dialect C writes no string table, so its files are named
 *     "pynytprof-fid<N>-path-not-recorded" (N = our fid) and an ATTRIBUTE
 *     source_path_lost_fid<N> says so.
 *   - S record (fid, line, calls, inc_ticks, exc_ticks): NYTProf counts one statement
 *     per TIME_LINE and a DISCOUNT only lowers the next one's count to 0 (two give -1
 *     and a warning), so a count of N needs exactly N TIME_LINEs.  We emit N counted
 *     TIME_LINEs whose ticks sum to exc_ticks (NYTProf line time is exclusive);
 *     ticks beyond I32 per chunk go into extra DISCOUNT+TIME_LINE pairs (count 0).
 *     inc_ticks goes to ATTRIBUTE "pynytprof_inc_ticks:<fid>:<line>".
 *   - Dialect C: the D statement log gives the TIME_LINE sequence (one per executed
 *     statement, in execution order); where the log's count for a line equals the S
 *     record's calls, the S exc_ticks are spread over those statements in proportion to
 *     the logged durations; lines whose log count disagrees are emitted from S alone.
 *   - D names -> subs "main::<name>" ('.' -> '::'), SUB_INFO (fid 1, lines 0-0:
 *     Pynytprof records no definition lines; present.c finds them in the source it
 *     embeds).  Dialect C has no names: subs are called "main::pynytprof_sid_<sid>".
 *   - C edges (caller_sid, callee_sid, calls, ticks, sub_ticks): ticks are the summed
 *     durations of the calls, each call timed on its own (a recursive call's time
 *     is also inside its caller's); sub_ticks == ticks in every file Pynytprof
 *     wrote, so it is not used.  The edges are the model's (one per caller -> callee
 *     pair) and sent at the end as SUB_CALLERS on fid 1, line 0 (no call site
 *     recorded), with NYTProf's meaning (pb_model_emit_exact_callers):
 *       exclusive ticks of sub s, exact: E(s) = sum of its in-edge ticks - sum of its
 *         out-edge ticks (time in s's calls minus time in the calls they made), 0 when
 *         that is negative (<module>, whose own call is never timed);
 *       a self edge (s -> s) is recursion, as NYTProf counts it: incl 0, its ticks in
 *         reci_time (rec_depth 0: not recorded); the other edges incl = ticks;
 *       E(s) is shared among s's in-edges: without a self edge by their ticks; with
 *         one, each other edge by its call count (every call of s taken to cost the
 *         same), at most its ticks, and the self edge the rest.
 *   - PID_START/PID_END synthesised where missing (pid 0; start = basetime/start_time;
 *     end = start + the largest of: the lines' exclusive ticks, the subs' exclusive
 *     ticks (each sum is time the run spent), the longest non-recursive edge).
 *     Line and recursive edge inclusive ticks overlap themselves and are not used.
 *   - ATTRIBUTEs source_format=pynytprof, source_dialect=A|B|C|D; :nv_size forced to 8;
 *     :ticks_per_sec kept when valid, else 10000000; :cumulative_overhead_ticks=0 added.
 *
 * Names here: pyn = this reader's state (Pynytprof reader) and the prefix of its types (pyn_ent,
 * pyn_map, pyn_line, pyn_sub, pyn_edge), ck_ = bounded reads of a chunk's fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nytp_codec.h"
#include "nytp_records.h"
#include "options.h"
#include "read_pynytprof.h"
#include "reader.h"
#include "model.h"

#define PYN_DEFAULT_TPS 10000000.0
/* The TIME_LINE/DISCOUNT chunks synthesised from counts in the file (a 28-byte S
 * record can claim 4e9 executions) come out of the model's statement budget
 * (pb_model_statements), set to pb_statement_budget(): max_statements, and
 * unless that is given, 4096 per byte of the file (at least 2^24). */

/* ---- a small u64 -> u32 map: entries in a dense array, a pb_index on a
 * multiplicative hash of the key (the high half of key * 2^64/phi: one
 * multiply; the statement log looks a fid and a line up per record) */
typedef struct {
    uint64_t key;
    uint32_t val;
} pyn_ent;

typedef struct {
    pyn_ent *e;
    size_t n, cap;
    pb_index ix;
    uint32_t last; /* the entry of the last hit (valid when < n): the statement log repeats its keys */
} pyn_map;

static inline uint32_t map_hash(uint64_t key) { return (uint32_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 32); }
static uint32_t map_hash_of(const void *ctx, uint32_t i) { return map_hash(((const pyn_map *)ctx)->e[i].key); }

/* key's entry, or PB_INDEX_NONE (then *slot is the empty slot where it would go) */
static inline uint32_t map_find(const pyn_map *m, uint64_t key, size_t *slot)
{
    size_t k;
    uint32_t i;
    for (k = pb_index_first(&m->ix, map_hash(key)); (i = pb_index_at(&m->ix, k)) != PB_INDEX_NONE;
         k = pb_index_next(&m->ix, k))
        if (m->e[i].key == key)
            return i;
    *slot = k;
    return PB_INDEX_NONE;
}

/* 1 and *val, or 0 and *val = UINT32_MAX (inlined in the statement log loop) */
static inline int map_get(pyn_map *m, uint64_t key, uint32_t *val)
{
    size_t k;
    uint32_t i;
    if (m->last < m->n && m->e[m->last].key == key) {
        *val = m->e[m->last].val;
        return 1;
    }
    for (k = pb_index_first(&m->ix, map_hash(key)); (i = pb_index_at(&m->ix, k)) != PB_INDEX_NONE;
         k = pb_index_next(&m->ix, k))
        if (m->e[i].key == key) {
            m->last = i;
            *val = m->e[i].val;
            return 1;
        }
    *val = UINT32_MAX;
    return 0;
}

/* 1 ok, 0 out of memory */
static int map_put(pyn_map *m, uint64_t key, uint32_t val)
{
    size_t k;
    uint32_t i;
    if (pb_index_reserve(&m->ix, m->n, map_hash_of, m) < 0)
        return 0;
    if ((i = map_find(m, key, &k)) == PB_INDEX_NONE) {
        if (pb_grow((void **)&m->e, &m->cap, m->n + 1, sizeof *m->e) < 0)
            return 0;
        i = (uint32_t)m->n++;
        m->e[i].key = key;
        pb_index_set(&m->ix, k, i);
    }
    m->e[i].val = val;
    return 1;
}

static void map_free(pyn_map *m)
{
    free(m->e);
    pb_index_free(&m->ix);
    memset(m, 0, sizeof *m);
}

/* ---- decoder state ---------------------------------------------------- */
typedef struct {
    uint32_t fid, line;     /* ours */
    uint64_t calls;
    uint64_t inc, exc;
    uint64_t log_n, log_ns; /* dialect C: statement log totals (pass 1) */
    uint64_t done_n, done_ticks, cum_ns;
    int use_log;            /* log count == calls: the log carries this line */
} pyn_line;

typedef struct {
    pb_source *s;
    const pb_options *opt;
    pb_sink *sink;
    pb_error *err;
    char dialect;
    pb_rd rd;               /* the cursor; rd.rec: chunk being read, for messages */
    uint64_t chunk_end;     /* framed chunks: logical offset where the payload ends */
    pb_chunk c;
    nytp_rec v;             /* dialect D: the colder records' fields (nytp_records.h) */

    double tps;
    double start_time;
    uint32_t pid, ppid;
    int pid_started, pid_ended, saw_overhead, saw_application, tps_emitted, saw_basetime;
    int have_calls;
    uint64_t sum_ticks, max_ticks; /* lines' exclusive ticks; longest non-recursive edge */
    double sum_sub_ticks;          /* the subs' exclusive ticks (emit_edges) */
    pb_model m;             /* model.h: files (model file i has fid i + 1), subs, call
                             * edges, the statements' spread and budget */

    pyn_map fidmap;         /* file fid -> our fid */
    pyn_map sidmap;         /* sid -> the model's sub */
    pyn_map linemap;        /* (our fid << 32 | line) -> index in lines (dialect C) */
    pyn_line *lines;
    size_t nlines, linecap;
    int edges_sent;
    char *app_pending;      /* the header's ":application=-e", until the program's path is known */
    int log_seen, s_after_log_warned, names_note_done, version_done;

    char *sbuf;             /* scratch for strings */
    size_t sbufcap;
    char *nbuf;             /* scratch for mapped names */
    size_t nbufcap;
} pyn;

#define TRY(x) do { pb_status st_ = (x); if (st_ != PB_OK) return st_; } while (0)

static pb_status pynytprof_emit(pyn *r)
{
    return pb_emit(r->sink, &r->c) ? PB_ERR_ABORT : PB_OK;
}

static pb_status pynytprof_emit_attr(pyn *r, const char *key, const char *value)
{
    return pb_emit_attribute(r->sink, key, value) ? PB_ERR_ABORT : PB_OK;
}

static pb_status emit_attr_u64(pyn *r, const char *key, uint64_t v)
{
    return pb_emit_attribute_u64(r->sink, key, v) ? PB_ERR_ABORT : PB_OK;
}

static void pynytprof_warn(pyn *r, const char *msg)
{
    if (r->sink->warn) {
        char buf[300];
        snprintf(buf, sizeof buf, "pynytprof: %s", msg);
        r->sink->warn(r->sink, buf);
    }
}

static pb_status pynytprof_oom(pyn *r) { return pb_rd_oom(&r->rd); }

static pb_status grow(pyn *r, void **p, size_t *cap, size_t need, size_t elem)
{
    return pb_grow(p, cap, need, elem) < 0 ? pynytprof_oom(r) : PB_OK;
}

/* n bytes of the current framed chunk, at src->p */
static pb_status ck_need(pyn *r, size_t n, const char *field)
{
    uint64_t off = pb_src_offset(r->s);
    int got;
    if (off + n > r->chunk_end)
        return pb_fail(r->err, PB_ERR_CORRUPT, off,
                       "%s chunk ends inside its %s (%zu bytes needed, %llu left in the chunk)", r->rd.rec, field, n,
                       (unsigned long long)(r->chunk_end - off));
    got = pb_src_need(r->s, n);
    if (got < 0)
        return pb_rd_status(&r->rd);
    if (got == 0)
        return pb_fail(r->err, PB_ERR_TRUNCATED, off, "%s chunk needs %zu more bytes for its %s, the input has %zu",
                       r->rd.rec, n, field, pb_src_avail(r->s));
    return PB_OK;
}

/* the next tag byte (left unread) and its offset; at the end of the input,
 * truncation with the message `at_end`, or *tag = -1 when it is NULL */
static pb_status peek_tag(pyn *r, int *tag, uint64_t *off, const char *at_end)
{
    int got = pb_src_need(r->s, 1);
    if (got < 0)
        return r->err->status;
    *off = pb_src_offset(r->s);
    if (!got && at_end)
        return pb_fail(r->err, PB_ERR_TRUNCATED, *off, "%s", at_end);
    *tag = got ? *r->s->p : -1;
    return PB_OK;
}

/* the rest of the current framed chunk, `field` for the messages */
static pb_status skip_chunk(pyn *r, const char *field)
{
    while (pb_src_offset(r->s) < r->chunk_end) {
        uint64_t left = r->chunk_end - pb_src_offset(r->s);
        size_t n = left > 65536 ? 65536 : (size_t)left;
        TRY(ck_need(r, n, field));
        r->s->p += n;
    }
    return PB_OK;
}

/* n bytes outside any chunk (raw records), for `field` of record `rec` */
static pb_status raw_need(pyn *r, size_t n, const char *rec, const char *field)
{
    const char *keep = r->rd.rec;
    pb_status st;
    r->rd.rec = rec;
    st = pb_rd_need(&r->rd, n, field);
    r->rd.rec = keep;
    return st;
}

/* A NUL-terminated string inside the current chunk, copied to r->sbuf. */
static pb_status ck_zstr(pyn *r, size_t *len, const char *field)
{
    pb_source *s = r->s;
    size_t scanned = 0;
    for (;;) {
        uint64_t off = pb_src_offset(s);
        uint64_t left = r->chunk_end - off;
        size_t avail = pb_src_avail(s);
        int got;
        if (avail > left)
            avail = (size_t)left;
        if (avail > scanned) {
            const unsigned char *nul = (const unsigned char *)memchr(s->p + scanned, 0, avail - scanned);
            if (nul) {
                size_t l = (size_t)(nul - s->p);
                TRY(pb_rd_copy(&r->rd, &r->sbuf, &r->sbufcap, s->p, l));
                *len = l;
                s->p = nul + 1;
                return PB_OK;
            }
            scanned = avail;
        }
        if (scanned >= left)
            return pb_fail(r->err, PB_ERR_CORRUPT, off + scanned,
                           "%s chunk ends inside its %s: no terminating NUL", r->rd.rec, field);
        if (scanned >= r->opt->max_record_size)
            return pb_fail(r->err, PB_ERR_LIMIT, off, "%s chunk: %s longer than max_record_size (%llu bytes)",
                           r->rd.rec, field, (unsigned long long)r->opt->max_record_size);
        got = pb_src_need(s, scanned + 1);
        if (got < 0)
            return r->err->status;
        if (got == 0)
            return pb_fail(r->err, PB_ERR_TRUNCATED, off + scanned,
                           "%s chunk: input ended inside its %s (no terminating NUL)", r->rd.rec, field);
    }
}

/* ---- fids -------------------------------------------------------------- */
/* a file of the model, its NEW_FID sent now; *out: its fid */
static pb_status pynytprof_new_fid(pyn *r, uint64_t off, uint32_t *out, uint32_t eval_fid, uint32_t eval_line, uint32_t flags,
                         uint32_t size, uint32_t mtime, pb_str name)
{
    uint32_t file;
    if (r->m.nfids >= r->opt->max_strings)
        return pb_fail(r->err, PB_ERR_LIMIT, off, "more than %u files (max_strings)", r->opt->max_strings);
    if (pb_model_file_new(&r->m, name, flags, eval_fid, eval_line, size, mtime, &file) < 0)
        return pynytprof_oom(r);
    return pb_model_fid(&r->m, file, out);
}

/* A file fid seen without a path: define it with the placeholder name. */
static pb_status lost_fid(pyn *r, uint32_t file_fid, uint32_t *ours)
{
    char name[96], key[48];
    uint32_t f = 0;
    if (map_get(&r->fidmap, file_fid, ours))
        return PB_OK;
    snprintf(name, sizeof name, "pynytprof-fid%u-path-not-recorded", r->m.nfids + 1);
    TRY(pynytprof_new_fid(r, pb_src_offset(r->s), &f, 0, 0, PB_FID_IS_FAKE, 0, 0, pb_str_c(name))); /* no source to look for */
    if (!map_put(&r->fidmap, file_fid, f))
        return pynytprof_oom(r);
    snprintf(key, sizeof key, "source_path_lost_fid%u", f);
    snprintf(name, sizeof name, "file fid %u: the Pynytprof file records no path for it", file_fid);
    TRY(pynytprof_emit_attr(r, key, name));
    *ours = f;
    return PB_OK;
}

/* the file of SUB_INFO / SUB_CALLERS: the first (defined if there is none yet) */
static pb_status sub_file(pyn *r)
{
    if (r->m.nfids == 0) {
        uint32_t f;
        TRY(lost_fid(r, UINT32_MAX, &f));
    }
    return PB_OK;
}

/* ---- statements -------------------------------------------------------- */
/* n executions of (fid, line) with `ticks` in total: the model's spread and
 * budget (pb_model_statements) */
static pb_status emit_statements(pyn *r, uint32_t fid, uint32_t line, uint64_t n, uint64_t ticks)
{
    return pb_model_statements(&r->m, fid, line, n, ticks, pb_src_offset(r->s));
}

static pb_status inc_attr(pyn *r, uint32_t fid, uint32_t line, uint64_t inc)
{
    char key[64];
    snprintf(key, sizeof key, "pynytprof_inc_ticks:%u:%u", fid, line);
    return emit_attr_u64(r, key, inc);
}

/* ---- subs -------------------------------------------------------------- */
/* "main::" + name with '.' -> '::' into r->nbuf */
static pb_status pynytprof_map_name(pyn *r, const char *name, size_t len)
{
    size_t i, o = 6, dots = 0;
    for (i = 0; i < len; i++)
        dots += name[i] == '.';
    TRY(grow(r, (void **)&r->nbuf, &r->nbufcap, len + dots + 7, 1));
    memcpy(r->nbuf, "main::", 6);
    for (i = 0; i < len; i++) {
        if (name[i] == '.') {
            r->nbuf[o++] = ':';
            r->nbuf[o++] = ':';
        } else
            r->nbuf[o++] = name[i];
    }
    r->nbuf[o] = '\0';
    return PB_OK;
}

/* define sid (name NULL = placeholder) as a sub of the model and send its
 * SUB_INFO; a sid named again keeps its first name */
static pb_status set_sub(pyn *r, uint32_t sid, const char *name, size_t len, uint32_t *idx)
{
    char ph[48];
    if (map_get(&r->sidmap, sid, idx)) {
        char msg[128];
        snprintf(msg, sizeof msg, "sub id %u named again after it was used; keeping its first name", sid);
        pynytprof_warn(r, msg);
        return PB_OK;
    }
    if (name) {
        TRY(pynytprof_map_name(r, name, len));
    } else {
        snprintf(ph, sizeof ph, "main::pynytprof_sid_%u", sid);
        TRY(grow(r, (void **)&r->nbuf, &r->nbufcap, strlen(ph) + 1, 1));
        strcpy(r->nbuf, ph);
    }
    if (r->m.nsubs >= r->opt->max_strings)
        return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(r->s), "more than %u subs (max_strings)",
                       r->opt->max_strings);
    TRY(sub_file(r)); /* model file 0: fid 1 */
    if (pb_model_sub_new(&r->m, r->nbuf, strlen(r->nbuf), 0, 0, idx) < 0 || !map_put(&r->sidmap, sid, *idx))
        return pynytprof_oom(r);
    return pb_model_emit_sub_info(&r->m, *idx);
}

/* the sub of sid, a placeholder when the file never named it */
static pb_status use_sub(pyn *r, uint32_t sid, uint32_t *idx)
{
    if (!map_get(&r->sidmap, sid, idx)) {
        if (!r->names_note_done) {
            r->names_note_done = 1;
            TRY(pynytprof_emit_attr(r, "source_sub_names",
                          "not recorded for some subs; they are named main::pynytprof_sid_<sid>"));
        }
        TRY(set_sub(r, sid, NULL, 0, idx));
    }
    return PB_OK;
}

/* ---- text header (dialects B, C, D) ---------------------------------- */
static pb_status pynytprof_rd_line(pyn *r, const char **line, size_t *len)
{
    return pb_rd_line(&r->rd, line, len, UINT64_MAX);
}

static int is_uint(const char *p, size_t n)
{
    size_t i;
    if (n == 0 || n > 20)
        return 0;
    for (i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return 1;
}

static pb_status pynytprof_text_chunk(pyn *r, unsigned char tag)
{
    pb_str line, key, val;
    int kv;
    uint64_t off = pb_src_offset(r->s);
    r->s->p++;
    TRY(nytp_read_text(&r->rd, tag, UINT64_MAX, &line, &key, &val, &kv));
    if (tag == '#') {
        pb_chunk_comment(&r->c, line);
        return pynytprof_emit(r);
    }
    if (!kv) {
        char msg[128];
        snprintf(msg, sizeof msg, NYTP_TEXT_MALFORMED, r->rd.rec, (unsigned long long)off);
        pynytprof_warn(r, msg);
        return PB_OK;
    }
    {
        if (tag == '!') {
            pb_chunk_option(&r->c, key, val);
            return pynytprof_emit(r);
        }
#define KEYIS(k) (key.len == sizeof(k) - 1 && memcmp(key.ptr, k, sizeof(k) - 1) == 0)
        if (KEYIS("nv_size") && !(val.len == 1 && val.ptr[0] == '8')) {
            pynytprof_warn(r, "header says nv_size is not 8; written as 8 (the times we emit are doubles)");
            val = pb_str_c("8");
        } else if (KEYIS("ticks_per_sec")) {
            double t = 0;
            if (is_uint(val.ptr, val.len)) {
                char tmp[24];
                memcpy(tmp, val.ptr, val.len);
                tmp[val.len] = '\0';
                t = strtod(tmp, NULL);
            }
            if (t <= 0) {
                pynytprof_warn(r, "header ticks_per_sec is missing or invalid; using 10000000 (Pynytprof's 100 ns ticks)");
                val = pb_str_c("10000000");
                t = PYN_DEFAULT_TPS;
            }
            r->tps = t;
            r->tps_emitted = 1;
        } else if (KEYIS("basetime") && is_uint(val.ptr, val.len)) {
            char tmp[24];
            memcpy(tmp, val.ptr, val.len);
            tmp[val.len] = '\0';
            r->saw_basetime = 1;
            if (!r->pid_started)
                r->start_time = strtod(tmp, NULL);
        } else if (KEYIS("cumulative_overhead_ticks")) {
            r->saw_overhead = 1;
        } else if (KEYIS("application")) {
            if (val.len == 2 && memcmp(val.ptr, "-e", 2) == 0 && !r->app_pending) {
                /* Pynytprof's B writer puts "-e" there whatever it ran: the
                 * program's path (the first F file) replaces it, else it comes
                 * at the end as it was */
                r->app_pending = (char *)malloc(3);
                if (!r->app_pending)
                    return pynytprof_oom(r);
                memcpy(r->app_pending, "-e", 3);
                return PB_OK;
            }
            r->saw_application = 1;
        }
#undef KEYIS
        pb_chunk_attribute(&r->c, key, val);
        return pynytprof_emit(r);
    }
}

static pb_status source_attrs(pyn *r)
{
    char d[2];
    d[0] = r->dialect;
    d[1] = '\0';
    TRY(pynytprof_emit_attr(r, "source_format", "pynytprof"));
    TRY(pynytprof_emit_attr(r, "profiler", "Pynytprof"));
    return pynytprof_emit_attr(r, "source_dialect", d);
}

static pb_status pid_start(pyn *r)
{
    r->pid_started = 1;
    pb_chunk_pid_start(&r->c, r->pid, r->ppid, r->start_time);
    return pynytprof_emit(r);
}

/* NYTProf divides by ticks_per_sec as chunks arrive: it must come first */
static pb_status ensure_tps(pyn *r)
{
    if (r->tps_emitted)
        return PB_OK;
    r->tps_emitted = 1;
    return emit_attr_u64(r, "ticks_per_sec", (uint64_t)r->tps);
}

/* before the first file/line/sub data: ticks_per_sec, basetime (A), PID_START */
static pb_status before_data(pyn *r)
{
    if (r->pid_started)
        return PB_OK;
    TRY(ensure_tps(r));
    if (!r->saw_basetime && r->start_time >= 0 && r->start_time < 1e15) {
        r->saw_basetime = 1;
        TRY(emit_attr_u64(r, "basetime", (uint64_t)r->start_time));
    }
    return pid_start(r);
}

/* ---- framed chunks ----------------------------------------------------- */
/* F: {u32 fid, u32 flags, u32 size, u32 mtime, zstr path}* (A, B) */
static pb_status chunk_F_full(pyn *r)
{
    while (pb_src_offset(r->s) < r->chunk_end) {
        uint32_t file_fid, flags, size, mtime, ours;
        size_t len;
        TRY(ck_need(r, 16, "file record"));
        file_fid = pb_le32(r->s->p);
        flags = pb_le32(r->s->p + 4);
        size = pb_le32(r->s->p + 8);
        mtime = pb_le32(r->s->p + 12);
        r->s->p += 16;
        TRY(ck_zstr(r, &len, "path"));
        if (map_get(&r->fidmap, file_fid, &ours)) {
            char msg[96];
            snprintf(msg, sizeof msg, "file fid %u defined twice; the second path is ignored", file_fid);
            pynytprof_warn(r, msg);
            continue;
        }
        TRY(pynytprof_new_fid(r, pb_src_offset(r->s), &ours, 0, 0, flags, size, mtime, pb_str_make(r->sbuf, len, 0)));
        if (!map_put(&r->fidmap, file_fid, ours))
            return pynytprof_oom(r);
        /* the program's path names the report (a path with a newline cannot
         * be an ATTRIBUTE value: the next file's, else "-e", stands) */
        if (((!r->saw_application && r->dialect == 'A') || r->app_pending) && !memchr(r->sbuf, '\n', len)) {
            r->saw_application = 1;
            free(r->app_pending);
            r->app_pending = NULL;
            TRY(pynytprof_emit_attr(r, "application", r->sbuf));
        }
    }
    return PB_OK;
}

/* F: {u32 fid, u32 string_index}* (C) */
static pb_status chunk_F_index(pyn *r)
{
    while (pb_src_offset(r->s) < r->chunk_end) {
        uint32_t file_fid, ours;
        TRY(ck_need(r, 8, "file record"));
        file_fid = pb_le32(r->s->p);
        r->s->p += 8;
        TRY(lost_fid(r, file_fid, &ours));
    }
    return PB_OK;
}

static pb_status line_entry(pyn *r, uint32_t fid, uint32_t line, uint32_t *idx, int create)
{
    uint64_t key = ((uint64_t)fid << 32) | line;
    if (map_get(&r->linemap, key, idx))
        return PB_OK;
    if (!create) {
        *idx = UINT32_MAX;
        return PB_OK;
    }
    if (r->nlines >= r->opt->max_frames)
        return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(r->s), "more than %u distinct lines (max_frames)",
                       r->opt->max_frames);
    TRY(grow(r, (void **)&r->lines, &r->linecap, r->nlines + 1, sizeof *r->lines));
    memset(&r->lines[r->nlines], 0, sizeof *r->lines);
    r->lines[r->nlines].fid = fid;
    r->lines[r->nlines].line = line;
    *idx = (uint32_t)r->nlines++;
    if (!map_put(&r->linemap, key, *idx))
        return pynytprof_oom(r);
    return PB_OK;
}

/* S and C: records of {u32, u32, u32, u64, u64}, 28 bytes each */
static pb_status rec28_len(pyn *r, const char *what)
{
    uint64_t len = r->chunk_end - pb_src_offset(r->s);
    if (len % 28)
        return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(r->s) - 5,
                       "%s chunk length %llu is not a multiple of the 28-byte %s", r->rd.rec, (unsigned long long)len,
                       what);
    return PB_OK;
}

static pb_status rec28(pyn *r, const char *what, uint32_t u[3], uint64_t w[2])
{
    const unsigned char *p;
    TRY(ck_need(r, 28, what));
    p = r->s->p;
    u[0] = pb_le32(p);
    u[1] = pb_le32(p + 4);
    u[2] = pb_le32(p + 8);
    w[0] = pb_le64(p + 12);
    w[1] = pb_le64(p + 20);
    r->s->p += 28;
    return PB_OK;
}

/* S: {u32 fid, u32 line, u32 calls, u64 inc_ticks, u64 exc_ticks}* */
static pb_status chunk_S(pyn *r)
{
    TRY(rec28_len(r, "line record"));
    while (pb_src_offset(r->s) < r->chunk_end) {
        uint32_t u[3], file_fid, line, calls, fid;
        uint64_t w[2], inc, exc;
        TRY(rec28(r, "line record", u, w));
        file_fid = u[0];
        line = u[1];
        calls = u[2];
        inc = w[0];
        exc = w[1];
        if (!map_get(&r->fidmap, file_fid, &fid))
            TRY(lost_fid(r, file_fid, &fid));
        r->sum_ticks += exc;
        if (r->dialect == 'C') {
            uint32_t idx;
            if (r->log_seen) {
                /* the log already gave this file's statements */
                if (!r->s_after_log_warned) {
                    r->s_after_log_warned = 1;
                    pynytprof_warn(r, "S chunk after the statement log: its counts are not added again");
                }
            } else {
                pyn_line *L;
                TRY(line_entry(r, fid, line, &idx, 1));
                L = &r->lines[idx];
                /* a second record for the same line adds to the first */
                L->calls += calls;
                L->inc += inc;
                L->exc += exc;
            }
        } else {
            TRY(emit_statements(r, fid, line, calls, exc));
        }
        TRY(inc_attr(r, fid, line, inc));
    }
    return PB_OK;
}

/* D (A, B): {u32 sid, u32 flags, zstr name}* */
static pb_status chunk_D_names(pyn *r)
{
    while (pb_src_offset(r->s) < r->chunk_end) {
        uint32_t sid, idx;
        size_t len;
        TRY(ck_need(r, 8, "sub record"));
        sid = pb_le32(r->s->p);
        r->s->p += 8;
        TRY(ck_zstr(r, &len, "sub name"));
        TRY(set_sub(r, sid, r->sbuf, len, &idx));
    }
    return PB_OK;
}

/* D (C): statement log {u8 1, u32 fid, u32 line, u64 dur_ns}* u8 0.
 * Two passes: the first sums counts and durations per line, the second emits. */
/* Over 80 lines, kept whole: two passes over the same log records (sum, then emit) share their
 * field reads. */
static pb_status chunk_D_log(pyn *r)
{
    uint64_t start = pb_src_offset(r->s);
    uint32_t fid_shift;
    int pass;
    size_t i;
    int warned = 0;
    if (r->log_seen)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, start - 5, "a second D (statement log) chunk");
    r->log_seen = 1;
    /* the log numbers the script's file 0 where S and F use 1 */
    {
        uint32_t dummy;
        fid_shift = map_get(&r->fidmap, 0, &dummy) ? 0 : 1;
    }
    for (pass = 1; pass <= 2; pass++) {
        if (pass == 2) {
            for (i = 0; i < r->nlines; i++)
                r->lines[i].use_log = r->lines[i].log_n == r->lines[i].calls && r->lines[i].calls > 0;
            TRY(pb_src_seek(r->s, start));
        }
        for (;;) {
            unsigned char mark;
            uint32_t log_fid, line, fid, idx;
            uint64_t dur;
            const unsigned char *p;
            TRY(ck_need(r, 1, "record marker"));
            mark = *r->s->p++;
            if (mark == 0)
                break;
            if (mark != 1)
                return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(r->s) - 1,
                               "D statement log: record marker 0x%02x (expected 1, or 0 to end the log)", mark);
            TRY(ck_need(r, 16, "statement record"));
            p = r->s->p;
            log_fid = pb_le32(p);
            line = pb_le32(p + 4);
            dur = pb_le64(p + 8);
            r->s->p += 16;
            if (pass == 1) {
                uint64_t key_fid = (uint64_t)log_fid + fid_shift;
                if (key_fid > UINT32_MAX || !map_get(&r->fidmap, key_fid, &fid))
                    continue;
                TRY(line_entry(r, fid, line, &idx, 0));
                if (idx != UINT32_MAX) {
                    r->lines[idx].log_n++;
                    r->lines[idx].log_ns += dur;
                }
                continue;
            }
            {
                uint64_t key_fid = (uint64_t)log_fid + fid_shift;
                idx = UINT32_MAX;
                if (key_fid <= UINT32_MAX && map_get(&r->fidmap, key_fid, &fid))
                    TRY(line_entry(r, fid, line, &idx, 0));
                else
                    TRY(lost_fid(r, key_fid > UINT32_MAX ? UINT32_MAX : (uint32_t)key_fid, &fid));
            }
            if (idx == UINT32_MAX) {
                /* not in the S summary: the log's own duration */
                uint64_t ticks = (uint64_t)((double)dur * r->tps / 1e9 + 0.5);
                if (!warned) {
                    warned = 1;
                    pynytprof_warn(r, "statement log has lines the S summary lacks; their time comes from the log");
                }
                r->sum_ticks += ticks;
                TRY(emit_statements(r, fid, line, 1, ticks));
            } else {
                pyn_line *L = &r->lines[idx];
                uint64_t target, ticks;
                if (!L->use_log)
                    continue;
                L->done_n++;
                L->cum_ns += dur;
                if (L->done_n >= L->calls)
                    target = L->exc;
                else if (L->log_ns > 0)
                    target = (uint64_t)((double)L->exc * ((double)L->cum_ns / (double)L->log_ns));
                else
                    target = (uint64_t)((double)L->exc * ((double)L->done_n / (double)L->calls));
                if (target > L->exc)
                    target = L->exc;
                ticks = target > L->done_ticks ? target - L->done_ticks : 0;
                L->done_ticks += ticks;
                TRY(emit_statements(r, L->fid, L->line, 1, ticks));
            }
        }
        if (pb_src_offset(r->s) != r->chunk_end) {
            char msg[128];
            if (pass == 2) {
                snprintf(msg, sizeof msg, "%llu bytes after the end of the D statement log, skipped",
                         (unsigned long long)(r->chunk_end - pb_src_offset(r->s)));
                pynytprof_warn(r, msg);
            }
            TRY(skip_chunk(r, "trailing bytes"));
        }
    }
    return PB_OK;
}

/* a caller -> callee pair, an exact edge of the model on fid 1, line 0 (no
 * call site recorded); records of the same pair add up */
static pb_status pynytprof_add_edge(pyn *r, uint32_t ci, uint32_t ce, uint32_t calls, uint64_t ticks)
{
    pb_medge *e;
    uint32_t i;
    if (pb_model_edge(&r->m, 0, ci, 0, 0, ce, &i) < 0)
        return pynytprof_oom(r);
    e = &r->m.edges[i];
    e->count += calls;
    e->incl = ticks > UINT64_MAX - e->incl ? UINT64_MAX : e->incl + ticks;
    return PB_OK;
}

/* the edges as SUB_CALLERS with NYTProf's inclusive / exclusive / recursive
 * times (the rule is at the top of this file, and in model.h) */
static pb_status emit_edges(pyn *r)
{
    if (r->edges_sent || !r->m.nedges)
        return PB_OK;
    r->edges_sent = 1;
    TRY(sub_file(r));
    return pb_model_emit_exact_callers(&r->m, r->tps, &r->sum_sub_ticks, &r->max_ticks);
}

/* C: {u32 caller_sid, u32 callee_sid, u32 calls, u64 ticks, u64 sub_ticks}* */
static pb_status chunk_C(pyn *r)
{
    TRY(rec28_len(r, "call-edge record"));
    while (pb_src_offset(r->s) < r->chunk_end) {
        uint32_t u[3], ci, ce; /* caller sid, callee sid, calls */
        uint64_t w[2];         /* ticks, sub_ticks */
        TRY(rec28(r, "call-edge record", u, w));
        TRY(use_sub(r, u[0], &ci));
        TRY(use_sub(r, u[1], &ce));
        if (u[2])
            r->have_calls = 1;
        TRY(pynytprof_add_edge(r, ci, ce, u[2], w[0]));
    }
    return PB_OK;
}

/* H / A (dialect A): zstr "key=value"* */
static pb_status chunk_header_kv(pyn *r, int is_A)
{
    while (pb_src_offset(r->s) < r->chunk_end) {
        size_t len;
        char *eq;
        TRY(ck_zstr(r, &len, "key=value entry"));
        eq = strchr(r->sbuf, '=');
        if (!eq) {
            pynytprof_warn(r, "header entry without '=' skipped");
            continue;
        }
        *eq = '\0';
        if (!strcmp(r->sbuf, "ticks_per_sec")) {
            double t = is_uint(eq + 1, strlen(eq + 1)) ? strtod(eq + 1, NULL) : 0;
            if (t <= 0) {
                pynytprof_warn(r, "header ticks_per_sec is missing or invalid; using 10000000 (Pynytprof's 100 ns ticks)");
                t = PYN_DEFAULT_TPS;
            }
            if (!r->tps_emitted || r->tps != t) {
                if (r->pid_started) {
                    pynytprof_warn(r, "ticks_per_sec given after the data started; ignored");
                    continue;
                }
                r->tps = t;
                r->tps_emitted = 1;
                TRY(emit_attr_u64(r, "ticks_per_sec", (uint64_t)t));
            }
            continue;
        }
        if (!strcmp(r->sbuf, "start_time") && is_uint(eq + 1, strlen(eq + 1))) {
            double v = strtod(eq + 1, NULL);
            if (is_A)
                v /= 1e9; /* A gives nanoseconds */
            r->start_time = v;
        }
        TRY(pynytprof_emit_attr(r, is_A ? (!strcmp(r->sbuf, "start_time") ? "start_time_ns" : r->sbuf) : r->sbuf, eq + 1));
    }
    return PB_OK;
}

/* framed chunks until E; returns with *ended set */
static pb_status framed_chunks(pyn *r)
{
    for (;;) {
        int tag;
        uint32_t len;
        uint64_t off;
        TRY(peek_tag(r, &tag, &off, "input ended before the E (end) chunk"));
        if (r->dialect == 'C' && tag == 'E') { /* raw, no length */
            r->s->p++;
            return PB_OK;
        }
        if (!strchr("HAFSDCE", tag) || tag == 0 || (r->dialect != 'A' && (tag == 'H' || tag == 'A'))) {
            if (tag >= 0x20 && tag < 0x7f)
                return pb_fail(r->err, PB_ERR_CORRUPT, off, "unknown chunk tag 0x%02x ('%c') in dialect %c", tag,
                               tag, r->dialect);
            return pb_fail(r->err, PB_ERR_CORRUPT, off, "unknown chunk tag 0x%02x in dialect %c", tag, r->dialect);
        }
        r->rd.rec = tag == 'H' ? "H" : tag == 'A' ? "A" : tag == 'F' ? "F" : tag == 'S' ? "S" : tag == 'D' ? "D"
                : tag == 'C' ? "C" : "E";
        r->chunk_end = UINT64_MAX;
        TRY(raw_need(r, 5, r->rd.rec, "chunk length"));
        len = pb_le32(r->s->p + 1);
        r->s->p += 5;
        r->chunk_end = off + 5 + len;
        if (tag != 'H' && tag != 'A')
            TRY(before_data(r));
        switch (tag) {
        case 'H': TRY(chunk_header_kv(r, 0)); break;
        case 'A': TRY(chunk_header_kv(r, 1)); break;
        case 'F': TRY(r->dialect == 'C' ? chunk_F_index(r) : chunk_F_full(r)); break;
        case 'S': TRY(chunk_S(r)); break;
        case 'D': TRY(r->dialect == 'C' ? chunk_D_log(r) : chunk_D_names(r)); break;
        case 'C': TRY(chunk_C(r)); break;
        case 'E':
            if (len) {
                pynytprof_warn(r, "E chunk has a payload; skipped");
                TRY(skip_chunk(r, "payload"));
            }
            return PB_OK;
        }
    }
}

/* ---- dialect D: NYTProf varint tokens ---------------------------------- */
/* its strings (nytp_records.h): copied, NUL-terminated (consumers such as
 * present.c read a NEW_FID name as a C string); a length over
 * max_record_size is a limit */
#define PYN_STR_LIMIT "%s record: %s of %u bytes is over max_record_size"

static pb_status map_fid_tok(pyn *r, uint32_t file_fid, uint32_t *ours)
{
    if (map_get(&r->fidmap, file_fid, ours))
        return PB_OK;
    return lost_fid(r, file_fid, ours);
}

static pb_status raw_P(pyn *r)
{
    const unsigned char *p;
    r->rd.rec = "P";
    TRY(raw_need(r, 17, "P", "pid, ppid and start time"));
    p = r->s->p;
    r->pid = pb_le32(p + 1);
    r->ppid = pb_le32(p + 5);
    r->start_time = pb_le_f64(p + 9);
    r->s->p += 17;
    return pid_start(r);
}

/* NEW_FID: the file's fid renumbered, its eval fid mapped */
static pb_status tok_new_fid(pyn *r, uint64_t off)
{
    const uint32_t *v = r->v.u;
    uint32_t fid, efid = 0;
    TRY(nytp_read_record(&r->rd, &r->v, NYTP_NEW_FID));
    if (map_get(&r->fidmap, v[0], &fid))
        return pb_fail(r->err, PB_ERR_CORRUPT, off, "NEW_FID for fid %u, which is already defined", v[0]);
    if (v[1] && !map_get(&r->fidmap, v[1], &efid))
        return pb_fail(r->err, PB_ERR_CORRUPT, off, "NEW_FID %u names eval fid %u, which is not defined", v[0],
                       v[1]);
    if (r->m.nfids < r->opt->max_strings && !map_put(&r->fidmap, v[0], r->m.nfids + 1))
        return pynytprof_oom(r);
    return pynytprof_new_fid(r, off, &fid, efid, v[1] ? v[2] : 0, v[3], v[4], v[5], r->v.s[0]);
}

/* Over 80 lines, kept whole: one loop over the token kinds of the stream, each a few lines. */
static pb_status token_stream(pyn *r)
{
    nytp_rec *v = &r->v;
    for (;;) {
        int tag;
        uint64_t off;
        uint32_t fid;
        TRY(peek_tag(r, &tag, &off, NULL));
        if (tag < 0)
            return PB_OK;
        if (nytp_text_tag(tag)) {
            TRY(pynytprof_text_chunk(r, (unsigned char)tag));
            continue;
        }
        if (tag == 'P') {
            if (r->pid_started)
                return pb_fail(r->err, PB_ERR_CORRUPT, off, "a second P (PID_START) record");
            TRY(raw_P(r));
            continue;
        }
        r->s->p++; /* the tokens below are read from after their tag */
        switch (tag) {
        case '@':
            TRY(tok_new_fid(r, off));
            break;
        case '+':
        case '*': {
            uint32_t t[5];
            TRY(nytp_read_time(&r->rd, tag == '*', t));
            TRY(map_fid_tok(r, t[1], &fid));
            if ((int32_t)t[0] > 0)
                r->sum_ticks += t[0];
            if (tag == '+')
                pb_chunk_time_line(&r->c, (int32_t)t[0], fid, t[2]);
            else
                pb_chunk_time_block(&r->c, (int32_t)t[0], fid, t[2], t[3], t[4]);
            TRY(pynytprof_emit(r));
            break;
        }
        case '-':
            pb_chunk_discount(&r->c);
            TRY(pynytprof_emit(r));
            break;
        case 'S':
            TRY(nytp_read_record(&r->rd, v, NYTP_SRC_LINE));
            TRY(map_fid_tok(r, v->u[0], &fid));
            pb_chunk_src_line(&r->c, fid, v->u[1], v->s[0]);
            TRY(pynytprof_emit(r));
            break;
        case 's':
            TRY(nytp_read_record(&r->rd, v, NYTP_SUB_INFO));
            TRY(map_fid_tok(r, v->u[0], &fid));
            pb_chunk_sub_info(&r->c, fid, v->u[1], v->u[2], v->s[0]);
            TRY(pynytprof_emit(r));
            break;
        case 'c':
            TRY(nytp_read_record(&r->rd, v, NYTP_SUB_CALLERS));
            fid = v->u[0];
            if (fid)
                TRY(map_fid_tok(r, fid, &fid));
            if (v->u[2])
                r->have_calls = 1;
            pb_chunk_sub_callers(&r->c, fid, v->u[1], v->u[2], v->nv[0], v->nv[1], v->nv[2], v->u[3], v->s[0],
                                 v->s[1]);
            TRY(pynytprof_emit(r));
            break;
        case 'p':
            TRY(nytp_read_record(&r->rd, v, NYTP_PID_END));
            if (!r->saw_overhead) {
                r->saw_overhead = 1;
                TRY(pynytprof_emit_attr(r, "cumulative_overhead_ticks", "0"));
            }
            r->pid_ended = 1;
            pb_chunk_pid_end(&r->c, v->u[0], v->nv[0]);
            TRY(pynytprof_emit(r));
            break;
        case 'z':
            return pb_fail(r->err, PB_ERR_UNSUPPORTED, off, "compressed data ('z'): Pynytprof never compresses");
        default:
            if (tag >= 0x20 && tag < 0x7f)
                return pb_fail(r->err, PB_ERR_CORRUPT, off, "unknown tag 0x%02x ('%c') in dialect D", tag, tag);
            return pb_fail(r->err, PB_ERR_CORRUPT, off, "unknown tag 0x%02x in dialect D", tag);
        }
    }
}

/* ---- dialect detection -------------------------------------------------- */
/* "A".."D", or "" when the bytes do not say (too short, or an unknown layout). */
const char *pb_pynytprof_dialect(const unsigned char *p, size_t len)
{
    size_t i;
    const unsigned char *nl;
    if (len >= 8 && memcmp(p, "NYTPROF\0", 8) == 0)
        return "A";
    if (len < 8 || memcmp(p, "NYTProf ", 8) != 0)
        return "";
    nl = (const unsigned char *)memchr(p, '\n', len);
    if (!nl)
        return "";
    i = (size_t)(nl - p) + 1;
    while (i < len && nytp_text_tag(p[i])) {
        nl = (const unsigned char *)memchr(p + i, '\n', len - i);
        if (!nl)
            return "";
        i = (size_t)(nl - p) + 1;
    }
    if (i >= len)
        return "";
    if (p[i] == '\n')
        return "B";
    if (p[i] != 'P' || i + 17 >= len)
        return "";
    return strchr("SFDCE", p[i + 17]) && p[i + 17] ? "C" : "D";
}

/* ---- top level ----------------------------------------------------------- */
static pb_status pynytprof_finish(pyn *r)
{
    size_t i;
    if (r->dialect == 'C') {
        for (i = 0; i < r->nlines; i++) {
            pyn_line *L = &r->lines[i];
            if (L->use_log)
                continue;
            if (r->log_seen && L->calls && r->sink->warn) {
                char msg[160];
                snprintf(msg, sizeof msg,
                         "line %u: the statement log has %llu executions, the S record %llu; using the S record",
                         L->line, (unsigned long long)L->log_n, (unsigned long long)L->calls);
                pynytprof_warn(r, msg);
            }
            TRY(emit_statements(r, L->fid, L->line, L->calls, L->exc));
        }
    }
    TRY(before_data(r));
    TRY(emit_edges(r));
    if (r->app_pending) {
        TRY(pynytprof_emit_attr(r, "application", r->app_pending));
        free(r->app_pending);
        r->app_pending = NULL;
    }
    if (!r->saw_overhead)
        TRY(pynytprof_emit_attr(r, "cumulative_overhead_ticks", "0"));
    if (!r->pid_ended) {
        double t = (double)(r->sum_ticks > r->max_ticks ? r->sum_ticks : r->max_ticks);
        double d, end;
        if (r->sum_sub_ticks > t)
            t = r->sum_sub_ticks;
        d = t / r->tps;
        if (d < 1e-6)
            d = 1e-6;
        end = r->start_time + d;
        while (!(end > r->start_time) && d < 1e300) {
            d *= 2;
            end = r->start_time + d;
        }
        /* no shorter than d once rounded (an epoch start leaves ~0.2 us of
         * precision): NYTProf's run must hold every sub's exclusive time */
        while (end - r->start_time < d && end < 1e300)
            end += (end > 0 ? end : -end) * 2.3e-16 + 1e-300;
        r->pid_ended = 1;
        pb_chunk_pid_end(&r->c, r->pid, end);
        TRY(pynytprof_emit(r));
    }
    return PB_OK;
}

static pb_status trailing(pyn *r)
{
    char msg[128];
    TRY(pb_rd_trailing(&r->rd, "bytes after the end chunk at byte %llu, ignored", msg, sizeof msg));
    if (msg[0])
        pynytprof_warn(r, msg);
    return PB_OK;
}

static pb_status read_version_line(pyn *r)
{
    const char *line;
    size_t len;
    char tmp[64];
    int major = -1, minor = -1;
    r->rd.rec = "header";
    TRY(pynytprof_rd_line(r, &line, &len));
    if (len >= sizeof tmp)
        return pb_fail(r->err, PB_ERR_CORRUPT, 0, "header line is %zu bytes long", len);
    memcpy(tmp, line, len);
    tmp[len] = '\0';
    if (sscanf(tmp, "NYTProf %d %d", &major, &minor) != 2 || major < 0 || minor < 0)
        return pb_fail(r->err, PB_ERR_CORRUPT, 0, "header line is not \"NYTProf <major> <minor>\"");
    if (major != 5)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, 0, "header says version %d.%d; Pynytprof writes 5.0", major, minor);
    pb_chunk_version(&r->c, 5, (uint32_t)minor);
    r->version_done = 1;
    return pynytprof_emit(r);
}

static pb_status pyn_decode(pyn *r)
{
    pb_source *s = r->s;
    int got = pb_src_need(s, 8);
    if (got < 0)
        return r->err->status;
    if (got == 0 || (memcmp(s->p, "NYTPROF\0", 8) != 0 && memcmp(s->p, "NYTProf ", 8) != 0))
        return pb_fail(r->err, got ? PB_ERR_CORRUPT : PB_ERR_TRUNCATED, 0,
                       "not a Pynytprof file: it starts with neither \"NYTPROF\\0\" nor \"NYTProf \"");
    if (s->p[4] == 'R') { /* "NYTPROF\0": dialect A */
        uint32_t ver;
        r->dialect = 'A';
        TRY(raw_need(r, 20, "magic", "version and header length"));
        ver = pb_le32(s->p + 8);
        if (ver != 5)
            return pb_fail(r->err, PB_ERR_UNSUPPORTED, 8, "binary-magic file version %u; this reader knows version 5",
                           ver);
        s->p += 20;
        pb_chunk_version(&r->c, 5, 0);
        r->version_done = 1;
        TRY(pynytprof_emit(r));
        TRY(source_attrs(r));
        TRY(pynytprof_emit_attr(r, "nv_size", "8"));
        TRY(framed_chunks(r));
        TRY(trailing(r));
        return pynytprof_finish(r);
    }
    TRY(read_version_line(r));
    for (;;) {
        unsigned char b;
        got = pb_src_need(s, 1);
        if (got < 0)
            return r->err->status;
        if (got == 0)
            return pb_fail(r->err, PB_ERR_TRUNCATED, pb_src_offset(s),
                           "input ended in the text header (expected a blank line or a P record after it)");
        b = *s->p;
        if (!nytp_text_tag(b))
            break;
        TRY(pynytprof_text_chunk(r, b));
    }
    if (*s->p == '\n') {
        r->dialect = 'B';
        s->p++;
        TRY(source_attrs(r));
        TRY(framed_chunks(r));
        TRY(trailing(r));
        return pynytprof_finish(r);
    }
    if (*s->p == 'P') {
        TRY(raw_need(r, 18, "P", "pid, ppid, start time and the next tag"));
        r->dialect = (s->p[17] && strchr("SFDCE", s->p[17])) ? 'C' : 'D';
        TRY(source_attrs(r));
        TRY(ensure_tps(r));
        TRY(raw_P(r));
        if (r->dialect == 'C') {
            TRY(framed_chunks(r));
            TRY(trailing(r));
        } else {
            TRY(token_stream(r));
        }
        return pynytprof_finish(r);
    }
    return pb_fail(r->err, PB_ERR_UNSUPPORTED, pb_src_offset(s),
                   "Pynytprof layout not known: after the text header comes byte 0x%02x "
                   "(dialect B has a blank line there, C and D a P record)", *s->p);
}

static void pyn_cleanup(void *p)
{
    pyn *r = (pyn *)p;
    PB_FREE_ALL(r->lines, r->sbuf, r->nbuf, r->app_pending);
    nytp_rec_free(&r->v);
    map_free(&r->fidmap);
    map_free(&r->sidmap);
    map_free(&r->linemap);
    pb_model_free(&r->m);
    free(r);
}

pb_status pb_read_pynytprof(pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    pyn *r;
    pb_status st;
    pb_options o;
    uint64_t seq0;
    pb_options_copy(&o, opt);
    /* on the heap, so that a consumer that never returns can release it */
    r = (pyn *)calloc(1, sizeof *r);
    if (!r)
        return pb_fail(err, PB_ERR_LIMIT, 0, "out of memory");
    pb_sink_defer(sink, pyn_cleanup, r);
    r->s = src;
    pb_rd_init(&r->rd, src, err, "%s record needs %zu more bytes%.0s for its %s, the input has %zu",
               o.max_record_size);
    r->opt = &o;
    r->sink = sink;
    r->err = err;
    r->tps = PYN_DEFAULT_TPS;
    pb_model_init(&r->m, sink, err, "out of memory");
    r->m.quiet_abort = 1;
    pb_model_set_budget(&r->m, pb_statement_budget(&o, pb_src_size(src))); /* also bounded by the input's size */
    if (o.max_statements_by_size)
        r->m.budget_note = ": 4096 per byte of input, at least 2^24; a larger max_statements lifts it";
    r->chunk_end = UINT64_MAX;
    nytp_rec_init(&r->v, 1, 0, PYN_STR_LIMIT);
    seq0 = sink->seq;
    st = pyn_decode(r);
    if (st == PB_ERR_TRUNCATED && o.salvage && r->version_done && err->status == PB_ERR_TRUNCATED) {
        /* deliver a loadable ending for what came before */
        pb_error keep = *err;
        uint64_t n = sink->seq - seq0;
        err->status = PB_OK;
        st = pynytprof_finish(r);
        if (st == PB_OK) {
            *err = keep;
            pb_src_error_to_file(src, err); /* the cut's offset in the file, not in the inflated data */
            st = pb_salvage_warn(err, sink, "%llu chunk%s", (unsigned long long)n, n == 1 ? "" : "s");
        } else if (err->status == PB_OK) {
            err->status = st;
        }
    }
    return pb_decoder_done(sink, pyn_cleanup, r, st, err);
}
