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
 * memory.
 *
 * pb_python_frame: a Python function (file, func) as a frame's kind,
 * package, name, own name (func as the source wrote it) and file: a
 * sampler's "~" file marks one of its own frames (<GC>, <native>: kind
 * synthetic, the name as is); else the file's package and func with "." as
 * "::" ("__ANON__" for none), then suffix (NULL: none) appended.  The names
 * point into *pkgbuf and *namebuf (grown; valid until the next call) and
 * into file and func.  0, or -1 when out of memory. */
#ifndef PB_PYTHON_H
#define PB_PYTHON_H
#include <stddef.h>
#include "samples.h"

int pb_python_package(char **pkgbuf, size_t *pkgcap, const char *f, size_t len, size_t *out_len);
int pb_python_colons(char **buf, size_t *cap, size_t *n, const char *p, size_t len, int path);
int pb_python_frame(pb_frame *pf, char **pkgbuf, size_t *pkgcap, char **namebuf, size_t *namecap, const char *file,
                    size_t flen, const char *func, size_t fnlen, const char *suffix);

#endif
