/* CRC-32 and XXH3-64 computed together in one pass over each chunk, so the
 * data is read from memory once while it is in cache. */
#ifndef ONNXZIP_CHECKSUM_H
#define ONNXZIP_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

typedef struct oz_checksum {
    uint32_t crc;
    XXH3_state_t xxh;
} oz_checksum;

/* CRC-32 (zip's, = zlib's crc32) of n more bytes; start from crc = 0. From
 * libdeflate when built with it (folding with carry-less multiply), else zlib. */
uint32_t oz_crc32(uint32_t crc, const void *data, size_t n);

void oz_checksum_init(oz_checksum *c);
void oz_checksum_update(oz_checksum *c, const void *data, uint64_t n);

#endif
