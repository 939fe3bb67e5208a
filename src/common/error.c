/* The thread's last error: status, message, offset (libgit2-style). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/escape.h"
#include "common/internal.h"
#include "common/sys.h"

static _Thread_local struct {
    onnxzip_error_info info;
    char message[1024];
    char path[1024];
} last = { { ONNXZIP_OK, "no error", -1, 0, NULL }, "no error", "" };

/* Copies a formatted message, writing control characters (C0, DEL, C1) and
 * bytes that are not UTF-8 as \xHH, so that a path or name quoted from
 * anywhere keeps the message one line that cannot drive a terminal. Done here
 * once for every message; text from oz_printable() has no such byte, so it
 * passes unchanged (never escaped twice), and ordinary text is untouched. */
static void escape_message(const char *in, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t o = 0;
    while (*p) {
        size_t n = oz_text_len(p);
        int ctl = n == 0 || *p < 0x20 || *p == 0x7f;
        size_t need = ctl ? 4 : n;
        if (o + need + 4 > cap) {
            memcpy(out + o, "...", 4);
            return;
        }
        if (ctl)
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p++);
        else
            for (size_t i = 0; i < n; i++) out[o++] = (char)*p++;
    }
    out[o] = '\0';
}

/* The one place the last error is recorded: every oz_err*() ends here. */
#if defined(__MINGW32__)
__attribute__((format(gnu_printf, 5, 0)))
#elif defined(__GNUC__)
__attribute__((format(printf, 5, 0)))
#endif
static int record(int status, int64_t offset, int sys_errno, const char *path, const char *fmt, va_list ap)
{
    char raw[sizeof last.message];
    vsnprintf(raw, sizeof raw, fmt, ap);
    escape_message(raw, last.message, sizeof last.message);
    last.info.status = status;
    last.info.message = last.message;
    last.info.offset = offset;
    last.info.sys_errno = sys_errno;
    last.info.path = NULL;
    if (path) {
        snprintf(last.path, sizeof last.path, "%s", path); /* the caller's string may not outlive the call */
        last.info.path = last.path;
    }
    return status;
}

int oz_err(int status, int64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(status, offset, 0, NULL, fmt, ap);
    va_end(ap);
    return status;
}

int oz_err_sys(int status, int64_t offset, const char *path, const char *fmt, ...)
{
    int e = errno; /* before anything below can change it */
    va_list ap;
    va_start(ap, fmt);
    record(status, offset, e, path, fmt, ap);
    va_end(ap);
    return status;
}

int oz_err_errno(int sys_errno, int status, int64_t offset, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(status, offset, sys_errno, path, fmt, ap);
    va_end(ap);
    return status;
}

int oz_err_map(const char *what, uint64_t len)
{
    int e = errno;
    if (e == EFBIG || e == ENOMEM || e == EOVERFLOW)
        return oz_err_errno(e, ONNXZIP_ELIMIT, -1, what, "%s: cannot map %llu bytes: more than this process's address space "
                      "holds (%zu-bit pointers): %s", what, (unsigned long long)len, sizeof(void *) * 8,
                      e == EFBIG ? "file too large" : strerror(e));
    return oz_err_errno(e, ONNXZIP_EIO, -1, what, "%s: cannot map %llu bytes: %s", what, (unsigned long long)len,
                        strerror(e));
}

int oz_err_not_regular(const char *path, int kind)
{
    if (kind == OZ_KIND_DIR)
        return oz_err_errno(EISDIR, ONNXZIP_ENOTREG, -1, path, "%s: a directory, not a regular file", path);
    return oz_err_errno(0, ONNXZIP_ENOTREG, -1, path, "%s: not a regular file (a device, FIFO or socket)", path);
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

/* Set by onnxzip_cancel() while a progress callback of this thread runs. */
static _Thread_local int cancel_asked;

void onnxzip_cancel(void)
{
    cancel_asked = 1;
}

int oz_progress(void (*progress)(void *, uint64_t, uint64_t), void *user, uint64_t done, uint64_t total)
{
    if (!progress) return 0;
    cancel_asked = 0;
    progress(user, done, total);
    if (!cancel_asked) return 0;
    cancel_asked = 0;
    return oz_err(ONNXZIP_ECANCELED, -1, "canceled by the progress callback");
}
