/* A growable byte buffer. */
#ifndef ONNXZIP_BUF_H
#define ONNXZIP_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oz_buf {
    uint8_t *p;
    size_t len, cap;
} oz_buf;

/* Ensures room for `extra` more bytes. Returns 0 or ONNXZIP_ENOMEM. */
int oz_buf_reserve(oz_buf *b, size_t extra);
int oz_buf_append(oz_buf *b, const void *data, size_t n);
int oz_buf_varint(oz_buf *b, uint64_t v);

/* Appends the text vprintf would write, without its NUL. Returns 0,
 * ONNXZIP_ENOMEM, or ONNXZIP_EINVAL when vsnprintf fails. */
#if defined(__MINGW32__) /* C99 formats (__USE_MINGW_ANSI_STDIO), not msvcrt's */
__attribute__((format(gnu_printf, 2, 0)))
#elif defined(__GNUC__)
__attribute__((format(printf, 2, 0)))
#endif
int oz_buf_vprintf(oz_buf *b, const char *fmt, va_list ap);
void oz_buf_free(oz_buf *b);

/* Encodes v as a protobuf varint into out (>= 10 bytes); returns its length. */
size_t oz_varint_encode(uint8_t *out, uint64_t v);

#endif
