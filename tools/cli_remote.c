/*
 * cli_remote.c — what ls, verify and fetch share for archives named by an
 * http:// or https:// URL: the network options and opening either kind.
 */
#include "cli.h"

#include <string.h>
#include <strings.h>

const char cli_remote_usage[] =
    "remote archives (ARCHIVE an https:// URL; the server must answer range requests):\n"
    "      --allow-http        also accept plain http:// URLs (and redirects to them)\n"
    "      --ca-file FILE      trust the PEM certificates in FILE instead of the system's\n"
    "      --timeout MS        fail a transfer that receives nothing for MS ms (30000)\n"
    "      --retries N         retry a failed request N times, with backoff (4)\n"
    "      --parallel N        ranges in flight at once (4)\n"
    "      --max-redirects N   redirects followed (5)\n";

int cli_is_url(const char *s)
{
    return !strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8);
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

int cli_remote_option(cli_parser *p, int id, onnxzip_remote_options *o)
{
    switch (id) {
    case CLI_OPT_ALLOW_HTTP: o->allow_http = 1; return 0;
    case CLI_OPT_CA_FILE: o->ca_file = p->value; return 0;
    case CLI_OPT_TIMEOUT: return number(p, "timeout", 1, 86400000u, &o->stall_timeout_ms);
    case CLI_OPT_RETRIES: return number(p, "retries", 0, 100, &o->retries);
    case CLI_OPT_MAX_REDIRECTS: return number(p, "max-redirects", 0, 50, &o->max_redirects);
    case CLI_OPT_PARALLEL: return number(p, "parallel", 1, 64, &o->parallel);
    }
    return CLI_EXIT_USAGE;
}

int cli_open(const char *path, const onnxzip_remote_options *o, onnxzip_archive **a)
{
    return cli_is_url(path) ? onnxzip_open_url(path, o, a) : onnxzip_open(path, 0, a);
}
