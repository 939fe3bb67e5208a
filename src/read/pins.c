/* Pins of a remote handle's entries (pins.h). Each entry's state goes 0
 * (none) -> 2 (being written, by one thread) -> 1 (pinned): readers use a
 * pin only once its digest is complete. SHA-256 through libcrypto's EVP,
 * as convert/plan_sha256.c; a build without libcrypto cannot check a
 * signature, so no entry is ever pinned there. */
#include <stdlib.h>

#include "read/pins.h"
#if defined(ONNXZIP_HAVE_LIBCRYPTO) && ONNXZIP_HAVE_LIBCRYPTO
#include <openssl/evp.h>
#define HAVE_SHA256 1
#else
#define HAVE_SHA256 0
#endif

enum { NONE = 0, PINNED = 1, WRITING = 2 };

int oz_pins_alloc(onnxzip_archive *a)
{
    size_t n = a->zip.n ? a->zip.n : 1;
    a->pin_state = calloc(n, sizeof *a->pin_state);
    a->pin_sha = malloc(n * sizeof *a->pin_sha);
    if (a->pin_state && a->pin_sha) return 0;
    free((void *)a->pin_state);
    free(a->pin_sha);
    a->pin_state = NULL;
    a->pin_sha = NULL;
    return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
}

void oz_pin(onnxzip_archive *a, size_t i, const uint8_t sha[32])
{
    unsigned char none = NONE;
    if (!a->pin_state || i >= a->zip.n || !atomic_compare_exchange_strong(&a->pin_state[i], &none, WRITING)) return;
    memcpy(a->pin_sha[i], sha, 32);
    atomic_store(&a->pin_state[i], PINNED);
}

int oz_pinned(const onnxzip_archive *a, size_t i)
{
    return a->pin_state && i < a->zip.n && atomic_load(&a->pin_state[i]) == PINNED;
}

static int mismatch(const onnxzip_archive *a, size_t i, const char *why)
{
    const oz_zentry *e = &a->zip.entries[i];
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EMISMATCH, (int64_t)e->pub.data_offset, "%s: entry '%s': %s", a->path,
                  oz_printable(e->pub.name, e->name_len, shown, sizeof shown), why);
}

int oz_pin_begin(const onnxzip_archive *a, size_t i, oz_pin_hash *h)
{
    h->ctx = NULL;
    h->failed = 0;
    if (!oz_pinned(a, i)) return 0;
#if HAVE_SHA256
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (!EVP_DigestInit_ex(c, EVP_sha256(), NULL)) h->failed = 1;
    h->ctx = c;
    return 0;
#else
    return mismatch(a, i, "pinned, but this build has no SHA-256 (internal error)");
#endif
}

void oz_pin_update(oz_pin_hash *h, const void *p, size_t n)
{
#if HAVE_SHA256
    if (h->ctx && !h->failed && n && !EVP_DigestUpdate(h->ctx, p, n)) h->failed = 1;
#else
    (void)h, (void)p, (void)n;
#endif
}

int oz_pin_end(const onnxzip_archive *a, size_t i, oz_pin_hash *h)
{
    if (!h->ctx) return 0;
    int rc = 0;
#if HAVE_SHA256
    uint8_t got[32];
    unsigned len = 0;
    if (h->failed || !EVP_DigestFinal_ex(h->ctx, got, &len) || len != 32)
        rc = oz_err(ONNXZIP_EIO, -1, "%s: libcrypto's SHA-256 failed", a->path);
    else if (memcmp(got, a->pin_sha[i], 32))
        rc = mismatch(a, i, "the bytes read now differ from the ones the signature check hashed (another "
                      "SHA-256): the file changed since, or its origin answers otherwise");
    EVP_MD_CTX_free(h->ctx);
#else
    (void)a, (void)i;
#endif
    h->ctx = NULL;
    return rc;
}

int oz_pin_check(const onnxzip_archive *a, size_t i, const void *d)
{
    oz_pin_hash h;
    int rc = oz_pin_begin(a, i, &h);
    if (rc || !h.ctx) return rc;
    oz_pin_update(&h, d, (size_t)a->zip.entries[i].pub.size);
    return oz_pin_end(a, i, &h);
}
