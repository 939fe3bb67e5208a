/* onnxzip_sign(): a package (or single-model archive) signed as
 * model_signing signs the folder it unpacks to, the bundle written into it
 * as model.sig or beside it. */
#include <errno.h>
#include <stdio.h>

#include "common/atomic_file.h"
#include "common/internal.h"
#include "convert/package_copy.h"
#include "convert/plan_sha256.h"
#include "trust/bundle_write.h"
#include "trust/crypto.h"
#include "trust/statement.h"

#define OZ_KEY_FILE_MAX ((size_t)1 << 20)

/* The paths model_signing leaves out of a folder it signs (its defaults:
 * the signature file, git's). */
static const char *const oz_sign_ignore[] = { "model.sig", ".git", ".github", ".gitattributes", ".gitignore" };

typedef struct signer {
    const onnxzip_sign_options *o;
    EVP_PKEY *key;
    STACK_OF(X509) *certs; /* the leaf, then the chain; NULL: key mode */
    onnxzip_archive *a;
    onnxzip_file_plan *plan;
    const onnxzip_planned_file **files; /* signed, sorted by path */
    size_t n;
    uint8_t (*digests)[32];
} signer;

static int read_small(const char *path, uint8_t **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot open: %s", path, strerror(errno));
    uint8_t *p = malloc(OZ_KEY_FILE_MAX + 1);
    size_t n = p ? fread(p, 1, OZ_KEY_FILE_MAX + 1, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (!p) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (err || n > OZ_KEY_FILE_MAX) {
        free(p);
        return err ? oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot read", path)
                   : oz_err(ONNXZIP_EBUNDLE, -1, "%s: over %zu bytes: not a PEM key or certificate", path,
                            OZ_KEY_FILE_MAX);
    }
    *out = p;
    *len = n;
    return 0;
}

static int load_certs(signer *s, const char *path)
{
    uint8_t *p;
    size_t n;
    int rc = read_small(path, &p, &n);
    if (rc) return rc;
    rc = oz_pem_certificates(p, n, path, s->certs);
    free(p);
    return rc;
}

static int load_key(signer *s)
{
    const onnxzip_sign_options *o = s->o;
    uint8_t *p;
    size_t n;
    int rc = read_small(o->private_key_path, &p, &n);
    if (rc) return rc;
    rc = oz_pem_private_key(p, n, o->private_key_path, &s->key);
    free(p);
    if (rc || !o->certificate_path) return rc;
    if (!(s->certs = sk_X509_new_null())) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if ((rc = load_certs(s, o->certificate_path))) return rc;
    if (sk_X509_num(s->certs) != 1)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: %d certificates; give the signing certificate alone, and the others "
                      "as the chain", o->certificate_path, sk_X509_num(s->certs));
    if (EVP_PKEY_eq(X509_get0_pubkey(sk_X509_value(s->certs, 0)), s->key) != 1)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the certificate's public key is not the private key's (%s)",
                      o->certificate_path, o->private_key_path);
    return o->chain_path ? load_certs(s, o->chain_path) : 0;
}

static int by_path(const void *x, const void *y)
{
    return strcmp((*(const onnxzip_planned_file *const *)x)->path, (*(const onnxzip_planned_file *const *)y)->path);
}

/* Every file of the folder but the ignored ones, sorted, hashed. */
static int hash_files(signer *s)
{
    int rc = onnxzip_file_plan_create(s->a, NULL, &s->plan);
    size_t n = rc ? 0 : onnxzip_file_plan_count(s->plan);
    if (!rc && (!(s->files = calloc(n ? n : 1, sizeof *s->files)) || !(s->digests = calloc(n ? n : 1, 32))))
        rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        const onnxzip_planned_file *f = onnxzip_file_plan_at(s->plan, i);
        if (!oz_path_ignored(f->path, oz_sign_ignore, sizeof oz_sign_ignore / sizeof *oz_sign_ignore))
            s->files[s->n++] = f;
    }
    if (!rc) qsort(s->files, s->n, sizeof *s->files, by_path);
    return rc || !s->n ? rc : oz_plan_sha256_files(s->a, s->files, s->n, s->digests);
}

/* The subject's name: the archive's file name without its extension (the
 * folder's name, were it unpacked beside it). */
static char *subject_name(const char *path)
{
    const char *sep = oz_last_sep(path), *base = sep ? sep + 1 : path;
    const char *dot = strrchr(base, '.');
    return oz_strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
}

static int write_signature(const signer *s, const char *archive_path, const char *json, size_t n)
{
    if (!s->o->signature_path) return oz_package_set_file(archive_path, "model.sig", json, n);
    oz_atomic_file af;
    int rc = oz_atomic_open(s->o->signature_path, &af);
    if (!rc && (rc = oz_atomic_write(&af, json, n))) oz_atomic_abort(&af);
    return rc ? rc : oz_atomic_commit(&af);
}

static int sign(signer *s, const char *archive_path)
{
    int rc = load_key(s);
    if (!rc) rc = onnxzip_open(archive_path, 0, &s->a);
    if (!rc && !s->o->signature_path && onnxzip_member_count(s->a) == 0)
        rc = oz_err(ONNXZIP_EINVAL, -1, "%s: a single-model archive cannot hold its own signature: give a "
                    "signature file (a detached signature) to write it to", archive_path);
    if (!rc) rc = hash_files(s);
    char *name = rc ? NULL : subject_name(archive_path), *json = NULL;
    if (!rc && !name) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    oz_sign_input in = { .subject = name, .files = s->files, .digests = s->digests, .n = s->n,
                         .ignore = oz_sign_ignore, .n_ignore = sizeof oz_sign_ignore / sizeof *oz_sign_ignore,
                         .key = s->key, .certs = s->certs };
    if (!rc) rc = oz_bundle_write(&in, &json);
    onnxzip_close(&s->a); /* let go of the file before it is replaced */
    if (!rc) rc = write_signature(s, archive_path, json, strlen(json));
    free(name);
    free(json);
    return rc;
}

int onnxzip_sign(const char *archive_path, const onnxzip_sign_options *o)
{
    if (!archive_path || !o || !o->private_key_path)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_sign: NULL argument (the archive, the options or the private key)");
    if (o->chain_path && !o->certificate_path)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_sign: a certificate chain without the signing certificate");
    signer s = { .o = o };
    int rc = sign(&s, archive_path);
    EVP_PKEY_free(s.key);
    sk_X509_pop_free(s.certs, X509_free);
    onnxzip_close(&s.a);
    onnxzip_file_plan_free(&s.plan);
    free(s.files);
    free(s.digests);
    return rc;
}
