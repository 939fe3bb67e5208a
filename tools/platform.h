/*
 * platform.h — what the command-line tool needs of the system beyond C11,
 * one implementation per system: platform.c (POSIX) and platform_win32.c
 * (Windows: UTF-8 arguments from the UTF-16 command line, binary standard
 * streams, files identified by volume and file index). Paths are UTF-8.
 */
#ifndef ONNXZIP_TOOLS_PLATFORM_H
#define ONNXZIP_TOOLS_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/* The tool's entry point (onnxzip.c), called by the system's main() with
 * the arguments in UTF-8. */
int cli_main(int argc, char **argv);

enum { CLI_KIND_OTHER, CLI_KIND_REG, CLI_KIND_DIR, CLI_KIND_FIFO };

typedef struct cli_file_info {
    uint64_t size;
    uint64_t dev, ino; /* together name the file */
    int kind;          /* CLI_KIND_* */
} cli_file_info;

/* What the file at `path` (symbolic links followed) or open on `fd` is.
 * 0, or -1 with errno. */
int cli_stat_path(const char *path, cli_file_info *fi);
int cli_stat_fd(int fd, cli_file_info *fi);

/* 1 when `fd` (1: standard output, 2: standard error) is a terminal. */
int cli_is_terminal(int fd);

/* Opens `path` read-only, without waiting for a FIFO's writer. -1 with errno. */
int cli_open_read(const char *path);
/* read(2), write(2) and close(2) of those descriptors and of 1 and 2. */
long long cli_read(int fd, void *buf, size_t n);
long long cli_write(int fd, const void *buf, size_t n);
int cli_close(int fd);

/* Seconds from a fixed point, never going back. */
double cli_now(void);

#endif
