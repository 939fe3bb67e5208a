/* The tensor index of a model: one onnxzip_tensor view per TensorProto with
 * its references resolved against the archive's entries and validated
 * (spec §"The model and tensor references", §"Tensor sizes"). */
#ifndef ONNXZIP_TENSORS_H
#define ONNXZIP_TENSORS_H

#include "strmap.h"
#include "zip.h"

typedef struct oz_arena_block oz_arena_block;

typedef struct oz_tensors {
    onnxzip_tensor *v;
    size_t n, cap;
    oz_strmap by_name; /* first tensor of each name */
    oz_arena_block *arena;
} oz_tensors;

/* Builds the index of the model held at `model` (`len` bytes, at file offset
 * `model_offset`). `file` is the mapped archive used for data pointers, or
 * NULL when only validating (pointers are then NULL). */
int oz_tensors_build(oz_tensors *ts, const oz_zip *z, const uint8_t *file, const uint8_t *model,
                     size_t len, uint64_t model_offset, const char *path);
void oz_tensors_free(oz_tensors *ts);

#endif
