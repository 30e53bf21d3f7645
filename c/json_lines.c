/* json_lines.c - one chunk as one JSON array per line, with exactly the
 * conventions of ../shared/tools/nytprof-dump-chunks: integers as JSON
 * integers (ticks as NYTProf delivers them: sv_setuv of the I32, so a
 * negative count shows as 2**64+x), NVs in the shortest of %.15g/%.16g/%.17g
 * that round-trips ("Inf"/"-Inf"/"NaN" as strings), strings as the Perl
 * characters of the value, ASCII-only with \uXXXX escapes (a byte string
 * shows bytes 0x80-0xFF as \u0080-\u00ff, a UTF-8 string its characters;
 * a byte of a UTF-8 string that does not start a valid sequence shows as a
 * byte string's would, so no string comes out as a lone surrogate).
 */
#include <stdio.h>
#include <stdlib.h>
#include "json_lines.h"
#include "output.h"
#include "util.h"

void pb_json_str(FILE *o, const pb_str *s)
{
    size_t i = 0;
    fputc('"', o);
    while (i < s->len) {
        unsigned long cp;
        unsigned char b = (unsigned char)s->ptr[i];
        size_t n;
        if (s->utf8 && b >= 0x80 && (n = pb_utf8_seq(s->ptr, s->len, i)) > 1) {
            /* a valid sequence (pb_utf8_seq: shortest form, no surrogates) */
            size_t k;
            cp = n == 4 ? (b & 0x07u) : n == 3 ? (b & 0x0Fu) : (b & 0x1Fu);
            for (k = 1; k < n; k++)
                cp = (cp << 6) | ((unsigned char)s->ptr[i + k] & 0x3Fu);
            i += n;
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

void pb_json_chunk(FILE *o, const pb_chunk *c)
{
    const char *sig = pb_tag_sig[c->tag];
    int ui = 0, ni = 0, si = 0;
    fprintf(o, "[\"%s\"", pb_tag_name[c->tag]);
    for (; *sig; sig++) {
        fputc(',', o);
        switch (*sig) {
        case 'u': fprintf(o, "%lu", (unsigned long)c->u[ui++]); break;
        case 'i': fprintf(o, "%llu", (unsigned long long)(uint64_t)(int64_t)c->ticks); break;
        case 'n': put_float(o, c->n[ni++]); break;
        case 's': pb_json_str(o, &c->s[si++]); break;
        }
    }
    fputs("]\n", o);
}


static int json_sink_chunk(pb_sink *self, const pb_chunk *c)
{
    pb_json_chunk((FILE *)self->ctx, c);
    return 0;
}

void pb_json_sink_init(pb_sink *sink, FILE *out)
{
    memset(sink, 0, sizeof *sink);
    sink->chunk = json_sink_chunk;
    sink->ctx = out;
}

typedef struct {
    const char *in;
    pb_format fmt;
    const pb_options *opt;
} json_args;

static pb_status json_write(FILE *fp, void *ctx, pb_error *werr, pb_error *err)
{
    const json_args *a = (const json_args *)ctx;
    pb_sink sink;
    (void)werr;
    pb_json_sink_init(&sink, fp);
    return pb_decode_file(a->in, a->fmt, a->opt, &sink, err);
}

pb_status pb_convert_json_lines(const char *in, pb_format fmt, const pb_options *opt, const char *out_path,
                                pb_error *err)
{
    json_args a;
    a.in = in;
    a.fmt = fmt;
    a.opt = opt;
    return pb_output_with(out_path, "dump", json_write, &a, err);
}
