/* onnxzip_open_host(): a host's reads as a byte source (common/source.h)
 * through the one open sequence (open.c). The host keeps the I/O: the open
 * returns what it needs before the window instead of waiting for it. */
#include <stdio.h>
#include <stdlib.h>

#include "read/archive.h"
#include "read/stream_check.h"

typedef struct host_src {
    int64_t (*read)(void *ctx, uint64_t offset, size_t n, void *dst);
    void *ctx;
} host_src;

static int host_read(oz_source *s, uint64_t off, size_t n, void *dst)
{
    host_src *h = s->impl;
    if (!h->read)
        return oz_err(ONNXZIP_EUNSUPPORTED, (int64_t)off, "%s: the host reads this archive's bytes itself (opened "
                      "without a read function)", s->name);
    for (size_t got = 0; got < n;) {
        int64_t k = h->read(h->ctx, off + got, n - got, (uint8_t *)dst + got);
        if (k <= 0 || (uint64_t)k > n - got)
            return oz_err(k < 0 ? ONNXZIP_EIO : ONNXZIP_ETRUNC, (int64_t)(off + got), "%s: cannot read %zu bytes "
                          "at offset %llu: %s", s->name, n, (unsigned long long)off,
                          k < 0 ? "not at hand" : k ? "the host read more than asked" : "the file ends before them");
        got += (size_t)k;
    }
    return 0;
}

static void host_free(oz_source *s)
{
    free(s->impl);
}

static const oz_source_ops host_ops = { .read = host_read, .free = host_free };

static int host_source(onnxzip_archive *a, const onnxzip_host_source *src)
{
    host_src *h = malloc(sizeof *h);
    uint8_t *win = malloc(src->window_len ? src->window_len : 1);
    if (!h || !win) {
        free(h);
        free(win);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    int defer = (src->flags & ONNXZIP_HOST_DEFER_HEADERS) != 0;
    *h = (host_src){ src->read, src->ctx };
    if (src->window_len) memcpy(win, src->window, src->window_len);
    a->src = (oz_source){ .ops = &host_ops, .impl = h, .name = a->path, .size = src->size, .win = win,
                          .win_off = src->size - src->window_len, .read_headers = src->read && !defer,
                          .defer_headers = !src->read || defer, .widen_by_caller = 1, .read_model = src->read && defer };
    return 0;
}

int onnxzip_open_host(const onnxzip_host_source *src, onnxzip_archive **out, uint64_t *need)
{
    if (out) *out = NULL;
    if (!src || !out || !need || !src->name) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open_host: NULL argument");
    *need = 0;
    if (src->flags & ~(unsigned)ONNXZIP_HOST_DEFER_HEADERS)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: unknown flags 0x%x", src->name, src->flags);
    if (src->window_len > src->size || (src->window_len && !src->window))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: a window of %zu bytes does not end a file of %llu bytes", src->name,
                      src->window_len, (unsigned long long)src->size);
    onnxzip_archive *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(src->name))) {
        free(a);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    a->fd = -1;
    a->size = src->size;
    int rc = oz_archive_want_model(a, src->model);
    if (!rc) rc = host_source(a, src);
    if (!rc) rc = oz_open_zip(a, need);
    if (rc) {
        oz_archive_free(a); /* nothing mapped, no descriptor */
        return rc == 1 ? 0 : rc;
    }
    *out = a;
    return 0;
}

int onnxzip_host_check_header(onnxzip_archive *a, size_t entry, const void *header, size_t len)
{
    if (!a || !header) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_host_check_header: NULL argument");
    if (entry >= a->zip.n)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: no entry %zu (%zu entries)", a->path, entry, a->zip.n);
    const onnxzip_entry *e = &a->zip.entries[entry].pub;
    if (len != e->data_offset - e->header_offset)
        return oz_err(ONNXZIP_EINVAL, (int64_t)e->header_offset, "%s: entry %zu's local header is %llu bytes, %zu "
                      "given", a->path, entry, (unsigned long long)(e->data_offset - e->header_offset), len);
    return oz_entry_check_header(a, entry, header);
}

int onnxzip_host_check_data(onnxzip_archive *a, size_t entry, const void *data, size_t len)
{
    if (!a || (!data && len)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_host_check_data: NULL argument");
    if (entry >= a->zip.n)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: no entry %zu (%zu entries)", a->path, entry, a->zip.n);
    const oz_zentry *e = &a->zip.entries[entry];
    if (len != e->pub.size)
        return oz_err(ONNXZIP_EINVAL, (int64_t)e->pub.data_offset, "%s: entry %zu holds %llu bytes, %zu given",
                      a->path, entry, (unsigned long long)e->pub.size, len);
    return oz_entry_check_data(e, a->path, data);
}
