#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "common/copy_range.h"
#include "common/sys.h"

#define STEP (8u << 20) /* per call: the granularity of step callbacks (hashing, progress) */
#define BUF (1u << 20)

int oz_all_zero(const uint8_t *p, size_t n)
{
    return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/* One step: the kernel's copy, or a buffered one once the kernel has refused
 * (*buf then set). Returns bytes copied, 0 at the source's end, -1 with *res. */
static ssize_t copy_step(int in, int64_t *ioff, int out, int64_t *ooff, size_t n, uint8_t **buf, oz_copy_result *res)
{
    for (;;) {
        if (!*buf) {
            ssize_t k = oz_sys_copy_file_range(in, ioff, out, ooff, n);
            if (k >= 0) return k;
            if (errno == EINTR) continue;
            if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP && errno != EBADF) {
                *res = OZ_COPY_READ; /* the kernel does not say which side failed; reads fail likelier */
                return -1;
            }
            if (!(*buf = malloc(BUF))) {
                *res = OZ_COPY_WRITE;
                return -1; /* errno ENOMEM */
            }
        }
        ssize_t k = oz_sys_pread(in, *buf, n < BUF ? n : BUF, *ioff);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k < 0) *res = OZ_COPY_READ;
            return k;
        }
        /* The destination was extended with zeros (a hole): a block of zeros
         * left unwritten keeps it sparse where SEEK_DATA cannot tell. */
        if (!oz_all_zero(*buf, (size_t)k) && oz_pwrite_full(out, *buf, (size_t)k, (uint64_t)*ooff)) {
            *res = OZ_COPY_WRITE;
            return -1;
        }
        *ioff += k;
        *ooff += k;
        return k;
    }
}

/* Where the next data of [off, end) begins; *data_end: where it ends. A file
 * system without SEEK_DATA makes it all data. */
static uint64_t next_data(int fd, uint64_t off, uint64_t end, uint64_t *data_end)
{
    int64_t d = oz_sys_seek_data(fd, (int64_t)off, 0);
    if (d < 0) {
        *data_end = end;
        return errno == ENXIO ? end : off; /* ENXIO: only a hole is left */
    }
    if ((uint64_t)d >= end) return *data_end = end;
    int64_t h = oz_sys_seek_data(fd, d, 1);
    *data_end = h < 0 || (uint64_t)h > end ? end : (uint64_t)h;
    return (uint64_t)d;
}

oz_copy_result oz_copy_range(int src_fd, uint64_t src_off, uint64_t len, int dst_fd, uint64_t dst_off,
                             oz_copy_step_fn step, void *ctx, uint64_t *done)
{
    *done = 0;
    oz_stat st, src;
    if (oz_sys_fstat(dst_fd, &st) || st.size > dst_off) return OZ_COPY_UNSUPPORTED;
    if (oz_sys_fstat(src_fd, &src) || src.kind != OZ_KIND_REG) return OZ_COPY_UNSUPPORTED;
    /* SEEK_DATA cannot tell a hole from the end of the file: check the size. */
    if (src.size < src_off + len) return OZ_COPY_SHORT;
    if (oz_sys_truncate(dst_fd, dst_off + len)) return OZ_COPY_WRITE;
    uint8_t *buf = NULL;
    oz_copy_result res = OZ_COPY_OK;
    uint64_t end = src_off + len, off = src_off;
    while (off < end && res == OZ_COPY_OK) {
        uint64_t data_end;
        off = next_data(src_fd, off, end, &data_end); /* past a hole: zeros already */
        while (off < data_end) {
            int64_t ioff = (int64_t)off, ooff = (int64_t)(dst_off + (off - src_off));
            uint64_t left = data_end - off;
            ssize_t k = copy_step(src_fd, &ioff, dst_fd, &ooff, left < STEP ? (size_t)left : STEP, &buf, &res);
            if (k <= 0) {
                if (k == 0) res = OZ_COPY_SHORT;
                break;
            }
            off += (uint64_t)k;
            if (step) step(ctx, dst_off + (off - src_off));
        }
        if (res == OZ_COPY_OK && step) step(ctx, dst_off + (off - src_off));
    }
    int e = errno;
    free(buf);
    /* A source truncated meanwhile would have passed for trailing holes. */
    if (res == OZ_COPY_OK && (oz_sys_fstat(src_fd, &src) || src.size < end)) res = OZ_COPY_SHORT;
    errno = e;
    *done = off - src_off;
    return res;
}
