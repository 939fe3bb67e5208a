/* Shared internals of the onnxzip library: not installed, not API. */
#ifndef ONNXZIP_INTERNAL_H
#define ONNXZIP_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "onnxzip/onnxzip.h"

#define OZ_MAX_ENTRIES (1u << 24)
#define OZ_MAX_TENSORS (1u << 24)
#define OZ_MAX_NAME 255
#define OZ_MAX_RANK 64
#define OZ_MAX_GRAPH_DEPTH 64
#define OZ_MAX_MSG_DEPTH 256 /* nested messages, ModelProto = 1 (spec 10) */
#define OZ_MAX_MODEL ((uint64_t)INT32_MAX)
#define OZ_MODEL_NAME "__MODEL_PROTO"

/* error.c: records the thread's last error and returns `status`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int oz_err(int status, int64_t offset, const char *fmt, ...);

/* Copies at most `n` bytes of a name from untrusted input into `out` as
 * printable text (non-printable bytes as \xHH, long names cut with "..."),
 * so that error messages stay one readable line. Returns out. */
char *oz_printable(const void *s, size_t n, char *out, size_t cap);
#define OZ_PRINTABLE_CAP 96

static inline uint16_t oz_rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t oz_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t oz_rd64(const uint8_t *p)
{
    return (uint64_t)oz_rd32(p) | (uint64_t)oz_rd32(p + 4) << 32;
}
static inline void oz_wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void oz_wr32(uint8_t *p, uint32_t v)
{
    oz_wr16(p, (uint16_t)v);
    oz_wr16(p + 2, (uint16_t)(v >> 16));
}
static inline void oz_wr64(uint8_t *p, uint64_t v)
{
    oz_wr32(p, (uint32_t)v);
    oz_wr32(p + 4, (uint32_t)(v >> 32));
}

/* The update lock (spec 15.5): open file description locks on two bytes far
 * past any real data, so they never meet an application's own locks. Readers
 * hold the lock byte shared while they open; an updater holds it exclusively
 * only around its atomic steps. A gate byte in front, which readers pass
 * through and an updater keeps, stops a stream of readers from starving the
 * updater. type: F_RDLCK, F_WRLCK or F_UNLCK. Best effort: where OFD locks are
 * unsupported it does nothing. */
void oz_update_lock(int fd, short type);

/* Largest power of two dividing `off`, capped at 65536 (the writer's maximum). */
static inline uint32_t oz_alignment_of(uint64_t off)
{
    if (off == 0) return 65536;
    uint64_t a = off & (~off + 1);
    return a > 65536 ? 65536 : (uint32_t)a;
}

#endif
