/* Copying a range of one file into another in the kernel. */
#ifndef ONNXZIP_COPY_RANGE_H
#define ONNXZIP_COPY_RANGE_H

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
 * (dst_fd is extended first, so they read as zeros and cost no disk). With
 * `write_behind`, writeback of each step starts at once, so that a final
 * fsync finds little left to write. *done: bytes copied. */
oz_copy_result oz_copy_range(int src_fd, uint64_t src_off, uint64_t len, int dst_fd, uint64_t dst_off,
                             int write_behind, oz_copy_step_fn step, void *ctx, uint64_t *done);

/* Starts writeback of the whole 4 KiB pages in [from, to) without waiting
 * (sync_file_range), so that a final fsync finds little left to write. The
 * page holding `to` is left alone: the next write goes there, and a page
 * under writeback makes writers wait (stable pages). Best effort. */
void oz_write_behind(int fd, uint64_t from, uint64_t to);

#endif
