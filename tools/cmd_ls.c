/*
 * cmd_ls.c — "onnxzip ls": list an archive's entries and tensors, as tables
 * for people or as one JSON object for scripts.
 */
#include "cli.h"
#include "ls_json.h"

#include <inttypes.h>
#include <string.h>

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
          "Reads only headers and the model: use 'onnxzip verify' to check the\n"
          "data. A URL costs one or two range requests: the file's end, then the\n"
          "model.\n"
          "\n"
          "options:\n"
          "      --json     print one JSON object instead of tables\n"
          "  -h, --help     show this help\n", f);
    fputs(cli_remote_usage, f);
}

static void print_json(const onnxzip_archive *a, const char *path)
{
    fputs("{\"archive\": ", stdout);
    cli_json_string(stdout, path);
    fputs(",\n ", stdout);
    ls_json_lists(stdout, a);
    fputs("}\n", stdout);
}

/* ---------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------- */

/* Formats dims as "[64, 3, 7, 7]", cut short with "...]" when too long for a
 * table cell (the JSON output always has every dim). */
static const char *format_shape(const onnxzip_tensor *t, char *buf, size_t cap)
{
    size_t len = 1;

    buf[0] = '[';
    for (uint32_t d = 0; d < t->ndims; d++) {
        int n = snprintf(buf + len, cap - len, "%s%" PRId64, d ? ", " : "", t->dims[d]);
        if (n < 0 || (size_t)n + 5 >= cap - len) {
            strcpy(buf + len, "...]");
            return buf;
        }
        len += (size_t)n;
    }
    strcpy(buf + len, "]");
    return buf;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* Left-aligned column of text that may need escaping. */
static void put_cell(const char *s, size_t width)
{
    cli_pad(stdout, width - cli_put_text(stdout, s));
    fputs("  ", stdout);
}

static void print_entries(const onnxzip_archive *a)
{
    size_t n = onnxzip_entry_count(a);

    printf("\nentries:\n%5s  %12s  %12s  %5s  %-8s  %s\n", "#", "data_offset", "size",
           "align", "crc32", "name");
    for (size_t i = 0; i < n; i++) {
        const onnxzip_entry *e = onnxzip_entry_at(a, i);
        printf("%5zu  %12" PRIu64 "  %12" PRIu64 "  %5" PRIu32 "  %08" PRIx32 "  ", i,
               e->data_offset, e->size, ls_alignment_of(e->data_offset), e->crc32);
        cli_put_text(stdout, e->name);
        fputc('\n', stdout);
    }
}

typedef struct tensor_widths {
    size_t name, dtype, shape, entry;
} tensor_widths;

/* Column widths from the longest cell, so that the table lines up. */
static tensor_widths measure_tensors(const onnxzip_archive *a)
{
    tensor_widths w = { 4, 5, 5, 5 };
    size_t n = onnxzip_tensor_count(a);
    char shape[64];

    for (size_t i = 0; i < n; i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        w.name = max_size(w.name, cli_put_text(NULL, t->key));
        w.dtype = max_size(w.dtype, strlen(onnxzip_dtype_name(t->data_type)));
        w.shape = max_size(w.shape, strlen(format_shape(t, shape, sizeof shape)));
        if (t->storage == ONNXZIP_STORAGE_ENTRY && t->entry)
            w.entry = max_size(w.entry, cli_put_text(NULL, t->entry));
    }
    return w;
}

static void print_tensor(const onnxzip_tensor *t, const tensor_widths *w)
{
    char shape[64];
    const char *entry = t->storage == ONNXZIP_STORAGE_ENTRY && t->entry ? t->entry : NULL;

    put_cell(t->key, w->name); /* an unnamed tensor's path in the model */
    printf("%-*s  %-*s  %-7s  ", (int)w->dtype, onnxzip_dtype_name(t->data_type),
           (int)w->shape, format_shape(t, shape, sizeof shape), ls_storage_name(t->storage));
    if (entry)
        put_cell(entry, w->entry);
    else
        printf("%-*s  ", (int)w->entry, "-");
    printf("%12" PRIu64 "  %12" PRIu64 "  %5" PRIu32 "\n", t->file_offset, t->nbytes,
           t->alignment);
}

static void print_tensors(const onnxzip_archive *a)
{
    size_t n = onnxzip_tensor_count(a);
    tensor_widths w = measure_tensors(a);

    printf("\ntensors:\n%-*s  %-*s  %-*s  %-7s  %-*s  %12s  %12s  %5s\n", (int)w.name, "name",
           (int)w.dtype, "dtype", (int)w.shape, "shape", "storage", (int)w.entry, "entry",
           "offset", "nbytes", "align");
    for (size_t i = 0; i < n; i++)
        print_tensor(onnxzip_tensor_at(a, i), &w);
}

static void print_tables(const onnxzip_archive *a, const char *path)
{
    cli_put_text(stdout, path);
    static const char *const layouts[] = { "onnxzip archive", "classic ONNX model",
                                           "classic ONNX model with external data" };
    printf(": %s, %zu entries, %zu tensors\n", layouts[onnxzip_archive_layout(a)], onnxzip_entry_count(a),
           onnxzip_tensor_count(a));
    print_entries(a);
    print_tensors(a);
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
    if ((rc = cli_open(path, &la.ro, &a)) != 0)
        return cli_lib_error(rc);
    if (cli_is_url(path))
        path = onnxzip_archive_path(a); /* never print a URL's query (credentials) */
    if (json)
        print_json(a, path);
    else
        print_tables(a, path);
    onnxzip_close(&a);
    return CLI_EXIT_OK;
}
