/*
 * cmd_pack.c — "onnxzip pack": convert a classic .onnx model into an archive,
 * or a repository folder into a package.
 */
#include "cli.h"

#include <inttypes.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

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
          "       onnxzip pack DIR -o OUT [--default-model PATH] [--align N] [...]\n"
          "\n"
          "A folder DIR (a model repository: several .onnx at any depth, their\n"
          "external data in any layout, tokenizer and config files) becomes one\n"
          "package: every model and file under its path in DIR, equal weights of a\n"
          "directory stored once; 'onnxzip unpack OUT DIR2' recreates the folder.\n"
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
          "      --dedup              store identical payloads once (always for DIR)\n"
          "      --default-model PATH  DIR: the model onnxzip_open() of the package\n"
          "                           holds (default: the first model.onnx, else the\n"
          "                           first model in byte order)\n"
          "      --no-sync            do not fsync OUT: still replaced atomically, but\n"
          "                           a power failure may lose it (scratch outputs)\n"
          "  -q, --quiet              print nothing on success\n"
          "  -h, --help               show this help\n", f);
}

#define ARG(field) CLI_AT(pack_args, field)

static const cli_opt options[] = {
    { .name = "output", .short_name = 'o', .kind = CLI_STRING, .at = ARG(out) },
    { .name = "align", .kind = CLI_POW2, .at = ARG(opts.alignment), .min = 64, .max = 65536 },
    { .name = "size-threshold", .kind = CLI_SIZE, .at = ARG(opts.size_threshold),
      .what = CLI_BYTE_COUNT },
    { .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, .at = ARG(quiet) },
    { .name = "data-dir", .kind = CLI_STRING, .at = ARG(opts.data_dir) },
    { .name = "keep-typed", .kind = CLI_BIT, .at = ARG(opts.flags), .min = ONNXZIP_PACK_KEEP_TYPED },
    { .name = "no-convert-attributes", .kind = CLI_BIT, .at = ARG(opts.flags),
      .min = ONNXZIP_PACK_NO_CONVERT_ATTRIBUTES },
    { .name = "dedup", .kind = CLI_BIT, .at = ARG(opts.flags), .min = ONNXZIP_PACK_DEDUP },
    { .name = "default-model", .kind = CLI_TEXT, .at = ARG(opts.default_model) },
    { .name = "no-sync", .kind = CLI_BIT, .at = ARG(opts.flags), .min = ONNXZIP_PACK_NO_SYNC },
    { .name = NULL },
};

static const cli_command command = { "pack", usage, options, NULL, 0, { ARG(in) }, 1 };

int cmd_pack(int argc, char **argv)
{
    pack_args a = { 0 };
    onnxzip_pack_options_init(&a.opts);
    int rc;
    if (cli_parse(&command, argc, argv, &a, &rc) ||
        (rc = cli_require_in_out(command.name, usage, a.in, "input model or folder", a.out, "OUT")))
        return rc;
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
