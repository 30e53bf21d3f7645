/* pb_limits.h - the default resource limits (pb_options' max_*, 0 = these).
 *
 * Its own header, below options.h, so that the byte source (source.c) reads
 * the record limit without the options options.h declares.  The LIMITS
 * section of Devel::ProfileBridge's POD documents each one.
 */
#ifndef PB_PB_LIMITS_H
#define PB_PB_LIMITS_H

#include <stdint.h>

#define PB_DEFAULT_MAX_DECOMPRESSED (UINT64_C(4) << 30)  /* 4 GiB */
#define PB_DEFAULT_MAX_RECORD       (UINT64_C(256) << 20) /* 256 MiB */
#define PB_DEFAULT_MAX_STACK_DEPTH  4096
#define PB_DEFAULT_MAX_STRINGS      50000000u
#define PB_DEFAULT_MAX_FRAMES       50000000u
#define PB_DEFAULT_MAX_STATEMENTS   (UINT64_C(1) << 28)
#define PB_DEFAULT_MAX_LINE         (1u << 22)  /* 4,194,304 */
#define PB_DEFAULT_MAX_THREADS      4096u
/* max_decompressed_bytes not given, for a file that is one compressed
 * stream: at most max(PB_INFLATE_FLOOR, PB_INFLATE_RATIO x its size) (real
 * profiles inflate 3-20 times; a bomb 1000 times) */
#define PB_INFLATE_RATIO            64u
#define PB_INFLATE_FLOOR            (UINT64_C(64) << 20)
/* max_decompressed_bytes not given, for a gzip-compressed input whose
 * format does not read gzip itself (inflated as a stream, or into the
 * spooled copy of a format that seeks: source.h), and for that copy of
 * standard input or a pipe */
#define PB_DEFAULT_MAX_GUNZIPPED    (UINT64_C(64) << 20) /* 64 MiB */
#define PB_DEFAULT_MAX_STRING_BYTES (UINT64_C(32) << 20) /* 32 MiB */

#endif
