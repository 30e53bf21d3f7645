/* read_pstats.c - Python's pstats files: cProfile, the profile module,
 * CPython 3.15's sampling profiler (`replay --pstats -o`).
 *
 * A pstats file is one marshal dump (CPython's Python/marshal.c, versions
 * 2-5) of a dict {(file, line, func): (cc, nc, tt, ct, callers)}; callers is
 * {(file, line, func): (nc, cc, tt, ct)} (cProfile, 3.15's replay) or
 * {(file, line, func): count} (the profile module).  No magic: the sniffer
 * (pb_pstats_sniff) looks at the shape.  Read here: dict, tuple and small
 * tuple, list, int, long (15-bit digits), binary and text floats, every
 * string kind, None/True/False, references (FLAG_REF, TYPE_REF, indices in
 * pre-order, as marshal.c reserves them), and code objects (the profile
 * module stores the run's top code object as a key's func: named from its
 * co_name).  Anything else: `unsupported`.  Bounded: nesting depth
 * (PSTATS_MAX_DEPTH), strings (the source's max_record_size), references
 * (an index must name an object already begun).
 *
 * The stream (one pass): the top dict's entries one by one; each key a
 * frame (sink frame(): package from the module path as python.h says, name =
 * func, "~" keys synthetic subs named as pstats prints them); each entry a
 * graph_func (nc, cc, tt and ct in ns) and one graph_edge per caller.
 * Two keys of one file and one func name on different lines are two
 * functions (two classes' __init__): the later one is named "func@line".
 * CPython 3.15's sampled pstats (a ("__sampled__",): True key) keys by the
 * executing line: there every key of one file and func name is one sub
 * (joined, the first line seen its line), and ATTRIBUTE call_graph says
 * "sampled" (else "exact"), graph_producer what wrote it, graph_edge_times
 * "none" where the callers hold a count only (the profile module).  Memory: the objects marked for reference
 * (keys and their strings: O(functions)) and one entry at a time.
 *
 * Names here: ps = this reader's state (pstats reader), mv = one marshal value, pkey = a key's
 * frame (file, line, function).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fold_samples.h"
#include "read_pstats.h"
#include "model.h"
#include "python.h"
#include "reader.h"

#define PSTATS_MAX_DEPTH 200
#define PSTATS_MAX_ITEMS 0x7FFFFFFFu
#define PER 0x80000000u /* a node ref in the persistent arena */

enum { V_NONE, V_BOOL, V_INT, V_FLOAT, V_STR, V_TUPLE, V_DICT, V_CODE, V_OTHER };

typedef struct {
    uint8_t t;
    uint32_t n;     /* tuple items; dict pairs */
    uint32_t kids;  /* first kid in the arena's kid array */
    int64_t i;      /* int; bool; code: co_firstlineno */
    double d;       /* float; an int too large for int64 */
    uint32_t s, s2; /* str: its string; code: co_name, co_filename */
} mv;

typedef struct {
    mv *v;
    size_t n, cap;
    uint32_t *k;
    size_t kn, kcap;
} arena;

/* a key's frame: (file, line, func) strings -> sink frame id */
typedef struct {
    uint32_t file, line, func, id;
} pkey;
/* (file, func) -> the line of the first key of that name */
typedef struct {
    uint32_t file, func, line;
} pname;

/* a kept entry and its callers (numbers in ns) */
typedef struct {
    uint32_t key;
    uint64_t cc, nc, tt, ct;
    size_t first_call, ncalls;
} p_ent;
typedef struct {
    uint32_t key;
    int plain; /* a count only */
    uint64_t nc, cc, tt, ct;
} p_call;

typedef struct {
    pb_source *s;
    pb_error *err;
    pb_sample_sink *out;
    pb_strtab str;
    arena tmp, per;
    uint32_t *refs; size_t nrefs, crefs;
    uint32_t *scratch; size_t nscr, cscr;
    pkey *keys; size_t nkeys, ckeys; pb_index tkeys;
    pname *names; size_t nnames, cnames; pb_index tnames;
    char *pkgbuf, *namebuf; size_t pkgcap, namecap;
    p_ent *ents; size_t nents, cents;
    p_call *calls; size_t ncalls, ccalls;
    int sampled, plain_counts, announced;
} ps;

#define OOM(r) pb_fail((r)->err, PB_ERR_LIMIT, pb_src_offset((r)->s), "out of memory reading a pstats file")

static pb_status pstats_need(ps *r, size_t n, const char *what)
{
    int got = pb_src_need(r->s, n);
    if (got == 1)
        return PB_OK;
    if (got < 0)
        return r->err->status ? r->err->status : PB_ERR_IO;
    return pb_fail(r->err, PB_ERR_TRUNCATED, pb_src_offset(r->s), "the file ends inside %s", what);
}

static pb_status rd_i32(ps *r, int32_t *v, const char *what)
{
    pb_status st = pstats_need(r, 4, what);
    if (st != PB_OK)
        return st;
    *v = (int32_t)pb_le32(r->s->p);
    r->s->p += 4;
    return PB_OK;
}

static mv *node(ps *r, uint32_t ref)
{
    return ref & PER ? &r->per.v[ref & ~PER] : &r->tmp.v[ref];
}

static pb_status pstats_new_node(ps *r, int per, uint8_t t, uint32_t *ref)
{
    arena *a = per ? &r->per : &r->tmp;
    if (a->n >= 0x7FFFFFF0u || pb_grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v) < 0)
        return OOM(r);
    memset(&a->v[a->n], 0, sizeof *a->v);
    a->v[a->n].t = t;
    *ref = (uint32_t)a->n++ | (per ? PER : 0);
    return PB_OK;
}

/* reserve reference index for a FLAG_REF object (pre-order) */
static pb_status ref_reserve(ps *r, uint32_t ref)
{
    if (r->nrefs >= 0x7FFFFFF0u || pb_grow((void **)&r->refs, &r->crefs, r->nrefs + 1, sizeof *r->refs) < 0)
        return OOM(r);
    r->refs[r->nrefs++] = ref;
    return PB_OK;
}

/* a container's node, its reference reserved first when flag (FLAG_REF) */
static pb_status new_ref_node(ps *r, int per, uint8_t t, int flag, uint32_t *ref)
{
    pb_status st = pstats_new_node(r, per, t, ref);
    return st != PB_OK || !flag ? st : ref_reserve(r, *ref);
}

static pb_status push_kid(ps *r, uint32_t ref)
{
    if (pb_grow((void **)&r->scratch, &r->cscr, r->nscr + 1, sizeof *r->scratch) < 0)
        return OOM(r);
    r->scratch[r->nscr++] = ref;
    return PB_OK;
}

/* the kids pushed since base become node ref's */
static pb_status take_kids(ps *r, uint32_t ref, size_t base)
{
    arena *a = ref & PER ? &r->per : &r->tmp;
    size_t n = r->nscr - base;
    mv *v;
    if (pb_grow((void **)&a->k, &a->kcap, a->kn + n + 1, sizeof *a->k) < 0)
        return OOM(r);
    v = node(r, ref);
    v->kids = (uint32_t)a->kn;
    if (n) /* (no scratch yet when nothing was pushed) */
        memcpy(a->k + a->kn, r->scratch + base, n * sizeof *a->k);
    a->kn += n;
    r->nscr = base;
    return PB_OK;
}

static uint32_t kid(ps *r, const mv *v, uint32_t ref, uint32_t i)
{
    (void)v;
    return (ref & PER ? r->per.k : r->tmp.k)[node(r, ref)->kids + i];
}

static pb_status unsupported(ps *r, uint64_t off, const char *what, unsigned code)
{
    return pb_fail(r->err, PB_ERR_UNSUPPORTED, off, "marshal %s (type byte 0x%02x) is not part of a pstats file", what,
                   code);
}

static pb_status read_obj(ps *r, int depth, int per, uint32_t *out);

/* a string of n bytes at the source */
static pb_status read_str(ps *r, size_t n, int per, int flag, uint32_t *out)
{
    pb_status st;
    uint32_t id;
    mv *v;
    if ((st = pstats_need(r, n, "a string")) != PB_OK)
        return st;
    if (pb_strtab_intern(&r->str, (const char *)r->s->p, n, &id) < 0)
        return OOM(r);
    r->s->p += n;
    if ((st = pstats_new_node(r, per, V_STR, out)) != PB_OK)
        return st;
    v = node(r, *out);
    v->s = id;
    return flag ? ref_reserve(r, *out) : PB_OK;
}

/* items of a tuple/list (n) or a dict (until TYPE_NULL) into node ref */
static pb_status read_items(ps *r, int depth, int per, uint32_t ref, int64_t n, int dict)
{
    size_t base = r->nscr;
    int64_t i;
    uint32_t c;
    pb_status st;
    for (i = 0; dict || i < n; i++) {
        if (dict) {
            if ((st = pstats_need(r, 1, "a dict")) != PB_OK)
                return st;
            if (r->s->p[0] == '0') {
                r->s->p++;
                break;
            }
            if ((st = read_obj(r, depth + 1, per, &c)) != PB_OK || (st = push_kid(r, c)) != PB_OK)
                return st;
        }
        if ((st = read_obj(r, depth + 1, per, &c)) != PB_OK || (st = push_kid(r, c)) != PB_OK)
            return st;
        if (i >= (int64_t)PSTATS_MAX_ITEMS)
            return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(r->s), "a container of more than %u items",
                           PSTATS_MAX_ITEMS);
    }
    node(r, ref)->n = (uint32_t)(dict ? i : n);
    return take_kids(r, ref, base);
}

static pb_status read_code(ps *r, int depth, int per, uint32_t ref)
{
    /* 3.11 and later: argcount, posonlyargcount, kwonlyargcount, stacksize,
     * flags; code, consts, names, localsplusnames, localspluskinds,
     * filename, name, qualname, firstlineno, linetable, exceptiontable.
     * 3.8-3.10: six ints (nlocals too); code, consts, names, varnames,
     * freevars, cellvars, filename, name, firstlineno, lnotab. */
    int32_t k, first = 0;
    int nints, nobj, i, old;
    pb_status st;
    uint32_t c, name = 0, file = 0;
    if ((st = pstats_need(r, 25, "a code object")) != PB_OK)
        return st;
    old = (r->s->p[20] & 0x7F) != 's' && (r->s->p[24] & 0x7F) == 's';
    nints = old ? 6 : 5;
    for (i = 0; i < nints; i++)
        if ((st = rd_i32(r, &k, "a code object")) != PB_OK)
            return st;
    nobj = 8; /* 3.8: code .. name; 3.11: code .. qualname */
    for (i = 0; i < nobj; i++) {
        if ((st = read_obj(r, depth + 1, per, &c)) != PB_OK)
            return st;
        if (i == (old ? 6 : 5) && node(r, c)->t == V_STR)
            file = node(r, c)->s;
        if (i == (old ? 7 : 6) && node(r, c)->t == V_STR)
            name = node(r, c)->s;
    }
    if ((st = rd_i32(r, &first, "a code object")) != PB_OK)
        return st;
    for (i = 0; i < (old ? 1 : 2); i++) /* lnotab; linetable, exceptiontable */
        if ((st = read_obj(r, depth + 1, per, &c)) != PB_OK)
            return st;
    node(r, ref)->s = name;
    node(r, ref)->s2 = file;
    node(r, ref)->i = first;
    return PB_OK;
}

/* a tuple's or a set's n items (what: "a tuple"), after its node */
static pb_status read_seq(ps *r, int depth, int per, uint8_t t, int flag, uint32_t *out, int32_t n, const char *what,
                          uint64_t off)
{
    pb_status st;
    if (n < 0)
        return pb_fail(r->err, PB_ERR_CORRUPT, off, "%s of %ld items", what, (long)n);
    if ((st = new_ref_node(r, per, t, flag, out)) != PB_OK)
        return st;
    return read_items(r, depth, per, *out, n, 0);
}

/* Over 80 lines, kept whole: one switch over the marshal type codes, each case short; the codes
 * read best side by side. */
static pb_status read_obj(ps *r, int depth, int per, uint32_t *out)
{
    pb_status st;
    unsigned code, type;
    int flag;
    int32_t n;
    uint64_t off = pb_src_offset(r->s);
    mv *v;
    if (depth > PSTATS_MAX_DEPTH)
        return pb_fail(r->err, PB_ERR_LIMIT, off, "marshal objects nested more than %d deep", PSTATS_MAX_DEPTH);
    if ((st = pstats_need(r, 1, "an object")) != PB_OK)
        return st;
    code = r->s->p[0];
    r->s->p++;
    flag = (code & 0x80) != 0;
    type = code & 0x7F;
    if (flag)
        per = 1; /* a referenced object lives as long as the file */
    switch (type) {
    case 'N': case 'T': case 'F': case 'S': case '.':
        if ((st = pstats_new_node(r, per, type == 'T' || type == 'F' ? V_BOOL : V_NONE, out)) != PB_OK)
            return st;
        node(r, *out)->i = type == 'T';
        return flag ? ref_reserve(r, *out) : PB_OK;
    case 'i':
        if ((st = rd_i32(r, &n, "an int")) != PB_OK || (st = pstats_new_node(r, per, V_INT, out)) != PB_OK)
            return st;
        node(r, *out)->i = n;
        return flag ? ref_reserve(r, *out) : PB_OK;
    case 'l': {
        /* |n| 15-bit digits, least significant first; the sign is n's */
        int32_t i;
        double d = 0, scale = 1;
        uint64_t u = 0;
        int big = 0;
        if ((st = rd_i32(r, &n, "a long")) != PB_OK)
            return st;
        if (n == INT32_MIN || (n < 0 ? -n : n) > 100000)
            return pb_fail(r->err, PB_ERR_LIMIT, off, "a long of %ld digits", (long)n);
        for (i = 0; i < (n < 0 ? -n : n); i++) {
            unsigned dg;
            if ((st = pstats_need(r, 2, "a long")) != PB_OK)
                return st;
            dg = pb_le16(r->s->p);
            r->s->p += 2;
            if (dg > 0x7FFF)
                return pb_fail(r->err, PB_ERR_CORRUPT, off, "a long's digit 0x%x is above 15 bits", dg);
            if (i < 4)
                u |= (uint64_t)dg << (15 * i);
            else if (dg)
                big = 1;
            d += dg * scale;
            scale *= 32768.0;
        }
        if ((st = pstats_new_node(r, per, V_INT, out)) != PB_OK)
            return st;
        v = node(r, *out);
        if (big || u > (uint64_t)INT64_MAX) {
            v->t = V_FLOAT;
            v->d = n < 0 ? -d : d;
        } else {
            v->i = n < 0 ? -(int64_t)u : (int64_t)u;
        }
        return flag ? ref_reserve(r, *out) : PB_OK;
    }
    case 'g':
        if ((st = pstats_need(r, 8, "a float")) != PB_OK || (st = pstats_new_node(r, per, V_FLOAT, out)) != PB_OK)
            return st;
        node(r, *out)->d = pb_le_f64(r->s->p);
        r->s->p += 8;
        return flag ? ref_reserve(r, *out) : PB_OK;
    case 'f': {
        char buf[260];
        size_t len;
        if ((st = pstats_need(r, 1, "a float")) != PB_OK)
            return st;
        len = r->s->p[0];
        r->s->p++;
        if ((st = pstats_need(r, len, "a float")) != PB_OK)
            return st;
        memcpy(buf, r->s->p, len);
        buf[len] = '\0';
        r->s->p += len;
        if ((st = pstats_new_node(r, per, V_FLOAT, out)) != PB_OK)
            return st;
        node(r, *out)->d = strtod(buf, NULL);
        return flag ? ref_reserve(r, *out) : PB_OK;
    }
    case 's': case 't': case 'u': case 'a': case 'A':
        if ((st = rd_i32(r, &n, "a string")) != PB_OK)
            return st;
        if (n < 0)
            return pb_fail(r->err, PB_ERR_CORRUPT, off, "a string of %ld bytes", (long)n);
        return read_str(r, (size_t)n, per, flag, out);
    case 'z': case 'Z':
        if ((st = pstats_need(r, 1, "a string")) != PB_OK)
            return st;
        n = r->s->p[0];
        r->s->p++;
        return read_str(r, (size_t)n, per, flag, out);
    case 'r': {
        uint32_t idx;
        if ((st = rd_i32(r, &n, "a reference")) != PB_OK)
            return st;
        idx = (uint32_t)n;
        if (n < 0 || idx >= r->nrefs)
            return pb_fail(r->err, PB_ERR_CORRUPT, off, "a reference to object %ld, only %zu objects marked so far",
                           (long)n, r->nrefs);
        *out = r->refs[idx];
        if (*out == UINT32_MAX)
            return unsupported(r, off, "reference to the top dict", code);
        return PB_OK;
    }
    case '(': case '[': case ')':
        if (type == ')') {
            if ((st = pstats_need(r, 1, "a tuple")) != PB_OK)
                return st;
            n = r->s->p[0];
            r->s->p++;
        } else if ((st = rd_i32(r, &n, "a tuple")) != PB_OK) {
            return st;
        }
        return read_seq(r, depth, per, V_TUPLE, flag, out, n, "a tuple", off);
    case '{':
        if ((st = new_ref_node(r, per, V_DICT, flag, out)) != PB_OK)
            return st;
        return read_items(r, depth, per, *out, 0, 1);
    case 'c':
        if ((st = new_ref_node(r, per, V_CODE, flag, out)) != PB_OK)
            return st;
        return read_code(r, depth, per, *out);
    case '<': case '>':
        /* sets (in a code object's constants) */
        if ((st = rd_i32(r, &n, "a set")) != PB_OK)
            return st;
        return read_seq(r, depth, per, V_OTHER, flag, out, n, "a set", off);
    case 'y':
        if ((st = pstats_need(r, 16, "a complex")) != PB_OK || (st = pstats_new_node(r, per, V_OTHER, out)) != PB_OK)
            return st;
        r->s->p += 16;
        return flag ? ref_reserve(r, *out) : PB_OK;
    default:
        return unsupported(r, off, "object", code);
    }
}

/* ---- the pstats shape ------------------------------------------------------ */
static uint32_t pstats_key_hash(uint32_t file, uint32_t line, uint32_t func)
{
    return pb_mix64(((uint64_t)file << 32 | func) ^ ((uint64_t)line * UINT64_C(0x9E3779B97F4A7C15)));
}
static uint32_t key_hash_of(const void *ctx, uint32_t i)
{
    const pkey *k = &((const ps *)ctx)->keys[i];
    return pstats_key_hash(k->file, k->line, k->func);
}
static uint32_t name_hash_of(const void *ctx, uint32_t i)
{
    const pname *k = &((const ps *)ctx)->names[i];
    return pstats_key_hash(k->file, 0, k->func);
}

static int is_num(const mv *v) { return v->t == V_INT || v->t == V_FLOAT || v->t == V_BOOL; }
static double pstats_num(const mv *v) { return v->t == V_FLOAT ? v->d : (double)v->i; }
static uint64_t count_of(const mv *v)
{
    double d = pstats_num(v);
    return d <= 0 || d != d ? 0 : d >= 1.8e19 ? UINT64_MAX : (uint64_t)d;
}
/* seconds -> ns (below 0 or not a number: 0) */
static uint64_t ns_of(const mv *v)
{
    double d = pstats_num(v) * 1e9;
    return d <= 0 || d != d ? 0 : d >= 1.8e19 ? UINT64_MAX : (uint64_t)(d + 0.5);
}

static pb_status corrupt(ps *r, const char *what)
{
    return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(r->s), "%s", what);
}

/* the key (file, line, func) of tuple kref: its index in r->keys */
static pb_status key_of(ps *r, uint32_t kref, uint32_t *out)
{
    const mv *k = node(r, kref), *f, *l, *fn;
    uint32_t file, line, func, i;
    size_t slot;
    if (k->t != V_TUPLE || k->n != 3)
        return corrupt(r, "a pstats key is not a (file, line, function) tuple");
    f = node(r, kid(r, k, kref, 0));
    l = node(r, kid(r, k, kref, 1));
    fn = node(r, kid(r, k, kref, 2));
    if (f->t != V_STR || !is_num(l) || (fn->t != V_STR && fn->t != V_CODE))
        return corrupt(r, "a pstats key is not a (file, line, function) tuple");
    file = f->s;
    line = pstats_num(l) > 0 && pstats_num(l) < 2147483647.0 ? (uint32_t)pstats_num(l) : 0;
    func = fn->s; /* a code object: its co_name */
    if (pb_index_reserve(&r->tkeys, r->nkeys, key_hash_of, r) < 0)
        return OOM(r);
    PB_INDEX_FIND(&r->tkeys, pstats_key_hash(file, line, func), slot, i,
                  r->keys[i].file == file && r->keys[i].line == line && r->keys[i].func == func);
    if (i == PB_INDEX_NONE) {
        if (r->nkeys >= 0x7FFFFFF0u ||
            pb_index_add(&r->tkeys, slot, (void **)&r->keys, &r->ckeys, r->nkeys, sizeof *r->keys) < 0)
            return OOM(r);
        r->keys[r->nkeys].file = file;
        r->keys[r->nkeys].line = line;
        r->keys[r->nkeys].func = func;
        r->keys[r->nkeys].id = UINT32_MAX;
        i = (uint32_t)r->nkeys++;
    }
    *out = i;
    return PB_OK;
}

/* the sink frame of key i: package from the module path, name = func
 * (func@line for a second function of that name in one file, unless
 * sampled: there one function's keys are joined) */
static pb_status key_frame(ps *r, uint32_t i, uint32_t *id)
{
    pkey *key = &r->keys[i];
    uint32_t file = key->file, line = key->line, func = key->func, j, nline;
    size_t s2;
    char at[24] = "";
    pb_frame pf;
    pb_status st;
    const char *fs, *ns;
    size_t fl, nl;
    if (key->id != UINT32_MAX) {
        *id = key->id;
        return PB_OK;
    }
    if (pb_index_reserve(&r->tnames, r->nnames, name_hash_of, r) < 0)
        return OOM(r);
    PB_INDEX_FIND(&r->tnames, pstats_key_hash(file, 0, func), s2, j, r->names[j].file == file && r->names[j].func == func);
    if (j == PB_INDEX_NONE) {
        if (pb_index_add(&r->tnames, s2, (void **)&r->names, &r->cnames, r->nnames, sizeof *r->names) < 0)
            return OOM(r);
        r->names[r->nnames].file = file;
        r->names[r->nnames].func = func;
        r->names[r->nnames].line = line;
        j = (uint32_t)r->nnames++;
    }
    nline = r->names[j].line;
    fs = pb_strtab_ptr(&r->str, file);
    fl = pb_strtab_len(&r->str, file);
    ns = pb_strtab_ptr(&r->str, func);
    nl = pb_strtab_len(&r->str, func);
    memset(&pf, 0, sizeof pf);
    /* a function of one name defined on several lines: name@line */
    if (nline != line && !r->sampled)
        snprintf(at, sizeof at, "@%u", line);
    if (pb_python_frame(&pf, &r->pkgbuf, &r->pkgcap, &r->namebuf, &r->namecap, fs, fl, ns, nl, at[0] ? at : NULL) < 0)
        return OOM(r);
    /* sampled: the key's line is the executing line (the call site in a caller) */
    pf.line = (int32_t)line;
    pf.first_line = r->sampled ? -1 : (int32_t)line;
    if ((st = r->out->frame(r->out, &pf, id)) != PB_OK)
        return st;
    r->keys[i].id = *id;
    return PB_OK;
}

static pb_status pstats_announce(ps *r)
{
    pb_status st;
    if (r->announced)
        return PB_OK;
    r->announced = 1;
    if ((st = r->out->attribute(r->out, "sample_weight_unit", pb_str_c("ns"))) != PB_OK)
        return st;
    /* what nytprofhtml's page header names: the file, and when it was
     * written (a pstats file keeps no date: its mtime stands for the run's) */
    if ((st = pb_sample_file_header(r->out, r->err->file, r->s, 1)) != PB_OK)
        return st;
    if (r->out->thread && (st = r->out->thread(r->out, 0, 1, 0, NULL)) != PB_OK)
        return st;
    return PB_OK;
}

/* one entry of the top dict, kept (the ("__sampled__",) key that says how
 * to read them all comes last) */
static pb_status entry(ps *r, uint32_t kref, uint32_t vref)
{
    const mv *k = node(r, kref), *v = node(r, vref), *callers;
    uint32_t cref, i, j;
    pb_status st;
    p_ent *e;
    if (k->t == V_TUPLE && k->n == 1) {
        const mv *s = node(r, kid(r, k, kref, 0));
        if (s->t == V_STR && pb_strtab_len(&r->str, s->s) == 11 && !memcmp(pb_strtab_ptr(&r->str, s->s), "__sampled__", 11)) {
            r->sampled = 1;
            return PB_OK;
        }
    }
    if (v->t != V_TUPLE || v->n != 5)
        return corrupt(r, "a pstats value is not a (cc, nc, tt, ct, callers) tuple");
    for (i = 0; i < 4; i++)
        if (!is_num(node(r, kid(r, v, vref, i))))
            return corrupt(r, "a pstats value is not a (cc, nc, tt, ct, callers) tuple");
    cref = kid(r, v, vref, 4);
    callers = node(r, cref);
    if (callers->t != V_DICT)
        return corrupt(r, "a pstats value's callers are not a dict");
    if (pb_grow((void **)&r->ents, &r->cents, r->nents + 1, sizeof *r->ents) < 0)
        return OOM(r);
    e = &r->ents[r->nents];
    if ((st = key_of(r, kref, &e->key)) != PB_OK)
        return st;
    e->cc = count_of(node(r, kid(r, v, vref, 0)));
    e->nc = count_of(node(r, kid(r, v, vref, 1)));
    e->tt = ns_of(node(r, kid(r, v, vref, 2)));
    e->ct = ns_of(node(r, kid(r, v, vref, 3)));
    e->first_call = r->ncalls;
    e->ncalls = callers->n;
    r->nents++;
    for (i = 0; i < callers->n; i++) {
        uint32_t ck = kid(r, callers, cref, 2 * i), cvr = kid(r, callers, cref, 2 * i + 1);
        const mv *cv = node(r, cvr);
        p_call *c;
        if (pb_grow((void **)&r->calls, &r->ccalls, r->ncalls + 1, sizeof *r->calls) < 0)
            return OOM(r);
        c = &r->calls[r->ncalls];
        memset(c, 0, sizeof *c);
        if ((st = key_of(r, ck, &c->key)) != PB_OK)
            return st;
        if (is_num(cv)) {
            /* the profile module, the sampling replay: a count */
            c->plain = 1;
            r->plain_counts = 1;
            c->nc = c->cc = count_of(cv);
        } else if (cv->t == V_TUPLE && cv->n == 4) {
            for (j = 0; j < 4; j++)
                if (!is_num(node(r, kid(r, cv, cvr, j))))
                    return corrupt(r, "a caller's value is not (nc, cc, tt, ct)");
            c->nc = count_of(node(r, kid(r, cv, cvr, 0)));
            c->cc = count_of(node(r, kid(r, cv, cvr, 1)));
            c->tt = ns_of(node(r, kid(r, cv, cvr, 2)));
            c->ct = ns_of(node(r, kid(r, cv, cvr, 3)));
        } else {
            return corrupt(r, "a caller's value is not a count or (nc, cc, tt, ct)");
        }
        r->ncalls++;
    }
    return PB_OK;
}

/* the kept entries into the sink: frames, functions, edges */
static pb_status pstats_flush(ps *r)
{
    size_t i, j;
    pb_status st;
    uint64_t interval = 0;
    if ((st = pstats_announce(r)) != PB_OK)
        return st;
    /* sampled: ct = nc x the interval (CPython's replay); an edge's count
     * of samples stands for count x the interval of its callee's time */
    for (i = 0; r->sampled && i < r->nents && !interval; i++)
        if (r->ents[i].nc)
            interval = r->ents[i].ct / r->ents[i].nc;
    for (i = 0; i < r->nents; i++) {
        const p_ent *e = &r->ents[i];
        pb_graph_func g;
        memset(&g, 0, sizeof g);
        if ((st = key_frame(r, e->key, &g.frame)) != PB_OK)
            return st;
        g.nc = e->nc;
        g.cc = e->cc;
        g.excl = e->tt;
        g.incl = e->ct;
        if (r->out->graph_func && (st = r->out->graph_func(r->out, 0, &g)) != PB_OK)
            return st;
        /* sampled: each key is a line of its function (its own samples there) */
        if (r->sampled && r->out->graph_line && (st = r->out->graph_line(r->out, 0, g.frame, r->keys[e->key].line, e->tt)) != PB_OK)
            return st;
        for (j = e->first_call; j < e->first_call + e->ncalls; j++) {
            const p_call *c = &r->calls[j];
            pb_graph_edge ge;
            memset(&ge, 0, sizeof ge);
            ge.callee = g.frame;
            if ((st = key_frame(r, c->key, &ge.caller)) != PB_OK)
                return st;
            ge.nc = c->nc;
            ge.cc = c->cc;
            ge.excl = c->tt;
            ge.incl = c->ct;
            if (c->plain && r->sampled)
                ge.incl = c->nc * interval;
            else if (c->plain && e->ncalls == 1 && c->nc == e->nc)
                ge.excl = e->tt, ge.incl = e->ct; /* the profile module: the one caller has it all */
            if (r->out->graph_edge && (st = r->out->graph_edge(r->out, 0, &ge)) != PB_OK)
                return st;
        }
    }
    return PB_OK;
}

static void ps_init(void *p, pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    ps *r = (ps *)p;
    (void)opt, (void)sink; /* its limits are the source's (max_record_size); it warns of nothing */
    r->s = src;
    r->err = err;
}

static void ps_free(void *p)
{
    ps *r = (ps *)p;
    pb_strtab_free(&r->str);
    PB_FREE_ALL(r->tmp.v, r->tmp.k, r->per.v, r->per.k, r->refs, r->scratch, r->keys, r->names, r->ents, r->calls, r->pkgbuf,
                r->namebuf);
    PB_INDEX_FREE_ALL(&r->tkeys, &r->tnames);
}

static pb_status ps_run(void *p, pb_sample_sink *out)
{
    ps *r = (ps *)p;
    pb_status st;
    unsigned code;
    uint32_t k, v;
    int more;
    r->out = out;
    if ((st = pstats_need(r, 1, "the pstats dict")) != PB_OK)
        return st;
    code = r->s->p[0];
    if ((code & 0x7F) != '{')
        return pb_fail(r->err, PB_ERR_CORRUPT, 0, "not a pstats file: a marshal dict must start it (type byte 0x%02x)",
                       code);
    r->s->p++;
    if ((code & 0x80) && (st = ref_reserve(r, UINT32_MAX)) != PB_OK)
        return st;
    for (more = 1; more;) {
        if ((st = pstats_need(r, 1, "the pstats dict")) != PB_OK)
            return st;
        if (r->s->p[0] == '0') {
            r->s->p++;
            break;
        }
        r->tmp.n = r->tmp.kn = 0;
        if ((st = read_obj(r, 1, 0, &k)) != PB_OK || (st = read_obj(r, 1, 0, &v)) != PB_OK ||
            (st = entry(r, k, v)) != PB_OK)
            return st;
    }
    if (pb_src_need(r->s, 1) != 0) {
        if (r->err->status)
            return r->err->status;
        return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(r->s), "bytes after the pstats dict");
    }
    if ((st = pstats_flush(r)) != PB_OK)
        return st;
    /* the profile module's callers hold a count only: their times are not the file's */
    if (r->plain_counts && !r->sampled && (st = out->attribute(out, "graph_edge_times", pb_str_c("none"))) != PB_OK)
        return st;
    if ((st = out->attribute(out, "call_graph", pb_str_c(r->sampled ? "sampled" : "exact"))) != PB_OK ||
        (st = out->attribute(out, "graph_producer",
                             pb_str_c(r->sampled ? "CPython's sampling profiler (replay --pstats)"
                                      : r->plain_counts ? "the profile module"
                                                        : "cProfile"))) != PB_OK)
        return st;
    return out->finish(out);
}

const pb_fold_decoder pb_pstats_decoder = {sizeof(ps), ps_init, NULL, ps_run, ps_free,
    {.source_format = "pstats", .ticks_per_sec = 1000000000u, .ticks_per_weight = 1,
     .fid_flags = pb_fid_flags_angled, .sampled_spans = 1, .call_graph = 1}};

/* a marshal dict whose first key is a tuple (of 3: a string first, or the
 * 3.15 ("__sampled__",) key), or the empty dict */
int pb_pstats_sniff(const unsigned char *p, size_t len, uint64_t file_size, pb_format_info *info)
{
    unsigned t;
    size_t i = 2;
    (void)file_size;
    if (len < 2 || (p[0] & 0x7F) != '{')
        return 0;
    if (p[1] == '0')
        return len == 2;
    t = p[1] & 0x7F;
    if (t == ')') {
        if (len < 4)
            return 0;
        if (p[2] != 3 && p[2] != 1)
            return 0;
        i = 3;
    } else if (t == '(') {
        if (len < 7 || pb_le32(p + 2) != 3)
            return 0;
        i = 6;
    } else {
        return 0;
    }
    t = p[i] & 0x7F;
    if (t != 'z' && t != 'Z' && t != 'a' && t != 'A' && t != 'u' && t != 't' && t != 's' && t != 'r')
        return 0;
    pb_info_fact(info, "marshal", PB_FACT_TEXT, "a dict of (file, line, function) keys", "");
    return 1;
}
