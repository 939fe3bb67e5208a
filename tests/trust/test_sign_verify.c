/* Signing and verifying packages (onnxzip_sign, onnxzip_signed_open and
 * _check) with keys and certificates made at test time by the openssl
 * command. Oracles: `openssl dgst -verify` checks the ECDSA signature of
 * the DSSE pre-authentication encoding written here by hand,
 * `sha256sum` the digests of the files `onnxzip_unpack_dir` writes, and
 * jansson reads the bundle. Then every bad input that belongs to the
 * signature itself: wrong key, another root, an expired or non-signing
 * leaf, curves and key types refused, tampered, extra and missing files. */
#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnxzip/onnxzip.h"
#include "testutil.h"

#define CHECK_MSG(needle) check_msg((needle), __FILE__, __LINE__)

static char *dir;
static uint8_t w0_bytes[4096];

static void check_msg(const char *needle, const char *file, int line)
{
    const char *m = onnxzip_last_error()->message;
    tu_check(strstr(m, needle) != NULL, needle, file, line);
    if (!strstr(m, needle)) fprintf(stderr, "  message: %s\n", m);
}

/* Runs a shell command in the test's directory; its exit status. */
__attribute__((format(printf, 1, 2))) static int sh(const char *fmt, ...);
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd, "cd '%s' && (", dir);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    snprintf(cmd + n, sizeof cmd - (size_t)n, ") >/dev/null 2>&1");
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static uint8_t *slurp(const char *name, size_t *n)
{
    FILE *f = fopen(tu_path(dir, name), "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)len + 1);
    *n = fread(p, 1, (size_t)len, f);
    p[*n] = 0;
    fclose(f);
    return p;
}

static void spit(const char *name, const void *p, size_t n)
{
    FILE *f = fopen(tu_path(dir, name), "wb");
    fwrite(p, 1, n, f);
    fclose(f);
}

/* pae.bin: DSSE's pre-authentication encoding of an in-toto payload,
 * written here by hand (the oracle's, not the library's). */
static void write_pae(const void *body, size_t n)
{
    char head[96];
    int h = snprintf(head, sizeof head, "DSSEv1 28 application/vnd.in-toto+json %zu ", n);
    FILE *f = fopen(tu_path(dir, "pae.bin"), "wb");
    fwrite(head, 1, (size_t)h, f);
    fwrite(body, 1, n, f);
    fclose(f);
}

/* config.json, tok/vocab.txt, model m.onnx with its weight w0; `extra`: one file more; `flip`: one weight byte changed;
 * `drop_vocab`: without tok/vocab.txt; `sig`: a model.sig of these bytes. */
typedef struct pkg_opts {
    const char *extra;
    int flip, drop_vocab;
    const char *sig;
} pkg_opts;

static void make_pkg(const char *name, pkg_opts p)
{
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.flags = ONNXZIP_WRITE_PACKAGE | ONNXZIP_WRITE_NO_SYNC;
    onnxzip_writer *w = NULL;
    size_t lm;
    uint8_t *m = tu_model_entries(1, sizeof w0_bytes, 0, &lm);
    w0_bytes[100] ^= (uint8_t)p.flip;
    CHECK_RC(onnxzip_writer_create(tu_path(dir, name), &o, &w), 0);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "config.json", "{\"a\": 1}\n", 9), 0);
    if (!p.drop_vocab) CHECK_RC(onnxzip_writer_add_file_memory(w, "tok/vocab.txt", "hello\nworld\n", 12), 0);
    if (p.extra) CHECK_RC(onnxzip_writer_add_file_memory(w, p.extra, "x", 1), 0);
    if (p.sig) CHECK_RC(onnxzip_writer_add_file_memory(w, "model.sig", p.sig, strlen(p.sig)), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "w0", w0_bytes, sizeof w0_bytes), 0);
    CHECK_RC(onnxzip_writer_add_model(w, "m.onnx", m, lm), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    w0_bytes[100] ^= (uint8_t)p.flip;
    free(m);
}

static void make_single(const char *name)
{
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.flags = ONNXZIP_WRITE_NO_SYNC;
    onnxzip_writer *w = NULL;
    size_t lm;
    uint8_t *m = tu_model_entries(1, sizeof w0_bytes, 0, &lm);
    CHECK_RC(onnxzip_writer_create(tu_path(dir, name), &o, &w), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "w0", w0_bytes, sizeof w0_bytes), 0);
    CHECK_RC(onnxzip_writer_set_model(w, m, lm), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(m);
}

/* Keys and certificates, by the openssl command. */
static int make_keys(void)
{
    int rc = 0;
    const char *curves[][2] = { { "p256", "prime256v1" }, { "p384", "secp384r1" }, { "p521", "secp521r1" },
                                { "other", "prime256v1" }, { "k1", "secp256k1" } };
    for (size_t i = 0; i < sizeof curves / sizeof *curves; i++)
        rc |= sh("openssl ecparam -name %s -genkey -noout -out %s.key && openssl ec -in %s.key -pubout -out %s.pub",
                 curves[i][1], curves[i][0], curves[i][0], curves[i][0]);
    rc |= sh("openssl genpkey -algorithm ed25519 -out ed.key && openssl pkey -in ed.key -pubout -out ed.pub");
    /* two roots; leaves signed by the first: digitalSignature, codeSigning
     * only, keyEncipherment only (may not sign), expired (faketime) */
    for (int i = 1; i <= 2; i++)
        rc |= sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca%d.key -out ca%d.pem "
                 "-subj /CN=root%d -days 30 -addext basicConstraints=critical,CA:TRUE "
                 "-addext keyUsage=critical,keyCertSign", i, i, i);
    const char *leaves[][2] = { { "leaf", "keyUsage=critical,digitalSignature" },
                                { "eku", "extendedKeyUsage=codeSigning" },
                                { "enc", "keyUsage=critical,keyEncipherment" } };
    for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++)
        rc |= sh("printf '%%s\\n' '%s' > %s.ext && openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
                 "-nodes -keyout %s.key -subj /CN=%s -out %s.csr && openssl x509 -req -in %s.csr -CA ca1.pem "
                 "-CAkey ca1.key -set_serial %zu -days 7 -extfile %s.ext -out %s.pem", leaves[i][1], leaves[i][0],
                 leaves[i][0], leaves[i][0], leaves[i][0], leaves[i][0], i + 10, leaves[i][0], leaves[i][0]);
    rc |= sh("cp leaf.key old.key && faketime '2021-01-01 00:00:00' openssl x509 -req -in leaf.csr -CA ca1.pem "
             "-CAkey ca1.key -set_serial 20 -days 1 -extfile leaf.ext -out old.pem");
    return rc;
}

static onnxzip_trust *trust_of(const char *pub, const char *roots, const char *sig)
{
    onnxzip_trust *t = NULL;
    size_t n;
    uint8_t *p;
    CHECK_RC(onnxzip_trust_create(&t), 0);
    if (pub && (p = slurp(pub, &n))) CHECK_RC(onnxzip_trust_add_public_key(t, p, n), 0), free(p);
    if (roots && (p = slurp(roots, &n))) CHECK_RC(onnxzip_trust_add_certificates(t, p, n), 0), free(p);
    if (sig && (p = slurp(sig, &n))) CHECK_RC(onnxzip_trust_set_signature(t, p, n), 0), free(p);
    return t;
}

/* signed_open (then, when it succeeds and `check_rc` is not 1, a check of
 * every file) of package `pkg` with `t`: the first failing status. */
static int verify(const char *pkg, onnxzip_trust *t, const char *path)
{
    onnxzip_archive *a = NULL;
    onnxzip_signed *s = NULL;
    int rc = onnxzip_open(tu_path(dir, pkg), 0, &a);
    if (!rc) rc = onnxzip_signed_open(a, t, &s);
    if (!rc) rc = onnxzip_signed_check(s, a, path);
    if (!rc) rc = onnxzip_signed_check(s, a, path); /* again: nothing left to hash */
    onnxzip_signed_free(&s);
    onnxzip_close(&a);
    return rc;
}

static int verify_with(const char *pkg, const char *pub, const char *roots, const char *sig)
{
    onnxzip_trust *t = trust_of(pub, roots, sig);
    int rc = verify(pkg, t, NULL);
    onnxzip_trust_free(&t);
    CHECK(t == NULL);
    return rc;
}

static int sign(const char *pkg, const char *key, const char *cert, const char *chain, const char *sig)
{
    char k[1024], c[1024], ch[1024], s[1024];
    snprintf(k, sizeof k, "%s", tu_path(dir, key));
    if (cert) snprintf(c, sizeof c, "%s", tu_path(dir, cert));
    if (chain) snprintf(ch, sizeof ch, "%s", tu_path(dir, chain));
    if (sig) snprintf(s, sizeof s, "%s", tu_path(dir, sig));
    onnxzip_sign_options o = { .private_key_path = k, .certificate_path = cert ? c : NULL,
                               .chain_path = chain ? ch : NULL, .signature_path = sig ? s : NULL };
    return onnxzip_sign(tu_path(dir, pkg), &o);
}

/* The oracle: the bundle read by jansson, its payload and signature
 * decoded by `openssl base64`, the PAE written here, the ECDSA signature
 * verified by `openssl dgst` with the public key `pub` and `md`. */
static void oracle_signature(const char *bundle_file, const char *pub, const char *md)
{
    json_error_t e;
    json_t *b = json_load_file(tu_path(dir, bundle_file), JSON_REJECT_DUPLICATES, &e);
    CHECK(b != NULL);
    if (!b) return;
    json_t *env = json_object_get(b, "dsseEnvelope");
    const char *payload = json_string_value(json_object_get(env, "payload"));
    const char *sig = json_string_value(json_object_get(json_array_get(json_object_get(env, "signatures"), 0), "sig"));
    CHECK(!strcmp(json_string_value(json_object_get(b, "mediaType")), "application/vnd.dev.sigstore.bundle.v0.3+json"));
    CHECK(!strcmp(json_string_value(json_object_get(env, "payloadType")), "application/vnd.in-toto+json"));
    CHECK(payload && sig);
    if (!payload || !sig) return json_decref(b);
    spit("payload.b64", payload, strlen(payload));
    spit("sig.b64", sig, strlen(sig));
    CHECK(!sh("openssl base64 -d -A -in payload.b64 -out payload.json && openssl base64 -d -A -in sig.b64 -out sig.der"));
    size_t n;
    uint8_t *body = slurp("payload.json", &n);
    write_pae(body, n);
    CHECK(!sh("openssl dgst -%s -verify %s -signature sig.der pae.bin", md, pub));
    /* a byte changed: refused by the oracle too */
    body[n / 2] ^= 1;
    write_pae(body, n);
    CHECK(sh("openssl dgst -%s -verify %s -signature sig.der pae.bin", md, pub) == 1);
    free(body);
    json_decref(b);
}

/* Bytes the caller holds (onnxzip_signed_check_bytes, _check_file,
 * _covers), against the files unpack wrote into unpacked/. */
static void check_held(const onnxzip_signed *s)
{
    CHECK(onnxzip_signed_covers(s, "config.json") && onnxzip_signed_covers(s, "tok/vocab.txt"));
    CHECK(!onnxzip_signed_covers(s, "model.sig") && !onnxzip_signed_covers(s, "nope") &&
          !onnxzip_signed_covers(s, NULL));
    CHECK_RC(onnxzip_signed_check_file(s, "tok/vocab.txt", tu_path(dir, "unpacked/tok/vocab.txt")), 0);
    CHECK_RC(onnxzip_signed_check_file(s, "m.onnx", tu_path(dir, "unpacked/m.onnx")), 0);
    CHECK_RC(onnxzip_signed_check_file(s, "m.onnx", tu_path(dir, "unpacked/config.json")), ONNXZIP_EMISMATCH);
    CHECK_MSG("'m.onnx' differs from the signed statement");
    CHECK_RC(onnxzip_signed_check_file(s, "config.json", tu_path(dir, "unpacked")), ONNXZIP_ENOTREG);
    CHECK_RC(onnxzip_signed_check_file(s, "config.json", tu_path(dir, "unpacked/absent")), ONNXZIP_EIO);
    CHECK_MSG("unpacked/absent");
    size_t len = 0;
    uint8_t *cfg = slurp("unpacked/config.json", &len);
    CHECK(cfg && len > 1);
    CHECK_RC(onnxzip_signed_check_bytes(s, "config.json", cfg, len), 0);
    CHECK_RC(onnxzip_signed_check_bytes(s, "config.json", cfg, len - 1), ONNXZIP_EMISMATCH);
    cfg[len / 2] ^= 1;
    CHECK_RC(onnxzip_signed_check_bytes(s, "config.json", cfg, len), ONNXZIP_EMISMATCH);
    CHECK_MSG("'config.json' differs from the signed statement");
    CHECK_RC(onnxzip_signed_check_bytes(s, "model.sig", cfg, len), ONNXZIP_EUNSIGNED);
    CHECK_RC(onnxzip_signed_check_bytes(s, "nope", cfg, len), ONNXZIP_ENOTFOUND);
    CHECK_RC(onnxzip_signed_check_bytes(s, "config.json", NULL, 1), ONNXZIP_EINVAL);
    free(cfg);
}

/* The oracle for digests: every resource's digest is sha256sum's of the
 * file unpack writes, and those files are exactly the resources. */
static void oracle_digests(const char *pkg, const char *pub, const char *sig)
{
    char out[1024];
    snprintf(out, sizeof out, "%s", tu_path(dir, "unpacked"));
    tu_rmtree(out);
    CHECK_RC(onnxzip_unpack_dir(tu_path(dir, pkg), out, NULL), 0);
    onnxzip_trust *t = trust_of(pub, NULL, sig);
    onnxzip_archive *a = NULL;
    onnxzip_signed *s = NULL;
    CHECK_RC(onnxzip_open(tu_path(dir, pkg), 0, &a), 0);
    CHECK_RC(onnxzip_signed_open(a, t, &s), 0);
    size_t n = onnxzip_signed_resource_count(s);
    /* config.json, m.onnx (its weight inline: the writer gave it no data
     * file to come from), tok/vocab.txt; model.sig ignored */
    CHECK(n == 3);
    for (size_t i = 0; i < n; i++) {
        const char *name = onnxzip_signed_resource_name(s, i);
        CHECK(!sh("cd unpacked && echo '%s  %s' | sha256sum -c", onnxzip_signed_resource_digest(s, i), name));
        CHECK(i == 0 || strcmp(onnxzip_signed_resource_name(s, i - 1), name) < 0);
    }
    CHECK(!sh("test $(cd unpacked && find . -type f ! -name model.sig | wc -l) -eq %zu", n));
    CHECK(onnxzip_signed_resource_name(s, n) == NULL);
    check_held(s);
    onnxzip_signed_free(&s);
    onnxzip_close(&a);
    onnxzip_trust_free(&t);
    tu_rmtree(out);
}

static void test_key_signing(void)
{
    const char *curves[][2] = { { "p256", "sha256" }, { "p384", "sha384" }, { "p521", "sha512" } };
    for (size_t i = 0; i < 3; i++) {
        char key[32], pub[32];
        snprintf(key, sizeof key, "%s.key", curves[i][0]);
        snprintf(pub, sizeof pub, "%s.pub", curves[i][0]);
        make_pkg("pkg.onnxzip", (pkg_opts){ 0 });
        CHECK_RC(sign("pkg.onnxzip", key, NULL, NULL, NULL), 0);
        CHECK(!sh("unzip -p pkg.onnxzip model.sig > got.sig"));
        oracle_signature("got.sig", pub, curves[i][1]);
        CHECK_RC(verify_with("pkg.onnxzip", pub, NULL, NULL), 0);
        CHECK_RC(verify_with("pkg.onnxzip", "other.pub", NULL, NULL), ONNXZIP_ESIGNATURE);
        CHECK_MSG("signed by another key");
    }
    oracle_digests("pkg.onnxzip", "p521.pub", NULL);
    /* the key hint names p256's key; p256's key verifies, a trust of two keys too */
    make_pkg("pkg.onnxzip", (pkg_opts){ 0 });
    CHECK_RC(sign("pkg.onnxzip", "p256.key", NULL, NULL, NULL), 0);
    CHECK(!sh("cat other.pub p256.pub > two.pub"));
    CHECK_RC(verify_with("pkg.onnxzip", "two.pub", NULL, NULL), 0);
    /* keys are added all or none: p256's is not kept beside a refused one */
    onnxzip_trust *mixed = trust_of(NULL, NULL, NULL);
    size_t n;
    CHECK(!sh("cat p256.pub k1.pub > mixed.pub"));
    uint8_t *p = slurp("mixed.pub", &n);
    CHECK_RC(onnxzip_trust_add_public_key(mixed, p, n), ONNXZIP_EBUNDLE);
    CHECK_MSG("secp256k1");
    free(p);
    CHECK_RC(verify("pkg.onnxzip", mixed, NULL), ONNXZIP_ESIGNATURE);
    CHECK_MSG("no public key is trusted");
    onnxzip_trust_free(&mixed);
    /* only certificates trusted */
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "ca1.pem", NULL), ONNXZIP_ESIGNATURE);
    CHECK_MSG("no public key is trusted");
    /* per model and per file */
    onnxzip_trust *t = trust_of("p256.pub", NULL, NULL);
    CHECK_RC(verify("pkg.onnxzip", t, "m.onnx"), 0);
    CHECK_RC(verify("pkg.onnxzip", t, "config.json"), 0);
    CHECK_RC(verify("pkg.onnxzip", t, "nope.txt"), ONNXZIP_ENOTFOUND);
    CHECK_RC(verify("pkg.onnxzip", t, "model.sig"), ONNXZIP_EUNSIGNED); /* spec 20.5 */
    CHECK_MSG("not covered by the signature");
    onnxzip_trust_free(&t);
    /* signed again: model.sig replaced, still one */
    CHECK_RC(sign("pkg.onnxzip", "p384.key", NULL, NULL, NULL), 0);
    CHECK_RC(verify_with("pkg.onnxzip", "p384.pub", NULL, NULL), 0);
    CHECK(!sh("test $(unzip -Z1 pkg.onnxzip | grep -c '^model.sig$') -eq 1"));
}

static void test_detached_and_tamper(void)
{
    make_pkg("pkg.onnxzip", (pkg_opts){ 0 });
    CHECK_RC(sign("pkg.onnxzip", "p256.key", NULL, NULL, "pkg.sig"), 0);
    oracle_signature("pkg.sig", "p256.pub", "sha256");
    CHECK(sh("unzip -Z1 pkg.onnxzip | grep -q '^model.sig$'") == 1); /* nothing written into it */
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, NULL), ONNXZIP_EUNSIGNED);
    CHECK_MSG("not signed");
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, "pkg.sig"), 0);
    /* one weight byte changed: found by the check, naming the data file */
    make_pkg("flip.onnxzip", (pkg_opts){ .flip = 1 });
    onnxzip_trust *t = trust_of("p256.pub", NULL, "pkg.sig");
    CHECK_RC(verify("flip.onnxzip", t, "config.json"), 0); /* other files still verify */
    CHECK_RC(verify("flip.onnxzip", t, "m.onnx"), ONNXZIP_EMISMATCH);
    CHECK_MSG("differs from the signed statement");
    CHECK_RC(verify("flip.onnxzip", t, NULL), ONNXZIP_EMISMATCH);
    make_pkg("extra.onnxzip", (pkg_opts){ .extra = "notes.txt" });
    CHECK_RC(verify("extra.onnxzip", t, NULL), ONNXZIP_EMISMATCH);
    CHECK_MSG("'notes.txt' is not in the signed statement");
    make_pkg("extra.onnxzip", (pkg_opts){ .extra = ".git/config" }); /* ignored, as model_signing ignores it */
    CHECK_RC(verify("extra.onnxzip", t, NULL), 0);
    make_pkg("drop.onnxzip", (pkg_opts){ .drop_vocab = 1, .extra = "tok/vocab.TXT" }); /* renamed */
    CHECK_RC(verify("drop.onnxzip", t, NULL), ONNXZIP_EMISMATCH);
    CHECK_MSG("'tok/vocab.TXT' is not in the signed statement");
    make_pkg("drop.onnxzip", (pkg_opts){ .drop_vocab = 1 });
    CHECK_RC(verify("drop.onnxzip", t, NULL), ONNXZIP_EMISMATCH);
    CHECK_MSG("'tok/vocab.txt' of the signed statement is missing");
    onnxzip_trust_free(&t);
    /* a package holding model.sig and given a detached signature: the
     * detached one wins (the package's model.sig, ignored, a stale one) */
    make_pkg("both.onnxzip", (pkg_opts){ .sig = "{\"not\": \"a bundle\"}" });
    CHECK_RC(verify_with("both.onnxzip", "p256.pub", NULL, NULL), ONNXZIP_EBUNDLE);
    CHECK_RC(verify_with("both.onnxzip", "p256.pub", NULL, "pkg.sig"), 0);
}

static void test_certificates(void)
{
    make_pkg("pkg.onnxzip", (pkg_opts){ 0 });
    CHECK_RC(sign("pkg.onnxzip", "leaf.key", "leaf.pem", "ca1.pem", NULL), 0);
    CHECK(!sh("unzip -p pkg.onnxzip model.sig > got.sig && openssl x509 -in leaf.pem -pubkey -noout > leaf.pub"));
    oracle_signature("got.sig", "leaf.pub", "sha256");
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "ca1.pem", NULL), 0);
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "ca2.pem", NULL), ONNXZIP_ESIGNATURE);
    CHECK_MSG("the certificate chain is not trusted");
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, NULL), ONNXZIP_ESIGNATURE);
    CHECK_MSG("no certificate is trusted");
    CHECK(!sh("cat ca2.pem ca1.pem > roots.pem"));
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "roots.pem", NULL), 0);
    /* without the chain in the bundle (the leaf alone): the root is trusted directly */
    CHECK_RC(sign("pkg.onnxzip", "leaf.key", "leaf.pem", NULL, NULL), 0);
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "ca1.pem", NULL), 0);
    CHECK_RC(sign("pkg.onnxzip", "eku.key", "eku.pem", "ca1.pem", NULL), 0); /* codeSigning alone */
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "ca1.pem", NULL), 0);
    CHECK_RC(sign("pkg.onnxzip", "enc.key", "enc.pem", "ca1.pem", NULL), 0);
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "ca1.pem", NULL), ONNXZIP_ESIGNATURE);
    CHECK_MSG("may not sign");
    CHECK_RC(sign("pkg.onnxzip", "old.key", "old.pem", "ca1.pem", NULL), 0);
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "ca1.pem", NULL), ONNXZIP_ESIGNATURE);
    CHECK_MSG("expired");
    CHECK_RC(sign("pkg.onnxzip", "p256.key", "leaf.pem", "ca1.pem", NULL), ONNXZIP_EINVAL);
    CHECK_MSG("not the private key's");
}

static void test_single_model(void)
{
    make_single("one.onnxzip");
    CHECK_RC(sign("one.onnxzip", "p256.key", NULL, NULL, NULL), ONNXZIP_EINVAL);
    CHECK_MSG("single-model archive cannot hold its own signature");
    CHECK_RC(sign("one.onnxzip", "p256.key", NULL, NULL, "one.sig"), 0);
    CHECK_RC(verify_with("one.onnxzip", "p256.pub", NULL, NULL), ONNXZIP_EUNSIGNED);
    CHECK_RC(verify_with("one.onnxzip", "p256.pub", NULL, "one.sig"), 0);
    onnxzip_trust *t = trust_of("p256.pub", NULL, "one.sig");
    onnxzip_archive *a = NULL;
    onnxzip_signed *s = NULL;
    CHECK_RC(onnxzip_open(tu_path(dir, "one.onnxzip"), 0, &a), 0);
    CHECK_RC(onnxzip_signed_open(a, t, &s), 0);
    CHECK(onnxzip_signed_resource_count(s) == 1 && !strcmp(onnxzip_signed_resource_name(s, 0), "."));
    CHECK(!sh("echo '%s  one.onnxzip' | sha256sum -c", onnxzip_signed_resource_digest(s, 0)));
    CHECK_RC(onnxzip_signed_check(s, a, "."), 0);
    onnxzip_signed_free(&s);
    onnxzip_close(&a);
    onnxzip_trust_free(&t);
    /* one byte of the archive changed (a weight): the archive's digest differs */
    CHECK(!sh("cp one.onnxzip two.onnxzip && printf '\\001' | dd of=two.onnxzip bs=1 seek=200 conv=notrunc"));
    t = trust_of("p256.pub", NULL, "one.sig");
    CHECK_RC(verify("two.onnxzip", t, NULL), ONNXZIP_EMISMATCH);
    onnxzip_trust_free(&t);
}

static void test_keys_refused(void)
{
    onnxzip_trust *t = NULL;
    size_t n;
    CHECK_RC(onnxzip_trust_create(&t), 0);
    uint8_t *p = slurp("k1.pub", &n);
    CHECK_RC(onnxzip_trust_add_public_key(t, p, n), ONNXZIP_EBUNDLE);
    CHECK_MSG("secp256k1");
    free(p);
    p = slurp("ed.pub", &n);
    CHECK_RC(onnxzip_trust_add_public_key(t, p, n), ONNXZIP_EBUNDLE);
    CHECK_MSG("not an elliptic-curve key");
    free(p);
    CHECK_RC(onnxzip_trust_add_public_key(t, "garbage", 7), ONNXZIP_EBUNDLE);
    CHECK_MSG("no PEM public key");
    p = slurp("p256.pub", &n);
    p[40] = p[40] == 'A' ? 'B' : 'A'; /* the DER inside broken */
    p[41] = '*';
    CHECK_RC(onnxzip_trust_add_public_key(t, p, n), ONNXZIP_EBUNDLE);
    CHECK_MSG("malformed PEM public key");
    free(p);
    p = slurp("ca1.pem", &n);
    CHECK_RC(onnxzip_trust_add_certificates(t, p, n / 2), ONNXZIP_EBUNDLE); /* cut short */
    CHECK_RC(onnxzip_trust_add_certificates(t, "", 0), ONNXZIP_EBUNDLE);
    CHECK_MSG("no PEM certificate");
    free(p);
    CHECK(!onnxzip_signed_resource_name(NULL, 0) && onnxzip_signed_resource_count(NULL) == 0);
    onnxzip_trust_free(&t);
    onnxzip_trust_free(&t);
    CHECK(onnxzip_has_feature(ONNXZIP_FEATURE_SIGNING));
    /* signing with a key that cannot sign for OMS */
    make_pkg("pkg.onnxzip", (pkg_opts){ 0 });
    CHECK_RC(sign("pkg.onnxzip", "ed.key", NULL, NULL, NULL), ONNXZIP_EBUNDLE);
    CHECK_RC(sign("pkg.onnxzip", "missing.key", NULL, NULL, NULL), ONNXZIP_EIO);
}

/* A bundle whose certificate is not DER; a signature over another payload type. */
static void test_forged(void)
{
    make_pkg("pkg.onnxzip", (pkg_opts){ 0 });
    CHECK_RC(sign("pkg.onnxzip", "leaf.key", "leaf.pem", NULL, "pkg.sig"), 0);
    size_t n;
    char *b = (char *)slurp("pkg.sig", &n);
    CHECK(b && strstr(b, "\"rawBytes\":\""));
    if (!b || !strstr(b, "\"rawBytes\":\"")) return free(b);
    char *raw = strstr(b, "\"rawBytes\":\"") + 12;
    memcpy(raw, "AAAA", 4); /* not a certificate's DER any more */
    spit("bad.sig", b, n);
    free(b);
    CHECK_RC(verify_with("pkg.onnxzip", NULL, "ca1.pem", "bad.sig"), ONNXZIP_EBUNDLE);
    CHECK_MSG("malformed DER");
    CHECK_RC(sign("pkg.onnxzip", "p256.key", NULL, NULL, "pkg.sig"), 0);
    b = (char *)slurp("pkg.sig", &n);
    CHECK(b != NULL);
    if (!b) return;
    char *type = strstr(b, "application/vnd.in-toto+json");
    memcpy(type, "application/vnd.in-tota+json", 28);
    spit("bad.sig", b, n);
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, "bad.sig"), ONNXZIP_ESIGNATURE);
    CHECK_MSG("payload of type 'application/vnd.in-tota+json'");
    memcpy(type, "application/vnd.in-toto+json", 28);
    char *sig = strstr(b, "\"sig\":\"") + 7;
    sig[10] = sig[10] == 'A' ? 'B' : 'A'; /* the ECDSA signature damaged */
    spit("bad.sig", b, n);
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, "bad.sig"), ONNXZIP_ESIGNATURE);
    free(b);
}

/* A bundle of `statement` (JSON text) signed by p256.key through the
 * openssl command (the PAE written here, the signature and base64 by
 * openssl, the key hint sha256sum's of p256.pub), into file `out`. */
static void openssl_bundle(const char *statement, const char *out)
{
    size_t n = strlen(statement);
    write_pae(statement, n);
    spit("st.json", statement, n);
    CHECK(!sh("openssl dgst -sha256 -sign p256.key -out s.der pae.bin && openssl base64 -A -in s.der -out s.b64 && "
              "openssl base64 -A -in st.json -out st.b64 && sha256sum p256.pub | cut -c1-64 | tr -d '\\n' > hint"));
    size_t ls, lp, lh;
    char *sig = (char *)slurp("s.b64", &ls), *pay = (char *)slurp("st.b64", &lp), *hint = (char *)slurp("hint", &lh);
    size_t cap = ls + lp + lh + 512;
    char *b = malloc(cap);
    int len = snprintf(b, cap, "{\"mediaType\":\"application/vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":"
                       "{\"publicKey\":{\"hint\":\"%s\"},\"tlogEntries\":[]},\"dsseEnvelope\":{\"payload\":\"%s\","
                       "\"payloadType\":\"application/vnd.in-toto+json\",\"signatures\":[{\"sig\":\"%s\"}]}}",
                       hint, pay, sig);
    spit(out, b, (size_t)len);
    free(b), free(sig), free(pay), free(hint);
}

/* SHA-256 (libcrypto's, the oracle) of bytes [start, end) of a file. */
static void range_sha256(const uint8_t *p, uint64_t start, uint64_t end, char hex[65])
{
    uint8_t d[32];
    unsigned len = 32;
    EVP_Digest(p + start, (size_t)(end - start), d, &len, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++) sprintf(hex + 2 * i, "%02x", d[i]);
}

/* The statement of the folder pkg unpacks to (files read back here), by
 * shards of `shard` bytes (0: by files), with `extra` resource text. */
static char *statement_of(const char *pkg, uint64_t shard, const char *extra)
{
    char out[1024];
    snprintf(out, sizeof out, "%s", tu_path(dir, "unpacked"));
    tu_rmtree(out);
    CHECK_RC(onnxzip_unpack_dir(tu_path(dir, pkg), out, NULL), 0);
    CHECK(!sh("cd unpacked && find . -type f ! -name model.sig | cut -c3- | LC_ALL=C sort > ../list"));
    size_t ln;
    char *list = (char *)slurp("list", &ln), *res = calloc(1, 65536), *save = NULL;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    for (char *name = strtok_r(list, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
        char rel[1024], hex[65], item[1400];
        snprintf(rel, sizeof rel, "unpacked/%s", name);
        size_t n;
        uint8_t *p = slurp(rel, &n), raw[32];
        for (uint64_t start = 0; start < n || (!shard && start == 0); start += shard ? shard : n + 1) {
            uint64_t end = shard && n - start > shard ? start + shard : n;
            range_sha256(p, start, end, hex);
            for (int k = 0; k < 32; k++) sscanf(hex + 2 * k, "%2hhx", &raw[k]);
            EVP_DigestUpdate(c, raw, 32);
            if (shard) snprintf(item, sizeof item, "%s{\"name\":\"%s:%llu:%llu\",\"algorithm\":\"sha256\",\"digest\":"
                                "\"%s\"}", *res ? "," : "", name, (unsigned long long)start, (unsigned long long)end, hex);
            else snprintf(item, sizeof item, "%s{\"name\":\"%s\",\"algorithm\":\"sha256\",\"digest\":\"%s\"}",
                          *res ? "," : "", name, hex);
            strcat(res, item);
        }
        free(p);
    }
    uint8_t d[32];
    char dh[65];
    EVP_DigestFinal_ex(c, d, NULL);
    EVP_MD_CTX_free(c);
    for (int k = 0; k < 32; k++) sprintf(dh + 2 * k, "%02x", d[k]);
    char *st = malloc(70000);
    snprintf(st, 70000, "{\"_type\":\"https://in-toto.io/Statement/v1\",\"subject\":[{\"name\":\"pkg\",\"digest\":"
             "{\"sha256\":\"%s\"}}],\"predicateType\":\"https://model_signing/signature/v1.0\",\"predicate\":"
             "{\"serialization\":{\"method\":\"%s\",\"hash_type\":\"sha256\",\"shard_size\":%llu.0,"
             "\"allow_symlinks\":false,\"ignore_paths\":[\"model.sig\"]},\"resources\":[%s%s]}}", dh,
             shard ? "shards" : "files", (unsigned long long)shard, res, extra ? extra : "");
    free(list);
    free(res);
    tu_rmtree(out);
    return st;
}

/* Statements the library did not write, signed by openssl: model_signing's
 * shards (a weight changed: its shard named), and validly signed
 * statements that are malformed (a '..' name, another folder's subject). */
static void test_crafted(void)
{
    make_pkg("pkg.onnxzip", (pkg_opts){ 0 });
    char *st = statement_of("pkg.onnxzip", 0, NULL);
    openssl_bundle(st, "c.sig");
    free(st);
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, "c.sig"), 0);
    st = statement_of("pkg.onnxzip", 1000, NULL);
    openssl_bundle(st, "c.sig");
    free(st);
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, "c.sig"), 0);
    onnxzip_trust *t = trust_of("p256.pub", NULL, "c.sig");
    CHECK_RC(verify("pkg.onnxzip", t, "config.json"), 0);
    make_pkg("flip.onnxzip", (pkg_opts){ .flip = 1 });
    CHECK_RC(verify("flip.onnxzip", t, "config.json"), 0);
    CHECK_RC(verify("flip.onnxzip", t, NULL), ONNXZIP_EMISMATCH);
    CHECK_MSG("'m.onnx:"); /* the shard holding the changed byte */
    make_pkg("extra.onnxzip", (pkg_opts){ .extra = "notes.txt" });
    CHECK_RC(verify("extra.onnxzip", t, NULL), ONNXZIP_EMISMATCH);
    CHECK_MSG("'notes.txt"); /* as a shard, or as more shards than the statement has left */
    CHECK_MSG("is not in the signed statement");
    onnxzip_trust_free(&t);
    st = statement_of("pkg.onnxzip", 0, ",{\"name\":\"../up.txt\",\"algorithm\":\"sha256\",\"digest\":"
                                        "\"0000000000000000000000000000000000000000000000000000000000000000\"}");
    openssl_bundle(st, "c.sig");
    free(st);
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, "c.sig"), ONNXZIP_EBUNDLE);
    CHECK_MSG("'../up.txt' has a \"..\" component");
    st = statement_of("pkg.onnxzip", 0, NULL);
    char *sha = strstr(st, "\"sha256\":\"") + 10;
    *sha = *sha == '0' ? '1' : '0'; /* the subject of another folder */
    openssl_bundle(st, "c.sig");
    free(st);
    CHECK_RC(verify_with("pkg.onnxzip", "p256.pub", NULL, "c.sig"), ONNXZIP_EBUNDLE);
    CHECK_MSG("does not match the resources");
}

/* A host source (onnxzip_open_host) over h's bytes, which the test swaps
 * after the check: an origin answering a later read otherwise. */
static onnxzip_archive *open_host(tu_bytes *h, const char *name)
{
    onnxzip_host_source src = { .name = name, .size = h->n, .window = h->p, .window_len = h->n,
                                .read = tu_bytes_read, .ctx = h };
    onnxzip_archive *a = NULL;
    uint64_t need = 0;
    CHECK_RC(onnxzip_open_host(&src, &a, &need), 0);
    return a;
}

/* `pkg`'s bytes, and a copy whose w0 has one byte changed (found by its bytes, not by the library). */
static uint8_t *with_w0_changed(const char *pkg, size_t *n, uint8_t **changed)
{
    uint8_t *p = slurp(pkg, n);
    uint8_t *at = p ? memmem(p, *n, w0_bytes, sizeof w0_bytes) : NULL;
    CHECK(at != NULL);
    *changed = malloc(*n);
    memcpy(*changed, p, *n);
    if (at) (*changed)[at - p + 100] ^= 1;
    return p;
}

/* Spec 20.5: a read after a trusted check of a handle without a mapping is
 * a new transfer; it must hand out the bytes the check hashed (each entry
 * the check read whole is pinned to its SHA-256) or fail. The host below
 * checks no CRC-32 (no ONNXZIP_HOST_DEFER_HEADERS): only the pin can tell. */
static void test_pinned_reads(void)
{
    make_pkg("pin.onnxzip", (pkg_opts){ 0 });
    CHECK_RC(sign("pin.onnxzip", "p256.key", NULL, NULL, NULL), 0);
    size_t n;
    uint8_t *changed, *p = with_w0_changed("pin.onnxzip", &n, &changed);
    tu_bytes h = { p, n };
    onnxzip_trust *t = trust_of("p256.pub", NULL, NULL);
    onnxzip_archive *a = open_host(&h, "https://origin.example/pin.onnxzip");
    onnxzip_signed *s = NULL;
    uint8_t buf[sizeof w0_bytes];
    const onnxzip_tensor *w0 = a ? onnxzip_find_tensor(a, "w0") : NULL;
    const onnxzip_member *cfg = a ? onnxzip_find_member(a, "config.json") : NULL;
    CHECK(w0 && cfg);
    CHECK_RC(onnxzip_signed_open(a, t, &s), 0);
    CHECK_RC(onnxzip_signed_check(s, a, NULL), 0);
    CHECK_RC(onnxzip_tensor_read(a, w0, 0, sizeof buf, buf), 0); /* the same bytes again: equal to the pin */
    CHECK(!memcmp(buf, w0_bytes, sizeof buf));
    h.p = changed; /* the origin answers otherwise now */
    CHECK_RC(onnxzip_tensor_read(a, w0, 0, sizeof buf, buf), ONNXZIP_EMISMATCH);
    CHECK_MSG("https://origin.example/pin.onnxzip: entry 'w0'");
    CHECK_MSG("differ from the ones the signature check hashed");
    CHECK_RC(onnxzip_tensor_read(a, w0, 96, 8, buf), ONNXZIP_EMISMATCH); /* a part: the entry read whole */
    CHECK_RC(onnxzip_tensor_read(a, w0, 0, 8, buf), ONNXZIP_EMISMATCH);  /* also a part without the change */
    char text[9] = { 0 };
    CHECK_RC(onnxzip_member_read(a, cfg, 1, 8, text), 0); /* an unchanged entry: its part handed out */
    CHECK(!strcmp(text, "\"a\": 1}\n"));
    onnxzip_signed_free(&s);
    onnxzip_close(&a);
    /* a model fetched (onnxzip_fetch_tensors), checked from the fetched file
     * (onnxzip_signed_check_fetched): w0 is inline in m.onnx as unpack
     * writes it, so planning reads it through the source; the fetched
     * copy, another transfer, must be those bytes */
    h.p = p;
    a = open_host(&h, "https://origin.example/pin.onnxzip");
    const char *all[] = { "*" };
    CHECK_RC(onnxzip_signed_open(a, t, &s), 0);
    CHECK_RC(onnxzip_fetch_tensors(a, tu_path(dir, "m.fetched"), all, 1, NULL, NULL), 0);
    CHECK_RC(onnxzip_signed_check_fetched(s, a, "m.onnx", tu_path(dir, "m.fetched")), 0);
    size_t fn;
    uint8_t *fetched = slurp("m.fetched", &fn), *at = fetched ? memmem(fetched, fn, w0_bytes, sizeof w0_bytes) : NULL;
    CHECK(at != NULL);
    if (at) at[100] ^= 1; /* as if the fetch's transfer had been answered otherwise */
    spit("m.fetched", fetched, fn);
    CHECK_RC(onnxzip_signed_check_fetched(s, a, "m.onnx", tu_path(dir, "m.fetched")), ONNXZIP_EMISMATCH);
    CHECK_MSG("holds other bytes of entry 'w0'");
    free(fetched);
    onnxzip_signed_free(&s);
    onnxzip_close(&a);
    free(changed);
    free(p);
    /* a single-model archive: its one file "." streamed whole pins each entry */
    make_single("pin1.onnxzip");
    CHECK_RC(sign("pin1.onnxzip", "p256.key", NULL, NULL, "pin1.sig"), 0);
    p = with_w0_changed("pin1.onnxzip", &n, &changed);
    h = (tu_bytes){ p, n };
    onnxzip_trust_free(&t);
    t = trust_of("p256.pub", NULL, "pin1.sig");
    a = open_host(&h, "pin1");
    w0 = a ? onnxzip_find_tensor(a, "w0") : NULL;
    CHECK(w0 != NULL);
    CHECK_RC(onnxzip_signed_open(a, t, &s), 0);
    CHECK_RC(onnxzip_signed_check(s, a, "."), 0);
    h.p = changed;
    CHECK_RC(onnxzip_tensor_read(a, w0, 0, sizeof buf, buf), ONNXZIP_EMISMATCH);
    CHECK_MSG("pin1: entry 'w0'");
    onnxzip_signed_free(&s);
    onnxzip_close(&a);
    onnxzip_trust_free(&t);
    free(changed);
    free(p);
}

int main(void)
{
    dir = tu_tmpdir();
    for (size_t i = 0; i < sizeof w0_bytes; i++) w0_bytes[i] = (uint8_t)(i * 7);
    if (sh("openssl version && faketime -h && unzip -v && sha256sum --version")) {
        printf("sign_verify: SKIP: needs the openssl, faketime, unzip and sha256sum commands\n");
        tu_rmtree(dir);
        return 77;
    }
    CHECK(!make_keys());
    test_key_signing();
    test_detached_and_tamper();
    test_certificates();
    test_single_model();
    test_keys_refused();
    test_forged();
    test_crafted();
    test_pinned_reads();
    tu_rmtree(dir);
    return tu_finish("sign_verify");
}
