/* read_digest ARCHIVE... — what a runtime sees of each archive through the
 * reader API, one line per tensor: name, type, dims, storage, size, XXH3-64
 * of its bytes in raw_data form (onnxzip_tensor_read), swap_width; then the
 * status of onnxzip_verify(). Errors print the status name only (messages
 * name host paths). Built for every host: tests/cross/run.sh compares the
 * output of a Windows (or other cross) build with the x86-64 one. */
#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "onnxzip/onnxzip.h"

static void tensor(onnxzip_archive *a, const onnxzip_tensor *t)
{
    printf("  %s %s [", t->name, onnxzip_dtype_name(t->data_type));
    for (uint32_t d = 0; d < t->ndims; d++) printf(d ? ",%lld" : "%lld", (long long)t->dims[d]);
    uint64_t size = 0;
    int rc = onnxzip_tensor_size(a, t, &size);
    void *buf = rc || size > ((uint64_t)1 << 31) ? NULL : malloc(size ? (size_t)size : 1);
    if (!rc && !buf) rc = ONNXZIP_ENOMEM;
    if (!rc) rc = onnxzip_tensor_read(a, t, 0, size, buf);
    if (rc)
        printf("] storage %d %s swap=%u\n", (int)t->storage, onnxzip_status_name(rc), t->swap_width);
    else
        printf("] storage %d %llu xxh3=%016llx swap=%u\n", (int)t->storage, (unsigned long long)size,
               (unsigned long long)XXH3_64bits(buf, (size_t)size), t->swap_width);
    free(buf);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        onnxzip_archive *a = NULL;
        int rc = onnxzip_open(argv[i], 0, &a);
        printf("%s: open %s\n", argv[i], onnxzip_status_name(rc));
        if (rc) continue;
        size_t n = onnxzip_tensor_count(a);
        printf("  layout %d, %zu tensors\n", (int)onnxzip_archive_layout(a), n);
        for (size_t k = 0; k < n; k++) tensor(a, onnxzip_tensor_at(a, k));
        rc = onnxzip_verify(a);
        printf("  verify %s\n", onnxzip_status_name(rc));
        onnxzip_close(&a);
    }
    return 0;
}
