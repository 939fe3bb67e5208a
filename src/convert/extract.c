/* onnxzip_extract_tensor(): one tensor's payload to a file, atomically. */
#include <stdlib.h>

#include "read/archive.h"
#include "common/atomic_file.h"
#include "common/internal.h"
#include "common/outputs.h"

/* Every file the handle reads — the archive or classic model, and its
 * external data files — against the output (outputs.h). */
static int check_output(const onnxzip_archive *a, const char *out_path)
{
    size_t n = (a->ext_open ? a->ext.n : 0) + 1, k = 0;
    oz_input *in = malloc(n * sizeof *in);
    if (!in) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (a->fd >= 0) /* a file, not the caller's buffer */
        in[k++] = (oz_input){ .dev = a->st_dev, .ino = a->st_ino, .path = a->path,
                              .role = a->layout == ONNXZIP_LAYOUT_ARCHIVE ? "the archive" : "the input model" };
    for (size_t i = 0; a->ext_open && i < a->ext.n; i++) {
        const oz_extfile *f = &a->ext.files[i];
        int rc = oz_input_fd(&in[k++], f->fd, "the external data file", a->ext.dir, f->location, f->tensor);
        if (rc) {
            free(in);
            return rc;
        }
    }
    int rc = oz_output_check(OZ_AT_CWD, NULL, out_path, in, k);
    free(in);
    return rc;
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
    if (t->nbytes > SIZE_MAX) return oz_err(ONNXZIP_ELIMIT, -1, "%s: tensor '%s' is too large", path, shown);
    int rc = check_output(a, out_path);
    if (rc) return rc;
    /* A remote tensor is fetched into memory first (not in place). */
    uint8_t *fetched = t->data || !t->nbytes ? NULL : malloc((size_t)t->nbytes);
    if (!t->data && t->nbytes && !fetched)
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory for tensor '%s'", path, shown);
    if (fetched && (rc = onnxzip_tensor_read(a, t, 0, t->nbytes, fetched))) {
        free(fetched);
        return rc;
    }
    oz_atomic_file af;
    if ((rc = oz_atomic_open(out_path, &af))) {
        free(fetched);
        return rc;
    }
    /* The data is mapped: write() reads it page by page, no copy of our own. */
    rc = oz_atomic_write(&af, fetched ? fetched : t->data, (size_t)t->nbytes);
    free(fetched);
    if (!rc) rc = check_output(a, out_path); /* once more before the rename */
    if (rc) {
        oz_atomic_abort(&af);
        return rc;
    }
    return oz_atomic_commit(&af);
}
