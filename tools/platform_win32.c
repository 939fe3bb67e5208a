/*
 * platform_win32.c — the command-line tool's system calls on Windows:
 * wmain() passes the UTF-16 command line on as UTF-8, the standard streams
 * are binary (extract -o - writes tensor bytes; every line ends in "\n" as on
 * other systems), paths are converted to UTF-16 for CreateFileW, and a file
 * is named by its volume serial number and file index.
 */
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

int wmain(int argc, wchar_t **wargv);

int wmain(int argc, wchar_t **wargv)
{
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    for (int i = 0; argv && i < argc; i++) {
        int n = WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, NULL, 0, NULL, NULL);
        if (n <= 0 || !(argv[i] = malloc((size_t)n))) {
            fputs("onnxzip: cannot convert the command line to UTF-8\n", stderr);
            return 1;
        }
        WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, argv[i], n, NULL, NULL);
    }
    if (!argv) {
        fputs("onnxzip: out of memory\n", stderr);
        return 1;
    }
    _setmode(_fileno(stdin), _O_BINARY);
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    SetConsoleOutputCP(CP_UTF8); /* file names are printed as UTF-8 */
    int rc = cli_main(argc, argv);
    for (int i = 0; i < argc; i++) free(argv[i]);
    free(argv);
    return rc;
}

static int fail(void)
{
    DWORD e = GetLastError();
    errno = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? ENOENT
          : e == ERROR_ACCESS_DENIED || e == ERROR_SHARING_VIOLATION ? EACCES : EIO;
    return -1;
}

static HANDLE open_path(const char *path, DWORD access, DWORD flags)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
    if (!w) {
        errno = n > 0 ? ENOMEM : EILSEQ;
        return INVALID_HANDLE_VALUE;
    }
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n);
    HANDLE h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           flags, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE) fail();
    return h;
}

static int stat_handle(HANDLE h, cli_file_info *fi)
{
    DWORD type = GetFileType(h);
    BY_HANDLE_FILE_INFORMATION i;
    *fi = (cli_file_info){ .kind = type == FILE_TYPE_PIPE ? CLI_KIND_FIFO : CLI_KIND_OTHER };
    if (type != FILE_TYPE_DISK) return 0;
    if (!GetFileInformationByHandle(h, &i)) return fail();
    fi->size = (uint64_t)i.nFileSizeHigh << 32 | i.nFileSizeLow;
    fi->dev = i.dwVolumeSerialNumber;
    fi->ino = (uint64_t)i.nFileIndexHigh << 32 | i.nFileIndexLow;
    fi->kind = i.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY ? CLI_KIND_DIR : CLI_KIND_REG;
    return 0;
}

int cli_stat_path(const char *path, cli_file_info *fi)
{
    HANDLE h = open_path(path, 0, FILE_FLAG_BACKUP_SEMANTICS); /* directories too */
    if (h == INVALID_HANDLE_VALUE) return -1;
    int rc = stat_handle(h, fi);
    CloseHandle(h);
    return rc;
}

int cli_stat_fd(int fd, cli_file_info *fi)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return -1;
    }
    return stat_handle(h, fi);
}

int cli_is_terminal(int fd)
{
    return _isatty(fd) != 0;
}

int cli_open_read(const char *path)
{
    HANDLE h = open_path(path, GENERIC_READ, FILE_ATTRIBUTE_NORMAL);
    if (h == INVALID_HANDLE_VALUE) return -1;
    int fd = _open_osfhandle((intptr_t)h, _O_RDONLY | _O_BINARY);
    if (fd < 0) CloseHandle(h);
    return fd;
}

long long cli_read(int fd, void *buf, size_t n)
{
    return _read(fd, buf, n > 0x40000000 ? 0x40000000 : (unsigned)n);
}

long long cli_write(int fd, const void *buf, size_t n)
{
    return _write(fd, buf, n > 0x40000000 ? 0x40000000 : (unsigned)n);
}

int cli_close(int fd)
{
    return _close(fd);
}

double cli_now(void)
{
    LARGE_INTEGER c, f;
    QueryPerformanceCounter(&c);
    QueryPerformanceFrequency(&f);
    return (double)c.QuadPart / (double)f.QuadPart;
}
