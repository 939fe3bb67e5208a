/* Temporary file beside a path, then rename: see atomic_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "internal.h"

int oz_atomic_open(const char *path, oz_atomic_file *af)
{
    if (!af) return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_open: NULL argument");
    *af = (oz_atomic_file){ .fd = -1 };
    if (!path || !*path) return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_open: empty path");
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: not a file name", path);
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    size_t cap = strlen(path) + 64;
    af->path = strdup(path);
    af->tmp = malloc(cap);
    if (!af->path || !af->tmp) {
        free(af->tmp);
        af->tmp = NULL; /* nothing created yet */
        oz_atomic_abort(af);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        unsigned long r = (unsigned long)getpid() * 2654435761u ^ (unsigned long)ts.tv_nsec ^
                          (unsigned long)ts.tv_sec ^ attempt * 40503u ^ (unsigned long)(uintptr_t)af;
        snprintf(af->tmp, cap, "%.*s.%s.tmp-%08lx", dirlen, path, base, r & 0xffffffffu);
        af->fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (af->fd >= 0) return 0;
        if (errno != EEXIST) break;
    }
    int e = errno;
    int rc = oz_err(ONNXZIP_EIO, -1, "%s: cannot create a temporary file beside it (%s): %s", path, af->tmp,
                    strerror(e));
    free(af->tmp);
    af->tmp = NULL; /* never created: nothing to remove */
    oz_atomic_abort(af);
    return rc;
}

int oz_atomic_write(oz_atomic_file *af, const void *data, size_t n)
{
    if (!af || af->fd < 0) return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_write: file not open");
    const uint8_t *p = data;
    while (n) {
        ssize_t k = write(af->fd, p, n < (1u << 30) ? n : (1u << 30));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return oz_err(ONNXZIP_EIO, -1, "%s: cannot write the temporary file %s: %s", af->path, af->tmp,
                          k < 0 ? strerror(errno) : "no progress");
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    if (!dir) return; /* the rename happened; durability is best effort here */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

int oz_atomic_commit(oz_atomic_file *af)
{
    if (!af || af->fd < 0 || !af->tmp) {
        oz_atomic_abort(af);
        return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_commit: file not open");
    }
    const char *what = NULL;
    int e = 0;
    if (fsync(af->fd)) what = "cannot sync the temporary file", e = errno;
    int fd = af->fd;
    af->fd = -1;
    if (close(fd) && !what) what = "cannot close the temporary file", e = errno;
    if (!what && rename(af->tmp, af->path)) what = "cannot rename the temporary file into place", e = errno;
    if (what) {
        int rc = oz_err(ONNXZIP_EIO, -1, "%s: %s (%s): %s", af->path, what, af->tmp, strerror(e));
        oz_atomic_abort(af);
        return rc;
    }
    free(af->tmp);
    af->tmp = NULL; /* renamed: nothing left to remove */
    sync_dir(af->path);
    oz_atomic_abort(af);
    return 0;
}

void oz_atomic_abort(oz_atomic_file *af)
{
    if (!af) return;
    if (af->tmp) { /* fd is ours only while a temporary file exists */
        if (af->fd >= 0) close(af->fd);
        unlink(af->tmp);
    }
    free(af->tmp);
    free(af->path);
    *af = (oz_atomic_file){ .fd = -1 };
}
