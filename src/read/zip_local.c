/* Local headers (spec §"Reader requirements"): each checked against its
 * central record, read through the source or from the window; for a remote
 * archive, those outside the window but the model's predicted from the
 * layout and checked on their first read (oz_zip_check_local()). */
#include <stdio.h>
#include <stdlib.h>

#include "common/source.h"
#include "common/zip_format.h"
#include "read/zip_parse.h"

/* `n` bytes at offset `off` (within the file): from the window, or read
 * by the source when it reads local headers (src/common/source.h: a
 * local file's page cache costs less than faulting in the mapping).
 * Returns NULL (status set) on a read error. */
static const uint8_t *fetch(ctx *c, uint64_t off, size_t n)
{
    if (!c->src || !c->src->read_headers) return at(c, off);
    if (n > c->lcap) {
        uint8_t *b = realloc(c->lbuf, n);
        if (!b) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (local header)"), NULL;
        c->lbuf = b;
        c->lcap = n;
    }
    return c->src->ops->read(c->src, off, n, c->lbuf) ? NULL : c->lbuf;
}

/* The first read of a local header covers the header, the name and an extra
 * field of up to 128 bytes (64-byte alignment pads with at most 63); longer
 * ones need a second. It stops at the end of the page holding the name, so
 * that no page beyond the header's is brought in. */
static size_t header_span(const ctx *c, const oz_zentry *ze)
{
    uint64_t lho = ze->pub.header_offset, room = c->cd_offset - lho, name_end = lho + ZIP_LOCAL_SIZE + ze->name_len;
    uint64_t want = ZIP_LOCAL_SIZE + ze->name_len + 128, page_end = (name_end | 4095) + 1 - lho;
    uint64_t first = want < page_end ? want : page_end;
    return (size_t)(first < room ? first : room);
}

/* Checks the local header `h` of entry `ze` (`have` bytes at hand from its
 * first byte): *need is set to its length when more bytes are needed,
 * else the header is checked against the central record and data_offset
 * and align_claim are set. */
static int check_local_bytes(ctx *c, oz_zentry *ze, const uint8_t *h, uint64_t have, size_t *need)
{
    uint64_t lho = ze->pub.header_offset, room = c->cd_offset - lho;
    *need = 0;
    uint16_t nlen = oz_rd16(h + LH_NAMELEN), elen = oz_rd16(h + LH_EXTRALEN);
    if (oz_rd32(h) != ZIP_LOCAL_SIG)
        return oz_err(ONNXZIP_ELOCAL, (int64_t)lho, "%s: entry '%s': no local header signature at offset %llu",
                      c->path, SHOWN, (unsigned long long)lho);
    if (room - ZIP_LOCAL_SIZE < (uint64_t)nlen + elen)
        return oz_err(ONNXZIP_EBOUNDS, (int64_t)lho, "%s: entry '%s': local header at offset %llu runs into the "
                      "central directory", c->path, SHOWN, (unsigned long long)lho);
    if (ZIP_LOCAL_SIZE + (uint64_t)nlen + elen > have) {
        *need = ZIP_LOCAL_SIZE + (size_t)nlen + elen;
        return 0;
    }
    if (nlen != ze->name_len || memcmp(h + ZIP_LOCAL_SIZE, ze->pub.name, nlen))
        return oz_err(ONNXZIP_ELOCAL, (int64_t)lho, "%s: entry '%s': local header at offset %llu has another "
                      "name than the central directory", c->path, SHOWN, (unsigned long long)lho);
    if (oz_rd16(h + LH_FLAGS) != ze->flags || oz_rd16(h + LH_METHOD) != ze->method)
        return oz_err(ONNXZIP_ELOCAL, (int64_t)lho, "%s: entry '%s': local header flags or method differ from "
                      "the central directory", c->path, SHOWN);
    if (oz_rd32(h + LH_CRC) != ze->pub.crc32)
        return oz_err(ONNXZIP_ELOCAL, (int64_t)lho, "%s: entry '%s': local CRC-32 %08x differs from central "
                      "CRC-32 %08x", c->path, SHOWN, oz_rd32(h + LH_CRC), ze->pub.crc32);
    extras x;
    int ex = oz_zip_extras(h + ZIP_LOCAL_SIZE + nlen, elen, ze->pub.name, nlen, &x);
    if (ex)
        return oz_err(ex == -2 ? ONNXZIP_EZIP64 : x.fault ? ONNXZIP_ENAME : ONNXZIP_ELOCAL,
                      (int64_t)lho, "%s: entry '%s': %s in the local "
                      "header", c->path, SHOWN, ex == -2 ? "two zip64 extra fields" : x.fault ? x.fault : "malformed "
                      "or duplicated extra field");
    /* A local zip64 field holds both sizes (APPNOTE 4.5.3); when present it
     * must agree with the 32-bit fields it does not replace. */
    uint64_t usize = oz_rd32(h + LH_USIZE), csize = oz_rd32(h + LH_CSIZE);
    int marked = usize == U32_MARK || csize == U32_MARK;
    if ((marked || x.has_zip64) && (!x.has_zip64 || x.zip64_len < 16))
        return oz_err(ONNXZIP_EZIP64, (int64_t)lho, "%s: entry '%s': local zip64 extra field missing or short",
                      c->path, SHOWN);
    if (x.has_zip64) {
        uint64_t zu = oz_rd64(x.zip64), zc = oz_rd64(x.zip64 + 8);
        if ((usize != U32_MARK && usize != zu) || (csize != U32_MARK && csize != zc))
            return oz_err(ONNXZIP_EZIP64, (int64_t)lho, "%s: entry '%s': local zip64 sizes (%llu, %llu) disagree "
                          "with the 32-bit size fields", c->path, SHOWN, (unsigned long long)zc,
                          (unsigned long long)zu);
        usize = zu;
        csize = zc;
    }
    if (usize != ze->pub.size || csize != ze->pub.size)
        return oz_err(ONNXZIP_ELOCAL, (int64_t)lho, "%s: entry '%s': local sizes (%llu, %llu) differ from the "
                      "central directory's (%llu)", c->path, SHOWN, (unsigned long long)csize,
                      (unsigned long long)usize, (unsigned long long)ze->pub.size);
    ze->pub.data_offset = lho + ZIP_LOCAL_SIZE + nlen + elen;
    ze->align_claim = x.has_align ? x.align : 0;
    if (ze->pub.size > c->cd_offset - ze->pub.data_offset)
        return oz_err(ONNXZIP_EBOUNDS, (int64_t)ze->pub.data_offset, "%s: entry '%s': %llu data bytes at offset "
                      "%llu run past the start of the central directory (%llu)", c->path, SHOWN,
                      (unsigned long long)ze->pub.size, (unsigned long long)ze->pub.data_offset,
                      (unsigned long long)c->cd_offset);
    return 0;
}

static int check_local(ctx *c, oz_zentry *ze)
{
    uint64_t lho = ze->pub.header_offset;
    if (lho > c->cd_offset || c->cd_offset - lho < ZIP_LOCAL_SIZE)
        return oz_err(ONNXZIP_EBOUNDS, (int64_t)lho, "%s: entry '%s': local header offset %llu lies outside the "
                      "data area (before offset %llu)", c->path, SHOWN, (unsigned long long)lho,
                      (unsigned long long)c->cd_offset);
    size_t first = header_span(c, ze), need;
    const uint8_t *h = fetch(c, lho, first);
    if (!h) return onnxzip_last_error()->status;
    int rc = check_local_bytes(c, ze, h, first, &need);
    if (rc || !need) return rc;
    if (!(h = fetch(c, lho, need))) return onnxzip_last_error()->status;
    return check_local_bytes(c, ze, h, need, &need);
}

/* A remote archive's entries other than the model, whose local headers are
 * not at hand: entries tile the data area (spec 6.5), so each one's data
 * ends where the next local header begins, and the first read of its bytes
 * checks that (oz_zip_check_local()). The one exception the format allows,
 * dead space before the model, is then found and refused. */
static int predict_local(ctx *c, oz_zentry *ze, uint64_t next)
{
    uint64_t lho = ze->pub.header_offset;
    if (lho > c->cd_offset || c->cd_offset - lho < ZIP_LOCAL_SIZE)
        return oz_err(ONNXZIP_EBOUNDS, (int64_t)lho, "%s: entry '%s': local header offset %llu lies outside the "
                      "data area (before offset %llu)", c->path, SHOWN, (unsigned long long)lho,
                      (unsigned long long)c->cd_offset);
    uint64_t min_hdr = ZIP_LOCAL_SIZE + (uint64_t)ze->name_len;
    if (next < lho || next - lho < min_hdr || next - lho - min_hdr < ze->pub.size ||
        next - lho - min_hdr - ze->pub.size > 0xFFFF)
        return oz_err(ONNXZIP_EOVERLAP, (int64_t)lho, "%s: entry '%s': its local header at offset %llu and %llu data "
                      "bytes do not fit before the next entry at offset %llu", c->path, SHOWN,
                      (unsigned long long)lho, (unsigned long long)ze->pub.size, (unsigned long long)next);
    ze->pub.data_offset = next - ze->pub.size;
    ze->align_claim = 0;
    return 0;
}
/* On a cold cache one blocking read per header, in turn, would wait for the
 * disk once per entry; asking for all of them at once lets it serve them in
 * parallel. Only once a read found its page missing: warm opens pay nothing. */
static void prefetch(const ctx *c, size_t from, size_t to)
{
    for (size_t i = from; i < to && c->src->ops->willneed; i++) {
        const oz_zentry *ze = &c->z->entries[i];
        if (ze->pub.header_offset < c->cd_offset)
            c->src->ops->willneed(c->src, ze->pub.header_offset, header_span(c, ze));
    }
}

/* Every local header whose bytes are at hand is checked at open, as a
 * local file's are: a remote archive's in the window too (a small package
 * is all window), so that `ls URL` refuses what `ls FILE` refuses; the
 * others are predicted and checked on their entry's first read. */
static int local_or_predicted(ctx *c, oz_zentry *ze, uint64_t next)
{
    if (!c->deferred || ze->pub.header_offset >= c->win_off) return check_local(c, ze);
    if (!oz_zip_is_last_kind(ze->pub.name, ze->name_len)) return predict_local(c, ze, next);
    if (!in_window(c, ze->pub.header_offset)) return oz_zip_need_more(c);
    return check_local(c, ze);
}

typedef struct lho_key {
    uint64_t off;
    uint32_t i;
} lho_key;

static int cmp_lho(const void *x, const void *y)
{
    uint64_t a = ((const lho_key *)x)->off, b = ((const lho_key *)y)->off;
    return (a > b) - (a < b);
}

uint32_t *oz_zip_by_offset(const oz_zentry *e, size_t n)
{
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    lho_key *k = malloc((n ? n : 1) * sizeof *k);
    if (order && k) {
        for (size_t i = 0; i < n; i++) k[i] = (lho_key){ e[i].pub.header_offset, (uint32_t)i };
        qsort(k, n, sizeof *k, cmp_lho);
        for (size_t i = 0; i < n; i++) order[i] = k[i].i;
    } else {
        free(order);
        order = NULL;
    }
    free(k);
    return order;
}

/* For each of entries [0, n), the header offset of the entry that follows it
 * in the file (the central directory's offset for the last): what a remote
 * archive's data offsets are predicted from. */
static uint64_t *next_offsets(ctx *c, size_t n)
{
    uint64_t *next = malloc((n ? n : 1) * sizeof *next);
    uint32_t *order = oz_zip_by_offset(c->z->entries, n);
    if (!next || !order) {
        free(next);
        free(order);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (central directory)"), NULL;
    }
    for (size_t k = 0; k < n; k++)
        next[order[k]] = k + 1 < n ? c->z->entries[order[k + 1]].pub.header_offset : c->cd_offset;
    free(order);
    return next;
}

/* Local headers of entries [0, n); *failed: the first that fails (n if none),
 * its error in *err. (Two threads sharing the reads measured slower: thread
 * start, TLB shootdowns at munmap and a second malloc arena cost more than
 * the reads they split.) */
void oz_zip_check_locals(ctx *c, size_t n, size_t *failed, saved_err *err)
{
    int prefetched = 0;
    uint64_t *next = c->deferred ? next_offsets(c, n) : NULL;
    if (c->deferred && !next) {
        oz_zip_save_err(err, ONNXZIP_ENOMEM);
        *failed = 0;
        return;
    }
    *failed = n;
    for (size_t i = 0; i < n; i++) {
        int rc = local_or_predicted(c, &c->z->entries[i], next ? next[i] : 0);
        if (rc) {
            oz_zip_save_err(err, rc);
            *failed = i;
            break;
        }
        if (c->src && c->src->cold && !prefetched++) prefetch(c, i + 1, n);
    }
    free(next);
}

int oz_zip_check_local(const oz_zip *z, size_t i, const uint8_t *h, size_t n, const char *path,
                       uint64_t *data_offset)
{
    oz_zentry e = z->entries[i];
    ctx cx = { .path = path, .z = (oz_zip *)z, .cd_offset = z->cd_offset }, *c = &cx;
    const oz_zentry *ze = &e;
    size_t need;
    int rc = n < ZIP_LOCAL_SIZE ? 0 : check_local_bytes(c, &e, h, n, &need);
    if (rc) return rc;
    if (n < ZIP_LOCAL_SIZE || need || (!data_offset && e.pub.data_offset != z->entries[i].pub.data_offset))
        return oz_err(ONNXZIP_ELOCAL, (int64_t)e.pub.header_offset, "%s: entry '%s': its local header at offset %llu "
                      "is not %zu bytes long, as the central directory's layout implies (dead space before "
                      "__MODEL_PROTO, left by an interrupted update, or a damaged archive: fetch the whole file)",
                      path, SHOWN, (unsigned long long)e.pub.header_offset, n);
    if (e.align_claim && e.pub.data_offset % e.align_claim)
        return oz_err(ONNXZIP_EALIGN, (int64_t)e.pub.data_offset, "%s: entry '%s': data at offset %llu is not "
                      "aligned to %u bytes (as its alignment field claims)", path, SHOWN,
                      (unsigned long long)e.pub.data_offset, e.align_claim);
    if (data_offset) *data_offset = e.pub.data_offset;
    return 0;
}
