/* ONNX tensor data types: names and payload sizes. */
#ifndef ONNXZIP_DTYPE_H
#define ONNXZIP_DTYPE_H

#include <stdint.h>

/* Bits per element for fixed-size types (4 for INT4, 2 for INT2, ...);
 * 0 for STRING, UNDEFINED and unknown codes, whose size cannot be checked. */
unsigned oz_dtype_bits(int32_t dtype);

/* Byte length of `n` elements of `dtype` into *out (sub-byte types round up).
 * Returns 0, or -1 on overflow or a type without fixed size. */
int oz_dtype_nbytes(int32_t dtype, uint64_t n, uint64_t *out);

/* onnxzip_tensor.swap_width of `dtype` on this host: the bytes of one
 * number to reverse on a big-endian host (COMPLEX64: 4, a component), 0 on a
 * little-endian one and for types without multi-byte numbers. */
uint32_t oz_dtype_swap_width(int32_t dtype);

/* Product of dims into *out; -1 when a dim is negative or it overflows. */
int oz_dims_product(const int64_t *dims, uint32_t ndims, uint64_t *out);

#endif
