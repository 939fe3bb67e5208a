#include "fuzz_util.h"

#include <onnxzip/onnxzip.h>
#include "onnx/pbwire.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int fuzz_memfd(const char *name, const uint8_t *data, size_t size)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    return fd;
}

static char tmpdir_path[4096];

static int remove_cb(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    if (ftw->level == 0) return 0; /* keep the directory itself */
    remove(path);
    return 0;
}

void fuzz_clear_dir(const char *dir)
{
    nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_tmpdir(void)
{
    if (tmpdir_path[0]) {
        fuzz_clear_dir(tmpdir_path);
        rmdir(tmpdir_path);
    }
}

const char *fuzz_tmpdir(void)
{
    if (tmpdir_path[0]) return tmpdir_path;
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    snprintf(tmpdir_path, sizeof tmpdir_path, "%s/onnxzip-fuzz-XXXXXX", base);
    if (!mkdtemp(tmpdir_path)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(remove_tmpdir);
    return tmpdir_path;
}

void fuzz_fail(const char *what)
{
    const onnxzip_error_info *e = onnxzip_last_error();
    fprintf(stderr, "fuzz: %s: %s (%s)\n", what, e->message ? e->message : "?",
            onnxzip_status_name(e->status));
    abort();
}

int fuzz_model_fields_ok(const uint8_t *model, size_t size)
{
    pb_reader r = { model, model + size };
    pb_field f;
    int64_t ir = 0;
    int graph = 0, opset = 0;
    while (r.p < r.end && pb_next(&r, &f) == 0) {
        if (f.num == 1 && f.wt == PB_VARINT) ir = (int64_t)f.v;
        graph |= f.num == 7 && f.wt == PB_LEN;
        opset |= f.num == 8 && f.wt == PB_LEN;
    }
    return ir > 0 && (ir < 3 || opset) && graph;
}
