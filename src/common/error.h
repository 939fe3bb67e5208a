/* The thread's last error (onnxzip_last_error()): every failing internal
 * function records it with oz_err() and returns the status. */
#ifndef ONNXZIP_ERROR_H
#define ONNXZIP_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "onnxzip/onnxzip.h"

/* Records the thread's last error (message formatted as printf) and returns
 * `status`. */
#if defined(__MINGW32__) /* C99 formats (__USE_MINGW_ANSI_STDIO), not msvcrt's */
__attribute__((format(gnu_printf, 3, 4)))
#elif defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int oz_err(int status, int64_t offset, const char *fmt, ...);

/* oz_err() for the failure of a system call (open, stat, read, write...):
 * also records errno, read before anything else, as the error's sys_errno,
 * and `path`, the file the call was about (copied; NULL if none). The
 * message still says the cause itself (strerror). */
#if defined(__MINGW32__)
__attribute__((format(gnu_printf, 4, 5)))
#elif defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int oz_err_sys(int status, int64_t offset, const char *path, const char *fmt, ...);

/* As oz_err_sys() with the errno given: one saved before other calls, or
 * the errno a call would have failed with (EISDIR: a directory where a file
 * is expected, found by stat rather than by a failing call). */
#if defined(__MINGW32__)
__attribute__((format(gnu_printf, 5, 6)))
#elif defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
int oz_err_errno(int sys_errno, int status, int64_t offset, const char *path, const char *fmt, ...);

/* An input at `path` that is not a regular file (`kind`: OZ_KIND_*, of
 * sys.h): ONNXZIP_ENOTREG, with sys_errno EISDIR for a directory (what
 * reading it would fail with), as for an output (outputs.c). */
int oz_err_not_regular(const char *path, int kind);

/* After a failed oz_sys_map*() of `len` bytes of `what` (errno set):
 * ONNXZIP_ELIMIT when the file is larger than this process can map (EFBIG,
 * ENOMEM, EOVERFLOW: a 32-bit address space, a ulimit -v), else ONNXZIP_EIO.
 * The message names `what`, the size and the cause; errno is kept as the
 * error's sys_errno, `what` as its path. */
int oz_err_map(const char *what, uint64_t len);

/* Copies at most `n` bytes of a name from untrusted input into `out` as
 * printable text (non-printable bytes as \xHH, long names cut with "..."),
 * so that error messages stay one readable line. Returns out. */
char *oz_printable(const void *s, size_t n, char *out, size_t cap);
#define OZ_PRINTABLE_CAP 96

/* Calls progress(user, done, total) unless it is NULL; returns 0, or
 * ONNXZIP_ECANCELED (recorded) when the callback called onnxzip_cancel(). */
int oz_progress(void (*progress)(void *, uint64_t, uint64_t), void *user, uint64_t done, uint64_t total);

#endif
