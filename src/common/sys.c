#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if OZ_HAVE_PREADV2
#include <sys/uio.h>
#endif
#if OZ_HAVE_OPENAT2
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#include "common/sys.h"

ssize_t oz_sys_copy_file_range(int in, int64_t *ioff, int out, int64_t *ooff, size_t n)
{
#if OZ_HAVE_COPY_FILE_RANGE
    loff_t i = (loff_t)*ioff, o = (loff_t)*ooff;
    ssize_t k = copy_file_range(in, &i, out, &o, n, 0);
    *ioff = (int64_t)i, *ooff = (int64_t)o;
    return k;
#else
    (void)in, (void)ioff, (void)out, (void)ooff, (void)n;
    errno = ENOSYS;
    return -1;
#endif
}

int64_t oz_sys_seek_data(int fd, int64_t off, int hole)
{
#if OZ_HAVE_SEEK_DATA
    return (int64_t)lseek(fd, (off_t)off, hole ? SEEK_HOLE : SEEK_DATA);
#else
    (void)fd, (void)off, (void)hole;
    errno = EINVAL;
    return -1;
#endif
}

ssize_t oz_sys_pread_nowait(int fd, void *buf, size_t n, int64_t off)
{
#if OZ_HAVE_PREADV2
    struct iovec v = { buf, n };
    return preadv2(fd, &v, 1, (off_t)off, RWF_NOWAIT);
#else
    (void)fd, (void)buf, (void)n, (void)off;
    errno = ENOSYS;
    return -1;
#endif
}

int oz_sys_reserve(int fd, uint64_t off, uint64_t len)
{
#if OZ_HAVE_FALLOCATE
    int rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
    if (rc && errno == ENOSYS) errno = EOPNOTSUPP;
    return rc;
#else
    (void)fd, (void)off, (void)len;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

struct oz_dir {
    int fd;
};

static uint64_t mtime_ns(const struct stat *st)
{
    return (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

static int kind_of(mode_t m)
{
    return S_ISREG(m) ? OZ_KIND_REG : S_ISDIR(m) ? OZ_KIND_DIR : S_ISLNK(m) ? OZ_KIND_LINK : S_ISCHR(m) ? OZ_KIND_CHR
         : S_ISBLK(m) ? OZ_KIND_BLK : S_ISFIFO(m) ? OZ_KIND_FIFO : S_ISSOCK(m) ? OZ_KIND_SOCK : OZ_KIND_OTHER;
}

static void from_stat(const struct stat *s, oz_stat *st)
{
    *st = (oz_stat){ .size = (uint64_t)s->st_size, .dev = (uint64_t)s->st_dev, .ino = (uint64_t)s->st_ino,
                     .mtime_ns = mtime_ns(s), .nlink = (uint64_t)s->st_nlink, .kind = kind_of(s->st_mode) };
}

int oz_sys_fstat(int fd, oz_stat *st)
{
    struct stat s;
    if (fstat(fd, &s)) return -1;
    from_stat(&s, st);
    return 0;
}

int oz_sys_stat(const char *path, oz_stat *st)
{
    return oz_sys_stat_at(OZ_AT_CWD, path, 1, st);
}

int oz_sys_open_read(const char *path)
{
    /* O_NONBLOCK: a FIFO must not wait for a writer (callers refuse it by
     * its kind after the open); no effect on a regular file. */
    return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

int oz_sys_open_rw(const char *path)
{
    return open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
}

int oz_sys_dup(int fd)
{
    return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

ssize_t oz_sys_pread(int fd, void *buf, size_t n, int64_t off)
{
    return pread(fd, buf, n, (off_t)off);
}

int oz_sys_close(int fd)
{
    return close(fd);
}

oz_dir *oz_sys_dir_open(const char *path)
{
    oz_dir *d = malloc(sizeof *d);
    if (!d) {
        errno = ENOMEM;
        return NULL;
    }
#if OZ_HAVE_O_PATH
    d->fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
    d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
    if (d->fd < 0) {
        int e = errno;
        free(d);
        errno = e;
        return NULL;
    }
    return d;
}

void oz_sys_dir_close(oz_dir *d)
{
    if (!d) return;
    close(d->fd);
    free(d);
}

/* Walks the path one component at a time with O_NOFOLLOW. */
static int open_stepwise(int dirfd, char *path)
{
    int cur = dup(dirfd);
    for (char *c = path; cur >= 0;) {
        char *slash = strchr(c, '/');
        if (slash) *slash = '\0';
        int flags = slash ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK;
        int next = *c ? openat(cur, c, flags | O_NOFOLLOW | O_CLOEXEC) : dup(cur);
        int saved = errno;
        struct stat st; /* a link to a directory fails O_DIRECTORY first: say it is a link */
        if (next < 0 && saved == ENOTDIR && !fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
            saved = ELOOP;
        close(cur);
        errno = saved;
        if (!slash) return next;
        cur = next;
        c = slash + 1;
    }
    return -1;
}

int oz_sys_open_beneath(const oz_dir *d, char *path)
{
#if OZ_HAVE_OPENAT2
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
    int fd = (int)syscall(SYS_openat2, d->fd, path, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd; /* EPERM: seccomp filters */
#endif
    return open_stepwise(d->fd, path);
}

#if OZ_HAVE_O_PATH
#define DIR_SEARCH (O_PATH | O_DIRECTORY | O_CLOEXEC) /* search permission is enough */
#else
#define DIR_SEARCH (O_RDONLY | O_DIRECTORY | O_CLOEXEC)
#endif

static int is_one_of(const struct stat *s, const oz_stat *dirs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (dirs[i].dev == (uint64_t)s->st_dev && dirs[i].ino == (uint64_t)s->st_ino) return 1;
    return 0;
}

/* Whether the open directory `dirfd` is one of `dirs` or below one: up
 * through ".." (never a link) to the root, whose ".." is itself. */
static int is_below(int dirfd, const oz_stat *dirs, size_t n)
{
    int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0), found = 0;
    for (int depth = 0; cur >= 0 && !found && depth < 4096; depth++) {
        struct stat s, u;
        if (fstat(cur, &s)) break;
        if ((found = is_one_of(&s, dirs, n))) break;
        int up = openat(cur, "..", DIR_SEARCH);
        int root = up < 0 || fstat(up, &u) || (u.st_dev == s.st_dev && u.st_ino == s.st_ino);
        close(cur);
        cur = up;
        if (root) break;
    }
    if (cur >= 0) close(cur);
    return found;
}

int oz_sys_open_resolved(const char *path, const oz_stat *dirs, size_t n, char **real)
{
    if (!(*real = realpath(path, NULL))) return -1;
    const char *slash = strrchr(*real, '/'); /* absolute: there is one */
    char *parent = strndup(*real, slash == *real ? 1 : (size_t)(slash - *real));
    if (!parent) {
        errno = ENOMEM;
        return -1;
    }
    int dir = open(parent, DIR_SEARCH), e = errno;
    free(parent);
    if (dir < 0) {
        errno = e;
        return -1;
    }
    int fd = -1;
    if (!is_below(dir, dirs, n)) e = EXDEV;
    else if ((fd = openat(dir, slash + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0) e = errno;
    close(dir);
    errno = e;
    return fd;
}

void oz_sys_lock_byte(int fd, int type, int64_t byte)
{
    short t = type == OZ_LOCK_SHARED ? F_RDLCK : type == OZ_LOCK_EXCLUSIVE ? F_WRLCK : F_UNLCK;
    struct flock l = { .l_type = t, .l_whence = SEEK_SET, .l_start = (off_t)byte, .l_len = 1 };
#if OZ_HAVE_OFD_LOCKS
    while (fcntl(fd, F_OFD_SETLKW, &l) && errno == EINTR) {
    }
#else
    while (fcntl(fd, F_SETLKW, &l) && errno == EINTR) {
    }
#endif
}

/* Page tables filled for the whole mapping now rather than fault by fault:
 * MADV_POPULATE_READ (Linux 5.14), else a read of one byte per page. */
static void populate(const void *p, size_t len)
{
#if OZ_HAVE_MADV_LINUX
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 headers; older kernels answer EINVAL */
#endif
    if (!madvise((void *)p, len, MADV_POPULATE_READ)) return;
#endif
    long page = sysconf(_SC_PAGESIZE);
    size_t step = page > 0 ? (size_t)page : 4096;
    const volatile uint8_t *b = p;
    uint8_t sink = 0;
    for (size_t off = 0; off < len; off += step) sink ^= b[off];
    (void)sink;
}

void oz_sys_advise_map(void *p, size_t len, int advice)
{
    switch (advice) {
    case OZ_ADV_NORMAL: madvise(p, len, MADV_NORMAL); break;
    case OZ_ADV_RANDOM: madvise(p, len, MADV_RANDOM); break;
    case OZ_ADV_SEQUENTIAL: madvise(p, len, MADV_SEQUENTIAL); break;
    case OZ_ADV_WILLNEED: madvise(p, len, MADV_WILLNEED); break;
    case OZ_ADV_DONTNEED: madvise(p, len, MADV_DONTNEED); break; /* Linux: drops the pages from the RSS */
#if OZ_HAVE_MADV_LINUX
    case OZ_ADV_HUGEPAGE: madvise(p, len, MADV_HUGEPAGE); break;
#endif
    case OZ_ADV_POPULATE: populate(p, len); break;
    default: break;
    }
}

void oz_sys_advise_file(int fd, uint64_t off, uint64_t len, int advice)
{
#if OZ_HAVE_POSIX_FADVISE
    int a = advice == OZ_ADV_RANDOM ? POSIX_FADV_RANDOM : advice == OZ_ADV_WILLNEED ? POSIX_FADV_WILLNEED
                                                                                     : POSIX_FADV_NORMAL;
    posix_fadvise(fd, (off_t)off, (off_t)len, a);
#else
    (void)fd, (void)off, (void)len, (void)advice;
#endif
}

void *oz_sys_map(int fd, uint64_t off, uint64_t len)
{
    if (len > SIZE_MAX || off > (uint64_t)INT64_MAX) {
        errno = EFBIG;
        return NULL;
    }
    void *p = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, (off_t)off);
    return p == MAP_FAILED ? NULL : p;
}

/* Reserves len + align bytes of address space, maps the file at the aligned
 * spot inside, returns the rest. */
void *oz_sys_map_aligned(int fd, uint64_t len, size_t align)
{
    if (len > SIZE_MAX - align) return oz_sys_map(fd, 0, len); /* no room to choose */
    size_t size = (size_t)len, room_len = size + align;
    uint8_t *room = mmap(NULL, room_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (room == MAP_FAILED) return oz_sys_map(fd, 0, len);
    uint8_t *at = (uint8_t *)(((uintptr_t)room + align - 1) & ~(uintptr_t)(align - 1));
    void *p = mmap(at, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        munmap(room, room_len);
        errno = e;
        return NULL;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE), end = ((size_t)(at - room) + size + page - 1) & ~(page - 1);
    if (at > room) munmap(room, (size_t)(at - room));
    if (end < room_len) munmap(room + end, room_len - end);
    return p;
}

void oz_sys_unmap(const void *p, uint64_t len)
{
    if (p && len) munmap((void *)(uintptr_t)p, (size_t)len);
}

/* OZ_AT_CWD is this system's AT_FDCWD (-100 on Linux, -2 on macOS). */
static int at(int dirfd)
{
    return dirfd == OZ_AT_CWD ? AT_FDCWD : dirfd;
}

int oz_sys_dir_fd(const char *path)
{
    return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int oz_sys_parent_fd(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : NULL;
    if (slash && !dir) return -1;
    int fd = oz_sys_dir_fd(dir ? dir : ".");
    free(dir);
    return fd;
}

int oz_sys_dir_fd_at(int dirfd, const char *name)
{
    return openat(at(dirfd), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int oz_sys_create_at(int dirfd, const char *name)
{
    return openat(at(dirfd), name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

int oz_sys_open_at(int dirfd, const char *name, int dir)
{
    return openat(at(dirfd), name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
}

int oz_sys_stat_at(int dirfd, const char *name, int follow, oz_stat *st)
{
    struct stat s;
    if (fstatat(at(dirfd), name, &s, follow ? 0 : AT_SYMLINK_NOFOLLOW)) return -1;
    from_stat(&s, st);
    return 0;
}

int oz_sys_mkdir_at(int dirfd, const char *name)
{
    return mkdirat(at(dirfd), name, 0700);
}

int oz_sys_mkdir_umask_at(int dirfd, const char *name)
{
    return mkdirat(at(dirfd), name, 0777);
}

int oz_sys_unlink_at(int dirfd, const char *name, int dir)
{
    return unlinkat(at(dirfd), name, dir ? AT_REMOVEDIR : 0);
}

int oz_sys_rename_at(int from_dir, const char *from, int to_dir, const char *to)
{
    return renameat(at(from_dir), from, at(to_dir), to);
}

int oz_sys_list_dir(int dirfd, int (*fn)(void *user, const char *name), void *user)
{
    int fd = dirfd == OZ_AT_CWD ? open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL; /* owns fd from here */
    if (!d) {
        int e = errno;
        if (fd >= 0) close(fd);
        errno = e;
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) rc = fn(user, e->d_name);
    closedir(d);
    return rc;
}

int oz_sys_lock_file(int fd, int wait)
{
    int rc;
    while ((rc = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) && errno == EINTR) {
    }
    return rc;
}

int oz_sys_sync(int fd)
{
    return fsync(fd);
}

void oz_sys_sync_parent(const char *path)
{
    int fd = oz_sys_parent_fd(path);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

int oz_sys_truncate(int fd, uint64_t size)
{
    if (size > (uint64_t)INT64_MAX) {
        errno = EFBIG;
        return -1;
    }
    return ftruncate(fd, (off_t)size);
}

ssize_t oz_sys_pwrite(int fd, const void *buf, size_t n, int64_t off)
{
    return pwrite(fd, buf, n, (off_t)off);
}

ssize_t oz_sys_write(int fd, const void *buf, size_t n)
{
    return write(fd, buf, n);
}

int64_t oz_sys_seek(int fd, int64_t off, int whence)
{
    return (int64_t)lseek(fd, (off_t)off, whence);
}

uint64_t oz_sys_nonce(void)
{
    static _Atomic uint64_t calls;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)getpid() << 40 ^ (uint64_t)ts.tv_sec << 20 ^ (uint64_t)ts.tv_nsec ^
                 calls++ * 0x9E3779B97F4A7C15u;
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9u, x ^= x >> 29; /* mixed: neighbours differ in every digit */
    return x;
}

char *oz_sys_realpath(const char *path)
{
    return realpath(path, NULL);
}
