/* s3:// URLs without a server: how an s3:// URL maps to an https:// URL
 * (virtual-hosted or path-style, the key percent-encoded as SigV4's
 * canonical URI: AWS's documented rule), and the AWS configuration chain
 * (environment, profile in the credentials and config files, as the AWS
 * CLI documents: https://docs.aws.amazon.com/cli/latest/userguide/
 * cli-configure-files.html), the messages of missing or broken
 * configuration (never a secret in them), and S3's XML error replies.
 * Also onnxzip_open_url() of s3:// URLs against a closed local port. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/aws_config.h"
#include "net/s3.h"
#include "testutil.h"

static const char *dir;

static const char *msg(void)
{
    return onnxzip_last_error()->message;
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(tu_path(dir, name), "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* A clean environment: the files in the test's directory, nothing set. */
static void clean_env(void)
{
    static const char *const vars[] = { "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                        "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
                                        "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                                        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
    setenv("HOME", dir, 1);
    setenv("AWS_CONFIG_FILE", tu_path(dir, "config"), 1);
    setenv("AWS_SHARED_CREDENTIALS_FILE", tu_path(dir, "credentials"), 1);
    write_file("config", "");
    write_file("credentials", "");
}

static onnxzip_remote_options opts(void)
{
    onnxzip_remote_options o;
    onnxzip_remote_options_init(&o);
    return o;
}

/* The mapped URL of `url` under `o`, "" on error (message kept). */
static const char *mapped(const char *url, const onnxzip_remote_options *o)
{
    static char out[4][2048];
    static int slot;
    char *s = out[slot++ % 4];
    oz_s3 r;
    s[0] = '\0';
    if (oz_s3_resolve(&r, url, o) == 0) {
        snprintf(s, sizeof out[0], "%s", r.url);
        oz_s3_free(&r);
    }
    return s;
}

static void test_mapping(void)
{
    clean_env();
    onnxzip_remote_options o = opts();
    o.s3_no_sign = 1;
    /* AWS: virtual-hosted in the region (us-east-1 by default) */
    CHECK(!strcmp(mapped("s3://my-bucket/a/b.onnxzip", &o), "https://my-bucket.s3.us-east-1.amazonaws.com/a/b.onnxzip"));
    o.s3_region = "eu-west-3";
    CHECK(!strcmp(mapped("s3://my-bucket/m", &o), "https://my-bucket.s3.eu-west-3.amazonaws.com/m"));
    o.s3_region = "cn-north-1";
    CHECK(!strcmp(mapped("s3://my-bucket/m", &o), "https://my-bucket.s3.cn-north-1.amazonaws.com.cn/m"));
    o.s3_region = NULL;
    /* a dotted bucket: path-style (the wildcard certificate covers one label) */
    CHECK(!strcmp(mapped("s3://my.bucket/m", &o), "https://s3.us-east-1.amazonaws.com/my.bucket/m"));
    /* a legacy name with capitals: path-style; forced virtual refused */
    CHECK(!strcmp(mapped("s3://My_Bucket/m", &o), "https://s3.us-east-1.amazonaws.com/My_Bucket/m"));
    o.s3_addressing = ONNXZIP_S3_VIRTUAL;
    CHECK(!strcmp(mapped("s3://My_Bucket/m", &o), ""));
    CHECK(strstr(msg(), "virtual-hosted") != NULL);
    CHECK(!strcmp(mapped("s3://my.bucket/m", &o), "https://my.bucket.s3.us-east-1.amazonaws.com/m"));
    o.s3_addressing = ONNXZIP_S3_PATH;
    CHECK(!strcmp(mapped("s3://my-bucket/m", &o), "https://s3.us-east-1.amazonaws.com/my-bucket/m"));
    /* a custom endpoint: path-style, its path kept; virtual on demand */
    o.s3_addressing = ONNXZIP_S3_AUTO;
    o.s3_endpoint_url = "https://minio.example:9000/";
    CHECK(!strcmp(mapped("s3://b-1/k", &o), "https://minio.example:9000/b-1/k"));
    o.s3_endpoint_url = "https://gw.example/s3";
    CHECK(!strcmp(mapped("s3://b-1/k", &o), "https://gw.example/s3/b-1/k"));
    o.s3_addressing = ONNXZIP_S3_VIRTUAL;
    CHECK(!strcmp(mapped("s3://b-1/k", &o), "https://b-1.gw.example/s3/k"));
    o.s3_addressing = ONNXZIP_S3_AUTO;
    /* the key: every byte but unreserved and '/' percent-encoded, upper
     * case; nothing decoded (the AWS CLI takes s3:// paths literally) */
    o.s3_endpoint_url = "https://e.example";
    CHECK(!strcmp(mapped("s3://b-1/dir/a b+c%20=&\xc3\xa9~_.-/x", &o),
                  "https://e.example/b-1/dir/a%20b%2Bc%2520%3D%26%C3%A9~_.-/x"));
    CHECK(!strcmp(mapped("s3://b-1/a//b/../c", &o), "https://e.example/b-1/a//b/../c"));
    /* http:// only when allowed */
    o.s3_endpoint_url = "http://127.0.0.1:9";
    CHECK(!strcmp(mapped("s3://b-1/k", &o), ""));
    CHECK(strstr(msg(), "plain http://") && strstr(msg(), "http://127.0.0.1:9") && strstr(msg(), "from the option"));
    o.allow_http = 1;
    CHECK(!strcmp(mapped("s3://b-1/k", &o), "http://127.0.0.1:9/b-1/k"));
    o.s3_endpoint_url = "ftp://x.example";
    CHECK(!strcmp(mapped("s3://b-1/k", &o), ""));
    CHECK(strstr(msg(), "not an http:// or https:// URL") != NULL);
    o.s3_endpoint_url = "https://user:pw@x.example";
    CHECK(!strcmp(mapped("s3://b-1/k", &o), ""));
    CHECK(strstr(msg(), "pw@") == NULL);
}

static void test_bad_urls(void)
{
    clean_env();
    onnxzip_remote_options o = opts();
    o.s3_no_sign = 1;
    static const char *const bad[][2] = {
        { "s3://", "no bucket" },
        { "s3:///key", "no bucket" },
        { "s3://bucket", "no key" },
        { "s3://bucket/", "no key" },
        { "s3://bucket/k?X-Amz-Signature=abc", "no query or fragment" },
        { "s3://bucket/k#frag", "no query or fragment" },
        { "s3://bu$ket/k", "not a bucket name" },
        { "s3://bucket/a\x01z", "control character" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(!strcmp(mapped(bad[i][0], &o), ""));
        CHECK(onnxzip_last_error()->status == ONNXZIP_EINVAL);
        CHECK(strstr(msg(), bad[i][1]) != NULL);
        CHECK(strstr(msg(), "abc") == NULL); /* a signature in a query is never shown */
    }
    char longkey[1100] = "s3://bucket/";
    memset(longkey + 12, 'k', 1025);
    CHECK(!strcmp(mapped(longkey, &o), ""));
    CHECK(strstr(msg(), "1025 bytes") != NULL);
}

static int load(oz_aws_config *c, const onnxzip_remote_options *o)
{
    return oz_aws_config_load(c, o, "s3://b/k");
}

static void test_credentials(void)
{
    clean_env();
    onnxzip_remote_options o = opts();
    oz_aws_config c;
    /* nothing: the message says where it looked and what to do */
    CHECK_RC(load(&c, &o), ONNXZIP_EINVAL);
    CHECK(strstr(msg(), "no AWS credentials") && strstr(msg(), "AWS_ACCESS_KEY_ID") &&
          strstr(msg(), tu_path(dir, "credentials")) && strstr(msg(), tu_path(dir, "config")) &&
          strstr(msg(), "--no-sign-request") && strstr(msg(), "aws configure export-credentials"));
    o.s3_no_sign = 1;
    CHECK_RC(load(&c, &o), 0);
    CHECK(c.key_id == NULL && !strcmp(c.region, "us-east-1") && c.endpoint == NULL);
    oz_aws_config_free(&c);
    o.s3_no_sign = 0;

    /* the credentials file, comments, spacing, case of keys, ':' */
    write_file("credentials", "# comment\n; another\n[other]\naws_access_key_id = AKIAOTHER0000000000\n"
               "aws_secret_access_key = othersecret\n\n[default]  \n"
               "AWS_Access_Key_Id=AKIADEFAULT00000WXYZ\r\naws_secret_access_key : s3cr3t/De+fault\n"
               "  # indented comment\naws_session_token = FwoGZXIvYXdzEtoken\n");
    CHECK_RC(load(&c, &o), 0);
    CHECK(c.key_id && !strcmp(c.key_id, "AKIADEFAULT00000WXYZ") && !strcmp(c.secret, "s3cr3t/De+fault") &&
          c.token && !strcmp(c.token, "FwoGZXIvYXdzEtoken"));
    CHECK(strstr(c.source, "profile 'default'") && strstr(c.source, "AKIA...WXYZ") && !strstr(c.source, "s3cr3t"));
    oz_aws_config_free(&c);

    /* the environment wins over AWS_PROFILE's profile... */
    setenv("AWS_ACCESS_KEY_ID", "AKIAENVIRONMENT00001", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    setenv("AWS_PROFILE", "other", 1);
    CHECK_RC(load(&c, &o), 0);
    CHECK(c.key_id && !strcmp(c.key_id, "AKIAENVIRONMENT00001") && !c.token);
    CHECK(strstr(c.source, "$AWS_ACCESS_KEY_ID") && strstr(c.source, "AKIA...0001"));
    oz_aws_config_free(&c);
    /* ... but not over a profile named in the options (botocore drops its
     * environment provider then) */
    o.s3_profile = "other";
    CHECK_RC(load(&c, &o), 0);
    CHECK(c.key_id && !strcmp(c.key_id, "AKIAOTHER0000000000"));
    oz_aws_config_free(&c);
    o.s3_profile = "missing";
    CHECK_RC(load(&c, &o), ONNXZIP_EINVAL);
    CHECK(strstr(msg(), "'missing'") && strstr(msg(), "neither"));
    /* configparser: a line indented deeper than the key before it (blank
     * lines between) continues that key's value, even "[name]" */
    write_file("config", "[profile a]\nregion = us-east-2\n\n  [profile indented]\n");
    o.s3_profile = "indented";
    CHECK_RC(load(&c, &o), ONNXZIP_EINVAL);
    CHECK(strstr(msg(), "'indented'") && strstr(msg(), "neither"));
    write_file("config", "");
    o.s3_profile = NULL;
    unsetenv("AWS_PROFILE");

    /* half a pair; secrets never in messages */
    unsetenv("AWS_SECRET_ACCESS_KEY");
    CHECK_RC(load(&c, &o), ONNXZIP_EINVAL);
    CHECK(strstr(msg(), "AWS_SECRET_ACCESS_KEY is not"));
    setenv("AWS_SECRET_ACCESS_KEY", "bad secret\x01", 1);
    CHECK_RC(load(&c, &o), ONNXZIP_EINVAL);
    CHECK(strstr(msg(), "visible ASCII") && !strstr(msg(), "bad secret"));
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");

    /* the config file's [profile NAME], and the credentials file over it */
    write_file("credentials", "[dev]\naws_secret_access_key = fromcredentials\n");
    write_file("config", "[dev]\naws_access_key_id = AKIANOTAPROFILE0000\n"
               "[profile   dev]\naws_access_key_id = AKIADEVCONFIG000000\naws_secret_access_key = fromconfig\n"
               "region = ap-south-1\n");
    setenv("AWS_PROFILE", "dev", 1);
    CHECK_RC(load(&c, &o), 0);
    CHECK(c.key_id && !strcmp(c.key_id, "AKIADEVCONFIG000000") && !strcmp(c.secret, "fromcredentials") &&
          !strcmp(c.region, "ap-south-1"));
    oz_aws_config_free(&c);
    unsetenv("AWS_PROFILE");
}

static void test_region_endpoint(void)
{
    clean_env();
    onnxzip_remote_options o = opts();
    o.s3_no_sign = 1;
    oz_aws_config c;
    write_file("config", "[default]\nregion = eu-north-1\nendpoint_url = https://profile.example\n"
               "s3 =\n  endpoint_url = https://s3section.example\n  addressing_style = virtual\n"
               "output = json\n");
    CHECK_RC(load(&c, &o), 0);
    CHECK(!strcmp(c.region, "eu-north-1") && c.endpoint && !strcmp(c.endpoint, "https://s3section.example") &&
          c.addressing == ONNXZIP_S3_VIRTUAL && strstr(c.endpoint_source, "s3 section"));
    oz_aws_config_free(&c);
    setenv("AWS_DEFAULT_REGION", "us-west-1", 1);
    setenv("AWS_ENDPOINT_URL", "https://env.example", 1);
    CHECK_RC(load(&c, &o), 0);
    CHECK(!strcmp(c.region, "us-west-1") && !strcmp(c.endpoint, "https://env.example"));
    oz_aws_config_free(&c);
    setenv("AWS_REGION", "us-west-2", 1);
    setenv("AWS_ENDPOINT_URL_S3", "https://envs3.example", 1);
    CHECK_RC(load(&c, &o), 0);
    CHECK(!strcmp(c.region, "us-west-2") && !strcmp(c.endpoint, "https://envs3.example"));
    oz_aws_config_free(&c);
    o.s3_region = "sa-east-1";
    o.s3_endpoint_url = "https://option.example";
    o.s3_addressing = ONNXZIP_S3_PATH;
    CHECK_RC(load(&c, &o), 0);
    CHECK(!strcmp(c.region, "sa-east-1") && !strcmp(c.endpoint, "https://option.example") &&
          c.addressing == ONNXZIP_S3_PATH);
    oz_aws_config_free(&c);
    o.s3_endpoint_url = NULL;
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
    CHECK_RC(load(&c, &o), 0);
    CHECK(c.endpoint == NULL);
    oz_aws_config_free(&c);
    o.s3_region = "EU West";
    CHECK_RC(load(&c, &o), ONNXZIP_EINVAL);
    CHECK(strstr(msg(), "not a region name") != NULL);
}

static void test_error_note(void)
{
    char out[600];
    static const char body[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AuthorizationHeaderMalformed"
                               "</Code><Message>the region &#39;us-east-1&#39; is wrong; expecting &apos;eu-west-1"
                               "&apos; &amp; more</Message><Region>eu-west-1</Region><RequestId>1</RequestId></Error>";
    oz_s3_error_note(body, strlen(body), out, sizeof out);
    CHECK(!strcmp(out, "S3 AuthorizationHeaderMalformed: the region \\x27us-east-1\\x27 is wrong; expecting "
                  "\\x27eu-west-1\\x27 & more (the region S3 expects: eu-west-1)"));
    static const char key[] = "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>"
                              "<Key>a/b</Key></Error>";
    oz_s3_error_note(key, strlen(key), out, sizeof out);
    CHECK(!strcmp(out, "S3 NoSuchKey: The specified key does not exist. (key a/b)"));
    oz_s3_error_note(key, 30, out, sizeof out); /* cut in the message: the code alone */
    CHECK(!strcmp(out, "S3 NoSuchKey"));
    static const char html[] = "<html><body><h1>403 Forbidden</h1></body></html>";
    CHECK(!strcmp(oz_s3_error_note(html, strlen(html), out, sizeof out), ""));
}

/* The public API: a refused port behind the mapped URL; the handle is
 * never made, the message names the s3:// URL, never the secret. */
static void test_open_url(void)
{
    clean_env();
    setenv("AWS_ACCESS_KEY_ID", "AKIAOPENURLTEST00042", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "topsecretvalue", 1);
    setenv("AWS_SESSION_TOKEN", "sessiontokenvalue", 1);
    onnxzip_remote_options o = opts();
    o.allow_http = 1;
    o.retries = 0;
    o.s3_endpoint_url = "http://127.0.0.1:9";
    onnxzip_archive *a = (onnxzip_archive *)&o;
    CHECK_RC(onnxzip_open_url("s3://bucket/dir/m.onnxzip", &o, &a), ONNXZIP_ENETWORK);
    CHECK(a == NULL);
    CHECK(strstr(msg(), "s3://bucket/dir/m.onnxzip") && !strstr(msg(), "topsecret") && !strstr(msg(), "session"));
    CHECK(strstr(msg(), "; endpoint http://127.0.0.1:9") != NULL); /* where it could not connect */
    o.bearer_token = "tok";
    CHECK_RC(onnxzip_open_url("s3://bucket/m", &o, &a), ONNXZIP_EINVAL);
    CHECK(strstr(msg(), "bearer token") != NULL);
    o.bearer_token = NULL;
    unsetenv("AWS_ACCESS_KEY_ID");
    CHECK_RC(onnxzip_open_url("s3://bucket/m", &o, &a), ONNXZIP_EINVAL);
    CHECK(strstr(msg(), "AWS_SECRET_ACCESS_KEY is set but") && !strstr(msg(), "topsecret"));
    CHECK_RC(onnxzip_open_url("S3://bucket", &o, &a), ONNXZIP_EINVAL);
}

int main(void)
{
    dir = tu_tmpdir();
    test_mapping();
    test_bad_urls();
    test_credentials();
    test_region_endpoint();
    test_error_note();
    test_open_url();
    tu_rmtree(dir);
    return tu_finish("s3_config");
}
