/* model_proto_probe FILE...: opens each file and, when it opens, parses its
 * model with onnxzip_model_proto() (protobuf-c, recursive). Prints
 * "FILE: open STATUS, model_proto STATUS" per file; exits 0 unless a call
 * crashes (which is the point: hostile_models.py checks for signals). */
#include <stdio.h>

#include <onnxzip/onnxzip.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        onnxzip_archive *a = NULL;
        int rc = onnxzip_open(argv[i], 0, &a), mrc = 1;
        if (!rc) {
            const struct Onnx__ModelProto *m = NULL;
            mrc = onnxzip_model_proto(a, &m);
            onnxzip_close(&a);
        }
        printf("%s: open %s, model_proto %s\n", argv[i], onnxzip_status_name(rc),
               mrc == 1 ? "-" : onnxzip_status_name(mrc));
        fflush(stdout);
    }
    return 0;
}
