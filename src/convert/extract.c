/* onnxzip_extract_tensor() and onnxzip_extract_member(): one tensor's payload,
 * or one file (or model) of a package, streamed, to a file, atomically. */
#include <stdlib.h>

#include "read/archive.h"
#include "common/atomic_file.h"
#include "common/internal.h"
#include "common/outputs.h"
#include "read/member_copy.h"

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

/* `n` bytes at `data` (or, when `member` is not NULL, that member,
 * streamed) to out_path, atomically, after checking it is none of the
 * inputs. */
static int write_out(onnxzip_archive *a, const void *data, size_t n, const onnxzip_member *member,
                     const char *out_path)
{
    int rc = check_output(a, out_path);
    if (rc) return rc;
    oz_atomic_file af;
    if ((rc = oz_atomic_open(out_path, &af))) return rc;
    rc = member ? oz_member_copy(a, member, af.fd, out_path) : oz_atomic_write(&af, data, n);
    if (!rc) rc = check_output(a, out_path); /* once more before the rename */
    if (rc) {
        oz_atomic_abort(&af);
        return rc;
    }
    return oz_atomic_commit(&af);
}

int onnxzip_extract_member(onnxzip_archive *a, const char *member_path, const char *out_path)
{
    if (!a || !member_path || !out_path || !*out_path)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_extract_member: NULL or empty argument");
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(member_path, strlen(member_path), shown, sizeof shown);
    const onnxzip_member *m = onnxzip_find_member(a, member_path);
    if (!m)
        return oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no file or model '%s'%s", a->path, shown,
                      onnxzip_member_count(a) ? "" : " (a single-model archive: it holds no files)");
    return write_out(a, NULL, 0, m, out_path);
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
    if (t->data || !t->nbytes) return write_out(a, t->data, (size_t)t->nbytes, NULL, out_path);
    uint8_t *fetched = malloc((size_t)t->nbytes); /* a remote tensor: into memory first */
    if (!fetched) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory for tensor '%s'", path, shown);
    int rc = onnxzip_tensor_read(a, t, 0, t->nbytes, fetched);
    if (!rc) rc = write_out(a, fetched, (size_t)t->nbytes, NULL, out_path);
    free(fetched);
    return rc;
}
