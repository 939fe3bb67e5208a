/* The trust layer's parsers on their own: base64, Sigstore bundles and
 * OMS statements, every malformed form the issue lists refused with its
 * own status and a message naming what is wrong. The subject digests the
 * statements need are computed here with libcrypto's EVP. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxzip/onnxzip.h"
#include "testutil.h"
#include "trust/base64.h"
#include "trust/bundle.h"
#include "trust/statement.h"

#define CHECK_MSG(needle) CHECK(strstr(onnxzip_last_error()->message, (needle)) != NULL)

static const char *hex_a = "0fbe867dedcdfc2dfb3fe31bb66724af8a7fd084a403408958fb7660058f23db";
static const char *hex_b = "ae24c742205358f6ff6dfd5facb6743fb69743dbba8373e73da58ff0cbd695db";

static void test_base64(void)
{
    uint8_t *p;
    size_t n;
    CHECK_RC(oz_b64_decode("aGVsbG8=", 8, "t", &p, &n), 0);
    CHECK(n == 5 && !memcmp(p, "hello", 5));
    free(p);
    CHECK_RC(oz_b64_decode("aGVsbG8", 7, "t", &p, &n), 0); /* unpadded */
    CHECK(n == 5 && !memcmp(p, "hello", 5));
    free(p);
    CHECK_RC(oz_b64_decode("-_8=", 4, "t", &p, &n), 0); /* URL-safe */
    CHECK(n == 2 && p[0] == 0xfb && p[1] == 0xff);
    free(p);
    CHECK_RC(oz_b64_decode("", 0, "t", &p, &n), 0);
    CHECK(n == 0);
    free(p);
    CHECK_RC(oz_b64_decode("aGVs bG8=", 9, "FIELD", &p, &n), ONNXZIP_EBUNDLE);
    CHECK_MSG("FIELD: malformed base64");
    CHECK_RC(oz_b64_decode("aGVsbG8==", 9, "t", &p, &n), ONNXZIP_EBUNDLE);
    CHECK_RC(oz_b64_decode("a=GV", 4, "t", &p, &n), ONNXZIP_EBUNDLE);
    CHECK_RC(oz_b64_decode("aGVsb", 5, "t", &p, &n), ONNXZIP_EBUNDLE); /* 4n+1 characters */
    CHECK_RC(oz_b64_decode("aGVsbG9=", 8, "t", &p, &n), ONNXZIP_EBUNDLE); /* leftover bits */
    CHECK_RC(oz_b64_decode("aGVsbG8*", 8, "t", &p, &n), ONNXZIP_EBUNDLE);
    const uint8_t bin[] = { 0, 0xff, 0x10, 0x80, 0x7f };
    for (size_t k = 0; k <= sizeof bin; k++) {
        char *s = oz_b64_encode(bin, k);
        CHECK(s && !oz_b64_decode(s, strlen(s), "t", &p, &n) && n == k && !memcmp(p, bin, k));
        free(p);
        free(s);
    }
    char *s = oz_b64_encode((const uint8_t *)"hello", 5);
    CHECK(s && !strcmp(s, "aGVsbG8="));
    free(s);
}

/* A bundle around `payload` (base64'd here) with `material` (JSON text of
 * verificationMaterial) and `sigs` (JSON text of the signatures array). */
static char *bundle(const char *media, const char *material, const char *payload, const char *sigs)
{
    char *b64 = oz_b64_encode((const uint8_t *)payload, strlen(payload));
    size_t n = strlen(b64) + strlen(material) + strlen(sigs) + 512;
    char *s = malloc(n);
    snprintf(s, n, "{\"mediaType\":\"%s\",\"verificationMaterial\":%s,\"dsseEnvelope\":{\"payload\":\"%s\","
             "\"payloadType\":\"application/vnd.in-toto+json\",\"signatures\":%s}}", media, material, b64, sigs);
    free(b64);
    return s;
}

static const char *key_vm = "{\"publicKey\":{\"hint\":\"abcd\"},\"tlogEntries\":[]}";
static const char *one_sig = "[{\"sig\":\"MEUCIQ==\",\"keyid\":\"\"}]";
static const char *v03 = "application/vnd.dev.sigstore.bundle.v0.3+json";

static int parse(const char *text)
{
    oz_bundle b;
    int rc = oz_bundle_parse(text, strlen(text), "SIG", &b);
    if (!rc) oz_bundle_free(&b);
    return rc;
}

static int parse_bundle(const char *media, const char *vm, const char *sigs)
{
    char *s = bundle(media, vm, "{}", sigs);
    int rc = parse(s);
    free(s);
    return rc;
}

static void test_bundle(void)
{
    oz_bundle b;
    char *s = bundle(v03, key_vm, "PAYLOAD", one_sig);
    CHECK_RC(oz_bundle_parse(s, strlen(s), "SIG", &b), 0);
    CHECK(b.material == OZ_MATERIAL_KEY && !strcmp(b.hint, "abcd"));
    CHECK(b.payload_len == 7 && !memcmp(b.payload, "PAYLOAD", 7));
    CHECK(b.sig_len == 4 && !strcmp(b.payload_type, OZ_INTOTO_PAYLOAD_TYPE));
    oz_bundle_free(&b);
    free(s);
    /* every version's media type; a chain; no hint (older model_signing) */
    CHECK_RC(parse_bundle("application/vnd.dev.sigstore.bundle+json;version=0.1", key_vm, one_sig), 0);
    CHECK_RC(parse_bundle("application/vnd.dev.sigstore.bundle+json;version=0.2", key_vm, one_sig), 0);
    CHECK_RC(parse_bundle(v03, "{\"publicKey\":{}}", one_sig), 0);
    CHECK_RC(parse_bundle(v03, "{\"x509CertificateChain\":{\"certificates\":[{\"rawBytes\":\"MAA=\"}]},"
                          "\"tlogEntries\":[]}", one_sig), 0);

    CHECK_RC(parse("{\"mediaType\": "), ONNXZIP_EBUNDLE);
    CHECK_MSG("SIG: malformed JSON at line 1");
    CHECK_RC(parse("[1]"), ONNXZIP_EBUNDLE);
    CHECK_MSG("not a JSON object");
    CHECK_RC(parse("{\"mediaType\":\"a\",\"mediaType\":\"b\"}"), ONNXZIP_EBUNDLE); /* read two ways by two readers */
    CHECK_MSG("duplicate");
    CHECK_RC(parse("{\"mediaType\":\"\xff\"}"), ONNXZIP_EBUNDLE);
    CHECK_RC(parse("{\"mediaType\":\"a\\u0000b\"}"), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_bundle("application/json", key_vm, one_sig), ONNXZIP_EBUNDLE);
    CHECK_MSG("mediaType 'application/json'");
    CHECK_RC(parse_bundle(v03, key_vm, "[]"), ONNXZIP_EBUNDLE);
    CHECK_MSG("0 signatures, not exactly one");
    CHECK_RC(parse_bundle(v03, key_vm, "[{\"sig\":\"MEUCIQ==\"},{\"sig\":\"MEUCIQ==\"}]"), ONNXZIP_EBUNDLE);
    CHECK_MSG("2 signatures");
    CHECK_RC(parse_bundle(v03, key_vm, "[{\"sig\":\"not base64!\"}]"), ONNXZIP_EBUNDLE);
    CHECK_MSG("dsseEnvelope.signatures[0].sig: malformed base64");
    CHECK_RC(parse_bundle(v03, key_vm, "[{\"sig\":\"\"}]"), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_bundle(v03, key_vm, "[{\"sig\":5}]"), ONNXZIP_EBUNDLE);
    CHECK_MSG("dsseEnvelope.signatures[0].sig is not a string");
    CHECK_RC(parse_bundle(v03, "{}", one_sig), ONNXZIP_EBUNDLE);
    CHECK_MSG("neither publicKey nor x509CertificateChain");
    CHECK_RC(parse_bundle(v03, "{\"x509CertificateChain\":{\"certificates\":[]}}", one_sig), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_bundle(v03, "{\"x509CertificateChain\":{\"certificates\":[{\"rawBytes\":\"%%\"}]}}", one_sig),
             ONNXZIP_EBUNDLE);
    CHECK_MSG("certificates[0].rawBytes: malformed base64");
    /* keyless: a Fulcio certificate, or transparency log entries */
    CHECK_RC(parse_bundle(v03, "{\"certificate\":{\"rawBytes\":\"MAA=\"},\"tlogEntries\":[{}]}", one_sig),
             ONNXZIP_EUNSUPPORTED);
    CHECK_MSG("keyless (Sigstore) signatures are not supported");
    CHECK_RC(parse_bundle("application/vnd.dev.sigstore.bundle+json;version=0.1",
                          "{\"x509CertificateChain\":{\"certificates\":[{\"rawBytes\":\"MAA=\"}]},"
                          "\"tlogEntries\":[{\"logIndex\":\"1\"}]}", one_sig), ONNXZIP_EUNSUPPORTED);
    const char *msg_sig = "{\"mediaType\":\"application/vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":"
                          "{\"publicKey\":{}},\"messageSignature\":{}}";
    CHECK_RC(parse(msg_sig), ONNXZIP_EBUNDLE);
    CHECK_MSG("messageSignature");
    /* payload: not base64 */
    const char *bad_payload = "{\"mediaType\":\"application/vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":"
                              "{\"publicKey\":{}},\"dsseEnvelope\":{\"payload\":\"e30=}\",\"payloadType\":\"x\","
                              "\"signatures\":[{\"sig\":\"MEUCIQ==\"}]}}";
    CHECK_RC(parse(bad_payload), ONNXZIP_EBUNDLE);
    CHECK_MSG("dsseEnvelope.payload: malformed base64");
}

static void test_limits(void)
{
    /* nested 65 deep: refused; 2000 deep: refused without a deep recursion */
    for (int depth = 65; depth <= 2000; depth += 1935) {
        char *s = malloc(2 * (size_t)depth + 1);
        memset(s, '[', (size_t)depth);
        memset(s + depth, ']', (size_t)depth);
        s[2 * depth] = 0;
        CHECK_RC(parse(s), ONNXZIP_EBUNDLE);
        CHECK(strstr(onnxzip_last_error()->message, "nested") || strstr(onnxzip_last_error()->message, "malformed"));
        free(s);
    }
    size_t big = ((size_t)16 << 20) + 1;
    char *s = malloc(big);
    memset(s, ' ', big);
    s[0] = '{';
    s[big - 1] = '}';
    oz_bundle b;
    CHECK_RC(oz_bundle_parse(s, big, "SIG", &b), ONNXZIP_EBUNDLE);
    CHECK_MSG("over the 16 MiB");
    free(s);
}

/* A statement of resources (name, digest hex) with its subject digest
 * computed here; `subject_ok` 0 spoils it. */
static char *statement(const char *type, const char *pred, const char *method, const char *hash,
                       const char *const *names, const char *const *hex, size_t n, int subject_ok)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    char res[8192] = "";
    for (size_t i = 0; i < n; i++) {
        uint8_t raw[32];
        for (int k = 0; k < 32 && strlen(hex[i]) == 64; k++) sscanf(hex[i] + 2 * k, "%2hhx", &raw[k]);
        EVP_DigestUpdate(c, raw, 32);
        char one[1024];
        snprintf(one, sizeof one, "%s{\"name\":\"%s\",\"algorithm\":\"sha256\",\"digest\":\"%s\"}", i ? "," : "",
                 names[i], hex[i]);
        strcat(res, one);
    }
    uint8_t d[32];
    EVP_DigestFinal_ex(c, d, NULL);
    EVP_MD_CTX_free(c);
    char dh[65];
    for (int k = 0; k < 32; k++) sprintf(dh + 2 * k, "%02x", d[k] ^ (subject_ok ? 0 : 1));
    char *s = malloc(16384);
    snprintf(s, 16384, "{\"_type\":\"%s\",\"subject\":[{\"name\":\"repo\",\"digest\":{\"sha256\":\"%s\"}}],"
             "\"predicateType\":\"%s\",\"predicate\":{\"serialization\":{\"method\":\"%s\",\"hash_type\":\"%s\","
             "\"allow_symlinks\":false,\"ignore_paths\":[\"model.sig\",\".git\",\"cache/\",\".\",\"\"]},\"resources\":[%s]}}",
             type, dh, pred, method, hash, res);
    return s;
}

static const char *T = OZ_STATEMENT_TYPE, *P = OZ_PREDICATE_TYPE;

static int parse_st(const char *type, const char *pred, const char *method, const char *hash,
                    const char *const *names, const char *const *hex, size_t n, int subject_ok)
{
    char *s = statement(type, pred, method, hash, names, hex, n, subject_ok);
    oz_statement st;
    int rc = oz_statement_parse((const uint8_t *)s, strlen(s), "SIG", &st);
    if (!rc) oz_statement_free(&st);
    free(s);
    return rc;
}

static void test_statement(void)
{
    const char *names[] = { "a/config.json", "model.onnx" }, *hex[] = { hex_a, hex_b };
    char *s = statement(T, P, "files", "sha256", names, hex, 2, 1);
    oz_statement st;
    CHECK_RC(oz_statement_parse((const uint8_t *)s, strlen(s), "SIG", &st), 0);
    CHECK(st.n == 2 && !strcmp(st.res[1].name, "model.onnx") && !strcmp(st.res[0].hex, hex_a));
    CHECK(st.res[0].digest[0] == 0x0f && st.res[0].digest[31] == 0xdb);
    CHECK(oz_statement_find(&st, "model.onnx") == &st.res[1] && !oz_statement_find(&st, "model"));
    CHECK(oz_statement_ignored(&st, "model.sig") && oz_statement_ignored(&st, ".git/config"));
    CHECK(!oz_statement_ignored(&st, "model.sig2") && !oz_statement_ignored(&st, ".gitignore"));
    CHECK(oz_statement_ignored(&st, "cache/x") && oz_statement_ignored(&st, "cache"));
    CHECK(!oz_statement_ignored(&st, "a/model.sig") && !oz_statement_ignored(&st, "config.json")); /* "." and "" ignore nothing */
    CHECK(!strcmp(st.subject, "repo"));
    oz_statement_free(&st);
    free(s);
    const char *upper[] = { "0FBE867DEDCDFC2DFB3FE31BB66724AF8A7FD084A403408958FB7660058F23DB" };
    CHECK_RC(parse_st(T, P, "files", "sha256", names, upper, 1, 1), 0);
    const char *dot[] = { "." };
    CHECK_RC(parse_st(T, P, "files", "sha256", dot, hex, 1, 1), 0); /* a single file's resource */
    CHECK_RC(parse_st(T, P, "files", "sha256", names, hex, 0, 1), 0); /* an empty folder */

    CHECK_RC(parse_st("https://in-toto.io/Statement/v0.1", P, "files", "sha256", names, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("SIG: statement: _type");
    CHECK_RC(parse_st(T, "https://slsa.dev/provenance/v1", "files", "sha256", names, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("predicateType 'https://slsa.dev/provenance/v1'");
    /* shards: names PATH:START:END within shard_size (a number: protobuf JSON writes 100000.0) */
    CHECK_RC(parse_st(T, P, "shards", "sha256", names, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("serialization.shard_size is not a positive integer");
    const char *shards[] = { "a/w.bin:0:100", "a/w.bin:100:150" }, *too_big[] = { "a/w.bin:0:101", "b:0:1" };
    const char *no_range[] = { "a/w.bin:5:5", "b:0:1" }, *odd_num[] = { "a/w.bin:00:1", "b:0:1" };
    const char *dotdot_shard[] = { "../w.bin:0:1", "b:0:1" }, *four[] = { "a:b:0:1", "b:0:1" };
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100.0,\"x\":\"", "sha256", shards, hex, 2, 1), 0);
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100,\"x\":\"", "sha256", shards, hex, 2, 1), 0);
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100.5,\"x\":\"", "sha256", shards, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":-1,\"x\":\"", "sha256", shards, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100,\"x\":\"", "sha256", too_big, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("'a/w.bin:0:101' is not a shard's PATH:START:END within shard_size");
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100,\"x\":\"", "sha256", no_range, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100,\"x\":\"", "sha256", odd_num, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100,\"x\":\"", "sha256", four, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100,\"x\":\"", "sha256", dotdot_shard, hex, 2, 1),
             ONNXZIP_EBUNDLE);
    CHECK_MSG("'../w.bin:0:1' has a \"..\" component");
    CHECK_RC(parse_st(T, P, "shards\",\"shard_size\":100,\"x\":\"", "sha256", names, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_RC(parse_st(T, P, "digest", "sha256", names, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("serialization.method 'digest'");
    CHECK_RC(parse_st(T, P, "files", "blake2", names, hex, 2, 1), ONNXZIP_EUNSUPPORTED);
    CHECK_MSG("hash_type 'blake2'");
    CHECK_RC(parse_st(T, P, "files", "sha256", names, hex, 2, 0), ONNXZIP_EBUNDLE);
    CHECK_MSG("subject[0].digest.sha256");
    const char *dotdot[] = { "a/../../etc/passwd", "b" };
    CHECK_RC(parse_st(T, P, "files", "sha256", dotdot, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("resource name 'a/../../etc/passwd' has a \"..\" component");
    const char *abs[] = { "/etc/passwd", "b" };
    CHECK_RC(parse_st(T, P, "files", "sha256", abs, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("'/etc/passwd' is absolute");
    const char *dup[] = { "x.bin", "x.bin" };
    CHECK_RC(parse_st(T, P, "files", "sha256", dup, hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("resource 'x.bin' is listed twice");
    const char *odd[][2] = { { "a//b", "c" }, { "a/./b", "c" }, { "", "c" }, { "a\\\\b", "c" }, { ".", "c" },
                             { "a/", "c" } };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
        CHECK_RC(parse_st(T, P, "files", "sha256", odd[i], hex, 2, 1), ONNXZIP_EBUNDLE);
    const char *short_hex[] = { "abcd", hex_b };
    CHECK_RC(parse_st(T, P, "files", "sha256", names, short_hex, 2, 1), ONNXZIP_EBUNDLE);
    CHECK_MSG("not 64 hex digits");

    const char *raw[] = {
        "[]", "{\"_type\":1}", "not json",
        ("{\"_type\":\"https://in-toto.io/Statement/v1\",\"predicateType\":\"https://model_signing/signature/v1.0\","
         "\"subject\":[],\"predicate\":{\"serialization\":{\"method\":\"files\",\"hash_type\":\"sha256\"},"
         "\"resources\":[]}}"),
        ("{\"_type\":\"https://in-toto.io/Statement/v1\",\"predicateType\":\"https://model_signing/signature/v1.0\","
         "\"subject\":[{}],\"predicate\":{\"serialization\":{\"method\":\"files\",\"hash_type\":\"sha256\"},"
         "\"resources\":[{\"name\":\"a\",\"algorithm\":\"sha256\"}]}}"),
        ("{\"_type\":\"https://in-toto.io/Statement/v1\",\"predicateType\":\"https://model_signing/signature/v1.0\","
         "\"subject\":[{}],\"predicate\":{\"serialization\":{\"method\":\"files\"}}}"),
    };
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
        CHECK_RC(oz_statement_parse((const uint8_t *)raw[i], strlen(raw[i]), "SIG", &st), ONNXZIP_EBUNDLE);
        CHECK_MSG("SIG");
    }
    const char *algo = "{\"_type\":\"https://in-toto.io/Statement/v1\",\"predicateType\":"
                       "\"https://model_signing/signature/v1.0\",\"subject\":[{}],\"predicate\":{\"serialization\":"
                       "{\"method\":\"files\",\"hash_type\":\"sha256\"},\"resources\":[{\"name\":\"a\",\"algorithm\":"
                       "\"sha512\",\"digest\":\"00\"}]}}";
    CHECK_RC(oz_statement_parse((const uint8_t *)algo, strlen(algo), "SIG", &st), ONNXZIP_EUNSUPPORTED);
    CHECK_MSG("algorithm 'sha512'");
}

static void test_pae(void)
{
    size_t n;
    uint8_t *p = oz_dsse_pae("application/vnd.in-toto+json", (const uint8_t *)"{}", 2, &n);
    const char *want = "DSSEv1 28 application/vnd.in-toto+json 2 {}"; /* DSSE protocol.md's form */
    CHECK(p && n == strlen(want) && !memcmp(p, want, n));
    free(p);
}

int main(void)
{
    test_base64();
    test_bundle();
    test_limits();
    test_statement();
    test_pae();
    return tu_finish("bundle_parse");
}
