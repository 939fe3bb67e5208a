/* An unmapped handle's bytes, read through its source (common/source.h):
 * tensor ranges on demand, each entry's local header checked on its first
 * read and, for a remote archive (src.defer_headers: its bytes come over a
 * network), its CRC-32 and XXH3 whenever it is read whole; an entry a
 * signature check pinned (read/pins.h) read whole, always, and compared
 * with its pin; spans of the file in batches. A mapped handle's spans are
 * copied from the mapping. */
#include <stdio.h>
#include <stdlib.h>

#include "read/pins.h"
#include "read/source_read.h"
#include "read/stream_check.h"

/* A streamed entry's buffer: enough ranges for a few connections at once,
 * small enough that streaming a file of any size stays within tens of MiB. */
#define STREAM_PIECE_MAX ((uint64_t)32 << 20)

static int find_entry(const onnxzip_archive *a, const onnxzip_tensor *t, size_t *i)
{
    const oz_zentry *e = t->entry ? oz_zip_find(&a->zip, t->entry, strlen(t->entry)) : NULL;
    if (!e) return oz_err(ONNXZIP_EINVAL, -1, "%s: tensor '%s' names no entry (internal error)", a->path, t->name);
    *i = (size_t)(e - a->zip.entries);
    return 0;
}

static int read_entry(onnxzip_archive *a, size_t i, uint64_t off, uint64_t len, void *dst)
{
    const oz_zentry *e = &a->zip.entries[i];
    int check = a->checked && !atomic_load(&a->checked[i]);
    uint64_t hlen = e->pub.data_offset - e->pub.header_offset;
    uint8_t *hdr = check ? malloc((size_t)hlen) : NULL;
    if (check && !hdr) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (reading a tensor)");
    oz_range r[2] = { { e->pub.header_offset, hlen, hdr }, { e->pub.data_offset + off, len, dst } };
    int rc = oz_source_readv(&a->src, r + !check, 1 + (size_t)check);
    if (!rc && check) rc = oz_entry_check_header(a, i, hdr);
    free(hdr);
    return rc;
}

int oz_entry_check_read(const onnxzip_archive *a, size_t i, const void *d)
{
    const oz_zentry *e = &a->zip.entries[i];
    int rc = a->src.defer_headers ? oz_entry_check_data(e, a->path, d) : 0;
    return rc ? rc : oz_pin_check(a, i, d);
}

/* Part [from, from + len) of a pinned entry, as the entry streams by whole. */
typedef struct part {
    uint8_t *dst;
    uint64_t from, len;
} part;

static int copy_part(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    part *c = ctx;
    uint64_t lo = at > c->from ? at : c->from, hi = at + n < c->from + c->len ? at + n : c->from + c->len;
    if (lo < hi) memcpy(c->dst + (lo - c->from), p + (lo - at), (size_t)(hi - lo));
    return 0;
}

int oz_entry_read(onnxzip_archive *a, size_t i, uint64_t off, uint64_t len, void *dst)
{
    const oz_zentry *e = &a->zip.entries[i];
    int whole = off == 0 && len == e->pub.size;
    if (!whole && len && oz_pinned(a, i)) { /* its pin covers it whole: read whole, hand out the part */
        part c = { dst, off, len };
        return oz_entry_stream(a, i, copy_part, &c);
    }
    int rc = read_entry(a, i, off, len, dst);
    /* A whole entry: checked from the bytes just read, still in cache. */
    return !rc && whole ? oz_entry_check_read(a, i, dst) : rc;
}

int oz_entries_read(onnxzip_archive *a, const size_t *idx, size_t n, uint8_t *const *dst)
{
    oz_range *r = calloc(2 * n + 1, sizeof *r);
    uint8_t **hdr = calloc(n + 1, sizeof *hdr);
    int rc = r && hdr ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory (reading %zu entries)", n);
    size_t nr = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        const oz_zentry *e = &a->zip.entries[idx[k]];
        uint64_t hlen = e->pub.data_offset - e->pub.header_offset;
        if (a->checked && !atomic_load(&a->checked[idx[k]])) { /* its local header, in the same batch */
            if (!(hdr[k] = malloc((size_t)hlen))) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
            else r[nr++] = (oz_range){ e->pub.header_offset, hlen, hdr[k] };
        }
        r[nr++] = (oz_range){ e->pub.data_offset, e->pub.size, dst[k] };
    }
    if (!rc) rc = oz_source_readv(&a->src, r, nr);
    for (size_t k = 0; k < n && !rc; k++) {
        if (hdr[k]) rc = oz_entry_check_header(a, idx[k], hdr[k]);
        if (!rc) rc = oz_entry_check_read(a, idx[k], dst[k]);
    }
    for (size_t k = 0; hdr && k < n; k++) free(hdr[k]);
    free(hdr);
    free(r);
    return rc;
}

int oz_entry_stream(onnxzip_archive *a, size_t i, oz_sink_fn sink, void *ctx)
{
    const oz_zentry *e = &a->zip.entries[i];
    uint64_t size = e->pub.size, w = oz_spans_window(a), piece = size < w ? size : w;
    if (piece > STREAM_PIECE_MAX) piece = STREAM_PIECE_MAX;
    uint8_t *buf = malloc(piece ? (size_t)piece : 1);
    if (!buf) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (%llu bytes)", a->path,
                            (unsigned long long)piece);
    oz_checksum cs;
    oz_checksum_init(&cs);
    oz_pin_hash pin;
    int rc = oz_pin_begin(a, i, &pin);
    for (uint64_t off = 0; off < size && !rc;) {
        size_t n = (size_t)(size - off < piece ? size - off : piece);
        if (!(rc = read_entry(a, i, off, n, buf))) {
            if (a->src.defer_headers) oz_checksum_update(&cs, buf, n);
            oz_pin_update(&pin, buf, n);
            rc = sink(ctx, buf, n, off);
        }
        off += n;
    }
    free(buf);
    if (!rc && a->src.defer_headers) rc = oz_entry_check_digests(e, a->path, cs.crc, XXH3_64bits_digest(&cs.xxh));
    int prc = oz_pin_end(a, i, &pin); /* frees it, whatever came before */
    return rc ? rc : prc;
}

int oz_tensor_read_unmapped(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len, void *dst)
{
    size_t i = 0;
    int rc = find_entry(a, t, &i);
    if (rc || !len) return rc;
    return oz_entry_read(a, i, t->file_offset - a->zip.entries[i].pub.data_offset + offset, len, dst);
}

#define WINDOW_MIN ((uint64_t)64 << 20)

uint64_t oz_spans_window(const onnxzip_archive *a)
{
    uint64_t w = a->src.ops && a->src.ops->batch ? a->src.ops->batch(&a->src) : 0;
    return w > WINDOW_MIN ? w : WINDOW_MIN;
}
