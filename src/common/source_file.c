/* A local file (mapped) or a caller's buffer as a byte source: every byte
 * is in the mapping; a file's local headers are read with pread(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/internal.h"
#include "common/source_file.h"
#include "common/sys.h"

typedef struct file_src {
    int fd;        /* the mapped file (borrowed), or -1: a caller's buffer */
    int nowait;    /* try RWF_NOWAIT reads first (until unsupported) */
    int by_path;   /* opened by path: check() also stats the path */
    oz_stat st;    /* the file as at open */
} file_src;

/* Local headers lie one per tensor, spread over the whole file: read
 * through the mapping, each costs a page fault that maps the pages around
 * it and often a page-table page, then as much again at munmap; pread()
 * copies them out of the page cache and leaves the mapping untouched. */
static int file_read(oz_source *s, uint64_t off, size_t n, void *dst)
{
    file_src *f = s->impl;
    if (f->fd < 0 || off > s->size || n > s->size - off) {
        if (off > s->size || n > s->size - off)
            return oz_err(ONNXZIP_ETRUNC, (int64_t)off, "%s: %zu bytes at offset %llu lie past its end", s->name,
                          n, (unsigned long long)off);
        memcpy(dst, s->map + off, n);
        return 0;
    }
    for (size_t got = 0; got < n;) {
        uint8_t *p = (uint8_t *)dst + got;
        ssize_t k = f->nowait ? oz_sys_pread_nowait(f->fd, p, n - got, (int64_t)(off + got)) : -1;
        if (k < 0 && f->nowait) {
            if (errno == EAGAIN) s->cold = 1; /* would wait for the disk */
            else if (errno != EINTR) f->nowait = 0; /* not supported here */
        }
        if (k < 0) k = oz_sys_pread(f->fd, p, n - got, (int64_t)(off + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return oz_err_errno(k < 0 ? errno : 0, k < 0 ? ONNXZIP_EIO : ONNXZIP_ETRUNC, (int64_t)(off + got),
                                k < 0 ? s->name : NULL, "%s: cannot read %zu bytes at offset %llu: %s", s->name, n,
                                (unsigned long long)off,
                                k < 0 ? strerror(errno) : "the file shrank while it was being opened");
        got += (size_t)k;
    }
    return 0;
}

/* On a cold cache one blocking read per header would wait for the disk
 * once per entry; asking for all of them at once lets it serve them in
 * parallel. */
static void file_willneed(oz_source *s, uint64_t off, uint64_t n)
{
    file_src *f = s->impl;
    if (f->fd >= 0) oz_sys_advise_file(f->fd, off, n, OZ_ADV_WILLNEED);
}

static int file_check(oz_source *s)
{
    file_src *f = s->impl;
    if (f->fd < 0) return 0; /* the caller's buffer */
    oz_stat st;
    if (oz_sys_fstat(f->fd, &st))
        return oz_err_sys(ONNXZIP_EIO, -1, s->name, "%s: cannot stat: %s", s->name, strerror(errno));
    if (st.size < s->size)
        return oz_err(ONNXZIP_ETRUNC, (int64_t)st.size, "%s: the file was truncated to %llu bytes since it was "
                      "opened (%llu bytes mapped): touching a view past the new end would raise SIGBUS; reopen it",
                      s->name, (unsigned long long)st.size, (unsigned long long)s->size);
    if (st.size != s->size || st.mtime_ns != f->st.mtime_ns)
        return oz_err(ONNXZIP_ETRUNC, -1, "%s: the file was rewritten since it was opened (size %llu -> %llu, or "
                      "modification time changed): the views may no longer show its contents; reopen it", s->name,
                      (unsigned long long)s->size, (unsigned long long)st.size);
    oz_stat now;
    if (f->by_path && (oz_sys_stat(s->name, &now) || now.dev != f->st.dev || now.ino != f->st.ino))
        return oz_err(ONNXZIP_ETRUNC, -1, "%s: the path no longer names the file that was opened (replaced or "
                      "removed): the views still show the old file, which stays mapped; reopen it", s->name);
    return 0;
}

static void file_free(oz_source *s)
{
    free(s->impl);
}

static const oz_source_ops file_ops = { .read = file_read, .check = file_check, .willneed = file_willneed,
                                        .free = file_free };

int oz_source_mapped(oz_source *s, const uint8_t *map, uint64_t size, int fd, const oz_stat *st, int by_path,
                     const char *name)
{
    file_src *f = calloc(1, sizeof *f);
    if (!f) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    *f = (file_src){ .fd = fd, .nowait = fd >= 0, .by_path = by_path };
    if (st) f->st = *st;
    *s = (oz_source){ .ops = &file_ops, .impl = f, .name = name, .size = size, .map = map,
                      .read_headers = fd >= 0 };
    return 0;
}
