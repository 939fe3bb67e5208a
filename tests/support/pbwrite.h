/* A hand encoder of protobuf fields for the tests that build ONNX models
 * byte by byte (unknown fields, odd orders, what no generator writes): one
 * copy for all of them. Header-only; over the library's oz_buf. */
#ifndef ONNXZIP_TESTS_PBWRITE_H
#define ONNXZIP_TESTS_PBWRITE_H

#include <stdint.h>
#include <string.h>

#include "common/buf.h"

/* Field `num` as a varint. */
static inline void pb_vint(oz_buf *b, unsigned num, uint64_t v)
{
    oz_buf_varint(b, (uint64_t)num << 3);
    oz_buf_varint(b, v);
}

/* Field `num`, length-delimited: the `n` bytes at `d`. */
static inline void pb_len(oz_buf *b, unsigned num, const void *d, size_t n)
{
    oz_buf_varint(b, (uint64_t)num << 3 | 2);
    oz_buf_varint(b, n);
    oz_buf_append(b, d, n);
}

static inline void pb_str(oz_buf *b, unsigned num, const char *s)
{
    pb_len(b, num, s, strlen(s));
}

/* Appends message `m` as field `num` and frees it. */
static inline void pb_msg(oz_buf *b, unsigned num, oz_buf *m)
{
    pb_len(b, num, m->p ? m->p : (const uint8_t *)"", m->len);
    oz_buf_free(m);
}

#endif
