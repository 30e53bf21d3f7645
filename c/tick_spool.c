/* tick_spool.c - records per sample or marker, spooled (see tick_spool.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tick_spool.h"
#include "util.h"

void pb_tick_spool_init(pb_tick_spool *s, pb_error *err, const char *what, const char *oom)
{
    s->fd = -1;
    s->end = 0;
    s->err = err;
    s->what = what;
    s->oom = oom;
}

static pb_status tick_spool_spool_open(pb_tick_spool *s)
{
    char path[4200];
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir || strlen(dir) > 4000)
        dir = "/tmp";
    snprintf(path, sizeof path, "%s/.profbridge-spool.XXXXXX", dir);
    s->fd = mkstemp(path); /* O_CREAT | O_EXCL */
    if (s->fd < 0)
        return pb_fail(s->err, PB_ERR_IO, 0, "cannot create the writer's spool file in %s: %s", dir, strerror(errno));
    unlink(path);
    return PB_OK;
}

pb_status pb_tick_put(pb_tick_spool *s, pb_tick_chain *c, const pb_tick_rec *r)
{
    if (!c->buf && !(c->buf = (pb_tick_rec *)malloc(PB_TICK_BLK * sizeof *c->buf)))
        return pb_fail(s->err, PB_ERR_LIMIT, 0, "%s", s->oom);
    c->buf[c->n++] = *r;
    c->count++;
    if (c->n == PB_TICK_BLK) {
        const char *p = (const char *)c->buf;
        size_t left = PB_TICK_BLK * sizeof *c->buf;
        uint64_t at = s->end;
        if (s->fd < 0 && tick_spool_spool_open(s) != PB_OK)
            return s->err->status;
        if (pb_grow((void **)&c->blocks, &c->cblocks, c->nblocks + 1, sizeof *c->blocks) < 0)
            return pb_fail(s->err, PB_ERR_LIMIT, 0, "%s", s->oom);
        while (left) {
            ssize_t w = pwrite(s->fd, p, left, (off_t)at);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return pb_fail_write(s->err, s->what, w < 0 ? errno : EIO);
            p += w;
            left -= (size_t)w;
            at += (uint64_t)w;
        }
        c->blocks[c->nblocks++] = s->end;
        s->end = at;
        c->n = 0;
    }
    return PB_OK;
}

pb_status pb_tick_walk(pb_tick_spool *s, const pb_tick_chain *c, pb_tick_rec *tmp, pb_tick_fn fn, void *ctx)
{
    size_t b, i;
    for (b = 0; b < c->nblocks; b++) {
        char *p = (char *)tmp;
        size_t left = PB_TICK_BLK * sizeof *tmp;
        uint64_t at = c->blocks[b];
        while (left) {
            ssize_t r = pread(s->fd, p, left, (off_t)at);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return pb_fail(s->err, PB_ERR_IO, 0, "cannot read %s: %s", s->what,
                               r < 0 ? strerror(errno) : "short read");
            p += r;
            left -= (size_t)r;
            at += (uint64_t)r;
        }
        for (i = 0; i < PB_TICK_BLK; i++)
            fn(ctx, &tmp[i]);
    }
    for (i = 0; i < c->n; i++)
        fn(ctx, &c->buf[i]);
    return PB_OK;
}

void pb_tick_chain_free(pb_tick_chain *c) { PB_FREE_ALL(c->buf, c->blocks); }

void pb_tick_spool_close(pb_tick_spool *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}
