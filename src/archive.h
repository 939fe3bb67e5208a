/* The reader handle shared by archive.c and verify.c. */
#ifndef ONNXZIP_ARCHIVE_H
#define ONNXZIP_ARCHIVE_H

#include "tensors.h"
#include "zip.h"

struct Onnx__ModelProto;

struct onnxzip_archive {
    const uint8_t *base;
    uint64_t size;
    int mapped; /* 1: base is our mmap, unmapped at close; 0: borrowed */
    char *path;
    oz_zip zip;
    oz_tensors tensors;
    const uint8_t *model;
    size_t model_len;
    struct Onnx__ModelProto *parsed;
};

#endif
