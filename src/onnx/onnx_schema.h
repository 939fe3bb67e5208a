/* The model checked against the ONNX schema the way protobuf-c parses it,
 * so that every model the library accepts also parses in
 * onnxzip_model_proto() and means there what the walker saw (spec 8.5).
 * The schema is a table generated from proto/onnx.proto at build time
 * (proto/gen_schema.py), so the check needs no protobuf library: builds
 * without protobuf-c refuse exactly the same models. */
#ifndef ONNXZIP_ONNX_SCHEMA_H
#define ONNXZIP_ONNX_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

/* Walks every message field the schema knows, without recursion, and checks:
 * no nesting deeper than OZ_MAX_MSG_DEPTH messages (ModelProto = 1: protobuf-c
 * recurses once per level); every known field has the wire type of its type
 * (or, for a repeated scalar, the packed form, whose payload must be whole
 * values). Unknown fields may have any wire type. Returns 0, ONNXZIP_ELIMIT,
 * or ONNXZIP_EPROTO naming the message, field and byte offset. */
int oz_check_schema(const char *path, const uint8_t *model, size_t len, uint64_t base_offset);

/* The wire form a field's values take (one value; repeated scalars may also
 * come packed in one length-delimited field). */
typedef enum oz_schema_kind {
    OZ_SK_VARINT,  /* integer and enum types */
    OZ_SK_BOOL,    /* a varint; packed bools must be single bytes 0 or 1 */
    OZ_SK_I32,     /* float, fixed32, sfixed32 */
    OZ_SK_I64,     /* double, fixed64, sfixed64 */
    OZ_SK_LEN,     /* string, bytes */
    OZ_SK_MESSAGE, /* length-delimited, of the message type `message` */
} oz_schema_kind;

enum { OZ_SF_REPEATED = 1, OZ_SF_ONEOF = 2 };

typedef struct oz_schema_field {
    uint32_t num;
    uint8_t kind;    /* oz_schema_kind */
    uint8_t flags;   /* OZ_SF_* */
    int16_t message; /* OZ_SK_MESSAGE: the type's index (oz_schema_message_at), else -1 */
} oz_schema_field;

typedef struct oz_schema_message {
    const char *short_name, *full_name; /* "Tensor", "onnx.TypeProto.Tensor" */
    const oz_schema_field *fields;      /* by ascending number */
    unsigned n_fields;
    int has_oneof;
} oz_schema_message;

/* Message type `i` of the schema, 0 <= i < oz_schema_count(), or NULL. */
const oz_schema_message *oz_schema_message_at(int i);
int oz_schema_count(void);
/* ModelProto's index. */
int oz_schema_model_index(void);
/* Field `num` of `m`, or NULL when the schema does not know it. */
const oz_schema_field *oz_schema_field_of(const oz_schema_message *m, uint32_t num);

#endif
