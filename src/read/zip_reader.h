/* The zip layer: an archive's entries as validated by the reader and as
 * recorded by the writer. */
#ifndef ONNXZIP_ZIP_READER_H
#define ONNXZIP_ZIP_READER_H

#include "common/entry_name.h"
#include "common/internal.h"
#include "common/strmap.h"
#include "common/source.h"
#include "read/zip_upath.h" /* for zip_reader.c */

typedef struct oz_zentry {
    onnxzip_entry pub;
    uint32_t name_len;
    uint32_t align_claim; /* alignment recorded in a 0xD935 field, 0 if none */
    uint16_t flags, method; /* of the central record, for its local header */
    uint8_t generation;   /* the digest field's reader generation (spec 13): 1, or 2 in a package */
    oz_name_class cls;
} oz_zentry;

typedef struct oz_zip {
    oz_zentry *entries;
    size_t n;
    size_t model_index;  /* the model entry; in a package the manifest until the
                            open selects a model (read/package.h) */
    int package;         /* the last entry is __PACKAGE (spec 19) */
    const char *dir;     /* a package's selected model's directory ("" or "a/b/"): where its
                            references resolve (spec 19.2); NULL otherwise */
    size_t dir_len;
    uint64_t cd_offset, cd_size;
    uint64_t end; /* end of the archive proper: the file size, or less when
                     an update trailer says so (spec 15.2) */
    oz_strmap names; /* entry name, ASCII case folded -> index */
    char *name_store; /* NUL-terminated copies of all names */
} oz_zip;

/* Parses and validates the zip structure of the file `src` reads, per the
 * spec's reader requirements (everything but the model's contents), from
 * the window of bytes it holds at the file's end (the whole file when it
 * is mapped). Local headers are read through the source when it says so
 * (src->read_headers), else from the window; with src->defer_headers
 * (remote) only the model's is checked, the others' data offsets are
 * predicted from the layout (entries tile the data area) and checked by
 * oz_zip_check_local() on first use. `path` names the file in messages.
 * Returns 1 when the records begin before the window: call again with the
 * window widened down to *need. On failure *z is left empty. */
int oz_zip_parse(oz_zip *z, oz_source *src, const char *path, uint64_t *need);

/* Checks entry `i`'s local header, `n` bytes at `h` from its header offset
 * on, against its central record. `data_offset` NULL: the header must be
 * exactly as long as the predicted data offset implies (n = data_offset -
 * header_offset). Else n is the header's own length (30 + name + extra, from
 * its first 30 bytes) and *data_offset is set to where its data begins. */
int oz_zip_check_local(const oz_zip *z, size_t i, const uint8_t *h, size_t n, const char *path,
                       uint64_t *data_offset);

/* Indices of entries e[0..n) in file order (by header offset), malloc'ed;
 * NULL when out of memory. */
uint32_t *oz_zip_by_offset(const oz_zentry *e, size_t n);

void oz_zip_free(oz_zip *z);

/* The reader generation (spec 13) this library reads up to. */
#define OZ_READER_GENERATION 2

/* package.c: the entry an EXTERNAL `location` of the model names: the entry of that
 * name, or in a package the path relative to the model's directory z->dir
 * (spec 19.2), which must be a package path. NULL when there is none. */
const oz_zentry *oz_zip_resolve(const oz_zip *z, const char *location, size_t n);

/* The entry named exactly `name`, or NULL. */
const oz_zentry *oz_zip_find(const oz_zip *z, const char *name, size_t len);

#endif
