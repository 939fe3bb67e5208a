/* The WebAssembly binding of the npm package (src/js): the library's public
 * API for archives whose bytes the host reads (onnxzip.h, "Advanced:
 * archives whose bytes the caller reads") exported to JavaScript, which
 * reads fetch ranges, Blob slices, buffers and Node files. The ABI: the
 * declarations below; lib/wasm.js is its JavaScript side. 64-bit offsets
 * and sizes cross as doubles (exact below 2^53). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxzip/onnxzip.h"

#define EXPORT(name) __attribute__((export_name(#name)))
#define MAX_SAFE 9007199254740992.0 /* 2^53 */

typedef struct ozw {
    onnxzip_archive *a;
    char *json;   /* ozw_json() */
    char *ranges; /* ozw_view_ranges() */
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

/* A double from JavaScript as a file offset or size: 0, or 1 when it is
 * none (the caller reports it). */
static int to_u64(double d, uint64_t *out)
{
    if (!(d >= 0 && d < MAX_SAFE) || d != (double)(uint64_t)d) return 1;
    *out = (uint64_t)d;
    return 0;
}

/* lib/archive.js's synchronous read of the source being opened by
 * ozw_open_file(): up to `n` bytes at `off` into `buf`; the count, 0 at the
 * end of the file, or -1 (bytes it must first read: it then calls again). */
__attribute__((import_module("onnxzip"), import_name("read"))) extern int ozw_import_read(int fd, void *buf,
                                                                                          size_t n, double off);

static int64_t import_read(void *ctx, uint64_t off, size_t n, void *dst)
{
    return ozw_import_read((int)(intptr_t)ctx, dst, n, (double)off);
}

/* A handle, or 0 with *need (the bytes from there on first), or a status.
 * `model`: a package's model to hold (onnxzip_host_source.model), NULL: the
 * default. */
static int open_any(const char *name, const uint8_t *win, size_t win_len, double win_off, double size, int fd,
                    double *need, void **out, const char *model, unsigned flags)
{
    if (out) *out = NULL;
    if (need) *need = -1;
    if (!need || !out) return ONNXZIP_EINVAL;
    uint64_t off = 0;
    onnxzip_host_source src = { .name = name, .window = win, .window_len = win_len,
                                .read = fd >= 0 ? import_read : NULL, .ctx = (void *)(intptr_t)fd,
                                .model = model, .flags = flags };
    /* A bad number: onnxzip_open_host() refuses the window with its message. */
    if (to_u64(size, &src.size) || to_u64(win_off, &off) || off + win_len != src.size) src.window_len = SIZE_MAX;
    ozw *h = calloc(1, sizeof *h);
    if (!h) return ONNXZIP_ENOMEM;
    uint64_t more = 0;
    int rc = onnxzip_open_host(&src, &h->a, &more);
    if (!rc && !h->a) *need = (double)more;
    if (!rc && h->a) *out = h;
    else free(h);
    return rc;
}

/* `model` comes last so that callers of the ABI before packages (which
 * pass one argument less: 0, NULL) still open the default. */
EXPORT(ozw_open) int ozw_open(const char *name, const uint8_t *win, size_t win_len, double win_off, double size,
                              double *need, void **out, const char *model);
int ozw_open(const char *name, const uint8_t *win, size_t win_len, double win_off, double size, double *need,
             void **out, const char *model)
{
    return open_any(name, win, win_len, win_off, size, -1, need, out, model, 0);
}

/* ozw_open() of a source whose every byte the package can read (a Blob,
 * bytes, a Node file): local headers are read through the import
 * onnxzip.read(fd, buf, n, off) and all checked now, in onnxzip_open()'s
 * order, so statuses are the local reader's. A read that returns -1 fails
 * the open; the package then reads those bytes and opens again. */
EXPORT(ozw_open_file) int ozw_open_file(const char *name, const uint8_t *win, size_t win_len, double win_off,
                                        double size, int fd, double *need, void **out, const char *model);
int ozw_open_file(const char *name, const uint8_t *win, size_t win_len, double win_off, double size, int fd,
                  double *need, void **out, const char *model)
{
    if (fd < 0) return ONNXZIP_EINVAL;
    return open_any(name, win, win_len, win_off, size, fd, need, out, model, 0);
}

/* ozw_open() of a URL whose package model lies before the window: its
 * entry (local header and bytes, one range) is read through the import as
 * ozw_open_file()'s reads are (-1: the package fetches that range and opens
 * again), no other byte before the window; local headers are checked on
 * each entry's first read (ONNXZIP_HOST_DEFER_HEADERS). */
EXPORT(ozw_open_lazy) int ozw_open_lazy(const char *name, const uint8_t *win, size_t win_len, double win_off,
                                        double size, int fd, double *need, void **out, const char *model);
int ozw_open_lazy(const char *name, const uint8_t *win, size_t win_len, double win_off, double size, int fd,
                  double *need, void **out, const char *model)
{
    if (fd < 0) return ONNXZIP_EINVAL;
    return open_any(name, win, win_len, win_off, size, fd, need, out, model, ONNXZIP_HOST_DEFER_HEADERS);
}

EXPORT(ozw_close) void ozw_close(void *p);
void ozw_close(void *p)
{
    ozw *h = p;
    if (!h) return;
    onnxzip_close(&h->a);
    onnxzip_free(h->json);
    free(h->ranges);
    free(h);
}

EXPORT(ozw_json) const char *ozw_json(void *p);
const char *ozw_json(void *p)
{
    ozw *h = p;
    onnxzip_free(h->json);
    h->json = NULL;
    return onnxzip_listing(h->a, ONNXZIP_LISTING_JSON, &h->json) ? NULL : h->json;
}

EXPORT(ozw_check_local) int ozw_check_local(void *p, size_t i, const uint8_t *hdr, size_t len);
int ozw_check_local(void *p, size_t i, const uint8_t *hdr, size_t len)
{
    return onnxzip_host_check_header(((ozw *)p)->a, i, hdr, len);
}

EXPORT(ozw_check_data) int ozw_check_data(void *p, size_t i, const uint8_t *data, size_t len);
int ozw_check_data(void *p, size_t i, const uint8_t *data, size_t len)
{
    return onnxzip_host_check_data(((ozw *)p)->a, i, data, len);
}

EXPORT(ozw_model) const uint8_t *ozw_model(void *p);
const uint8_t *ozw_model(void *p)
{
    const void *m = NULL;
    size_t n;
    onnxzip_model_bytes(((ozw *)p)->a, &m, &n);
    return m;
}

EXPORT(ozw_model_size) double ozw_model_size(void *p);
double ozw_model_size(void *p)
{
    const void *m;
    size_t n = 0;
    onnxzip_model_bytes(((ozw *)p)->a, &m, &n);
    return (double)n;
}

/* ------------------------------------------------------------------------
 * Packages (onnxzip_member_*): JavaScript reads a member's bytes itself, as
 * a tensor's, at its entry's data offset (ozw_check_local first)
 * --------------------------------------------------------------------- */

EXPORT(ozw_member_count) size_t ozw_member_count(void *p);
size_t ozw_member_count(void *p)
{
    return onnxzip_member_count(((ozw *)p)->a);
}

/* The path of member `i`, or NULL out of range. */
EXPORT(ozw_member_path) const char *ozw_member_path(void *p, size_t i);
const char *ozw_member_path(void *p, size_t i)
{
    const onnxzip_member *m = onnxzip_member_at(((ozw *)p)->a, i);
    return m ? m->path : NULL;
}

/* Member `i`'s kind (onnxzip_member_kind), is_default, size and entry
 * index as out[0..3]; ONNXZIP_EINVAL out of range. */
EXPORT(ozw_member_info) int ozw_member_info(void *p, size_t i, double *out);
int ozw_member_info(void *p, size_t i, double *out)
{
    const onnxzip_member *m = onnxzip_member_at(((ozw *)p)->a, i);
    if (!m) return ONNXZIP_EINVAL;
    out[0] = m->kind;
    out[1] = m->is_default;
    out[2] = (double)m->size;
    out[3] = (double)m->entry;
    return 0;
}

/* The path of the model the handle holds; NULL when it is no package. */
EXPORT(ozw_model_path) const char *ozw_model_path(void *p);
const char *ozw_model_path(void *p)
{
    return onnxzip_model_path(((ozw *)p)->a);
}

/* ------------------------------------------------------------------------
 * Views
 * --------------------------------------------------------------------- */

/* A threshold from JavaScript (which checks it first): as the library
 * parses sizes, so that a bad one is refused with its message. */
static int threshold_of(double t, uint64_t *out)
{
    char text[40];
    snprintf(text, sizeof text, "%.17g", t);
    return onnxzip_parse_size(text, out);
}

static int print_span(void *ctx, uint64_t off, uint64_t len)
{
    FILE *f = ctx;
    return fprintf(f, "%s[%llu,%llu]", ftell(f) > 1 ? "," : "", (unsigned long long)off,
                   (unsigned long long)len) < 0 ? ONNXZIP_ENOMEM : 0;
}

/* The view's inline ranges as JSON, [[offset, length], ...]. */
EXPORT(ozw_view_ranges) const char *ozw_view_ranges(void *p, double threshold);
const char *ozw_view_ranges(void *p, double threshold)
{
    ozw *h = p;
    free(h->ranges);
    h->ranges = NULL;
    uint64_t t;
    if (threshold_of(threshold, &t)) return NULL;
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    int rc = f ? 0 : ONNXZIP_ENOMEM;
    if (f) {
        fputc('[', f);
        rc = onnxzip_view_inline_spans(h->a, t, print_span, f);
        fputc(']', f);
        if (ferror(f)) rc = rc ? rc : ONNXZIP_ENOMEM;
        if (fclose(f) && !rc) rc = ONNXZIP_ENOMEM;
    }
    if (rc) {
        free(s);
        return NULL;
    }
    return h->ranges = s;
}

EXPORT(ozw_view) int ozw_view(void *p, double threshold, const char *location, const uint8_t *inline_bytes,
                              size_t inline_len, uint8_t **out, size_t *out_len);
int ozw_view(void *p, double threshold, const char *location, const uint8_t *inline_bytes, size_t inline_len,
             uint8_t **out, size_t *out_len)
{
    onnxzip_view_options o;
    onnxzip_view_options_init(&o);
    o.location = location;
    int rc = threshold_of(threshold, &o.size_threshold);
    void *data = NULL;
    if (!rc) rc = onnxzip_view_model_inline(((ozw *)p)->a, &o, inline_bytes, inline_len, &data, out_len);
    *out = data;
    return rc;
}

/* ------------------------------------------------------------------------
 * Verify
 * --------------------------------------------------------------------- */

EXPORT(ozw_verify_begin) void *ozw_verify_begin(void *p);
void *ozw_verify_begin(void *p)
{
    onnxzip_verifier *v = NULL;
    onnxzip_verifier_begin(((ozw *)p)->a, &v);
    return v;
}

EXPORT(ozw_verify_feed) int ozw_verify_feed(void *v, const uint8_t *p, size_t n);
int ozw_verify_feed(void *v, const uint8_t *p, size_t n)
{
    return onnxzip_verifier_feed(v, p, n);
}

EXPORT(ozw_verify_abort) void ozw_verify_abort(void *v);
void ozw_verify_abort(void *v)
{
    onnxzip_verifier_free((onnxzip_verifier **)&v);
}

EXPORT(ozw_verify_end) int ozw_verify_end(void *v);
int ozw_verify_end(void *v)
{
    return onnxzip_verifier_end((onnxzip_verifier **)&v);
}

/* ------------------------------------------------------------------------
 * File plans (onnxzip_file_plan_*): the bytes unpack writes for each file of
 * a package, which JavaScript hashes (WebCrypto, node:crypto) to check a
 * signature. Planning a model may read entries through the import
 * onnxzip.read, as ozw_open_file() does (-1: JavaScript reads them, plans
 * again).
 * --------------------------------------------------------------------- */

/* The plan of `path` (NULL: every file), or NULL (ozw_error_status()). */
EXPORT(ozw_plan_create) void *ozw_plan_create(void *p, const char *path);
void *ozw_plan_create(void *p, const char *path)
{
    onnxzip_file_plan *plan = NULL;
    onnxzip_file_plan_create(((ozw *)p)->a, path, &plan);
    return plan;
}

/* The paths of every file, planned by name only (onnxzip_file_plan_names:
 * no model entry read where the manifest names the files), or NULL. */
EXPORT(ozw_plan_names) void *ozw_plan_names(void *p);
void *ozw_plan_names(void *p)
{
    onnxzip_file_plan *plan = NULL;
    onnxzip_file_plan_names(((ozw *)p)->a, &plan);
    return plan;
}

EXPORT(ozw_plan_free) void ozw_plan_free(void *plan);
void ozw_plan_free(void *plan)
{
    onnxzip_file_plan_free((onnxzip_file_plan **)&plan);
}

EXPORT(ozw_plan_count) size_t ozw_plan_count(const void *plan);
size_t ozw_plan_count(const void *plan)
{
    return onnxzip_file_plan_count(plan);
}

/* File `i`'s path, model path (NULL for a plain file), size and segment
 * count as out[0..3] (pointers as numbers); ONNXZIP_EINVAL out of range. */
EXPORT(ozw_plan_file) int ozw_plan_file(const void *plan, size_t i, double *out);
int ozw_plan_file(const void *plan, size_t i, double *out)
{
    const onnxzip_planned_file *f = onnxzip_file_plan_at(plan, i);
    if (!f) return ONNXZIP_EINVAL;
    out[0] = (double)(uintptr_t)f->path;
    out[1] = (double)(uintptr_t)f->model;
    out[2] = (double)f->size;
    out[3] = (double)f->n_segments;
    return 0;
}

/* Segment `k` of file `i`: kind, length, bytes (a pointer), offset, entry
 * (-1: none, the whole archive file) and entry offset as out[0..5];
 * ONNXZIP_EINVAL out of range. */
EXPORT(ozw_plan_segment) int ozw_plan_segment(const void *plan, size_t i, size_t k, double *out);
int ozw_plan_segment(const void *plan, size_t i, size_t k, double *out)
{
    const onnxzip_planned_file *f = onnxzip_file_plan_at(plan, i);
    if (!f || k >= f->n_segments) return ONNXZIP_EINVAL;
    const onnxzip_segment *s = &f->segments[k];
    out[0] = s->kind;
    out[1] = (double)s->length;
    out[2] = (double)(uintptr_t)s->bytes;
    out[3] = (double)s->offset;
    out[4] = s->entry == SIZE_MAX ? -1 : (double)s->entry;
    out[5] = (double)s->entry_offset;
    return 0;
}
