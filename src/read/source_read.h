/* An unmapped handle's bytes, read through its source (source_read.c). */
#ifndef ONNXZIP_SOURCE_READ_H
#define ONNXZIP_SOURCE_READ_H

#include "read/archive.h"

/* Reads `len` bytes of entry tensor `t` from byte `offset` of its payload
 * into `dst`, checking the entry's local header on first use. */
int oz_tensor_read_unmapped(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len, void *dst);

/* Bytes [off, off + len) of entry i's data through the source; its local
 * header checked on the entry's first read, in the same batch of reads. */
int oz_entry_read(onnxzip_archive *a, size_t i, uint64_t off, uint64_t len, void *dst);

/* Bytes worth reading in one batch of oz_source_read_spans(): a round of the
 * source's connections (parallel x chunk size), at least 64 MiB. */
uint64_t oz_spans_window(const onnxzip_archive *a);

#endif
