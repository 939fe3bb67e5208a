/*
 * cmd_ls.c — "onnxzip ls": list an archive's entries and tensors, as tables
 * for people or as one JSON object for scripts.
 */
#include "cli.h"

#include <stdlib.h>

#include <onnxzip/onnxzip.h>

typedef struct ls_args {
    const char *path;
    int json;
    onnxzip_remote_options ro;
} ls_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip ls ARCHIVE|URL [--json]\n"
          "\n"
          "Lists the archive's zip entries (offsets, sizes, alignment, CRC-32) and\n"
          "the model's tensors (type, shape, where their bytes live). An unnamed\n"
          "tensor is listed by its key, its path in the model (e.g. node#0/value;\n"
          "JSON: \"name\" \"\" and \"key\"), which 'onnxzip extract' also takes.\n"
          "A package (a folder packed: several models and files) lists its models\n"
          "and files, each model with its tensor count and bytes; --model PATH\n"
          "lists that model's tensors.\n"
          "Reads only headers and the model: use 'onnxzip verify' to check the\n"
          "data. A URL costs one or two range requests: the file's end, then the\n"
          "model (a package: its members so, then each model's open).\n"
          "\n"
          "options:\n"
          "      --json     print one JSON object instead of tables\n"
          "  -h, --help     show this help\n", f);
    fputs(cli_remote_usage, f);
}

/* The library's listing (onnxzip_listing()): the same text whichever way
 * the archive was opened. A package without --model: each of its models
 * opened too (the same source and options), for its tensor count and bytes
 * (onnxzip_listing_models()); over a URL each costs its open's requests. */
static int print_listing(const char *path, const onnxzip_remote_options *ro, const onnxzip_archive *a, int json)
{
    size_t n = onnxzip_model_path(a) ? 0 : onnxzip_member_count(a), k = 0;
    onnxzip_archive **models = n ? calloc(n, sizeof *models) : NULL;
    char *text = NULL;
    int rc = n && !models ? ONNXZIP_ENOMEM : 0;

    for (size_t i = 0; i < n && !rc; i++) {
        const onnxzip_member *m = onnxzip_member_at(a, i);
        onnxzip_remote_options one = *ro;
        if (m->kind != ONNXZIP_MEMBER_MODEL) continue;
        one.model = m->path;
        rc = cli_open(path, &one, &models[k++]);
    }
    unsigned flags = json ? ONNXZIP_LISTING_JSON : 0;
    if (!rc)
        rc = n ? onnxzip_listing_models(a, (const onnxzip_archive *const *)models, k, flags, &text)
               : onnxzip_listing(a, flags, &text);
    if (rc == 0)
        fputs(text, stdout);
    onnxzip_free(text);
    for (size_t i = 0; i < k; i++) onnxzip_close(&models[i]);
    free(models);
    return rc;
}

/* ---------------------------------------------------------------------------
 * Command
 * ------------------------------------------------------------------------- */

static const cli_opt options[] = {
    { .name = "json", .kind = CLI_FLAG, .at = CLI_AT(ls_args, json) },
    { .name = NULL },
};

static const cli_command command = { "ls", usage, options, cli_remote_options, CLI_AT(ls_args, ro),
                                     { CLI_AT(ls_args, path) }, 1 };

int cmd_ls(int argc, char **argv)
{
    ls_args la = { 0 };
    onnxzip_archive *a = NULL;

    onnxzip_remote_options_init(&la.ro);
    int rc;
    if (cli_parse(&command, argc, argv, &la, &rc))
        return rc;
    const char *path = la.path;
    int json = la.json;
    if (!path)
        return cli_usage_error("ls", usage, "missing ARCHIVE");
    if (!la.ro.model) la.ro.model = ONNXZIP_MODEL_NONE; /* a package: its members (--model: a model's tensors) */
    if ((rc = cli_open(path, &la.ro, &a)) != 0)
        return cli_lib_error(rc);
    rc = print_listing(path, &la.ro, a, json); /* names a URL without its query (credentials) */
    onnxzip_close(&a);
    return rc ? cli_lib_error(rc) : CLI_EXIT_OK;
}
