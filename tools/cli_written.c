/*
 * cli_written.c — downloads with a trust hash the bytes they wrote (spec
 * 20.5: bytes read again after a check are not the bytes checked), each
 * byte transferred once: "extract --file F" hashes the file it wrote;
 * "fetch --model M" checks M's files from the single-model archive it
 * wrote: the package's plan of M's files (onnxzip_file_plan_create) says
 * which bytes each file is made of, and its archive ranges lie in entries
 * the fetched archive holds too, under the same names without M's
 * directory, byte for byte.
 */
#include "cli.h"
#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

char *cli_unverified_path(const char *out, const char *input)
{
    /* The rename at the end would replace whatever OUT is: refused here as
     * the library refuses such outputs (spec 12.3) when it writes them. */
    cli_file_info o, i;
    if (!cli_stat_path(out, &o)) {
        if (o.kind != CLI_KIND_REG) {
            cli_fail(ONNXZIP_ENOTREG, "%s: not a regular file (%s); nothing written", out,
                     o.kind == CLI_KIND_DIR ? "a directory" : o.kind == CLI_KIND_FIFO ? "a FIFO" : "a device or socket");
            return NULL;
        }
        if (input && !cli_stat_path(input, &i) && i.dev == o.dev && i.ino == o.ino) {
            cli_fail(ONNXZIP_ESAMEFILE, "%s: is the archive %s itself; nothing written", out, input);
            return NULL;
        }
    }
    size_t n = strlen(out) + sizeof ".unverified";
    char *tmp = malloc(n);
    if (tmp) snprintf(tmp, n, "%s.unverified", out);
    else cli_fail(ONNXZIP_ENOMEM, "out of memory");
    return tmp;
}

int cli_settle(char *tmp, const char *out, int rc)
{
    if (!rc && rename(tmp, out) != 0)
        rc = cli_fail(ONNXZIP_EIO, "%s: cannot rename to %s: %s", tmp, out, strerror(errno));
    if (rc) remove(tmp);
    free(tmp);
    return rc;
}

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
        if (g->kind == ONNXZIP_SEGMENT_ARCHIVE && n) {
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

/* `md`, the SHA-256 of the bytes written for the package's file `path`,
 * against the statement's digest of it. */
static int compare(const onnxzip_signed *s, const char *path, const uint8_t md[32], const char *archive)
{
    char hex[65];
    for (int k = 0; k < 32; k++) snprintf(hex + 2 * k, 3, "%02x", md[k]);
    const char *want = signed_digest(s, path);
    if (!want)
        return cli_fail(ONNXZIP_EUNSIGNED, "%s: '%s' is not covered by the signature (one of its ignore_paths)",
                        archive, path);
    if (strcmp(want, hex) != 0) /* worded as the library's check (trust/signed.c) */
        return cli_fail(ONNXZIP_EMISMATCH, "%s: '%s' differs from the signed statement: its SHA-256 is %s, the "
                        "signature's %s", archive, path, hex, want);
    return 0;
}

static int check_files(const onnxzip_archive *pkg, const onnxzip_file_plan *plan, const onnxzip_signed *s,
                       const onnxzip_archive *fa, size_t dirlen, const char *url)
{
    for (size_t i = 0, n = onnxzip_file_plan_count(plan); i < n; i++) {
        const onnxzip_planned_file *f = onnxzip_file_plan_at(plan, i);
        uint8_t md[32];
        int rc = hash_file(pkg, fa, dirlen, f, md);
        if (rc || (rc = compare(s, f->path, md, url))) return rc;
    }
    return 0;
}

int cli_check_written(const onnxzip_signed *s, const char *path, const char *written, const char *archive)
{
    FILE *f = fopen(written, "rb");
    EVP_MD_CTX *c = f ? EVP_MD_CTX_new() : NULL;
    const size_t chunk = (size_t)1 << 20;
    uint8_t *buf = c ? malloc(chunk) : NULL;
    int rc = !f ? cli_fail(ONNXZIP_EIO, "%s: cannot read: %s", written, strerror(errno))
             : !buf || !EVP_DigestInit_ex(c, EVP_sha256(), NULL) ? cli_fail(ONNXZIP_ENOMEM, "out of memory")
                                                                : 0;
    for (size_t k; !rc && (k = fread(buf, 1, chunk, f)) > 0;)
        if (!EVP_DigestUpdate(c, buf, k)) rc = cli_fail(ONNXZIP_EIO, "%s: libcrypto's SHA-256 failed", path);
    if (!rc && ferror(f)) rc = cli_fail(ONNXZIP_EIO, "%s: cannot read: %s", written, strerror(errno));
    uint8_t md[32];
    unsigned len = 0;
    if (!rc && (!EVP_DigestFinal_ex(c, md, &len) || len != 32))
        rc = cli_fail(ONNXZIP_EIO, "%s: libcrypto's SHA-256 failed", path);
    if (!rc) rc = compare(s, path, md, archive);
    free(buf);
    EVP_MD_CTX_free(c);
    if (f) fclose(f);
    return rc;
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
int cli_check_written(const onnxzip_signed *s, const char *path, const char *written, const char *archive)
{
    (void)s, (void)written, (void)archive;
    return cli_fail(ONNXZIP_EUNSUPPORTED, "%s: this onnxzip was built without signing (-Dsigning)", path);
}

int cli_check_fetched(onnxzip_archive *pkg, const onnxzip_signed *s, const char *model, const char *fetched)
{
    (void)pkg, (void)s, (void)fetched;
    return cli_fail(ONNXZIP_EUNSUPPORTED, "%s: this onnxzip was built without signing (-Dsigning)", model);
}
#endif
