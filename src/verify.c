/* onnxzip_verify(): CRC-32 and XXH3-64 of every entry, in one pass over the
 * data, in cache-sized chunks. */
#include <xxhash.h>
#include <zlib.h>

#include "archive.h"
#include "checksum.h"

/* Classic layouts carry no CRC: reading every payload byte still proves the
 * files are complete and readable (an I/O error would fault here, not in a
 * runtime later). */
static int read_all(const onnxzip_archive *a)
{
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
