/* The files of one onnxzip_unpack(), written into its temporary directory:
 * created, written or copied from the archive (in the kernel where it can),
 * synced and closed, with progress counted as payload bytes land. */
#include <errno.h>
#include <stdio.h>

#include "convert/unpack_files.h"
#include "common/copy_range.h"
#include "common/sys.h"

#define IO_CHUNK (1u << 20)

int oz_unpack_io_err(const char *dir, const char *name, const char *what)
{
    return oz_err_sys(ONNXZIP_EIO, -1, name, "%s/%s: %s: %s", dir, name, what, strerror(errno));
}

int oz_unpack_create(const unpack *u, const char *name, int *fd)
{
    *fd = oz_sys_create_at(u->tmpfd, name);
    return *fd < 0 ? oz_unpack_io_err(u->tmp, name, "cannot create") : 0;
}

int oz_unpack_write(unpack *u, int fd, const char *name, const uint8_t *p, uint64_t n, int payload)
{
    while (n) {
        ssize_t k = oz_sys_write(fd, p, n < IO_CHUNK ? (size_t)n : IO_CHUNK);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0) errno = ENOSPC;
        if (k <= 0) return oz_unpack_io_err(u->tmp, name, "cannot write");
        p += k;
        n -= (uint64_t)k;
        if (payload) oz_unpack_progress(u, (uint64_t)k);
    }
    return 0;
}

/* fsync + close, keeping the first error. */
int oz_unpack_close(const unpack *u, int fd, const char *name, int rc)
{
    if (!rc && u->sync && oz_sys_sync(fd)) rc = oz_unpack_io_err(u->tmp, name, "cannot sync");
    if (oz_sys_close(fd) && !rc) rc = oz_unpack_io_err(u->tmp, name, "cannot close");
    return rc;
}

typedef struct copy_progress {
    unpack *u;
    uint64_t reached; /* offset in the output reported so far */
} copy_progress;

static void copied(void *ctx, uint64_t final_to)
{
    copy_progress *p = ctx;
    oz_unpack_progress(p->u, final_to - p->reached);
    p->reached = final_to;
}

/* Copies bytes from the archive to the end of fd in the kernel
 * (copy_file_range, holes kept), so payloads never pass through, or stay
 * resident in, this process: peak memory does not grow with the weights. */
int oz_unpack_copy(unpack *u, int fd, const char *name, uint64_t from, uint64_t len, const char *entry)
{
    int64_t at = oz_sys_seek(fd, 0, SEEK_CUR);
    if (at < 0) return oz_unpack_io_err(u->tmp, name, "cannot find the write position");
    copy_progress p = { u, (uint64_t)at };
    uint64_t done, end = (uint64_t)at + len;
    switch (oz_copy_range(u->arcfd, from, len, fd, (uint64_t)at, copied, &p, &done)) {
    case OZ_COPY_OK:
        break;
    case OZ_COPY_SHORT:
        return oz_err(ONNXZIP_ETRUNC, -1, "%s: shorter than its directory says (entry '%s')", u->archive_path,
                      entry);
    case OZ_COPY_READ:
        return oz_unpack_io_err(u->tmp, name, "cannot read the archive");
    case OZ_COPY_UNSUPPORTED: /* the output is new and written in order: cannot happen */
    case OZ_COPY_WRITE:
        return oz_unpack_io_err(u->tmp, name, "cannot write");
    }
    return oz_sys_seek(fd, (int64_t)end, SEEK_SET) < 0 ? oz_unpack_io_err(u->tmp, name, "cannot seek") : 0;
}
