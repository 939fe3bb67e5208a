/* A Sigstore bundle holding an OMS signature (model.sig): parsed, not yet
 * trusted. */
#ifndef ONNXZIP_BUNDLE_H
#define ONNXZIP_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#define OZ_INTOTO_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define OZ_BUNDLE_MEDIA_TYPE "application/vnd.dev.sigstore.bundle.v0.3+json" /* what model_signing writes */

typedef enum oz_material {
    OZ_MATERIAL_KEY = 1,  /* verificationMaterial.publicKey: a key the verifier is given */
    OZ_MATERIAL_CHAIN = 2 /* verificationMaterial.x509CertificateChain: leaf first */
} oz_material;

typedef struct oz_der {
    uint8_t *p;
    size_t n;
} oz_der;

typedef struct oz_bundle {
    oz_material material;
    char hint[65];     /* KEY: publicKey.hint (SHA-256 hex of the key's PEM), "" when absent */
    oz_der *certs;     /* CHAIN: the certificates' DER, leaf first */
    size_t n_certs;
    char *payload_type;
    uint8_t *payload;  /* the DSSE payload, decoded (NUL after it) */
    size_t payload_len;
    uint8_t *sig;      /* the one DSSE signature, decoded: a DER ECDSA signature */
    size_t sig_len;
} oz_bundle;

/* Parses the n bytes at p (`what` names them in messages): 0, or
 * ONNXZIP_EBUNDLE naming what is malformed (JSON, base64, a media type,
 * a missing or mistyped field, not exactly one signature, no key material)
 * or ONNXZIP_EUNSUPPORTED for a keyless (Sigstore Fulcio + Rekor) bundle.
 * On failure *b is empty. */
int oz_bundle_parse(const void *p, size_t n, const char *what, oz_bundle *b);

void oz_bundle_free(oz_bundle *b);

/* DSSE's pre-authentication encoding of a payload of `type`:
 * "DSSEv1 LEN(type) type LEN(payload) payload", malloc'ed (*len bytes);
 * NULL when out of memory. */
uint8_t *oz_dsse_pae(const char *type, const uint8_t *payload, size_t n, size_t *len);

#endif
