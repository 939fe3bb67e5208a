/* What every layer of the library shares: the format's limits (spec 10),
 * and, through the headers included, errors and little-endian fields. Not
 * installed, not API. */
#ifndef ONNXZIP_INTERNAL_H
#define ONNXZIP_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnxzip/onnxzip.h"
#include "common/byteorder.h"
#include "common/error.h"

#define OZ_MAX_ENTRIES (1u << 24)
#define OZ_MAX_TENSORS (1u << 24)
#define OZ_MAX_NAME 255
#define OZ_MAX_RANK 64
#define OZ_MAX_GRAPH_DEPTH 64
#define OZ_MAX_MSG_DEPTH 256 /* nested messages, ModelProto = 1 (spec 10) */
#define OZ_MAX_MODEL ((uint64_t)INT32_MAX)
#define OZ_MODEL_NAME "__MODEL_PROTO"

/* strndup(3), which not every C library has (MinGW-w64's lacks it). */
static inline char *oz_strndup(const char *s, size_t n)
{
    const char *end = memchr(s, '\0', n);
    size_t len = end ? (size_t)(end - s) : n;
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* The last directory separator of `path`: '/', and on Windows '\\' too;
 * NULL when there is none. */
static inline const char *oz_last_sep(const char *path)
{
    const char *s = strrchr(path, '/');
#ifdef _WIN32
    const char *b = strrchr(path, '\\');
    if (b && (!s || b > s)) s = b;
#endif
    return s;
}

/* Largest power of two dividing `off`, capped at 65536 (the writer's maximum). */
static inline uint32_t oz_alignment_of(uint64_t off)
{
    if (off == 0) return 65536;
    uint64_t a = off & (~off + 1);
    return a > 65536 ? 65536 : (uint32_t)a;
}

#endif
