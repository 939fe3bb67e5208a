/*
 * cmd_verify.c — "onnxzip verify": check an archive's structure and every
 * entry's CRC-32 and XXH3 digest; with a trust option, the package's
 * signature and the SHA-256 of its files (or of one model's) instead.
 */
#include "cli.h"

#include <onnxzip/onnxzip.h>

typedef struct verify_args {
    const char *path;
    cli_trust_args trust;
    onnxzip_remote_options ro;
} verify_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip verify ARCHIVE|URL\n"
          "       onnxzip verify PACKAGE|URL [--model PATH] (--public-key PUB.pem |\n"
          "                      --certificate-chain ROOT.pem) [--signature FILE]\n"
          "\n"
          "Validates the archive's structure and the model's tensor references,\n"
          "then reads every entry and checks its CRC-32 and XXH3-64 digest.\n"
          "A URL is streamed once, in order, and every local header checked too.\n"
          "Exits 0 when all is well, 1 at the first fault, which is named on stderr.\n"
          "\n"
          "With --public-key or --certificate-chain, checks the package's signature\n"
          "(its model.sig, or --signature FILE) instead: the signature over the\n"
          "statement, that the package's files are exactly the statement's (a file\n"
          "more, less or renamed is refused, naming it), and the SHA-256 of each\n"
          "file as 'onnxzip unpack' would write it. With --model PATH only that\n"
          "model's files (its model file and data files) are read and hashed. A\n"
          "single-model archive's signature is detached, over the archive's bytes.\n"
          "\n"
          "options:\n"
          "  -h, --help     show this help\n", f);
    fputs(cli_trust_usage, f);
    fputs(cli_remote_usage, f);
}

static const cli_opt options[] = {
    CLI_TRUST_OPTIONS(verify_args, trust),
    { .name = NULL },
};

static const cli_command command = { "verify", usage, options, cli_remote_options, CLI_AT(verify_args, ro),
                                     { CLI_AT(verify_args, path) }, 1 };

/* The signature, and the files of --model or of the whole package. */
static int verify_signed(verify_args *va)
{
    onnxzip_trust *t = NULL;
    onnxzip_archive *a = NULL;
    onnxzip_signed *s = NULL;
    const char *model = va->ro.model;
    int rc = cli_trust_make(&va->trust, command.name, usage, &t);
    if (rc) return rc;
    if (!model) va->ro.model = ONNXZIP_MODEL_NONE; /* the package: no model opened for nothing */
    if ((rc = cli_open(va->path, &va->ro, &a)) != 0) {
        onnxzip_trust_free(&t);
        return cli_lib_error(rc);
    }
    const char *path = cli_is_url(va->path) ? onnxzip_archive_path(a) : va->path; /* never a URL's query */
    rc = cli_trust_check(a, t, model, &s);
    if (!rc) {
        size_t n = onnxzip_signed_resource_count(s);
        if (model)
            cli_line(stdout, "OK: %s: signature verified (%zu resources signed); model %s: its files match the "
                     "signed digests (SHA-256)", path, n, model);
        else /* resources: files, or shards of files (method 'shards') */
            cli_line(stdout, "OK: %s: signature verified; all %zu signed resources present and matching their "
                     "digests (SHA-256)", path, n);
    }
    onnxzip_signed_free(&s);
    onnxzip_close(&a);
    onnxzip_trust_free(&t);
    return rc;
}

int cmd_verify(int argc, char **argv)
{
    verify_args va = { 0 };
    onnxzip_archive *a = NULL;
    onnxzip_remote_options_init(&va.ro);
    int rc;
    if (cli_parse(&command, argc, argv, &va, &rc))
        return rc;
    if (!va.path)
        return cli_usage_error(command.name, usage, "missing ARCHIVE");
    if (cli_trust_given(&va.trust))
        return verify_signed(&va);
    const char *path = va.path;
    if (!va.ro.model) va.ro.model = ONNXZIP_MODEL_NONE; /* a package: every model is checked anyway */
    if ((rc = cli_open(path, &va.ro, &a)) != 0)
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
    char counts[CLI_COUNTS];
    if (onnxzip_member_count(a))
        cli_line(stdout, "OK: %s: a package of %s, %zu entries, every model's references checked, CRC-32 verified, "
                 "XXH3 verified for %zu of %zu entries", path, cli_package_counts(a, counts, sizeof counts), n,
                 with_digest, n);
    else if (onnxzip_archive_layout(a) == ONNXZIP_LAYOUT_ARCHIVE)
        cli_line(stdout, "OK: %s: %zu entries, %zu tensors, CRC-32 verified, XXH3 verified for %zu of %zu entries",
                 path, n, onnxzip_tensor_count(a), with_digest, n);
    else /* classic ONNX has no CRC: structure, every payload read, SHA-1 checksum keys */
        cli_line(stdout, "OK: %s: classic ONNX model, %zu tensors, structure and every payload checked "
                 "(external data against its checksum keys where present)", path, onnxzip_tensor_count(a));
    onnxzip_close(&a);
    return CLI_EXIT_OK;
}
