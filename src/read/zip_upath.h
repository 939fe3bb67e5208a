/* The Info-ZIP Unicode Path extra field (ID 0x7075) a reader may meet: it
 * must name the entry exactly as its header does (spec 7.3). */
#ifndef ONNXZIP_ZIP_UPATH_H
#define ONNXZIP_ZIP_UPATH_H

#include <stddef.h>
#include <stdint.h>

/* NULL when the field's `n` data bytes at `d` are version 1, carry the
 * CRC-32 of the header's name (`name`, `len` bytes) and repeat that name
 * byte for byte; else what is wrong, for a message. */
const char *oz_zip_upath_fault(const uint8_t *d, size_t n, const char *name, size_t len);

#endif
