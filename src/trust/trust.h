/* onnxzip_trust: the keys and roots a signature must lead to, and a
 * detached signature; and the one check of a bundle against them. */
#ifndef ONNXZIP_TRUST_H
#define ONNXZIP_TRUST_H

#include <openssl/x509.h>

#include "trust/bundle.h"

struct onnxzip_trust {
    EVP_PKEY **keys;   /* trusted public keys */
    size_t n_keys;
    X509_STORE *roots; /* trusted root certificates */
    size_t n_roots;
    uint8_t *signature; /* the detached signature, or NULL */
    size_t signature_len;
};

/* Checks that `b` is signed by a key or a chain `t` trusts, over an
 * in-toto payload: 0, ONNXZIP_ESIGNATURE naming why not (`what`: the
 * signature's name), ONNXZIP_EBUNDLE for certificates that do not parse. */
int oz_trust_verify(const onnxzip_trust *t, const oz_bundle *b, const char *what);

#endif
