/* Temporary file beside a path, then rename: see atomic_file.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "common/internal.h"
#include "common/outputs.h"

int oz_open_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = !slash ? strdup(".") : slash == path ? strdup("/") : oz_strndup(path, (size_t)(slash - path));
    if (!dir) return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    return fd;
}

int oz_tmp_claim(int dirfd, const char *name, int fd)
{
    while (flock(fd, LOCK_EX)) /* blocks only while a sweeper examines it */
        if (errno != EINTR) return 0; /* no flock here: sweepers cannot take it either */
    struct stat mine, there;
    if (fstat(fd, &mine) || fstatat(dirfd, name, &there, AT_SYMLINK_NOFOLLOW)) return 1;
    return oz_same_stat(&mine, &there) ? 0 : 1;
}

static int matches(const char *name, const char *prefix, size_t plen, size_t tail)
{
    if (strncmp(name, prefix, plen) || strlen(name + plen) != tail) return 0;
    for (const char *c = name + plen; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))) return 0;
    return 1;
}

/* Empties a stale temporary directory: only files are expected in it. */
static void empty_dir(int fd)
{
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0) close(dup_fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(fd, e->d_name, 0);
    closedir(d);
}

void oz_tmp_sweep(int dirfd, const char *prefix, size_t tail, int dirs)
{
    int list_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
    if (!d) {
        if (list_fd >= 0) close(list_fd);
        return;
    }
    size_t plen = strlen(prefix);
    for (struct dirent *e; (e = readdir(d));) {
        if (!matches(e->d_name, prefix, plen, tail)) continue;
        int fd = openat(dirfd, e->d_name,
                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (dirs ? O_DIRECTORY : 0));
        if (fd < 0) continue;
        struct stat st, there;
        /* Locked: a live writer. Taken: its creator died; it is still the
         * entry we opened (not one created since), so remove it, lock held. */
        if (!fstat(fd, &st) && (dirs ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) && !flock(fd, LOCK_EX | LOCK_NB) &&
            !fstatat(dirfd, e->d_name, &there, AT_SYMLINK_NOFOLLOW) && oz_same_stat(&st, &there)) {
            if (dirs) empty_dir(fd);
            unlinkat(dirfd, e->d_name, dirs ? AT_REMOVEDIR : 0);
        }
        close(fd);
    }
    closedir(d);
}

int oz_tmp_create(const char *path, char **tmp, int *fd)
{
    *tmp = NULL;
    *fd = -1;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    size_t cap = strlen(path) + 64;
    int rc = oz_output_check(AT_FDCWD, NULL, path, NULL, 0); /* no device, FIFO, directory... replaced */
    if (rc) return rc;
    char *name = malloc(cap);
    if (!name) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int dirfd = oz_open_parent(path);
    if (dirfd < 0) {
        free(name);
        return oz_err(ONNXZIP_EIO, -1, "%s: cannot open its directory: %s", path, strerror(errno));
    }
    snprintf(name, cap, ".%s.tmp-", base);
    oz_tmp_sweep(dirfd, name, OZ_TMP_FILE_TAIL, 0); /* stale ones of dead writers */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        unsigned long r = (unsigned long)getpid() * 2654435761u ^ (unsigned long)ts.tv_nsec ^
                          (unsigned long)ts.tv_sec ^ attempt * 40503u ^ (unsigned long)(uintptr_t)tmp;
        snprintf(name, cap, "%.*s.%s.tmp-%08lx", dirlen, path, base, r & 0xffffffffu);
        *fd = openat(dirfd, name + dirlen, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666); /* read back to hash */
        if (*fd >= 0 && oz_tmp_claim(dirfd, name + dirlen, *fd)) { /* swept before we locked it */
            close(*fd);
            *fd = -1;
            errno = EEXIST;
        }
        if (*fd >= 0) {
            close(dirfd);
            *tmp = name;
            return 0;
        }
        if (errno != EEXIST) break;
    }
    int e = errno;
    close(dirfd);
    rc = oz_err(ONNXZIP_EIO, -1, "%s: cannot create a temporary file beside it (%s): %s", path, name,
                strerror(e));
    free(name); /* never created: nothing to remove */
    return rc;
}

void oz_sync_parent(const char *path)
{
    int fd = oz_open_parent(path);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

int oz_pwrite_full(int fd, const void *data, size_t n, uint64_t off)
{
    const uint8_t *p = data;
    while (n) {
        ssize_t k = pwrite(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0) errno = ENOSPC;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

int oz_atomic_open(const char *path, oz_atomic_file *af)
{
    if (!af) return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_open: NULL argument");
    *af = (oz_atomic_file){ .fd = -1 };
    if (!path || !*path) return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_open: empty path");
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: not a file name", path);
    if (!(af->path = strdup(path))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int rc = oz_tmp_create(path, &af->tmp, &af->fd);
    if (rc) oz_atomic_abort(af); /* releases path; no temporary was left */
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

int oz_atomic_commit(oz_atomic_file *af)
{
    if (!af || af->fd < 0 || !af->tmp) {
        oz_atomic_abort(af);
        return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_commit: file not open");
    }
    const char *what = NULL;
    int e = 0;
    if (fsync(af->fd)) what = "cannot sync the temporary file", e = errno;
    int rc = what ? 0 : oz_output_check(AT_FDCWD, NULL, af->path, NULL, 0); /* it may have changed since open */
    if (rc) {
        oz_atomic_abort(af);
        return rc;
    }
    /* Renamed while still open, so that its lock keeps sweepers away. */
    if (!what && rename(af->tmp, af->path)) what = "cannot rename the temporary file into place", e = errno;
    if (what) {
        rc = oz_err(ONNXZIP_EIO, -1, "%s: %s (%s): %s", af->path, what, af->tmp, strerror(e));
        oz_atomic_abort(af);
        return rc;
    }
    close(af->fd); /* synced: a close error could lose nothing */
    af->fd = -1;
    free(af->tmp);
    af->tmp = NULL; /* renamed: nothing left to remove */
    oz_sync_parent(af->path);
    oz_atomic_abort(af);
    return 0;
}

void oz_atomic_abort(oz_atomic_file *af)
{
    if (!af) return;
    if (af->tmp) { /* fd is ours only while a temporary file exists */
        unlink(af->tmp); /* before closing: still locked */
        if (af->fd >= 0) close(af->fd);
    }
    free(af->tmp);
    free(af->path);
    *af = (oz_atomic_file){ .fd = -1 };
}
