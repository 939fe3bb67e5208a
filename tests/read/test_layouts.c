/* One open for every layout: a corpus model opened as a classic single-file
 * .onnx, as its archive, and (for the external-data corpus) as a classic
 * external-data model gives the same tensors — names, types, shapes, bytes —
 * and every payload pointer lies inside a mapped file: nothing was copied.
 *
 * usage: test_layouts CORPUS_DIR   (reads CORPUS_DIR/models/NAME.onnx and
 *                                   CORPUS_DIR/extdata/DIR/NAME.onnx) */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "read/archive.h"
#include "testutil.h"

/* Is p inside a mapping the handle owns: the file, or a side file? */
static int in_mapping(const onnxzip_archive *a, const onnxzip_tensor *t)
{
    const uint8_t *p = t->data, *base = a->base;
    if (p >= base && p + t->nbytes <= base + a->size) return 1;
    for (size_t i = 0; a->ext_open && i < a->ext.n; i++) {
        const oz_extfile *f = &a->ext.files[i];
        if (f->map && p >= f->map && p + t->nbytes <= f->map + f->size) return 1;
    }
    return 0;
}

static void same_tensors(const char *what, onnxzip_archive *x, onnxzip_archive *y)
{
    size_t n = onnxzip_tensor_count(x), diff = 0, copied = 0;
    CHECK(n == onnxzip_tensor_count(y));
    for (size_t i = 0; i < n && i < onnxzip_tensor_count(y); i++) {
        const onnxzip_tensor *a = onnxzip_tensor_at(x, i), *b = onnxzip_tensor_at(y, i);
        int same = !strcmp(a->name, b->name) && a->data_type == b->data_type && a->ndims == b->ndims &&
                   !memcmp(a->dims, b->dims, a->ndims * sizeof *a->dims) && a->nbytes == b->nbytes &&
                   (a->storage == ONNXZIP_STORAGE_TYPED) == (b->storage == ONNXZIP_STORAGE_TYPED) &&
                   (!a->data || !b->data || !memcmp(a->data, b->data, a->nbytes));
        diff += !same;
        if (!same) fprintf(stderr, "  %s: tensor %zu '%s' differs\n", what, i, a->name);
        for (int k = 0; k < 2; k++) {
            onnxzip_archive *h = k ? y : x;
            const onnxzip_tensor *t = k ? b : a;
            /* Archive models are copied at open (spec 15.5): their inline
             * tensors live in that copy; every other payload is mapped. */
            int owned_copy = onnxzip_archive_layout(h) == ONNXZIP_LAYOUT_ARCHIVE && t->storage == ONNXZIP_STORAGE_INLINE;
            if (t->data && !owned_copy && !in_mapping(h, t)) copied++;
        }
    }
    if (diff || copied) fprintf(stderr, "  %s: %zu differ, %zu not in a mapping\n", what, diff, copied);
    CHECK(diff == 0);
    CHECK(copied == 0);
}

static void model_case(const char *dir, const char *tmp, const char *name, int *models)
{
    char path[8192], arc[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(arc, sizeof arc, "%s/%s.onnxzip", tmp, name);
    onnxzip_pack_options o;
    onnxzip_pack_options_init(&o);
    o.size_threshold = 0;
    o.flags = ONNXZIP_PACK_KEEP_TYPED;
    onnxzip_archive *c = NULL, *z = NULL;
    CHECK_RC(onnxzip_open(path, 0, &c), 0);
    CHECK(c && onnxzip_archive_layout(c) == ONNXZIP_LAYOUT_CLASSIC && onnxzip_entry_count(c) == 0);
    CHECK_RC(onnxzip_pack(path, arc, &o), 0);
    CHECK_RC(onnxzip_open(arc, 0, &z), 0);
    if (c && z) same_tensors(name, c, z);
    CHECK_RC(onnxzip_verify(c), 0);
    onnxzip_close(&c);
    onnxzip_close(&z);
    (*models)++;
}

/* CORPUS/extdata/<d>/<m>.onnx against CORPUS/models/<m>.onnx. */
static void extdata_case(const char *corpus, const char *d, int *models)
{
    char dir[4096], path[8192], orig[8192];
    snprintf(dir, sizeof dir, "%s/extdata/%s", corpus, d);
    DIR *dd = opendir(dir);
    for (struct dirent *e; dd && (e = readdir(dd));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".onnx")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(orig, sizeof orig, "%s/models/%s", corpus, e->d_name);
        onnxzip_archive *x = NULL, *c = NULL;
        CHECK_RC(onnxzip_open(path, 0, &x), 0);
        CHECK(x && onnxzip_archive_layout(x) == ONNXZIP_LAYOUT_EXTERNAL);
        size_t files = 0;
        for (size_t i = 0; x && i < onnxzip_tensor_count(x); i++)
            files += onnxzip_tensor_at(x, i)->storage == ONNXZIP_STORAGE_FILE;
        CHECK(files > 0);
        CHECK_RC(onnxzip_open(orig, 0, &c), 0);
        if (x && c) same_tensors(path, x, c);
        CHECK_RC(onnxzip_verify(x), 0);
        onnxzip_close(&x);
        onnxzip_close(&c);
        (*models)++;
    }
    if (dd) closedir(dd);
}

int main(int argc, char **argv)
{
    const char *corpus = argc > 1 ? argv[1] : "";
    char models_dir[4096], ext_dir[4096];
    snprintf(models_dir, sizeof models_dir, "%s/models", corpus);
    snprintf(ext_dir, sizeof ext_dir, "%s/extdata", corpus);
    DIR *md = opendir(models_dir), *ed = opendir(ext_dir);
    if (!md || !ed) {
        printf("corpus absent: %s\n", corpus);
        if (md) closedir(md);
        if (ed) closedir(ed);
        return 77;
    }
    char *tmp = tu_tmpdir();
    int models = 0, ext = 0;
    for (struct dirent *e; (e = readdir(md));) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".onnx")) model_case(models_dir, tmp, e->d_name, &models);
    }
    for (struct dirent *e; (e = readdir(ed));)
        if (e->d_name[0] != '.') extdata_case(corpus, e->d_name, &ext);
    closedir(md);
    closedir(ed);
    printf("layouts: %d classic models vs their archives, %d external-data models vs their originals\n", models, ext);
    CHECK(models > 0 && ext > 0);
    tu_rmtree(tmp);
    free(tmp);
    return tu_finish("layouts");
}
