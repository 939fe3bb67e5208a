/* The "onnxzip.view" record of a runtime view (spec 16.2): found in a model,
 * and checked against the archive it names, for onnxzip_verify(). The view
 * itself is built by convert/view.c, which writes the record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "common/sys.h"
#include "onnx/onnx_walk.h"
#include "read/view_record.h"

int oz_view_plain_location(const char *s)
{
    return *s && !strchr(s, '/') && !strchr(s, '\\') && strcmp(s, ".") && strcmp(s, "..");
}

void oz_view_model_sums(const onnxzip_archive *a, uint32_t *crc, uint64_t *xxh)
{
    const onnxzip_entry *m = &a->zip.entries[a->zip.model_index].pub;
    *crc = m->crc32;
    *xxh = m->has_xxh3 ? m->xxh3 : XXH3_64bits(a->model, a->model_len);
}

int oz_view_is_record(const pb_field *f, oz_span *value)
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

int oz_view_find_record(const uint8_t *model, size_t len, oz_span *value)
{
    pb_reader r = { model, model + len };
    pb_field f;
    while (r.p < r.end && pb_next(&r, &f) == 0)
        if (oz_view_is_record(&f, value)) return 1;
    return 0;
}

typedef struct record {
    char *text;          /* the value, NUL-terminated (owns the strings below) */
    char *archive; /* within text */
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
    if (!(r->text = oz_strndup((const char *)value.p, value.len)))
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
    if (oz_view_plain_location(name)) return 0;
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
    oz_stat st;
    if (oz_sys_fstat(fd, &st))
        return oz_err_sys(ONNXZIP_EIO, -1, r->archive, "%s: cannot stat its archive: %s", a->path, strerror(errno));
    if (st.kind != OZ_KIND_REG)
        return oz_err(ONNXZIP_ENOTREG, -1, "%s: its archive '%s' is not a regular file", a->path,
                      oz_printable(r->archive, strlen(r->archive), shown, sizeof shown));
    if (st.size != r->size) {
        snprintf(what, sizeof what, "is %llu bytes, the view records %llu", (unsigned long long)st.size,
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
    if (b->layout == ONNXZIP_LAYOUT_ARCHIVE) oz_view_model_sums(b, &crc, &xxh);
    for (size_t i = 0; i < b->pkg.n && (crc != r->crc || xxh != r->xxh); i++) { /* a package: the view's model */
        const onnxzip_entry *e = &b->zip.entries[b->pkg.members[i].entry].pub;
        if (b->pkg.members[i].kind == ONNXZIP_MEMBER_MODEL && e->has_xxh3) crc = e->crc32, xxh = e->xxh3;
    }
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
    if (a->layout == ONNXZIP_LAYOUT_ARCHIVE || !oz_view_find_record(a->model, a->model_len, &value)) return 0;
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
    int fd = oz_sys_open_beneath(a->ext.dirh, r.archive); /* a plain name (parse_record) */
    if (fd < 0)
        rc = oz_err_sys(errno == ENOENT ? ONNXZIP_ENOTFOUND : ONNXZIP_EIO, -1, r.archive, "%s: the archive '%s' its '" OZ_VIEW_KEY
                    "' record names cannot be opened beside it: %s", a->path,
                    oz_printable(r.archive, strlen(r.archive), shown, sizeof shown),
                    errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    else
        rc = compare(a, &r, fd);
    if (fd >= 0) oz_sys_close(fd);
    free(r.text);
    return rc;
}
