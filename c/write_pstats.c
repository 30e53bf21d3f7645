/* write_pstats.c - a call graph -> Python's pstats file (--to pstats).
 *
 * The input: the chunk stream's call graph (chunk_graph.h), not the fold's
 * model.  Every input gives chunks (a tracing format's own SUB_CALLERS, or
 * those a fold makes of spans and of stack samples: the model's edges, as
 * fold_samples.h defines them), whereas only the folded formats have a
 * model: a NYTProf-like chunk stream's exact call counts exist only as
 * chunks.  The chunks also hold everything CPython's estimates need for a
 * sampled input (below), and a merge into a chunk target comes for free.
 *
 * The file is what `pstats.Stats(path)` loads: one marshal dump (the types
 * of marshal version 2, which every Python 3 reads: dict '{' .. '0', tuple
 * '(' n, int 'i', long 'l' in 15-bit digits, binary float 'g', str 'u'
 * UTF-8) of
 *     {(file, line, funcname): (cc, nc, tt, ct, {caller_key: edge})}
 * with one entry per sub of the graph (a synthetic frame's sub, line 0 in a
 * fake file: ('~', 0, its name without "main::"), as pstats keys built-ins) (none: an unsupported error, for
 * pstats.Stats refuses an empty dict) (SUB_INFO's file and first line; a sub
 * seen only as a caller: file "", line 0), every caller also a key.
 * funcname: for Python input (the format row's language) the function
 * without its module package ("threading::Thread::run" in threading.py ->
 * "Thread.run", as CPython names it; "main::f" of a frame with no module
 * "f"; the samples' root main::RUNTIME as it is); otherwise the sub's full name
 * ("main::fib").  Two subs that would share a key keep their full names.
 *
 * Tracing input (exact):  nc = the sub's calls (the sum of its incoming
 * edges' counts); cc = the fold's ATTRIBUTE "primitive_calls PID SUB" where
 * a call graph's input said it, else nc less the calls from itself (direct
 * recursion; calls through mutual recursion count as primitive: the chunks
 * do not say which they were); tt = its exclusive time, ct = its inclusive
 * time (the sums of the edges' excl and incl, s; NYTProf's incl is the
 * outermost activation's, cProfile's ct too); callers: per caller (call
 * sites summed) the tuple (nc, cc, tt, ct) = (count, "primitive_calls PID
 * SUB <- CALLER" else count or 0 from itself, excl, incl + reci: the part
 * the fold moved to reci is the edge's own), cProfile's order; a count
 * only where the input's callers had no times (ATTRIBUTE graph_edge_times
 * none: the profile module).  An edge of count 0 (chunk_graph.h) and the
 * calls from the fold's root (main::RUNTIME in a fake file: calls from
 * outside the profile) add to the callee's numbers but are no caller, and
 * a sub that is only such a caller is no key.  So pstats -> pstats keeps
 * every number; what it cannot keep: the profile module's code-object key
 * of its top entry, named from its co_name.  A Python funcname loses the
 * "@<line>" the pstats reader gives one of two same-named functions (its
 * line is the key's own).
 *
 * Sampled input (the fold's ATTRIBUTE sampled_time_sec): what CPython's own
 * `replay --pstats` (Lib/profiling/sampling/pstats_collector.py) makes of
 * samples: cc = samples where the sub is the innermost frame, nc = samples
 * where it is on the stack (once per sample however deep it recurses), tt
 * = cc x interval, ct = nc x interval, callers: per caller the number of
 * (sample, caller->callee adjacency) pairs, a plain int.  The fold's edges
 * give these exactly: excl, incl (outermost activation) and incl + reci per
 * edge, divided by the sample's time (chunk_graph.h: the unit; for inputs
 * whose weights are time, the ns).  Differences from CPython's file (the
 * POD's "pstats" section): one key per function at its def line (CPython's
 * is one per executing line), the outermost frames' caller main::RUNTIME,
 * and no ("__sampled__",) key.
 *
 * Names here: mw = a marshal writer (Python's marshal format on a FILE), pkey = a stats key (file,
 * line, function), py_ = names as Python shows them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write_pstats.h"

typedef struct {
    FILE *fp;
    int bad;
} mw;

static void w_byte(mw *w, int c)
{
    if (putc(c, w->fp) == EOF)
        w->bad = 1;
}
static void w_i32(mw *w, int32_t v)
{
    uint32_t u = (uint32_t)v;
    w_byte(w, (int)(u & 0xff));
    w_byte(w, (int)(u >> 8 & 0xff));
    w_byte(w, (int)(u >> 16 & 0xff));
    w_byte(w, (int)(u >> 24 & 0xff));
}
static void w_int(mw *w, uint64_t v)
{
    if (v <= INT32_MAX) {
        w_byte(w, 'i');
        w_i32(w, (int32_t)v);
    } else { /* TYPE_LONG: digit count, then 15-bit digits, least significant first */
        int n = 0;
        uint64_t t = v;
        while (t) {
            n++;
            t >>= 15;
        }
        w_byte(w, 'l');
        w_i32(w, n);
        while (v) {
            w_byte(w, (int)(v & 0xff));
            w_byte(w, (int)(v >> 8 & 0x7f));
            v >>= 15;
        }
    }
}
static void w_float(mw *w, double d)
{
    unsigned char b[8];
    uint64_t u;
    int i;
    memcpy(&u, &d, 8);
    for (i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (8 * i));
    w_byte(w, 'g');
    if (fwrite(b, 1, 8, w->fp) != 8)
        w->bad = 1;
}
/* str: TYPE_UNICODE, bytes that are not UTF-8 as U+FFFD */
static int w_str(mw *w, const char *p, size_t n)
{
    char *buf = NULL;
    if (!pb_utf8_valid(p, n)) {
        if (n > SIZE_MAX / 3 || !(buf = (char *)malloc(n * 3 + 1)))
            return -1;
        n = pb_utf8_repair(buf, p, n);
        p = buf;
    }
    if (n > INT32_MAX) {
        free(buf);
        return -1;
    }
    w_byte(w, 'u');
    w_i32(w, (int32_t)n);
    if (n && fwrite(p, 1, n, w->fp) != n)
        w->bad = 1;
    free(buf);
    return 0;
}

/* ---- keys -------------------------------------------------------------- */
typedef struct {
    uint32_t file;  /* string id in g->str */
    uint32_t line;
    const char *func; /* into fn (malloc'd arena) */
    size_t flen;
} pkey;

/* the module part of a Python file name: "threading.py" -> "threading",
 * "<frozen runpy>" -> "runpy", ".../pkg/__init__.py" -> "pkg" */
static void py_module(pb_str f, const char **m, size_t *ml)
{
    const char *p = f.ptr, *e = f.ptr + f.len, *s;
    if (f.len > 8 && memcmp(p, "<frozen ", 8) == 0 && e[-1] == '>') {
        p += 8;
        e--;
        for (s = e; s > p && s[-1] != '.'; s--)
            ;
        *m = s;
        *ml = (size_t)(e - s);
        return;
    }
    if (e - p > 3 && memcmp(e - 3, ".py", 3) == 0)
        e -= 3;
    for (s = e; s > p && s[-1] != '/'; s--)
        ;
    if ((size_t)(e - s) == 8 && memcmp(s, "__init__", 8) == 0 && s > p) {
        e = s - 1;
        for (s = e; s > p && s[-1] != '/'; s--)
            ;
    }
    *m = s;
    *ml = (size_t)(e - s);
}

/* funcname for Python input: what follows "<module>::" in the sub's name,
 * "::" as "."; the whole name when the module is not a part of it.  Into
 * out (room for n bytes); returns its length. */
static size_t py_func(pb_str name, pb_str file, char *out)
{
    const char *m, *p = name.ptr, *e = name.ptr + name.len, *start = name.ptr;
    size_t ml, o = 0;
    py_module(file, &m, &ml);
    if (ml) {
        const char *q;
        for (q = p; q + ml + 2 <= e; q++)
            if ((q == p || (q - p >= 2 && q[-1] == ':' && q[-2] == ':')) && memcmp(q, m, ml) == 0 &&
                q[ml] == ':' && q[ml + 1] == ':') {
                start = q + ml + 2;
                break;
            }
    }
    /* a frame without a module: the fold's empty package "main" (but not
     * its root, main::RUNTIME, which no Python function is) */
    if (start == name.ptr && name.len > 6 && memcmp(p, "main::", 6) == 0 &&
        !(name.len == 13 && memcmp(p, "main::RUNTIME", 13) == 0))
        start = p + 6;
    if (start == name.ptr) { /* not a function of the file's module (main::RUNTIME): as it is */
        memcpy(out, name.ptr, name.len);
        return name.len;
    }
    for (p = start; p < e; p++) {
        if (p + 1 < e && p[0] == ':' && p[1] == ':' && p > start) {
            out[o++] = '.';
            p++;
        } else
            out[o++] = *p;
    }
    return o;
}

/* a Python funcname less the "@<line>" the pstats reader adds to tell apart
 * two functions of one name in one module (read_pstats.c), when <line> is
 * the key's own: no Python name has an '@' */
static size_t strip_at_line(const char *f, size_t n, uint32_t line)
{
    char b[24];
    size_t bl = (size_t)snprintf(b, sizeof b, "@%u", line);
    return line && n > bl && memcmp(f + n - bl, b, bl) == 0 ? n - bl : n;
}

static uint32_t pstats_out_key_hash(const pkey *k) { return pb_hash_bytes(k->func, k->flen) ^ pb_mix64(((uint64_t)k->file << 32) | k->line); }

typedef struct {
    pkey *k;
    uint32_t *h;
} keyset;
static uint32_t keyset_hash_of(const void *ctx, uint32_t id) { return ((const keyset *)ctx)->h[id]; }

/* ---- the edges per callee and caller ----------------------------------- */
static int by_prim(const void *a, const void *b)
{
    const pb_cg_prim *x = (const pb_cg_prim *)a, *y = (const pb_cg_prim *)b;
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    return x->caller < y->caller ? -1 : x->caller > y->caller;
}

static void w_key(mw *w, const pb_cgraph *g, const pkey *k, int *bad)
{
    pb_str f = pb_strtab_str(&g->str, k->file);
    w_byte(w, '(');
    w_i32(w, 3);
    if (w_str(w, f.ptr, f.len) < 0 || (w_int(w, k->line), w_str(w, k->func, k->flen)) < 0)
        *bad = 1;
}

/* Over 80 lines, kept whole: the keys, the edges by callee and the dict written from arrays
 * allocated once and freed on one path. */
pb_status pb_pstats_write(const pb_cgraph *g, FILE *fp, pb_error *werr)
{
    mw w = {fp, 0};
    size_t ns = g->nsubs, ne = g->nedges, i, j, fnlen = 0, fo = 0;
    int python = strcmp(pb_cgraph_language(g), "python") == 0, bad = 0;
    int sampled = g->sampled;
    double unit = pb_cgraph_unit_s(g);
    /* CPython: tt = samples x (interval_us / 1e6) */
    double interval = g->sampled && !g->weight_ns && g->interval_us > 0 ? g->interval_us / 1e6 : unit;
    pkey *keys = (pkey *)calloc(ns ? ns : 1, sizeof *keys);
    uint32_t *kh = (uint32_t *)calloc(ns ? ns : 1, sizeof *kh);
    uint32_t *order = (uint32_t *)malloc((ne ? ne : 1) * sizeof *order);
    size_t *first = (size_t *)malloc((ns + 1) * sizeof *first);
    char *fn = NULL;
    unsigned char *drop = NULL, *root = NULL; /* per sub: not written; the fold's root (exact graphs) */
    size_t pi = 0;
    uint32_t empty_file, tilde_file; /* interned before any name is looked at: the arena may move */
    keyset ks = {keys, kh};
    pb_index kix = {NULL, 0};
    pb_strtab *str = (pb_strtab *)&g->str; /* one more string: "" */
    pb_status st = PB_OK;

    if (ns == 0) { /* pstats.Stats refuses an empty dict ("Cannot create or construct ...") */
        st = pb_fail_nooff(werr, PB_ERR_UNSUPPORTED, "the profile has no subs: Python's pstats cannot load an empty one");
        goto done;
    }
    for (i = 0; i < ns; i++)
        fnlen += pb_strtab_len(&g->str, g->subs[i].name) + 1;
    if (!keys || !kh || !order || !first || !(fn = (char *)malloc(fnlen ? fnlen : 1)) ||
        pb_strtab_intern(str, "", 0, &empty_file) < 0 || pb_strtab_intern(str, "~", 1, &tilde_file) < 0) {
        st = pb_fail_nooff(werr, PB_ERR_LIMIT, "out of memory");
        goto done;
    }
    /* the keys, each once */
    for (i = 0; i < ns; i++) {
        const pb_cg_sub *s = &g->subs[i];
        pb_str name = pb_cgraph_name(g, (uint32_t)i), file = pb_cgraph_file(g, s->fid);
        pkey *k = &keys[i];
        uint32_t id, fid;
        size_t slot;
        int pass;
        if (s->has_info && s->line == 0 && (pb_cgraph_fid_flags(g, s->fid) & PB_FID_IS_FAKE)) {
            /* a synthetic frame (<GC>, <native>): a built-in, as pstats has them */
            k->file = tilde_file;
            k->line = 0;
            if (name.len > 6 && memcmp(name.ptr, "main::", 6) == 0)
                name = pb_str_make(name.ptr + 6, name.len - 6, name.utf8);
            file = pb_str_make("", 0, 0);
        } else {
            if (!s->has_info || pb_strtab_intern(str, file.ptr, file.len, &fid) < 0)
                fid = empty_file;
            k->file = fid;
            k->line = s->has_info ? s->line : 0;
        }
        for (pass = python ? 0 : 1; pass < 2; pass++) {
            k->func = fn + fo;
            k->flen = pass == 0 ? py_func(name, file, fn + fo) : (memcpy(fn + fo, name.ptr, name.len), name.len);
            if (pass == 0)
                k->flen = strip_at_line(k->func, k->flen, k->line);
            kh[i] = pstats_out_key_hash(k);
            if (pb_index_reserve(&kix, i, keyset_hash_of, &ks) < 0) {
                st = pb_fail_nooff(werr, PB_ERR_LIMIT, "out of memory");
                goto done;
            }
            PB_INDEX_FIND(&kix, kh[i], slot, id,
                          keys[id].file == k->file && keys[id].line == k->line && keys[id].flen == k->flen &&
                              memcmp(keys[id].func, k->func, k->flen) == 0);
            if (id == PB_INDEX_NONE) {
                pb_index_set(&kix, slot, (uint32_t)i);
                break;
            }
            if (pass == 1) { /* the same sub name twice cannot happen: names are the subs' keys */
                st = pb_fail_nooff(werr, PB_ERR_CORRUPT, "two subs with one pstats key %.*s", (int)name.len,
                                   name.ptr);
                goto done;
            }
        }
        fo += k->flen;
    }
    /* the edges by callee, then caller */
    for (i = 0; i < ne; i++)
        order[i] = (uint32_t)i;
    pb_cgraph_order_edges(g, order, ne, 1);
    for (i = 0, j = 0; i <= ns; i++) {
        while (j < ne && g->edges[order[j]].callee < i)
            j++;
        first[i] = j;
    }

    /* an exact graph's edge of count 0 is no call (chunk_graph.h): its
     * times are the callee's, it is no caller's, and a sub that is only
     * such a caller (the fold's root) is no function */
    if (!sampled) {
        if (!(drop = (unsigned char *)calloc(ns, 1)) || !(root = (unsigned char *)calloc(ns, 1))) {
            st = pb_fail_nooff(werr, PB_ERR_LIMIT, "out of memory");
            goto done;
        }
        /* the fold's root (the calls from outside the profile, fold_samples.c):
         * main::RUNTIME in a file of its own making */
        for (i = 0; i < ns; i++) {
            pb_str nm = pb_cgraph_name(g, (uint32_t)i);
            root[i] = nm.len == 13 && memcmp(nm.ptr, "main::RUNTIME", 13) == 0 && g->subs[i].has_info &&
                      (pb_cgraph_fid_flags(g, g->subs[i].fid) & PB_FID_IS_FAKE);
        }
        for (i = 0; i < ne; i++)
            if (!g->edges[i].count || root[g->edges[i].caller])
                drop[g->edges[i].caller] = 1;
        for (i = 0; i < ne; i++)
            if (g->edges[i].count && !root[g->edges[i].caller])
                drop[g->edges[i].caller] = 0;
        for (i = 0; i < ns; i++)
            if (first[i] != first[i + 1])
                drop[i] = 0;
    }
    /* the edges' primitive calls by callee, then caller */
    if (g->nprims)
        qsort(((pb_cgraph *)g)->prims, g->nprims, sizeof *g->prims, by_prim);
    /* the dict */
    w_byte(&w, '{');
    for (i = 0; i < ns && !bad; i++) {
        uint64_t nc = 0, self_calls = 0, cc;
        double tt = 0, ct = 0;
        size_t a = first[i], b = first[i + 1];
        if (drop && drop[i])
            continue;
        for (j = a; j < b; j++) {
            const pb_cg_edge *e = &g->edges[order[j]];
            nc += e->count;
            if (e->caller == e->callee)
                self_calls += e->count;
            tt += e->excl;
            ct += e->incl;
        }
        w_key(&w, g, &keys[i], &bad);
        w_byte(&w, '(');
        w_i32(&w, 5);
        if (sampled) {
            uint64_t direct = pb_cgraph_units(tt, unit), cumul = pb_cgraph_units(ct, unit);
            w_int(&w, direct);
            w_int(&w, cumul);
            w_float(&w, (double)direct * interval);
            w_float(&w, (double)cumul * interval);
        } else {
            cc = g->subs[i].has_cc ? g->subs[i].cc : nc - self_calls;
            w_int(&w, cc);
            w_int(&w, nc);
            w_float(&w, tt);
            w_float(&w, ct);
        }
        w_byte(&w, '{');
        for (j = a; j < b;) {
            uint32_t caller = g->edges[order[j]].caller;
            uint64_t cnt = 0;
            double et = 0, ei = 0, er = 0;
            for (; j < b && g->edges[order[j]].caller == caller; j++) {
                const pb_cg_edge *e = &g->edges[order[j]];
                cnt += e->count;
                et += e->excl;
                ei += e->incl;
                er += e->reci;
            }
            if (!sampled && (!cnt || root[caller]))
                continue;
            w_key(&w, g, &keys[caller], &bad);
            if (sampled)
                w_int(&w, pb_cgraph_units(ei + er, unit));
            else if (g->counts_only) /* the profile module's callers: a count, as it writes them */
                w_int(&w, cnt);
            else {
                /* the edge's primitive calls: the fold's ATTRIBUTE where they differ */
                uint64_t ecc = caller == i ? 0 : cnt;
                while (pi < g->nprims &&
                       (g->prims[pi].callee < i || (g->prims[pi].callee == i && g->prims[pi].caller < caller)))
                    pi++;
                if (pi < g->nprims && g->prims[pi].callee == i && g->prims[pi].caller == caller)
                    ecc = g->prims[pi].cc;
                w_byte(&w, '(');
                w_i32(&w, 4);
                w_int(&w, cnt);
                w_int(&w, ecc);
                w_float(&w, et);
                w_float(&w, ei + er); /* the edge's own ct: what the fold moved to reci is a part of it */
            }
        }
        w_byte(&w, '0');
        if (w.bad)
            break;
    }
    w_byte(&w, '0');
    if (bad)
        st = pb_fail_nooff(werr, PB_ERR_LIMIT, "out of memory");
    else if (w.bad)
        st = pb_fail_write(werr, "the output", errno);
done:
    PB_FREE_ALL(keys, kh, order, first, fn, drop, root);
    pb_index_free(&kix);
    return st;
}
