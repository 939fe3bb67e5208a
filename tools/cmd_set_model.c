/*
 * cmd_set_model.c — "onnxzip set-model": replace an archive's model in place,
 * without touching its weights (onnxzip_update_model).
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

enum { OPT_HELP, OPT_QUIET };

static const cli_option options[] = {
    { "help", 'h', 0, OPT_HELP },
    { "quiet", 'q', 0, OPT_QUIET },
    { NULL, 0, 0, 0 },
};

static void usage(FILE *f)
{
    fputs("usage: onnxzip set-model ARCHIVE NEW.onnx [-q]\n"
          "\n"
          "Replaces the archive's __MODEL_PROTO with the serialized ModelProto in\n"
          "NEW.onnx, in place: the weights are neither read nor moved, and only the\n"
          "model and the central directory are written. Every EXTERNAL tensor of the\n"
          "new model must name an entry of the archive, with a matching size. A\n"
          "process killed at any moment leaves the old or the new model readable.\n"
          "\n"
          "options:\n"
          "  -q, --quiet    print nothing on success\n"
          "  -h, --help     show this help\n", f);
}

/* The new model is small (the graph, not the weights): read it whole. */
static int read_model(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return cli_fail(ONNXZIP_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    for (size_t k; b && (k = fread(b + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            uint8_t *nb = cap <= (size_t)INT32_MAX ? realloc(b, cap *= 2) : NULL;
            if (!nb) free(b);
            b = nb;
        }
    }
    int bad = ferror(f) || !b;
    fclose(f);
    if (bad) {
        free(b);
        return cli_fail(b ? ONNXZIP_EIO : ONNXZIP_ELIMIT, "%s: cannot read the model (too large or I/O error)", path);
    }
    *data = b;
    *size = n;
    return 0;
}

int cmd_set_model(int argc, char **argv)
{
    cli_parser p;
    const char *paths[2] = { NULL, NULL };
    int id, quiet = 0, n = 0;
    cli_parser_init(&p, "set-model", argc, argv);
    while ((id = cli_next(&p, options)) != CLI_END) {
        if (id == OPT_HELP) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (id == OPT_QUIET) {
            quiet = 1;
        } else if (id == CLI_OPERAND && n < 2) {
            paths[n++] = p.value;
        } else {
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (n != 2) return cli_usage_error("set-model", usage, "expected ARCHIVE and NEW.onnx");
    uint8_t *model = NULL;
    size_t size = 0;
    int rc = read_model(paths[1], &model, &size);
    if (rc) return rc;
    rc = onnxzip_update_model(paths[0], model, size);
    free(model);
    if (rc) return cli_lib_error(rc);
    if (!quiet) printf("updated %s: new model of %zu bytes from %s\n", paths[0], size, paths[1]);
    return CLI_EXIT_OK;
}
