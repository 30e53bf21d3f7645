/* test_write_nytprof - C tests of the NYTProf writer (c/write_nytprof.c) and
 * of the write driver pb_write (c/outputs.c) to nytprof.out.  Prints TAP;
 * exit status 0 when all pass.
 *
 *   test_write_nytprof [DATA_DIR]     (default t/data/nytprof)
 *
 * 1. Round trip of every *.nytprof.out in DATA_DIR: our reader -> writer (in
 *    memory, the input's own compression) -> our reader again gives the
 *    identical chunk sequence, compared chunk by chunk; uncompressed inputs
 *    come back byte for byte, compressed ones with identical plain header and
 *    identical inflated data; pb_write (to nytprof) writes the same bytes.
 * 2. The writer's checks on synthetic streams, and that a failing file writer
 *    or conversion leaves the target as it was and no temp file.
 * 3. A light sweep: prefixes and one-byte flips of each input go through
 *    reader -> writer -> reader without crashing, and whatever is accepted
 *    comes back identical.
 * Build: gcc -std=c99 -Wall -Wextra -Ic t/c/test_write_nytprof.c c/(star).c -lz -lzstd -lsnappy
 */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with nftw() */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "pb.h"
#include "formats.h"
#include "write_nytprof.h"
#include "harness.h"
#include "tap.h"

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(3);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(3);
    }
    return p;
}

/* ---- a sink that records chunks (strings copied into an arena) -------- */
typedef struct {
    pb_chunk c;
    size_t soff[2];
} rec_chunk;

typedef struct {
    pb_sink sink;
    rec_chunk *v;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
} recorder;

static int rec_chunk_cb(pb_sink *self, const pb_chunk *c)
{
    recorder *r = (recorder *)self->ctx;
    const char *sig = pb_tag_sig[c->tag];
    int si = 0;
    rec_chunk *rc;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 1024;
        r->v = (rec_chunk *)xrealloc(r->v, r->cap * sizeof *r->v);
    }
    rc = &r->v[r->n++];
    memset(rc, 0, sizeof *rc);
    rc->c = *c;
    for (; *sig; sig++) {
        if (*sig != 's')
            continue;
        if (r->acap - r->alen < c->s[si].len + 1) {
            while (r->acap - r->alen < c->s[si].len + 1)
                r->acap = r->acap ? r->acap * 2 : 65536;
            r->arena = (char *)xrealloc(r->arena, r->acap);
        }
        if (c->s[si].len)
            memcpy(r->arena + r->alen, c->s[si].ptr, c->s[si].len);
        rc->soff[si] = r->alen;
        r->alen += c->s[si].len + 1;
        si++;
    }
    return 0;
}

static void rec_init(recorder *r)
{
    memset(r, 0, sizeof *r);
    hx_sink_init(&r->sink, rec_chunk_cb, NULL, r);
}

static void rec_free(recorder *r)
{
    free(r->v);
    free(r->arena);
    rec_init(r);
}

/* string si of chunk i, pointing into the arena */
static pb_str rec_str(const recorder *r, size_t i, int si)
{
    const pb_chunk *c = &r->v[i].c;
    return pb_str_make(r->arena + r->v[i].soff[si], c->s[si].len, c->s[si].utf8);
}

/* Replay recorded chunks into a sink (pb_emit). Returns the first non-zero. */
static int rec_replay(const recorder *r, pb_sink *s)
{
    size_t i;
    for (i = 0; i < r->n; i++) {
        pb_chunk c = r->v[i].c;
        const char *sig = pb_tag_sig[c.tag];
        int si = 0, rv;
        for (; *sig; sig++)
            if (*sig == 's') {
                c.s[si] = rec_str(r, i, si);
                si++;
            }
        if ((rv = pb_emit(s, &c)) != 0)
            return rv;
    }
    return 0;
}

static int chunk_eq(const recorder *a, size_t i, const recorder *b, size_t j)
{
    const pb_chunk *x = &a->v[i].c, *y = &b->v[j].c;
    const char *sig;
    int ui = 0, ni = 0, si = 0;
    if (x->tag != y->tag)
        return 0;
    for (sig = pb_tag_sig[x->tag]; *sig; sig++) {
        switch (*sig) {
        case 'u':
            if (x->u[ui] != y->u[ui])
                return 0;
            ui++;
            break;
        case 'i':
            if (x->ticks != y->ticks)
                return 0;
            break;
        case 'n':
            if (memcmp(&x->n[ni], &y->n[ni], sizeof(double)) != 0)
                return 0;
            ni++;
            break;
        case 's': {
            pb_str p = rec_str(a, i, si), q = rec_str(b, j, si);
            if (p.len != q.len || p.utf8 != q.utf8 || memcmp(p.ptr, q.ptr, p.len) != 0)
                return 0;
            si++;
            break;
        }
        }
    }
    return 1;
}

/* 1 when identical; otherwise explains the first difference */
static int rec_same(const recorder *a, const recorder *b, const char *what)
{
    size_t i, n = a->n < b->n ? a->n : b->n;
    for (i = 0; i < n; i++)
        if (!chunk_eq(a, i, b, i)) {
            diag("%s: chunk %zu differs: %s vs %s", what, i, pb_tag_name[a->v[i].c.tag],
                 pb_tag_name[b->v[i].c.tag]);
            return 0;
        }
    if (a->n != b->n) {
        diag("%s: %zu chunks vs %zu", what, a->n, b->n);
        return 0;
    }
    return 1;
}

/* ---- files ------------------------------------------------------------ */
static int spew(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int r;
    if (!f)
        return -1;
    r = fwrite(p, 1, n, f) == n ? 0 : -1;
    if (fclose(f) != 0)
        r = -1;
    return r;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* number of entries in dir other than . and .. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* empty dir: what nftw() finds below it goes, deepest first */
static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    return ftw->level ? remove(path) : 0;
}
static void rm_dir_contents(const char *dir) { (void)nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* ---- helpers ---------------------------------------------------------- */

/* the level a compressed input was written with (0: not compressed) */
static int input_level(const recorder *r)
{
    size_t i;
    for (i = 0; i < r->n; i++) {
        if (r->v[i].c.tag == PB_T_START_DEFLATE) {
            if (i > 0 && r->v[i - 1].c.tag == PB_T_COMMENT) {
                pb_str t = rec_str(r, i - 1, 0);
                if (t.len > 20 && !memcmp(t.ptr, "Compressed at level ", 20))
                    return atoi(t.ptr + 20);
            }
            return 6;
        }
    }
    return 0;
}

/* Where the zlib data starts: after "\n" + 'z' of the "#Compressed" line. */
static size_t zlib_start(const unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; i + 21 < n; i++)
        if (!memcmp(p + i, "\n#Compressed at level ", 22)) {
            const unsigned char *nl = (const unsigned char *)memchr(p + i + 1, '\n', n - i - 1);
            if (nl && (size_t)(nl - p) + 1 < n && nl[1] == 'z')
                return (size_t)(nl - p) + 2;
            return 0;
        }
    return 0;
}

static unsigned char *inflate_all(const unsigned char *p, size_t n, size_t *outlen)
{
    z_stream z;
    unsigned char *out = NULL;
    size_t cap = 0, len = 0;
    int rc;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15) != Z_OK)
        return NULL;
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    do {
        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 262144;
            out = (unsigned char *)xrealloc(out, cap);
        }
        z.next_out = out + len;
        z.avail_out = (uInt)(cap - len);
        rc = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
    } while (rc == Z_OK);
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    *outlen = len;
    return out;
}

static pb_status decode_into(const void *p, size_t n, const char *name, pb_sink *s, pb_error *err)
{
    return pb_decode_mem(p, n, name, PB_FMT_NYTPROF, NULL, s, err);
}

/* a writer into *out (emptied first) at compression `level`, its warnings to
 * warn (NULL: none); NULL when it refuses to open */
static pb_nytprof_writer *open_mem_writer(int level, void (*warn)(void *, const char *), pb_membuf *out,
                                          pb_error *err)
{
    pb_nytprof_writer_opts o;
    pb_nytprof_writer_opts_init(&o);
    o.compress_level = level;
    o.warn = warn;
    memset(out, 0, sizeof *out);
    return pb_nytprof_writer_open_mem(out, &o, err);
}

/* writer in memory at level; returns status; fills out */
static pb_status write_mem_from(const unsigned char *in, size_t n, int level, pb_membuf *out, pb_error *err,
                                pb_error *derr)
{
    pb_nytprof_writer *w = open_mem_writer(level, NULL, out, err);
    pb_status st;
    if (!w)
        return err->status;
    st = decode_into(in, n, "input", pb_nytprof_writer_sink(w), derr);
    if (st != PB_OK && !(st == PB_ERR_ABORT && pb_nytprof_writer_failed(w))) {
        pb_nytprof_writer_abort(w);
        *err = *derr;
        return st;
    }
    return pb_nytprof_writer_close(w, err);
}

static char tmpdir[256];

/* ---- 1. round trip of the corpus --------------------------------------- */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void round_trip(const char *dir, const char *name)
{
    char path[4096], out_path[4096];
    unsigned char *in;
    size_t n;
    recorder a, b;
    pb_error err, derr;
    pb_membuf mb;
    int level;
    pb_status st;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    in = hx_slurp(path, &n);
    if (!ok(in != NULL, "%s: read", name))
        return;
    rec_init(&a);
    rec_init(&b);
    st = decode_into(in, n, name, &a.sink, &err);
    if (!ok(st == PB_OK, "%s: our reader decodes it (%zu chunks)", name, a.n)) {
        char m[2048];
        pb_error_format(&err, m, sizeof m);
        diag("%s", m);
        goto out;
    }
    level = input_level(&a);
    st = write_mem_from(in, n, level, &mb, &err, &derr);
    if (!ok(st == PB_OK, "%s: written at level %d (%zu bytes)", name, level, mb.len)) {
        char m[2048];
        pb_error_format(&err, m, sizeof m);
        diag("%s", m);
        goto out;
    }
    st = decode_into(mb.data, mb.len, "output", &b.sink, &err);
    ok(st == PB_OK && rec_same(&a, &b, name), "%s: re-read output gives the identical %zu chunks", name, a.n);
    if (level == 0) {
        ok(mb.len == n && memcmp(mb.data, in, n) == 0, "%s: uncompressed output is byte-identical", name);
    } else {
        size_t za = zlib_start(in, n), zb = zlib_start(mb.data, mb.len);
        unsigned char *ia = NULL, *ib = NULL;
        size_t la = 0, lb = 0;
        ok(za > 0 && za == zb && memcmp(in, mb.data, za) == 0, "%s: plain part up to 'z' is byte-identical (%zu)",
           name, za);
        if (za && zb) {
            ia = inflate_all(in + za, n - za, &la);
            ib = inflate_all(mb.data + zb, mb.len - zb, &lb);
        }
        ok(ia && ib && la == lb && memcmp(ia, ib, la) == 0, "%s: inflated data is byte-identical (%zu bytes)",
           name, la);
        free(ia);
        free(ib);
    }
    /* the file writer, through the write driver (pb_write), writes the same bytes */
    snprintf(out_path, sizeof out_path, "%s/%s", tmpdir, name);
    st = hx_convert("nytprof", path, PB_FMT_NYTPROF, NULL, out_path, level, &err);
    {
        size_t fl = 0;
        unsigned char *fb = st == PB_OK ? hx_slurp(out_path, &fl) : NULL;
        ok(fb && fl == mb.len && memcmp(fb, mb.data, fl) == 0, "%s: pb_write writes the same bytes", name);
        free(fb);
        unlink(out_path);
    }
    ok(dir_entries(tmpdir) == 0, "%s: no temp file left", name);
    free(mb.data);
out:
    rec_free(&a);
    rec_free(&b);
    free(in);
}

/* ---- 2. checks on synthetic streams ------------------------------------ */

static void s_chunk(recorder *r, const pb_chunk *c) { rec_chunk_cb(&r->sink, c); }

static void s_header(recorder *r, int with_tps)
{
    pb_chunk c;
    memset(&c, 0, sizeof c);
    pb_chunk_version(&c, 5, 0);
    s_chunk(r, &c);
    pb_chunk_comment(&c, pb_str_c("synthetic stream from test_write_nytprof\n"));
    s_chunk(r, &c);
    pb_chunk_attribute(&c, pb_str_c("nv_size"), pb_str_c("8"));
    s_chunk(r, &c);
    if (with_tps) {
        pb_chunk_attribute(&c, pb_str_c("ticks_per_sec"), pb_str_c("10000000"));
        s_chunk(r, &c);
    }
    pb_chunk_option(&c, pb_str_c("compress"), pb_str_c("0"));
    s_chunk(r, &c);
}

static void s_new_fid(recorder *r, uint32_t fid, const char *name)
{
    pb_chunk c;
    memset(&c, 0, sizeof c);
    pb_chunk_new_fid(&c, fid, 0, 0, PB_FID_HAS_SRC | PB_FID_SAVE_SRC, 0, 0, pb_str_c(name));
    s_chunk(r, &c);
}

/* a valid foreign-looking stream: no START_DEFLATE; with ATTRIBUTE
 * source_format = fmt after the header when fmt is not NULL */
static void s_valid_as(recorder *r, const char *fmt)
{
    pb_chunk c;
    memset(&c, 0, sizeof c);
    s_header(r, 1);
    if (fmt) {
        pb_chunk_attribute(&c, pb_str_c("source_format"), pb_str_c(fmt));
        s_chunk(r, &c);
    }
    pb_chunk_pid_start(&c, 42, 1, 1700000000.5);
    s_chunk(r, &c);
    s_new_fid(r, 1, "/tmp/x.pl");
    s_new_fid(r, 2, "/tmp/Y.pm");
    pb_chunk_time_line(&c, 120, 1, 1);
    s_chunk(r, &c);
    pb_chunk_time_line(&c, -5, 2, 7); /* negative ticks survive as I32 */
    s_chunk(r, &c);
    pb_chunk_time_block(&c, 9, 1, 3, 2, 2);
    s_chunk(r, &c);
    pb_chunk_discount(&c);
    s_chunk(r, &c);
    pb_chunk_sub_entry(&c, 1, 2);
    s_chunk(r, &c);
    pb_chunk_sub_return(&c, 1, 400.25, 355, pb_str_make("main::\xc3\xa9t\xc3\xa9", 10, 1));
    s_chunk(r, &c);
    pb_chunk_attribute(&c, pb_str_c("cumulative_overhead_ticks"), pb_str_c("0"));
    s_chunk(r, &c);
    pb_chunk_src_line(&c, 1, 1, pb_str_c("print 1;\n"));
    s_chunk(r, &c);
    pb_chunk_sub_info(&c, 1, 2, 4, pb_str_make("main::\xc3\xa9t\xc3\xa9", 10, 1));
    s_chunk(r, &c);
    pb_chunk_sub_callers(&c, 1, 5, 3, 0.5, 0.25, 0, 0, pb_str_make("main::\xc3\xa9t\xc3\xa9", 10, 1),
                         pb_str_c("main::RUNTIME"));
    s_chunk(r, &c);
    pb_chunk_sub_callers(&c, 0, 0, 0, 0, 0, 0, 0, pb_str_c("main::CORE:print"), pb_str_c(""));
    s_chunk(r, &c);
    pb_chunk_pid_end(&c, 42, 1700000001.5);
    s_chunk(r, &c);
}

static void s_valid(recorder *r) { s_valid_as(r, NULL); }

static int n_warnings;
static void count_warning(void *ud, const char *msg)
{
    (void)ud;
    n_warnings++;
    diag("warning: %s", msg);
}

/* write the recorded stream into memory at level; returns status */
static pb_status write_rec(const recorder *r, int level, pb_membuf *mb, pb_error *err)
{
    pb_nytprof_writer *w = open_mem_writer(level, count_warning, mb, err);
    if (!w)
        return err->status;
    rec_replay(r, pb_nytprof_writer_sink(w));
    return pb_nytprof_writer_close(w, err);
}

static int expect_fail(const recorder *r, pb_status want, const char *needle, const char *what)
{
    pb_membuf mb;
    pb_error err;
    pb_status st = write_rec(r, 6, &mb, &err);
    char m[2048] = "";
    if (st != PB_OK)
        pb_error_format(&err, m, sizeof m);
    if (!ok(st == want && strstr(m, needle) && mb.data == NULL && mb.len == 0, "refused: %s", what))
        diag("status %s, message: %s", pb_status_class(st), m);
    else
        diag("%s", m);
    free(mb.data);
    return st == want;
}

/* a header (with ticks_per_sec), NEW_FID 1 when fid1, then c: the writer must refuse the stream */
static void refuse_after_header(int fid1, const pb_chunk *c, pb_status want, const char *needle, const char *what)
{
    recorder r;
    rec_init(&r);
    s_header(&r, 1);
    if (fid1)
        s_new_fid(&r, 1, "a");
    s_chunk(&r, c);
    expect_fail(&r, want, needle, what);
    rec_free(&r);
}

/* VERSION 5.0 and one ATTRIBUTE: the writer must refuse the stream */
static void refuse_attribute(const char *key, const char *value, pb_status want, const char *needle, const char *what)
{
    recorder r;
    pb_chunk c;
    memset(&c, 0, sizeof c);
    rec_init(&r);
    pb_chunk_version(&c, 5, 0);
    s_chunk(&r, &c);
    pb_chunk_attribute(&c, pb_str_c(key), pb_str_c(value));
    s_chunk(&r, &c);
    expect_fail(&r, want, needle, what);
    rec_free(&r);
}

static void checks(void)
{
    recorder r, back;
    pb_membuf mb;
    pb_error err;
    pb_status st;
    pb_chunk c;
    size_t i;
    /* NEW_FIDs after the header that the writer refuses */
    static const struct {
        int n;
        uint32_t fid[2];
        const char *name[2];
        const char *needle, *what;
    } bad_fids[] = {
        {2, {1, 3}, {"a", "c"}, "fid 2 was never defined", "fids 1 and 3 (a hole)"},
        {1, {0}, {"zero"}, "fid 0", "NEW_FID fid 0"},
        {1, {4000000000u}, {"far"}, "dense", "NEW_FID 4000000000 as the first fid (no huge bitmap)"},
    };
    memset(&c, 0, sizeof c);

    /* level 0: exact */
    rec_init(&r);
    rec_init(&back);
    s_valid(&r);
    n_warnings = 0;
    st = write_rec(&r, 0, &mb, &err);
    ok(st == PB_OK && n_warnings == 0, "synthetic stream written at level 0, no warning");
    st = decode_into(mb.data, mb.len, "synthetic", &back.sink, &err);
    ok(st == PB_OK && rec_same(&r, &back, "synthetic level 0"), "level 0: read back identical (%zu chunks)", r.n);
    free(mb.data);
    rec_free(&back);

    /* level 6: "#Compressed ..." + START_DEFLATE inserted before the first binary chunk */
    st = write_rec(&r, 6, &mb, &err);
    ok(st == PB_OK, "synthetic stream written at level 6");
    st = decode_into(mb.data, mb.len, "synthetic", &back.sink, &err);
    {
        int good = st == PB_OK && back.n == r.n + 2;
        size_t k = 0;
        for (i = 0; good && i < back.n; i++) {
            if (back.v[i].c.tag == PB_T_START_DEFLATE) {
                pb_str t = rec_str(&back, i - 1, 0);
                char want[64];
                snprintf(want, sizeof want, "Compressed at level 6 with zlib %s\n", zlibVersion());
                good = back.v[i - 1].c.tag == PB_T_COMMENT && t.len == strlen(want) &&
                       !memcmp(t.ptr, want, t.len) && r.v[k - 1].c.tag == PB_T_OPTION &&
                       r.v[k].c.tag == PB_T_PID_START;
                continue;
            }
            if (back.v[i].c.tag == PB_T_COMMENT && i + 1 < back.n && back.v[i + 1].c.tag == PB_T_START_DEFLATE)
                continue;
            good = k < r.n && chunk_eq(&r, k, &back, i);
            k++;
        }
        ok(good && k == r.n, "level 6: the writer's own COMMENT + START_DEFLATE precede PID_START, the rest is identical");
    }
    free(mb.data);
    rec_free(&back);

    /* sub calls without a PID_END: written, with a warning */
    r.n--; /* drop PID_END */
    n_warnings = 0;
    st = write_rec(&r, 0, &mb, &err);
    ok(st == PB_OK && n_warnings == 1, "sub calls but no PID_END: written, one warning");
    free(mb.data);
    rec_free(&r);

    /* a COMMENT without its newline gets one */
    rec_init(&r);
    s_header(&r, 1);
    pb_chunk_comment(&c, pb_str_c("no newline"));
    s_chunk(&r, &c);
    st = write_rec(&r, 0, &mb, &err);
    st = st == PB_OK ? decode_into(mb.data, mb.len, "comment", &back.sink, &err) : st;
    ok(st == PB_OK && back.n == r.n && back.v[r.n - 1].c.s[0].len == 11 &&
           !memcmp(rec_str(&back, r.n - 1, 0).ptr, "no newline\n", 11),
       "a COMMENT without its trailing newline gets one");
    free(mb.data);
    rec_free(&back);
    rec_free(&r);

    /* fids may be defined out of order, and re-sent */
    rec_init(&r);
    s_header(&r, 1);
    s_new_fid(&r, 2, "b");
    s_new_fid(&r, 1, "a");
    s_new_fid(&r, 2, "b");
    pb_chunk_time_line(&c, 1, 2, 1);
    s_chunk(&r, &c);
    st = write_rec(&r, 0, &mb, &err);
    ok(st == PB_OK, "NEW_FID 2, 1, 2 (out of order, re-sent) accepted");
    free(mb.data);
    rec_free(&r);

    /* refusals */
    rec_init(&r);
    s_header(&r, 0);
    pb_chunk_pid_start(&c, 1, 0, 1);
    s_chunk(&r, &c);
    expect_fail(&r, PB_ERR_CORRUPT, "ticks_per_sec", "no ticks_per_sec before the first binary chunk");
    rec_free(&r);

    rec_init(&r);
    s_header(&r, 0);
    expect_fail(&r, PB_ERR_CORRUPT, "ticks_per_sec", "no ticks_per_sec at all");
    rec_free(&r);

    refuse_attribute("ticks_per_sec", "0", PB_ERR_CORRUPT, "ticks_per_sec", "ticks_per_sec=0");

    refuse_attribute("ticks_per_sec", "0x10", PB_ERR_CORRUPT, "ticks_per_sec", "ticks_per_sec=0x10 (0 to Perl)");

    pb_chunk_time_line(&c, 1, 2, 1);
    refuse_after_header(1, &c, PB_ERR_CORRUPT, "fid 2 is used before any NEW_FID", "TIME_LINE on an undefined fid");

    pb_chunk_time_block(&c, 1, 1, 1, 1, 1);
    refuse_after_header(0, &c, PB_ERR_CORRUPT, "chunk 5 (TIME_BLOCK): fid 1", "TIME_BLOCK before any NEW_FID");

    pb_chunk_sub_info(&c, 3, 1, 2, pb_str_c("main::x"));
    refuse_after_header(1, &c, PB_ERR_CORRUPT, "SUB_INFO): fid 3", "SUB_INFO on an undefined fid");

    pb_chunk_sub_info(&c, 0, 0, 0, pb_str_c("main::x"));
    refuse_after_header(1, &c, PB_ERR_CORRUPT, "SUB_INFO): fid 0", "SUB_INFO on fid 0");

    pb_chunk_sub_callers(&c, 2, 1, 1, 0, 0, 0, 0, pb_str_c("main::x"), pb_str_c("main::y"));
    refuse_after_header(1, &c, PB_ERR_CORRUPT, "SUB_CALLERS): fid 2", "SUB_CALLERS on an undefined fid");

    for (i = 0; i < sizeof bad_fids / sizeof bad_fids[0]; i++) {
        int k;
        rec_init(&r);
        s_header(&r, 1);
        for (k = 0; k < bad_fids[i].n; k++)
            s_new_fid(&r, bad_fids[i].fid[k], bad_fids[i].name[k]);
        expect_fail(&r, PB_ERR_CORRUPT, bad_fids[i].needle, bad_fids[i].what);
        rec_free(&r);
    }

    rec_init(&r);
    pb_chunk_attribute(&c, pb_str_c("ticks_per_sec"), pb_str_c("100"));
    s_chunk(&r, &c);
    expect_fail(&r, PB_ERR_CORRUPT, "must start with a VERSION", "a stream not starting with VERSION");
    rec_free(&r);

    rec_init(&r);
    expect_fail(&r, PB_ERR_CORRUPT, "no chunks", "an empty stream");
    rec_free(&r);

    rec_init(&r);
    pb_chunk_version(&c, 4, 0);
    s_chunk(&r, &c);
    expect_fail(&r, PB_ERR_UNSUPPORTED, "major version 5", "VERSION 4.0");
    rec_free(&r);

    pb_chunk_attribute(&c, pb_str_c("a=b"), pb_str_c("c"));
    refuse_after_header(0, &c, PB_ERR_CORRUPT, "holds '='", "an ATTRIBUTE key holding '='");

    pb_chunk_option(&c, pb_str_c("k"), pb_str_c("two\nlines"));
    refuse_after_header(0, &c, PB_ERR_CORRUPT, "holds a newline", "an OPTION value holding a newline");

    pb_chunk_comment(&c, pb_str_c("two\nlines\n"));
    refuse_after_header(0, &c, PB_ERR_CORRUPT, "newline before its end", "a COMMENT holding two lines");

    refuse_attribute("nv_size", "16", PB_ERR_UNSUPPORTED, "nv_size", "nv_size=16");

    ok(open_mem_writer(10, NULL, &mb, &err) == NULL && err.status == PB_ERR_UNSUPPORTED, "compress level 10 refused");
}

/* the file writer: target untouched and no temp file on failure */
static void file_safety(const char *dir)
{
    char target[4096], in_copy[4096], path[4096];
    static const char old[] = "previous content\n";
    pb_nytprof_writer *w;
    pb_error err;
    pb_status st;
    recorder r;
    pb_chunk c;
    unsigned char *in, *got;
    size_t n, gl = 0;
    memset(&c, 0, sizeof c);

    snprintf(target, sizeof target, "%s/target.out", tmpdir);
    spew(target, old, sizeof old - 1);

    /* a refused stream */
    rec_init(&r);
    s_header(&r, 1);
    pb_chunk_time_line(&c, 1, 7, 1);
    s_chunk(&r, &c);
    w = pb_nytprof_writer_open(target, NULL, &err);
    ok(w != NULL && dir_entries(tmpdir) == 2, "open creates one temp file next to the target");
    if (w) {
        rec_replay(&r, pb_nytprof_writer_sink(w));
        st = pb_nytprof_writer_close(w, &err);
        got = hx_slurp(target, &gl);
        ok(st == PB_ERR_CORRUPT && got && gl == sizeof old - 1 && !memcmp(got, old, gl) && dir_entries(tmpdir) == 1,
           "a refused stream: close fails, existing target unchanged, temp file gone");
        free(got);
    }
    /* abort */
    w = pb_nytprof_writer_open(target, NULL, &err);
    if (w) {
        rec_replay(&r, pb_nytprof_writer_sink(w));
        pb_nytprof_writer_abort(w);
    }
    got = hx_slurp(target, &gl);
    ok(got && gl == sizeof old - 1 && !memcmp(got, old, gl) && dir_entries(tmpdir) == 1,
       "abort: target unchanged, temp file gone");
    free(got);
    rec_free(&r);

    /* convert of a truncated input */
    snprintf(path, sizeof path, "%s/recursion.nytprof.out", dir);
    in = hx_slurp(path, &n);
    if (in) {
        snprintf(in_copy, sizeof in_copy, "%s/truncated.in", tmpdir);
        spew(in_copy, in, n / 2);
        unlink(target);
        st = hx_convert("nytprof", in_copy, PB_FMT_UNKNOWN, NULL, target, 6, &err);
        {
            char m[2048];
            pb_error_format(&err, m, sizeof m);
            diag("%s", m);
        }
        ok(st == PB_ERR_TRUNCATED && !file_exists(target) && dir_entries(tmpdir) == 1,
           "convert of a truncated input: truncated error, no target, no temp file");
        spew(target, old, sizeof old - 1);
        st = hx_convert("nytprof", in_copy, PB_FMT_UNKNOWN, NULL, target, 0, &err);
        got = hx_slurp(target, &gl);
        ok(st == PB_ERR_TRUNCATED && got && gl == sizeof old - 1 && !memcmp(got, old, gl) &&
               dir_entries(tmpdir) == 2,
           "convert of a truncated input over an existing target: target unchanged");
        free(got);
        /* convert succeeds over an existing target */
        st = hx_convert("nytprof", path, PB_FMT_UNKNOWN, NULL, target, 6, &err);
        ok(st == PB_OK && file_exists(target) && dir_entries(tmpdir) == 2, "convert replaces an existing target");
        {
            struct stat sb;
            mode_t um = umask(0);
            umask(um);
            ok(stat(target, &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~um), "target mode follows the umask (%o)",
               (unsigned)(sb.st_mode & 0777));
        }
        free(in);
        unlink(in_copy);
        unlink(target);
    }
    st = hx_convert("nytprof", path, PB_FMT_UNKNOWN, NULL, "/nonexistent-dir-pb/x.out", 6, &err);
    ok(st == PB_ERR_IO, "an output directory that does not exist: io error");
    snprintf(path, sizeof path, "%s/no-such-input", tmpdir);
    st = hx_convert("nytprof", path, PB_FMT_UNKNOWN, NULL, target, 6, &err);
    ok(st == PB_ERR_IO && !file_exists(target) && dir_entries(tmpdir) == 0, "a missing input: io error, nothing left");
}

/* ---- 3. light sweep --------------------------------------------------- */
static unsigned long rng_state = 12345;
static unsigned long rnd(void)
{
    rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
    return rng_state >> 33;
}

/* one mutated input: decode -> writer -> decode; returns 0 on a real failure */
static int sweep_one(const unsigned char *p, size_t n, int level)
{
    recorder a, b;
    pb_error err, derr;
    pb_membuf mb;
    pb_status st, sa;
    int good = 1;
    rec_init(&a);
    rec_init(&b);
    sa = decode_into(p, n, "mutant", &a.sink, &err);
    st = write_mem_from(p, n, level, &mb, &err, &derr);
    if (st == PB_OK) {
        /* accepted: the input must have decoded, and the output must read back the same */
        if (sa != PB_OK)
            good = 0;
        else if (decode_into(mb.data, mb.len, "mutant-out", &b.sink, &err) != PB_OK)
            good = 0;
        else if (level == input_level(&a) && !rec_same(&a, &b, "sweep"))
            good = 0;
    } else if (mb.data != NULL || mb.len != 0) {
        good = 0;
    }
    free(mb.data);
    rec_free(&a);
    rec_free(&b);
    return good;
}

static void sweep(const char *dir, const char *name)
{
    char path[4096];
    unsigned char *in, *m;
    size_t n, i, step;
    int bad = 0, runs = 0, level;
    recorder a;
    pb_error err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    in = hx_slurp(path, &n);
    if (!in)
        return;
    rec_init(&a);
    decode_into(in, n, name, &a.sink, &err);
    level = input_level(&a);
    rec_free(&a);
    step = n / 150 + 1;
    for (i = 0; i < n; i += step, runs++)
        bad += !sweep_one(in, i, level);
    m = (unsigned char *)xmalloc(n);
    for (i = 0; i < 150; i++, runs++) {
        size_t pos = rnd() % n;
        memcpy(m, in, n);
        m[pos] ^= (unsigned char)(1u << (rnd() % 8));
        bad += !sweep_one(m, n, level);
    }
    ok(bad == 0, "%s: sweep of %d prefixes and one-bit flips: no crash, accepted ones read back the same", name,
       runs);
    free(m);
    free(in);
}

/* the level named by the COMMENT before START_DEFLATE in a written stream:
 * -1 when it has no START_DEFLATE (plain), -2 when it cannot be read back */
static long written_level(const pb_membuf *mb)
{
    recorder back;
    pb_error err;
    long lv = -1;
    size_t i;
    rec_init(&back);
    if (decode_into(mb->data, mb->len, "written", &back.sink, &err) != PB_OK)
        lv = -2;
    for (i = 1; lv == -1 && i < back.n; i++) {
        pb_str t = rec_str(&back, i - 1, 0);
        if (back.v[i].c.tag == PB_T_START_DEFLATE && back.v[i - 1].c.tag == PB_T_COMMENT && t.len > 20 &&
            !memcmp(t.ptr, "Compressed at level ", 20))
            lv = strtol(t.ptr + 20, NULL, 10);
    }
    rec_free(&back);
    return lv;
}

/* the default level: 3 for a NYTProf stream, 0 (plain: no START_DEFLATE)
 * once ATTRIBUTE source_format marks it foreign; a level asked for is kept
 * either way */
static void auto_level(void)
{
    static const struct {
        const char *fmt;
        int level;
        long want;
    } cases[] = {
        {NULL, PB_NYTPROF_WRITER_AUTO_LEVEL, PB_NYTPROF_WRITER_DEFAULT_LEVEL},
        {"easyprofiler", PB_NYTPROF_WRITER_AUTO_LEVEL, -1},
        {"easyprofiler", 6, 6},
        {"easyprofiler", 1, 1},
        {"tachyon", 9, 9},
        {"tachyon", 0, -1},
        {NULL, 1, 1},
    };
    size_t i;
    ok(PB_NYTPROF_WRITER_DEFAULT_LEVEL == 3 && PB_NYTPROF_WRITER_FOREIGN_LEVEL == 0,
       "default levels: 3 for NYTProf streams, 0 (plain) for foreign ones");
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        recorder r;
        pb_membuf mb;
        pb_error err;
        pb_status st;
        long got;
        rec_init(&r);
        s_valid_as(&r, cases[i].fmt);
        st = write_rec(&r, cases[i].level, &mb, &err);
        got = st == PB_OK ? written_level(&mb) : -3;
        ok(got == cases[i].want, "%s stream at level %d: written at %ld (want %ld)",
           cases[i].fmt ? cases[i].fmt : "NYTProf", cases[i].level, got, cases[i].want);
        free(mb.data);
        rec_free(&r);
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "t/data/nytprof";
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t nn = 0, i;
    const char *tmp = getenv("TMPDIR");

    if (!d) {
        printf("1..0 # SKIP no %s\n", dir);
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 12 && !strcmp(e->d_name + l - 12, ".nytprof.out")) {
            names = (char **)xrealloc(names, (nn + 1) * sizeof *names);
            names[nn] = (char *)xmalloc(l + 1);
            memcpy(names[nn++], e->d_name, l + 1);
        }
    }
    closedir(d);
    qsort(names, nn, sizeof *names, cmp_names);

    snprintf(tmpdir, sizeof tmpdir, "%s/pbwriterXXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 2;
    }

    for (i = 0; i < nn; i++)
        round_trip(dir, names[i]);
    ok(nn >= 1, "found %zu NYTProf files in %s", nn, dir);
    checks();
    auto_level();
    file_safety(dir);
    for (i = 0; i < nn; i++)
        sweep(dir, names[i]);

    rm_dir_contents(tmpdir);
    rmdir(tmpdir);
    for (i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    printf("1..%d\n", tests);
    if (failures)
        printf("# %d of %d failed\n", failures, tests);
    return failures ? 1 : 0;
}
