/*
 * cli_trust.c — what verify, fetch and extract share for signed packages:
 * the trust options (--public-key, --certificate-chain, --signature), the
 * onnxzip_trust they make, and the check of one file, one model or the
 * whole package before any of its bytes is used.
 */
#include "cli.h"
#include "platform.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char cli_trust_usage[] =
    "signed packages (OpenSSF Model Signing: the package's model.sig, or --signature):\n"
    "      --public-key PEM    trust the EC public key(s) in PEM (P-256, P-384, P-521)\n"
    "      --certificate-chain PEM\n"
    "                          trust the root certificate(s) in PEM: the signature's\n"
    "                          certificate chain must lead to one (checked now: an\n"
    "                          expired certificate is refused)\n"
    "      --signature FILE    a detached signature (model_signing's bundle) instead\n"
    "                          of the package's model.sig\n";

/* Keys, certificates and bundles are small: the bundle is refused over
 * 16 MiB by the library; one byte more lets it say so. */
#define TRUST_FILE_MAX (((size_t)16 << 20) + 1)

/* Reads a whole key, certificate or signature file of at most
 * TRUST_FILE_MAX bytes into *data (free() it). 0, or the exit status after
 * printing why, naming the option and the file. */
static int read_small(const char *option, const char *path, uint8_t **data, size_t *size)
{
    int fd = cli_open_read(path);
    cli_file_info st;
    if (fd < 0) return cli_fail(ONNXZIP_EIO, "--%s %s: cannot open: %s", option, path, strerror(errno));
    int rc = cli_stat_fd(fd, &st) ? cli_fail(ONNXZIP_EIO, "--%s %s: cannot stat: %s", option, path, strerror(errno))
             : st.kind != CLI_KIND_REG ? cli_fail(ONNXZIP_ENOTREG, "--%s %s: not a regular file", option, path)
                                       : 0;
    uint8_t *b = rc ? NULL : malloc(TRUST_FILE_MAX);
    size_t n = 0;
    if (!rc && !b) rc = cli_fail(ONNXZIP_ENOMEM, "--%s %s: out of memory", option, path);
    while (!rc && n < TRUST_FILE_MAX) {
        long long k = cli_read(fd, b + n, TRUST_FILE_MAX - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) rc = cli_fail(ONNXZIP_EIO, "--%s %s: cannot read: %s", option, path, strerror(errno));
        if (k <= 0) break;
        n += (size_t)k;
    }
    cli_close(fd);
    if (rc) {
        free(b);
        return rc;
    }
    *data = b;
    *size = n;
    return 0;
}

typedef int (*trust_add_fn)(onnxzip_trust *t, const void *pem, size_t len);

/* One option's file into the trust: its bytes passed to `add`. */
static int add_file(onnxzip_trust *t, const char *option, const char *path, trust_add_fn add)
{
    uint8_t *data = NULL;
    size_t n = 0;
    int rc = read_small(option, path, &data, &n);
    if (rc) return rc;
    int st = add(t, data, n);
    free(data);
    if (!st) return 0;
    /* The library's message says what is wrong; the file is the user's. */
    const onnxzip_error_info *e = onnxzip_last_error();
    return cli_fail(st, "--%s %s: %s", option, path,
                    e->status == st && e->message && *e->message ? e->message : onnxzip_strerror(st));
}

int cli_trust_given(const cli_trust_args *ta)
{
    return ta->public_key || ta->chain || ta->signature;
}

int cli_trust_make(const cli_trust_args *ta, const char *cmd, void (*usage)(FILE *), onnxzip_trust **out)
{
    *out = NULL;
    if (!ta->public_key && !ta->chain)
        return cli_usage_error(cmd, usage, "--signature needs --public-key or --certificate-chain (whom to trust)");
    onnxzip_trust *t = NULL;
    int rc = onnxzip_trust_create(&t);
    if (rc) return cli_lib_error(rc);
    rc = ta->public_key ? add_file(t, "public-key", ta->public_key, onnxzip_trust_add_public_key) : 0;
    if (!rc && ta->chain) rc = add_file(t, "certificate-chain", ta->chain, onnxzip_trust_add_certificates);
    if (!rc && ta->signature) rc = add_file(t, "signature", ta->signature, onnxzip_trust_set_signature);
    if (rc) {
        onnxzip_trust_free(&t);
        return rc;
    }
    *out = t;
    return 0;
}

int cli_trust_check(onnxzip_archive *a, const onnxzip_trust *t, const char *path, onnxzip_signed **out)
{
    onnxzip_signed *s = NULL;
    int rc = onnxzip_signed_open(a, t, &s);
    if (!rc) rc = onnxzip_signed_check(s, a, path);
    if (rc) {
        cli_lib_error(rc); /* before the free: the message may point into s */
        onnxzip_signed_free(&s);
        return CLI_EXIT_FAIL;
    }
    if (out)
        *out = s;
    else
        onnxzip_signed_free(&s);
    return 0;
}
