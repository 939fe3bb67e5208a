/* What the trust layer asks of OpenSSL's libcrypto: EC keys and
 * certificates from PEM and DER, ECDSA, X.509 chains, SHA-256. No crypto
 * is written here; these are the calls and the checks around them. */
#ifndef ONNXZIP_CRYPTO_H
#define ONNXZIP_CRYPTO_H

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <stddef.h>
#include <stdint.h>

#include "trust/bundle.h"

/* Appends the public keys of every PEM "PUBLIC KEY" block in the len bytes
 * at pem to (*keys, *n). ONNXZIP_EBUNDLE naming `what`: no such block, a
 * malformed one, a key that is not EC P-256, P-384 or P-521. */
int oz_pem_public_keys(const void *pem, size_t len, const char *what, EVP_PKEY ***keys, size_t *n);

/* Appends the certificates of every PEM "CERTIFICATE" block to `out`;
 * ONNXZIP_EBUNDLE as above (none, malformed). */
int oz_pem_certificates(const void *pem, size_t len, const char *what, STACK_OF(X509) *out);

/* The (unencrypted) PEM private key; ONNXZIP_EBUNDLE as above. */
int oz_pem_private_key(const void *pem, size_t len, const char *what, EVP_PKEY **out);

/* 0 when k is an EC key on P-256, P-384 or P-521 (model_signing's curves);
 * else ONNXZIP_EBUNDLE naming `what` and the key's type or curve. */
int oz_ec_check(const EVP_PKEY *k, const char *what);

/* The key hint model_signing writes and checks: the lowercase hex SHA-256
 * of the key's SubjectPublicKeyInfo PEM text. 0 or ONNXZIP_ENOMEM. */
int oz_key_hint(EVP_PKEY *k, char hex[65]);

/* 1 when `sig` (DER) is k's ECDSA signature of msg, hashed with the
 * curve's hash (SHA-256, SHA-384, SHA-512 for P-256, P-384, P-521). */
int oz_ecdsa_verify(EVP_PKEY *k, const uint8_t *msg, size_t n, const uint8_t *sig, size_t sig_len);

/* k's ECDSA signature of msg (DER, malloc'ed), hashed as above. */
int oz_ecdsa_sign(EVP_PKEY *k, const uint8_t *msg, size_t n, uint8_t **sig, size_t *sig_len);

/* Checks the bundle's certificates (leaf first) against the roots in
 * `store` at the current time, and that the leaf may sign (KeyUsage
 * digitalSignature or ExtendedKeyUsage codeSigning); *leaf_key: the leaf's
 * key (the caller frees it). ONNXZIP_EBUNDLE for DER that does not parse;
 * ONNXZIP_ESIGNATURE naming why the chain is not trusted. */
int oz_chain_verify(X509_STORE *store, const oz_der *certs, size_t n, const char *what, EVP_PKEY **leaf_key);

/* SHA-256 of n bytes. */
void oz_sha256(const void *p, size_t n, uint8_t out[32]);

/* 32 bytes as 64 lowercase hex digits and a NUL. */
void oz_hex32(const uint8_t d[32], char hex[65]);

#endif
