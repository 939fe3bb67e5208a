#include <zlib.h>

#include "checksum.h"

#define CHUNK (256u * 1024) /* fits in L2: the second hash reads from cache */

void oz_checksum_init(oz_checksum *c)
{
    c->crc = (uint32_t)crc32(0, NULL, 0);
    XXH3_64bits_reset(&c->xxh);
}

void oz_checksum_update(oz_checksum *c, const void *data, uint64_t n)
{
    const unsigned char *p = data;
    while (n) {
        size_t k = n < CHUNK ? (size_t)n : CHUNK;
        c->crc = (uint32_t)crc32(c->crc, p, (uInt)k);
        XXH3_64bits_update(&c->xxh, p, k);
        p += k;
        n -= k;
    }
}
