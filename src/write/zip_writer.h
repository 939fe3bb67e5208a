/* The writer's internals for convert/: stream sources and name checks. */
#ifndef ONNXZIP_ZIP_WRITER_H
#define ONNXZIP_ZIP_WRITER_H

#include "common/internal.h"

typedef struct oz_pkg_writer oz_pkg_writer;

/* A package writer's models, files and manifest (write/package_writer.h);
 * NULL for a single-model writer. */
oz_pkg_writer *oz_writer_package(onnxzip_writer *w);

/* 0 when `a` is a valid alignment (power of two, 64..65536), else EINVAL. */
int oz_check_alignment(uint32_t a);

/* 1 when `name` is already used (ignoring ASCII case) in the writer. */
int oz_writer_name_taken(const onnxzip_writer *w, const char *name);

/* A stream source: reads up to `n` bytes into `buf`, sets *got (0 at the end
 * of the stream). Returns 0, or a negative onnxzip_status after recording the
 * failure with oz_err() (any other nonzero value becomes ONNXZIP_EIO). */
typedef int (*oz_stream_fn)(void *user, void *buf, size_t n, size_t *got);

/* As onnxzip_writer_add_file_range(), pulling the entry's bytes from `read`.
 * The size must be known up front (the local header carries it); a stream
 * that ends early (ONNXZIP_ETRUNC) or holds more than `size` bytes
 * (ONNXZIP_ESIZE) fails the entry, and the writer must then be aborted. After
 * `size` bytes the stream is read once more, expecting its end. */
int oz_writer_add_stream(onnxzip_writer *w, const char *name, uint64_t size, oz_stream_fn read, void *user);

/* As oz_writer_add_stream() for a package writer's plain file `path`. */
int oz_writer_add_file_stream(onnxzip_writer *w, const char *path, uint64_t size, oz_stream_fn read, void *user);

#endif
