/* Building onnxzip's zip records (spec sections 3 to 6): pure functions of
 * their inputs, shared by the writer and the in-place model update. */
#ifndef ONNXZIP_ZIP_RECORDS_H
#define ONNXZIP_ZIP_RECORDS_H

#include "common/buf.h"
#include "read/zip_reader.h"

/* The general purpose flags of an entry named `name` (`len` bytes): bit 11
 * (UTF-8) when the name has a byte >= 0x80, so that readers following the
 * zip specification read it as UTF-8 rather than CP437; 0 for ASCII names,
 * whose bytes read the same either way (spec 7.3). */
uint16_t oz_zip_name_flags(const char *name, size_t len);

/* The padding N that aligns to `align` the data of an entry named with
 * `name_len` bytes, of `size` bytes, whose local header starts at `pos`
 * (spec 4.3: computed after the zip64 field is placed). */
uint64_t oz_zip_padding(uint64_t pos, size_t name_len, uint64_t size, uint32_t align);

/* Writes into h the local header of an entry at `pos` with an alignment
 * field recording `claim` and `pad` zero bytes; CRC-32 0 (patched later).
 * Returns its length (<= 30 + 255 + 65535). */
size_t oz_zip_local(uint8_t *h, const char *name, uint64_t size, uint64_t pos, uint16_t claim, size_t pad);

/* Appends the central directory record of `e`, with its digest field. */
int oz_zip_central(oz_buf *cd, const oz_zentry *e);

/* Appends the end records (zip64 ones exactly when needed) for `n` entries
 * whose central directory of `cd_size` bytes starts at `cd_off`. */
int oz_zip_end(oz_buf *cd, uint64_t n, uint64_t cd_size, uint64_t cd_off);

#endif
