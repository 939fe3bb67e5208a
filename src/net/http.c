/* HTTP(S) byte ranges through libcurl (net/http.h): the client, its first
 * request (the tail, which pins the file's size and validator) and the
 * range requests built on the transfer engine (http_transfer.c), whose
 * replies http_reply.c judges. */
#include <stdio.h>
#include <strings.h>

#include "net/http_transfer.h"
#include "net/s3.h"

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int oz_http_new(oz_http **hp, const char *url, const char *shown, const onnxzip_remote_options *opts)
{
    *hp = NULL;
    int https = !strncasecmp(url, "https://", 8), http = !strncasecmp(url, "http://", 7);
    if (!https && !http)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: not an http:// or https:// URL", shown);
    if (http && !opts->allow_http)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: plain http:// is refused unless allowed (allow_http, the CLI's "
                      "--allow-http): nothing would protect the bytes in transit", shown);
    if (opts->chunk_size && opts->chunk_size < OZ_HTTP_CHUNK_MIN)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: a chunk size of %llu bytes is below 64 KiB (each request costs a "
                      "round trip)", shown, (unsigned long long)opts->chunk_size);
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return oz_err(ONNXZIP_ENETWORK, -1, "%s: libcurl failed to initialize: %s", shown,
                      curl_easy_strerror(global_rc));
    oz_http *h = calloc(1, sizeof *h);
    if (!h || !(h->url = strdup(url)) || !(h->shown = strdup(shown)) || !(h->multi = curl_multi_init())) {
        oz_http_free(h);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (HTTP client)");
    }
    h->o = *opts;
    h->o.bearer_token = NULL; /* the caller's: h->auth holds what is sent */
    if (h->o.parallel == 0) h->o.parallel = 1;
    pthread_mutex_init(&h->lock, NULL);
    int rc = oz_http_auth_init(&h->auth, url, shown, opts->bearer_token);
    if (rc) {
        oz_http_free(h);
        return rc;
    }
    curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)h->o.parallel);
    *hp = h;
    return 0;
}

int oz_http_sign_s3(oz_http *h, const oz_aws_config *c)
{
    return oz_http_auth_s3(&h->auth, c, h->shown);
}

void oz_http_free(oz_http *h)
{
    if (!h) return;
    if (h->multi) {
        curl_multi_cleanup(h->multi);
        pthread_mutex_destroy(&h->lock);
    }
    free(h->url);
    free(h->shown);
    free(h->target);
    oz_http_auth_free(&h->auth);
    free(h);
}

/* The first reply's validator, sent as a condition with every later
 * request. A weak ETag cannot be (If-Match compares strongly). */
static int pin(oz_http *h, const xfer *x)
{
    h->size = x->total;
    if (x->etag[0] == '"') {
        snprintf(h->etag, sizeof h->etag, "%s", x->etag);
        snprintf(h->condition, sizeof h->condition, "If-Match: %s", x->etag);
        snprintf(h->validator, sizeof h->validator, "ETag %s", x->etag);
    } else if (x->lastmod[0]) {
        snprintf(h->lastmod, sizeof h->lastmod, "%s", x->lastmod);
        snprintf(h->condition, sizeof h->condition, "If-Unmodified-Since: %s", x->lastmod);
        snprintf(h->validator, sizeof h->validator, "Last-Modified %s", x->lastmod);
    } else {
        return oz_err(ONNXZIP_EHTTP, -1, "%s: the server sends neither a strong ETag nor Last-Modified: a file "
                      "replaced on it while it is read could not be detected, so it is not read", h->shown);
    }
    h->pinned = 1;
    return 0;
}

int oz_http_tail(oz_http *h, uint32_t n, uint8_t **data, uint64_t *off, size_t *len, uint64_t *size)
{
    *data = NULL;
    xfer x = { .h = h, .suffix = n ? n : 1, .force_original = 1 };
    pthread_mutex_lock(&h->lock);
    int rc = oz_http_run(h, &x, 1);
    if (!rc) rc = pin(h, &x);
    pthread_mutex_unlock(&h->lock);
    if (rc) {
        free(x.buf);
        return rc;
    }
    *data = x.buf;
    *off = x.off;
    *len = (size_t)x.len;
    *size = x.total;
    return 0;
}

int oz_http_get(oz_http *h, const oz_http_range *r, size_t n)
{
    xfer *x = calloc(n ? n : 1, sizeof *x);
    if (!x) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (HTTP requests)");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].len) x[k++] = (xfer){ .h = h, .r = &r[i], .off = r[i].off, .len = r[i].len };
    pthread_mutex_lock(&h->lock);
    int rc = k ? oz_http_run(h, x, k) : 0;
    pthread_mutex_unlock(&h->lock);
    free(x);
    return rc;
}

int oz_http_copy_sink(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    oz_http_into *d = ctx;
    memcpy(d->dst + (at - d->base), p, n);
    return 0;
}

size_t oz_http_split(oz_http_range *r, uint64_t off, uint64_t len, uint64_t chunk, oz_http_sink sink, void *ctx)
{
    size_t n = 0;
    for (uint64_t at = 0; at < len; at += chunk, n++)
        if (r) r[n] = (oz_http_range){ off + at, len - at < chunk ? len - at : chunk, sink, ctx };
    return n;
}

uint64_t oz_http_chunk(const oz_http *h)
{
    return h->o.chunk_size ? h->o.chunk_size : OZ_CHUNK_DEFAULT;
}

uint64_t oz_http_chunk_for(const oz_http *h, uint64_t total)
{
    return oz_chunk_for(h->o.chunk_size, total, h->o.parallel);
}

int oz_http_read(oz_http *h, uint64_t off, uint64_t len, void *dst)
{
    oz_http_into d = { dst, off };
    size_t n = oz_http_split(NULL, off, len, oz_http_chunk(h), NULL, NULL);
    oz_http_range one = { 0 }, *r = n > 1 ? malloc(n * sizeof *r) : &one;
    if (!r) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (HTTP requests)");
    oz_http_split(r, off, len, oz_http_chunk(h), oz_http_copy_sink, &d);
    int rc = oz_http_get(h, r, n);
    if (r != &one) free(r);
    return rc;
}

int oz_http_check(oz_http *h)
{
    uint8_t b;
    oz_http_into d = { &b, 0 };
    oz_http_range r = { 0, 1, oz_http_copy_sink, &d };
    xfer x = { .h = h, .r = &r, .len = 1, .force_original = 1 };
    pthread_mutex_lock(&h->lock);
    int rc = oz_http_run(h, &x, 1);
    pthread_mutex_unlock(&h->lock);
    return rc;
}

unsigned oz_http_parallel(const oz_http *h)
{
    return h->o.parallel;
}

const char *oz_http_validator(const oz_http *h)
{
    return h->validator;
}

void oz_http_stats(const oz_http *h, onnxzip_remote_stats *st)
{
    *st = h->st;
    st->file_size = h->size;
}
