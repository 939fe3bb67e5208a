/* Tensors held in typed fields (float_data, int32_data, int64_data,
 * double_data, uint64_data) converted to ONNX's raw_data form: little-endian
 * elements, float16/bfloat16/float8 as their bit patterns, 4-bit and 2-bit
 * types packed into bytes — exactly what ONNX defines for raw_data. */
#ifndef ONNXZIP_TYPED_H
#define ONNXZIP_TYPED_H

#include "onnx/onnx_walk.h"

/* Byte length of the raw form of `t`'s typed data into *n. Returns 0;
 * ONNXZIP_EDTYPE when the type has no raw form (STRING, unknown) or the data
 * sits in a field the type does not use; ONNXZIP_EPROTO on malformed data. */
int oz_typed_size(const oz_tensor_info *t, const char *path, uint64_t *n);

/* Writes the raw form (oz_typed_size() bytes) into out. */
int oz_typed_convert(const oz_tensor_info *t, const char *path, uint8_t *out);

#endif
