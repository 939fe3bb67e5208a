/* Copying a range of one file into another in the kernel. */
#ifndef ONNXZIP_COPY_RANGE_H
#define ONNXZIP_COPY_RANGE_H

#include <stddef.h>
#include <stdint.h>

typedef enum oz_copy_result {
    OZ_COPY_OK = 0,
    OZ_COPY_UNSUPPORTED, /* nothing done: the source is no regular file, or
                            dst_off lies before the destination's end */
    OZ_COPY_SHORT,       /* the source is shorter than src_off + len */
    OZ_COPY_READ,        /* reading the source failed (errno) */
    OZ_COPY_WRITE        /* writing the destination failed (errno) */
} oz_copy_result;

/* Called after each step with the destination offset below which every byte
 * is final. */
typedef void (*oz_copy_step_fn)(void *ctx, uint64_t final_to);

/* Copies `len` bytes at `src_off` of src_fd to dst_fd at `dst_off`, which must
 * lie at or past dst_fd's end: with copy_file_range() where the kernel can,
 * else pread/pwrite, in steps of a few MiB. The source's holes are skipped
 * (dst_fd is extended first, so they read as zeros and cost no disk).
 * *done: bytes copied. */
oz_copy_result oz_copy_range(int src_fd, uint64_t src_off, uint64_t len, int dst_fd, uint64_t dst_off,
                             oz_copy_step_fn step, void *ctx, uint64_t *done);

/* Whether the `n` bytes at `p` are all zero: a block a copy into a file
 * extended with zeros leaves unwritten, so that it stays a hole. */
int oz_all_zero(const uint8_t *p, size_t n);

#endif
