/* The reader handle shared by archive.c and verify.c. */
#ifndef ONNXZIP_ARCHIVE_H
#define ONNXZIP_ARCHIVE_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/source.h"
#include "read/extdata.h"
#include "read/package.h"
#include "read/tensors.h"
#include "read/zip_reader.h"

struct Onnx__ModelProto;

struct onnxzip_archive {
    const uint8_t *base;
    uint64_t size;
    int mapped; /* 1: base is our mmap, unmapped at close; 0: borrowed */
    int fd;     /* mapped: a duplicate of the mapped file's descriptor, for
                   onnxzip_check(); -1 otherwise */
    int by_path; /* opened by path (`path` is one) */
    uint64_t st_dev, st_ino; /* the mapped file, as at open (outputs' identity checks) */
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
    oz_source src;          /* where the bytes come from; base is src.map */
    atomic_uchar *checked;  /* src.defer_headers: per entry, its local header was checked */
    atomic_uchar *pin_state; /* unmapped: per entry, pinned (read/pins.h) */
    uint8_t (*pin_sha)[32];  /* and its SHA-256 as a signature check hashed it */
    oz_package pkg;         /* a package's members (zip.package) */
    char *want_model;       /* the package's model to open, or NULL: its default */
};

/* The handle's bytes are not mapped: they are read through its source
 * (a URL, a host's reads). */
static inline int oz_archive_unmapped(const onnxzip_archive *a)
{
    return a->base == NULL;
}

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

/* archive_access.c: the fields onnx.checker requires of the model (open accepts a
 * model without them, so that tools can inspect any file), with verify's
 * message; unpack and view check them too, as they write the model out. */
int oz_verify_model_fields(const onnxzip_archive *a);

/* archive_access.c: records the package model `model` (copied; NULL: the
 * default) that the open sequence is to select. 0 or ONNXZIP_ENOMEM. */
int oz_archive_want_model(onnxzip_archive *a, const char *model);

/* archive_access.c: 0 when `m` is one of the members of `a`'s package;
 * else ONNXZIP_EINVAL naming `fn` (NULL, or a member of another handle). */
int oz_own_member(const onnxzip_archive *a, const onnxzip_member *m, const char *fn);

/* open.c: the one open sequence of an archive (a zip) over a->src, the
 * same for a mapped file, a URL and a host's reads: parses the window
 * (widening it down as the records require), copies the model, checks
 * local headers (all now, or each on first read with src.defer_headers)
 * and indexes the tensors. Returns 1 with *need when the source widens
 * only by its caller (src.widen_by_caller) and the bytes from *need on
 * are needed first. */
int oz_open_zip(onnxzip_archive *a, uint64_t *need);

/* model_view.c: a view of `a` holding model `m` of its package as if it had
 * been opened with it (its directory selected, its tensors indexed): it
 * shares a's source, entries and manifest (`a` must outlive it) and owns
 * its model bytes, read through the source (a remote entry checked against
 * its CRC-32 and XXH3), and its tensor index. Free it with
 * oz_archive_view_free() (also after a failure), never onnxzip_close(). */
int oz_archive_view_model(onnxzip_archive *a, const onnxzip_member *m, onnxzip_archive *view);
void oz_archive_view_free(onnxzip_archive *view);

/* open.c: entry `i`'s local header, read at `h` (data_offset -
 * header_offset bytes), checked once for a handle whose headers are
 * checked on first read (one that was opened checked them all). */
int oz_entry_check_header(onnxzip_archive *a, size_t i, const uint8_t *h);

/* open.c: the spans a model, central directory and end records may take:
 * refuses a window that must widen down to file offset `from` when the
 * records from there on are more than those can span (ONNXZIP_ELIMIT). */
int oz_span_check(uint64_t from, uint64_t size, const char *shown);

#endif
