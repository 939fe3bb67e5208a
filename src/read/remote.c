/* onnxzip_open_url(): the end of a remote archive (end records, central
 * directory, model) in one or two range requests, validated and indexed
 * as onnxzip_open() does; tensor bytes later, on demand (remote_read.c). */
#include <stdio.h>

#include "read/remote.h"
#if ONNXZIP_HAVE_CURL
#include "net/http.h"
#include "net/policy.h"
#include "net/s3.h"
#endif

void onnxzip_remote_options_init(onnxzip_remote_options *o)
{
    if (!o) return;
    *o = (onnxzip_remote_options){ .connect_timeout_ms = 10000, .stall_timeout_ms = 30000, .retries = 4,
                                   .backoff_ms = 250, .max_redirects = 5, .parallel = 16, .tail_bytes = 65536,
                                   .low_speed_limit = 1024, .low_speed_time_ms = 30000,
                                   .request_timeout_ms = 300000 };
}

/* Without libcurl a handle may still have a window: the WebAssembly
 * binding's (src/js/wasm), whose I/O is JavaScript's. */
void oz_remote_free(oz_remote *r)
{
    if (!r) return;
#if ONNXZIP_HAVE_CURL
    oz_http_free(r->http);
#endif
    free(r->win);
    free((void *)r->checked);
    free(r);
}

int oz_remote_span_check(uint64_t from, uint64_t size, const char *shown)
{
    if (size - from > OZ_MAX_MODEL + ((uint64_t)1 << 30))
        return oz_err(ONNXZIP_ELIMIT, (int64_t)from, "%s: the model, central directory and end records span %llu "
                      "bytes: more than a model (2 GiB) and its directory can be", shown,
                      (unsigned long long)(size - from));
    return 0;
}

int oz_remote_index(onnxzip_archive *a)
{
    oz_remote *r = a->remote;
    const oz_zentry *m = &a->zip.entries[a->zip.model_index];
    a->model_len = (size_t)m->pub.size;
    if (!(a->model_copy = malloc(a->model_len ? a->model_len : 1)))
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory for the model (%zu bytes)", a->path, a->model_len);
    memcpy(a->model_copy, r->win + (m->pub.data_offset - r->win_off), a->model_len);
    a->model = a->model_copy;
    a->layout = ONNXZIP_LAYOUT_ARCHIVE;
    if (!(r->checked = calloc(a->zip.n ? a->zip.n : 1, sizeof *r->checked)))
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    atomic_store(&r->checked[a->zip.model_index], 1);
    return oz_tensors_build_remote(&a->tensors, &a->zip, a->model, a->model_len, m->pub.data_offset, a->path);
}

#if !ONNXZIP_HAVE_CURL

int onnxzip_open_url(const char *url, const onnxzip_remote_options *opts, onnxzip_archive **out)
{
    (void)url;
    (void)opts;
    if (out) *out = NULL;
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "onnxzip_open_url: this build of onnxzip has no libcurl (-Dcurl=disabled "
                  "or libcurl absent when it was built): remote archives are not supported");
}

int onnxzip_remote_get_stats(const onnxzip_archive *a, onnxzip_remote_stats *stats)
{
    (void)a;
    if (stats) memset(stats, 0, sizeof *stats);
    return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_remote_get_stats: not a remote handle (this build has no libcurl)");
}

#else

/* The URL as messages and onnxzip_archive_path() show it: without the
 * credentials it may carry — user:password@ before the host, a query and
 * fragment (presigned signatures) — which are left as "...". */
static char *shown_url(const char *url)
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

/* Widens the window down to file offset `from`. */
static int widen(oz_remote *r, uint64_t from, uint64_t size, const char *shown)
{
    uint64_t more = r->win_off - from, have = size - r->win_off;
    int rc = oz_remote_span_check(from, size, shown);
    if (rc) return rc;
    uint8_t *w = malloc((size_t)(size - from));
    if (!w)
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (%llu bytes)", shown, (unsigned long long)(size - from));
    memcpy(w + more, r->win, (size_t)have);
    rc = oz_http_read(r->http, from, more, w);
    if (rc) {
        free(w);
        return rc;
    }
    free(r->win);
    r->win = w;
    r->win_off = from;
    return 0;
}

/* Parses the zip structure, fetching what lies before the tail: at most two
 * more requests (the directory and the model's header when the model record
 * was found in the tail, else the directory, then the model). */
static int parse(onnxzip_archive *a, oz_remote *r)
{
    for (int round = 0; round < 3; round++) {
        uint64_t need = 0;
        int rc = oz_zip_parse_remote(&a->zip, r->win, r->win_off, a->size, a->path, &need);
        if (rc <= 0) return rc;
        if (need >= r->win_off)
            return oz_err(ONNXZIP_ECDIR, -1, "%s: inconsistent end records (internal: need %llu)", a->path,
                          (unsigned long long)need);
        if ((rc = widen(r, need, a->size, a->path))) return rc;
    }
    return oz_err(ONNXZIP_ECDIR, -1, "%s: the central directory does not lead to the model's local header", a->path);
}

/* The client for `url`: an s3:// URL is mapped to the https:// URL it
 * stands for and its requests signed (spec 17.6); a->path is then the
 * s3:// URL. */
static int connect_url(onnxzip_archive *a, const char *url, const onnxzip_remote_options *o)
{
    if (!oz_s3_is_url(url)) return oz_http_new(&a->remote->http, url, a->path, o);
    oz_s3 s3;
    int rc = oz_s3_resolve(&s3, url, o);
    if (rc) return rc;
    free(a->path);
    a->path = s3.shown;
    s3.shown = NULL;
    rc = oz_http_new(&a->remote->http, s3.url, a->path, o);
    if (!rc) rc = oz_http_sign_s3(a->remote->http, &s3.cfg);
    oz_s3_free(&s3);
    return rc;
}

static int open_remote(onnxzip_archive *a, const char *url, const onnxzip_remote_options *o)
{
    oz_remote *r = a->remote;
    int rc = connect_url(a, url, o);
    size_t len = 0;
    if (!rc) rc = oz_http_tail(r->http, o->tail_bytes, &r->win, &r->win_off, &len, &a->size);
    if (!rc) rc = parse(a, r);
    if (rc == ONNXZIP_ENOTZIP)
        return oz_err(rc, -1, "%s: not a zip archive (no end of central directory record in its last %zu bytes); "
                      "only onnxzip archives are read remotely", a->path, len);
    return rc ? rc : oz_remote_index(a);
}

int onnxzip_open_url(const char *url, const onnxzip_remote_options *opts, onnxzip_archive **out)
{
    if (out) *out = NULL;
    if (!url || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open_url: NULL argument");
    onnxzip_remote_options o, d;
    onnxzip_remote_options_init(&d);
    o = opts ? *opts : d;
    oz_pace_options(&o, &d);
    if (o.tail_bytes < 4096) o.tail_bytes = 4096;
    onnxzip_archive *a = calloc(1, sizeof *a);
    if (!a || !(a->remote = calloc(1, sizeof *a->remote)) || !(a->path = shown_url(url))) {
        onnxzip_close(&a);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    a->fd = -1;
    int rc = open_remote(a, url, &o);
    if (rc) {
        onnxzip_close(&a);
        return rc;
    }
    /* The tail is kept: fetch and verify compare the file's end with it. */
    *out = a;
    return 0;
}

int onnxzip_remote_get_stats(const onnxzip_archive *a, onnxzip_remote_stats *stats)
{
    if (stats) memset(stats, 0, sizeof *stats);
    if (!a || !stats || !a->remote)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_remote_get_stats: %s", a && stats ? "not a remote handle" :
                      "NULL argument");
    oz_http_stats(a->remote->http, stats);
    return 0;
}

#endif
