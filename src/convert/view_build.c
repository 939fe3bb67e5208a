/* The view's model (view_build.h): the archive's model rewritten with the
 * model walker, so every other byte is kept; the record's format is
 * read/view_record.c's. */
#include <stdio.h>
#include <stdlib.h>

#include "onnx/onnx_walk.h"
#include "convert/view_build.h"
#include "read/view_record.h"

void onnxzip_view_options_init(onnxzip_view_options *opts)
{
    if (opts) *opts = (onnxzip_view_options){ .location = NULL, .size_threshold = 1024 };
}

int oz_view_bad_location(const char *s)
{
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_model: location '%s' is not a plain file name (no '/' or '\\', "
                  "not '.' or '..', not empty): ONNX loaders resolve it relative to the view's directory and refuse "
                  "other paths", oz_printable(s, strlen(s), shown, sizeof shown));
}

typedef struct viewer {
    const onnxzip_archive *a;
    const char *location;
    uint64_t inline_below; /* size_threshold */
    oz_view_bytes_fn bytes;
    int (*range)(void *ctx, uint64_t off, uint64_t len); /* oz_view_inlined(): only list them */
    void *ctx;
} viewer;

static int desync(const viewer *v, const oz_tensor_info *t)
{
    char name[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EPROTO, -1, "%s: tensor '%s': its reference no longer resolves (internal error)", v->a->path,
                  oz_printable(t->name.p, t->name.len, name, sizeof name));
}

/* The inline copy of bytes [off, off + len) of the file. */
static int inline_copy(const viewer *v, const oz_tensor_info *t, uint64_t off, uint64_t len, oz_rewrite *rw)
{
    if (v->range) return len ? v->range(v->ctx, off, len) : 0;
    const uint8_t *data = len ? v->bytes(v->ctx, off, len) : (const uint8_t *)"";
    if (!data) {
        char name[OZ_PRINTABLE_CAP];
        return oz_err(ONNXZIP_EINVAL, (int64_t)off, "%s: tensor '%s': its %llu bytes at offset %llu, to be copied "
                      "into the view, were not given", v->a->path, oz_printable(t->name.p, t->name.len, name,
                      sizeof name), (unsigned long long)len, (unsigned long long)off);
    }
    *rw = (oz_rewrite){ .action = OZ_INLINE, .data = data, .size = len };
    return 0;
}

/* Resolves the tensor's entry reference (validated at open) to its absolute
 * byte range. A small tensor is copied inline (ONNX Runtime refuses external
 * shape constants), an empty one always: onnx <= 1.13 reads "length" 0 as
 * "to the end of the file". */
static int view_tensor(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    const viewer *v = ctx;
    if (t->data_location != 1) return 0;
    const oz_zentry *e = oz_zip_resolve(&v->a->zip, (const char *)t->location.p, t->location.len);
    uint64_t off = 0, len;
    if (!e || (t->has_offset && oz_parse_decimal(t->offset, &off)) || off > e->pub.size) return desync(v, t);
    len = e->pub.size - off;
    if (t->has_length && (oz_parse_decimal(t->length, &len) || len > e->pub.size - off)) return desync(v, t);
    if (len == 0 || len < v->inline_below) return inline_copy(v, t, e->pub.data_offset + off, len, rw);
    if (v->range) return 0;
    *rw = (oz_rewrite){ .action = OZ_EXTERNAL, .location = v->location, .has_offset = 1, .has_length = 1,
                        .offset = e->pub.data_offset + off, .length = len };
    return 0;
}

/* Removes every "onnxzip.view" record (an archive packed from a view carries
 * one), in place: fields move down, never up. */
static void drop_records(oz_buf *out)
{
    if (!oz_view_find_record(out->p, out->len, NULL)) return;
    pb_reader r = { out->p, out->p + out->len };
    uint8_t *w = out->p;
    pb_field f;
    while (r.p < r.end && pb_next(&r, &f) == 0) {
        size_t n = (size_t)(r.p - f.start);
        if (oz_view_is_record(&f, NULL)) continue;
        memmove(w, f.start, n);
        w += n;
    }
    out->len = (size_t)(w - out->p);
}

/* Appends metadata_props {key: "onnxzip.view", value: the record}. */
static int append_record(oz_buf *out, const onnxzip_archive *a, const char *location)
{
    uint32_t crc;
    uint64_t xxh;
    oz_view_model_sums(a, &crc, &xxh);
    size_t cap = strlen(location) + 128;
    char *rec = malloc(cap);
    if (!rec) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (view)");
    snprintf(rec, cap, "format=1;archive=%s;size=%llu;model_crc32=%08x;model_xxh3=%016llx", location,
             (unsigned long long)a->size, crc, (unsigned long long)xxh);
    int rc = oz_put_string_entry(out, MODEL_METADATA_PROPS, OZ_VIEW_KEY, rec);
    free(rec);
    return rc ? oz_err(ONNXZIP_ENOMEM, -1, "out of memory (view)") : 0;
}

int oz_view_build(const onnxzip_archive *a, const char *location, uint64_t inline_below, oz_view_bytes_fn bytes,
                  void *ctx, oz_buf *out)
{
    viewer v = { a, location, inline_below, bytes, NULL, ctx };
    oz_walk w = { .visit = view_tensor, .ctx = &v, .out = out, .path = a->path, .base = a->model,
                  .base_offset = a->zip.entries[a->zip.model_index].pub.data_offset };
    int rc = oz_walk_model(&w, a->model, a->model_len);
    if (rc) return rc;
    drop_records(out);
    if ((rc = append_record(out, a, location))) return rc;
    if (out->len > OZ_MAX_MODEL)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: the view would be %zu bytes, over protobuf's 2 GiB - 1 limit", a->path,
                      out->len);
    return 0;
}

int oz_view_inlined(const onnxzip_archive *a, uint64_t inline_below,
                    int (*range)(void *ctx, uint64_t off, uint64_t len), void *ctx)
{
    viewer v = { a, NULL, inline_below, NULL, range, ctx };
    oz_walk w = { .visit = view_tensor, .ctx = &v, .path = a->path, .base = a->model,
                  .base_offset = a->zip.entries[a->zip.model_index].pub.data_offset };
    return oz_walk_model(&w, a->model, a->model_len);
}
