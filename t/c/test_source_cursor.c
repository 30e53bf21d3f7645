/* test_source_cursor.c - c/source.h's pb_src_cursor against the bytes a file
 * was written from: from memory and from a file, at several offsets and
 * block sizes, every byte from the offset to the end, then the end; a skip
 * set passed over before the first byte (also when it fills more than a
 * block); two cursors read in turn, the source's own position left alone. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "source.h"

enum { LEN = 300000 };
static unsigned char data[LEN];

/* every block from the cursor into out: the bytes read, or (size_t)-1 on an error */
static size_t drain(pb_src_cursor *c, unsigned char *out, size_t cap, pb_error *err)
{
    size_t got = 0, n;
    const unsigned char *b;
    for (;;) {
        if (pb_src_cursor_next(c, &b, &n, err) != PB_OK)
            return (size_t)-1;
        if (!n)
            return got;
        if (n > c->block || got + n > cap)
            return (size_t)-1;
        memcpy(out + got, b, n);
        got += n;
    }
}

static int same_from(const pb_source *s, uint64_t at, size_t block, pb_error *err)
{
    static unsigned char out[LEN];
    pb_src_cursor c;
    size_t got;
    int okay;
    pb_src_cursor_open(&c, s, at, block, NULL);
    got = drain(&c, out, sizeof out, err);
    okay = at <= LEN ? got == LEN - at && !memcmp(out, data + at, got) && c.pos == LEN : got == 0;
    if (!okay)
        diag("at %llu, block %zu: %zu bytes read", (unsigned long long)at, block, got);
    pb_src_cursor_free(&c);
    return okay;
}

int main(void)
{
    static const uint64_t ats[] = {0, 1, 4095, 65536, 65537, 299999, LEN, LEN + 10};
    static const size_t blocks[] = {1, 7, 4096, 65536, 0};
    char path[] = "/tmp/pb-src-cursor-XXXXXX";
    int fd = mkstemp(path), mem_ok = 1, file_ok = 1;
    size_t i, j;
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    pb_error err;
    pb_source fs, ms;
    memset(&err, 0, sizeof err);
    if (fd < 0) {
        printf("1..0 # SKIP no temp file\n");
        return 0;
    }
    for (i = 0; i < LEN; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (unsigned char)x;
    }
    /* at 1000: white space and ':' over more than a block of 7, then '[' */
    memcpy(data + 1000, " :\t\r\n  \n :  [", 13);
    if (pwrite(fd, data, LEN, 0) != LEN || pb_src_open_file(&fs, path, &err) != PB_OK) {
        printf("1..0 # SKIP cannot write the temp file\n");
        return 0;
    }
    pb_src_open_mem(&ms, data, LEN, &err);
    for (i = 0; i < sizeof ats / sizeof *ats; i++)
        for (j = 0; j < sizeof blocks / sizeof *blocks; j++) {
            if (blocks[j] == 1 && ats[i] < 200000)
                continue; /* (a byte a block: only near the end) */
            mem_ok &= same_from(&ms, ats[i], blocks[j], &err);
            file_ok &= same_from(&fs, ats[i], blocks[j], &err);
        }
    ok(mem_ok, "memory: every byte from the offset to the end, then the end, at every offset and block size");
    ok(file_ok, "file: every byte from the offset to the end, then the end, at every offset and block size");

    {
        int skip_ok = 1;
        const pb_source *srcs[2] = {&ms, &fs};
        for (i = 0; i < 2; i++)
            for (j = 0; j < sizeof blocks / sizeof *blocks; j++) {
                pb_src_cursor c;
                const unsigned char *b;
                size_t n;
                pb_src_cursor_open(&c, srcs[i], 1000, blocks[j], ": \t\r\n");
                if (pb_src_cursor_next(&c, &b, &n, &err) != PB_OK || !n || b[0] != '[' || c.pos != 1012 + n) {
                    diag("skip: source %zu, block %zu", i, blocks[j]);
                    skip_ok = 0;
                }
                pb_src_cursor_free(&c);
            }
        ok(skip_ok, "the skip set is passed over before the first byte, over several blocks too");
    }

    {
        /* two cursors in turn on the file; the source's position stays */
        pb_src_cursor a, b;
        const unsigned char *p;
        size_t n, ga = 0, gb = 0;
        int turn_ok = 1, got;
        uint64_t before;
        if ((got = pb_src_need(&fs, 10)) != 1)
            turn_ok = 0;
        fs.p += 10;
        before = pb_src_offset(&fs);
        pb_src_cursor_open(&a, &fs, 100, 5000, NULL);
        pb_src_cursor_open(&b, &fs, 200000, 3000, NULL);
        while (turn_ok && (ga < LEN - 100 || gb < LEN - 200000)) {
            if (pb_src_cursor_next(&a, &p, &n, &err) != PB_OK || (n && memcmp(p, data + 100 + ga, n)))
                turn_ok = 0;
            ga += n;
            if (pb_src_cursor_next(&b, &p, &n, &err) != PB_OK || (n && memcmp(p, data + 200000 + gb, n)))
                turn_ok = 0;
            gb += n;
        }
        turn_ok &= ga == LEN - 100 && gb == LEN - 200000 && pb_src_offset(&fs) == before &&
                   pb_src_need(&fs, 10) == 1 && !memcmp(fs.p, data + 10, 10);
        ok(turn_ok, "two cursors read in turn, each its own bytes; the source reads on where it was");
        pb_src_cursor_free(&a);
        pb_src_cursor_free(&b);
    }
    pb_src_close(&fs);
    pb_src_close(&ms);
    close(fd);
    unlink(path);
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
