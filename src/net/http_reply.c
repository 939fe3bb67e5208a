/* Each reply to a range request is checked before one byte of it is used:
 * status 206, the Content-Range asked for, the pinned total size and
 * validator, no more bytes than asked; any other reply is judged by its
 * status, no more of its body read than the message quotes. */
#include <stdio.h>
#include <strings.h>

#include "net/http_reply.h"
#include "net/s3.h"

/* Bytes libcurl may read past those it hands over (a redirect's body, read
 * to its end before the redirect is followed) before the request is cut. */
#define UNSEEN_MAX ((curl_off_t)64 << 10)

/* ---- reply headers ---------------------------------------------------- */

static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
    while (n && (*v == ' ' || *v == '\t')) v++, n--;
    while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' ')) n--;
    if (n >= cap) n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static int header_is(const char *line, size_t n, const char *name, const char **value, size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) || line[k] != ':') return 0;
    *value = line + k + 1;
    *vlen = n - k - 1;
    return 1;
}

static void parse_content_range(xfer *x, const char *v)
{
    unsigned long long a, b, t;
    x->have_range = sscanf(v, " bytes %llu-%llu/%llu", &a, &b, &t) == 3;
    x->first = a;
    x->last = b;
    x->total = t;
}

/* " from the server it redirects to" when the reply came from there. */
static const char *redirect_note(const xfer *x)
{
    return x->redirected ? " from the server it redirects to" : "";
}

/* 0 when a reply's first line is a status line "HTTP/x[.y] NNN ..." with
 * NNN in 100..599, else the error saying what it is instead. A reply with
 * no status line at all comes as an HTTP/0.9 reply's body (allowed for
 * this check only). */
static int bad_status_line(xfer *x, const char *p, size_t n)
{
    int http = n >= 5 && !strncmp(p, "HTTP/", 5);
    const char *sp = http ? memchr(p, ' ', n) : NULL, *end = p + n, *at = redirect_note(x);
    if (!sp) /* the line (or the bytes) end where a lenient reader guesses */
        return oz_err(ONNXZIP_EREPLY, -1, "%s: the reply for bytes %s%s has a malformed status line (%s): not an "
                      "HTTP reply", x->h->shown, x->range_s, at, http ? "no status code" : "none: it does not begin "
                      "with HTTP/");
    const char *c = sp + 1, *e = c;
    while (e < end && *e >= '0' && *e <= '9') e++;
    if (e - c == 3 && *c >= '1' && *c <= '5' && (e == end || *e == ' ' || *e == '\r' || *e == '\n')) return 0;
    while (e < end && e - c < 12 && *e != ' ' && *e != '\r' && *e != '\n') e++;
    char code[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EREPLY, -1, "%s: the reply for bytes %s%s has an invalid status code '%s' (not three digits "
                  "from 100 to 599): not an HTTP reply", x->h->shown, x->range_s, at,
                  oz_printable(c, (size_t)(e - c), code, sizeof code));
}

size_t oz_http_on_header(char *line, size_t size, size_t nitems, void *ud)
{
    xfer *x = ud;
    size_t n = size * nitems;
    const char *v;
    size_t vn;
    char buf[300];
    oz_pace_head(&x->pace, n);
    if (n >= 5 && !strncmp(line, "HTTP/", 5)) { /* a new response (a redirect's, or the final one) */
        if ((x->err = bad_status_line(x, line, n))) return 0;
        x->status = strtol(memchr(line, ' ', n), NULL, 10);
        x->have_range = x->have_length = x->encoded = 0;
        x->etag[0] = x->lastmod[0] = x->error_code[0] = x->error_message[0] = '\0';
        x->error_len = 0;
    } else if (header_is(line, n, "Content-Range", &v, &vn)) {
        copy_value(buf, sizeof buf, v, vn);
        parse_content_range(x, buf);
    } else if (header_is(line, n, "Content-Length", &v, &vn)) {
        copy_value(buf, sizeof buf, v, vn);
        char *end;
        x->length = strtoull(buf, &end, 10);
        x->have_length = end != buf && !*end;
    } else if (header_is(line, n, "ETag", &v, &vn)) {
        copy_value(x->etag, sizeof x->etag, v, vn);
    } else if (header_is(line, n, "Last-Modified", &v, &vn)) {
        copy_value(x->lastmod, sizeof x->lastmod, v, vn);
    } else if (header_is(line, n, "Content-Encoding", &v, &vn)) {
        copy_value(buf, sizeof buf, v, vn);
        x->encoded = strcasecmp(buf, "identity") != 0;
    } else if (header_is(line, n, "X-Error-Code", &v, &vn)) {
        copy_value(x->error_code, sizeof x->error_code, v, vn);
    } else if (header_is(line, n, "X-Error-Message", &v, &vn)) {
        copy_value(x->error_message, sizeof x->error_message, v, vn);
    } else if (header_is(line, n, "X-Linked-Size", &v, &vn)) { /* the Hub's redirect: the file's size */
        copy_value(buf, sizeof buf, v, vn);
        char *end;
        x->linked_size = strtoull(buf, &end, 10);
        x->have_linked = end != buf && !*end;
    }
    return n;
}

/* ---- reply checks ----------------------------------------------------- */

static int retryable_status(long s)
{
    return s >= 500 || s == 408 || s == 429;
}

/* The server's own words (S3's XML error: its code, message and the
 * region or key it names; the Hub's X-Error-Code and X-Error-Message,
 * which name GatedRepo, RepoNotFound...) and what was sent: for s3:// what
 * signed, for a 401 or 403 from the URL's origin the token's source, or why
 * none was. */
static const char *auth_note(const xfer *x, char *buf, size_t cap)
{
    const oz_http *h = x->h;
    char code[OZ_PRINTABLE_CAP], msg[sizeof x->error_message];
    size_t n = 0;
    buf[0] = '\0';
    char s3[600];
    if (oz_s3_error_note(x->error_body, x->error_len, s3, sizeof s3)[0] || h->auth.s3) {
        int moved = x->status == 301 || x->status == 307 || !strncmp(s3, "S3 AuthorizationHeaderMalformed", 31);
        snprintf(buf, cap, "%s%s%s%s%s", s3[0] ? ": " : "", s3, h->auth.s3 ? "; " : "",
                 h->auth.s3 ? h->auth.aws_source : "", h->auth.s3 && moved ? "; give the bucket's region "
                 "(--region, AWS_REGION) or endpoint (--endpoint-url)" : "");
        return buf;
    }
    if (x->error_code[0] || x->error_message[0])
        n = (size_t)snprintf(buf, cap, ": %s%s%s", oz_printable(x->error_code, strlen(x->error_code), code,
                             sizeof code), x->error_code[0] && x->error_message[0] ? ": " : "",
                             oz_printable(x->error_message, strlen(x->error_message), msg, sizeof msg));
    char *eff = NULL;
    curl_easy_getinfo(x->e, CURLINFO_EFFECTIVE_URL, &eff);
    if ((x->status != 401 && x->status != 403) || n >= cap || !oz_http_same_origin(eff, h->url)) return buf;
    if (h->auth.token)
        snprintf(buf + n, cap - n, "; %s was refused", h->auth.source);
    else
        snprintf(buf + n, cap - n, "; no token was sent (%s)", h->auth.why_none);
    return buf;
}

/* A reply that is not 206: its status, once the response is complete. */
static int status_error(xfer *x)
{
    oz_http *h = x->h;
    char note[1400];
    x->retryable = retryable_status(x->status);
    if (x->status == 200)
        return oz_err(ONNXZIP_ENORANGE, -1, "%s: the server answered a range request with the whole file (status "
                      "200): it does not serve byte ranges, which reading an archive in place needs", h->shown);
    if (x->status == 412)
        return oz_err(ONNXZIP_ECHANGED, -1, "%s: the file changed on the server since it was opened (412 "
                      "Precondition Failed for %s); reopen it", h->shown, h->validator);
    if (x->status == 416 && !x->r) /* a suffix range of an empty file */
        return oz_err(ONNXZIP_ENOTZIP, -1, "%s: the file is empty (416 for its last bytes): not an archive", h->shown);
    if (x->status == 416)
        return oz_err(ONNXZIP_ECHANGED, -1, "%s: bytes %s are no longer in the file (416 Range Not Satisfiable): it "
                      "changed on the server since it was opened", h->shown, x->range_s);
    return oz_err(ONNXZIP_EHTTP, -1, "%s: HTTP status %ld for bytes %s%s (attempt %u)%s", h->shown, x->status,
                  x->range_s, redirect_note(x), x->attempt + 1,
                  auth_note(x, note, sizeof note));
}

/* A 206's headers, before its first byte is used. */
static int check_reply(xfer *x)
{
    oz_http *h = x->h;
    if (x->h->pinned && x->etag[0] && h->etag[0] && strcmp(x->etag, h->etag))
        return oz_err(ONNXZIP_ECHANGED, -1, "%s: the file changed on the server since it was opened (ETag %s, "
                      "then %s)", h->shown, h->etag, x->etag);
    if (x->encoded)
        return oz_err(ONNXZIP_EREPLY, -1, "%s: the server sent bytes %s with a Content-Encoding: not the file's "
                      "bytes", h->shown, x->range_s);
    if (!x->have_range)
        return oz_err(ONNXZIP_EREPLY, -1, "%s: status 206 without a valid single Content-Range for bytes %s",
                      h->shown, x->range_s);
    uint64_t want_first = x->off + x->done, want_last = x->off + x->len - 1;
    if (!x->r) { /* the tail: the last min(suffix, size) bytes, whatever the size */
        want_last = x->total - 1;
        want_first = x->total > x->suffix ? x->total - x->suffix : 0;
    }
    if (x->total == 0 || x->first != want_first || x->last != want_last || x->last >= x->total)
        return oz_err(ONNXZIP_EREPLY, -1, "%s: asked for bytes %s, the server sent bytes %llu-%llu/%llu", h->shown,
                      x->range_s, (unsigned long long)x->first, (unsigned long long)x->last,
                      (unsigned long long)x->total);
    if (x->have_length && x->length != x->last - x->first + 1) /* not the reply's framing: it would cut the range */
        return oz_err(ONNXZIP_EREPLY, -1, "%s: the reply for bytes %s says Content-Length %llu, its Content-Range "
                      "bytes %llu-%llu holds %llu: its framing contradicts itself", h->shown, x->range_s,
                      (unsigned long long)x->length, (unsigned long long)x->first, (unsigned long long)x->last,
                      (unsigned long long)(x->last - x->first + 1));
    if (x->have_linked && x->total != x->linked_size)
        return oz_err(ONNXZIP_EREPLY, -1, "%s: its redirect says the file has %llu bytes (X-Linked-Size), the server "
                      "it leads to sent bytes %llu-%llu/%llu", h->shown, (unsigned long long)x->linked_size,
                      (unsigned long long)x->first, (unsigned long long)x->last, (unsigned long long)x->total);
    if (h->pinned && x->total != h->size)
        return oz_err(ONNXZIP_EREPLY, -1, "%s: the server now says the file has %llu bytes, it said %llu under the "
                      "same validator (%s)", h->shown, (unsigned long long)x->total, (unsigned long long)h->size,
                      h->validator);
    if (!x->r) {
        x->len = x->last - x->first + 1;
        x->off = x->first;
        if (!(x->buf = malloc((size_t)x->len)))
            return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (%llu bytes)", (unsigned long long)x->len);
    }
    return 0;
}

/* A reply other than 206 is judged by its status and headers alone: the
 * start of its body is kept for the message (S3 says why there), and the
 * transfer is cut once that is full, so that no more of an endless error
 * page, or of a whole file sent for a range, is read. */
static size_t keep_error(xfer *x, const char *p, size_t n)
{
    size_t room = sizeof x->error_body - x->error_len, keep = n < room ? n : room;
    memcpy(x->error_body + x->error_len, p, keep);
    x->error_len += keep;
    if (x->error_len < sizeof x->error_body) return n;
    x->cut = 1;
    return 0;
}

size_t oz_http_on_body(char *p, size_t size, size_t nitems, void *ud)
{
    xfer *x = ud;
    size_t n = size * nitems;
    if (x->err) return 0;
    oz_pace_got(&x->pace, n);
    if (!x->status) { /* no status line came: libcurl took the reply for HTTP/0.9 */
        x->err = bad_status_line(x, p, n);
        return 0;
    }
    if (x->status != 206) return keep_error(x, p, n);
    if (!x->checked++ && (x->err = check_reply(x))) return 0;
    if (n > x->len - x->done) {
        x->err = oz_err(ONNXZIP_EREPLY, -1, "%s: the server sent more than the %llu bytes asked (bytes %s)",
                        x->h->shown, (unsigned long long)x->len, x->range_s);
        return 0;
    }
    int rc = x->r ? x->r->sink(x->r->ctx, (const uint8_t *)p, n, x->off + x->done) : 0;
    if (!x->r) memcpy(x->buf + x->done, p, n);
    if (rc) {
        x->err = rc;
        return 0;
    }
    x->done += n;
    x->h->st.bytes_received += n;
    return n;
}

/* libcurl reads a redirect's body to its end before following it, without
 * handing it over: one that goes on and on is cut here. */
int oz_http_on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    xfer *x = ud;
    (void)dltotal, (void)ultotal, (void)ulnow;
    if (x->err || x->cut || dlnow - (curl_off_t)x->pace.got <= UNSEEN_MAX) return 0;
    x->err = oz_err(ONNXZIP_EREPLY, -1, "%s: a redirect (status %ld) answering for bytes %s has a body of more than "
                    "%lld bytes: not followed", x->h->shown, x->status, x->range_s, (long long)UNSEEN_MAX);
    return 1;
}

/* For an s3:// URL, which does not say where its requests go: "; endpoint
 * SCHEME://HOST[:PORT]" of the URL it maps to (an endpoint with user@ is
 * refused, so no secret is in it); "" otherwise. */
static const char *endpoint_note(const oz_http *h, char *buf, size_t cap)
{
    char host[OZ_PRINTABLE_CAP];
    const char *p = strstr(h->url, "://");
    if (!h->auth.s3 || !p) return "";
    size_t n = (size_t)(p + 3 - h->url) + strcspn(p + 3, "/?#");
    snprintf(buf, cap, "; endpoint %s", oz_printable(h->url, n, host, sizeof host));
    return buf;
}

/* libcurl refused the reply's headers for their size (a line of 100 KiB,
 * 300 KiB in all): 7.88 says "Out of memory" (CURLE_OUT_OF_MEMORY), 8.6 on
 * CURLE_TOO_LARGE. Before the body's first byte, that is what it means. */
static int headers_too_long(const xfer *x, CURLcode res)
{
#if LIBCURL_VERSION_NUM >= 0x080600
    if (res == CURLE_TOO_LARGE) return !x->pace.got;
#endif
    return res == CURLE_OUT_OF_MEMORY && !x->pace.got;
}

/* The status of a finished transfer; x->retryable tells whether to retry. */
int oz_http_judge(xfer *x, CURLcode res)
{
    oz_http *h = x->h;
    if (x->err) return x->err; /* decided by a callback */
    if (res == CURLE_OK && x->status == 206 && x->done == x->len && x->checked) return 0;
    if (res == CURLE_OK && x->status != 206) return status_error(x);
    if (x->r && x->checked && x->done == x->len) /* nothing is missing: a retry would ask for no byte */
        return oz_err(ONNXZIP_EREPLY, -1, "%s: the reply for bytes %s brought them all, then failed: %s", h->shown,
                      x->range_s, curl_easy_strerror(res));
    if (headers_too_long(x, res))
        return oz_err(ONNXZIP_EREPLY, -1, "%s: the reply for bytes %s%s has a header too long (a header line of 100 "
                      "KiB or more, or headers over libcurl's limit in all): refused", h->shown, x->range_s,
                      redirect_note(x));
    x->retryable = 1;
    switch (res) {
    case CURLE_OK:
    case CURLE_PARTIAL_FILE:
        return oz_err(ONNXZIP_ENETWORK, -1, "%s: the reply for bytes %s ended after %llu of %llu bytes (truncated; "
                      "attempt %u)", h->shown, x->range_s, (unsigned long long)x->done,
                      (unsigned long long)(x->r ? x->len : x->suffix), x->attempt + 1);
    case CURLE_OPERATION_TIMEDOUT: /* libcurl's only timeout here: the connection's */
        return oz_err(ONNXZIP_ETIMEOUT, -1, "%s: bytes %s: no connection within %u ms (attempt %u)", h->shown,
                      x->range_s, h->o.connect_timeout_ms, x->attempt + 1);
    case CURLE_COULDNT_CONNECT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        break;
    default:
        x->retryable = 0;
    }
    if (res == CURLE_TOO_MANY_REDIRECTS)
        return oz_err(ONNXZIP_EHTTP, -1, "%s: more than %u redirects", h->shown, h->o.max_redirects);
    if (res == CURLE_UNSUPPORTED_PROTOCOL && x->status >= 300 && x->status < 400)
        return oz_err(ONNXZIP_EHTTP, -1, "%s: redirected to a URL whose scheme is refused (%s)", h->shown,
                      h->o.allow_http ? "neither http nor https" : "plain http is not allowed");
    if (res == CURLE_UNSUPPORTED_PROTOCOL) /* libcurl's refusal of a status line (e.g. a code of 4 digits) */
        return oz_err(ONNXZIP_EREPLY, -1, "%s: the reply for bytes %s%s has an invalid status code or a malformed "
                      "status line (libcurl: %s): not an HTTP reply", h->shown, x->range_s, redirect_note(x),
                      x->curl_error[0] ? x->curl_error : "an invalid status code");
    char at[OZ_PRINTABLE_CAP + 16];
    return oz_err(ONNXZIP_ENETWORK, -1, "%s: bytes %s%s: %s (attempt %u)%s", h->shown, x->range_s,
                  redirect_note(x), curl_easy_strerror(res), x->attempt + 1,
                  endpoint_note(h, at, sizeof at));
}
