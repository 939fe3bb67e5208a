/* Little-endian loads and stores: every zip and protobuf field is
 * little-endian whatever the host's byte order, so fields are read and
 * written byte by byte, never through a cast. */
#ifndef ONNXZIP_BYTEORDER_H
#define ONNXZIP_BYTEORDER_H

#include <stdint.h>

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

#endif
