/* present.c - foreign profiles made to read like Perl ones (see present.h).
 *
 * Names here: pe_ = the two passes this filter adds for tracing profiles (the def-header scan and
 * the walk of call edges into call events; PE_ limits), h_ = hash callbacks of a pb_index.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif
#include "present.h"
#include "call_events.h"
#include "util.h"
#include "formats.h"

/* files larger than this are not embedded (nytprofhtml holds them whole);
 * counted as bytes are read */
#define PB_SOURCE_MAX_BYTES ((size_t)64 << 20)
/* names listed in the summary warning */
#define PB_MISSING_LISTED 5

struct pb_present {
    pb_sink sink;
    pb_sink *out;
    pb_error *err;
    int active;              /* a foreign stream: ATTRIBUTE source_format seen */
    int no_source;
    const char *const *roots;
    size_t nroots;
    const char *const *strip;
    size_t nstrip;
    const char *base;
    uint32_t max_line;
    char *name[2];           /* mapped names (SUB_CALLERS has two) */
    size_t name_cap[2];
    char *path;              /* candidate path */
    size_t path_cap;
    int source_any;          /* the policy lifted (present.h, "Source") */
    const pb_format_row *lang; /* whose source files are embedded: from the stream's row (pb_sink.row) */
    int lang_any;              /* ... or every row's (lang_of) */
    int roots_resolved, need_shebang;
    char **root_real;        /* resolved: source roots, the working directory, the input's directory */
    const char *why;         /* why try_open refused */
    unsigned char *sbuf;     /* one source file, read whole */
    size_t sbuf_cap;
    uint32_t refused;
    uint32_t library;        /* source files of the language outside the allowed directories: no warning */
    uint32_t missing_rel;    /* files not found that the profile names relatively (the program's own) */
    char refused_listed[PB_MISSING_LISTED][200];
    unsigned char *done;     /* per fid: 1 when its source was handled */
    size_t done_cap;
    uint32_t embedded, missing;
    char listed[PB_MISSING_LISTED][128];
    /* call stacks for a stream that has call edges but no call events */
    double ticks_per_sec;
    int saw_return, calls_option; /* calls_option: -1 none seen, else its value */
    int call_graph;               /* ATTRIBUTE call_graph: a call graph (PB_YIELDS_GRAPH), no stacks to invent */
    char **sub;                  /* sub names (mapped), by id */
    size_t *sub_len;
    size_t nsubs, csubs, csub_len;
    pb_index subix;
    struct pe_edge {
        uint32_t caller, callee;
        double incl, excl;       /* seconds */
        uint64_t count;
    } *edges;
    size_t nedges, cedges;
    pb_index edgeix;
    /* finish: per sub totals, out-edges, the DFS path */
    double *in_incl, *own;
    uint64_t *in_count;
    uint32_t *out_first, *out_edge, *stack;
    size_t visited;
    int dry;                     /* 1: only add up the weights (into total) */
    double total, scale;         /* rebuilt ticks; factor that fits them into the run */
    double t_start, t_end;       /* first PID_START, last PID_END (seconds) */
    int saw_fid, saw_pid;        /* a NEW_FID, a PID_START went by */
    double basetime;             /* ATTRIBUTE basetime */
    pb_callev cev;
    /* a format whose subs have no definition lines (PB_NO_SUB_LINES
     * in its row): where they are defined, from the source embedded */
    int pyn;                     /* the stream's row (pb_sink.row) is such a format's */
    struct pe_def {
        char *name;
        size_t len;
        uint32_t fid, first, last, count; /* count: definitions of this name */
    } *defs;
    size_t ndefs, cdefs;
    pb_index defix;
    struct pe_open {
        uint32_t def, indent;
    } *open;                     /* blocks open while a file is scanned */
    size_t nopen, copen;
    uint32_t last_code, deco_line; /* last line with code; first decorator line of the next def */
    uint32_t prog_fid, prog_lines; /* the first file scanned: the program (<module>) */
};

static const char *pb_memmem(const char *h, size_t hl, const char *n, size_t nl)
{
    size_t i;
    if (!h || nl > hl)
        return NULL;
    for (i = 0; i + nl <= hl; i++)
        if (h[i] == n[0] && memcmp(h + i, n, nl) == 0)
            return h + i;
    return NULL;
}

/* ---- names ----------------------------------------------------------------- */
static int after_operator(const char *in, size_t i)
{
    size_t j = i;
    while (j > 0 && (in[j - 1] == '<' || in[j - 1] == '>' || in[j - 1] == '=' || in[j - 1] == '-' ||
                     in[j - 1] == ' '))
        j--;
    return j >= 8 && memcmp(in + j - 8, "operator", 8) == 0;
}

size_t pb_nytprof_name(const char *in, size_t len, char *out, size_t cap)
{
    size_t i, w = 0;
    int angle = 0, paren = 0;
#define PUT(ch)                      \
    do {                             \
        if (w + 1 < cap)             \
            out[w] = (char)(ch);     \
        w++;                         \
    } while (0)
    for (i = 0; i < len; i++) {
        char ch = in[i];
        if (ch == '<') {
            if (!after_operator(in, i))
                angle++;
            PUT('[');
        } else if (ch == '>') {
            if (angle > 0 && !after_operator(in, i)) {
                angle--;
                PUT(']');
            } else {
                PUT('>'); /* "operator>", "->": harmless in HTML text */
            }
        } else if (ch == '(' || ch == '{') {
            paren++;
            PUT(ch);
        } else if ((ch == ')' || ch == '}') && paren > 0) {
            paren--;
            PUT(ch);
        } else if (ch == ':' && i + 1 < len && in[i + 1] == ':' && (angle > 0 || paren > 0)) {
            PUT('.');
            i++;
        } else {
            PUT(ch);
        }
    }
    if (cap)
        out[w < cap ? w : cap - 1] = '\0';
    return w;
#undef PUT
}

size_t pb_name_package_end(const char *in, size_t len)
{
    size_t i, at = (size_t)-1;
    int angle = 0, paren = 0;
    for (i = 0; i < len; i++) {
        char ch = in[i];
        if (ch == '<') {
            if (!after_operator(in, i))
                angle++;
        } else if (ch == '>') {
            if (angle > 0 && !after_operator(in, i))
                angle--;
        } else if (ch == '(' || ch == '{') {
            paren++;
        } else if ((ch == ')' || ch == '}') && paren > 0) {
            paren--;
        } else if (ch == ':' && i + 1 < len && in[i + 1] == ':') {
            if (angle == 0 && paren == 0)
                at = i;
            i++;
        }
    }
    return at;
}

static int present_map_name(pb_present *p, int k, pb_str *s)
{
    const char *in = s->ptr ? s->ptr : "";
    size_t n = pb_nytprof_name(in, s->len, NULL, 0);
    if (pb_grow((void **)&p->name[k], &p->name_cap[k], n + 1, 1) < 0)
        return -1;
    pb_nytprof_name(in, s->len, p->name[k], n + 1);
    s->ptr = p->name[k];
    s->len = n;
    s->utf8 = 0; /* UTF-8 bytes, unflagged, as NYTProf itself writes names */
    return 0;
}

/* ---- source ----------------------------------------------------------------
 * The policy (present.h, "Source"): a candidate is embedded only when it
 * is a regular file whose resolved path (realpath: every symlink followed)
 * lies outside /proc, /sys and /dev (and on no such pseudo file system);
 * unless source_any, also under an allowed directory and with a name of
 * an extension of the input's language (Python and Perl: or none, with a
 * "#!" first line naming the interpreter).  Every file is read through one
 * descriptor with a byte cap counted as bytes arrive (st_size is 0 in
 * /proc), and a read error is reported. */
/* the row that lists the source files of the stream's language: its
 * format's own (row: the producer's, pb_sink.row), or the first row of the
 * same language that lists them; NULL: none.  *any: the language is "any"
 * (folded stacks), or the stream is a merge (no row; ATTRIBUTE source_format
 * "merged": its inputs' languages are not told apart): every row's files. */
static const pb_format_row *lang_of(const pb_format_row *row, pb_str fmt, int *any)
{
    const pb_format_row *r;
    int f;
    *any = fmt.len == 6 && memcmp(fmt.ptr, "merged", 6) == 0;
    if (*any || !row || !row->language)
        return NULL;
    if (!strcmp(row->language, "any")) {
        *any = 1;
        return NULL;
    }
    for (f = 1; !row->source_names && (r = pb_format_get((pb_format)f)) != NULL; f++)
        if (r->language && r->source_names && !strcmp(r->language, row->language))
            return r;
    return row->source_names ? row : NULL;
}

/* the rows whose source files p embeds, one at a time: *f from 1; NULL at the end */
static const pb_format_row *next_lang_row(const pb_present *p, int *f)
{
    const pb_format_row *r;
    if (!p->lang_any)
        return (*f)++ == 1 ? p->lang : NULL;
    while ((r = pb_format_get((pb_format)(*f)++)) != NULL)
        if (r->source_names)
            return r;
    return NULL;
}

/* " ext " is a word of the space-separated list */
static int ext_listed(const char *list, const char *ext)
{
    size_t n = strlen(ext);
    const char *q = list;
    while ((q = strstr(q, ext)) != NULL) {
        if (q > list && q[-1] == '.' && (q[n] == ' ' || q[n] == '\0') && (q == list + 1 || q[-2] == ' '))
            return 1;
        q++;
    }
    return 0;
}

/* 1: the name's extension is one of the language's; -1: no extension, and
 * the language allows a "#!" script; 0: not source */
static int source_name(const pb_present *p, const char *path)
{
    const char *bn = strrchr(path, '/'), *dot;
    const pb_format_row *r;
    int f = 1, script = 0;
    bn = bn ? bn + 1 : path;
    dot = strrchr(bn, '.');
    while ((r = next_lang_row(p, &f)) != NULL) {
        if (dot && dot != bn && dot[1] && ext_listed(r->source_names, dot + 1))
            return 1;
        script |= r->source_shebang != NULL;
    }
    return (!dot || dot == bn) && script ? -1 : 0;
}

/* a "#!" first line that names the language's interpreter */
static int shebang_ok(const pb_present *p, const unsigned char *b, size_t n)
{
    const unsigned char *nl;
    const pb_format_row *r;
    size_t len;
    int f = 1;
    if (n < 2 || b[0] != '#' || b[1] != '!')
        return 0;
    nl = (const unsigned char *)memchr(b, '\n', n);
    len = nl ? (size_t)(nl - b) : n;
    while ((r = next_lang_row(p, &f)) != NULL)
        if (r->source_shebang && pb_memmem((const char *)b, len, r->source_shebang, strlen(r->source_shebang)))
            return 1;
    return 0;
}

/* path lies in dir (both resolved) */
static int path_under(const char *path, const char *dir)
{
    size_t dl = strlen(dir);
    if (dl == 1 && dir[0] == '/')
        return 1;
    return strncmp(path, dir, dl) == 0 && (path[dl] == '/' || path[dl] == '\0');
}

static int system_path(const char *real)
{
    return path_under(real, "/proc") || path_under(real, "/sys") || path_under(real, "/dev");
}

/* the name as given, made absolute (from the working directory) with "."
 * and ".." taken lexically, is under /proc, /sys or /dev: a name there is
 * refused even when its realpath leaves (/proc/self/cwd/..., /dev/stdin,
 * /proc/self/fd/N resolve to other files); 1 also when it cannot be told */
static int system_name(const char *path)
{
    char buf[8192], *w;
    const char *c = path;
    size_t n = 0, len;
    if (path[0] != '/') {
        if (!getcwd(buf, sizeof buf))
            return 1;
        n = strlen(buf);
    }
    while (*c) {
        while (*c == '/')
            c++;
        len = strcspn(c, "/");
        if (!len)
            break;
        if (len == 1 && c[0] == '.') {
        } else if (len == 2 && c[0] == '.' && c[1] == '.') {
            while (n > 0 && buf[n - 1] != '/')
                n--;
            if (n > 0)
                n--; /* the slash */
        } else {
            if (n + 1 + len + 1 > sizeof buf)
                return 1;
            buf[n++] = '/';
            memcpy(buf + n, c, len);
            n += len;
        }
        c += len;
    }
    buf[n] = '\0';
    w = n ? buf : (char *)"/";
    return system_path(w);
}

/* a pseudo file system whose files are not source (procfs mounted elsewhere, ...) */
static int pseudo_fs(int fd)
{
#ifdef __linux__
    struct statfs fs;
    static const unsigned long magic[] = {0x9fa0UL /* proc */,     0x62656572UL /* sysfs */,
                                          0x64626720UL /* debugfs */, 0x73636673UL /* securityfs */,
                                          0x74726163UL /* tracefs */, 0x27e0ebUL /* cgroup */,
                                          0x63677270UL /* cgroup2 */, 0x1cd1UL /* devpts */,
                                          0x62656570UL /* configfs */, 0xcafe4a11UL /* bpf */,
                                          0xde5e81e4UL /* efivarfs */};
    size_t i;
    if (fstatfs(fd, &fs) != 0)
        return 0;
    for (i = 0; i < sizeof magic / sizeof magic[0]; i++)
        if ((unsigned long)fs.f_type == magic[i])
            return 1;
#else
    (void)fd;
#endif
    return 0;
}

/* resolved allowed directories: the working directory and the input's (not
 * when either is "/"), and every source root (as the user gave them) */
static int resolve_roots(pb_present *p)
{
    size_t i;
    char *r;
    p->roots_resolved = 1;
    p->root_real = (char **)calloc(p->nroots + 2, sizeof *p->root_real);
    if (!p->root_real)
        return -1;
    for (i = 0; i < p->nroots; i++)
        p->root_real[i] = realpath(p->roots[i], NULL); /* NULL: no such directory */
    if ((r = realpath(".", NULL)) != NULL && strcmp(r, "/") != 0)
        p->root_real[p->nroots] = r;
    else
        free(r);
    r = p->base && *p->base ? realpath(p->base, NULL) : NULL;
    if (r && strcmp(r, "/") != 0)
        p->root_real[p->nroots + 1] = r;
    else
        free(r);
    return 0;
}

static int set_path(pb_present *p, const char *dir, const char *rel, size_t rlen)
{
    size_t dl = dir ? strlen(dir) : 0;
    size_t need = dl + 1 + rlen + 1;
    if (pb_grow((void **)&p->path, &p->path_cap, need, 1) < 0)
        return -1;
    if (dl) {
        memcpy(p->path, dir, dl);
        if (p->path[dl - 1] != '/')
            p->path[dl++] = '/';
    }
    memcpy(p->path + dl, rel, rlen);
    p->path[dl + rlen] = '\0';
    return 0;
}

/* why try_open left out a source file of the language outside the allowed
 * directories (compared by address: not warned about) */
static const char why_library[] = "a source file outside the allowed directories";

/* Open p->path by the policy.  scope: the resolved directory the candidate
 * was built in (a source root, the input's directory), which it must not
 * leave; -1: any allowed directory (the name as given).  Returns 1 with
 * *fd open and p->need_shebang set, 0 when there is no regular file, 2
 * when the policy refuses it (p->why says why), -1 out of memory. */
static int try_open(pb_present *p, long scope, struct stat *sb, int *fd)
{
    struct stat fsb;
    char *real;
    size_t i;
    int ok, kind;
    *fd = -1;
    p->need_shebang = 0;
    if (stat(p->path, sb) != 0 || !S_ISREG(sb->st_mode))
        return 0;
    if (!p->source_any && !p->roots_resolved && resolve_roots(p) < 0)
        return -1;
    if (!(real = realpath(p->path, NULL)))
        return errno == ENOMEM ? -1 : 0;
    /* never source, --source-any or not: /proc/self/environ holds the
     * converting process's secrets, a device blocks or never ends */
    if (system_path(real) || system_name(p->path)) {
        p->why = "in /proc, /sys or /dev";
        free(real);
        return 2;
    }
    if (p->source_any) { /* any directory, any name: only the checks above and below */
        kind = 1;
    } else {
        if (scope >= 0) {
            ok = p->root_real[scope] && path_under(real, p->root_real[scope]);
        } else {
            for (ok = 0, i = 0; i < p->nroots + 2 && !ok; i++)
                ok = p->root_real[i] && path_under(real, p->root_real[i]);
        }
        if (!ok) {
            /* a file of the profile's language elsewhere (its standard library,
             * site-packages, a system module) is left out quietly: nytprofhtml
             * reads it from disk where it lies */
            p->why = source_name(p, real) > 0 ? why_library : "outside the allowed directories";
            free(real);
            return 2;
        }
        if ((kind = source_name(p, real)) == 0) {
            p->why = "not a source file name";
            free(real);
            return 2;
        }
    }
    *fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    free(real);
    if (*fd < 0)
        return 0;
    if (fstat(*fd, &fsb) != 0 || !S_ISREG(fsb.st_mode) || fsb.st_dev != sb->st_dev || fsb.st_ino != sb->st_ino ||
        pseudo_fs(*fd)) {
        close(*fd);
        *fd = -1;
        p->why = "not a regular file on a disk file system";
        return 2;
    }
    p->need_shebang = kind < 0;
    return 1;
}

/* 1 with *fd open, 0 none found, 2 refused (p->why), -1 out of memory */
static int find_source(pb_present *p, const char *name, size_t len, struct stat *sb, int *fd)
{
    const char *rel = name;
    size_t rlen = len, i;
    int rc, refused = 0;
    const char *why = NULL;
#define TRY(scope)                                  \
    do {                                            \
        rc = try_open(p, (scope), sb, fd);          \
        if (rc == 1 || rc < 0)                      \
            return rc;                              \
        if (rc == 2 && !refused++)                  \
            why = p->why;                           \
    } while (0)
    if (set_path(p, NULL, name, len) < 0)
        return -1;
    TRY(-1);
    for (i = 0; i < p->nstrip; i++) {
        size_t pl = strlen(p->strip[i]);
        if (pl && pl <= len && memcmp(name, p->strip[i], pl) == 0) {
            rel = name + pl;
            rlen = len - pl;
            break;
        }
    }
    while (rlen && *rel == '/') {
        rel++;
        rlen--;
    }
    if (!rlen)
        goto none;
    for (i = 0; i < p->nroots; i++) {
        if (set_path(p, p->roots[i], rel, rlen) < 0)
            return -1;
        TRY((long)i);
    }
    if (p->base && *p->base) {
        /* beside the input: the relative name, else the file's base name */
        const char *bn = rel;
        size_t bl;
        if (name[0] == '/') { /* name is not NUL-terminated: the last '/' within len */
            size_t k = len;
            while (k && name[k - 1] != '/')
                k--;
            bn = name + k;
        }
        bl = (size_t)(name + len - bn);
        if (bl) {
            if (set_path(p, p->base, bn, bl) < 0)
                return -1;
            /* confined to the input's directory (p->root_real[nroots + 1]),
             * or, when that is "/", to nothing implicit */
            TRY((long)(p->nroots + 1));
        }
    }
none:
    p->why = why;
    return refused ? 2 : 0;
#undef TRY
}

/* the whole file into p->sbuf, at most PB_SOURCE_MAX_BYTES, counted as
 * bytes arrive: 0, 1 too large, -1 a read error (errno), -2 out of memory */
static int read_source(pb_present *p, int fd, size_t *n)
{
    *n = 0;
    for (;;) {
        ssize_t got;
        if (*n == p->sbuf_cap) {
            /* doubling, but never past the cap */
            size_t want = p->sbuf_cap < 65536 ? 65536 : p->sbuf_cap * 2;
            unsigned char *nb;
            if (want > PB_SOURCE_MAX_BYTES)
                want = PB_SOURCE_MAX_BYTES;
            if (want <= *n) {
                /* full: one more read says whether the file goes on */
                unsigned char more[64];
                while ((got = read(fd, more, sizeof more)) < 0 && errno == EINTR)
                    ;
                return got < 0 ? -1 : got > 0;
            }
            if (!(nb = (unsigned char *)realloc(p->sbuf, want)))
                return -2;
            p->sbuf = nb;
            p->sbuf_cap = want;
        }
        got = read(fd, p->sbuf + *n, p->sbuf_cap - *n);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (got == 0)
            return 0;
        *n += (size_t)got;
    }
}

/* a name from the profile into a message: control bytes as \xHH, at most 120 bytes */
static void present_put_name(char *dst, size_t cap, const char *s, size_t n)
{
    /* at most 120 bytes of the name, control bytes escaped by the one
     * escaper of every message (pb_escape_controls) */
    char raw[121];
    size_t k = n < 120 ? n : 120, w;
    memcpy(raw, s, k);
    raw[k] = '\0';
    pb_escape_controls(raw, dst, cap > 3 ? cap - 3 : cap);
    w = strlen(dst);
    if (k < n && w + 4 <= cap)
        memcpy(dst + w, "...", 4);
}

static void note_not_embedded(pb_present *p, const char *nm, size_t len, const char *why)
{
    if (why == why_library) {
        p->library++;
        return;
    }
    if (why) {
        if (p->refused < PB_MISSING_LISTED) {
            char esc[sizeof p->listed[0]];
            present_put_name(esc, sizeof esc - 2, nm, len);
            snprintf(p->refused_listed[p->refused], sizeof p->refused_listed[0], "'%s' (%s)", esc, why);
        }
        p->refused++;
        return;
    }
    if (p->missing < PB_MISSING_LISTED)
        present_put_name(p->listed[p->missing], sizeof p->listed[0], nm, len);
    p->missing++;
    if (!len || nm[0] != '/')
        p->missing_rel++;
}

static int fwd(pb_present *p, const pb_chunk *c)
{
    return pb_emit(p->out, c);
}

static int pe_scan_line(pb_present *p, uint32_t fid, uint32_t line, const char *s, size_t len);
static void pe_scan_end(pb_present *p, uint32_t fid, uint32_t lines);
/* a NEW_FID sent on: its file name mapped as sub names are (a file name such
 * as "<frozen runpy>" is printed into nytprofhtml's pages unescaped too) */
static int emit_fid(pb_present *p, const pb_chunk *c)
{
    pb_chunk nc = *c;
    if (present_map_name(p, 0, &nc.s[0]) < 0) {
        pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while mapping names");
        return -1;
    }
    return fwd(p, &nc);
}

/* NEW_FID of a file whose source may be embedded */
/* Over 80 lines, kept whole: one NEW_FID's source lookup, embedding and the bounds on the buffer it
 * holds, in the order the decisions are taken. */
static int present_new_fid(pb_present *p, const pb_chunk *c)
{
    pb_chunk nc = *c;
    uint32_t fid = c->u[0], line = 0;
    const pb_str *nm = &c->s[0];
    struct stat sb;
    int fd = -1, rc, found;
    size_t n = 0, at;
    const char *why;
    if (p->no_source || (c->u[3] & (PB_FID_SAVE_SRC | PB_FID_IS_FAKE | PB_FID_IS_EVAL)) || nm->len == 0 ||
        memchr(nm->ptr, '\0', nm->len) || nm->ptr[0] == '(' || nm->ptr[0] == '<' ||
        (nm->len == 2 && memcmp(nm->ptr, "-e", 2) == 0))
        return emit_fid(p, c);
    if (fid > (1u << 24)) /* the writer refuses such a fid anyway */
        return emit_fid(p, c);
    if (pb_grow_zero((void **)&p->done, &p->done_cap, (size_t)fid + 1, 1) < 0)
        goto nomem;
    if (p->done[fid] == 2) /* source sent already (a re-sent fid) */
        return emit_fid(p, c);
    /* a file we looked for and do not have (not found, or kept out by the
     * policy): IS_FAKE, so that nytprofhtml says "no source code available"
     * on its page instead of warning "Unable to open" -- and never opens by
     * itself a file the policy refused */
    nc.u[3] |= PB_FID_IS_FAKE;
    if (p->done[fid] == 1) /* looked up already: not found or refused */
        return emit_fid(p, &nc);
    p->done[fid] = 1;
    found = find_source(p, nm->ptr, nm->len, &sb, &fd);
    if (found < 0)
        goto nomem;
    why = found == 2 ? p->why : NULL;
    if (found == 1) {
        rc = read_source(p, fd, &n);
        if (rc == -1) {
            char msg[256], esc[130];
            int e = errno;
            present_put_name(esc, sizeof esc, nm->ptr, nm->len);
            snprintf(msg, sizeof msg, "convert: warning: cannot read the source of '%s': %s (not embedded)", esc,
                     strerror(e));
            if (p->out->warn)
                p->out->warn(p->out, msg);
            why = "a read error";
        }
        close(fd);
        if (rc == -2)
            goto nomem;
        if (rc == 1)
            why = "larger than 64 MiB";
        else if (rc == 0 && p->need_shebang && !shebang_ok(p, p->sbuf, n))
            why = "not a source file name";
        if (rc != 0 || why)
            found = 2;
    }
    if (p->sbuf_cap > ((size_t)4 << 20) && (found != 1 || n == 0)) {
        free(p->sbuf); /* a large file's buffer is not kept for the next */
        p->sbuf = NULL;
        p->sbuf_cap = 0;
    }
    if (found != 1) {
        note_not_embedded(p, nm->ptr, nm->len, found == 2 ? (why ? why : "refused") : NULL);
        return emit_fid(p, &nc);
    }
    p->done[fid] = 2;
    p->embedded++;
    nc.u[3] &= ~(uint32_t)PB_FID_IS_FAKE;
    nc.u[3] |= PB_FID_HAS_SRC | PB_FID_SAVE_SRC;
    nc.u[4] = (uint32_t)n; /* the bytes read (at most 64 MiB) */
    nc.u[5] = sb.st_mtime > 0 && (uint64_t)sb.st_mtime <= UINT32_MAX ? (uint32_t)sb.st_mtime : 0;
    if ((rc = emit_fid(p, &nc)) != 0)
        return rc;
    for (at = 0; at < n && line < p->max_line;) {
        const unsigned char *nl = (const unsigned char *)memchr(p->sbuf + at, '\n', n - at);
        size_t end = nl ? (size_t)(nl - p->sbuf) + 1 : n;
        pb_chunk sc;
        pb_chunk_src_line(&sc, fid, ++line, pb_str_make((const char *)p->sbuf + at, end - at, 0));
        if ((rc = fwd(p, &sc)) != 0)
            return rc;
        if (p->pyn && pe_scan_line(p, fid, line, (const char *)p->sbuf + at, end - at) < 0)
            goto nomem;
        at = end;
    }
    if (p->pyn)
        pe_scan_end(p, fid, line);
    if (p->sbuf_cap > ((size_t)4 << 20)) {
        free(p->sbuf);
        p->sbuf = NULL;
        p->sbuf_cap = 0;
    }
    return 0;
nomem:
    pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while embedding source");
    return -1;
}


/* ---- PB_NO_SUB_LINES: where a Python sub starts ------------------------------
 * A Python tracer that names subs (co_name) but never says where they are defined
 * (its row's PB_NO_SUB_LINES): a sub with lines 0-0 is an xsub to nytprofhtml.
 * While such a file's
 * source is embedded, its `def` / `async def` / `class` headers are noted:
 * first line = the header's, or its first decorator's (CPython's
 * co_firstlineno); last line = the last line with code before one indented no
 * deeper (blank and comment lines never end a block).  A SUB_INFO with lines
 * 0-0 whose name (after the last "::") is defined once gets that fid and those
 * lines; <module> gets the whole program file (the first file scanned).
 * Names defined more than once (two classes' methods: the file has co_name
 * only), comprehensions and lambdas, and code outside the files (runpy's
 * _run_code) keep 0-0. */
static uint32_t h_def_id(const void *ctx, uint32_t i)
{
    const pb_present *p = (const pb_present *)ctx;
    return pb_hash_bytes(p->defs[i].name, p->defs[i].len);
}

static uint32_t pe_def_find(const pb_present *p, const char *name, size_t len, size_t *slot)
{
    uint32_t i;
    size_t k;
    for (k = pb_index_first(&p->defix, pb_hash_bytes(name, len)); (i = pb_index_at(&p->defix, k)) != PB_INDEX_NONE;
         k = pb_index_next(&p->defix, k))
        if (p->defs[i].len == len && memcmp(p->defs[i].name, name, len) == 0)
            break;
    if (slot)
        *slot = k;
    return i;
}

static void pe_close(pb_present *p, uint32_t indent_le)
{
    while (p->nopen && p->open[p->nopen - 1].indent >= indent_le) {
        struct pe_def *d = &p->defs[p->open[--p->nopen].def];
        if (d->count == 1)
            d->last = p->last_code;
    }
}

/* 0, or -1 out of memory */
static int pe_scan_line(pb_present *p, uint32_t fid, uint32_t line, const char *s, size_t len)
{
    size_t i = 0, n0, k;
    uint32_t indent = 0, id;
    int is_class = 0;
    if (line == 1) {
        p->nopen = 0;
        p->last_code = p->deco_line = 0;
    }
    for (; i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f'); i++)
        indent = s[i] == '\t' ? (indent / 8 + 1) * 8 : s[i] == ' ' ? indent + 1 : 0;
    if (i == len || s[i] == '\n' || s[i] == '\r' || s[i] == '#')
        return 0; /* blank or a comment */
    pe_close(p, indent);
    if (s[i] == '@') {
        if (!p->deco_line)
            p->deco_line = line;
        p->last_code = line;
        return 0;
    }
    if (len - i > 6 && memcmp(s + i, "async", 5) == 0 && (s[i + 5] == ' ' || s[i + 5] == '\t'))
        for (i += 5; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
            ;
    if (len - i > 4 && memcmp(s + i, "def", 3) == 0 && (s[i + 3] == ' ' || s[i + 3] == '\t'))
        i += 3;
    else if (len - i > 6 && memcmp(s + i, "class", 5) == 0 && (s[i + 5] == ' ' || s[i + 5] == '\t'))
        i += 5, is_class = 1;
    else
        i = len;
    for (; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
        ;
    n0 = i;
    for (; i < len && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                       (i > n0 && s[i] >= '0' && s[i] <= '9') || (unsigned char)s[i] >= 0x80);
         i++)
        ;
    if (i > n0 && i < len && (s[i] == '(' || s[i] == ' ' || s[i] == '\t' || (is_class && s[i] == ':'))) {
        struct pe_def *d;
        if (pb_index_reserve(&p->defix, p->ndefs, h_def_id, p) < 0)
            return -1;
        id = pe_def_find(p, s + n0, i - n0, &k);
        if (id == PB_INDEX_NONE) {
            if (pb_grow((void **)&p->defs, &p->cdefs, p->ndefs + 1, sizeof *p->defs) < 0)
                return -1;
            d = &p->defs[p->ndefs];
            memset(d, 0, sizeof *d);
            if (!(d->name = (char *)malloc(i - n0 + 1)))
                return -1;
            memcpy(d->name, s + n0, i - n0);
            d->name[i - n0] = '\0';
            d->len = i - n0;
            id = (uint32_t)p->ndefs++;
            pb_index_set(&p->defix, k, id);
        }
        d = &p->defs[id];
        if (++d->count == 1) {
            d->fid = fid;
            d->first = p->deco_line ? p->deco_line : line;
            d->last = line;
        }
        if (pb_grow((void **)&p->open, &p->copen, p->nopen + 1, sizeof *p->open) < 0)
            return -1;
        p->open[p->nopen].def = id;
        p->open[p->nopen++].indent = indent;
    }
    p->deco_line = 0;
    p->last_code = line;
    return 0;
}

static void pe_scan_end(pb_present *p, uint32_t fid, uint32_t lines)
{
    pe_close(p, 0);
    if (!p->prog_fid && lines) {
        p->prog_fid = fid;
        p->prog_lines = lines;
    }
}

/* a SUB_INFO without lines (PB_NO_SUB_LINES): those of its definition, if known */
static void pe_place(pb_present *p, pb_chunk *c)
{
    const char *nm = c->s[0].ptr ? c->s[0].ptr : "";
    size_t len = c->s[0].len, j;
    uint32_t id;
    if (c->u[1] || c->u[2])
        return;
    for (j = len; j >= 2; j--)
        if (nm[j - 1] == ':' && nm[j - 2] == ':')
            break;
    if (j >= 2) {
        nm += j;
        len -= j;
    }
    if (len == 8 && memcmp(nm, "<module>", 8) == 0) {
        if (p->prog_fid) {
            c->u[0] = p->prog_fid;
            c->u[1] = 1;
            c->u[2] = p->prog_lines;
        }
        return;
    }
    if (!p->ndefs || (id = pe_def_find(p, nm, len, NULL)) == PB_INDEX_NONE || p->defs[id].count != 1)
        return;
    c->u[0] = p->defs[id].fid;
    c->u[1] = p->defs[id].first;
    c->u[2] = p->defs[id].last;
}

/* ---- call stacks from call edges ---------------------------------------------
 * A stream with SUB_CALLERS but no SUB_RETURN (a Python tracer: it records caller ->
 * callee pairs, not stacks) gets call events rebuilt from its call graph, as
 * gprof does: from each root (a sub no other sub calls), a callee appears
 * under every caller with the share of its time that came through that
 * call; a sub already on the stack is recursion and stays folded into its
 * outer frame.  A sub's own weight is its exclusive time (the sum over its
 * callers) times its share; when those add up to more than the run lasted,
 * all are scaled down to fit it.  Not for a call graph (ATTRIBUTE call_graph:
 * PB_YIELDS_GRAPH): a stack output refuses it, and nytprofhtml draws no
 * flame graph of stacks it never had. */
#define PE_MAX_DEPTH 256
#define PE_MAX_NODES 50000

static uint32_t h_edge(uint32_t caller, uint32_t callee) { return pb_mix64(((uint64_t)caller << 32) | callee); }
static uint32_t h_sub_id(const void *ctx, uint32_t i)
{
    const pb_present *p = (const pb_present *)ctx;
    return pb_hash_bytes(p->sub[i], p->sub_len[i]);
}
static uint32_t h_edge_id(const void *ctx, uint32_t i)
{
    const pb_present *p = (const pb_present *)ctx;
    return h_edge(p->edges[i].caller, p->edges[i].callee);
}

static int sub_id(pb_present *p, pb_str nm, uint32_t *id)
{
    uint32_t h = pb_hash_bytes(nm.ptr ? nm.ptr : "", nm.len), i;
    size_t j;
    if (pb_index_reserve(&p->subix, p->nsubs, h_sub_id, p) < 0)
        return -1;
    for (j = pb_index_first(&p->subix, h); (i = pb_index_at(&p->subix, j)) != PB_INDEX_NONE;
         j = pb_index_next(&p->subix, j)) {
        if (p->sub_len[i] == nm.len && memcmp(p->sub[i], nm.ptr, nm.len) == 0) {
            *id = i;
            return 0;
        }
    }
    if (pb_grow((void **)&p->sub, &p->csubs, p->nsubs + 1, sizeof *p->sub) < 0 ||
        pb_grow((void **)&p->sub_len, &p->csub_len, p->nsubs + 1, sizeof *p->sub_len) < 0)
        return -1;
    p->sub[p->nsubs] = (char *)malloc(nm.len + 1);
    if (!p->sub[p->nsubs])
        return -1;
    memcpy(p->sub[p->nsubs], nm.ptr, nm.len);
    p->sub[p->nsubs][nm.len] = '\0';
    p->sub_len[p->nsubs] = nm.len;
    pb_index_set(&p->subix, j, (uint32_t)p->nsubs);
    *id = (uint32_t)p->nsubs++;
    return 0;
}

static int record_edge(pb_present *p, const pb_chunk *c)
{
    uint32_t callee, caller, h, i;
    size_t j;
    struct pe_edge *e;
    if (c->s[1].len == 0 && c->u[0] == 0)
        return 0; /* NYTProf's "is an xsub" marker */
    if (sub_id(p, c->s[0], &callee) < 0 || sub_id(p, c->s[1], &caller) < 0)
        return -1;
    h = h_edge(caller, callee);
    if (pb_index_reserve(&p->edgeix, p->nedges, h_edge_id, p) < 0)
        return -1;
    for (j = pb_index_first(&p->edgeix, h); (i = pb_index_at(&p->edgeix, j)) != PB_INDEX_NONE;
         j = pb_index_next(&p->edgeix, j)) {
        e = &p->edges[i];
        if (e->caller == caller && e->callee == callee)
            goto add;
    }
    if (pb_grow((void **)&p->edges, &p->cedges, p->nedges + 1, sizeof *p->edges) < 0)
        return -1;
    e = &p->edges[p->nedges];
    memset(e, 0, sizeof *e);
    e->caller = caller;
    e->callee = callee;
    pb_index_set(&p->edgeix, j, (uint32_t)p->nedges++);
add:
    e->incl += c->n[0] + c->n[2]; /* recursive time counts as the call's */
    e->excl += c->n[1];
    e->count += c->u[2];
    return 0;
}

static pb_str pe_name(void *ctx, uint32_t sub)
{
    pb_present *p = (pb_present *)ctx;
    return pb_str_make(p->sub[sub], p->sub_len[sub], 0);
}

static pb_status pe_walk(pb_present *p, uint32_t s, double share, size_t depth)
{
    uint32_t k;
    pb_status st;
    double w;
    size_t i;
    p->stack[depth] = s;
    w = p->own[s] * share * p->ticks_per_sec;
    if (p->dry)
        p->total += w;
    else if ((st = pb_callev_stack(&p->cev, p->stack, depth + 1,
                                   w > 0 && w * p->scale < 1.8e19 ? (uint64_t)(w * p->scale + 0.5) : 0)) != PB_OK)
        return st;
    if (++p->visited >= PE_MAX_NODES || depth + 1 >= PE_MAX_DEPTH)
        return PB_OK;
    for (k = p->out_first[s]; k < p->out_first[s + 1]; k++) {
        const struct pe_edge *e = &p->edges[p->out_edge[k]];
        double cs;
        for (i = 0; i <= depth && p->stack[i] != e->callee; i++)
            ;
        if (i <= depth)
            continue; /* recursion: folded into the outer frame */
        if (p->in_incl[e->callee] > 0)
            cs = share * (e->incl / p->in_incl[e->callee]);
        else
            cs = p->in_count[e->callee] ? share * ((double)e->count / (double)p->in_count[e->callee]) : 0;
        if (cs <= 1e-12)
            continue;
        if ((st = pe_walk(p, e->callee, cs > 1 ? 1 : cs, depth + 1)) != PB_OK)
            return st;
        if (p->visited >= PE_MAX_NODES)
            break;
    }
    return PB_OK;
}

static pb_status edge_stacks(pb_present *p)
{
    size_t n = p->nsubs, i;
    pb_status st = PB_OK;
    uint32_t s;
    p->in_incl = (double *)calloc(n + 1, sizeof *p->in_incl);
    p->own = (double *)calloc(n + 1, sizeof *p->own);
    p->in_count = (uint64_t *)calloc(n + 1, sizeof *p->in_count);
    p->out_first = (uint32_t *)calloc(n + 2, sizeof *p->out_first);
    p->out_edge = (uint32_t *)calloc(p->nedges + 1, sizeof *p->out_edge);
    p->stack = (uint32_t *)calloc(PE_MAX_DEPTH + 1, sizeof *p->stack);
    if (!p->in_incl || !p->own || !p->in_count || !p->out_first || !p->out_edge || !p->stack)
        return pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while rebuilding call stacks");
    for (i = 0; i < p->nedges; i++) {
        const struct pe_edge *e = &p->edges[i];
        p->own[e->callee] += e->excl;
        if (e->caller != e->callee) {
            p->in_incl[e->callee] += e->incl;
            p->in_count[e->callee] += e->count;
        }
        p->out_first[e->caller + 1]++;
    }
    for (i = 0; i < n; i++)
        p->out_first[i + 1] += p->out_first[i];
    {
        uint32_t *fill = (uint32_t *)malloc((n + 1) * sizeof *fill);
        if (!fill)
            return pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while rebuilding call stacks");
        memcpy(fill, p->out_first, (n + 1) * sizeof *fill);
        for (i = 0; i < p->nedges; i++)
            p->out_edge[fill[p->edges[i].caller]++] = (uint32_t)i;
        free(fill);
    }
    pb_callev_init(&p->cev, p->out, p->err, 1.0, pe_name, p);
    /* the file's own times may add up to more than the run lasted (a tracer
     * that times each caller -> callee pair on its own): then the rebuilt stacks
     * are scaled to fit the run, so that the flame graph's total holds */
    p->scale = 1.0;
    for (p->dry = 1; p->dry >= 0 && st == PB_OK; p->dry--) {
        p->visited = 0;
        for (s = 0; s < n && st == PB_OK && p->visited < PE_MAX_NODES; s++) {
            if (p->in_count[s] || p->in_incl[s] > 0)
                continue; /* called by another sub: not a root */
            if ((st = pe_walk(p, s, 1.0, 0)) == PB_OK && !p->dry)
                st = pb_callev_end(&p->cev);
        }
        if (p->dry) {
            double run = (p->t_end - p->t_start) * p->ticks_per_sec;
            if (run > 0 && p->total > run)
                p->scale = run / p->total * 0.999;
        }
    }
    return st;
}

/* Over 80 lines, kept whole: the filter's first look at each chunk (facts it notes), then the
 * switch over the chunks it rewrites. */
static int present_chunk(pb_sink *self, const pb_chunk *c)
{
    pb_present *p = (pb_present *)self->ctx;
    pb_chunk nc;
    if (c->tag == PB_T_TIME_LINE)
        return fwd(p, c); /* the bulk of a converted profile: nothing below looks at it */
    if (c->tag == PB_T_COMMENT) {
        /* a format's banner comment would make our output pass for a file
         * of that format (its row's banner): say who wrote it and who
         * converted it */
        int f;
        for (f = 1; f < PB_FMT_COUNT; f++) {
            const pb_format_row *row = pb_format_get((pb_format)f);
            size_t bl = row->banner ? strlen(row->banner) : 0;
            const char *at = bl ? pb_memmem(c->s[0].ptr, c->s[0].len, row->banner, bl) : NULL;
            if (at) {
                size_t pre = (size_t)(at - c->s[0].ptr), rest = c->s[0].len - pre - bl;
                size_t n = pre + 48 + strlen(row->title) + strlen(PB_VERSION_STRING) + rest;
                if (pb_grow((void **)&p->name[0], &p->name_cap[0], n + 1, 1) < 0)
                    goto nomem;
                n = (size_t)snprintf(p->name[0], n + 1, "%.*sWritten by %s, converted by Devel::ProfileBridge %s%.*s",
                                     (int)pre, c->s[0].ptr, row->title, PB_VERSION_STRING, (int)rest, at + bl);
                nc = *c;
                nc.s[0] = pb_str_make(p->name[0], n, c->s[0].utf8);
                return fwd(p, &nc);
            }
        }
    }
    if (c->tag == PB_T_PID_START && (p->t_start == 0 || c->n[0] < p->t_start))
        p->t_start = c->n[0];
    if (c->tag == PB_T_PID_START)
        p->saw_pid = 1;
    if (c->tag == PB_T_NEW_FID)
        p->saw_fid = 1;
    if (c->tag == PB_T_ATTRIBUTE && c->s[0].len == 8 && memcmp(c->s[0].ptr, "basetime", 8) == 0) {
        char b[32];
        snprintf(b, sizeof b, "%.*s", (int)(c->s[1].len < 31 ? c->s[1].len : 31), c->s[1].ptr);
        p->basetime = strtod(b, NULL);
    }
    if (c->tag == PB_T_ATTRIBUTE && c->s[0].len == 10 && memcmp(c->s[0].ptr, "call_graph", 10) == 0)
        p->call_graph = 1;
    if (c->tag == PB_T_PID_END && c->n[0] > p->t_end)
        p->t_end = c->n[0];
    if (c->tag == PB_T_OPTION && c->s[0].len == 5 && memcmp(c->s[0].ptr, "calls", 5) == 0)
        p->calls_option = c->s[1].len > 0 && c->s[1].ptr[0] != '0';
    if (c->tag == PB_T_ATTRIBUTE && c->s[0].len == 13 && memcmp(c->s[0].ptr, "ticks_per_sec", 13) == 0) {
        char b[32];
        snprintf(b, sizeof b, "%.*s", (int)(c->s[1].len < 31 ? c->s[1].len : 31), c->s[1].ptr);
        p->ticks_per_sec = strtod(b, NULL);
    }
    if (!p->active) {
        if (c->tag == PB_T_ATTRIBUTE && c->s[0].len == 13 && memcmp(c->s[0].ptr, "source_format", 13) == 0) {
            p->active = 1;
            /* the producer's row says (format_row.h) */
            p->pyn = self->row && (self->row->yields & PB_NO_SUB_LINES);
            p->lang = lang_of(self->row, c->s[1], &p->lang_any);
        }
        return fwd(p, c);
    }
    switch (c->tag) {
    case PB_T_NEW_FID:
        nc = *c;
        nc.s[0].utf8 = 0; /* bytes, as NYTProf writes file names */
        if (nc.s[0].len == 0)
            nc.u[3] |= PB_FID_IS_FAKE; /* no file at all (XS frames): nothing to open */
        return present_new_fid(p, &nc);
    case PB_T_SUB_RETURN:
        p->saw_return = 1;
        /* fall through */
    case PB_T_SUB_INFO:
        nc = *c;
        if (p->pyn && c->tag == PB_T_SUB_INFO)
            pe_place(p, &nc);
        if (present_map_name(p, 0, &nc.s[0]) < 0)
            goto nomem;
        return fwd(p, &nc);
    case PB_T_SUB_CALLERS:
        nc = *c;
        if (present_map_name(p, 0, &nc.s[0]) < 0 || present_map_name(p, 1, &nc.s[1]) < 0)
            goto nomem;
        if (!p->saw_return && record_edge(p, &nc) < 0)
            goto nomem;
        return fwd(p, &nc);
    default:
        return fwd(p, c);
    }
nomem:
    pb_fail(p->err, PB_ERR_LIMIT, 0, "out of memory while mapping names");
    return -1;
}

static void present_warn(pb_sink *self, const char *msg)
{
    pb_present *p = (pb_present *)self->ctx;
    if (p->out->warn)
        p->out->warn(p->out, msg);
}

static void present_cleanup(void *ctx) { pb_present_free((pb_present *)ctx); }

pb_present *pb_present_new(pb_sink *out, const pb_options *opt, pb_error *err)
{
    pb_present *p = (pb_present *)pb_new_zeroed(sizeof *p, err);
    if (!p)
        return NULL;
    p->out = out;
    p->err = err;
    p->max_line = PB_DEFAULT_MAX_LINE;
    p->calls_option = -1;
    if (opt) {
        p->no_source = opt->no_source;
        p->source_any = opt->source_any;
        p->roots = opt->source_roots;
        p->nroots = opt->source_roots ? opt->n_source_roots : 0;
        p->strip = opt->strip_prefixes;
        p->nstrip = opt->strip_prefixes ? opt->n_strip_prefixes : 0;
        p->base = opt->source_base;
        if (opt->max_line)
            p->max_line = opt->max_line;
    }
    p->sink.chunk = present_chunk;
    p->sink.warn = present_warn;
    p->sink.ctx = p;
    p->sink.cleanups = out->cleanups;
    pb_sink_defer(out, present_cleanup, p);
    return p;
}

pb_sink *pb_present_sink(pb_present *p) { return &p->sink; }

void pb_present_counts(const pb_present *p, uint32_t *embedded, uint32_t *missing)
{
    *embedded = p->embedded;
    *missing = p->missing;
}

/* one warning: head, the first PB_MISSING_LISTED names (each row of `rows`,
 * `stride` bytes apart, quoted as `quote` says), " and N more", tail */
static void list_warning(pb_present *p, const char *head, uint32_t n, const char *rows, size_t stride, int quote,
                         const char *tail)
{
    char msg[PB_MISSING_LISTED * 204 + 512];
    size_t w;
    uint32_t i;
    w = (size_t)snprintf(msg, sizeof msg, "%s", head);
    for (i = 0; i < n && i < PB_MISSING_LISTED && w < sizeof msg; i++)
        w += (size_t)snprintf(msg + w, sizeof msg - w, quote ? "%s'%s'" : "%s%s", i ? ", " : "", rows + i * stride);
    if (w < sizeof msg && n > PB_MISSING_LISTED)
        w += (size_t)snprintf(msg + w, sizeof msg - w, " and %u more", n - PB_MISSING_LISTED);
    if (w < sizeof msg)
        snprintf(msg + w, sizeof msg - w, "%s", tail);
    p->out->warn(p->out, msg);
}

static void missing_warning(pb_present *p)
{
    char head[160];
    if (!p->missing || !p->out->warn)
        return;
    /* the program's source was found and embedded, and what is missing is
     * named by an absolute path of the recording machine (the interpreter's
     * library, a system header there): not worth a warning, nytprofhtml
     * shows those files as it shows a Perl profile's missing ones */
    if (p->embedded && !p->missing_rel)
        return;
    snprintf(head, sizeof head, "convert: warning: the source of %u of %u files was not found (not embedded): ",
             p->missing, p->missing + p->embedded + p->refused + p->library);
    list_warning(p, head, p->missing, p->listed[0], sizeof p->listed[0], 1,
                 "; look in more places with --source-root DIR or --strip-prefix PREFIX");
}

/* the files the source policy kept out (present.h, "Source") */
static void refused_warning(pb_present *p)
{
    char head[160], tail[384], what[128];
    const char *names[16];
    const pb_format_row *r;
    int f = 1, n = 0;
    size_t len = 0;
    if (!p->refused || !p->out->warn)
        return;
    snprintf(head, sizeof head, "convert: warning: the source of %u of %u files was not embedded%s: ", p->refused,
             p->refused + p->missing + p->embedded + p->library, p->source_any ? "" : " by the source policy");
    tail[0] = '\0';
    /* what the rows call their files: "Go", "Python, C/C++, ... or Go" */
    what[0] = '\0';
    while ((r = next_lang_row(p, &f)) != NULL && n < 16) {
        int k, dup = 0;
        for (k = 0; k < n && !dup; k++)
            dup = !strcmp(names[k], r->source_what ? r->source_what : "");
        if (!dup && r->source_what)
            names[n++] = r->source_what;
    }
    for (f = 0; f < n && len < sizeof what; f++)
        len += (size_t)snprintf(what + len, sizeof what - len, "%s%s", !f ? "" : f == n - 1 ? " or " : ", ", names[f]);
    if (p->source_any)
        snprintf(tail, sizeof tail, "; even --source-any embeds only regular files on a disk file system, never "
                                    "under /proc, /sys or /dev");
    else
        snprintf(tail, sizeof tail,
                 "; only %s source files under the input's directory, the working directory or a --source-root are "
                 "embedded (--source-any: any file a trusted profile names)",
                 n ? what : "this format's");
    list_warning(p, head, p->refused, p->refused_listed[0], sizeof p->refused_listed[0], 0, tail);
}

pb_status pb_present_finish(pb_present *p)
{
    pb_status st;
    pb_chunk c;
    if (p->active && !p->saw_return) {
        /* call events from call edges (SUB_CALLERS, no SUB_RETURN), or no claim to have them */
        int have = p->nedges > 0 && p->ticks_per_sec > 0 && !p->call_graph; /* graphs are not stacks */
        if (have && (st = edge_stacks(p)) != PB_OK)
            return st;
        have = have && p->cev.emitted > 0;
        if (have ? p->calls_option != 1 : p->calls_option == 1) {
            pb_chunk_option(&c, pb_str_c("calls"), pb_str_c(have ? "1" : "0"));
            if (pb_emit(p->out, &c))
                return pb_fail(p->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
        }
    }
    if (p->active && !p->saw_fid) {
        /* a profile with nothing in it (no sample, no block): nytprofhtml
         * needs one file and one process to draw its empty report */
        pb_chunk_new_fid(&c, 1, 0, 0, PB_FID_IS_FAKE, 0, 0, pb_str_c("(empty profile)"));
        if (pb_emit(p->out, &c))
            return pb_fail(p->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
    }
    if (p->active && !p->saw_pid) {
        pb_chunk_pid_start(&c, 1, 0, p->basetime);
        if (pb_emit(p->out, &c))
            return pb_fail(p->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
        pb_chunk_pid_end(&c, 1, p->basetime);
        if (pb_emit(p->out, &c))
            return pb_fail(p->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
    }
    missing_warning(p);
    refused_warning(p);
    return PB_OK;
}

void pb_present_free(pb_present *p)
{
    if (!p)
        return;
    pb_sink_undefer(p->out, p);
    PB_FREE_ALL(p->name[0], p->name[1], p->path, p->sbuf, p->done);
    if (p->root_real) {
        size_t i;
        for (i = 0; i < p->nroots + 2; i++)
            free(p->root_real[i]);
        free(p->root_real);
    }
    {
        size_t i;
        for (i = 0; i < p->nsubs; i++)
            free(p->sub[i]);
    }
    PB_FREE_ALL(p->sub, p->sub_len, p->edges, p->in_incl, p->own, p->in_count, p->out_first, p->out_edge,
                p->stack);
    pb_index_free(&p->subix);
    pb_index_free(&p->edgeix);
    {
        size_t i;
        for (i = 0; i < p->ndefs; i++)
            free(p->defs[i].name);
    }
    PB_FREE_ALL(p->defs, p->open);
    pb_index_free(&p->defix);
    pb_callev_free(&p->cev);
    free(p);
}
