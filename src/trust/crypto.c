/* libcrypto calls of the trust layer (crypto.h). */
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>

#include "common/internal.h"
#include "trust/crypto.h"

/* The reason of libcrypto's last error, its queue then emptied. */
static const char *ssl_reason(char *buf, size_t cap)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    snprintf(buf, cap, "%s", r ? r : "malformed");
    ERR_clear_error();
    return buf;
}

/* How many blocks "-----BEGIN LABEL-----" the text has: a read loop that
 * gets fewer met a malformed one (OpenSSL 3 reports the end of the text
 * and a broken block alike). */
static size_t pem_blocks(const void *pem, size_t len, const char *label)
{
    char marker[64];
    int m = snprintf(marker, sizeof marker, "-----BEGIN %s-----", label);
    size_t count = 0;
    for (const char *p = pem, *end = p + len; (p = memmem(p, (size_t)(end - p), marker, (size_t)m)); p += m) count++;
    return count;
}

static int pem_bad(const char *what, const char *kind)
{
    char why[128];
    return oz_err(ONNXZIP_EBUNDLE, -1, "%s: malformed PEM %s: %s", what, kind, ssl_reason(why, sizeof why));
}

/* A memory BIO over the PEM text, libcrypto's error queue emptied. */
static int pem_open(const void *pem, size_t len, const char *what, BIO **b)
{
    if (len > INT_MAX) return oz_err(ONNXZIP_EBUNDLE, -1, "%s: %zu bytes of PEM", what, len);
    ERR_clear_error();
    *b = BIO_new_mem_buf(pem, (int)len);
    return *b ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
}

/* After reading `found` blocks: none in the text, or fewer than it has (a
 * malformed one), is ONNXZIP_EBUNDLE. */
static int pem_done(size_t want, size_t found, const char *what, const char *kind,
                    const char *marker)
{
    int rc = 0;
    if (!want) rc = oz_err(ONNXZIP_EBUNDLE, -1, "%s: no PEM %s (%s)", what, kind, marker);
    else if (found < want) rc = pem_bad(what, kind);
    ERR_clear_error();
    return rc;
}

int oz_ec_check(const EVP_PKEY *k, const char *what)
{
    char group[64] = "";
    size_t len = 0;
    if (EVP_PKEY_get_base_id(k) != EVP_PKEY_EC)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: a %s key, not an elliptic-curve key (P-256, P-384 or P-521)", what,
                      OBJ_nid2sn(EVP_PKEY_get_base_id(k)));
    if (!EVP_PKEY_get_group_name(k, group, sizeof group, &len)) ERR_clear_error();
    if (strcmp(group, "prime256v1") && strcmp(group, "secp384r1") && strcmp(group, "secp521r1"))
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: an EC key on the curve '%s', not P-256, P-384 or P-521", what,
                      *group ? group : "(explicit parameters)");
    return 0;
}

int oz_pem_public_keys(const void *pem, size_t len, const char *what, EVP_PKEY ***keys, size_t *n)
{
    BIO *b;
    int rc = pem_open(pem, len, what, &b);
    if (rc) return rc;
    size_t found = 0, want = pem_blocks(pem, len, "PUBLIC KEY");
    EVP_PKEY **all = realloc(*keys, (*n + want + 1) * sizeof **keys), *k; /* room first: all or none are added */
    if (!all) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    else *keys = all;
    while (!rc && found < want && (k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL))) {
        all[*n + found++] = k;
        rc = oz_ec_check(k, what);
    }
    if (!rc) rc = pem_done(want, found, what, "public key", "-----BEGIN PUBLIC KEY-----");
    if (rc)
        while (found) EVP_PKEY_free(all[*n + --found]);
    *n += found;
    BIO_free(b);
    return rc;
}

int oz_pem_certificates(const void *pem, size_t len, const char *what, STACK_OF(X509) *out)
{
    BIO *b;
    int rc = pem_open(pem, len, what, &b);
    if (rc) return rc;
    size_t found = 0;
    X509 *x;
    while (!rc && (x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
        if (!sk_X509_push(out, x)) {
            X509_free(x);
            rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        }
        found++;
    }
    if (!rc) rc = pem_done(pem_blocks(pem, len, "CERTIFICATE") + pem_blocks(pem, len, "X509 CERTIFICATE"),
                           found, what, "certificate", "-----BEGIN CERTIFICATE-----");
    BIO_free(b);
    return rc;
}

int oz_pem_private_key(const void *pem, size_t len, const char *what, EVP_PKEY **out)
{
    BIO *b;
    int rc = pem_open(pem, len, what, &b);
    if (rc) return rc;
    /* an empty passphrase callback: an encrypted key fails instead of prompting */
    *out = PEM_read_bio_PrivateKey(b, NULL, NULL, (void *)"");
    BIO_free(b);
    if (!*out) return pem_bad(what, "private key (unencrypted, -----BEGIN PRIVATE KEY----- or EC PRIVATE KEY)");
    rc = oz_ec_check(*out, what);
    if (rc) {
        EVP_PKEY_free(*out);
        *out = NULL;
    }
    return rc;
}

void oz_sha256(const void *p, size_t n, uint8_t out[32])
{
    unsigned len = 32;
    if (!EVP_Digest(p, n, out, &len, EVP_sha256(), NULL)) memset(out, 0, 32);
}

void oz_hex32(const uint8_t d[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = 0;
}

int oz_key_hint(EVP_PKEY *k, char hex[65])
{
    BIO *b = BIO_new(BIO_s_mem());
    char *text;
    long n;
    if (!b || !PEM_write_bio_PUBKEY(b, k) || (n = BIO_get_mem_data(b, &text)) <= 0) {
        BIO_free(b);
        ERR_clear_error();
        return oz_err(ONNXZIP_ENOMEM, -1, "cannot write the public key as PEM (libcrypto)");
    }
    uint8_t d[32];
    oz_sha256(text, (size_t)n, d);
    oz_hex32(d, hex);
    BIO_free(b);
    return 0;
}

/* The curve's hash, as model_signing pairs them. */
static const EVP_MD *ec_md(const EVP_PKEY *k)
{
    int bits = EVP_PKEY_get_bits(k);
    return bits <= 256 ? EVP_sha256() : bits <= 384 ? EVP_sha384() : EVP_sha512();
}

int oz_ecdsa_verify(EVP_PKEY *k, const uint8_t *msg, size_t n, const uint8_t *sig, size_t sig_len)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestVerifyInit(c, NULL, ec_md(k), NULL, k) == 1 &&
             EVP_DigestVerify(c, sig, sig_len, msg, n) == 1;
    EVP_MD_CTX_free(c);
    ERR_clear_error();
    return ok;
}

int oz_ecdsa_sign(EVP_PKEY *k, const uint8_t *msg, size_t n, uint8_t **sig, size_t *sig_len)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    *sig = NULL;
    int ok = c && EVP_DigestSignInit(c, NULL, ec_md(k), NULL, k) == 1 &&
             EVP_DigestSign(c, NULL, sig_len, msg, n) == 1 && (*sig = malloc(*sig_len)) &&
             EVP_DigestSign(c, *sig, sig_len, msg, n) == 1;
    EVP_MD_CTX_free(c);
    if (ok) return 0;
    free(*sig);
    *sig = NULL;
    char why[128];
    return oz_err(ONNXZIP_EINVAL, -1, "ECDSA signing failed: %s", ssl_reason(why, sizeof why));
}

static int der_cert(const oz_der *d, size_t i, const char *what, X509 **out)
{
    const unsigned char *q = d->p;
    *out = d->n <= LONG_MAX ? d2i_X509(NULL, &q, (long)d->n) : NULL;
    if (*out && q == d->p + d->n) return 0;
    X509_free(*out);
    *out = NULL;
    char why[128];
    return oz_err(ONNXZIP_EBUNDLE, -1, "%s: certificate %zu of verificationMaterial.x509CertificateChain: malformed "
                  "DER: %s", what, i, ssl_reason(why, sizeof why));
}

/* KeyUsage digitalSignature, else ExtendedKeyUsage codeSigning (model_signing's rule). */
static int may_sign(X509 *leaf)
{
    uint32_t flags = X509_get_extension_flags(leaf);
    if ((flags & EXFLAG_KUSAGE) && (X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE)) return 1;
    return (flags & EXFLAG_XKUSAGE) && (X509_get_extended_key_usage(leaf) & XKU_CODE_SIGN);
}

static int chain_check(X509_STORE *store, X509 *leaf, STACK_OF(X509) *rest, const char *what)
{
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    if (!ctx || !X509_STORE_CTX_init(ctx, store, leaf, rest)) {
        X509_STORE_CTX_free(ctx);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    int ok = X509_verify_cert(ctx) == 1;
    int err = X509_STORE_CTX_get_error(ctx), depth = X509_STORE_CTX_get_error_depth(ctx);
    X509_STORE_CTX_free(ctx);
    ERR_clear_error();
    if (!ok)
        return oz_err(ONNXZIP_ESIGNATURE, -1, "%s: the certificate chain is not trusted: %s (certificate %d, the "
                      "leaf being 0)", what, X509_verify_cert_error_string(err), depth);
    if (!may_sign(leaf))
        return oz_err(ONNXZIP_ESIGNATURE, -1, "%s: the signing certificate may not sign: it has neither KeyUsage "
                      "digitalSignature nor ExtendedKeyUsage codeSigning", what);
    return 0;
}

int oz_chain_verify(X509_STORE *store, const oz_der *certs, size_t n, const char *what, EVP_PKEY **leaf_key)
{
    *leaf_key = NULL;
    X509 *leaf = NULL;
    STACK_OF(X509) *rest = sk_X509_new_null();
    int rc = rest ? der_cert(&certs[0], 0, what, &leaf) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t i = 1; i < n && !rc; i++) {
        X509 *x;
        if (!(rc = der_cert(&certs[i], i, what, &x)) && !sk_X509_push(rest, x)) {
            X509_free(x);
            rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        }
    }
    if (!rc) rc = chain_check(store, leaf, rest, what);
    if (!rc && !(*leaf_key = X509_get_pubkey(leaf))) rc = oz_err(ONNXZIP_EBUNDLE, -1, "%s: the signing "
                                                               "certificate's public key does not parse", what);
    if (!rc && (rc = oz_ec_check(*leaf_key, what))) {
        EVP_PKEY_free(*leaf_key);
        *leaf_key = NULL;
    }
    X509_free(leaf);
    sk_X509_pop_free(rest, X509_free);
    return rc;
}
