/*
 * consumer.c — a program built against an *installed* onnxzip, the way a
 * user would: `cc consumer.c $(pkg-config --cflags --libs onnxzip)`.
 *
 *   consumer            prints the library's version
 *   consumer ARCHIVE    also opens ARCHIVE and prints its tensor count
 *
 * Built with -DCONSUMER_MODEL_PROTO (by run.sh, when the library has
 * protobuf-c) it also includes the installed <onnxzip/onnx.pb-c.h> and
 * parses the model with onnxzip_model_proto(), so that a missing or broken
 * generated header fails the install test.
 */
#include <onnxzip/onnxzip.h>
#ifdef CONSUMER_MODEL_PROTO
#include <onnxzip/onnx.pb-c.h>
#endif

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    onnxzip_archive *a = NULL;
    int rc;

    printf("onnxzip %s\n", onnxzip_version());
    if (strcmp(onnxzip_version(), "") == 0 ||
        onnxzip_version_number() != ONNXZIP_VERSION_NUMBER) {
        fprintf(stderr, "consumer: header %d does not match library %u (%s)\n",
                ONNXZIP_VERSION_NUMBER, onnxzip_version_number(), onnxzip_version());
        return 1;
    }
    if (argc < 2)
        return 0;

    rc = onnxzip_open(argv[1], 0, &a);
    if (rc != 0) {
        fprintf(stderr, "consumer: %s [%s]\n", onnxzip_last_error()->message,
                onnxzip_status_name(rc));
        return 1;
    }
    printf("%s: %zu tensors\n", argv[1], onnxzip_tensor_count(a));
#ifdef CONSUMER_MODEL_PROTO
    {
        const Onnx__ModelProto *m = NULL;
        if (onnxzip_model_proto(a, &m) != 0 || !m->graph) {
            fprintf(stderr, "consumer: onnxzip_model_proto: %s\n", onnxzip_last_error()->message);
            onnxzip_close(&a);
            return 1;
        }
    }
#endif
    for (size_t i = 0; i < onnxzip_tensor_count(a); i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        printf("  %s: %llu bytes\n", t->name, (unsigned long long)t->nbytes);
    }
    onnxzip_close(&a);
    return 0;
}
