/* onnxzip_open*(): map, validate, index. Reads headers and the model only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/sys.h"
#include "common/zip_format.h"
#include "common/update_lock.h"
#include "read/archive.h"
#include "common/source_file.h"
#include "onnx/pbwire.h"

int oz_looks_like_zip(const uint8_t *b, uint64_t size)
{
    if (oz_zip_starts_with(b, size, ZIP_LOCAL_SIG) || oz_zip_starts_with(b, size, ZIP_EOCD_SIG)) return 1;
    uint64_t first = size > 0xFFFF + 22 ? size - 0xFFFF - 22 : 0;
    for (uint64_t p = size >= 22 ? size - 22 + 1 : 0; p-- > first;)
        if (oz_rd32(b + p) == ZIP_EOCD_SIG && p + ZIP_EOCD_SIZE + oz_rd16(b + p + 20) == size) return 1;
    return 0;
}

static int open_archive(onnxzip_archive *a)
{
    uint64_t need;
    int rc = oz_open_zip(a, &need);
    return rc == 1 ? oz_err(ONNXZIP_ECDIR, -1, "%s: internal error: a mapping asked for more bytes", a->path) : rc;
}

/* Every ONNX file begins with a protobuf field (in practice ir_version). */
static int looks_like_model(const uint8_t *b, uint64_t size)
{
    /* Any well-formed first field: ONNX parsers skip unknown fields, so a
     * model may begin with one; text and other formats fail right here. */
    pb_reader r = { b, b + size };
    pb_field f;
    return pb_next(&r, &f) == 0;
}

/* A classic .onnx: the whole file is the model; side files, if any, are
 * found relative to its directory (only known when opened by path). */
static int open_classic(onnxzip_archive *a, int by_path)
{
    if (!looks_like_model(a->base, a->size))
        return oz_err(ONNXZIP_ENOTZIP, -1, "%s: neither a zip archive nor an ONNX model (its first bytes are no "
                      "protobuf field)", a->path);
    if (a->size > OZ_MAX_MODEL)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: %llu bytes: too large for a protobuf model (2 GiB - 1)", a->path,
                      (unsigned long long)a->size);
    a->model = a->base;
    a->model_len = (size_t)a->size;
    if (by_path) {
        const char *slash = oz_last_sep(a->path);
        char *dir = slash ? oz_strndup(a->path, (size_t)(slash - a->path) + 1) : strdup(".");
        int rc = dir ? oz_extdata_init(&a->ext, dir, a->path) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        free(dir);
        if (rc) return rc;
        a->ext_open = 1;
    }
    int rc = oz_tensors_build_classic(&a->tensors, a->ext_open ? &a->ext : NULL, a->model, a->model_len, a->path);
    a->layout = a->tensors.n_external ? ONNXZIP_LAYOUT_EXTERNAL : ONNXZIP_LAYOUT_CLASSIC;
    return rc;
}

#define OPEN_FLAGS (unsigned)(ONNXZIP_OPEN_VERIFY | ONNXZIP_OPEN_SEQUENTIAL | ONNXZIP_OPEN_WILLNEED | \
                             ONNXZIP_OPEN_POPULATE | ONNXZIP_OPEN_HUGEPAGE)

/* The caller's access hints (ONNXZIP_OPEN_*), else normal readahead. */
static void advise(const uint8_t *base, uint64_t size, unsigned flags)
{
    void *p = (void *)base;
    oz_sys_advise_map(p, size, (flags & ONNXZIP_OPEN_SEQUENTIAL) ? OZ_ADV_SEQUENTIAL : OZ_ADV_NORMAL);
    if (flags & ONNXZIP_OPEN_HUGEPAGE) oz_sys_advise_map(p, size, OZ_ADV_HUGEPAGE);
    if (flags & ONNXZIP_OPEN_WILLNEED) oz_sys_advise_map(p, size, OZ_ADV_WILLNEED);
    if (flags & ONNXZIP_OPEN_POPULATE) oz_sys_advise_map(p, size, OZ_ADV_POPULATE);
}

/* `fd`: the mapped file (`st` its stat), or -1 for a caller's buffer.
 * `by_path`: the file was opened by a path whose directory holds any
 * external data files. */
static int open_mapped(const uint8_t *base, uint64_t size, int fd, const oz_stat *st, int by_path,
                       const char *path, unsigned flags, const char *model, onnxzip_archive **out)
{
    int mapped = fd >= 0;
    onnxzip_archive *a = calloc(1, sizeof *a);
    char *p = strdup(path);
    if (!a || !p) {
        free(a);
        free(p);
        if (mapped) oz_sys_unmap(base, size);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    *a = (onnxzip_archive){ .base = base, .size = size, .mapped = mapped, .fd = -1, .path = p, .by_path = by_path };
    /* Headers are scattered: no readahead of the weights around them. */
    if (mapped) oz_sys_advise_map((void *)base, size, OZ_ADV_RANDOM);
    int rc = oz_source_mapped(&a->src, base, size, fd, st, by_path, p);
    if (!rc) rc = oz_archive_want_model(a, model);
    if (!rc)
        rc = size == 0 ? oz_err(ONNXZIP_ENOTZIP, -1, "%s: empty file, not a model", p)
           : oz_looks_like_zip(base, size) ? open_archive(a)
           : model && *model ? oz_err(ONNXZIP_EINVAL, -1, "%s: model '%s' asked for, but this is a classic ONNX "
                                      "model, not a package", p, model)
           : open_classic(a, by_path);
    if (mapped) advise(base, size, rc ? 0 : flags);
    if (!rc && (flags & ONNXZIP_OPEN_VERIFY)) rc = oz_verify_data(a);
    if (rc) {
        onnxzip_close(&a);
        return rc;
    }
    *out = a;
    return 0;
}

/* The file is mapped at a 2 MiB-aligned address: data aligned in the file
 * up to the largest alignment a writer may choose (64 KiB) is aligned in
 * memory too, and the page cache's large folios can be mapped whole (as the
 * kernel aligns large file mappings itself). */
#define MAP_ALIGN ((size_t)2 << 20)

static int map_locked(int fd, int by_path, const char *path, unsigned flags, const char *model,
                      onnxzip_archive **out);

/* Opens under the shared update lock: an in-place model update cannot flip or
 * truncate the file while it is being validated (spec 15.5). */
static int map_fd(int fd, int by_path, const char *path, unsigned flags, const char *model, onnxzip_archive **out)
{
    if (flags & ~OPEN_FLAGS) return oz_err(ONNXZIP_EINVAL, -1, "%s: unknown open flags 0x%x", path, flags);
    oz_update_lock(fd, OZ_LOCK_SHARED);
    int rc = map_locked(fd, by_path, path, flags & ~(unsigned)ONNXZIP_OPEN_VERIFY, model, out);
    oz_update_lock(fd, OZ_LOCK_UNLOCK);
    /* Verification reads only weights (which never move) and the model copy:
     * outside the lock, so that an O(archive) read does not hold up an update. */
    if (!rc && (flags & ONNXZIP_OPEN_VERIFY) && (rc = oz_verify_data(*out))) onnxzip_close(out);
    return rc;
}

static int map_locked(int fd, int by_path, const char *path, unsigned flags, const char *model,
                      onnxzip_archive **out)
{
    oz_stat st;
    if (oz_sys_fstat(fd, &st))
        return oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot stat: %s", path, strerror(errno));
    if (st.kind != OZ_KIND_REG) return oz_err_not_regular(path, st.kind);
    if (st.size == 0) return oz_err(ONNXZIP_ENOTZIP, -1, "%s: empty file, not a model", path);
    int keep = oz_sys_dup(fd); /* for onnxzip_check() */
    if (keep < 0) return oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot duplicate its descriptor: %s", path, strerror(errno));
    void *base = oz_sys_map_aligned(fd, st.size, MAP_ALIGN);
    if (!base) {
        int rc = oz_err_map(path, st.size);
        oz_sys_close(keep);
        return rc;
    }
    /* No readahead around each local header read (one per tensor). */
    oz_sys_advise_file(keep, 0, 0, OZ_ADV_RANDOM);
    int rc = open_mapped(base, st.size, keep, &st, by_path, path, flags, model, out);
    oz_sys_advise_file(keep, 0, 0, OZ_ADV_NORMAL);
    if (rc) {
        oz_sys_close(keep);
        return rc;
    }
    onnxzip_archive *a = *out;
    a->fd = keep;
    a->st_dev = st.dev;
    a->st_ino = st.ino;
    return 0;
}

int onnxzip_open_model(const char *path, const char *model, unsigned flags, onnxzip_archive **out)
{
    if (out) *out = NULL;
    if (!path || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open: NULL argument");
    int fd = oz_sys_open_read(path);
    if (fd < 0) return oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot open: %s", path, strerror(errno));
    int rc = map_fd(fd, 1, path, flags, model, out);
    oz_sys_close(fd); /* the mapping keeps the file */
    return rc;
}

int onnxzip_open(const char *path, unsigned flags, onnxzip_archive **out)
{
    return onnxzip_open_model(path, NULL, flags, out);
}

int onnxzip_open_fd(int fd, unsigned flags, onnxzip_archive **out)
{
    if (out) *out = NULL;
    if (fd < 0 || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open_fd: bad argument");
    char name[32];
    snprintf(name, sizeof name, "<fd %d>", fd);
    return map_fd(fd, 0, name, flags, NULL, out);
}

int onnxzip_open_buffer(const void *data, size_t size, unsigned flags, onnxzip_archive **out)
{
    if (out) *out = NULL;
    if (!data || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open_buffer: NULL argument");
    if (flags & ~OPEN_FLAGS) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_open_buffer: unknown flags 0x%x", flags);
    return open_mapped(data, size, -1, NULL, 0, "<buffer>", flags, NULL, out);
}

int onnxzip_check(onnxzip_archive *a)
{
    if (!a) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_check: NULL argument");
    return a->src.ops && a->src.ops->check ? a->src.ops->check(&a->src) : 0;
}
