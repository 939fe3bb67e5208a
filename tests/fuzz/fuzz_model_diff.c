/* fuzz_model_diff: the library's reading of a model against protobuf-c's.
 *
 * The input is a serialized ModelProto. It is opened twice: as a classic
 * .onnx (onnxzip_open_buffer() on the bytes) and as the __MODEL_PROTO of an
 * archive built here around it, whose tensor entries are "a" (256 bytes) and
 * "b" (4096 bytes). Whenever the library accepts it, protobuf-c
 * (onnx__model_proto__unpack, which merges repeated singular messages as
 * protobuf does) must parse the same bytes, and the TensorProtos found by a
 * walk of that parse must be the library's tensor views one for one: kind,
 * graph depth, name, data type, dims, storage and where the bytes are (entry,
 * absolute offset, length; for raw_data, the bytes themselves). The byte
 * length is also recomputed here from protobuf-c's dims and data type, and an
 * external range must lie inside its entry. Any difference aborts: a runtime
 * that trusts a verified archive would read what the library did not check. */
#include "fuzz_util.h"

#include <onnxzip/onnxzip.h>
#include "onnx.pb-c.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------------------
 * One record per tensor, as text, compared after sorting (the two sides
 * visit tensors in different orders: wire order against field order). */

typedef struct recs {
    char **v;
    size_t n, cap;
} recs;

static void rec_add(recs *r, const char *s)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        if (!r->v) abort();
    }
    if (!(r->v[r->n++] = strdup(s))) abort();
}

static void recs_free(recs *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->v[i]);
    free(r->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Appends printf-style text to a fixed record buffer (names are cut, not
 * overflowed: both sides cut the same way). */
typedef struct line {
    char s[1024];
    size_t n;
} line;

__attribute__((format(printf, 2, 3))) static void put(line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->s + l->n, sizeof l->s - l->n, fmt, ap);
    va_end(ap);
    if (k > 0) l->n += (size_t)k < sizeof l->s - l->n ? (size_t)k : sizeof l->s - l->n - 1;
}

static void put_head(line *l, int kind, unsigned depth, const char *name, int32_t dtype, size_t ndims,
                     const int64_t *dims)
{
    put(l, "kind=%d depth=%u name=%.200s dtype=%d dims=[", kind, depth, name, dtype);
    for (size_t i = 0; i < ndims; i++) put(l, "%lld,", (long long)dims[i]);
    put(l, "]");
}

/* ------------------------------------------------------------------------
 * The archive built around the model. */

#define ALIGN 64
enum { N_ENTRIES = 2 };
static const char *const entry_name[N_ENTRIES] = { "a", "b" };
static const size_t entry_size[N_ENTRIES] = { 256, 4096 };

typedef struct archive_buf {
    uint8_t *p;
    size_t len, cap;
    uint64_t data_offset[N_ENTRIES + 1];
} archive_buf;

static void ab_put(archive_buf *b, const void *d, size_t n)
{
    if (b->len + n > b->cap) {
        while (b->len + n > b->cap) b->cap = b->cap ? 2 * b->cap : 8192;
        if (!(b->p = realloc(b->p, b->cap))) abort();
    }
    if (n) memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A stored entry whose data starts on a 64-byte boundary (alignment field
 * 0xD935, spec 4.3). Returns its local header offset. */
static uint64_t ab_entry(archive_buf *b, const char *name, const uint8_t *d, size_t n, uint32_t crc, size_t i)
{
    uint64_t h = b->len;
    size_t nl = strlen(name), base = h + 30 + nl + 6, pad = (ALIGN - base % ALIGN) % ALIGN;
    uint8_t hdr[30 + 8] = { 0 };
    le(hdr, 0x04034b50, 4);
    le(hdr + 4, 10, 2);
    le(hdr + 14, crc, 4);
    le(hdr + 18, n, 4);
    le(hdr + 22, n, 4);
    le(hdr + 26, nl, 2);
    le(hdr + 28, 6 + pad, 2);
    ab_put(b, hdr, 30);
    ab_put(b, name, nl);
    uint8_t extra[6 + ALIGN] = { 0 };
    le(extra, 0xD935, 2);
    le(extra + 2, 2 + pad, 2);
    le(extra + 4, ALIGN, 2);
    ab_put(b, extra, 6 + pad);
    b->data_offset[i] = b->len;
    ab_put(b, d, n);
    return h;
}

static void ab_central(archive_buf *b, const char *name, size_t n, uint32_t crc, uint64_t h)
{
    uint8_t c[46] = { 0 };
    size_t nl = strlen(name);
    le(c, 0x02014b50, 4);
    le(c + 4, 0x032D, 2);
    le(c + 6, 10, 2);
    le(c + 16, crc, 4);
    le(c + 20, n, 4);
    le(c + 24, n, 4);
    le(c + 28, nl, 2);
    le(c + 42, h, 4);
    ab_put(b, c, 46);
    ab_put(b, name, nl);
}

static void build_archive(archive_buf *b, const uint8_t *model, size_t size)
{
    static uint8_t payload[4096];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 131 + 7);
    uint64_t hdr[N_ENTRIES + 1];
    uint32_t crc[N_ENTRIES + 1];
    for (size_t i = 0; i < N_ENTRIES; i++) {
        crc[i] = (uint32_t)crc32(0, payload, (uInt)entry_size[i]);
        hdr[i] = ab_entry(b, entry_name[i], payload, entry_size[i], crc[i], i);
    }
    crc[N_ENTRIES] = (uint32_t)crc32(0, model, (uInt)size);
    hdr[N_ENTRIES] = ab_entry(b, "__MODEL_PROTO", model, size, crc[N_ENTRIES], N_ENTRIES);
    uint64_t cd = b->len;
    for (size_t i = 0; i < N_ENTRIES; i++) ab_central(b, entry_name[i], entry_size[i], crc[i], hdr[i]);
    ab_central(b, "__MODEL_PROTO", size, crc[N_ENTRIES], hdr[N_ENTRIES]);
    uint8_t eocd[22] = { 0 };
    le(eocd, 0x06054b50, 4);
    le(eocd + 8, N_ENTRIES + 1, 2);
    le(eocd + 10, N_ENTRIES + 1, 2);
    le(eocd + 12, b->len - cd, 4);
    le(eocd + 16, cd, 4);
    ab_put(b, eocd, 22);
}

/* ------------------------------------------------------------------------
 * protobuf-c's side: every TensorProto of the parsed model. */

typedef struct pc_walk {
    recs *out;
    const archive_buf *ab; /* NULL: a classic model (no entries) */
} pc_walk;

/* Bits per element, written out independently of the library's table. */
static unsigned dtype_bits(int32_t t)
{
    switch (t) {
    case 1: case 6: case 12: return 32;                           /* FLOAT INT32 UINT32 */
    case 2: case 3: case 9: return 8;                             /* UINT8 INT8 BOOL */
    case 4: case 5: case 10: case 16: return 16;                  /* UINT16 INT16 FLOAT16 BFLOAT16 */
    case 7: case 11: case 13: case 14: return 64;                 /* INT64 DOUBLE UINT64 COMPLEX64 */
    case 15: return 128;                                          /* COMPLEX128 */
    case 17: case 18: case 19: case 20: case 24: return 8;        /* FLOAT8 x4, FLOAT8E8M0 */
    case 21: case 22: case 23: return 4;                          /* UINT4 INT4 FLOAT4E2M1 */
    case 25: case 26: return 2;                                   /* UINT2 INT2 */
    default: return 0;
    }
}

static const char *kv(const Onnx__TensorProto *t, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < t->n_external_data; i++)
        if (t->external_data[i]->key && !strcmp(t->external_data[i]->key, key)) v = t->external_data[i]->value;
    return v;
}

static void pc_tensor(pc_walk *w, const Onnx__TensorProto *t, int kind, unsigned depth)
{
    line l = { .n = 0 };
    put_head(&l, kind, depth, t->name ? t->name : "", t->data_type, t->n_dims, t->dims);
    uint64_t elems = 1, bits = dtype_bits(t->data_type), nbytes;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0) fuzz_fail("accepted a tensor that protobuf-c says has a negative dim");
        if (t->dims[i] && elems > UINT64_MAX / (uint64_t)t->dims[i]) fuzz_fail("accepted an overflowing shape");
        elems *= (uint64_t)t->dims[i];
    }
    if (bits >= 8) {
        if (elems > UINT64_MAX / (bits / 8)) fuzz_fail("accepted an overflowing byte size");
        nbytes = elems * (bits / 8);
    } else { /* sub-byte types: packed, the last byte partly used */
        nbytes = bits ? elems / (8 / bits) + (elems % (8 / bits) != 0) : 0;
    }
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        const char *loc = kv(t, "location"), *off = kv(t, "offset"), *len = kv(t, "length");
        if (!w->ab || !loc) fuzz_fail("accepted an EXTERNAL tensor without an archive entry");
        size_t e = 0;
        while (e < N_ENTRIES && strcmp(entry_name[e], loc)) e++;
        if (e == N_ENTRIES) fuzz_fail("accepted an EXTERNAL tensor naming no entry (protobuf-c's location)");
        uint64_t o = off ? strtoull(off, NULL, 10) : 0;
        uint64_t n = len ? strtoull(len, NULL, 10) : entry_size[e] - o;
        if (o > entry_size[e] || n > entry_size[e] - o) fuzz_fail("accepted a range past its entry (protobuf-c's keys)");
        if (!bits || n != nbytes) fuzz_fail("accepted an EXTERNAL length that protobuf-c's dims and type disagree with");
        put(&l, " entry=%s at=%llu n=%llu", loc, (unsigned long long)(w->ab->data_offset[e] + o),
            (unsigned long long)n);
    } else if (t->has_raw_data) {
        if (!bits || t->raw_data.len != nbytes) fuzz_fail("accepted raw_data that protobuf-c's dims and type disagree with");
        put(&l, " inline n=%zu h=%016llx", t->raw_data.len,
            (unsigned long long)fnv1a(t->raw_data.data, t->raw_data.len));
    } else {
        put(&l, " typed");
    }
    rec_add(w->out, l.s);
}

static void pc_graph(pc_walk *w, const Onnx__GraphProto *g, unsigned depth);

static void pc_sparse(pc_walk *w, const Onnx__SparseTensorProto *s, unsigned depth)
{
    if (s->values) pc_tensor(w, s->values, ONNXZIP_KIND_SPARSE_VALUES, depth);
    if (s->indices) pc_tensor(w, s->indices, ONNXZIP_KIND_SPARSE_INDICES, depth);
}

static void pc_attr(pc_walk *w, const Onnx__AttributeProto *a, unsigned depth)
{
    if (a->t) pc_tensor(w, a->t, ONNXZIP_KIND_ATTRIBUTE, depth);
    for (size_t i = 0; i < a->n_tensors; i++) pc_tensor(w, a->tensors[i], ONNXZIP_KIND_ATTRIBUTE, depth);
    if (a->g) pc_graph(w, a->g, depth + 1);
    for (size_t i = 0; i < a->n_graphs; i++) pc_graph(w, a->graphs[i], depth + 1);
    if (a->sparse_tensor) pc_sparse(w, a->sparse_tensor, depth);
    for (size_t i = 0; i < a->n_sparse_tensors; i++) pc_sparse(w, a->sparse_tensors[i], depth);
}

static void pc_nodes(pc_walk *w, Onnx__NodeProto *const *nodes, size_t n, unsigned depth)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < nodes[i]->n_attribute; k++) pc_attr(w, nodes[i]->attribute[k], depth);
}

static void pc_graph(pc_walk *w, const Onnx__GraphProto *g, unsigned depth)
{
    pc_nodes(w, g->node, g->n_node, depth);
    for (size_t i = 0; i < g->n_initializer; i++) pc_tensor(w, g->initializer[i], ONNXZIP_KIND_INITIALIZER, depth);
    for (size_t i = 0; i < g->n_sparse_initializer; i++) pc_sparse(w, g->sparse_initializer[i], depth);
}

static void pc_model(pc_walk *w, const Onnx__ModelProto *m)
{
    if (m->graph) pc_graph(w, m->graph, 0);
    for (size_t i = 0; i < m->n_training_info; i++) {
        if (m->training_info[i]->initialization) pc_graph(w, m->training_info[i]->initialization, 0);
        if (m->training_info[i]->algorithm) pc_graph(w, m->training_info[i]->algorithm, 0);
    }
    for (size_t i = 0; i < m->n_functions; i++) {
        const Onnx__FunctionProto *f = m->functions[i];
        pc_nodes(w, f->node, f->n_node, 0);
        for (size_t k = 0; k < f->n_attribute_proto; k++) pc_attr(w, f->attribute_proto[k], 0);
    }
}

/* ------------------------------------------------------------------------
 * The library's side, and the comparison. */

static void lib_records(const onnxzip_archive *a, recs *out)
{
    for (size_t i = 0; i < onnxzip_tensor_count(a); i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        line l = { .n = 0 };
        put_head(&l, (int)t->kind, t->graph_depth, t->name, t->data_type, t->ndims, t->dims);
        if (t->storage == ONNXZIP_STORAGE_ENTRY)
            put(&l, " entry=%s at=%llu n=%llu", t->entry, (unsigned long long)t->file_offset,
                (unsigned long long)t->nbytes);
        else if (t->storage == ONNXZIP_STORAGE_INLINE)
            put(&l, " inline n=%llu h=%016llx", (unsigned long long)t->nbytes,
                (unsigned long long)fnv1a(t->data, (size_t)t->nbytes));
        else if (t->storage == ONNXZIP_STORAGE_TYPED)
            put(&l, " typed");
        else
            fuzz_fail("a buffer-opened model has a side-file tensor");
        rec_add(out, l.s);
    }
}

static void compare(const char *what, const uint8_t *buf, size_t len, const archive_buf *ab, const uint8_t *model,
                    size_t model_len)
{
    onnxzip_archive *a = NULL;
    if (onnxzip_open_buffer(buf, len, 0, &a) != 0) return;
    if (!ab && onnxzip_archive_layout(a) != ONNXZIP_LAYOUT_CLASSIC) { /* the input is itself a zip */
        onnxzip_close(&a);
        return;
    }
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, model_len, model);
    if (!m) {
        fprintf(stderr, "fuzz_model_diff (%s): the library accepted a model protobuf-c cannot parse\n", what);
        abort();
    }
    recs lib = { 0 }, pc = { 0 };
    pc_walk w = { &pc, ab };
    pc_model(&w, m);
    lib_records(a, &lib);
    if (lib.n) qsort(lib.v, lib.n, sizeof *lib.v, cmp_str);
    if (pc.n) qsort(pc.v, pc.n, sizeof *pc.v, cmp_str);
    for (size_t i = 0; i < lib.n || i < pc.n; i++) {
        const char *x = i < lib.n ? lib.v[i] : "(none)", *y = i < pc.n ? pc.v[i] : "(none)";
        if (strcmp(x, y)) {
            fprintf(stderr, "fuzz_model_diff (%s): tensor views differ from protobuf-c's parse\n  library:    %s\n"
                    "  protobuf-c: %s\n  (%zu tensors against %zu)\n", what, x, y, lib.n, pc.n);
            abort();
        }
    }
    recs_free(&lib);
    recs_free(&pc);
    onnx__model_proto__free_unpacked(m, NULL);
    onnxzip_close(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    compare("classic", data, size, NULL, data, size);
    archive_buf ab = { 0 };
    build_archive(&ab, data, size);
    compare("archive", ab.p, ab.len, &ab, ab.p + ab.data_offset[N_ENTRIES], size);
    free(ab.p);
    return 0;
}
