/*
 * listing.c — onnxzip_listing(): what `onnxzip ls` prints of an archive, as
 * tables for people or as one JSON object for scripts. The CLI, Python and
 * the WebAssembly binding print this one text, so an archive lists the same
 * whichever way it was opened: every number in it is a property of the
 * file (alignment from the file offset, never from an address in memory).
 */
#include <inttypes.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/escape.h"
#include "common/internal.h"

/* The text being written; the first failure (out of memory) sticks.
 * models: a package's models opened one each, in member order, for their
 * tensor counts and bytes (onnxzip_listing_models()), or none. */
typedef struct out {
    oz_buf b;
    int rc;
    const onnxzip_archive *const *models;
    size_t n_models;
} out;

#if defined(__MINGW32__)
__attribute__((format(gnu_printf, 2, 3)))
#elif defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!o->rc) o->rc = oz_buf_vprintf(&o->b, fmt, ap);
    va_end(ap);
}

static void put_json(out *o, const char *s)
{
    if (!o->rc) o->rc = oz_buf_json_string(&o->b, s);
}

/* `s` for a terminal (escape.h); returns the columns used. */
static size_t put_text(out *o, const char *s)
{
    size_t cols = 0;
    if (!o->rc) o->rc = oz_buf_text(&o->b, s, &cols);
    return cols;
}

static size_t text_width(const char *s)
{
    size_t cols = 0;
    oz_buf_text(NULL, s, &cols);
    return cols;
}

/* The file's alignment of a tensor's data: its offset's, in the archive, the
 * .onnx or the side file (onnxzip_tensor.alignment is the address's). */
static uint32_t tensor_alignment(const onnxzip_tensor *t)
{
    return t->storage == ONNXZIP_STORAGE_TYPED ? 0 : oz_alignment_of(t->file_offset);
}

static const char *storage_name(onnxzip_storage s)
{
    switch (s) {
    case ONNXZIP_STORAGE_ENTRY: return "entry";
    case ONNXZIP_STORAGE_INLINE: return "inline";
    case ONNXZIP_STORAGE_TYPED: return "typed";
    case ONNXZIP_STORAGE_FILE: return "file";
    }
    return "unknown";
}

static const char *kind_name(onnxzip_tensor_kind k)
{
    switch (k) {
    case ONNXZIP_KIND_INITIALIZER: return "initializer";
    case ONNXZIP_KIND_ATTRIBUTE: return "attribute";
    case ONNXZIP_KIND_SPARSE_VALUES: return "sparse_values";
    case ONNXZIP_KIND_SPARSE_INDICES: return "sparse_indices";
    }
    return "unknown";
}

/* The entry named in a tensor's row: its own zip entry only (a side file's
 * location is not an entry). */
static const char *entry_of(const onnxzip_tensor *t)
{
    return t->storage == ONNXZIP_STORAGE_ENTRY ? t->entry : NULL;
}

/* A package opened for its members only (ONNXZIP_MODEL_NONE): no model held, no tensors to list. */
static int members_only(const onnxzip_archive *a)
{
    return onnxzip_member_count(a) && !onnxzip_model_path(a);
}

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

/* The bytes of a model's tensors (onnxzip_tensor.nbytes summed; saturated,
 * as views may overlap). */
static uint64_t tensor_bytes(const onnxzip_archive *m)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < onnxzip_tensor_count(m); i++) {
        uint64_t nb = onnxzip_tensor_at(m, i)->nbytes;
        sum = nb > UINT64_MAX - sum ? UINT64_MAX : sum + nb;
    }
    return sum;
}

/* ---------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------- */

static void json_entry(out *o, const onnxzip_entry *e)
{
    put(o, "{\"name\": ");
    put_json(o, e->name);
    put(o, ", \"header_offset\": %" PRIu64 ", \"data_offset\": %" PRIu64 ", \"size\": %" PRIu64
           ", \"crc32\": %" PRIu32 ", \"xxh3\": ", e->header_offset, e->data_offset, e->size, e->crc32);
    if (e->has_xxh3) put(o, "\"%016" PRIx64 "\"", e->xxh3);
    else put(o, "null");
    put(o, ", \"alignment\": %" PRIu32 "}", oz_alignment_of(e->data_offset));
}

static void json_tensor(out *o, const onnxzip_tensor *t)
{
    put(o, "{\"name\": ");
    put_json(o, t->name);
    put(o, ", \"key\": ");
    put_json(o, t->key);
    put(o, ", \"data_type\": %" PRId32 ", \"dtype\": ", t->data_type);
    put_json(o, onnxzip_dtype_name(t->data_type));
    put(o, ", \"dims\": [");
    for (uint32_t d = 0; d < t->ndims; d++) put(o, "%s%" PRId64, d ? ", " : "", t->dims[d]);
    put(o, "], \"storage\": \"%s\", \"kind\": \"%s\", \"entry\": ", storage_name(t->storage), kind_name(t->kind));
    put_json(o, entry_of(t));
    put(o, ", \"offset\": %" PRIu64 ", \"nbytes\": %" PRIu64 ", \"alignment\": %" PRIu32 ", \"graph_depth\": %" PRIu32
           "}", t->file_offset, t->nbytes, tensor_alignment(t), t->graph_depth);
}

/* A package's members (spec 19): "models" and "files" arrays, in order. */
static void json_members(out *o, const onnxzip_archive *a)
{
    size_t n = onnxzip_member_count(a);
    const onnxzip_member *d = NULL;
    for (size_t i = 0; i < n; i++)
        if (onnxzip_member_at(a, i)->is_default) d = onnxzip_member_at(a, i);
    put(o, ",\n \"format\": \"1.%d\", \"model\": ", ONNXZIP_FORMAT_VERSION_MINOR);
    put_json(o, onnxzip_model_path(a));
    put(o, ", \"default_model\": ");
    put_json(o, d ? d->path : NULL);
    for (int kind = ONNXZIP_MEMBER_MODEL; kind <= ONNXZIP_MEMBER_FILE; kind++) {
        put(o, kind == ONNXZIP_MEMBER_MODEL ? ",\n \"models\": [" : ",\n \"files\": [");
        size_t k = 0; /* members of this kind so far */
        for (size_t i = 0; i < n; i++) {
            const onnxzip_member *m = onnxzip_member_at(a, i);
            if ((int)m->kind != kind) continue;
            put(o, k ? ",\n  {\"path\": " : "\n  {\"path\": ");
            put_json(o, m->path);
            put(o, ", \"size\": %" PRIu64 ", \"entry\": %zu", m->size, m->entry);
            if (kind == ONNXZIP_MEMBER_MODEL) put(o, ", \"default\": %s", m->is_default ? "true" : "false");
            if (kind == ONNXZIP_MEMBER_MODEL && o->n_models)
                put(o, ", \"tensors\": %zu, \"tensor_bytes\": %" PRIu64, onnxzip_tensor_count(o->models[k]),
                    tensor_bytes(o->models[k]));
            put(o, "}");
            k++;
        }
        put(o, k ? "\n ]" : "]");
    }
}

static void json(out *o, const onnxzip_archive *a)
{
    size_t ne = onnxzip_entry_count(a), nt = onnxzip_tensor_count(a);
    put(o, "{\"archive\": ");
    put_json(o, onnxzip_archive_path(a));
    if (onnxzip_member_count(a)) json_members(o, a);
    put(o, ",\n \"entries\": [");
    for (size_t i = 0; i < ne; i++) {
        put(o, i ? ",\n  " : "\n  ");
        json_entry(o, onnxzip_entry_at(a, i));
    }
    put(o, ne ? "\n ],\n \"tensors\": [" : "],\n \"tensors\": [");
    for (size_t i = 0; i < nt; i++) {
        put(o, i ? ",\n  " : "\n  ");
        json_tensor(o, onnxzip_tensor_at(a, i));
    }
    put(o, nt ? "\n ]}\n" : "]}\n");
}

/* ---------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------- */

/* Formats dims as "[64, 3, 7, 7]", cut short with "...]" when too long for a
 * table cell (the JSON has every dim). */
static const char *format_shape(const onnxzip_tensor *t, char *buf, size_t cap)
{
    size_t len = 1;
    buf[0] = '[';
    for (uint32_t d = 0; d < t->ndims; d++) {
        int n = snprintf(buf + len, cap - len, "%s%" PRId64, d ? ", " : "", t->dims[d]);
        if (n < 0 || (size_t)n + 5 >= cap - len) {
            memcpy(buf + len, "...]", 5);
            return buf;
        }
        len += (size_t)n;
    }
    memcpy(buf + len, "]", 2);
    return buf;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* A left-aligned cell of text that may need escaping. */
static void put_cell(out *o, const char *s, size_t width)
{
    put(o, "%*s  ", (int)(width - put_text(o, s)), "");
}

static void entry_table(out *o, const onnxzip_archive *a)
{
    size_t n = onnxzip_entry_count(a);
    put(o, "\nentries:\n%5s  %12s  %12s  %5s  %-8s  %s\n", "#", "data_offset", "size", "align", "crc32", "name");
    for (size_t i = 0; i < n; i++) {
        const onnxzip_entry *e = onnxzip_entry_at(a, i);
        put(o, "%5zu  %12" PRIu64 "  %12" PRIu64 "  %5" PRIu32 "  %08" PRIx32 "  ", i, e->data_offset, e->size,
            oz_alignment_of(e->data_offset), e->crc32);
        put_text(o, e->name);
        put(o, "\n");
    }
}

typedef struct tensor_widths {
    size_t name, dtype, shape, entry;
} tensor_widths;

/* Column widths from the longest cell, so that the table lines up. */
static tensor_widths measure_tensors(const onnxzip_archive *a)
{
    tensor_widths w = { 4, 5, 5, 5 };
    size_t n = onnxzip_tensor_count(a);
    char shape[64];
    for (size_t i = 0; i < n; i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        w.name = max_size(w.name, text_width(t->key));
        w.dtype = max_size(w.dtype, strlen(onnxzip_dtype_name(t->data_type)));
        w.shape = max_size(w.shape, strlen(format_shape(t, shape, sizeof shape)));
        if (entry_of(t)) w.entry = max_size(w.entry, text_width(t->entry));
    }
    return w;
}

static void tensor_row(out *o, const onnxzip_tensor *t, const tensor_widths *w)
{
    char shape[64];
    put_cell(o, t->key, w->name); /* an unnamed tensor's path in the model */
    put(o, "%-*s  %-*s  %-7s  ", (int)w->dtype, onnxzip_dtype_name(t->data_type), (int)w->shape,
        format_shape(t, shape, sizeof shape), storage_name(t->storage));
    if (entry_of(t)) put_cell(o, t->entry, w->entry);
    else put(o, "%-*s  ", (int)w->entry, "-");
    put(o, "%12" PRIu64 "  %12" PRIu64 "  %5" PRIu32 "\n", t->file_offset, t->nbytes, tensor_alignment(t));
}

/* A package's models and files, the held model marked; with the models
 * opened (o->models), each model's tensor count and bytes. */
static void member_table(out *o, const onnxzip_archive *a)
{
    size_t n = onnxzip_member_count(a), models = 0;
    for (size_t i = 0; i < n; i++) models += onnxzip_member_at(a, i)->kind == ONNXZIP_MEMBER_MODEL;
    put(o, "package (format 1.%d): %zu model%s, %zu file%s", ONNXZIP_FORMAT_VERSION_MINOR, models, plural(models),
        n - models, plural(n - models));
    if (onnxzip_model_path(a)) {
        put(o, "; tensors below: model ");
        put_text(o, onnxzip_model_path(a));
    } else {
        put(o, " (onnxzip ls --model PATH lists a model's tensors)");
    }
    put(o, "\n\nmembers:\n%-5s  %12s  ", "kind", "size");
    if (o->n_models) put(o, "%7s  %12s  ", "tensors", "tensor_bytes");
    put(o, "path\n");
    for (size_t i = 0, k = 0; i < n; i++) {
        const onnxzip_member *m = onnxzip_member_at(a, i);
        int model = m->kind == ONNXZIP_MEMBER_MODEL;
        put(o, "%-5s  %12" PRIu64 "  ", model ? "model" : "file", m->size);
        if (o->n_models && model)
            put(o, "%7zu  %12" PRIu64 "  ", onnxzip_tensor_count(o->models[k]), tensor_bytes(o->models[k]));
        else if (o->n_models)
            put(o, "%7s  %12s  ", "-", "-");
        k += model;
        put_text(o, m->path);
        put(o, "%s\n", m->is_default ? "  (default)" : "");
    }
}

static void tables(out *o, const onnxzip_archive *a)
{
    static const char *const layouts[] = { "onnxzip archive", "classic ONNX model",
                                           "classic ONNX model with external data" };
    size_t n = onnxzip_tensor_count(a);
    tensor_widths w = measure_tensors(a);
    put_text(o, onnxzip_archive_path(a));
    put(o, ": %s, %zu entries", onnxzip_member_count(a) ? "onnxzip package" : layouts[onnxzip_archive_layout(a)],
        onnxzip_entry_count(a));
    if (members_only(a)) { /* no model held: the members table says what each model has */
        put(o, "\n");
        member_table(o, a);
        entry_table(o, a);
        return;
    }
    put(o, ", %zu tensors\n", n);
    if (onnxzip_member_count(a)) member_table(o, a);
    entry_table(o, a);
    put(o, "\ntensors:\n%-*s  %-*s  %-*s  %-7s  %-*s  %12s  %12s  %5s\n", (int)w.name, "name", (int)w.dtype,
        "dtype", (int)w.shape, "shape", "storage", (int)w.entry, "entry", "offset", "nbytes", "align");
    for (size_t i = 0; i < n; i++) tensor_row(o, onnxzip_tensor_at(a, i), &w);
}

/* The i-th model member of `a` holds model `m` (its path), for onnxzip_listing_models(). */
static int check_models(const onnxzip_archive *a, const onnxzip_archive *const *models, size_t n)
{
    const char *shown = onnxzip_archive_path(a);
    if (!members_only(a))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: onnxzip_listing_models: not a package opened for its members "
                      "(ONNXZIP_MODEL_NONE)", shown);
    size_t k = 0, count = onnxzip_member_count(a);
    for (size_t i = 0; i < count; i++) {
        const onnxzip_member *m = onnxzip_member_at(a, i);
        if (m->kind != ONNXZIP_MEMBER_MODEL) continue;
        const char *held = k < n && models[k] ? onnxzip_model_path(models[k]) : NULL;
        if (!held || strcmp(held, m->path) != 0)
            return oz_err(ONNXZIP_EINVAL, -1, "%s: onnxzip_listing_models: handle %zu holds %s, not model '%s'",
                          shown, k, held ? held : "no model of a package", m->path);
        k++;
    }
    if (k != n)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: onnxzip_listing_models: %zu handles for %zu models", shown, n, k);
    return 0;
}

static int listing(const onnxzip_archive *a, const onnxzip_archive *const *models, size_t n, unsigned flags,
                   char **text)
{
    if (text) *text = NULL;
    if (!a || !text) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_listing: NULL %s", a ? "text" : "archive");
    if (flags & ~ONNXZIP_LISTING_JSON)
        return oz_err(ONNXZIP_EINVAL, -1, "%s: unknown listing flags 0x%x", onnxzip_archive_path(a), flags);
    if (models) {
        int rc = check_models(a, models, n);
        if (rc) return rc;
    }
    out o = { { NULL, 0, 0 }, 0, models, models ? n : 0 };
    if (flags & ONNXZIP_LISTING_JSON) json(&o, a);
    else tables(&o, a);
    if (!o.rc) o.rc = oz_buf_append(&o.b, "", 1); /* the NUL */
    if (o.rc) {
        oz_buf_free(&o.b);
        return o.rc;
    }
    *text = (char *)o.b.p;
    return 0;
}

int onnxzip_listing(const onnxzip_archive *a, unsigned flags, char **text)
{
    return listing(a, NULL, 0, flags, text);
}

int onnxzip_listing_models(const onnxzip_archive *a, const onnxzip_archive *const *models, size_t n,
                           unsigned flags, char **text)
{
    if (!models && text) *text = NULL;
    if (!models) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_listing_models: NULL models");
    return listing(a, models, n, flags, text);
}
