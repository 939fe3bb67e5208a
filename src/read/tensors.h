/* The tensor index of a model: one onnxzip_tensor view per TensorProto with
 * its references resolved against the archive's entries and validated
 * (spec §"The model and tensor references", §"Tensor sizes"). */
#ifndef ONNXZIP_TENSORS_H
#define ONNXZIP_TENSORS_H

#include "onnx/pbwire.h"
#include "common/strmap.h"
#include "read/zip_index.h"

typedef struct oz_arena_block oz_arena_block;

/* Where a TYPED tensor's fields lie in the model bytes (its merged pieces),
 * for onnxzip_tensor_read() and onnxzip_tensor_strings(); {NULL, 0} for the
 * other storages. */
typedef struct oz_tensor_src {
    const oz_span *pieces;
    size_t npieces;
} oz_tensor_src;

typedef struct oz_tensors {
    onnxzip_tensor *v;
    oz_tensor_src *src; /* parallel to v */
    size_t n, cap;
    oz_strmap by_name; /* first tensor of each name */
    oz_arena_block *arena;
    size_t n_external; /* tensors in side files (classic external data) */
} oz_tensors;

struct oz_extdata;

/* Builds the index of the model held at `model` (`len` bytes, at file offset
 * `model_offset`). EXTERNAL references resolve against the entries of `z`
 * (an archive) or, when `z` is NULL, against the side files of `ext` (a
 * classic external-data model; files are mapped). `file` is the mapping the
 * model lies in, for data pointers, or NULL when only validating (pointers
 * are then NULL). */
int oz_tensors_build(oz_tensors *ts, const oz_zip *z, struct oz_extdata *ext, const uint8_t *file,
                     const uint8_t *model, size_t len, uint64_t model_offset, const char *path);
void oz_tensors_free(oz_tensors *ts);

#endif
