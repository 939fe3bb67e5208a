#include <stdio.h>

#include "internal.h"
#include "onnx.pb-c.h"
#include "onnx_schema.h"
#include "pbwire.h"

typedef struct frame {
    const ProtobufCMessageDescriptor *d;
    pb_reader r;
} frame;

/* The wire type protobuf-c requires of an unpacked value of `type`. */
static int wire_type_of(ProtobufCType type)
{
    switch (type) {
    case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
        return PB_I32;
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return PB_I64;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE:
        return PB_LEN;
    default: /* the varint types, bool and enum */
        return PB_VARINT;
    }
}

/* A packed run of values must hold whole values, as protobuf-c checks. */
static int packed_ok(ProtobufCType type, const uint8_t *p, size_t n)
{
    int wt = wire_type_of(type);
    if (wt == PB_I32) return n % 4 == 0;
    if (wt == PB_I64) return n % 8 == 0;
    if (type == PROTOBUF_C_TYPE_BOOL) {
        for (size_t i = 0; i < n; i++)
            if (p[i] > 1) return 0;
        return 1;
    }
    pb_reader r = { p, p + n };
    uint64_t v;
    while (r.p < r.end)
        if (pb_varint(&r, &v)) return 0;
    return 1;
}

static int field_ok(const ProtobufCFieldDescriptor *fd, const pb_field *f)
{
    int want = wire_type_of(fd->type);
    if (f->wt == want) return 1;
    return fd->label == PROTOBUF_C_LABEL_REPEATED && want != PB_LEN && f->wt == PB_LEN &&
           packed_ok(fd->type, f->data, f->len);
}

static int fail(const char *path, int status, const uint8_t *model, const uint8_t *at, uint64_t base_offset,
                const char *what, const frame *fr, uint32_t num)
{
    return oz_err(status, (int64_t)(base_offset + (uint64_t)(at - model)),
                  "%s: malformed model protobuf at byte %llu of the model: %s (field %u of %s)", path,
                  (unsigned long long)(at - model), what, num, fr->d->short_name);
}

int oz_check_schema(const char *path, const uint8_t *model, size_t len, uint64_t base_offset)
{
    frame st[OZ_MAX_MSG_DEPTH];
    unsigned top = 0;
    st[0] = (frame){ &onnx__model_proto__descriptor, { model, model + len } };
    for (;;) {
        frame *fr = &st[top];
        if (fr->r.p >= fr->r.end) {
            if (top-- == 0) return 0;
            continue;
        }
        pb_field f;
        if (pb_next(&fr->r, &f))
            return fail(path, ONNXZIP_EPROTO, model, fr->r.p, base_offset, "bad field tag or length", fr, 0);
        const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(fr->d, f.num);
        if (!fd) continue; /* unknown fields are kept as they are */
        if (!field_ok(fd, &f)) {
            int packed = f.wt == PB_LEN && fd->label == PROTOBUF_C_LABEL_REPEATED && wire_type_of(fd->type) != PB_LEN;
            return fail(path, ONNXZIP_EPROTO, model, f.start, base_offset,
                        packed ? "malformed packed values" : "wrong wire type", fr, f.num);
        }
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE) continue;
        if (top + 1 >= OZ_MAX_MSG_DEPTH)
            return oz_err(ONNXZIP_ELIMIT, (int64_t)(base_offset + (uint64_t)(f.start - model)),
                          "%s: messages nested deeper than %d levels at byte %llu of the model", path,
                          OZ_MAX_MSG_DEPTH, (unsigned long long)(f.start - model));
        st[++top] = (frame){ fd->descriptor, { f.data, f.data + f.len } };
    }
}
