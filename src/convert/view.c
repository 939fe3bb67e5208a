/* onnxzip_view_model(): the archive's model with every entry-backed tensor
 * turned into a classic external reference into the archive file itself
 * (location = its file name, offset = absolute file offset, length), plus
 * one "onnxzip.view" metadata record naming the archive (spec 16). Built
 * with the model walker, so every other byte is kept; the record's format is
 * read/view_record.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "onnx/onnx_walk.h"
#include "common/outputs.h"
#include "convert/view.h"
#include "read/view_record.h"

void onnxzip_free(void *p)
{
    free(p);
}

static int bad_location(const char *s)
{
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_model: location '%s' is not a plain file name (no '/' or '\\', "
                  "not '.' or '..', not empty): ONNX loaders resolve it relative to the view's directory and refuse "
                  "other paths", oz_printable(s, strlen(s), shown, sizeof shown));
}

/* The directory holding `path`, stat()ed. */
int oz_stat_dir_of(const char *path, oz_stat *st)
{
    const char *slash = oz_last_sep(path);
    char *dir = slash ? oz_strndup(path, (size_t)(slash - path) + 1) : strdup("."); /* "/", "C:\\" as they are */
    if (!dir) return -1;
    int rc = oz_sys_stat(dir, st);
    free(dir);
    return rc;
}

/* Every symbolic link on the way is resolved (chains, links into other
 * directories: a Hugging Face cache's snapshots/REV/model.onnxzip ->
 * ../../blobs/SHA256): the view names the real file, so it depends on no
 * link, and lies in the real file's directory, where ONNX loaders' check of
 * the resolved external data path holds (spec 16.4). */
int oz_view_real_archive(const onnxzip_archive *a, char **real, oz_stat *dir)
{
    *real = NULL;
    if (!a->by_path)
        return oz_err(ONNXZIP_EINVAL, -1, "%s was opened from a buffer or a file descriptor, so its file name is "
                      "unknown: pass a location (the archive's file name)", a->path);
    if (!(*real = oz_sys_realpath(a->path)) || oz_stat_dir_of(*real, dir)) {
        int rc = oz_err_sys(ONNXZIP_EIO, -1, a->path, "%s: %s", a->path, strerror(errno));
        free(*real);
        *real = NULL;
        return rc;
    }
    return 0;
}

/* The archive's file name: the caller's, or the base name of the real file
 * the archive was opened by (*owned, to free, when so). */
static int pick_location(const onnxzip_archive *a, const char *given, const char **out, char **owned)
{
    *owned = NULL;
    if (given) {
        *out = given;
        return oz_view_plain_location(given) ? 0 : bad_location(given);
    }
    oz_stat dir;
    int rc = oz_view_real_archive(a, owned, &dir);
    if (rc) return rc;
    *out = oz_last_sep(*owned) + 1;
    return oz_view_plain_location(*out) ? 0 : bad_location(*out);
}

typedef struct viewer {
    const onnxzip_archive *a;
    const char *location;
    uint64_t inline_below; /* size_threshold */
} viewer;

static int desync(const viewer *v, const oz_tensor_info *t)
{
    char name[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EPROTO, -1, "%s: tensor '%s': its reference no longer resolves (internal error)", v->a->path,
                  oz_printable(t->name.p, t->name.len, name, sizeof name));
}

/* Resolves the tensor's entry reference (validated at open) to its absolute
 * byte range. A small tensor is copied inline (ONNX Runtime refuses external
 * shape constants), an empty one always: onnx <= 1.13 reads "length" 0 as
 * "to the end of the file". */
static int view_tensor(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    const viewer *v = ctx;
    if (t->data_location != 1) return 0;
    const oz_zentry *e = oz_zip_find(&v->a->zip, (const char *)t->location.p, t->location.len);
    uint64_t off = 0, len;
    if (!e || (t->has_offset && oz_parse_decimal(t->offset, &off)) || off > e->pub.size) return desync(v, t);
    len = e->pub.size - off;
    if (t->has_length && (oz_parse_decimal(t->length, &len) || len > e->pub.size - off)) return desync(v, t);
    if (len == 0 || len < v->inline_below) {
        *rw = (oz_rewrite){ .action = OZ_INLINE, .data = v->a->base + e->pub.data_offset + off, .size = len };
        return 0;
    }
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

static int build_view(const onnxzip_archive *a, const char *location, uint64_t inline_below, oz_buf *out)
{
    viewer v = { a, location, inline_below };
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

void onnxzip_view_options_init(onnxzip_view_options *opts)
{
    if (opts) *opts = (onnxzip_view_options){ .location = NULL, .size_threshold = 1024 };
}

int onnxzip_view_model(const onnxzip_archive *a, const onnxzip_view_options *opts, void **data, size_t *size)
{
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!a || !data || !size) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_model: NULL argument");
    if (a->remote) /* a view points into a local file */
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: a view needs the archive as a local file: fetch it first "
                      "(onnxzip_fetch)", a->path);
    onnxzip_view_options defaults;
    onnxzip_view_options_init(&defaults);
    if (!opts) opts = &defaults;
    const char *location = opts->location;
    if (location && !oz_view_plain_location(location)) return bad_location(location);
    oz_buf out = { 0 };
    int rc;
    if (a->layout != ONNXZIP_LAYOUT_ARCHIVE) { /* already a view of itself */
        rc = oz_buf_append(&out, a->model, a->model_len);
    } else {
        const char *loc = NULL;
        char *owned = NULL;
        rc = pick_location(a, location, &loc, &owned);
        if (!rc) rc = build_view(a, loc, opts->size_threshold, &out);
        free(owned);
    }
    if (!rc && !out.p) rc = oz_buf_reserve(&out, 1); /* an empty model still gets a buffer */
    if (rc) {
        oz_buf_free(&out);
        return rc;
    }
    *data = out.p;
    *size = out.len;
    return 0;
}
