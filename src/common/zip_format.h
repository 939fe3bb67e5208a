/* ZIP record layouts used by onnxzip (PKWARE APPNOTE 6.3.x); all fields are
 * little-endian. Offsets are within each fixed-size record. */
#ifndef ONNXZIP_ZIP_FORMAT_H
#define ONNXZIP_ZIP_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "common/byteorder.h"

#define ZIP_LOCAL_SIG 0x04034b50u
#define ZIP_CENTRAL_SIG 0x02014b50u
#define ZIP_EOCD_SIG 0x06054b50u
#define ZIP64_EOCD_SIG 0x06064b50u
#define ZIP64_LOCATOR_SIG 0x07064b50u

/* Whether the `size` bytes at `b` begin with signature `sig`, or, shorter
 * than it, begin as it does ("PK", "PK\3"): a zip cut short within it. */
static inline int oz_zip_starts_with(const uint8_t *b, uint64_t size, uint32_t sig)
{
    if (size >= 4) return oz_rd32(b) == sig;
    const uint8_t s[4] = { (uint8_t)sig, (uint8_t)(sig >> 8), (uint8_t)(sig >> 16), (uint8_t)(sig >> 24) };
    return size >= 2 && !memcmp(b, s, (size_t)size);
}

#define ZIP_LOCAL_SIZE 30
#define ZIP_CENTRAL_SIZE 46
#define ZIP_EOCD_SIZE 22
#define ZIP64_EOCD_SIZE 56
#define ZIP64_LOCATOR_SIZE 20

/* local file header */
#define LH_FLAGS 6
#define LH_METHOD 8
#define LH_CRC 14
#define LH_CSIZE 18
#define LH_USIZE 22
#define LH_NAMELEN 26
#define LH_EXTRALEN 28

/* central directory header */
#define CH_FLAGS 8
#define CH_METHOD 10
#define CH_CRC 16
#define CH_CSIZE 20
#define CH_USIZE 24
#define CH_NAMELEN 28
#define CH_EXTRALEN 30
#define CH_COMMENTLEN 32
#define CH_DISK 34
#define CH_LHO 42

/* extra fields */
#define EF_ZIP64 0x0001u
#define EF_ALIGN 0xD935u  /* u16 alignment + zero padding (Android apksig) */
#define EF_UPATH 0x7075u  /* Info-ZIP Unicode Path: u8 version 1, u32 CRC-32 of the name, UTF-8 name */
#define EF_DIGEST 0x5A4Fu /* "OZ": u8 format major, u8 algorithm, u64 digest */
#define EF_DIGEST_SIZE 10
#define DIGEST_XXH3_64 1

/* general purpose flags a stored onnxzip entry must not carry */
#define FLAG_ENCRYPTED 0x0001u
#define FLAG_DATA_DESCRIPTOR 0x0008u
#define FLAG_STRONG_ENCRYPTION 0x0040u
#define FLAG_MASKED_HEADERS 0x2000u
#define FLAG_UTF8 0x0800u

#define ZIP_VERSION_MADE_BY 0x032D /* UNIX, 4.5 */
#define ZIP_VERSION_PLAIN 10
#define ZIP_VERSION_ZIP64 45
#define ZIP_DOS_DATE_1980 0x0021 /* 1980-01-01: reproducible output */

#define U16_MARK 0xFFFFu
#define U32_MARK 0xFFFFFFFFu

#endif
