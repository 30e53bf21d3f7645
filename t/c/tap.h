/* tap.h - the TAP output the C-level tests share (t/c/test_*.c).
 * ok() prints "ok N - ..." or "not ok N - ..." (and returns the condition),
 * diag() a "# ..." line; main() ends with
 *   printf("1..%d\n", tests); return failures ? 1 : 0;
 */
#ifndef PB_TAP_H
#define PB_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tests, failures;

/* cond, so that a failure can be followed by a diag() */
static inline int ok(int cond, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static inline int ok(int cond, const char *fmt, ...)
{
    va_list ap;
    tests++;
    if (!cond)
        failures++;
    printf("%sok %d - ", cond ? "" : "not ", tests);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return cond;
}

/* "# ..." */
static inline void diag(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static inline void diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

#endif
