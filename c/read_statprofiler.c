/* read_statprofiler.c - Devel::StatProfiler trace decoder
 * (the StatProfiler trace format spec).
 *
 * "=statprofiler" + version byte 1, then 2-byte big-endian-length packets,
 * each one raw Snappy block of <= 32000 bytes (decompressed through the
 * system libsnappy).  The packets concatenate into one logical stream of
 * header records (no length) and body records (tag, varint length, payload)
 * in which records straddle packet boundaries.  Varints are big-endian
 * base-128.  Declared body lengths are wrong in real files, so known tags are
 * parsed field by field; the length only skips unknown tags.
 *
 * The decoder produces pb_sample_sink calls.  Each distinct frame record is
 * interned once (hash of its payload bytes), so the consumer sees each frame
 * content once and memory grows with unique frames, not with samples.
 *
 * Offsets in messages: header/body records are reported at
 * 14 + (offset in the decompressed stream), the same "view start + inflated
 * bytes" convention as NYTProf's zlib part; packet-level faults at the raw
 * file offset of the packet.
 *
 * Names here: sp_ = StatProfiler's records and this reader's helpers, spc_ = the sink that turns a
 * run's samples into chunks (sp_chunks).
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include "codecs.h"
#include "options.h"
#include "reader.h"
#include "samples.h"
#include "read_statprofiler.h"

#include "fold_samples.h"
#include "model.h"

#define SP_MAGIC "=statprofiler"
#define SP_MAGIC_LEN 13
#define SP_STREAM_BASE 14 /* logical offsets are reported from here */

/* tags */
enum {
    SP_SAMPLE_START = 1, SP_SAMPLE_END = 2, SP_SUB_FRAME = 3, SP_EVAL_FRAME = 4, SP_XSUB_FRAME = 5,
    SP_MAIN_FRAME = 6, SP_EVAL_STRING = 7, SP_EVAL_SOURCE = 8, SP_FILE_END = 196, SP_STREAM_END = 197,
    SP_SECTION_START = 198, SP_SECTION_END = 199, SP_META = 200, SP_PERL_VERSION = 201,
    SP_TICK = 202, SP_DEPTH = 203, SP_LIBVERSION = 204, SP_GENEALOGY = 205, SP_HEADER_END = 254
};

/* ---- the logical stream over Snappy packets ----------------------------
 * v is a pb_source view (pb_src_open_view) whose window sp_fill() fills
 * with decompressed packets, so the records are read with reader.h's
 * cursor; its logical offsets start at SP_STREAM_BASE. */
typedef struct {
    pb_source *s;               /* the file: packets */
    pb_error *err;
    const pb_options *opt;
    pb_source v;                /* the decompressed stream; window v.buf (== v.base) */
    const unsigned char *mark;  /* bytes from here on are kept by compaction (NULL: from v.p) */
    uint64_t total;             /* decompressed bytes so far */
    uint64_t packets;
    int eof;                    /* no more packets */
} sp_stream;

static uint64_t sp_off(const sp_stream *st, const unsigned char *q)
{
    return st->v.buf_off + (uint64_t)(q - st->v.base);
}

/* Decompress one more packet onto the end of the window.
 * 1: added (possibly 0 bytes), 0: clean end of input, -1: error. */
/* Over 80 lines, kept whole: one packet: length, optional decompression, limits and buffer
 * compaction, with an error path at each step. */
#if defined(__GNUC__)
__attribute__((noinline)) /* keeps gcc 12's -Wuse-after-free from a false alarm across the caller's loop */
#endif
static int sp_packet(sp_stream *st)
{
    pb_source *s = st->s, *v = &st->v;
    uint64_t poff = pb_src_offset(s);
    size_t clen, ulen, keep_from, live, room;
    int got = pb_src_need(s, 2);
    if (got < 0)
        return -1;
    if (got == 0) {
        if (pb_src_avail(s) == 0) {
            st->eof = 1;
            return 0;
        }
        pb_fail(st->err, PB_ERR_TRUNCATED, poff,
                "snappy packet header needs 2 bytes (big-endian length), the file has 1 more");
        return -1;
    }
    clen = pb_be16(s->p);
    if (clen == 0) {
        pb_fail(st->err, PB_ERR_CORRUPT, poff, "snappy packet with length 0 (a Snappy block is at least 1 byte)");
        return -1;
    }
    got = pb_src_need(s, 2 + clen);
    if (got < 0)
        return -1;
    if (got == 0) {
        pb_fail(st->err, PB_ERR_TRUNCATED, poff,
                "snappy packet of %zu bytes runs past the end of the file (%zu bytes left)", clen,
                pb_src_avail(s) - 2);
        return -1;
    }
    if (!PB_HAVE_SNAPPY) {
        pb_fail(st->err, PB_ERR_UNSUPPORTED, poff, PB_NO_CODEC_MSG("snappy", "libsnappy-dev"));
        return -1;
    }
    if (snappy_uncompressed_length((const char *)s->p + 2, clen, &ulen) != SNAPPY_OK) {
        pb_fail(st->err, PB_ERR_CORRUPT, poff, "snappy packet of %zu bytes has no valid Snappy length preamble",
                clen);
        return -1;
    }
    if (ulen > PB_SP_PACKET_MAX) {
        pb_fail(st->err, PB_ERR_CORRUPT, poff,
                "snappy packet decompresses to %zu bytes, more than the writer's %u-byte buffer", ulen,
                PB_SP_PACKET_MAX);
        return -1;
    }
    if (st->total + ulen > st->opt->max_decompressed_bytes) {
        pb_fail(st->err, PB_ERR_LIMIT, poff, "decompressed stream exceeds max_decompressed_bytes (%llu)",
                (unsigned long long)st->opt->max_decompressed_bytes);
        return -1;
    }
    /* compact: keep [keep, end); work on offsets so no pointer outlives the buffer */
    {
        unsigned char *buf = v->buf;
        size_t pofs = (size_t)(v->p - buf), eofs = (size_t)(v->end - buf);
        size_t mofs = st->mark ? (size_t)(st->mark - buf) : pofs;
        keep_from = mofs < pofs ? mofs : pofs;
        live = eofs - keep_from;
        if (keep_from > 0) {
            if (live)
                memmove(buf, buf + keep_from, live);
            v->buf_off += keep_from;
            pofs -= keep_from;
            mofs -= keep_from;
        }
        room = v->cap - live;
        if (room < ulen) {
            size_t ncap = v->cap ? v->cap : 2 * PB_SP_PACKET_MAX;
            unsigned char *nb;
            while (ncap - live < ulen)
                ncap *= 2;
            if (live + ulen > st->opt->max_record_size + PB_SP_PACKET_MAX) {
                pb_fail(st->err, PB_ERR_LIMIT, v->buf_off, "a record is longer than max_record_size (%llu bytes)",
                        (unsigned long long)st->opt->max_record_size);
                return -1;
            }
            nb = (unsigned char *)malloc(ncap);
            if (!nb) {
                pb_fail(st->err, PB_ERR_LIMIT, v->buf_off, "out of memory for a %zu-byte record window", ncap);
                return -1;
            }
            if (live)
                memcpy(nb, buf, live);
            free(buf);
            buf = nb;
            v->buf = nb;
            v->cap = ncap;
        }
        if (buf) { /* NULL only before the first non-empty packet (then pofs = live = 0) */
            v->base = buf;
            v->p = buf + pofs;
            v->end = buf + live;
            if (st->mark)
                st->mark = buf + mofs;
        }
    }
    {
        size_t out = ulen;
        if (ulen == 0 ? snappy_validate_compressed_buffer((const char *)s->p + 2, clen) != SNAPPY_OK
                      : (snappy_uncompress((const char *)s->p + 2, clen, (char *)v->buf + live, &out) != SNAPPY_OK ||
                         out != ulen)) {
            pb_fail(st->err, PB_ERR_CORRUPT, poff, "snappy packet of %zu bytes does not decompress (corrupt block)",
                    clen);
            return -1;
        }
    }
    s->p += 2 + clen;
    if (ulen)
        v->end += ulen;
    st->total += ulen;
    st->packets++;
    return 1;
}

/* the view's fill: packets until n bytes are at v->p (pb_src_need's 1 / 0 / -1) */
static int sp_fill(pb_source *v, size_t n)
{
    sp_stream *st = (sp_stream *)v->fill_ctx;
    while ((size_t)(v->end - v->p) < n) {
        int r;
        if (st->eof)
            return 0;
        r = sp_packet(st);
        if (r <= 0)
            return r;
    }
    return 1;
}

/* ---- record reader ------------------------------------------------------ */
typedef struct {
    uint64_t off; /* logical offset (buf_off-relative resolve below) */
    uint32_t len;
    int utf8;
} sp_strref;

typedef struct {
    sp_stream st;
    pb_error *err;
    pb_rd rd;                  /* over st.v; rd.rec: the record being read */
    uint64_t rec_off;
} sp_rd;

/* A string: flag byte (bit 0 = UTF-8), varint length, bytes.  The result
 * is a reference that stays valid while r->st.mark is held. */
static pb_status sp_string(sp_rd *r, sp_strref *out, const char *field)
{
    pb_source *v = &r->st.v;
    uint32_t len = 0;
    unsigned flag;
    pb_status rc;
    if ((rc = pb_rd_need(&r->rd, 1, field)) != PB_OK)
        return rc;
    flag = *v->p;
    if (flag & ~1u)
        return pb_fail(r->err, PB_ERR_CORRUPT, pb_src_offset(v),
                       "%s record: %s string flag byte is 0x%02x (only bit 0, UTF-8, is defined)", r->rd.rec, field,
                       flag);
    v->p++;
    if ((rc = pb_rd_be128_u32(&r->rd, &len, field)) != PB_OK)
        return rc;
    if (len > r->st.opt->max_record_size)
        return pb_fail(r->err, PB_ERR_LIMIT, pb_src_offset(v),
                       "%s record: %s is %u bytes long, more than max_record_size (%llu)", r->rd.rec, field, len,
                       (unsigned long long)r->st.opt->max_record_size);
    if ((rc = pb_rd_need(&r->rd, len, field)) != PB_OK)
        return rc;
    out->off = pb_src_offset(v);
    out->len = len;
    out->utf8 = flag & 1;
    v->p += len;
    return PB_OK;
}

static inline pb_str sp_resolve(const sp_rd *r, const sp_strref *s)
{
    return pb_str_make((const char *)r->st.v.base + (size_t)(s->off - r->st.v.buf_off), s->len, s->utf8);
}

/* ---- frame interning ----------------------------------------------------
 * the distinct frame records seen (the key: the record's bytes) in the
 * model's string table; frame_ids[string id] is the frame's sink id */

/* ---- the decoder state ---------------------------------------------------- */
typedef struct {
    sp_rd r;
    const pb_options *opt;
    pb_sample_sink *sink;
    const pb_sp_hooks *hooks;
    uint64_t key;
    pb_strtab frames;
    uint32_t *frame_ids;
    size_t frame_ids_cap;
    uint32_t *ids;
    size_t ids_cap;
    char *op;
    size_t op_cap, op_len;
    pb_sp_header hdr;
    /* header metadata, kept until the header facts are sent:
     * entries of uint32 klen, uint32 vlen, flags byte, key, value */
    unsigned char *hmeta;
    size_t hm_len, hm_cap;
    uint32_t cut_id;  /* the sink's id of main::(truncated), once have_cut */
    int have_cut;
} sp_dec;

static int sp_hmeta_add(sp_dec *d, pb_str k, pb_str v)
{
    size_t need = 9 + k.len + v.len;
    uint32_t kl = (uint32_t)k.len, vl = (uint32_t)v.len;
    unsigned char *q;
    if (pb_grow((void **)&d->hmeta, &d->hm_cap, d->hm_len + need, 1) < 0)
        return -1;
    q = d->hmeta + d->hm_len;
    memcpy(q, &kl, 4);
    memcpy(q + 4, &vl, 4);
    q[8] = (unsigned char)((k.utf8 ? 1 : 0) | (v.utf8 ? 2 : 0));
    memcpy(q + 9, k.ptr, k.len);
    memcpy(q + 9 + k.len, v.ptr, v.len);
    d->hm_len += need;
    return 0;
}

static void sp_warn(sp_dec *d, const char *fmt, uint64_t off, unsigned tag, uint32_t len)
{
    char msg[256];
    if (!d->hooks || !d->hooks->warn)
        return;
    snprintf(msg, sizeof msg, fmt, tag, (unsigned long)len, (unsigned long long)off);
    d->hooks->warn(d->hooks->ctx, msg);
}

void pb_sp_id_hex(const unsigned char id[PB_SP_ID_BYTES], char out[49])
{
    int i;
    for (i = 0; i < 6; i++) {
        const unsigned char *q = id + 4 * i;
        uint32_t w = (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) | ((uint32_t)q[3] << 24);
        snprintf(out + 8 * i, 9, "%08x", (unsigned)w);
    }
    out[48] = '\0';
}

uint32_t pb_sp_id_pid(const unsigned char id[PB_SP_ID_BYTES])
{
    return (uint32_t)id[0] | ((uint32_t)id[1] << 8) | ((uint32_t)id[2] << 16) | ((uint32_t)id[3] << 24);
}

static pb_status sp_attr_u(sp_dec *d, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return d->sink->attribute(d->sink, key, pb_str_c(buf));
}

/* magic, version byte, and the header records up to 254 */
/* Over 80 lines, kept whole: magic, version and the header record loop; each record kind a few
 * lines. */
static pb_status sp_header(sp_dec *d)
{
    sp_rd *r = &d->r;
    pb_source *s = r->st.s;
    pb_status rc;
    int got = pb_src_need(s, SP_MAGIC_LEN + 1);
    if (got < 0)
        return r->err->status;
    if (pb_src_avail(s) < SP_MAGIC_LEN && memcmp(s->p, SP_MAGIC, pb_src_avail(s)) == 0)
        return pb_fail(r->err, PB_ERR_TRUNCATED, 0, "file ends inside the \"=statprofiler\" magic (%zu of 13 bytes)",
                       pb_src_avail(s));
    if (pb_src_avail(s) < SP_MAGIC_LEN || memcmp(s->p, SP_MAGIC, SP_MAGIC_LEN) != 0)
        return pb_fail(r->err, PB_ERR_CORRUPT, 0, "not a StatProfiler trace: it does not start with \"=statprofiler\"");
    if (got == 0)
        return pb_fail(r->err, PB_ERR_TRUNCATED, SP_MAGIC_LEN, "file ends before the format version byte");
    d->hdr.format_version = s->p[SP_MAGIC_LEN];
    if (d->hdr.format_version != 1)
        return pb_fail(r->err, PB_ERR_UNSUPPORTED, SP_MAGIC_LEN,
                       "trace format version %u; this reader (like Devel::StatProfiler 0.56) reads version 1",
                       d->hdr.format_version);
    s->p += SP_MAGIC_LEN + 1;
    d->hdr.interval_us = 10000;
    d->hdr.depth = 20;
    for (;;) {
        unsigned tag;
        /* no mark while the window may still be empty (st.p NULL would read
         * as "no mark"); the record start is marked once its tag is there */
        r->st.mark = NULL;
        got = pb_src_need(&r->st.v, 1);
        r->st.mark = r->st.v.p; /* the record stays in the window while it is parsed */
        if (got <= 0) {
            r->rd.rec = "header";
            if (got == 0 && r->st.total == 0 && r->st.eof)
                return pb_fail(r->err, PB_ERR_TRUNCATED, SP_STREAM_BASE,
                               "file ends after the version byte: no header records (no 254 separator)");
            return pb_rd_short(&r->rd, got, 1, "next header record tag (the header ends with tag 254)");
        }
        r->rec_off = sp_off(&r->st, r->st.v.p);
        tag = *r->st.v.p++;
        switch (tag) {
        case SP_PERL_VERSION:
            r->rd.rec = "PERL_VERSION (201)";
            if ((rc = pb_rd_be128_u32(&r->rd, &d->hdr.perl_revision, "revision")) != PB_OK ||
                (rc = pb_rd_be128_u32(&r->rd, &d->hdr.perl_version, "version")) != PB_OK ||
                (rc = pb_rd_be128_u32(&r->rd, &d->hdr.perl_subversion, "subversion")) != PB_OK)
                return rc;
            break;
        case SP_TICK:
            r->rd.rec = "TICK_DURATION (202)";
            if ((rc = pb_rd_be128_u32(&r->rd, &d->hdr.interval_us, "interval in microseconds")) != PB_OK)
                return rc;
            break;
        case SP_DEPTH:
            r->rd.rec = "STACK_DEPTH (203)";
            if ((rc = pb_rd_be128_u32(&r->rd, &d->hdr.depth, "depth")) != PB_OK)
                return rc;
            break;
        case SP_GENEALOGY:
            r->rd.rec = "GENEALOGY (205)";
            if ((rc = pb_rd_be128_u32(&r->rd, &d->hdr.ordinal, "ordinal")) != PB_OK ||
                (rc = pb_rd_be128_u32(&r->rd, &d->hdr.parent_ordinal, "parent ordinal")) != PB_OK)
                return rc;
            got = pb_src_need(&r->st.v, 2 * PB_SP_ID_BYTES);
            if (got <= 0)
                return pb_rd_short(&r->rd, got, 2 * PB_SP_ID_BYTES, "48 bytes of id and parent id");
            memcpy(d->hdr.id, r->st.v.p, PB_SP_ID_BYTES);
            memcpy(d->hdr.parent_id, r->st.v.p + PB_SP_ID_BYTES, PB_SP_ID_BYTES);
            r->st.v.p += 2 * PB_SP_ID_BYTES;
            d->hdr.have_genealogy = 1;
            break;
        case SP_META: {
            uint32_t len = 0;
            sp_strref k, v;
            r->rd.rec = "CUSTOM_METADATA (200) header";
            if ((rc = pb_rd_be128_u32(&r->rd, &len, "declared length")) != PB_OK)
                return rc;
            if ((rc = sp_string(r, &k, "key")) != PB_OK || (rc = sp_string(r, &v, "value")) != PB_OK)
                return rc;
            if (sp_hmeta_add(d, sp_resolve(r, &k), sp_resolve(r, &v)) < 0)
                return pb_fail(r->err, PB_ERR_LIMIT, r->rec_off, "out of memory for header metadata");
            break;
        }
        case SP_HEADER_END:
            goto done;
        default:
            return pb_fail(r->err, PB_ERR_CORRUPT, r->rec_off,
                           "header record tag %u is not valid in a header (201, 202, 203, 205, 200 or the 254 "
                           "separator expected%s)",
                           tag, tag == SP_LIBVERSION ? "; 204 is defined but never written, and the real reader "
                                                       "rejects it too" : "");
        }
    }
done:
    r->st.mark = NULL;
    return PB_OK;
}

/* the header as attributes and metadata notes */
static pb_status sp_header_facts(sp_dec *d)
{
    pb_status rc;
    size_t o = 0;
    {
        char buf[64], hex[49];
        pb_sample_sink *k = d->sink;
        if ((rc = k->attribute(k, "source_format", pb_str_c("statprofiler"))) != PB_OK ||
            (rc = sp_attr_u(d, "statprofiler_format_version", d->hdr.format_version)) != PB_OK)
            return rc;
        snprintf(buf, sizeof buf, "%u.%u.%u", (unsigned)d->hdr.perl_revision, (unsigned)d->hdr.perl_version,
                 (unsigned)d->hdr.perl_subversion);
        if ((rc = k->attribute(k, "perl_version", pb_str_c(buf))) != PB_OK ||
            (rc = sp_attr_u(d, "sample_interval_us", d->hdr.interval_us)) != PB_OK ||
            (rc = sp_attr_u(d, "stack_depth", d->hdr.depth)) != PB_OK)
            return rc;
        if (d->hdr.have_genealogy) {
            pb_sp_id_hex(d->hdr.id, hex);
            if ((rc = k->attribute(k, "genealogy_id", pb_str_c(hex))) != PB_OK ||
                (rc = sp_attr_u(d, "genealogy_ordinal", d->hdr.ordinal)) != PB_OK)
                return rc;
            pb_sp_id_hex(d->hdr.parent_id, hex);
            if ((rc = k->attribute(k, "parent_id", pb_str_c(hex))) != PB_OK ||
                (rc = sp_attr_u(d, "parent_ordinal", d->hdr.parent_ordinal)) != PB_OK)
                return rc;
        }
    }
    while (o < d->hm_len) {
        uint32_t kl, vl;
        const unsigned char *q = d->hmeta + o;
        memcpy(&kl, q, 4);
        memcpy(&vl, q + 4, 4);
        if ((rc = d->sink->note(d->sink, "metadata", pb_str_make((const char *)q + 9, kl, q[8] & 1),
                                pb_str_make((const char *)q + 9 + kl, vl, (q[8] & 2) != 0), 1)) != PB_OK)
            return rc;
        o += 9 + (size_t)kl + vl;
    }
    return PB_OK;
}

/* Parse one frame record (tag 3..6) whose tag and declared length have been
 * consumed; intern it and append its id. */
/* Over 80 lines, kept whole: one switch over the frame record kinds, then the interning they share.
 * */
static pb_status statprofiler_sp_frame(sp_dec *d, unsigned tag, size_t depth)
{
    sp_rd *r = &d->r;
    sp_stream *st = &r->st;
    pb_status rc;
    sp_strref a, b, c;
    uint32_t l1 = 0, l2 = 0;
    const unsigned char *start;
    size_t klen;
    uint32_t id, key;
    int found;

    if (depth >= d->opt->max_stack_depth)
        return pb_fail(r->err, PB_ERR_LIMIT, r->rec_off, "sample has more than max_stack_depth (%u) frames",
                       (unsigned)d->opt->max_stack_depth);
    switch (tag) {
    case SP_SUB_FRAME:
        r->rd.rec = "SUB_FRAME (3)";
        if ((rc = sp_string(r, &a, "package")) != PB_OK || (rc = sp_string(r, &b, "sub name")) != PB_OK ||
            (rc = sp_string(r, &c, "file")) != PB_OK || (rc = pb_rd_be128_u32(&r->rd, &l1, "line")) != PB_OK ||
            (rc = pb_rd_be128_u32(&r->rd, &l2, "first line")) != PB_OK)
            return rc;
        break;
    case SP_XSUB_FRAME:
        r->rd.rec = "XSUB_FRAME (5)";
        if ((rc = sp_string(r, &a, "package")) != PB_OK || (rc = sp_string(r, &b, "sub name")) != PB_OK)
            return rc;
        break;
    case SP_EVAL_FRAME:
    case SP_MAIN_FRAME:
        r->rd.rec = tag == SP_EVAL_FRAME ? "EVAL_FRAME (4)" : "MAIN_FRAME (6)";
        if ((rc = sp_string(r, &c, "file")) != PB_OK || (rc = pb_rd_be128_u32(&r->rd, &l1, "line")) != PB_OK)
            return rc;
        break;
    }
    /* the key is the whole record, tag and declared length included
     * (st->mark holds the record start) */
    start = st->mark;
    klen = (size_t)(st->v.p - start);
    if ((found = pb_strtab_intern(&d->frames, (const char *)start, klen, &key)) < 0 ||
        pb_grow((void **)&d->frame_ids, &d->frame_ids_cap, d->frames.n, sizeof *d->frame_ids) < 0)
        return pb_fail(r->err, PB_ERR_LIMIT, r->rec_off, "out of memory for the frame table");
    if (found)
        id = d->frame_ids[key];
    else {
        pb_frame fr;
        static const pb_str empty = { "", 0, 0 };
        if (key >= d->opt->max_frames)
            return pb_fail(r->err, PB_ERR_LIMIT, r->rec_off, "more than max_frames (%u) distinct frames",
                           (unsigned)d->opt->max_frames);
        memset(&fr, 0, sizeof fr);
        fr.package = fr.name = fr.file = empty;
        switch (tag) {
        case SP_SUB_FRAME:
            fr.kind = PB_FRAME_SUB;
            fr.package = sp_resolve(r, &a);
            fr.name = sp_resolve(r, &b);
            fr.file = sp_resolve(r, &c);
            fr.line = (int32_t)l1;
            fr.first_line = (int32_t)l2;
            break;
        case SP_XSUB_FRAME:
            fr.kind = PB_FRAME_XSUB;
            fr.package = sp_resolve(r, &a);
            fr.name = sp_resolve(r, &b);
            fr.line = -1;
            fr.first_line = -1;
            break;
        default:
            /* file-level code: a main::RUNTIME-style sub in the file's fid
             * (an "(eval N)" fid for string evals) */
            fr.kind = tag == SP_EVAL_FRAME ? PB_FRAME_EVAL : PB_FRAME_MAIN;
            fr.package = pb_str_make("main", 4, 0);
            fr.name = pb_str_make("RUNTIME", 7, 0);
            fr.file = sp_resolve(r, &c);
            fr.line = (int32_t)l1;
            fr.first_line = -1;
            break;
        }
        if ((rc = d->sink->frame(d->sink, &fr, &id)) != PB_OK)
            return rc;
        d->frame_ids[key] = id;
    }
    if (pb_grow((void **)&d->ids, &d->ids_cap, depth + 1, sizeof *d->ids) < 0)
        return pb_fail(r->err, PB_ERR_LIMIT, r->rec_off, "out of memory for a sample's frames");
    d->ids[depth] = id;
    return PB_OK;
}

/* A sample of depth frames whose outermost (the last record, tag
 * outer_tag) is not a main frame, with as many frames as the header's stack
 * depth, was cut at the profiler's limit (read_statprofiler.h,
 * PB_SP_CUT_NAME): append the pseudo-frame main::(truncated) outermost
 * (*depth grows by one), unless the consumer keeps cut stacks as they are. */
static pb_status sp_mark_cut(sp_dec *d, unsigned outer_tag, size_t *depth)
{
    sp_rd *r = &d->r;
    pb_status rc;
    if (*depth == 0 || *depth != d->hdr.depth || outer_tag == SP_MAIN_FRAME || d->sink->keeps_cut_stacks)
        return PB_OK;
    if (!d->have_cut) {
        pb_frame fr;
        memset(&fr, 0, sizeof fr);
        fr.kind = PB_FRAME_SYNTHETIC;
        fr.package = pb_str_make("main", 4, 0);
        fr.name = pb_str_make(PB_SP_CUT_NAME, sizeof PB_SP_CUT_NAME - 1, 0);
        fr.file = pb_str_make("", 0, 0);
        fr.line = -1;
        fr.first_line = -1;
        if ((rc = d->sink->frame(d->sink, &fr, &d->cut_id)) != PB_OK)
            return rc;
        d->have_cut = 1;
    }
    if (pb_grow((void **)&d->ids, &d->ids_cap, *depth + 1, sizeof *d->ids) < 0)
        return pb_fail(r->err, PB_ERR_LIMIT, r->rec_off, "out of memory for a sample's frames");
    d->ids[(*depth)++] = d->cut_id;
    return PB_OK;
}

/* a record's name in messages, by its tag (the others: "body") */
static const char *const sp_tag_names[256] = {[SP_SAMPLE_START] = "SAMPLE_START (1)",
    [SP_SAMPLE_END] = "SAMPLE_END (2)", [SP_SUB_FRAME] = "SUB_FRAME (3)", [SP_EVAL_FRAME] = "EVAL_FRAME (4)",
    [SP_XSUB_FRAME] = "XSUB_FRAME (5)", [SP_MAIN_FRAME] = "MAIN_FRAME (6)", [SP_EVAL_SOURCE] = "EVAL_SOURCE (8)",
    [SP_FILE_END] = "FILE_END (196)", [SP_STREAM_END] = "STREAM_END (197)", [SP_SECTION_START] = "SECTION_START (198)",
    [SP_SECTION_END] = "SECTION_END (199)", [SP_META] = "CUSTOM_METADATA (200)"};
static const char *sp_tag_name(unsigned tag) { return tag < 256 && sp_tag_names[tag] ? sp_tag_names[tag] : "body"; }

/* the op name of the sample now starting, kept for its SAMPLE_END */
static pb_status sp_keep_op(sp_dec *d, const sp_strref *op)
{
    pb_str o = sp_resolve(&d->r, op);
    if (pb_grow((void **)&d->op, &d->op_cap, o.len + 1, 1) < 0)
        return pb_fail(d->r.err, PB_ERR_LIMIT, d->r.rec_off, "out of memory for an op name");
    memcpy(d->op, o.ptr, o.len);
    d->op[o.len] = '\0';
    d->op_len = o.len;
    return PB_OK;
}

/* EVAL_SOURCE, SECTION_START/END and META: notes to the sink */
static pb_status sp_note_rec(sp_dec *d, unsigned tag)
{
    sp_rd *r = &d->r;
    pb_status rc;
    switch (tag) {
    case SP_EVAL_SOURCE: {
        sp_strref text;
        uint32_t n = 0;
        char name[32];
        if ((rc = sp_string(r, &text, "source text")) != PB_OK ||
            (rc = pb_rd_be128_u32(&r->rd, &n, "eval sequence number")) != PB_OK)
            return rc;
        snprintf(name, sizeof name, "(eval %u)", (unsigned)n);
        return d->sink->note(d->sink, "eval_source", sp_resolve(r, &text), pb_str_c(name), n);
    }
    case SP_SECTION_START:
    case SP_SECTION_END: {
        sp_strref name;
        static const pb_str empty = { "", 0, 0 };
        if ((rc = sp_string(r, &name, "section name")) != PB_OK)
            return rc;
        return d->sink->note(d->sink, tag == SP_SECTION_START ? "section_start" : "section_end",
                             sp_resolve(r, &name), empty, 0);
    }
    case SP_META: {
        sp_strref k, v;
        if ((rc = sp_string(r, &k, "key")) != PB_OK || (rc = sp_string(r, &v, "value")) != PB_OK)
            return rc;
        return d->sink->note(d->sink, "metadata", sp_resolve(r, &k), sp_resolve(r, &v), 0);
    }
    }
    return PB_OK;
}

/* a record of no known body tag: a header tag fails, others are skipped */
static pb_status sp_other_rec(sp_dec *d, unsigned tag, uint32_t dlen)
{
    sp_rd *r = &d->r;
    if (tag == SP_HEADER_END || tag == SP_PERL_VERSION || tag == SP_TICK || tag == SP_DEPTH ||
        tag == SP_GENEALOGY || tag == SP_LIBVERSION)
        return pb_fail(r->err, PB_ERR_CORRUPT, r->rec_off, "header record tag %u in the body", tag);
    sp_warn(d, "statprofiler: unknown body record tag %u (%lu bytes) skipped at byte %llu", r->rec_off, tag, dlen);
    r->rd.rec = "unknown";
    return pb_rd_skip(&r->rd, dlen, "declared payload");
}

/* Over 80 lines, kept whole: one loop over the body record kinds, each a few lines. */
static pb_status sp_body(sp_dec *d)
{
    sp_rd *r = &d->r;
    sp_stream *st = &r->st;
    pb_status rc;
    int in_sample = 0, ended = 0;
    size_t depth = 0;
    unsigned outer_tag = 0; /* the tag of the sample's last (outermost) frame */
    uint32_t weight = 0;
    uint64_t sample_off = 0;
    for (;;) {
        unsigned tag;
        uint32_t dlen = 0;
        int got;
        st->mark = st->v.p; /* the record stays in the window while it is parsed */
        if (st->v.p < st->v.end) {
            got = 1;
        } else {
            got = pb_src_need(&st->v, 1);
            if (got < 0)
                return r->err->status;
            if (got == 0)
                break;
        }
        r->rec_off = sp_off(st, st->v.p);
        tag = *st->v.p++;
        r->rd.rec = sp_tag_name(tag);
        /* declared length: read, but trusted only for unknown tags */
        if (st->v.p < st->v.end && !(*st->v.p & 0x80)) {
            dlen = *st->v.p++;
        } else if ((rc = pb_rd_be128_u32(&r->rd, &dlen, "declared length")) != PB_OK) {
            return rc;
        }
        switch (tag) {
        case SP_SAMPLE_START: {
            sp_strref op;
            if (in_sample)
                return pb_fail(r->err, PB_ERR_CORRUPT, r->rec_off,
                               "SAMPLE_START (1) inside the sample that started at byte %llu (no SAMPLE_END)",
                               (unsigned long long)sample_off);
            if ((rc = pb_rd_be128_u32(&r->rd, &weight, "weight")) != PB_OK)
                return rc;
            if ((rc = sp_string(r, &op, "op name")) != PB_OK)
                return rc;
            if (d->sink->sample_tags && (rc = sp_keep_op(d, &op)) != PB_OK)
                return rc;
            in_sample = 1;
            depth = 0;
            sample_off = r->rec_off;
            break;
        }
        case SP_SAMPLE_END:
            if (!in_sample)
                return pb_fail(r->err, PB_ERR_CORRUPT, r->rec_off, "SAMPLE_END (2) outside a sample");
            if (d->sink->sample_tags &&
                (rc = d->sink->sample_tags(d->sink, pb_str_make(d->op, d->op_len, 0), pb_str_make(NULL, 0, 0))) != PB_OK)
                return rc;
            if ((rc = sp_mark_cut(d, outer_tag, &depth)) != PB_OK ||
                (rc = d->sink->sample(d->sink, d->key, d->ids, (uint32_t)depth, weight, 0)) != PB_OK)
                return rc;
            in_sample = 0;
            break;
        case SP_SUB_FRAME:
        case SP_EVAL_FRAME:
        case SP_XSUB_FRAME:
        case SP_MAIN_FRAME:
            if (!in_sample)
                return pb_fail(r->err, PB_ERR_CORRUPT, r->rec_off, "%s record outside a sample (no SAMPLE_START)",
                               r->rd.rec);
            if ((rc = statprofiler_sp_frame(d, tag, depth)) != PB_OK)
                return rc;
            depth++;
            outer_tag = tag;
            break;
        case SP_FILE_END:
        case SP_STREAM_END:
            /* as the real reader: note it, read on to the end */
            ended = 1;
            if (dlen && (rc = pb_rd_skip(&r->rd, dlen, "declared payload")) != PB_OK)
                return rc;
            break;
        case SP_EVAL_SOURCE:
        case SP_SECTION_START:
        case SP_SECTION_END:
        case SP_META:
            if ((rc = sp_note_rec(d, tag)) != PB_OK)
                return rc;
            break;
        default:
            if ((rc = sp_other_rec(d, tag, dlen)) != PB_OK)
                return rc;
            break;
        }
    }
    if (in_sample)
        return pb_fail(r->err, PB_ERR_TRUNCATED, sp_off(st, st->v.p),
                       "input ended inside the sample that started at byte %llu (no SAMPLE_END)",
                       (unsigned long long)sample_off);
    if (!ended && d->hooks && d->hooks->warn)
        d->hooks->warn(d->hooks->ctx, "statprofiler: trace has no end marker (196/197): the profiled process "
                                      "did not close it; read as ended, as Devel::StatProfiler::Reader does");
    return PB_OK;
}

static void sp_dec_free(sp_dec *d)
{
    pb_src_close(&d->r.st.v);
    pb_strtab_free(&d->frames);
    PB_FREE_ALL(d->frame_ids, d->ids, d->op, d->hmeta);
}

static void sp_dec_init(sp_dec *d, pb_source *src, const pb_options *opt, pb_sample_sink *sink,
                        const pb_sp_hooks *hooks, pb_error *err)
{
    memset(d, 0, sizeof *d);
    d->r.st.s = src;
    d->r.st.err = err;
    d->r.st.opt = opt;
    pb_src_open_view(&d->r.st.v, sp_fill, &d->r.st, SP_STREAM_BASE, err);
    d->r.err = err;
    pb_rd_init(&d->r.rd, &d->r.st.v, err, PB_RD_SHORT_RECORD, opt->max_record_size);
    d->r.rd.rec = "header";
    d->opt = opt;
    d->sink = sink;
    d->hooks = hooks;
}

static void sp_dec_cleanup(void *p)
{
    sp_dec_free((sp_dec *)p);
    free(p);
}

pb_status pb_statprofiler_samples(pb_source *src, const pb_options *opt_in, pb_sample_sink *sink,
                                  const pb_sp_hooks *hooks, uint64_t thread_key, unsigned flags,
                                  pb_sp_header *hdr, pb_error *err)
{
    sp_dec *d;
    pb_options opt;
    pb_status rc;
    pb_options_copy(&opt, opt_in);
    /* on the heap, so that a consumer that never returns can release it */
    d = (sp_dec *)malloc(sizeof *d);
    if (!d)
        return pb_fail(err, PB_ERR_LIMIT, pb_src_offset(src), "out of memory");
    sp_dec_init(d, src, &opt, sink, hooks, err);
    pb_cleanups_add(sink->cleanups, sp_dec_cleanup, d);
    d->key = thread_key;
    rc = sp_header(d);
    if (rc == PB_OK && !(flags & PB_SP_NO_HEADER_FACTS))
        rc = sp_header_facts(d);
    if (rc == PB_OK && (flags & PB_SP_ANNOUNCE_THREAD) && sink->thread) {
        char label[16];
        uint32_t pid = pb_sp_id_pid(d->hdr.id);
        snprintf(label, sizeof label, "%u", (unsigned)pid);
        rc = sink->thread(sink, thread_key, pid, pb_sp_id_pid(d->hdr.parent_id), label);
    }
    if (rc == PB_OK)
        rc = sp_body(d);
    if (hdr)
        *hdr = d->hdr;
    pb_cleanups_remove(sink->cleanups, d);
    sp_dec_cleanup(d);
    if (rc != PB_OK && err->status == PB_OK)
        err->status = rc;
    return rc;
}

pb_status pb_statprofiler_read_header(const char *path, pb_sp_header *hdr, pb_error *err)
{
    pb_source src;
    pb_options opt;
    sp_dec d;
    pb_status rc;
    pb_error_init(err, "statprofiler", path);
    if ((rc = pb_src_open_file(&src, path, err)) != PB_OK)
        return rc;
    pb_options_copy(&opt, NULL);
    sp_dec_init(&d, &src, &opt, NULL, NULL, err);
    rc = sp_header(&d);
    *hdr = d.hdr;
    sp_dec_free(&d);
    pb_src_close(&src);
    return rc;
}

/* path's header, from src when given (path opened by the driver,
 * pb_src_open_file, at its start): read from the bytes its window holds
 * (up to 64 KB, the source left at its start), else from path itself */
static pb_status sp_header_of(const char *path, pb_source *src, pb_sp_header *hdr, pb_error *err)
{
    if (src && pb_src_offset(src) == 0 && !src->in_stream && !src->gunzipped && src->raw_size != UINT64_MAX) {
        size_t want = src->raw_size < 65536 ? (size_t)src->raw_size : 65536;
        pb_source m;
        pb_options opt;
        sp_dec d;
        pb_error e;
        pb_status rc;
        if (pb_src_need(src, want) < 0)
            return err->status ? err->status : PB_ERR_IO;
        pb_error_init(&e, "statprofiler", path);
        pb_src_open_mem(&m, src->p, pb_src_avail(src), &e);
        pb_options_copy(&opt, NULL);
        sp_dec_init(&d, &m, &opt, NULL, NULL, &e);
        rc = sp_header(&d);
        *hdr = d.hdr;
        sp_dec_free(&d);
        pb_src_close(&m);
        if (rc == PB_OK || pb_src_avail(src) == src->raw_size) { /* (the whole file: its own answer) */
            *err = e;
            return rc;
        }
    }
    return pb_statprofiler_read_header(path, hdr, err);
}

/* ---- several files ------------------------------------------------------- */
typedef struct {
    const char *path;
    pb_sp_header h;
    size_t proc;  /* index into the process list */
} sp_file;

typedef struct {
    unsigned char id[PB_SP_ID_BYTES];
    unsigned char parent_id[PB_SP_ID_BYTES];
    size_t order;  /* assigned position, (size_t)-1 while unassigned */
    size_t parent; /* index of the parent among the processes, (size_t)-1: none given */
    size_t seen;   /* the walk that last visited it + 1 (cycle check) */
} sp_proc;

/* the genealogy's one index: process id -> entry (of sp_proc or
 * pb_sp_header, whichever array; ids are the first field compared) */
typedef struct {
    const unsigned char *base; /* the array */
    size_t stride, off;        /* entry size; offset of the 24-byte id in it */
} sp_idtab;
static const unsigned char *sp_id_at(const sp_idtab *t, uint32_t i) { return t->base + (size_t)i * t->stride + t->off; }
static uint32_t sp_id_hash(const unsigned char *id) { return pb_hash_bytes((const char *)id, PB_SP_ID_BYTES); }
static uint32_t sp_idtab_hash(const void *ctx, uint32_t i) { return sp_id_hash(sp_id_at((const sp_idtab *)ctx, i)); }

static int sp_file_cmp(const void *a, const void *b)
{
    const sp_file *x = (const sp_file *)a, *y = (const sp_file *)b;
    if (x->proc != y->proc)
        return x->proc < y->proc ? -1 : 1;
    if (x->h.ordinal != y->h.ordinal)
        return x->h.ordinal < y->h.ordinal ? -1 : 1;
    return 0;
}

/* pb_statprofiler_files()' working state, on the heap so that a consumer
 * that never returns can release it, and close the open trace */
typedef struct {
    sp_file *files;
    sp_proc *procs;
    size_t *stack;
    pb_index ix;
    pb_source src;
    int src_open;
} sp_files_run;

static void sp_files_cleanup(void *p)
{
    sp_files_run *F = (sp_files_run *)p;
    if (F->src_open)
        pb_src_close(&F->src);
    pb_index_free(&F->ix);
    PB_FREE_ALL(F->files, F->procs, F->stack, F);
}

/* the headers of the n files, and their processes, through one hash of
 * their ids (O(N) for N files): files[i].proc, procs[].parent, *nprocs */
static pb_status sp_files_procs(sp_files_run *F, const char *const *paths, size_t n, size_t *nprocs, pb_error *err)
{
    static const unsigned char zero[PB_SP_ID_BYTES];
    sp_file *files = F->files;
    sp_proc *procs = F->procs;
    sp_idtab t;
    size_t i, j, k;
    uint32_t id;
    pb_status rc;
    t.base = (const unsigned char *)procs;
    t.stride = sizeof *procs;
    t.off = offsetof(sp_proc, id);
    for (i = 0; i < n; i++) {
        files[i].path = paths[i];
        if ((rc = pb_statprofiler_read_header(paths[i], &files[i].h, err)) != PB_OK)
            return rc;
        if (pb_index_reserve(&F->ix, *nprocs, sp_idtab_hash, &t) < 0)
            return pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        PB_INDEX_FIND(&F->ix, sp_id_hash(files[i].h.id), k, id, !memcmp(procs[id].id, files[i].h.id, PB_SP_ID_BYTES));
        if (id == PB_INDEX_NONE) {
            id = (uint32_t)(*nprocs)++;
            memcpy(procs[id].id, files[i].h.id, PB_SP_ID_BYTES);
            memcpy(procs[id].parent_id, files[i].h.parent_id, PB_SP_ID_BYTES);
            procs[id].order = (size_t)-1;
            pb_index_set(&F->ix, k, id);
        }
        files[i].proc = id;
    }
    for (j = 0; j < *nprocs; j++) {
        procs[j].parent = (size_t)-1;
        if (!memcmp(procs[j].parent_id, zero, PB_SP_ID_BYTES))
            continue;
        PB_INDEX_FIND(&F->ix, sp_id_hash(procs[j].parent_id), k, id,
                      !memcmp(procs[id].id, procs[j].parent_id, PB_SP_ID_BYTES));
        if (id != PB_INDEX_NONE && id != j)
            procs[j].parent = id;
    }
    return PB_OK;
}

/* files[i].proc becomes its process's place in the run's order */
static void sp_files_order(sp_files_run *F, size_t n, size_t nprocs)
{
    sp_file *files = F->files;
    sp_proc *procs = F->procs;
    size_t i, j, next = 0;
    /* order processes: a process comes after its parent when the parent is
     * among the files; otherwise it is a root.  In first-seen order, each
     * process preceded by its unplaced ancestors (outermost first): every
     * process is placed once, so N processes take O(N) */
    for (j = 0; j < nprocs; j++) {
        size_t top = 0, p = j;
        /* climb to the outermost ancestor not placed yet; a parent cycle
         * (the walk meets itself) ends the climb where it closes */
        while (p != (size_t)-1 && procs[p].order == (size_t)-1 && procs[p].seen != j + 1) {
            procs[p].seen = j + 1;
            F->stack[top++] = p;
            p = procs[p].parent;
        }
        while (top > 0)
            procs[F->stack[--top]].order = next++;
    }
    for (i = 0; i < n; i++)
        files[i].proc = procs[files[i].proc].order;
}

/* the files sorted by process and ordinal, a file given twice kept once
 * (*n: how many are left); two files of one trace ordinal fail */
static pb_status sp_files_sort(sp_files_run *F, size_t *np, pb_error *err)
{
    sp_file *files = F->files;
    size_t i, j, n = *np;
    qsort(files, n, sizeof *files, sp_file_cmp);
    /* one trace file given twice (by two paths, or the same one): read once */
    for (i = j = 1; i < n; i++) {
        struct stat a, b;
        if (files[i].proc == files[j - 1].proc && files[i].h.ordinal == files[j - 1].h.ordinal &&
            stat(files[i].path, &a) == 0 && stat(files[j - 1].path, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
            continue;
        files[j++] = files[i];
    }
    if (n > 0)
        n = j;
    for (i = 1; i < n; i++)
        if (files[i].proc == files[i - 1].proc && files[i].h.ordinal == files[i - 1].h.ordinal) {
            char hex[49];
            pb_sp_id_hex(files[i].h.id, hex);
            pb_error_init(err, "statprofiler", files[i].path);
            return pb_fail_nooff(err, PB_ERR_CORRUPT, "trace %s ordinal %u is given twice (also %s)", hex,
                                 (unsigned)files[i].h.ordinal, files[i - 1].path);
        }
    *np = n;
    return PB_OK;
}

pb_status pb_statprofiler_files(const char *const *paths, size_t n, const pb_options *opt, pb_sample_sink *sink,
                                const pb_sp_hooks *hooks, pb_error *err)
{
    sp_files_run *F;
    sp_file *files;
    sp_proc *procs;
    size_t nprocs = 0, i;
    pb_status rc = PB_OK;
    if (n == 0)
        return pb_fail_nooff(err, PB_ERR_IO, "no StatProfiler trace files given");
    F = (sp_files_run *)calloc(1, sizeof *F);
    if (!F)
        return pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
    files = F->files = (sp_file *)calloc(n, sizeof *files);
    procs = F->procs = (sp_proc *)calloc(n, sizeof *procs);
    F->stack = (size_t *)calloc(n, sizeof *F->stack);
    if (!files || !procs || !F->stack) {
        sp_files_cleanup(F);
        return pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
    }
    pb_cleanups_add(sink->cleanups, sp_files_cleanup, F);
    if ((rc = sp_files_procs(F, paths, n, &nprocs, err)) != PB_OK)
        goto out;
    sp_files_order(F, n, nprocs);
    if ((rc = sp_files_sort(F, &n, err)) != PB_OK)
        goto out;
    for (i = 0; i < n; i++) {
        pb_source *src = &F->src;
        unsigned flags = 0;
        if (i == 0 || files[i].proc != files[i - 1].proc)
            flags |= PB_SP_ANNOUNCE_THREAD;
        if (i > 0)
            flags |= PB_SP_NO_HEADER_FACTS;
        pb_error_init(err, "statprofiler", files[i].path);
        if (files[i].h.interval_us != files[0].h.interval_us) {
            rc = pb_fail_nooff(err, PB_ERR_UNSUPPORTED,
                               "sampling interval %u us differs from %u us in %s; traces of one run share it",
                               (unsigned)files[i].h.interval_us, (unsigned)files[0].h.interval_us, files[0].path);
            goto out;
        }
        if ((rc = pb_src_open_file(src, files[i].path, err)) != PB_OK)
            goto out;
        if (opt) {
            pb_options o;
            pb_options_copy(&o, opt);
            pb_options_to_source(&o, src);
        }
        F->src_open = 1;
        rc = pb_statprofiler_samples(src, opt, sink, hooks, files[i].proc + 1, flags, NULL, err);
        F->src_open = 0;
        pb_src_close(src);
        if (rc != PB_OK)
            goto out;
    }
    if (sink->finish)
        rc = sink->finish(sink);
out:
    pb_cleanups_remove(sink->cleanups, F);
    sp_files_cleanup(F);
    return rc;
}

/* ---- directory / template expansion --------------------------------------- */
static int sp_is_hex(const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return 0;
    return 1;
}

/* name ends with ".<48 hex>.<8 hex>"; *prefix_len receives the part before */
static int sp_trace_name(const char *name, size_t *prefix_len)
{
    size_t n = strlen(name);
    const size_t tail = 1 + 48 + 1 + 8;
    if (n < tail)
        return 0;
    name += n - tail;
    if (name[0] != '.' || name[49] != '.' || !sp_is_hex(name + 1, 48) || !sp_is_hex(name + 50, 8))
        return 0;
    *prefix_len = n - tail;
    return 1;
}

static int sp_str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void pb_statprofiler_free_list(char **paths, size_t n)
{
    size_t i;
    if (!paths)
        return;
    for (i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

pb_status pb_statprofiler_expand(const char *spec, char ***paths, size_t *n, pb_error *err)
{
    DIR *dir;
    struct dirent *de;
    char *dpath;
    const char *base = NULL;
    size_t baselen = 0, cnt = 0, cap = 0;
    char **list = NULL;
    int is_dir;
    *paths = NULL;
    *n = 0;
    dir = opendir(spec);
    is_dir = dir != NULL;
    if (is_dir) {
        if (!(dpath = pb_memdup0(spec, strlen(spec)))) {
            closedir(dir);
            return pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        }
    } else {
        const char *slash = strrchr(spec, '/');
        size_t dl = slash ? (size_t)(slash - spec) : 0;
        /* the directory part ("/" for a file at the root), "." for none */
        if (!(dpath = slash ? pb_memdup0(spec, dl ? dl : 1) : pb_memdup0(".", 1)))
            return pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        base = slash ? slash + 1 : spec;
        baselen = strlen(base);
        dir = opendir(dpath);
        if (!dir) {
            free(dpath);
            return pb_fail_nooff(err, PB_ERR_IO, "cannot read directory %s for trace template %s", slash ? spec : ".",
                                 spec);
        }
    }
    while ((de = readdir(dir)) != NULL) {
        size_t plen;
        char *full;
        if (!sp_trace_name(de->d_name, &plen))
            continue;
        if (!is_dir && (plen != baselen || memcmp(de->d_name, base, baselen) != 0))
            continue;
        if (pb_grow((void **)&list, &cap, cnt + 1, sizeof *list) < 0)
            goto oom;
        full = (char *)malloc(strlen(dpath) + 1 + strlen(de->d_name) + 1);
        if (!full)
            goto oom;
        sprintf(full, "%s/%s", dpath, de->d_name);
        list[cnt++] = full;
    }
    closedir(dir);
    free(dpath);
    if (cnt == 0) {
        free(list);
        return pb_fail_nooff(err, PB_ERR_IO, "no StatProfiler trace files (<name>.<48 hex id>.<8 hex ordinal>) %s %s",
                             is_dir ? "in directory" : "match the template", spec);
    }
    qsort(list, cnt, sizeof *list, sp_str_cmp);
    *paths = list;
    *n = cnt;
    return PB_OK;
oom:
    closedir(dir);
    free(dpath);
    pb_statprofiler_free_list(list, cnt);
    return pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
}

/* ---- the format's one entry: pb_statprofiler_decoder ----------------------
 * One trace file (src), or a run of them (src NULL: the files the row's run
 * hook found, pb_options.run_paths, read by pb_statprofiler_files).  Into
 * the generic fold (pb_fold_decode: init is given the chunk sink) the
 * samples pass sp_chunks below, which makes chunks of the notes and adds
 * the run's facts; into any other sample sink (pb_sample_decode) they go as
 * the files hold them, thread key 0 for one file. */

/* Between the decoder and the fold: notes the fold does not turn into
 * chunks become chunks here.  Header and body custom metadata ->
 * ATTRIBUTE "metadata:<key>" = value (bytes a nytprof.out attribute line
 * cannot hold are written as \xNN); sections -> COMMENT "statprofiler
 * section start: NAME"; eval source goes on to the fold's note() (its
 * SRC_LINEs need the fold's fids). */
typedef struct {
    pb_sample_sink ss;
    pb_sample_sink *fold;
    pb_sink *out;
    char *tmp;
    size_t tcap;
    uint64_t samples; /* sample records folded (salvage message) */
} sp_chunks;

static pb_status spc_attribute(pb_sample_sink *self, const char *key, pb_str value)
{
    sp_chunks *c = (sp_chunks *)self->ctx;
    if (!strcmp(key, "source_format")) /* the fold's config says it */
        return PB_OK;
    return c->fold->attribute(c->fold, key, value);
}
static pb_status spc_sample(pb_sample_sink *self, uint64_t key, const uint32_t *ids, uint32_t depth, uint64_t weight,
                            uint64_t ts)
{
    sp_chunks *c = (sp_chunks *)self->ctx;
    c->samples++;
    return c->fold->sample(c->fold, key, ids, depth, weight, ts);
}
/* escaped copy into c->tmp at offset at; returns the new length or -1 */
static long spc_escape(sp_chunks *c, size_t at, pb_str s, int is_key)
{
    size_t i, o = at;
    if (pb_grow((void **)&c->tmp, &c->tcap, at + 4 * s.len + 32, 1) < 0)
        return -1;
    for (i = 0; i < s.len; i++) {
        unsigned char ch = (unsigned char)s.ptr[i];
        if (ch < 0x20 || ch == 0x7f || ch == '\\' || (is_key && ch == '=')) {
            snprintf(c->tmp + o, 5, "\\x%02x", ch);
            o += 4;
        } else {
            c->tmp[o++] = (char)ch;
        }
    }
    c->tmp[o] = '\0';
    return (long)o;
}

static pb_status spc_note(pb_sample_sink *self, const char *kind, pb_str a, pb_str b, uint32_t n)
{
    sp_chunks *c = (sp_chunks *)self->ctx;
    pb_chunk ch;
    if (!strcmp(kind, "metadata")) {
        long kl, vl;
        static const char pre[] = "metadata:";
        if (pb_grow((void **)&c->tmp, &c->tcap, 64, 1) < 0)
            return pb_fail(self->err, PB_ERR_LIMIT, 0, "out of memory");
        memcpy(c->tmp, pre, sizeof pre - 1);
        if ((kl = spc_escape(c, sizeof pre - 1, a, 1)) < 0 || (vl = spc_escape(c, (size_t)kl + 1, b, 0)) < 0)
            return pb_fail(self->err, PB_ERR_LIMIT, 0, "out of memory");
        return c->fold->attribute(c->fold, c->tmp, pb_str_make(c->tmp + kl + 1, (size_t)(vl - kl - 1), a.utf8 || b.utf8));
    }
    if (!strcmp(kind, "section_start") || !strcmp(kind, "section_end")) {
        static const char pre[] = "statprofiler section ";
        size_t pl = sizeof pre - 1, kl = strlen(kind + 8);
        long l;
        if (pb_grow((void **)&c->tmp, &c->tcap, pl + kl + 2, 1) < 0)
            return pb_fail(self->err, PB_ERR_LIMIT, 0, "out of memory");
        memcpy(c->tmp, pre, pl);
        memcpy(c->tmp + pl, kind + 8, kl);
        c->tmp[pl + kl] = ':';
        c->tmp[pl + kl + 1] = ' ';
        if ((l = spc_escape(c, pl + kl + 2, a, 0)) < 0)
            return pb_fail(self->err, PB_ERR_LIMIT, 0, "out of memory");
        c->tmp[l] = '\n';
        pb_chunk_comment(&ch, pb_str_make(c->tmp, (size_t)l + 1, a.utf8));
        if (pb_emit(c->out, &ch))
            return pb_fail(self->err, PB_ERR_ABORT, 0, "the consumer stopped the stream");
        return PB_OK;
    }
    return c->fold->note ? c->fold->note(c->fold, kind, a, b, n) : PB_OK;
}

static void spc_warn(void *ctx, const char *msg)
{
    pb_sink *out = (pb_sink *)ctx;
    if (out->warn)
        out->warn(out, msg);
}

/* the decoder's state (pb_fold_decode and pb_sample_decode hold it on the
 * heap, the former registered with the chunk sink) */
typedef struct {
    sp_dec d;            /* one trace (src) */
    sp_chunks c;         /* to chunks: between the decoder and the fold */
    pb_sp_hooks hooks;   /* to chunks: warnings to the chunk sink */
    pb_source *src;      /* NULL: a run (opt->run_paths) */
    const pb_options *opt;
    pb_sink *out;        /* the chunk sink (pb_fold_decode); NULL: samples only */
    pb_sample_sink *front; /* samples only, and to a tee's fold: its front (sp_fold_front) */
    pb_error *err;
    pb_sp_header h0;     /* a run to chunks: its first trace's header */
} sp_state;

/* nytprofhtml prints these on every page: the run's start (the genealogy
 * id's time() word) and the (first) trace's base name */
static pb_status run_facts(pb_sample_sink *ss, const unsigned char *id, const char *file)
{
    const unsigned char *w = id + 8;
    const char *b = strrchr(file, '/');
    char t[16];
    pb_status rc;
    snprintf(t, sizeof t, "%lu",
             (unsigned long)((uint32_t)w[0] | ((uint32_t)w[1] << 8) | ((uint32_t)w[2] << 16) | ((uint32_t)w[3] << 24)));
    if ((rc = ss->attribute(ss, "basetime", pb_str_c(t))) != PB_OK)
        return rc;
    if ((rc = ss->attribute(ss, "profiler", pb_str_c("Devel::StatProfiler"))) != PB_OK ||
        (rc = ss->attribute(ss, "clock", pb_str_c("wall-clock timer (one sample per tick; sample_interval_us)"))) != PB_OK)
        return rc;
    return ss->attribute(ss, "application", pb_str_c(file[0] ? (b ? b + 1 : file) : "statprofiler"));
}

static const pb_sample_sink sink_calls = {.attribute = spc_attribute, .frame = pb_sample_pass_frame,
    .thread = pb_sample_pass_thread, .sample = spc_sample, .note = spc_note, .finish = pb_sample_pass_finish};

static void sp_init(void *p, pb_source *src, const pb_options *opt, pb_sink *sink, pb_error *err)
{
    sp_state *S = (sp_state *)p;
    S->src = src;
    S->opt = opt;
    S->out = sink;
    S->err = err;
    if (src)
        sp_dec_init(&S->d, src, opt, NULL, NULL, err);
}

static void sp_free(void *p)
{
    sp_state *S = (sp_state *)p;
    if (S->src)
        sp_dec_free(&S->d);
    free(S->c.tmp);
}

/* the header (a run's first, for chunks), whose interval the fold's
 * ticks per weight is */
static pb_status sp_prepare(void *p, pb_fold_config *cfg)
{
    sp_state *S = (sp_state *)p;
    pb_status rc;
    if (S->src) {
        if ((rc = sp_header(&S->d)) != PB_OK)
            return rc;
        cfg->ticks_per_weight = S->d.hdr.interval_us;
    } else {
        if (S->opt->run_n == 0) {
            pb_error_init(S->err, "statprofiler", "");
            return pb_fail_nooff(S->err, PB_ERR_IO, "no StatProfiler trace files given");
        }
        if (!S->out)
            return PB_OK; /* to samples: pb_statprofiler_files reads every header */
        if ((rc = pb_statprofiler_read_header(S->opt->run_paths[0], &S->h0, S->err)) != PB_OK)
            return rc;
        cfg->ticks_per_weight = S->h0.interval_us;
    }
    return PB_OK;
}

/* one trace: its header facts, the thread (key 0), its samples; to chunks
 * the run's facts after the header's, and a salvage of a cut file */
static pb_status sp_run_one(sp_state *S, pb_sample_sink *ss, const pb_sp_hooks *hooks)
{
    sp_dec *d = &S->d;
    pb_status rc;
    d->sink = ss;
    d->hooks = hooks;
    d->key = 0;
    rc = sp_header_facts(d);
    if (rc == PB_OK && (S->out || S->front)) /* (to a tee's fold only: the writer's decode does without) */
        rc = run_facts(S->front ? S->front : ss, d->hdr.id, S->err->file);
    if (rc == PB_OK && ss->thread) {
        char label[16];
        uint32_t pid = pb_sp_id_pid(d->hdr.id);
        snprintf(label, sizeof label, "%u", (unsigned)pid);
        rc = ss->thread(ss, 0, pid, pb_sp_id_pid(d->hdr.parent_id), label);
    }
    if (rc == PB_OK)
        rc = sp_body(d);
    if (rc == PB_ERR_TRUNCATED && S->out && S->opt->salvage) {
        /* fold what came before the cut, then say what happened */
        pb_error keep = *S->err;
        S->err->status = PB_OK;
        rc = ss->finish(ss);
        if (rc == PB_OK) {
            *S->err = keep;
            rc = pb_salvage_warn(S->err, S->out, "%llu sample%s", (unsigned long long)S->c.samples,
                                 S->c.samples == 1 ? "" : "s");
        }
    } else if (rc == PB_OK && ss->finish) {
        rc = ss->finish(ss);
    }
    return rc;
}

/* to chunks: the notes become chunks on the way to the fold */
static pb_sample_sink *sp_chunks_front(sp_state *S, pb_sample_sink *fold, pb_sink *chunks)
{
    sp_chunks *c = &S->c;
    c->fold = fold;
    c->out = chunks;
    pb_sample_sink_init(&c->ss, &sink_calls, c, S->err, chunks->cleanups);
    c->ss.next = fold;
    S->hooks.warn = spc_warn;
    S->hooks.ctx = chunks;
    return &c->ss;
}

/* a sample tee's fold (fold_samples.h fold_front): the chunk path's front,
 * the warnings to its chunks, for one trace */
static pb_sample_sink *sp_fold_front(void *p, pb_sample_sink *fold, pb_sink *chunks)
{
    sp_state *S = (sp_state *)p;
    if (!S->src || S->out)
        return NULL;
    return S->front = sp_chunks_front(S, fold, chunks);
}

static pb_status sp_run(void *p, pb_sample_sink *out)
{
    sp_state *S = (sp_state *)p;
    pb_sample_sink *ss = out;
    const pb_sp_hooks *hooks = NULL;
    pb_status rc;
    if (S->out) { /* to chunks: the notes become chunks on the way to the fold */
        ss = sp_chunks_front(S, out, S->out);
        hooks = &S->hooks;
    } else if (S->front) {
        hooks = &S->hooks;
    }
    if (S->src)
        return sp_run_one(S, ss, hooks);
    if (S->out && (rc = run_facts(ss, S->h0.id, S->opt->run_paths[0])) != PB_OK)
        return rc;
    return pb_statprofiler_files(S->opt->run_paths, S->opt->run_n, S->opt, ss, hooks, S->err);
}

/* nytprof.out's time is the sampled time; ticks per weight: the interval (prepare); to chunks, the
 * TIME_LINEs beyond one of a sample with frames are charged to max_statements as given (split) */
const pb_fold_decoder pb_statprofiler_decoder = {sizeof(sp_state), sp_init, sp_prepare, sp_run, sp_free,
    {.source_format = "statprofiler", .ticks_per_sec = 1000000, .sampled_spans = 1, .no_sample_tee = 1,
     .split = {.words = "sample record {record}: weight {weight} x {interval} us needs {extra} more TIME_LINE "
                        "chunks than the {left} left of max_statements",
               .no_offset = 1, .empty_free = 1, .whole_max = 1, .chunks_only = 1},
     .fold_front = sp_fold_front}};

/* keep[i] (1: the root's own files, 0: the others, readable or not) becomes
 * 1 for every file whose process descends from a kept one.  Through one hash
 * from process id to process, each process's answer is found once (memoised
 * along the walk up its ancestry): O(N) for N files.  0, or -1 out of memory. */
typedef struct {
    const pb_sp_header *hs;
    const size_t *first; /* per process: one file of it */
} sp_procs_ctx;
static uint32_t sp_procs_hash(const void *ctx, uint32_t p)
{
    const sp_procs_ctx *c = (const sp_procs_ctx *)ctx;
    return sp_id_hash(c->hs[c->first[p]].id);
}
static uint32_t sp_procs_find(const pb_index *ix, const sp_procs_ctx *c, const unsigned char *id, size_t *slot)
{
    size_t k;
    uint32_t p;
    PB_INDEX_FIND(ix, sp_id_hash(id), k, p, !memcmp(c->hs[c->first[p]].id, id, PB_SP_ID_BYTES));
    if (slot)
        *slot = k;
    return p;
}

static int sp_keep_descendants(const pb_sp_header *hs, unsigned char *keep, size_t cnt)
{
    static const unsigned char zero[PB_SP_ID_BYTES];
    pb_index ix;
    sp_procs_ctx c;
    size_t i, np = 0, *first, *stack, *proc_of;
    unsigned char *state; /* per process: 0 unknown, 1 on the walk, 2 kept, 3 not */
    int rc = -1;
    memset(&ix, 0, sizeof ix);
    first = (size_t *)calloc(cnt ? cnt : 1, sizeof *first);
    stack = (size_t *)calloc(cnt ? cnt : 1, sizeof *stack);
    proc_of = (size_t *)calloc(cnt ? cnt : 1, sizeof *proc_of);
    state = (unsigned char *)calloc(cnt ? cnt : 1, 1);
    c.hs = hs;
    c.first = first;
    if (!first || !stack || !proc_of || !state)
        goto out;
    for (i = 0; i < cnt; i++) {
        size_t k;
        uint32_t p;
        proc_of[i] = (size_t)-1;
        if (!memcmp(hs[i].id, zero, PB_SP_ID_BYTES))
            continue; /* unreadable (zeroed): no process */
        if (pb_index_reserve(&ix, np, sp_procs_hash, &c) < 0)
            goto out;
        if ((p = sp_procs_find(&ix, &c, hs[i].id, &k)) == PB_INDEX_NONE) {
            p = (uint32_t)np++;
            first[p] = i;
            pb_index_set(&ix, k, p);
        }
        proc_of[i] = p;
        if (keep[i])
            state[p] = 2; /* the root's process */
    }
    for (i = 0; i < np; i++) {
        size_t top = 0, p = i;
        unsigned char verdict = 3;
        /* walk up the ancestry until a process whose answer is known */
        while (state[p] == 0) {
            uint32_t q;
            const unsigned char *pid = hs[first[p]].parent_id;
            state[p] = 1;
            stack[top++] = p;
            if (!memcmp(pid, zero, PB_SP_ID_BYTES) || (q = sp_procs_find(&ix, &c, pid, NULL)) == PB_INDEX_NONE)
                break; /* a root, or a parent not among the files: not ours */
            p = q;
        }
        if (state[p] == 2 || state[p] == 3)
            verdict = state[p]; /* (1: a cycle, or the walk's own end: not ours) */
        while (top > 0)
            state[stack[--top]] = verdict;
    }
    for (i = 0; i < cnt; i++)
        if (!keep[i] && proc_of[i] != (size_t)-1)
            keep[i] = state[proc_of[i]] == 2;
    rc = 0;
out:
    pb_index_free(&ix);
    PB_FREE_ALL(first, stack, proc_of, state);
    return rc;
}

/* Over 80 lines, kept whole: a run's genealogy (which files belong to the root) in ordered steps
 * that share the headers read once. */
int pb_statprofiler_run(const char *path, pb_source *src, const pb_options *opt, char ***paths, size_t *n,
                        pb_error *err)
{
    static const unsigned char zero[PB_SP_ID_BYTES];
    struct stat sb;
    size_t plen, i, k, cnt = 0, sl = 0;
    char **list = NULL;
    pb_sp_header root, *hs;
    unsigned char *keep;
    char seen[160];
    int have_pid = opt && opt->have_pid;
    int is_dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    *paths = NULL;
    *n = 0;
    if (is_dir) {
        if (pb_statprofiler_expand(path, &list, &cnt, err) != PB_OK)
            return -1;
    } else {
        pb_error herr;
        char *tmpl;
        if (!sp_trace_name(base, &plen))
            return 0;
        pb_error_init(&herr, "statprofiler", path);
        if (sp_header_of(path, src, &root, &herr) != PB_OK)
            return 0; /* not readable as a trace: the decoder will say why */
        if (root.ordinal != 1 || memcmp(root.parent_id, zero, sizeof zero) != 0) {
            /* one file of one process: read it alone, if it is that process's */
            if (!have_pid || pb_sp_id_pid(root.id) == opt->pid)
                return 0;
            pb_fail_nooff(err, PB_ERR_UNSUPPORTED, "no process %u in this trace (its process is %u)", opt->pid,
                          pb_sp_id_pid(root.id));
            return -1;
        }
        tmpl = (char *)malloc((size_t)(base - path) + plen + 1);
        if (!tmpl) {
            pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
            return -1;
        }
        memcpy(tmpl, path, (size_t)(base - path) + plen);
        tmpl[(size_t)(base - path) + plen] = '\0';
        i = pb_statprofiler_expand(tmpl, &list, &cnt, err) != PB_OK;
        free(tmpl);
        if (i)
            return -1;
    }
    /* every header once: which files belong to the root's genealogy (its
     * own and its descendants'; other roots sharing the template, e.g. one
     * trace per thread written from another profiler, are other runs), and
     * which to the process asked for */
    hs = (pb_sp_header *)calloc(cnt ? cnt : 1, sizeof *hs);
    keep = (unsigned char *)calloc(cnt ? cnt : 1, 1);
    if (!hs || !keep) {
        free(hs);
        free(keep);
        pb_statprofiler_free_list(list, cnt);
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return -1;
    }
    for (i = 0; i < cnt; i++) {
        pb_error herr;
        const char *lb = strrchr(list[i], '/');
        pb_error_init(&herr, "statprofiler", list[i]);
        if (!is_dir && !strcmp(lb ? lb + 1 : list[i], base)) { /* path itself (its directory's): read above */
            hs[i] = root;
            keep[i] = 1;
        } else
            keep[i] = pb_statprofiler_read_header(list[i], &hs[i], &herr) == PB_OK;
        if (!keep[i])
            memset(&hs[i], 0, sizeof hs[i]);
        else if (!is_dir)
            keep[i] = memcmp(hs[i].id, root.id, PB_SP_ID_BYTES) == 0;
        else
            keep[i] = 1; /* a directory: every trace in it, readable or not (the reader says why) */
    }
    if (!is_dir && sp_keep_descendants(hs, keep, cnt) < 0) {
        free(hs);
        free(keep);
        pb_statprofiler_free_list(list, cnt);
        pb_fail_nooff(err, PB_ERR_LIMIT, "out of memory");
        return -1;
    }
    seen[0] = '\0';
    for (i = k = 0; i < cnt; i++) {
        if (keep[i] && have_pid && pb_sp_id_pid(hs[i].id) != opt->pid) {
            /* not the process asked for: its pid for the message */
            if (hs[i].ordinal == 1 && sl < sizeof seen - 16)
                sl += (size_t)snprintf(seen + sl, sizeof seen - sl, "%s%u", sl ? ", " : "", pb_sp_id_pid(hs[i].id));
            keep[i] = 0;
        }
        if (keep[i])
            list[k++] = list[i];
        else
            free(list[i]);
    }
    cnt = k;
    free(hs);
    free(keep);
    if (!is_dir && cnt < 2 && !have_pid) {
        pb_statprofiler_free_list(list, cnt);
        return 0;
    }
    if (cnt == 0) {
        free(list);
        if (have_pid)
            pb_fail_nooff(err, PB_ERR_UNSUPPORTED, "no process %u in this run (its processes: %s)", opt->pid,
                          sl ? seen : "none");
        else
            pb_fail_nooff(err, PB_ERR_IO, "no Devel::StatProfiler trace files (NAME.<48 hex>.<8 hex>) in %s", path);
        return -1;
    }
    *paths = list;
    *n = cnt;
    return 1;
}
