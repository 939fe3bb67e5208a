/* Text from archives (entry and tensor names, paths) made safe to show:
 * as JSON string literals, and for terminals. Names are untrusted bytes. */
#ifndef ONNXZIP_ESCAPE_H
#define ONNXZIP_ESCAPE_H

#include <stddef.h>

#include "common/buf.h"

/* Length of the well-formed UTF-8 sequence at p (1..4; NUL-terminated), or 0
 * when p starts none or starts a C1 control character (U+0080..U+009F).
 * Never reads past a NUL: every check fails on it first. */
size_t oz_text_len(const unsigned char *p);

/* Appends `s` as a JSON string literal: quotes, backslashes and control
 * characters escaped, bytes that are not UTF-8 as \ufffd, so that any bytes
 * give valid JSON; NULL appends null. Returns 0 or ONNXZIP_ENOMEM. */
int oz_buf_json_string(oz_buf *b, const char *s);

/* Appends `s` for a terminal: control characters (C0, DEL, C1) and bytes
 * that are not UTF-8 as \xNN, "" for the empty string, - for NULL; *cols
 * (when not NULL) gets the columns used (approximate for wide characters).
 * With b NULL only measures. Returns 0 or ONNXZIP_ENOMEM. */
int oz_buf_text(oz_buf *b, const char *s, size_t *cols);

#endif
