/* Why a zip that oz_zip_parse() refused is not an onnxzip archive, in the
 * terms its user needs: a truncated download, a zip of something else, or
 * an ONNX model zip of another tool that `onnxzip repack` converts. */
#ifndef ONNXZIP_ZIP_DIAGNOSE_H
#define ONNXZIP_ZIP_DIAGNOSE_H

#include <stdint.h>

#include "common/source.h"

typedef struct oz_zip_dx {
    const uint8_t *base; /* the bytes from file offset win_off to size */
    uint64_t win_off, size;
    const char *path;
    int have_cd; /* the end records were read: the central directory is */
    uint64_t cd_offset, cd_size, n_entries;
} oz_zip_dx;

/* Called with the status `rc` of a failed parse (its error recorded).
 * Returns `rc` with the error left as it is, or a status whose error now
 * says what the file is:
 *   - ONNXZIP_ETRUNC: no end records, but the file starts with a local
 *     header: the sizes its local headers give show it was cut short;
 *   - ONNXZIP_ENOTONNXZIP: a zip without a __MODEL_PROTO entry (its count of
 *     entries and one name), whichever layout rule its entries broke first;
 *   - a zip with a model entry that another tool wrote (deflated entries,
 *     data descriptors, the model not last, unaligned data, tensor names as
 *     entry names, the model named "__MODEL_PROTO.onnx" or under a
 *     directory: oz_foreign_model_name): the specific status of the first
 *     such reason, a message naming the layout when its model entry's name
 *     and place tell it (tf2onnx's large-model zip, PyTorch's ZIP_ARCHIVE
 *     export) and pointing to `onnxzip repack`.
 * Damage (bad records, local headers disagreeing with the central
 * directory) and system errors keep their own error. Bounded work: the
 * central directory once, or the local headers up to the file's end. */
int oz_zip_diagnose(const oz_zip_dx *d, int rc);

/* oz_zip_diagnose() of a zip without end records (`rc` ONNXZIP_ENOTZIP,
 * d->have_cd 0) whose window is only its tail: what lies before the window
 * is read from `src` (its read(): a source that can read any byte), so that
 * a cut file is ONNXZIP_ETRUNC as when it is mapped whole. Returns `rc`, the
 * ETRUNC status, or the status of a read that failed (its error recorded). */
int oz_zip_diagnose_source(const oz_zip_dx *d, oz_source *src, int rc);

/* ONNXZIP_ENOTONNXZIP for the zip `path` of `n` entries, none named
 * __MODEL_PROTO, the first named `first` (printable: oz_printable): the one
 * message for it, of open and of repack. */
int oz_err_no_model(const char *path, uint64_t n, const char *first);

#endif
