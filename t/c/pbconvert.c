/* pbconvert - convert any supported profile to nytprof.out with the C core
 * only (decoder -> NYTProf writer).  A test and benchmark tool.
 *
 *   pbconvert [-f FORMAT] [-z LEVEL] [-t THREAD] [-s] IN OUT
 *     -f  input format (default: detect)   -z  zlib level 0..9 (default 6)
 *     -t  thread id to select               -s  print statistics to stderr
 * Exit status: 0 ok, 1 usage, 2 conversion failed (the message on stderr).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "harness.h"

static void warn_cb(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "warning: %s\n", msg);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    pb_format fmt = PB_FMT_UNKNOWN;
    pb_options opt;
    pb_error err;
    int level = -1, stats = 0, i;
    const char *in = NULL, *out = NULL;
    pb_status st;
    double t0;
    pb_options_init(&opt);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-f") && i + 1 < argc) {
            fmt = pb_format_from_name(argv[++i]);
            if (fmt == PB_FMT_UNKNOWN) {
                fprintf(stderr, "pbconvert: unknown format '%s'\n", argv[i]);
                return 1;
            }
        } else if (!strcmp(argv[i], "-z") && i + 1 < argc) {
            char *e;
            level = (int)strtol(argv[++i], &e, 10);
            if (*e || level < 0 || level > 9) {
                fprintf(stderr, "pbconvert: -z wants a level 0..9\n");
                return 1;
            }
        } else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
            opt.have_thread = 1;
            opt.thread_id = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "-s")) {
            stats = 1;
        } else if (!in) {
            in = argv[i];
        } else if (!out) {
            out = argv[i];
        } else {
            in = NULL;
            break;
        }
    }
    if (!in || !out) {
        fprintf(stderr, "usage: pbconvert [-f FORMAT] [-z LEVEL] [-t THREAD] [-s] IN OUT\n");
        return 1;
    }
    t0 = now();
    st = hx_write("nytprof", PB_WRITE_CONVERT, &in, 1, fmt, &opt, out, level, warn_cb, NULL, &err);
    if (st != PB_OK) {
        char buf[2048];
        pb_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "%s\n", buf);
        return 2;
    }
    if (stats)
        fprintf(stderr, "pbconvert: %s -> %s in %.3f s\n", in, out, now() - t0);
    return 0;
}
