/* A URL as a byte source (common/source.h): http://, https://, s3://
 * (signed), and whatever they redirect to. */
#ifndef ONNXZIP_SOURCE_HTTP_H
#define ONNXZIP_SOURCE_HTTP_H

#include "common/source.h"
#include "net/http.h"

/* Makes *s the source of the file at `url`: connects and fetches its last
 * o->tail_bytes (the window), pinning its size and validator. *shown (the
 * caller's, malloc'ed: oz_shown_url(url)) names the file in messages; for
 * an s3:// URL it is replaced by the s3:// URL as shown. s->name borrows
 * *shown. On failure *s is zeroed. */
int oz_source_http(oz_source *s, const char *url, const onnxzip_remote_options *o, char **shown);

/* The HTTP client behind a URL's source (fetch's many-connection download
 * uses it directly), or NULL when s is not one. */
oz_http *oz_source_http_client(const oz_source *s);

/* The URL as messages show it, malloc'ed (NULL: out of memory): without
 * the credentials it may carry — user:password@ before the host, a query
 * and fragment (presigned signatures) — which are left as "...". */
char *oz_shown_url(const char *url);

#endif
