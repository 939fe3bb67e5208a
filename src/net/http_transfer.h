/* The HTTP client's state (net/http.h's oz_http) and one range in flight
 * (xfer), shared by the client (http.c), the reply checks (http_reply.c)
 * and the transfer engine (http_transfer.c). Private to src/net. */
#ifndef ONNXZIP_HTTP_TRANSFER_H
#define ONNXZIP_HTTP_TRANSFER_H

#include <curl/curl.h>
#include <pthread.h>

#include "net/http.h"
#include "net/http_auth.h"
#include "net/policy.h"

struct oz_http {
    char *url, *shown;
    char *target;        /* where the original URL redirected to (NULL: no redirect) */
    int resolved;        /* `target` is known (NULL then: the original URL answers itself) */
    unsigned target_gen; /* bumped whenever `target` changes */
    int target_auth;     /* `target` is on the URL's origin: the token may go there */
    oz_http_auth auth;
    onnxzip_remote_options o;
    CURLM *multi;
    pthread_mutex_t lock;
    uint64_t size;
    int pinned;
    char etag[256];      /* the pinned strong ETag, or "" */
    char lastmod[128];   /* the pinned Last-Modified, when there is no strong ETag */
    char condition[300]; /* the header every request after the first carries */
    char validator[300];
    onnxzip_remote_stats st;
};

/* One range being fetched: [off + done, off + len) remain. */
typedef struct xfer {
    oz_http *h;
    const oz_http_range *r; /* NULL: the tail request */
    uint32_t suffix;        /* the tail request's length */
    uint64_t off, len, done;
    unsigned attempt;
    int force_original;      /* always sent to the original URL (tail, check) */
    int original;            /* this attempt went to the original URL */
    int redirected;          /* ... or was redirected: its replies came from elsewhere */
    unsigned refused;        /* refusals at a target (an expired signature) so far */
    unsigned gen;            /* h->target_gen when this attempt started */
    int have_linked;         /* a reply (the redirect) carried X-Linked-Size */
    uint64_t linked_size;
    int64_t not_before;      /* ms, monotonic: a retry waits until then */
    CURL *e;
    struct curl_slist *hdrs;
    long status;             /* of the current response */
    int checked;             /* its headers were checked (first body byte) */
    int have_range, have_length, encoded;
    uint64_t first, last, total, length; /* Content-Range a-b/total, Content-Length */
    char etag[256], lastmod[128];
    char error_code[64], error_message[256]; /* the Hub's X-Error-Code and X-Error-Message */
    char error_body[1536];   /* the start of an error reply's body (S3's XML error) */
    size_t error_len;
    int cut;       /* an error reply, cut once error_body was full: judged as if complete */
    oz_pace pace;  /* this attempt's */
    int err;       /* a status decided by a callback */
    int retryable; /* ... which a retry may cure */
    int complete;
    char range_s[64];
    char curl_error[CURL_ERROR_SIZE]; /* libcurl's words on a failure */
    uint8_t *buf;  /* the tail request's bytes */
} xfer;

/* Runs transfers x[0..n) to completion, `parallel` at a time, each retried
 * as its failure allows; the first status that ends them all, or 0. The
 * caller holds h->lock. */
int oz_http_run(oz_http *h, xfer *x, size_t n);

#endif
