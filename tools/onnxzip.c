/*
 * onnxzip.c — the onnxzip command-line tool: dispatches to a subcommand.
 */
#include "cli.h"
#include "platform.h"

#include <errno.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    { "pack",   cmd_pack,   "convert a classic .onnx model into an onnxzip archive;\n"
                            "           pack DIR: a repository folder (models, tokenizer...) into a package" },
    { "ls",     cmd_ls,     "list an archive's entries and tensors, a package's models (--json)" },
    { "verify", cmd_verify, "check every entry's CRC-32 and XXH3 digest;\n"
                            "           with --public-key or --certificate-chain, the package's signature" },
    { "sign",   cmd_sign,   "sign a package (OpenSSF Model Signing) into its model.sig" },
    { "unpack", cmd_unpack, "convert an archive back to a classic .onnx model (+ data files);\n"
                            "           a package back to its folder" },
    { "repack", cmd_repack, "rewrite any zip of an onnxzip model (e.g. deflated) as an aligned archive" },
    { "extract", cmd_extract, "write one tensor's raw bytes to a file" },
    { "set-model", cmd_set_model, "replace an archive's model in place, weights untouched" },
    { "fetch",  cmd_fetch,  "download a remote archive (https://), verified and resumable" },
    { "view",   cmd_view,   "write a small .onnx beside the archive that runs it in place (ONNX Runtime)" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fputs("usage: onnxzip <command> [options] [arguments]\n"
          "       onnxzip --help | --version\n"
          "\n"
          "onnxzip stores ONNX models as zip archives whose tensors are aligned,\n"
          "uncompressed entries that can be memory-mapped in place; a package holds\n"
          "a whole repository folder (several models, their tensors stored once,\n"
          "and plain files such as the tokenizer).\n"
          "\n"
          "commands:\n", f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "examples:\n"
          "  onnxzip pack model.onnx -o model.onnxzip [--align 4096] [--size-threshold 4K]\n"
          "  onnxzip pack repo/ -o repo.onnxzip           (a folder: a package)\n"
          "  onnxzip ls model.onnxzip [--json]\n"
          "  onnxzip ls repo.onnxzip [--model onnx/model.onnx]\n"
          "  onnxzip verify model.onnxzip\n"
          "  onnxzip sign repo.onnxzip --private-key key.pem\n"
          "  onnxzip verify repo.onnxzip --public-key pub.pem [--model onnx/model.onnx]\n"
          "  onnxzip unpack model.onnxzip -o dir/model.onnx [--layout single|per-tensor|inline]\n"
          "  onnxzip unpack repo.onnxzip repo-again/\n"
          "  onnxzip view model.onnxzip -o model.view.onnx\n"
          "\n"
          "Run 'onnxzip <command> --help' for a command's options.\n"
          "Exit status: 0 on success, 1 on failure, 2 on a bad command line.\n", f);
}

static void version(void)
{
    /* The tool's version is the header it was built with; the library's is
     * whatever was loaded at run time, which may differ when shared. */
    printf("onnxzip %d.%d.%d (library %s, archive format %d.%d)\n",
           ONNXZIP_VERSION_MAJOR, ONNXZIP_VERSION_MINOR, ONNXZIP_VERSION_PATCH,
           onnxzip_version(), ONNXZIP_FORMAT_VERSION_MAJOR, ONNXZIP_FORMAT_VERSION_MINOR);
    printf("features: model_proto (protobuf-c) %s, repack (libzip) %s, signing (libcrypto, jansson) %s, "
           "remote (libcurl) %s, unicode_paths (libunistring) %s, CRC-32 by %s\n",
           onnxzip_has_feature(ONNXZIP_FEATURE_MODEL_PROTO) ? "yes" : "no",
           onnxzip_has_feature(ONNXZIP_FEATURE_REPACK) ? "yes" : "no",
           onnxzip_has_feature(ONNXZIP_FEATURE_SIGNING) ? "yes" : "no",
           onnxzip_has_feature(ONNXZIP_FEATURE_REMOTE) ? "yes" : "no",
           onnxzip_has_feature(ONNXZIP_FEATURE_UNICODE_PATHS) ? "yes" : "no",
           onnxzip_has_feature(ONNXZIP_FEATURE_LIBDEFLATE) ? "libdeflate" : "zlib");
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* "onnxzip help [COMMAND]" is "onnxzip [COMMAND] --help". */
static int help(int argc, char **argv)
{
    const command *c;
    char help_arg[] = "--help";
    char *args[3];

    if (argc < 3) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    c = find_command(argv[2]);
    if (!c || argc > 3) {
        cli_line(stderr, "onnxzip: unknown command '%s'", argv[2]);
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    args[0] = argv[2];
    args[1] = help_arg;
    args[2] = NULL;
    return c->run(2, args);
}

static int dispatch(int argc, char **argv)
{
    const char *name = argv[1];
    const command *c;

    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        version();
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "help") == 0)
        return help(argc, argv);
    c = find_command(name);
    if (!c) {
        cli_line(stderr, "onnxzip: unknown %s '%s'", name[0] == '-' ? "option" : "command", name);
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}

/* Output is buffered: a full disk or closed pipe shows only at the flush,
 * and must turn success into failure rather than pass unnoticed. */
static int finish_stdout(int rc)
{
    int flush_failed = fflush(stdout) != 0;
    int err = errno;

    if (!flush_failed && !ferror(stdout))
        return rc;
    if (flush_failed)
        cli_fail(ONNXZIP_EIO, "error writing to standard output: %s", strerror(err));
    else
        cli_fail(ONNXZIP_EIO, "error writing to standard output");
    return rc == CLI_EXIT_OK ? CLI_EXIT_FAIL : rc;
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return finish_stdout(dispatch(argc, argv));
}
