/* The reader handle shared by archive.c and verify.c. */
#ifndef ONNXZIP_ARCHIVE_H
#define ONNXZIP_ARCHIVE_H

#include <stdint.h>

#include "read/extdata.h"
#include "read/tensors.h"
#include "read/zip_reader.h"

struct Onnx__ModelProto;
struct oz_remote;

struct onnxzip_archive {
    const uint8_t *base;
    uint64_t size;
    int mapped; /* 1: base is our mmap, unmapped at close; 0: borrowed */
    int fd;     /* mapped: a duplicate of the mapped file's descriptor, for
                   onnxzip_check(); -1 otherwise */
    int by_path; /* opened by path: onnxzip_check() also stats the path */
    uint64_t st_dev, st_ino, st_mtime_ns; /* the mapped file, as at open */
    onnxzip_layout layout;
    oz_extdata ext; /* classic external data: side files, mapped once */
    int ext_open;
    char *path;
    oz_zip zip;
    oz_tensors tensors;
    const uint8_t *model; /* the model bytes: a copy for archives, the mapping otherwise */
    size_t model_len;
    uint8_t *model_copy;
    struct Onnx__ModelProto *parsed;
    struct oz_remote *remote; /* onnxzip_open_url(): base NULL, nothing mapped */
};

/* archive.c: whether a file of `size` bytes at `b` is read as a zip (else
 * as a protobuf model): it starts with a local header or an empty
 * archive's end record, or is shorter than one and starts as they do (a
 * zip cut short; no model begins "PK", ModelProto has no field 10), or
 * ends with an end of central directory record. */
int oz_looks_like_zip(const uint8_t *b, uint64_t size);

/* archive_access.c: frees what the handle owns in memory and the handle;
 * onnxzip_close() first unmaps and closes what it holds of the system. */
void oz_archive_free(onnxzip_archive *a);

/* verify.c: onnxzip_verify() without the model's own fields (ir_version,
 * opset_import, graph): what ONNXZIP_OPEN_VERIFY checks, since open accepts
 * models without them. */
int oz_verify_data(const onnxzip_archive *a);

/* verify.c: the fields onnx.checker requires of the model (open accepts a
 * model without them, so that tools can inspect any file), with verify's
 * message; unpack and view check them too, as they write the model out. */
int oz_verify_model_fields(const onnxzip_archive *a);

/* stream_check.c: entry e's data hashed to `crc` and `xxh3` against what the
 * archive `path` records: 0, ONNXZIP_ECRC or ONNXZIP_EDIGEST (the one place
 * these are compared and their messages written). */
int oz_entry_check_digests(const oz_zentry *e, const char *path, uint32_t crc, uint64_t xxh3);

#endif
