/* The zip layer: an archive's entries as validated by the reader and as
 * recorded by the writer. */
#ifndef ONNXZIP_ZIP_READER_H
#define ONNXZIP_ZIP_READER_H

#include "common/entry_name.h"
#include "common/internal.h"
#include "common/strmap.h"

typedef struct oz_zentry {
    onnxzip_entry pub;
    uint32_t name_len;
    uint32_t align_claim; /* alignment recorded in a 0xD935 field, 0 if none */
    oz_name_class cls;
} oz_zentry;

typedef struct oz_zip {
    oz_zentry *entries;
    size_t n;
    size_t model_index;
    uint64_t cd_offset, cd_size;
    uint64_t end; /* end of the archive proper: the file size, or less when
                     an update trailer says so (spec 15.2) */
    oz_strmap names; /* entry name, ASCII case folded -> index */
    char *name_store; /* NUL-terminated copies of all names */
} oz_zip;

/* Parses and validates the zip structure of `size` bytes at `base` per the
 * spec's reader requirements (everything but the model's contents). When
 * `base` maps a file, `fd` is that file (local headers are then read with
 * pread()); else -1. `path` names the file in messages. On failure *z is
 * left empty. */
int oz_zip_parse(oz_zip *z, const uint8_t *base, uint64_t size, int fd, const char *path);
void oz_zip_free(oz_zip *z);

/* The entry named exactly `name`, or NULL. */
const oz_zentry *oz_zip_find(const oz_zip *z, const char *name, size_t len);

#endif
