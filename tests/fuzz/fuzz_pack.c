/* fuzz_pack: onnxzip_pack() of arbitrary bytes given as a classic .onnx
 * model (through /proc/self/fd/N of a memfd), every payload becoming an
 * entry (size_threshold 0). A pack that succeeds must produce an archive
 * that opens and verifies; anything else is a bug. External data is looked
 * up in a private directory holding one file, "w.bin" (4 KiB), which the
 * seed models reference. */
#include "fuzz_util.h"

#include <onnxzip/onnxzip.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char data_dir[4200], out_path[4200];

static void setup(void)
{
    if (data_dir[0]) return;
    const char *tmp = fuzz_tmpdir();
    snprintf(data_dir, sizeof data_dir, "%s/data", tmp);
    snprintf(out_path, sizeof out_path, "%s/out.onnxzip", tmp);
    if (mkdir(data_dir, 0700) != 0) {
        perror("fuzz_pack: mkdir");
        abort();
    }
    char w[4300];
    snprintf(w, sizeof w, "%s/w.bin", data_dir);
    int fd = open(w, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror("fuzz_pack: w.bin");
        abort();
    }
    uint8_t buf[4096];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 31 + 7);
    if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) abort();
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    setup();
    int fd = fuzz_memfd("fuzz_pack", data, size);
    if (fd < 0) {
        perror("fuzz_pack: memfd");
        abort();
    }
    char in_path[64];
    snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", fd);

    onnxzip_pack_options opts;
    onnxzip_pack_options_init(&opts);
    opts.size_threshold = 0;
    opts.data_dir = data_dir;
    /* Vary the flags with the input, so that every pack path is reached. */
    if (size) {
        uint8_t last = data[size - 1];
        if (last & 1) opts.flags |= ONNXZIP_PACK_DEDUP;
        if ((last & 6) == 2) opts.flags |= ONNXZIP_PACK_KEEP_TYPED;
        if ((last & 6) == 4) opts.flags |= ONNXZIP_PACK_NO_CONVERT_ATTRIBUTES;
    }

    int rc = onnxzip_pack(in_path, out_path, &opts);
    close(fd);
    if (rc == 0) {
        onnxzip_archive *a = NULL;
        if (onnxzip_open(out_path, ONNXZIP_OPEN_VERIFY, &a) != 0) fuzz_fail("packed archive does not open");
        if (onnxzip_archive_layout(a) != ONNXZIP_LAYOUT_ARCHIVE) {
            fprintf(stderr, "fuzz_pack: packed output is not an archive\n");
            abort();
        }
        /* The model's own fields are the input's: verify refuses the output
         * (EPROTO) exactly when the input lacks them. */
        int vrc = onnxzip_verify(a), fields_ok = fuzz_model_fields_ok(data, size);
        if (vrc != 0 && (vrc != ONNXZIP_EPROTO || fields_ok)) fuzz_fail("packed archive does not verify");
        if (vrc == 0 && !fields_ok) fuzz_fail("packed archive verifies, but its input lacks ir_version, opset or graph");
        onnxzip_close(&a);
    }
    unlink(out_path);
    return 0;
}
