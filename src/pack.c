/* onnxzip_pack(): a classic single-file model to an archive. The model is
 * walked in place; large raw_data payloads are streamed from the input file
 * into aligned entries and the model is rewritten around them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "onnx_walk.h"
#include "writer.h"

void onnxzip_pack_options_init(onnxzip_pack_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->alignment = 64;
    opts->size_threshold = 1024;
}

typedef struct pack {
    onnxzip_writer *w;
    const onnxzip_pack_options *opts;
    const char *in_path;
    const uint8_t *base;
    int fd;
    char entry[OZ_MAX_NAME + 1];
} pack;

static int tensor_fail(pack *p, const oz_tensor_info *t, int status, const char *why)
{
    char name[OZ_PRINTABLE_CAP];
    oz_printable(t->name.p, t->name.len, name, sizeof name);
    return oz_err(status, (int64_t)(t->msg.p - p->base), "%s: tensor '%s': %s", p->in_path, name, why);
}

static int choose_name(pack *p, const oz_tensor_info *t)
{
    char tensor_name[256];
    size_t n = t->name.len < sizeof tensor_name - 1 ? t->name.len : sizeof tensor_name - 1;
    memcpy(tensor_name, t->name.p, n);
    tensor_name[n] = '\0';
    for (unsigned k = 0;; k++) {
        int rc = onnxzip_entry_name_for(tensor_name, k, p->entry, sizeof p->entry);
        if (rc < 0) return rc;
        if (!oz_writer_name_taken(p->w, p->entry)) return 0;
    }
}

static int on_tensor(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    pack *p = ctx;
    if (t->data_location == 1)
        return tensor_fail(p, t, ONNXZIP_EUNSUPPORTED, "already uses external data; this version packs "
                           "single-file models only");
    if (!t->has_raw || t->raw.len < p->opts->size_threshold || !oz_dtype_bits(t->data_type)) return 0;
    uint64_t n, expect;
    if (oz_dims_product(t->dims, t->ndims, &n) || oz_dtype_nbytes(t->data_type, n, &expect) || expect != t->raw.len)
        return tensor_fail(p, t, ONNXZIP_ESIZE, "raw_data length does not match its dims and data type");
    int rc = choose_name(p, t);
    if (!rc) rc = onnxzip_writer_add_file_range(p->w, p->entry, p->fd, (uint64_t)(t->raw.p - p->base), t->raw.len);
    if (!rc) *rw = (oz_rewrite){ .action = OZ_EXTERNAL, .location = p->entry };
    return rc;
}

static int is_zip(const uint8_t *b, uint64_t size)
{
    return size >= 4 && oz_rd32(b) == 0x04034b50u;
}

static int same_file(int fd, const char *out)
{
    struct stat a, b;
    return !fstat(fd, &a) && !stat(out, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int pack_mapped(pack *p, uint64_t size, const char *out_path)
{
    int rc = onnxzip_writer_create(out_path, &(onnxzip_write_options){ .alignment = p->opts->alignment }, &p->w);
    if (rc) return rc;
    oz_buf model = { 0 };
    oz_walk walk = { .visit = on_tensor, .ctx = p, .out = &model, .path = p->in_path, .base = p->base };
    rc = oz_walk_model(&walk, p->base, (size_t)size);
    if (!rc) rc = onnxzip_writer_set_model(p->w, model.p, model.len);
    oz_buf_free(&model);
    if (!rc) return onnxzip_writer_finish(&p->w);
    onnxzip_writer_abort(&p->w);
    return rc;
}

int onnxzip_pack(const char *in_path, const char *out_path, const onnxzip_pack_options *opts)
{
    if (!in_path || !out_path) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_pack: NULL path");
    onnxzip_pack_options def;
    onnxzip_pack_options_init(&def);
    pack p = { .opts = opts ? opts : &def, .in_path = in_path };
    int rc = oz_check_alignment(p.opts->alignment);
    if (rc) return rc;
    if ((p.fd = open(in_path, O_RDONLY | O_CLOEXEC)) < 0)
        return oz_err(ONNXZIP_EIO, -1, "%s: cannot open: %s", in_path, strerror(errno));
    struct stat st;
    if (fstat(p.fd, &st) || !S_ISREG(st.st_mode))
        rc = oz_err(ONNXZIP_EINVAL, -1, "%s: not a regular file", in_path);
    else if (st.st_size == 0)
        rc = oz_err(ONNXZIP_EPROTO, -1, "%s: empty file, not an ONNX model", in_path);
    else if (same_file(p.fd, out_path))
        rc = oz_err(ONNXZIP_EINVAL, -1, "%s: the output names the input file; refusing to overwrite it", out_path);
    void *base = MAP_FAILED;
    if (!rc && (base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, p.fd, 0)) == MAP_FAILED)
        rc = oz_err(ONNXZIP_EIO, -1, "%s: cannot map: %s", in_path, strerror(errno));
    if (!rc) {
        p.base = base;
        if (is_zip(p.base, (uint64_t)st.st_size))
            rc = oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: already a zip archive; pack takes a classic .onnx model",
                        in_path);
        else
            rc = pack_mapped(&p, (uint64_t)st.st_size, out_path);
        munmap(base, (size_t)st.st_size);
    }
    close(p.fd);
    return rc;
}
