/* convert_samples.c - sample profiles to collapsed stacks or StatProfiler records. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collapsed.h"
#include "convert_samples.h"
#include "fold_samples.h"
#include "output.h"
#include "write_statprofiler.h"

typedef struct {
    const char *in, *after; /* after: a diff's second input */
    pb_format fmt;
    const pb_options *opt;
} samples_args;

static pb_status collapsed_write(FILE *fp, void *ctx, pb_error *werr, pb_error *err)
{
    const samples_args *a = (const samples_args *)ctx;
    (void)werr;
    return a->after ? pb_collapse_diff_files(a->in, a->after, a->opt, fp, err)
                    : pb_collapse_file(a->in, a->fmt, a->opt, fp, err);
}

pb_status pb_convert_collapsed(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                               pb_error *err)
{
    samples_args a;
    a.in = in;
    a.after = NULL;
    a.fmt = fmt;
    a.opt = opt;
    return pb_output_with(out_path, "collapsed", collapsed_write, &a, err);
}

pb_status pb_convert_diff_collapsed(const char *before, const char *after, const pb_options *opt,
                                    const char *out_path, pb_error *err)
{
    samples_args a;
    a.in = before;
    a.after = after;
    a.fmt = PB_FMT_UNKNOWN;
    a.opt = opt;
    return pb_output_with(out_path, "diff", collapsed_write, &a, err);
}

void pb_convert_free_names(char **names, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

pb_status pb_convert_statprofiler(const char *in, pb_format fmt, const pb_options *opt_in, const char *out_path,
                                  char ***names_out, size_t *n_out, pb_error *err)
{
    pb_options opt;
    pb_spw_sink *k;
    pb_sample_sink *ss;
    pb_status st;
    pb_error werr;
    if (names_out)
        *names_out = NULL;
    if (n_out)
        *n_out = 0;
    if (opt_in)
        opt = *opt_in;
    else
        pb_options_init(&opt);
    pb_options_resolve(&opt);
    if (fmt == PB_FMT_UNKNOWN) {
        pb_format_info info;
        pb_error_init(err, "profbridge", in);
        if ((st = pb_detect_file(in, &info, err)) != PB_OK) /* a directory: a StatProfiler run */
            return st;
        fmt = info.format;
    }
    pb_error_init(err, fmt ? pb_format_name(fmt) : "profbridge", in);
    if (fmt != PB_FMT_TACHYON && fmt != PB_FMT_STATPROFILER)
        return pb_fail_nooff(err, PB_ERR_UNSUPPORTED,
                             "%s profiles have no stack samples: StatProfiler output needs Tachyon or StatProfiler "
                             "input",
                             fmt ? pb_format_name(fmt) : "unrecognised");
    pb_error_init(&werr, "statprofiler-writer", out_path);
    k = pb_spw_sink_new(out_path, &werr);
    if (!k) {
        *err = werr;
        return err->status;
    }
    ss = pb_spw_sink_base(k);
    if (fmt == PB_FMT_STATPROFILER) {
        /* one trace, or a whole run (a directory or a root's first file) */
        pb_sp_hooks hooks = pb_spw_sink_hooks(k);
        const char *one[1];
        char **run = NULL;
        size_t nrun = 0;
        int r = pb_statprofiler_run(in, &opt, &run, &nrun, err);
        one[0] = in;
        st = r < 0 ? err->status
                   : pb_statprofiler_files(r > 0 ? (const char *const *)run : one, r > 0 ? nrun : 1, &opt, ss, &hooks,
                                           err);
        pb_statprofiler_free_list(run, nrun);
    } else {
        pb_source src;
        st = pb_src_open_file(&src, in, err);
        if (st == PB_OK) {
            pb_options_to_source(&opt, &src);
            st = pb_read_tachyon_samples(&src, &opt, ss, err);
            pb_src_error_to_file(&src, err);
            pb_src_close(&src);
            if (st == PB_OK)
                st = ss->finish(ss);
        }
    }
    if (st != PB_OK && werr.status != PB_OK && err->status == PB_ERR_ABORT)
        *err = werr; /* the writer's reason */
    if (st == PB_OK && names_out) {
        const char *const *names;
        size_t n = pb_spw_sink_files(k, &names), i;
        char **copy = (char **)calloc(n ? n : 1, sizeof *copy);
        for (i = 0; copy && i < n; i++)
            copy[i] = strdup(names[i]);
        *names_out = copy;
        if (n_out)
            *n_out = copy ? n : 0;
    }
    pb_spw_sink_free(k);
    return st;
}
