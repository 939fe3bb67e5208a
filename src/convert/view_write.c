/* onnxzip_view_write(): the view written beside its archive, under the
 * outputs rules (spec 12.3) and the path rules of views (spec 16). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "common/outputs.h"
#include "convert/view.h"

/* The view's directory is the archive's real one, so it exists: no
 * directory is created for a view (a missing one cannot be the archive's).
 * The message names that directory and the view's name in it. */
static int check_view_path(const char *view_path, const char *real, const oz_stat *archive_dir)
{
    oz_stat dir;
    int missing = oz_stat_dir_of(view_path, &dir) != 0;
    if (missing && errno != ENOENT && errno != ENOTDIR)
        return oz_err_sys(ONNXZIP_EIO, -1, view_path, "%s: its directory: %s", view_path, strerror(errno));
    if (!missing && oz_same_stat(&dir, archive_dir)) return 0;
    const char *base = oz_last_sep(view_path) ? oz_last_sep(view_path) + 1 : view_path;
    int dir_len = (int)(oz_last_sep(real) - real) + 1;
    return oz_err(ONNXZIP_EPATH, -1, "%s: a view must be in its archive's directory, that of its file %s: ONNX loaders "
                  "resolve external data locations relative to the view's directory and refuse '..', absolute "
                  "paths and a location whose resolved path leaves that directory, through a symbolic link too "
                  "(ONNX Runtime >= 1.24): write it as %.*s%s", view_path, real, dir_len, real, base);
}

static int write_view(const char *view_path, const oz_input *in, const void *data, size_t n)
{
    oz_atomic_file af;
    int rc = oz_atomic_open(view_path, &af);
    if (!rc) rc = oz_atomic_write(&af, data, n);
    if (!rc) rc = oz_output_check(OZ_AT_CWD, NULL, view_path, in, 1); /* once more before the rename */
    if (!rc) return oz_atomic_commit(&af);
    oz_atomic_abort(&af);
    return rc;
}

int onnxzip_view_write(const onnxzip_archive *a, const char *view_path, const onnxzip_view_options *opts)
{
    if (!a || !view_path) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_write: NULL argument");
    if (oz_archive_unmapped(a))
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: a view needs the archive as a local file: fetch it first "
                      "(onnxzip_fetch)", a->path);
    if (opts && opts->location)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_write: a view written beside its archive names it by its "
                      "file name: opts->location must be NULL");
    onnxzip_view_options o;
    onnxzip_view_options_init(&o);
    if (opts) o.size_threshold = opts->size_threshold;
    if (a->layout != ONNXZIP_LAYOUT_ARCHIVE)
        return oz_err(ONNXZIP_EINVAL, -1, "%s is a classic model, not an archive: it is its own view", a->path);
    char *real = NULL;
    oz_stat dir, st;
    int rc = oz_view_real_archive(a, &real, &dir);
    if (!rc) rc = check_view_path(view_path, real, &dir);
    oz_input in = { .role = "the archive", .path = real };
    if (!rc && oz_sys_stat(real, &st)) rc = oz_err_sys(ONNXZIP_EIO, -1, real, "%s: %s", real, strerror(errno));
    if (!rc) {
        in.dev = st.dev;
        in.ino = st.ino;
        rc = oz_output_check(OZ_AT_CWD, NULL, view_path, &in, 1);
    }
    void *data = NULL;
    size_t n = 0;
    o.location = real ? oz_last_sep(real) + 1 : NULL;
    if (!rc) rc = onnxzip_view_model(a, &o, &data, &n);
    if (!rc) rc = write_view(view_path, &in, data, n);
    onnxzip_free(data);
    free(real);
    return rc;
}
