/* fuzz_merge.c - libFuzzer harness: merge and diff through the one write
 * driver (pb_write, outputs.h: profbridge merge / diff,
 * Devel::ProfileBridge::merge / diff).  The input
 * is two profiles joined by FUZZ_SPLIT (fuzz/merge.dict; the seeds join
 * pairs of t/data profiles), or one profile taken twice; both are written to
 * files in a private directory (formats detected) and, by the input's size,
 *   merged to nytprof (with source look-ups), collapsed, pprof or speedscope,
 *   or diffed to pprof (the merge layer's diff) or to two-column collapsed
 *   stacks (the collapsed writer's own diff).
 * The checks are fuzz_writers.c's: a failure is of a decode class and
 * leaves no file; a success leaves its output, which parses.  Merge runs in
 * one process (jobs 0).  See fuzz_common.h. */
#include "fuzz_common.h"

#define FUZZ_SPLIT "\n==PBSPLIT==\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keep[] = {"in1", "in2", NULL};
    static const char *const to[] = {"nytprof", "collapsed", "pprof", "speedscope"};
    static const int kind[] = {'n', 'c', 'p', 'j'};
    char in1[600], in2[600], out[600];
    const char *ins[2];
    const uint8_t *b = data;
    size_t na = size, nb = size, ls = strlen(FUZZ_SPLIT), i;
    pb_options opt;
    pb_error err;
    pb_status st;
    int which = (int)((size >> 1) % 6);
    for (i = 0; i + ls <= size; i++)
        if (data[i] == '\n' && !memcmp(data + i, FUZZ_SPLIT, ls)) {
            na = i;
            b = data + i + ls;
            nb = size - i - ls;
            break;
        }
    fuzz_dir();
    fuzz_path(in1, sizeof in1, "in1");
    fuzz_path(in2, sizeof in2, "in2");
    fuzz_path(out, sizeof out, "out");
    fuzz_spew(in1, data, na);
    fuzz_spew(in2, b, nb);
    ins[0] = in1;
    ins[1] = in2;
    fuzz_options(&opt, size);
    opt.salvage = 0;
    opt.jobs = 0;
    if (which < 4) {
        if (which == 0)
            fuzz_source_options(&opt);
        st = hx_write(to[which], PB_WRITE_MERGE, ins, 2, PB_FMT_UNKNOWN, &opt, out, 0, fuzz_warn_ud, NULL, &err);
        fuzz_target_done(to[which], st, &err, keep, out, kind[which], 1);
    } else if (which == 4) {
        st = hx_write("pprof", PB_WRITE_DIFF, ins, 2, PB_FMT_UNKNOWN, &opt, out, -1, NULL, NULL, &err);
        fuzz_target_done("diff to pprof", st, &err, keep, out, 'p', 0);
    } else {
        st = hx_write("collapsed", PB_WRITE_DIFF, ins, 2, PB_FMT_UNKNOWN, &opt, out, -1, NULL, NULL, &err);
        fuzz_target_done("diff to collapsed", st, &err, keep, out, 'c', 2);
    }
    unlink(in1);
    unlink(in2);
    return 0;
}
