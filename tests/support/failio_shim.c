/*
 * failio_shim — an LD_PRELOAD library that makes one of a process's writes
 * fail, to test what a failed write leaves behind (tests/cli/setmodel_full.py).
 *
 * It counts the calls that change a file — pwrite, fsync, fdatasync,
 * ftruncate and fallocate (their 64-bit names too) — and makes call number
 * FAILIO_AT (1-based) fail with errno FAILIO_ERRNO (default EIO). A failing
 * pwrite of more than one byte is torn: its first half is written, then it
 * fails, as a write cut short by a dying disk could. Every other call passes.
 *
 *   FAILIO_AT=N          the call to fail (unset or 0: none; count only)
 *   FAILIO_ERRNO=E       its errno, a number (28 is ENOSPC)
 *   FAILIO_NO_FALLOCATE  set: fallocate fails with EOPNOTSUPP, uncounted, as
 *                        on a file system without it
 *   FAILIO_COUNT=PATH    at exit, write the number of calls counted there
 */
#undef _FILE_OFFSET_BITS /* define pwrite and pwrite64 both, not one under two names */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

static long calls;

static int kill_now(void)
{
    const char *at = getenv("FAILIO_KILL_AT");
    return at && calls == atol(at);
}

/* 1 when this call is the one to fail (errno then set). Counts the call;
 * the one to kill at does not return. */
static int fail_now(void)
{
    const char *at = getenv("FAILIO_AT"), *e = getenv("FAILIO_ERRNO");
    ++calls;
    if (kill_now()) raise(SIGKILL);
    if (calls != (at ? atol(at) : 0)) return 0;
    errno = e ? atoi(e) : EIO;
    return 1;
}

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "failio_shim: no %s\n", name);
        abort();
    }
    return f;
}

/* FAILIO_KILL_TORN: the first pages of a multi-page write, then the kill. */
typedef ssize_t (*pwrite64_fn)(int, const void *, size_t, off64_t);

static void torn_kill(pwrite64_fn real, int fd, const void *buf, size_t n, off64_t off)
{
    off64_t mid = off + (off64_t)(n / 2), cut = mid - mid % 4096;
    if (!getenv("FAILIO_KILL_TORN") || calls + 1 != atol(getenv("FAILIO_KILL_AT"))) return;
    if (cut <= off) cut += 4096;
    if (cut < off + (off64_t)n) (void)real(fd, buf, (size_t)(cut - off), off);
}

/* Both names go to pwrite64 (off_t is 32 bits on 32-bit hosts, off64_t
 * always 64). */
static ssize_t torn_pwrite(int fd, const void *buf, size_t n, off64_t off)
{
    pwrite64_fn real = (pwrite64_fn)next("pwrite64");
    if (getenv("FAILIO_KILL_AT")) torn_kill(real, fd, buf, n, off);
    if (!fail_now()) return real(fd, buf, n, off);
    int e = errno;
    if (n > 1) (void)real(fd, buf, n / 2, off);
    errno = e;
    return -1;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off);
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    return torn_pwrite(fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return torn_pwrite(fd, buf, n, off);
}

#define PASS_OR_FAIL(name, proto, args)              \
    int name proto;                                  \
    int name proto                                   \
    {                                                \
        if (fail_now()) return -1;                   \
        return ((int(*) proto)next(#name))args;      \
    }

PASS_OR_FAIL(fsync, (int fd), (fd))
PASS_OR_FAIL(fdatasync, (int fd), (fd))
PASS_OR_FAIL(ftruncate, (int fd, off_t len), (fd, len))
PASS_OR_FAIL(ftruncate64, (int fd, off64_t len), (fd, len))

static int shim_fallocate(int fd, int mode, off64_t off, off64_t len)
{
    if (getenv("FAILIO_NO_FALLOCATE")) {
        errno = EOPNOTSUPP;
        return -1;
    }
    if (fail_now()) return -1;
    return ((int (*)(int, int, off64_t, off64_t))next("fallocate64"))(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off64_t off, off64_t len);
int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
    return shim_fallocate(fd, mode, off, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    return shim_fallocate(fd, mode, off, len);
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("FAILIO_COUNT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%ld\n", calls);
        fclose(f);
    }
}
