/* An unmapped handle's bytes, read through its source (source_read.c). */
#ifndef ONNXZIP_SOURCE_READ_H
#define ONNXZIP_SOURCE_READ_H

#include "read/archive.h"

/* Reads `len` bytes of entry tensor `t` from byte `offset` of its payload
 * into `dst`, checking the entry's local header on first use. */
int oz_tensor_read_unmapped(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len, void *dst);

/* The file's bytes of spans s[0..n), one after the other into `dst`
 * (remote: all cut into chunk-size requests in flight together). */
int oz_spans_read(onnxzip_archive *a, const oz_file_span *s, size_t n, uint8_t *dst);

/* Bytes worth reading in one batch of oz_spans_read(): a round of the
 * source's connections (parallel x chunk size), at least 64 MiB. */
uint64_t oz_spans_window(const onnxzip_archive *a);

#endif
