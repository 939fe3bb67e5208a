/*
 * cmd_view.c — "onnxzip view": write an archive's view (spec 16), a small
 * classic .onnx whose external data references point into the archive, so
 * that ONNX Runtime, onnx.load and other external-data loaders run it in
 * place. The view must lie beside the archive (beside the real file, for
 * an archive named through symbolic links): those loaders resolve
 * `location` relative to the model's directory and refuse '..', absolute
 * paths and locations resolving elsewhere.
 */
#include "cli.h"

#include <string.h>

#include <onnxzip/onnxzip.h>

typedef struct view_args {
    const char *archive, *out, *model;
    int quiet;
    onnxzip_view_options opts;
} view_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip view ARCHIVE -o VIEW.onnx|- [--model PATH] [--size-threshold B] [-q]\n"
          "\n"
          "Writes the archive's view: a small classic .onnx model whose tensors are\n"
          "external data references into ARCHIVE itself (location = the archive's\n"
          "file name, offset = the tensor's absolute offset in it, length). Beside\n"
          "the archive, the view makes it runnable in place by ONNX Runtime,\n"
          "onnx.load and any loader that follows ONNX's external data rules, with no\n"
          "weight copied: e.g. onnxruntime.InferenceSession(\"model.view.onnx\").\n"
          "\n"
          "VIEW must be in the archive's directory (ONNX loaders resolve locations\n"
          "relative to the model's directory and refuse '..' and absolute paths).\n"
          "An ARCHIVE given through symbolic links is the file they lead to: the\n"
          "view names that file and must be in its directory, not the link's\n"
          "(loaders check the resolved path). In a Hugging Face cache, where\n"
          "snapshots/REV/model.onnxzip links to ../../blobs/SHA256, run in the\n"
          "snapshot directory:\n"
          "    onnxzip view model.onnxzip -o ../../blobs/model.view.onnx\n"
          "and give ONNX Runtime that path. VIEW is replaced atomically; it must not be\n"
          "the archive nor an existing device, FIFO, socket or directory. With\n"
          "-o - the view goes to standard output, which must not be a terminal.\n"
          "The view records the archive's size and model checksums: after\n"
          "set-model, 'onnxzip verify VIEW' reports it stale; write it again.\n"
          "\n"
          "options:\n"
          "  -o, --output VIEW        file to write (required); - for standard output\n"
          "      --model PATH         a package's model (default: its default model)\n"
          "      --size-threshold B   tensors under B bytes are copied into the view\n"
          "                           (default 1K; ONNX Runtime refuses shape constants\n"
          "                           stored as external data); 0: every tensor stays\n"
          "                           in the archive (but empty ones)\n"
          "  -q, --quiet              print nothing on success\n"
          "  -h, --help               show this help\n", f);
}

static size_t entry_tensors(const onnxzip_archive *ar)
{
    size_t n = 0;
    for (size_t i = 0; i < onnxzip_tensor_count(ar); i++)
        n += onnxzip_tensor_at(ar, i)->storage == ONNXZIP_STORAGE_ENTRY;
    return n;
}

#define ARG(field) CLI_AT(view_args, field)

static const cli_opt options[] = {
    { .name = "output", .short_name = 'o', .kind = CLI_STRING, .at = ARG(out) },
    { .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, .at = ARG(quiet) },
    { .name = "model", .kind = CLI_TEXT, .at = ARG(model) },
    { .name = "size-threshold", .kind = CLI_SIZE, .at = ARG(opts.size_threshold),
      .what = "is not a byte count (e.g. 0, 4096, 4K)" },
    { .name = NULL },
};

static const cli_command command = { "view", usage, options, NULL, 0, { ARG(archive) }, 1 };

/* "-o -": the view's bytes, its location the archive's file name. */
static int view_to_stdout(onnxzip_archive *ar, const char *archive, const onnxzip_view_options *opts)
{
    const char *inputs[] = { archive };
    void *data = NULL;
    size_t n = 0;
    int rc = cli_stdout_check("a binary model", inputs, 1);
    if (rc)
        return rc;
    if ((rc = onnxzip_view_model(ar, opts, &data, &n)) != 0)
        return cli_lib_error(rc);
    rc = cli_write_stdout(data, n);
    onnxzip_free(data);
    return rc;
}

int cmd_view(int argc, char **argv)
{
    view_args a = { 0 };
    onnxzip_view_options_init(&a.opts);
    onnxzip_archive *ar = NULL;
    int rc;
    if (cli_parse(&command, argc, argv, &a, &rc) ||
        (rc = cli_require_in_out(command.name, usage, a.archive, "ARCHIVE", a.out, "VIEW")))
        return rc;
    if ((rc = onnxzip_open_model(a.archive, a.model, 0, &ar)) != 0)
        return cli_lib_error(rc);
    if (strcmp(a.out, "-") == 0)
        rc = view_to_stdout(ar, a.archive, &a.opts);
    else if ((rc = onnxzip_view_write(ar, a.out, &a.opts)) != 0)
        rc = cli_lib_error(rc);
    else if (!a.quiet)
        cli_line(stdout, "view %s -> %s: %zu tensors in the archive", a.archive, a.out, entry_tensors(ar));
    onnxzip_close(&ar);
    return rc;
}
