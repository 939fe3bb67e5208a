/* model_proto_probe FILE...: opens each file and, when it opens, parses its
 * model with protobuf-c (recursive): through onnxzip_model_proto() when the
 * library has it, else with the generated parser on onnxzip_model_bytes()
 * (the same parse: protobuf-c is then the tests' oracle). Prints
 * "FILE: open STATUS, model_proto STATUS" per file; exits 0 unless a call
 * crashes (which is the point: hostile_models.py checks for signals). */
#include <stdio.h>

#include <onnxzip/onnxzip.h>

#include "onnx.pb-c.h"

static int parse(onnxzip_archive *a)
{
    if (onnxzip_has_feature(ONNXZIP_FEATURE_MODEL_PROTO)) {
        const struct Onnx__ModelProto *m = NULL;
        return onnxzip_model_proto(a, &m);
    }
    const void *data;
    size_t size;
    int rc = onnxzip_model_bytes(a, &data, &size);
    if (rc) return rc;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    if (!m) return ONNXZIP_EPROTO;
    onnx__model_proto__free_unpacked(m, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        onnxzip_archive *a = NULL;
        int rc = onnxzip_open(argv[i], 0, &a), mrc = 1;
        if (!rc) {
            mrc = parse(a);
            onnxzip_close(&a);
        }
        printf("%s: open %s, model_proto %s\n", argv[i], onnxzip_status_name(rc),
               mrc == 1 ? "-" : onnxzip_status_name(mrc));
        fflush(stdout);
    }
    return 0;
}
