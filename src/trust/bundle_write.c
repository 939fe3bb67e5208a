/* The statement and the bundle JSON of a signature (bundle_write.h), laid
 * out as model_signing writes them: the statement as protobuf's JSON
 * (indented by 2), the bundle on one line. */
#include <openssl/pem.h>

#include "common/internal.h"
#include "trust/base64.h"
#include "trust/bundle.h"
#include "trust/bundle_write.h"
#include "trust/json.h"
#include "trust/crypto.h"
#include "trust/statement.h"

/* json_object_set_new() etc. report failure only when out of memory. */
static int put(json_t *o, const char *k, json_t *v, int *ok)
{
    if (!v || json_object_set_new(o, k, v)) *ok = 0;
    return *ok;
}

static int push(json_t *a, json_t *v, int *ok)
{
    if (!v || json_array_append_new(a, v)) *ok = 0;
    return *ok;
}

static json_t *statement(const oz_sign_input *in, int *ok)
{
    json_t *st = json_object(), *subs = json_array(), *sub = json_object(), *dig = json_object();
    json_t *pred = json_object(), *ser = json_object(), *ign = json_array(), *res = json_array();
    uint8_t root[32];
    char hex[65];
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    *ok = st && subs && sub && dig && pred && ser && ign && res && c && EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    for (size_t i = 0; *ok && i < in->n; i++) {
        json_t *r = json_object();
        oz_hex32(in->digests[i], hex);
        put(r, "name", json_string(in->files[i]->path), ok);
        put(r, "algorithm", json_string("sha256"), ok);
        put(r, "digest", json_string(hex), ok);
        push(res, r, ok);
        *ok = *ok && EVP_DigestUpdate(c, in->digests[i], 32);
    }
    *ok = *ok && EVP_DigestFinal_ex(c, root, NULL);
    EVP_MD_CTX_free(c);
    oz_hex32(root, hex);
    for (size_t i = 0; *ok && i < in->n_ignore; i++) push(ign, json_string(in->ignore[i]), ok);
    if (*ok) {
        put(dig, "sha256", json_string(hex), ok);
        put(sub, "name", json_string(in->subject), ok);
        put(sub, "digest", dig, ok), dig = NULL;
        push(subs, sub, ok), sub = NULL;
        put(st, "_type", json_string(OZ_STATEMENT_TYPE), ok);
        put(st, "subject", subs, ok), subs = NULL;
        put(st, "predicateType", json_string(OZ_PREDICATE_TYPE), ok);
        put(ser, "method", json_string("files"), ok);
        put(ser, "hash_type", json_string("sha256"), ok);
        put(ser, "allow_symlinks", json_false(), ok);
        put(ser, "ignore_paths", ign, ok), ign = NULL;
        put(pred, "serialization", ser, ok), ser = NULL;
        put(pred, "resources", res, ok), res = NULL;
        put(st, "predicate", pred, ok), pred = NULL;
    }
    json_decref(subs), json_decref(sub), json_decref(dig), json_decref(pred), json_decref(ser);
    json_decref(ign), json_decref(res);
    if (!*ok) json_decref(st);
    return *ok ? st : NULL;
}

/* verificationMaterial: the key's hint, or the certificates' DER. */
static json_t *material(const oz_sign_input *in, int *ok)
{
    json_t *vm = json_object(), *inner = json_object();
    *ok = vm && inner;
    if (!in->certs) {
        char hint[65] = "";
        *ok = *ok && !oz_key_hint(in->key, hint);
        put(inner, "hint", json_string(hint), ok);
        put(vm, "publicKey", inner, ok), inner = NULL;
    } else {
        json_t *certs = json_array();
        for (int i = 0; *ok && certs && i < sk_X509_num(in->certs); i++) {
            unsigned char *der = NULL;
            int n = i2d_X509(sk_X509_value(in->certs, i), &der);
            char *b64 = n > 0 ? oz_b64_encode(der, (size_t)n) : NULL;
            json_t *c = json_object();
            put(c, "rawBytes", b64 ? json_string(b64) : NULL, ok);
            push(certs, c, ok);
            OPENSSL_free(der);
            free(b64);
        }
        put(inner, "certificates", certs, ok);
        put(vm, "x509CertificateChain", inner, ok), inner = NULL;
    }
    put(vm, "tlogEntries", json_array(), ok);
    json_decref(inner);
    if (!*ok) json_decref(vm);
    return *ok ? vm : NULL;
}

/* dsseEnvelope of the payload, signed. */
static int envelope(const oz_sign_input *in, const char *payload, json_t **out)
{
    size_t n, sig_len = 0, plen = strlen(payload);
    uint8_t *pae = oz_dsse_pae(OZ_INTOTO_PAYLOAD_TYPE, (const uint8_t *)payload, plen, &n), *sig = NULL;
    int rc = pae ? oz_ecdsa_sign(in->key, pae, n, &sig, &sig_len) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    char *b64p = rc ? NULL : oz_b64_encode((const uint8_t *)payload, plen);
    char *b64s = rc ? NULL : oz_b64_encode(sig, sig_len);
    json_t *env = json_object(), *sigs = json_array(), *s = json_object();
    int ok = !rc && b64p && b64s && env && sigs && s;
    put(s, "sig", json_string(b64s ? b64s : ""), &ok);
    put(s, "keyid", json_string(""), &ok);
    push(sigs, s, &ok), s = NULL;
    put(env, "payload", json_string(b64p ? b64p : ""), &ok);
    put(env, "payloadType", json_string(OZ_INTOTO_PAYLOAD_TYPE), &ok);
    put(env, "signatures", sigs, &ok), sigs = NULL;
    json_decref(s), json_decref(sigs);
    free(pae), free(sig), free(b64p), free(b64s);
    if (!rc && !ok) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (rc) json_decref(env);
    *out = rc ? NULL : env;
    return rc;
}

int oz_bundle_write(const oz_sign_input *in, char **json)
{
    *json = NULL;
    int ok;
    json_t *st = statement(in, &ok);
    char *payload = st ? json_dumps(st, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(st);
    json_t *b = json_object(), *env = NULL;
    int rc = payload && b ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (!rc) rc = envelope(in, payload, &env);
    free(payload);
    if (!rc) {
        ok = 1;
        put(b, "mediaType", json_string(OZ_BUNDLE_MEDIA_TYPE), &ok);
        put(b, "verificationMaterial", material(in, &ok), &ok);
        put(b, "dsseEnvelope", env, &ok), env = NULL;
        if (!ok || !(*json = json_dumps(b, JSON_COMPACT | JSON_PRESERVE_ORDER)))
            rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    json_decref(env);
    json_decref(b);
    return rc;
}
