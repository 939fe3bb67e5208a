#include "common/zip_format.h"
#include "write/zip_records.h"

uint16_t oz_zip_name_flags(const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)name[i] >= 0x80) return FLAG_UTF8;
    return 0;
}

uint64_t oz_zip_padding(uint64_t pos, size_t name_len, uint64_t size, uint32_t align)
{
    uint64_t b = pos + ZIP_LOCAL_SIZE + name_len + (size >= U32_MARK ? 20 : 0) + 6;
    return (align - b % align) % align;
}

size_t oz_zip_local(uint8_t *h, const char *name, uint64_t size, uint64_t pos, uint16_t claim, size_t pad)
{
    size_t nlen = strlen(name);
    int z64 = size >= U32_MARK;
    size_t extra = (z64 ? 20 : 0) + 6 + pad;
    memset(h, 0, ZIP_LOCAL_SIZE + nlen + extra);
    oz_wr32(h, ZIP_LOCAL_SIG);
    oz_wr16(h + 4, z64 || pos >= U32_MARK ? ZIP_VERSION_ZIP64 : ZIP_VERSION_PLAIN);
    oz_wr16(h + LH_FLAGS, oz_zip_name_flags(name, nlen));
    oz_wr16(h + 12, ZIP_DOS_DATE_1980);
    oz_wr32(h + LH_CSIZE, z64 ? U32_MARK : (uint32_t)size);
    oz_wr32(h + LH_USIZE, z64 ? U32_MARK : (uint32_t)size);
    oz_wr16(h + LH_NAMELEN, (uint16_t)nlen);
    oz_wr16(h + LH_EXTRALEN, (uint16_t)extra);
    memcpy(h + ZIP_LOCAL_SIZE, name, nlen);
    uint8_t *x = h + ZIP_LOCAL_SIZE + nlen;
    if (z64) { /* zip64 first: the padding is computed after it is placed */
        oz_wr16(x, EF_ZIP64);
        oz_wr16(x + 2, 16);
        oz_wr64(x + 4, size);
        oz_wr64(x + 12, size);
        x += 20;
    }
    oz_wr16(x, EF_ALIGN);
    oz_wr16(x + 2, (uint16_t)(2 + pad));
    oz_wr16(x + 4, claim);
    return ZIP_LOCAL_SIZE + nlen + extra;
}

int oz_zip_central(oz_buf *cd, const oz_zentry *e)
{
    const onnxzip_entry *p = &e->pub;
    int big_size = p->size >= U32_MARK, big_off = p->header_offset >= U32_MARK;
    size_t z64 = (size_t)(big_size ? 16 : 0) + (big_off ? 8 : 0);
    size_t extra = (z64 ? 4 + z64 : 0) + 4 + EF_DIGEST_SIZE;
    int rc = oz_buf_reserve(cd, ZIP_CENTRAL_SIZE + e->name_len + extra);
    if (rc) return rc;
    uint8_t *h = cd->p + cd->len;
    memset(h, 0, ZIP_CENTRAL_SIZE);
    oz_wr32(h, ZIP_CENTRAL_SIG);
    oz_wr16(h + 4, ZIP_VERSION_MADE_BY);
    oz_wr16(h + 6, big_size || big_off ? ZIP_VERSION_ZIP64 : ZIP_VERSION_PLAIN);
    oz_wr16(h + CH_FLAGS, oz_zip_name_flags(p->name, e->name_len));
    oz_wr16(h + 14, ZIP_DOS_DATE_1980);
    oz_wr32(h + CH_CRC, p->crc32);
    oz_wr32(h + CH_CSIZE, big_size ? U32_MARK : (uint32_t)p->size);
    oz_wr32(h + CH_USIZE, big_size ? U32_MARK : (uint32_t)p->size);
    oz_wr16(h + CH_NAMELEN, (uint16_t)e->name_len);
    oz_wr16(h + CH_EXTRALEN, (uint16_t)extra);
    oz_wr32(h + 38, 0100644u << 16); /* regular file, rw-r--r-- */
    oz_wr32(h + CH_LHO, big_off ? U32_MARK : (uint32_t)p->header_offset);
    uint8_t *x = h + ZIP_CENTRAL_SIZE;
    memcpy(x, p->name, e->name_len);
    x += e->name_len;
    if (z64) { /* only the marked fields, in APPNOTE order */
        oz_wr16(x, EF_ZIP64);
        oz_wr16(x + 2, (uint16_t)z64);
        x += 4;
        if (big_size) oz_wr64(x, p->size), oz_wr64(x + 8, p->size), x += 16;
        if (big_off) oz_wr64(x, p->header_offset), x += 8;
    }
    oz_wr16(x, EF_DIGEST);
    oz_wr16(x + 2, EF_DIGEST_SIZE);
    x[4] = e->generation ? e->generation : 1; /* spec 13: 2 in a package */
    x[5] = DIGEST_XXH3_64;
    oz_wr64(x + 6, p->xxh3);
    cd->len += ZIP_CENTRAL_SIZE + e->name_len + extra;
    return 0;
}

int oz_zip_end(oz_buf *cd, uint64_t n, uint64_t cd_size, uint64_t cd_off)
{
    int z64 = n >= U16_MARK || cd_size >= U32_MARK || cd_off >= U32_MARK;
    int rc = oz_buf_reserve(cd, ZIP64_EOCD_SIZE + ZIP64_LOCATOR_SIZE + ZIP_EOCD_SIZE);
    if (rc) return rc;
    uint8_t *p = cd->p + cd->len;
    if (z64) {
        uint64_t rec = cd_off + cd_size;
        memset(p, 0, ZIP64_EOCD_SIZE + ZIP64_LOCATOR_SIZE);
        oz_wr32(p, ZIP64_EOCD_SIG);
        oz_wr64(p + 4, ZIP64_EOCD_SIZE - 12);
        oz_wr16(p + 12, ZIP_VERSION_MADE_BY);
        oz_wr16(p + 14, ZIP_VERSION_ZIP64);
        oz_wr64(p + 24, n);
        oz_wr64(p + 32, n);
        oz_wr64(p + 40, cd_size);
        oz_wr64(p + 48, cd_off);
        p += ZIP64_EOCD_SIZE;
        oz_wr32(p, ZIP64_LOCATOR_SIG);
        oz_wr64(p + 8, rec);
        oz_wr32(p + 16, 1);
        p += ZIP64_LOCATOR_SIZE;
    }
    memset(p, 0, ZIP_EOCD_SIZE);
    oz_wr32(p, ZIP_EOCD_SIG);
    uint16_t n16 = n >= U16_MARK ? U16_MARK : (uint16_t)n;
    oz_wr16(p + 8, n16);
    oz_wr16(p + 10, n16);
    oz_wr32(p + 12, cd_size >= U32_MARK ? U32_MARK : (uint32_t)cd_size);
    oz_wr32(p + 16, cd_off >= U32_MARK ? U32_MARK : (uint32_t)cd_off);
    cd->len = (size_t)(p + ZIP_EOCD_SIZE - cd->p);
    return 0;
}

