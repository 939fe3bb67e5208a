/* File plans (onnxzip_file_plan_*(), include/onnxzip/onnxzip.h): the bytes
 * unpack writes for each file of a package's folder, as segments. */
#ifndef ONNXZIP_FILE_PLAN_H
#define ONNXZIP_FILE_PLAN_H

#include "read/archive.h"

/* The members' bytes and plans: what onnxzip_file_plan holds. */
struct onnxzip_file_plan {
    onnxzip_planned_file *files;
    size_t n, cap;
    struct oz_plan_block *blocks; /* owned memory: segments, names, model bytes */
};

#endif
