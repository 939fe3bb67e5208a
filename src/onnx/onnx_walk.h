/* Walks a serialized onnx.ModelProto in place and visits every TensorProto
 * (graph initializers, sparse initializers, attribute tensors, at any depth of
 * subgraphs, in functions and training graphs) without copying payloads.
 * Optionally rewrites the model: chosen tensors lose raw_data and gain an
 * EXTERNAL reference; every other byte is copied through unchanged, so unknown
 * fields and field order survive.
 *
 * The walk sees the message protobuf sees (spec 8.5): a singular message
 * field that occurs more than once (AttributeProto.t, .g, .sparse_tensor,
 * SparseTensorProto.values, .indices, ModelProto.graph, TrainingInfoProto's
 * graphs) is one merged message, visited once, at its first occurrence. A
 * rewrite writes it there as one occurrence and drops the later ones. */
#ifndef ONNXZIP_ONNX_WALK_H
#define ONNXZIP_ONNX_WALK_H

#include "common/buf.h"
#include "common/internal.h"
#include "onnx/pbwire.h"

/* One message on the way from the model to a tensor, innermost first: what
 * oz_walk_key() names an unnamed tensor by. Valid during the visit only. */
typedef struct oz_where {
    const struct oz_where *up; /* NULL: the ModelProto */
    int type;                  /* the message's type (private to onnx_walk.c) */
    uint32_t field;            /* its field number in `up` */
    uint32_t index;            /* which occurrence of that field, from 0 */
    oz_span msg;               /* its (first) bytes */
} oz_where;

typedef struct oz_tensor_info {
    oz_span msg;            /* the TensorProto's first occurrence (for messages) */
    const oz_span *pieces;  /* every occurrence, merged by protobuf in this */
    size_t npieces;         /* order: read them with a pb_stream */
    oz_span name;           /* empty when absent */
    int32_t data_type;
    uint32_t ndims;
    int64_t dims[OZ_MAX_RANK];
    int has_raw;
    oz_span raw;
    int data_location;      /* 0 DEFAULT, 1 EXTERNAL */
    int has_typed;          /* float_data, int32_data, string_data, ... present */
    int has_location, has_offset, has_length, has_checksum;
    oz_span location, offset, length, checksum;
    int has_unknown_key, repeated_key;
    oz_span unknown_key;
    onnxzip_tensor_kind kind;
    uint32_t graph_depth;
    const oz_where *where;  /* the TensorProto's own frame */
} oz_tensor_info;

/* What a visitor wants done with a tensor when rewriting. Except for KEEP,
 * the tensor's data fields (typed fields but string_data, raw_data,
 * external_data, data_location) are replaced; every other field is kept. */
typedef enum oz_action { OZ_KEEP = 0, OZ_EXTERNAL, OZ_INLINE, OZ_TO_INPUT } oz_action;
/* OZ_TO_INPUT, for an initializer of the main graph only: the tensor is
 * dropped, and the graph declares an input of its name, element type and
 * dims instead (after its own inputs; none when it has an input of that
 * name already, as models before IR version 4 list their initializers). */

typedef struct oz_rewrite {
    oz_action action;
    /* OZ_EXTERNAL: the keys written, in ONNX's order */
    const char *location;
    int has_offset, has_length;
    uint64_t offset, length;
    const char *checksum; /* NULL: no checksum key */
    /* OZ_INLINE: the raw_data bytes */
    const uint8_t *data;
    uint64_t size;
} oz_rewrite;

/* Called for every tensor; `rw` is zeroed (KEEP) on entry. */
typedef int (*oz_tensor_visit)(void *ctx, const oz_tensor_info *t, oz_rewrite *rw);

typedef struct oz_walk {
    oz_tensor_visit visit;
    void *ctx;
    oz_buf *out;         /* NULL: walk only */
    const char *path;    /* names the file in messages */
    const uint8_t *base; /* for offsets in messages */
    uint64_t base_offset;
    /* private to the walk: OZ_TO_INPUT's state */
    oz_buf *inputs;            /* the current graph's new inputs */
    const oz_span *graph;      /* the current graph's pieces */
    size_t ngraph;
    int dropped;
} oz_walk;

/* Returns 0, the visitor's error, ONNXZIP_EPROTO for malformed protobuf or
 * ONNXZIP_ELIMIT beyond the nesting and rank limits. */
int oz_walk_model(oz_walk *w, const uint8_t *model, size_t len);

/* Appends to `out` the path that names tensor `t` when it has no name
 * (onnxzip_tensor.key in include/onnxzip/onnxzip.h documents the format),
 * not NUL-terminated. Returns 0 or ONNXZIP_ENOMEM. */
int oz_walk_key(const oz_tensor_info *t, oz_buf *out);

/* Appends field `field` holding one StringStringEntryProto {key, value}
 * (TensorProto.external_data = 13, ModelProto.metadata_props = 14). Returns 0
 * or ONNXZIP_ENOMEM. */
int oz_put_string_entry(oz_buf *out, uint32_t field, const char *key, const char *value);

/* Strict decimal parse of an external_data offset/length value. */
int oz_parse_decimal(oz_span s, uint64_t *out);

#endif
