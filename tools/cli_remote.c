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
    "remote archives (ARCHIVE an https:// URL, whose server must answer range requests,\n"
    "or s3://BUCKET/KEY):\n"
    "      --allow-http        also accept plain http:// URLs (and redirects to them)\n"
    "      --ca-file FILE      trust the PEM certificates in FILE instead of the system's\n"
    "      --timeout MS        fail a transfer that receives nothing for MS ms (30000)\n"
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

static int chunk_size(cli_parser *p, onnxzip_remote_options *o)
{
    uint64_t v;
    if (cli_parse_size(p->value, &v) || v < (64u << 10)) {
        cli_line(stderr, "onnxzip %s: --chunk-size: '%s' is not a size of at least 64K (bytes, or with a K, M or "
                 "G suffix)", p->cmd, p->value);
        return CLI_EXIT_USAGE;
    }
    o->chunk_size = v;
    return 0;
}

static int rate(cli_parser *p, onnxzip_remote_options *o)
{
    uint64_t v;
    if (cli_parse_size(p->value, &v) || v < 1 || v > UINT32_MAX) {
        cli_line(stderr, "onnxzip %s: --low-speed-limit: '%s' is not a rate from 1 byte/s to 4G-1 (bytes per "
                 "second, or with a K, M or G suffix)", p->cmd, p->value);
        return CLI_EXIT_USAGE;
    }
    o->low_speed_limit = (unsigned)v;
    return 0;
}

static int addressing(cli_parser *p, onnxzip_remote_options *o)
{
    static const char *const names[] = { [ONNXZIP_S3_AUTO] = "auto", [ONNXZIP_S3_PATH] = "path",
                                         [ONNXZIP_S3_VIRTUAL] = "virtual" };
    for (int i = 0; i < 3; i++)
        if (!strcmp(p->value, names[i])) {
            o->s3_addressing = i;
            return 0;
        }
    cli_line(stderr, "onnxzip %s: --s3-addressing: '%s' is none of path, virtual, auto", p->cmd, p->value);
    return CLI_EXIT_USAGE;
}

/* A text option's value, which may not be empty ("" means the default). */
static int text(cli_parser *p, const char *name, const char **out)
{
    if (!*p->value) {
        cli_line(stderr, "onnxzip %s: --%s: an empty value", p->cmd, name);
        return CLI_EXIT_USAGE;
    }
    *out = p->value;
    return 0;
}

static int number(cli_parser *p, const char *name, unsigned min, unsigned max, unsigned *out)
{
    uint64_t v;
    if (cli_parse_u64(p->value, &v) || v < min || v > max) {
        cli_line(stderr, "onnxzip %s: --%s: '%s' is not a number from %u to %u", p->cmd, name, p->value, min, max);
        return CLI_EXIT_USAGE;
    }
    *out = (unsigned)v;
    return 0;
}

/* --token-file's token: the whole file, whitespace around it dropped (a
 * static buffer: the options point to it until the process ends). The
 * token itself is never an argument: `ps` would show it to every user. */
static int token_file(cli_parser *p, onnxzip_remote_options *o)
{
    static char token[4097];
    int fd = cli_open_read(p->value);
    long long n = fd < 0 ? -1 : cli_read(fd, token, sizeof token);
    int e = errno;
    if (fd >= 0) cli_close(fd);
    if (n < 0) {
        cli_line(stderr, "onnxzip %s: --token-file %s: %s", p->cmd, p->value, strerror(e));
        return CLI_EXIT_FAIL;
    }
    size_t a = 0, b = (size_t)n;
    while (a < b && strchr(" \t\r\n\v\f", token[a])) a++;
    while (b > a && strchr(" \t\r\n\v\f", token[b - 1])) b--;
    memmove(token, token + a, b - a);
    memset(token + (b - a), 0, sizeof token - (b - a));
    if (n == (long long)sizeof token || b == a) {
        cli_line(stderr, "onnxzip %s: --token-file %s: %s", p->cmd, p->value,
                 b == a ? "the file is empty: no token in it" : "more than 4096 bytes: not a token");
        return CLI_EXIT_USAGE;
    }
    o->bearer_token = token;
    return 0;
}

int cli_remote_option(cli_parser *p, int id, onnxzip_remote_options *o)
{
    switch (id) {
    case CLI_OPT_ALLOW_HTTP: o->allow_http = 1; return 0;
    case CLI_OPT_CA_FILE: o->ca_file = p->value; return 0;
    case CLI_OPT_TIMEOUT: return number(p, "timeout", 1, 86400000u, &o->stall_timeout_ms);
    case CLI_OPT_LOW_SPEED_LIMIT: return rate(p, o);
    case CLI_OPT_LOW_SPEED_TIME: return number(p, "low-speed-time", 1, 86400000u, &o->low_speed_time_ms);
    case CLI_OPT_REQUEST_TIMEOUT: return number(p, "request-timeout", 1, 86400000u, &o->request_timeout_ms);
    case CLI_OPT_RETRIES: return number(p, "retries", 0, 100, &o->retries);
    case CLI_OPT_MAX_REDIRECTS: return number(p, "max-redirects", 0, 50, &o->max_redirects);
    case CLI_OPT_PARALLEL: return number(p, "connections", 1, 64, &o->parallel);
    case CLI_OPT_CHUNK_SIZE: return chunk_size(p, o);
    case CLI_OPT_NO_SIGN: o->s3_no_sign = 1; return 0;
    case CLI_OPT_PROFILE: return text(p, "profile", &o->s3_profile);
    case CLI_OPT_REGION: return text(p, "region", &o->s3_region);
    case CLI_OPT_ENDPOINT_URL: return text(p, "endpoint-url", &o->s3_endpoint_url);
    case CLI_OPT_S3_ADDRESSING: return addressing(p, o);
    case CLI_OPT_TOKEN_FILE: return token_file(p, o);
    case CLI_OPT_NO_TOKEN: o->bearer_token = ""; return 0;
    }
    return CLI_EXIT_USAGE;
}

int cli_open(const char *path, const onnxzip_remote_options *o, onnxzip_archive **a)
{
    return cli_is_url(path) ? onnxzip_open_url(path, o, a) : onnxzip_open(path, 0, a);
}
