/* SHA-1 (FIPS 180-4 §6.1), for ONNX's optional external_data "checksum" key.
 * Not used for anything security-related. */
#ifndef ONNXZIP_SHA1_H
#define ONNXZIP_SHA1_H

#include <stddef.h>
#include <stdint.h>

typedef struct oz_sha1 {
    uint32_t h[5];
    uint64_t nbytes;     /* message length so far */
    uint8_t block[64];
    size_t fill;         /* bytes waiting in block */
} oz_sha1;

void oz_sha1_init(oz_sha1 *s);
void oz_sha1_update(oz_sha1 *s, const void *data, size_t n);
void oz_sha1_final(oz_sha1 *s, uint8_t digest[20]);

/* The digest of `n` bytes at `data` as 40 lowercase hex digits + NUL. */
void oz_sha1_hex(const void *data, uint64_t n, char hex[41]);

#endif
