/*
 * cmd_verify.c — "onnxzip verify": check an archive's structure and every
 * entry's CRC-32 and XXH3 digest.
 */
#include "cli.h"

#include <onnxzip/onnxzip.h>

enum { OPT_HELP };

static const cli_option options[] = {
    { "help", 'h', 0, OPT_HELP },
    CLI_REMOTE_OPTIONS,
    { NULL, 0, 0, 0 },
};

static void usage(FILE *f)
{
    fputs("usage: onnxzip verify ARCHIVE|URL\n"
          "\n"
          "Validates the archive's structure and the model's tensor references,\n"
          "then reads every entry and checks its CRC-32 and XXH3-64 digest.\n"
          "A URL is streamed once, in order, and every local header checked too.\n"
          "Exits 0 when all is well, 1 at the first fault, which is named on stderr.\n"
          "\n"
          "options:\n"
          "  -h, --help     show this help\n", f);
    fputs(cli_remote_usage, f);
}

/* Returns -1 after printing help, 0 when parsed, or an exit code. */
static int parse_args(int argc, char **argv, const char **path, onnxzip_remote_options *ro)
{
    cli_parser p;
    int id;

    cli_parser_init(&p, "verify", argc, argv);
    while ((id = cli_next(&p, options)) != CLI_END) {
        if (id == OPT_HELP) {
            usage(stdout);
            return -1;
        }
        if (CLI_IS_REMOTE_OPTION(id)) {
            int rc = cli_remote_option(&p, id, ro);
            if (rc) return rc;
            continue;
        }
        if (id != CLI_OPERAND) {
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
        if (*path)
            return cli_usage_error("verify", usage, "unexpected argument '%s'", p.value);
        *path = p.value;
    }
    if (!*path)
        return cli_usage_error("verify", usage, "missing ARCHIVE");
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    const char *path = NULL;
    onnxzip_archive *a = NULL;
    onnxzip_remote_options ro;
    onnxzip_remote_options_init(&ro);
    int rc = parse_args(argc, argv, &path, &ro);

    if (rc != 0)
        return rc < 0 ? CLI_EXIT_OK : rc;
    if ((rc = cli_open(path, &ro, &a)) != 0)
        return cli_lib_error(rc);
    if (cli_is_url(path))
        path = onnxzip_archive_path(a); /* never print a URL's query (credentials) */
    if ((rc = onnxzip_verify(a)) != 0) {
        /* Report before close: the message may point into the handle. */
        cli_lib_error(rc);
        onnxzip_close(&a);
        return CLI_EXIT_FAIL;
    }
    /* Archives from other writers may lack digests: say what was checked. */
    size_t n = onnxzip_entry_count(a), with_digest = 0;
    for (size_t i = 0; i < n; i++)
        with_digest += onnxzip_entry_at(a, i)->has_xxh3 != 0;
    if (onnxzip_archive_layout(a) == ONNXZIP_LAYOUT_ARCHIVE)
        cli_line(stdout, "OK: %s: %zu entries, %zu tensors, CRC-32 verified, XXH3 verified for %zu of %zu entries",
                 path, n, onnxzip_tensor_count(a), with_digest, n);
    else /* classic ONNX has no CRC: structure, every payload read, SHA-1 checksum keys */
        cli_line(stdout, "OK: %s: classic ONNX model, %zu tensors, structure and every payload checked "
                 "(external data against its checksum keys where present)", path, onnxzip_tensor_count(a));
    onnxzip_close(&a);
    return CLI_EXIT_OK;
}
