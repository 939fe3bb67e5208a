/*
 * cmd_extract.c — "onnxzip extract": write one tensor's raw bytes to a file.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

#ifdef _WIN32
#include <process.h>
#define cli_getpid _getpid
#else
#include <unistd.h>
#define cli_getpid getpid
#endif

typedef struct extract_args {
    const char *archive;
    const char *tensor;
    const char *out;
    const char *file; /* --file: a package's plain file instead of a tensor */
    int quiet;
    cli_trust_args trust;
    onnxzip_remote_options ro;
} extract_args;

static void usage(FILE *f)
{
    fputs("usage: onnxzip extract ARCHIVE|URL TENSOR -o FILE|- [--model PATH] [-q]\n"
          "       onnxzip extract PACKAGE|URL --file PATH [-o FILE|-] [-q]\n"
          "       ... [--public-key PUB.pem | --certificate-chain ROOT.pem] [--signature FILE]\n"
          "\n"
          "With --public-key or --certificate-chain the package's signature is\n"
          "checked first, then the SHA-256 against the signed statement: of a plain\n"
          "file as it is written (to FILE.unverified, renamed to FILE when it\n"
          "matches); of a model's files (--file MODEL, or a tensor's model) before\n"
          "it is extracted (a local package only). Nothing is written unless they\n"
          "match.\n"
          "\n"
          "--file PATH writes the bytes of a package's file PATH (tokenizer.json,\n"
          "onnx/model.onnx as stored) to FILE, or to standard output by default.\n"
          "\n"
          "Writes the payload of the first tensor named TENSOR (raw little-endian\n"
          "bytes, as in ONNX raw_data) to FILE; an unnamed tensor by the key\n"
          "'onnxzip ls' shows (e.g. node#0/value). FILE is replaced atomically (a\n"
          "symbolic link FILE is replaced, not followed); it must not be the archive\n"
          "nor one of its data files (under any name), nor an existing device, FIFO,\n"
          "socket or directory. With -o - the bytes go to standard output instead,\n"
          "which must not be a terminal. Tensors held in typed fields (float_data,\n"
          "...) have no raw bytes and are refused. From a URL only the tensor's\n"
          "bytes are fetched (one range request).\n"
          "\n"
          "options:\n"
          "  -o, --output FILE        file to write (required for a tensor); - for\n"
          "                           standard output\n"
          "      --file PATH          a package's file (or model) instead of a tensor\n"
          "  -q, --quiet              print nothing on success\n"
          "  -h, --help               show this help\n", f);
    fputs(cli_trust_usage, f);
    fputs(cli_remote_usage, f);
}

#define ARG(field) CLI_AT(extract_args, field)

static const cli_opt options[] = {
    { .name = "output", .short_name = 'o', .kind = CLI_STRING, .at = ARG(out) },
    { .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, .at = ARG(quiet) },
    { .name = "file", .kind = CLI_TEXT, .at = ARG(file) },
    CLI_TRUST_OPTIONS(extract_args, trust),
    { .name = NULL },
};

static const cli_command command = { "extract", usage, options, cli_remote_options, ARG(ro),
                                     { ARG(archive), ARG(tensor) }, 2 };

/* What the options cannot say: 0, or the exit code after printing why. */
static int check_args(extract_args *a)
{
    if (a->file && a->tensor)
        return cli_usage_error(command.name, usage, "give a TENSOR or --file PATH, not both");
    if (a->file && !a->out) a->out = "-";
    int rc = cli_require_in_out(command.name, usage, a->archive, "archive", a->out, "FILE");
    if (!rc && !a->tensor && !a->file)
        rc = cli_usage_error(command.name, usage, "missing tensor name (or --file PATH)");
    return rc;
}

/* Bigger remote files reach standard output through a temporary file:
 * their bytes are checked (CRC-32, XXH3) only once all have arrived, and
 * none may be handed on before that. */
#define STDOUT_WHOLE_MAX ((uint64_t)32 << 20)

/* Copies the file at `tmp` to standard output, then removes it. */
static int spool_to_stdout(const char *tmp)
{
    FILE *f = fopen(tmp, "rb");
    int rc = f ? CLI_EXIT_OK : cli_fail(ONNXZIP_EIO, "%s: cannot read: %s", tmp, strerror(errno));
    const size_t chunk = (size_t)8 << 20;
    void *buf = f ? malloc(chunk) : NULL;
    if (f && !buf) rc = cli_fail(ONNXZIP_ENOMEM, "out of memory");
    for (size_t k; !rc && (k = fread(buf, 1, chunk, f)) > 0;) rc = cli_write_stdout(buf, k);
    if (!rc && f && ferror(f)) rc = cli_fail(ONNXZIP_EIO, "%s: cannot read: %s", tmp, strerror(errno));
    free(buf);
    if (f) fclose(f);
    remove(tmp);
    return rc;
}

/* A temporary file for bytes bound to standard output: in $TMPDIR (or
 * $TEMP, /tmp). 0, or the exit status after printing why. */
static int temp_path(char *tmp, size_t cap)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = getenv("TEMP");
    if (!dir || !*dir) dir = "/tmp";
    if (snprintf(tmp, cap, "%s/onnxzip-extract-%ld.tmp", dir, (long)cli_getpid()) >= (int)cap)
        return cli_fail(ONNXZIP_ELIMIT, "temporary directory name too long: %s", dir);
    return 0;
}

/* A remote file of any size, checked whole, then to standard output. */
static int remote_to_stdout(onnxzip_archive *ar, const onnxzip_member *m, const char *path)
{
    if (m->size <= STDOUT_WHOLE_MAX) {
        void *buf = malloc(m->size ? (size_t)m->size : 1);
        if (!buf) return cli_fail(ONNXZIP_ENOMEM, "'%s': out of memory", path);
        int rc = onnxzip_member_read(ar, m, 0, m->size, buf); /* a whole entry: checked */
        rc = rc ? cli_lib_error(rc) : cli_write_stdout(buf, m->size);
        free(buf);
        return rc;
    }
    char tmp[4096];
    int rc = temp_path(tmp, sizeof tmp);
    if (rc) return rc;
    rc = onnxzip_extract_member(ar, path, tmp);
    return rc ? cli_lib_error(rc) : spool_to_stdout(tmp);
}

/* --file to standard output: in place when mapped, else checked first. */
static int file_to_stdout(onnxzip_archive *ar, const char *archive, const char *path)
{
    const onnxzip_member *m = onnxzip_find_member(ar, path);
    if (!m)
        return cli_fail(ONNXZIP_ENOTFOUND, "%s: no file or model '%s'%s", archive, path,
                        onnxzip_member_count(ar) ? " (onnxzip ls lists them)" : " (a single-model archive holds none)");
    const char *inputs[] = { archive };
    int rc = cli_stdout_check("the file's bytes", inputs, 1);
    const void *data;
    uint64_t n;
    if (rc) return rc;
    if (onnxzip_member_bytes(ar, m, &data, &n) == 0) return cli_write_stdout(data, n);
    return remote_to_stdout(ar, m, path);
}

static int extract_file(onnxzip_archive *ar, const extract_args *a)
{
    if (strcmp(a->out, "-") == 0) return file_to_stdout(ar, a->archive, a->file);
    int rc = onnxzip_extract_member(ar, a->file, a->out);
    if (rc) return cli_lib_error(rc);
    if (!a->quiet) cli_line(stdout, "extracted %s (%" PRIu64 " bytes) -> %s", a->file,
                            onnxzip_find_member(ar, a->file)->size, a->out);
    return CLI_EXIT_OK;
}

/* "-o -": the payload to standard output, never to a terminal (as gzip),
 * nor into the archive or the tensor's own data file (">>"), which -o FILE
 * would refuse too. */
static int extract_to_stdout(onnxzip_archive *ar, const char *archive, const char *name)
{
    const onnxzip_tensor *t = onnxzip_find_tensor(ar, name);
    if (!t)
        return cli_fail(ONNXZIP_ENOTFOUND, "%s: no tensor named '%s'", archive, name);
    if (t->storage == ONNXZIP_STORAGE_TYPED)
        return cli_fail(ONNXZIP_EUNSUPPORTED, "%s: tensor '%s' is held in typed fields; nothing to extract as "
                        "raw bytes", archive, name);
    char *side = NULL;
    if (t->storage == ONNXZIP_STORAGE_FILE && t->entry) {
        const char *slash = strrchr(archive, '/');
#ifdef _WIN32
        const char *back = strrchr(archive, '\\');
        if (back && (!slash || back > slash)) slash = back;
#endif
        int dirlen = slash ? (int)(slash - archive) + 1 : 0;
        size_t cap = (size_t)dirlen + strlen(t->entry) + 1;
        if (!(side = malloc(cap)))
            return cli_fail(ONNXZIP_ENOMEM, "out of memory");
        snprintf(side, cap, "%.*s%s", dirlen, archive, t->entry);
    }
    const char *inputs[] = { archive, side };
    int rc = cli_stdout_check("raw tensor bytes", inputs, 2);
    free(side);
    if (rc || t->data || !t->nbytes) return rc ? rc : cli_write_stdout(t->data, t->nbytes);
    /* a remote archive's entry: fetched into memory first */
    void *buf = t->nbytes <= SIZE_MAX ? malloc((size_t)t->nbytes) : NULL;
    if (!buf) return cli_fail(ONNXZIP_ENOMEM, "%s: tensor '%s': out of memory", archive, name);
    rc = onnxzip_tensor_read(ar, t, 0, t->nbytes, buf);
    rc = rc ? cli_lib_error(rc) : cli_write_stdout(buf, t->nbytes);
    free(buf);
    return rc;
}

/* --file F with a trust, F a plain file: written to a temporary file,
 * hashed there and compared with the statement, then renamed to FILE or
 * copied to standard output (spec 20.5: the bytes handed on are the bytes
 * hashed, each transferred once). */
static int extract_file_signed(onnxzip_archive *ar, const extract_args *a, const onnxzip_signed *s)
{
    int to_stdout = strcmp(a->out, "-") == 0;
    const char *inputs[] = { a->archive };
    char spool[4096];
    char *tmp = NULL;
    int rc = to_stdout ? cli_stdout_check("the file's bytes", inputs, 1) : 0;
    if (!rc && to_stdout && !(rc = temp_path(spool, sizeof spool))) {
        if ((tmp = malloc(strlen(spool) + 1)) != NULL) memcpy(tmp, spool, strlen(spool) + 1);
        else rc = cli_fail(ONNXZIP_ENOMEM, "out of memory");
    }
    if (!rc && !to_stdout && !(tmp = cli_unverified_path(a->out, a->archive))) rc = CLI_EXIT_FAIL;
    if (rc) return rc;
    rc = onnxzip_extract_member(ar, a->file, tmp);
    if (rc) {
        free(tmp);
        return cli_lib_error(rc);
    }
    if ((rc = onnxzip_signed_check_file(s, a->file, tmp))) rc = cli_lib_error(rc); /* what was written */
    if (to_stdout) {
        if (rc) remove(tmp);
        rc = rc ? rc : spool_to_stdout(tmp);
        free(tmp);
        return rc;
    }
    if ((rc = cli_settle(tmp, a->out, rc)) == 0 && !a->quiet)
        cli_line(stdout, "extracted %s (%" PRIu64 " bytes, signed digest verified) -> %s", a->file,
                 onnxzip_find_member(ar, a->file)->size, a->out);
    return rc;
}

/* With a trust: the signature first (onnxzip_signed_open: the package's
 * file names against the statement). A plain file is then checked as it is
 * written (extract_file_signed); a model or a tensor is checked in the
 * handle's mapping before it is extracted from that mapping, which a URL
 * has not (a read after the check would be a new, unchecked transfer):
 * refused there. 0 and *done 0: go on as without a trust. */
static int extract_signed(onnxzip_archive *ar, const extract_args *a, int *done)
{
    onnxzip_trust *t = NULL;
    onnxzip_signed *s = NULL;
    const onnxzip_member *m = a->file ? onnxzip_find_member(ar, a->file) : NULL;
    int rc = cli_trust_make(&a->trust, command.name, usage, &t);
    if (rc) return rc;
    *done = 1;
    rc = onnxzip_signed_open(ar, t, &s);
    onnxzip_trust_free(&t);
    if (rc) return cli_lib_error(rc);
    if (m && m->kind == ONNXZIP_MEMBER_FILE) {
        rc = extract_file_signed(ar, a, s);
    } else if (cli_is_url(a->archive)) {
        rc = cli_fail(ONNXZIP_EUNSUPPORTED, "%s: a model or tensor extracted from a URL with a trust would be read "
                      "again after its check; 'onnxzip fetch --model' it (checked as written), then extract",
                      a->archive);
    } else {
        const char *path = a->file ? a->file : onnxzip_member_count(ar) ? onnxzip_model_path(ar) : NULL;
        rc = onnxzip_signed_check(s, ar, path);
        rc = rc ? cli_lib_error(rc) : 0;
        *done = rc != 0;
    }
    onnxzip_signed_free(&s);
    return rc;
}

int cmd_extract(int argc, char **argv)
{
    extract_args a = { 0 };
    onnxzip_archive *ar = NULL;
    const onnxzip_tensor *t;
    onnxzip_remote_options_init(&a.ro);
    int rc;
    if (cli_parse(&command, argc, argv, &a, &rc) || (rc = check_args(&a)))
        return rc;
    if ((rc = cli_open(a.archive, &a.ro, &ar)) != 0)
        return cli_lib_error(rc);
    if (cli_is_url(a.archive))
        a.archive = onnxzip_archive_path(ar); /* never print a URL's query (credentials) */
    int done = 0;
    if (cli_trust_given(&a.trust) && ((rc = extract_signed(ar, &a, &done)) != 0 || done)) {
        onnxzip_close(&ar);
        return rc;
    }
    if (a.file) {
        rc = extract_file(ar, &a);
        onnxzip_close(&ar);
        return rc;
    }
    if (strcmp(a.out, "-") == 0) { /* nothing else on stdout: it holds the bytes */
        rc = extract_to_stdout(ar, a.archive, a.tensor);
        onnxzip_close(&ar);
        return rc;
    }
    if ((rc = onnxzip_extract_tensor(ar, a.tensor, a.out)) != 0) {
        rc = cli_lib_error(rc);
        onnxzip_close(&ar);
        return rc;
    }
    t = onnxzip_find_tensor(ar, a.tensor);
    if (!a.quiet && t) {
        fputs("extracted ", stdout);
        cli_put_text(stdout, a.tensor);
        cli_line(stdout, " (%" PRIu64 " bytes) -> %s", t->nbytes, a.out);
    }
    onnxzip_close(&ar);
    return CLI_EXIT_OK;
}
