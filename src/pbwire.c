#include "pbwire.h"

int pb_varint(pb_reader *r, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return -1;
        uint8_t b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
        if (shift == 63) return -1;
    }
    return -1;
}

int pb_next(pb_reader *r, pb_field *f)
{
    uint64_t tag;
    f->start = r->p;
    if (pb_varint(r, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return -1;
    f->num = (uint32_t)(tag >> 3);
    f->wt = (int)(tag & 7);
    f->data = NULL;
    f->len = 0;
    switch (f->wt) {
    case PB_VARINT:
        return pb_varint(r, &f->v);
    case PB_I64:
    case PB_I32: {
        size_t n = f->wt == PB_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n) return -1;
        f->v = 0;
        for (size_t i = 0; i < n; i++) f->v |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return 0;
    }
    case PB_LEN: {
        uint64_t n;
        if (pb_varint(r, &n) || n > (uint64_t)(r->end - r->p)) return -1;
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return 0;
    }
    default:
        return -1; /* groups (3, 4) are not used by ONNX; 6, 7 are invalid */
    }
}
