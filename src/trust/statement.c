/* In-toto statements of OMS signatures (statement.h), checked as
 * model_signing's verifier checks them, and stricter about names: a
 * package path is never absolute nor climbs out. */
#include <openssl/evp.h>
#include <stdio.h>

#include "common/internal.h"
#include "trust/json.h"
#include "trust/statement.h"

static int hex_digest(const char *s, size_t n, uint8_t out[32], char hex[65])
{
    if (n != 64) return -1;
    for (size_t i = 0; i < 64; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (v < 0) return -1;
        out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
        hex[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
    }
    hex[64] = 0;
    return 0;
}

/* Why `name` cannot name a file of a package's folder, or NULL. */
static const char *bad_name(const char *name, size_t n, int single)
{
    if (!n) return "is empty";
    if (!strcmp(name, ".")) return single ? NULL : "is \".\" (a single file's name) beside other resources";
    if (name[0] == '/') return "is absolute";
    if (strchr(name, '\\')) return "has a backslash";
    for (const char *c = name;;) {
        const char *e = strchr(c, '/');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (!len) return "has an empty component";
        if (len == 2 && !memcmp(c, "..", 2)) return "has a \"..\" component";
        if (len == 1 && *c == '.') return "has a \".\" component";
        if (!e) return NULL;
        c = e + 1;
    }
}

/* ONNXZIP_EBUNDLE "WHAT: statement: FIELD ['VALUE'] WHY". */
static int bad(const char *what, const char *field, const char *value, const char *why)
{
    char shown[OZ_PRINTABLE_CAP];
    if (!value) return oz_err(ONNXZIP_EBUNDLE, -1, "%s: statement: %s %s", what, field, why);
    return oz_err(ONNXZIP_EBUNDLE, -1, "%s: statement: %s '%s' %s", what, field,
                  oz_printable(value, strlen(value), shown, sizeof shown), why);
}

static int header(const json_t *root, const char *what)
{
    const char *type, *pred;
    int rc = oz_json_string(root, "_type", what, "statement _type", 1, &type, NULL);
    if (!rc && strcmp(type, OZ_STATEMENT_TYPE))
        return bad(what, "_type", type, "is not " OZ_STATEMENT_TYPE);
    if (!rc) rc = oz_json_string(root, "predicateType", what, "statement predicateType", 1, &pred, NULL);
    if (!rc && strcmp(pred, OZ_PREDICATE_TYPE))
        return bad(what, "predicateType", pred, "is not " OZ_PREDICATE_TYPE " (OpenSSF Model Signing 1.0)");
    return rc;
}

static int serialization(const json_t *pred, const char *what, oz_statement *st)
{
    json_t *ser, *ign;
    const char *method, *hash;
    int rc = oz_json_object(pred, "serialization", what, "predicate.serialization", 1, &ser);
    if (!rc) rc = oz_json_string(ser, "method", what, "predicate.serialization.method", 1, &method, NULL);
    if (rc) return rc;
    if (!strcmp(method, "shards")) {
        /* a number, integral: model_signing's statement is protobuf JSON,
         * whose numbers are doubles ("shard_size": 1000000000.0) */
        json_t *size = json_object_get(ser, "shard_size");
        double v = json_is_number(size) ? json_number_value(size) : 0;
        if (!(v >= 1 && v <= 9007199254740992.0 && v == (double)(uint64_t)v))
            return bad(what, "serialization.shard_size", NULL, "is not a positive integer (method 'shards')");
        st->shard_size = (uint64_t)v;
    } else if (strcmp(method, "files")) {
        return bad(what, "serialization.method", method, "is not 'files' or 'shards'");
    }
    if ((rc = oz_json_string(ser, "hash_type", what, "predicate.serialization.hash_type", 1, &hash, NULL))) return rc;
    if (strcmp(hash, "sha256")) {
        char shown[OZ_PRINTABLE_CAP];
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: statement: hash_type '%s' is not supported (only sha256)", what,
                      oz_printable(hash, strlen(hash), shown, sizeof shown));
    }
    if ((rc = oz_json_array(ser, "ignore_paths", what, "predicate.serialization.ignore_paths", 0, &ign)) || !ign)
        return rc;
    size_t n = json_array_size(ign);
    if (n && !(st->ignore = calloc(n, sizeof *st->ignore))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(ign, i);
        if (!json_is_string(s)) return bad(what, "serialization.ignore_paths", NULL, "has an item that is not a string");
        if (!(st->ignore[i] = oz_strndup(json_string_value(s), json_string_length(s))))
            return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        st->n_ignore = i + 1;
    }
    return 0;
}

/* A decimal offset of a shard's name: digits only, no sign, no overflow. */
static int offset(const char *s, size_t n, uint64_t *v)
{
    *v = 0;
    if (!n || n > 19 || (n > 1 && s[0] == '0')) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        *v = *v * 10 + (uint64_t)(s[i] - '0');
    }
    return 0;
}

/* The file a resource names, and for a shard ("PATH:START:END", as
 * model_signing splits it: exactly three parts) its byte range. */
static int resource_path(oz_resource *res, size_t n, const oz_statement *st, size_t count, const char *what)
{
    size_t plen = n;
    if (st->shard_size) {
        char *c1 = strchr(res->name, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || strchr(c2 + 1, ':') || offset(c1 + 1, (size_t)(c2 - c1 - 1), &res->start) ||
            offset(c2 + 1, strlen(c2 + 1), &res->end) || res->start >= res->end ||
            res->end - res->start > st->shard_size)
            return bad(what, "resource name", res->name, "is not a shard's PATH:START:END within shard_size");
        plen = (size_t)(c1 - res->name);
    }
    if (!(res->path = oz_strndup(res->name, plen))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    const char *why = bad_name(res->path, plen, count == 1 || st->shard_size);
    return why ? bad(what, "resource name", res->name, why) : 0;
}

static int resource(const json_t *r, const char *what, size_t i, size_t count, oz_statement *st)
{
    char path[64];
    const char *name, *alg, *digest;
    size_t n, dn;
    snprintf(path, sizeof path, "predicate.resources[%zu]", i);
    if (!json_is_object(r)) return bad(what, path, NULL, "is not an object");
    int rc = oz_json_string(r, "name", what, "a resource's name", 1, &name, &n);
    if (!rc) rc = oz_json_string(r, "algorithm", what, "a resource's algorithm", 1, &alg, NULL);
    if (!rc) rc = oz_json_string(r, "digest", what, "a resource's digest", 1, &digest, &dn);
    if (rc) return rc;
    oz_resource *res = &st->res[i];
    if (!(res->name = oz_strndup(name, n))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    st->n = i + 1;
    if ((rc = resource_path(res, n, st, count, what))) return rc;
    char sharded[48]; /* model_signing names a shard's digest "sha256-sharded-SIZE" */
    snprintf(sharded, sizeof sharded, "sha256-sharded-%llu", (unsigned long long)st->shard_size);
    if (strcmp(alg, "sha256") && !(st->shard_size && !strcmp(alg, sharded))) {
        char shown[OZ_PRINTABLE_CAP];
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: statement: resource '%s': algorithm '%s' is not supported (only "
                      "sha256)", what, name, oz_printable(alg, strlen(alg), shown, sizeof shown));
    }
    if (hex_digest(digest, dn, res->digest, res->hex))
        return bad(what, "resource", name, "has a digest that is not 64 hex digits");
    uint32_t old;
    rc = oz_strmap_put(&st->by_name, res->name, n, (uint32_t)i, &old);
    if (rc == 1) return bad(what, "resource", name, "is listed twice");
    return rc;
}

/* The subject: exactly one, its sha256 the SHA-256 of the resources' raw
 * digests in the statement's order (model_signing's check). */
static int subject(const json_t *root, const char *what, oz_statement *st)
{
    json_t *subs, *dig;
    const char *name, *sha;
    size_t n, sn;
    int rc = oz_json_array(root, "subject", what, "statement subject", 1, &subs);
    if (rc) return rc;
    if (json_array_size(subs) != 1)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: statement: %zu subjects, not exactly one", what, json_array_size(subs));
    json_t *s = json_array_get(subs, 0);
    if (!json_is_object(s)) return bad(what, "subject[0]", NULL, "is not an object");
    if ((rc = oz_json_string(s, "name", what, "statement subject[0].name", 1, &name, &n)) ||
        (rc = oz_json_object(s, "digest", what, "statement subject[0].digest", 1, &dig)) ||
        (rc = oz_json_string(dig, "sha256", what, "statement subject[0].digest.sha256", 1, &sha, &sn)))
        return rc;
    uint8_t want[32], got[32];
    char hex[65];
    if (hex_digest(sha, sn, want, hex)) return bad(what, "subject[0].digest.sha256", NULL, "is not 64 hex digits");
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    for (size_t i = 0; ok && i < st->n; i++) ok = EVP_DigestUpdate(c, st->res[i].digest, 32);
    ok = ok && EVP_DigestFinal_ex(c, got, NULL);
    EVP_MD_CTX_free(c);
    if (!ok) return oz_err(ONNXZIP_ENOMEM, -1, "SHA-256 failed (libcrypto)");
    if (memcmp(want, got, 32))
        return bad(what, "subject[0].digest.sha256", NULL,
                   "does not match the resources (the SHA-256 of their digests): a statement for other files");
    return (st->subject = oz_strndup(name, n)) ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
}

static int parse(const json_t *root, const char *what, oz_statement *st)
{
    json_t *pred, *res;
    int rc = json_is_object(root) ? header(root, what) : bad(what, "the payload", NULL, "is not a JSON object");
    if (!rc) rc = oz_json_object(root, "predicate", what, "statement predicate", 1, &pred);
    if (!rc) rc = serialization(pred, what, st);
    if (!rc) rc = oz_json_array(pred, "resources", what, "statement predicate.resources", 1, &res);
    if (rc) return rc;
    size_t n = json_array_size(res);
    if (n > UINT32_MAX / 2) return oz_err(ONNXZIP_EBUNDLE, -1, "%s: statement: %zu resources", what, n);
    if (n && !(st->res = calloc(n, sizeof *st->res))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if ((rc = oz_strmap_reserve(&st->by_name, n))) return rc;
    for (size_t i = 0; i < n && !rc; i++) rc = resource(json_array_get(res, i), what, i, n, st);
    return rc ? rc : subject(root, what, st);
}

int oz_statement_parse(const uint8_t *p, size_t n, const char *what, oz_statement *st)
{
    memset(st, 0, sizeof *st);
    oz_strmap_init(&st->by_name, 0);
    char where[256];
    snprintf(where, sizeof where, "%s: the signed statement", what);
    json_t *root;
    int rc = oz_json_load(p, n, where, &root);
    if (rc) return rc;
    rc = parse(root, what, st);
    json_decref(root);
    if (rc) oz_statement_free(st);
    return rc;
}

const oz_resource *oz_statement_find(const oz_statement *st, const char *path)
{
    uint32_t i;
    return oz_strmap_get(&st->by_name, path, strlen(path), &i) ? NULL : &st->res[i];
}

int oz_path_ignored(const char *path, const char *const *ignore, size_t n_ignore)
{
    for (size_t i = 0; i < n_ignore; i++) {
        size_t n = strlen(ignore[i]);
        while (n && ignore[i][n - 1] == '/') n--; /* "dir/" is "dir" */
        if (n && !strncmp(path, ignore[i], n) && (path[n] == 0 || path[n] == '/')) return 1;
    }
    return 0;
}

int oz_statement_ignored(const oz_statement *st, const char *path)
{
    return oz_path_ignored(path, (const char *const *)st->ignore, st->n_ignore);
}

void oz_statement_free(oz_statement *st)
{
    for (size_t i = 0; i < st->n; i++) {
        free(st->res[i].name);
        free(st->res[i].path);
    }
    for (size_t i = 0; i < st->n_ignore; i++) free(st->ignore[i]);
    free(st->res);
    free(st->ignore);
    free(st->subject);
    oz_strmap_free(&st->by_name);
    memset(st, 0, sizeof *st);
}
