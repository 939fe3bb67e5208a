#if ONNXZIP_HAVE_LIBDEFLATE
#include <libdeflate.h>
#elif !ONNXZIP_CRC32_TABLES
#include <zlib.h>
#endif

#include "common/checksum.h"

#define CHUNK (256u * 1024) /* fits in L2: the second hash reads from cache */

#if ONNXZIP_CRC32_TABLES && !ONNXZIP_HAVE_LIBDEFLATE
/* Builds without zlib (the WebAssembly one, src/js): CRC-32 by eight
 * tables of 256 (slicing-by-8), little-endian loads byte by byte. */
static uint32_t tab[8][256];

static void make_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        tab[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) tab[t][i] = (tab[t - 1][i] >> 8) ^ tab[0][tab[t - 1][i] & 0xFF];
}

static uint32_t crc32_tables(uint32_t crc, const unsigned char *p, size_t n)
{
    if (!tab[0][1]) make_tables(); /* single-threaded build */
    crc = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        crc = tab[7][lo & 0xFF] ^ tab[6][(lo >> 8) & 0xFF] ^ tab[5][(lo >> 16) & 0xFF] ^ tab[4][lo >> 24] ^
              tab[3][p[4]] ^ tab[2][p[5]] ^ tab[1][p[6]] ^ tab[0][p[7]];
    }
    while (n--) crc = tab[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}
#endif

uint32_t oz_crc32(uint32_t crc, const void *data, size_t n)
{
#if ONNXZIP_HAVE_LIBDEFLATE
    return libdeflate_crc32(crc, data, n);
#elif ONNXZIP_CRC32_TABLES
    return crc32_tables(crc, data, n);
#else
    const unsigned char *p = data;
    while (n) { /* zlib takes 32-bit lengths */
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, p, k);
        p += k;
        n -= k;
    }
    return crc;
#endif
}

void oz_checksum_init(oz_checksum *c)
{
    c->crc = 0;
    XXH3_64bits_reset(&c->xxh);
}

void oz_checksum_update(oz_checksum *c, const void *data, uint64_t n)
{
    const unsigned char *p = data;
    while (n) {
        size_t k = n < CHUNK ? (size_t)n : CHUNK;
        c->crc = oz_crc32(c->crc, p, k);
        XXH3_64bits_update(&c->xxh, p, k);
        p += k;
        n -= k;
    }
}
