/* s3:// URLs (s3.h). The mapping is botocore's: virtual-hosted
 * (https://BUCKET.s3.REGION.amazonaws.com/KEY) on AWS when the bucket name
 * is a DNS label without dots (a dotted name would not match the
 * *.s3.REGION.amazonaws.com certificate), else path-style
 * (ENDPOINT/BUCKET/KEY), which custom endpoints get by default. The key is
 * taken as written (the AWS CLI does not decode s3:// paths) and
 * percent-encoded as SigV4's canonical URI wants it: every byte but
 * A-Z a-z 0-9 - . _ ~ and / as %XX (upper case), so that the path libcurl
 * signs is the one S3 computes. */
#include <stdio.h>
#include <strings.h>

#include "net/s3.h"

#define KEY_MAX 1024

int oz_s3_is_url(const char *url)
{
    return url && !strncasecmp(url, "s3://", 5);
}

static int lower_or_digit(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* What S3 accepts at all (botocore's VALID_BUCKET: legacy us-east-1 names
 * may have capitals and '_'), usable in a path. */
static int valid_bucket(const char *b, size_t n)
{
    if (n < 1 || n > 255) return 0;
    for (size_t i = 0; i < n; i++)
        if (!lower_or_digit(b[i]) && !(b[i] >= 'A' && b[i] <= 'Z') && !strchr(".-_", b[i])) return 0;
    return 1;
}

/* A host name label sequence: 3 to 63 of a-z 0-9 - ., starting and ending
 * with a letter or digit, no empty label; `dots_ok` 0: no dot at all. */
static int dns_bucket(const char *b, size_t n, int dots_ok)
{
    if (n < 3 || n > 63 || !lower_or_digit(b[0]) || !lower_or_digit(b[n - 1])) return 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '.' && (!dots_ok || b[i + 1] == '.' || b[i + 1] == '-' || b[i - 1] == '-')) return 0;
        if (!lower_or_digit(b[i]) && b[i] != '-' && b[i] != '.') return 0;
    }
    return 1;
}

/* Appends the key percent-encoded to out (room for 3 bytes a byte). */
static size_t encode_key(char *out, const char *key)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || lower_or_digit((char)*p) || strchr("-._~/", *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
    return o;
}

typedef struct parts {
    const char *bucket, *key;
    size_t blen;
    char shown[OZ_PRINTABLE_CAP + 80]; /* for messages: s3://BUCKET/KEY, printable */
} parts;

static int split(const char *url, parts *p)
{
    const char *b = url + 5, *slash = strchr(b, '/');
    size_t cut = strcspn(url, "?#");
    char safe[OZ_PRINTABLE_CAP + 64];
    oz_printable(url, cut, safe, sizeof safe);
    snprintf(p->shown, sizeof p->shown, "%s%s", safe, url[cut] ? "?..." : "");
    if (url[cut])
        return oz_err(ONNXZIP_EINVAL, -1, "%s: an s3:// URL has no query or fragment ('?' or '#'); a presigned "
                      "URL is an https:// URL: give it as one", p->shown);
    p->bucket = b;
    p->blen = slash ? (size_t)(slash - b) : strlen(b);
    p->key = slash ? slash + 1 : "";
    if (!p->blen || !*p->key)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: not s3://BUCKET/KEY (%s)", p->shown,
                      p->blen ? "no key after the bucket" : "no bucket");
    if (!valid_bucket(p->bucket, p->blen))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: not a bucket name S3 accepts (1 to 255 of a-z A-Z 0-9 . - _)",
                      p->shown);
    size_t klen = strlen(p->key);
    if (klen > KEY_MAX)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: a key of %zu bytes: S3's keys have at most %d", p->shown, klen,
                      KEY_MAX);
    for (const unsigned char *k = (const unsigned char *)p->key; *k; k++)
        if (*k < 0x20 || *k == 0x7f)
            return oz_err(ONNXZIP_EINVAL, -1, "%s: the key holds a control character", p->shown);
    return 0;
}

typedef struct endpoint_parts {
    const char *scheme_end, *host, *rest; /* "http(s)://", host[:port], path */
    size_t hlen, rlen;
} endpoint_parts;

static int split_endpoint(const char *e, const char *why, const char *shown, int allow_http, endpoint_parts *ep)
{
    char safe[OZ_PRINTABLE_CAP];
    int https = !strncasecmp(e, "https://", 8), http = !strncasecmp(e, "http://", 7);
    ep->host = e + (https ? 8 : 7);
    ep->hlen = strcspn(ep->host, "/?#");
    ep->rest = ep->host + ep->hlen;
    ep->rlen = strlen(ep->rest);
    while (ep->rlen && ep->rest[ep->rlen - 1] == '/') ep->rlen--;
    const char *bad = !https && !http ? "not an http:// or https:// URL"
                      : !ep->hlen ? "no host"
                      : memchr(ep->host, '@', ep->hlen) ? "credentials in it are not used (user@)"
                      : strpbrk(ep->rest, "?#") ? "a query or fragment"
                      : NULL;
    if (bad) /* shown up to its host: user:password@ is a secret */
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the endpoint '%s' (from %s): %s", shown,
                      oz_printable(e, (size_t)(ep->host - e), safe, sizeof safe), why, bad);
    if (http && !allow_http)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the endpoint %s (from %s) is plain http://, refused unless allowed "
                      "(allow_http, the CLI's --allow-http): nothing would protect the bytes in transit", shown,
                      oz_printable(e, strlen(e), safe, sizeof safe), why);
    ep->scheme_end = ep->host;
    return 0;
}

int oz_s3_map(const char *url, const char *endpoint, const char *endpoint_source, const char *region,
              int addressing, int allow_http, char **out, char **display)
{
    *out = NULL;
    if (display) *display = NULL;
    parts p;
    int rc = oz_s3_is_url(url) ? split(url, &p) : oz_err(ONNXZIP_EINVAL, -1, "not an s3:// URL");
    char aws[160];
    if (!endpoint) { /* AWS's own; its China partition has its own domain */
        snprintf(aws, sizeof aws, "https://s3.%s.amazonaws.com%s", region, strncmp(region, "cn-", 3) ? "" : ".cn");
        endpoint = aws;
        endpoint_source = "AWS's endpoint for the region";
    }
    endpoint_parts ep = { 0 };
    if (!rc) rc = split_endpoint(endpoint, endpoint_source, p.shown, allow_http, &ep);
    if (rc) return rc;
    int custom = endpoint != aws;
    int virt = addressing == ONNXZIP_S3_VIRTUAL || (addressing == ONNXZIP_S3_AUTO && !custom &&
                                                    dns_bucket(p.bucket, p.blen, 0));
    if (virt && !dns_bucket(p.bucket, p.blen, 1))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: virtual-hosted addressing puts the bucket in the host name, which "
                      "this bucket name cannot be (3 to 63 of a-z 0-9 . -): use path-style addressing", p.shown);
    size_t cap = strlen(endpoint) + p.blen + 3 * strlen(p.key) + 8;
    char *s = malloc(cap);
    if (!s) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    size_t head = (size_t)(ep.scheme_end - endpoint), o;
    if (virt)
        o = (size_t)snprintf(s, cap, "%.*s%.*s.%.*s%.*s/", (int)head, endpoint, (int)p.blen, p.bucket, (int)ep.hlen,
                             ep.host, (int)ep.rlen, ep.rest);
    else
        o = (size_t)snprintf(s, cap, "%.*s/%.*s/", (int)(head + ep.hlen + ep.rlen), endpoint, (int)p.blen, p.bucket);
    encode_key(s + o, p.key);
    *out = s;
    size_t dn = 5 + p.blen + 1 + strlen(p.key) + 1;
    if (display && !(*display = malloc(dn))) {
        free(s);
        *out = NULL;
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    if (display) snprintf(*display, dn, "s3://%.*s/%s", (int)p.blen, p.bucket, p.key);
    return 0;
}

int oz_s3_resolve(oz_s3 *s, const char *url, const onnxzip_remote_options *o)
{
    memset(s, 0, sizeof *s);
    parts p;
    int rc = split(url, &p); /* a malformed URL first: before any file is read */
    if (!rc) rc = oz_aws_config_load(&s->cfg, o, p.shown);
    if (!rc)
        rc = oz_s3_map(url, s->cfg.endpoint, s->cfg.endpoint_source, s->cfg.region, s->cfg.addressing, o->allow_http,
                       &s->url, &s->shown);
    if (rc) oz_s3_free(s);
    return rc;
}

void oz_s3_free(oz_s3 *s)
{
    free(s->url);
    free(s->shown);
    s->url = s->shown = NULL;
    oz_aws_config_free(&s->cfg);
}

/* ---- error replies ---------------------------------------------------- */

/* The first `what` (w bytes) in s[0..n), or NULL (memmem() is not C11). */
static const char *find(const char *s, size_t n, const char *what, size_t w)
{
    for (size_t i = 0; i + w <= n; i++)
        if (!memcmp(s + i, what, w)) return s + i;
    return NULL;
}

/* The text of the first <tag>...</tag> in body[0..n), entities decoded,
 * printable, into out; NULL when absent. */
static const char *xml_text(const char *body, size_t n, const char *tag, char *out, size_t cap)
{
    char open[40], close[40];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    size_t on = strlen(open), cn = strlen(close);
    const char *a = find(body, n, open, on);
    const char *b = a ? find(a + on, n - (size_t)(a + on - body), close, cn) : NULL;
    if (!b) return NULL;
    a += on;
    static const char *const ent[][2] = { { "&amp;", "&" }, { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" },
                                          { "&apos;", "'" } };
    char raw[512];
    size_t k = 0;
    for (const char *q = a; q < b && k < sizeof raw; q++) {
        size_t e = 0;
        while (e < 5 && ((size_t)(b - q) < strlen(ent[e][0]) || memcmp(q, ent[e][0], strlen(ent[e][0])))) e++;
        unsigned c = 0;
        int len = 0;
        if (e == 5 && (sscanf(q, "&#x%2x;%n", &c, &len) == 1 || sscanf(q, "&#%3u;%n", &c, &len) == 1) && len &&
            q + len <= b && c && c < 128) { /* a character reference (&#34;) of ASCII */
            raw[k++] = (char)c;
            q += len - 1;
            continue;
        }
        raw[k++] = e < 5 ? ent[e][1][0] : *q;
        if (e < 5) q += strlen(ent[e][0]) - 1;
    }
    return oz_printable(raw, k, out, cap);
}

const char *oz_s3_error_note(const char *body, size_t n, char *out, size_t cap)
{
    char code[OZ_PRINTABLE_CAP], msg[300], extra[OZ_PRINTABLE_CAP + 40] = "", v[OZ_PRINTABLE_CAP];
    out[0] = '\0';
    if (!find(body, n, "<Error>", 7) || !xml_text(body, n, "Code", code, sizeof code)) return out;
    if (!xml_text(body, n, "Message", msg, sizeof msg)) msg[0] = '\0';
    static const char *const named[][2] = { { "Region", "the region S3 expects: " },
                                            { "Endpoint", "the endpoint S3 names: " },
                                            { "BucketName", "bucket " },
                                            { "Key", "key " } };
    for (size_t i = 0; i < sizeof named / sizeof *named && !extra[0]; i++)
        if (xml_text(body, n, named[i][0], v, sizeof v)) snprintf(extra, sizeof extra, " (%s%s)", named[i][1], v);
    snprintf(out, cap, "S3 %s%s%s%s", code, msg[0] ? ": " : "", msg, extra);
    return out;
}
