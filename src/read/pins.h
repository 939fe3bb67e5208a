/* Pins: the SHA-256 of a remote handle's entries as a signature check
 * hashed them (trust/signed.c), against which every later read of those
 * entries through the source is compared (spec 20.5: a trusted read hands
 * out the bytes it hashed). CRC-32 and XXH3 catch accidents only; a server
 * can answer a second request with other bytes whose CRC-32 and XXH3 it
 * made match. */
#ifndef ONNXZIP_PINS_H
#define ONNXZIP_PINS_H

#include "read/archive.h"

/* open.c: a handle without a mapping gets its (empty) pins. 0 or
 * ONNXZIP_ENOMEM. */
int oz_pins_alloc(onnxzip_archive *a);

/* Records `sha` as entry i's SHA-256 (the first record stands; a handle
 * with a mapping has no pins and records nothing). */
void oz_pin(onnxzip_archive *a, size_t i, const uint8_t sha[32]);

/* Whether entry i is pinned: its reads must hash it whole. */
int oz_pinned(const onnxzip_archive *a, size_t i);

/* A pinned entry's bytes hashed as they arrive, in order, then compared. */
typedef struct oz_pin_hash {
    void *ctx; /* libcrypto's, or NULL: entry not pinned */
    int failed;
} oz_pin_hash;

/* Starts hashing entry i when it is pinned (else h->ctx stays NULL and
 * the calls below do nothing). 0 or ONNXZIP_ENOMEM. */
int oz_pin_begin(const onnxzip_archive *a, size_t i, oz_pin_hash *h);
void oz_pin_update(oz_pin_hash *h, const void *p, size_t n);
/* 0 when the bytes fed are the pinned ones; else ONNXZIP_EMISMATCH naming
 * the entry and the handle's path (a URL as messages show it). Frees h. */
int oz_pin_end(const onnxzip_archive *a, size_t i, oz_pin_hash *h);

/* Entry i's whole data at d (its size bytes) against its pin, if any. */
int oz_pin_check(const onnxzip_archive *a, size_t i, const void *d);

#endif
