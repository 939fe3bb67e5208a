/*
 * cmd_view.c — "onnxzip view": write an archive's view (spec 16), a small
 * classic .onnx whose external data references point into the archive, so
 * that ONNX Runtime, onnx.load and other external-data loaders run it in
 * place. The view must lie beside the archive: those loaders resolve
 * `location` relative to the model's directory and refuse '..' and absolute
 * paths.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fstat(), realpath(), mkstemp() */
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* realpath() in glibc */
#endif

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <onnxzip/onnxzip.h>

enum { OPT_HELP, OPT_OUTPUT, OPT_QUIET };

static const cli_option options[] = {
    { "help",   'h', 0, OPT_HELP },
    { "output", 'o', 1, OPT_OUTPUT },
    { "quiet",  'q', 0, OPT_QUIET },
    { NULL, 0, 0, 0 },
};

typedef struct view_args {
    const char *archive, *out;
    int quiet;
} view_args;

/* The archive as a regular file: its real path, directory and name. */
typedef struct target {
    char *real;           /* realpath() of the archive */
    const char *name;     /* its base name: the view's location */
    struct stat dir;      /* its directory */
} target;

static void usage(FILE *f)
{
    fputs("usage: onnxzip view ARCHIVE -o VIEW.onnx|- [-q]\n"
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
          "An ARCHIVE given through a symbolic link is named by its target's file\n"
          "name; a link to a file in another directory is refused (loaders check\n"
          "the resolved path, and a view must not depend on a link): write the\n"
          "view beside the real file. VIEW is replaced atomically; it must not be\n"
          "the archive nor an existing device, FIFO, socket or directory. With\n"
          "-o - the view goes to standard output, which must not be a terminal.\n"
          "The view records the archive's size and model checksums: after\n"
          "set-model, 'onnxzip verify VIEW' reports it stale; write it again.\n"
          "\n"
          "options:\n"
          "  -o, --output VIEW        file to write (required); - for standard output\n"
          "  -q, --quiet              print nothing on success\n"
          "  -h, --help               show this help\n", f);
}

static int parse_option(cli_parser *p, int id, void *ctx)
{
    view_args *a = ctx;
    switch (id) {
    case OPT_OUTPUT:
        a->out = p->value;
        return 0;
    case OPT_QUIET:
        a->quiet = 1;
        return 0;
    case CLI_OPERAND:
        if (a->archive)
            return cli_usage_error("view", usage, "unexpected argument '%s'", p->value);
        a->archive = p->value;
        return 0;
    default:
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
}

/* The directory part of `path` ("." when none), stat()ed. */
static int stat_parent(const char *path, struct stat *st)
{
    const char *slash = strrchr(path, '/');
    char *dir = !slash ? strdup(".") : slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    if (!dir)
        return -1;
    int rc = stat(dir, st);
    free(dir);
    return rc;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Resolves the archive to its real file; refuses a symbolic link that leads
 * out of the link's directory. */
static int find_target(const char *archive, target *t)
{
    struct stat lst, here;
    if (lstat(archive, &lst) || !(t->real = realpath(archive, NULL)) || stat_parent(t->real, &t->dir))
        return cli_fail(ONNXZIP_EIO, "%s: %s", archive, strerror(errno));
    t->name = strrchr(t->real, '/') + 1;
    if (!S_ISLNK(lst.st_mode))
        return 0;
    if (stat_parent(archive, &here))
        return cli_fail(ONNXZIP_EIO, "%s: its directory: %s", archive, strerror(errno));
    if (same_file(&here, &t->dir))
        return 0;
    return cli_fail(ONNXZIP_EPATH, "%s is a symbolic link to %s in another directory; ONNX Runtime and onnx check "
                    "the resolved path of external data and a view must not depend on a link: write the view beside "
                    "%s (onnxzip view %s -o VIEW)", archive, t->real, t->real, t->real);
}

/* -o FILE must be in the archive's directory, not the archive, not special. */
static int check_output(const char *out, const target *t)
{
    struct stat dir, st;
    if (stat_parent(out, &dir))
        return cli_fail(ONNXZIP_EIO, "%s: its directory: %s", out, strerror(errno));
    if (!same_file(&dir, &t->dir))
        return cli_fail(ONNXZIP_EPATH, "%s: a view must be in its archive's directory (that of %s): ONNX loaders "
                        "resolve external data locations relative to the model's directory and refuse '..' and "
                        "absolute paths", out, t->real);
    if (stat(out, &st))
        return errno == ENOENT ? 0 : cli_fail(ONNXZIP_EIO, "%s: %s", out, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return cli_fail(ONNXZIP_ENOTREG, "%s: exists and is not a regular file; refusing to replace it", out);
    struct stat arc;
    if (!stat(t->real, &arc) && same_file(&st, &arc))
        return cli_fail(ONNXZIP_ESAMEFILE, "%s is the archive %s; refusing to write the view over its input", out,
                        t->real);
    return 0;
}

static int write_all(int fd, const void *data, size_t n)
{
    for (const char *p = data; n > 0;) {
        ssize_t k = write(fd, p, n < (1u << 30) ? n : (1u << 30));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = ENOSPC;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Writes a temporary file beside `out` and renames it into place: `out`
 * never holds a partial view. The output checks run again before the rename. */
static int write_atomic(const char *out, const target *t, const void *data, size_t n)
{
    size_t cap = strlen(out) + 32;
    char *tmp = malloc(cap);
    if (!tmp)
        return cli_fail(ONNXZIP_ENOMEM, "out of memory");
    const char *slash = strrchr(out, '/');
    int dirlen = slash ? (int)(slash - out) + 1 : 0;
    snprintf(tmp, cap, "%.*s.%s.tmp-XXXXXX", dirlen, out, out + dirlen);
    int fd = mkstemp(tmp), rc = 0;
    if (fd < 0) {
        rc = cli_fail(ONNXZIP_EIO, "%s: cannot create a temporary file beside it: %s", out, strerror(errno));
        free(tmp);
        return rc;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) || write_all(fd, data, n) || fsync(fd))
        rc = cli_fail(ONNXZIP_EIO, "%s: cannot write: %s", tmp, strerror(errno));
    if (close(fd) && !rc)
        rc = cli_fail(ONNXZIP_EIO, "%s: cannot close: %s", tmp, strerror(errno));
    if (!rc)
        rc = check_output(out, t);
    if (!rc && rename(tmp, out))
        rc = cli_fail(ONNXZIP_EIO, "%s: cannot rename into place: %s", out, strerror(errno));
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* "-o -": never a terminal, never the archive itself (">>"). */
static int write_stdout(const target *t, const void *data, size_t n)
{
    struct stat so, arc;
    if (isatty(STDOUT_FILENO))
        return cli_fail(ONNXZIP_EINVAL, "standard output is a terminal; refusing to write a binary model to it "
                        "(redirect it, or use -o FILE)");
    if (!fstat(STDOUT_FILENO, &so) && !stat(t->real, &arc) && same_file(&so, &arc))
        return cli_fail(ONNXZIP_ESAMEFILE, "standard output is the archive %s; refusing to write into an input",
                        t->real);
    if (write_all(STDOUT_FILENO, data, n))
        return cli_fail(ONNXZIP_EIO, "standard output: cannot write: %s", strerror(errno));
    return 0;
}

static int run(const view_args *a, const target *t)
{
    onnxzip_archive *ar = NULL;
    void *data = NULL;
    size_t n = 0, entries = 0;
    int rc = onnxzip_open(a->archive, 0, &ar);
    if (!rc)
        rc = onnxzip_view_model(ar, t->name, &data, &n);
    if (rc) {
        rc = cli_lib_error(rc);
        onnxzip_close(&ar);
        return rc;
    }
    for (size_t i = 0; i < onnxzip_tensor_count(ar); i++)
        entries += onnxzip_tensor_at(ar, i)->storage == ONNXZIP_STORAGE_ENTRY;
    int to_stdout = strcmp(a->out, "-") == 0;
    rc = to_stdout ? write_stdout(t, data, n) : write_atomic(a->out, t, data, n);
    if (!rc && !to_stdout && !a->quiet)
        cli_line(stdout, "view %s -> %s: %zu bytes, %zu tensors in %s", a->archive, a->out, n, entries, t->name);
    onnxzip_free(data);
    onnxzip_close(&ar);
    return rc;
}

int cmd_view(int argc, char **argv)
{
    view_args a = { 0 };
    target t = { 0 };
    cli_parser p;
    cli_parser_init(&p, "view", argc, argv);
    int rc = cli_parse_all(&p, options, OPT_HELP, usage, parse_option, &a);
    if (!rc)
        rc = cli_require_in_out("view", usage, a.archive, "ARCHIVE", a.out, "VIEW");
    if (rc)
        return rc < 0 ? CLI_EXIT_OK : rc;
    rc = find_target(a.archive, &t);
    if (!rc && strcmp(a.out, "-"))
        rc = check_output(a.out, &t);
    if (!rc)
        rc = run(&a, &t);
    free(t.real);
    return rc;
}
