#include <stdio.h>
#include <stdlib.h>

#include "onnx/onnx_walk.h"
#include "onnx/pbwire.h"

enum msg_type { T_NONE, T_MODEL, T_GRAPH, T_NODE, T_ATTR, T_FUNCTION, T_TRAINING, T_SPARSE, T_TENSOR };

typedef struct scope {
    unsigned depth;            /* graphs entered so far (main graph = 1) */
    onnxzip_tensor_kind kind;  /* kind for tensors met directly below */
    const oz_where *where;     /* the message being walked (NULL: the model) */
} scope;

/* Which fields lead (transitively) to tensors, per message type. */
static enum msg_type child_type(enum msg_type t, uint32_t num, onnxzip_tensor_kind *kind)
{
    switch (t) {
    case T_MODEL:
        return num == 7 ? T_GRAPH : num == 20 ? T_TRAINING : num == 25 ? T_FUNCTION : T_NONE;
    case T_TRAINING:
        return num == 1 || num == 2 ? T_GRAPH : T_NONE;
    case T_GRAPH:
        *kind = ONNXZIP_KIND_INITIALIZER;
        return num == 1 ? T_NODE : num == 5 ? T_TENSOR : num == 15 ? T_SPARSE : T_NONE;
    case T_NODE:
        return num == 5 ? T_ATTR : T_NONE;
    case T_FUNCTION:
        return num == 7 ? T_NODE : num == 11 ? T_ATTR : T_NONE;
    case T_ATTR:
        *kind = ONNXZIP_KIND_ATTRIBUTE;
        return num == 5 || num == 10 ? T_TENSOR : num == 6 || num == 11 ? T_GRAPH
             : num == 22 || num == 23 ? T_SPARSE : T_NONE;
    case T_SPARSE:
        *kind = num == 1 ? ONNXZIP_KIND_SPARSE_VALUES : ONNXZIP_KIND_SPARSE_INDICES;
        return num == 1 || num == 2 ? T_TENSOR : T_NONE;
    default:
        return T_NONE;
    }
}

/* Singular (non-repeated) message fields on the way to tensors: protobuf
 * merges their occurrences into one message. */
static int is_singular(enum msg_type t, uint32_t num)
{
    switch (t) {
    case T_MODEL: return num == 7;
    case T_TRAINING: return num == 1 || num == 2;
    case T_ATTR: return num == 5 || num == 6 || num == 22;
    case T_SPARSE: return num == 1 || num == 2;
    default: return 0;
    }
}

static int proto_err(oz_walk *w, const uint8_t *at, const char *what)
{
    return oz_err(ONNXZIP_EPROTO, (int64_t)(w->base_offset + (uint64_t)(at - w->base)),
                  "%s: malformed model protobuf at byte %llu of the model: %s", w->path,
                  (unsigned long long)(at - w->base), what);
}

static int parse_kv(oz_walk *w, const pb_field *f, oz_tensor_info *t)
{
    pb_reader r = { f->data, f->data + f->len };
    oz_span key = { (const uint8_t *)"", 0 }, value = { (const uint8_t *)"", 0 };
    while (r.p < r.end) {
        pb_field g;
        if (pb_next(&r, &g)) return proto_err(w, r.p, "bad external_data entry");
        if (g.wt != PB_LEN) continue;
        if (g.num == 1) key = (oz_span){ g.data, g.len };
        if (g.num == 2) value = (oz_span){ g.data, g.len };
    }
#define OZ_KEY_IS_(s) (key.len == sizeof(s) - 1 && !memcmp(key.p, s, key.len))
    int *seen = OZ_KEY_IS_("location") ? &t->has_location : OZ_KEY_IS_("offset") ? &t->has_offset
              : OZ_KEY_IS_("length") ? &t->has_length : OZ_KEY_IS_("checksum") ? &t->has_checksum : NULL;
    if (!seen) {
        if (!t->has_unknown_key) t->has_unknown_key = 1, t->unknown_key = key;
        return 0;
    }
    t->repeated_key |= *seen;
    *seen = 1;
    if (seen == &t->has_location) t->location = value;
    if (seen == &t->has_offset) t->offset = value;
    if (seen == &t->has_length) t->length = value;
    if (seen == &t->has_checksum) t->checksum = value;
#undef OZ_KEY_IS_
    return 0;
}

static int add_dim(oz_walk *w, oz_tensor_info *t, uint64_t v, const uint8_t *at)
{
    if (t->ndims >= OZ_MAX_RANK)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: a tensor has more than %d dims (at byte %llu of the model)",
                      w->path, OZ_MAX_RANK, (unsigned long long)(at - w->base));
    t->dims[t->ndims++] = (int64_t)v;
    return 0;
}

static int parse_dims(oz_walk *w, const pb_field *f, oz_tensor_info *t)
{
    if (f->wt == PB_VARINT) return add_dim(w, t, f->v, f->start);
    if (f->wt != PB_LEN) return 0;
    pb_reader r = { f->data, f->data + f->len };
    while (r.p < r.end) { /* packed dims: accepted, though ONNX writes them unpacked */
        uint64_t v;
        if (pb_varint(&r, &v)) return proto_err(w, r.p, "bad packed dims");
        int rc = add_dim(w, t, v, r.p);
        if (rc) return rc;
    }
    return 0;
}

/* The wire types a TensorProto field may use (packed repeated fields also
 * accept their unpacked form); 0 for fields this reader does not interpret. */
static unsigned tensor_wire_types(uint32_t num)
{
    switch (num) {
    case 1: case 5: case 7: case 11: return 1u << PB_VARINT | 1u << PB_LEN;
    case 2: case 14: return 1u << PB_VARINT;
    case 4: return 1u << PB_I32 | 1u << PB_LEN;
    case 10: return 1u << PB_I64 | 1u << PB_LEN;
    case 6: case 8: case 9: case 13: return 1u << PB_LEN;
    default: return 0;
    }
}

/* Reads a TensorProto's fields. Repeated singular fields: the last wins, as in
 * every protobuf parser. */
static int read_tensor(oz_walk *w, const uint8_t *p, size_t n, oz_tensor_info *t)
{
    pb_reader r = { p, p + n };
    while (r.p < r.end) {
        pb_field f;
        if (pb_next(&r, &f)) return proto_err(w, r.p, "bad field in a TensorProto");
        unsigned allowed = tensor_wire_types(f.num);
        if (allowed && !(allowed & 1u << f.wt)) return proto_err(w, f.start, "wrong wire type in a TensorProto");
        int rc = 0;
        switch (f.num) {
        case 1: rc = parse_dims(w, &f, t); break;
        case 2: t->data_type = (int32_t)f.v; break;
        case 4: case 5: case 6: case 7: case 10: case 11: t->has_typed |= f.num == 6 || f.wt != PB_LEN || f.len > 0; break;
        case 8: t->name = (oz_span){ f.data, f.len }; break;
        case 9: t->has_raw = 1, t->raw = (oz_span){ f.data, f.len }; break;
        case 13: rc = parse_kv(w, &f, t); break;
        case 14: t->data_location = f.v > 1 ? 2 : (int)f.v; break;
        default: break;
        }
        if (rc) return rc;
    }
    return 0;
}

static int put_len(oz_buf *out, uint32_t num, const void *p, uint64_t n)
{
    int rc = oz_buf_varint(out, (uint64_t)num << 3 | PB_LEN);
    if (!rc) rc = oz_buf_varint(out, n);
    if (!rc) rc = oz_buf_append(out, p, (size_t)n);
    return rc;
}

int oz_put_string_entry(oz_buf *out, uint32_t field, const char *key, const char *value)
{
    oz_buf kv = { 0 };
    int rc = put_len(&kv, 1, key, strlen(key));
    if (!rc) rc = put_len(&kv, 2, value, strlen(value));
    if (!rc) rc = put_len(out, field, kv.p, kv.len);
    oz_buf_free(&kv);
    return rc;
}

static int emit_external(oz_buf *out, const oz_rewrite *rw)
{
    char num[24];
    int rc = oz_put_string_entry(out, 13, "location", rw->location);
    if (!rc && rw->has_offset) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)rw->offset);
        rc = oz_put_string_entry(out, 13, "offset", num);
    }
    if (!rc && rw->has_length) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)rw->length);
        rc = oz_put_string_entry(out, 13, "length", num);
    }
    if (!rc && rw->checksum) rc = oz_put_string_entry(out, 13, "checksum", rw->checksum);
    if (!rc) rc = oz_buf_varint(out, 14 << 3 | PB_VARINT);
    if (!rc) rc = oz_buf_varint(out, 1); /* EXTERNAL */
    return rc;
}

/* The fields a rewrite replaces: every data field but string_data. */
static int is_data_field(uint32_t num)
{
    return num == 4 || num == 5 || num == 7 || num == 9 || num == 10 || num == 11 || num == 13 || num == 14;
}

/* Copies the tensor without its data fields, placing the new ones where
 * field-number order puts them (raw_data 9; external_data 13 + location 14),
 * as protobuf serializers do, so re-serializing by ONNX changes nothing. */
static int rewrite_tensor(oz_buf *out, const oz_tensor_info *t, const oz_rewrite *rw)
{
    pb_stream st;
    pb_stream_init(&st, t->pieces, t->npieces);
    uint32_t slot = rw->action == OZ_INLINE ? 9 : 14;
    int placed = 0, rc = 0;
    pb_field f;
    while (!rc && pb_stream_next(&st, &f) == 0) { /* already validated by read_tensor */
        if (!placed && f.num > slot) {
            placed = 1;
            rc = rw->action == OZ_INLINE ? put_len(out, 9, rw->data, rw->size) : emit_external(out, rw);
        }
        if (!rc && !is_data_field(f.num)) rc = oz_buf_append(out, f.start, (size_t)(st.r.p - f.start));
    }
    if (!rc && !placed) rc = rw->action == OZ_INLINE ? put_len(out, 9, rw->data, rw->size) : emit_external(out, rw);
    return rc;
}

/* Whether the current graph has an input named `name`. */
static int has_input(const oz_walk *w, oz_span name)
{
    pb_stream st;
    pb_stream_init(&st, w->graph, w->ngraph);
    pb_field f, g;
    while (pb_stream_next(&st, &f) == 0) {
        if (f.num != 11 || f.wt != PB_LEN) continue;
        pb_reader r = { f.data, f.data + f.len };
        while (r.p < r.end && pb_next(&r, &g) == 0)
            if (g.num == 1 && g.wt == PB_LEN && g.len == name.len && !memcmp(g.data, name.p, name.len)) return 1;
    }
    return 0;
}

/* GraphProto.input (11): ValueInfoProto { name, type { tensor_type {
 * elem_type, shape { dim { dim_value }... } } } }. */
static int put_input(oz_buf *out, const oz_tensor_info *t)
{
    oz_buf shape = { 0 }, dim = { 0 }, tensor = { 0 }, type = { 0 }, vi = { 0 };
    int rc = 0;
    for (uint32_t i = 0; i < t->ndims && !rc; i++) {
        dim.len = 0;
        rc = oz_buf_varint(&dim, 1 << 3 | PB_VARINT);
        if (!rc) rc = oz_buf_varint(&dim, (uint64_t)t->dims[i]);
        if (!rc) rc = put_len(&shape, 1, dim.p, dim.len);
    }
    if (!rc) rc = oz_buf_varint(&tensor, 1 << 3 | PB_VARINT);
    if (!rc) rc = oz_buf_varint(&tensor, (uint64_t)(uint32_t)t->data_type);
    if (!rc) rc = put_len(&tensor, 2, shape.p ? shape.p : (const uint8_t *)"", shape.len);
    if (!rc) rc = put_len(&type, 1, tensor.p, tensor.len);
    if (!rc) rc = put_len(&vi, 1, t->name.p, t->name.len);
    if (!rc) rc = put_len(&vi, 2, type.p, type.len);
    if (!rc) rc = put_len(out, 11, vi.p, vi.len);
    oz_buf_free(&shape);
    oz_buf_free(&dim);
    oz_buf_free(&tensor);
    oz_buf_free(&type);
    oz_buf_free(&vi);
    return rc;
}

static int to_input(oz_walk *w, const oz_tensor_info *t, const scope *s)
{
    if (s->kind != ONNXZIP_KIND_INITIALIZER || s->depth != 1 || !w->inputs)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: only an initializer of the main graph can become an input", w->path);
    w->dropped = 1;
    return has_input(w, t->name) ? 0 : put_input(w->inputs, t);
}

static int visit_tensor(oz_walk *w, const oz_span *pieces, size_t n, const scope *s)
{
    oz_tensor_info t;
    memset(&t, 0, sizeof t);
    t.msg = pieces[0];
    t.pieces = pieces;
    t.npieces = n;
    t.name = (oz_span){ (const uint8_t *)"", 0 };
    t.kind = s->kind;
    t.graph_depth = s->depth ? s->depth - 1 : 0; /* main graph: 0 */
    t.where = s->where;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) rc = read_tensor(w, pieces[i].p, pieces[i].len, &t);
    if (rc) return rc;
    oz_rewrite rw;
    memset(&rw, 0, sizeof rw);
    if ((rc = w->visit(w->ctx, &t, &rw))) return rc;
    if (!w->out) return 0;
    if (rw.action == OZ_TO_INPUT) return to_input(w, &t, s);
    if (rw.action != OZ_KEEP) return rewrite_tensor(w->out, &t, &rw);
    for (size_t i = 0; i < n && !rc; i++) rc = oz_buf_append(w->out, pieces[i].p, pieces[i].len);
    return rc;
}

static int walk_msg(oz_walk *w, enum msg_type type, const oz_span *pieces, size_t n, scope s);

static int walk_child(oz_walk *w, uint32_t num, const oz_span *pieces, size_t n, enum msg_type child, scope s)
{
    if (!w->out) return walk_msg(w, child, pieces, n, s);
    /* Reserve a 5-byte length (messages are < 2 GiB), then close the gap. */
    oz_buf *o = w->out;
    size_t tag_at = o->len;
    int rc = oz_buf_varint(o, (uint64_t)num << 3 | PB_LEN);
    if (!rc) rc = oz_buf_reserve(o, 5);
    if (rc) return rc;
    size_t at = o->len;
    o->len += 5;
    if ((rc = walk_msg(w, child, pieces, n, s))) return rc;
    if (w->dropped) { /* OZ_TO_INPUT: the field is gone */
        w->dropped = 0;
        o->len = tag_at;
        return 0;
    }
    size_t body = o->len - at - 5;
    if (body > OZ_MAX_MODEL) return oz_err(ONNXZIP_ELIMIT, -1, "%s: rewritten message exceeds 2 GiB", w->path);
    uint8_t len[10];
    size_t k = oz_varint_encode(len, body);
    memmove(o->p + at + k, o->p + at + 5, body);
    memcpy(o->p + at, len, k);
    o->len -= 5 - k;
    return 0;
}

/* Every occurrence of singular field `first->num` from `first` on in `st`:
 * the pieces of the one message protobuf makes of them. *out is `local`
 * (capacity 4) or a malloc'd array the caller frees. */
static int gather(oz_walk *w, pb_stream st, const pb_field *first, oz_span *local, oz_span **out, size_t *n)
{
    size_t cap = 4;
    *out = local;
    *n = 1;
    local[0] = (oz_span){ first->data, first->len };
    pb_field f;
    int k;
    while ((k = pb_stream_next(&st, &f)) == 0) {
        if (f.num != first->num) continue;
        if (f.wt != PB_LEN) return proto_err(w, f.start, "wrong wire type for a message field");
        if (*n == cap) {
            oz_span *grown = malloc(2 * cap * sizeof *grown);
            if (!grown) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (merged message)");
            memcpy(grown, *out, cap * sizeof *grown);
            if (*out != local) free(*out);
            *out = grown;
            cap *= 2;
        }
        (*out)[(*n)++] = (oz_span){ f.data, f.len };
    }
    return k < 0 ? proto_err(w, st.r.p, "bad field tag or length") : 0;
}

/* A child message field: a repeated one is its own message; a singular one
 * is merged from all its occurrences at the first and skipped after. */
static int walk_field(oz_walk *w, enum msg_type type, const pb_stream *st, const pb_field *f, scope cs,
                      enum msg_type child, uint32_t *merged)
{
    if (f->wt != PB_LEN) return proto_err(w, f->start, "wrong wire type for a message field");
    oz_span one = { f->data, f->len };
    if (!is_singular(type, f->num)) return walk_child(w, f->num, &one, 1, child, cs);
    if (*merged & 1u << f->num) return 0; /* already part of the first occurrence */
    *merged |= 1u << f->num;
    oz_span local[4], *pieces;
    size_t n;
    int rc = gather(w, *st, f, local, &pieces, &n);
    if (!rc) rc = walk_child(w, f->num, pieces, n, child, cs);
    if (pieces != local) free(pieces);
    return rc;
}

static int walk_fields(oz_walk *w, enum msg_type type, const oz_span *pieces, size_t n, scope s);

/* A graph, with the inputs OZ_TO_INPUT declares appended after its fields. */
static int walk_graph(oz_walk *w, const oz_span *pieces, size_t n, scope s)
{
    oz_buf inputs = { 0 }, *outer = w->inputs;
    const oz_span *outer_graph = w->graph;
    size_t outer_n = w->ngraph;
    w->inputs = &inputs;
    w->graph = pieces;
    w->ngraph = n;
    int rc = walk_fields(w, T_GRAPH, pieces, n, s);
    if (!rc && w->out && inputs.len) rc = oz_buf_append(w->out, inputs.p, inputs.len);
    oz_buf_free(&inputs);
    w->inputs = outer;
    w->graph = outer_graph;
    w->ngraph = outer_n;
    return rc;
}

static int walk_msg(oz_walk *w, enum msg_type type, const oz_span *pieces, size_t n, scope s)
{
    if (type == T_TENSOR) return visit_tensor(w, pieces, n, &s);
    if (type == T_FUNCTION) s.depth = 1; /* a function body is a top-level graph: its subgraphs are depth 1 */
    if (type == T_GRAPH && ++s.depth > OZ_MAX_GRAPH_DEPTH)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: subgraphs nested deeper than %d levels", w->path,
                      OZ_MAX_GRAPH_DEPTH);
    return type == T_GRAPH ? walk_graph(w, pieces, n, s) : walk_fields(w, type, pieces, n, s);
}

static int walk_fields(oz_walk *w, enum msg_type type, const oz_span *pieces, size_t n, scope s)
{
    pb_stream st;
    pb_stream_init(&st, pieces, n);
    uint32_t merged = 0; /* singular fields (numbers < 32) already walked */
    uint32_t seen[32] = { 0 }; /* occurrences of each child field so far: child fields are < 32 */
    pb_field f;
    int k;
    while ((k = pb_stream_next(&st, &f)) == 0) {
        scope cs = s;
        enum msg_type child = child_type(type, f.num, &cs.kind);
        int rc;
        if (child != T_NONE) {
            oz_where at = { s.where, (int)child, f.num, seen[f.num & 31]++, { f.data, f.len } };
            cs.where = &at;
            rc = walk_field(w, type, &st, &f, cs, child, &merged);
        } else {
            rc = w->out ? oz_buf_append(w->out, f.start, (size_t)(st.r.p - f.start)) : 0;
        }
        if (rc) return rc;
    }
    return k < 0 ? proto_err(w, st.r.p, "bad field tag or length") : 0;
}

int oz_walk_model(oz_walk *w, const uint8_t *model, size_t len)
{
    if (!w->base) w->base = model;
    scope s = { 0, ONNXZIP_KIND_INITIALIZER, NULL };
    oz_span whole = { model, len };
    return walk_msg(w, T_MODEL, &whole, 1, s);
}

/* ---- keys of unnamed tensors (onnxzip_tensor.key) ---- */

/* String field `num` of a message (the last occurrence, as protobuf reads
 * it), up to a NUL byte it may hold, as onnxzip_tensor.name is; empty when
 * absent. The walk has checked the message's framing. */
static oz_span string_field(oz_span msg, uint32_t num)
{
    oz_span s = { (const uint8_t *)"", 0 };
    pb_reader r = { msg.p, msg.p + msg.len };
    pb_field f;
    while (r.p < r.end && pb_next(&r, &f) == 0)
        if (f.num == num && f.wt == PB_LEN) s = (oz_span){ f.data, f.len };
    const uint8_t *nul = s.len ? memchr(s.p, 0, s.len) : NULL;
    if (nul) s.len = (size_t)(nul - s.p);
    return s;
}

static int put_str(oz_buf *out, const char *s)
{
    return oz_buf_append(out, s, strlen(s));
}

/* "/" between segments, none before the first. */
static int put_segment(oz_buf *out, size_t start, const char *s)
{
    int rc = out->len > start ? put_str(out, "/") : 0;
    return rc ? rc : put_str(out, s);
}

/* A name, or `what#index` when the name is empty. */
static int put_named(oz_buf *out, size_t start, oz_span name, const char *what, uint32_t index)
{
    char num[40];
    if (!name.len) {
        snprintf(num, sizeof num, "%s#%lu", what, (unsigned long)index);
        return put_segment(out, start, num);
    }
    int rc = put_segment(out, start, "");
    return rc ? rc : oz_buf_append(out, name.p, name.len);
}

/* The segment a message adds to the key (see onnxzip_tensor.key). */
static int put_where(oz_buf *out, size_t start, const oz_where *at)
{
    char num[24];
    snprintf(num, sizeof num, "[%lu]", (unsigned long)at->index);
    int parent = at->up ? at->up->type : T_MODEL, rc = 0;
    switch (at->type) {
    case T_TRAINING:
        return put_named(out, start, (oz_span){ NULL, 0 }, "training_info", at->index);
    case T_FUNCTION: {
        oz_span domain = string_field(at->msg, 10), name = string_field(at->msg, 1);
        rc = put_segment(out, start, "function:");
        if (!rc && domain.len) rc = oz_buf_append(out, domain.p, domain.len);
        if (!rc && domain.len) rc = put_str(out, ":");
        return rc ? rc : oz_buf_append(out, name.p, name.len);
    }
    case T_NODE:
        return put_named(out, start, string_field(at->msg, 3), "node", at->index);
    case T_ATTR:
        return put_named(out, start, string_field(at->msg, 1), "attribute", at->index);
    case T_GRAPH:
        if (parent == T_TRAINING) return put_segment(out, start, at->field == 1 ? "initialization" : "algorithm");
        return parent == T_ATTR && at->field == 11 ? put_str(out, num) : 0;
    case T_SPARSE:
        if (parent == T_GRAPH) return put_named(out, start, (oz_span){ NULL, 0 }, "sparse_initializer", at->index);
        return at->field == 23 ? put_str(out, num) : 0;
    case T_TENSOR:
        if (parent == T_GRAPH) return put_named(out, start, (oz_span){ NULL, 0 }, "initializer", at->index);
        if (parent == T_SPARSE) return put_segment(out, start, at->field == 1 ? "values" : "indices");
        return at->field == 10 ? put_str(out, num) : 0;
    default:
        return 0;
    }
}

/* Outermost first; the depth is bounded by OZ_MAX_GRAPH_DEPTH. */
static int put_path(oz_buf *out, size_t start, const oz_where *at)
{
    int rc = at->up ? put_path(out, start, at->up) : 0;
    return rc ? rc : put_where(out, start, at);
}

int oz_walk_key(const oz_tensor_info *t, oz_buf *out)
{
    return t->where ? put_path(out, out->len, t->where) : 0;
}

int oz_parse_decimal(oz_span s, uint64_t *out)
{
    if (s.len == 0 || s.len > 20) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < s.len; i++) {
        unsigned d = (unsigned)s.p[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}
