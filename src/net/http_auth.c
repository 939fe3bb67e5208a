/* Bearer tokens of remote archives (http_auth.h). The Hugging Face
 * convention is huggingface_hub's get_token() (2.4): $HF_TOKEN, else
 * $HUGGING_FACE_HUB_TOKEN, else the file $HF_TOKEN_PATH, else
 * $HF_HOME/token; each cleaned as it cleans them (CR and LF removed,
 * whitespace stripped; empty means none). It is only ever sent to the Hub's
 * own origins: a token for huggingface.co is no business of other hosts. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <strings.h>

#include "net/http_auth.h"
#include "common/sys.h"

#define TOKEN_FILE_MAX 65536

typedef struct origin {
    char *scheme, *host, *port;
} origin;

static void origin_free(origin *o)
{
    curl_free(o->scheme);
    curl_free(o->host);
    curl_free(o->port);
}

static int origin_of(const char *url, origin *o)
{
    memset(o, 0, sizeof *o);
    CURLU *u = curl_url();
    int ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_SCHEME, &o->scheme, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_HOST, &o->host, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_PORT, &o->port, CURLU_DEFAULT_PORT) == CURLUE_OK;
    curl_url_cleanup(u);
    if (!ok) origin_free(o);
    return ok ? 0 : -1;
}

int oz_http_same_origin(const char *a, const char *b)
{
    origin x, y;
    if (!a || !b || origin_of(a, &x)) return 0;
    if (origin_of(b, &y)) {
        origin_free(&x);
        return 0;
    }
    int same = !strcasecmp(x.scheme, y.scheme) && !strcasecmp(x.host, y.host) && !strcmp(x.port, y.port);
    origin_free(&x);
    origin_free(&y);
    return same;
}

/* https://huggingface.co, https://hf.co, or $HF_ENDPOINT's origin. */
static int hub_url(const char *url)
{
    const char *endpoint = getenv("HF_ENDPOINT");
    if (endpoint && *endpoint && oz_http_same_origin(url, endpoint)) return 1;
    return oz_http_same_origin(url, "https://huggingface.co") || oz_http_same_origin(url, "https://hf.co");
}

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true"));
}

/* huggingface_hub's _clean_token(): CR and LF removed, whitespace stripped;
 * NULL for nothing left (or out of memory: *nomem set). */
static char *clean(const char *s, size_t n, int *nomem)
{
    char *t = malloc(n + 1);
    if (!t) {
        *nomem = 1;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '\r' && s[i] != '\n') t[k++] = s[i];
    size_t a = 0;
    while (a < k && strchr(" \t\v\f", t[a])) a++;
    while (k > a && strchr(" \t\v\f", t[k - 1])) k--;
    memmove(t, t + a, k - a);
    t[k - a] = '\0';
    if (k > a) return t;
    free(t);
    return NULL;
}

/* The token file's path: $HF_TOKEN_PATH, else $HF_HOME/token, $HF_HOME
 * defaulting to $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface. */
static char *token_path(void)
{
    const char *path = getenv("HF_TOKEN_PATH"), *home = getenv("HF_HOME"), *xdg = getenv("XDG_CACHE_HOME");
    if (path && *path) return oz_expand_home(path);
    char buf[4200];
    if (home && *home)
        snprintf(buf, sizeof buf, "%s/token", home);
    else
        snprintf(buf, sizeof buf, "%s/huggingface/token", xdg && *xdg ? xdg : "~/.cache");
    return oz_expand_home(buf);
}

/* The cleaned content of the token file `path` into *token (NULL: absent
 * or empty). */
static int read_token_file(const char *path, char **token)
{
    int fd = oz_sys_open_read(path);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) return 0;
    if (fd < 0) return oz_err_sys(ONNXZIP_EIO, -1, path, "cannot open the Hugging Face token file %s: %s", path,
                                  strerror(errno));
    oz_stat st;
    int rc = oz_sys_fstat(fd, &st) ? oz_err_sys(ONNXZIP_EIO, -1, path, "%s: %s", path, strerror(errno)) : 0;
    if (!rc && st.kind != OZ_KIND_REG) rc = oz_err_not_regular(path, st.kind);
    if (!rc && st.size > TOKEN_FILE_MAX)
        rc = oz_err(ONNXZIP_EIO, -1, "%s: %llu bytes: too large for a Hugging Face token file", path,
                    (unsigned long long)st.size);
    char *buf = rc ? NULL : malloc(TOKEN_FILE_MAX + 1);
    if (!rc && !buf) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    ssize_t n = rc ? 0 : oz_sys_pread(fd, buf, TOKEN_FILE_MAX + 1, 0);
    if (!rc && n < 0) rc = oz_err_sys(ONNXZIP_EIO, -1, path, "cannot read %s: %s", path, strerror(errno));
    oz_sys_close(fd);
    int nomem = 0;
    if (!rc) *token = clean(buf, (size_t)n, &nomem);
    if (buf) memset(buf, 0, TOKEN_FILE_MAX + 1);
    free(buf);
    return nomem ? oz_err(ONNXZIP_ENOMEM, -1, "out of memory") : rc;
}

/* The Hugging Face token of a Hub URL, and whence it came. */
static int hub_token(oz_http_auth *a)
{
    const char *env = getenv("HF_TOKEN"), *name = "HF_TOKEN";
    if (!env || !*env) env = getenv(name = "HUGGING_FACE_HUB_TOKEN");
    int nomem = 0;
    if (env && *env && (a->token = clean(env, strlen(env), &nomem))) {
        snprintf(a->source, sizeof a->source, "the token from $%s", name);
        return 0;
    }
    char *path = nomem ? NULL : token_path();
    if (!path) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int rc = read_token_file(path, &a->token);
    snprintf(a->source, sizeof a->source, "the token from %s", path);
    free(path);
    return rc;
}

int oz_http_auth_init(oz_http_auth *a, const char *url, const char *shown, const char *given)
{
    memset(a, 0, sizeof *a);
    a->hub = hub_url(url);
    int rc = 0;
    if (given) {
        if (*given && !(a->token = strdup(given))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        snprintf(a->source, sizeof a->source, "the token given");
        a->why_none = "none was to be sent";
    } else if (!a->hub) {
        a->why_none = "give one if the server needs it: bearer_token, the CLI's --token-file, Python's token=";
    } else if (env_true("HF_HUB_DISABLE_IMPLICIT_TOKEN")) {
        a->why_none = "HF_HUB_DISABLE_IMPLICIT_TOKEN is set";
    } else {
        a->why_none = "set HF_TOKEN or run `hf auth login`: private and gated repositories need one";
        rc = hub_token(a);
    }
    for (const char *p = a->token; !rc && p && *p; p++)
        if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
            rc = oz_err(ONNXZIP_EINVAL, -1, "%s: %s holds a character other than visible "
                        "ASCII, which an HTTP header cannot carry: nothing was sent", shown, a->source);
    if (rc) oz_http_auth_free(a);
    return rc;
}

void oz_http_auth_free(oz_http_auth *a)
{
    oz_secret_free(&a->token);
    oz_secret_free(&a->aws_userpwd);
    oz_secret_free(&a->aws_token);
}

int oz_http_auth_s3(oz_http_auth *a, const oz_aws_config *c, const char *shown)
{
    if (a->token)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: a bearer token is not sent to S3 (s3:// requests are signed with AWS "
                      "credentials): give none", shown);
#if LIBCURL_VERSION_NUM < 0x074b00
    (void)c;
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: this libcurl (%s) cannot sign requests for S3 (CURLOPT_AWS_SIGV4 "
                  "came in 7.75)", shown, LIBCURL_VERSION);
#else
    a->s3 = 1;
    snprintf(a->aws_sigv4, sizeof a->aws_sigv4, "aws:amz:%s:s3", c->region);
    if (!c->key_id) {
        snprintf(a->aws_source, sizeof a->aws_source, "sent unsigned (no_sign_request, the CLI's --no-sign-request)");
        return 0;
    }
    snprintf(a->aws_source, sizeof a->aws_source, "signed for region %s with %s", c->region, c->source);
    size_t n = strlen(c->key_id) + strlen(c->secret) + 2, t = c->token ? strlen(c->token) + 24 : 0;
    if (!(a->aws_userpwd = malloc(n)) || (t && !(a->aws_token = malloc(t)))) {
        oz_http_auth_free(a);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    snprintf(a->aws_userpwd, n, "%s:%s", c->key_id, c->secret);
    if (t) snprintf(a->aws_token, t, "x-amz-security-token: %s", c->token);
    return 0;
#endif
}
