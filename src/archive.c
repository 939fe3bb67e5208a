/* onnxzip_open*(): map, validate, index. Reads headers and the model only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "onnx.pb-c.h"

static int open_mapped(const uint8_t *base, uint64_t size, int mapped, const char *path, unsigned flags,
                       onnxzip_archive **out)
{
    onnxzip_archive *a = calloc(1, sizeof *a);
    char *p = strdup(path);
    if (!a || !p) {
        free(a);
        free(p);
        if (mapped) munmap((void *)base, size);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    *a = (onnxzip_archive){ .base = base, .size = size, .mapped = mapped, .path = p };
    /* Headers are scattered: no readahead of the weights around them. */
    if (mapped) madvise((void *)base, size, MADV_RANDOM);
    int rc = oz_zip_parse(&a->zip, base, size, p);
    if (!rc) {
        const oz_zentry *m = &a->zip.entries[a->zip.model_index];
        a->model = base + m->pub.data_offset;
        a->model_len = (size_t)m->pub.size;
        rc = oz_tensors_build(&a->tensors, &a->zip, base, a->model, a->model_len, m->pub.data_offset, p);
    }
    if (mapped) madvise((void *)base, size, MADV_NORMAL);
    if (!rc && (flags & ONNXZIP_OPEN_VERIFY)) rc = onnxzip_verify(a);
    if (rc) {
        onnxzip_close(&a);
        return rc;
    }
    *out = a;
    return 0;
}

static int map_fd(int fd, const char *path, unsigned flags, onnxzip_archive **out)
{
    struct stat st;
    if (fstat(fd, &st))
        return oz_err(ONNXZIP_EIO, -1, "%s: cannot stat: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: not a regular file", path);
    if (st.st_size < 22)
        return oz_err(ONNXZIP_ENOTZIP, -1, "%s: not a zip archive (%lld bytes)", path, (long long)st.st_size);
    if ((uint64_t)st.st_size > SIZE_MAX)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: too large to map on this platform", path);
    void *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED)
        return oz_err(ONNXZIP_EIO, -1, "%s: cannot map %lld bytes: %s", path, (long long)st.st_size,
                      strerror(errno));
    return open_mapped(base, (uint64_t)st.st_size, 1, path, flags, out);
}

int onnxzip_open(const char *path, unsigned flags, onnxzip_archive **out)
{
    if (out) *out = NULL;
    if (!path || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open: NULL argument");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return oz_err(ONNXZIP_EIO, -1, "%s: cannot open: %s", path, strerror(errno));
    int rc = map_fd(fd, path, flags, out);
    close(fd); /* the mapping keeps the file */
    return rc;
}

int onnxzip_open_fd(int fd, unsigned flags, onnxzip_archive **out)
{
    if (out) *out = NULL;
    if (fd < 0 || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open_fd: bad argument");
    char name[32];
    snprintf(name, sizeof name, "<fd %d>", fd);
    return map_fd(fd, name, flags, out);
}

int onnxzip_open_buffer(const void *data, size_t size, unsigned flags, onnxzip_archive **out)
{
    if (out) *out = NULL;
    if (!data || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open_buffer: NULL argument");
    return open_mapped(data, size, 0, "<buffer>", flags, out);
}

void onnxzip_close(onnxzip_archive **ap)
{
    if (!ap || !*ap) return;
    onnxzip_archive *a = *ap;
    if (a->parsed) onnx__model_proto__free_unpacked(a->parsed, NULL);
    oz_tensors_free(&a->tensors);
    oz_zip_free(&a->zip);
    if (a->mapped) munmap((void *)a->base, (size_t)a->size);
    free(a->path);
    free(a);
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
    if (!a->parsed) {
        a->parsed = onnx__model_proto__unpack(NULL, a->model_len, a->model);
        if (!a->parsed)
            return oz_err(ONNXZIP_EPROTO, -1, "%s: protobuf-c cannot parse __MODEL_PROTO (%zu bytes)", a->path,
                          a->model_len);
    }
    *model = a->parsed;
    return 0;
}

const char *onnxzip_archive_path(const onnxzip_archive *a)
{
    return a ? a->path : NULL;
}
