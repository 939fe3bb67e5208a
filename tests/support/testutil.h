/* A minimal test harness: CHECK()s count, failures print where and why. */
#ifndef ONNXZIP_TESTUTIL_H
#define ONNXZIP_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "onnxzip/onnxzip.h"

extern int tu_passed, tu_failed;

void tu_check(int ok, const char *expr, const char *file, int line);
#define CHECK(cond) tu_check(!!(cond), #cond, __FILE__, __LINE__)
/* Checks a status code, printing the library's message when it differs. */
void tu_check_rc(int got, int want, const char *expr, const char *file, int line);
#define CHECK_RC(expr, want) tu_check_rc((expr), (want), #expr, __FILE__, __LINE__)

/* Prints "NAME: N passed, M failed" and returns the exit status. */
int tu_finish(const char *name);

/* A fresh temporary directory (removed by tu_rmtree), and a path inside it. */
char *tu_tmpdir(void);
void tu_rmtree(const char *dir);
const char *tu_path(const char *dir, const char *name);

/* mkdir(path, 0700) on every system; 0, or -1 with errno. */
int tu_mkdir(const char *path);

/* aligned_alloc() and its free() (Windows has _aligned_malloc instead). */
void *tu_aligned_alloc(size_t align, size_t size);
void tu_aligned_free(void *p);

/* memmem(): the first `needle` in `hay`, or NULL. */
const void *tu_memmem(const void *hay, size_t n, const void *needle, size_t k);

/* Bytes in memory as an onnxzip_host_source's reader: .read = tu_bytes_read,
 * .ctx = a tu_bytes (its `p` may be swapped after the open, as an origin
 * answering otherwise); a read past the end is short. */
typedef struct tu_bytes {
    const uint8_t *p;
    size_t n;
} tu_bytes;
int64_t tu_bytes_read(void *ctx, uint64_t off, size_t n, void *dst);

/* Number of directory entries whose name contains `needle`, "." and ".."
 * included. */
int tu_count_files(const char *dir, const char *needle);

/* Serialized ModelProto with one initializer per (name, dtype, dims, nbytes)
 * referencing entry `entries[i]` (NULL entry: inline raw_data of zeros). */
typedef struct tu_tensor {
    const char *name;
    int32_t dtype;
    int64_t dims[4];
    int ndims;
    const char *entry;
    uint64_t raw_len; /* for inline tensors */
} tu_tensor;
uint8_t *tu_model(const tu_tensor *t, size_t n, size_t *len);

/* A model of `n` UINT8 initializers w0, w1, ... of `each` bytes, each in the
 * entry of its own name, followed by a doc_string of `pad` bytes: two calls
 * with different pads give two valid models of different sizes. */
uint8_t *tu_model_entries(int n, uint64_t each, size_t pad, size_t *len);

#endif
