/* A package rewritten whole (spec 19): for repack (another alignment) and
 * for replacing one model's graph (onnxzip_update_package_model()). Every
 * entry is copied from the mapped package, checked against its digests on
 * the way; the manifest's default, data files and origins are kept. */
#include <stdio.h>

#include "common/outputs.h"
#include "read/archive.h"
#include "read/stream_check.h"
#include "write/package_writer.h"
#include "write/zip_writer.h"
#include "convert/package_copy.h"

/* Entry i's bytes, checked against its CRC-32 and digest: a copy never
 * carries damage on under fresh sums. */
static int checked_bytes(const onnxzip_archive *a, size_t i, const uint8_t **p)
{
    const oz_zentry *e = &a->zip.entries[i];
    *p = a->base + e->pub.data_offset;
    return oz_entry_check_data(e, a->path, *p);
}

/* What a copy changes: one model's bytes, one plain file's (added or replaced). */
typedef struct package_edit {
    const char *model;
    const void *bytes;
    size_t size;
    const char *file;
    const void *file_bytes;
    size_t file_size;
} package_edit;

static int copy_entries(const onnxzip_archive *a, onnxzip_writer *w, const package_edit *ed)
{
    int rc = 0;
    for (size_t i = 0; i < a->zip.n && !rc; i++) { /* files, then tensors: as pack orders them */
        const oz_zentry *e = &a->zip.entries[i];
        const uint8_t *p;
        if (e->cls != OZ_NAME_PKG_FILE || (ed->file && !strcmp(e->pub.name, ed->file)) ||
            (rc = checked_bytes(a, i, &p)))
            continue;
        rc = onnxzip_writer_add_file(w, e->pub.name, a->fd, e->pub.data_offset, e->pub.size);
    }
    if (!rc && ed->file) rc = onnxzip_writer_add_file_memory(w, ed->file, ed->file_bytes, ed->file_size);
    for (size_t i = 0; i < a->zip.n && !rc; i++) {
        const oz_zentry *e = &a->zip.entries[i];
        const uint8_t *p;
        if (e->cls != OZ_NAME_TENSOR || (rc = checked_bytes(a, i, &p))) continue;
        rc = onnxzip_writer_add_file_range(w, e->pub.name, a->fd, e->pub.data_offset, e->pub.size);
    }
    return rc;
}

static int copy_models(const onnxzip_archive *a, onnxzip_writer *w, const package_edit *ed)
{
    const char *model = ed->model;
    int rc = 0, replaced = 0;
    for (size_t i = 0; i < a->pkg.n && !rc; i++) {
        const onnxzip_member *m = &a->pkg.members[i];
        const oz_pkg_model *r = &a->pkg.models[i];
        const uint8_t *p;
        if (m->kind != ONNXZIP_MEMBER_MODEL) continue;
        if (model && !strcmp(model, m->path)) {
            rc = onnxzip_writer_add_model(w, m->path, ed->bytes, ed->size);
            replaced = 1;
        } else if (!(rc = checked_bytes(a, m->entry, &p))) {
            rc = onnxzip_writer_add_model(w, m->path, p, (size_t)m->size);
        }
        if (!rc && r->n_data)
            rc = oz_pkg_writer_origin(oz_writer_package(w), m->path, (const char *const *)r->data, r->n_data,
                                      r->origin);
        if (!rc && m->is_default) rc = onnxzip_writer_set_default_model(w, m->path);
    }
    if (!rc && model && !replaced)
        rc = oz_err(ONNXZIP_ENOTFOUND, -1, "%s: the package has no model '%s'", a->path, model);
    return rc;
}

/* A package rewritten in place keeps its alignment: the smallest of its
 * entries' (64 at least, the format's), so that a package packed with
 * --align 4096 stays page-aligned after sign or set-model. */
static uint32_t package_alignment(const onnxzip_archive *a)
{
    uint32_t align = 65536;
    for (size_t i = 0; i < onnxzip_entry_count(a); i++) {
        const onnxzip_entry *e = onnxzip_entry_at(a, i);
        uint32_t ea = oz_alignment_of(e->data_offset);
        if (e->size && ea < align) align = ea;
    }
    return align < 64 ? 64 : align;
}

static int package_copy(const char *in_path, const char *out_path, const onnxzip_write_options *opts,
                        const package_edit *ed)
{
    int in_place = ed->model || ed->file;
    onnxzip_archive *a = NULL;
    int rc = onnxzip_open(in_path, 0, &a);
    if (rc) return rc;
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    if (opts) o = *opts;
    else o.alignment = package_alignment(a);
    o.flags |= ONNXZIP_WRITE_PACKAGE;
    oz_input in = { .dev = a->st_dev, .ino = a->st_ino, .role = "the input archive", .path = in_path };
    onnxzip_writer *w = NULL;
    /* In place (a model replaced): the new file is renamed over the old one,
     * whose mapping this copy keeps reading. */
    if (!(rc = in_place ? 0 : oz_output_check(OZ_AT_CWD, NULL, out_path, &in, 1)) &&
        !(rc = onnxzip_writer_create(out_path, &o, &w))) {
        rc = copy_entries(a, w, ed);
        if (!rc) rc = copy_models(a, w, ed);
        /* Every byte is in the new file (models copied into the writer):
         * the old one is let go before the rename, which Windows refuses
         * over a file still mapped. */
        onnxzip_close(&a);
        rc = rc ? (onnxzip_writer_abort(&w), rc) : onnxzip_writer_finish(&w);
    }
    onnxzip_close(&a);
    return rc;
}

int oz_package_copy(const char *in_path, const char *out_path, const onnxzip_write_options *opts, const char *model,
                    const void *bytes, size_t size)
{
    package_edit ed = { .model = model, .bytes = bytes, .size = size };
    return package_copy(in_path, out_path, opts, &ed);
}

int oz_package_set_file(const char *path, const char *file, const void *bytes, size_t size)
{
    package_edit ed = { .file = file, .file_bytes = bytes, .file_size = size };
    return package_copy(path, path, NULL, &ed);
}

int oz_is_package(const char *path)
{
    onnxzip_archive *a = NULL;
    int pkg = onnxzip_open(path, 0, &a) == 0 && onnxzip_member_count(a) > 0;
    onnxzip_close(&a);
    return pkg;
}

int onnxzip_update_package_model(const char *archive_path, const char *model_path, const void *model, size_t size)
{
    if (!archive_path || !model_path || (!model && size))
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_update_package_model: NULL argument");
    if (!oz_is_package(archive_path))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: not a package (a single-model archive is updated with "
                      "onnxzip_update_model())", archive_path);
    return oz_package_copy(archive_path, archive_path, NULL, model_path, model, size);
}
