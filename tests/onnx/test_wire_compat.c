/* Our schema (proto/onnx.proto, compiled by protoc-c) reads and rewrites real
 * models byte for byte, and keeps fields it does not know. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "testutil.h"

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*n + 1);
    if (fread(b, 1, *n, f) != *n) *n = 0;
    fclose(f);
    return b;
}

static int same_after_roundtrip(const uint8_t *in, size_t n)
{
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, in);
    if (!m) return 0;
    size_t size = onnx__model_proto__get_packed_size(m);
    uint8_t *out = malloc(size + 1);
    onnx__model_proto__pack(m, out);
    int same = size == n && !memcmp(in, out, n);
    free(out);
    onnx__model_proto__free_unpacked(m, NULL);
    return same;
}

static void unknown_fields_survive(void)
{
    /* ir_version 8; graph { initializer { name "t", unknown 50 (bytes "xyz") } };
     * unknown 99 (varint 42); unknown 1000 (fixed32). Unknown fields go last,
     * where every protobuf serializer (protobuf-c and C++ alike) puts them. */
    static const uint8_t model[] = {
        0x08, 0x08, 0x3a, 0x0b, 0x2a, 0x09, 0x42, 0x01, 't', 0x92, 0x03, 0x03, 'x', 'y', 'z',
        0x98, 0x06, 0x2a, 0xc5, 0x3e, 1, 2, 3, 4,
    };
    CHECK(same_after_roundtrip(model, sizeof model));
}

int main(int argc, char **argv)
{
    unknown_fields_survive();
    const char *dir = argc > 1 ? argv[1] : "";
    DIR *d = opendir(dir);
    if (!d) {
        printf("corpus absent: %s (only the built-in unknown-field case ran)\n", dir);
        return tu_finish("wire_compat");
    }
    int models = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name), n;
        if (len < 5 || strcmp(e->d_name + len - 5, ".onnx")) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        uint8_t *b = slurp(path, &n);
        int ok = b && same_after_roundtrip(b, n);
        if (!ok) fprintf(stderr, "not byte-identical after parse + serialize: %s\n", path);
        CHECK(ok);
        models++;
        free(b);
    }
    closedir(d);
    printf("wire_compat: %d corpus models re-serialized\n", models);
    CHECK(models > 0);
    return tu_finish("wire_compat");
}
