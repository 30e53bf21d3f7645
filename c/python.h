/* python.h - Python names as Perl's, shared by the Python readers
 * (the rows whose language is Python; c/python.c).
 *
 * pb_python_package: the package of a source file name, into *pkgbuf
 * (grown), its length in *out_len: the part after the last
 * ".../site-packages/", ".../dist-packages/" or ".../lib/pythonX.Y/"
 * directory, else the base name; ".py"/".pyw" dropped; "/" and "." become
 * "::"; a trailing "__init__" names its package; "<frozen a.b>" is a::b,
 * another "<...>" or "" is main.  pb_python_colons: append p[0..len) with
 * "." (and, with path, "/" and "\") as "::".  Both 0, or -1 when out of
 * memory. */
#ifndef PB_PYTHON_H
#define PB_PYTHON_H
#include <stddef.h>

int pb_python_package(char **pkgbuf, size_t *pkgcap, const char *f, size_t len, size_t *out_len);
int pb_python_colons(char **buf, size_t *cap, size_t *n, const char *p, size_t len, int path);

#endif
