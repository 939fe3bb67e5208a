#include "onnx/pbwire.h"

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

/* protobuf-c reads tags and lengths as varints of at most 5 bytes. */
static int short_varint(pb_reader *r, uint64_t *v)
{
    const uint8_t *start = r->p;
    return pb_varint(r, v) || r->p - start > 5 ? -1 : 0;
}

int pb_next(pb_reader *r, pb_field *f)
{
    uint64_t tag;
    f->start = r->p;
    if (short_varint(r, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return -1;
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
        if (short_varint(r, &n) || n > (uint64_t)(r->end - r->p)) return -1;
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return 0;
    }
    default:
        return -1; /* groups (3, 4) are not used by ONNX; 6, 7 are invalid */
    }
}

void pb_stream_init(pb_stream *s, const oz_span *pieces, size_t n)
{
    *s = (pb_stream){ pieces, n, 0, { NULL, NULL } };
}

int pb_stream_next(pb_stream *s, pb_field *f)
{
    while (s->r.p >= s->r.end) {
        if (s->next == s->n) return 1;
        const oz_span *sp = &s->piece[s->next++];
        s->r = (pb_reader){ sp->p, sp->p + sp->len };
    }
    return pb_next(&s->r, f);
}
