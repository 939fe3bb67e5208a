/* The "onnxzip.view" record of a runtime view (spec 16.2): one
 * metadata_props entry of the view's ModelProto naming its archive (file
 * name, size, and the CRC-32 and XXH3-64 of its __MODEL_PROTO), written by
 * convert/view.c and checked here for onnxzip_verify(). */
#ifndef ONNXZIP_VIEW_RECORD_H
#define ONNXZIP_VIEW_RECORD_H

#include "onnx/pbwire.h"
#include "read/archive.h"

#define OZ_VIEW_KEY "onnxzip.view"
enum { MODEL_METADATA_PROPS = 14 }; /* ModelProto.metadata_props */

/* 1 when `s` is a file name ONNX resolves beside the model: not empty, no
 * '/' or '\\', not "." or "..". */
int oz_view_plain_location(const char *s);

/* The archive's __MODEL_PROTO CRC-32 and XXH3-64, as its central directory
 * records them (the digest computed from the model when none is recorded).
 * `a` must be an archive (ONNXZIP_LAYOUT_ARCHIVE). */
void oz_view_model_sums(const onnxzip_archive *a, uint32_t *crc, uint64_t *xxh);

/* 1 when the ModelProto field `f` is a metadata_props entry keyed
 * "onnxzip.view"; *value (when not NULL) is then its value, the last one
 * given, as protobuf reads it. */
int oz_view_is_record(const pb_field *f, oz_span *value);

/* 1 when the serialized ModelProto holds a record; *value (when not NULL) is
 * that of the first one. */
int oz_view_find_record(const uint8_t *model, size_t len, oz_span *value);

/* For onnxzip_verify() on a classic model: when it carries a record, checks
 * that the archive it names (beside the model) still has the recorded size
 * and model sums. Returns 0 (also when there is no record), ONNXZIP_ESTALE
 * when the archive changed, or the error met reading the record or the
 * archive. Reads the archive's headers and model only. */
int oz_view_check(const onnxzip_archive *a);

#endif
