/* fuzz_writers.c - libFuzzer harness: every writer through the file drivers
 * users run (profbridge convert and dump, Devel::ProfileBridge::convert and
 * dump_json).  The input (format detected) is written to a file in a private
 * directory and converted, by the input's size, to one of
 *   nytprof      pb_convert_file: the presentation filter with source
 *                look-ups (fuzz_dir's src/), read back with our decoder
 *   collapsed    pb_convert_stacks: every line "<stack> <count>"
 *   pprof        pb_convert_stacks: gzip + protobuf, references checked
 *   speedscope   pb_convert_stacks: strict JSON
 *   statprofiler pb_convert_statprofiler: each trace read back with our reader
 *   dump         pb_convert_json_lines: every line strict JSON
 *   pstats       pb_write with its row: a marshal dict of pstats' shape
 *   callgrind    pb_write with its row: the callgrind format
 * A failure must be of a decode class and leave no file in the directory
 * (no output, no temporary); a success leaves exactly its outputs, which
 * parse.  Size bit 0 turns on salvage (nytprof and dump, the targets that
 * take it), bit 2 compresses nytprof.out.  See fuzz_common.h. */
#include "fuzz_common.h"
#include "outputs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keep[] = {"in", NULL};
    static const char *const stacks[] = {"collapsed", "pprof", "speedscope"};
    char in[600], out[600];
    pb_options opt;
    pb_error err;
    pb_status st;
    int which = (int)((size >> 1) % 8);
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
    } else if (which <= 3) {
        opt.salvage = 0;
        st = pb_convert_stacks(in, PB_FMT_UNKNOWN, &opt, out, pb_stack_output_named(stacks[which - 1]), &err);
        fuzz_target_done(stacks[which - 1], st, &err, keep, out, which == 1 ? 'c' : which == 2 ? 'p' : 'j', 1);
    } else if (which == 4) {
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
    } else if (which >= 6) { /* the call-graph targets, through the one write driver */
        const char *name = which == 6 ? "pstats" : "callgrind";
        const char *const ins[] = {in};
        pb_write_req rq;
        pb_write_req_init(&rq);
        opt.salvage = 0;
        rq.in = ins;
        rq.n = 1;
        rq.opt = &opt;
        rq.out = out;
        st = pb_write(pb_target_named(name), PB_WRITE_CONVERT, &rq, &err);
        pb_write_free(&rq);
        fuzz_target_done(name, st, &err, keep, out, which == 6 ? 'y' : 'g', 0);
    } else {
        st = pb_convert_json_lines(in, PB_FMT_UNKNOWN, &opt, out, &err);
        fuzz_target_done("dump (JSON Lines)", st, &err, keep, out, 'l', 0);
    }
    unlink(in);
    return 0;
}
