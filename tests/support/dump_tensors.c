/* Test helper: prints every tensor view of an archive as one JSON object per
 * line, with the CRC-32 of the bytes seen through onnxzip_open(), so that
 * scripts can compare them with the original model read by the onnx package. */
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "onnxzip/onnxzip.h"

static void put_json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f) printf("\\u%04x", *p); /* bytes, not code points */
        else putchar(*p);
    }
    putchar('"');
}

static uint32_t crc_of(const onnxzip_tensor *t)
{
    uLong crc = crc32(0, NULL, 0);
    const unsigned char *p = t->data;
    for (uint64_t left = t->nbytes; left;) {
        uInt n = left > (1u << 30) ? (1u << 30) : (uInt)left;
        crc = crc32(crc, p, n);
        p += n;
        left -= n;
    }
    return (uint32_t)crc;
}

int main(int argc, char **argv)
{
    static const char *storage[] = { "entry", "inline", "typed" };
    onnxzip_archive *a;
    if (argc != 2) {
        fprintf(stderr, "usage: dump_tensors ARCHIVE\n");
        return 2;
    }
    int rc = onnxzip_open(argv[1], 0, &a);
    if (rc) {
        fprintf(stderr, "dump_tensors: %s [%s]\n", onnxzip_last_error()->message, onnxzip_status_name(rc));
        return 1;
    }
    for (size_t i = 0; i < onnxzip_tensor_count(a); i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        printf("{\"name\": ");
        put_json_string(t->name);
        printf(", \"data_type\": %d, \"dims\": [", t->data_type);
        for (uint32_t d = 0; d < t->ndims; d++) printf("%s%lld", d ? ", " : "", (long long)t->dims[d]);
        printf("], \"storage\": \"%s\", \"nbytes\": %llu, \"crc32\": %u, \"alignment\": %u}\n", storage[t->storage],
               (unsigned long long)t->nbytes, t->storage == ONNXZIP_STORAGE_TYPED ? 0u : crc_of(t), t->alignment);
    }
    onnxzip_close(&a);
    return ferror(stdout) ? 1 : 0;
}
