/* oz_pack_check_signed() (pack_signed.h). A signature over a folder
 * (OpenSSF Model Signing) holds the SHA-256 of each of its files; a package
 * verifies against it only if unpack gives those files back byte for byte.
 * Plain files are stored as they are, but a model file is rewritten by
 * unpack (its tensors' references) and its data files are rebuilt from the
 * manifest's places: an ONNX file whose bytes the rewrite does not
 * reproduce (external data keys in another order, a data file outside the
 * model's directory, bytes between tensors that are not zeros) would make a
 * package whose signature can never verify. So pack compares, before the
 * package takes its name, each planned file with the folder's own, byte
 * for byte (no hash needed: the bytes are both at hand), and refuses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/copy_range.h"
#include "common/sys.h"
#include "convert/file_plan.h"
#include "convert/pack_signed.h"

static int differs(const char *root, const char *path, const char *why)
{
    return oz_err(ONNXZIP_EMISMATCH, -1, "%s: the folder is signed (model.sig), but '%s' would not unpack from the "
                  "package as it is in the folder (%s): its signature could never verify; sign the folder as "
                  "onnxzip unpack writes it (pack, unpack, sign the unpacked folder), or pack it without model.sig",
                  root, path, why);
}

/* The planned bytes of f against the `size` bytes at `have`. */
static int compare(onnxzip_archive *a, const char *root, const onnxzip_planned_file *f, const uint8_t *have,
                   uint64_t size)
{
    char why[96];
    if (size != f->size) {
        snprintf(why, sizeof why, "unpack writes %llu bytes, the folder's file has %llu", (unsigned long long)f->size,
                 (unsigned long long)size);
        return differs(root, f->path, why);
    }
    uint64_t at = 0;
    for (size_t i = 0; i < f->n_segments; at += f->segments[i++].length) {
        const onnxzip_segment *g = &f->segments[i];
        const uint8_t *want = g->kind == ONNXZIP_SEGMENT_BYTES ? g->bytes : a->base + g->offset;
        int same = g->kind == ONNXZIP_SEGMENT_ZEROS ? oz_all_zero(have + at, (size_t)g->length)
                                                    : !memcmp(want, have + at, (size_t)g->length);
        if (!same) {
            snprintf(why, sizeof why, "they differ in bytes %llu..%llu", (unsigned long long)at,
                     (unsigned long long)(at + g->length));
            return differs(root, f->path, why);
        }
    }
    return 0;
}

static int compare_file(onnxzip_archive *a, const char *root, const onnxzip_planned_file *f)
{
    size_t n = strlen(root) + strlen(f->path) + 2;
    char *path = malloc(n);
    if (!path) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    snprintf(path, n, "%s/%s", root, f->path);
    int fd = oz_sys_open_read(path);
    oz_stat st;
    int rc = fd < 0 ? differs(root, f->path, "unpack writes it, the folder has no such file") : 0;
    if (!rc && oz_sys_fstat(fd, &st)) rc = oz_err_sys(ONNXZIP_EIO, -1, path, "%s: %s", path, strerror(errno));
    const uint8_t *map = NULL;
    if (!rc && st.size && !(map = oz_sys_map(fd, 0, st.size)))
        rc = oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot map: %s", path, strerror(errno));
    if (!rc) rc = compare(a, root, f, map, st.size);
    if (map) oz_sys_unmap(map, st.size);
    if (fd >= 0) oz_sys_close(fd);
    free(path);
    return rc;
}

int oz_pack_check_signed(const char *root, const char *pkg, const char *const *rels, size_t n)
{
    onnxzip_archive *a = NULL;
    onnxzip_file_plan *p = NULL;
    int rc = onnxzip_open(pkg, 0, &a);
    if (!rc) rc = onnxzip_file_plan_create(a, NULL, &p);
    for (size_t i = 0; i < onnxzip_file_plan_count(p) && !rc; i++) {
        const onnxzip_planned_file *f = onnxzip_file_plan_at(p, i);
        if (f->model) rc = compare_file(a, root, f); /* plain files are stored byte for byte */
    }
    for (size_t i = 0; i < n && !rc; i++) { /* each model and data file of the folder comes back */
        size_t k = 0;
        while (k < onnxzip_file_plan_count(p) && strcmp(onnxzip_file_plan_at(p, k)->path, rels[i])) k++;
        if (k == onnxzip_file_plan_count(p))
            rc = oz_err(ONNXZIP_EMISMATCH, -1, "%s: the folder is signed (model.sig), but unpack would not write its "
                        "file '%s' (a data file its model names outside its directory is unpacked under another "
                        "name): its signature could never verify", root, rels[i]);
    }
    onnxzip_file_plan_free(&p);
    onnxzip_close(&a);
    return rc;
}
