/* json_lines.c - one chunk as one JSON array per line, with exactly the
 * conventions of the developers' nytprof-dump-chunks (Devel::NYTProf's own
 * reader, chunk by chunk): integers as JSON
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
#include "util.h"

/* the letter of a short escape of cp (\" and \\ always, the others with
 * PB_JSON_SHORT), 0 for none */
static char short_escape(unsigned long cp, unsigned flags)
{
    switch (cp) {
    case '"': return '"';
    case '\\': return '\\';
    case '\n': return flags & PB_JSON_SHORT ? 'n' : 0;
    case '\r': return flags & PB_JSON_SHORT ? 'r' : 0;
    case '\t': return flags & PB_JSON_SHORT ? 't' : 0;
    case '\b': return flags & PB_JSON_SHORT ? 'b' : 0;
    case '\f': return flags & PB_JSON_SHORT ? 'f' : 0;
    }
    return 0;
}

void pb_json_escape(const char *p, size_t n, int utf8, unsigned flags, pb_json_put put, void *ctx)
{
    size_t i = 0, run = 0;
    put(ctx, "\"", 1);
    while (i < n) {
        unsigned char b = (unsigned char)p[i];
        unsigned long cp = b;
        size_t k = 1, el;
        char e[16];
        if (utf8 && b >= 0x80 && (k = pb_utf8_seq(p, n, i)) > 1) {
            /* a valid sequence (pb_utf8_seq: shortest form, no surrogates) */
            size_t j;
            cp = k == 4 ? (b & 0x07u) : k == 3 ? (b & 0x0Fu) : (b & 0x1Fu);
            for (j = 1; j < k; j++)
                cp = (cp << 6) | ((unsigned char)p[i + j] & 0x3Fu);
        } else {
            k = 1;
        }
        if ((cp >= 0x20 && cp < 0x7F && cp != '"' && cp != '\\') || (k > 1 && (flags & PB_JSON_RAW_UTF8))) {
            i += k; /* as it is */
            continue;
        }
        if ((e[1] = short_escape(cp, flags)) != 0) {
            e[0] = '\\';
            el = 2;
        } else if (cp < 0x10000) {
            el = (size_t)snprintf(e, sizeof e, "\\u%04lx", cp);
        } else {
            unsigned long v = cp - 0x10000;
            el = (size_t)snprintf(e, sizeof e, "\\u%04lx\\u%04lx", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        }
        if (i > run)
            put(ctx, p + run, i - run);
        put(ctx, e, el);
        i += k;
        run = i;
    }
    if (i > run)
        put(ctx, p + run, i - run);
    put(ctx, "\"", 1);
}

static void file_put(void *ctx, const char *s, size_t n) { fwrite(s, 1, n, (FILE *)ctx); }

void pb_json_str(FILE *o, const pb_str *s) { pb_json_escape(s->ptr, s->len, s->utf8, PB_JSON_SHORT, file_put, o); }

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
