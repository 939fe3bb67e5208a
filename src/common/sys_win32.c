/* The system layer on Windows (common/sys.h): C runtime descriptors over
 * Win32 handles, UTF-8 paths converted to UTF-16, CreateFileMapping and
 * MapViewOfFile for mappings (a view's address is a multiple of the 64 KiB
 * allocation granularity, the largest alignment a writer may choose),
 * LockFileEx for the update lock (per handle, like Linux's OFD locks). The
 * calls Linux has beyond POSIX report their fallbacks as sys.c's do. */
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "common/sys.h"

struct oz_dir {
    wchar_t *path; /* no trailing separator */
};

static int errno_of(DWORD e)
{
    switch (e) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND: return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION: return EACCES;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_COMMITMENT_LIMIT: return ENOMEM;
    case ERROR_DIRECTORY: return ENOTDIR;
    case ERROR_HANDLE_EOF: return 0;
    default: return EIO;
    }
}

static int fail_win(void)
{
    errno = errno_of(GetLastError());
    return -1;
}

/* UTF-8 to a malloc'ed UTF-16 string; NULL with errno (EILSEQ: not UTF-8). */
static wchar_t *wide(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
    if (n <= 0) {
        errno = EILSEQ;
        return NULL;
    }
    wchar_t *w = malloc((size_t)n * sizeof *w);
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
    return w;
}

static HANDLE handle_of(int fd)
{
    return (HANDLE)_get_osfhandle(fd);
}

static int fd_of(HANDLE h)
{
    int fd = _open_osfhandle((intptr_t)h, _O_RDONLY | _O_BINARY);
    if (fd < 0) {
        CloseHandle(h);
        errno = EMFILE;
    }
    return fd;
}

ssize_t oz_sys_copy_file_range(int in, int64_t *ioff, int out, int64_t *ooff, size_t n)
{
    (void)in, (void)ioff, (void)out, (void)ooff, (void)n;
    errno = ENOSYS;
    return -1;
}

int64_t oz_sys_seek_data(int fd, int64_t off, int hole)
{
    (void)fd, (void)off, (void)hole;
    errno = EINVAL;
    return -1;
}

ssize_t oz_sys_pread_nowait(int fd, void *buf, size_t n, int64_t off)
{
    (void)fd, (void)buf, (void)n, (void)off;
    errno = ENOSYS;
    return -1;
}

int oz_sys_reserve(int fd, uint64_t off, uint64_t len)
{
    (void)fd, (void)off, (void)len;
    errno = EOPNOTSUPP;
    return -1;
}

static void from_info(const BY_HANDLE_FILE_INFORMATION *i, DWORD type, oz_stat *st)
{
    /* FILETIME: 100 ns units since 1601; only differences are compared */
    uint64_t t = (uint64_t)i->ftLastWriteTime.dwHighDateTime << 32 | i->ftLastWriteTime.dwLowDateTime;
    *st = (oz_stat){ .size = (uint64_t)i->nFileSizeHigh << 32 | i->nFileSizeLow,
                     .dev = i->dwVolumeSerialNumber,
                     .ino = (uint64_t)i->nFileIndexHigh << 32 | i->nFileIndexLow,
                     .mtime_ns = t * 100,
                     .nlink = i->nNumberOfLinks,
                     .regular = type == FILE_TYPE_DISK && !(i->dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) };
}

static int stat_handle(HANDLE h, oz_stat *st)
{
    BY_HANDLE_FILE_INFORMATION i;
    DWORD type = GetFileType(h);
    if (type != FILE_TYPE_DISK) {
        memset(st, 0, sizeof *st); /* a pipe or a console: not a regular file */
        return 0;
    }
    if (!GetFileInformationByHandle(h, &i)) return fail_win();
    from_info(&i, type, st);
    return 0;
}

int oz_sys_fstat(int fd, oz_stat *st)
{
    HANDLE h = handle_of(fd);
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return -1;
    }
    return stat_handle(h, st);
}

static HANDLE open_wide(const wchar_t *w, DWORD access, DWORD flags)
{
    return CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                       flags, NULL);
}

int oz_sys_stat(const char *path, oz_stat *st)
{
    wchar_t *w = wide(path);
    if (!w) return -1;
    HANDLE h = open_wide(w, 0, FILE_FLAG_BACKUP_SEMANTICS); /* directories too */
    free(w);
    if (h == INVALID_HANDLE_VALUE) return fail_win();
    int rc = stat_handle(h, st);
    CloseHandle(h);
    return rc;
}

int oz_sys_open_read(const char *path)
{
    wchar_t *w = wide(path);
    if (!w) return -1;
    HANDLE h = open_wide(w, GENERIC_READ, FILE_ATTRIBUTE_NORMAL);
    free(w);
    return h == INVALID_HANDLE_VALUE ? fail_win() : fd_of(h);
}

int oz_sys_dup(int fd)
{
    HANDLE h = handle_of(fd), d;
    if (h == INVALID_HANDLE_VALUE ||
        !DuplicateHandle(GetCurrentProcess(), h, GetCurrentProcess(), &d, 0, FALSE, DUPLICATE_SAME_ACCESS))
        return fail_win();
    return fd_of(d);
}

ssize_t oz_sys_pread(int fd, void *buf, size_t n, int64_t off)
{
    HANDLE h = handle_of(fd);
    OVERLAPPED o = { 0 };
    o.Offset = (DWORD)(uint64_t)off;
    o.OffsetHigh = (DWORD)((uint64_t)off >> 32);
    DWORD got = 0, want = n > 0x40000000 ? 0x40000000 : (DWORD)n;
    if (!ReadFile(h, buf, want, &got, &o)) {
        if (GetLastError() == ERROR_HANDLE_EOF) return 0;
        return fail_win();
    }
    return (ssize_t)got;
}

int oz_sys_close(int fd)
{
    return _close(fd);
}

oz_dir *oz_sys_dir_open(const char *path)
{
    wchar_t *w = wide(path);
    if (!w) return NULL;
    DWORD a = GetFileAttributesW(w);
    if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_DIRECTORY)) {
        errno = a == INVALID_FILE_ATTRIBUTES ? errno_of(GetLastError()) : ENOTDIR;
        free(w);
        return NULL;
    }
    size_t n = wcslen(w);
    while (n > 1 && (w[n - 1] == L'/' || w[n - 1] == L'\\')) w[--n] = L'\0';
    oz_dir *d = malloc(sizeof *d);
    if (!d) {
        free(w);
        errno = ENOMEM;
        return NULL;
    }
    d->path = w;
    return d;
}

void oz_sys_dir_close(oz_dir *d)
{
    if (!d) return;
    free(d->path);
    free(d);
}

/* Component by component below d: each must exist and be no reparse point
 * (symbolic link or junction); the last is opened without following one.
 * Backslashes, drive letters and stream names (':') could leave the
 * directory on Windows: refused as EXDEV. */
int oz_sys_open_beneath(const oz_dir *d, char *path)
{
    if (strchr(path, '\\') || strchr(path, ':')) {
        errno = EXDEV;
        return -1;
    }
    wchar_t *rel = wide(path);
    if (!rel) return -1;
    size_t nd = wcslen(d->path), nr = wcslen(rel);
    wchar_t *full = malloc((nd + 1 + nr + 1) * sizeof *full);
    if (!full) {
        free(rel);
        errno = ENOMEM;
        return -1;
    }
    memcpy(full, d->path, nd * sizeof *full);
    full[nd] = L'\\';
    size_t at = nd + 1;
    int rc = 0;
    for (wchar_t *c = rel; !rc;) {
        wchar_t *slash = wcschr(c, L'/');
        size_t n = slash ? (size_t)(slash - c) : wcslen(c);
        memcpy(full + at, c, n * sizeof *full);
        at += n;
        full[at] = L'\0';
        DWORD a = GetFileAttributesW(full);
        if (a == INVALID_FILE_ATTRIBUTES) rc = fail_win();
        else if (a & FILE_ATTRIBUTE_REPARSE_POINT) errno = ELOOP, rc = -1;
        else if (slash && !(a & FILE_ATTRIBUTE_DIRECTORY)) errno = ENOTDIR, rc = -1;
        if (!slash) break;
        full[at++] = L'\\';
        c = slash + 1;
    }
    HANDLE h = rc ? INVALID_HANDLE_VALUE : open_wide(full, GENERIC_READ, FILE_FLAG_OPEN_REPARSE_POINT);
    if (!rc && h == INVALID_HANDLE_VALUE) rc = fail_win();
    free(rel);
    free(full);
    return rc ? -1 : fd_of(h);
}

void oz_sys_lock_byte(int fd, int type, int64_t byte)
{
    HANDLE h = handle_of(fd);
    OVERLAPPED o = { 0 };
    o.Offset = (DWORD)(uint64_t)byte;
    o.OffsetHigh = (DWORD)((uint64_t)byte >> 32);
    if (type == OZ_LOCK_UNLOCK) {
        UnlockFileEx(h, 0, 1, 0, &o); /* fails harmlessly when not held */
        return;
    }
    LockFileEx(h, type == OZ_LOCK_EXCLUSIVE ? LOCKFILE_EXCLUSIVE_LOCK : 0, 0, 1, 0, &o);
}

void oz_sys_advise_map(void *p, size_t len, int advice)
{
    if (advice != OZ_ADV_POPULATE) return; /* no equivalent hints worth a dependency */
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    const volatile uint8_t *b = p;
    uint8_t sink = 0;
    for (size_t off = 0; off < len; off += si.dwPageSize) sink ^= b[off];
    (void)sink;
}

void oz_sys_advise_file(int fd, uint64_t off, uint64_t len, int advice)
{
    (void)fd, (void)off, (void)len, (void)advice;
}

void *oz_sys_map(int fd, uint64_t off, uint64_t len)
{
    if (len > SIZE_MAX || len == 0) {
        errno = len ? EFBIG : EINVAL;
        return NULL;
    }
    HANDLE m = CreateFileMappingW(handle_of(fd), NULL, PAGE_READONLY, 0, 0, NULL);
    if (!m) {
        fail_win();
        return NULL;
    }
    void *p = MapViewOfFile(m, FILE_MAP_READ, (DWORD)(off >> 32), (DWORD)off, (SIZE_T)len);
    if (!p) fail_win();
    CloseHandle(m); /* the view keeps the mapping */
    return p;
}

void *oz_sys_map_aligned(int fd, uint64_t len, size_t align)
{
    (void)align; /* views start on the 64 KiB allocation granularity */
    return oz_sys_map(fd, 0, len);
}

void oz_sys_unmap(const void *p, uint64_t len)
{
    (void)len;
    if (p) UnmapViewOfFile(p);
}
