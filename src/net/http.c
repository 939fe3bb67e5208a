/* HTTP(S) byte ranges through libcurl's multi interface: every reply is
 * checked before one byte of it is used (status 206, the Content-Range
 * asked for, the pinned total size and validator, no more bytes than asked;
 * any other reply is judged by its status, no more of its body read than
 * the message quotes), every transfer is timed against the pace rules
 * (policy.h), and a transfer that fails in a way that may pass (5xx, 408,
 * 429, reset, timeout, short body) is retried from its first missing byte
 * after a doubling delay, while the other ranges go on.
 *
 * Redirects (the Hugging Face Hub's resolve URLs answer 302 to a CDN URL
 * with a signed query): requests go to the URL the last request sent to the
 * original URL ended at, saving the redirect's round trip; a refusal there
 * (an expired signature) sends that range to the original URL once more. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <strings.h>

#include "net/http.h"
#include "net/http_auth.h"
#include "net/policy.h"
#include "net/s3.h"

struct oz_http {
    char *url, *shown;
    char *target;        /* where the original URL redirected to (NULL: no redirect) */
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
    int reresolved;          /* sent to the original URL again after a refusal at the target */
    unsigned gen;            /* h->target_gen when this attempt started */
    int have_linked;         /* a reply (the redirect) carried X-Linked-Size */
    uint64_t linked_size;
    int64_t not_before;      /* ms, monotonic: a retry waits until then */
    CURL *e;
    struct curl_slist *hdrs;
    long status;             /* of the current response */
    int checked;             /* its headers were checked (first body byte) */
    int have_range, encoded;
    uint64_t first, last, total;
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
    uint8_t *buf;  /* the tail request's bytes */
} xfer;

#define BULK_MIN ((uint64_t)1 << 20)
#define BULK_BUFFER (512L << 10)
/* Bytes libcurl may read past those it hands over (a redirect's body, read
 * to its end before the redirect is followed) before the request is cut. */
#define UNSEEN_MAX ((curl_off_t)64 << 10)

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

static size_t on_header(char *line, size_t size, size_t nitems, void *ud)
{
    xfer *x = ud;
    size_t n = size * nitems;
    const char *v;
    size_t vn;
    char buf[300];
    if (n >= 5 && !strncmp(line, "HTTP/", 5)) { /* a new response (a redirect's, or the final one) */
        const char *sp = memchr(line, ' ', n);
        x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        x->have_range = x->encoded = 0;
        x->etag[0] = x->lastmod[0] = x->error_code[0] = x->error_message[0] = '\0';
        x->error_len = 0;
    } else if (header_is(line, n, "Content-Range", &v, &vn)) {
        copy_value(buf, sizeof buf, v, vn);
        parse_content_range(x, buf);
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
                  x->range_s, x->redirected ? " from the server it redirects to" : "", x->attempt + 1,
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

static size_t on_body(char *p, size_t size, size_t nitems, void *ud)
{
    xfer *x = ud;
    size_t n = size * nitems;
    if (x->err) return 0;
    oz_pace_got(&x->pace, n);
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
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    xfer *x = ud;
    (void)dltotal, (void)ultotal, (void)ulnow;
    if (x->err || x->cut || dlnow - (curl_off_t)x->pace.got <= UNSEEN_MAX) return 0;
    x->err = oz_err(ONNXZIP_EREPLY, -1, "%s: a redirect (status %ld) answering for bytes %s has a body of more than "
                    "%lld bytes: not followed", x->h->shown, x->status, x->range_s, (long long)UNSEEN_MAX);
    return 1;
}

/* ---- transfers -------------------------------------------------------- */

/* A signed S3 request's own headers, signed with it: S3 requires
 * x-amz-content-sha256, which libcurl 7.88 does not add; a GET has no
 * payload to hash, so UNSIGNED-PAYLOAD (spec 17.6.3). */
static int s3_headers(const oz_http *h, struct curl_slist **l)
{
    struct curl_slist *t;
    if (!h->auth.aws_userpwd) return 0;
    if (!(t = curl_slist_append(*l, "x-amz-content-sha256: UNSIGNED-PAYLOAD"))) return -1;
    *l = t;
    if (h->auth.aws_token && !(t = curl_slist_append(*l, h->auth.aws_token))) return -1;
    *l = t;
    return 0;
}

static int setup(xfer *x)
{
    oz_http *h = x->h;
    if (!x->e && !(x->e = curl_easy_init())) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (HTTP request)");
    CURL *e = x->e;
    curl_easy_reset(e);
    if (!x->r) { /* the tail is asked again whole: the size it ends at may not be known yet */
        free(x->buf);
        x->buf = NULL;
        x->done = x->len = 0;
    }
    x->status = 0;
    x->checked = x->have_range = x->encoded = x->have_linked = x->cut = 0;
    x->original = x->force_original || !h->target;
    x->redirected = !x->original;
    x->gen = h->target_gen;
    x->err = x->retryable = 0;
    if (x->r)
        snprintf(x->range_s, sizeof x->range_s, "%llu-%llu", (unsigned long long)(x->off + x->done),
                 (unsigned long long)(x->off + x->len - 1));
    else
        snprintf(x->range_s, sizeof x->range_s, "-%u", x->suffix);
    oz_pace_start(&x->pace, x->r ? x->len - x->done : x->suffix, &h->o);
    const char *protos = h->o.allow_http ? "http,https" : "https";
    curl_easy_setopt(e, CURLOPT_URL, x->original ? h->url : h->target);
    /* The token goes to the URL's origin only: libcurl (>= 7.83) drops it
     * on a redirect to another host, port or scheme unless
     * CURLOPT_UNRESTRICTED_AUTH (left 0); a signed target gets none. */
    if (h->auth.token && (x->original || h->target_auth)) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(e, CURLOPT_XOAUTH2_BEARER, h->auth.token);
    }
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, protos);
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, protos);
#else
    long bits = CURLPROTO_HTTPS | (h->o.allow_http ? CURLPROTO_HTTP : 0);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS, bits);
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS, bits);
#endif
    curl_easy_setopt(e, CURLOPT_RANGE, x->range_s);
    /* S3 answers a GET in place (a 301 names the right region: an error);
     * a followed redirect would carry the signature elsewhere. */
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, h->o.max_redirects && !h->auth.s3 ? 1L : 0L);
    if (h->auth.s3) curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L); /* the key's path as signed: no ./.. removed */
#if LIBCURL_VERSION_NUM >= 0x074b00
    if (h->auth.aws_userpwd) {
        curl_easy_setopt(e, CURLOPT_AWS_SIGV4, h->auth.aws_sigv4);
        curl_easy_setopt(e, CURLOPT_USERPWD, h->auth.aws_userpwd);
    }
#endif
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, (long)h->o.max_redirects);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)h->o.connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L); /* stalls, slow replies and deadlines: pace_all() */
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
    /* Fewer, larger deliveries for bulk ranges: each costs a hash update and
     * a write (libcurl's default is 16 KiB). */
    if (x->len - x->done >= BULK_MIN) curl_easy_setopt(e, CURLOPT_BUFFERSIZE, (long)BULK_BUFFER);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    char agent[64];
    snprintf(agent, sizeof agent, "onnxzip/%s", onnxzip_version());
    curl_easy_setopt(e, CURLOPT_USERAGENT, agent);
    if (h->o.ca_file) curl_easy_setopt(e, CURLOPT_CAINFO, h->o.ca_file);
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    if ((h->pinned && !(x->hdrs = curl_slist_append(NULL, h->condition))) || s3_headers(h, &x->hdrs))
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (HTTP request)");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    return 0;
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

/* The status of a finished transfer; x->retryable tells whether to retry. */
static int judge(xfer *x, CURLcode res)
{
    oz_http *h = x->h;
    if (x->err) return x->err; /* decided by a callback */
    if (res == CURLE_OK && x->status == 206 && x->done == x->len && x->checked) return 0;
    if (res == CURLE_OK && x->status != 206) return status_error(x);
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
    if (res == CURLE_UNSUPPORTED_PROTOCOL)
        return oz_err(ONNXZIP_EHTTP, -1, "%s: redirected to a URL whose scheme is refused (%s)", h->shown,
                      h->o.allow_http ? "neither http nor https" : "plain http is not allowed");
    char at[OZ_PRINTABLE_CAP + 16];
    return oz_err(ONNXZIP_ENETWORK, -1, "%s: bytes %s%s: %s (attempt %u)%s", h->shown, x->range_s,
                  x->redirected ? " from the server it redirects to" : "", curl_easy_strerror(res), x->attempt + 1,
                  endpoint_note(h, at, sizeof at));
}

typedef struct batch {
    oz_http *h;
    xfer *x;
    size_t n, active, finished;
    size_t first; /* every xfer before it is complete */
    CURL **pool;  /* easy handles of completed xfers, for the next ones */
    size_t npool;
    int64_t paced; /* when pace_all() last looked */
    int rc;
} batch;

static int start(batch *b, xfer *x)
{
    int rc = setup(x);
    if (rc) return rc;
    if (x->attempt) b->h->st.retries++;
    b->h->st.requests++;
    if (curl_multi_add_handle(b->h->multi, x->e) != CURLM_OK)
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: cannot start a request", b->h->shown);
    b->active++;
    return 0;
}

/* After a request to the original URL: later ones go where it ended up
 * (or, when it was not redirected, to the original URL itself). */
static void adopt_target(oz_http *h, CURL *e)
{
    char *eff = NULL;
    curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &eff);
    if (!eff || (h->target && !strcmp(eff, h->target)) || (!h->target && !strcmp(eff, h->url))) return;
    char *t = strcmp(eff, h->url) ? strdup(eff) : NULL;
    if (!t && strcmp(eff, h->url)) return; /* out of memory: keep following the redirect */
    free(h->target);
    h->target = t;
    h->target_auth = t && oz_http_same_origin(t, h->url);
    h->target_gen++;
}

/* A refusal by the redirect's target, as presigned URLs get once their
 * signature expired (S3 and CloudFront: 403; others 400, 401, 410): the
 * range goes to the original URL once more, for a fresh redirect. */
static int target_refused(oz_http *h, xfer *x, CURLcode res)
{
    long s = x->status;
    if (res != CURLE_OK || x->err || x->original || x->reresolved || !(s == 400 || s == 401 || s == 403 || s == 410))
        return 0;
    x->reresolved = 1;
    if (x->gen == h->target_gen) { /* no other range resolved it again meanwhile */
        free(h->target);
        h->target = NULL;
        h->target_gen++;
    }
    return 1;
}

/* A finished transfer: done, failed, or queued again for a retry. */
static void finish(batch *b, xfer *x, CURLcode res)
{
    oz_http *h = b->h;
    if (x->cut && res == CURLE_WRITE_ERROR) res = CURLE_OK; /* an error reply, judged by its status */
    curl_multi_remove_handle(h->multi, x->e);
    b->active--;
    long redirects = 0;
    curl_easy_getinfo(x->e, CURLINFO_REDIRECT_COUNT, &redirects);
    h->st.redirects += (uint64_t)redirects;
    x->redirected |= redirects > 0;
    if (target_refused(h, x, res)) {
        x->not_before = 0;
        return;
    }
    int rc = judge(x, res);
    if (!rc) {
        if (x->original) adopt_target(h, x->e);
        x->complete = 1;
        b->finished++;
        return;
    }
    if (x->retryable && x->attempt < b->h->o.retries) {
        unsigned k = x->attempt++ < 20 ? x->attempt - 1 : 20;
        x->not_before = oz_now_ms() + (int64_t)b->h->o.backoff_ms * ((int64_t)1 << k);
        return;
    }
    b->rc = rc;
}

/* Starts what may start now; returns how long (ms) until a waiting retry may. */
static int64_t launch(batch *b)
{
    int64_t t = oz_now_ms(), wait = 1000;
    while (b->first < b->n && b->x[b->first].complete) b->first++;
    for (size_t i = b->first; i < b->n && b->active < b->h->o.parallel && !b->rc; i++) {
        xfer *x = &b->x[i];
        if (x->complete) continue;
        if (x->not_before < 0) continue; /* running */
        if (x->not_before > t) {
            if (x->not_before - t < wait) wait = x->not_before - t;
            continue;
        }
        x->not_before = -1;
        if (!x->e && b->npool) x->e = b->pool[--b->npool];
        int rc = start(b, x);
        if (rc) b->rc = rc;
    }
    return wait;
}

/* A completed xfer's easy handle goes to the next one: at most `parallel`
 * handles (each with its receive buffer) live however many ranges there
 * are. Connections stay in the multi handle's cache either way. */
static void recycle(batch *b, xfer *x)
{
    if (b->pool && b->npool < b->h->o.parallel) b->pool[b->npool++] = x->e;
    else curl_easy_cleanup(x->e);
    x->e = NULL;
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
}

/* Gives up the running transfers that break a pace rule (policy.h), as
 * failed attempts; looks every 50 ms at most. */
static void pace_all(batch *b)
{
    int64_t t = oz_now_ms();
    size_t running = b->active, seen = 0;
    if (t - b->paced < 50) return;
    b->paced = t;
    for (size_t i = b->first; i < b->n && seen < running && !b->rc; i++) {
        xfer *x = &b->x[i];
        if (x->complete || x->not_before >= 0) continue;
        seen++;
        if (!(x->err = oz_pace_check(&x->pace, &b->h->o, b->h->shown, x->range_s, x->attempt))) continue;
        x->retryable = 1;
        x->not_before = 0;
        finish(b, x, CURLE_OPERATION_TIMEDOUT);
    }
}

static int run(oz_http *h, xfer *x, size_t n)
{
    batch b = { .h = h, .x = x, .n = n, .pool = n > 1 ? calloc(h->o.parallel, sizeof(CURL *)) : NULL };
    for (size_t i = 0; i < n; i++) x[i].not_before = 0;
    while (!b.rc && b.finished < n) {
        int64_t wait = launch(&b);
        if (b.rc) break;
        int running = 0;
        curl_multi_perform(h->multi, &running);
        CURLMsg *m;
        int left, ended = 0;
        while ((m = curl_multi_info_read(h->multi, &left))) {
            if (m->msg != CURLMSG_DONE) continue;
            ended = 1;
            xfer *done = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&done);
            CURLcode res = m->data.result;
            done->not_before = 0;
            finish(&b, done, res);
            if (done->complete && done->r) recycle(&b, done);
        }
        if (!b.rc) pace_all(&b);
        /* A transfer ended: its slot is refilled at once, not after a poll
         * that nothing may wake (with none active, for `wait`: 1 s). */
        if (!b.rc && b.finished < n && !ended)
            curl_multi_poll(h->multi, NULL, 0, (int)(b.active ? 100 : wait), NULL);
    }
    for (size_t i = 0; i < n; i++) {
        if (x[i].e) {
            if (x[i].not_before < 0) curl_multi_remove_handle(h->multi, x[i].e);
            curl_easy_cleanup(x[i].e);
        }
        curl_slist_free_all(x[i].hdrs);
    }
    while (b.npool) curl_easy_cleanup(b.pool[--b.npool]);
    free(b.pool);
    return b.rc;
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
    int rc = run(h, &x, 1);
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
    int rc = k ? run(h, x, k) : 0;
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
    int rc = run(h, &x, 1);
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
