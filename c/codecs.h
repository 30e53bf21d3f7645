/* codecs.h - the optional compression libraries, one switch each.
 *
 * zlib is required (NYTProf).  libzstd and libsnappy are optional
 * (the rows of c/formats.c say which files need them): Makefile.PL defines
 * PB_NO_ZSTD / PB_NO_SNAPPY when it cannot find them.  Then PB_HAVE_ZSTD /
 * PB_HAVE_SNAPPY are 0, the callers report
 *     "unsupported: this build has no zstd (install libzstd-dev and rebuild)"
 * before touching the library, and the stubs below (which only fail) keep
 * the rest of the code compiling unchanged.  Plain C99, no Perl headers.
 */
#ifndef PB_CODECS_H
#define PB_CODECS_H

#include <stddef.h>

#ifndef PB_NO_ZSTD
#include <zstd.h>
#define PB_HAVE_ZSTD 1
#else
#define PB_HAVE_ZSTD 0
typedef struct pb_no_zstd ZSTD_DStream;
typedef struct { const void *src; size_t size, pos; } ZSTD_inBuffer;
typedef struct { void *dst; size_t size, pos; } ZSTD_outBuffer;
static inline ZSTD_DStream *ZSTD_createDStream(void) { return NULL; }
static inline size_t ZSTD_freeDStream(ZSTD_DStream *d) { (void)d; return 0; }
static inline size_t ZSTD_initDStream(ZSTD_DStream *d) { (void)d; return (size_t)-1; }
static inline size_t ZSTD_decompressStream(ZSTD_DStream *d, ZSTD_outBuffer *o, ZSTD_inBuffer *i)
{
    (void)d; (void)o; (void)i;
    return (size_t)-1;
}
static inline unsigned ZSTD_isError(size_t r) { return r == (size_t)-1; }
static inline const char *ZSTD_getErrorName(size_t r) { (void)r; return "this build has no zstd"; }
#endif

#ifndef PB_NO_SNAPPY
#include <snappy-c.h>
#define PB_HAVE_SNAPPY 1
#else
#define PB_HAVE_SNAPPY 0
typedef enum { SNAPPY_OK = 0, SNAPPY_INVALID_INPUT = 1, SNAPPY_BUFFER_TOO_SMALL = 2 } snappy_status;
static inline size_t snappy_max_compressed_length(size_t n) { return 32 + n + n / 6; }
static inline snappy_status snappy_compress(const char *in, size_t n, char *out, size_t *outn)
{
    (void)in; (void)n; (void)out; (void)outn;
    return SNAPPY_INVALID_INPUT;
}
static inline snappy_status snappy_uncompress(const char *in, size_t n, char *out, size_t *outn)
{
    (void)in; (void)n; (void)out; (void)outn;
    return SNAPPY_INVALID_INPUT;
}
static inline snappy_status snappy_uncompressed_length(const char *in, size_t n, size_t *r)
{
    (void)in; (void)n; (void)r;
    return SNAPPY_INVALID_INPUT;
}
static inline snappy_status snappy_validate_compressed_buffer(const char *in, size_t n)
{
    (void)in; (void)n;
    return SNAPPY_INVALID_INPUT;
}
#endif

/* the message of the unsupported error, for "zstd" or "snappy" */
#define PB_NO_CODEC_MSG(lib, pkg) "this build has no " lib " (install " pkg " and rebuild Devel::ProfileBridge)"

#endif
