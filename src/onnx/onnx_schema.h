/* The model checked against the ONNX schema the way protobuf-c parses it,
 * so that every model the library accepts also parses in
 * onnxzip_model_proto() and means there what the walker saw (spec 8.5). */
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

#endif
