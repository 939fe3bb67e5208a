/*
 * cmd_sign.c — "onnxzip sign": write the OpenSSF Model Signing signature of
 * a package (of the folder it unpacks to) into it as model.sig, or into a
 * file of its own.
 */
#include "cli.h"
#include "platform.h"

#include <onnxzip/onnxzip.h>

typedef struct sign_args {
    const char *archive;
    onnxzip_sign_options o;
    int quiet;
} sign_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip sign PACKAGE --private-key KEY.pem [--signature FILE] [-q]\n"
          "       onnxzip sign PACKAGE --private-key KEY.pem --certificate CERT.pem\n"
          "                    [--certificate-chain CHAIN.pem] [--signature FILE] [-q]\n"
          "\n"
          "Signs the folder PACKAGE unpacks to ('onnxzip unpack PACKAGE DIR') as\n"
          "OpenSSF Model Signing's reference tool signs a folder ('model_signing sign\n"
          "key DIR'): every file's SHA-256, of the bytes unpack would write, in a\n"
          "Sigstore bundle signed by the EC private key KEY.pem (P-256, P-384 or\n"
          "P-521, unencrypted PEM). The bundle goes into the package as its file\n"
          "model.sig (replacing one it has; the package is rewritten into a new\n"
          "file renamed over it, so that a crash leaves the old or the new one), or\n"
          "with --signature into FILE, leaving the package as it is. The unpacked\n"
          "folder verifies with 'model_signing verify key DIR --signature\n"
          "DIR/model.sig --public_key PUB.pem'. A single-model archive is signed as\n"
          "one file (the archive's bytes): its signature must be detached.\n"
          "\n"
          "options:\n"
          "      --private-key KEY.pem   the signing key (required)\n"
          "      --certificate CERT.pem  sign with this certificate of the key (its\n"
          "                              chain goes into the signature)\n"
          "      --certificate-chain CHAIN.pem\n"
          "                              the certificates after CERT.pem (intermediates,\n"
          "                              root), leaf side first\n"
          "      --signature FILE        write a detached signature to FILE\n"
          "  -q, --quiet                 print nothing on success\n"
          "  -h, --help                  show this help\n", f);
}

#define ARG(field) CLI_AT(sign_args, field)

static const cli_opt options[] = {
    { .name = "private-key", .kind = CLI_TEXT, .at = ARG(o.private_key_path), .flags = CLI_ONCE },
    { .name = "certificate", .kind = CLI_TEXT, .at = ARG(o.certificate_path), .flags = CLI_ONCE },
    { .name = "certificate-chain", .kind = CLI_TEXT, .at = ARG(o.chain_path), .flags = CLI_ONCE },
    { .name = "signature", .kind = CLI_TEXT, .at = ARG(o.signature_path), .flags = CLI_ONCE },
    { .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, .at = ARG(quiet) },
    { .name = NULL },
};

static const cli_command command = { "sign", usage, options, NULL, 0, { ARG(archive) }, 1 };

int cmd_sign(int argc, char **argv)
{
    sign_args a = { 0 };
    int rc;
    if (cli_parse(&command, argc, argv, &a, &rc))
        return rc;
    if (!a.archive || !*a.archive)
        return cli_usage_error(command.name, usage, "missing PACKAGE");
    if (!a.o.private_key_path)
        return cli_usage_error(command.name, usage, "missing --private-key KEY.pem");
    if (a.o.chain_path && !a.o.certificate_path)
        return cli_usage_error(command.name, usage, "--certificate-chain needs --certificate (the signing one)");
    /* The signature written over the package (or the key) would destroy it. */
    const char *inputs[] = { a.archive, a.o.private_key_path, a.o.certificate_path, a.o.chain_path };
    cli_file_info out, in;
    for (size_t i = 0; a.o.signature_path && i < sizeof inputs / sizeof *inputs; i++)
        if (inputs[i] && !cli_stat_path(a.o.signature_path, &out) && !cli_stat_path(inputs[i], &in) &&
            out.dev == in.dev && out.ino == in.ino)
            return cli_fail(ONNXZIP_ESAMEFILE, "--signature %s: is %s itself; nothing written", a.o.signature_path,
                            inputs[i]);
    if ((rc = onnxzip_sign(a.archive, &a.o)) != 0)
        return cli_lib_error(rc);
    if (!a.quiet)
        cli_line(stdout, "signed %s with %s%s%s -> %s", a.archive, a.o.private_key_path,
                 a.o.certificate_path ? " and certificate " : "", a.o.certificate_path ? a.o.certificate_path : "",
                 a.o.signature_path ? a.o.signature_path : "its model.sig");
    return CLI_EXIT_OK;
}
