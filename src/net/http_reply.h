/* The replies to range requests, judged (net/http_reply.c): libcurl's
 * header, body and progress callbacks of a transfer, and the status a
 * finished transfer ends with. Private to src/net. */
#ifndef ONNXZIP_HTTP_REPLY_H
#define ONNXZIP_HTTP_REPLY_H

#include "net/http_transfer.h"

/* libcurl callbacks; `ud` is the xfer. */
size_t oz_http_on_header(char *line, size_t size, size_t nitems, void *ud);
size_t oz_http_on_body(char *p, size_t size, size_t nitems, void *ud);
int oz_http_on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

/* The status of a finished transfer; x->retryable tells whether to retry. */
int oz_http_judge(xfer *x, CURLcode res);

#endif
