/* onnxzip_view_model(): the view of an archive file (spec 16), its model
 * rewritten by view_build.c, and the rules of its location (the name of the
 * archive's real file, or the caller's plain file name). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "convert/view.h"
#include "convert/view_build.h"
#include "read/view_record.h"

/* The directory holding `path`, stat()ed. */
int oz_stat_dir_of(const char *path, oz_stat *st)
{
    const char *slash = oz_last_sep(path);
    char *dir = slash ? oz_strndup(path, (size_t)(slash - path) + 1) : strdup("."); /* "/", "C:\\" as they are */
    if (!dir) return -1;
    int rc = oz_sys_stat(dir, st);
    free(dir);
    return rc;
}

/* Every symbolic link on the way is resolved (chains, links into other
 * directories: a Hugging Face cache's snapshots/REV/model.onnxzip ->
 * ../../blobs/SHA256): the view names the real file, so it depends on no
 * link, and lies in the real file's directory, where ONNX loaders' check of
 * the resolved external data path holds (spec 16.4). */
int oz_view_real_archive(const onnxzip_archive *a, char **real, oz_stat *dir)
{
    *real = NULL;
    if (!a->by_path)
        return oz_err(ONNXZIP_EINVAL, -1, "%s was opened from a buffer or a file descriptor, so its file name is "
                      "unknown: pass a location (the archive's file name)", a->path);
    if (!(*real = oz_sys_realpath(a->path)) || oz_stat_dir_of(*real, dir)) {
        int rc = oz_err_sys(ONNXZIP_EIO, -1, a->path, "%s: %s", a->path, strerror(errno));
        free(*real);
        *real = NULL;
        return rc;
    }
    return 0;
}

/* The archive's file name: the caller's, or the base name of the real file
 * the archive was opened by (*owned, to free, when so). */
static int pick_location(const onnxzip_archive *a, const char *given, const char **out, char **owned)
{
    *owned = NULL;
    if (given) {
        *out = given;
        return oz_view_plain_location(given) ? 0 : oz_view_bad_location(given);
    }
    oz_stat dir;
    int rc = oz_view_real_archive(a, owned, &dir);
    if (rc) return rc;
    *out = oz_last_sep(*owned) + 1;
    return oz_view_plain_location(*out) ? 0 : oz_view_bad_location(*out);
}

/* The bytes of tensors copied inline, from the mapped file. */
static const uint8_t *mapped_bytes(void *ctx, uint64_t off, uint64_t len)
{
    (void)len;
    return ((const onnxzip_archive *)ctx)->base + off;
}

int onnxzip_view_model(const onnxzip_archive *a, const onnxzip_view_options *opts, void **data, size_t *size)
{
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!a || !data || !size) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_model: NULL argument");
    if (oz_archive_unmapped(a)) /* a view points into a local file */
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: a view needs the archive as a local file: fetch it first "
                      "(onnxzip_fetch)", a->path);
    onnxzip_view_options defaults;
    onnxzip_view_options_init(&defaults);
    if (!opts) opts = &defaults;
    const char *location = opts->location;
    if (location && !oz_view_plain_location(location)) return oz_view_bad_location(location);
    int rc = oz_verify_model_fields(a); /* no view that verify refuses */
    if (rc) return rc;
    oz_buf out = { 0 };
    if (a->layout != ONNXZIP_LAYOUT_ARCHIVE) { /* already a view of itself */
        rc = oz_buf_append(&out, a->model, a->model_len);
    } else {
        const char *loc = NULL;
        char *owned = NULL;
        rc = pick_location(a, location, &loc, &owned);
        if (!rc) rc = oz_view_build(a, loc, opts->size_threshold, mapped_bytes, (void *)a, &out);
        free(owned);
    }
    if (!rc && !out.p) rc = oz_buf_reserve(&out, 1); /* an empty model still gets a buffer */
    if (rc) {
        oz_buf_free(&out);
        return rc;
    }
    *data = out.p;
    *size = out.len;
    return 0;
}
