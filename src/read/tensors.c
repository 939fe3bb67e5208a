#include <stdio.h>
#include <stdlib.h>

#include "onnx/dtype.h"
#include "onnx/model_fields.h"
#include "read/extdata.h"
#include "onnx/onnx_schema.h"
#include "onnx/onnx_walk.h"
#include "read/tensors.h"

struct oz_arena_block {
    oz_arena_block *next;
    size_t used, cap;
    max_align_t data[];
};

/* Names and dims live in a few large blocks, freed together at close. */
static void *arena_alloc(oz_tensors *ts, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    oz_arena_block *b = ts->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = ts->arena;
        b->used = 0;
        b->cap = cap;
        ts->arena = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

typedef struct build {
    oz_tensors *ts;
    const oz_zip *z;
    oz_extdata *ext;
    const uint8_t *file, *model;
    uint64_t model_offset;
    const char *path;
    int keep; /* an index for a handle (not oz_tensors_check()) */
    const char *key; /* the current tensor's key (onnxzip_tensor.key) */
    oz_buf scratch;  /* for keys */
} build;

static int fail(build *b, const oz_tensor_info *t, int status, const char *fmt, const char *detail)
{
    char name[OZ_PRINTABLE_CAP];
    if (t->name.len || !b->key) oz_printable(t->name.p, t->name.len, name, sizeof name);
    else oz_printable((const uint8_t *)b->key, strlen(b->key), name, sizeof name); /* unnamed: its path */
    return oz_err(status, (int64_t)(b->model_offset + (uint64_t)(t->msg.p - b->model)), "%s: tensor '%s': %s%s",
                  b->path, name, fmt, detail ? detail : "");
}

static int check_size(build *b, const oz_tensor_info *t, uint64_t nbytes)
{
    uint64_t n, expect = 0;
    if (oz_dims_product(t->dims, t->ndims, &n))
        return fail(b, t, ONNXZIP_ESIZE, "dims are negative or their product overflows", NULL);
    /* The byte count may overflow u64 although the element count does not:
     * `expect` is then unset and must not be printed (valgrind: uninitialised). */
    if (oz_dtype_nbytes(t->data_type, n, &expect)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%llu elements of %s: the byte size overflows u64", (unsigned long long)n,
                 onnxzip_dtype_name(t->data_type));
        return fail(b, t, ONNXZIP_ESIZE, msg, NULL);
    }
    if (expect != nbytes) {
        char msg[160];
        snprintf(msg, sizeof msg, "%llu data bytes, but %llu elements of %s need %llu",
                 (unsigned long long)nbytes, (unsigned long long)n, onnxzip_dtype_name(t->data_type),
                 (unsigned long long)expect);
        return fail(b, t, ONNXZIP_ESIZE, msg, NULL);
    }
    return 0;
}

static int resolve_external(build *b, const oz_tensor_info *t, onnxzip_tensor *v)
{
    char shown[OZ_PRINTABLE_CAP];
    if (t->has_raw || t->has_typed)
        return fail(b, t, ONNXZIP_EREF, "has an EXTERNAL location and also raw_data or typed data", NULL);
    if (t->repeated_key) return fail(b, t, ONNXZIP_EREF, "an external_data key appears twice", NULL);
    if (t->has_unknown_key)
        return fail(b, t, ONNXZIP_EREF, "unknown external_data key: ",
                    oz_printable(t->unknown_key.p, t->unknown_key.len, shown, sizeof shown));
    if (!t->has_location) return fail(b, t, ONNXZIP_EREF, "EXTERNAL data without a location", NULL);
#define LOCATION oz_printable(t->location.p, t->location.len, shown, sizeof shown)
    const oz_zentry *e = oz_zip_resolve(b->z, (const char *)t->location.p, t->location.len);
    if (!e || e->cls != OZ_NAME_TENSOR) return fail(b, t, ONNXZIP_EREF, "references no tensor entry: ", LOCATION);
    uint64_t off = 0, len = 0;
    if ((t->has_offset && oz_parse_decimal(t->offset, &off)) || (t->has_length && oz_parse_decimal(t->length, &len)))
        return fail(b, t, ONNXZIP_EREF, "offset or length is not a decimal number", NULL);
    if (off > e->pub.size || (t->has_length && len > e->pub.size - off))
        return fail(b, t, ONNXZIP_ERANGE, "offset + length run past the end of entry ", LOCATION);
#undef LOCATION
    if (!t->has_length) len = e->pub.size - off;
    if (!oz_dtype_bits(t->data_type))
        return fail(b, t, ONNXZIP_EDTYPE, "data type cannot be stored in an entry: ", onnxzip_dtype_name(t->data_type));
    v->storage = ONNXZIP_STORAGE_ENTRY;
    v->entry = e->pub.name;
    v->file_offset = e->pub.data_offset + off;
    v->nbytes = len;
    return check_size(b, t, len);
}

/* A classic model's side file, opened under the path rules and mapped once. */
static int resolve_file(build *b, const oz_tensor_info *t, onnxzip_tensor *v)
{
    if (!b->ext)
        return fail(b, t, ONNXZIP_EUNSUPPORTED, "external data needs the model's directory (open it by path)", NULL);
    if (t->has_unknown_key || t->repeated_key)
        return fail(b, t, ONNXZIP_EREF, "unknown or repeated external_data key", NULL);
    oz_extfile *f;
    uint64_t off, len;
    int rc = oz_extdata_resolve(b->ext, t, b->path, &f, &off, &len);
    if (!rc) rc = oz_extdata_map(b->ext, f);
    if (rc) return rc;
    if (!oz_dtype_bits(t->data_type))
        return fail(b, t, ONNXZIP_EDTYPE, "external data of a type without fixed element size: ",
                    onnxzip_dtype_name(t->data_type));
    v->storage = ONNXZIP_STORAGE_FILE;
    v->entry = f->location;
    v->file_offset = off;
    v->nbytes = len;
    v->data = f->map ? f->map + off : (const uint8_t *)"";
    b->ts->n_external++;
    return check_size(b, t, len);
}

static int resolve(build *b, const oz_tensor_info *t, onnxzip_tensor *v)
{
    if (t->data_location == 1) return b->z ? resolve_external(b, t, v) : resolve_file(b, t, v);
    if (t->data_location != 0) return fail(b, t, ONNXZIP_EPROTO, "unknown data_location value", NULL);
    if (!t->has_raw) {
        v->storage = ONNXZIP_STORAGE_TYPED;
        /* Typed data is not size-checked, but views promise dims >= 0 whose
         * product fits a u64, as a runtime will multiply them (spec 11.2 #20). */
        uint64_t n, bytes;
        if (oz_dims_product(t->dims, t->ndims, &n) || (oz_dtype_bits(t->data_type) && oz_dtype_nbytes(t->data_type, n, &bytes)))
            return fail(b, t, ONNXZIP_ESIZE, "dims are negative or their element or byte count overflows", NULL);
        return 0;
    }
    v->storage = ONNXZIP_STORAGE_INLINE;
    v->file_offset = b->model_offset + (uint64_t)(t->raw.p - b->model);
    v->nbytes = t->raw.len;
    if (!oz_dtype_bits(t->data_type))
        return fail(b, t, ONNXZIP_EDTYPE, "raw_data of a type without fixed element size: ",
                    onnxzip_dtype_name(t->data_type));
    return check_size(b, t, t->raw.len);
}

/* Sets v->key and indexes it: the name; for an unnamed tensor its path
 * (oz_walk_key()), made unique with "~2", "~3", ... when an earlier tensor
 * has that key. The first tensor of a key keeps it (names may repeat). */
static int set_key(build *b, const oz_tensor_info *t, onnxzip_tensor *v)
{
    oz_tensors *ts = b->ts;
    oz_buf *key = &b->scratch;
    int rc = 0;
    v->key = v->name;
    if (!*v->name) {
        key->len = 0;
        rc = oz_walk_key(t, key);
        size_t base = key->len;
        uint32_t taken;
        for (unsigned n = 1; !rc; n++) {
            char suffix[16] = "";
            if (n > 1) snprintf(suffix, sizeof suffix, "~%u", n);
            key->len = base;
            rc = oz_buf_append(key, suffix, strlen(suffix) + 1); /* with its NUL */
            if (!rc && oz_strmap_get(&ts->by_name, (const char *)key->p, key->len - 1, &taken)) break;
        }
        char *copy = rc ? NULL : arena_alloc(ts, key->len);
        if (!copy) return rc ? rc : oz_err(ONNXZIP_ENOMEM, -1, "out of memory (tensor keys)");
        v->key = memcpy(copy, key->p, key->len);
    }
    b->key = v->key;
    rc = oz_strmap_put(&ts->by_name, v->key, strlen(v->key), (uint32_t)ts->n, NULL);
    return rc < 0 ? rc : 0;
}

static int on_tensor(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    build *b = ctx;
    oz_tensors *ts = b->ts;
    (void)rw;
    if (ts->n == ts->cap) {
        if (ts->n >= OZ_MAX_TENSORS)
            return oz_err(ONNXZIP_ELIMIT, -1, "%s: more than %u tensors", b->path, OZ_MAX_TENSORS);
        size_t cap = ts->cap ? ts->cap * 2 : 64;
        onnxzip_tensor *nv = realloc(ts->v, cap * sizeof *nv);
        if (nv) ts->v = nv;
        oz_tensor_src *ns = nv ? realloc(ts->src, cap * sizeof *ns) : NULL;
        if (!ns) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (tensor index)");
        ts->src = ns;
        ts->cap = cap;
    }
    onnxzip_tensor *v = &ts->v[ts->n];
    memset(v, 0, sizeof *v);
    char *name = arena_alloc(ts, t->name.len + 1);
    int64_t *dims = arena_alloc(ts, t->ndims * sizeof *dims + 1);
    if (!name || !dims) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (tensor names)");
    memcpy(name, t->name.p, t->name.len);
    name[t->name.len] = '\0';
    memcpy(dims, t->dims, t->ndims * sizeof *dims);
    *v = (onnxzip_tensor){ .name = name, .data_type = t->data_type, .ndims = t->ndims, .dims = dims,
                           .kind = t->kind, .graph_depth = t->graph_depth,
                           .swap_width = oz_dtype_swap_width(t->data_type) };
    int rc = set_key(b, t, v);
    if (!rc) rc = resolve(b, t, v);
    if (rc) return rc;
    ts->src[ts->n] = (oz_tensor_src){ NULL, 0, (uint64_t)(t->msg.p - b->model) };
    if (v->storage == ONNXZIP_STORAGE_TYPED && b->keep) { /* pieces point into the model bytes, kept until close */
        oz_span *pieces = arena_alloc(ts, t->npieces * sizeof *pieces);
        if (!pieces) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (tensor index)");
        memcpy(pieces, t->pieces, t->npieces * sizeof *pieces);
        ts->src[ts->n].pieces = pieces;
        ts->src[ts->n].npieces = t->npieces;
    }
    if (v->storage == ONNXZIP_STORAGE_ENTRY) v->data = b->file ? b->file + v->file_offset : NULL;
    if (v->storage == ONNXZIP_STORAGE_INLINE) v->data = b->keep ? t->raw.p : NULL; /* in the model buffer */
    /* The address's alignment tells a runtime whether it must copy. */
    if (v->storage != ONNXZIP_STORAGE_TYPED)
        v->alignment = oz_alignment_of(v->data ? (uint64_t)(uintptr_t)v->data : v->file_offset);
    ts->n++;
    return 0;
}

typedef struct msg_key {
    uint64_t off;
    uint32_t i;
} msg_key;

static int cmp_msg_key(const void *x, const void *y)
{
    const msg_key *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* The walk visits most models in byte order; where it did not (merged
 * messages), keep a permutation sorted by offset. */
static int sort_by_msg(oz_tensors *ts)
{
    size_t i = 1;
    while (i < ts->n && ts->src[i - 1].msg_off < ts->src[i].msg_off) i++;
    if (i >= ts->n) return 0;
    msg_key *k = malloc(ts->n * sizeof *k);
    ts->by_msg = malloc(ts->n * sizeof *ts->by_msg);
    if (!k || !ts->by_msg) {
        free(k);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (tensor index)");
    }
    for (i = 0; i < ts->n; i++) k[i] = (msg_key){ ts->src[i].msg_off, (uint32_t)i };
    qsort(k, ts->n, sizeof *k, cmp_msg_key);
    for (i = 0; i < ts->n; i++) ts->by_msg[i] = k[i].i;
    free(k);
    return 0;
}

const onnxzip_tensor *oz_tensors_of(const oz_tensors *ts, const uint8_t *model, const oz_tensor_info *t)
{
    if (t->msg.p < model) return NULL;
    uint64_t key = (uint64_t)(t->msg.p - model);
    size_t lo = 0, hi = ts->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, i = ts->by_msg ? ts->by_msg[mid] : mid;
        if (ts->src[i].msg_off == key) return &ts->v[i];
        if (ts->src[i].msg_off < key) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* z: an archive's entries, or NULL for a classic model (side files of ext,
 * or none). file: the mapping for data pointers, or NULL to validate only. */
static int build_index(oz_tensors *ts, const oz_zip *z, oz_extdata *ext, const uint8_t *file, const uint8_t *model,
                       size_t len, uint64_t model_offset, const char *path, int keep)
{
    memset(ts, 0, sizeof *ts);
    oz_strmap_init(&ts->by_name, 0);
    /* An archive has about one entry per tensor. */
    int rc = z ? oz_strmap_reserve(&ts->by_name, z->n) : 0;
    if (rc) return rc;
    build b = { ts, z, ext, file, model, model_offset, path, keep, NULL, { 0 } };
    oz_walk w = { .visit = on_tensor, .ctx = &b, .path = path, .base = model, .base_offset = model_offset };
    /* Nesting first: onnxzip_model_proto()'s recursive parser must never meet a deeper model. */
    rc = oz_check_schema(path, model, len, model_offset);
    if (!rc) rc = oz_walk_model(&w, model, len);
    oz_buf_free(&b.scratch);
    if (!rc) rc = sort_by_msg(ts);
    if (rc) oz_tensors_free(ts);
    return rc;
}

int oz_tensors_build_archive(oz_tensors *ts, const oz_zip *z, const uint8_t *file, const uint8_t *model, size_t len,
                             uint64_t model_offset, const char *path)
{
    return build_index(ts, z, NULL, file, model, len, model_offset, path, file != NULL);
}

int oz_tensors_build_remote(oz_tensors *ts, const oz_zip *z, const uint8_t *model, size_t len, uint64_t model_offset,
                            const char *path)
{
    return build_index(ts, z, NULL, NULL, model, len, model_offset, path, 1);
}

int oz_tensors_build_classic(oz_tensors *ts, oz_extdata *ext, const uint8_t *model, size_t len, const char *path)
{
    return build_index(ts, NULL, ext, model, model, len, 0, path, 1);
}

int oz_tensors_check(const oz_zip *z, const uint8_t *model, size_t len, const char *path)
{
    if (!model) model = (const uint8_t *)""; /* an empty model (refused below): no pointer arithmetic on NULL */
    oz_tensors ts;
    int rc = build_index(&ts, z, NULL, NULL, model, len, 0, path, 0);
    if (rc) return rc;
    oz_tensors_free(&ts);
    /* then what onnxzip_verify() checks of the model after open's checks:
     * nothing onnxzip writes is refused by its own verify */
    return oz_check_model_fields(model, len, path, 1, -1);
}

void oz_tensors_free(oz_tensors *ts)
{
    free(ts->v);
    free(ts->src);
    free(ts->by_msg);
    oz_strmap_free(&ts->by_name);
    while (ts->arena) {
        oz_arena_block *next = ts->arena->next;
        free(ts->arena);
        ts->arena = next;
    }
    memset(ts, 0, sizeof *ts);
}
