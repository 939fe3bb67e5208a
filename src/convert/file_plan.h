/* File plans (onnxzip_file_plan_*(), include/onnxzip/onnxzip.h): the bytes
 * onnxzip_unpack_dir() writes for each file of a package's folder, as
 * segments, from unpack's own planner (convert/unpack_plan.h). No file is
 * touched (the WebAssembly build compiles it). */
#ifndef ONNXZIP_FILE_PLAN_H
#define ONNXZIP_FILE_PLAN_H

#include "read/archive.h"

struct onnxzip_file_plan {
    onnxzip_planned_file *files;
    size_t n, cap;
    void **owned; /* what the plan frees: paths, segments, model bytes */
    size_t nowned, capowned;
};

#endif
