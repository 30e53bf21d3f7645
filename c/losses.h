/* losses.h - counting what a conversion loses, in the decode that reads the
 * input (losses() and --report in the Perl API; profbridge info).
 *
 * The rules are pb_loss lists (formats.h): a format row's own and the common
 * ones (pb_losses_common, outputs.h).  A pb_loss_count is a chunk sink that
 * counts, rule by rule, what each chunk adds ("attr:", "pct:", "status:",
 * "sum:", "keys:", "comments:", "chunks:"), and hands the chunk on to next
 * (NULL: it only counts).  So `info` and `convert --report` read their input
 * once: the counter rides along with the decode that feeds the writer or
 * the tag counts.  The Perl side only words the counts (the rule's notes,
 * the target's keeps: Devel::ProfileBridge::_losses_worded).
 *
 * Memory: one counter per rule, and the last value of each ATTRIBUTE a rule
 * or a note names ({attr:NAME}); nothing grows with the input.
 */
#ifndef PB_LOSSES_H
#define PB_LOSSES_H

#include <stddef.h>
#include <stdint.h>
#include "chunk.h"
#include "formats.h"

#define PB_LOSS_RULES_MAX 32 /* rules per format, its own and the common ones */
#define PB_LOSS_ATTRS_MAX 32 /* ATTRIBUTEs the rules read */

typedef struct {
    pb_sink sink;   /* feed the input's chunks here */
    pb_sink *next;  /* where each goes on to (NULL: nowhere) */
    /* the rules in the order losses() lists them: the own and common ones
     * that are not PB_LOSS_LATE, then the late own, then the late common */
    const pb_loss *rule[PB_LOSS_RULES_MAX];
    size_t n;
    unsigned char kind[PB_LOSS_RULES_MAX]; /* the count's kind (losses.c) */
    const char *arg[PB_LOSS_RULES_MAX];  /* what follows "kind:" */
    int slot[PB_LOSS_RULES_MAX];         /* attr, pct, status: its attr[]; chunks: its tag */
    uint64_t num[PB_LOSS_RULES_MAX];     /* keys, comments; sum while whole */
    double fsum[PB_LOSS_RULES_MAX];      /* sum once a value is not a whole number */
    int fractional[PB_LOSS_RULES_MAX];
    struct {
        const char *name; /* in a rule: not NUL-terminated there */
        size_t len;
        char *val;        /* its last value (NULL: not seen) */
        size_t vlen;
    } attr[PB_LOSS_ATTRS_MAX];
    size_t nattr;
    uint64_t tags[PB_TAG_COUNT];         /* chunks per tag */
    int oom;              /* a value could not be kept: the counts are unreliable */
    int full;             /* more rules or ATTRIBUTEs than the arrays hold (a table grew past them) */
    const pb_loss *common; /* pb_loss_count_init_by_row: the common rules, */
    int by_row;            /* and the own ones still to take from sink.row */
} pb_loss_count;

/* own: the format's rules (NULL: none); common: every format's */
void pb_loss_count_init(pb_loss_count *lc, const pb_loss *own, const pb_loss *common, pb_sink *next);
/* The same, the format's own rules taken from the row the driver hands the
 * sink (sink.row, set before the decoder runs) when the first chunk
 * arrives: the rules of the decoder that really reads the input, without
 * sniffing it beforehand (one open of the input, not two). */
void pb_loss_count_init_by_row(pb_loss_count *lc, const pb_loss *common, pb_sink *next);
void pb_loss_count_free(pb_loss_count *lc);
/* count one chunk (what the sink does before handing it on) */
void pb_loss_count_chunk(pb_loss_count *lc, const pb_chunk *c);
/* chunks a producer skipped, per tag (pb_sink.skipped, chunk.h): counted as
 * if each had gone by (no rule reads more of a TIME_LINE or SUB_CALLERS than
 * its tag) */
void pb_loss_count_skipped(pb_loss_count *lc, const uint64_t *skipped);
/* rule i's count as the text losses() shows ("0": nothing lost), into buf */
const char *pb_loss_count_text(const pb_loss_count *lc, size_t i, char *buf, size_t cap);
/* 1 when that text is a number (0 for "attr:" values and "pct:" texts) */
int pb_loss_count_is_number(const pb_loss_count *lc, size_t i);

#endif
