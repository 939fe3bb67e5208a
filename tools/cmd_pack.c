/*
 * cmd_pack.c — "onnxzip pack": convert a classic .onnx model into an archive.
 */
#include "cli.h"

#include <inttypes.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

enum { OPT_HELP, OPT_OUTPUT, OPT_ALIGN, OPT_THRESHOLD, OPT_QUIET, OPT_DATA_DIR, OPT_KEEP_TYPED,
       OPT_NO_ATTRS, OPT_DEDUP, OPT_NO_SYNC };

static const cli_option options[] = {
    { "help",           'h', 0, OPT_HELP },
    { "output",         'o', 1, OPT_OUTPUT },
    { "align",          0,   1, OPT_ALIGN },
    { "size-threshold", 0,   1, OPT_THRESHOLD },
    { "quiet",          'q', 0, OPT_QUIET },
    { "data-dir",       0,   1, OPT_DATA_DIR },
    { "keep-typed",     0,   0, OPT_KEEP_TYPED },
    { "no-convert-attributes", 0, 0, OPT_NO_ATTRS },
    { "dedup",          0,   0, OPT_DEDUP },
    { "no-sync",        0,   0, OPT_NO_SYNC },
    { NULL, 0, 0, 0 },
};

typedef struct pack_args {
    const char *in;
    const char *out;
    int quiet;
    onnxzip_pack_options opts;
} pack_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip pack IN.onnx -o OUT [--align N] [--size-threshold BYTES]\n"
          "                    [--data-dir DIR] [--keep-typed] [--no-convert-attributes]\n"
          "                    [--dedup] [--no-sync] [-q]\n"
          "\n"
          "Converts a classic ONNX model, single-file or with external data, into an\n"
          "onnxzip archive: every tensor whose payload (raw_data, external data, or\n"
          "typed fields such as float_data) holds at least BYTES becomes an aligned,\n"
          "uncompressed entry. External data is read under ONNX's path rules (no\n"
          "absolute paths, '..', symlinks, special files or hard links). OUT is\n"
          "replaced atomically (a symbolic link OUT is replaced, not followed); it\n"
          "must not be the model nor one of its data files (under any name), nor an\n"
          "existing device, FIFO, socket or directory.\n"
          "\n"
          "options:\n"
          "  -o, --output OUT         archive to write (required)\n"
          "      --align N            data alignment, a power of two in 64..65536\n"
          "                           (default 64; 4096 suits page-granular mapping)\n"
          "      --size-threshold B   smallest payload moved to an entry, in bytes,\n"
          "                           with optional suffix K, M or G (default 1024)\n"
          "      --data-dir DIR       where external data files are (default: the\n"
          "                           model's directory)\n"
          "      --keep-typed         leave float_data/int32_data/... tensors inline\n"
          "      --no-convert-attributes  leave attribute tensors (Constant) inline\n"
          "      --dedup              store identical payloads once\n"
          "      --no-sync            do not fsync OUT: still replaced atomically, but\n"
          "                           a power failure may lose it (scratch outputs)\n"
          "  -q, --quiet              print nothing on success\n"
          "  -h, --help               show this help\n", f);
}

static int parse_align(const char *s, uint32_t *out)
{
    uint64_t v;

    if (cli_parse_u64(s, &v) != 0 || v < 64 || v > 65536 || (v & (v - 1)) != 0)
        return cli_usage_error("pack", usage,
                               "--align: '%s' is not a power of two between 64 and 65536", s);
    *out = (uint32_t)v;
    return 0;
}

static int parse_threshold(const char *s, uint64_t *out)
{
    if (cli_parse_size(s, out) != 0)
        return cli_usage_error("pack", usage,
                               "--size-threshold: '%s' is not a byte count "
                               "(a non-negative integer, optional suffix K, M or G)", s);
    return 0;
}

static int parse_option(cli_parser *p, int id, void *ctx)
{
    pack_args *a = ctx;
    switch (id) {
    case OPT_OUTPUT:
        a->out = p->value;
        return 0;
    case OPT_ALIGN:
        return parse_align(p->value, &a->opts.alignment);
    case OPT_THRESHOLD:
        return parse_threshold(p->value, &a->opts.size_threshold);
    case OPT_DATA_DIR:
        a->opts.data_dir = p->value;
        return 0;
    case OPT_KEEP_TYPED:
        a->opts.flags |= ONNXZIP_PACK_KEEP_TYPED;
        return 0;
    case OPT_NO_ATTRS:
        a->opts.flags |= ONNXZIP_PACK_NO_CONVERT_ATTRIBUTES;
        return 0;
    case OPT_DEDUP:
        a->opts.flags |= ONNXZIP_PACK_DEDUP;
        return 0;
    case OPT_NO_SYNC:
        a->opts.flags |= ONNXZIP_PACK_NO_SYNC;
        return 0;
    case OPT_QUIET:
        a->quiet = 1;
        return 0;
    case CLI_OPERAND:
        if (a->in)
            return cli_usage_error("pack", usage, "unexpected argument '%s'", p->value);
        a->in = p->value;
        return 0;
    default:
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
}

/* Returns -1 after printing help, 0 when parsed, or an exit code. */
static int parse_args(int argc, char **argv, pack_args *a)
{
    cli_parser p;
    onnxzip_pack_options_init(&a->opts);
    cli_parser_init(&p, "pack", argc, argv);
    int rc = cli_parse_all(&p, options, OPT_HELP, usage, parse_option, a);
    if (!rc) rc = cli_require_in_out("pack", usage, a->in, "input model", a->out, "OUT");
    return rc;
}

int cmd_pack(int argc, char **argv)
{
    pack_args a = { 0 };
    int rc = parse_args(argc, argv, &a);

    if (rc != 0)
        return rc < 0 ? CLI_EXIT_OK : rc;
    /* The library refuses an OUT that is an input (ONNXZIP_ESAMEFILE) or a special file. */
    cli_progress_state ps;
    if (cli_progress_init(&ps, "packing", a.quiet)) {
        a.opts.progress = cli_progress;
        a.opts.progress_user = &ps;
    }
    rc = onnxzip_pack(a.in, a.out, &a.opts);
    cli_progress_end(&ps);
    if (rc != 0)
        return cli_lib_error(rc);
    return a.quiet ? CLI_EXIT_OK : cli_archive_summary("packed", a.in, a.out);
}
