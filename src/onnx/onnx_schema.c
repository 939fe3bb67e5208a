#include <stdio.h>

#include "common/internal.h"
#include "onnx.pb-c.h"
#include "onnx/onnx_schema.h"
#include "onnx/pbwire.h"

/* Singular message fields of a oneof-holding type seen in one message, and
 * whether a oneof member was set in any occurrence so far. */
#define ONEOF_SLOTS 8

typedef struct frame {
    const ProtobufCMessageDescriptor *d;
    pb_reader r;
    unsigned n_seen;
    uint32_t seen[ONEOF_SLOTS];
    uint8_t member_set[ONEOF_SLOTS];
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

static int has_oneof(const ProtobufCMessageDescriptor *d)
{
    for (unsigned i = 0; i < d->n_fields; i++)
        if (d->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) return 1;
    return 0;
}

/* Whether one occurrence of a message sets a member of its oneof. Malformed
 * fields are left to the walk, which reaches them next. */
static int sets_oneof(const ProtobufCMessageDescriptor *d, const pb_field *f)
{
    pb_reader r = { f->data, f->data + f->len };
    pb_field g;
    while (r.p < r.end && !pb_next(&r, &g)) {
        const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(d, g.num);
        if (fd && (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) return 1;
    }
    return 0;
}

/* protobuf-c 1.4 fails to merge two occurrences of a singular message with a
 * oneof when neither the earlier ones nor this one set a member of it (e.g.
 * ValueInfoProto.type given twice, empty): the parse of the whole model
 * fails. Such a model is refused, naming the field, so that every model
 * accepted here also parses in onnxzip_model_proto(). Returns 1 to refuse. */
static int unmergeable(frame *fr, const ProtobufCFieldDescriptor *fd, const pb_field *f)
{
    if (fd->label == PROTOBUF_C_LABEL_REPEATED || !has_oneof(fd->descriptor)) return 0;
    int set = sets_oneof(fd->descriptor, f);
    for (unsigned i = 0; i < fr->n_seen; i++) {
        if (fr->seen[i] != f->num) continue;
        if (!fr->member_set[i] && !set) return 1;
        fr->member_set[i] |= (uint8_t)set;
        return 0;
    }
    if (fr->n_seen < ONEOF_SLOTS) {
        fr->seen[fr->n_seen] = f->num;
        fr->member_set[fr->n_seen++] = (uint8_t)set;
    }
    return 0;
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
    st[0] = (frame){ .d = &onnx__model_proto__descriptor, .r = { model, model + len } };
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
        if (unmergeable(fr, fd, &f))
            return fail(path, ONNXZIP_EPROTO, model, f.start, base_offset,
                        "a singular message given again with no member of its oneof set in any copy "
                        "(protobuf-c cannot merge it)", fr, f.num);
        if (top + 1 >= OZ_MAX_MSG_DEPTH)
            return oz_err(ONNXZIP_ELIMIT, (int64_t)(base_offset + (uint64_t)(f.start - model)),
                          "%s: messages nested deeper than %d levels at byte %llu of the model", path,
                          OZ_MAX_MSG_DEPTH, (unsigned long long)(f.start - model));
        st[++top] = (frame){ .d = fd->descriptor, .r = { f.data, f.data + f.len } };
    }
}
