/* The system layer: each call the library makes beyond POSIX.1-2008, with a
 * portable fallback chosen at build time (meson checks, OZ_HAVE_* = 0/1) and
 * at run time (a kernel or file system that refuses the call). Meson's
 * -Dsystem_fallbacks=true builds every fallback on Linux too, as on macOS
 * and the BSDs, so that CI runs the whole suite over them. */
#ifndef ONNXZIP_SYS_H
#define ONNXZIP_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* copy_file_range(2) from (in, *ioff) to (out, *ooff), advancing both.
 * Fallback: -1 with errno ENOSYS (callers then copy through a buffer). */
ssize_t oz_sys_copy_file_range(int in, int64_t *ioff, int out, int64_t *ooff, size_t n);

/* lseek(2) with SEEK_DATA (`hole` 0) or SEEK_HOLE (1). Fallback: -1 with
 * errno EINVAL (callers then take the whole file as data). */
int64_t oz_sys_seek_data(int fd, int64_t off, int hole);

/* pread(2) that fails with EAGAIN rather than wait for the disk (preadv2
 * RWF_NOWAIT). Fallback: -1 with errno ENOSYS (callers then use pread). */
ssize_t oz_sys_pread_nowait(int fd, void *buf, size_t n, int64_t off);

/* Reserves [off, off + len) without changing the file's size
 * (fallocate FALLOC_FL_KEEP_SIZE). 0, or -1 with errno; EOPNOTSUPP where
 * neither the system nor the file system can (callers then write zeros). */
int oz_sys_reserve(int fd, uint64_t off, uint64_t len);

/* Files: descriptors (int) and UTF-8 paths, whatever the host's own kinds.
 * Each returns -1 (or NULL) with errno on failure. */

/* What the library compares of a file. */
typedef struct oz_stat {
    uint64_t size;
    uint64_t dev, ino; /* together name the file */
    uint64_t mtime_ns; /* modification time, nanoseconds */
    uint64_t nlink;    /* hard links */
    int regular;       /* a regular file */
} oz_stat;
int oz_sys_fstat(int fd, oz_stat *st);
/* Follows symbolic links, as stat(2). */
int oz_sys_stat(const char *path, oz_stat *st);

/* Opens `path` read-only; the descriptor is not inherited by children. */
int oz_sys_open_read(const char *path);
/* A second descriptor of the same open file, not inherited. */
int oz_sys_dup(int fd);
/* pread(2): fewer bytes than asked only at the end of the file. */
ssize_t oz_sys_pread(int fd, void *buf, size_t n, int64_t off);
int oz_sys_close(int fd);

/* A directory opened to resolve names below it (O_PATH where it exists). */
typedef struct oz_dir oz_dir;
oz_dir *oz_sys_dir_open(const char *path);
void oz_sys_dir_close(oz_dir *d);

/* Opens `path` below the directory `d` for reading, refusing symbolic
 * links and any resolution outside it (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), and never waiting for a FIFO's writer. Fallback, and
 * on kernels before 5.6: one component at a time with O_NOFOLLOW. -1 with
 * errno (ELOOP for a link, EXDEV outside). `path` is used as scratch. */
int oz_sys_open_beneath(const oz_dir *d, char *path);

/* Locks one byte of `fd`, waiting: an open file description lock
 * (F_OFD_SETLKW), private to this descriptor. Fallback: a classic POSIX
 * record lock (F_SETLKW), owned by the process, so two handles in one
 * process do not exclude each other (spec 15.5). */
enum { OZ_LOCK_SHARED, OZ_LOCK_EXCLUSIVE, OZ_LOCK_UNLOCK };
void oz_sys_lock_byte(int fd, int type, int64_t byte);

/* Maps [off, off + len) of `fd` read-only and shared (off a multiple of the
 * page size). NULL with errno EFBIG when len does not fit in size_t (a
 * 32-bit host), or mmap's errno (ENOMEM: no room in the address space). */
void *oz_sys_map(int fd, uint64_t off, uint64_t len);

/* oz_sys_map() of a whole file of `len` bytes at an address that is a
 * multiple of `align` (a power of two) when there is room to choose one. */
void *oz_sys_map_aligned(int fd, uint64_t len, size_t align);

/* Unmaps what oz_sys_map*() returned (NULL: nothing). */
void oz_sys_unmap(const void *p, uint64_t len);

/* Access hints for a mapping or a file (no effect where unsupported). */
enum { OZ_ADV_NORMAL, OZ_ADV_RANDOM, OZ_ADV_SEQUENTIAL, OZ_ADV_WILLNEED, OZ_ADV_DONTNEED, OZ_ADV_HUGEPAGE,
       OZ_ADV_POPULATE };
void oz_sys_advise_map(void *p, size_t len, int advice);
/* [off, off + len) of a file; len 0: to the end. */
void oz_sys_advise_file(int fd, uint64_t off, uint64_t len, int advice);

#endif
