/*
 * cmd_unpack.c — "onnxzip unpack": convert an archive back to a classic
 * .onnx model with external data files (or one self-contained model).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

enum { OPT_HELP, OPT_OUTPUT, OPT_LAYOUT, OPT_LOCATION, OPT_ALIGN, OPT_CHECKSUM, OPT_QUIET, OPT_THRESHOLD,
       OPT_NO_SYNC, OPT_MAX_SHARD };

static const cli_option options[] = {
    { "help",     'h', 0, OPT_HELP },
    { "output",   'o', 1, OPT_OUTPUT },
    { "layout",   0,   1, OPT_LAYOUT },
    { "location", 0,   1, OPT_LOCATION },
    { "align",    0,   1, OPT_ALIGN },
    { "checksum", 0,   0, OPT_CHECKSUM },
    { "quiet",    'q', 0, OPT_QUIET },
    { "size-threshold", 0, 1, OPT_THRESHOLD },
    { "no-sync",  0,   0, OPT_NO_SYNC },
    { "max-shard-size", 0, 1, OPT_MAX_SHARD },
    { NULL, 0, 0, 0 },
};

typedef struct unpack_args {
    const char *in;
    const char *out;
    int quiet;
    int single_only; /* an option that only SINGLE (and SAFETENSORS' side file) uses was given */
    onnxzip_unpack_options opts;
} unpack_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip unpack ARCHIVE -o DIR/NAME.onnx\n"
          "                      [--layout single|per-tensor|inline|safetensors]\n"
          "                      [--location FILE] [--align N] [--size-threshold B]\n"
          "                      [--max-shard-size SIZE]\n"
          "                      [--checksum] [--no-sync] [-q]\n"
          "\n"
          "Converts an onnxzip archive back to a classic ONNX model that onnx.load()\n"
          "and ONNX runtimes read: NAME.onnx and its external data files in DIR.\n"
          "Everything is written to a temporary directory inside DIR and renamed\n"
          "into place, the model last; DIR and its missing parents are created\n"
          "(as mkdir -p; removed again on failure). No file written may be the\n"
          "archive (under any name) nor an existing device, FIFO, socket or\n"
          "directory; a symbolic link there is replaced, not followed.\n"
          "\n"
          "options:\n"
          "  -o, --output PATH        the model to write, DIR/NAME.onnx (required)\n"
          "      --layout L           single:     NAME.onnx + one data file (default)\n"
          "                           per-tensor: NAME.onnx + one file per entry\n"
          "                           inline:     one self-contained NAME.onnx\n"
          "                                       (protobuf limits it to 2 GiB)\n"
          "                           safetensors: NAME.onnx + NAME.safetensors, as\n"
          "                                       onnx-ir writes them; types safetensors\n"
          "                                       cannot name go to NAME.onnx.data\n"
          "      --max-shard-size SIZE  safetensors: shards of at most SIZE bytes of\n"
          "                           tensors (5GB, 500MB, 2GiB or bytes), named\n"
          "                           NAME-00001-of-0000N.safetensors, with\n"
          "                           NAME.safetensors.index.json\n"
          "      --location FILE      single: the data file's name, a plain file name\n"
          "                           (default NAME.onnx.data; safetensors: its side file)\n"
          "      --align N            single: every tensor's offset in the data file is\n"
          "                           a multiple of N, a power of two in 1..65536\n"
          "                           (default 4096, the page size for mmap)\n"
          "      --size-threshold B   tensors under B bytes stay inline (not inline\n"
          "                           layout), as onnx's converters do (default 1024;\n"
          "                           ONNX Runtime needs small shape constants inline)\n"
          "      --checksum           also write ONNX's SHA-1 \"checksum\" key\n"
          "      --no-sync            do not fsync the files written: still renamed\n"
          "                           atomically, but a power failure may lose them\n"
          "  -q, --quiet              print nothing on success, no progress\n"
          "  -h, --help               show this help\n", f);
}

static int parse_layout(const char *s, onnxzip_unpack_layout *out)
{
    if (strcmp(s, "single") == 0)
        *out = ONNXZIP_UNPACK_SINGLE;
    else if (strcmp(s, "per-tensor") == 0)
        *out = ONNXZIP_UNPACK_PER_TENSOR;
    else if (strcmp(s, "inline") == 0)
        *out = ONNXZIP_UNPACK_INLINE;
    else if (strcmp(s, "safetensors") == 0)
        *out = ONNXZIP_UNPACK_SAFETENSORS;
    else
        return cli_usage_error("unpack", usage,
                               "--layout: '%s' is not one of single, per-tensor, inline, safetensors", s);
    return 0;
}

static int parse_align(const char *s, uint32_t *out)
{
    uint64_t v;

    if (cli_parse_u64(s, &v) != 0 || v < 1 || v > 65536 || (v & (v - 1)) != 0)
        return cli_usage_error("unpack", usage,
                               "--align: '%s' is not a power of two between 1 and 65536", s);
    *out = (uint32_t)v;
    return 0;
}

static int parse_option(cli_parser *p, int id, void *ctx)
{
    unpack_args *a = ctx;
    switch (id) {
    case OPT_OUTPUT:
        a->out = p->value;
        return 0;
    case OPT_LAYOUT:
        return parse_layout(p->value, &a->opts.layout);
    case OPT_LOCATION:
        a->opts.location = p->value;
        a->single_only = 1;
        return 0;
    case OPT_ALIGN:
        a->single_only = 1;
        return parse_align(p->value, &a->opts.alignment);
    case OPT_THRESHOLD:
        if (cli_parse_size(p->value, &a->opts.size_threshold) != 0)
            return cli_usage_error("unpack", usage, "--size-threshold: '%s' is not a byte count "
                                   "(a non-negative integer, optional suffix K, M or G)", p->value);
        return 0;
    case OPT_MAX_SHARD:
        if (onnxzip_parse_size(p->value, &a->opts.max_shard_size) != 0 || a->opts.max_shard_size == 0)
            return cli_usage_error("unpack", usage, "--max-shard-size: '%s' is not a size of at least 1 byte "
                                   "(e.g. 5GB, 500MB, 2GiB, or bytes)", p->value);
        return 0;
    case OPT_NO_SYNC:
        a->opts.flags |= ONNXZIP_UNPACK_NO_SYNC;
        return 0;
    case OPT_CHECKSUM:
        a->opts.flags |= ONNXZIP_UNPACK_CHECKSUM;
        return 0;
    case OPT_QUIET:
        a->quiet = 1;
        return 0;
    case CLI_OPERAND:
        if (a->in)
            return cli_usage_error("unpack", usage, "unexpected argument '%s'", p->value);
        a->in = p->value;
        return 0;
    default:
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
}

/* Returns -1 after printing help, 0 when parsed, or an exit code. */
static int parse_args(int argc, char **argv, unpack_args *a)
{
    cli_parser p;
    onnxzip_unpack_options_init(&a->opts);
    cli_parser_init(&p, "unpack", argc, argv);
    int rc = cli_parse_all(&p, options, OPT_HELP, usage, parse_option, a);
    if (!rc) rc = cli_require_in_out("unpack", usage, a->in, "input archive", a->out, "DIR/NAME.onnx");
    if (!rc && a->single_only && a->opts.layout != ONNXZIP_UNPACK_SINGLE &&
        a->opts.layout != ONNXZIP_UNPACK_SAFETENSORS)
        rc = cli_usage_error("unpack", usage, "--location and --align apply to --layout single and "
                             "safetensors only");
    if (!rc && a->opts.max_shard_size && a->opts.layout != ONNXZIP_UNPACK_SAFETENSORS)
        rc = cli_usage_error("unpack", usage, "--max-shard-size applies to --layout safetensors only");
    return rc;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The distinct names among names[0..n) (sorted here). */
static size_t count_distinct(const char **names, size_t n)
{
    size_t distinct = 0;
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || strcmp(names[i - 1], names[i]) != 0;
    return distinct;
}

/* In the file at path, the tensors of one storage kind and the distinct entries or data
 * files they name. */
static int count_storage(const char *path, onnxzip_storage storage, size_t *tensors,
                         size_t *distinct)
{
    onnxzip_archive *a = NULL;
    int rc = onnxzip_open(path, 0, &a);
    size_t n, k = 0;
    const char **names;

    if (rc != 0)
        return cli_lib_error(rc);
    n = onnxzip_tensor_count(a);
    names = malloc((n ? n : 1) * sizeof *names);
    if (!names) {
        onnxzip_close(&a);
        return cli_fail(ONNXZIP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (onnxzip_tensor_at(a, i)->storage == storage)
            names[k++] = onnxzip_tensor_at(a, i)->entry;
    *tensors = k;
    *distinct = count_distinct(names, k);
    free(names);
    onnxzip_close(&a);
    return 0;
}

/* Safetensors: the data files the written model refers to (shards, side file). */
static int count_written(const char *model, size_t *files)
{
    size_t tensors;
    return count_storage(model, ONNXZIP_STORAGE_FILE, &tensors, files);
}

/* The tensors that were in entries, and the data files they now use. */
static int count_moved(const char *archive, onnxzip_unpack_layout layout, size_t *tensors,
                       size_t *files)
{
    size_t distinct = 0;
    int rc = count_storage(archive, ONNXZIP_STORAGE_ENTRY, tensors, &distinct);

    if (rc != 0)
        return rc;
    *files = layout == ONNXZIP_UNPACK_INLINE ? 0
             : layout == ONNXZIP_UNPACK_SINGLE ? (distinct ? 1 : 0) : distinct;
    return 0;
}

int cmd_unpack(int argc, char **argv)
{
    unpack_args a = { 0 };
    cli_progress_state ps;
    size_t tensors = 0, files = 0;
    int rc = parse_args(argc, argv, &a);

    if (rc != 0)
        return rc < 0 ? CLI_EXIT_OK : rc;
    if (cli_progress_init(&ps, "unpacking", a.quiet)) {
        a.opts.progress = cli_progress;
        a.opts.progress_user = &ps;
    }
    rc = onnxzip_unpack(a.in, a.out, &a.opts);
    cli_progress_end(&ps);
    if (rc != 0)
        return cli_lib_error(rc);
    if (a.quiet)
        return CLI_EXIT_OK;
    if ((rc = count_moved(a.in, a.opts.layout, &tensors, &files)) != 0)
        return rc;
    if (a.opts.layout == ONNXZIP_UNPACK_SAFETENSORS && (rc = count_written(a.out, &files)) != 0)
        return rc;
    cli_line(stdout, "unpacked %s -> %s: %zu tensors in %zu data file(s)", a.in, a.out, tensors, files);
    return CLI_EXIT_OK;
}
