/* Outputs create their missing parent directories as mkdir -p does, and a
 * failing call removes again those it created (spec 12.3): pack, unpack
 * (single, per-tensor, inline), the writer, repack (builds with libzip),
 * extract. Each case writes below a fresh directory ROOT:
 *   - ROOT/a/b/c/NAME succeeds and creates a, b and c;
 *   - ROOT/new/../file/d/NAME, where ROOT/file is a regular file, fails with
 *     ONNXZIP_EIO naming it, after creating ROOT/new, which must be gone;
 *   - invalid input fails before anything is created;
 *   - a failure after the directories exist (writer abort, a finish without
 *     model, unpack's data file named as the model) removes them, but never a
 *     directory that existed before, empty or not.
 * A view gets no directory (it lies beside its archive): ONNXZIP_EPATH.
 * POSIX only: modes under a umask, and a symbolic link among the parents. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "common/sys.h"
#include "testutil.h"

/* Paths that live until the end. */
static const char *P(const char *dir, const char *name)
{
    static char arena[128][4096];
    static int k;
    char path[4096]; /* `dir` may be an earlier arena slot: never a source and destination at once */
    if (k == 128 || snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) abort();
    return memcpy(arena[k++], path, sizeof path);
}

/* OZ_KIND_* of `path` (a symbolic link itself), -1 when nothing is there. */
static int kind_of(const char *path)
{
    oz_stat st;
    return oz_sys_stat_at(OZ_AT_CWD, path, 0, &st) ? -1 : st.kind;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n);
    if (f) fclose(f);
}

/* Entries of `dir` but "." and "..". */
static int entries(const char *dir)
{
    return tu_count_files(dir, "") - 2;
}

typedef int (*out_fn)(const char *out, void *ctx);

/* The inputs every case reads. */
typedef struct inputs {
    const char *model;   /* classic, tensors "a" and "b" inline */
    const char *archive; /* the model packed */
    const char *garbage; /* neither a model nor a zip */
    int layout;          /* unpack's */
    const char *location;
} inputs;

static int do_pack(const char *out, void *ctx)
{
    onnxzip_pack_options o;
    onnxzip_pack_options_init(&o);
    o.size_threshold = 0;
    return onnxzip_pack(((inputs *)ctx)->model, out, &o);
}

static int do_pack_garbage(const char *out, void *ctx)
{
    return onnxzip_pack(((inputs *)ctx)->garbage, out, NULL);
}

static int do_unpack(const char *out, void *ctx)
{
    const inputs *in = ctx;
    onnxzip_unpack_options o;
    onnxzip_unpack_options_init(&o);
    o.layout = (onnxzip_unpack_layout)in->layout;
    o.size_threshold = 0;
    o.location = in->location;
    return onnxzip_unpack(in->archive, out, &o);
}

static int do_unpack_garbage(const char *out, void *ctx)
{
    return onnxzip_unpack(((inputs *)ctx)->garbage, out, NULL);
}

static int do_repack(const char *out, void *ctx)
{
    return onnxzip_repack(((inputs *)ctx)->archive, out, NULL);
}

static int do_repack_garbage(const char *out, void *ctx)
{
    return onnxzip_repack(((inputs *)ctx)->garbage, out, NULL);
}

static int extract_named(const char *out, void *ctx, const char *tensor)
{
    onnxzip_archive *a = NULL;
    int rc = onnxzip_open(((inputs *)ctx)->archive, 0, &a);
    if (!rc) rc = onnxzip_extract_tensor(a, tensor, out);
    onnxzip_close(&a);
    return rc;
}

static int do_extract(const char *out, void *ctx)
{
    return extract_named(out, ctx, "a");
}

static int do_extract_missing(const char *out, void *ctx)
{
    return extract_named(out, ctx, "no such tensor");
}

/* The writer: an entry "w" and a model referencing it; `finish` 0: abort
 * (then ABORTED), 2: finish without a model (ONNXZIP_ENOMODEL). */
#define ABORTED 1
static int write_archive(const char *out, int finish)
{
    static const uint8_t w16[16] = { 1, 2, 3 };
    tu_tensor t = { "w", 2, { 16 }, 1, "w", 0 };
    size_t len;
    uint8_t *m = tu_model(&t, 1, &len);
    onnxzip_writer *w = NULL;
    int rc = onnxzip_writer_create(out, NULL, &w);
    if (!rc) rc = onnxzip_writer_add_memory(w, "w", w16, sizeof w16);
    if (!rc && finish == 1) rc = onnxzip_writer_set_model(w, m, len);
    free(m);
    if (rc || !finish) {
        onnxzip_writer_abort(&w);
        return rc ? rc : ABORTED;
    }
    return onnxzip_writer_finish(&w);
}

static int do_writer(const char *out, void *ctx)
{
    (void)ctx;
    return write_archive(out, 1);
}

static int do_writer_abort(const char *out, void *ctx)
{
    (void)ctx;
    return write_archive(out, 0);
}

static int do_writer_no_model(const char *out, void *ctx)
{
    (void)ctx;
    return write_archive(out, 2);
}

/* ROOT/a/b/c/NAME: success, a, b and c made, the output a regular file. */
static void creates(const char *root, const char *name, out_fn fn, void *ctx)
{
    CHECK(tu_mkdir(root) == 0);
    const char *out = P(root, name);
    CHECK_RC(fn(out, ctx), ONNXZIP_OK);
    CHECK(kind_of(P(root, "a")) == OZ_KIND_DIR && kind_of(P(root, "a/b")) == OZ_KIND_DIR &&
          kind_of(P(root, "a/b/c")) == OZ_KIND_DIR);
    CHECK(kind_of(out) == OZ_KIND_REG);
    CHECK(tu_count_files(P(root, "a/b/c"), ".tmp-") == 0 && tu_count_files(P(root, "a/b/c"), ".unpack-") == 0);
}

/* ROOT/new/../file/d/NAME: ONNXZIP_EIO naming ROOT/file; ROOT/new, created
 * on the way, removed again: ROOT holds only the file. */
static void refuses_file_parent(const char *root, out_fn fn, void *ctx)
{
    CHECK(tu_mkdir(root) == 0);
    const char *file = P(root, "file");
    write_file(file, "x", 1);
    CHECK_RC(fn(P(root, "new/../file/d/out.bin"), ctx), ONNXZIP_EIO);
    const char *msg = onnxzip_last_error()->message;
    CHECK(strstr(msg, "file exists and is not a directory") != NULL);
    CHECK(strstr(msg, root) != NULL);
    CHECK(onnxzip_last_error()->sys_errno == ENOTDIR);
    CHECK(onnxzip_last_error()->path && !strcmp(onnxzip_last_error()->path, P(root, "new/../file")));
    CHECK(kind_of(P(root, "new")) == -1);
    CHECK(entries(root) == 1 && kind_of(file) == OZ_KIND_REG);
}

/* A failure (status `want`) leaves ROOT as empty as it was. */
static void fails_clean(const char *root, const char *name, out_fn fn, void *ctx, int want)
{
    CHECK(tu_mkdir(root) == 0);
    CHECK_RC(fn(P(root, name), ctx), want);
    CHECK(entries(root) == 0);
}

/* Existing directories are kept, even empty, when a call that created
 * others below them fails; a symbolic link among the parents is followed. */
static void keeps_existing(const char *root, inputs *in)
{
    CHECK(tu_mkdir(root) == 0);
    const char *a = P(root, "a"), *b = P(root, "a/b");
    CHECK(tu_mkdir(a) == 0 && tu_mkdir(b) == 0);
    CHECK_RC(do_writer_abort(P(root, "a/b/new/deeper/x.onnxzip"), NULL), ABORTED);
    CHECK(kind_of(b) == OZ_KIND_DIR && entries(b) == 0 && entries(a) == 1);
    CHECK_RC(do_unpack(P(root, "a/b/m.onnx"), in), ONNXZIP_OK); /* nothing to create */
    CHECK(entries(b) == 2 && entries(a) == 1);
#ifndef _WIN32
    CHECK(symlink("a/b", P(root, "link")) == 0);
    CHECK_RC(do_pack(P(root, "link/x/y/out.onnxzip"), in), ONNXZIP_OK);
    CHECK(kind_of(P(root, "link")) == OZ_KIND_LINK && kind_of(P(root, "a/b/x/y/out.onnxzip")) == OZ_KIND_REG);
    CHECK_RC(do_writer_abort(P(root, "link/z/x.onnxzip"), NULL), ABORTED);
    CHECK(kind_of(P(root, "link")) == OZ_KIND_LINK && kind_of(P(root, "a/b/z")) == -1 && entries(b) == 3);
#endif
}

#ifndef _WIN32
/* New directories: 0777 & ~umask, as mkdir -p makes them. */
static void mode_follows_umask(const char *root, inputs *in)
{
    CHECK(tu_mkdir(root) == 0);
    mode_t old = umask(027);
    CHECK_RC(do_pack(P(root, "a/b/out.onnxzip"), in), ONNXZIP_OK);
    umask(old);
    struct stat st;
    CHECK(stat(P(root, "a"), &st) == 0 && (st.st_mode & 07777) == 0750);
    CHECK(stat(P(root, "a/b"), &st) == 0 && (st.st_mode & 07777) == 0750);
}
#endif

/* A view lies beside its archive: a missing directory is ONNXZIP_EPATH and
 * is not created; beside the archive it is written. */
static void view_no_dirs(const char *root, const inputs *in)
{
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(in->archive, 0, &a), ONNXZIP_OK);
    const char *dir = P(root, "view");
    CHECK(tu_mkdir(dir) == 0);
    CHECK_RC(onnxzip_view_write(a, P(dir, "new/m.view.onnx"), NULL), ONNXZIP_EPATH);
    CHECK(strstr(onnxzip_last_error()->message, "a view must be in its archive's directory") != NULL);
    CHECK(entries(dir) == 0);
    onnxzip_close(&a);
}

static void inputs_make(const char *dir, inputs *in)
{
    tu_tensor t[2] = { { "a", 2, { 3000 }, 1, NULL, 3000 }, { "b", 2, { 5000 }, 1, NULL, 5000 } };
    size_t len;
    uint8_t *m = tu_model(t, 2, &len);
    in->model = P(dir, "m.onnx");
    write_file(in->model, m, len);
    free(m);
    in->archive = P(dir, "m.onnxzip");
    CHECK_RC(do_pack(in->archive, in), ONNXZIP_OK);
    in->garbage = P(dir, "garbage");
    write_file(in->garbage, "neither a model nor a zip", 25);
}

static void unpack_cases(const char *dir, inputs *in)
{
    static const char *const names[] = { "single", "per_tensor", "inline" };
    for (int layout = ONNXZIP_UNPACK_SINGLE; layout <= ONNXZIP_UNPACK_INLINE; layout++) {
        char root[64];
        in->layout = layout;
        snprintf(root, sizeof root, "unpack_%s", names[layout]);
        creates(P(dir, root), "a/b/c/model.onnx", do_unpack, in);
        snprintf(root, sizeof root, "unpack_%s_file", names[layout]);
        refuses_file_parent(P(dir, root), do_unpack, in);
    }
    in->layout = ONNXZIP_UNPACK_SINGLE;
    fails_clean(P(dir, "unpack_garbage"), "a/b/c/model.onnx", do_unpack_garbage, in, ONNXZIP_ENOTZIP);
    /* refused after the directories were made: the data file named as the model */
    in->location = "model.onnx";
    fails_clean(P(dir, "unpack_late"), "a/b/c/model.onnx", do_unpack, in, ONNXZIP_EINVAL);
    in->location = NULL;
}

int main(void)
{
    char *dir = tu_tmpdir();
    inputs in = { 0 };
    inputs_make(dir, &in);

    creates(P(dir, "pack"), "a/b/c/out.onnxzip", do_pack, &in);
    refuses_file_parent(P(dir, "pack_file"), do_pack, &in);
    fails_clean(P(dir, "pack_garbage"), "a/b/c/out.onnxzip", do_pack_garbage, &in, ONNXZIP_EPROTO);

    unpack_cases(dir, &in);

    creates(P(dir, "writer"), "a/b/c/out.onnxzip", do_writer, &in);
    refuses_file_parent(P(dir, "writer_file"), do_writer, &in);
    fails_clean(P(dir, "writer_abort"), "a/b/c/out.onnxzip", do_writer_abort, &in, ABORTED);
    fails_clean(P(dir, "writer_no_model"), "a/b/c/out.onnxzip", do_writer_no_model, &in, ONNXZIP_ENOMODEL);

    if (onnxzip_has_feature(ONNXZIP_FEATURE_REPACK)) {
        creates(P(dir, "repack"), "a/b/c/out.onnxzip", do_repack, &in);
        refuses_file_parent(P(dir, "repack_file"), do_repack, &in);
        fails_clean(P(dir, "repack_garbage"), "a/b/c/out.onnxzip", do_repack_garbage, &in, ONNXZIP_ENOTZIP);
    } else {
        fails_clean(P(dir, "repack_none"), "a/b/c/out.onnxzip", do_repack, &in, ONNXZIP_EUNSUPPORTED);
    }

    creates(P(dir, "extract"), "a/b/c/t.bin", do_extract, &in);
    refuses_file_parent(P(dir, "extract_file"), do_extract, &in);
    fails_clean(P(dir, "extract_missing"), "a/b/c/t.bin", do_extract_missing, &in, ONNXZIP_ENOTFOUND);

    keeps_existing(P(dir, "existing"), &in);
#ifndef _WIN32
    mode_follows_umask(P(dir, "mode"), &in);
#endif
    view_no_dirs(dir, &in);

    tu_rmtree(dir);
    free(dir);
    return tu_finish("output_dirs");
}
