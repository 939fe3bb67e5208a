/*
 * cli_fetched.c — "fetch --model M" with a trust: M's files are checked
 * against the signed statement from the single-model archive the fetch
 * wrote, so that M's bytes cross the network once (spec 19.5's budget).
 * The package's plan of M's files (onnxzip_file_plan_create) says which
 * bytes each file is made of; its archive ranges lie in entries that the
 * fetched archive holds too, under the same names without M's directory,
 * byte for byte, each already checked against its CRC-32 and XXH3.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

#ifdef CLI_HAVE_SIGNING
#include <openssl/evp.h>

/* The fetched archive's bytes of the package's entry `name`: found through
 * the tensors stored in entries (a fetched model has no other entries that
 * a data file can hold). NULL when it has none. */
static const uint8_t *fetched_entry(const onnxzip_archive *fa, const char *name, size_t dirlen, uint64_t *size)
{
    if (strlen(name) < dirlen) return NULL;
    name += dirlen;
    for (size_t i = 0, n = onnxzip_tensor_count(fa); i < n; i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(fa, i);
        if (t->storage == ONNXZIP_STORAGE_ENTRY && t->entry && strcmp(t->entry, name) == 0) {
            *size = t->nbytes;
            return t->data;
        }
    }
    return NULL;
}

static const uint8_t zeros[1 << 16];

/* SHA-256 of one planned file, its archive ranges from `fa`. */
static int hash_file(const onnxzip_archive *pkg, const onnxzip_archive *fa, size_t dirlen,
                     const onnxzip_planned_file *f, uint8_t md[32])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int rc = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) ? 0 : cli_fail(ONNXZIP_ENOMEM, "SHA-256: out of memory");
    for (size_t i = 0; i < f->n_segments && !rc; i++) {
        const onnxzip_segment *g = &f->segments[i];
        const void *p = g->bytes;
        uint64_t n = g->length, size = 0;
        if (g->kind == ONNXZIP_SEGMENT_ARCHIVE) {
            const onnxzip_entry *e = g->entry == SIZE_MAX ? NULL : onnxzip_entry_at(pkg, g->entry);
            const uint8_t *d = e ? fetched_entry(fa, e->name, dirlen, &size) : NULL;
            if (!d || g->entry_offset > size || n > size - g->entry_offset)
                rc = cli_fail(ONNXZIP_ENOTFOUND, "%s: the fetched model lacks the bytes of entry '%s'", f->path,
                              e ? e->name : "(the archive)");
            p = d ? d + g->entry_offset : NULL;
        }
        for (uint64_t k; !rc && n; n -= k) { /* zeros: a block at a time */
            k = g->kind == ONNXZIP_SEGMENT_ZEROS && n > sizeof zeros ? sizeof zeros : n;
            if (!EVP_DigestUpdate(c, g->kind == ONNXZIP_SEGMENT_ZEROS ? zeros : p, (size_t)k))
                rc = cli_fail(ONNXZIP_EIO, "%s: libcrypto's SHA-256 failed", f->path);
            if (g->kind != ONNXZIP_SEGMENT_ZEROS) p = (const uint8_t *)p + k;
        }
    }
    unsigned len = 0;
    if (!rc && (!EVP_DigestFinal_ex(c, md, &len) || len != 32))
        rc = cli_fail(ONNXZIP_EIO, "%s: libcrypto's SHA-256 failed", f->path);
    EVP_MD_CTX_free(c);
    return rc;
}

/* The statement's digest of `path` (lowercase hex), or NULL. */
static const char *signed_digest(const onnxzip_signed *s, const char *path)
{
    for (size_t i = 0, n = onnxzip_signed_resource_count(s); i < n; i++)
        if (strcmp(onnxzip_signed_resource_name(s, i), path) == 0) return onnxzip_signed_resource_digest(s, i);
    return NULL;
}

static int check_files(const onnxzip_archive *pkg, const onnxzip_file_plan *plan, const onnxzip_signed *s,
                       const onnxzip_archive *fa, size_t dirlen, const char *url)
{
    for (size_t i = 0, n = onnxzip_file_plan_count(plan); i < n; i++) {
        const onnxzip_planned_file *f = onnxzip_file_plan_at(plan, i);
        uint8_t md[32];
        char hex[65];
        int rc = hash_file(pkg, fa, dirlen, f, md);
        if (rc) return rc;
        for (int k = 0; k < 32; k++) snprintf(hex + 2 * k, 3, "%02x", md[k]);
        const char *want = signed_digest(s, f->path);
        if (!want)
            return cli_fail(ONNXZIP_EMISMATCH, "%s: file '%s' is not in the signed statement", url, f->path);
        if (strcmp(want, hex) != 0)
            return cli_fail(ONNXZIP_EMISMATCH, "%s: file '%s' does not match its signed digest (SHA-256 %s, "
                            "signed %s)", url, f->path, hex, want);
    }
    return 0;
}

int cli_check_fetched(onnxzip_archive *pkg, const onnxzip_signed *s, const char *model, const char *fetched)
{
    onnxzip_file_plan *plan = NULL;
    onnxzip_archive *fa = NULL;
    int rc = onnxzip_file_plan_create(pkg, model, &plan);
    if (rc) return cli_lib_error(rc);
    if ((rc = onnxzip_open(fetched, 0, &fa)) != 0) {
        onnxzip_file_plan_free(&plan);
        return cli_lib_error(rc);
    }
    const char *slash = strrchr(model, '/');
    rc = check_files(pkg, plan, s, fa, slash ? (size_t)(slash - model) + 1 : 0, onnxzip_archive_path(pkg));
    onnxzip_close(&fa);
    onnxzip_file_plan_free(&plan);
    return rc;
}
#else
int cli_check_fetched(onnxzip_archive *pkg, const onnxzip_signed *s, const char *model, const char *fetched)
{
    (void)pkg, (void)s, (void)fetched;
    return cli_fail(ONNXZIP_EUNSUPPORTED, "%s: this onnxzip was built without signing (-Dsigning)", model);
}
#endif
