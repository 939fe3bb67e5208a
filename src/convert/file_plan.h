/* File plans (onnxzip_file_plan_*(), include/onnxzip/onnxzip.h): the bytes
 * onnxzip_unpack_dir() writes for each file of a package's folder, as
 * segments, from unpack's own planner (convert/unpack_plan.h). No file is
 * touched (the WebAssembly build compiles it). */
#ifndef ONNXZIP_FILE_PLAN_H
#define ONNXZIP_FILE_PLAN_H

#include "read/archive.h"

/* An entry a model file holds whole inline (its bytes read through the
 * source of a handle without a mapping): what its pin is taken from once
 * the model file's SHA-256 matched (trust/signed.c). */
typedef struct oz_plan_inline {
    const char *model; /* the model file's path (the plan's) */
    size_t entry;
    const uint8_t *bytes; /* the entry's size bytes (the plan's) */
} oz_plan_inline;

struct onnxzip_file_plan {
    onnxzip_planned_file *files;
    size_t n, cap;
    void **owned; /* what the plan frees: paths, segments, model bytes */
    size_t nowned, capowned;
    oz_plan_inline *inl;
    size_t ninl;
};

#endif
