/* The fields onnx.checker requires of a ModelProto itself. One check, used
 * by onnxzip_verify() and by oz_tensors_check(), which every call that
 * writes an archive's model passes (the writer's finish,
 * onnxzip_update_model()), so that nothing onnxzip writes is refused by its
 * own verify. */
#ifndef ONNXZIP_MODEL_FIELDS_H
#define ONNXZIP_MODEL_FIELDS_H

#include <stddef.h>
#include <stdint.h>

/* What onnx.checker requires of the ModelProto (check_model in checker.cc):
 * ir_version > 0, an opset_import from IR version 3 on, a graph; of the
 * `len` serialized bytes at `model`. Returns 0, or ONNXZIP_EPROTO at `offset`
 * naming `path` (and its entry '__MODEL_PROTO' when `archive`) and each
 * field missing. The bytes are expected to parse (a malformed field ends the
 * scan: what was seen so far counts). */
int oz_check_model_fields(const uint8_t *model, size_t len, const char *path, int archive, int64_t offset);

#endif
