/* The tensor index of a model: one onnxzip_tensor view per TensorProto with
 * its references resolved against the archive's entries and validated
 * (spec §"The model and tensor references", §"Tensor sizes"). */
#ifndef ONNXZIP_TENSORS_H
#define ONNXZIP_TENSORS_H

#include "onnx/onnx_walk.h"
#include "onnx/pbwire.h"
#include "common/strmap.h"
#include "read/zip_reader.h"

typedef struct oz_arena_block oz_arena_block;

/* Where a TYPED tensor's fields lie in the model bytes (its merged pieces),
 * for onnxzip_tensor_read() and onnxzip_tensor_strings(); {NULL, 0} for the
 * other storages. */
typedef struct oz_tensor_src {
    const oz_span *pieces;
    size_t npieces;
    uint64_t msg_off; /* the TensorProto's first byte in the model (oz_tensor_info.msg) */
} oz_tensor_src;

typedef struct oz_tensors {
    onnxzip_tensor *v;
    oz_tensor_src *src; /* parallel to v */
    size_t n, cap;
    oz_strmap by_name; /* first tensor of each key (onnxzip_tensor.key) */
    oz_arena_block *arena;
    size_t n_external; /* tensors in side files (classic external data) */
    uint32_t *by_msg;  /* indices in msg_off order; NULL when v already is */
} oz_tensors;

struct oz_extdata;

/* The index of an archive's model: `model` (`len` bytes) is the model,
 * copied from file offset `model_offset` of the mapping `file`; EXTERNAL
 * references resolve against the entries of `z`, data pointers into `file`.
 * `path` names the file in messages. Every TensorProto has one index entry,
 * in the order the model walker (onnx/onnx_walk.h) visits them. On failure
 * *ts is left empty. */
int oz_tensors_build_archive(oz_tensors *ts, const oz_zip *z, const uint8_t *file, const uint8_t *model, size_t len,
                             uint64_t model_offset, const char *path);

/* As oz_tensors_build_archive() for a remote archive, of which nothing is
 * mapped: entry tensors have data NULL (read with onnxzip_tensor_read()),
 * inline ones point into `model`. */
int oz_tensors_build_remote(oz_tensors *ts, const oz_zip *z, const uint8_t *model, size_t len, uint64_t model_offset,
                            const char *path);

/* The index of a classic model, which is the whole mapping `model` of `len`
 * bytes; EXTERNAL references resolve against the side files of `ext` (mapped
 * there, once each), or are refused (ONNXZIP_EUNSUPPORTED) when `ext` is NULL
 * (a model opened from memory has no directory). Otherwise as above. */
int oz_tensors_build_classic(oz_tensors *ts, struct oz_extdata *ext, const uint8_t *model, size_t len,
                             const char *path);

/* Checks, without keeping an index, that a model for the archive whose
 * entries are `z` is one open and verify would accept: the schema, every
 * tensor reference resolving to an entry of the right size, then the fields
 * verify requires (onnx/model_fields.h). For writers and the model update,
 * before they commit a model. */
int oz_tensors_check(const oz_zip *z, const uint8_t *model, size_t len, const char *path);

/* The index entry of the TensorProto that a walk (onnx/onnx_walk.h) of the
 * index's own model bytes `model` reports as `t`. Entries are keyed by where
 * each TensorProto first occurs in the model (oz_tensor_info.msg), so a
 * converter that walks the model again (verify, unpack) gets each tensor's
 * resolved view whatever order it walks in. NULL when `t` is no TensorProto
 * of those bytes. O(log n); safe from several threads. */
const onnxzip_tensor *oz_tensors_of(const oz_tensors *ts, const uint8_t *model, const oz_tensor_info *t);

void oz_tensors_free(oz_tensors *ts);

#endif
