/*
 * cmd_set_model.c — "onnxzip set-model": replace an archive's model in place,
 * without touching its weights (onnxzip_update_model).
 */
#include "cli.h"
#include "platform.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

typedef struct set_model_args {
    const char *archive, *model;
    const char *member; /* --model: a package's model to replace */
    int quiet;
} set_model_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip set-model ARCHIVE NEW.onnx [-q]\n"
          "       onnxzip set-model PACKAGE NEW.onnx --model PATH [-q]\n"
          "\n"
          "Replaces the archive's __MODEL_PROTO with the serialized ModelProto in\n"
          "NEW.onnx, in place: the weights are neither read nor moved, and only the\n"
          "model and the central directory are written. Every EXTERNAL tensor of the\n"
          "new model must name an entry of the archive, with a matching size. A\n"
          "process killed at any moment leaves the old or the new model readable.\n"
          "All or nothing: on failure (a full disk, an I/O error) the archive is\n"
          "left byte-identical to before and the exit status is 1; 0 means the new\n"
          "model is in place. NEW.onnx must be a regular file (not the archive).\n"
          "\n"
          "A package's model (--model PATH, required for a package) is replaced by\n"
          "rewriting the package into a new file renamed over the old one: every\n"
          "entry is checked against its digests and copied (O(package)).\n"
          "\n"
          "options:\n"
          "  --model PATH   the package's model to replace\n"
          "  -q, --quiet    print nothing on success\n"
          "  -h, --help     show this help\n", f);
}

/* protobuf's limit on a serialized message: 2 GiB - 1 (the library's too). */
#define MODEL_LIMIT ((uint64_t)INT32_MAX)

/* What the new model file is, judged from fstat() before a byte is read: a
 * regular file (a device or a FIFO could stream for ever or block), not the
 * archive itself (through any name: the update would read what it
 * overwrites), and within the limit. */
static int check_model_file(int fd, const char *path, const char *archive, size_t *size)
{
    cli_file_info st, ast;
    if (cli_stat_fd(fd, &st)) return cli_fail(ONNXZIP_EIO, "%s: cannot stat: %s", path, strerror(errno));
    if (st.kind != CLI_KIND_REG)
        return cli_fail(ONNXZIP_ENOTREG, "%s: not a regular file (%s); the new model must be a file", path,
                        st.kind == CLI_KIND_DIR ? "a directory" : st.kind == CLI_KIND_FIFO ? "a FIFO"
                                                                           : "a device or socket");
    if (!cli_stat_path(archive, &ast) && ast.dev == st.dev && ast.ino == st.ino)
        return cli_fail(ONNXZIP_ESAMEFILE, "%s: is the archive %s itself; nothing written", path, archive);
    if (st.size > MODEL_LIMIT)
        return cli_fail(ONNXZIP_ELIMIT, "%s: %llu bytes; a model is at most 2 GiB - 1 (protobuf's limit)", path,
                        (unsigned long long)st.size);
    *size = (size_t)st.size;
    return 0;
}

/* The new model is small (the graph, not the weights): read it whole, after
 * check_model_file(). Reads at most one byte past the limit, should the file
 * grow meanwhile. */
static int read_model(const char *path, const char *archive, uint8_t **data, size_t *size)
{
    int fd = cli_open_read(path);
    if (fd < 0) return cli_fail(ONNXZIP_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 0, n = 0;
    int rc = check_model_file(fd, path, archive, &cap);
    uint8_t *b = rc ? NULL : malloc(++cap); /* one byte more: EOF is seen without growing */
    if (!rc && !b) rc = cli_fail(ONNXZIP_ENOMEM, "%s: out of memory for %zu bytes", path, cap);
    while (!rc) {
        long long k = cli_read(fd, b + n, cap - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) rc = cli_fail(ONNXZIP_EIO, "%s: cannot read: %s", path, strerror(errno));
        if (k <= 0) break;
        if ((n += (size_t)k) < cap) continue;
        /* Full: the file grew since fstat(). */
        size_t grown = cap > MODEL_LIMIT / 2 ? (size_t)MODEL_LIMIT + 1 : cap * 2;
        uint8_t *nb = n <= MODEL_LIMIT ? realloc(b, grown) : NULL;
        if (!nb) rc = cli_fail(ONNXZIP_ELIMIT, "%s: grew past 2 GiB - 1 bytes while being read (or out of memory)",
                               path);
        b = nb ? nb : b;
        cap = grown;
    }
    cli_close(fd);
    if (rc) {
        free(b);
        return rc;
    }
    *data = b;
    *size = n;
    return 0;
}

static const cli_opt options[] = {
    { .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, .at = CLI_AT(set_model_args, quiet) },
    { .name = "model", .kind = CLI_TEXT, .at = CLI_AT(set_model_args, member) },
    { .name = NULL },
};

static const cli_command command = { "set-model", usage, options, NULL, 0,
                                     { CLI_AT(set_model_args, archive), CLI_AT(set_model_args, model) }, 2 };

int cmd_set_model(int argc, char **argv)
{
    set_model_args a = { 0 };
    int rc;
    if (cli_parse(&command, argc, argv, &a, &rc))
        return rc;
    if (!a.model)
        return cli_usage_error(command.name, usage, "expected ARCHIVE and NEW.onnx");
    uint8_t *model = NULL;
    size_t size = 0;
    rc = read_model(a.model, a.archive, &model, &size);
    if (rc) return rc;
    rc = a.member ? onnxzip_update_package_model(a.archive, a.member, model, size)
                  : onnxzip_update_model(a.archive, model, size);
    free(model);
    if (rc) return cli_lib_error(rc);
    if (!a.quiet) cli_line(stdout, "updated %s: new model of %zu bytes from %s", a.archive, size, a.model);
    return CLI_EXIT_OK;
}
