/* External data through symbolic links (issue 20; spec 11.3): what ONNX
 * Runtime >= 1.24 accepts (onnxruntime PR #27374) and nothing more. The
 * Hugging Face cache's layout, models--org--name/blobs/<sha256> with
 * snapshots/<rev>/model.onnx and model.onnx_data as relative links into
 * blobs/, opens and packs; the model reached through a chain of links or
 * from a subfolder of the snapshot too. Refused with ONNXZIP_EPATH, the
 * message naming the directories allowed: a regular model file whose data
 * link leads into blobs/, a data link leading outside both directories, a
 * chain of links ending outside; a link to a directory, a FIFO (no hang) or
 * a file with two hard links in blobs/ is no regular file. A refused pack
 * leaves no output. POSIX only (links stay refused on Windows). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#define NBYTES 8192

static uint8_t payload[NBYTES];

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(p, 1, n, f) == n);
    if (f) fclose(f);
}

/* A classic model whose UINT8 tensor 'w' of NBYTES lives in `location`. */
static void write_model(const char *path, const char *location)
{
    tu_tensor t = { .name = "w", .dtype = 2, .dims = { NBYTES }, .ndims = 1, .entry = location };
    size_t len;
    uint8_t *m = tu_model(&t, 1, &len);
    spit(path, m, len);
    free(m);
}

/* a/b, malloc'd. */
static char *join(const char *a, const char *b)
{
    char *p = malloc(strlen(a) + strlen(b) + 2);
    sprintf(p, "%s/%s", a, b);
    return p;
}

static void mkdirs(const char *root, const char *rel)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s/%s", root, rel);
    for (char *s = buf + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        tu_mkdir(buf);
        *s = '/';
    }
    tu_mkdir(buf);
}

/* root/rel -> target (relative links, as huggingface_hub makes them). */
static void link_at(const char *root, const char *rel, const char *target)
{
    char *p = join(root, rel);
    CHECK(symlink(target, p) == 0);
    free(p);
}

/* The HF cache of one model under root/hub: blobs named as sha256 digests
 * (fixed names: the layout is what matters), refs/main, the snapshot's links. */
#define BLOB_M "9c1185a5c5e9fc54612808977ee8f548b2258d31d6f2bf7e7c5ec3d6d9e6ec4d"
#define BLOB_D "b2d3c2e5f8a6c7d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0"
static char *hf_cache(const char *root)
{
    char *repo = join(root, "hub/models--org--name");
    mkdirs(root, "hub/models--org--name/blobs");
    mkdirs(root, "hub/models--org--name/refs");
    mkdirs(root, "hub/models--org--name/snapshots/0123abcd/onnx");
    char *p = join(repo, "refs/main");
    spit(p, "0123abcd", 8);
    free(p);
    p = join(repo, "blobs/" BLOB_M);
    write_model(p, "model.onnx_data");
    free(p);
    p = join(repo, "blobs/" BLOB_D);
    spit(p, payload, NBYTES);
    free(p);
    link_at(repo, "snapshots/0123abcd/model.onnx", "../../blobs/" BLOB_M);
    link_at(repo, "snapshots/0123abcd/model.onnx_data", "../../blobs/" BLOB_D);
    link_at(repo, "snapshots/0123abcd/onnx/model.onnx", "../../../blobs/" BLOB_M);
    link_at(repo, "snapshots/0123abcd/onnx/model.onnx_data", "../../../blobs/" BLOB_D);
    link_at(repo, "snapshots/0123abcd/alias.onnx", "model.onnx"); /* a chain: alias -> link -> blob */
    return repo;
}

/* The tensor 'w' of `path` (a classic model or an archive) is the payload. */
static void opens_equal(const char *path)
{
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    const onnxzip_tensor *w = a ? onnxzip_find_tensor(a, "w") : NULL;
    CHECK(w && w->nbytes == NBYTES && w->data && !memcmp(w->data, payload, NBYTES));
    onnxzip_close(&a);
}

static void packs_equal(const char *model, const char *dir)
{
    char *out = join(dir, "packed.onnxzip");
    CHECK_RC(onnxzip_pack(model, out, NULL), 0);
    opens_equal(out);
    unlink(out);
    free(out);
}

static void accepted(const char *repo, const char *dir)
{
    static const char *const models[] = { "snapshots/0123abcd/model.onnx", "snapshots/0123abcd/alias.onnx",
                                          "snapshots/0123abcd/onnx/model.onnx" };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        char *m = join(repo, models[i]);
        opens_equal(m);
        packs_equal(m, dir);
        free(m);
    }
    /* A regular model file with a link to a file in its own directory:
     * ONNX Runtime resolves it, finds it inside, and reads it. */
    char *sib = join(dir, "sibling");
    tu_mkdir(sib);
    char *m = join(sib, "m.onnx"), *real = join(sib, "real.bin");
    write_model(m, "w.link");
    spit(real, payload, NBYTES);
    link_at(sib, "w.link", "real.bin");
    opens_equal(m);
    free(m);
    free(real);
    free(sib);
}

static const char *msg(void)
{
    return onnxzip_last_error()->message;
}

/* onnxzip_open() and onnxzip_pack() of `model` refuse with EPATH naming
 * `needle` (and `needle2`, if any); pack leaves nothing in `dir`. */
static void refused(const char *model, const char *dir, const char *needle, const char *needle2)
{
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(model, 0, &a), ONNXZIP_EPATH);
    CHECK(a == NULL && strstr(msg(), "tensor 'w'") && strstr(msg(), needle));
    if (needle2) CHECK(strstr(msg(), needle2) != NULL);
    if (!strstr(msg(), needle) || (needle2 && !strstr(msg(), needle2))) printf("  message: %s\n", msg());
    char *out = join(dir, "refused.onnxzip");
    CHECK_RC(onnxzip_pack(model, out, NULL), ONNXZIP_EPATH);
    CHECK(access(out, F_OK) != 0 && tu_count_files(dir, ".tmp") == 0);
    free(out);
}

/* reg/model.onnx_data, the data link beside the models in reg/, -> target. */
static void data_link(const char *reg, const char *target)
{
    unlink(tu_path(reg, "model.onnx_data"));
    CHECK(symlink(target, tu_path(reg, "model.onnx_data")) == 0);
}

static void refusals(const char *root, const char *repo)
{
    char blobs[PATH_MAX], reg[PATH_MAX], lnk[PATH_MAX], snap_model[PATH_MAX];
    CHECK(realpath(tu_path(repo, "blobs"), blobs) != NULL);
    snprintf(reg, sizeof reg, "%s", tu_path(root, "regular"));
    snprintf(lnk, sizeof lnk, "%s", tu_path(reg, "l.onnx"));
    snprintf(snap_model, sizeof snap_model, "%s", tu_path(repo, "snapshots/0123abcd/model.onnx"));
    tu_mkdir(reg);

    /* A regular model file (the snapshot's, copied) beside a data link into
     * blobs/: ONNX Runtime refuses it ("External data path escapes model
     * directory"). */
    char m[PATH_MAX];
    snprintf(m, sizeof m, "%s", tu_path(reg, "model.onnx"));
    write_model(m, "model.onnx_data");
    data_link(reg, "../hub/models--org--name/blobs/" BLOB_D);
    refused(m, reg, "symbolic link", "the model file is no symbolic link");
    refused(m, reg, "ONNX Runtime refuses it too", blobs);

    /* The model a link into blobs/ (beside it), its data a link outside
     * both directories. */
    tu_mkdir(tu_path(root, "other"));
    spit(tu_path(root, "other/secret.bin"), payload, NBYTES);
    CHECK(symlink("../hub/models--org--name/blobs/" BLOB_M, lnk) == 0);
    data_link(reg, "../other/secret.bin");
    refused(lnk, reg, "outside the allowed directories", blobs);
    refused(lnk, reg, "where the model's symbolic link leads", "ONNX Runtime refuses it too");

    /* A chain that passes through blobs/ and ends outside. */
    CHECK(symlink("../../../other/secret.bin", tu_path(repo, "blobs/hop")) == 0);
    data_link(reg, "../hub/models--org--name/blobs/hop");
    refused(lnk, reg, "symbolic link", "other/secret.bin");

    /* Links to what is no regular file, inside blobs/. */
    tu_mkdir(tu_path(repo, "blobs/subdir"));
    CHECK(mkfifo(tu_path(repo, "blobs/fifo"), 0600) == 0);
    data_link(reg, "../hub/models--org--name/blobs/subdir");
    refused(lnk, reg, "not a regular file", NULL);
    data_link(reg, "../hub/models--org--name/blobs/fifo");
    refused(lnk, reg, "not a regular file", NULL);

    /* A blob with a second hard link (huggingface_hub never makes one). */
    CHECK(link(tu_path(repo, "blobs/" BLOB_D), tu_path(repo, "blobs/hard")) == 0);
    refused(snap_model, reg, "more than one hard link", NULL);
    unlink(tu_path(repo, "blobs/hard"));
    opens_equal(snap_model); /* one link again: accepted */
}

int main(void)
{
    for (size_t i = 0; i < NBYTES; i++) payload[i] = (uint8_t)(i * 131 + 7);
    char *root = tu_tmpdir();
    char *repo = hf_cache(root);
    accepted(repo, root);
    refusals(root, repo);
    free(repo);
    tu_rmtree(root);
    free(root);
    return tu_finish("extdata_links");
}
