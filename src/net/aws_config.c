/* The AWS configuration of s3:// URLs (aws_config.h), as botocore reads it:
 * the files are INI as Python's configparser parses them (sections
 * "[NAME]"; "key = value" or "key: value", the key's case folded, both
 * sides stripped; whole-line comments starting with # or ;, also indented;
 * no inline comments; a line indented deeper than its key continues the
 * key's value, which for a key with an empty first line is a nested
 * section of "key = value" lines). The config file's profiles are
 * "[profile NAME]" (and "[default]"), the credentials file's "[NAME]"; the
 * credentials file's values override the config file's (botocore merges
 * them the same way). "[services ...]" and "[sso-session ...]" sections
 * are not read. */
#include <errno.h>
#include <stdio.h>
#include <strings.h>

#include "net/aws_config.h"
#include "common/sys.h"

#define CONFIG_FILE_MAX (1 << 20)

enum { V_KEY_ID, V_SECRET, V_TOKEN, V_TOKEN_OLD, V_REGION, V_ENDPOINT, V_S3_ENDPOINT, V_S3_ADDRESSING, NV };

/* The keys read in a profile's section, and in its nested "s3" section. */
static const char *const top_keys[] = { "aws_access_key_id", "aws_secret_access_key", "aws_session_token",
                                        "aws_security_token", "region", "endpoint_url" };
static const char *const s3_keys[] = { [V_S3_ENDPOINT - V_S3_ENDPOINT] = "endpoint_url",
                                       [V_S3_ADDRESSING - V_S3_ENDPOINT] = "addressing_style" };

typedef struct profile_vals {
    char *v[NV];
    const char *from[NV]; /* the file each value came from */
    int found;            /* the profile's section is in a file */
    int nomem;
} profile_vals;

void oz_secret_free(char **s)
{
    for (volatile char *p = *s; p && *p; p++) *p = '\0';
    free(*s);
    *s = NULL;
}

static void vals_free(profile_vals *pv)
{
    for (int i = 0; i < NV; i++) oz_secret_free(&pv->v[i]);
}

static void set_val(profile_vals *pv, int i, const char *v, size_t n, const char *file)
{
    char *s = malloc(n + 1);
    if (!s) {
        pv->nomem = 1;
        return;
    }
    memcpy(s, v, n);
    s[n] = '\0';
    oz_secret_free(&pv->v[i]);
    pv->v[i] = n ? s : NULL; /* an empty value is no value */
    if (!n) free(s);
    pv->from[i] = file;
}

static void trim(const char **s, size_t *n)
{
    while (*n && strchr(" \t\v\f", **s)) (*s)++, (*n)--;
    while (*n && strchr(" \t\v\f", (*s)[*n - 1])) (*n)--;
}

/* Is section header `h` (n bytes, between the brackets) the profile's?
 * The config file: "profile NAME" as shlex.split() splits it (two words,
 * quotes dropped; simple quoting only), or "default"; the credentials
 * file: NAME itself. */
static int section_is(const char *h, size_t n, const char *profile, int config)
{
    trim(&h, &n);
    size_t pn = strlen(profile);
    if (!config || (n == 7 && !memcmp(h, "default", 7) && !strcmp(profile, "default")))
        return n == pn && !memcmp(h, profile, n);
    if (n < 8 || memcmp(h, "profile", 7) || !strchr(" \t", h[7])) return 0;
    h += 8, n -= 8;
    trim(&h, &n);
    if (n >= 2 && (h[0] == '"' || h[0] == '\'') && h[n - 1] == h[0]) h++, n -= 2;
    return n == pn && !memcmp(h, profile, n) && !memchr(h, ' ', n) && !memchr(h, '\t', n);
}

/* A "key = value" line: 1 and the key's index in `keys`, or 0. */
static int key_line(const char *l, size_t n, const char *const *keys, size_t nkeys, int fold, size_t *k,
                    const char **v, size_t *vn)
{
    size_t d = 0;
    while (d < n && l[d] != '=' && (fold ? l[d] != ':' : 1)) d++;
    if (d == n) return 0;
    const char *key = l;
    size_t kn = d;
    trim(&key, &kn);
    *v = l + d + 1;
    *vn = n - d - 1;
    trim(v, vn);
    for (size_t i = 0; i < nkeys; i++)
        if (strlen(keys[i]) == kn && !(fold ? strncasecmp : strncmp)(key, keys[i], kn)) {
            *k = i;
            return 1;
        }
    *k = nkeys; /* another key */
    return 1;
}

/* Applies the profile's section(s) of INI text to *pv. */
static void ini_apply(const char *text, size_t size, const char *profile, int config, const char *file,
                      profile_vals *pv)
{
    int in = 0, have_key = 0, nested = 0;
    size_t key_indent = 0;
    for (const char *p = text, *end = text + size; p < end;) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        const char *l = p;
        size_t n = (size_t)(e - p), ind = 0;
        p = e < end ? e + 1 : end;
        while (n && l[n - 1] == '\r') n--;
        while (ind < n && (l[ind] == ' ' || l[ind] == '\t')) ind++;
        if (ind == n || l[ind] == '#' || l[ind] == ';') continue;
        const char *v;
        size_t vn, k;
        if (have_key && ind > key_indent) { /* the value goes on */
            if (in && nested && key_line(l + ind, n - ind, s3_keys, 2, 0, &k, &v, &vn) && k < 2)
                set_val(pv, V_S3_ENDPOINT + (int)k, v, vn, file);
            continue;
        }
        have_key = nested = 0;
        key_indent = ind;
        const char *close = l + n;
        while (close > l + ind && close[-1] != ']') close--;
        if (l[ind] == '[' && close > l + ind + 2) {
            in = section_is(l + ind + 1, (size_t)(close - 1 - (l + ind + 1)), profile, config);
            pv->found |= in;
            continue;
        }
        if (!key_line(l + ind, n - ind, top_keys, sizeof top_keys / sizeof *top_keys, 1, &k, &v, &vn)) continue;
        have_key = 1;
        if (!in) continue;
        if (k < sizeof top_keys / sizeof *top_keys)
            set_val(pv, (int)k, v, vn, file);
        else
            nested = vn == 0 && ind + 2 <= n && !strncasecmp(l + ind, "s3", 2) &&
                     strchr(" \t=:", l[ind + 2]); /* "s3 =" with nothing after */
    }
}

/* Applies the file `path` (absent, or not a regular file: nothing, as
 * botocore) to *pv. */
static int read_profile(const char *path, const char *profile, int config, profile_vals *pv)
{
    int fd = oz_sys_open_read(path);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) return 0;
    if (fd < 0) return oz_err_sys(ONNXZIP_EIO, -1, path, "cannot open the AWS %s file %s: %s",
                                  config ? "config" : "credentials", path, strerror(errno));
    oz_stat st;
    int rc = oz_sys_fstat(fd, &st) ? oz_err_sys(ONNXZIP_EIO, -1, path, "%s: %s", path, strerror(errno)) : 0;
    if (!rc && st.kind != OZ_KIND_REG) {
        oz_sys_close(fd);
        return 0;
    }
    if (!rc && st.size > CONFIG_FILE_MAX)
        rc = oz_err(ONNXZIP_EIO, -1, "%s: %llu bytes: too large for an AWS %s file", path,
                    (unsigned long long)st.size, config ? "config" : "credentials");
    char *buf = rc ? NULL : malloc((size_t)st.size + 1);
    if (!rc && !buf) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    ssize_t n = rc ? 0 : oz_sys_pread(fd, buf, (size_t)st.size, 0);
    if (!rc && n < 0) rc = oz_err_sys(ONNXZIP_EIO, -1, path, "cannot read %s: %s", path, strerror(errno));
    oz_sys_close(fd);
    if (!rc) ini_apply(buf, (size_t)n, profile, config, path, pv);
    if (buf) memset(buf, 0, (size_t)st.size + 1);
    free(buf);
    if (!rc && pv->nomem) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    return rc;
}

char *oz_expand_home(const char *name)
{
    const char *home = getenv("HOME");
#ifdef _WIN32
    if (!home || !*home) home = getenv("USERPROFILE");
#endif
    int tilde = name[0] == '~' && (name[1] == '\0' || name[1] == '/' || name[1] == '\\') && home && *home;
    size_t n = strlen(name) + (tilde ? strlen(home) : 0) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", tilde ? home : "", name + tilde);
    return s;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static char *file_path(const char *var, const char *dflt)
{
    return oz_expand_home(env(var) ? env(var) : dflt);
}

const char *oz_aws_key_hint(const char *key_id, char *buf, size_t cap)
{
    size_t n = key_id ? strlen(key_id) : 0;
    if (n >= 12)
        snprintf(buf, cap, "%.4s...%s", key_id, key_id + n - 4);
    else
        snprintf(buf, cap, "...");
    return buf;
}

/* Secrets go in headers (libcurl's user:password, x-amz-security-token):
 * visible ASCII only, and no ':' in the key id. */
static int header_safe(const char *s, int colon_ok)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e || (!colon_ok && *s == ':')) return 0;
    return 1;
}

static int dup_to(char **dst, const char *s)
{
    return s && !(*dst = strdup(s)) ? oz_err(ONNXZIP_ENOMEM, -1, "out of memory") : 0;
}

typedef struct ctx {
    const onnxzip_remote_options *o;
    const char *shown, *profile, *profile_why, *cred_path, *cfg_path;
    int explicit_profile;
    profile_vals pv;
} ctx;

static int no_credentials(const ctx *x)
{
    return oz_err(ONNXZIP_EINVAL, -1, "%s: no AWS credentials found: %sthe profile '%s'%s has no "
                  "aws_access_key_id in %s or %s. A public bucket is read unsigned with --no-sign-request "
                  "(Python: no_sign_request=True; C: s3_no_sign = 1). Credentials from SSO, a credential_process "
                  "or an instance role are not read here: export them first, e.g. "
                  "eval \"$(aws configure export-credentials --format env)\"", x->shown,
                  x->explicit_profile ? "" : "AWS_ACCESS_KEY_ID is not set, and ", x->profile, x->profile_why,
                  x->cred_path, x->cfg_path);
}

/* The credentials: the environment's (unless a profile was named in the
 * options: botocore drops its environment provider then), else the
 * profile's. */
static int credentials(oz_aws_config *c, ctx *x)
{
    const char *id = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
    const char *token = env("AWS_SESSION_TOKEN") ? env("AWS_SESSION_TOKEN") : env("AWS_SECURITY_TOKEN");
    const char *id_name = "AWS_ACCESS_KEY_ID", *secret_name = "AWS_SECRET_ACCESS_KEY";
    char where[400] = "";
    if (x->explicit_profile || (!id && !secret)) {
        id = x->pv.v[V_KEY_ID];
        secret = x->pv.v[V_SECRET];
        token = x->pv.v[V_TOKEN] ? x->pv.v[V_TOKEN] : x->pv.v[V_TOKEN_OLD];
        id_name = "aws_access_key_id", secret_name = "aws_secret_access_key";
        snprintf(where, sizeof where, " of the profile '%s' in %s", x->profile,
                 x->pv.from[id ? V_KEY_ID : V_SECRET] ? x->pv.from[id ? V_KEY_ID : V_SECRET] : "");
    }
    if (!id && !secret) return no_credentials(x);
    if (!id || !secret)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: %s%s is set but %s is not: half an AWS key pair", x->shown,
                      id ? id_name : secret_name, where, id ? secret_name : id_name);
    if (!header_safe(id, 0) || !header_safe(secret, 1) || (token && !header_safe(token, 1)))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the AWS credentials from %s%s hold a character other than visible "
                      "ASCII (or a ':' in the key id), which a request cannot carry: nothing was sent", x->shown,
                      id_name, where);
    char hint[32];
    if (where[0])
        snprintf(c->source, sizeof c->source, "the credentials of the profile '%s' in %s (key id %s)", x->profile,
                 x->pv.from[V_KEY_ID], oz_aws_key_hint(id, hint, sizeof hint));
    else
        snprintf(c->source, sizeof c->source, "the credentials from $AWS_ACCESS_KEY_ID (key id %s)",
                 oz_aws_key_hint(id, hint, sizeof hint));
    int rc = dup_to(&c->key_id, id);
    if (!rc) rc = dup_to(&c->secret, secret);
    if (!rc) rc = dup_to(&c->token, token);
    return rc;
}

static int valid_region(const char *r)
{
    size_t n = strlen(r);
    if (!n || n > 64) return 0;
    for (; *r; r++)
        if (!((*r >= 'a' && *r <= 'z') || (*r >= '0' && *r <= '9') || *r == '-')) return 0;
    return 1;
}

static int region(oz_aws_config *c, ctx *x)
{
    const char *r = x->o->s3_region && *x->o->s3_region ? x->o->s3_region : NULL, *why = "the option";
    if (!r && (r = env("AWS_REGION"))) why = "$AWS_REGION";
    if (!r && (r = env("AWS_DEFAULT_REGION"))) why = "$AWS_DEFAULT_REGION";
    if (!r && (r = x->pv.v[V_REGION])) why = x->pv.from[V_REGION];
    if (!r) r = "us-east-1";
    char shown[OZ_PRINTABLE_CAP];
    if (!valid_region(r))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the AWS region '%s' (from %s) is not a region name (lowercase "
                      "letters, digits and '-')", x->shown, oz_printable(r, strlen(r), shown, sizeof shown), why);
    return dup_to(&c->region, r);
}

static int env_true(const char *name)
{
    const char *v = env(name);
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
}

/* The endpoint: the option, else (unless
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS) $AWS_ENDPOINT_URL_S3,
 * $AWS_ENDPOINT_URL, the profile's s3 endpoint_url, its endpoint_url. */
static int endpoint(oz_aws_config *c, ctx *x)
{
    const char *e = x->o->s3_endpoint_url && *x->o->s3_endpoint_url ? x->o->s3_endpoint_url : NULL;
    const char *why = "the option s3_endpoint_url (the CLI's --endpoint-url)";
    int configured = !env_true("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
    char buf[sizeof c->endpoint_source];
    if (!e && configured && (e = env("AWS_ENDPOINT_URL_S3"))) why = "$AWS_ENDPOINT_URL_S3";
    if (!e && configured && (e = env("AWS_ENDPOINT_URL"))) why = "$AWS_ENDPOINT_URL";
    for (int i = V_S3_ENDPOINT; !e && configured && i >= V_ENDPOINT; i -= V_S3_ENDPOINT - V_ENDPOINT)
        if ((e = x->pv.v[i]))
            why = (snprintf(buf, sizeof buf, "the %sendpoint_url of the profile '%s' in %s", i == V_S3_ENDPOINT ?
                            "s3 section's " : "", x->profile, x->pv.from[i]), buf);
    if (e) snprintf(c->endpoint_source, sizeof c->endpoint_source, "%s", why);
    return dup_to(&c->endpoint, e);
}

static int addressing(oz_aws_config *c, ctx *x)
{
    const char *s = x->pv.v[V_S3_ADDRESSING];
    c->addressing = x->o->s3_addressing;
    if (c->addressing < ONNXZIP_S3_AUTO || c->addressing > ONNXZIP_S3_VIRTUAL)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: s3_addressing %d is none of ONNXZIP_S3_AUTO, _PATH, _VIRTUAL",
                      x->shown, c->addressing);
    if (c->addressing || !s || !strcmp(s, "auto")) return 0;
    if (!strcmp(s, "path") || !strcmp(s, "virtual")) {
        c->addressing = s[0] == 'p' ? ONNXZIP_S3_PATH : ONNXZIP_S3_VIRTUAL;
        return 0;
    }
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EINVAL, -1, "%s: the s3 addressing_style '%s' of the profile '%s' in %s is none of auto, "
                  "path, virtual", x->shown, oz_printable(s, strlen(s), shown, sizeof shown), x->profile,
                  x->pv.from[V_S3_ADDRESSING]);
}

static int load(oz_aws_config *c, ctx *x)
{
    int rc = read_profile(x->cfg_path, x->profile, 1, &x->pv);
    if (!rc) rc = read_profile(x->cred_path, x->profile, 0, &x->pv);
    if (rc) return rc;
    if (!x->pv.found && strcmp(x->profile_why, "")) /* a profile named but found nowhere */
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the AWS profile '%s'%s is in neither %s nor %s", x->shown, x->profile,
                      x->profile_why, x->cred_path, x->cfg_path);
    if (!x->o->s3_no_sign && (rc = credentials(c, x))) return rc;
    if ((rc = region(c, x)) || (rc = endpoint(c, x))) return rc;
    return addressing(c, x);
}

int oz_aws_config_load(oz_aws_config *c, const onnxzip_remote_options *o, const char *shown)
{
    memset(c, 0, sizeof *c);
    ctx x = { .o = o, .shown = shown, .profile = o->s3_profile, .profile_why = " (given)" };
    x.explicit_profile = x.profile && *x.profile;
    if (!x.explicit_profile && (x.profile = env("AWS_PROFILE"))) x.profile_why = " (from $AWS_PROFILE)";
    if (!x.explicit_profile && !x.profile) x.profile = "default", x.profile_why = "";
    char *cred = file_path("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials");
    char *cfg = file_path("AWS_CONFIG_FILE", "~/.aws/config");
    x.cred_path = cred, x.cfg_path = cfg;
    int rc = cred && cfg ? load(c, &x) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    vals_free(&x.pv);
    free(cred);
    free(cfg);
    if (rc) oz_aws_config_free(c);
    return rc;
}

void oz_aws_config_free(oz_aws_config *c)
{
    oz_secret_free(&c->secret);
    oz_secret_free(&c->token);
    free(c->key_id);
    free(c->region);
    free(c->endpoint);
    c->key_id = c->secret = c->token = c->region = c->endpoint = NULL;
}
