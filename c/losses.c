/* losses.c - the loss rules (pb_loss, formats.h) counted as the input is
 * decoded (losses.h).
 *
 * A rule's count is "kind:arg" (formats.h lists the kinds); init parses each
 * once into kind[], arg[] and slot[], so a chunk costs a switch on its tag
 * and, for ATTRIBUTE and COMMENT, the rules of that kind only.  Glob
 * patterns ("sum:", "keys:", "comments:") match the whole text: * any text,
 * # one or more digits, | between alternatives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format_row.h"
#include "losses.h"

enum { K_NONE, K_ATTR, K_PCT, K_STATUS, K_SUM, K_KEYS, K_COMMENTS, K_CHUNKS };

static const struct {
    const char *name;
    int kind;
} kinds[] = { { "attr", K_ATTR },     { "pct", K_PCT },   { "status", K_STATUS },     { "sum", K_SUM },
              { "keys", K_KEYS },     { "comments", K_COMMENTS }, { "chunks", K_CHUNKS } };

/* the slot of ATTRIBUTE name[0..len) among those kept (added; -1: no room) */
static int attr_slot(pb_loss_count *lc, const char *name, size_t len)
{
    size_t i;
    for (i = 0; i < lc->nattr; i++)
        if (lc->attr[i].len == len && memcmp(lc->attr[i].name, name, len) == 0)
            return (int)i;
    if (lc->nattr == PB_LOSS_ATTRS_MAX) {
        lc->full = 1;
        return -1;
    }
    lc->attr[lc->nattr].name = name;
    lc->attr[lc->nattr].len = len;
    lc->attr[lc->nattr].val = NULL;
    lc->attr[lc->nattr].vlen = 0;
    return (int)lc->nattr++;
}

/* the {attr:NAME} placeholders of a rule's notes: their values are kept too */
static void note_attrs(pb_loss_count *lc, const char *notes)
{
    const char *p = notes;
    while (p && (p = strstr(p, "{attr:")) != NULL) {
        const char *e = strchr(p + 6, '}');
        if (!e)
            break;
        (void)attr_slot(lc, p + 6, (size_t)(e - (p + 6)));
        p = e;
    }
}

static void add_rule(pb_loss_count *lc, const pb_loss *r)
{
    size_t i, k = lc->n;
    const char *colon;
    if (k == PB_LOSS_RULES_MAX) {
        lc->full = 1;
        return;
    }
    lc->rule[k] = r;
    lc->kind[k] = K_NONE;
    lc->slot[k] = -1;
    colon = strchr(r->count, ':');
    lc->arg[k] = colon ? colon + 1 : "";
    for (i = 0; colon && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == (size_t)(colon - r->count) && !memcmp(kinds[i].name, r->count, strlen(kinds[i].name)))
            lc->kind[k] = (unsigned char)kinds[i].kind;
    if (lc->kind[k] == K_ATTR || lc->kind[k] == K_PCT || lc->kind[k] == K_STATUS)
        lc->slot[k] = attr_slot(lc, lc->arg[k], strlen(lc->arg[k]));
    if (lc->kind[k] == K_CHUNKS)
        for (i = 0; i < PB_TAG_COUNT; i++)
            if (strcmp(pb_tag_name[i], lc->arg[k]) == 0)
                lc->slot[k] = (int)i;
    note_attrs(lc, r->notes);
    lc->n++;
}

static int counter_chunk(pb_sink *self, const pb_chunk *c)
{
    pb_loss_count *lc = (pb_loss_count *)self->ctx;
    if (lc->by_row) {
        /* the first chunk: the rules of the row the driver handed over
         * (nothing counted yet; the sink as its users set it is kept) */
        pb_sink keep = lc->sink;
        pb_loss_count_init(lc, keep.row ? keep.row->losses : NULL, lc->common, lc->next);
        lc->sink = keep;
    }
    pb_loss_count_chunk(lc, c);
    return lc->next ? pb_emit(lc->next, c) : 0;
}

static void counter_warn(pb_sink *self, const char *msg)
{
    pb_loss_count *lc = (pb_loss_count *)self->ctx;
    if (lc->next && lc->next->warn)
        lc->next->warn(lc->next, msg);
}

void pb_loss_count_init(pb_loss_count *lc, const pb_loss *own, const pb_loss *common, pb_sink *next)
{
    const pb_loss *r;
    int late;
    memset(lc, 0, sizeof *lc);
    lc->next = next;
    lc->common = common;
    lc->sink.chunk = counter_chunk;
    lc->sink.warn = counter_warn;
    lc->sink.ctx = lc;
    lc->sink.cleanups = next ? next->cleanups : NULL;
    /* losses()'s order: the early rules (own, common), the late own, the late common */
    for (r = own; r && r->what; r++)
        if (!(r->flags & PB_LOSS_LATE))
            add_rule(lc, r);
    for (r = common; r && r->what; r++)
        if (!(r->flags & PB_LOSS_LATE))
            add_rule(lc, r);
    for (late = 0; late < 2; late++)
        for (r = late ? common : own; r && r->what; r++)
            if (r->flags & PB_LOSS_LATE)
                add_rule(lc, r);
}

void pb_loss_count_free(pb_loss_count *lc)
{
    size_t i;
    for (i = 0; i < lc->nattr; i++) {
        free(lc->attr[i].val);
        lc->attr[i].val = NULL;
    }
}

/* ---- globs -------------------------------------------------------------- */
static int losses_is_digit(char c) { return c >= '0' && c <= '9'; }

/* does pattern p[0..pn) match all of s[0..sn) */
static int glob_one(const char *p, size_t pn, const char *s, size_t sn)
{
    size_t k;
    if (pn == 0)
        return sn == 0;
    if (*p == '*') {
        for (k = 0; k <= sn; k++)
            if (glob_one(p + 1, pn - 1, s + k, sn - k))
                return 1;
        return 0;
    }
    if (*p == '#') {
        for (k = 0; k < sn && losses_is_digit(s[k]); k++)
            if (glob_one(p + 1, pn - 1, s + k + 1, sn - k - 1))
                return 1;
        return 0;
    }
    return sn > 0 && *s == *p && glob_one(p + 1, pn - 1, s + 1, sn - 1);
}

static int glob_match(const char *pat, const char *s, size_t sn)
{
    for (;;) {
        const char *bar = strchr(pat, '|');
        size_t pn = bar ? (size_t)(bar - pat) : strlen(pat);
        if (glob_one(pat, pn, s, sn))
            return 1;
        if (!bar)
            return 0;
        pat = bar + 1;
    }
}

/* ---- numbers as Perl reads a string in numeric context ------------------ */
static double num_of(const char *p, size_t len)
{
    char buf[64];
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return strtod(buf, NULL);
}

static void add_num(pb_loss_count *lc, size_t i, double v)
{
    if (!lc->fractional[i] && v >= 0 && v < 9007199254740992.0 && v == (double)(uint64_t)v) {
        lc->num[i] += (uint64_t)v;
        return;
    }
    lc->fractional[i] = 1;
    lc->fsum[i] += v;
}

static void keep_attr(pb_loss_count *lc, const pb_str *key, const pb_str *val)
{
    size_t i;
    for (i = 0; i < lc->nattr; i++) {
        char *v;
        if (lc->attr[i].len != key->len || memcmp(lc->attr[i].name, key->ptr, key->len) != 0)
            continue;
        if (!(v = (char *)realloc(lc->attr[i].val, val->len + 1))) {
            lc->oom = 1;
            return;
        }
        memcpy(v, val->ptr, val->len);
        v[val->len] = '\0';
        lc->attr[i].val = v;
        lc->attr[i].vlen = val->len;
    }
}

void pb_loss_count_chunk(pb_loss_count *lc, const pb_chunk *c)
{
    size_t i;
    lc->tags[c->tag]++;
    if (c->tag == PB_T_ATTRIBUTE) {
        keep_attr(lc, &c->s[0], &c->s[1]);
        for (i = 0; i < lc->n; i++) {
            if (lc->kind[i] != K_SUM && lc->kind[i] != K_KEYS)
                continue;
            if (!glob_match(lc->arg[i], c->s[0].ptr, c->s[0].len))
                continue;
            if (lc->kind[i] == K_KEYS)
                lc->num[i]++;
            else
                add_num(lc, i, num_of(c->s[1].ptr, c->s[1].len));
        }
    } else if (c->tag == PB_T_COMMENT) {
        for (i = 0; i < lc->n; i++)
            if (lc->kind[i] == K_COMMENTS && glob_match(lc->arg[i], c->s[0].ptr, c->s[0].len))
                lc->num[i]++;
    }
}

void pb_loss_count_skipped(pb_loss_count *lc, const uint64_t *skipped)
{
    int t;
    for (t = 0; t < PB_TAG_COUNT; t++)
        lc->tags[t] += skipped[t];
}

void pb_loss_count_init_by_row(pb_loss_count *lc, const pb_loss *common, pb_sink *next)
{
    pb_loss_count_init(lc, NULL, common, next);
    lc->by_row = 1;
}

/* ---- the counts as losses() shows them ------------------------------------ */
static const char *number_text(uint64_t whole, int fractional, double f, char *buf, size_t cap)
{
    if (fractional)
        snprintf(buf, cap, "%.15g", (double)whole + f);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)whole);
    return buf;
}

/* "k:count,...": the counts of every k but "" and "0" */
static const char *losses_status_text(const char *v, char *buf, size_t cap)
{
    uint64_t whole = 0;
    double f = 0;
    int fractional = 0;
    while (v && *v) {
        const char *end = strchr(v, ',');
        size_t len = end ? (size_t)(end - v) : strlen(v);
        const char *colon = (const char *)memchr(v, ':', len);
        size_t klen = colon ? (size_t)(colon - v) : len;
        if (klen && !(klen == 1 && *v == '0') && colon) {
            const char *cv = colon + 1;
            const char *ce = (const char *)memchr(cv, ':', (size_t)(v + len - cv));
            double n = num_of(cv, ce ? (size_t)(ce - cv) : (size_t)(v + len - cv));
            if (!fractional && n >= 0 && n < 9007199254740992.0 && n == (double)(uint64_t)n)
                whole += (uint64_t)n;
            else {
                fractional = 1;
                f += n;
            }
        }
        v = end ? end + 1 : NULL;
    }
    return number_text(whole, fractional, f, buf, cap);
}

/* a positive percentage ("1.5%"), else "0" */
static const char *pct_text(const char *v, char *buf, size_t cap)
{
    if (!v || !*v || strspn(v, "0123456789.eE+-") != strlen(v) || !(strtod(v, NULL) > 0))
        return "0";
    snprintf(buf, cap, "%s%%", v);
    return buf;
}

const char *pb_loss_count_text(const pb_loss_count *lc, size_t i, char *buf, size_t cap)
{
    const char *v = lc->slot[i] >= 0 && lc->kind[i] != K_CHUNKS ? lc->attr[lc->slot[i]].val : NULL;
    switch (lc->kind[i]) {
    case K_ATTR: return v ? v : "0";
    case K_PCT: return pct_text(v, buf, cap);
    case K_STATUS: return losses_status_text(v, buf, cap);
    case K_CHUNKS: return number_text(lc->slot[i] >= 0 ? lc->tags[lc->slot[i]] : 0, 0, 0, buf, cap);
    case K_SUM:
    case K_KEYS:
    case K_COMMENTS: return number_text(lc->num[i], lc->fractional[i], lc->fsum[i], buf, cap);
    default: return "0";
    }
}

int pb_loss_count_is_number(const pb_loss_count *lc, size_t i)
{
    return lc->kind[i] != K_ATTR && lc->kind[i] != K_PCT;
}
