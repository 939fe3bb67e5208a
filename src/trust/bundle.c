/* Sigstore bundles (bundle.h), as model_signing 1.1.1 and sigstore write
 * them: mediaType, verificationMaterial, dsseEnvelope. */
#include <stdio.h>

#include "common/internal.h"
#include "trust/base64.h"
#include "trust/bundle.h"
#include "trust/json.h"

/* The media types of Sigstore's bundle versions 0.1 to 0.3 (sigstore's
 * own readers accept the four). */
static const char *const oz_media_types[] = {
    "application/vnd.dev.sigstore.bundle+json;version=0.1",
    "application/vnd.dev.sigstore.bundle+json;version=0.2",
    "application/vnd.dev.sigstore.bundle+json;version=0.3",
    OZ_BUNDLE_MEDIA_TYPE,
};

static int keyless(const char *what)
{
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: keyless (Sigstore) signatures are not supported: this bundle "
                  "carries a Sigstore certificate and transparency log entries; sign with a key or a certificate "
                  "chain (model_signing sign key / certificate)", what);
}

static int media_type(const json_t *root, const char *what)
{
    const char *t;
    int rc = oz_json_string(root, "mediaType", what, "mediaType", 1, &t, NULL);
    if (rc) return rc;
    for (size_t i = 0; i < sizeof oz_media_types / sizeof *oz_media_types; i++)
        if (!strcmp(t, oz_media_types[i])) return 0;
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EBUNDLE, -1, "%s: mediaType '%s' is not a Sigstore bundle's (%s)", what,
                  oz_printable(t, strlen(t), shown, sizeof shown), OZ_BUNDLE_MEDIA_TYPE);
}

static int decode_field(const json_t *obj, const char *key, const char *what, const char *path, uint8_t **out,
                        size_t *len)
{
    const char *s;
    size_t n;
    int rc = oz_json_string(obj, key, what, path, 1, &s, &n);
    if (rc) return rc;
    char where[256];
    snprintf(where, sizeof where, "%s: %s", what, path);
    return oz_b64_decode(s, n, where, out, len);
}

static int public_key(const json_t *pk, const char *what, oz_bundle *b)
{
    b->material = OZ_MATERIAL_KEY;
    json_t *h = json_object_get(pk, "hint");
    if (!h || json_is_null(h)) return 0; /* older model_signing: no hint */
    const char *s;
    size_t n;
    int rc = oz_json_string(pk, "hint", what, "verificationMaterial.publicKey.hint", 1, &s, &n);
    if (rc) return rc;
    if (n >= sizeof b->hint)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: verificationMaterial.publicKey.hint is %zu characters, not a "
                      "SHA-256 in hex", what, n);
    memcpy(b->hint, s, n + 1);
    return 0;
}

static int chain(const json_t *c, const char *what, oz_bundle *b)
{
    json_t *certs;
    int rc = oz_json_array(c, "certificates", what, "verificationMaterial.x509CertificateChain.certificates", 1,
                           &certs);
    if (rc) return rc;
    size_t n = json_array_size(certs);
    if (!n) return oz_err(ONNXZIP_EBUNDLE, -1, "%s: verificationMaterial.x509CertificateChain.certificates is "
                          "empty", what);
    if (!(b->certs = calloc(n, sizeof *b->certs))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    b->material = OZ_MATERIAL_CHAIN;
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *x = json_array_get(certs, i);
        char path[96];
        snprintf(path, sizeof path, "verificationMaterial.x509CertificateChain.certificates[%zu]", i);
        if (!json_is_object(x)) return oz_err(ONNXZIP_EBUNDLE, -1, "%s: %s is not an object", what, path);
        strcat(path, ".rawBytes");
        rc = decode_field(x, "rawBytes", what, path, &b->certs[i].p, &b->certs[i].n);
        b->n_certs = i + 1;
    }
    return rc;
}

static int material(const json_t *root, const char *what, oz_bundle *b)
{
    json_t *vm, *tlog, *pk, *c;
    int rc = oz_json_object(root, "verificationMaterial", what, "verificationMaterial", 1, &vm);
    if (!rc) rc = oz_json_array(vm, "tlogEntries", what, "verificationMaterial.tlogEntries", 0, &tlog);
    if (rc) return rc;
    /* A Fulcio certificate (v0.3) or log entries (any version): keyless. */
    if (json_object_get(vm, "certificate") || (tlog && json_array_size(tlog))) return keyless(what);
    if ((rc = oz_json_object(vm, "publicKey", what, "verificationMaterial.publicKey", 0, &pk)) ||
        (rc = oz_json_object(vm, "x509CertificateChain", what, "verificationMaterial.x509CertificateChain", 0,
                             &c)))
        return rc;
    if (pk && c)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: verificationMaterial has both publicKey and x509CertificateChain",
                      what);
    if (pk) return public_key(pk, what, b);
    if (c) return chain(c, what, b);
    return oz_err(ONNXZIP_EBUNDLE, -1, "%s: verificationMaterial has neither publicKey nor x509CertificateChain",
                  what);
}

static int envelope(const json_t *root, const char *what, oz_bundle *b)
{
    json_t *env, *sigs;
    const char *type;
    int rc = oz_json_object(root, "dsseEnvelope", what, "dsseEnvelope", 0, &env);
    if (!rc && !env)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: no dsseEnvelope (%s): not an OpenSSF Model Signing signature",
                      what, json_object_get(root, "messageSignature") ? "a messageSignature bundle" : "missing");
    if (!rc) rc = oz_json_string(env, "payloadType", what, "dsseEnvelope.payloadType", 1, &type, NULL);
    if (!rc && !(b->payload_type = oz_strndup(type, strlen(type)))) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (!rc) rc = decode_field(env, "payload", what, "dsseEnvelope.payload", &b->payload, &b->payload_len);
    if (!rc) rc = oz_json_array(env, "signatures", what, "dsseEnvelope.signatures", 1, &sigs);
    if (rc) return rc;
    if (json_array_size(sigs) != 1)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: dsseEnvelope.signatures has %zu signatures, not exactly one", what,
                      json_array_size(sigs));
    json_t *s = json_array_get(sigs, 0);
    if (!json_is_object(s)) return oz_err(ONNXZIP_EBUNDLE, -1, "%s: dsseEnvelope.signatures[0] is not an object",
                                          what);
    rc = decode_field(s, "sig", what, "dsseEnvelope.signatures[0].sig", &b->sig, &b->sig_len);
    if (!rc && !b->sig_len) rc = oz_err(ONNXZIP_EBUNDLE, -1, "%s: dsseEnvelope.signatures[0].sig is empty", what);
    return rc;
}

int oz_bundle_parse(const void *p, size_t n, const char *what, oz_bundle *b)
{
    memset(b, 0, sizeof *b);
    json_t *root;
    int rc = oz_json_load(p, n, what, &root);
    if (rc) return rc;
    if (!json_is_object(root)) rc = oz_err(ONNXZIP_EBUNDLE, -1, "%s: not a JSON object", what);
    if (!rc) rc = media_type(root, what);
    if (!rc) rc = material(root, what, b);
    if (!rc) rc = envelope(root, what, b);
    json_decref(root);
    if (rc) oz_bundle_free(b);
    return rc;
}

void oz_bundle_free(oz_bundle *b)
{
    for (size_t i = 0; i < b->n_certs; i++) free(b->certs[i].p);
    free(b->certs);
    free(b->payload_type);
    free(b->payload);
    free(b->sig);
    memset(b, 0, sizeof *b);
}

uint8_t *oz_dsse_pae(const char *type, const uint8_t *payload, size_t n, size_t *len)
{
    char head[96];
    int h = snprintf(head, sizeof head, "DSSEv1 %zu ", strlen(type));
    size_t tl = strlen(type);
    char mid[32];
    int m = snprintf(mid, sizeof mid, " %zu ", n);
    *len = (size_t)h + tl + (size_t)m + n;
    uint8_t *p = malloc(*len + 1);
    if (!p) return NULL;
    memcpy(p, head, (size_t)h);
    memcpy(p + h, type, tl);
    memcpy(p + h + tl, mid, (size_t)m);
    if (n) memcpy(p + h + tl + m, payload, n);
    return p;
}
