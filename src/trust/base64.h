/* Base64 (RFC 4648) of a signature bundle's byte fields: the DSSE payload
 * and signature, certificates' DER. */
#ifndef ONNXZIP_BASE64_H
#define ONNXZIP_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the n characters at s into a malloc'ed *out (*out_len bytes; one
 * byte more, a NUL, so text can be used as a string). The standard
 * alphabet, or the URL-safe one (protobuf's JSON accepts either), padded
 * or not; anything else (whitespace, a character outside the alphabet, '='
 * before the end, a length that no encoding has, leftover bits that are
 * not zero) is ONNXZIP_EBUNDLE naming `what`. */
int oz_b64_decode(const char *s, size_t n, const char *what, uint8_t **out, size_t *out_len);

/* The standard padded base64 of n bytes, malloc'ed and NUL-terminated;
 * NULL when out of memory. */
char *oz_b64_encode(const uint8_t *p, size_t n);

#endif
