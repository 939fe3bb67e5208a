/* oz_member_copy(): a member streamed into a file (member_copy.h). */
#include <errno.h>
#include <stdlib.h>

#include "common/atomic_file.h"
#include "common/copy_range.h"
#include "common/internal.h"
#include "common/sys.h"
#include "read/archive.h"
#include "read/member_copy.h"
#include "read/source_read.h"

#define CHUNK ((size_t)8 << 20)

static int write_fail(const char *out)
{
    return oz_err_sys(ONNXZIP_EIO, -1, out, "%s: cannot write: %s", out, strerror(errno));
}

/* From the archive's file: the kernel's copy, holes kept. */
static int copy_file(onnxzip_archive *a, const onnxzip_member *m, int fd, const char *out)
{
    uint64_t done;
    switch (oz_copy_range(a->fd, a->zip.entries[m->entry].pub.data_offset, m->size, fd, 0, NULL, NULL, &done)) {
    case OZ_COPY_OK: return 0;
    case OZ_COPY_SHORT:
        return oz_err(ONNXZIP_ETRUNC, -1, "%s: shorter than its directory says ('%s' ends past the file's end)",
                      a->path, m->path);
    case OZ_COPY_READ:
        return oz_err_sys(ONNXZIP_EIO, -1, a->path, "%s: cannot read '%s': %s", a->path, m->path, strerror(errno));
    case OZ_COPY_UNSUPPORTED: /* the output is a new, empty file: cannot happen */
    case OZ_COPY_WRITE: break;
    }
    return write_fail(out);
}

typedef struct sink_ctx {
    int fd;
    const char *out;
} sink_ctx;

/* Writes a piece, leaving its all-zero chunks as holes. */
static int write_piece(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    const sink_ctx *s = ctx;
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t k = n - i < CHUNK ? n - i : CHUNK;
        if (!oz_all_zero(p + i, k) && oz_pwrite_full(s->fd, p + i, k, at + i)) return write_fail(s->out);
    }
    return 0;
}

/* Through the source, in batches of ranges read in parallel: a URL's or a
 * host's bytes, checked as they arrive (oz_entry_stream()); a caller's
 * buffer written from the mapping itself. */
static int copy_read(onnxzip_archive *a, const onnxzip_member *m, int fd, const char *out)
{
    if (oz_sys_truncate(fd, m->size)) return write_fail(out); /* zeros: chunks of zeros need no write */
    sink_ctx s = { fd, out };
    if (oz_archive_unmapped(a)) return oz_entry_stream(a, m->entry, write_piece, &s);
    /* mapped: the member is within the address space, so its size fits size_t */
    return write_piece(&s, a->base + a->zip.entries[m->entry].pub.data_offset, (size_t)m->size, 0);
}

int oz_member_copy(onnxzip_archive *a, const onnxzip_member *m, int fd, const char *out)
{
    if (!oz_archive_unmapped(a) && a->fd >= 0) return copy_file(a, m, fd, out);
    return copy_read(a, m, fd, out);
}
