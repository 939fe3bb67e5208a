/* Writer internals shared with pack.c. */
#ifndef ONNXZIP_WRITER_H
#define ONNXZIP_WRITER_H

#include "internal.h"

/* 0 when `a` is a valid alignment (power of two, 64..65536), else EINVAL. */
int oz_check_alignment(uint32_t a);

/* 1 when `name` is already used (ignoring ASCII case) in the writer. */
int oz_writer_name_taken(const onnxzip_writer *w, const char *name);

#endif
