/* The thread's last error: status, message, offset (libgit2-style). */
#include <stdio.h>

#include "internal.h"

static _Thread_local struct {
    onnxzip_error_info info;
    char message[1024];
} last = { { ONNXZIP_OK, "no error", -1 }, "no error" };

int oz_err(int status, int64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last.message, sizeof last.message, fmt, ap);
    va_end(ap);
    last.info.status = status;
    last.info.message = last.message;
    last.info.offset = offset;
    return status;
}

const onnxzip_error_info *onnxzip_last_error(void)
{
    return &last.info;
}

const char *onnxzip_strerror(int status)
{
    switch (status) {
#define OZ_STRERROR_(name, value, desc) case value: return desc;
        ONNXZIP_STATUS_MAP(OZ_STRERROR_)
#undef OZ_STRERROR_
    }
    return "unknown error";
}

const char *onnxzip_status_name(int status)
{
    switch (status) {
#define OZ_STATUS_NAME_(name, value, desc) case value: return "ONNXZIP_" #name;
        ONNXZIP_STATUS_MAP(OZ_STATUS_NAME_)
#undef OZ_STATUS_NAME_
    }
    return "ONNXZIP_UNKNOWN";
}

char *oz_printable(const void *s, size_t n, char *out, size_t cap)
{
    const unsigned char *p = s;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o + 8 >= cap) {
            memcpy(out + o, "...", 4);
            return out;
        }
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\'' && p[i] != '\\')
            out[o++] = (char)p[i];
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", p[i]);
    }
    out[o] = '\0';
    return out;
}
