/*
 * cmd_unpack.c — "onnxzip unpack": convert an archive back to a classic
 * .onnx model with external data files (or one self-contained model).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

typedef struct unpack_args {
    const char *in;
    const char *out;
    const char *dir; /* a package's folder, as the second operand */
    int quiet;
    uint32_t align; /* --align, 0 when not given: SINGLE's (and SAFETENSORS' side file's) only */
    onnxzip_unpack_options opts;
} unpack_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip unpack PACKAGE DIR (or -o DIR) [--no-sync] [-q]\n"
          "       onnxzip unpack ARCHIVE -o DIR/NAME.onnx [--model PATH]\n"
          "                      [--layout single|per-tensor|inline|safetensors]\n"
          "                      [--location FILE] [--align N] [--size-threshold B]\n"
          "                      [--max-shard-size SIZE]\n"
          "                      [--checksum] [--no-sync] [-q]\n"
          "\n"
          "A package (several models and files) comes back as the folder it was\n"
          "packed from: files byte for byte, each model at its path with its data\n"
          "files as they were named; DIR must be new or empty and appears whole or\n"
          "not at all. --model PATH unpacks one model of a package as below.\n"
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
          "  -o, --output PATH        the model to write, DIR/NAME.onnx (required);\n"
          "                           for a package, the folder to write\n"
          "      --model PATH         a package's model to unpack (default: all)\n"
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

/* --max-shard-size: sizes as onnxzip_parse_size() reads them (5GB, 2GiB). */
static int shard_size(const cli_parser *p, const cli_opt *o, const char *value, void *field)
{
    if (onnxzip_parse_size(value, field) != 0 || *(uint64_t *)field == 0)
        return cli_bad_value(p, o, value, "is not a size of at least 1 byte (e.g. 5GB, 500MB, 2GiB, or bytes)");
    return 0;
}

static const char *const layouts[] = { [ONNXZIP_UNPACK_SINGLE] = "single", [ONNXZIP_UNPACK_PER_TENSOR] = "per-tensor",
                                       [ONNXZIP_UNPACK_INLINE] = "inline",
                                       [ONNXZIP_UNPACK_SAFETENSORS] = "safetensors", NULL };
_Static_assert(sizeof(onnxzip_unpack_layout) == sizeof(int), "--layout is stored as an int (CLI_CHOICE)");

#define ARG(field) CLI_AT(unpack_args, field)

static const cli_opt options[] = {
    { .name = "output", .short_name = 'o', .kind = CLI_STRING, .at = ARG(out) },
    { .name = "model", .kind = CLI_TEXT, .at = ARG(opts.model) },
    { .name = "layout", .kind = CLI_CHOICE, .at = ARG(opts.layout), .choices = layouts,
      .what = "is not one of single, per-tensor, inline, safetensors" },
    { .name = "location", .kind = CLI_STRING, .at = ARG(opts.location) },
    { .name = "align", .kind = CLI_POW2, .at = ARG(align), .min = 1, .max = 65536 },
    { .name = "checksum", .kind = CLI_BIT, .at = ARG(opts.flags), .min = ONNXZIP_UNPACK_CHECKSUM },
    { .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, .at = ARG(quiet) },
    { .name = "size-threshold", .kind = CLI_SIZE, .at = ARG(opts.size_threshold), .what = CLI_BYTE_COUNT },
    { .name = "no-sync", .kind = CLI_BIT, .at = ARG(opts.flags), .min = ONNXZIP_UNPACK_NO_SYNC },
    { .name = "max-shard-size", .kind = CLI_CALL, .at = ARG(opts.max_shard_size), .call = shard_size },
    { .name = NULL },
};

static const cli_command command = { "unpack", usage, options, NULL, 0, { ARG(in), ARG(dir) }, 2 };

/* What the options cannot say: 0, or the exit code after printing why. */
static int check_args(unpack_args *a)
{
    if (a->align)
        a->opts.alignment = a->align;
    if (a->dir && a->out)
        return cli_usage_error(command.name, usage, "give the folder once: as DIR or as -o DIR");
    if (a->dir) a->out = a->dir;
    int rc = cli_require_in_out(command.name, usage, a->in, "input archive", a->out, "DIR/NAME.onnx");
    if (!rc && (a->opts.location || a->align) && a->opts.layout != ONNXZIP_UNPACK_SINGLE &&
        a->opts.layout != ONNXZIP_UNPACK_SAFETENSORS)
        rc = cli_usage_error(command.name, usage, "--location and --align apply to --layout single and "
                             "safetensors only");
    if (!rc && a->opts.max_shard_size && a->opts.layout != ONNXZIP_UNPACK_SAFETENSORS)
        rc = cli_usage_error(command.name, usage, "--max-shard-size applies to --layout safetensors only");
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
static int count_storage(const char *path, const char *model, onnxzip_storage storage, size_t *tensors,
                         size_t *distinct)
{
    onnxzip_archive *a = NULL;
    int rc = onnxzip_open_model(path, model, 0, &a);
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
    return count_storage(model, NULL, ONNXZIP_STORAGE_FILE, &tensors, files);
}

/* The tensors that were in entries, and the data files they now use. */
static int count_moved(const char *archive, const char *model, onnxzip_unpack_layout layout, size_t *tensors,
                       size_t *files)
{
    size_t distinct = 0;
    int rc = count_storage(archive, model, ONNXZIP_STORAGE_ENTRY, tensors, &distinct);

    if (rc != 0)
        return rc;
    *files = layout == ONNXZIP_UNPACK_INLINE ? 0
             : layout == ONNXZIP_UNPACK_SINGLE ? (distinct ? 1 : 0) : distinct;
    return 0;
}

/* A package without --model: its folder. 1 when `in` is no package. */
static int unpack_package(unpack_args *a)
{
    onnxzip_archive *ar = NULL;
    if (a->opts.model || onnxzip_open(a->in, 0, &ar) != 0) return 1; /* unpack itself reports a bad archive */
    size_t members = onnxzip_member_count(ar);
    char counts[CLI_COUNTS];
    cli_package_counts(ar, counts, sizeof counts);
    onnxzip_close(&ar);
    if (!members) return a->dir ? cli_usage_error(command.name, usage, "a single-model archive unpacks to a model "
                                                  "file: -o DIR/NAME.onnx") : 1;
    onnxzip_unpack_options o = a->opts;
    int rc = onnxzip_unpack_dir(a->in, a->out, &o);
    if (rc != 0) return cli_lib_error(rc);
    if (!a->quiet) cli_line(stdout, "unpacked %s -> %s: %s", a->in, a->out, counts);
    return CLI_EXIT_OK;
}

int cmd_unpack(int argc, char **argv)
{
    unpack_args a = { 0 };
    cli_progress_state ps;
    size_t tensors = 0, files = 0;
    int rc;
    onnxzip_unpack_options_init(&a.opts);
    if (cli_parse(&command, argc, argv, &a, &rc) || (rc = check_args(&a)))
        return rc;
    if ((rc = unpack_package(&a)) != 1)
        return rc;
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
    if ((rc = count_moved(a.in, a.opts.model, a.opts.layout, &tensors, &files)) != 0)
        return rc;
    if (a.opts.layout == ONNXZIP_UNPACK_SAFETENSORS && (rc = count_written(a.out, &files)) != 0)
        return rc;
    cli_line(stdout, "unpacked %s -> %s: %zu tensors in %zu data file(s)", a.in, a.out, tensors, files);
    return CLI_EXIT_OK;
}
