#include <zlib.h>
#if ONNXZIP_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "common/checksum.h"

#define CHUNK (256u * 1024) /* fits in L2: the second hash reads from cache */

uint32_t oz_crc32(uint32_t crc, const void *data, size_t n)
{
#if ONNXZIP_HAVE_LIBDEFLATE
    return libdeflate_crc32(crc, data, n);
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
