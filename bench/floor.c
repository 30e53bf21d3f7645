/* bench/floor.c - the physical floor of reading a profile: the same bytes
 * read and decompressed (or, for JSON, parsed) with nothing done with them,
 * timed in the same run as ours so that ours / floor says how far a reader is
 * from its input's own cost.  Built and run by bench/race.pl (make bench):
 *
 *   cc -O2 -std=c99 -o floor bench/floor.c -lz -lzstd -lsnappy -lyajl
 *   floor [-n RUNS] KIND FILE
 *
 * KIND: read (the bytes, 1 MiB reads), gzip (inflate a gzip or zlib file:
 * pprof's .pb.gz), nytprof (the text header read, inflate from the 'z' that
 * starts NYTProf's zlib part; the bytes when it has none), zstd (from the
 * first zstd frame on: Tachyon's sample region; the bytes when it has
 * none), snappy (StatProfiler's
 * packets: 2-byte big-endian length, Snappy block, after "=statprofiler"
 * and its version byte), json (yajl parses the document, no callbacks), or
 * auto (by the file's first bytes).  Prints one line: KIND, the median CPU
 * and wall seconds of RUNS runs (default 5), the bytes read and made. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <snappy-c.h>
#include <yajl/yajl_parse.h>

static unsigned char *data; /* the whole file, read once per run */
static size_t len, cap;
static uint64_t made;       /* bytes decompressed (a checksum of sorts: it must not be optimised out) */

static double now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "floor: %s\n", what);
    exit(1);
}

static void read_all(const char *path)
{
    int fd = open(path, O_RDONLY);
    ssize_t r;
    if (fd < 0)
        die("cannot open the file");
    len = 0;
    for (;;) {
        if (len + (1 << 20) > cap) {
            cap = cap ? cap * 2 : (size_t)64 << 20;
            if (!(data = (unsigned char *)realloc(data, cap)))
                die("out of memory");
        }
        if ((r = read(fd, data + len, 1 << 20)) < 0)
            die("read failed");
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
}

static unsigned char out[1 << 20];

static void do_inflate(size_t from, int wbits)
{
    z_stream z;
    int rc;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, wbits) != Z_OK)
        die("inflateInit2");
    z.next_in = data + from;
    z.avail_in = (uInt)(len - from);
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        rc = inflate(&z, Z_NO_FLUSH);
        made += sizeof out - z.avail_out;
    } while (rc == Z_OK);
    if (rc != Z_STREAM_END)
        die("inflate failed");
    inflateEnd(&z);
}

static void do_nytprof(void)
{
    /* the header's text lines, then the first chunk; 'z' + 0x78 starts zlib */
    size_t i;
    for (i = 0; i + 2 < len; i++)
        if (data[i] == '\n' && data[i + 1] == 'z' && data[i + 2] == 0x78) {
            do_inflate(i + 2, 15);
            return;
        }
}

static void do_zstd(void)
{
    static const unsigned char magic[4] = {0x28, 0xB5, 0x2F, 0xFD};
    ZSTD_DStream *d = ZSTD_createDStream();
    ZSTD_inBuffer in;
    size_t i, rc;
    for (i = 0; i + 4 <= len && memcmp(data + i, magic, 4); i++)
        ;
    if (i + 4 > len) {
        ZSTD_freeDStream(d);
        return; /* none (a Tachyon file written uncompressed): the bytes are the floor */
    }
    in.src = data + i;
    in.size = len - i;
    in.pos = 0;
    do {
        ZSTD_outBuffer o = {out, sizeof out, 0};
        rc = ZSTD_decompressStream(d, &o, &in);
        if (ZSTD_isError(rc))
            die("zstd failed");
        made += o.pos;
    } while (rc != 0 && in.pos < in.size);
    ZSTD_freeDStream(d);
}

static void do_snappy(void)
{
    static const char magic[] = "=statprofiler";
    size_t p = sizeof magic; /* the magic and the version byte */
    if (len < p || memcmp(data, magic, sizeof magic - 1))
        die("not a StatProfiler file");
    while (p + 2 <= len) {
        size_t clen = (size_t)data[p] << 8 | data[p + 1], ulen = sizeof out;
        if (p + 2 + clen > len || snappy_uncompress((const char *)data + p + 2, clen, (char *)out, &ulen) != SNAPPY_OK)
            die("snappy failed");
        made += ulen;
        p += 2 + clen;
    }
}

static void do_json(void)
{
    yajl_handle h = yajl_alloc(NULL, NULL, NULL);
    size_t p = 0;
    while (p < len) {
        size_t n = len - p > (1 << 20) ? 1 << 20 : len - p;
        if (yajl_parse(h, data + p, n) != yajl_status_ok)
            die("yajl failed");
        p += n;
    }
    if (yajl_complete_parse(h) != yajl_status_ok)
        die("yajl failed at the end");
    made += yajl_get_bytes_consumed(h);
    yajl_free(h);
}

static const char *auto_kind(const char *path)
{
    unsigned char b[16] = {0};
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(b, 1, sizeof b, f) : 0;
    if (f)
        fclose(f);
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return "gzip";
    if (n >= 8 && !memcmp(b, "NYTProf ", 8))
        return "nytprof";
    if (n >= 13 && !memcmp(b, "=statprofiler", 13))
        return "snappy";
    if (n >= 1 && (b[0] == '{' || b[0] == '['))
        return "json";
    return "read";
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int runs = 5, i;
    const char *kind, *path;
    double cpu[100], wall[100];
    if (argc >= 3 && !strcmp(argv[1], "-n")) {
        runs = atoi(argv[2]);
        argv += 2;
        argc -= 2;
    }
    if (argc != 3 || runs < 1 || runs > 100) {
        fprintf(stderr, "usage: floor [-n RUNS] read|gzip|nytprof|zstd|snappy|json|auto FILE\n");
        return 2;
    }
    kind = !strcmp(argv[1], "auto") ? auto_kind(argv[2]) : argv[1];
    path = argv[2];
    for (i = 0; i < runs; i++) {
        double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        made = 0;
        read_all(path);
        if (!strcmp(kind, "gzip"))
            do_inflate(0, 15 + 32);
        else if (!strcmp(kind, "nytprof"))
            do_nytprof();
        else if (!strcmp(kind, "zstd"))
            do_zstd();
        else if (!strcmp(kind, "snappy"))
            do_snappy();
        else if (!strcmp(kind, "json"))
            do_json();
        else if (strcmp(kind, "read"))
            die("unknown KIND");
        cpu[i] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        wall[i] = now(CLOCK_MONOTONIC) - w0;
    }
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_d);
    qsort(wall, (size_t)runs, sizeof *wall, cmp_d);
    printf("%s cpu %.3f s wall %.3f s read %zu made %llu\n", kind, cpu[runs / 2], wall[runs / 2], len,
           (unsigned long long)made);
    return 0;
}
