/* The WebAssembly binding of the npm package (src/js): the C reader's rules
 * applied to bytes JavaScript reads (fetch ranges, Blob slices, buffers,
 * Node files). A handle is an onnxzip_archive built as onnxzip_open_url()
 * builds one (base NULL, a copy of the model, a window of the file's end),
 * with the I/O left to the caller. The ABI: the declarations below; lib/wasm.js is its JavaScript side. 64-bit offsets
 * and sizes cross as doubles (exact below 2^53). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/view_build.h"
#include "onnx/model_fields.h"
#include "read/archive.h"
#include "read/remote.h"
#include "read/view_record.h"

#define EXPORT(name) __attribute__((export_name(#name)))
#define MAX_SAFE 9007199254740992.0 /* 2^53 */

typedef struct ozw {
    onnxzip_archive *a;
    char *json;        /* ozw_json() */
    char *ranges;      /* ozw_view_ranges() */
    oz_file_span *spans; /* the ranges a view inlines, merged */
    size_t n_spans, cap_spans;
} ozw;

EXPORT(ozw_malloc) void *ozw_malloc(size_t n);
void *ozw_malloc(size_t n)
{
    return malloc(n ? n : 1);
}

EXPORT(ozw_free) void ozw_free(void *p);
void ozw_free(void *p)
{
    free(p);
}

EXPORT(ozw_status_name) const char *ozw_status_name(int status);
const char *ozw_status_name(int status)
{
    return onnxzip_status_name(status);
}

EXPORT(ozw_error_message) const char *ozw_error_message(void);
const char *ozw_error_message(void)
{
    return onnxzip_last_error()->message;
}

/* The status of the last failure: for the calls that return a pointer
 * (ozw_json, ozw_view_ranges, ozw_verify_begin), whose NULL says only that
 * they failed. */
EXPORT(ozw_error_status) int ozw_error_status(void);
int ozw_error_status(void)
{
    return onnxzip_last_error()->status;
}

EXPORT(ozw_error_offset) double ozw_error_offset(void);
double ozw_error_offset(void)
{
    return (double)onnxzip_last_error()->offset;
}

/* A double from JavaScript as a file offset or size. */
static int to_u64(double d, const char *what, uint64_t *out)
{
    if (!(d >= 0 && d < MAX_SAFE) || d != (double)(uint64_t)d)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip (wasm): %s %g is not an integer in 0..2^53", what, d);
    *out = (uint64_t)d;
    return 0;
}

/* The archive from its end records and directory in the window: 1 with
 * *need when they begin before it. */
static int parse(onnxzip_archive *a, size_t win_len, int fd, uint64_t *need)
{
    oz_remote *r = a->remote;
    int rc = oz_zip_parse_window(&a->zip, r->win, r->win_off, a->size, fd, a->path, need);
    if (!rc && fd >= 0 && a->zip.entries[a->zip.model_index].pub.header_offset < r->win_off) {
        *need = a->zip.entries[a->zip.model_index].pub.header_offset; /* the model is copied from the window */
        oz_zip_free(&a->zip);
        rc = 1;
    }
    if (rc == ONNXZIP_ENOTZIP)
        return oz_err(rc, -1, "%s: not a zip archive (no end of central directory record in its last %zu bytes); "
                      "only onnxzip archives are read", a->path, win_len);
    if (rc <= 0) return rc;
    if (*need >= r->win_off)
        return oz_err(ONNXZIP_ECDIR, -1, "%s: inconsistent end records (internal: need %llu)", a->path,
                      (unsigned long long)*need);
    rc = oz_remote_span_check(*need, a->size, a->path);
    return rc ? rc : 1;
}

static int open_window(onnxzip_archive *a, const uint8_t *win, size_t win_len, int fd, uint64_t *need)
{
    oz_remote *r = a->remote;
    if (r->win_off + win_len != a->size || (win_len && !win))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the window [%llu, +%zu) does not end at the file's size %llu",
                      a->path, (unsigned long long)r->win_off, win_len, (unsigned long long)a->size);
    if (!(r->win = malloc(win_len ? win_len : 1))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (win_len) memcpy(r->win, win, win_len);
    int rc = parse(a, win_len, fd, need);
    return rc ? rc : oz_remote_index(a);
}

static int open_any(const char *name, const uint8_t *win, size_t win_len, double win_off, double size, int fd,
                    double *need, void **out)
{
    if (out) *out = NULL;
    if (need) *need = -1;
    if (!name || !need || !out) return oz_err(ONNXZIP_EINVAL, -1, "ozw_open: NULL argument");
    ozw *h = calloc(1, sizeof *h);
    onnxzip_archive *a = calloc(1, sizeof *a);
    if (!h || !a || !(a->remote = calloc(1, sizeof *a->remote)) || !(a->path = strdup(name))) {
        free(h);
        oz_archive_free(a);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    a->fd = -1;
    h->a = a;
    uint64_t from = 0;
    int rc = to_u64(win_off, "window offset", &a->remote->win_off);
    if (!rc) rc = to_u64(size, "file size", &a->size);
    if (!rc) rc = open_window(a, win, win_len, fd, &from);
    if (rc == 1) *need = (double)from;
    if (rc == 0) *out = h;
    else oz_archive_free(a), free(h);
    return rc == 1 ? 0 : rc;
}

EXPORT(ozw_open) int ozw_open(const char *name, const uint8_t *win, size_t win_len, double win_off, double size,
                              double *need, void **out);
int ozw_open(const char *name, const uint8_t *win, size_t win_len, double win_off, double size, double *need,
             void **out)
{
    return open_any(name, win, win_len, win_off, size, -1, need, out);
}

/* ozw_open() of a source whose every byte the package can read (a Blob,
 * bytes, a Node file): local headers are read through the import
 * onnxzip.read(fd, buf, n, off) and all checked now, in onnxzip_open()'s
 * order, so statuses are the local reader's. A read that returns -1 fails
 * the open; the package then reads those bytes and opens again. */
EXPORT(ozw_open_file) int ozw_open_file(const char *name, const uint8_t *win, size_t win_len, double win_off,
                                        double size, int fd, double *need, void **out);
int ozw_open_file(const char *name, const uint8_t *win, size_t win_len, double win_off, double size, int fd,
                  double *need, void **out)
{
    if (fd < 0) return oz_err(ONNXZIP_EINVAL, -1, "ozw_open_file: negative descriptor %d", fd);
    return open_any(name, win, win_len, win_off, size, fd, need, out);
}

EXPORT(ozw_close) void ozw_close(void *p);
void ozw_close(void *p)
{
    ozw *h = p;
    if (!h) return;
    oz_archive_free(h->a);
    free(h->json);
    free(h->ranges);
    free(h->spans);
    free(h);
}

/* The string written to memory stream `f` of open_memstream(s, ...), or NULL
 * (out of memory). *s is read after fclose: until then it may still be the
 * stream's first buffer, which the final flush reallocates. */
static char *closed(FILE *f, char **s)
{
    if (!f) return NULL;
    int bad = ferror(f);
    if (fclose(f) || bad) {
        free(*s);
        return NULL;
    }
    return *s;
}

/* `onnxzip ls --json` of the archive, byte for byte (onnxzip_listing()):
 * the package's entries and tensors. */
EXPORT(ozw_json) const char *ozw_json(void *p);
const char *ozw_json(void *p)
{
    ozw *h = p;
    free(h->json);
    onnxzip_listing(h->a, ONNXZIP_LISTING_JSON, &h->json); /* NULL, the error recorded, on failure */
    return h->json;
}

EXPORT(ozw_check_local) int ozw_check_local(void *p, size_t i, const uint8_t *hdr, size_t len);
int ozw_check_local(void *p, size_t i, const uint8_t *hdr, size_t len)
{
    onnxzip_archive *a = ((ozw *)p)->a;
    if (i >= a->zip.n) return oz_err(ONNXZIP_EINVAL, -1, "%s: no entry %zu (%zu entries)", a->path, i, a->zip.n);
    const onnxzip_entry *e = &a->zip.entries[i].pub;
    if (!hdr || len != e->data_offset - e->header_offset)
        return oz_err(ONNXZIP_EINVAL, (int64_t)e->header_offset, "%s: entry %zu's local header is %llu bytes, %zu "
                      "given", a->path, i, (unsigned long long)(e->data_offset - e->header_offset), len);
    return oz_entry_check_header(a, i, hdr);
}

EXPORT(ozw_model) const uint8_t *ozw_model(void *p);
const uint8_t *ozw_model(void *p)
{
    return ((ozw *)p)->a->model;
}

EXPORT(ozw_model_size) double ozw_model_size(void *p);
double ozw_model_size(void *p)
{
    return (double)((ozw *)p)->a->model_len;
}

/* ------------------------------------------------------------------------
 * Views
 * --------------------------------------------------------------------- */

static int add_span(void *ctx, uint64_t off, uint64_t len)
{
    ozw *h = ctx;
    if (h->n_spans == h->cap_spans) {
        size_t cap = h->cap_spans ? 2 * h->cap_spans : 16;
        oz_file_span *v = realloc(h->spans, cap * sizeof *v);
        if (!v) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (view)");
        h->spans = v;
        h->cap_spans = cap;
    }
    h->spans[h->n_spans++] = (oz_file_span){ off, off + len };
    return 0;
}

static int by_from(const void *x, const void *y)
{
    uint64_t a = ((const oz_file_span *)x)->from, b = ((const oz_file_span *)y)->from;
    return (a > b) - (a < b);
}

/* h->spans: the file ranges a view of threshold `t` inlines, sorted, merged
 * where they overlap or touch. */
static int spans_of(ozw *h, double t)
{
    uint64_t below;
    int rc = to_u64(t, "size threshold", &below);
    h->n_spans = 0;
    if (!rc) rc = oz_view_inlined(h->a, below, add_span, h);
    if (rc) return rc;
    qsort(h->spans, h->n_spans, sizeof *h->spans, by_from);
    size_t k = 0;
    for (size_t i = 0; i < h->n_spans; i++) {
        if (k && h->spans[i].from <= h->spans[k - 1].to) {
            if (h->spans[i].to > h->spans[k - 1].to) h->spans[k - 1].to = h->spans[i].to;
        } else {
            h->spans[k++] = h->spans[i];
        }
    }
    h->n_spans = k;
    return 0;
}

EXPORT(ozw_view_ranges) const char *ozw_view_ranges(void *p, double threshold);
const char *ozw_view_ranges(void *p, double threshold)
{
    ozw *h = p;
    free(h->ranges);
    h->ranges = NULL;
    if (spans_of(h, threshold)) return NULL;
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (f) {
        fputc('[', f);
        for (size_t i = 0; i < h->n_spans; i++)
            fprintf(f, "%s[%llu,%llu]", i ? "," : "", (unsigned long long)h->spans[i].from,
                    (unsigned long long)(h->spans[i].to - h->spans[i].from));
        fputc(']', f);
    }
    if (!(h->ranges = closed(f, &s))) oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (view)", h->a->path);
    return h->ranges;
}

typedef struct inlined {
    const ozw *h;
    const uint8_t *bytes; /* the spans' bytes, one after the other */
    uint64_t *at;         /* where span i's bytes begin in `bytes` */
} inlined;

/* Bytes [off, off + len) from the span that holds them. */
static const uint8_t *inline_at(void *ctx, uint64_t off, uint64_t len)
{
    const inlined *in = ctx;
    const ozw *h = in->h;
    size_t lo = 0, hi = h->n_spans;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->spans[mid].from <= off) lo = mid;
        else hi = mid;
    }
    if (!h->n_spans || off < h->spans[lo].from || len > h->spans[lo].to - off) return NULL;
    return in->bytes + in->at[lo] + (off - h->spans[lo].from);
}

EXPORT(ozw_view) int ozw_view(void *p, double threshold, const char *location, const uint8_t *inline_bytes,
                              size_t inline_len, uint8_t **out, size_t *out_len);
int ozw_view(void *p, double threshold, const char *location, const uint8_t *inline_bytes, size_t inline_len,
             uint8_t **out, size_t *out_len)
{
    ozw *h = p;
    *out = NULL;
    *out_len = 0;
    if (!location || !oz_view_plain_location(location)) return oz_view_bad_location(location ? location : "");
    int rc = spans_of(h, threshold);
    if (rc) return rc;
    inlined in = { h, inline_bytes, malloc((h->n_spans ? h->n_spans : 1) * sizeof(uint64_t)) };
    if (!in.at) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (view)");
    uint64_t total = 0;
    for (size_t i = 0; i < h->n_spans; i++) {
        in.at[i] = total;
        total += h->spans[i].to - h->spans[i].from;
    }
    oz_buf b = { 0 };
    if (total != inline_len || (inline_len && !inline_bytes))
        rc = oz_err(ONNXZIP_EINVAL, -1, "%s: the view's inline ranges hold %llu bytes, %zu given", h->a->path,
                    (unsigned long long)total, inline_len);
    else
        rc = oz_view_build(h->a, location, (uint64_t)threshold, inline_at, &in, &b);
    free(in.at);
    if (!rc && !b.p) rc = oz_buf_reserve(&b, 1);
    if (rc) {
        oz_buf_free(&b);
        return rc;
    }
    *out = b.p;
    *out_len = b.len;
    return 0;
}

/* ------------------------------------------------------------------------
 * Verify
 * --------------------------------------------------------------------- */

EXPORT(ozw_verify_begin) void *ozw_verify_begin(void *p);
void *ozw_verify_begin(void *p)
{
    oz_stream *s = malloc(sizeof *s);
    if (!s) {
        oz_err(ONNXZIP_ENOMEM, -1, "out of memory (verify)");
        return NULL;
    }
    if (oz_stream_init(s, ((ozw *)p)->a)) {
        free(s);
        return NULL;
    }
    return s;
}

EXPORT(ozw_verify_feed) int ozw_verify_feed(void *v, const uint8_t *p, size_t n);
int ozw_verify_feed(void *v, const uint8_t *p, size_t n)
{
    return oz_stream_feed(v, p, n);
}

EXPORT(ozw_verify_abort) void ozw_verify_abort(void *v);
void ozw_verify_abort(void *v)
{
    if (!v) return;
    oz_stream_free(v);
    free(v);
}

/* The file's end, then what onnxzip_verify() requires of the model itself
 * (verify.c's check_model_fields: the fields onnx.checker requires). */
EXPORT(ozw_verify_end) int ozw_verify_end(void *v);
int ozw_verify_end(void *v)
{
    oz_stream *s = v;
    const onnxzip_archive *a = s->a;
    int rc = oz_stream_finish(s);
    if (!rc)
        rc = oz_check_model_fields(a->model, a->model_len, a->path, 1,
                                   (int64_t)a->zip.entries[a->zip.model_index].pub.data_offset);
    ozw_verify_abort(v);
    return rc;
}
