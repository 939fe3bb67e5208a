/* fuzz_unpack: onnxzip_unpack() of arbitrary bytes given as an archive
 * (through /proc/self/fd/N of a memfd) in every layout, every payload in a
 * data file (size_threshold 0). An unpack that succeeds must write a model
 * that onnxzip_open() reads back; anything else is a bug. */
#include "fuzz_util.h"

#include <onnxzip/onnxzip.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An archive whose model is empty unpacks to an empty .onnx, which no reader
 * can tell from an empty file of any kind (onnxzip_open: ENOTZIP). */
static int model_empty(const uint8_t *data, size_t size)
{
    onnxzip_archive *a = NULL;
    if (onnxzip_open_buffer(data, size, 0, &a) != 0) return 0;
    const void *mb = NULL;
    size_t ms = 1;
    onnxzip_model_bytes(a, &mb, &ms);
    onnxzip_close(&a);
    return ms == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    const char *dir = fuzz_tmpdir();
    int fd = fuzz_memfd("fuzz_unpack", data, size);
    if (fd < 0) {
        perror("fuzz_unpack: memfd");
        abort();
    }
    char in_path[64], model_path[4200];
    snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", fd);
    snprintf(model_path, sizeof model_path, "%s/m.onnx", dir);

    static const onnxzip_unpack_layout layouts[] = { ONNXZIP_UNPACK_SINGLE, ONNXZIP_UNPACK_PER_TENSOR,
                                                     ONNXZIP_UNPACK_INLINE };
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        onnxzip_unpack_options opts;
        onnxzip_unpack_options_init(&opts);
        opts.layout = layouts[i];
        opts.size_threshold = 0;
        if (i == 0) {
            opts.alignment = 64;
            opts.flags = ONNXZIP_UNPACK_CHECKSUM;
        }
        int rc = onnxzip_unpack(in_path, model_path, &opts);
        if (rc == 0) {
            onnxzip_archive *a = NULL;
            int orc = onnxzip_open(model_path, 0, &a);
            if (orc == ONNXZIP_ENOTZIP && model_empty(data, size)) {
                fuzz_clear_dir(dir);
                break;
            }
            if (orc != 0) {
                fprintf(stderr, "fuzz_unpack: layout %d\n", (int)layouts[i]);
                fuzz_fail("unpacked model does not open");
            }
            /* verify refuses (EPROTO) exactly the models that lack ir_version, opset or graph */
            const void *mb = NULL;
            size_t ms = 0;
            int vrc = onnxzip_verify(a), fields_ok = onnxzip_model_bytes(a, &mb, &ms) == 0 &&
                                                    fuzz_model_fields_ok(mb, ms);
            if (vrc != 0 && (vrc != ONNXZIP_EPROTO || fields_ok)) {
                fprintf(stderr, "fuzz_unpack: layout %d\n", (int)layouts[i]);
                fuzz_fail("unpacked model does not verify");
            }
            onnxzip_close(&a);
        }
        fuzz_clear_dir(dir);
        if (rc != 0) break; /* the archive is refused the same way in every layout */
    }
    close(fd);
    return 0;
}
