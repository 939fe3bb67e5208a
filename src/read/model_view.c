/* oz_archive_view_model(): another model of a handle's package, read
 * through the handle (archive.h). */
#include <stdlib.h>

#include "read/archive.h"
#include "read/source_read.h"

int oz_archive_view_model(onnxzip_archive *a, const onnxzip_member *m, onnxzip_archive *view)
{
    *view = *a;
    view->model_copy = NULL;
    view->parsed = NULL;
    view->want_model = NULL;
    view->mapped = view->ext_open = 0;
    view->fd = -1;
    memset(&view->tensors, 0, sizeof view->tensors);
    int rc = oz_own_member(a, m, "oz_archive_view_model");
    if (!rc) rc = oz_package_select(&a->pkg, &view->zip, m->path, a->path);
    if (rc) return rc;
    const oz_zentry *e = &a->zip.entries[m->entry];
    view->model_len = (size_t)e->pub.size;
    if (!(view->model_copy = malloc(view->model_len ? view->model_len : 1)))
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory for model '%s'", a->path, m->path);
    view->model = view->model_copy;
    if (a->src.map) {
        memcpy(view->model_copy, a->src.map + e->pub.data_offset, view->model_len);
        return oz_tensors_build_archive(&view->tensors, &view->zip, a->src.map, view->model, view->model_len,
                                        e->pub.data_offset, a->path);
    }
    rc = oz_entry_read(view, m->entry, 0, view->model_len, view->model_copy); /* checked when remote */
    return rc ? rc : oz_tensors_build_remote(&view->tensors, &view->zip, view->model, view->model_len,
                                             e->pub.data_offset, a->path);
}

void oz_archive_view_free(onnxzip_archive *view)
{
    oz_tensors_free(&view->tensors);
    free(view->model_copy);
    view->model_copy = NULL;
}
