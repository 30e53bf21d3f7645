/* output.c - temp file, rename, in-place devices, symlinks, signal cleanup.
 * See output.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include "output.h"
#include "util.h"

#define MAX_LINKS 40
#define TEMP_BASE_MAX 64

/* ---- temps to remove when a signal kills the process -----------------------
 * A fixed table the handler can walk without locks or malloc: slot state
 * 0 free, 1 being changed, 2 live.  Claimed with a compare-and-swap. */
#define REG_SLOTS 128
#define REG_PATH 4096
typedef struct {
    volatile sig_atomic_t state;
    volatile sig_atomic_t nfiles; /* a directory: members t0 .. t<nfiles-1> */
    pid_t pid;
    int is_dir;
    char path[REG_PATH];
} reg_slot;
static reg_slot reg[REG_SLOTS];
static volatile sig_atomic_t handlers_done;

static void put_member(char *dst, const char *dir, size_t i)
{
    /* "<dir>/t<i>" with only async-signal-safe code */
    char digits[24];
    size_t n = 0, dl = strlen(dir);
    memcpy(dst, dir, dl);
    dst[dl++] = '/';
    dst[dl++] = 't';
    do {
        digits[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    while (n)
        dst[dl++] = digits[--n];
    dst[dl] = '\0';
}

static void remove_slot(reg_slot *r)
{
    if (r->is_dir) {
        char p[REG_PATH + 32];
        sig_atomic_t i;
        for (i = 0; i < r->nfiles; i++) {
            put_member(p, r->path, (size_t)i);
            unlink(p);
        }
        rmdir(r->path);
    } else {
        unlink(r->path);
    }
}

/* this process's temps: files first, then directories (which must be empty) */
static void remove_all(int forget)
{
    pid_t me = getpid();
    int i, pass;
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < REG_SLOTS; i++)
            if (reg[i].state == 2 && reg[i].pid == me && reg[i].is_dir == pass) {
                remove_slot(&reg[i]);
                if (forget)
                    reg[i].state = 0;
            }
}

static void on_fatal_signal(int sig)
{
    remove_all(0);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* exit() with temps still registered: a callback of the caller's (a Perl
 * progress hook calling exit, say) left a writer in the middle of its work;
 * what it made is removed as on a signal */
static void at_exit(void) { remove_all(1); }

static void install_handlers(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    size_t i;
    if (handlers_done || !__sync_bool_compare_and_swap(&handlers_done, 0, 1))
        return;
    atexit(at_exit);
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue; /* someone else's handler (or ignored): theirs stays */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static int reg_add(const char *path, int is_dir)
{
    size_t len = strlen(path);
    int i;
    if (len + 1 > REG_PATH)
        return -1;
    install_handlers();
    for (i = 0; i < REG_SLOTS; i++) {
        if (reg[i].state == 0 && __sync_bool_compare_and_swap(&reg[i].state, 0, 1)) {
            memcpy(reg[i].path, path, len + 1);
            reg[i].is_dir = is_dir;
            reg[i].nfiles = 0;
            reg[i].pid = getpid();
            __sync_synchronize();
            reg[i].state = 2;
            return i;
        }
    }
    return -1; /* table full: still removed on every error path, not on a signal */
}

static void reg_drop(int slot)
{
    if (slot >= 0 && slot < REG_SLOTS && reg[slot].pid == getpid()) {
        reg[slot].state = 1;
        __sync_synchronize();
        reg[slot].state = 0;
    }
}

int pb_output_guard(const char *path, int is_dir) { return reg_add(path, is_dir ? 1 : 0); }
void pb_output_unguard(int slot) { reg_drop(slot); }

/* ---- names ------------------------------------------------------------------ */
static pb_status io_fail(pb_error *err, const char *what, const char *name, int e)
{
    return pb_fail_nooff(err, PB_ERR_IO, "%s %s: %s", what, name, strerror(e));
}

/* path with every symlink followed (the last component; at most 40 links);
 * *exists and *sb describe what is there.  malloc'ed. */
static char *resolve_target(const char *path, struct stat *sb, int *exists, pb_error *err)
{
    char *cur = strdup(path);
    int hops;
    if (!cur) {
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return NULL;
    }
    for (hops = 0;; hops++) {
        char *link, *next;
        const char *slash;
        ssize_t n;
        size_t cap, dirlen;
        if (lstat(cur, sb) != 0) {
            if (errno == ENOENT) {
                *exists = 0;
                return cur;
            }
            io_fail(err, "cannot look at", cur, errno);
            free(cur);
            return NULL;
        }
        if (!S_ISLNK(sb->st_mode)) {
            *exists = 1;
            return cur;
        }
        if (hops == MAX_LINKS) {
            io_fail(err, "cannot follow", path, ELOOP);
            free(cur);
            return NULL;
        }
        cap = sb->st_size > 0 ? (size_t)sb->st_size + 1 : 256;
        for (;;) {
            link = (char *)malloc(cap);
            if (!link) {
                free(cur);
                pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
                return NULL;
            }
            n = readlink(cur, link, cap);
            if (n < 0) {
                io_fail(err, "cannot read the symlink", cur, errno);
                free(link);
                free(cur);
                return NULL;
            }
            if ((size_t)n < cap)
                break;
            free(link);
            if (cap > 1u << 20) {
                io_fail(err, "cannot read the symlink", cur, ENAMETOOLONG);
                free(cur);
                return NULL;
            }
            cap *= 2;
        }
        link[n] = '\0';
        slash = strrchr(cur, '/');
        dirlen = (link[0] == '/' || !slash) ? 0 : (size_t)(slash - cur) + 1;
        next = (char *)malloc(dirlen + (size_t)n + 1);
        if (!next) {
            free(link);
            free(cur);
            pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
            return NULL;
        }
        memcpy(next, cur, dirlen);
        memcpy(next + dirlen, link, (size_t)n + 1);
        free(link);
        free(cur);
        cur = next;
    }
}

/* "<dir of target>.<base cut to 64 bytes>.XXXXXX" (X's to be filled) */
static char *temp_template(const char *target)
{
    const char *slash = strrchr(target, '/');
    size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = target + dirlen;
    size_t bl = strlen(base);
    char *t;
    if (bl > TEMP_BASE_MAX)
        bl = TEMP_BASE_MAX;
    t = (char *)malloc(dirlen + bl + 16);
    if (!t)
        return NULL;
    memcpy(t, target, dirlen);
    t[dirlen] = '.';
    memcpy(t + dirlen + 1, base, bl);
    memcpy(t + dirlen + 1 + bl, ".XXXXXX", 8);
    return t;
}

/* fill the trailing XXXXXX with random letters */
static void fill_random(char *tmpl)
{
    static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static volatile unsigned long ctr;
    struct timespec ts;
    uint64_t x;
    size_t l = strlen(tmpl), i;
    clock_gettime(CLOCK_REALTIME, &ts);
    x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 16) ^
        (uint64_t)(uintptr_t)tmpl ^ ((uint64_t)__sync_add_and_fetch(&ctr, 1) * UINT64_C(0x9E3779B97F4A7C15));
    for (i = l - 6; i < l; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        tmpl[i] = al[((x * UINT64_C(2685821657736338717)) >> 32) % (sizeof al - 1)];
    }
}

/* O_CREAT|O_EXCL a new file from tmpl (which is rewritten); the kernel
 * applies the umask, as for any new file */
static int create_excl(char *tmpl)
{
    int tries, fd;
    for (tries = 0; tries < 100; tries++) {
        fill_random(tmpl);
        fd = open(tmpl, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* ---- one file ----------------------------------------------------------------- */
struct pb_output {
    int fd;
    FILE *fp;
    int in_place, is_stdout;
    char *target, *tmp;
    mode_t keep_mode;
    int have_mode;
    pid_t pid;
    int slot;
};

static void out_free(pb_output *o) { PB_FREE_ALL(o->target, o->tmp, o); }

static int check_name(const char *path, pb_error *err)
{
    size_t l;
    if (!path || !*path) {
        pb_fail_nooff(err, PB_ERR_IO, "no output file name");
        return -1;
    }
    l = strlen(path);
    if (path[l - 1] == '/') {
        pb_fail_nooff(err, PB_ERR_IO, "the output name %s ends in '/'", path);
        return -1;
    }
    return 0;
}

/* a zeroed object, or NULL with the out-of-memory failure (no offset) */
static void *out_zalloc(size_t size, pb_error *err)
{
    void *p = calloc(1, size);
    if (!p)
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
    return p;
}

pb_output *pb_output_open(const char *path, unsigned flags, pb_error *err)
{
    pb_output *o;
    struct stat sb;
    int exists = 0;
    if (check_name(path, err) < 0)
        return NULL;
    if (!(o = (pb_output *)out_zalloc(sizeof *o, err)))
        return NULL;
    o->fd = -1;
    o->slot = -1;
    o->pid = getpid();
    if ((flags & PB_OUT_STDOUT) && strcmp(path, "-") == 0) {
        o->fd = STDOUT_FILENO;
        o->in_place = o->is_stdout = 1;
        o->target = strdup("standard output");
        if (!o->target) {
            free(o);
            pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
            return NULL;
        }
        return o;
    }
    o->target = resolve_target(path, &sb, &exists, err);
    if (!o->target) {
        free(o);
        return NULL;
    }
    if (exists && S_ISDIR(sb.st_mode)) {
        io_fail(err, "cannot write", o->target, EISDIR);
        out_free(o);
        return NULL;
    }
    if (exists && !S_ISREG(sb.st_mode)) {
        /* a device, FIFO or socket: written in place, never replaced */
        o->fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (o->fd < 0) {
            io_fail(err, "cannot open", o->target, errno);
            out_free(o);
            return NULL;
        }
        o->in_place = 1;
        return o;
    }
    if (exists) {
        o->keep_mode = sb.st_mode & 07777;
        o->have_mode = 1;
    }
    o->tmp = temp_template(o->target);
    if (!o->tmp) {
        out_free(o);
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return NULL;
    }
    o->fd = create_excl(o->tmp);
    if (o->fd < 0) {
        const char *slash = strrchr(o->target, '/');
        int e = errno;
        if (slash)
            pb_fail_nooff(err, PB_ERR_IO, "cannot create a temporary file in %.*s: %s",
                          (int)(slash - o->target + 1), o->target, strerror(e));
        else
            pb_fail_nooff(err, PB_ERR_IO, "cannot create a temporary file in the current directory: %s",
                          strerror(e));
        out_free(o);
        return NULL;
    }
    o->slot = reg_add(o->tmp, 0);
    return o;
}

int pb_output_fd(const pb_output *o) { return o->fd; }
const char *pb_output_name(const pb_output *o) { return o->tmp ? o->tmp : o->target; }
int pb_output_in_place(const pb_output *o) { return o->in_place; }
int pb_output_owned(const pb_output *o) { return o && o->pid == getpid(); }

FILE *pb_output_stdio(pb_output *o, pb_error *err)
{
    if (o->fp)
        return o->fp;
    if (o->is_stdout)
        return o->fp = stdout;
    o->fp = fdopen(o->fd, "wb");
    if (!o->fp)
        io_fail(err, "cannot open a stream on", pb_output_name(o), errno);
    return o->fp;
}

pb_status pb_output_write(pb_output *o, const void *p, size_t n, pb_error *err)
{
    const char *b = (const char *)p;
    if (o->fp) {
        if (fwrite(p, 1, n, o->fp) != n)
            return io_fail(err, "cannot write", pb_output_name(o), errno);
        return PB_OK;
    }
    while (n) {
        ssize_t k = write(o->fd, b, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return io_fail(err, "cannot write", pb_output_name(o), errno);
        }
        b += k;
        n -= (size_t)k;
    }
    return PB_OK;
}

/* close the fd/stream; returns 0 or an errno */
static int out_close(pb_output *o, int do_fsync)
{
    int e = 0;
    if (o->fp) {
        if (fflush(o->fp) != 0 || ferror(o->fp))
            e = errno ? errno : EIO;
        if (!e && do_fsync && !o->in_place && fsync(o->fd) != 0)
            e = errno;
        if (!o->is_stdout && fclose(o->fp) != 0 && !e)
            e = errno;
        o->fp = NULL;
        o->fd = -1;
    } else if (o->fd >= 0) {
        if (do_fsync && !o->in_place && fsync(o->fd) != 0)
            e = errno;
        if (!o->is_stdout && close(o->fd) != 0 && !e)
            e = errno;
        o->fd = -1;
    }
    return e;
}

pb_status pb_output_commit(pb_output *o, int do_fsync, pb_error *err)
{
    int e;
    if (!o)
        return pb_fail_nooff(err, PB_ERR_IO, "no output");
    if (!pb_output_owned(o)) {
        long owner = (long)o->pid; /* (forsake frees o) */
        pb_output_forsake(o);
        return pb_fail_nooff(err, PB_ERR_IO, "the output belongs to process %ld, not to this one", owner);
    }
    e = out_close(o, do_fsync);
    if (e) {
        io_fail(err, "cannot write", pb_output_name(o), e);
        pb_output_abort(o);
        return PB_ERR_IO;
    }
    if (o->tmp) {
        if (o->have_mode)
            (void)chmod(o->tmp, o->keep_mode);
        if (rename(o->tmp, o->target) != 0) {
            e = errno;
            unlink(o->tmp);
            reg_drop(o->slot);
            pb_fail_nooff(err, PB_ERR_IO, "cannot rename the temporary file onto %s: %s", o->target, strerror(e));
            out_free(o);
            return PB_ERR_IO;
        }
        reg_drop(o->slot);
    }
    out_free(o);
    return PB_OK;
}

void pb_output_abort(pb_output *o)
{
    if (!o)
        return;
    if (!pb_output_owned(o)) {
        pb_output_forsake(o);
        return;
    }
    out_close(o, 0);
    if (o->tmp) {
        unlink(o->tmp);
        reg_drop(o->slot);
    }
    out_free(o);
}

void pb_output_forsake(pb_output *o)
{
    if (!o)
        return;
    /* a stdio buffer inherited across fork is dropped unwritten: only the
     * fd is closed (never stdout) */
    if (o->fd >= 0 && !o->is_stdout)
        close(o->fd);
    out_free(o);
}

/* ---- a set of files ----------------------------------------------------------- */
struct pb_outset {
    char *target; /* resolved out_path */
    char *dir;    /* the private temp directory */
    size_t nmembers;
    struct stat tsb;
    int texists;
    pid_t pid;
    int slot;
};

static void set_free(pb_outset *s) { PB_FREE_ALL(s->target, s->dir, s); }

pb_outset *pb_outset_open(const char *out_path, pb_error *err)
{
    pb_outset *s;
    if (check_name(out_path, err) < 0)
        return NULL;
    if (!(s = (pb_outset *)out_zalloc(sizeof *s, err)))
        return NULL;
    s->slot = -1;
    s->pid = getpid();
    s->target = resolve_target(out_path, &s->tsb, &s->texists, err);
    if (!s->target) {
        free(s);
        return NULL;
    }
    if (s->texists && S_ISDIR(s->tsb.st_mode)) {
        io_fail(err, "cannot write", s->target, EISDIR);
        set_free(s);
        return NULL;
    }
    s->dir = temp_template(s->target);
    if (!s->dir) {
        set_free(s);
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return NULL;
    }
    if (!mkdtemp(s->dir)) {
        io_fail(err, "cannot create a temporary directory next to", s->target, errno);
        set_free(s);
        return NULL;
    }
    s->slot = reg_add(s->dir, 1);
    return s;
}

const char *pb_outset_target(const pb_outset *s) { return s->target; }
int pb_outset_owned(const pb_outset *s) { return s && s->pid == getpid(); }

static char *member_name(const pb_outset *s, size_t i)
{
    char *p = (char *)malloc(strlen(s->dir) + 32);
    if (p)
        put_member(p, s->dir, i);
    return p;
}

static int member_open(pb_outset *s, size_t i, int oflags, pb_error *err)
{
    char *p = member_name(s, i);
    int fd;
    if (!p) {
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return -1;
    }
    fd = open(p, oflags | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        io_fail(err, "cannot open", p, errno);
    free(p);
    return fd;
}

int pb_outset_create(pb_outset *s, size_t i, pb_error *err)
{
    int fd;
    if (!pb_outset_owned(s)) {
        pb_fail_nooff(err, PB_ERR_IO, "the output belongs to process %ld, not to this one", (long)s->pid);
        return -1;
    }
    /* the signal handler's count first: a signal between open() and the
     * count would leave the new member (and so the directory) behind */
    if (i + 1 > s->nmembers && s->slot >= 0) {
        reg[s->slot].nfiles = (sig_atomic_t)(i + 1);
        __sync_synchronize();
    }
    fd = member_open(s, i, O_CREAT | O_EXCL, err);
    if (fd >= 0 && i + 1 > s->nmembers)
        s->nmembers = i + 1;
    else if (s->slot >= 0)
        reg[s->slot].nfiles = (sig_atomic_t)s->nmembers;
    return fd;
}

int pb_outset_reopen(pb_outset *s, size_t i, pb_error *err)
{
    if (!pb_outset_owned(s)) {
        pb_fail_nooff(err, PB_ERR_IO, "the output belongs to process %ld, not to this one", (long)s->pid);
        return -1;
    }
    return member_open(s, i, O_APPEND, err);
}

/* remove members from..nmembers-1 (those before were published) and the directory */
static void set_remove(pb_outset *s, size_t from)
{
    size_t i;
    for (i = from; i < s->nmembers; i++) {
        char *p = member_name(s, i);
        if (p) {
            unlink(p);
            free(p);
        }
    }
    rmdir(s->dir);
    reg_drop(s->slot);
}

/* copy member 0 into a device or FIFO in place */
static int copy_in_place(const char *from, const char *to)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC), out, e = 0;
    ssize_t n;
    if (in < 0)
        return errno;
    out = open(to, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (out < 0) {
        e = errno;
        close(in);
        return e;
    }
    while (!e && (n = read(in, buf, sizeof buf)) != 0) {
        char *p = buf;
        if (n < 0) {
            if (errno != EINTR)
                e = errno;
            continue;
        }
        while (n > 0) {
            ssize_t k = write(out, p, (size_t)n);
            if (k < 0) {
                if (errno == EINTR)
                    continue;
                e = errno;
                break;
            }
            p += k;
            n -= k;
        }
    }
    close(in);
    if (close(out) != 0 && !e)
        e = errno;
    return e;
}

pb_status pb_outset_commit(pb_outset *s, const char *const *names, size_t n, pb_error *err)
{
    size_t i;
    if (!pb_outset_owned(s)) {
        pb_outset_forsake(s);
        return pb_fail_nooff(err, PB_ERR_IO, "the output belongs to another process");
    }
    if (n > s->nmembers) {
        pb_outset_abort(s);
        return pb_fail_nooff(err, PB_ERR_IO, "%zu names for %zu files", n, s->nmembers);
    }
    for (i = 0; i < n; i++) {
        char *p = member_name(s, i);
        int e = 0, same = strcmp(names[i], s->target) == 0;
        if (!p) {
            e = ENOMEM;
        } else if (same && s->texists && !S_ISREG(s->tsb.st_mode)) {
            if (!(e = copy_in_place(p, s->target)))
                unlink(p); /* copied, not renamed: the staging directory must go */
        } else {
            if (same && s->texists)
                (void)chmod(p, s->tsb.st_mode & 07777);
            if (rename(p, names[i]) != 0)
                e = errno;
        }
        free(p);
        if (e) {
            size_t j;
            pb_fail_nooff(err, PB_ERR_IO, "cannot put %s in place: %s", names[i], strerror(e));
            for (j = 0; j < i; j++)
                if (strcmp(names[j], s->target) != 0 || !s->texists || S_ISREG(s->tsb.st_mode))
                    unlink(names[j]);
            pb_outset_abort(s);
            return PB_ERR_IO;
        }
    }
    set_remove(s, n);
    set_free(s);
    return PB_OK;
}

void pb_outset_abort(pb_outset *s)
{
    if (!s)
        return;
    if (pb_outset_owned(s))
        set_remove(s, 0);
    set_free(s);
}

void pb_outset_forsake(pb_outset *s)
{
    if (s)
        set_free(s);
}

pb_status pb_output_with(const char *out_path, const char *who, pb_output_fn write, void *ctx, pb_error *err)
{
    pb_output *out;
    FILE *fp;
    pb_error werr;
    pb_status st;
    pb_error_init(&werr, who, strcmp(out_path, "-") == 0 ? "standard output" : out_path);
    out = pb_output_open(out_path, PB_OUT_STDOUT, &werr);
    if (!out || !(fp = pb_output_stdio(out, &werr))) {
        pb_output_abort(out);
        *err = werr;
        return err->status;
    }
    st = write(fp, ctx, &werr, err);
    if (st != PB_OK) {
        pb_output_abort(out); /* an existing target stays as it was */
        if (werr.status != PB_OK)
            *err = werr;
        else if (err->status == PB_OK)
            err->status = st;
        return st;
    }
    if (pb_output_commit(out, 0, &werr) != PB_OK) {
        *err = werr;
        return err->status;
    }
    return PB_OK;
}
