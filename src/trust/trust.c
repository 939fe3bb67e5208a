/* onnxzip_trust_*() and the check of a bundle's signature (trust.h). */
#include "common/internal.h"
#include "trust/crypto.h"
#include "trust/json.h"
#include "trust/trust.h"

int onnxzip_trust_create(onnxzip_trust **out)
{
    if (!out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_trust_create: NULL argument");
    onnxzip_trust *t = calloc(1, sizeof *t);
    if (t && !(t->roots = X509_STORE_new())) {
        free(t);
        t = NULL;
    }
    *out = t;
    return t ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
}

int onnxzip_trust_add_public_key(onnxzip_trust *t, const void *pem, size_t len)
{
    if (!t || (!pem && len)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_trust_add_public_key: NULL argument");
    return oz_pem_public_keys(pem ? pem : "", len, "the trusted public key", &t->keys, &t->n_keys);
}

int onnxzip_trust_add_certificates(onnxzip_trust *t, const void *pem, size_t len)
{
    if (!t || (!pem && len)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_trust_add_certificates: NULL argument");
    STACK_OF(X509) *certs = sk_X509_new_null();
    if (!certs) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int rc = oz_pem_certificates(pem ? pem : "", len, "the trusted certificate chain", certs);
    for (int i = 0; !rc && i < sk_X509_num(certs); i++) {
        if (!X509_STORE_add_cert(t->roots, sk_X509_value(certs, i))) /* takes its own reference */
            rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        else
            t->n_roots++;
    }
    sk_X509_pop_free(certs, X509_free);
    return rc;
}

int onnxzip_trust_set_signature(onnxzip_trust *t, const void *bundle, size_t len)
{
    if (!t || (!bundle && len)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_trust_set_signature: NULL argument");
    if (len > OZ_BUNDLE_MAX)
        return oz_err(ONNXZIP_EBUNDLE, -1, "the detached signature: %zu bytes, over the %zu MiB a signature may have",
                      len, OZ_BUNDLE_MAX >> 20);
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (len) memcpy(copy, bundle, len);
    free(t->signature);
    t->signature = copy;
    t->signature_len = len;
    return 0;
}

void onnxzip_trust_free(onnxzip_trust **t)
{
    if (!t || !*t) return;
    for (size_t i = 0; i < (*t)->n_keys; i++) EVP_PKEY_free((*t)->keys[i]);
    free((*t)->keys);
    X509_STORE_free((*t)->roots);
    free((*t)->signature);
    free(*t);
    *t = NULL;
}

static int verify_key(const onnxzip_trust *t, const oz_bundle *b, const uint8_t *pae, size_t n, const char *what)
{
    if (!t->n_keys)
        return oz_err(ONNXZIP_ESIGNATURE, -1, "%s: signed with a public key, but no public key is trusted (only "
                      "certificates: verify with the signer's public key)", what);
    size_t hinted = 0;
    for (size_t i = 0; i < t->n_keys; i++) {
        char hint[65];
        int rc = *b->hint ? oz_key_hint(t->keys[i], hint) : 0;
        if (rc) return rc;
        if (*b->hint && strcmp(hint, b->hint)) continue; /* model_signing's key mismatch */
        hinted++;
        if (oz_ecdsa_verify(t->keys[i], pae, n, b->sig, b->sig_len)) return 0;
    }
    if (!hinted)
        return oz_err(ONNXZIP_ESIGNATURE, -1, "%s: signed by another key: its key hint %.16s... matches none of the "
                      "%zu trusted public key(s)", what, b->hint, t->n_keys);
    return oz_err(ONNXZIP_ESIGNATURE, -1, "%s: the ECDSA signature does not verify with the trusted public key%s",
                  what, t->n_keys > 1 ? "s" : "");
}

static int verify_chain(const onnxzip_trust *t, const oz_bundle *b, const uint8_t *pae, size_t n, const char *what)
{
    if (!t->n_roots)
        return oz_err(ONNXZIP_ESIGNATURE, -1, "%s: signed with a certificate, but no certificate is trusted (only "
                      "public keys: verify with the root of its certificate chain)", what);
    EVP_PKEY *k;
    int rc = oz_chain_verify(t->roots, b->certs, b->n_certs, what, &k);
    if (rc) return rc;
    int ok = oz_ecdsa_verify(k, pae, n, b->sig, b->sig_len);
    EVP_PKEY_free(k);
    return ok ? 0 : oz_err(ONNXZIP_ESIGNATURE, -1, "%s: the ECDSA signature does not verify with the signing "
                           "certificate's key", what);
}

int oz_trust_verify(const onnxzip_trust *t, const oz_bundle *b, const char *what)
{
    if (strcmp(b->payload_type, OZ_INTOTO_PAYLOAD_TYPE)) {
        char shown[OZ_PRINTABLE_CAP];
        return oz_err(ONNXZIP_ESIGNATURE, -1, "%s: the signature is over a payload of type '%s', not an in-toto "
                      "statement (" OZ_INTOTO_PAYLOAD_TYPE ")", what,
                      oz_printable(b->payload_type, strlen(b->payload_type), shown, sizeof shown));
    }
    size_t n;
    uint8_t *pae = oz_dsse_pae(b->payload_type, b->payload, b->payload_len, &n);
    if (!pae) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int rc = b->material == OZ_MATERIAL_KEY ? verify_key(t, b, pae, n, what) : verify_chain(t, b, pae, n, what);
    free(pae);
    return rc;
}
