/* An unmapped handle's bytes, read through its source (source_read.c). */
#ifndef ONNXZIP_SOURCE_READ_H
#define ONNXZIP_SOURCE_READ_H

#include "read/archive.h"

/* Reads `len` bytes of entry tensor `t` from byte `offset` of its payload
 * into `dst`, checking the entry's local header on first use. */
int oz_tensor_read_unmapped(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len, void *dst);

/* Bytes [off, off + len) of entry i's data through the source; its local
 * header checked on the entry's first read, in the same batch of reads; a
 * remote archive's whole entry (off 0, len its size) checked against its
 * CRC-32 and XXH3 (ONNXZIP_ECRC, ONNXZIP_EDIGEST: bytes changed on the way),
 * as open.c checks its model. A pinned entry (read/pins.h) is read whole
 * and compared with its pin (ONNXZIP_EMISMATCH), also for a part of it. */
int oz_entry_read(onnxzip_archive *a, size_t i, uint64_t off, uint64_t len, void *dst);

/* Entry i's whole data, just read through the source into d: a remote
 * archive's against its CRC-32 and XXH3, a pinned one against its pin. */
int oz_entry_check_read(const onnxzip_archive *a, size_t i, const void *d);

/* Entries idx[0..n) whole, each into dst[k] (its size), in one
 * oz_source_readv() (in parallel where the source can): each local header
 * checked on the entry's first read, a remote archive's entries against
 * their CRC-32 and XXH3, as oz_entry_read() of a whole entry. */
int oz_entries_read(onnxzip_archive *a, const size_t *idx, size_t n, uint8_t *const *dst);

/* Entry i's whole data to `sink` in order, a window (oz_spans_window()) at
 * a time, hashed as it arrives: 0, the sink's or a read's status, or, a
 * remote archive's after the last byte was handed on, ONNXZIP_ECRC /
 * ONNXZIP_EDIGEST, a pinned entry's ONNXZIP_EMISMATCH; the caller then
 * drops what the sink made. */
int oz_entry_stream(onnxzip_archive *a, size_t i, oz_sink_fn sink, void *ctx);

/* Bytes worth reading in one batch of oz_source_read_spans(): a round of the
 * source's connections (parallel x chunk size), at least 64 MiB. */
uint64_t oz_spans_window(const onnxzip_archive *a);

#endif
