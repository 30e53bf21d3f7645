/* test_json_ints.c - c/json_ints.h against the values an array was written
 * from: random arrays of integers of 1 to 18 digits (zeros, negatives, JSON
 * white space between the elements), written with printf and read back,
 * from memory and from a file, value by value; then arrays with one element
 * that is not the strict form (a fraction, an exponent, a leading zero, a
 * 19th digit, a '+', two commas) after k good ones: k values, then OTHER;
 * then both again with pb_json_ints_runs on, over values in runs drawn from
 * a few that share their first digits (12, 123, 1234, ...). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "json_ints.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* a value of 1..18 digits (the digit count uniform: short ones are common) */
static int64_t rand_value(void)
{
    unsigned digits = 1 + (unsigned)(next_rand() % 18), i;
    int64_t v = 0;
    for (i = 0; i < digits; i++)
        v = v * 10 + (int64_t)(next_rand() % 10);
    if (next_rand() % 20 == 0)
        v = 0;
    return next_rand() % 4 == 0 ? -v : v;
}

static const char *const ws[] = {"", "", "", "", " ", "\n", "\r\n  ", "\t"};

/* the array of n values into buf (cap bytes), a bad element after k of
 * them when bad is set: its length */
static size_t write_array(char *buf, size_t cap, const int64_t *vals, size_t n, size_t k, const char *bad)
{
    size_t len = 0, i;
    len += (size_t)snprintf(buf + len, cap - len, "%s[", ws[next_rand() % 8]);
    for (i = 0; i < n; i++) {
        if (i)
            len += (size_t)snprintf(buf + len, cap - len, "%s,%s", ws[next_rand() % 8], ws[next_rand() % 8]);
        if (bad && i == k)
            len += (size_t)snprintf(buf + len, cap - len, "%s", bad);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%lld", (long long)vals[i]);
    }
    len += (size_t)snprintf(buf + len, cap - len, "%s]", ws[next_rand() % 8]);
    return len;
}

/* values in runs (runs_on), from a few that share their first digits */
static int runs_on;
static int64_t run_value(int64_t prev)
{
    static const int64_t pool[] = {1, 5, 12, 123, 1234, 12345, 123456, 1234567, 12345678, 0, -12, 120, 1200};
    if (next_rand() % 5)
        return prev;
    return pool[next_rand() % (sizeof pool / sizeof *pool)];
}

/* read it back (from memory, or from the file fd): 1 when the values and the
 * end are as expected (bad: k values, then OTHER) */
static int read_back(const char *buf, size_t len, int fd, const int64_t *vals, size_t n, size_t k, int bad)
{
    pb_json_ints c;
    int64_t v;
    size_t i = 0;
    int r, okay = 1;
    if (pb_json_ints_open(&c, fd < 0 ? (const unsigned char *)buf : NULL, len, fd, len, 0) < 0)
        return 0;
    if (runs_on)
        pb_json_ints_runs(&c);
    r = pb_json_ints_begin(&c);
    if (r != PB_JSON_INTS_VALUE)
        okay = 0;
    while (okay && (r = pb_json_ints_next(&c, &v)) == PB_JSON_INTS_VALUE) {
        if (i >= n || v != vals[i]) {
            diag("element %zu: read %lld, written %lld", i, (long long)v, i < n ? (long long)vals[i] : 0LL);
            okay = 0;
        }
        i++;
    }
    if (okay && bad)
        okay = r == PB_JSON_INTS_OTHER && i == k;
    else if (okay)
        okay = r == PB_JSON_INTS_END && i == n && pb_json_ints_offset(&c) == len;
    if (!okay)
        diag("ended with %d after %zu of %zu elements", r, i, n);
    pb_json_ints_free(&c);
    return okay;
}

int main(void)
{
    enum { N = 20000, ROUNDS = 40 };
    static int64_t vals[N];
    static char buf[N * 32];
    static const char *const bads[] = {"1.5", "12e3", "7E+1", "01", "-01", "1234567890123456789", "+5", "-", "",
                                       "12a", "0x10", "1234567.0", "99999999999999999999", "true"};
    char path[] = "/tmp/pb-json-ints-XXXXXX";
    int fd = mkstemp(path), round, mem_ok, file_ok, bad_ok;
    size_t i, len;
    if (fd < 0) {
        printf("1..0 # SKIP no temp file\n");
        return 0;
    }
    unlink(path);
  again:
    mem_ok = file_ok = bad_ok = 1;
    for (round = 0; round < ROUNDS; round++) {
        size_t n = round == 0 ? 0 : round == 1 ? 1 : 1 + (size_t)(next_rand() % N);
        for (i = 0; i < n; i++)
            vals[i] = runs_on ? run_value(i ? vals[i - 1] : 12) : rand_value();
        len = write_array(buf, sizeof buf, vals, n, 0, NULL);
        mem_ok &= read_back(buf, len, -1, vals, n, 0, 0);
        if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, len, 0) != (ssize_t)len)
            file_ok = 0;
        else
            file_ok &= read_back(buf, len, fd, vals, n, 0, 0);
    }
    ok(mem_ok, "random arrays from memory: every value, then the end%s", runs_on ? " (runs)" : "");
    ok(file_ok, "random arrays from a file: every value, then the end%s", runs_on ? " (runs)" : "");
    for (i = 0; i < sizeof bads / sizeof *bads; i++) {
        size_t n = 2 + (size_t)(next_rand() % 3000), k = (size_t)(next_rand() % n), j;
        for (j = 0; j < n; j++)
            vals[j] = runs_on ? run_value(j ? vals[j - 1] : 12) : rand_value();
        len = write_array(buf, sizeof buf, vals, n, k, bads[i]);
        if (!read_back(buf, len, -1, vals, n, k, 1)) {
            diag("bad element \"%s\" at %zu", bads[i], k);
            bad_ok = 0;
        }
    }
    ok(bad_ok, "an element not in the strict form: the values before it, then OTHER%s", runs_on ? " (runs)" : "");
    if (!runs_on++)
        goto again;
    close(fd);
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
