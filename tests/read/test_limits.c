/* Files larger than the address space (issue: 32-bit hosts). A file that
 * does not fit this process's pointers must fail with ONNXZIP_ELIMIT naming
 * the file, never be mapped with a truncated size. The files are sparse, so
 * the test costs no disk on any host; on 64-bit hosts the same files map and
 * fail later for what they are (zeros are no archive), or open. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define GIB ((uint64_t)1 << 30)

static int sparse(const char *path, uint64_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    int rc = ftruncate(fd, (off_t)size);
    close(fd);
    return rc;
}

static int wide(void) { return SIZE_MAX > UINT32_MAX; }

static void says_address_space(void)
{
    const char *m = onnxzip_last_error()->message;
    CHECK(strstr(m, "address space") != NULL);
}

/* An archive (or what claims to be one) of 5 GiB, and one of 4 GiB - 1 MiB:
 * the second fits a 32-bit size_t but not with the 2 MiB alignment room. */
static void open_big(const char *dir)
{
    const uint64_t sizes[] = { 5 * GIB, ((uint64_t)4 << 30) - ((uint64_t)1 << 20) };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        const char *path = tu_path(dir, "big.onnxzip");
        CHECK(sparse(path, sizes[i]) == 0);
        onnxzip_archive *a = NULL;
        int rc = onnxzip_open(path, 0, &a);
        if (wide()) {
            CHECK_RC(rc, ONNXZIP_ENOTZIP); /* mapped whole, then read for what it is */
        } else {
            CHECK_RC(rc, ONNXZIP_ELIMIT);
            if (rc == ONNXZIP_ELIMIT) {
                CHECK(strstr(onnxzip_last_error()->message, "big.onnxzip") != NULL);
                says_address_space();
            }
        }
        CHECK(a == NULL);
        onnxzip_close(&a);
    }
}

/* A classic model whose external data file is 5 GiB. */
static void side_file_big(const char *dir)
{
    tu_tensor t = { .name = "w", .dtype = 2 /* UINT8 */, .dims = { (int64_t)(5 * GIB) }, .ndims = 1,
                    .entry = "w.bin" };
    size_t len;
    uint8_t *model = tu_model(&t, 1, &len);
    FILE *f = fopen(tu_path(dir, "m.onnx"), "wb");
    CHECK(f && fwrite(model, 1, len, f) == len);
    if (f) fclose(f);
    free(model);
    CHECK(sparse(tu_path(dir, "w.bin"), 5 * GIB) == 0);
    onnxzip_archive *a = NULL;
    int rc = onnxzip_open(tu_path(dir, "m.onnx"), 0, &a);
    if (wide()) {
        CHECK_RC(rc, 0);
        const onnxzip_tensor *w = onnxzip_find_tensor(a, "w");
        CHECK(w && w->nbytes == 5 * GIB && w->data != NULL);
    } else {
        CHECK_RC(rc, ONNXZIP_ELIMIT);
        if (rc == ONNXZIP_ELIMIT) {
            CHECK(strstr(onnxzip_last_error()->message, "w.bin") != NULL);
            says_address_space();
        }
    }
    onnxzip_close(&a);
    unlink(tu_path(dir, "w.bin"));
}

/* pack of a 5 GiB input: no output file either way. */
static void pack_big(const char *dir)
{
    CHECK(sparse(tu_path(dir, "in.onnx"), 5 * GIB) == 0);
    int rc = onnxzip_pack(tu_path(dir, "in.onnx"), tu_path(dir, "out.onnxzip"), NULL);
    CHECK(rc != 0);
    if (!wide()) {
        CHECK_RC(rc, ONNXZIP_ELIMIT);
        if (rc == ONNXZIP_ELIMIT) says_address_space();
    }
    CHECK(access(tu_path(dir, "out.onnxzip"), F_OK) != 0);
    CHECK(tu_count_files(dir, ".tmp-") == 0);
    unlink(tu_path(dir, "in.onnx"));
}

int main(void)
{
    char *dir = tu_tmpdir();
    printf("size_t: %zu bits\n", sizeof(size_t) * 8);
    open_big(dir);
    side_file_big(dir);
    pack_big(dir);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("limits");
}
