/* test_easyprofiler - C-level tests of the EasyProfiler decoder and span
 * folding on files built byte by byte (bad input, limits, the I32 split of
 * long exclusive times, thread selection), plus the real corpus files in
 * t/data/easyprofiler decoded whole and cut at every offset.
 * Numbers against the real reader's ground truth are checked in
 * t/50-easyprofiler.t.  TAP output.
 *
 *   gcc -std=c99 -Wall -Wextra -Ic t/c/test_easyprofiler.c c/[a-z]*.c -lz -lzstd -lsnappy -o /tmp/t_ep
 *   /tmp/t_ep t/data/easyprofiler      (run it under -fsanitize=address,undefined too)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pb.h"
#include "formats.h"
#include "tap.h"
#include "harness.h"

/* ---- files built byte by byte (harness.h) --------------------------------- */
typedef hx_buf bb;
static void u16(bb *b, unsigned v) { hx_le(b, v, 2); }
static void u32(bb *b, uint32_t v) { hx_le(b, v, 4); }
static void u64(bb *b, uint64_t v) { hx_le(b, v, 8); }

/* 2.1.0 header; cpu_frequency 0 (ns timestamps) */
static void header21(bb *b, uint64_t begin, uint64_t end, uint32_t blocks, uint32_t descs, uint32_t threads)
{
    u32(b, 0x45617379u);
    u32(b, 0x02010000u);
    u64(b, 4242);  /* pid */
    u64(b, 0);     /* cpu_frequency */
    u64(b, begin);
    u64(b, end);
    u64(b, (uint64_t)blocks * 21); /* memory_size (not used) */
    u64(b, 100);   /* descriptors_memory_size (not used) */
    u32(b, blocks);
    u32(b, descs);
    u32(b, threads);
    u16(b, 0);     /* bookmarks */
    u16(b, 0);     /* padding */
}

static void descriptor(bb *b, const char *name, const char *file, int32_t line, unsigned type)
{
    size_t nl = strlen(name) + 1, fl = strlen(file) + 1;
    u16(b, (unsigned)(16 + nl + fl));
    u32(b, 0);
    u32(b, (uint32_t)line);
    u32(b, 0xff00ff00u);
    hx_u8(b, type);
    hx_u8(b, 1);
    u16(b, (unsigned)nl);
    hx_put(b, name, nl);
    hx_put(b, file, fl);
}

static void thread_head(bb *b, uint64_t tid, const char *name)
{
    size_t nl = strlen(name) + 1;
    u64(b, tid);
    u16(b, (unsigned)nl);
    hx_put(b, name, nl);
    u32(b, 0); /* context switches */
}

static void block(bb *b, uint64_t begin, uint64_t end, uint32_t desc)
{
    u16(b, 21);
    u64(b, begin);
    u64(b, end);
    u32(b, desc);
    hx_u8(b, 0);
}

/* ---- a sink that records what the tests look at ---------------------------- */
typedef struct {
    pb_sink sink;
    uint64_t count[PB_TAG_COUNT];
    int64_t time_line_sum;
    int32_t time_line_max;
    double incl_of[8];       /* SUB_CALLERS inclusive time by called-sub index in names[] */
    const char *names[8];
    int nwarn;
    char lastwarn[600];
    uint32_t pids[16];
    int npids;
    int fid_defined_before_use;
    uint32_t max_fid;
} rec_sink;

static int rec_chunk(pb_sink *self, const pb_chunk *c)
{
    rec_sink *r = (rec_sink *)self->ctx;
    int i;
    r->count[c->tag]++;
    /* the fid rule; here a SUB_CALLERS's caller fid must be a file too */
    if (hx_fid_rule(&r->max_fid, c) || (c->tag == PB_T_SUB_CALLERS && c->u[0] == 0))
        r->fid_defined_before_use = 0;
    if (c->tag == PB_T_TIME_LINE) {
        r->time_line_sum += c->ticks;
        if (c->ticks > r->time_line_max)
            r->time_line_max = c->ticks;
    } else if (c->tag == PB_T_SUB_CALLERS) {
        for (i = 0; i < 8 && r->names[i]; i++)
            if (c->s[0].len == strlen(r->names[i]) && memcmp(c->s[0].ptr, r->names[i], c->s[0].len) == 0)
                r->incl_of[i] += c->n[0] + c->n[2];
    } else if (c->tag == PB_T_PID_START && r->npids < 16) {
        r->pids[r->npids++] = c->u[0];
    }
    return 0;
}

static void rec_warn(pb_sink *self, const char *msg)
{
    rec_sink *r = (rec_sink *)self->ctx;
    r->nwarn++;
    snprintf(r->lastwarn, sizeof r->lastwarn, "%s", msg);
}

static void rec_init(rec_sink *r)
{
    memset(r, 0, sizeof *r);
    hx_sink_init(&r->sink, rec_chunk, rec_warn, r);
    r->fid_defined_before_use = 1;
}

static pb_status decode(const bb *b, const pb_options *opt, rec_sink *r, pb_error *err)
{
    return pb_decode_mem(b->p, b->n, "test.prof", PB_FMT_UNKNOWN, opt, &r->sink, err);
}

static int has(const pb_error *e, const char *needle) { return strstr(e->message, needle) != NULL; }

/* a bad file's case: b, read as `fmt` into a recorder of its own, fails with
 * `want`, (at >= 0) at byte `at`, with `needle` in the message; b is emptied
 * for the next case.  bad_case: the format detected. */
#define bad_case(b, ...) bad_case_as(b, PB_FMT_UNKNOWN, __VA_ARGS__)
static void bad_case_as(bb *b, pb_format fmt, pb_status want, long long at, const char *needle, const char *what)
{
    rec_sink r;
    pb_error err;
    pb_status st;
    rec_init(&r);
    st = pb_decode_mem(b->p, b->n, "test.prof", fmt, NULL, &r.sink, &err);
    b->n = 0;
    if (at < 0)
        ok(st == want && has(&err, needle), "%s: %s", what, err.message);
    else
        ok(st == want && has(&err, needle) && err.offset == (uint64_t)at, "%s: %s at %llu", what, err.message,
           (unsigned long long)err.offset);
}

/* thread 9 "T" that claims `nblocks` block records (the caller's) */
static void thread_t(bb *b, uint32_t nblocks)
{
    thread_head(b, 9, "T");
    u32(b, nblocks);
}

/* the start of most bad files: a 2.1 header, descriptor "a", thread_t */
static void one_thread(bb *b, uint32_t blocks, uint32_t descs, uint32_t threads, uint32_t nblocks)
{
    header21(b, 1, 100, blocks, descs, threads);
    descriptor(b, "a", "a.cpp", 1, 1);
    thread_t(b, nblocks);
}

/* ---- tests --------------------------------------------------------------------- */
static void test_long_block(void)
{
    /* one 5 s block with a 1 s child: exclusive 4 s > INT32_MAX ns */
    bb b = {0};
    rec_sink r;
    pb_error err;
    pb_status st;
    const uint64_t B = 1000000000ULL;
    header21(&b, B, B + 6 * B, 2, 2, 1);
    descriptor(&b, "Long", "x.cpp", 7, 1);
    descriptor(&b, "Child", "x.cpp", 9, 1);
    thread_head(&b, 77, "Main");
    u32(&b, 2);
    block(&b, B + 2 * B, B + 3 * B, 1);
    block(&b, B, B + 5 * B, 0);
    u32(&b, 0x45617379u);
    rec_init(&r);
    r.names[0] = "main::Long";
    r.names[1] = "main::Child";
    st = decode(&b, NULL, &r, &err);
    ok(st == PB_OK, "5 s block decodes (%s)", err.message);
    ok(r.time_line_sum == (int64_t)5 * (int64_t)B, "TIME_LINE ticks add up to 5e9 ns (got %lld)",
       (long long)r.time_line_sum);
    ok(r.time_line_max <= INT32_MAX && r.count[PB_T_TIME_LINE] == 3,
       "the 4 s exclusive time is split over 2 TIME_LINEs, each <= INT32_MAX (%llu TIME_LINEs)",
       (unsigned long long)r.count[PB_T_TIME_LINE]);
    ok(r.incl_of[0] == 5.0 && r.incl_of[1] == 1.0, "SUB_CALLERS inclusive 5 s and 1 s (got %.9f, %.9f)",
       r.incl_of[0], r.incl_of[1]);
    ok(r.fid_defined_before_use, "fids dense and defined before use");
    free(b.p);
}

static void test_nesting(uint32_t levels, int expect_ok)
{
    bb b = {0};
    rec_sink r;
    pb_error err;
    pb_status st;
    uint32_t k;
    header21(&b, 1, 1000000, levels, 1, 1);
    descriptor(&b, "nest", "n.cpp", 3, 1);
    thread_head(&b, 5, "Main");
    u32(&b, levels);
    /* innermost first: each record begins before the last root ends -> adopts it */
    for (k = 0; k < levels; k++)
        block(&b, 1000 - k, 2000 + k, 0);
    u32(&b, 0x45617379u);
    rec_init(&r);
    st = decode(&b, NULL, &r, &err);
    if (expect_ok)
        ok(st == PB_OK, "%u nested levels decode (%s)", levels, err.message);
    else
        ok(st == PB_ERR_LIMIT && has(&err, "255 levels") && err.has_offset && err.offset == b.n - 4 - 23,
           "%u nested levels: limit error at the offending record (%s at %llu)", levels, err.message,
           (unsigned long long)err.offset);
    free(b.p);
}

static void test_bad_input(void)
{
    bb b = {0};

    /* descriptor whose size overruns the file */
    header21(&b, 1, 100, 0, 1, 1);
    u16(&b, 400);
    hx_put(&b, "abcdefghijklmnopqrstuvwxyz", 26);
    bad_case(&b, PB_ERR_TRUNCATED, 72, "descriptor 0 record claims 400 bytes", "descriptor size past EOF");

    /* descriptor whose name length overruns the record */
    header21(&b, 1, 100, 0, 1, 1);
    u16(&b, 20);
    u32(&b, 0); u32(&b, 1); u32(&b, 0); hx_u8(&b, 1); hx_u8(&b, 1); u16(&b, 9);
    hx_put(&b, "abc\0", 4);
    bad_case(&b, PB_ERR_CORRUPT, -1, "name is 9 bytes", "descriptor name past its record");

    /* block whose descriptor id is out of range */
    one_thread(&b, 1, 1, 1, 1);
    block(&b, 2, 3, 5);
    bad_case(&b, PB_ERR_CORRUPT, -1, "descriptor 5, but the file has 1", "descriptor id out of range");

    /* block on a null descriptor slot */
    header21(&b, 1, 100, 1, 2, 1);
    u16(&b, 0);
    descriptor(&b, "a", "a.cpp", 1, 1);
    thread_t(&b, 1);
    block(&b, 2, 3, 0);
    bad_case(&b, PB_ERR_CORRUPT, -1, "slot is empty", "null descriptor slot used");

    /* thread name length past EOF */
    header21(&b, 1, 100, 0, 1, 1);
    descriptor(&b, "a", "a.cpp", 1, 1);
    u64(&b, 9);
    u16(&b, 60000);
    hx_put(&b, "Main", 4);
    bad_case(&b, PB_ERR_TRUNCATED, -1, "name of 60000 bytes", "thread name past EOF");

    /* counts that claim 2^32 - 1 records: must stop at EOF, not allocate */
    header21(&b, 1, 100, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu);
    descriptor(&b, "a", "a.cpp", 1, 1);
    bad_case(&b, PB_ERR_TRUNCATED, -1, "descriptor 1 of 4294967295", "descriptors_count 2^32-1");
    one_thread(&b, 0xFFFFFFFFu, 1, 1, 0xFFFFFFFFu);
    block(&b, 2, 3, 0);
    bad_case(&b, PB_ERR_TRUNCATED, -1, "block record 1 of 4294967295", "block count 2^32-1");
    one_thread(&b, 0, 1, 0xFFFFFFFFu, 0);
    bad_case(&b, PB_ERR_TRUNCATED, -1, "thread 1 id", "threads_count 2^32-1");

    /* a block record too short for its fields */
    one_thread(&b, 1, 1, 1, 1);
    u16(&b, 4);
    u32(&b, 0);
    bad_case(&b, PB_ERR_CORRUPT, -1, "shorter than its begin", "4-byte block record");

    /* a value record whose data size overruns it */
    header21(&b, 1, 100, 1, 1, 1);
    descriptor(&b, "v", "a.cpp", 1, 2);
    thread_t(&b, 1);
    u16(&b, 34);
    u64(&b, 5); u64(&b, 5); u32(&b, 0);
    hx_u8(&b, 0); hx_u8(&b, 0); u16(&b, 8); hx_u8(&b, 6); hx_u8(&b, 0); u64(&b, 1);
    bad_case(&b, PB_ERR_CORRUPT, -1, "claims 8 data bytes", "value data past its record");

    /* wrong signature, too old a version, non-zero padding, bad end signature */
    u32(&b, 0x12345678u);
    u32(&b, 0x02010000u);
    bad_case_as(&b, PB_FMT_EASYPROFILER, PB_ERR_CORRUPT, -1, "signature", "wrong signature");
    u32(&b, 0x45617379u);
    u32(&b, 0x00000100u);
    bad_case(&b, PB_ERR_UNSUPPORTED, -1, "older than 0.1.0", "version 0.0.256");
    header21(&b, 1, 100, 0, 1, 0);
    b.p[70] = 1;
    bad_case(&b, PB_ERR_CORRUPT, -1, "padding", "non-zero header padding");
    header21(&b, 1, 100, 0, 1, 0);
    descriptor(&b, "a", "a.cpp", 1, 1);
    u32(&b, 0x11111111u);
    bad_case(&b, PB_ERR_CORRUPT, -1, "end signature", "wrong end signature");
    free(b.p);
}

static void test_selection_and_threads(void)
{
    bb b = {0};
    rec_sink r;
    pb_error err;
    pb_status st;
    pb_options o;
    size_t i;
    /* the thread option's forms, and the thread each one picks */
    static const struct {
        const char *name;
        uint64_t id;
        uint32_t pid;
        const char *what;
    } picks[] = {
        {"Worker 1", 0, 102, "thread => 'Worker 1' selects one thread"},
        {NULL, 101, 101, "thread => 101 selects one thread"},
        {"102", 101, 102, "thread => '102' (a name that is a tid) selects it"},
    };
    header21(&b, 10, 1000, 3, 1, 2);
    descriptor(&b, "work", "w.cpp", 4, 1);
    thread_head(&b, 101, "Main");
    u32(&b, 1);
    block(&b, 20, 30, 0);
    thread_head(&b, 102, "Worker 1");
    u32(&b, 2);
    block(&b, 20, 30, 0);
    block(&b, 5, 8, 0); /* ends before profiling began: dropped */
    u32(&b, 0x45617379u);

    rec_init(&r);
    st = decode(&b, NULL, &r, &err);
    ok(st == PB_OK && r.npids == 2 && r.pids[0] == 101 && r.pids[1] == 102 && r.count[PB_T_PID_END] == 2,
       "each thread its own PID_START/PID_END pair, pid = tid");
    ok(r.nwarn == 1 && strstr(r.lastwarn, "dropped"), "dropped block reported: %s", r.lastwarn);

    pb_options_init(&o);
    o.have_thread = 1;
    for (i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        o.thread_name = picks[i].name;
        o.thread_id = picks[i].id;
        rec_init(&r);
        st = decode(&b, &o, &r, &err);
        ok(st == PB_OK && r.npids == 1 && r.pids[0] == picks[i].pid, "%s", picks[i].what);
    }
    o.thread_name = "Nope";
    rec_init(&r);
    st = decode(&b, &o, &r, &err);
    ok(st != PB_OK && has(&err, "no thread named") && has(&err, "102 \"Worker 1\""),
       "no matching thread is an error that lists the threads: %s", err.message);
    free(b.p);
}

static void test_zero_blocks(void)
{
    bb b = {0};
    rec_sink r;
    pb_error err;
    pb_status st;
    header21(&b, 10, 1000, 0, 1, 1);
    descriptor(&b, "open", "o.cpp", 4, 1);
    thread_head(&b, 101, "Main");
    u32(&b, 0);
    u32(&b, 0x45617379u);
    rec_init(&r);
    st = decode(&b, NULL, &r, &err);
    ok(st == PB_OK && r.nwarn == 1 && strstr(r.lastwarn, "0 blocks") && r.count[PB_T_PID_START] == 1,
       "a 0-block file is read with a warning: %s", r.lastwarn);
    free(b.p);
}

/* Decode a real file, then every prefix of it: a prefix must fail cleanly
 * (truncated), never crash; the whole file must pass. */
static void test_file(const char *path)
{
    size_t n, i, bad = 0;
    unsigned char *data = hx_slurp(path, &n);
    rec_sink r;
    pb_error err;
    pb_status st;
    if (!data) {
        ok(0, "open %s", path);
        return;
    }
    rec_init(&r);
    st = pb_decode_mem(data, n, path, PB_FMT_UNKNOWN, NULL, &r.sink, &err);
    ok(st == PB_OK && r.fid_defined_before_use && r.count[PB_T_PID_START] == r.count[PB_T_PID_END],
       "%s decodes; fids dense and defined before use; PID pairs (%s)", path, err.message);
    for (i = 0; i + 1 < n; i++) {
        rec_init(&r);
        st = pb_decode_mem(data, i, path, PB_FMT_EASYPROFILER, NULL, &r.sink, &err);
        if (st == PB_OK) {
            /* a cut exactly between threads of a pre-2.1 file, or before the 2.1 tail, is a whole file */
            continue;
        }
        if (st != PB_ERR_TRUNCATED || !err.has_offset || err.offset > i)
            bad++;
    }
    ok(bad == 0, "%s: every cut fails as truncated at or before the cut (%zu bad)", path, bad);
    free(data);
}

int main(int argc, char **argv)
{
    int i;
    test_long_block();
    test_nesting(254, 1);
    test_nesting(255, 0);
    test_bad_input();
    test_selection_and_threads();
    test_zero_blocks();
    for (i = 1; i < argc; i++) {
        char path[1024];
        static const char *const files[] = {"ep_basic.prof", "ep_recursion.prof", "ep_threads.prof",
                                            "ep_values.prof", "ep_bookmarks.prof", "ep_v120_threads.prof",
                                            "ep_open_block.prof"};
        size_t k;
        for (k = 0; k < sizeof files / sizeof files[0]; k++) {
            snprintf(path, sizeof path, "%s/%s", argv[i], files[k]);
            test_file(path);
        }
    }
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
