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
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS: return EEXIST;
    case ERROR_DIR_NOT_EMPTY: return ENOTEMPTY;
    case ERROR_LOCK_VIOLATION: return EWOULDBLOCK;
    case ERROR_USER_MAPPED_FILE: return EBUSY; /* shortening a file another view maps */
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL: return ENOSPC;
    case ERROR_INVALID_NAME: return EINVAL;
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

static int fd_of_flags(HANDLE h, int flags)
{
    int fd = _open_osfhandle((intptr_t)h, flags | _O_BINARY);
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

static int fd_of(HANDLE h)
{
    return fd_of_flags(h, _O_RDONLY);
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
                     .kind = type != FILE_TYPE_DISK ? OZ_KIND_OTHER
                           : i->dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY ? OZ_KIND_DIR : OZ_KIND_REG };
}

static int stat_handle(HANDLE h, oz_stat *st)
{
    BY_HANDLE_FILE_INFORMATION i;
    DWORD type = GetFileType(h);
    if (type != FILE_TYPE_DISK) {
        memset(st, 0, sizeof *st); /* a pipe or a console: not a regular file */
        st->kind = type == FILE_TYPE_PIPE ? OZ_KIND_FIFO : type == FILE_TYPE_CHAR ? OZ_KIND_CHR : OZ_KIND_OTHER;
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
    return oz_sys_stat_at(OZ_AT_CWD, path, 1, st);
}

int oz_sys_open_read(const char *path)
{
    wchar_t *w = wide(path);
    if (!w) return -1;
    HANDLE h = open_wide(w, GENERIC_READ, FILE_FLAG_BACKUP_SEMANTICS); /* a directory too, as open(2) */
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

/* The writers' calls: a directory descriptor is a C runtime descriptor over a
 * directory handle; a name in it is resolved against the handle's final path
 * (the directory wherever it is now, as openat() would find it). */

static wchar_t *join_wide(const wchar_t *dir, const char *name)
{
    wchar_t *w = wide(name);
    if (!w || !dir) return w;
    size_t nd = wcslen(dir), nn = wcslen(w);
    wchar_t *full = malloc((nd + 1 + nn + 1) * sizeof *full);
    if (full) {
        memcpy(full, dir, nd * sizeof *full);
        full[nd] = L'\\';
        memcpy(full + nd + 1, w, (nn + 1) * sizeof *full);
    } else {
        errno = ENOMEM;
    }
    free(w);
    return full;
}

/* The final path of an open handle ("\\?\C:\dir"), malloc'ed. */
static wchar_t *final_path(HANDLE h)
{
    DWORD n = GetFinalPathNameByHandleW(h, NULL, 0, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    wchar_t *p = n ? malloc((n + 1) * sizeof *p) : NULL;
    if (!n) {
        fail_win();
        return NULL;
    }
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    DWORD got = GetFinalPathNameByHandleW(h, p, n + 1, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (!got || got > n) {
        free(p);
        errno = got ? EIO : errno_of(GetLastError());
        return NULL;
    }
    return p;
}

/* `name` in the directory `dirfd` (OZ_AT_CWD: as given), as a wide path. */
static wchar_t *at_path(int dirfd, const char *name)
{
    if (dirfd == OZ_AT_CWD) return wide(name);
    HANDLE h = handle_of(dirfd);
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return NULL;
    }
    wchar_t *dir = final_path(h);
    if (!dir) return NULL;
    wchar_t *full = join_wide(dir, name);
    free(dir);
    return full;
}

static HANDLE open_at(int dirfd, const char *name, DWORD access, DWORD create, DWORD flags)
{
    wchar_t *w = at_path(dirfd, name);
    if (!w) return INVALID_HANDLE_VALUE;
    HANDLE h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, create, flags,
                           NULL);
    if (h == INVALID_HANDLE_VALUE) fail_win();
    free(w);
    return h;
}

static int is_dir_handle(HANDLE h)
{
    BY_HANDLE_FILE_INFORMATION i;
    return GetFileInformationByHandle(h, &i) && (i.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY);
}

/* A directory handle as a descriptor; `nofollow`: refusing a reparse point. */
static int dir_fd(int dirfd, const char *name, int nofollow)
{
    HANDLE h = open_at(dirfd, name, GENERIC_READ, OPEN_EXISTING,
                       FILE_FLAG_BACKUP_SEMANTICS | (nofollow ? FILE_FLAG_OPEN_REPARSE_POINT : 0));
    if (h == INVALID_HANDLE_VALUE) return -1;
    BY_HANDLE_FILE_INFORMATION i;
    int e = !GetFileInformationByHandle(h, &i) ? EIO
          : nofollow && (i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) ? ELOOP
          : !(i.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ? ENOTDIR : 0;
    if (e) {
        CloseHandle(h);
        errno = e;
        return -1;
    }
    return fd_of(h);
}

int oz_sys_dir_fd(const char *path)
{
    return dir_fd(OZ_AT_CWD, path, 0);
}

int oz_sys_parent_fd(const char *path)
{
    size_t n = strlen(path);
    while (n && path[n - 1] != '/' && path[n - 1] != '\\') n--;
    char *dir = n ? malloc(n + 1) : NULL;
    if (n && !dir) {
        errno = ENOMEM;
        return -1;
    }
    if (dir) {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = dir_fd(OZ_AT_CWD, dir ? dir : ".", 0);
    free(dir);
    return fd;
}

int oz_sys_dir_fd_at(int dirfd, const char *name)
{
    return dir_fd(dirfd, name, 1);
}

int oz_sys_create_at(int dirfd, const char *name)
{
    HANDLE h = open_at(dirfd, name, GENERIC_READ | GENERIC_WRITE, CREATE_NEW,
                       FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT);
    return h == INVALID_HANDLE_VALUE ? -1 : fd_of_flags(h, 0);
}

int oz_sys_open_at(int dirfd, const char *name, int dir)
{
    if (dir) return oz_sys_dir_fd_at(dirfd, name);
    HANDLE h = open_at(dirfd, name, GENERIC_READ, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT);
    return h == INVALID_HANDLE_VALUE ? -1 : fd_of(h);
}

int oz_sys_stat_at(int dirfd, const char *name, int follow, oz_stat *st)
{
    HANDLE h = open_at(dirfd, name, 0, OPEN_EXISTING,
                       FILE_FLAG_BACKUP_SEMANTICS | (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT));
    if (h == INVALID_HANDLE_VALUE) return -1;
    BY_HANDLE_FILE_INFORMATION i;
    int rc = stat_handle(h, st);
    if (!rc && !follow && GetFileInformationByHandle(h, &i) && (i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
        st->kind = OZ_KIND_LINK; /* the link itself */
    }
    CloseHandle(h);
    return rc;
}

/* Runs a path call on `name` in `dirfd`: 0, or -1 with errno. */
static int path_call(int dirfd, const char *name, BOOL (*call)(const wchar_t *w))
{
    wchar_t *w = at_path(dirfd, name);
    if (!w) return -1;
    int rc = call(w) ? 0 : fail_win();
    free(w);
    return rc;
}

static BOOL make_dir(const wchar_t *w)
{
    return CreateDirectoryW(w, NULL);
}

int oz_sys_mkdir_at(int dirfd, const char *name)
{
    return path_call(dirfd, name, make_dir);
}

int oz_sys_mkdir_umask_at(int dirfd, const char *name)
{
    return oz_sys_mkdir_at(dirfd, name);
}

static BOOL remove_file(const wchar_t *w)
{
    return DeleteFileW(w);
}

static BOOL remove_dir(const wchar_t *w)
{
    return RemoveDirectoryW(w);
}

int oz_sys_unlink_at(int dirfd, const char *name, int dir)
{
    return path_call(dirfd, name, dir ? remove_dir : remove_file);
}

int oz_sys_rename_at(int from_dir, const char *from, int to_dir, const char *to)
{
    wchar_t *a = at_path(from_dir, from), *b = a ? at_path(to_dir, to) : NULL;
    int rc = !b ? -1 : MoveFileExW(a, b, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) ? 0 : fail_win();
    free(a);
    free(b);
    return rc;
}

/* UTF-16 to a malloc'ed UTF-8 string. */
static char *narrow(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    char *s = n > 0 ? malloc((size_t)n) : NULL;
    if (s) WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
    else errno = n > 0 ? ENOMEM : EILSEQ;
    return s;
}

int oz_sys_list_dir(int dirfd, int (*fn)(void *user, const char *name), void *user)
{
    wchar_t *pattern = at_path(dirfd, "*");
    if (!pattern) return -1;
    WIN32_FIND_DATAW fd;
    HANDLE f = FindFirstFileW(pattern, &fd);
    free(pattern);
    if (f == INVALID_HANDLE_VALUE) return fail_win();
    int rc = 0;
    do {
        if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L"..")) continue;
        char *name = narrow(fd.cFileName);
        if (name) rc = fn(user, name);
        free(name);
    } while (!rc && FindNextFileW(f, &fd));
    FindClose(f);
    return rc;
}

int oz_sys_lock_file(int fd, int wait)
{
    HANDLE h = handle_of(fd);
    if (is_dir_handle(h)) { /* no byte-range locks on directories */
        errno = ENOLCK;
        return -1;
    }
    OVERLAPPED o = { 0 };
    o.Offset = 0xFFFFFFFFu; /* INT64_MAX: past any end, apart from the update lock's bytes */
    o.OffsetHigh = 0x7FFFFFFFu;
    DWORD flags = LOCKFILE_EXCLUSIVE_LOCK | (wait ? 0 : LOCKFILE_FAIL_IMMEDIATELY);
    return LockFileEx(h, flags, 0, 1, 0, &o) ? 0 : fail_win();
}

int oz_sys_sync(int fd)
{
    HANDLE h = handle_of(fd);
    if (is_dir_handle(h)) return 0; /* NTFS journals the directory; MoveFileExW wrote through */
    return FlushFileBuffers(h) ? 0 : fail_win();
}

void oz_sys_sync_parent(const char *path)
{
    (void)path; /* a directory needs no flush here (oz_sys_sync) */
}

int oz_sys_truncate(int fd, uint64_t size)
{
    FILE_END_OF_FILE_INFO i;
    i.EndOfFile.QuadPart = (LONGLONG)size;
    return SetFileInformationByHandle(handle_of(fd), FileEndOfFileInfo, &i, sizeof i) ? 0 : fail_win();
}

ssize_t oz_sys_pwrite(int fd, const void *buf, size_t n, int64_t off)
{
    OVERLAPPED o = { 0 };
    o.Offset = (DWORD)(uint64_t)off;
    o.OffsetHigh = (DWORD)((uint64_t)off >> 32);
    DWORD done = 0;
    if (!WriteFile(handle_of(fd), buf, n > 0x40000000 ? 0x40000000 : (DWORD)n, &done, &o)) return fail_win();
    return (ssize_t)done;
}

ssize_t oz_sys_write(int fd, const void *buf, size_t n)
{
    DWORD done = 0;
    if (!WriteFile(handle_of(fd), buf, n > 0x40000000 ? 0x40000000 : (DWORD)n, &done, NULL)) return fail_win();
    return (ssize_t)done;
}

int64_t oz_sys_seek(int fd, int64_t off, int whence)
{
    return _lseeki64(fd, off, whence);
}

uint64_t oz_sys_nonce(void)
{
    static volatile LONG64 calls;
    LARGE_INTEGER c;
    FILETIME t;
    QueryPerformanceCounter(&c);
    GetSystemTimeAsFileTime(&t);
    uint64_t x = (uint64_t)GetCurrentProcessId() << 40 ^ (uint64_t)c.QuadPart ^
                 ((uint64_t)t.dwHighDateTime << 32 | t.dwLowDateTime) ^
                 (uint64_t)InterlockedIncrement64(&calls) * 0x9E3779B97F4A7C15u;
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9u, x ^= x >> 29;
    return x;
}

/* Symbolic links and junctions as external data stay refused on Windows. */
int oz_sys_open_resolved(const char *path, const oz_stat *dirs, size_t n, char **real)
{
    (void)path, (void)dirs, (void)n;
    *real = NULL;
    errno = ENOSYS;
    return -1;
}

char *oz_sys_realpath(const char *path)
{
    HANDLE h = open_at(OZ_AT_CWD, path, 0, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS);
    if (h == INVALID_HANDLE_VALUE) return NULL;
    wchar_t *w = final_path(h);
    CloseHandle(h);
    if (!w) return NULL;
    const wchar_t *p = wcsncmp(w, L"\\\\?\\", 4) ? w : w + 4; /* \\?\C:\dir\name */
    char *s = narrow(p);
    free(w);
    return s;
}

int oz_sys_open_rw(const char *path)
{
    HANDLE h = open_at(OZ_AT_CWD, path, GENERIC_READ | GENERIC_WRITE, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL);
    if (h != INVALID_HANDLE_VALUE) return fd_of_flags(h, 0);
    int e = errno;
    wchar_t *w = wide(path);
    DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
    free(w);
    errno = a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY) ? EISDIR : e;
    return -1;
}
