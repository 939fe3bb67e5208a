/* The transfer engine of the HTTP client, on libcurl's multi interface:
 * ranges run several at once, each timed against the pace rules
 * (policy.h); a transfer that fails in a way that may pass (5xx, 408, 429,
 * reset, timeout, short body) is retried from its first missing byte after
 * a doubling delay, while the other ranges go on.
 *
 * Redirects (the Hugging Face Hub's resolve URLs answer 302 to a CDN URL
 * with a signed query): the original URL is resolved once, by one request,
 * and every connection then goes to where it led (hf_transfer does the
 * same: the Hub is asked once per file, not per chunk). When the target
 * refuses a request with 403 (S3 and CloudFront's answer to an expired
 * signature), one request asks the original URL again while the others
 * wait for the new target: a CDN may honour only the newest signature,
 * and requests resolving it each for itself would refuse each other. */
#include <stdio.h>

#include "net/http_reply.h"

#define BULK_MIN ((uint64_t)1 << 20)
#define BULK_BUFFER (512L << 10)

/* ---- transfers -------------------------------------------------------- */

#if !defined(_WIN32) && LIBCURL_VERSION_NUM >= 0x075400
#include <unistd.h>

/* libcurl's CA bundle is a path fixed where it was built (Debian's, for the
 * static CLI and the wheels' bundled libcurl); where that file is missing,
 * as on Fedora or openSUSE, the first other distribution's bundle present,
 * or libcurl's own path (its error) when there is none. */
static void default_ca_file(CURL *e)
{
    static const char *const bundles[] = {
        "/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine, Arch */
        "/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
        "/etc/ssl/ca-bundle.pem",             /* openSUSE */
        "/etc/ssl/cert.pem",                  /* Alpine, macOS, BSDs */
    };
    char *built_in = NULL;
    if (curl_easy_getinfo(e, CURLINFO_CAINFO, &built_in) != CURLE_OK || !built_in || !access(built_in, R_OK))
        return;
    for (size_t i = 0; i < sizeof bundles / sizeof *bundles; i++)
        if (!access(bundles[i], R_OK)) {
            curl_easy_setopt(e, CURLOPT_CAINFO, bundles[i]);
            return;
        }
}
#else
static void default_ca_file(CURL *e)
{
    (void)e;
}
#endif


#if LIBCURL_VERSION_NUM >= 0x075000
/* libcurl is about to send a request: the one set up, or the one a redirect
 * leads to. What the redirect's reply said is no status of the next reply,
 * which may have none (no status line) or one libcurl refuses (2060): those
 * are judged as without the redirect, not as the redirect's 302 (status 302
 * "for bytes -N", a "refused scheme"). A 3xx whose target libcurl refuses
 * sends no request, so its status stays. */
static int on_request(void *ud, char *ip, char *local, int port, int local_port)
{
    xfer *x = ud;
    (void)ip, (void)local, (void)port, (void)local_port;
    x->redirected |= x->status != 0;
    x->status = 0;
    return CURL_PREREQFUNC_OK;
}
#endif

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
    x->checked = x->have_range = x->have_length = x->encoded = x->have_linked = x->cut = 0;
    x->curl_error[0] = '\0';
    x->original = x->force_original || !h->resolved || !h->target;
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
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, oz_http_on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
    /* Fewer, larger deliveries for bulk ranges: each costs a hash update and
     * a write (libcurl's default is 16 KiB). */
    if (x->len - x->done >= BULK_MIN) curl_easy_setopt(e, CURLOPT_BUFFERSIZE, (long)BULK_BUFFER);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->curl_error);
    /* A reply without a status line reaches oz_http_on_body() as HTTP/0.9,
     * which refuses it saying so (else libcurl's words for it are about a
     * refused protocol, as for a redirect to ftp://). */
#if LIBCURL_VERSION_NUM >= 0x074000 /* before 7.64, HTTP/0.9 was always allowed */
    curl_easy_setopt(e, CURLOPT_HTTP09_ALLOWED, 1L);
#endif
#if LIBCURL_VERSION_NUM >= 0x075000
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_request);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
#endif
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, oz_http_on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, oz_http_on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    char agent[64];
    snprintf(agent, sizeof agent, "onnxzip/%s", onnxzip_version());
    curl_easy_setopt(e, CURLOPT_USERAGENT, agent);
    if (h->o.ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, h->o.ca_file);
    else
        default_ca_file(e);
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    if ((h->pinned && !(x->hdrs = curl_slist_append(NULL, h->condition))) || s3_headers(h, &x->hdrs))
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (HTTP request)");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    return 0;
}

/* How often one range may be refused at a target before the refusal is
 * its error: a signature that expires again at once is no expiry. */
#define REFUSALS_MAX 3

typedef struct batch {
    oz_http *h;
    xfer *x;
    xfer *resolver; /* the request on its way to the original URL for a target */
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
    if (x->original && !b->h->resolved) b->resolver = x;
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
    h->resolved = 1;
    if (!eff || (h->target && !strcmp(eff, h->target)) || (!h->target && !strcmp(eff, h->url))) return;
    char *t = strcmp(eff, h->url) ? strdup(eff) : NULL;
    if (!t && strcmp(eff, h->url)) return; /* out of memory: keep following the redirect */
    free(h->target);
    h->target = t;
    h->target_auth = t && oz_http_same_origin(t, h->url);
    h->target_gen++;
}

/* Once the resolver's reply passed its checks, the others may go where it
 * went, without waiting for its body; 1 then. */
static int take_target(batch *b)
{
    xfer *x = b->resolver;
    if (!x || !x->checked || x->err) return 0;
    adopt_target(b->h, x->e);
    b->resolver = NULL;
    return 1;
}

/* A 403 from the redirect's target, as a presigned URL gets once its
 * signature expired (S3, CloudFront: "Request has expired"): the range
 * waits for the original URL to be resolved again, which the first such
 * refusal of the current target asks for. */
static int target_refused(oz_http *h, xfer *x, CURLcode res)
{
    if (res != CURLE_OK || x->err || x->original || x->status != 403 || x->refused >= REFUSALS_MAX) return 0;
    x->refused++;
    if (x->gen == h->target_gen) { /* not resolved again since this attempt began */
        free(h->target);
        h->target = NULL;
        h->resolved = 0;
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
    if (b->resolver == x) b->resolver = NULL;
    if (target_refused(h, x, res)) {
        x->not_before = 0;
        return;
    }
    int rc = oz_http_judge(x, res);
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
        if (b->resolver && !b->h->resolved) continue; /* waits for the target being resolved */
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

int oz_http_run(oz_http *h, xfer *x, size_t n)
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
        ended |= take_target(&b);
        if (!b.rc) pace_all(&b);
        /* A transfer ended (or a target came): its slot is refilled at once,
         * not after a poll that nothing may wake (with none active, for
         * `wait`: 1 s). */
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
