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
enum { OZ_KIND_OTHER, OZ_KIND_REG, OZ_KIND_DIR, OZ_KIND_LINK, OZ_KIND_CHR, OZ_KIND_BLK, OZ_KIND_FIFO, OZ_KIND_SOCK };
typedef struct oz_stat {
    uint64_t size;
    uint64_t dev, ino; /* together name the file */
    uint64_t mtime_ns; /* modification time, nanoseconds */
    uint64_t nlink;    /* hard links */
    int kind;          /* OZ_KIND_* (OZ_KIND_REG: a regular file) */
} oz_stat;
int oz_sys_fstat(int fd, oz_stat *st);
/* Follows symbolic links, as stat(2). */
int oz_sys_stat(const char *path, oz_stat *st);

/* Opens `path` read-only; the descriptor is not inherited by children. A
 * FIFO is opened without waiting for a writer (O_NONBLOCK), so that callers
 * refuse it by its kind instead of hanging. */
int oz_sys_open_read(const char *path);
/* Opens `path` for reading and writing, not inherited, without waiting for
 * a FIFO's writer (O_NONBLOCK: no effect on a regular file). */
int oz_sys_open_rw(const char *path);
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

/* Opens the file `path` names, following symbolic links, only if the
 * directory it really lies in is one of the `n` directories `dirs` (by
 * device and inode) or below one of them at any depth: found by walking
 * ".." up from the opened directory of the file's real path, so that a name
 * changed meanwhile cannot mislead it; the file itself is then opened in
 * that directory without following a link, read-only, not inherited, and
 * never waiting for a FIFO's writer. *real: the file's real path
 * (realpath(3); malloc'd, the caller frees it) once resolved, else NULL.
 * -1 with errno: EXDEV when outside every directory, realpath's or open's
 * errno (ENOENT: a dangling link). Windows: -1, ENOSYS (links not followed). */
int oz_sys_open_resolved(const char *path, const oz_stat *dirs, size_t n, char **real);

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

/* Writers: files and directories named relative to an open directory, as
 * POSIX's *at() calls do, so that a parent renamed or replaced meanwhile
 * cannot redirect a writer. A directory descriptor is an int like a file's
 * (on Windows a C runtime descriptor over a directory handle, its names
 * resolved against the handle's final path). OZ_AT_CWD: the working
 * directory (names as given). Each returns -1 with errno on failure. */
#define OZ_AT_CWD (-100)

/* Opens the directory `path` for the calls below and oz_sys_sync(). */
int oz_sys_dir_fd(const char *path);
/* The same for the directory holding the file `path`: its part up to the
 * last separator ('/', on Windows '\\' too), that separator kept ("/" and
 * "C:\\" are directories as they are); "." when there is none. */
int oz_sys_parent_fd(const char *path);
/* The subdirectory `name` of `dirfd`, refusing a symbolic link (ELOOP or
 * ENOTDIR). */
int oz_sys_dir_fd_at(int dirfd, const char *name);
/* Creates `name` in `dirfd` for reading and writing (EEXIST when anything is
 * there, a dangling link too; mode 0666 & ~umask), not inherited by children,
 * renamable and removable while open. */
int oz_sys_create_at(int dirfd, const char *name);
/* Opens `name` in `dirfd` read-only without following a symbolic link and
 * without waiting for a FIFO's writer; `dir` set: only a directory. */
int oz_sys_open_at(int dirfd, const char *name, int dir);
/* stat(2) of `name` in `dirfd`; `follow` 0: a symbolic link itself
 * (OZ_KIND_LINK). */
int oz_sys_stat_at(int dirfd, const char *name, int follow, oz_stat *st);
/* Creates the directory `name` in `dirfd`, mode 0700 (EEXIST when taken). */
int oz_sys_mkdir_at(int dirfd, const char *name);
/* The same, mode 0777 & ~umask as mkdir(1) (an output's parents, mkdirs.h);
 * on Windows the same as oz_sys_mkdir_at (permissions inherited). */
int oz_sys_mkdir_umask_at(int dirfd, const char *name);
/* Removes the file (or, `dir` set, the empty directory) `name`. */
int oz_sys_unlink_at(int dirfd, const char *name, int dir);
/* Renames `from` in `from_dir` to `to` in `to_dir`, replacing an existing
 * file atomically (Windows: MoveFileExW, MOVEFILE_REPLACE_EXISTING |
 * MOVEFILE_WRITE_THROUGH). */
int oz_sys_rename_at(int from_dir, const char *from, int to_dir, const char *to);
/* Calls fn for each entry of `dirfd` but "." and "..", until it returns
 * non-zero (that value is returned; 0 when the listing ended). */
int oz_sys_list_dir(int dirfd, int (*fn)(void *user, const char *name), void *user);

/* An exclusive lock on the whole file `fd` (flock(2)), held until it is
 * closed; `wait` 0: EWOULDBLOCK at once when another holds it. ENOLCK where
 * such locks do not exist (a Windows directory). On Windows, a LockFileEx
 * lock of one byte past any file's end, so that no read or write is barred. */
int oz_sys_lock_file(int fd, int wait);

/* fsync(2) (Windows: FlushFileBuffers; a directory needs none there). */
int oz_sys_sync(int fd);
/* fsyncs the directory holding `path`, so that a rename into it (or a
 * directory made in it) is durable. Best effort: the rename already
 * happened. Windows: nothing to do (see oz_sys_sync). */
void oz_sys_sync_parent(const char *path);
/* ftruncate(2). */
int oz_sys_truncate(int fd, uint64_t size);
/* pwrite(2) and write(2): fewer bytes than asked only on a full disk. */
ssize_t oz_sys_pwrite(int fd, const void *buf, size_t n, int64_t off);
ssize_t oz_sys_write(int fd, const void *buf, size_t n);
/* lseek(2); `whence`: SEEK_SET, SEEK_CUR or SEEK_END of <stdio.h>. */
int64_t oz_sys_seek(int fd, int64_t off, int whence);
/* The absolute path of `path` with every symbolic link resolved (realpath(3);
 * Windows: the final path of the file, without its "\\?\\" prefix); malloc'd. */
char *oz_sys_realpath(const char *path);
/* A number that differs between calls, processes and runs (temporary
 * names; no cryptographic strength). */
uint64_t oz_sys_nonce(void);

#endif
