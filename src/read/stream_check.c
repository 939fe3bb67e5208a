/* The checks of an archive's bytes as they arrive, for handles that hold
 * no mapping of the file (remote ones; a host's): the whole file fed in
 * order (oz_stream: verify, fetch, the host's streaming verifier). The
 * bytes come from the callers, or from the handle's source for verify. */
#include <stdio.h>
#include <stdlib.h>

#include "read/stream_check.h"

int oz_entry_check_digests(const oz_zentry *e, const char *path, uint32_t crc, uint64_t xxh3)
{
    const onnxzip_entry *p = &e->pub;
    char shown[OZ_PRINTABLE_CAP];
    if (crc != p->crc32)
        return oz_err(ONNXZIP_ECRC, (int64_t)p->data_offset, "%s: entry '%s': CRC-32 of the data is %08x, the "
                      "archive records %08x", path, oz_printable(p->name, e->name_len, shown, sizeof shown), crc,
                      p->crc32);
    if (p->has_xxh3 && xxh3 != p->xxh3)
        return oz_err(ONNXZIP_EDIGEST, (int64_t)p->data_offset, "%s: entry '%s': XXH3-64 of the data is %016llx, "
                      "the archive records %016llx", path, oz_printable(p->name, e->name_len, shown, sizeof shown),
                      (unsigned long long)xxh3, (unsigned long long)p->xxh3);
    return 0;
}

int oz_entry_check_data(const oz_zentry *e, const char *path, const void *d)
{
    oz_checksum cs;
    oz_checksum_init(&cs);
    oz_checksum_update(&cs, d, e->pub.size);
    return oz_entry_check_digests(e, path, cs.crc, XXH3_64bits_digest(&cs.xxh));
}

enum { PH_GAP, PH_HDR, PH_DATA, PH_TAIL };
#define HDR_MAX (30 + 0xFFFF + 0xFFFF)

static const oz_zentry *cur(const oz_stream *s)
{
    return &s->a->zip.entries[s->order[s->k]];
}

static const char *shown(const oz_zentry *e, char *buf)
{
    return oz_printable(e->pub.name, e->name_len, buf, OZ_PRINTABLE_CAP);
}

/* The next entry in file order, or the directory once all were checked. */
static int next_entry(oz_stream *s)
{
    const oz_zip *z = &s->a->zip;
    if (s->k == z->n) {
        s->phase = PH_TAIL;
        return 0;
    }
    const oz_zentry *e = cur(s);
    char b[OZ_PRINTABLE_CAP];
    if (s->pos > e->pub.header_offset || (s->pos < e->pub.header_offset && s->order[s->k] != z->model_index))
        return oz_err(ONNXZIP_EOVERLAP, (int64_t)s->pos, "%s: entry '%s' at offset %llu: the previous entry ends at "
                      "%llu", s->a->path, shown(e, b), (unsigned long long)e->pub.header_offset,
                      (unsigned long long)s->pos);
    s->phase = s->pos < e->pub.header_offset ? PH_GAP : PH_HDR; /* dead space before the model */
    s->hlen = 0;
    s->hneed = 0; /* known once its first 30 bytes are */
    return 0;
}

int oz_stream_init_at(oz_stream *s, const onnxzip_archive *a, size_t k)
{
    memset(s, 0, sizeof *s);
    s->a = a;
    s->order = oz_zip_by_offset(a->zip.entries, a->zip.n);
    s->hdr = malloc(HDR_MAX);
    if (!s->order || !s->hdr) {
        oz_stream_free(s);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (stream check)");
    }
    s->k = s->good_k = k < a->zip.n ? k : a->zip.n;
    s->pos = s->good = s->k < a->zip.n ? cur(s)->pub.header_offset : a->zip.cd_offset;
    return next_entry(s);
}

int oz_stream_init(oz_stream *s, const onnxzip_archive *a)
{
    return oz_stream_init_at(s, a, 0);
}

void oz_stream_free(oz_stream *s)
{
    free(s->order);
    free(s->hdr);
    s->order = NULL;
    s->hdr = NULL;
}

static int header_done(oz_stream *s)
{
    const oz_zentry *e = cur(s);
    uint64_t doff;
    int rc = oz_zip_check_local(&s->a->zip, s->order[s->k], s->hdr, s->hlen, s->a->path, &doff);
    if (rc) return rc;
    s->data_end = doff + e->pub.size;
    oz_checksum_init(&s->sum);
    s->phase = PH_DATA;
    return 0;
}

static int data_done(oz_stream *s)
{
    int rc = oz_entry_check_digests(cur(s), s->a->path, s->sum.crc, XXH3_64bits_digest(&s->sum.xxh));
    if (rc) return rc;
    s->k++;
    s->good = s->pos;
    s->good_k = s->k;
    return next_entry(s);
}

/* The directory and end records, as validated at open. */
static int tail(oz_stream *s, const uint8_t *p, size_t n)
{
    const oz_source *r = &s->a->src;
    if (s->pos < r->win_off || n > s->a->size - s->pos || memcmp(p, oz_source_window(r) + (s->pos - r->win_off), n))
        return oz_err(ONNXZIP_ECHANGED, (int64_t)s->pos, "%s: the bytes at offset %llu differ from the ones read "
                      "when the archive was opened", s->a->path, (unsigned long long)s->pos);
    return 0;
}

int oz_stream_feed(oz_stream *s, const uint8_t *p, size_t n)
{
    while (n) {
        size_t take = n;
        int rc = 0;
        if (s->phase == PH_GAP) {
            uint64_t gap = cur(s)->pub.header_offset - s->pos;
            if (take > gap) take = (size_t)gap;
        } else if (s->phase == PH_HDR) {
            size_t want = s->hneed ? s->hneed : 30;
            if (take > want - s->hlen) take = want - s->hlen;
            memcpy(s->hdr + s->hlen, p, take);
            s->hlen += take;
        } else if (s->phase == PH_DATA) {
            if (take > s->data_end - s->pos) take = (size_t)(s->data_end - s->pos);
            oz_checksum_update(&s->sum, p, take);
        } else if ((rc = tail(s, p, take))) {
            return rc;
        }
        s->pos += take;
        p += take;
        n -= take;
        if (s->phase == PH_GAP && s->pos == cur(s)->pub.header_offset) s->phase = PH_HDR;
        else if (s->phase == PH_HDR && s->hlen == 30 && !s->hneed)
            s->hneed = 30 + (size_t)oz_rd16(s->hdr + 26) + oz_rd16(s->hdr + 28);
        if (s->phase == PH_HDR && s->hneed && s->hlen == s->hneed) rc = header_done(s);
        if (!rc && s->phase == PH_DATA && s->pos == s->data_end) rc = data_done(s);
        if (rc) return rc;
    }
    return 0;
}

int oz_stream_finish(oz_stream *s)
{
    if (s->phase == PH_TAIL && s->pos == s->a->size) return 0;
    return oz_err(ONNXZIP_ETRUNC, (int64_t)s->pos, "%s: the file ended at offset %llu, before its %llu bytes",
                  s->a->path, (unsigned long long)s->pos, (unsigned long long)s->a->size);
}

static int feed_sink(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    (void)at;
    return oz_stream_feed(ctx, p, n);
}

int oz_stream_verify(onnxzip_archive *a)
{
    oz_stream s;
    int rc = oz_stream_init(&s, a);
    if (!rc) rc = oz_source_stream(&a->src, 0, feed_sink, &s);
    if (!rc) rc = oz_stream_finish(&s);
    oz_stream_free(&s);
    return rc;
}

struct onnxzip_verifier {
    oz_stream s;
    int status; /* the first fault fed */
};

int onnxzip_verifier_begin(const onnxzip_archive *a, onnxzip_verifier **out)
{
    if (out) *out = NULL;
    if (!a || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_verifier_begin: NULL argument");
    if (a->layout != ONNXZIP_LAYOUT_ARCHIVE)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: a classic model, not an archive: use onnxzip_verify()", a->path);
    onnxzip_verifier *v = calloc(1, sizeof *v);
    if (!v) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (verify)");
    int rc = oz_stream_init(&v->s, a);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    return 0;
}

int onnxzip_verifier_feed(onnxzip_verifier *v, const void *p, size_t n)
{
    if (!v || (!p && n)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_verifier_feed: NULL argument");
    if (!v->status) v->status = oz_stream_feed(&v->s, p, n);
    else oz_err(v->status, (int64_t)v->s.pos, "%s: verification already failed (%s)", v->s.a->path,
                onnxzip_status_name(v->status));
    return v->status;
}

int onnxzip_verifier_end(onnxzip_verifier **vp)
{
    if (!vp || !*vp) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_verifier_end: NULL argument");
    onnxzip_verifier *v = *vp;
    int rc = v->status ? v->status : oz_stream_finish(&v->s);
    if (!rc) rc = oz_verify_model_fields(v->s.a);
    onnxzip_verifier_free(vp);
    return rc;
}

void onnxzip_verifier_free(onnxzip_verifier **vp)
{
    if (!vp || !*vp) return;
    oz_stream_free(&(*vp)->s);
    free(*vp);
    *vp = NULL;
}
