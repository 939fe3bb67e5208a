/* onnxzip_tensor_size(), onnxzip_tensor_read() and onnxzip_tensor_strings():
 * typed fields of every data type read back in ONNX's raw_data form (the
 * expected bytes are written out by hand, little-endian), whole and in
 * ranges; ERANGE without writing anything; foreign tensor pointers; string
 * elements in place (ELIMIT filling the first `cap`); tensors merged from two
 * occurrences in the wire. Each model is opened from a buffer and from an
 * archive. The index found by TensorProto (oz_tensors_of) when the walk is
 * not in byte order. */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "read/tensors.h"
#include "pbwrite.h"
#include "testutil.h"

/* ------------------------------------------------------------------------
 * Hand-encoded protobuf
 * ---------------------------------------------------------------------- */

static void key(oz_buf *b, unsigned num, unsigned wt)
{
    oz_buf_varint(b, (uint64_t)num << 3 | wt);
}

/* TensorProto typed fields */
enum { F_FLOAT = 4, F_INT32 = 5, F_STRING = 6, F_INT64 = 7, F_DOUBLE = 10, F_UINT64 = 11 };

/* A TensorProto head: dims, data_type, name. */
static oz_buf tensor_head(const char *name, int32_t dtype, int64_t dim)
{
    oz_buf t = { 0 };
    pb_vint(&t, 1, (uint64_t)dim);
    pb_vint(&t, 2, (uint64_t)dtype);
    pb_str(&t, 8, name);
    return t;
}

/* Packed varints (int32_data, int64_data, uint64_data): negative values as
 * protobuf writes int32/int64, sign-extended to ten bytes. */
static void packed_varints(oz_buf *t, unsigned field, const int64_t *v, size_t n)
{
    oz_buf p = { 0 };
    for (size_t i = 0; i < n; i++) oz_buf_varint(&p, (uint64_t)v[i]);
    pb_msg(t, field, &p);
}

/* Packed fixed-width little-endian values (float_data, double_data). */
static void packed_fixed(oz_buf *t, unsigned field, const uint8_t *le, size_t n)
{
    pb_len(t, field, le, n);
}

/* The model: ir_version 8, a graph of `init` initializers and `nodes`
 * nodes, opset 13. */
static uint8_t *model_of(oz_buf *graph, size_t *len)
{
    oz_buf m = { 0 };
    pb_vint(&m, 1, 8);
    pb_msg(&m, 7, graph);
    pb_len(&m, 8, (const uint8_t[]){ 2 << 3, 13 }, 2);
    *len = m.len;
    return m.p;
}

/* ------------------------------------------------------------------------
 * Opening: from the buffer, and from an archive holding the model and one
 * entry (so the archive path has a real tensor entry too)
 * ---------------------------------------------------------------------- */

static onnxzip_archive *open_both(int from_archive, const uint8_t *model, size_t len, const char *dir,
                                  const char *file)
{
    onnxzip_archive *a = NULL;
    if (!from_archive) {
        CHECK_RC(onnxzip_open_buffer(model, len, 0, &a), 0);
        return a;
    }
    const char *path = tu_path(dir, file);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_set_model(w, model, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    return a;
}

/* ------------------------------------------------------------------------
 * Typed tensors of every type
 * ---------------------------------------------------------------------- */

typedef struct typed_case {
    const char *name;
    int32_t dtype;
    int64_t dim;
    unsigned field;
    int64_t ints[4]; /* varint fields */
    size_t nints;
    uint8_t fixed[32]; /* float_data / double_data, little-endian */
    size_t nfixed;
    uint8_t want[32]; /* raw_data form */
    size_t nwant;
} typed_case;

#define I(...) { __VA_ARGS__ }, sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), { 0 }, 0
#define FX(...) { 0 }, 0, { __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ })
#define W(...) { __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ })

static const typed_case cases[] = {
    /* float_data: FLOAT 1.0, -2.5; COMPLEX64 (1.0, -2.5) */
    { "f32", 1, 2, F_FLOAT, FX(0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0),
      W(0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0) },
    { "c64", 14, 1, F_FLOAT, FX(0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0),
      W(0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0) },
    /* int32_data: INT32 -1, 0x01020304 */
    { "i32", 6, 2, F_INT32, I(-1, 0x01020304), W(0xff, 0xff, 0xff, 0xff, 0x04, 0x03, 0x02, 0x01) },
    /* one byte per value: INT8 -1 127 -128, UINT8 0 255, BOOL 1 0 1 */
    { "i8", 3, 3, F_INT32, I(-1, 127, -128), W(0xff, 0x7f, 0x80) },
    { "u8", 2, 2, F_INT32, I(0, 255), W(0x00, 0xff) },
    { "bool", 9, 3, F_INT32, I(1, 0, 1), W(0x01, 0x00, 0x01) },
    /* two bytes: INT16 -2 0x1234, UINT16 65535 1, FLOAT16 1.0 -2.0, BFLOAT16 1.0 -2.0 */
    { "i16", 5, 2, F_INT32, I(-2, 0x1234), W(0xfe, 0xff, 0x34, 0x12) },
    { "u16", 4, 2, F_INT32, I(65535, 1), W(0xff, 0xff, 0x01, 0x00) },
    { "f16", 10, 2, F_INT32, I(0x3c00, 0xc000), W(0x00, 0x3c, 0x00, 0xc0) },
    { "bf16", 16, 2, F_INT32, I(0x3f80, 0xc000), W(0x80, 0x3f, 0x00, 0xc0) },
    /* float8 bit patterns, one per int32 */
    { "f8e4m3fn", 17, 2, F_INT32, I(0x38, 0x7e), W(0x38, 0x7e) },
    { "f8e4m3fnuz", 18, 2, F_INT32, I(0x40, 0x80), W(0x40, 0x80) },
    { "f8e5m2", 19, 2, F_INT32, I(0x3c, 0xfb), W(0x3c, 0xfb) },
    { "f8e5m2fnuz", 20, 2, F_INT32, I(0x40, 0x7f), W(0x40, 0x7f) },
    { "f8e8m0", 24, 2, F_INT32, I(0x7f, 0x00), W(0x7f, 0x00) },
    /* 4-bit: two values per int32 element (low nibble first), 3 values in 2
     * bytes; 2-bit: four per element, 5 values in 2 bytes */
    { "u4", 21, 3, F_INT32, I(0x21, 0x0f), W(0x21, 0x0f) },
    { "i4", 22, 3, F_INT32, I(0xf7, 0x08), W(0xf7, 0x08) },
    { "f4e2m1", 23, 3, F_INT32, I(0x72, 0x0f), W(0x72, 0x0f) },
    { "u2", 25, 5, F_INT32, I(0xe4, 0x03), W(0xe4, 0x03) },
    { "i2", 26, 5, F_INT32, I(0x1b, 0x02), W(0x1b, 0x02) },
    /* int64_data: -1, 0x0102030405060708 */
    { "i64", 7, 2, F_INT64, I(-1, 0x0102030405060708),
      W(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01) },
    /* double_data: DOUBLE 1.0 -2.0; COMPLEX128 (1.0, -2.0) */
    { "f64", 11, 2, F_DOUBLE,
      FX(0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0x00, 0xc0),
      W(0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0x00, 0xc0) },
    { "c128", 15, 1, F_DOUBLE,
      FX(0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0x00, 0xc0),
      W(0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0x00, 0xc0) },
    /* uint64_data: UINT32 0xffffffff 0x01020304 (four bytes each), UINT64 */
    { "u32", 12, 2, F_UINT64, I(0xffffffff, 0x01020304), W(0xff, 0xff, 0xff, 0xff, 0x04, 0x03, 0x02, 0x01) },
    { "u64", 13, 2, F_UINT64, I(-1, 0x0102030405060708),
      W(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01) },
};
#define NCASES (sizeof cases / sizeof *cases)

/* onnxzip_tensor.swap_width on a big-endian host, by data type (0 where
 * absent: 1-byte, packed and STRING elements); 0 for all on little-endian. */
static const uint32_t be_swap[29] = { [1] = 4, [4] = 2,  [5] = 2,  [6] = 4,  [7] = 8,  [10] = 2,
                                      [11] = 8, [12] = 4, [13] = 8, [14] = 4, [15] = 8, [16] = 2 };
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BIG 1
#else
#define HOST_BIG 0
#endif

/* Every case as an initializer; float and int32 also unpacked (one field
 * per value, as protobuf may write repeated scalars) under "<name>_u". */
static uint8_t *typed_model(size_t *len)
{
    oz_buf g = { 0 };
    for (size_t i = 0; i < NCASES; i++) {
        const typed_case *c = &cases[i];
        oz_buf t = tensor_head(c->name, c->dtype, c->dim);
        if (c->nfixed) packed_fixed(&t, c->field, c->fixed, c->nfixed);
        else packed_varints(&t, c->field, c->ints, c->nints);
        pb_msg(&g, 5, &t);
    }
    oz_buf t = tensor_head("f32_u", 1, 2); /* unpacked float_data: wire type 5 */
    for (int k = 0; k < 2; k++) {
        key(&t, F_FLOAT, 5);
        oz_buf_append(&t, cases[0].fixed + 4 * k, 4);
    }
    pb_msg(&g, 5, &t);
    t = tensor_head("i8_u", 3, 3); /* unpacked int32_data: wire type 0 */
    for (int k = 0; k < 3; k++) pb_vint(&t, F_INT32, (uint64_t)cases[3].ints[k]);
    pb_msg(&g, 5, &t);
    t = tensor_head("raw", 1, 2); /* inline raw_data: a view, copied */
    pb_len(&t, 9, (const uint8_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8);
    pb_msg(&g, 5, &t);
    t = tensor_head("s", 8, 1); /* a STRING tensor: no raw form */
    pb_str(&t, F_STRING, "x");
    pb_msg(&g, 5, &t);
    t = tensor_head("wrong_field", 3, 1); /* INT8 in int64_data: a field its type does not use */
    packed_varints(&t, F_INT64, (const int64_t[]){ 1 }, 1);
    pb_msg(&g, 5, &t);
    t = tensor_head("empty", 1, 0); /* no data at all: 0 bytes */
    pb_msg(&g, 5, &t);
    return model_of(&g, len);
}

/* Reads tensor `name` whole and in ranges, with canaries around the buffer. */
static void read_typed(onnxzip_archive *a, const char *name, const uint8_t *want, size_t nwant)
{
    const onnxzip_tensor *t = onnxzip_find_tensor(a, name);
    CHECK(t != NULL);
    if (!t) return;
    uint64_t size = 12345;
    CHECK_RC(onnxzip_tensor_size(a, t, &size), 0);
    CHECK(size == nwant);
    uint8_t buf[512];
    CHECK(nwant < sizeof buf);
    if (nwant >= sizeof buf) return;
    memset(buf, 0xAA, sizeof buf);
    CHECK_RC(onnxzip_tensor_read(a, t, 0, nwant, buf), 0);
    /* want is NULL for an empty tensor: memcmp must not see it (UBSan) */
    int same = nwant == 0 || memcmp(buf, want, nwant) == 0;
    CHECK(same);
    if (!same) fprintf(stderr, "  tensor %s: bytes differ\n", name);
    CHECK(buf[nwant] == 0xAA); /* nothing past the payload */
    /* a range inside: bytes 1..nwant-1 */
    if (nwant >= 2) {
        memset(buf, 0xAA, sizeof buf);
        CHECK_RC(onnxzip_tensor_read(a, t, 1, nwant - 2, buf), 0);
        CHECK(memcmp(buf, want + 1, nwant - 2) == 0 && buf[nwant - 2] == 0xAA);
    }
    CHECK_RC(onnxzip_tensor_read(a, t, nwant, 0, buf), 0); /* empty range at the end */
    CHECK_RC(onnxzip_tensor_read(a, t, 0, 0, NULL), 0);
    /* one byte too many, from 0 or from 1, or an offset past the end or
     * wrapping around: ERANGE, nothing written */
    memset(buf, 0xAA, sizeof buf);
    CHECK_RC(onnxzip_tensor_read(a, t, 0, nwant + 1, buf), ONNXZIP_ERANGE);
    CHECK(strstr(onnxzip_last_error()->message, name) != NULL); /* names the tensor */
    CHECK_RC(onnxzip_tensor_read(a, t, 1, nwant, buf), ONNXZIP_ERANGE);
    CHECK_RC(onnxzip_tensor_read(a, t, nwant + 1, 0, buf), ONNXZIP_ERANGE);
    CHECK_RC(onnxzip_tensor_read(a, t, UINT64_MAX, 2, buf), ONNXZIP_ERANGE);
    int untouched = 1;
    for (size_t k = 0; k < sizeof buf; k++) untouched &= buf[k] == 0xAA;
    CHECK(untouched);
    if (nwant) CHECK_RC(onnxzip_tensor_read(a, t, 0, 1, NULL), ONNXZIP_EINVAL); /* NULL destination */
}

static void typed_all(int from_archive, const char *dir)
{
    size_t len;
    uint8_t *model = typed_model(&len);
    onnxzip_archive *a = open_both(from_archive, model, len, dir, "typed.onnxzip");
    if (!a) {
        free(model);
        return;
    }
    for (size_t i = 0; i < NCASES; i++) {
        const onnxzip_tensor *t = onnxzip_find_tensor(a, cases[i].name);
        CHECK(t && t->storage == ONNXZIP_STORAGE_TYPED && t->data == NULL && t->nbytes == 0);
        if (t) CHECK(t->swap_width == (HOST_BIG ? be_swap[cases[i].dtype] : 0));
        read_typed(a, cases[i].name, cases[i].want, cases[i].nwant);
    }
    read_typed(a, "f32_u", cases[0].want, cases[0].nwant);
    read_typed(a, "i8_u", cases[3].want, cases[3].nwant);
    read_typed(a, "empty", NULL, 0);

    /* inline raw_data: the copy equals the view */
    const onnxzip_tensor *raw = onnxzip_find_tensor(a, "raw");
    CHECK(raw && raw->storage == ONNXZIP_STORAGE_INLINE && raw->nbytes == 8);
    read_typed(a, "raw", (const uint8_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8);
    if (raw) CHECK(memcmp(raw->data, (const uint8_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8) == 0);

    uint64_t size = 99;
    uint8_t buf[16];
    const onnxzip_tensor *s = onnxzip_find_tensor(a, "s");
    CHECK_RC(onnxzip_tensor_size(a, s, &size), ONNXZIP_EDTYPE);
    CHECK(size == 0);
    CHECK_RC(onnxzip_tensor_read(a, s, 0, 1, buf), ONNXZIP_EDTYPE);
    CHECK_RC(onnxzip_tensor_read(a, s, 0, 0, buf), ONNXZIP_EDTYPE);
    CHECK_RC(onnxzip_tensor_size(a, onnxzip_find_tensor(a, "wrong_field"), &size), ONNXZIP_EDTYPE);
    CHECK(strstr(onnxzip_last_error()->message, "wrong_field") != NULL);
    CHECK_RC(onnxzip_tensor_read(a, onnxzip_find_tensor(a, "wrong_field"), 0, 1, buf), ONNXZIP_EDTYPE);

    /* NULL arguments */
    const onnxzip_tensor *f = onnxzip_find_tensor(a, "f32");
    CHECK_RC(onnxzip_tensor_size(NULL, f, &size), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_tensor_size(a, NULL, &size), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_tensor_size(a, f, NULL), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_tensor_read(NULL, f, 0, 8, buf), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_tensor_read(a, NULL, 0, 8, buf), ONNXZIP_EINVAL);

    /* a tensor of another archive, and a copy of one of ours: EINVAL, for
     * TYPED and INLINE storage alike */
    onnxzip_archive *b = NULL;
    CHECK_RC(onnxzip_open_buffer(model, len, 0, &b), 0);
    if (b) {
        memset(buf, 0xAA, sizeof buf);
        CHECK_RC(onnxzip_tensor_read(a, onnxzip_find_tensor(b, "f32"), 0, 8, buf), ONNXZIP_EINVAL);
        CHECK_RC(onnxzip_tensor_read(a, onnxzip_find_tensor(b, "raw"), 0, 8, buf), ONNXZIP_EINVAL);
        CHECK(buf[0] == 0xAA && buf[7] == 0xAA);
        CHECK_RC(onnxzip_tensor_size(a, onnxzip_find_tensor(b, "raw"), &size), ONNXZIP_EINVAL);
        CHECK_RC(onnxzip_tensor_size(a, onnxzip_find_tensor(b, "f32"), &size), ONNXZIP_EINVAL);
        onnxzip_close(&b);
    }
    if (f) {
        onnxzip_tensor copy = *f;
        CHECK_RC(onnxzip_tensor_read(a, &copy, 0, 8, buf), ONNXZIP_EINVAL);
    }
    if (raw) {
        onnxzip_tensor copy = *raw;
        CHECK_RC(onnxzip_tensor_read(a, &copy, 0, 8, buf), ONNXZIP_EINVAL);
    }
    onnxzip_close(&a);
    free(model);
}

/* ------------------------------------------------------------------------
 * An entry tensor: the copy equals the mapped view
 * ---------------------------------------------------------------------- */

static void entry_copy(const char *dir)
{
    const char *path = tu_path(dir, "entry.onnxzip");
    onnxzip_writer *w;
    uint8_t payload[300];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 7 + 1);
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "w", payload, sizeof payload), 0);
    tu_tensor tt[] = { { "w", 2, { 300 }, 1, "w", 0 } };
    size_t mlen;
    uint8_t *model = tu_model(tt, 1, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(model);
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    if (!a) return;
    const onnxzip_tensor *t = onnxzip_find_tensor(a, "w");
    CHECK(t && t->storage == ONNXZIP_STORAGE_ENTRY);
    read_typed(a, "w", payload, sizeof payload);
    uint8_t big[300];
    CHECK_RC(onnxzip_tensor_read(a, t, 0, sizeof big, big), 0);
    CHECK(memcmp(big, t->data, 300) == 0);
    CHECK_RC(onnxzip_tensor_read(a, t, 290, 10, big), 0);
    CHECK(memcmp(big, payload + 290, 10) == 0);
    /* strings of a non-string tensor */
    size_t count = 7;
    CHECK_RC(onnxzip_tensor_strings(a, t, NULL, NULL, 0, &count), ONNXZIP_EDTYPE);
    CHECK(count == 0);
    onnxzip_close(&a);
}

/* ------------------------------------------------------------------------
 * STRING tensors, and tensors merged from two occurrences in the wire
 * ---------------------------------------------------------------------- */

/* A Constant node whose attribute `value` holds its TensorProto `t` twice:
 * protobuf merges both occurrences into one tensor (repeated fields
 * concatenated in order). The first piece has the head and `first`, the
 * second only `second`. */
static void merged_constant(oz_buf *g, const char *name, int32_t dtype, int64_t dim, const oz_buf *first,
                            const oz_buf *second)
{
    oz_buf t1 = tensor_head(name, dtype, dim);
    oz_buf_append(&t1, first->p, first->len);
    oz_buf attr = { 0 };
    pb_str(&attr, 1, "value");
    pb_msg(&attr, 5, &t1);
    oz_buf t2 = { 0 };
    oz_buf_append(&t2, second->p, second->len);
    pb_msg(&attr, 5, &t2);
    pb_vint(&attr, 20, 4); /* type: TENSOR */
    oz_buf node = { 0 };
    pb_str(&node, 2, name); /* output */
    pb_str(&node, 4, "Constant");
    pb_msg(&node, 5, &attr);
    pb_msg(g, 1, &node);
}

static uint8_t *strings_model(size_t *len)
{
    oz_buf g = { 0 };
    oz_buf t = tensor_head("strs", 8, 4);
    pb_str(&t, F_STRING, "ab");
    pb_str(&t, F_STRING, "");
    pb_str(&t, F_STRING, "xyz");
    pb_len(&t, F_STRING, "n\0l", 3); /* an embedded NUL: lengths, not terminators */
    pb_msg(&g, 5, &t);
    t = tensor_head("nostr", 8, 0);
    pb_msg(&g, 5, &t);
    t = tensor_head("f", 1, 1);
    packed_fixed(&t, F_FLOAT, (const uint8_t[]){ 0, 0, 0x80, 0x3f }, 4);
    pb_msg(&g, 5, &t);
    /* merged: strings "one", "" + "three" */
    oz_buf s1 = { 0 }, s2 = { 0 };
    pb_str(&s1, F_STRING, "one");
    pb_str(&s1, F_STRING, "");
    pb_str(&s2, F_STRING, "three");
    merged_constant(&g, "mstr", 8, 3, &s1, &s2);
    oz_buf_free(&s1), oz_buf_free(&s2);
    /* merged float_data: 1.0 + (-2.5, 0.5) */
    oz_buf f1 = { 0 }, f2 = { 0 };
    packed_fixed(&f1, F_FLOAT, (const uint8_t[]){ 0, 0, 0x80, 0x3f }, 4);
    packed_fixed(&f2, F_FLOAT, (const uint8_t[]){ 0, 0, 0x20, 0xc0, 0, 0, 0, 0x3f }, 8);
    merged_constant(&g, "mf", 1, 3, &f1, &f2);
    oz_buf_free(&f1), oz_buf_free(&f2);
    /* merged int32_data as INT16: -1 + 2 */
    oz_buf i1 = { 0 }, i2 = { 0 };
    packed_varints(&i1, F_INT32, (const int64_t[]){ -1 }, 1);
    packed_varints(&i2, F_INT32, (const int64_t[]){ 2 }, 1);
    merged_constant(&g, "mi16", 5, 2, &i1, &i2);
    oz_buf_free(&i1), oz_buf_free(&i2);
    return model_of(&g, len);
}

static int span_is(const void *p, size_t n, const char *want, size_t wn)
{
    return p && n == wn && memcmp(p, want, n) == 0;
}

static void strings_all(int from_archive, const char *dir)
{
    size_t len;
    uint8_t *model = strings_model(&len);
    onnxzip_archive *a = open_both(from_archive, model, len, dir, "strings.onnxzip");
    if (!a) {
        free(model);
        return;
    }
    const void *mb;
    size_t ml;
    CHECK_RC(onnxzip_model_bytes(a, &mb, &ml), 0);
    const uint8_t *lo = mb, *hi = lo + ml;

    const onnxzip_tensor *t = onnxzip_find_tensor(a, "strs");
    CHECK(t && t->storage == ONNXZIP_STORAGE_TYPED);
    if (t) CHECK(t->swap_width == 0); /* strings are bytes */
    size_t count = 99;
    CHECK_RC(onnxzip_tensor_strings(a, t, NULL, NULL, 0, &count), 0); /* count query */
    CHECK(count == 4);
    const void *data[6];
    size_t lens[6];
    for (int k = 0; k < 6; k++) data[k] = (const void *)&count, lens[k] = 777;
    CHECK_RC(onnxzip_tensor_strings(a, t, data, lens, 6, &count), 0);
    CHECK(count == 4);
    CHECK(span_is(data[0], lens[0], "ab", 2));
    CHECK(lens[1] == 0);
    CHECK(span_is(data[2], lens[2], "xyz", 3));
    CHECK(span_is(data[3], lens[3], "n\0l", 3));
    for (int k = 0; k < 4; k++) /* in place: inside the model bytes, not copied */
        CHECK(lens[k] == 0 || ((const uint8_t *)data[k] >= lo && (const uint8_t *)data[k] + lens[k] <= hi));
    CHECK(data[4] == (const void *)&count && lens[4] == 777 && lens[5] == 777); /* untouched */

    /* cap 2 < 4: ELIMIT, the first two filled, the rest untouched */
    for (int k = 0; k < 6; k++) data[k] = (const void *)&count, lens[k] = 777;
    CHECK_RC(onnxzip_tensor_strings(a, t, data, lens, 2, &count), ONNXZIP_ELIMIT);
    CHECK(count == 4);
    CHECK(span_is(data[0], lens[0], "ab", 2) && lens[1] == 0);
    CHECK(data[2] == (const void *)&count && lens[2] == 777);
    CHECK(strstr(onnxzip_last_error()->message, "strs") != NULL);

    /* no strings */
    count = 5;
    CHECK_RC(onnxzip_tensor_strings(a, onnxzip_find_tensor(a, "nostr"), data, lens, 6, &count), 0);
    CHECK(count == 0);

    /* not a string tensor; NULL arrays with a capacity */
    CHECK_RC(onnxzip_tensor_strings(a, onnxzip_find_tensor(a, "f"), data, lens, 6, &count), ONNXZIP_EDTYPE);
    CHECK(strstr(onnxzip_last_error()->message, "'f'") != NULL);
    CHECK_RC(onnxzip_tensor_strings(a, t, NULL, lens, 6, &count), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_tensor_strings(a, t, data, NULL, 6, &count), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_tensor_strings(a, t, data, lens, 6, NULL), ONNXZIP_EINVAL);
    onnxzip_tensor copy = *t;
    CHECK_RC(onnxzip_tensor_strings(a, &copy, data, lens, 6, &count), ONNXZIP_EINVAL);

    /* merged: one tensor whose elements come from both pieces, in order */
    const onnxzip_tensor *m = onnxzip_find_tensor(a, "mstr");
    CHECK(m && m->kind == ONNXZIP_KIND_ATTRIBUTE && m->ndims == 1 && m->dims[0] == 3);
    CHECK(onnxzip_tensor_count(a) == 6); /* the two occurrences are one tensor */
    CHECK_RC(onnxzip_tensor_strings(a, m, data, lens, 6, &count), 0);
    CHECK(count == 3);
    CHECK(span_is(data[0], lens[0], "one", 3) && lens[1] == 0 && span_is(data[2], lens[2], "three", 5));
    const onnxzip_tensor *mf = onnxzip_find_tensor(a, "mf");
    CHECK(mf && mf->storage == ONNXZIP_STORAGE_TYPED && mf->data_type == 1);
    read_typed(a, "mf", (const uint8_t[]){ 0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0, 0, 0, 0, 0x3f }, 12);
    read_typed(a, "mi16", (const uint8_t[]){ 0xff, 0xff, 0x02, 0x00 }, 4);
    onnxzip_close(&a);
    free(model);
}

/* ------------------------------------------------------------------------
 * oz_tensors_of(): a graph given in two pieces with a training graph
 * between them. The walk visits the merged graph at its first piece (A, C),
 * then the training graph (B): not byte order, which the lookup must not
 * depend on.
 * ---------------------------------------------------------------------- */

static int check_of(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    const oz_tensors *ts = ((const void **)ctx)[0];
    const uint8_t *model = ((const void **)ctx)[1];
    (void)rw;
    const onnxzip_tensor *v = oz_tensors_of(ts, model, t);
    CHECK(v && strlen(v->name) == t->name.len && memcmp(v->name, t->name.p, t->name.len) == 0);
    return 0;
}

static oz_buf graph_with(const char *name)
{
    oz_buf g = { 0 }, t = tensor_head(name, 2, 1);
    pb_len(&t, 9, "x", 1);
    pb_msg(&g, 5, &t);
    return g;
}

static void index_out_of_order(void)
{
    oz_buf m = { 0 }, g1 = graph_with("A"), g2 = graph_with("C"), tg = graph_with("B"), ti = { 0 };
    pb_vint(&m, 1, 8);
    pb_msg(&m, 7, &g1);
    pb_msg(&ti, 1, &tg);  /* TrainingInfoProto.initialization */
    pb_msg(&m, 20, &ti);  /* ModelProto.training_info */
    pb_msg(&m, 7, &g2);   /* the graph again: merged with the first */
    pb_len(&m, 8, (const uint8_t[]){ 2 << 3, 13 }, 2);
    oz_tensors ts;
    CHECK_RC(oz_tensors_build_classic(&ts, NULL, m.p, m.len, "merged.onnx"), 0);
    CHECK(ts.n == 3 && ts.by_msg != NULL);
    if (ts.n == 3) CHECK(!strcmp(ts.v[0].name, "A") && !strcmp(ts.v[1].name, "C") && !strcmp(ts.v[2].name, "B"));
    const void *ctx[2] = { &ts, m.p };
    oz_walk w = { .visit = check_of, .ctx = ctx, .path = "merged.onnx", .base = m.p };
    CHECK_RC(oz_walk_model(&w, m.p, m.len), 0);
    oz_tensor_info foreign = { .msg = { m.p + 1, 1 } }; /* no TensorProto starts there */
    CHECK(oz_tensors_of(&ts, m.p, &foreign) == NULL);
    oz_tensors_free(&ts);
    oz_buf_free(&m);

    /* In byte order: no permutation kept. */
    oz_buf g = graph_with("A");
    size_t len;
    uint8_t *model = model_of(&g, &len);
    CHECK_RC(oz_tensors_build_classic(&ts, NULL, model, len, "plain.onnx"), 0);
    CHECK(ts.n == 1 && ts.by_msg == NULL);
    oz_tensors_free(&ts);
    free(model);
}

int main(void)
{
    char *dir = tu_tmpdir();
    for (int from_archive = 0; from_archive < 2; from_archive++) {
        typed_all(from_archive, dir);
        strings_all(from_archive, dir);
    }
    entry_copy(dir);
    index_out_of_order();
    tu_rmtree(dir);
    free(dir);
    return tu_finish("tensor_read");
}
