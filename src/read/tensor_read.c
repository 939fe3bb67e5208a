/* Payload copies for tensors without a view: onnxzip_tensor_size() and
 * onnxzip_tensor_read() (typed fields converted to ONNX's raw form) and onnxzip_tensor_strings()
 * (string_data). Views stay the zero-copy way for the other storages. */
#include <stdlib.h>
#include <string.h>

#include "read/archive.h"
#include "read/source_read.h"
#include "onnx/typed.h"

/* The index of `t` in `a`'s tensor index, or -1 when `t` is not one of its. */
static ptrdiff_t index_of(const onnxzip_archive *a, const onnxzip_tensor *t)
{
    const onnxzip_tensor *v = a->tensors.v;
    if (!v || t < v || t >= v + a->tensors.n) return -1;
    return t - v;
}

/* The walker's view of a TYPED tensor, rebuilt from the index. */
static int typed_info(const onnxzip_archive *a, const onnxzip_tensor *t, oz_tensor_info *info)
{
    ptrdiff_t i = index_of(a, t);
    if (i < 0) return oz_err(ONNXZIP_EINVAL, -1, "tensor_read: the tensor is not one of this archive's");
    memset(info, 0, sizeof *info);
    info->pieces = a->tensors.src[i].pieces;
    info->npieces = a->tensors.src[i].npieces;
    info->name = (oz_span){ (const uint8_t *)t->name, strlen(t->name) };
    info->data_type = t->data_type;
    info->ndims = t->ndims;
    memcpy(info->dims, t->dims, t->ndims * sizeof *t->dims);
    return 0;
}

static const char *path_of(const onnxzip_archive *a)
{
    return a->path ? a->path : "(buffer)";
}

int onnxzip_tensor_size(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t *size)
{
    if (size) *size = 0;
    if (!a || !t || !size) return oz_err(ONNXZIP_EINVAL, -1, "tensor_size: NULL argument");
    if (t->storage != ONNXZIP_STORAGE_TYPED) {
        if (index_of(a, t) < 0) return oz_err(ONNXZIP_EINVAL, -1, "tensor_size: the tensor is not one of this archive's");
        *size = t->nbytes;
        return 0;
    }
    oz_tensor_info info;
    int rc = typed_info(a, t, &info);
    return rc ? rc : oz_typed_size(&info, path_of(a), size);
}

int onnxzip_tensor_read(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len, void *dst)
{
    uint64_t size;
    int rc = onnxzip_tensor_size(a, t, &size);
    if (rc) return rc;
    if (!dst && len) return oz_err(ONNXZIP_EINVAL, -1, "tensor_read: NULL destination");
    if (offset > size || len > size - offset)
        return oz_err(ONNXZIP_ERANGE, -1, "%s: tensor '%s': bytes %llu..%llu asked of a %llu-byte payload", path_of(a),
                      t->name, (unsigned long long)offset, (unsigned long long)(offset + len), (unsigned long long)size);
    if (t->storage == ONNXZIP_STORAGE_ENTRY && oz_archive_unmapped(a)) return oz_tensor_read_unmapped(a, t, offset, len, dst);
    if (t->storage != ONNXZIP_STORAGE_TYPED) {
        if (len) memcpy(dst, (const uint8_t *)t->data + offset, (size_t)len);
        return 0;
    }
    oz_tensor_info info;
    if ((rc = typed_info(a, t, &info))) return rc;
    if (offset == 0 && len == size) return oz_typed_convert(&info, path_of(a), dst);
    uint8_t *all = malloc(size ? (size_t)size : 1); /* a range: convert everything, copy the part */
    if (!all) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (tensor '%s', %llu bytes)", t->name, (unsigned long long)size);
    rc = oz_typed_convert(&info, path_of(a), all);
    if (!rc && len) memcpy(dst, all + offset, (size_t)len);
    free(all);
    return rc;
}

int onnxzip_tensor_strings(onnxzip_archive *a, const onnxzip_tensor *t, const void **data, size_t *lens,
                           size_t cap, size_t *count)
{
    if (count) *count = 0;
    if (!a || !t || !count || (cap && (!data || !lens)))
        return oz_err(ONNXZIP_EINVAL, -1, "tensor_strings: NULL argument");
    if (t->data_type != 8 || t->storage != ONNXZIP_STORAGE_TYPED)
        return oz_err(ONNXZIP_EDTYPE, -1, "tensor_strings: tensor '%s' is %s, not a STRING tensor in string_data",
                      t->name, onnxzip_dtype_name(t->data_type));
    oz_tensor_info info;
    int rc = typed_info(a, t, &info);
    if (rc) return rc;
    pb_stream st;
    pb_stream_init(&st, info.pieces, info.npieces);
    pb_field f;
    int k;
    size_t n = 0;
    while ((k = pb_stream_next(&st, &f)) == 0) { /* validated at open: string_data is LEN */
        if (f.num != 6 || f.wt != PB_LEN) continue;
        if (n < cap) data[n] = f.data, lens[n] = f.len;
        n++;
    }
    *count = n;
    if (k < 0) return oz_err(ONNXZIP_EPROTO, -1, "tensor_strings: tensor '%s': malformed string_data", t->name);
    if (data && n > cap)
        return oz_err(ONNXZIP_ELIMIT, -1, "tensor_strings: tensor '%s' has %zu strings, the arrays hold %zu",
                      t->name, n, cap);
    return 0;
}

int onnxzip_member_read(onnxzip_archive *a, const onnxzip_member *m, uint64_t offset, uint64_t len, void *buf)
{
    int rc = oz_own_member(a, m, "onnxzip_member_read");
    if (rc) return rc;
    if (!buf && len) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_member_read: NULL buffer");
    if (offset > m->size || len > m->size - offset)
        return oz_err(ONNXZIP_ERANGE, -1, "%s: '%s': bytes %llu..%llu asked of a %llu-byte %s", a->path, m->path,
                      (unsigned long long)offset, (unsigned long long)(offset + len), (unsigned long long)m->size,
                      m->kind == ONNXZIP_MEMBER_MODEL ? "model" : "file");
    if (!len) return 0;
    if (oz_archive_unmapped(a)) return oz_entry_read(a, m->entry, offset, len, buf);
    memcpy(buf, a->base + a->zip.entries[m->entry].pub.data_offset + offset, (size_t)len);
    return 0;
}
