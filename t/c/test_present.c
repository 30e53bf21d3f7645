/* test_present.c - the presentation filter (present.h) and call events
 * (call_events.h) on hand-made chunk streams: names, embedded source and its
 * look-up order and policy, the missing-files warning, call events rebuilt from call
 * edges, and the SUB_RETURN sequence for a set of stacks. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tap.h"
#include "present.h"
#include "formats.h"
#include "call_events.h"
#include "harness.h"

/* a sink that keeps a one-line text form of every chunk */
typedef struct {
    pb_sink sink;
    char log[64][160];
    int n;
    char warned[1024];
} rec_sink;

static int rec_chunk(pb_sink *self, const pb_chunk *c)
{
    rec_sink *r = (rec_sink *)self->ctx;
    char *o;
    if (r->n >= 64)
        return 0;
    o = r->log[r->n++];
    switch (c->tag) {
    case PB_T_NEW_FID:
        snprintf(o, 160, "NEW_FID %u 0x%x %u %.*s", c->u[0], c->u[3], c->u[4], (int)c->s[0].len, c->s[0].ptr);
        break;
    case PB_T_SRC_LINE:
        snprintf(o, 160, "SRC_LINE %u %u %.*s", c->u[0], c->u[1], (int)c->s[0].len, c->s[0].ptr);
        break;
    case PB_T_SUB_INFO:
        snprintf(o, 160, "SUB_INFO %.*s", (int)c->s[0].len, c->s[0].ptr);
        break;
    case PB_T_SUB_CALLERS:
        snprintf(o, 160, "SUB_CALLERS %.*s <- %.*s", (int)c->s[0].len, c->s[0].ptr, (int)c->s[1].len, c->s[1].ptr);
        break;
    case PB_T_SUB_RETURN:
        snprintf(o, 160, "SUB_RETURN %u %.0f %.0f %.*s", c->u[0], c->n[0], c->n[1], (int)c->s[0].len, c->s[0].ptr);
        break;
    case PB_T_OPTION:
    case PB_T_ATTRIBUTE:
        snprintf(o, 160, "%s %.*s=%.*s", pb_tag_name[c->tag], (int)c->s[0].len, c->s[0].ptr, (int)c->s[1].len,
                 c->s[1].ptr);
        break;
    case PB_T_COMMENT:
        snprintf(o, 160, "COMMENT %.*s", (int)c->s[0].len, c->s[0].ptr);
        break;
    default:
        snprintf(o, 160, "%s", pb_tag_name[c->tag]);
    }
    return 0;
}

static void rec_warn(pb_sink *self, const char *msg)
{
    rec_sink *r = (rec_sink *)self->ctx;
    snprintf(r->warned, sizeof r->warned, "%s", msg);
}

static void rec_init(rec_sink *r)
{
    memset(r, 0, sizeof *r);
    hx_sink_init(&r->sink, rec_chunk, rec_warn, r);
}

static int has(const rec_sink *r, const char *line)
{
    int i;
    for (i = 0; i < r->n; i++)
        if (strcmp(r->log[i], line) == 0)
            return i + 1;
    return 0;
}

static void name_is(const char *in, const char *want)
{
    char out[256];
    size_t n = pb_nytprof_name(in, strlen(in), out, sizeof out);
    ok(n == strlen(want) && strcmp(out, want) == 0, "name '%s' -> '%s' (got '%s')", in, want, out);
}

static void send(pb_sink *s, pb_chunk *c) { (void)pb_emit(s, c); }

/* what the driver and a foreign decoder do: the producer's row on the sink
 * (pb_sink.row), then ATTRIBUTE source_format */
static void told(pb_sink *in, const char *format)
{
    pb_chunk c;
    in->row = pb_format_get(pb_format_from_name(format));
    pb_chunk_attribute(&c, pb_str_c("source_format"), pb_str_c(format));
    send(in, &c);
}

/* a present stage with no_source into a fresh r, told the source format */
static pb_present *present_no_source(rec_sink *r, pb_options *o, pb_error *err, const char *format, pb_sink **in)
{
    pb_present *p;
    rec_init(r);
    pb_options_init(o);
    o->no_source = 1;
    p = pb_present_new(&r->sink, o, err);
    *in = pb_present_sink(p);
    told(*in, format);
    return p;
}

static pb_str cb_name(void *ctx, uint32_t sub)
{
    static const char *const names[] = {"A", "B", "C", "D", "E"};
    (void)ctx;
    return pb_str_c(names[sub]);
}

int main(void)
{
    char dir[] = "/tmp/pb-present-XXXXXX";
    char path[256], sub[256];
    FILE *fp;
    rec_sink r;
    pb_error err;
    pb_options o;
    pb_present *p;
    pb_chunk c;
    pb_sink *in;
    const char *roots[1], *strips[1];

    /* ---- names ---- */
    name_is("mod::<module>", "mod::[module]");
    name_is("mod::f::<locals>::<lambda>", "mod::f::[locals]::[lambda]");
    name_is("std::vector<int>::push_back", "std::vector[int]::push_back");
    name_is("ns::C::f(std::string const&) const", "ns::C::f(std.string const&) const");
    name_is("ns::operator<<(std::ostream&, ns::T const&)", "ns::operator[[(std.ostream&, ns.T const&)");
    name_is("a::operator->", "a::operator->");
    name_is("std::map<std::string, std::vector<int> >::find", "std::map[std.string, std.vector[int] ]::find");
    name_is("main::__ANON__[x.pl:12]", "main::__ANON__[x.pl:12]");
    name_is("Foo::bar", "Foo::bar");
    ok(pb_nytprof_name("a<b>", 4, NULL, 0) == 4, "length only (cap 0)");

    /* ---- call events: shared outer frames close once ---- */
    {
        pb_callev cv;
        uint32_t s1[] = {0, 1, 2}, s2[] = {0, 1, 3}, s3[] = {0, 4};
        rec_init(&r);
        pb_error_init(&err, "test", "mem");
        pb_callev_init(&cv, &r.sink, &err, 10.0, cb_name, NULL);
        ok(pb_callev_stack(&cv, s1, 3, 1) == PB_OK && pb_callev_stack(&cv, s1, 3, 1) == PB_OK &&
               pb_callev_stack(&cv, s2, 3, 2) == PB_OK && pb_callev_stack(&cv, s3, 2, 5) == PB_OK &&
               pb_callev_end(&cv) == PB_OK,
           "call events: four stacks replayed");
        ok(r.n == 5 && !strcmp(r.log[0], "SUB_RETURN 3 20 20 C") && !strcmp(r.log[1], "SUB_RETURN 3 20 20 D") &&
               !strcmp(r.log[2], "SUB_RETURN 2 40 0 B") && !strcmp(r.log[3], "SUB_RETURN 2 50 50 E") &&
               !strcmp(r.log[4], "SUB_RETURN 1 90 0 A"),
           "call events: a run of identical stacks is one return; incl adds up outward (%d events)", r.n);
        pb_callev_free(&cv);
    }

    /* ---- the filter ---- */
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/prog.py", dir);
    fp = fopen(path, "w");
    fputs("def f():\n    return 1\nf()", fp);
    fclose(fp);
    snprintf(sub, sizeof sub, "%s/src", dir);
    mkdir(sub, 0700);
    snprintf(sub, sizeof sub, "%s/src/lib.py", dir);
    fp = fopen(sub, "w");
    fputs("x = 1\n", fp);
    fclose(fp);

    rec_init(&r);
    pb_error_init(&err, "test", "mem");
    pb_options_init(&o);
    roots[0] = dir;
    strips[0] = "/build/app";
    o.source_roots = roots;
    o.n_source_roots = 1;
    o.strip_prefixes = strips;
    o.n_strip_prefixes = 1;
    o.source_base = "/nonexistent";
    p = pb_present_new(&r.sink, &o, &err);
    ok(p != NULL, "filter made");
    in = pb_present_sink(p);
    pb_chunk_version(&c, 5, 0);
    send(in, &c);
    pb_chunk_new_fid(&c, 1, 0, 0, 6, 0, 0, pb_str_c("before.py"));
    send(in, &c); /* before source_format: passed through untouched */
    pb_chunk_comment(&c, pb_str_c("Perl profile database. Generated by Pynytprof on today\n"));
    send(in, &c);
    told(in, "pynytprof");
    pb_chunk_attribute(&c, pb_str_c("ticks_per_sec"), pb_str_c("1000"));
    send(in, &c);
    pb_chunk_pid_start(&c, 1, 0, 10.0);
    send(in, &c);
    pb_chunk_new_fid(&c, 2, 0, 0, 6, 0, 0, pb_str_c(path));
    send(in, &c);
    pb_chunk_new_fid(&c, 3, 0, 0, 6, 0, 0, pb_str_c("/build/app/src/lib.py"));
    send(in, &c);
    pb_chunk_new_fid(&c, 4, 0, 0, 6, 0, 0, pb_str_c("gone.py"));
    send(in, &c);
    pb_chunk_new_fid(&c, 5, 0, 0, PB_FID_IS_FAKE, 0, 0, pb_str_c("synthetic.py"));
    send(in, &c);
    pb_chunk_sub_info(&c, 2, 1, 3, pb_str_c("main::<module>"));
    send(in, &c);
    pb_chunk_sub_callers(&c, 2, 3, 1, 0.5, 0.25, 0, 0, pb_str_c("main::f"), pb_str_c("main::<module>"));
    send(in, &c);
    pb_chunk_sub_callers(&c, 2, 3, 1, 0.25, 0.25, 0, 0, pb_str_c("main::<module>"), pb_str_c("main::_run"));
    send(in, &c);
    pb_chunk_pid_end(&c, 1, 12.0);
    send(in, &c);
    ok(pb_present_finish(p) == PB_OK, "finish");
    pb_present_free(p);

    ok(has(&r, "NEW_FID 1 0x6 0 before.py") != 0, "a fid before source_format passes untouched");
    ok(has(&r, "COMMENT Perl profile database. Written by Pynytprof, converted by Devel::ProfileBridge "
               PB_VERSION_STRING " on today\n") != 0,
       "Pynytprof's banner is rewritten (our output is not taken for Pynytprof)");
    {
        char want[300];
        snprintf(want, sizeof want, "NEW_FID 2 0x36 %d %s", 25, path);
        ok(has(&r, want) != 0, "a file found by its name gets HAS_SRC|SAVE_SRC and its size");
    }
    ok(has(&r, "SRC_LINE 2 1 def f():\n") && has(&r, "SRC_LINE 2 2     return 1\n") && has(&r, "SRC_LINE 2 3 f()") &&
           !has(&r, "SRC_LINE 2 4 "),
       "... and one SRC_LINE per line (the last without its newline)");
    ok(has(&r, "NEW_FID 3 0x36 6 /build/app/src/lib.py") && has(&r, "SRC_LINE 3 1 x = 1\n"),
       "strip prefix + source root finds a file of another machine");
    ok(has(&r, "NEW_FID 4 0x86 0 gone.py") != 0,
       "a file not found gets IS_FAKE (nytprofhtml then does not look for it)");
    ok(has(&r, "NEW_FID 5 0x80 0 synthetic.py") != 0, "a fake fid is not looked up");
    ok(has(&r, "SUB_INFO main::[module]") != 0, "SUB_INFO name presented");
    ok(has(&r, "SUB_CALLERS main::f <- main::[module]") != 0, "SUB_CALLERS names presented");
    ok(strstr(r.warned, "1 of 3 files") && strstr(r.warned, "'gone.py'"), "one warning names the missing file: %s",
       r.warned);
    /* rebuilt from the edges: _run -> <module> -> f, weights = excl x share x ticks_per_sec */
    ok(has(&r, "SUB_RETURN 3 250 250 main::f") && has(&r, "SUB_RETURN 2 500 250 main::[module]") &&
           has(&r, "SUB_RETURN 1 500 0 main::_run"),
       "call events rebuilt from call edges");
    ok(has(&r, "OPTION calls=1") > has(&r, "SUB_RETURN 1 500 0 main::_run"), "... and OPTION calls=1 after them");

    /* no_source: nothing looked up, nothing warned */
    p = present_no_source(&r, &o, &err, "tachyon", &in);
    pb_chunk_new_fid(&c, 1, 0, 0, 6, 0, 0, pb_str_c(path));
    send(in, &c);
    pb_chunk_pid_start(&c, 1, 0, 10.0);
    send(in, &c);
    ok(pb_present_finish(p) == PB_OK && r.n == 3 && !r.warned[0], "no_source: the fid passes, no warning");
    pb_present_free(p);

    /* file names are presented as sub names; an empty profile gets a file and a process */
    p = present_no_source(&r, &o, &err, "tachyon", &in);
    pb_chunk_attribute(&c, pb_str_c("basetime"), pb_str_c("1700000000"));
    send(in, &c);
    pb_chunk_new_fid(&c, 1, 0, 0, PB_FID_IS_FAKE | PB_FID_VIA_SUB, 0, 0, pb_str_c("<frozen runpy>"));
    send(in, &c);
    ok(pb_present_finish(p) == PB_OK && has(&r, "NEW_FID 1 0x84 0 [frozen runpy]"),
       "a file name <frozen runpy> is written [frozen runpy]");
    ok(has(&r, "PID_START") && has(&r, "PID_END") > has(&r, "PID_START"), "a stream without a process gets one");
    pb_present_free(p);
    rec_init(&r);
    p = pb_present_new(&r.sink, NULL, &err);
    in = pb_present_sink(p);
    told(in, "easyprofiler");
    ok(pb_present_finish(p) == PB_OK && has(&r, "NEW_FID 1 0x80 0 (empty profile)") && has(&r, "PID_END") &&
           !r.warned[0],
       "an empty foreign profile gets the fake file (empty profile) and a process, without a warning");
    pb_present_free(p);
    rec_init(&r);
    p = pb_present_new(&r.sink, NULL, &err);
    in = pb_present_sink(p);
    pb_chunk_new_fid(&c, 1, 0, 0, 6, 0, 0, pb_str_c("<x>.pl"));
    send(in, &c);
    ok(pb_present_finish(p) == PB_OK && r.n == 1 && has(&r, "NEW_FID 1 0x6 0 <x>.pl"),
       "a stream that is not foreign gets nothing added, its names untouched");
    pb_present_free(p);

    /* the source policy: under the root, a symlink to a file outside it and
     * a name that is not Python; /proc; source_any embeds all three */
    {
        char lnk[600], txt[600], line[700];
        int any;
        struct stat st_passwd;
        ok(stat("/etc/passwd", &st_passwd) == 0, "/etc/passwd is there");
        snprintf(lnk, sizeof lnk, "%s/evil.py", dir);
        snprintf(txt, sizeof txt, "%s/notes.txt", dir);
        ok(symlink("/etc/passwd", lnk) == 0, "symlink made");
        fp = fopen(txt, "w");
        fputs("notes\n", fp);
        fclose(fp);
        for (any = 0; any < 2; any++) {
            rec_init(&r);
            pb_options_init(&o);
            o.source_roots = roots;
            o.n_source_roots = 1;
            o.source_any = any;
            p = pb_present_new(&r.sink, &o, &err);
            in = pb_present_sink(p);
            told(in, "tachyon");
            pb_chunk_new_fid(&c, 1, 0, 0, 6, 0, 0, pb_str_c(lnk));
            send(in, &c);
            pb_chunk_new_fid(&c, 2, 0, 0, 6, 0, 0, pb_str_c(txt));
            send(in, &c);
            pb_chunk_new_fid(&c, 3, 0, 0, 6, 0, 0, pb_str_c("/proc/self/environ"));
            send(in, &c);
            ok(pb_present_finish(p) == PB_OK, "finish (source_any %d)", any);
            pb_present_free(p);
            snprintf(line, sizeof line, "NEW_FID 1 0x%x %d %s", any ? 0x36 : 0x86, any ? (int)st_passwd.st_size : 0,
                     lnk);
            ok(has(&r, line) != 0, "source_any %d: a symlink under the root to /etc/passwd is %s", any,
               any ? "embedded" : "not");
            snprintf(line, sizeof line, "NEW_FID 2 0x%x %d %s", any ? 0x36 : 0x86, any ? 6 : 0, txt);
            ok(has(&r, line) != 0, "source_any %d: notes.txt under the root is %s", any, any ? "embedded" : "not");
            {
                int k, src_lines = 0;
                for (k = 0; k < r.n; k++)
                    src_lines += strncmp(r.log[k], "SRC_LINE", 8) == 0;
                ok(any ? src_lines > 1 : src_lines == 0, "source_any %d: %s SRC_LINE (%d)", any, any ? "with" : "no",
                   src_lines);
            }
            if (!any)
                ok(strstr(r.warned, "the source of 3 of 3 files was not embedded by the source policy") &&
                       strstr(r.warned, "evil.py' (outside the allowed directories)") &&
                       strstr(r.warned, "notes.txt' (not a source file name)") &&
                       strstr(r.warned, "'/proc/self/environ' (in /proc, /sys or /dev)"),
                   "one warning names the three and why: %s", r.warned);
        }
        unlink(lnk);
        unlink(txt);
    }

    unlink(path);
    unlink(sub);
    snprintf(sub, sizeof sub, "%s/src", dir);
    rmdir(sub);
    rmdir(dir);
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
