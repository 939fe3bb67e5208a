/* fuzz_sources: the one open sequence over every kind of byte source,
 * through the public API only, compared with the local open of the whole
 * input (onnxzip_open_buffer(): a mapped source):
 *   - a remote window widened on demand: onnxzip_open_host() without a read
 *     function, handed the file's last 4 to 64 KiB (the input's first byte
 *     chooses), called again with the window widened down to where it asks
 *     (as onnxzip_open_url() widens an HTTP tail; its source is the same
 *     sequence with reads of its own), each window in its own allocation so
 *     that ASan sees a read before it; local headers checked on first read;
 *   - a host's synchronous reads (the WebAssembly binding of a Blob, bytes
 *     or a Node file): onnxzip_open_host() with a read function, which
 *     checks every local header at open as the local open does.
 * Invariants: the local open accepts <=> the read source's open accepts,
 * with the same entries and tensors; the local open accepts => the window
 * source accepts the same entries, and each entry's first-read header
 * check passes exactly when its predicted data offset is the real one;
 * the local open and verify accept => the streaming verifier accepts the
 * whole input fed in uneven pieces. */
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxzip/onnxzip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct input {
    const uint8_t *data;
    size_t size;
} input;

static int64_t read_input(void *ctx, uint64_t off, size_t n, void *dst)
{
    const input *in = ctx;
    if (off > in->size) return 0;
    size_t k = in->size - off < n ? (size_t)(in->size - off) : n;
    memcpy(dst, in->data + off, k);
    return (int64_t)k;
}

/* onnxzip_open_host() from a tail, widened as asked (at most three times). */
static int open_window(const uint8_t *data, size_t size, int with_read, onnxzip_archive **a)
{
    size_t tail = 4096u << (size ? data[0] % 5 : 0);
    uint64_t from = size > tail ? size - tail : 0;
    input in = { data, size };
    for (int round = 0; round < 4; round++) {
        uint8_t *win = malloc(size - from + 1);
        memcpy(win, data + from, size - from);
        onnxzip_host_source src = { .name = "fuzz", .size = size, .window = win, .window_len = size - from,
                                    .read = with_read ? read_input : NULL, .ctx = &in };
        uint64_t need = 0;
        int rc = onnxzip_open_host(&src, a, &need);
        free(win);
        if (rc || *a) return rc;
        if (need >= from) fuzz_fail("the open asks for bytes it has");
        from = need;
    }
    fuzz_fail("the open asked for more bytes three times");
}

static int same_entry(const onnxzip_entry *l, const onnxzip_entry *r)
{
    return !strcmp(l->name, r->name) && l->header_offset == r->header_offset && l->size == r->size &&
           l->crc32 == r->crc32;
}

static void compare_tensors(const onnxzip_archive *l, const onnxzip_archive *r)
{
    if (onnxzip_tensor_count(l) != onnxzip_tensor_count(r)) fuzz_fail("the sources index other tensors");
    for (size_t i = 0; i < onnxzip_tensor_count(l); i++) {
        const onnxzip_tensor *x = onnxzip_tensor_at(l, i), *y = onnxzip_tensor_at(r, i);
        if (strcmp(x->name, y->name) || x->file_offset != y->file_offset || x->nbytes != y->nbytes ||
            x->storage != y->storage)
            fuzz_fail("a tensor differs between the sources");
    }
}

/* The window source: the same directory; first-read header checks. */
static void compare_window(const uint8_t *data, onnxzip_archive *l, onnxzip_archive *r)
{
    if (onnxzip_entry_count(l) != onnxzip_entry_count(r)) fuzz_fail("the window source sees another directory");
    for (size_t i = 0; i < onnxzip_entry_count(l); i++) {
        const onnxzip_entry *x = onnxzip_entry_at(l, i), *y = onnxzip_entry_at(r, i);
        if (!same_entry(x, y)) fuzz_fail("an entry differs between the window source and the local open");
        int ok = onnxzip_host_check_header(r, i, data + y->header_offset,
                                           (size_t)(y->data_offset - y->header_offset)) == 0;
        if (ok != (x->data_offset == y->data_offset))
            fuzz_fail("the first-read header check disagrees with the local open");
    }
}

/* The streaming verifier over the whole input, in uneven pieces. */
static void stream(const uint8_t *data, size_t size, onnxzip_archive *a, int good)
{
    onnxzip_verifier *v = NULL;
    int rc = onnxzip_verifier_begin(a, &v);
    for (size_t at = 0, step = 1; !rc && at < size; at += step, step = step * 3 % 4099 + 1)
        rc = onnxzip_verifier_feed(v, data + at, step < size - at ? step : size - at);
    rc = rc ? (onnxzip_verifier_free(&v), rc) : onnxzip_verifier_end(&v);
    if (good && rc) fuzz_fail("the streaming verifier refuses what open + verify accept");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onnxzip_archive *local = NULL, *win = NULL, *rd = NULL;
    int lrc = onnxzip_open_buffer(data, size, 0, &local);
    int zip = !lrc && onnxzip_archive_layout(local) == ONNXZIP_LAYOUT_ARCHIVE;
    int good = zip && onnxzip_verify(local) == 0;
    int rrc = open_window(data, size, 1, &rd);
    if (zip != !rrc) fuzz_fail(zip ? "the read source refuses what the local open accepts"
                                   : "the read source accepts what the local open refuses");
    int wrc = open_window(data, size, 0, &win);
    /* The window source is a remote one: it checks the model's CRC-32 and XXH3 at open, which a local
     * open leaves to verify. */
    int digest = wrc == ONNXZIP_ECRC || wrc == ONNXZIP_EDIGEST;
    if (zip && wrc && !digest) fuzz_fail("the window source refuses what the local open accepts");
    if (zip && digest && good) fuzz_fail("the window source refuses digests that verify accepts");
    if (zip) compare_tensors(local, rd);
    if (zip && !wrc) {
        compare_window(data, local, win);
        compare_tensors(local, win);
    }
    if (!wrc) stream(data, size, win, good);
    onnxzip_close(&local);
    onnxzip_close(&win);
    onnxzip_close(&rd);
    return 0;
}
