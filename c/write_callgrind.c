/* write_callgrind.c - a call graph -> Valgrind's callgrind format
 * (--to callgrind), which callgrind_annotate and KCachegrind read.
 *
 * The input: the chunk stream's call graph (chunk_graph.h), for the reason
 * the other call-graph target gives (chunk_graph.h): every input has chunks (a tracing format's exact
 * SUB_CALLERS, or the fold's edges of spans and samples), only folded formats
 * have a model.
 *
 * The file ("Callgrind Format Specification", version 1):
 *     # callgrind format
 *     version: 1
 *     creator: Devel::ProfileBridge
 *     cmd: <the profiled program (ATTRIBUTE application), else the input's kind>
 *     positions: line
 *     events: ns            (time; "samples" for a sampled input counted in
 *                            samples, chunk_graph.h: the unit)
 *     summary: <total>
 *     fl=(1) <file>         name compression: "(id) name" on first use, then
 *     fn=(1) <sub>          "(id)"; one table for fl/cfl, one for fn/cfn
 *     <first line> <self>   the sub's exclusive cost (its incoming edges' excl)
 *     cfl=(2) <file>
 *     cfn=(2) <callee>
 *     calls=<count> <callee's first line>
 *     <call-site line> <inclusive>   the edge's incl (NYTProf's: the
 *                            outermost activation's), per call site
 * An edge with count 0 (chunk_graph.h: no call, the rest of a function's
 * totals) is no calls= line: callgrind_annotate reads the cost after a
 * "calls=0" as the caller's own.  Its excl is the callee's self; its incl
 * is the callee's inclusive cost when nothing else says it (the profile
 * module's callers hold a bare count): then spread over the callee's
 * calls by their counts, so that the calls' costs add up to it.
 *     totals: <total>       the sum of every sub's self cost
 * Costs are integers: seconds / unit, rounded once per sub and per edge.
 * callgrind_annotate --inclusive=yes gives a sub that is called the sum of
 * its incoming calls' costs (NYTProf's inclusive time: recursion counted
 * once), and one never called its self cost plus its calls' costs; KCachegrind
 * finds the cycles itself.  (A sub's self plus its outgoing calls may exceed
 * the run under recursion, as in Valgrind's own
 * files.)  Names are written as UTF-8 (a byte that is not: U+FFFD; control
 * bytes as spaces).  A sub with no known file is in file "???" (callgrind_annotate's
 * word for it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write_callgrind.h"

/* a name on one line, UTF-8: control bytes as spaces, a byte that starts no
 * UTF-8 sequence as U+FFFD (as the other call-graph target does) */
static void callgrind_out_put_name(FILE *fp, pb_str s)
{
    size_t i;
    char *buf = NULL;
    if (s.len == 0) {
        fputs("???", fp);
        return;
    }
    if (!pb_utf8_valid(s.ptr, s.len) && s.len < SIZE_MAX / 3 && (buf = (char *)malloc(s.len * 3 + 1)) != NULL)
        s = pb_str_make(buf, pb_utf8_repair(buf, s.ptr, s.len), 1);
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        putc(c < 0x20 || c == 0x7f ? ' ' : c, fp);
    }
    free(buf);
}

/* "<key>=(id) name" the first time, "<key>=(id)" after; ids 1.. */
static void put_compressed(FILE *fp, const char *key, uint32_t *ids, uint32_t *next, uint32_t slot, pb_str name)
{
    if (ids[slot]) {
        fprintf(fp, "%s=(%u)\n", key, ids[slot]);
        return;
    }
    ids[slot] = ++*next;
    fprintf(fp, "%s=(%u) ", key, ids[slot]);
    callgrind_out_put_name(fp, name);
    putc('\n', fp);
}

/* Over 80 lines, kept whole: the compression ids, the self costs and the per-callee lines share the
 * arrays it allocates once. */
pb_status pb_callgrind_write(const pb_cgraph *g, FILE *fp, pb_error *werr)
{
    size_t ns = g->nsubs, ne = g->nedges, i, j;
    double unit = pb_cgraph_unit_s(g);
    uint64_t *self = (uint64_t *)calloc(ns ? ns : 1, sizeof *self), total = 0;
    uint32_t *order = (uint32_t *)malloc((ne ? ne : 1) * sizeof *order);
    size_t *first = (size_t *)malloc((ns + 1) * sizeof *first);
    /* compression ids: files by fid (slot 0: no file), subs by sub id */
    uint32_t *fl_id = (uint32_t *)calloc(g->nfid + 1, sizeof *fl_id), *fn_id = (uint32_t *)calloc(ns ? ns : 1, sizeof *fn_id);
    uint32_t next_fl = 0, next_fn = 0;
    double *excl = (double *)calloc(ns ? ns : 1, sizeof *excl), *cincl = (double *)calloc(ns ? ns : 1, sizeof *cincl);
    double *zincl = (double *)calloc(ns ? ns : 1, sizeof *zincl);
    uint64_t *ccount = (uint64_t *)calloc(ns ? ns : 1, sizeof *ccount), *cdone = (uint64_t *)calloc(ns ? ns : 1, sizeof *cdone);
    uint64_t *spread = (uint64_t *)calloc(ns ? ns : 1, sizeof *spread);
    pb_status st = PB_OK;
    if (!self || !order || !first || !fl_id || !fn_id || !excl || !cincl || !zincl || !ccount || !cdone || !spread) {
        st = pb_fail_nooff(werr, PB_ERR_LIMIT, "out of memory");
        goto done;
    }
    for (i = 0; i < ne; i++)
        order[i] = (uint32_t)i;
    /* self: the sum of a sub's incoming excl, rounded once; per callee its
     * calls' counts and incl, and the incl of its count-0 edges */
    for (i = 0; i < ne; i++) {
        const pb_cg_edge *e = &g->edges[i];
        excl[e->callee] += e->excl;
        if (e->count) {
            ccount[e->callee] += e->count;
            cincl[e->callee] += e->incl;
        } else
            zincl[e->callee] += e->incl;
    }
    for (i = 0; i < ns; i++) {
        self[i] = pb_cgraph_units(excl[i], unit);
        total += self[i];
        spread[i] = ccount[i] && cincl[i] <= 0 && zincl[i] > 0 ? pb_cgraph_units(zincl[i], unit) : 0;
    }
    pb_cgraph_order_edges(g, order, ne, 0);
    for (i = 0, j = 0; i <= ns; i++) {
        while (j < ne && g->edges[order[j]].caller < i)
            j++;
        first[i] = j;
    }

    fprintf(fp, "# callgrind format\nversion: 1\ncreator: Devel::ProfileBridge\ncmd: ");
    callgrind_out_put_name(fp, pb_str_c(g->application[0] ? g->application : g->source_format[0] ? g->source_format : "profile"));
    fprintf(fp, "\npositions: line\nevents: ");
    callgrind_out_put_name(fp, pb_str_c(pb_cgraph_unit_name(g)));
    fprintf(fp, "\nsummary: %llu\n", (unsigned long long)total);
    for (i = 0; i < ns; i++) {
        const pb_cg_sub *s = &g->subs[i];
        size_t a = first[i], b = first[i + 1], calls = 0;
        uint32_t fslot = s->has_info && s->fid < g->nfid ? s->fid : 0;
        for (j = a; j < b; j++)
            calls += g->edges[order[j]].count != 0;
        if (!self[i] && !calls)
            continue;
        putc('\n', fp);
        put_compressed(fp, "fl", fl_id, &next_fl, fslot, fslot ? pb_cgraph_file(g, fslot) : pb_str_c(""));
        put_compressed(fp, "fn", fn_id, &next_fn, (uint32_t)i, pb_cgraph_name(g, (uint32_t)i));
        fprintf(fp, "%u %llu\n", s->has_info ? s->line : 0, (unsigned long long)self[i]);
        for (j = a; j < b; j++) {
            const pb_cg_edge *e = &g->edges[order[j]];
            const pb_cg_sub *c = &g->subs[e->callee];
            uint32_t cslot = c->has_info && c->fid < g->nfid ? c->fid : 0;
            uint64_t cost;
            if (!e->count)
                continue;
            if (spread[e->callee]) { /* this call's share by count: the shares add up to the whole */
                double u = (double)spread[e->callee], n = (double)ccount[e->callee];
                uint64_t before = (uint64_t)(u * ((double)cdone[e->callee] / n));
                cdone[e->callee] += e->count;
                cost = cdone[e->callee] == ccount[e->callee] ? spread[e->callee] - before
                                                              : (uint64_t)(u * ((double)cdone[e->callee] / n)) - before;
            } else
                cost = pb_cgraph_units(e->incl, unit);
            put_compressed(fp, "cfl", fl_id, &next_fl, cslot, cslot ? pb_cgraph_file(g, cslot) : pb_str_c(""));
            put_compressed(fp, "cfn", fn_id, &next_fn, e->callee, pb_cgraph_name(g, e->callee));
            fprintf(fp, "calls=%llu %u\n%u %llu\n", (unsigned long long)e->count, c->has_info ? c->line : 0, e->line,
                    (unsigned long long)cost);
        }
    }
    fprintf(fp, "\ntotals: %llu\n", (unsigned long long)total);
    if (ferror(fp))
        st = pb_fail_write(werr, "the output", errno);
done:
    PB_FREE_ALL(self, order, first, fl_id, fn_id);
    PB_FREE_ALL(excl, cincl, zincl, ccount, cdone, spread);
    return st;
}
