/* json_feed.c - feeding yajl block by block (json_feed.h). */
#include "json_feed.h"
#ifndef PB_NO_YAJL
#include <stdio.h>
#include <yajl/yajl_parse.h>

int pb_json_feed_open(pb_json_feed *f, const void *cb, void *ctx, int one_value)
{
    f->h = yajl_alloc((const yajl_callbacks *)cb, NULL, ctx);
    if (!f->h)
        return -1;
    yajl_config((yajl_handle)f->h, yajl_allow_trailing_garbage, one_value ? 1 : 0);
    return 0;
}

void pb_json_feed_close(pb_json_feed *f)
{
    if (f->h)
        yajl_free((yajl_handle)f->h);
    f->h = NULL;
    pb_src_cursor_free(&f->rd);
}

int pb_json_feed_push(pb_json_feed *f, int c)
{
    if (f->depth >= PB_JSON_MAX_NEST) {
        if (!f->fail) {
            f->fail = PB_ERR_CORRUPT;
            snprintf(f->why, sizeof f->why, "JSON nested deeper than %u levels", PB_JSON_MAX_NEST);
        }
        return 0;
    }
    if (f->depth < PB_JSON_CTX)
        f->ctx[f->depth] = (unsigned char)c;
    f->depth++;
    return 1;
}

/* yajl's own message for a parse of b[0..n) that failed, on one line
 * ("JSON syntax error" when it has none), into msg[cap]; returns msg */
static char *error_line(void *h, const unsigned char *b, size_t n, char *msg, size_t cap)
{
    unsigned char *e = yajl_get_error((yajl_handle)h, 0, b, n);
    size_t k;
    snprintf(msg, cap, "%s", e ? (const char *)e : "JSON syntax error");
    if (e)
        yajl_free_error((yajl_handle)h, e);
    for (k = 0; msg[k]; k++) /* yajl's message ends with a newline */
        if (msg[k] == '\n')
            msg[k] = ' ';
    while (k && msg[k - 1] == ' ')
        msg[--k] = '\0';
    return msg;
}

/* the error of a parse that did not return yajl_status_ok */
static pb_status parse_error(pb_json_feed *f, yajl_status ys, const unsigned char *b, size_t n, pb_error *err)
{
    uint64_t off = f->chunk_off + yajl_get_bytes_consumed((yajl_handle)f->h);
    char msg[160];
    if (ys == yajl_status_client_canceled) {
        if (f->done)
            return PB_OK;
        if (err->status) /* a sink's error, already filled */
            return err->status;
        if (f->sink_failed) /* a consumer that stopped (PB_ERR_ABORT) */
            return f->fail;
        return pb_fail(err, f->fail ? f->fail : PB_ERR_CORRUPT, off, "%s", f->why);
    }
    return pb_fail(err, PB_ERR_CORRUPT, off, "bad JSON: %s", error_line(f->h, b, n, msg, sizeof msg));
}

pb_status pb_json_feed_block(pb_json_feed *f, const unsigned char *b, size_t n, uint64_t off, pb_error *err)
{
    yajl_status ys;
    f->chunk = b;
    f->chunk_len = n;
    f->chunk_off = off;
    ys = n ? yajl_parse((yajl_handle)f->h, b, n) : yajl_complete_parse((yajl_handle)f->h);
    return ys == yajl_status_ok ? PB_OK : parse_error(f, ys, b, n, err);
}

pb_status pb_json_feed_end(pb_json_feed *f, uint64_t off, pb_error *err)
{
    pb_status st = pb_json_feed_block(f, NULL, 0, off, err);
    /* yajl ends a document cut short with a syntax error: say truncated */
    if (st == PB_ERR_CORRUPT && f->depth > 0 && !f->fail) {
        err->status = PB_OK;
        st = pb_fail(err, PB_ERR_TRUNCATED, off, "the JSON object ends before it is closed (%u level%s open)", f->depth,
                     f->depth == 1 ? "" : "s");
    }
    return st;
}

pb_status pb_json_feed_source(pb_json_feed *f, pb_source *s, size_t block, pb_error *err)
{
    pb_status st = PB_OK;
    int got;
    while (st == PB_OK && (got = pb_src_need(s, 1)) > 0) {
        size_t n = pb_src_avail(s);
        if (n > block)
            n = block;
        st = pb_json_feed_block(f, s->p, n, pb_src_offset(s), err);
        s->p += n;
    }
    if (st == PB_OK && got < 0)
        st = err->status ? err->status : PB_ERR_IO;
    if (st == PB_OK)
        st = pb_json_feed_end(f, pb_src_offset(s), err);
    return st;
}

pb_status pb_json_feed_cursor(pb_json_feed *f, const pb_source *s, uint64_t at, size_t block, int cut_ends,
                              pb_error *err, int *unclosed)
{
    const unsigned char *b;
    size_t n;
    pb_status st;
    if (!f->started) {
        /* from the byte after the array's key: its ':' and white space */
        f->started = at ? 2 : 1;
        pb_src_cursor_open(&f->rd, s, at, block, at ? ": \t\r\n" : NULL);
    }
    if ((st = pb_src_cursor_next(&f->rd, &b, &n, err)) != PB_OK)
        return st;
    if (n == 0 && cut_ends) {
        f->done = 1; /* the cut: what came before it is all there is */
        return PB_OK;
    }
    if (n == 0) {
        st = pb_json_feed_block(f, NULL, 0, f->rd.pos, err);
        *unclosed = st == PB_OK && !f->done;
        return st;
    }
    return pb_json_feed_block(f, b, n, f->rd.pos - n, err);
}
pb_status pb_json_lockstep_run(const pb_json_lockstep *l)
{
    pb_status st = PB_OK;
    int i;
    for (;;) {
        for (i = 0; i < 2; i++)
            while (st == PB_OK && !l->queued(l->ctx, i) && !l->f[i]->done)
                st = l->step(l->ctx, i);
        if (st != PB_OK || !l->queued(l->ctx, 0) || !l->queued(l->ctx, 1))
            return st;
        if ((st = l->pair(l->ctx)) != PB_OK)
            return st;
    }
}

#endif
