/* python.c - Python names as Perl's, shared by the Python readers
 * (the rows whose language is Python): see python.h. */
#include <string.h>
#include "python.h"
#include "util.h"

int pb_python_colons(char **buf, size_t *cap, size_t *n, const char *p, size_t len, int path)
{
    size_t i, from = 0;
    for (i = 0; i <= len; i++) {
        if (i == len || p[i] == '.' || (path && (p[i] == '/' || p[i] == '\\'))) {
            if (pb_text_append(buf, cap, n, p + from, i - from) < 0)
                return -1;
            if (i < len && pb_text_append(buf, cap, n, "::", 2) < 0)
                return -1;
            from = i + 1;
        }
    }
    return 0;
}
#define put_colons pb_python_colons

static const char *find_root(const char *f, size_t len, size_t *after)
{
    /* the last ".../site-packages/", ".../dist-packages/" or ".../lib/pythonX[.Y]/" */
    size_t i;
    const char *best = NULL;
    for (i = 0; i < len; i++) {
        if (f[i] != '/' && f[i] != '\\')
            continue;
        if (len - i > 15 && (memcmp(f + i + 1, "site-packages", 13) == 0 || memcmp(f + i + 1, "dist-packages", 13) == 0) &&
            (f[i + 14] == '/' || f[i + 14] == '\\')) {
            best = f + i;
            *after = i + 15;
        } else if (len - i > 11 && (memcmp(f + i + 1, "lib/python", 10) == 0 || memcmp(f + i + 1, "Lib\\", 4) == 0)) {
            size_t j = i + 11;
            if (f[i + 1] == 'L') {
                best = f + i;
                *after = i + 5;
                continue;
            }
            while (j < len && ((f[j] >= '0' && f[j] <= '9') || f[j] == '.' || f[j] == 't'))
                j++;
            if (j > i + 11 && j < len && f[j] == '/') {
                best = f + i;
                *after = j + 1;
            }
        }
    }
    return best;
}

/* Python module path of a file name, as a Perl package (see the top). */
int pb_python_package(char **pkgbuf, size_t *pkgcap, const char *f, size_t len, size_t *out_len)
{
    size_t n = 0, after = 0, b;
    const char *rest;
    size_t rlen;
    if (len == 0 || (f[0] == '<' && f[len - 1] == '>')) {
        if (len > 9 && memcmp(f, "<frozen ", 8) == 0) {
            if (put_colons(pkgbuf, pkgcap, &n, f + 8, len - 9, 0) < 0)
                return -1;
        } else if (pb_text_append(pkgbuf, pkgcap, &n, "main", 4) < 0) {
            return -1;
        }
        *out_len = n;
        return 0;
    }
    if (find_root(f, len, &after)) {
        rest = f + after;
        rlen = len - after;
    } else {
        for (b = len; b > 0 && f[b - 1] != '/' && f[b - 1] != '\\'; b--)
            ;
        rest = f + b;
        rlen = len - b;
    }
    if (rlen > 3 && memcmp(rest + rlen - 3, ".py", 3) == 0)
        rlen -= 3;
    else if (rlen > 4 && memcmp(rest + rlen - 4, ".pyw", 4) == 0)
        rlen -= 4;
    if (rlen >= 8 && memcmp(rest + rlen - 8, "__init__", 8) == 0 &&
        (rlen == 8 || rest[rlen - 9] == '/' || rest[rlen - 9] == '\\')) {
        if (rlen > 8) {
            rlen -= 9;
        } else {
            /* a bare __init__.py: its directory names the package */
            size_t e = (size_t)(rest - f), s0;
            if (e > 0)
                e--; /* the separator */
            for (s0 = e; s0 > 0 && f[s0 - 1] != '/' && f[s0 - 1] != '\\'; s0--)
                ;
            rest = f + s0;
            rlen = e - s0;
        }
    }
    if (rlen == 0) {
        if (pb_text_append(pkgbuf, pkgcap, &n, "main", 4) < 0)
            return -1;
    } else if (put_colons(pkgbuf, pkgcap, &n, rest, rlen, 1) < 0) {
        return -1;
    }
    *out_len = n;
    return 0;
}


int pb_python_frame(pb_frame *pf, char **pkgbuf, size_t *pkgcap, char **namebuf, size_t *namecap, const char *file,
                    size_t flen, const char *func, size_t fnlen, const char *suffix)
{
    size_t plen = 0, nlen = 0;
    if (flen == 1 && file[0] == '~') {
        pf->kind = PB_FRAME_SYNTHETIC;
        pf->package = pb_str_make("", 0, 0);
        pf->name = pb_str_make(func, fnlen, 1);
    } else {
        pf->kind = PB_FRAME_SUB;
        if (pb_python_package(pkgbuf, pkgcap, file, flen, &plen) < 0 ||
            pb_python_colons(namebuf, namecap, &nlen, func, fnlen, 0) < 0 ||
            (nlen == 0 && pb_text_append(namebuf, namecap, &nlen, "__ANON__", 8) < 0) ||
            (suffix && pb_text_append(namebuf, namecap, &nlen, suffix, strlen(suffix)) < 0))
            return -1;
        pf->package = pb_str_make(*pkgbuf, plen, 1);
        pf->name = pb_str_make(*namebuf, nlen, 1);
    }
    pf->own = pb_str_make(func, fnlen, 1);
    pf->file = pb_str_make(file, flen, 1);
    return 0;
}
