/* s3://BUCKET/KEY URLs (spec 17.6): the https:// URL they map to, the
 * configuration they are signed with (aws_config.h), and S3's XML error
 * replies put in words. Built with -Dcurl only. */
#ifndef ONNXZIP_S3_H
#define ONNXZIP_S3_H

#include "net/aws_config.h"

typedef struct oz_s3 {
    char *url;   /* where requests go: https://BUCKET.s3.REGION.amazonaws.com/KEY, ENDPOINT/BUCKET/KEY, ... */
    char *shown; /* "s3://BUCKET/KEY", for messages and onnxzip_archive_path() */
    oz_aws_config cfg;
} oz_s3;

/* 1 when `url` starts with "s3://" (any case). */
int oz_s3_is_url(const char *url);

/* Resolves s3:// URL `url` under the options: its configuration
 * (oz_aws_config_load()) and the URL it maps to. ONNXZIP_EINVAL for a
 * malformed URL (no bucket or key, a query or fragment, a bucket name S3
 * refuses, a key of over 1024 bytes or with control characters), an
 * endpoint that is not an http(s):// URL (http:// unless allow_http), or
 * a configuration error; ONNXZIP_EIO, ONNXZIP_ENOMEM. */
int oz_s3_resolve(oz_s3 *s, const char *url, const onnxzip_remote_options *o);
void oz_s3_free(oz_s3 *s);

/* The URL alone: s3:// URL `url` for `endpoint` (NULL: AWS's, in
 * `region`) and `addressing` (ONNXZIP_S3_*) into *out (malloc'ed), `shown`
 * naming the URL and `endpoint_source` the endpoint's origin in messages.
 * Also *display: "s3://BUCKET/KEY" (malloc'ed) when not NULL. */
int oz_s3_map(const char *url, const char *endpoint, const char *endpoint_source, const char *region,
              int addressing, int allow_http, char **out, char **display);

/* S3's error reply `body` (n bytes: <Error><Code>..</Code><Message>..
 * </Message>...) as "S3 CODE: MESSAGE" with the <Region>, <Endpoint>,
 * <BucketName> or <Key> it names, printable, into out; "" when the body is
 * not one. */
const char *oz_s3_error_note(const char *body, size_t n, char *out, size_t cap);

#endif
