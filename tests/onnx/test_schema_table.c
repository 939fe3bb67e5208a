/* The schema check's field table (proto/gen_schema.py, generated from
 * proto/onnx.proto) against protoc-c's descriptors of the same file: every
 * message reachable from ModelProto, each field's number, wire form,
 * repeated label, oneof membership and message type. The table is what
 * builds without protobuf-c check models with, so it must say exactly what
 * protobuf-c would. */
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "onnx/onnx_schema.h"
#include "testutil.h"

static const oz_schema_message *table_message(const char *full_name)
{
    for (int i = 0; i < oz_schema_count(); i++)
        if (!strcmp(oz_schema_message_at(i)->full_name, full_name)) return oz_schema_message_at(i);
    return NULL;
}

static int kind_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_BOOL: return OZ_SK_BOOL;
    case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_SFIXED32: return OZ_SK_I32;
    case PROTOBUF_C_TYPE_DOUBLE: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_SFIXED64: return OZ_SK_I64;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: return OZ_SK_LEN;
    case PROTOBUF_C_TYPE_MESSAGE: return OZ_SK_MESSAGE;
    default: return OZ_SK_VARINT;
    }
}

static const ProtobufCMessageDescriptor *seen[64];
static int n_seen;

static void compare(const ProtobufCMessageDescriptor *d)
{
    for (int i = 0; i < n_seen; i++)
        if (seen[i] == d) return;
    CHECK(n_seen < 64);
    if (n_seen >= 64) return;
    seen[n_seen++] = d;
    const oz_schema_message *m = table_message(d->name);
    CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "  %s: not in the table\n", d->name);
        return;
    }
    CHECK(m->n_fields == d->n_fields && !strcmp(m->short_name, d->short_name));
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        const oz_schema_field *f = oz_schema_field_of(m, fd->id);
        int ok = f && f->kind == kind_of(fd->type) &&
                 !!(f->flags & OZ_SF_REPEATED) == (fd->label == PROTOBUF_C_LABEL_REPEATED) &&
                 !!(f->flags & OZ_SF_ONEOF) == !!(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF);
        if (ok && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
            const oz_schema_message *sub = oz_schema_message_at(f->message);
            const ProtobufCMessageDescriptor *sd = fd->descriptor;
            ok = sub && !strcmp(sub->full_name, sd->name);
            compare(sd);
        } else if (ok) {
            ok = f->message == -1;
        }
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s.%s (field %u) differs from the table\n", d->name, fd->name, fd->id);
    }
}

int main(void)
{
    CHECK(!strcmp(oz_schema_message_at(oz_schema_model_index())->full_name, "onnx.ModelProto"));
    compare(&onnx__model_proto__descriptor);
    /* every message of onnx.proto is reachable from ModelProto: the table has no more */
    CHECK(n_seen == oz_schema_count());
    printf("schema_table: %d messages compared with protoc-c's descriptors\n", n_seen);
    return tu_finish("schema_table");
}
