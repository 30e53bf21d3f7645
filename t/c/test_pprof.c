/* test_pprof - C-level checks of the pprof decoder (read_pprof.c) where the
 * Perl layer does not reach: the decoder's own gzip view (source.c) reads the gzipped
 * profiles of t/data/pprof, from a file and from memory, and must give the
 * same stacks as the ungzipped twin; detection says gzip / none; a pipe (a
 * source that cannot be read twice) is read through source.c's spooled
 * copy (the row seeks: PB_SEEKS) as the file, and a rewind of a pipe
 * itself is a clear io error; the chunk decoder and the sample decoder
 * agree on the total.
 *
 *   test_pprof [DATA_DIR]     (default t/data/pprof)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pb.h"
#include "formats.h"
#include "write_collapsed.h"
#include "harness.h"
#include "tap.h"

/* the collapsed stacks of path (or of its bytes in memory) as a string */
static char *collapse(const char *path, int from_mem, const pb_options *opt, pb_error *err, pb_status *st)
{
    FILE *out = tmpfile();
    char *text;
    long n;
    if (!out)
        return NULL;
    if (from_mem) {
        FILE *fp = fopen(path, "rb");
        unsigned char *buf = NULL;
        size_t len = 0;
        struct stat sb;
        if (fp && fstat(fileno(fp), &sb) == 0 && (buf = malloc((size_t)sb.st_size + 1)) != NULL)
            len = fread(buf, 1, (size_t)sb.st_size, fp);
        if (fp)
            fclose(fp);
        *st = hx_collapse_mem(buf, len, path, PB_FMT_UNKNOWN, opt, out, err);
        free(buf);
    } else {
        /* a file: through the write driver, as convert(to => 'collapsed') */
        char tmp[] = "/tmp/test_pprof.XXXXXX";
        int fd = mkstemp(tmp);
        fclose(out);
        if (fd < 0)
            return NULL;
        close(fd);
        *st = hx_convert("collapsed", path, PB_FMT_UNKNOWN, opt, tmp, -1, err);
        out = fopen(tmp, "rb");
        unlink(tmp);
        if (!out)
            return NULL;
        fseek(out, 0, SEEK_END);
    }
    n = ftell(out);
    text = malloc(n > 0 ? (size_t)n + 1 : 1);
    rewind(out);
    if (text) {
        size_t got = n > 0 ? fread(text, 1, (size_t)n, out) : 0;
        text[got] = '\0';
    }
    fclose(out);
    return text;
}

static unsigned long long total_of(const char *text)
{
    unsigned long long t = 0;
    const char *p = text;
    while (p && *p) {
        const char *nl = strchr(p, '\n'), *sp;
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        for (sp = p + len; sp > p && sp[-1] != ' '; sp--)
            ;
        t += strtoull(sp, NULL, 10);
        p = nl ? nl + 1 : NULL;
    }
    return t;
}

/* chunk decoder: the TIME_LINE ticks (ns) of a file */
typedef struct {
    pb_sink sink;
    unsigned long long ticks;
} tick_sink;

static int on_chunk(pb_sink *s, const pb_chunk *c)
{
    if (c->tag == PB_T_TIME_LINE)
        ((tick_sink *)s)->ticks += (unsigned long long)c->ticks;
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "t/data/pprof";
    char gz[1024], raw[1024], fifo[256], msg[2048];
    pb_error err;
    pb_status st, st2;
    char *a, *b, *c;
    pb_format_info info;
    snprintf(gz, sizeof gz, "%s/cpu_inline.prof", dir);
    snprintf(raw, sizeof raw, "%s/cpu_inline.pb", dir);

    ok(pb_detect_file(gz, &info, &err) == PB_OK && info.format == PB_FMT_PPROF &&
           !strcmp(info.compression, "gzip") && info.compressed == 1,
       "cpu_inline.prof: detected as pprof, gzip");
    ok(pb_detect_file(raw, &info, &err) == PB_OK && info.format == PB_FMT_PPROF && !strcmp(info.compression, "none"),
       "cpu_inline.pb: detected as pprof, not compressed");

    a = collapse(gz, 0, NULL, &err, &st);
    b = collapse(raw, 0, NULL, &err, &st2);
    ok(st == PB_OK && st2 == PB_OK && a && b && *a && !strcmp(a, b),
       "the gzip view (both passes inflate the file) gives the ungzipped twin's stacks");
    c = collapse(gz, 1, NULL, &err, &st);
    ok(st == PB_OK && c && !strcmp(a, c), "the same from memory (gzip view over a memory source, rewound)");
    ok(total_of(a) == 540000000ull, "total %llu ns = go tool pprof's 540000000", total_of(a));
    free(a), free(b), free(c);

    {
        const char *files[] = {"heap.prof", "labels.prof"};
        unsigned long long want[] = {860419ull, 7870000000ull};
        int i;
        for (i = 0; i < 2; i++) {
            char path[1024];
            tick_sink ts;
            snprintf(path, sizeof path, "%s/%s", dir, files[i]);
            a = collapse(path, 1, NULL, &err, &st);
            ok(st == PB_OK && total_of(a) == want[i], "%s from memory: total %llu (go tool pprof: %llu)", files[i],
               total_of(a), want[i]);
            free(a);
            memset(&ts, 0, sizeof ts);
            ts.sink.chunk = on_chunk;
            pb_error_init(&err, "pprof", path);
            st = pb_decode_file(path, PB_FMT_UNKNOWN, NULL, &ts.sink, &err);
            ok(st == PB_OK && ts.ticks == want[i], "%s: the chunk decoder's TIME_LINE ticks are the same total (%llu)",
               files[i], ts.ticks);
        }
    }

    /* a pipe: the profile's tables come after its samples, it cannot be read
     * twice: the driver reads it from a spooled copy (the source opened
     * here and decoded as pprof: no detection read), as the file */
    {
        unsigned long long want = 0;
        int round;
        tick_sink ts;
        memset(&ts, 0, sizeof ts);
        ts.sink.chunk = on_chunk;
        pb_error_init(&err, "pprof", raw);
        if (pb_decode_file(raw, PB_FMT_PPROF, NULL, &ts.sink, &err) == PB_OK)
            want = ts.ticks;
        for (round = 0; round < 2; round++) {
            snprintf(fifo, sizeof fifo, "/tmp/test_pprof_fifo_%ld", (long)getpid());
            if (mkfifo(fifo, 0600) != 0)
                break;
            pid_t pid = fork();
            if (pid == 0) {
                FILE *in = fopen(raw, "rb"), *out = fopen(fifo, "wb");
                int ch;
                while (in && out && (ch = getc(in)) != EOF)
                    putc(ch, out);
                if (out)
                    fclose(out);
                _exit(0);
            }
            {
                pb_source src;
                memset(&ts, 0, sizeof ts);
                ts.sink.chunk = on_chunk;
                pb_error_init(&err, "pprof", fifo);
                st = pb_src_open_file(&src, fifo, &err);
                if (st == PB_OK && round == 0)
                    st = pb_decode_source(&src, fifo, PB_FMT_PPROF, NULL, &ts.sink, &err);
                else if (st == PB_OK) /* the pipe itself: read, then back to its start */
                    st = pb_src_need(&src, 16) < 0 ? PB_ERR_IO : pb_src_rewind(&src);
                if (src.fp)
                    pb_src_close(&src);
            }
            pb_error_format(&err, msg, sizeof msg);
            if (round == 0)
                ok(st == PB_OK && want && ts.ticks == want, "a pipe: read from a spooled copy as the file (%llu ticks): %s",
                   ts.ticks, st == PB_OK ? "ok" : msg);
            else
                ok(st == PB_ERR_IO && strstr(msg, "pprof: io: cannot go back to the start of the input") != NULL,
                   "a pipe itself cannot be rewound: %s", msg);
            unlink(fifo);
            while (pid > 0 && waitpid(pid, NULL, 0) < 0)
                ;
        }
    }

    /* a gzip member cut short: truncated, at a byte of the file */
    {
        FILE *fp = fopen(gz, "rb");
        unsigned char buf[4096];
        size_t n = fp ? fread(buf, 1, sizeof buf, fp) : 0;
        FILE *out = tmpfile();
        if (fp)
            fclose(fp);
        st = hx_collapse_mem(buf, n - 20, "cut.prof", PB_FMT_UNKNOWN, NULL, out, &err);
        pb_error_format(&err, msg, sizeof msg);
        ok(st == PB_ERR_TRUNCATED && !strncmp(msg, "pprof: truncated: ", 18) && strstr(msg, " of cut.prof"),
           "gzip cut short: %s", msg);
        buf[n - 6] ^= 0x55; /* the CRC-32 */
        st = hx_collapse_mem(buf, n, "flip.prof", PB_FMT_UNKNOWN, NULL, out, &err);
        pb_error_format(&err, msg, sizeof msg);
        ok(st == PB_ERR_CORRUPT && !strncmp(msg, "pprof: corrupt: ", 16), "gzip data damaged: %s", msg);
        fclose(out);
    }
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
