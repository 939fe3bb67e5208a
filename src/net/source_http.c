/* A URL (http://, https://, s3://, the Hub's redirects) as a byte source
 * (common/source.h): the file's tail in the first request, then ranges cut
 * into chunk-size requests, several in flight at once (net/http.c). */
#include <stdio.h>
#include <stdlib.h>

#include "net/http.h"
#include "net/s3.h"
#include "net/source_http.h"

static int http_read(oz_source *s, uint64_t off, size_t n, void *dst)
{
    return oz_http_read(s->impl, off, n, dst);
}

static int http_readv(oz_source *s, const oz_range *rg, size_t n)
{
    oz_http *h = s->impl;
    uint64_t chunk = oz_http_chunk(h);
    size_t k = 0;
    for (size_t j = 0; j < n; j++) k += oz_http_split(NULL, rg[j].off, rg[j].len, chunk, NULL, NULL);
    oz_http_range *r = malloc((k ? k : 1) * sizeof *r);
    oz_http_into *into = malloc((n ? n : 1) * sizeof *into);
    int rc = r && into ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory (HTTP requests)");
    for (size_t j = 0, m = 0; j < n && !rc; j++) {
        into[j] = (oz_http_into){ rg[j].dst, rg[j].off };
        m += oz_http_split(r + m, rg[j].off, rg[j].len, chunk, oz_http_copy_sink, &into[j]);
    }
    if (!rc) rc = oz_http_get(h, r, k);
    free(r);
    free(into);
    return rc;
}

static int http_stream(oz_source *s, uint64_t from, oz_sink_fn sink, void *ctx)
{
    oz_http_range r = { from, s->size - from, sink, ctx };
    return oz_http_get(s->impl, &r, 1);
}

/* Asks the archive's URL itself (not where it last redirected to: a CDN's
 * signed URL keeps serving the old file after the name moved on). */
static int http_check(oz_source *s)
{
    return oz_http_check(s->impl);
}

static uint64_t http_batch(const oz_source *s)
{
    return oz_http_chunk(s->impl) * oz_http_parallel(s->impl);
}

static void http_free(oz_source *s)
{
    oz_http_free(s->impl);
}

static const oz_source_ops http_ops = { .read = http_read, .readv = http_readv, .stream = http_stream,
                                        .check = http_check, .batch = http_batch, .free = http_free };

char *oz_shown_url(const char *url)
{
    size_t n = strcspn(url, "?#");
    const char *host = strstr(url, "://");
    host = host && (size_t)(host - url) < n ? host + 3 : url;
    size_t auth = strcspn(host, "/?#"), skip = 0;
    for (size_t i = 0; i < auth; i++)
        if (host[i] == '@') skip = i + 1;
    size_t head = (size_t)(host - url), cap = n + 8;
    char *s = malloc(cap);
    if (s)
        snprintf(s, cap, "%.*s%s%.*s%s", (int)head, url, skip ? "...@" : "", (int)(n - head - skip), host + skip,
                 url[n] ? "?..." : "");
    return s;
}

/* The client for `url`: an s3:// URL is mapped to the https:// URL it
 * stands for and its requests signed (spec 17.6); *shown then becomes the
 * s3:// URL as messages show it. */
static int connect_url(oz_http **h, const char *url, const onnxzip_remote_options *o, char **shown)
{
    if (!oz_s3_is_url(url)) return oz_http_new(h, url, *shown, o);
    oz_s3 s3;
    int rc = oz_s3_resolve(&s3, url, o);
    if (rc) return rc;
    free(*shown);
    *shown = s3.shown;
    s3.shown = NULL;
    rc = oz_http_new(h, s3.url, *shown, o);
    if (!rc) rc = oz_http_sign_s3(*h, &s3.cfg);
    oz_s3_free(&s3);
    return rc;
}

int oz_source_http(oz_source *s, const char *url, const onnxzip_remote_options *o, char **shown)
{
    oz_http *h = NULL;
    memset(s, 0, sizeof *s);
    int rc = connect_url(&h, url, o, shown);
    uint8_t *win = NULL;
    uint64_t off = 0, size = 0;
    size_t len = 0;
    if (!rc) rc = oz_http_tail(h, o->tail_bytes, &win, &off, &len, &size);
    if (rc) {
        oz_http_free(h);
        return rc;
    }
    *s = (oz_source){ .ops = &http_ops, .impl = h, .name = *shown, .size = size, .win = win, .win_off = off,
                      .defer_headers = 1 };
    return 0;
}

oz_http *oz_source_http_client(const oz_source *s)
{
    return s->ops == &http_ops ? s->impl : NULL;
}
