#include <stdio.h>

#include "common/internal.h"
#include "onnx/onnx_schema.h"
#include "onnx/pbwire.h"
#include "onnx_schema_table.h"

/* Singular message fields of a oneof-holding type seen in one message, and
 * whether a oneof member was set in any occurrence so far. */
#define ONEOF_SLOTS 8

typedef struct frame {
    const oz_schema_message *m;
    pb_reader r;
    unsigned n_seen;
    uint32_t seen[ONEOF_SLOTS];
    uint8_t member_set[ONEOF_SLOTS];
} frame;

const oz_schema_message *oz_schema_message_at(int i)
{
    return i >= 0 && i < OZ_SCHEMA_N_MESSAGES ? &oz_schema_messages[i] : NULL;
}

int oz_schema_count(void)
{
    return OZ_SCHEMA_N_MESSAGES;
}

int oz_schema_model_index(void)
{
    return OZ_SCHEMA_MODEL_PROTO;
}

const oz_schema_field *oz_schema_field_of(const oz_schema_message *m, uint32_t num)
{
    size_t lo = 0, hi = m->n_fields; /* binary search: fields are sorted by number */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->fields[mid].num == num) return &m->fields[mid];
        if (m->fields[mid].num < num) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* The wire type protobuf requires of one unpacked value. */
static int wire_type_of(const oz_schema_field *fd)
{
    switch (fd->kind) {
    case OZ_SK_I32: return PB_I32;
    case OZ_SK_I64: return PB_I64;
    case OZ_SK_LEN: case OZ_SK_MESSAGE: return PB_LEN;
    default: return PB_VARINT; /* the varint types, bool and enum */
    }
}

/* A packed run of values must hold whole values, as protobuf-c checks. */
static int packed_ok(const oz_schema_field *fd, const uint8_t *p, size_t n)
{
    int wt = wire_type_of(fd);
    if (wt == PB_I32) return n % 4 == 0;
    if (wt == PB_I64) return n % 8 == 0;
    if (fd->kind == OZ_SK_BOOL) {
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

static int field_ok(const oz_schema_field *fd, const pb_field *f)
{
    int want = wire_type_of(fd);
    if (f->wt == want) return 1;
    return (fd->flags & OZ_SF_REPEATED) && want != PB_LEN && f->wt == PB_LEN && packed_ok(fd, f->data, f->len);
}

/* Whether one occurrence of a message sets a member of its oneof. Malformed
 * fields are left to the walk, which reaches them next. */
static int sets_oneof(const oz_schema_message *m, const pb_field *f)
{
    pb_reader r = { f->data, f->data + f->len };
    pb_field g;
    while (r.p < r.end && !pb_next(&r, &g)) {
        const oz_schema_field *fd = oz_schema_field_of(m, g.num);
        if (fd && (fd->flags & OZ_SF_ONEOF)) return 1;
    }
    return 0;
}

/* protobuf-c 1.4 fails to merge two occurrences of a singular message with a
 * oneof when neither the earlier ones nor this one set a member of it (e.g.
 * ValueInfoProto.type given twice, empty): the parse of the whole model
 * fails. Such a model is refused, naming the field, so that every model
 * accepted here also parses in onnxzip_model_proto(). Returns 1 to refuse. */
static int unmergeable(frame *fr, const oz_schema_field *fd, const pb_field *f)
{
    const oz_schema_message *sub = &oz_schema_messages[fd->message];
    if ((fd->flags & OZ_SF_REPEATED) || !sub->has_oneof) return 0;
    int set = sets_oneof(sub, f);
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
                  (unsigned long long)(at - model), what, num, fr->m->short_name);
}

int oz_check_schema(const char *path, const uint8_t *model, size_t len, uint64_t base_offset)
{
    frame st[OZ_MAX_MSG_DEPTH];
    unsigned top = 0;
    st[0] = (frame){ .m = &oz_schema_messages[OZ_SCHEMA_MODEL_PROTO], .r = { model, model + len } };
    for (;;) {
        frame *fr = &st[top];
        if (fr->r.p >= fr->r.end) {
            if (top-- == 0) return 0;
            continue;
        }
        pb_field f;
        if (pb_next(&fr->r, &f))
            return fail(path, ONNXZIP_EPROTO, model, fr->r.p, base_offset, "bad field tag or length", fr, 0);
        const oz_schema_field *fd = oz_schema_field_of(fr->m, f.num);
        if (!fd) continue; /* unknown fields are kept as they are */
        if (!field_ok(fd, &f)) {
            int packed = f.wt == PB_LEN && (fd->flags & OZ_SF_REPEATED) && wire_type_of(fd) != PB_LEN;
            return fail(path, ONNXZIP_EPROTO, model, f.start, base_offset,
                        packed ? "malformed packed values" : "wrong wire type", fr, f.num);
        }
        if (fd->kind != OZ_SK_MESSAGE) continue;
        if (unmergeable(fr, fd, &f))
            return fail(path, ONNXZIP_EPROTO, model, f.start, base_offset,
                        "a singular message given again with no member of its oneof set in any copy "
                        "(protobuf-c cannot merge it)", fr, f.num);
        if (top + 1 >= OZ_MAX_MSG_DEPTH)
            return oz_err(ONNXZIP_ELIMIT, (int64_t)(base_offset + (uint64_t)(f.start - model)),
                          "%s: messages nested deeper than %d levels at byte %llu of the model", path,
                          OZ_MAX_MSG_DEPTH, (unsigned long long)(f.start - model));
        st[++top] = (frame){ .m = &oz_schema_messages[fd->message], .r = { f.data, f.data + f.len } };
    }
}
