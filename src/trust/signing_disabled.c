/* The signing calls of a build without signing (-Dsigning=disabled, or
 * libcrypto or jansson missing): each reports ONNXZIP_EUNSUPPORTED, saying
 * so, and the library links neither. */
#include "common/internal.h"

static int oz_no_signing(void)
{
    return oz_err(ONNXZIP_EUNSUPPORTED, -1,
                  "this onnxzip library was built without signing (OpenSSL libcrypto and jansson, -Dsigning)");
}

int onnxzip_trust_create(onnxzip_trust **out)
{
    if (out) *out = NULL;
    return oz_no_signing();
}

int onnxzip_trust_add_public_key(onnxzip_trust *t, const void *pem, size_t len)
{
    return oz_no_signing();
}

int onnxzip_trust_add_certificates(onnxzip_trust *t, const void *pem, size_t len)
{
    return oz_no_signing();
}

int onnxzip_trust_set_signature(onnxzip_trust *t, const void *bundle, size_t len)
{
    return oz_no_signing();
}

void onnxzip_trust_free(onnxzip_trust **t)
{
    if (t) *t = NULL;
}

int onnxzip_signed_open(onnxzip_archive *a, const onnxzip_trust *t, onnxzip_signed **out)
{
    if (out) *out = NULL;
    return oz_no_signing();
}

int onnxzip_signed_check(onnxzip_signed *s, onnxzip_archive *a, const char *path)
{
    return oz_no_signing();
}

int onnxzip_signed_check_fetched(onnxzip_signed *s, onnxzip_archive *a, const char *model, const char *fetched)
{
    return oz_no_signing();
}

int onnxzip_signed_covers(const onnxzip_signed *s, const char *path)
{
    return 0;
}

int onnxzip_signed_check_bytes(const onnxzip_signed *s, const char *path, const void *data, size_t len)
{
    return oz_no_signing();
}

int onnxzip_signed_check_file(const onnxzip_signed *s, const char *path, const char *file)
{
    return oz_no_signing();
}

size_t onnxzip_signed_resource_count(const onnxzip_signed *s)
{
    return 0;
}

const char *onnxzip_signed_resource_name(const onnxzip_signed *s, size_t i)
{
    return NULL;
}

const char *onnxzip_signed_resource_digest(const onnxzip_signed *s, size_t i)
{
    return NULL;
}

void onnxzip_signed_free(onnxzip_signed **s)
{
    if (s) *s = NULL;
}

int onnxzip_sign(const char *archive_path, const onnxzip_sign_options *o)
{
    return oz_no_signing();
}
