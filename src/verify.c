/* onnxzip_verify(): CRC-32 and XXH3-64 of every entry, in one pass over the
 * data, in cache-sized chunks. */
#include <xxhash.h>
#include <zlib.h>

#include <strings.h>

#include "archive.h"
#include "checksum.h"
#include "onnx_walk.h"
#include "sha1.h"

/* ONNX's optional external_data "checksum": SHA-1 hex of the payload. */
typedef struct sums {
    const onnxzip_archive *a;
    size_t next; /* pairs the walk with the tensor index, which is in walk order */
} sums;

static int check_sum(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    sums *s = ctx;
    (void)rw;
    const onnxzip_tensor *v = &s->a->tensors.v[s->next++];
    if (!t->has_checksum || v->storage != ONNXZIP_STORAGE_FILE) return 0;
    char hex[41], name[OZ_PRINTABLE_CAP], want[OZ_PRINTABLE_CAP];
    oz_sha1_hex(v->data, v->nbytes, hex);
    if (t->checksum.len == 40 && !strncasecmp((const char *)t->checksum.p, hex, 40)) return 0;
    return oz_err(ONNXZIP_EDIGEST, (int64_t)v->file_offset, "%s: tensor '%s': SHA-1 of its external data in '%s' is "
                  "%s, its checksum key says '%s'", s->a->path, oz_printable(v->name, strlen(v->name), name,
                  sizeof name), v->entry, hex, oz_printable(t->checksum.p, t->checksum.len, want, sizeof want));
}

/* Classic layouts carry no CRC: reading every payload byte still proves the
 * files are complete and readable (an I/O error would fault here, not in a
 * runtime later), and external data is checked against any checksum keys. */
static int read_all(const onnxzip_archive *a)
{
    sums s = { a, 0 };
    oz_walk w = { .visit = check_sum, .ctx = &s, .path = a->path, .base = a->model };
    int rc = a->layout == ONNXZIP_LAYOUT_EXTERNAL ? oz_walk_model(&w, a->model, a->model_len) : 0;
    if (rc) return rc;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < a->tensors.n; i++) {
        const onnxzip_tensor *t = &a->tensors.v[i];
        for (uint64_t k = 0; t->data && k < t->nbytes; k += 4096) sink ^= ((const uint8_t *)t->data)[k];
    }
    (void)sink;
    return 0;
}

int onnxzip_verify(onnxzip_archive *a)
{
    if (!a) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_verify: NULL argument");
    if (a->layout != ONNXZIP_LAYOUT_ARCHIVE) return read_all(a);
    for (size_t i = 0; i < a->zip.n; i++) {
        const onnxzip_entry *e = &a->zip.entries[i].pub;
        oz_checksum cs;
        oz_checksum_init(&cs);
        /* The model region may have moved since open (spec 15.5): use the copy. */
        const uint8_t *data = i == a->zip.model_index ? a->model : a->base + e->data_offset;
        oz_checksum_update(&cs, data, e->size);
        uint32_t crc = cs.crc;
        uint64_t digest = XXH3_64bits_digest(&cs.xxh);
        char shown[OZ_PRINTABLE_CAP];
        oz_printable(e->name, strlen(e->name), shown, sizeof shown);
        if (crc != e->crc32)
            return oz_err(ONNXZIP_ECRC, (int64_t)e->data_offset, "%s: entry '%s': CRC-32 of the data is %08x, the "
                          "archive records %08x", a->path, shown, crc, e->crc32);
        if (e->has_xxh3 && digest != e->xxh3)
            return oz_err(ONNXZIP_EDIGEST, (int64_t)e->data_offset, "%s: entry '%s': XXH3-64 of the data is "
                          "%016llx, the archive records %016llx", a->path, shown, (unsigned long long)digest,
                          (unsigned long long)e->xxh3);
    }
    return 0;
}
