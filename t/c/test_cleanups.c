/* test_cleanups - a consumer that never returns (pb_cleanups, chunk.h).
 *
 * A Perl callback that dies leaves the decoder through longjmp.  Here the
 * sink does the same: for every profile in DATA_DIR it jumps out at the
 * first chunk, a third, half-way and the last one (and out of a warning on
 * a salvaged half of the file), then runs what the decoder and its fold
 * registered and closes the source, as the XS layer does.  Under
 * AddressSanitizer (t/c/ctests.sh asan, leak detection on) anything left
 * unregistered is a leak report and anything freed twice an error; in both
 * builds the table must hold the decoder's state while chunks flow and be
 * empty once a decode has returned.
 *
 *   test_cleanups [DATA_DIR]     (default t/data)
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pb.h"
#include "write_statprofiler.h"
#include "tap.h"
#include "harness.h"

/* the jumping sink (harness.h); jump_on_warn: it also leaves at a warning */
static hx_jumper jumper;
static int jump_on_warn;

/* Decode one file (or, with paths, a StatProfiler genealogy), jumping out
 * at chunk `at` (0: never).  Returns 1 if it jumped, 0 if it returned. */
static int run_file(const char *path, const char *const *paths, size_t npaths, uint64_t at, int salvage,
                    uint64_t *chunks)
{
    static pb_source src;
    static int src_open;
    static pb_sink sink;
    static pb_error err;
    pb_options opt;
    int j;
    pb_options_init(&opt);
    opt.salvage = salvage;
    hx_jumper_sink(&jumper, &sink, at, jump_on_warn);
    src_open = 0;
    j = setjmp(jumper.jump);
    if (j == 0) {
        if (paths) {
            pb_decode_run(paths, npaths, PB_FMT_UNKNOWN, &opt, &sink, &err);
        } else {
            pb_error_init(&err, "profbridge", path);
            if (pb_src_open_file(&src, path, &err) == PB_OK) {
                src_open = 1;
                pb_decode_source(&src, path, PB_FMT_UNKNOWN, &opt, &sink, &err);
            }
        }
        ok(jumper.table.n == 0, "%s: a decode that returned left nothing registered (%d)", path, jumper.table.n);
    }
    /* what the XS layer's savestack destructor does */
    pb_cleanups_run(&jumper.table);
    if (src_open)
        pb_src_close(&src);
    if (chunks)
        *chunks = jumper.seen;
    return j != 0;
}

static int is_profile(const char *dir, const char *name)
{
    size_t n = strlen(name);
    static const char *const skip[] = {".json", ".jsonl", ".txt", ".py", ".pl", ".c", ".xxd", NULL};
    int i;
    (void)dir;
    if (name[0] == '.')
        return 0;
    for (i = 0; skip[i]; i++) {
        size_t k = strlen(skip[i]);
        if (n > k && strcmp(name + n - k, skip[i]) == 0)
            return 0;
    }
    return 1;
}

static void one_file(const char *path)
{
    pb_format_info info;
    pb_error e;
    uint64_t total = 0, marks[4];
    int i;
    if (pb_detect_file(path, &info, &e) != PB_OK || !info.supported)
        return;
    run_file(path, NULL, 0, 0, 0, &total);
    if (total == 0)
        return;
    marks[0] = 1;
    marks[1] = total / 3 ? total / 3 : 1;
    marks[2] = total / 2 ? total / 2 : 1;
    marks[3] = total;
    for (i = 0; i < 4; i++) {
        int jumped = run_file(path, NULL, 0, marks[i], 0, NULL);
        ok(jumped && jumper.registered >= 1,
           "%s: out at chunk %llu of %llu with %d registered, released", path, (unsigned long long)marks[i],
           (unsigned long long)total, jumper.registered);
    }
}

/* half of the file, salvaged: out of the salvage warning */
static void half_file(const char *path)
{
    pb_format_info info;
    pb_error e;
    FILE *out;
    char tmp[] = "/tmp/pb-cleanups-XXXXXX";
    unsigned char *buf;
    size_t n;
    int fd, jumped;
    if (pb_detect_file(path, &info, &e) != PB_OK || !info.supported)
        return;
    if (!(buf = hx_slurp(path, &n)))
        return;
    fd = mkstemp(tmp);
    if (fd < 0 || !(out = fdopen(fd, "wb"))) {
        free(buf);
        return;
    }
    fwrite(buf, 1, (size_t)n / 2, out);
    fclose(out);
    free(buf);
    jump_on_warn = 1;
    jumped = run_file(tmp, NULL, 0, 0, 1, NULL);
    jump_on_warn = 0;
    if (jumped)
        ok(jumper.registered >= 0, "%s cut in half: out of a warning with %d registered, released", path,
           jumper.registered);
    remove(tmp);
}

int main(int argc, char **argv)
{
    const char *data = argc > 1 ? argv[1] : "t/data";
    static const char *const formats[] = {"nytprof", "pynytprof", "easyprofiler", "tachyon", "statprofiler", NULL};
    char path[4096];
    const char *fork_paths[16];
    char fork_buf[16][4096];
    size_t nfork = 0;
    int f;
    for (f = 0; formats[f]; f++) {
        DIR *d;
        struct dirent *de;
        snprintf(path, sizeof path, "%s/%s", data, formats[f]);
        if (!(d = opendir(path)))
            continue;
        while ((de = readdir(d)) != NULL) {
            if (!is_profile(path, de->d_name))
                continue;
            snprintf(path, sizeof path, "%s/%s/%s", data, formats[f], de->d_name);
            one_file(path);
            half_file(path);
            if (!strcmp(formats[f], "statprofiler") && !strncmp(de->d_name, "fork.out.", 9) && nfork < 16) {
                snprintf(fork_buf[nfork], sizeof fork_buf[nfork], "%s", path);
                fork_paths[nfork] = fork_buf[nfork];
                nfork++;
            }
            snprintf(path, sizeof path, "%s/%s", data, formats[f]);
        }
        closedir(d);
    }
    if (nfork > 1) {
        uint64_t total = 0;
        uint64_t marks[3];
        int i;
        run_file("statprofiler files", fork_paths, nfork, 0, 0, &total);
        marks[0] = 1;
        marks[1] = total / 2 ? total / 2 : 1;
        marks[2] = total;
        for (i = 0; i < 3; i++) {
            int jumped = run_file("statprofiler files", fork_paths, nfork, marks[i], 0, NULL);
            ok(jumped && jumper.registered >= 2,
               "%zu StatProfiler traces: out at chunk %llu of %llu with %d registered, released", nfork,
               (unsigned long long)marks[i], (unsigned long long)total, jumper.registered);
        }
    }
    ok(tests > 40, "%d checks ran", tests);
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
