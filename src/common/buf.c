#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/internal.h"

int oz_buf_reserve(oz_buf *b, size_t extra)
{
    if (extra <= b->cap - b->len) return 0;
    if (extra > SIZE_MAX / 2 - b->len) return oz_err(ONNXZIP_ENOMEM, -1, "buffer size overflow");
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < extra) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (%zu bytes)", cap);
    b->p = p;
    b->cap = cap;
    return 0;
}

int oz_buf_append(oz_buf *b, const void *data, size_t n)
{
    int rc = oz_buf_reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

int oz_buf_vprintf(oz_buf *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    size_t room = b->cap - b->len;
    int n = vsnprintf(room ? (char *)b->p + b->len : NULL, room, fmt, ap);
    int rc = n < 0 ? oz_err(ONNXZIP_EINVAL, -1, "cannot format '%s'", fmt) : 0;
    if (!rc && (size_t)n >= room && !(rc = oz_buf_reserve(b, (size_t)n + 1))) /* too long: again, with room */
        vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!rc) b->len += (size_t)n;
    return rc;
}

size_t oz_varint_encode(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

int oz_buf_varint(oz_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    return oz_buf_append(b, tmp, oz_varint_encode(tmp, v));
}

void oz_buf_free(oz_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* Memory handed to the caller (a view, a listing) is an oz_buf's. */
void onnxzip_free(void *p)
{
    free(p);
}
