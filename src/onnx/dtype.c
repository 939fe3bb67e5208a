#include "onnx/dtype.h"
#include "common/internal.h"

static const struct {
    const char *name;
    unsigned bits;
} dtypes[] = {
    [0] = { "UNDEFINED", 0 },       [1] = { "FLOAT", 32 },           [2] = { "UINT8", 8 },
    [3] = { "INT8", 8 },            [4] = { "UINT16", 16 },          [5] = { "INT16", 16 },
    [6] = { "INT32", 32 },          [7] = { "INT64", 64 },           [8] = { "STRING", 0 },
    [9] = { "BOOL", 8 },            [10] = { "FLOAT16", 16 },        [11] = { "DOUBLE", 64 },
    [12] = { "UINT32", 32 },        [13] = { "UINT64", 64 },         [14] = { "COMPLEX64", 64 },
    [15] = { "COMPLEX128", 128 },   [16] = { "BFLOAT16", 16 },       [17] = { "FLOAT8E4M3FN", 8 },
    [18] = { "FLOAT8E4M3FNUZ", 8 }, [19] = { "FLOAT8E5M2", 8 },      [20] = { "FLOAT8E5M2FNUZ", 8 },
    [21] = { "UINT4", 4 },          [22] = { "INT4", 4 },            [23] = { "FLOAT4E2M1", 4 },
    [24] = { "FLOAT8E8M0", 8 },     [25] = { "UINT2", 2 },           [26] = { "INT2", 2 },
    [27] = { "FLOAT6E2M3", 6 },     [28] = { "FLOAT6E3M2", 6 },
};
#define N_DTYPES (int32_t)(sizeof dtypes / sizeof dtypes[0])

const char *onnxzip_dtype_name(int32_t data_type)
{
    return data_type >= 0 && data_type < N_DTYPES ? dtypes[data_type].name : "UNKNOWN";
}

unsigned oz_dtype_bits(int32_t dtype)
{
    return dtype >= 0 && dtype < N_DTYPES ? dtypes[dtype].bits : 0;
}

int oz_dtype_nbytes(int32_t dtype, uint64_t n, uint64_t *out)
{
    unsigned bits = oz_dtype_bits(dtype);
    if (!bits) return -1;
    if (bits >= 8) {
        uint64_t size = bits / 8;
        if (n > UINT64_MAX / size) return -1;
        *out = n * size;
    } else { /* packed LSB first: 4-bit two, 2-bit four, 6-bit four to three bytes */
        if (n > UINT64_MAX / bits) return -1;
        *out = n / 8 * bits + ((n % 8) * bits + 7) / 8;
    }
    return 0;
}

uint32_t oz_dtype_swap_width(int32_t dtype)
{
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe) return 0; /* little-endian host */
    if (dtype == 8 /* STRING */) return 0;
    unsigned bits = oz_dtype_bits(dtype);
    if (dtype == 14 || dtype == 15) bits /= 2; /* COMPLEX64/128: (real, imaginary) */
    return bits == 16 || bits == 32 || bits == 64 ? bits / 8 : 0;
}

int oz_dims_product(const int64_t *dims, uint32_t ndims, uint64_t *out)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims; i++) {
        if (dims[i] < 0) return -1;
        uint64_t d = (uint64_t)dims[i];
        if (d && n > UINT64_MAX / d) return -1;
        n *= d;
    }
    *out = n;
    return 0;
}
