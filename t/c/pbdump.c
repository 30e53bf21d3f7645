/* pbdump - decode a profile with the C core and print its chunk stream as
 * JSON Lines in exactly the conventions of ../shared/tools/nytprof-dump-chunks
 * (so outputs can be compared byte for byte).  A test and debugging tool.
 *
 *   pbdump [-f FORMAT] [-c] FILE      -c: only tag counts
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pb.h"

static void put_json_str(FILE *o, const pb_str *s)
{
    size_t i = 0;
    fputc('"', o);
    while (i < s->len) {
        unsigned long cp;
        unsigned char b = (unsigned char)s->ptr[i];
        if (s->utf8 && b >= 0x80) {
            int n = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
            int k;
            cp = n == 3 ? (b & 0x07u) : n == 2 ? (b & 0x0Fu) : n == 1 ? (b & 0x1Fu) : b;
            for (k = 1; k <= n && i + (size_t)k < s->len; k++)
                cp = (cp << 6) | ((unsigned char)s->ptr[i + (size_t)k] & 0x3Fu);
            i += (size_t)n + 1;
        } else {
            cp = b;
            i++;
        }
        switch (cp) {
        case '"': fputs("\\\"", o); break;
        case '\\': fputs("\\\\", o); break;
        case '\n': fputs("\\n", o); break;
        case '\r': fputs("\\r", o); break;
        case '\t': fputs("\\t", o); break;
        case '\b': fputs("\\b", o); break;
        case '\f': fputs("\\f", o); break;
        default:
            if (cp < 0x20 || (cp >= 0x7F && cp < 0x10000))
                fprintf(o, "\\u%04lx", cp);
            else if (cp >= 0x10000) {
                unsigned long v = cp - 0x10000;
                fprintf(o, "\\u%04lx\\u%04lx", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
            } else
                fputc((int)cp, o);
        }
    }
    fputc('"', o);
}

static void put_float(FILE *o, double v)
{
    char buf[64];
    int p;
    if (v != v) { fputs("\"NaN\"", o); return; }
    if (v - v != 0) { fputs(v > 0 ? "\"Inf\"" : "\"-Inf\"", o); return; }
    for (p = 15; p <= 17; p++) {
        double back;
        snprintf(buf, sizeof buf, "%.*g", p, v);
        back = strtod(buf, NULL);
        if (back == v)
            break;
    }
    fputs(buf, o);
}

static int dump_chunk(pb_sink *self, const pb_chunk *c)
{
    FILE *o = (FILE *)self->ctx;
    const char *sig = pb_tag_sig[c->tag];
    int ui = 0, ni = 0, si = 0;
    fprintf(o, "[\"%s\"", pb_tag_name[c->tag]);
    for (; *sig; sig++) {
        fputc(',', o);
        switch (*sig) {
        case 'u': fprintf(o, "%lu", (unsigned long)c->u[ui++]); break;
        case 'i': fprintf(o, "%llu", (unsigned long long)(uint64_t)(int64_t)c->ticks); break;
        case 'n': put_float(o, c->n[ni++]); break;
        case 's': put_json_str(o, &c->s[si++]); break;
        }
    }
    fputs("]\n", o);
    return 0;
}

static void warn_cb(pb_sink *self, const char *msg)
{
    (void)self;
    fprintf(stderr, "warning: %s\n", msg);
}

int main(int argc, char **argv)
{
    pb_sink sink;
    pb_count_sink cs;
    pb_error err;
    pb_format fmt = PB_FMT_UNKNOWN;
    int counts = 0, i;
    const char *file = NULL;
    pb_status st;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-f") && i + 1 < argc)
            fmt = pb_format_from_name(argv[++i]);
        else if (!strcmp(argv[i], "-c"))
            counts = 1;
        else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "usage: pbdump [-f FORMAT] [-c] FILE\n");
        return 1;
    }
    memset(&sink, 0, sizeof sink);
    sink.chunk = dump_chunk;
    sink.warn = warn_cb;
    sink.ctx = stdout;
    pb_count_sink_init(&cs);
    cs.sink.warn = warn_cb;
    st = pb_decode_file(file, fmt, NULL, counts ? &cs.sink : &sink, &err);
    if (counts)
        for (i = 0; i < PB_TAG_COUNT; i++)
            if (cs.count[i])
                printf("%s %llu\n", pb_tag_name[i], (unsigned long long)cs.count[i]);
    if (st != PB_OK) {
        char buf[2048];
        pb_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "%s\n", buf);
        return 2;
    }
    return 0;
}
