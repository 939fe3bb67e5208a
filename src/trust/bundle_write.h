/* A signature bundle written as model_signing 1.1.1 writes it. */
#ifndef ONNXZIP_BUNDLE_WRITE_H
#define ONNXZIP_BUNDLE_WRITE_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "onnxzip/onnxzip.h"

typedef struct oz_sign_input {
    const char *subject;                       /* the subject's name */
    const onnxzip_planned_file *const *files;  /* the resources, sorted by path */
    const uint8_t (*digests)[32];              /* their SHA-256 */
    size_t n;
    const char *const *ignore;                 /* ignore_paths */
    size_t n_ignore;
    EVP_PKEY *key;                             /* the private key */
    STACK_OF(X509) *certs;                     /* leaf first; NULL: key mode (publicKey.hint) */
} oz_sign_input;

/* The statement of `in`, signed with in->key (DSSE, ECDSA), as the
 * bundle's JSON text (malloc'ed, NUL-terminated) in *json. */
int oz_bundle_write(const oz_sign_input *in, char **json);

#endif
