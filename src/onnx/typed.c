#include "onnx/typed.h"
#include "onnx/dtype.h"
#include "onnx/pbwire.h"

/* The field ONNX stores each type in, and the width written per value. */
static int storage_of(int32_t dtype, uint32_t *field, unsigned *width)
{
    switch (dtype) {
    case 1: case 14: *field = 4, *width = 4; return 0;                  /* float_data */
    case 7: *field = 7, *width = 8; return 0;                           /* int64_data */
    case 11: case 15: *field = 10, *width = 8; return 0;                /* double_data */
    case 12: *field = 11, *width = 4; return 0;                         /* uint64_data */
    case 13: *field = 11, *width = 8; return 0;
    case 6: *field = 5, *width = 4; return 0;                           /* int32_data */
    case 4: case 5: case 10: case 16: *field = 5, *width = 2; return 0;
    case 2: case 3: case 9: case 17: case 18: case 19: case 20: case 24: /* one byte per value; */
    case 21: case 22: case 23: case 25: case 26:                        /* packed sub-byte types too */
        *field = 5, *width = 1;
        return 0;
    case 27: case 28: *field = 5, *width = 0; return 0; /* one 6-bit value per entry, packed when raw */
    default: return -1;
    }
}

typedef int (*value_fn)(void *ctx, uint64_t v);

/* Calls fn for every value of field `want`, packed or not. */
static int each_value(const oz_tensor_info *t, uint32_t want, value_fn fn, void *ctx)
{
    pb_stream st;
    pb_stream_init(&st, t->pieces, t->npieces);
    int fixed = want == 4 ? 4 : want == 10 ? 8 : 0, k;
    pb_field f;
    while ((k = pb_stream_next(&st, &f)) != 1) {
        if (k) return -1;
        if (f.num != want) continue;
        if (f.wt != PB_LEN) {
            if (fn(ctx, f.v)) return -1;
            continue;
        }
        pb_reader in = { f.data, f.data + f.len };
        while (in.p < in.end) {
            uint64_t v = 0;
            if (fixed) {
                if ((size_t)(in.end - in.p) < (size_t)fixed) return -1;
                for (int i = 0; i < fixed; i++) v |= (uint64_t)in.p[i] << (8 * i);
                in.p += fixed;
            } else if (pb_varint(&in, &v)) {
                return -1;
            }
            if (fn(ctx, v)) return -1;
        }
    }
    return 0;
}

/* The other typed fields must be empty: data in the wrong field is invalid. */
static int only_field(const oz_tensor_info *t, uint32_t want)
{
    pb_stream st;
    pb_stream_init(&st, t->pieces, t->npieces);
    pb_field f;
    int k;
    while ((k = pb_stream_next(&st, &f)) != 1) {
        if (k) return -1;
        int typed = f.num == 4 || f.num == 5 || f.num == 6 || f.num == 7 || f.num == 10 || f.num == 11;
        if (typed && f.num != want && (f.wt != PB_LEN || f.len)) return -1;
    }
    return 0;
}

static int count_one(void *ctx, uint64_t v)
{
    (void)v;
    ++*(uint64_t *)ctx;
    return 0;
}

static int fail(const oz_tensor_info *t, const char *path, int status, const char *why)
{
    char name[OZ_PRINTABLE_CAP];
    oz_printable(t->name.p, t->name.len, name, sizeof name);
    return oz_err(status, -1, "%s: tensor '%s': %s", path, name, why);
}

int oz_typed_size(const oz_tensor_info *t, const char *path, uint64_t *n)
{
    uint32_t field;
    unsigned width;
    if (storage_of(t->data_type, &field, &width))
        return fail(t, path, ONNXZIP_EDTYPE, "typed data of a type without a raw form (e.g. STRING)");
    if (only_field(t, field))
        return fail(t, path, ONNXZIP_EDTYPE, "typed data in a field its data type does not use");
    uint64_t values = 0;
    if (each_value(t, field, count_one, &values))
        return fail(t, path, ONNXZIP_EPROTO, "malformed typed data");
    *n = width ? values * width : (values * 6 + 7) / 8; /* 6-bit: a bitstream, the last byte zero-padded */
    return 0;
}

typedef struct writer {
    uint8_t *out;
    unsigned width; /* bytes per value; 0: 6-bit values into an LSB-first bitstream */
    uint32_t acc;   /* 6-bit: bits not yet written */
    unsigned nacc;
} writer;

static int put_value(void *ctx, uint64_t v)
{
    writer *w = ctx;
    if (!w->width) {
        w->acc |= (uint32_t)(v & 0x3f) << w->nacc;
        for (w->nacc += 6; w->nacc >= 8; w->nacc -= 8, w->acc >>= 8) *w->out++ = (uint8_t)w->acc;
        return 0;
    }
    for (unsigned i = 0; i < w->width; i++) *w->out++ = (uint8_t)(v >> (8 * i));
    return 0;
}

int oz_typed_convert(const oz_tensor_info *t, const char *path, uint8_t *out)
{
    uint32_t field;
    unsigned width;
    if (storage_of(t->data_type, &field, &width)) return fail(t, path, ONNXZIP_EDTYPE, "no raw form");
    writer w = { out, width, 0, 0 };
    if (each_value(t, field, put_value, &w)) return fail(t, path, ONNXZIP_EPROTO, "malformed typed data");
    if (w.nacc) *w.out = (uint8_t)w.acc; /* the zero-padded last byte */
    return 0;
}
