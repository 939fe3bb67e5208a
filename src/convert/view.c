/* onnxzip_view_model(): the archive's model with every entry-backed tensor
 * turned into a classic external reference into the archive file itself
 * (location = its file name, offset = absolute file offset, length), plus
 * one "onnxzip.view" metadata record naming the archive (spec 16). Built
 * with the model walker, so every other byte is kept. oz_view_check(): the
 * record against the archive, for onnxzip_verify(). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "onnx/onnx_walk.h"
#include "common/outputs.h"
#include "convert/view.h"

enum { MODEL_METADATA_PROPS = 14 };

void onnxzip_free(void *p)
{
    free(p);
}

/* A file name ONNX resolves beside the model: no directory part, no '..'. */
static int is_plain_location(const char *s)
{
    return *s && !strchr(s, '/') && !strchr(s, '\\') && strcmp(s, ".") && strcmp(s, "..");
}

static int bad_location(const char *s)
{
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_model: location '%s' is not a plain file name (no '/' or '\\', "
                  "not '.' or '..', not empty): ONNX loaders resolve it relative to the view's directory and refuse "
                  "other paths", oz_printable(s, strlen(s), shown, sizeof shown));
}

/* The directory holding `path`, stat()ed. */
int oz_stat_dir_of(const char *path, struct stat *st)
{
    const char *slash = strrchr(path, '/');
    char *dir = !slash ? strdup(".") : slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    if (!dir) return -1;
    int rc = stat(dir, st);
    free(dir);
    return rc;
}

int oz_view_real_archive(const onnxzip_archive *a, char **real, struct stat *dir)
{
    *real = NULL;
    if (!a->by_path)
        return oz_err(ONNXZIP_EINVAL, -1, "%s was opened from a buffer or a file descriptor, so its file name is "
                      "unknown: pass a location (the archive's file name)", a->path);
    struct stat lst, here;
    if (lstat(a->path, &lst) || !(*real = realpath(a->path, NULL)) || oz_stat_dir_of(*real, dir))
        return oz_err(ONNXZIP_EIO, -1, "%s: %s", a->path, strerror(errno));
    if (!S_ISLNK(lst.st_mode)) return 0;
    /* ONNX Runtime and onnx check the resolved path of external data: a link
     * into another directory would be refused there, so it is refused here. */
    if (oz_stat_dir_of(a->path, &here)) return oz_err(ONNXZIP_EIO, -1, "%s: its directory: %s", a->path, strerror(errno));
    if (oz_same_stat(&here, dir)) return 0;
    int rc = oz_err(ONNXZIP_EPATH, -1, "%s is a symbolic link to %s in another directory; ONNX loaders check the "
                    "resolved path of external data and a view must not depend on a link: write the view beside %s",
                    a->path, *real, *real);
    free(*real);
    *real = NULL;
    return rc;
}

/* The archive's file name: the caller's, or the base name of the real file
 * the archive was opened by (*owned, to free, when so). */
static int pick_location(const onnxzip_archive *a, const char *given, const char **out, char **owned)
{
    *owned = NULL;
    if (given) {
        *out = given;
        return is_plain_location(given) ? 0 : bad_location(given);
    }
    struct stat dir;
    int rc = oz_view_real_archive(a, owned, &dir);
    if (rc) return rc;
    *out = strrchr(*owned, '/') + 1;
    return is_plain_location(*out) ? 0 : bad_location(*out);
}

/* The __MODEL_PROTO entry's CRC-32 and XXH3-64, as recorded (the digest is
 * computed from the model copy when the archive records none). */
static void model_sums(const onnxzip_archive *a, uint32_t *crc, uint64_t *xxh)
{
    const onnxzip_entry *m = &a->zip.entries[a->zip.model_index].pub;
    *crc = m->crc32;
    *xxh = m->has_xxh3 ? m->xxh3 : XXH3_64bits(a->model, a->model_len);
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

/* 1 when the ModelProto field is a metadata_props entry keyed "onnxzip.view";
 * *value is then its value (the last one, as protobuf reads it). */
static int is_record(const pb_field *f, oz_span *value)
{
    if (f->num != MODEL_METADATA_PROPS || f->wt != PB_LEN) return 0;
    pb_reader r = { f->data, f->data + f->len };
    oz_span key = { (const uint8_t *)"", 0 }, val = key;
    pb_field g;
    while (r.p < r.end && pb_next(&r, &g) == 0) {
        if (g.wt != PB_LEN) continue;
        if (g.num == 1) key = (oz_span){ g.data, g.len };
        if (g.num == 2) val = (oz_span){ g.data, g.len };
    }
    if (key.len != sizeof OZ_VIEW_KEY - 1 || memcmp(key.p, OZ_VIEW_KEY, key.len)) return 0;
    if (value) *value = val;
    return 1;
}

/* The model's first "onnxzip.view" record; 0 when there is none. */
static int find_record(const uint8_t *model, size_t len, oz_span *value)
{
    pb_reader r = { model, model + len };
    pb_field f;
    while (r.p < r.end && pb_next(&r, &f) == 0)
        if (is_record(&f, value)) return 1;
    return 0;
}

/* Removes every "onnxzip.view" record (an archive packed from a view carries
 * one), in place: fields move down, never up. */
static void drop_records(oz_buf *out)
{
    if (!find_record(out->p, out->len, NULL)) return;
    pb_reader r = { out->p, out->p + out->len };
    uint8_t *w = out->p;
    pb_field f;
    while (r.p < r.end && pb_next(&r, &f) == 0) {
        size_t n = (size_t)(r.p - f.start);
        if (is_record(&f, NULL)) continue;
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
    model_sums(a, &crc, &xxh);
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
    onnxzip_view_options defaults;
    onnxzip_view_options_init(&defaults);
    if (!opts) opts = &defaults;
    const char *location = opts->location;
    if (location && !is_plain_location(location)) return bad_location(location);
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

/* ------------------------------------------------------------------------
 * The record, checked by onnxzip_verify()
 * ---------------------------------------------------------------------- */

typedef struct record {
    char *text;          /* the value, NUL-terminated (owns the strings below) */
    const char *archive; /* within text */
    uint64_t size, xxh;
    uint32_t crc;
} record;

static int parse_hex(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10 : -1;
        if (d < 0) return -1;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 0;
}

/* "size=N;model_crc32=8HEX;model_xxh3=16HEX" and nothing after. */
static int parse_tail(const char *s, record *r)
{
    const char *semi = strchr(s, ';');
    uint64_t crc;
    if (!semi || oz_parse_decimal((oz_span){ (const uint8_t *)s, (size_t)(semi - s) }, &r->size)) return -1;
    s = semi + 1;
    if (strncmp(s, "model_crc32=", 12) || parse_hex(s + 12, 8, &crc)) return -1;
    s += 20;
    if (strncmp(s, ";model_xxh3=", 12) || parse_hex(s + 12, 16, &r->xxh) || s[28]) return -1;
    r->crc = (uint32_t)crc;
    return 0;
}

/* "format=1;archive=NAME;size=...": NAME may hold ';', so the fixed tail is
 * found from the end (the last ";size="). */
static int parse_record(const onnxzip_archive *a, oz_span value, record *r)
{
    char shown[OZ_PRINTABLE_CAP];
    if (!(r->text = strndup((const char *)value.p, value.len)))
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (view record)");
    if (strlen(r->text) != value.len || strncmp(r->text, "format=", 7)) goto malformed;
    if (strncmp(r->text, "format=1;", 9))
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: metadata '" OZ_VIEW_KEY "' is of an unknown format: '%s'",
                      a->path, oz_printable(value.p, value.len, shown, sizeof shown));
    char *name = r->text + 9, *tail = NULL;
    if (strncmp(name, "archive=", 8)) goto malformed;
    name += 8;
    for (char *p = name; (p = strstr(p, ";size=")); p++) tail = p;
    if (!tail || parse_tail(tail + 6, r)) goto malformed;
    *tail = '\0';
    r->archive = name;
    if (is_plain_location(name)) return 0;
malformed:
    return oz_err(ONNXZIP_EPROTO, -1, "%s: metadata '" OZ_VIEW_KEY "' is malformed: '%s' (expected "
                  "format=1;archive=NAME;size=N;model_crc32=8HEX;model_xxh3=16HEX, NAME a plain file name)", a->path,
                  oz_printable(value.p, value.len, shown, sizeof shown));
}

static int stale(const onnxzip_archive *a, const record *r, const char *what)
{
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_ESTALE, -1, "%s: view is stale: its archive '%s' %s; set-model replaced the graph (or the "
                  "archive was rewritten): write the view again (onnxzip view ARCHIVE -o VIEW)", a->path,
                  oz_printable(r->archive, strlen(r->archive), shown, sizeof shown), what);
}

/* Compares the archive open on `fd` with the record. */
static int compare(const onnxzip_archive *a, const record *r, int fd)
{
    char what[160], shown[OZ_PRINTABLE_CAP];
    struct stat st;
    if (fstat(fd, &st)) return oz_err(ONNXZIP_EIO, -1, "%s: cannot stat its archive: %s", a->path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return oz_err(ONNXZIP_ENOTREG, -1, "%s: its archive '%s' is not a regular file", a->path,
                      oz_printable(r->archive, strlen(r->archive), shown, sizeof shown));
    if ((uint64_t)st.st_size != r->size) {
        snprintf(what, sizeof what, "is %llu bytes, the view records %llu", (unsigned long long)st.st_size,
                 (unsigned long long)r->size);
        return stale(a, r, what);
    }
    onnxzip_archive *b = NULL;
    int rc = onnxzip_open_fd(fd, 0, &b);
    if (rc)
        return oz_err(rc, -1, "%s: its archive '%s' cannot be read: %s", a->path,
                      oz_printable(r->archive, strlen(r->archive), shown, sizeof shown),
                      onnxzip_last_error()->message);
    uint32_t crc = 0;
    uint64_t xxh = 0;
    if (b->layout == ONNXZIP_LAYOUT_ARCHIVE) model_sums(b, &crc, &xxh);
    if (b->layout != ONNXZIP_LAYOUT_ARCHIVE)
        snprintf(what, sizeof what, "is no longer an onnxzip archive");
    else if (crc != r->crc || xxh != r->xxh)
        snprintf(what, sizeof what, "has a model of CRC-32 %08x, XXH3 %016llx; the view records %08x, %016llx", crc,
                 (unsigned long long)xxh, r->crc, (unsigned long long)r->xxh);
    else
        what[0] = '\0';
    onnxzip_close(&b);
    return what[0] ? stale(a, r, what) : 0;
}

int oz_view_check(const onnxzip_archive *a)
{
    oz_span value;
    if (a->layout == ONNXZIP_LAYOUT_ARCHIVE || !find_record(a->model, a->model_len, &value)) return 0;
    record r = { 0 };
    int rc = parse_record(a, value, &r);
    if (!rc && !a->ext_open)
        rc = oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: a view opened from a buffer or a file descriptor: its archive "
                    "cannot be found (open the view by path)", a->path);
    if (rc) {
        free(r.text);
        return rc;
    }
    char shown[OZ_PRINTABLE_CAP];
    /* Never through a symbolic link, as ONNX's own external-data rules. */
    int fd = openat(a->ext.dirfd, r.archive, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        rc = oz_err(errno == ENOENT ? ONNXZIP_ENOTFOUND : ONNXZIP_EIO, -1, "%s: the archive '%s' its '" OZ_VIEW_KEY
                    "' record names cannot be opened beside it: %s", a->path,
                    oz_printable(r.archive, strlen(r.archive), shown, sizeof shown),
                    errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    else
        rc = compare(a, &r, fd);
    if (fd >= 0) close(fd);
    free(r.text);
    return rc;
}
