/* Views of archive handles without a mapping (onnxzip_view_inline_spans(),
 * onnxzip_view_model_inline()): the host reads the ranges a view copies
 * and hands them back; the view is then built as onnxzip_view_model()
 * builds it (view_build.c). */
#include <stdlib.h>

#include "convert/view_build.h"
#include "read/view_record.h"

typedef struct spans {
    oz_file_span *v;
    size_t n, cap;
} spans;

static int add_span(void *ctx, uint64_t off, uint64_t len)
{
    spans *s = ctx;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        oz_file_span *v = realloc(s->v, cap * sizeof *v);
        if (!v) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (view)");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (oz_file_span){ off, off + len };
    return 0;
}

static int by_from(const void *x, const void *y)
{
    uint64_t a = ((const oz_file_span *)x)->from, b = ((const oz_file_span *)y)->from;
    return (a > b) - (a < b);
}

/* The file ranges a view of threshold `below` copies, sorted, merged where
 * they overlap or touch. */
static int spans_of(const onnxzip_archive *a, uint64_t below, spans *s)
{
    int rc = a->layout == ONNXZIP_LAYOUT_ARCHIVE ? oz_view_inlined(a, below, add_span, s)
           : oz_err(ONNXZIP_EINVAL, -1, "%s: a classic model is its own view", a->path);
    if (rc) return rc;
    if (s->n) qsort(s->v, s->n, sizeof *s->v, by_from); /* v is NULL when there are none */
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (k && s->v[i].from <= s->v[k - 1].to) {
            if (s->v[i].to > s->v[k - 1].to) s->v[k - 1].to = s->v[i].to;
        } else {
            s->v[k++] = s->v[i];
        }
    }
    s->n = k;
    return 0;
}

int onnxzip_view_inline_spans(const onnxzip_archive *a, uint64_t size_threshold, onnxzip_span_fn span, void *ctx)
{
    if (!a || !span) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_inline_spans: NULL argument");
    spans s = { 0 };
    int rc = spans_of(a, size_threshold, &s);
    for (size_t i = 0; !rc && i < s.n; i++) rc = span(ctx, s.v[i].from, s.v[i].to - s.v[i].from);
    free(s.v);
    return rc;
}

typedef struct inlined {
    const spans *s;
    const uint8_t *bytes; /* the spans' bytes, one after the other */
    uint64_t *at;         /* where span i's bytes begin in `bytes` */
} inlined;

/* Bytes [off, off + len) from the span that holds them. */
static const uint8_t *inline_at(void *ctx, uint64_t off, uint64_t len)
{
    const inlined *in = ctx;
    const spans *s = in->s;
    size_t lo = 0, hi = s->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].from <= off) lo = mid;
        else hi = mid;
    }
    if (!s->n || off < s->v[lo].from || len > s->v[lo].to - off) return NULL;
    return in->bytes + in->at[lo] + (off - s->v[lo].from);
}

static int build(const onnxzip_archive *a, const onnxzip_view_options *o, const spans *s, const void *bytes,
                 size_t len, oz_buf *out)
{
    inlined in = { s, bytes, malloc((s->n ? s->n : 1) * sizeof(uint64_t)) };
    if (!in.at) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (view)");
    uint64_t total = 0;
    for (size_t i = 0; i < s->n; i++) {
        in.at[i] = total;
        total += s->v[i].to - s->v[i].from;
    }
    int rc = total != len || (len && !bytes)
           ? oz_err(ONNXZIP_EINVAL, -1, "%s: the view's inline ranges hold %llu bytes, %zu given", a->path,
                    (unsigned long long)total, len)
           : oz_view_build(a, o->location, o->size_threshold, inline_at, &in, out);
    free(in.at);
    return rc;
}

int onnxzip_view_model_inline(const onnxzip_archive *a, const onnxzip_view_options *opts, const void *inline_bytes,
                              size_t inline_len, void **data, size_t *size)
{
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!a || !opts || !data || !size) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_view_model_inline: NULL argument");
    if (!opts->location || !oz_view_plain_location(opts->location))
        return oz_view_bad_location(opts->location ? opts->location : "");
    spans s = { 0 };
    oz_buf b = { 0 };
    int rc = spans_of(a, opts->size_threshold, &s);
    if (!rc) rc = oz_verify_model_fields(a); /* no view that verify refuses */
    if (!rc) rc = build(a, opts, &s, inline_bytes, inline_len, &b);
    if (!rc && !b.p) rc = oz_buf_reserve(&b, 1); /* an empty model still gets a buffer */
    free(s.v);
    if (rc) {
        oz_buf_free(&b);
        return rc;
    }
    *data = b.p;
    *size = b.len;
    return 0;
}
