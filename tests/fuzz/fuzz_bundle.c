/* fuzz_bundle: the trust layer's parsers on arbitrary bytes, read both as a
 * Sigstore bundle (oz_bundle_parse(), then its payload as a statement) and
 * as a statement alone (oz_statement_parse()). Never a crash, leak or
 * status outside the documented ones; whatever is accepted keeps the
 * parsers' promises, checked here independently: a bundle has exactly one
 * non-empty signature and key material (a key, or at least one
 * certificate); a statement's resource paths are relative, without empty,
 * "." or ".." components or backslashes, each name findable, the digests
 * 64 lowercase hex digits, "." only alone (but for shards of one file), a
 * shard's range non-empty and within shard_size. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxzip/onnxzip.h"
#include "trust/bundle.h"
#include "trust/statement.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *name)
{
    fprintf(stderr, "fuzz_bundle: %s: '%s'\n", what, name ? name : "");
    abort();
}

static void check_status(int rc)
{
    if (rc != ONNXZIP_EBUNDLE && rc != ONNXZIP_EUNSUPPORTED && rc != ONNXZIP_ENOMEM)
        fail("unexpected status", onnxzip_status_name(rc));
}

static void check_name(const char *name, size_t n_resources, int shards)
{
    if (!strcmp(name, ".")) {
        if (n_resources != 1 && !shards) fail("\".\" beside other resources", name);
        return;
    }
    if (!*name || name[0] == '/' || strchr(name, '\\') || strstr(name, "//")) fail("bad name accepted", name);
    size_t len = strlen(name);
    if (name[len - 1] == '/') fail("name ends with '/'", name);
    for (const char *c = name; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
        size_t k = strcspn(c, "/");
        if ((k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.')) fail("'.' or '..' accepted", name);
    }
}

static void check_statement(const oz_statement *st)
{
    for (size_t i = 0; i < st->n; i++) {
        const oz_resource *r = &st->res[i];
        check_name(r->path, st->n, st->shard_size != 0);
        if (st->shard_size && (r->start >= r->end || r->end - r->start > st->shard_size)) fail("bad shard", r->name);
        if (!st->shard_size && strcmp(r->name, r->path)) fail("path differs from the name", r->name);
        if (oz_statement_find(st, r->name) != r) fail("resource not found by its name", r->name);
        if (strlen(r->hex) != 64 || strspn(r->hex, "0123456789abcdef") != 64) fail("digest not hex", r->hex);
        for (size_t k = 0; k < 32; k++) {
            unsigned v;
            if (sscanf(r->hex + 2 * k, "%2x", &v) != 1 || v != r->digest[k]) fail("hex and bytes differ", r->name);
        }
    }
    if (!st->subject) fail("no subject", NULL);
    for (size_t i = 0; i < st->n_ignore; i++) (void)oz_statement_ignored(st, st->ignore[i]);
}

static void statement(const uint8_t *p, size_t n)
{
    oz_statement st;
    int rc = oz_statement_parse(p, n, "fuzz", &st);
    if (rc) return check_status(rc);
    check_statement(&st);
    oz_statement_free(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oz_bundle b;
    int rc = oz_bundle_parse(data, size, "fuzz", &b);
    if (rc) {
        check_status(rc);
    } else {
        if (!b.sig || !b.sig_len || !b.payload_type || !b.payload) fail("bundle without its parts", NULL);
        if (b.material == OZ_MATERIAL_CHAIN ? !b.n_certs : b.material != OZ_MATERIAL_KEY)
            fail("bundle without key material", NULL);
        if (b.payload[b.payload_len] != 0) fail("payload not NUL-terminated", NULL);
        statement(b.payload, b.payload_len);
        oz_bundle_free(&b);
    }
    statement(data, size);
    return 0;
}
