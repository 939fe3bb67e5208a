/* The system layer of the WebAssembly build (sys.h; sys.c is POSIX's,
 * sys_win32.c Windows'): no files. Its handles come from
 * onnxzip_open_host(), whose bytes the host reads: they own no descriptor
 * or mapping. The reader's file paths (external data, a view's archive)
 * never run there; if one did, it fails with ENOSYS and the caller's error
 * names the file. */
#include <errno.h>

#include "common/sys.h"

static int nosys(void)
{
    errno = ENOSYS;
    return -1;
}

ssize_t oz_sys_pread_nowait(int fd, void *buf, size_t n, int64_t off)
{
    return nosys();
}

ssize_t oz_sys_pread(int fd, void *buf, size_t n, int64_t off)
{
    return nosys();
}

void oz_sys_unmap(const void *p, uint64_t len)
{
}

/* No directory is ever opened here (oz_extdata_free() of a handle that has none). */
void oz_sys_dir_close(oz_dir *d)
{
}

int oz_sys_fstat(int fd, oz_stat *st)
{
    return nosys();
}

int oz_sys_stat(const char *path, oz_stat *st)
{
    return nosys();
}

int oz_sys_stat_at(int dirfd, const char *name, int follow, oz_stat *st)
{
    return nosys();
}

int oz_sys_close(int fd)
{
    return nosys();
}

int oz_sys_open_beneath(const oz_dir *d, char *path)
{
    return nosys();
}

int oz_sys_open_resolved(const char *path, const oz_stat *dirs, size_t n, char **real)
{
    *real = NULL;
    return nosys();
}

void *oz_sys_map(int fd, uint64_t off, uint64_t len)
{
    nosys();
    return NULL;
}

void oz_sys_advise_file(int fd, uint64_t off, uint64_t len, int advice)
{
}

char *oz_sys_realpath(const char *path)
{
    nosys();
    return NULL;
}
