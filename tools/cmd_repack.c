/*
 * cmd_repack.c — "onnxzip repack": rewrite any zip holding an onnxzip model
 * (e.g. re-zipped with deflate) into an aligned onnxzip archive.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

enum { OPT_HELP, OPT_OUTPUT, OPT_ALIGN, OPT_QUIET };

static const cli_option options[] = {
    { "help",   'h', 0, OPT_HELP },
    { "output", 'o', 1, OPT_OUTPUT },
    { "align",  0,   1, OPT_ALIGN },
    { "quiet",  'q', 0, OPT_QUIET },
    { NULL, 0, 0, 0 },
};

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

static int parse_align(const char *s, uint32_t *out)
{
    uint64_t v;

    if (cli_parse_u64(s, &v) != 0 || v < 64 || v > 65536 || (v & (v - 1)) != 0)
        return cli_usage_error("repack", usage,
                               "--align: '%s' is not a power of two between 64 and 65536", s);
    *out = (uint32_t)v;
    return 0;
}

static int parse_option(cli_parser *p, int id, void *ctx)
{
    repack_args *a = ctx;
    switch (id) {
    case OPT_OUTPUT:
        a->out = p->value;
        return 0;
    case OPT_ALIGN:
        return parse_align(p->value, &a->opts.alignment);
    case OPT_QUIET:
        a->quiet = 1;
        return 0;
    case CLI_OPERAND:
        if (a->in)
            return cli_usage_error("repack", usage, "unexpected argument '%s'", p->value);
        a->in = p->value;
        return 0;
    default:
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
}

/* Returns -1 after printing help, 0 when parsed, or an exit code. */
static int parse_args(int argc, char **argv, repack_args *a)
{
    cli_parser p;
    onnxzip_write_options_init(&a->opts);
    cli_parser_init(&p, "repack", argc, argv);
    int rc = cli_parse_all(&p, options, OPT_HELP, usage, parse_option, a);
    if (!rc) rc = cli_require_in_out("repack", usage, a->in, "input archive", a->out, "OUT");
    return rc;
}

int cmd_repack(int argc, char **argv)
{
    repack_args a = { 0 };
    int rc = parse_args(argc, argv, &a);

    if (rc != 0)
        return rc < 0 ? CLI_EXIT_OK : rc;
    /* The library refuses an OUT that is IN (ONNXZIP_ESAMEFILE) or a special file. */
    if ((rc = onnxzip_repack(a.in, a.out, &a.opts)) != 0)
        return cli_lib_error(rc);
    return a.quiet ? CLI_EXIT_OK : cli_archive_summary("repacked", a.in, a.out);
}
