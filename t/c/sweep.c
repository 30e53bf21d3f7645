/* sweep - the bad-input sweep over every profile under the given paths.
 *
 * For each file that detect.c recognises: decode it whole, then decode it
 * cut at every byte offset, and with one byte flipped at every offset.
 * Files over 64 KB: the first and last 4 KB of offsets plus 4,000 spread
 * evenly (offsets jittered by a seeded PRNG; the seed is printed, -s SEED
 * replays a run).  Every decode must either succeed or fail with a filled
 * error record of class truncated/corrupt/unsupported/limit -- never crash
 * (run it under -fsanitize=address,undefined), never hang (an alarm per
 * decode), and never allocate beyond what the input justifies (the
 * address-space limit below; ASan: max_allocation_size_mb).
 *
 * -n N samples instead: N cut and N flip offsets per file (the first and
 * last N/4 bytes, the rest spread evenly, jittered): the quick run of
 * make test; the exhaustive run is xt/.
 *
 * A budget of decode work per file (-b CHUNKS, default 2^29): a file whose
 * intact decode sends c chunks (a failing decode counts the chunks it sent
 * before failing) gets at most CHUNKS / (2 c) cut and flip offsets each,
 * and never fewer than 256, picked as -n picks them.  Cost per decode is
 * about the chunks it sends, so a file that expands a few KB into millions
 * of chunks (a compressed NYTProf recursion, a fuzz input that runs to
 * max_statements) no longer takes most of the sweep: under ASan in CI one
 * such 3 KB file took longer than every other file together.  The files
 * that are cheap per decode (all but a few) keep every offset.
 *
 *   sweep [-s SEED] [-q] [-j JOBS] [-n N] [-b CHUNKS] PATH...   exit 0 when every file passed
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pb.h"
#include "harness.h"

static const char *g_file;
static size_t g_off;
static const char *g_what;
static unsigned long g_checksum;
static int g_quiet;
static size_t g_sample; /* -n: offsets per file (0: all, or the 64 KB rule) */
static unsigned long long g_decodes;
static unsigned long long g_chunks;              /* chunks sent, all decodes */
static unsigned long long g_budget = 1ULL << 29; /* -b: chunks per file, cut and flip together */
#define SWEEP_MIN_OFFSETS 256

static void on_alarm(int sig)
{
    (void)sig;
    fprintf(stderr, "FAIL hang: %s %s at offset %lu (more than 20 s)\n", g_file, g_what, (unsigned long)g_off);
    _exit(3);
}

/* touch everything the chunk points to, so ASan sees stale pointers */
static int touch_chunk(pb_sink *self, const pb_chunk *c)
{
    (void)self;
    g_checksum = hx_touch(c, g_checksum) + (unsigned long)c->tag + c->u[0];
    g_chunks++;
    return 0;
}

static void quiet_warn(pb_sink *self, const char *msg)
{
    (void)self;
    g_checksum += strlen(msg);
}

static unsigned long long rng_state;
static unsigned long long rng(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static int check_one(const unsigned char *data, size_t len, const char *name, int must_succeed)
{
    pb_sink sink;
    pb_error err;
    pb_status st;
    hx_sink_init(&sink, touch_chunk, quiet_warn, NULL);
    alarm(20);
    st = pb_decode_mem(data, len, name, PB_FMT_UNKNOWN, NULL, &sink, &err);
    alarm(0);
    g_decodes++;
    if (st == PB_OK)
        return 0;
    if (must_succeed) {
        char buf[2048];
        pb_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "FAIL %s: the intact file does not decode: %s\n", name, buf);
        return 1;
    }
    if (st != err.status || (st != PB_ERR_TRUNCATED && st != PB_ERR_CORRUPT && st != PB_ERR_UNSUPPORTED &&
                             st != PB_ERR_LIMIT)) {
        fprintf(stderr, "FAIL %s %s at offset %lu: status %d (record %d) is not a decode error class\n", name,
                g_what, (unsigned long)g_off, (int)st, (int)err.status);
        return 1;
    }
    if (err.message[0] == '\0' || err.format == NULL) {
        fprintf(stderr, "FAIL %s %s at offset %lu: error record without a message\n", name, g_what,
                (unsigned long)g_off);
        return 1;
    }
    return 0;
}

/* n offsets of a file of len > n bytes: the first and last n/4, the rest
 * spread evenly over the middle, jittered (*k receives how many) */
static size_t *pick_offsets(size_t len, size_t n, size_t *k_out)
{
    size_t k = 0, j, edge = n / 4;
    size_t *offsets = (size_t *)malloc(n * sizeof *offsets);
    if (!offsets) {
        *k_out = 0;
        return NULL;
    }
    for (j = 0; j < edge; j++)
        offsets[k++] = j;
    for (j = 0; j < edge; j++)
        offsets[k++] = len - edge + j;
    for (j = 0; k < n; j++) {
        size_t span = len - 2 * edge, rest = n - 2 * edge;
        offsets[k++] = edge + span * j / rest + (size_t)(rng() % (span / rest + 1));
    }
    *k_out = k;
    return offsets;
}

static int sweep_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    unsigned char *data, *copy;
    size_t len, n_offsets, i;
    size_t *offsets;
    struct stat stt;
    pb_format_info info;
    int fails = 0;
    unsigned long long before = g_decodes, chunks0;
    size_t cap;
    clock_t t0 = clock();
    if (!fp || fstat(fileno(fp), &stt) != 0) {
        fprintf(stderr, "FAIL cannot read %s\n", path);
        if (fp)
            fclose(fp);
        return 1;
    }
    len = (size_t)stt.st_size;
    data = (unsigned char *)malloc(len ? len : 1);
    copy = (unsigned char *)malloc(len ? len : 1);
    if (!data || !copy || fread(data, 1, len, fp) != len) {
        fclose(fp);
        free(data);
        free(copy);
        fprintf(stderr, "FAIL cannot read %s\n", path);
        return 1;
    }
    fclose(fp);
    pb_detect_bytes(data, len < 4096 ? len : 4096, &info);
    if (info.format == PB_FMT_UNKNOWN || !info.supported) {
        free(data);
        free(copy);
        return 0;
    }
    g_file = path;
    g_what = "intact";
    g_off = len;
    /* files under a directory named "bad" or "crashers" need not decode */
    chunks0 = g_chunks;
    fails += check_one(data, len, path, strstr(path, "/crashers/") == NULL && strstr(path, "/bad/") == NULL);
    chunks0 = g_chunks - chunks0 + 1;
    cap = (size_t)(g_budget / (2 * chunks0));
    if (cap < SWEEP_MIN_OFFSETS)
        cap = SWEEP_MIN_OFFSETS;

    if (g_sample && len > g_sample) {
        offsets = pick_offsets(len, g_sample, &n_offsets);
    } else if (len > cap && cap < (len <= 64 * 1024 ? len : 4096 * 2 + 4000)) {
        offsets = pick_offsets(len, cap, &n_offsets); /* the budget */
    } else if (len <= 64 * 1024) {
        n_offsets = len;
        offsets = (size_t *)malloc((n_offsets ? n_offsets : 1) * sizeof *offsets);
        for (i = 0; i < len; i++)
            offsets[i] = i;
    } else {
        size_t k = 0, j;
        n_offsets = 4096 * 2 + 4000;
        offsets = (size_t *)malloc(n_offsets * sizeof *offsets);
        for (j = 0; j < 4096; j++)
            offsets[k++] = j;
        for (j = 0; j < 4096; j++)
            offsets[k++] = len - 4096 + j;
        for (j = 0; j < 4000; j++) {
            size_t span = len - 8192;
            size_t base = 4096 + span * j / 4000;
            offsets[k++] = base + (size_t)(rng() % (span / 4000 + 1));
        }
        n_offsets = k;
    }
    for (i = 0; i < n_offsets; i++) {
        size_t off = offsets[i];
        unsigned char x;
        if (off >= len)
            continue;
        g_off = off;
        g_what = "cut";
        memcpy(copy, data, off);
        fails += check_one(copy, off, path, 0); /* a fresh buffer of exactly off bytes: ASan sees overreads */
        g_what = "flip";
        do {
            x = (unsigned char)(rng() & 0xFF);
        } while (x == 0);
        data[off] ^= x; /* flipped in place, restored below */
        fails += check_one(data, len, path, 0);
        data[off] ^= x;
        if (fails > 20)
            break;
    }
    free(offsets);
    free(data);
    free(copy);
    if (!g_quiet)
        printf("%s %s: %llu decodes in %.1f s, %s\n", fails ? "not ok" : "ok", path, g_decodes - before,
               (double)(clock() - t0) / CLOCKS_PER_SEC, fails ? "FAILED" : "no crash, no hang, every error classified");
    return fails;
}

static char **g_paths;
static size_t g_npaths, g_cappaths;

static void add_path(const char *p)
{
    if (g_npaths == g_cappaths) {
        g_cappaths = g_cappaths ? g_cappaths * 2 : 64;
        g_paths = (char **)realloc(g_paths, g_cappaths * sizeof *g_paths);
    }
    g_paths[g_npaths++] = strdup(p);
}

static int walk(const char *path)
{
    struct stat st;
    int fails = 0;
    if (stat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        struct dirent **names;
        int n = scandir(path, &names, NULL, alphasort), i;
        for (i = 0; i < n; i++) {
            if (names[i]->d_name[0] != '.') {
                size_t l = strlen(path) + strlen(names[i]->d_name) + 2;
                char *sub = (char *)malloc(l);
                snprintf(sub, l, "%s/%s", path, names[i]->d_name);
                fails += walk(sub);
                free(sub);
            }
            free(names[i]);
        }
        free(names);
    } else if (S_ISREG(st.st_mode)) {
        size_t l = strlen(path);
        /* ground truth and sources are not profiles (speedscope's files are
         * JSON: *.speedscope.json) */
        if ((l > 6 && !strcmp(path + l - 6, ".jsonl")) ||
            (l > 5 && !strcmp(path + l - 5, ".json") && !(l > 16 && !strcmp(path + l - 16, ".speedscope.json"))) ||
            (l > 8 && !strcmp(path + l - 8, ".json.gz")) || /* a real tool's JSON output, gzipped */
            (l > 4 && !strcmp(path + l - 4, ".txt")))
            return 0;
        add_path(path);
    }
    return fails;
}

int main(int argc, char **argv)
{
    int i, fails = 0, npaths = 0, jobs = 2;
    unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 16);
    struct rlimit rl;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-q"))
            g_quiet = 1;
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            g_sample = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-j") && i + 1 < argc)
            jobs = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else if (!strcmp(argv[i], "-b") && i + 1 < argc)
            g_budget = strtoull(argv[++i], NULL, 10) ? strtoull(argv[i], NULL, 10) : 1;
    }
    if (getenv("SWEEP_SEED"))
        seed = strtoull(getenv("SWEEP_SEED"), NULL, 10);
    rng_state = seed ? seed : 1;
    printf("# sweep seed %llu (replay with -s %llu)\n", seed, seed);
    fflush(stdout);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__has_feature)
    /* no decode of a small fixture may need more than 1 GiB of address space */
    rl.rlim_cur = rl.rlim_max = (rlim_t)1 << 30;
    setrlimit(RLIMIT_AS, &rl);
#else
    (void)rl;
#endif
    signal(SIGALRM, on_alarm);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") || !strcmp(argv[i], "-j") || !strcmp(argv[i], "-n") || !strcmp(argv[i], "-b")) {
            i++;
            continue;
        }
        if (!strcmp(argv[i], "-q"))
            continue;
        npaths++;
        fails += walk(argv[i]);
    }
    if (!npaths) {
        fprintf(stderr, "usage: sweep [-s SEED] [-q] [-j N] [-n N] [-b CHUNKS] PATH...\n");
        return 2;
    }
    {
        /* one worker per core (-j N); each file goes to the worker with the
         * least work so far, largest first (a file's work: its offsets times
         * its size), so that one worker is not left with the heavy files */
        int w, status;
        size_t k, j;
        size_t *order = (size_t *)calloc(g_npaths + 1, sizeof *order);
        int *owner = (int *)calloc(g_npaths + 1, sizeof *owner);
        double *cost = (double *)calloc(g_npaths + 1, sizeof *cost), load[64] = {0};
        if (!order || !owner || !cost) {
            perror("calloc");
            return 2;
        }
        if (jobs > 64)
            jobs = 64;
        for (k = 0; k < g_npaths; k++) {
            struct stat st;
            double sz = stat(g_paths[k], &st) == 0 ? (double)st.st_size : 0;
            double offs = g_sample ? 2.0 * (double)g_sample : sz > 65536 ? 2.0 * (8192 + 4000) : 2.0 * sz;
            cost[k] = offs * (sz + 1);
            order[k] = k;
        }
        for (k = 1; k < g_npaths; k++) /* insertion sort, largest first: a few hundred files */
            for (j = k; j > 0 && cost[order[j - 1]] < cost[order[j]]; j--) {
                size_t t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        for (k = 0; k < g_npaths; k++) {
            int best = 0;
            for (w = 1; w < jobs; w++)
                if (load[w] < load[best])
                    best = w;
            owner[order[k]] = best;
            load[best] += cost[order[k]];
        }
        for (w = 0; w < jobs; w++) {
            pid_t pid = fork();
            if (pid == 0) {
                int f = 0;
                rng_state = (seed ? seed : 1) + (unsigned long long)w * 7919u;
                for (k = 0; k < g_npaths; k++)
                    if (owner[k] == w)
                        f += sweep_file(g_paths[k]);
                fflush(stdout);
                _exit(f ? 1 : 0);
            }
            if (pid < 0) {
                perror("fork");
                return 2;
            }
        }
        while (wait(&status) > 0)
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fails++;
        free(order);
        free(owner);
        free(cost);
    }
    printf("%d passed, %d failed\n", fails ? 0 : 1, fails ? 1 : 0);
    printf("# %lu files, seed %llu\n", (unsigned long)g_npaths, seed);
    return fails ? 1 : 0;
}
