/* fuzz_writers.c - libFuzzer harness: every writer through the file drivers
 * users run (profbridge convert and dump, Devel::ProfileBridge::convert and
 * dump_json).  The input (format detected) is written to a file in a private
 * directory and converted, by the input's size, to one of
 *   nytprof      pb_convert_file: the presentation filter with source
 *                look-ups (fuzz_dir's src/), read back with our decoder
 *   collapsed    pb_convert_stacks: every line "<stack> <count>"
 *   pprof        pb_convert_stacks: gzip + protobuf, references checked
 *   speedscope   pb_convert_stacks: strict JSON
 *   (every other stack target of c/outputs.c's table, gecko among them:
 *                pb_convert_stacks: strict JSON)
 *   statprofiler pb_convert_statprofiler: each trace read back with our reader
 *   dump         pb_convert_json_lines: every line strict JSON
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
    pb_options opt;
    pb_error err;
    pb_status st;
    int which;
    if (!nstacks) { /* the table's stack targets, in its order (outputs.h) */
        const pb_target *t;
        size_t i;
        for (i = 0; (t = pb_target_at(i)) != NULL && nstacks < 16; i++)
            if (t->open)
                stacks[nstacks++] = t->name;
    }
    which = (int)((size >> 1) % (size_t)(nstacks + 3));
    fuzz_dir();
    fuzz_path(in, sizeof in, "in");
    fuzz_path(out, sizeof out, "out");
    fuzz_spew(in, data, size);
    fuzz_options(&opt, size);
    if (which == 0) {
        fuzz_source_options(&opt);
        st = pb_convert_file(in, PB_FMT_UNKNOWN, &opt, out, (size & 4) ? 1 : 0, &err);
        /* a stream the decoder delivered cleanly may still meet the
         * writer's documented limits (a line past max_line): a limit error */
        fuzz_target_done("convert to nytprof", st, &err, keep, out, 'n', 0);
    } else if (which <= nstacks) {
        const char *name = stacks[which - 1];
        opt.salvage = 0;
        st = pb_convert_stacks(in, PB_FMT_UNKNOWN, &opt, out, pb_stack_output_named(name), &err);
        fuzz_target_done(name, st, &err, keep, out,
                         !strcmp(name, "collapsed") ? 'c' : !strcmp(name, "pprof") ? 'p' : 'j', 1);
    } else if (which == nstacks + 1) {
        char **names = NULL;
        size_t n = 0, i;
        opt.salvage = 0;
        st = pb_convert_statprofiler(in, PB_FMT_UNKNOWN, &opt, out, &names, &n, &err);
        if (st == PB_OK) {
            if (n == 0) {
                fprintf(stderr, "FUZZ FINDING: convert to statprofiler succeeded with no trace written\n");
                abort();
            }
            for (i = 0; i < n; i++)
                fuzz_check_file(names[i], "a StatProfiler trace", 's', 0);
            pb_convert_free_names(names, n);
            fuzz_dir_only(keep, "convert to statprofiler (its temporary files)", &err, st);
        } else {
            fuzz_check_error("convert to statprofiler", st, &err, 0);
            fuzz_dir_only(keep, "a failed convert to statprofiler", &err, st);
        }
    } else {
        st = pb_convert_json_lines(in, PB_FMT_UNKNOWN, &opt, out, &err);
        fuzz_target_done("dump (JSON Lines)", st, &err, keep, out, 'l', 0);
    }
    unlink(in);
    return 0;
}
