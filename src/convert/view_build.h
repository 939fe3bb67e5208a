/* The model of a runtime view (spec 16): every entry-backed tensor turned
 * into an external reference into the archive file itself, small ones
 * copied inline, plus the "onnxzip.view" record. No system calls: the bytes
 * copied inline come from the caller (the mapped file for
 * onnxzip_view_model(); ranges JavaScript read for the WebAssembly binding). */
#ifndef ONNXZIP_VIEW_BUILD_H
#define ONNXZIP_VIEW_BUILD_H

#include "common/buf.h"
#include "read/archive.h"

/* ONNXZIP_EINVAL: `s` is no plain file name (oz_view_plain_location()),
 * so it cannot be a view's location. */
int oz_view_bad_location(const char *s);

/* The archive file's bytes [off, off + len) (len > 0), valid until the view
 * is built; NULL when the caller does not have them. */
typedef const uint8_t *(*oz_view_bytes_fn)(void *ctx, uint64_t off, uint64_t len);

/* Appends to `out` the view of archive `a` (ONNXZIP_LAYOUT_ARCHIVE) naming
 * it `location` (a plain file name, already checked); tensors of fewer than
 * `inline_below` bytes (and empty ones) are copied inline from `bytes`. */
int oz_view_build(const onnxzip_archive *a, const char *location, uint64_t inline_below, oz_view_bytes_fn bytes,
                  void *ctx, oz_buf *out);

/* Calls `range` with the absolute file range of each non-empty tensor that
 * oz_view_build() with this `inline_below` copies inline, in model order
 * (a range may repeat: tensors may share bytes). Stops at its first error. */
int oz_view_inlined(const onnxzip_archive *a, uint64_t inline_below,
                    int (*range)(void *ctx, uint64_t off, uint64_t len), void *ctx);

#endif
