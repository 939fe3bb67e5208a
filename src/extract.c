/* onnxzip_extract_tensor(): one tensor's payload to a file, atomically. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "internal.h"

/* 1 when `out` exists and is the same file as `other` (when that exists). */
static int same_file(const char *out, const char *other)
{
    struct stat a, b;
    return other && !stat(out, &a) && !stat(other, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* For a tensor in a classic side file: that file's path (the location is
 * relative to the model's directory), malloc'd; NULL when unknown. */
static char *side_file(const char *model_path, const char *location)
{
    const char *slash = strrchr(model_path, '/');
    int dirlen = slash ? (int)(slash - model_path) + 1 : 0;
    size_t cap = (size_t)dirlen + strlen(location) + 1;
    char *p = malloc(cap);
    if (p) snprintf(p, cap, "%.*s%s", dirlen, model_path, location);
    return p;
}

int onnxzip_extract_tensor(onnxzip_archive *a, const char *tensor_name, const char *out_path)
{
    if (!a || !tensor_name || !out_path || !*out_path)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_extract_tensor: NULL or empty argument");
    const char *path = onnxzip_archive_path(a);
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(tensor_name, strlen(tensor_name), shown, sizeof shown);
    const onnxzip_tensor *t = onnxzip_find_tensor(a, tensor_name);
    if (!t) return oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no tensor named '%s'", path, shown);
    if (t->storage == ONNXZIP_STORAGE_TYPED)
        return oz_err(ONNXZIP_EUNSUPPORTED, -1,
                      "%s: tensor '%s' is held in typed fields; nothing to extract as raw bytes", path, shown);
    if (same_file(out_path, path))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the output names the archive %s; refusing to overwrite it", out_path,
                      path);
    if (t->storage == ONNXZIP_STORAGE_FILE && t->entry) {
        char *side = side_file(path, t->entry);
        if (!side) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        int same = same_file(out_path, side);
        free(side);
        if (same)
            return oz_err(ONNXZIP_EINVAL, -1, "%s: the output names the data file '%s' of tensor '%s'; refusing to "
                          "overwrite it", out_path, t->entry, shown);
    }
    if (t->nbytes > SIZE_MAX) return oz_err(ONNXZIP_ELIMIT, -1, "%s: tensor '%s' is too large", path, shown);
    oz_atomic_file af;
    int rc = oz_atomic_open(out_path, &af);
    if (rc) return rc;
    /* The data is mapped: write() reads it page by page, no copy of our own. */
    if ((rc = oz_atomic_write(&af, t->data, (size_t)t->nbytes))) {
        oz_atomic_abort(&af);
        return rc;
    }
    return oz_atomic_commit(&af);
}
