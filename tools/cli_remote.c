/*
 * cli_remote.c — what ls, verify, fetch and extract share for archives
 * named by an http://, https:// or s3:// URL: the network options and
 * opening either kind.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "platform.h"

const char cli_remote_usage[] =
    "packages (several models and files in one archive):\n"
    "      --model PATH        the package's model to use (default: its default model)\n"
    "remote archives (ARCHIVE an https:// URL, whose server must answer range requests,\n"
    "or s3://BUCKET/KEY):\n"
    "      --allow-http        also accept plain http:// URLs (and redirects to them)\n"
    "      --ca-file FILE      trust the PEM certificates in FILE instead of the system's\n"
    "      --timeout MS        fail a transfer that receives nothing for MS ms, or not\n"
    "                          all of a reply's headers within MS ms (30000)\n"
    "      --low-speed-limit RATE\n"
    "                          fail a transfer slower than RATE bytes/s (K, M suffixes;\n"
    "                          1K) for as long as --low-speed-time MS (30000)\n"
    "      --request-timeout MS\n"
    "                          fail a request not complete within MS ms for each 8 MiB\n"
    "                          it asks (300000); these failures are retried too\n"
    "      --retries N         retry a failed request N times, with backoff (4)\n"
    "      --connections N     ranged requests in flight at once, 1 to 64 (16);\n"
    "                          --parallel N is its old name\n"
    "      --chunk-size SIZE   split large reads into requests of SIZE bytes (K, M, G\n"
    "                          suffixes; at least 64K; default 8M, and for fetch the\n"
    "                          file's size / (2 x connections) within 2M..8M)\n"
    "      --max-redirects N   redirects followed (5)\n"
    "      --token-file FILE   send the token in FILE (its content, trimmed) as\n"
    "                          'Authorization: Bearer', to the URL's own host only\n"
    "      --no-token          send no token (default: for huggingface.co URLs, the\n"
    "                          Hugging Face token: $HF_TOKEN, else $HF_HOME/token\n"
    "                          as `hf auth login` saved it; to no other host)\n"
    "s3://BUCKET/KEY (signed with the AWS credentials: $AWS_ACCESS_KEY_ID,\n"
    "$AWS_SECRET_ACCESS_KEY, $AWS_SESSION_TOKEN, else the profile's in\n"
    "~/.aws/credentials and ~/.aws/config; region and endpoint as AWS tools find them):\n"
    "      --no-sign-request   send requests unsigned (public buckets)\n"
    "      --profile NAME      the profile to read (default: $AWS_PROFILE, else default);\n"
    "                          its credentials win over the environment's\n"
    "      --region R          the bucket's region (default: $AWS_REGION,\n"
    "                          $AWS_DEFAULT_REGION, the profile's, us-east-1)\n"
    "      --endpoint-url URL  an S3-compatible server (default: $AWS_ENDPOINT_URL_S3,\n"
    "                          $AWS_ENDPOINT_URL, the profile's endpoint_url, AWS)\n"
    "      --s3-addressing M   path (ENDPOINT/BUCKET/KEY), virtual (BUCKET.HOST/KEY) or\n"
    "                          auto: virtual on AWS, path for other endpoints (auto)\n";

int cli_is_url(const char *s)
{
    return !strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8) || !strncasecmp(s, "s3://", 5);
}

/* --token-file's token: the whole file, whitespace around it dropped (a
 * static buffer: the options point to it until the process ends). The
 * token itself is never an argument: `ps` would show it to every user. */
static int token_file(const cli_parser *p, const cli_opt *o, const char *path, void *field)
{
    static char token[4097];
    (void)o;
    int fd = cli_open_read(path);
    long long n = fd < 0 ? -1 : cli_read(fd, token, sizeof token);
    int e = errno;
    if (fd >= 0) cli_close(fd);
    if (n < 0) {
        cli_line(stderr, "onnxzip %s: --token-file %s: %s", p->c->name, path, strerror(e));
        return CLI_EXIT_FAIL;
    }
    size_t a = 0, b = (size_t)n;
    while (a < b && strchr(" \t\r\n\v\f", token[a])) a++;
    while (b > a && strchr(" \t\r\n\v\f", token[b - 1])) b--;
    memmove(token, token + a, b - a);
    memset(token + (b - a), 0, sizeof token - (b - a));
    if (n == (long long)sizeof token || b == a) {
        cli_line(stderr, "onnxzip %s: --token-file %s: %s", p->c->name, path,
                 b == a ? "the file is empty: no token in it" : "more than 4096 bytes: not a token");
        return CLI_EXIT_USAGE;
    }
    *(const char **)field = token;
    return 0;
}

/* --low-speed-limit's rate: bytes per second, with a K, M or G suffix. */
static int rate(const cli_parser *p, const cli_opt *o, const char *value, void *field)
{
    uint64_t v;
    if (cli_parse_size(value, &v) || v < 1 || v > UINT32_MAX)
        return cli_bad_value(p, o, value, "is not a rate from 1 byte/s to 4G-1 (bytes per second, or with a K, M "
                             "or G suffix)");
    *(unsigned *)field = (unsigned)v;
    return 0;
}

static const char *const addressing[] = { [ONNXZIP_S3_AUTO] = "auto", [ONNXZIP_S3_PATH] = "path",
                                          [ONNXZIP_S3_VIRTUAL] = "virtual", NULL };

#define RO(field) CLI_AT(onnxzip_remote_options, field)

/* One line an option; cli_remote_usage says each. */
const cli_opt cli_remote_options[] = {
    { .name = "model", .kind = CLI_TEXT, .at = RO(model) },
    { .name = "allow-http", .kind = CLI_FLAG, .at = RO(allow_http) },
    { .name = "ca-file", .kind = CLI_STRING, .at = RO(ca_file) },
    { .name = "timeout", .kind = CLI_UINT, .at = RO(stall_timeout_ms), .min = 1, .max = 86400000 },
    { .name = "low-speed-limit", .kind = CLI_CALL, .at = RO(low_speed_limit), .call = rate },
    { .name = "low-speed-time", .kind = CLI_UINT, .at = RO(low_speed_time_ms), .min = 1, .max = 86400000 },
    { .name = "request-timeout", .kind = CLI_UINT, .at = RO(request_timeout_ms), .min = 1, .max = 86400000 },
    { .name = "retries", .kind = CLI_UINT, .at = RO(retries), .min = 0, .max = 100 },
    { .name = "connections|parallel", .kind = CLI_UINT, .at = RO(parallel), .min = 1, .max = 64 },
    { .name = "chunk-size", .kind = CLI_SIZE, .at = RO(chunk_size), .min = 64u << 10,
      .what = "is not a size of at least 64K (bytes, or with a K, M or G suffix)" },
    { .name = "max-redirects", .kind = CLI_UINT, .at = RO(max_redirects), .min = 0, .max = 50 },
    { .name = "token-file", .kind = CLI_CALL, .at = RO(bearer_token), .call = token_file },
    { .name = "no-token", .kind = CLI_SET, .at = RO(bearer_token), .what = "" },
    { .name = "no-sign-request", .kind = CLI_FLAG, .at = RO(s3_no_sign) },
    { .name = "profile", .kind = CLI_TEXT, .at = RO(s3_profile) },
    { .name = "region", .kind = CLI_TEXT, .at = RO(s3_region) },
    { .name = "endpoint-url", .kind = CLI_TEXT, .at = RO(s3_endpoint_url) },
    { .name = "s3-addressing", .kind = CLI_CHOICE, .at = RO(s3_addressing), .choices = addressing,
      .what = "is none of path, virtual, auto" },
    { .name = NULL },
};

int cli_open(const char *path, const onnxzip_remote_options *o, onnxzip_archive **a)
{
    return cli_is_url(path) ? onnxzip_open_url(path, o, a) : onnxzip_open_model(path, o->model, 0, a);
}
