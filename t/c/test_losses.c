/* test_losses - the loss counter (c/losses.c) on chunks made here, against
 * counts worked out by hand: every kind of count, the glob patterns, the
 * order losses() lists the rules in, and the chunks handed on unchanged.
 *
 *   test_losses
 */
#include <stdio.h>
#include <string.h>
#include "losses.h"
#include "tap.h"

static const pb_loss own[] = {
    { "late own", "chunks:TIME_LINE", NULL, PB_LOSS_STACKS | PB_LOSS_LATE, "*=x" },
    { "bookmarks", "keys:bookmark_#_pos", NULL, 0, "*=x" },
    { "switches", "sum:thread_*_switches", NULL, 0, "*=x" },
    { "values", "comments:value *|other *", NULL, 0, "*=x" },
    { "flags", "status:hist", NULL, 0, "*=x" },
    { "rate", "pct:rate", NULL, 0, "*=x" },
    { "zero rate", "pct:zero", NULL, 0, "*=x" },
    { "opcodes", "attr:ops", NULL, 0, "*=x {attr:named}" },
    { "absent", "attr:nowhere", NULL, 0, "*=x" },
    { NULL, NULL, NULL, 0, NULL }
};
static const pb_loss common[] = {
    { "late common", "chunks:SRC_LINE", NULL, PB_LOSS_LATE, "*=x" },
    { "early common", "sum:weights", NULL, 0, "*=x" },
    { NULL, NULL, NULL, 0, NULL }
};

/* the sink after the counter: counts what reaches it */
static int passed[PB_TAG_COUNT];
static int next_chunk(pb_sink *self, const pb_chunk *c)
{
    (void)self;
    passed[c->tag]++;
    return 0;
}

static void attr(pb_sink *s, const char *k, const char *v)
{
    pb_chunk c;
    memset(&c, 0, sizeof c);
    c.tag = PB_T_ATTRIBUTE;
    c.s[0] = pb_str_c(k);
    c.s[1] = pb_str_c(v);
    pb_emit(s, &c);
}

static void tagged(pb_sink *s, pb_tag t, const char *text)
{
    pb_chunk c;
    memset(&c, 0, sizeof c);
    c.tag = t;
    c.s[0] = pb_str_c(text ? text : "");
    pb_emit(s, &c);
}

static const char *text_of(const pb_loss_count *lc, const char *what, char *buf, size_t cap)
{
    size_t i;
    for (i = 0; i < lc->n; i++)
        if (strcmp(lc->rule[i]->what, what) == 0)
            return pb_loss_count_text(lc, i, buf, cap);
    return "(no such rule)";
}

int main(void)
{
    pb_sink next;
    pb_loss_count lc;
    char buf[80];
    const char *order[] = { "bookmarks", "switches", "values", "flags", "rate", "zero rate", "opcodes", "absent",
                            "early common", "late own", "late common" };
    size_t i;
    int t;
    memset(&next, 0, sizeof next);
    next.chunk = next_chunk;
    pb_loss_count_init(&lc, own, common, &next);

    ok(lc.n == 11, "11 rules (%zu)", lc.n);
    for (i = 0; i < lc.n && i < 11; i++)
        ok(strcmp(lc.rule[i]->what, order[i]) == 0, "rule %zu is %s (%s)", i, order[i], lc.rule[i]->what);

    /* the ATTRIBUTEs, key and value, in order */
    static const char *const attrs[][2] = {
        /* keys:bookmark_#_pos: # is one or more digits, the whole key */
        { "bookmark_1_pos", "5" }, { "bookmark_22_pos", "5" },
        { "bookmark__pos", "5" },    /* no digit */
        { "bookmark_3_pos_x", "5" }, /* more after */
        { "xbookmark_4_pos", "5" },  /* more before */
        /* sum:thread_*_switches: the values, 2 + 3 + 0.5 */
        { "thread_1_switches", "2" }, { "thread_abc_switches", "3" }, { "thread__switches", "0.5" },
        { "thread_1_switch", "100" },
        /* sum:weights: whole numbers stay whole */
        { "weights", "7" }, { "weights", "8" },
        /* status:hist: the counts of every key but "0" (and "") */
        { "hist", "0:10,1:4,3:5,00:2,:9" },
        /* pct: a positive number as a percentage; 0 is no loss */
        { "rate", "1.5" }, { "zero", "0" },
        /* attr: the last value */
        { "ops", "12" }, { "ops", "13" }, { "named", "a note's value" },
    };
    for (i = 0; i < sizeof attrs / sizeof *attrs; i++)
        attr(&lc.sink, attrs[i][0], attrs[i][1]);
    /* comments: either alternative, from the start */
    tagged(&lc.sink, PB_T_COMMENT, "value 1\n");
    tagged(&lc.sink, PB_T_COMMENT, "other x");
    tagged(&lc.sink, PB_T_COMMENT, "a value 2");
    tagged(&lc.sink, PB_T_COMMENT, "value");
    for (t = 0; t < 4; t++)
        tagged(&lc.sink, PB_T_TIME_LINE, NULL);
    tagged(&lc.sink, PB_T_SRC_LINE, "x");

    ok(strcmp(text_of(&lc, "bookmarks", buf, sizeof buf), "2") == 0, "bookmarks: 2 (%s)", buf);
    ok(strcmp(text_of(&lc, "switches", buf, sizeof buf), "5.5") == 0, "switches: 5.5 (%s)", buf);
    ok(strcmp(text_of(&lc, "early common", buf, sizeof buf), "15") == 0, "weights: 15 (%s)", buf);
    ok(strcmp(text_of(&lc, "flags", buf, sizeof buf), "11") == 0, "flags: 4 + 5 + 2 = 11 (%s)", buf);
    ok(strcmp(text_of(&lc, "rate", buf, sizeof buf), "1.5%") == 0, "rate: 1.5%% (%s)", buf);
    ok(strcmp(text_of(&lc, "zero rate", buf, sizeof buf), "0") == 0, "zero rate: 0 (%s)", buf);
    ok(strcmp(text_of(&lc, "opcodes", buf, sizeof buf), "13") == 0, "opcodes: the last value, 13");
    ok(strcmp(text_of(&lc, "absent", buf, sizeof buf), "0") == 0, "an ATTRIBUTE never seen: 0");
    ok(strcmp(text_of(&lc, "values", buf, sizeof buf), "2") == 0, "values: 2 comments (%s)", buf);
    ok(strcmp(text_of(&lc, "late own", buf, sizeof buf), "4") == 0, "TIME_LINE: 4 (%s)", buf);
    ok(strcmp(text_of(&lc, "late common", buf, sizeof buf), "1") == 0, "SRC_LINE: 1 (%s)", buf);
    {
        int kept = 0;
        for (i = 0; i < lc.nattr; i++)
            if (lc.attr[i].len == 5 && !memcmp(lc.attr[i].name, "named", 5) && lc.attr[i].val &&
                strcmp(lc.attr[i].val, "a note's value") == 0)
                kept = 1;
        ok(kept, "a note's {attr:named} is kept");
    }
    ok(passed[PB_T_ATTRIBUTE] == 17 && passed[PB_T_COMMENT] == 4 && passed[PB_T_TIME_LINE] == 4 &&
           passed[PB_T_SRC_LINE] == 1,
       "every chunk reaches the next sink (%d ATTRIBUTE, %d COMMENT)", passed[PB_T_ATTRIBUTE],
       passed[PB_T_COMMENT]);
    ok(next.seq == 26, "... through pb_emit (seq %llu)", (unsigned long long)next.seq);
    ok(!lc.full && !lc.oom, "nothing dropped");
    pb_loss_count_free(&lc);
    printf("1..%d\n", tests);
    return failures ? 1 : 0;
}
