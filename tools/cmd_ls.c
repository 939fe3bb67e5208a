/*
 * cmd_ls.c — "onnxzip ls": list an archive's entries and tensors, as tables
 * for people or as one JSON object for scripts.
 */
#include "cli.h"

#include <onnxzip/onnxzip.h>

enum { OPT_HELP, OPT_JSON };

static const cli_option options[] = {
    { "help", 'h', 0, OPT_HELP },
    { "json", 0,   0, OPT_JSON },
    CLI_REMOTE_OPTIONS,
    { NULL, 0, 0, 0 },
};

static void usage(FILE *f)
{
    fputs("usage: onnxzip ls ARCHIVE|URL [--json]\n"
          "\n"
          "Lists the archive's zip entries (offsets, sizes, alignment, CRC-32) and\n"
          "the model's tensors (type, shape, where their bytes live). An unnamed\n"
          "tensor is listed by its key, its path in the model (e.g. node#0/value;\n"
          "JSON: \"name\" \"\" and \"key\"), which 'onnxzip extract' also takes.\n"
          "Reads only headers and the model: use 'onnxzip verify' to check the\n"
          "data. A URL costs one or two range requests: the file's end, then the\n"
          "model.\n"
          "\n"
          "options:\n"
          "      --json     print one JSON object instead of tables\n"
          "  -h, --help     show this help\n", f);
    fputs(cli_remote_usage, f);
}

/* The library's listing (onnxzip_listing()): the same text whichever way
 * the archive was opened. */
static int print_listing(const onnxzip_archive *a, int json)
{
    char *text = NULL;
    int rc = onnxzip_listing(a, json ? ONNXZIP_LISTING_JSON : 0, &text);

    if (rc == 0)
        fputs(text, stdout);
    onnxzip_free(text);
    return rc;
}

/* ---------------------------------------------------------------------------
 * Command
 * ------------------------------------------------------------------------- */

int cmd_ls(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0, id, rc;
    onnxzip_archive *a = NULL;
    cli_parser p;
    onnxzip_remote_options ro;

    onnxzip_remote_options_init(&ro);
    cli_parser_init(&p, "ls", argc, argv);
    while ((id = cli_next(&p, options)) != CLI_END) {
        if (id == OPT_HELP) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (id == OPT_JSON) {
            json = 1;
        } else if (CLI_IS_REMOTE_OPTION(id)) {
            if ((rc = cli_remote_option(&p, id, &ro)) != 0)
                return rc;
        } else if (id == CLI_OPERAND && !path) {
            path = p.value;
        } else if (id == CLI_OPERAND) {
            return cli_usage_error("ls", usage, "unexpected argument '%s'", p.value);
        } else {
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (!path)
        return cli_usage_error("ls", usage, "missing ARCHIVE");
    if ((rc = cli_open(path, &ro, &a)) != 0)
        return cli_lib_error(rc);
    rc = print_listing(a, json); /* names a URL without its query (credentials) */
    onnxzip_close(&a);
    return rc ? cli_lib_error(rc) : CLI_EXIT_OK;
}
