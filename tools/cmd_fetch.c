/*
 * cmd_fetch.c — "onnxzip fetch": download a remote archive to a local file,
 * verified as it streams, resumable after an interruption.
 */
#include "cli.h"

#include <onnxzip/onnxzip.h>

enum { OPT_HELP, OPT_OUTPUT, OPT_QUIET, OPT_TENSORS };

static const cli_option options[] = {
    { "help", 'h', 0, OPT_HELP },
    { "output", 'o', 1, OPT_OUTPUT },
    { "quiet", 'q', 0, OPT_QUIET },
    { "tensors", 't', 1, OPT_TENSORS },
    CLI_REMOTE_OPTIONS,
    { NULL, 0, 0, 0 },
};

static void usage(FILE *f)
{
    fputs("usage: onnxzip fetch URL -o FILE [--tensors PATTERN]...\n"
          "\n"
          "Downloads the archive at URL to FILE: byte for byte, every local header\n"
          "and every entry's CRC-32 and XXH3 checked as the bytes arrive, into\n"
          "FILE.part, renamed to FILE only when complete. An interrupted download\n"
          "keeps FILE.part (and FILE.part.etag, naming the file it holds); running\n"
          "the same command again resumes it while the server still has that file.\n"
          "\n"
          "With --tensors, FILE is a new archive holding only the main graph's\n"
          "initializers whose names match a PATTERN (shell style: * and ?), each\n"
          "checked against the source's digests; the model declares the others as\n"
          "graph inputs. Only their entries are transferred.\n"
          "\n"
          "options:\n"
          "  -o, --output FILE   the archive to write\n"
          "  -t, --tensors PAT   keep the initializers matching PAT (repeatable)\n"
          "  -q, --quiet         no progress display\n"
          "  -h, --help          show this help\n", f);
    fputs(cli_remote_usage, f);
}

#define MAX_PATTERNS 256

typedef struct args {
    const char *url, *out;
    const char *patterns[MAX_PATTERNS];
    size_t npatterns;
    int quiet;
    onnxzip_remote_options ro;
} args;

static int parse_option(cli_parser *p, int id, void *ctx)
{
    args *a = ctx;
    if (CLI_IS_REMOTE_OPTION(id)) return cli_remote_option(p, id, &a->ro);
    if (id == OPT_OUTPUT && !a->out) a->out = p->value;
    else if (id == OPT_QUIET) a->quiet = 1;
    else if (id == OPT_TENSORS && a->npatterns == MAX_PATTERNS)
        return cli_usage_error("fetch", usage, "more than %d --tensors", MAX_PATTERNS);
    else if (id == OPT_TENSORS) a->patterns[a->npatterns++] = p->value;
    else if (id == CLI_OPERAND && !a->url) a->url = p->value;
    else if (id == CLI_OPERAND) return cli_usage_error("fetch", usage, "unexpected argument '%s'", p->value);
    else if (id == OPT_OUTPUT) return cli_usage_error("fetch", usage, "-o given twice");
    else {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

int cmd_fetch(int argc, char **argv)
{
    args a = { 0 };
    onnxzip_remote_options_init(&a.ro);
    cli_parser p;
    cli_parser_init(&p, "fetch", argc, argv);
    int rc = cli_parse_all(&p, options, OPT_HELP, usage, parse_option, &a);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    if ((rc = cli_require_in_out("fetch", usage, a.url, "URL", a.out, "FILE"))) return rc;
    if (!cli_is_url(a.url))
        return cli_usage_error("fetch", usage, "'%s' is not an http://, https:// or s3:// URL", a.url);
    onnxzip_archive *h = NULL;
    if ((rc = onnxzip_open_url(a.url, &a.ro, &h)) != 0) return cli_lib_error(rc);
    cli_progress_state ps;
    int show = cli_progress_init(&ps, "fetching", a.quiet);
    rc = a.npatterns ? onnxzip_fetch_tensors(h, a.out, a.patterns, a.npatterns, show ? cli_progress : NULL, &ps)
                     : onnxzip_fetch(h, a.out, show ? cli_progress : NULL, &ps);
    if (show) cli_progress_end(&ps);
    if (rc) {
        cli_lib_error(rc);
        onnxzip_close(&h);
        return CLI_EXIT_FAIL;
    }
    onnxzip_remote_stats st;
    onnxzip_remote_get_stats(h, &st);
    if (a.npatterns) { /* what is on disk, and what it cost */
        rc = cli_archive_summary("fetched", onnxzip_archive_path(h), a.out);
        if (rc == CLI_EXIT_OK)
            cli_line(stdout, "received %llu of %llu bytes in %llu requests (%llu retries)",
                     (unsigned long long)st.bytes_received, (unsigned long long)st.file_size,
                     (unsigned long long)st.requests, (unsigned long long)st.retries);
        onnxzip_close(&h);
        return rc;
    }
    cli_line(stdout, "fetched %s -> %s: %zu entries, %zu tensors, %llu bytes, verified (%llu requests, %llu retries)",
             onnxzip_archive_path(h), a.out, onnxzip_entry_count(h), onnxzip_tensor_count(h),
             (unsigned long long)st.file_size, (unsigned long long)st.requests, (unsigned long long)st.retries);
    onnxzip_close(&h);
    return CLI_EXIT_OK;
}
