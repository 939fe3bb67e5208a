/* HTTP(S) byte-range requests through libcurl, for remote archives: ranges
 * fetched several at once, each retried with backoff, every reply checked
 * against what was asked (status 206, Content-Range, total size, length)
 * and against the file pinned by the first reply (its validator), and
 * timed against the pace rules of policy.h. Built with -Dcurl only. */
#ifndef ONNXZIP_HTTP_H
#define ONNXZIP_HTTP_H

#include "common/internal.h"

typedef struct oz_http oz_http;

/* Receives the next `n` bytes of a range, those at file offset `at`, in
 * order. A nonzero return (a status, its error recorded) stops the
 * transfers and is what oz_http_get() returns. */
typedef int (*oz_http_sink)(void *ctx, const uint8_t *p, size_t n, uint64_t at);

typedef struct oz_http_range {
    uint64_t off, len;
    oz_http_sink sink;
    void *ctx;
} oz_http_range;

/* The sink that copies into memory: `ctx` is an oz_http_into, whose `dst`
 * holds the bytes from file offset `base` on. */
typedef struct oz_http_into {
    uint8_t *dst;
    uint64_t base;
} oz_http_into;
int oz_http_copy_sink(void *ctx, const uint8_t *p, size_t n, uint64_t at);

/* A client for `url` (copied; `shown` is what messages call it). Checks the
 * scheme against opts->allow_http. Sends nothing. */
int oz_http_new(oz_http **h, const char *url, const char *shown, const onnxzip_remote_options *opts);
void oz_http_free(oz_http *h);

/* Makes h an s3:// URL's client (call before any request): requests signed
 * with *c's credentials (or unsigned), no redirect followed, S3's XML
 * error replies quoted in messages (http_auth.h: oz_http_auth_s3()). */
struct oz_aws_config;
int oz_http_sign_s3(oz_http *h, const struct oz_aws_config *c);

/* The first request: the file's last `n` bytes (all of it when shorter).
 * Pins the file's size and validator, taken from the final reply (never a
 * redirect's); later requests go to the URL it was redirected to. *data (malloc'ed, the caller's) holds
 * *len bytes from file offset *off; *size is the file's size. */
int oz_http_tail(oz_http *h, uint32_t n, uint8_t **data, uint64_t *off, size_t *len, uint64_t *size);

/* Fetches ranges r[0..n) of the pinned file, opts->parallel at a time, each
 * retried from where it stopped. Safe from several threads (serialized). */
int oz_http_get(oz_http *h, const oz_http_range *r, size_t n);

/* `len` bytes from `off` into `dst`, in chunk-size pieces fetched in
 * parallel. */
int oz_http_read(oz_http *h, uint64_t off, uint64_t len, void *dst);

/* The options' chunk_size (policy.h's OZ_CHUNK_DEFAULT when not given):
 * requests are cut at this many bytes. */
#define OZ_HTTP_CHUNK_MIN ((uint64_t)64 << 10)
uint64_t oz_http_chunk(const oz_http *h);

/* The chunk size for a transfer of `total` bytes spread over the
 * connections (a download): the options' chunk_size when given, else
 * policy.h's oz_chunk_for(). */
uint64_t oz_http_chunk_for(const oz_http *h, uint64_t total);

/* Cuts [off, off + len) into pieces of at most `chunk` bytes, each a range
 * for `sink` and `ctx`, into r[] (NULL: only counted); returns how many.
 * The one rule for splitting a range into requests. */
size_t oz_http_split(oz_http_range *r, uint64_t off, uint64_t len, uint64_t chunk, oz_http_sink sink, void *ctx);

/* A 1-byte request to the original URL (its redirects followed anew)
 * under the pinned validator: does that URL still serve the pinned file? */
int oz_http_check(oz_http *h);

/* Ranges in flight at once (the options' `parallel`). */
unsigned oz_http_parallel(const oz_http *h);

/* The pinned validator: `ETag: "..."` or `Last-Modified: ...` as sent. */
const char *oz_http_validator(const oz_http *h);

void oz_http_stats(const oz_http *h, onnxzip_remote_stats *st);

#endif
