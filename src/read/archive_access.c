/* A handle's accessors and its release: no system calls but unmapping and
 * closing what it holds, so that the WebAssembly build (common/sys_wasm.c,
 * which maps and opens nothing) shares them. */
#include <stdlib.h>

#include "common/sys.h"
#include "onnx/model_fields.h"
#include "read/archive.h"
#if ONNXZIP_HAVE_PROTOBUF_C
#include "onnx.pb-c.h"
#endif

void oz_archive_free(onnxzip_archive *a)
{
    if (!a) return;
#if ONNXZIP_HAVE_PROTOBUF_C
    if (a->parsed) onnx__model_proto__free_unpacked(a->parsed, NULL);
#endif
    oz_tensors_free(&a->tensors);
    oz_zip_free(&a->zip);
    free(a->model_copy);
    oz_source_free(&a->src);
    free((void *)a->checked);
    free((void *)a->pin_state);
    free(a->pin_sha);
    oz_package_free(&a->pkg);
    free(a->want_model);
    free(a->path);
    free(a);
}

int oz_verify_model_fields(const onnxzip_archive *a)
{
    int archive = a->layout == ONNXZIP_LAYOUT_ARCHIVE;
    return oz_check_model_fields(a->model, a->model_len, a->path, archive,
                                 archive ? (int64_t)a->zip.entries[a->zip.model_index].pub.data_offset : 0);
}

void onnxzip_close(onnxzip_archive **ap)
{
    if (!ap || !*ap) return;
    onnxzip_archive *a = *ap;
    if (a->ext_open) oz_extdata_free(&a->ext);
    if (a->mapped) oz_sys_unmap(a->base, a->size);
    if (a->fd >= 0) oz_sys_close(a->fd);
    oz_archive_free(a);
    *ap = NULL;
}

size_t onnxzip_tensor_count(const onnxzip_archive *a)
{
    return a ? a->tensors.n : 0;
}

const onnxzip_tensor *onnxzip_tensor_at(const onnxzip_archive *a, size_t i)
{
    return a && i < a->tensors.n ? &a->tensors.v[i] : NULL;
}

const onnxzip_tensor *onnxzip_find_tensor(const onnxzip_archive *a, const char *name)
{
    uint32_t i;
    if (!a || !name || oz_strmap_get(&a->tensors.by_name, name, strlen(name), &i)) return NULL;
    return &a->tensors.v[i];
}

size_t onnxzip_entry_count(const onnxzip_archive *a)
{
    return a ? a->zip.n : 0;
}

const onnxzip_entry *onnxzip_entry_at(const onnxzip_archive *a, size_t i)
{
    return a && i < a->zip.n ? &a->zip.entries[i].pub : NULL;
}

int onnxzip_model_bytes(const onnxzip_archive *a, const void **data, size_t *size)
{
    if (!a || !data || !size) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_model_bytes: NULL argument");
    *data = a->model;
    *size = a->model_len;
    return 0;
}

int onnxzip_model_proto(onnxzip_archive *a, const struct Onnx__ModelProto **model)
{
    if (model) *model = NULL;
    if (!a || !model) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_model_proto: NULL argument");
#if !ONNXZIP_HAVE_PROTOBUF_C
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "onnxzip_model_proto: this build of onnxzip has no protobuf-c "
                  "(-Dprotobuf_c=disabled); parse onnxzip_model_bytes() with your protobuf library");
#else
    if (!a->parsed) {
        a->parsed = onnx__model_proto__unpack(NULL, a->model_len, a->model);
        if (!a->parsed)
            return oz_err(ONNXZIP_EPROTO, -1, "%s: protobuf-c cannot parse __MODEL_PROTO (%zu bytes)", a->path,
                          a->model_len);
    }
    *model = a->parsed;
    return 0;
#endif
}

onnxzip_layout onnxzip_archive_layout(const onnxzip_archive *a)
{
    return a ? a->layout : ONNXZIP_LAYOUT_ARCHIVE;
}

const char *onnxzip_archive_path(const onnxzip_archive *a)
{
    return a ? a->path : NULL;
}

int oz_archive_want_model(onnxzip_archive *a, const char *model)
{
    if (model && !(a->want_model = strdup(model))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    return 0;
}

size_t onnxzip_member_count(const onnxzip_archive *a)
{
    return a ? a->pkg.n : 0;
}

const onnxzip_member *onnxzip_member_at(const onnxzip_archive *a, size_t i)
{
    return a && i < a->pkg.n ? &a->pkg.members[i] : NULL;
}

const onnxzip_member *onnxzip_find_member(const onnxzip_archive *a, const char *path)
{
    return a && a->pkg.n ? oz_package_find(&a->pkg, path) : NULL;
}

const char *onnxzip_model_path(const onnxzip_archive *a)
{
    return a && a->zip.package && a->zip.entries[a->zip.model_index].cls == OZ_NAME_PKG_MODEL
               ? a->zip.entries[a->zip.model_index].pub.name : NULL;
}

int oz_own_member(const onnxzip_archive *a, const onnxzip_member *m, const char *fn)
{
    if (!a || !m || m < a->pkg.members || m >= a->pkg.members + a->pkg.n)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: NULL argument, or a member of another handle", fn);
    return 0;
}

int onnxzip_member_bytes(const onnxzip_archive *a, const onnxzip_member *m, const void **data, uint64_t *size)
{
    int rc = oz_own_member(a, m, "onnxzip_member_bytes");
    if (rc) return rc;
    if (!data || !size) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_member_bytes: NULL argument");
    if (oz_archive_unmapped(a))
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: '%s': the handle maps nothing (a URL or a host's reads): read "
                      "it with onnxzip_member_read()", a->path, m->path);
    *data = a->base + a->zip.entries[m->entry].pub.data_offset;
    *size = m->size;
    return 0;
}
