/* Validating reader of the zip structure (spec §"Reader requirements"):
 * EOCD and zip64 records, central directory, layout and names; local
 * headers are zip_local.c's. It interprets headers only, never entry data
 * (a local header read may copy a few bytes past the header, within its
 * page). */
#include <stdio.h>
#include <stdlib.h>

#include "common/checksum.h"
#include "common/package_path.h"
#include "common/source.h"
#include "read/zip_diagnose.h"
#include "read/zip_parse.h"
#include "common/zip_format.h"

/* Not an error of the file: its bytes before the window are needed. */
int oz_zip_need_more(ctx *c)
{
    return oz_err(ONNXZIP_ETRUNC, (int64_t)c->need, "%s: the end records lie before the %llu bytes fetched "
                  "(internal: fetch from offset %llu)", c->path, (unsigned long long)(c->size - c->win_off),
                  (unsigned long long)c->need);
}

static int find_eocd(ctx *c, uint64_t *pos)
{
    if (c->size < ZIP_EOCD_SIZE)
        return oz_err(ONNXZIP_ENOTZIP, -1, "%s: not a zip archive (%llu bytes, no end of central directory)",
                      c->path, (unsigned long long)c->size);
    uint64_t last = c->size - ZIP_EOCD_SIZE;
    uint64_t first = last > 0xFFFF ? last - 0xFFFF : 0;
    if (first < c->win_off) first = c->win_off; /* a remote tail: at least 64 KiB + 22 unless the file is shorter */
    int seen = 0;
    for (uint64_t p = last + 1; p-- > first;) {
        if (oz_rd32(at(c, p)) != ZIP_EOCD_SIG) continue;
        seen = 1;
        if (p + ZIP_EOCD_SIZE + oz_rd16(at(c, p) + 20) == c->size) {
            *pos = p;
            return 0;
        }
    }
    if (seen)
        return oz_err(ONNXZIP_EEOCD, -1, "%s: end of central directory found, but its comment length "
                      "does not reach the end of the file (trailing bytes or a bad comment length)", c->path);
    return oz_err(ONNXZIP_ENOTZIP, -1, "%s: not a zip archive (no end of central directory record)", c->path);
}

static int read_zip64(ctx *c, uint64_t eocd, int required)
{
    if (eocd >= ZIP64_LOCATOR_SIZE && !in_window(c, eocd - ZIP64_LOCATOR_SIZE)) return oz_zip_need_more(c);
    if (eocd < ZIP64_LOCATOR_SIZE || oz_rd32(at(c, eocd - ZIP64_LOCATOR_SIZE)) != ZIP64_LOCATOR_SIG) {
        if (!required) return 0;
        return oz_err(ONNXZIP_EZIP64, (int64_t)eocd, "%s: end of central directory at offset %llu uses zip64 "
                      "markers but no zip64 locator precedes it", c->path, (unsigned long long)eocd);
    }
    const uint8_t *loc = at(c, eocd - ZIP64_LOCATOR_SIZE);
    uint64_t loc_pos = eocd - ZIP64_LOCATOR_SIZE, rec = oz_rd64(loc + 8);
    if (rec <= loc_pos && !in_window(c, rec)) return oz_zip_need_more(c);
    if (oz_rd32(loc + 4) != 0 || oz_rd32(loc + 16) != 1)
        return oz_err(ONNXZIP_EZIP64, (int64_t)loc_pos, "%s: zip64 locator: disk %u of %u disks; onnxzip archives "
                      "are one disk (0 of 1)", c->path, oz_rd32(loc + 4), oz_rd32(loc + 16));
    if (rec > loc_pos || loc_pos - rec < ZIP64_EOCD_SIZE || oz_rd32(at(c, rec)) != ZIP64_EOCD_SIG)
        return oz_err(ONNXZIP_EZIP64, (int64_t)loc_pos, "%s: zip64 locator points to offset %llu, where no zip64 "
                      "end of central directory record is", c->path, (unsigned long long)rec);
    const uint8_t *r = at(c, rec);
    /* Record_Size is 44 exactly (6.1, 6.4): no extensible data sector. */
    if (oz_rd64(r + 4) != ZIP64_EOCD_SIZE - 12 || loc_pos - rec != ZIP64_EOCD_SIZE)
        return oz_err(ONNXZIP_EZIP64, (int64_t)rec, "%s: zip64 end of central directory record at offset %llu "
                      "has Record_Size %llu (must be 44) or does not end where the zip64 locator begins", c->path,
                      (unsigned long long)rec, (unsigned long long)oz_rd64(r + 4));
    /* Its disk fields are zip64 fields: EZIP64 (6.4), not the EOCD's EEOCD. */
    if (oz_rd32(r + 16) != 0 || oz_rd32(r + 20) != 0)
        return oz_err(ONNXZIP_EZIP64, (int64_t)rec, "%s: zip64 end of central directory: Disk_Number %u, CD_Disk "
                      "%u; onnxzip archives are one disk (both 0)", c->path, oz_rd32(r + 16), oz_rd32(r + 20));
    if (oz_rd64(r + 24) != oz_rd64(r + 32))
        return oz_err(ONNXZIP_EZIP64, (int64_t)rec, "%s: zip64 end of central directory: Disk_Entries %llu != "
                      "Total_Entries %llu", c->path, (unsigned long long)oz_rd64(r + 24),
                      (unsigned long long)oz_rd64(r + 32));
    const uint8_t *e = at(c, eocd);
    uint64_t n = oz_rd64(r + 32), size = oz_rd64(r + 40), off = oz_rd64(r + 48);
    if ((oz_rd16(e + 10) != U16_MARK && oz_rd16(e + 10) != n) ||
        (oz_rd32(e + 12) != U32_MARK && oz_rd32(e + 12) != size) ||
        (oz_rd32(e + 16) != U32_MARK && oz_rd32(e + 16) != off))
        return oz_err(ONNXZIP_EZIP64, (int64_t)rec, "%s: zip64 end of central directory disagrees with the "
                      "end of central directory record", c->path);
    c->n_entries = n;
    c->cd_size = size;
    c->cd_offset = off;
    c->cd_end = rec;
    return 0;
}

static int read_eocd(ctx *c)
{
    uint64_t eocd = 0;
    int rc = find_eocd(c, &eocd);
    if (rc) return rc;
    const uint8_t *e = at(c, eocd);
    if (oz_rd16(e + 4) != 0 || oz_rd16(e + 6) != 0 || oz_rd16(e + 8) != oz_rd16(e + 10))
        return oz_err(ONNXZIP_EEOCD, (int64_t)eocd, "%s: end of central directory names several disks "
                      "(multi-disk archives are not supported)", c->path);
    c->n_entries = oz_rd16(e + 10);
    c->cd_size = oz_rd32(e + 12);
    c->cd_offset = oz_rd32(e + 16);
    c->cd_end = eocd;
    int marked = c->n_entries == U16_MARK || c->cd_size == U32_MARK || c->cd_offset == U32_MARK;
    if ((rc = read_zip64(c, eocd, marked))) return rc;
    if (c->cd_offset > c->cd_end || c->cd_end - c->cd_offset < c->cd_size)
        return oz_err(ONNXZIP_EBOUNDS, (int64_t)c->cd_end, "%s: central directory (offset %llu, size %llu) runs "
                      "past the end records at offset %llu (truncated or shifted file)", c->path,
                      (unsigned long long)c->cd_offset, (unsigned long long)c->cd_size, (unsigned long long)c->cd_end);
    if (c->cd_end - c->cd_offset != c->cd_size)
        return oz_err(ONNXZIP_EOVERLAP, (int64_t)(c->cd_offset + c->cd_size), "%s: %llu unaccounted bytes between "
                      "the central directory and the end records", c->path,
                      (unsigned long long)(c->cd_end - c->cd_offset - c->cd_size));
    if (c->n_entries > OZ_MAX_ENTRIES)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: %llu entries exceed the limit of %u", c->path,
                      (unsigned long long)c->n_entries, OZ_MAX_ENTRIES);
    if (c->n_entries > c->cd_size / ZIP_CENTRAL_SIZE)
        return oz_err(ONNXZIP_EEOCD, (int64_t)c->cd_end, "%s: %llu entries cannot fit in a central directory of "
                      "%llu bytes", c->path, (unsigned long long)c->n_entries, (unsigned long long)c->cd_size);
    return 0;
}

int oz_zip_extras(const uint8_t *p, uint16_t len, const char *name, size_t nlen, extras *x)
{
    memset(x, 0, sizeof *x);
    uint32_t i = 0;
    while (i < len) {
        if (len - i < 4) return -1;
        uint16_t id = oz_rd16(p + i), n = oz_rd16(p + i + 2);
        if (n > len - i - 4) return -1;
        const uint8_t *d = p + i + 4;
        if (id == EF_UPATH && name && (x->fault = oz_zip_upath_fault(d, n, name, nlen))) return -1;
        if (id == EF_ZIP64) {
            if (x->has_zip64++) return -2;
            x->zip64 = d;
            x->zip64_len = n;
        } else if (id == EF_ALIGN) {
            if (x->has_align++ || n < 2) return -1;
            x->align = oz_rd16(d);
        } else if (id == EF_DIGEST) {
            if (x->has_digest++ || n < EF_DIGEST_SIZE || d[0] == 0) return -1;
            x->digest_version = d[0];
            x->digest_algo = d[1];
            x->digest = oz_rd64(d + 2);
        }
        i += 4u + n;
    }
    return 0;
}

/* Replaces 0xFFFFFFFF-marked values by zip64 ones, in APPNOTE order. Bytes
 * beyond the marked fields are ignored (spec 4.2). */
static int resolve_zip64(const extras *x, uint64_t *usize, uint64_t *csize, uint64_t *lho)
{
    uint64_t *slots[3] = { usize, csize, lho };
    uint32_t used = 0;
    for (int i = 0; i < 3; i++) {
        if (*slots[i] != U32_MARK) continue;
        if (!x->has_zip64 || x->zip64_len < used + 8) return -1;
        *slots[i] = oz_rd64(x->zip64 + used);
        used += 8;
    }
    return 0;
}

static int check_flags_method(ctx *c, uint16_t flags, uint16_t method, const char *name, size_t nlen, uint64_t at)
{
    if (method != 0)
        return oz_err(ONNXZIP_EMETHOD, (int64_t)at, "%s: entry '%s' uses compression method %u; onnxzip entries "
                      "must be stored (method 0)", c->path, show(c, name, nlen), method);
    if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_HEADERS))
        return oz_err(ONNXZIP_EFLAGS, (int64_t)at, "%s: entry '%s' is encrypted (flags 0x%04x)", c->path,
                      show(c, name, nlen), flags);
    if (flags & FLAG_DATA_DESCRIPTOR)
        return oz_err(ONNXZIP_EFLAGS, (int64_t)at, "%s: entry '%s' uses a data descriptor (flag bit 3); sizes "
                      "and CRC must be in the local header", c->path, show(c, name, nlen));
    if (flags & ~FLAG_UTF8)
        return oz_err(ONNXZIP_EFLAGS, (int64_t)at, "%s: entry '%s' has unsupported general purpose flags 0x%04x "
                      "(only bit 11, UTF-8, is allowed)", c->path, show(c, name, nlen), flags);
    return 0;
}

static int parse_central(ctx *c, uint64_t *pos, oz_zentry *ze, char *name_out)
{
    uint64_t at = *pos, cd_stop = c->cd_offset + c->cd_size;
    if (cd_stop - at < ZIP_CENTRAL_SIZE)
        return oz_err(ONNXZIP_ETRUNC, (int64_t)at, "%s: central directory ends inside record %zu (offset %llu)",
                      c->path, c->z->n, (unsigned long long)at);
    const uint8_t *h = c->base + (at - c->win_off);
    if (oz_rd32(h) != ZIP_CENTRAL_SIG)
        return oz_err(ONNXZIP_ECDIR, (int64_t)at, "%s: central directory record %zu at offset %llu: bad signature",
                      c->path, c->z->n, (unsigned long long)at);
    uint16_t nlen = oz_rd16(h + CH_NAMELEN), elen = oz_rd16(h + CH_EXTRALEN), clen = oz_rd16(h + CH_COMMENTLEN);
    if (cd_stop - at - ZIP_CENTRAL_SIZE < (uint64_t)nlen + elen + clen)
        return oz_err(ONNXZIP_ETRUNC, (int64_t)at, "%s: central directory record %zu at offset %llu runs past the "
                      "central directory", c->path, c->z->n, (unsigned long long)at);
    memcpy(name_out, h + ZIP_CENTRAL_SIZE, nlen);
    name_out[nlen] = '\0';
    extras x;
    int ex = oz_zip_extras(h + ZIP_CENTRAL_SIZE + nlen, elen, name_out, nlen, &x);
    if (ex)
        return oz_err(ex == -2 ? ONNXZIP_EZIP64 : x.fault ? ONNXZIP_ENAME : ONNXZIP_ECDIR,
                      (int64_t)at, "%s: entry '%s': %s in the central "
                      "directory", c->path, show(c, name_out, nlen), ex == -2 ? "two zip64 extra fields"
                      : x.fault ? x.fault : "malformed or duplicated extra field");
    uint64_t usize = oz_rd32(h + CH_USIZE), csize = oz_rd32(h + CH_CSIZE), lho = oz_rd32(h + CH_LHO);
    if (resolve_zip64(&x, &usize, &csize, &lho))
        return oz_err(ONNXZIP_EZIP64, (int64_t)at, "%s: entry '%s': zip64 extra field missing or too short for "
                      "its 0xFFFFFFFF-marked fields", c->path, show(c, name_out, nlen));
    if (oz_rd16(h + CH_DISK) != 0)
        return oz_err(ONNXZIP_ECDIR, (int64_t)at, "%s: entry '%s' starts on another disk", c->path,
                      show(c, name_out, nlen));
    int rc = check_flags_method(c, oz_rd16(h + CH_FLAGS), oz_rd16(h + CH_METHOD), name_out, nlen, at);
    if (rc) return rc;
    if (usize != csize)
        return oz_err(ONNXZIP_ECDIR, (int64_t)at, "%s: entry '%s': stored entry with compressed size %llu != "
                      "uncompressed size %llu", c->path, show(c, name_out, nlen), (unsigned long long)csize,
                      (unsigned long long)usize);
    if (x.has_digest && x.digest_version > OZ_READER_GENERATION)
        return oz_err(ONNXZIP_EUNSUPPORTED, (int64_t)at, "%s: entry '%s' was written for onnxzip format %u; this "
                      "library reads format 1.%d and its generations 1 to %d", c->path, show(c, name_out, nlen),
                      x.digest_version, ONNXZIP_FORMAT_VERSION_MINOR, OZ_READER_GENERATION);
    ze->generation = x.has_digest ? x.digest_version : 1;
    ze->pub.header_offset = lho;
    ze->pub.size = usize;
    ze->flags = oz_rd16(h + CH_FLAGS);
    ze->method = oz_rd16(h + CH_METHOD);
    ze->pub.crc32 = oz_rd32(h + CH_CRC);
    ze->pub.has_xxh3 = x.has_digest && x.digest_algo == DIGEST_XXH3_64;
    ze->pub.xxh3 = ze->pub.has_xxh3 ? x.digest : 0;
    ze->name_len = nlen;
    *pos = at + ZIP_CENTRAL_SIZE + nlen + elen + clen;
    return 0;
}
/* In a package, names that are no identifier are package paths (spec 19.2). */
static int classify(ctx *c, oz_zentry *ze)
{
    ze->cls = oz_classify_name(ze->pub.name, ze->name_len);
    if (!c->z->package) return 0;
    if (ze->cls == OZ_NAME_RESERVED && !strcmp(ze->pub.name, OZ_PACKAGE_NAME)) ze->cls = OZ_NAME_PACKAGE;
    if (ze->cls == OZ_NAME_MODEL)
        return oz_err(ONNXZIP_EMODELPOS, (int64_t)ze->pub.header_offset, "%s: a package (its last entry is "
                      "__PACKAGE) with a __MODEL_PROTO entry", c->path);
    if (ze->cls != OZ_NAME_TENSOR && ze->cls != OZ_NAME_INVALID && ze->cls != OZ_NAME_TOO_LONG) return 0;
    const char *why;
    int rc = oz_package_path_check(ze->pub.name, ze->name_len, &why);
    if (rc)
        return oz_err(rc, (int64_t)ze->pub.header_offset, "%s: entry '%s': not a package path: %s", c->path, SHOWN,
                      why);
    ze->cls = OZ_NAME_PATH;
    return 0;
}

static int check_name(ctx *c, oz_zentry *ze, size_t i)
{
    int rc = classify(c, ze);
    if (rc) return rc;
    if (ze->cls == OZ_NAME_TOO_LONG)
        return oz_err(ONNXZIP_ELIMIT, (int64_t)ze->pub.header_offset, "%s: entry '%s': name of %u bytes exceeds "
                      "the limit of %d", c->path, SHOWN, ze->name_len, OZ_MAX_NAME);
    if (ze->cls == OZ_NAME_INVALID)
        return oz_err(ONNXZIP_ENAME, (int64_t)ze->pub.header_offset, "%s: entry '%s': invalid name (entry names "
                      "are C identifiers: [A-Za-z_][A-Za-z0-9_]*)", c->path, SHOWN);
    uint32_t prev;
    rc = oz_strmap_put(&c->z->names, ze->pub.name, ze->name_len, (uint32_t)i, &prev);
    if (rc < 0) return rc;
    if (rc == 1)
        return oz_err(ONNXZIP_EDUPNAME, (int64_t)ze->pub.header_offset, "%s: entry '%s' duplicates entry '%s' "
                      "(names must be unique ignoring ASCII case)", c->path, SHOWN, c->z->entries[prev].pub.name);
    if (ze->cls == OZ_NAME_FILLER && ze->pub.size != 0)
        return oz_err(ONNXZIP_ECDIR, (int64_t)ze->pub.header_offset, "%s: filler entry '%s' is not empty",
                      c->path, SHOWN);
    uint64_t off = ze->pub.data_offset;
    if ((ze->cls == OZ_NAME_TENSOR && off % 64 != 0) || (ze->align_claim && off % ze->align_claim != 0))
        return oz_err(ONNXZIP_EALIGN, (int64_t)off, "%s: entry '%s': data at offset %llu is not aligned to %u bytes%s",
                      c->path, SHOWN, (unsigned long long)off, ze->align_claim > 64 ? ze->align_claim : 64,
                      ze->align_claim ? " (as its alignment field claims)" : "");
    return 0;
}

static int cmp_offset(const void *a, const void *b)
{
    uint64_t x = (*(oz_zentry *const *)a)->pub.header_offset, y = (*(oz_zentry *const *)b)->pub.header_offset;
    return (x > y) - (x < y);
}

/* Entries must tile [0, cd_offset) exactly: no overlap, no gap, except dead
 * space just before __MODEL_PROTO, which an interrupted model update leaves
 * (spec 15.3). */
static int check_layout(ctx *c)
{
    oz_zip *z = c->z;
    oz_zentry **order = malloc((z->n ? z->n : 1) * sizeof *order);
    if (!order) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t i = 0; i < z->n; i++) order[i] = &z->entries[i];
    qsort(order, z->n, sizeof *order, cmp_offset);
    uint64_t expect = 0;
    int rc = 0;
    for (size_t i = 0; i < z->n && !rc; i++) {
        const oz_zentry *e = order[i];
        int dead_space_ok = e == &z->entries[z->model_index] && e->pub.header_offset > expect;
        if (e->pub.header_offset != expect && !dead_space_ok) {
            rc = oz_err(ONNXZIP_EOVERLAP, (int64_t)e->pub.header_offset, "%s: entry '%s' at offset %llu %s "
                        "(expected the next entry at offset %llu)", c->path, show(c, e->pub.name, e->name_len),
                        (unsigned long long)e->pub.header_offset,
                        e->pub.header_offset < expect ? "overlaps the previous entry" : "leaves a gap",
                        (unsigned long long)expect);
        }
        expect = e->pub.data_offset + e->pub.size;
    }
    if (!rc && expect != c->cd_offset)
        rc = oz_err(ONNXZIP_EOVERLAP, (int64_t)expect, "%s: %llu unaccounted bytes between the last entry and "
                    "the central directory", c->path, (unsigned long long)(c->cd_offset - expect));
    if (!rc && z->n && order[z->n - 1] != &z->entries[z->model_index])
        rc = oz_err(ONNXZIP_EMODELPOS, (int64_t)z->entries[z->model_index].pub.header_offset,
                    "%s: %s is not the last entry in the file (entry '%s' follows it)", c->path,
                    z->entries[z->model_index].pub.name, order[z->n - 1]->pub.name);
    free(order);
    return rc;
}

void oz_zip_save_err(saved_err *s, int status)
{
    const onnxzip_error_info *e = onnxzip_last_error();
    s->status = status;
    s->offset = e->offset;
    snprintf(s->msg, sizeof s->msg, "%s", e->message);
}

static int raise_err(const saved_err *s)
{
    return oz_err(s->status, s->offset, "%s", s->msg);
}

/* The entry that ends an archive: its model, or a package's manifest. */
int oz_zip_is_last_kind(const char *name, size_t len)
{
    return (len == sizeof OZ_MODEL_NAME - 1 && !memcmp(name, OZ_MODEL_NAME, len)) ||
           (len == sizeof OZ_PACKAGE_NAME - 1 && !memcmp(name, OZ_PACKAGE_NAME, len));
}

/* Central records first, then the local headers (whose offsets are then all
 * known, for prefetch), then names and alignment; errors are raised in the
 * order a one-pass check would meet them: entry by entry, central record,
 * local header, name. */
/* The central directory starts before the window. Its last record, the
 * model's (which must come last), usually lies in the window: found by its
 * name, it tells where the model's local header is, so that one request
 * can bring that header, the model and the directory (checked in full
 * once they are at hand). */
static void guess_model_header(ctx *c)
{
    uint64_t cd_stop = c->cd_offset + c->cd_size;
    const uint64_t shortest = ZIP_CENTRAL_SIZE + sizeof OZ_PACKAGE_NAME - 1;
    for (uint64_t p = cd_stop - shortest + 1; p-- > c->win_off && p >= c->cd_offset;) {
        const uint8_t *h = at(c, p);
        if (oz_rd32(h) != ZIP_CENTRAL_SIG) continue;
        uint16_t nlen = oz_rd16(h + CH_NAMELEN);
        uint64_t rec = ZIP_CENTRAL_SIZE + (uint64_t)nlen;
        if (p + rec > cd_stop || !oz_zip_is_last_kind((const char *)h + ZIP_CENTRAL_SIZE, nlen)) continue;
        uint16_t elen = oz_rd16(h + CH_EXTRALEN);
        if (p + rec + elen + oz_rd16(h + CH_COMMENTLEN) != cd_stop) continue;
        extras x;
        uint64_t usize = oz_rd32(h + CH_USIZE), csize = oz_rd32(h + CH_CSIZE), lho = oz_rd32(h + CH_LHO);
        if (!oz_zip_extras(h + rec, elen, NULL, 0, &x) && !resolve_zip64(&x, &usize, &csize, &lho) && lho < c->cd_offset)
            in_window(c, lho);
        return;
    }
}

static int read_entries(ctx *c)
{
    oz_zip *z = c->z;
    if (!in_window(c, c->cd_offset)) {
        guess_model_header(c);
        return oz_zip_need_more(c);
    }
    z->entries = calloc(c->n_entries ? c->n_entries : 1, sizeof *z->entries);
    /* Names total at most cd_size bytes plus one NUL each. */
    z->name_store = malloc(c->cd_size + c->n_entries + 1);
    uint64_t *at = malloc((c->n_entries ? c->n_entries : 1) * sizeof *at);
    if (!z->entries || !z->name_store || !at) {
        free(at);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (central directory)");
    }
    uint64_t pos = c->cd_offset;
    char *names = z->name_store;
    int have_model = 0, rc = oz_strmap_reserve(&z->names, c->n_entries);
    saved_err pending = { 0 }; /* a central record's error, after the entries before it */
    size_t n = 0;              /* entries whose central record passed */
    for (uint64_t i = 0; i < c->n_entries && !rc; i++) {
        oz_zentry *ze = &z->entries[z->n];
        at[n] = pos;
        if ((rc = parse_central(c, &pos, ze, names))) break;
        ze->pub.name = names;
        names += ze->name_len + 1;
        z->n++;
        if (memchr(ze->pub.name, 0, ze->name_len))
            rc = oz_err(ONNXZIP_ENAME, (int64_t)at[n], "%s: entry %llu has a NUL byte in its name", c->path,
                        (unsigned long long)i);
        else
            n++;
    }
    if (rc) oz_zip_save_err(&pending, rc);
    size_t bad;
    saved_err local_err;
    oz_zip_check_locals(c, n, &bad, &local_err);
    free(at);
    z->package = n && !pending.status && n == z->n && !strcmp(z->entries[n - 1].pub.name, OZ_PACKAGE_NAME);
    for (size_t i = 0; i < n; i++) {
        if (i == bad) return raise_err(&local_err);
        oz_zentry *ze = &z->entries[i];
        if ((rc = check_name(c, ze, i))) return rc;
        if (!z->package && ze->cls == OZ_NAME_RESERVED && !strcmp(ze->pub.name, OZ_PACKAGE_NAME))
            return oz_err(ONNXZIP_EMODELPOS, (int64_t)ze->pub.header_offset, "%s: __PACKAGE, a package's "
                          "manifest, is not the last central directory record", c->path);
        if (ze->cls == OZ_NAME_MODEL || ze->cls == OZ_NAME_PACKAGE) {
            have_model = 1;
            z->model_index = i;
        }
    }
    if (pending.status) return raise_err(&pending);
    if (pos != c->cd_offset + c->cd_size)
        return oz_err(ONNXZIP_EEOCD, (int64_t)pos, "%s: central directory holds more bytes than its %llu records",
                      c->path, (unsigned long long)c->n_entries);
    if (!have_model)
        return oz_err(ONNXZIP_ENOTONNXZIP, -1, "%s: a zip archive, but not an onnxzip archive (no __MODEL_PROTO "
                      "entry)", c->path);
    if (z->model_index != z->n - 1)
        return oz_err(ONNXZIP_EMODELPOS, -1, "%s: __MODEL_PROTO is not the last central directory record",
                      c->path);
    if (z->entries[z->model_index].pub.size > (z->package ? OZ_MAX_MANIFEST : OZ_MAX_MODEL))
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: %s is %llu bytes; %s", c->path, z->entries[z->model_index].pub.name,
                      (unsigned long long)z->entries[z->model_index].pub.size,
                      z->package ? "a manifest is at most 64 MiB" : "a protobuf is at most 2 GiB - 1");
    return check_layout(c);
}

/* An update in progress ends the file with a trailer naming where the archive
 * proper ends (spec 15.2); the bytes in between are ignored. */
static uint64_t archive_size(const uint8_t *win, uint64_t win_off, uint64_t size)
{
    if (size < 24 + ZIP_EOCD_SIZE || size - 24 < win_off) return size;
    const uint8_t *t = win + (size - 24 - win_off);
    if (memcmp(t, "OZUPDATE", 8) || oz_rd32(t + 16) != 1 || oz_rd32(t + 20) != oz_crc32(0, t, 20))
        return size;
    uint64_t end = oz_rd64(t + 8);
    return end >= ZIP_EOCD_SIZE && end <= size - 24 ? end : size;
}

static int parse(ctx *c)
{
    oz_zip *z = c->z;
    memset(z, 0, sizeof *z);
    oz_strmap_init(&z->names, 1);
    c->size = archive_size(c->base, c->win_off, c->size);
    int rc = read_eocd(c), have_cd = !rc;
    if (!rc) rc = read_entries(c);
    free(c->lbuf);
    if (rc && !c->needs) {
        oz_zip_dx d = { c->base, c->win_off, c->size, c->path, have_cd, c->cd_offset, c->cd_size, c->n_entries };
        rc = oz_zip_diagnose(&d, rc);
    }
    if (rc) {
        oz_zip_free(z);
        return rc;
    }
    z->cd_offset = c->cd_offset;
    z->cd_size = c->cd_size;
    z->end = c->size;
    return 0;
}

int oz_zip_parse(oz_zip *z, oz_source *src, const char *path, uint64_t *need)
{
    ctx c = { .base = oz_source_window(src), .win_off = src->win_off, .size = src->size, .path = path, .z = z,
              .src = src, .deferred = src->defer_headers };
    *need = 0;
    int rc = parse(&c);
    if (rc && c.needs) *need = c.need; /* not the file's fault: bytes before the window are needed */
    return rc && c.needs ? 1 : rc;
}

void oz_zip_free(oz_zip *z)
{
    free(z->entries);
    free(z->name_store);
    oz_strmap_free(&z->names);
    memset(z, 0, sizeof *z);
}

const oz_zentry *oz_zip_find(const oz_zip *z, const char *name, size_t len)
{
    uint32_t i;
    if (oz_strmap_get(&z->names, name, len, &i)) return NULL;
    const oz_zentry *e = &z->entries[i]; /* the one name equal ignoring case */
    return e->name_len == len && !memcmp(e->pub.name, name, len) ? e : NULL;
}
