/*
 * cmd_repack.c — "onnxzip repack": rewrite any zip holding an onnxzip model
 * (e.g. re-zipped with deflate) into an aligned onnxzip archive.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

typedef struct repack_args {
    const char *in;
    const char *out;
    int quiet;
    onnxzip_write_options opts;
} repack_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip repack IN -o OUT [--align N] [-q]\n"
          "\n"
          "Rewrites a zip archive holding an onnxzip model -- for instance an archive\n"
          "that another tool re-zipped with deflate -- into an onnxzip archive: every\n"
          "entry is decompressed, checked against its CRC-32 and written uncompressed\n"
          "and aligned, the model last. Filler entries (__PAD_*) are dropped.\n"
          "Other tools' model zips are converted too: tf2onnx's large-model zip\n"
          "(__MODEL_PROTO.onnx) and PyTorch's ZIP_ARCHIVE export (__MODEL_PROTO\n"
          "first, raw_data \"__EXTERNAL\"); entry names that are not C identifiers\n"
          "are mapped as pack maps tensor names and the model's references follow.\n"
          "OUT is replaced atomically (a symbolic link OUT is replaced, not\n"
          "followed); it must not be the input (under any name), nor an existing\n"
          "device, FIFO, socket or directory.\n"
          "\n"
          "options:\n"
          "  -o, --output OUT         archive to write (required)\n"
          "      --align N            data alignment, a power of two in 64..65536\n"
          "                           (default 64; 4096 suits page-granular mapping)\n"
          "  -q, --quiet              print nothing on success\n"
          "  -h, --help               show this help\n", f);
}

#define ARG(field) CLI_AT(repack_args, field)

static const cli_opt options[] = {
    { .name = "output", .short_name = 'o', .kind = CLI_STRING, .at = ARG(out) },
    { .name = "align", .kind = CLI_POW2, .at = ARG(opts.alignment), .min = 64, .max = 65536 },
    { .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, .at = ARG(quiet) },
    { .name = NULL },
};

static const cli_command command = { "repack", usage, options, NULL, 0, { ARG(in) }, 1 };

int cmd_repack(int argc, char **argv)
{
    repack_args a = { 0 };
    onnxzip_write_options_init(&a.opts);
    int rc;
    if (cli_parse(&command, argc, argv, &a, &rc) ||
        (rc = cli_require_in_out(command.name, usage, a.in, "input archive", a.out, "OUT")))
        return rc;
    /* The library refuses an OUT that is IN (ONNXZIP_ESAMEFILE) or a special file. */
    if ((rc = onnxzip_repack(a.in, a.out, &a.opts)) != 0)
        return cli_lib_error(rc);
    return a.quiet ? CLI_EXIT_OK : cli_archive_summary("repacked", a.in, a.out);
}
