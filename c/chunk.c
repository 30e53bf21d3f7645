/* chunk.c - tag tables and small sink helpers. */
#include <stdio.h>
#include "chunk.h"

const char *const pb_tag_name[PB_TAG_COUNT] = {
    "VERSION", "COMMENT", "ATTRIBUTE", "OPTION", "START_DEFLATE", "PID_START",
    "PID_END", "NEW_FID", "TIME_LINE", "TIME_BLOCK", "DISCOUNT", "SRC_LINE",
    "SUB_INFO", "SUB_CALLERS", "SUB_ENTRY", "SUB_RETURN",
};

/* u = unsigned int, i = I32 ticks, n = NV, s = string (NYTProf.xs callback_info[]) */
const char *const pb_tag_sig[PB_TAG_COUNT] = {
    "uu",        /* VERSION */
    "s",         /* COMMENT */
    "ss",        /* ATTRIBUTE */
    "ss",        /* OPTION */
    "",          /* START_DEFLATE */
    "uun",       /* PID_START */
    "un",        /* PID_END */
    "uuuuuus",   /* NEW_FID */
    "iuu",       /* TIME_LINE */
    "iuuuu",     /* TIME_BLOCK */
    "",          /* DISCOUNT */
    "uus",       /* SRC_LINE */
    "uuus",      /* SUB_INFO */
    "uuunnnuss", /* SUB_CALLERS */
    "uu",        /* SUB_ENTRY */
    "unns",      /* SUB_RETURN */
};

pb_tag pb_tag_from_name(const char *name, size_t len)
{
    int t;
    for (t = 0; t < PB_TAG_COUNT; t++)
        if (strlen(pb_tag_name[t]) == len && memcmp(pb_tag_name[t], name, len) == 0)
            return (pb_tag)t;
    return PB_TAG_COUNT;
}

int pb_emit_attribute(pb_sink *s, const char *key, const char *value)
{
    pb_chunk c;
    pb_chunk_attribute(&c, pb_str_c(key), pb_str_c(value));
    return pb_emit(s, &c);
}

int pb_emit_attribute_u64(pb_sink *s, const char *key, uint64_t value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)value);
    return pb_emit_attribute(s, key, buf);
}

char *pb_fmt_double(char *buf, size_t size, double value)
{
    int p;
    /* shortest form that round-trips */
    for (p = 15; p <= 17; p++) {
        double back;
        snprintf(buf, size, "%.*g", p, value);
        if (sscanf(buf, "%lf", &back) == 1 && back == value)
            break;
    }
    return buf;
}

int pb_emit_attribute_double(pb_sink *s, const char *key, double value)
{
    char buf[64];
    return pb_emit_attribute(s, key, pb_fmt_double(buf, sizeof buf, value));
}

int pb_emit_comment(pb_sink *s, const char *text_with_newline)
{
    pb_chunk c;
    pb_chunk_comment(&c, pb_str_c(text_with_newline));
    return pb_emit(s, &c);
}

static int count_chunk(pb_sink *self, const pb_chunk *c)
{
    pb_count_sink *cs = (pb_count_sink *)self->ctx;
    cs->count[c->tag]++;
    return 0;
}

void pb_count_sink_init(pb_count_sink *cs)
{
    memset(cs, 0, sizeof *cs);
    cs->sink.chunk = count_chunk;
    cs->sink.ctx = cs;
}
