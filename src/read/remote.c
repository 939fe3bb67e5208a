/* onnxzip_open_url(): a URL's byte source (net/source_http.c: the end of
 * the file in the first request) through the one open sequence (open.c):
 * the end records, central directory and model in one or two more range
 * requests at most; tensor bytes later, on demand (source_read.c). */
#include <stdio.h>

#include "read/archive.h"
#if ONNXZIP_HAVE_CURL
#include "net/policy.h"
#include "net/source_http.h"
#endif

void onnxzip_remote_options_init(onnxzip_remote_options *o)
{
    if (!o) return;
    *o = (onnxzip_remote_options){ .connect_timeout_ms = 10000, .stall_timeout_ms = 30000, .retries = 4,
                                   .backoff_ms = 250, .max_redirects = 5, .parallel = 16, .tail_bytes = 65536,
                                   .low_speed_limit = 1024, .low_speed_time_ms = 30000,
                                   .request_timeout_ms = 300000 };
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
    if (!a || !(a->path = oz_shown_url(url))) {
        onnxzip_close(&a);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    a->fd = -1;
    uint64_t need;
    int rc = oz_archive_want_model(a, o.model);
    if (!rc) rc = oz_source_http(&a->src, url, &o, &a->path);
    if (!rc) {
        a->size = a->src.size;
        rc = oz_open_zip(a, &need);
    }
    if (rc) {
        onnxzip_close(&a);
        return rc;
    }
    /* The window is kept: fetch and verify compare the file's end with it. */
    *out = a;
    return 0;
}

int onnxzip_remote_get_stats(const onnxzip_archive *a, onnxzip_remote_stats *stats)
{
    if (stats) memset(stats, 0, sizeof *stats);
    oz_http *h = a ? oz_source_http_client(&a->src) : NULL;
    if (!h || !stats)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_remote_get_stats: %s", a && stats ? "not a remote handle" :
                      "NULL argument");
    oz_http_stats(h, stats);
    return 0;
}

#endif
