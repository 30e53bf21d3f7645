/* fuzz_writers.c - libFuzzer harness: every writer through the one write
 * driver users run (pb_write, outputs.h: profbridge convert and dump,
 * Devel::ProfileBridge::convert and dump_json).  The input (format detected)
 * is written to a file in a private directory and converted, by the input's
 * size, to one of
 *   nytprof      the presentation filter with source look-ups (fuzz_dir's
 *                src/), read back with our decoder
 *   collapsed    every line "<stack> <count>"
 *   pprof        gzip + protobuf, references checked
 *   speedscope   strict JSON
 *   (every other stack target of c/outputs.c's table, gecko among them:
 *                strict JSON)
 *   statprofiler each trace read back with our reader
 *   dump         every line strict JSON
 *   pstats       a marshal dict of pstats' shape
 *   callgrind    the callgrind format
 * A failure must be of a decode class and leave no file in the directory
 * (no output, no temporary); a success leaves exactly its outputs, which
 * parse.  Size bit 0 turns on salvage (nytprof and dump, the targets that
 * take it), bit 2 compresses nytprof.out.  See fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keep[] = {"in", NULL};
    static const char *stacks[16];
    static int nstacks;
    char in[600], out[600];
    const char *ins[1];
    pb_options opt;
    pb_error err;
    pb_status st;
    int which;
    if (!nstacks) { /* the table's stack targets (a sample sink on a stream), in its order (outputs.h);
                     * a writer of files of its own (statprofiler) has its own branch below */
        const pb_target *t;
        size_t i;
        for (i = 0; (t = pb_target_at(i)) != NULL && nstacks < 16; i++)
            if (t->open && t->sink)
                stacks[nstacks++] = t->name;
    }
    which = (int)((size >> 1) % (size_t)(nstacks + 5));
    fuzz_input(in, out, sizeof in, data, size, &opt);
    ins[0] = in;
    if (which == 0) {
        fuzz_source_options(&opt);
        st = hx_write("nytprof", PB_WRITE_CONVERT, ins, 1, PB_FMT_UNKNOWN, &opt, out, (size & 4) ? 1 : 0, NULL, NULL,
                      &err);
        /* a stream the decoder delivered cleanly may still meet the
         * writer's documented limits (a line past max_line): a limit error */
        fuzz_target_done("convert to nytprof", st, &err, keep, out, 'n', 0);
    } else if (which <= nstacks) {
        const char *name = stacks[which - 1];
        opt.salvage = 0;
        st = hx_convert(name, in, PB_FMT_UNKNOWN, &opt, out, -1, &err);
        fuzz_target_done(name, st, &err, keep, out,
                         !strcmp(name, "collapsed") ? 'c' : !strcmp(name, "pprof") ? 'p' : 'j', 1);
    } else if (which == nstacks + 1) {
        pb_write_req rq;
        size_t i;
        opt.salvage = 0;
        st = hx_write("statprofiler", PB_WRITE_CONVERT, ins, 1, PB_FMT_UNKNOWN, &opt, out, -1, NULL, &rq, &err);
        if (st == PB_OK) {
            if (rq.n_names == 0) {
                fprintf(stderr, "FUZZ FINDING: convert to statprofiler succeeded with no trace written\n");
                abort();
            }
            for (i = 0; i < rq.n_names; i++)
                fuzz_check_file(rq.names[i], "a StatProfiler trace", 's', 0);
            fuzz_dir_only(keep, "convert to statprofiler (its temporary files)", &err, st);
        } else {
            fuzz_check_error("convert to statprofiler", st, &err, 0);
            fuzz_dir_only(keep, "a failed convert to statprofiler", &err, st);
        }
        pb_write_free(&rq);
    } else if (which <= nstacks + 3) { /* the call-graph targets */
        const char *name = which == nstacks + 2 ? "pstats" : "callgrind";
        opt.salvage = 0;
        st = hx_convert(name, in, PB_FMT_UNKNOWN, &opt, out, -1, &err);
        fuzz_target_done(name, st, &err, keep, out, which == nstacks + 2 ? 'y' : 'g', 0);
    } else {
        st = hx_convert("dump", in, PB_FMT_UNKNOWN, &opt, out, -1, &err);
        fuzz_target_done("dump (JSON Lines)", st, &err, keep, out, 'l', 0);
    }
    unlink(in);
    return 0;
}
