/* Remote archives behind a redirect, the Hugging Face Hub's way:
 * tests/remote/run.py starts HubRedirector (tests/remote/hub.py) in
 * front of nginx and runs
 *     test_remote_hub HUB_URL DOCROOT SHORT
 * HUB_URL/ORG/repo/resolve/main/NAME answers 302 to a signed URL on another
 * port (the CDN, which relays to nginx); ORG picks a behaviour (see
 * HubRedirector; "expiring" signs for SHORT seconds; "private" and
 * "gated" want `Authorization: Bearer TOKEN`, the 5th argument). Each case
 * compares with onnxzip_open() of the same file in DOCROOT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

static const char *hub, *docroot, *token;
static unsigned short_ttl;

static const char *hub_url(const char *org, const char *name)
{
    static char u[4][1024];
    static int slot;
    char *s = u[slot++ % 4];
    snprintf(s, sizeof u[0], "%s/%s/repo/resolve/main/%s", hub, org, name);
    return s;
}

static const char *local(const char *name)
{
    static char p[1024];
    snprintf(p, sizeof p, "%s/%s", docroot, name);
    return p;
}

static onnxzip_remote_options opts(void)
{
    onnxzip_remote_options o;
    onnxzip_remote_options_init(&o);
    o.allow_http = 1;
    o.stall_timeout_ms = 2000;
    o.backoff_ms = 50;
    o.retries = 1;
    return o;
}

/* DOCROOT/NAME: `n` UINT8 tensors w0.. of `each` bytes. */
static void write_archive(const char *name, int n, uint64_t each)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", local(name));
    onnxzip_writer *w = NULL;
    CHECK_RC(onnxzip_writer_create(tmp, NULL, &w), 0);
    uint8_t *p = malloc((size_t)each);
    for (int i = 0; i < n && w; i++) {
        char e[16];
        snprintf(e, sizeof e, "w%d", i);
        for (uint64_t k = 0; k < each; k++) p[k] = (uint8_t)(k * 31 + (uint64_t)i * 7 + (k >> 9));
        CHECK_RC(onnxzip_writer_add_memory(w, e, p, (size_t)each), 0);
    }
    free(p);
    size_t len;
    uint8_t *model = tu_model_entries(n, each, 10, &len);
    CHECK_RC(onnxzip_writer_set_model(w, model, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(model);
    CHECK(rename(tmp, local(name)) == 0);
}

/* Tensor `name` read over HTTP equals the local file's. */
static int same_tensor(onnxzip_archive *r, onnxzip_archive *l, const char *name)
{
    const onnxzip_tensor *a = onnxzip_find_tensor(r, name), *b = onnxzip_find_tensor(l, name);
    if (!a || !b || a->nbytes != b->nbytes || a->file_offset != b->file_offset) return 0;
    uint8_t *x = malloc((size_t)a->nbytes), *y = malloc((size_t)a->nbytes);
    int same = onnxzip_tensor_read(r, a, 0, a->nbytes, x) == 0 && onnxzip_tensor_read(l, b, 0, b->nbytes, y) == 0 &&
               !memcmp(x, y, (size_t)a->nbytes);
    if (!same) printf("tensor %s: %s\n", name, onnxzip_last_error()->message);
    free(x);
    free(y);
    return same;
}

static onnxzip_remote_stats stats(const onnxzip_archive *r)
{
    onnxzip_remote_stats st;
    memset(&st, 0, sizeof st);
    if (r) onnxzip_remote_get_stats(r, &st);
    return st;
}

/* One redirect per open, none per read: later requests go to the CDN URL
 * the first one was redirected to, under the CDN's ETag (the redirect's own
 * ETag, pinned, would fail If-Match there). */
static void test_same(void)
{
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL, *l = NULL;
    CHECK_RC(onnxzip_open_url(hub_url("org", "hub.onnxzip"), &o, &r), 0);
    CHECK_RC(onnxzip_open(local("hub.onnxzip"), 0, &l), 0);
    if (!r || !l) goto out;
    onnxzip_remote_stats st = stats(r);
    CHECK(st.requests == 1 && st.redirects == 1 && st.file_size > 200000);
    CHECK(!strcmp(onnxzip_archive_path(r), hub_url("org", "hub.onnxzip")));
    CHECK(onnxzip_tensor_count(r) == onnxzip_tensor_count(l) && onnxzip_entry_count(r) == onnxzip_entry_count(l));
    CHECK(same_tensor(r, l, "w0") && same_tensor(r, l, "w1"));
    st = stats(r);
    printf("hub: open + 2 tensor reads: %llu requests, %llu redirects, %llu bytes\n",
           (unsigned long long)st.requests, (unsigned long long)st.redirects,
           (unsigned long long)st.bytes_received);
    CHECK(st.redirects == 1 && st.requests == 5 && st.retries == 0); /* the tail; a header and data each */
    CHECK_RC(onnxzip_verify(r), 0);
    CHECK(stats(r).redirects == 1);
    CHECK_RC(onnxzip_check(r), 0); /* asks the Hub URL itself: its redirect followed again */
    CHECK(stats(r).redirects == 2);
    CHECK(same_tensor(r, l, "w1") && stats(r).redirects == 2);
out:
    onnxzip_close(&r);
    onnxzip_close(&l);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* A signature that expired between two reads: the refused range (403) is
 * asked again from the Hub URL, whose redirect signs anew; then the new
 * CDN URL serves the later reads. */
static void test_expired(void)
{
    onnxzip_remote_options o = opts();
    o.retries = 0; /* the recovery is not a retry */
    onnxzip_archive *r = NULL, *l = NULL;
    CHECK_RC(onnxzip_open_url(hub_url("expiring", "hub.onnxzip"), &o, &r), 0);
    CHECK_RC(onnxzip_open(local("hub.onnxzip"), 0, &l), 0);
    if (!r || !l) goto out;
    CHECK(same_tensor(r, l, "w0") && stats(r).redirects == 1);
    sleep_ms((long)short_ttl * 1000 + 1500);
    CHECK(same_tensor(r, l, "w0")); /* one range (the header was checked): refused once, then redirected */
    onnxzip_remote_stats st = stats(r);
    CHECK(st.redirects == 2 && st.retries == 0 && st.requests == 5); /* 3, then the refused one and its repeat */
    CHECK(same_tensor(r, l, "w1") && stats(r).redirects == 2); /* the new signature */
    CHECK_RC(onnxzip_verify(r), 0);
out:
    onnxzip_close(&r);
    onnxzip_close(&l);
}

/* No message shows the query (the signature), of the URL or of where it
 * redirects to, nor the URL's user:password. */
static void quiet(const char *what)
{
    const char *m = onnxzip_last_error()->message;
    printf("%s: %s\n", what, m);
    CHECK(!strstr(m, "Signature") && !strstr(m, "Expires") && !strstr(m, "hunter2") && !strstr(m, "?X"));
    CHECK(strstr(m, "/resolve/main/hub.onnxzip") != NULL);
}

static void test_refusals(void)
{
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL;
    CHECK_RC(onnxzip_open_url(hub_url("wrongsize", "hub.onnxzip"), &o, &r), ONNXZIP_EREPLY);
    quiet("wrongsize");
    CHECK(strstr(onnxzip_last_error()->message, "X-Linked-Size") != NULL);
    CHECK_RC(onnxzip_open_url(hub_url("forbidden", "hub.onnxzip"), &o, &r), ONNXZIP_EHTTP);
    quiet("forbidden");
    CHECK(strstr(onnxzip_last_error()->message, "403") != NULL);
    CHECK_RC(onnxzip_open_url(hub_url("deadcdn", "hub.onnxzip"), &o, &r), ONNXZIP_ENETWORK);
    quiet("deadcdn");
    char u[1100];
    const char *plain = hub_url("wrongsize", "hub.onnxzip");
    snprintf(u, sizeof u, "http://user:hunter2@%s", plain + 7);
    CHECK_RC(onnxzip_open_url(u, &o, &r), ONNXZIP_EREPLY);
    quiet("userinfo");
    CHECK_RC(onnxzip_open_url(hub_url("noetag", "hub.onnxzip"), &o, &r), 0); /* the CDN's ETag is pinned */
    uint8_t b[16];
    if (r) CHECK_RC(onnxzip_tensor_read(r, onnxzip_find_tensor(r, "w1"), 0, sizeof b, b), 0);
    onnxzip_close(&r);
    snprintf(u, sizeof u, "http://user:hunter2@%s", hub_url("org", "hub.onnxzip") + 7);
    CHECK_RC(onnxzip_open_url(u, &o, &r), 0);
    if (r) CHECK(!strstr(onnxzip_archive_path(r), "hunter2") && strstr(onnxzip_archive_path(r), "...@127.0.0.1"));
    onnxzip_close(&r);
}

/* A private or gated repository opened with a token: the Hub gets it,
 * the CDN never (it refuses any Authorization with 400: one forwarded on
 * the redirect would fail the open, one sent on a later request would
 * cost another redirect). */
static void open_with_token(const char *org, const char *bearer, const char *what)
{
    onnxzip_remote_options o = opts();
    o.bearer_token = bearer;
    onnxzip_archive *r = NULL, *l = NULL;
    CHECK_RC(onnxzip_open_url(hub_url(org, "hub.onnxzip"), &o, &r), 0);
    CHECK_RC(onnxzip_open(local("hub.onnxzip"), 0, &l), 0);
    if (!r || !l) {
        printf("%s %s: %s\n", org, what, onnxzip_last_error()->message);
        goto out;
    }
    CHECK(stats(r).requests == 1 && stats(r).redirects == 1);
    CHECK(same_tensor(r, l, "w0") && same_tensor(r, l, "w1"));
    CHECK_RC(onnxzip_verify(r), 0);
    onnxzip_remote_stats st = stats(r);
    printf("%s, %s: %llu requests, %llu redirect(s), %llu retries\n", org, what, (unsigned long long)st.requests,
           (unsigned long long)st.redirects, (unsigned long long)st.retries);
    CHECK(st.redirects == 1 && st.retries == 0);
    CHECK_RC(onnxzip_check(r), 0); /* the Hub again: the token again */
    CHECK(stats(r).redirects == 2);
out:
    onnxzip_close(&r);
    onnxzip_close(&l);
}

/* A refused open: `status`, and a message holding each of `says` (NULL
 * ended) and neither the token nor `secret`. */
static void refused(const char *org, const char *bearer, int status, const char *secret, const char *const *says)
{
    onnxzip_remote_options o = opts();
    o.bearer_token = bearer;
    onnxzip_archive *r = NULL;
    CHECK_RC(onnxzip_open_url(hub_url(org, "hub.onnxzip"), &o, &r), status);
    const char *m = onnxzip_last_error()->message;
    printf("%s (%s): %s\n", org, bearer ? (*bearer ? "a token" : "\"\"") : "NULL", m);
    CHECK(!strstr(m, token) && (!secret || !strstr(m, secret)));
    for (; *says; says++)
        if (!strstr(m, *says)) {
            printf("  ... does not say '%s'\n", *says);
            CHECK(0);
        }
    onnxzip_close(&r);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fputs(text, f) >= 0);
    if (f) fclose(f);
}

static void test_tokens(char *dir)
{
    open_with_token("private", token, "the bearer_token option");
    open_with_token("gated", token, "the bearer_token option");
    const char *wrong = "hf_wrongTokenValue123";
    const char *no_token[] = { "401", "RepoNotFound: Repository not found", "no token was sent",
                               "/private/repo/resolve/main/hub.onnxzip", NULL };
    refused("private", NULL, ONNXZIP_EHTTP, NULL, no_token); /* not a Hub URL: nothing found for it */
    refused("private", "", ONNXZIP_EHTTP, NULL, no_token);
    const char *gated[] = { "401", "GatedRepo: Access to model gated/repo is restricted", "Please log in",
                            "no token was sent", NULL };
    refused("gated", "", ONNXZIP_EHTTP, NULL, gated);
    const char *invalid[] = { "401", "Invalid credentials in Authorization header",
                              "the token given was refused", NULL };
    refused("private", wrong, ONNXZIP_EHTTP, wrong, invalid);
    const char *no_access[] = { "403", "GatedRepo", "not in the authorized list", "was refused", NULL };
    refused("gated", wrong, ONNXZIP_EHTTP, wrong, no_access);
    const char *bad[] = { "visible ASCII", NULL };
    refused("private", "hf_abc\r\nX-Injected: 1", ONNXZIP_EINVAL, "X-Injected", bad);
    refused("private", "hf abc", ONNXZIP_EINVAL, "hf abc", bad);

    /* NULL: the Hugging Face token, for URLs on $HF_ENDPOINT's origin. */
    setenv("HF_ENDPOINT", hub, 1);
    setenv("HF_HOME", dir, 1);
    unsetenv("HF_TOKEN_PATH");
    const char *hint[] = { "401", "RepoNotFound", "set HF_TOKEN or run `hf auth login`", NULL };
    refused("private", NULL, ONNXZIP_EHTTP, NULL, hint);
    setenv("HF_TOKEN", token, 1);
    open_with_token("private", NULL, "$HF_TOKEN");
    setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1", 1);
    const char *disabled[] = { "401", "HF_HUB_DISABLE_IMPLICIT_TOKEN is set", NULL };
    refused("private", NULL, ONNXZIP_EHTTP, NULL, disabled);
    unsetenv("HF_HUB_DISABLE_IMPLICIT_TOKEN");
    setenv("HF_TOKEN", wrong, 1);
    const char *env_refused[] = { "the token from $HF_TOKEN was refused", NULL };
    refused("private", NULL, ONNXZIP_EHTTP, wrong, env_refused);
    unsetenv("HF_TOKEN");
    char text[256];
    snprintf(text, sizeof text, "\n  %s \r\n", token); /* as huggingface_hub cleans it */
    write_text(tu_path(dir, "token"), text);
    open_with_token("private", NULL, "$HF_HOME/token");
    write_text(tu_path(dir, "other"), wrong);
    setenv("HF_TOKEN_PATH", tu_path(dir, "other"), 1);
    const char *file_refused[] = { "the token from ", "/other was refused", NULL };
    refused("private", NULL, ONNXZIP_EHTTP, wrong, file_refused);
    open_with_token("private", token, "the bearer_token option before $HF_TOKEN_PATH");
    unsetenv("HF_TOKEN_PATH");
    unsetenv("HF_ENDPOINT");
    refused("private", NULL, ONNXZIP_EHTTP, NULL, no_token); /* $HF_HOME/token is not for other hosts */
}

/* A whole download: every part from the CDN URL, one redirect. */
static void test_fetch(char *dir)
{
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL;
    const char *out = tu_path(dir, "hub.onnxzip");
    CHECK_RC(onnxzip_open_url(hub_url("org", "hub.onnxzip"), &o, &r), 0);
    if (r) CHECK_RC(onnxzip_fetch(r, out, NULL, NULL), 0);
    CHECK(stats(r).redirects == 1);
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(out, ONNXZIP_OPEN_VERIFY, &a), 0);
    onnxzip_close(&a);
    onnxzip_close(&r);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: test_remote_hub HUB_URL DOCROOT SHORT TOKEN (run by tests/remote/run.py)\n");
        return 2;
    }
    hub = argv[1];
    docroot = argv[2];
    short_ttl = (unsigned)atoi(argv[3]);
    token = argv[4];
    char *dir = tu_tmpdir();
    write_archive("hub.onnxzip", 2, 100000);
    test_same();
    test_expired();
    test_refusals();
    test_fetch(dir);
    test_tokens(dir);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("remote_hub");
}
