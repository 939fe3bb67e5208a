/* A remote archive's bytes: tensor ranges on demand, each entry's local
 * header checked on its first read; and the whole file in order, checked
 * as it streams by (verify, fetch) by stream_check.c. */
#include <stdio.h>

#include "read/remote.h"
#if ONNXZIP_HAVE_CURL
#include "net/http.h"
#endif

#if ONNXZIP_HAVE_CURL

int oz_remote_stream(onnxzip_archive *a, uint64_t from, int (*sink)(void *ctx, const uint8_t *p, size_t n, uint64_t at),
                     void *ctx)
{
    oz_http_range r = { from, a->size - from, sink, ctx };
    return oz_http_get(a->remote->http, &r, 1);
}

static int feed_sink(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    (void)at;
    return oz_stream_feed(ctx, p, n);
}

int oz_remote_verify(onnxzip_archive *a)
{
    oz_stream s;
    int rc = oz_stream_init(&s, a);
    if (!rc) rc = oz_remote_stream(a, 0, feed_sink, &s);
    if (!rc) rc = oz_stream_finish(&s);
    oz_stream_free(&s);
    return rc;
}

static int find_entry(const onnxzip_archive *a, const onnxzip_tensor *t, size_t *i)
{
    const oz_zentry *e = t->entry ? oz_zip_find(&a->zip, t->entry, strlen(t->entry)) : NULL;
    if (!e) return oz_err(ONNXZIP_EINVAL, -1, "%s: tensor '%s' names no entry (internal error)", a->path, t->name);
    *i = (size_t)(e - a->zip.entries);
    return 0;
}

/* Bytes [off, off + len) of entry i's data, in chunk-size pieces; its
 * local header checked on the entry's first read, in the same batch of
 * requests. */
static int read_entry(onnxzip_archive *a, size_t i, uint64_t off, uint64_t len, void *dst)
{
    oz_remote *r = a->remote;
    const oz_zentry *e = &a->zip.entries[i];
    int check = !atomic_load(&r->checked[i]);
    uint64_t hlen = e->pub.data_offset - e->pub.header_offset, chunk = oz_http_chunk(r->http);
    oz_http_into head = { NULL, e->pub.header_offset }, body = { dst, e->pub.data_offset + off };
    size_t n = oz_http_split(NULL, body.base, len, chunk, NULL, NULL) + (size_t)check;
    oz_http_range *rg = malloc(n * sizeof *rg);
    uint8_t *hdr = check ? malloc((size_t)hlen) : NULL;
    int rc = rg && (hdr || !check) ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory (reading a tensor)");
    if (!rc && check) {
        head.dst = hdr;
        rg[0] = (oz_http_range){ e->pub.header_offset, hlen, oz_http_copy_sink, &head };
    }
    if (!rc) oz_http_split(rg + check, body.base, len, chunk, oz_http_copy_sink, &body);
    if (!rc) rc = oz_http_get(r->http, rg, n);
    if (!rc && check) rc = oz_zip_check_local(&a->zip, i, hdr, (size_t)hlen, a->path, NULL);
    if (!rc && check) atomic_store(&r->checked[i], 1);
    free(hdr);
    free(rg);
    return rc;
}

int oz_remote_read(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len, void *dst)
{
    size_t i = 0;
    int rc = find_entry(a, t, &i);
    if (rc || !len) return rc;
    return read_entry(a, i, t->file_offset - a->zip.entries[i].pub.data_offset + offset, len, dst);
}

static int spans_remote(onnxzip_archive *a, const oz_file_span *s, size_t n, uint8_t *dst)
{
    oz_http *h = a->remote->http;
    uint64_t chunk = oz_http_chunk(h);
    size_t k = 0;
    for (size_t j = 0; j < n; j++) k += oz_http_split(NULL, s[j].from, s[j].to - s[j].from, chunk, NULL, NULL);
    oz_http_range *r = malloc((k ? k : 1) * sizeof *r);
    oz_http_into *into = malloc((n ? n : 1) * sizeof *into);
    int rc = r && into ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory (HTTP requests)");
    for (size_t j = 0, m = 0; j < n && !rc; dst += s[j].to - s[j].from, j++) {
        into[j] = (oz_http_into){ dst, s[j].from };
        m += oz_http_split(r + m, s[j].from, s[j].to - s[j].from, chunk, oz_http_copy_sink, &into[j]);
    }
    if (!rc) rc = oz_http_get(h, r, k);
    free(r);
    free(into);
    return rc;
}

static uint64_t window_remote(const onnxzip_archive *a)
{
    return oz_http_chunk(a->remote->http) * oz_http_parallel(a->remote->http);
}

/* Asks the archive's URL itself (not where it last redirected to: a
 * CDN's signed URL keeps serving the old file after the name moved on). */
int oz_remote_check(onnxzip_archive *a)
{
    return oz_http_check(a->remote->http);
}

#else

int oz_remote_stream(onnxzip_archive *a, uint64_t from, int (*sink)(void *ctx, const uint8_t *p, size_t n, uint64_t at),
                     void *ctx)
{
    (void)from, (void)sink, (void)ctx;
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: no libcurl in this build", a->path);
}

int oz_remote_verify(onnxzip_archive *a)
{
    return oz_remote_stream(a, 0, NULL, NULL);
}

int oz_remote_read(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len, void *dst)
{
    (void)t, (void)offset, (void)len, (void)dst;
    return oz_remote_stream(a, 0, NULL, NULL);
}

int oz_remote_check(onnxzip_archive *a)
{
    return oz_remote_stream(a, 0, NULL, NULL);
}

static int spans_remote(onnxzip_archive *a, const oz_file_span *s, size_t n, uint8_t *dst)
{
    (void)s, (void)n, (void)dst;
    return oz_remote_stream(a, 0, NULL, NULL);
}

static uint64_t window_remote(const onnxzip_archive *a)
{
    (void)a;
    return 0;
}

#endif

int oz_spans_read(onnxzip_archive *a, const oz_file_span *s, size_t n, uint8_t *dst)
{
    if (a->remote) return spans_remote(a, s, n, dst);
    for (size_t j = 0; j < n; dst += s[j].to - s[j].from, j++) memcpy(dst, a->base + s[j].from, s[j].to - s[j].from);
    return 0;
}

#define WINDOW_MIN ((uint64_t)64 << 20)

uint64_t oz_spans_window(const onnxzip_archive *a)
{
    uint64_t w = a->remote ? window_remote(a) : 0;
    return w > WINDOW_MIN ? w : WINDOW_MIN;
}
