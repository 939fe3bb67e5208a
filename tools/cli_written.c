/*
 * cli_written.c — downloads with a trust check the bytes they wrote (spec
 * 20.5: bytes read again after a check are not the bytes checked), each
 * byte transferred once: "extract --file F" hashes the file it wrote;
 * "fetch --model M" leaves its check to the library
 * (onnxzip_signed_check_fetched), which Python's fetch() uses too.
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
#else
int cli_check_written(const onnxzip_signed *s, const char *path, const char *written, const char *archive)
{
    (void)s, (void)written, (void)archive;
    return cli_fail(ONNXZIP_EUNSUPPORTED, "%s: this onnxzip was built without signing (-Dsigning)", path);
}
#endif
