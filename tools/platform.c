/*
 * platform.c — the command-line tool's system calls on POSIX systems.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "platform.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}

static void from_stat(const struct stat *st, cli_file_info *fi)
{
    fi->size = (uint64_t)st->st_size;
    fi->dev = (uint64_t)st->st_dev;
    fi->ino = (uint64_t)st->st_ino;
    fi->kind = S_ISREG(st->st_mode) ? CLI_KIND_REG : S_ISDIR(st->st_mode) ? CLI_KIND_DIR
             : S_ISFIFO(st->st_mode) ? CLI_KIND_FIFO : CLI_KIND_OTHER;
}

int cli_stat_path(const char *path, cli_file_info *fi)
{
    struct stat st;
    if (stat(path, &st)) return -1;
    from_stat(&st, fi);
    return 0;
}

int cli_stat_fd(int fd, cli_file_info *fi)
{
    struct stat st;
    if (fstat(fd, &st)) return -1;
    from_stat(&st, fi);
    return 0;
}

int cli_is_terminal(int fd)
{
    return isatty(fd);
}

int cli_open_read(const char *path)
{
    return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block the open */
}

long long cli_read(int fd, void *buf, size_t n)
{
    return read(fd, buf, n);
}

long long cli_write(int fd, const void *buf, size_t n)
{
    return write(fd, buf, n);
}

int cli_close(int fd)
{
    return close(fd);
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
