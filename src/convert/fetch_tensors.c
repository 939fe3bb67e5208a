/* onnxzip_fetch_tensors(): a shard of an archive, local or remote: the
 * main graph's initializers whose names match, each entry fetched once (the
 * kept entries' spans in chunk-size requests over the handle's connections,
 * a window at a time) and checked against the source's CRC-32 and XXH3
 * (and a pinned one against its pin, read/pins.h),
 * written with a model in which the others are graph inputs (onnx_walk's
 * OZ_TO_INPUT). */
#include <stdio.h>

#include "onnx/onnx_walk.h"
#include "read/pins.h"
#include "read/source_read.h"
#include "read/stream_check.h"

/* A bracket expression at p ("[abc]", "[a-z]", "[!x]") against c: 1 or 0,
 * *end set past it; -1 when unterminated (then '[' is a plain character). */
static int bracket(const char *p, char c, const char **end)
{
    const char *q = p + 1;
    int neg = *q == '!' || *q == '^', hit = 0;
    q += neg;
    do {
        if (!*q) return -1;
        if (q[1] == '-' && q[2] && q[2] != ']') {
            hit |= (unsigned char)c >= (unsigned char)q[0] && (unsigned char)c <= (unsigned char)q[2];
            q += 3;
        } else {
            hit |= *q++ == c;
        }
    } while (*q != ']');
    *end = q + 1;
    return hit != neg;
}

/* Shell-style, as fnmatch(3) without flags: '*' any run of characters, '?'
 * one, '[...]' one of a set; no escapes. */
static int glob_match(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL, *next;
    while (*s) {
        int b = *p == '[' ? bracket(p, *s, &next) : -1;
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (b == 1 || (b < 0 && (*p == '?' || *p == *s))) {
            p = b == 1 ? next : p + 1;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*') p++;
    return *p == '\0';
}

typedef struct shard {
    onnxzip_archive *a;
    const char *const *patterns;
    size_t npatterns;
    uint8_t *keep_entry; /* per entry: a kept tensor lies in it */
    size_t selected, to_inputs;
} shard;

/* A tensor the selection applies to: an initializer of the main graph whose
 * bytes are in an entry. Everything else is small or structural: kept. */
static int selectable(const onnxzip_tensor *v)
{
    return v->storage == ONNXZIP_STORAGE_ENTRY && v->kind == ONNXZIP_KIND_INITIALIZER && v->graph_depth == 0;
}

static int matches(const shard *s, const char *name)
{
    for (size_t i = 0; i < s->npatterns; i++)
        if (glob_match(s->patterns[i], name)) return 1;
    return 0;
}

static int visit(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    shard *s = ctx;
    const onnxzip_tensor *v = oz_tensors_of(&s->a->tensors, s->a->model, t);
    if (!v) return oz_err(ONNXZIP_EPROTO, -1, "%s: a tensor of the model is not in its index (internal error)",
                          s->a->path);
    if (selectable(v) && !matches(s, v->name)) {
        rw->action = OZ_TO_INPUT;
        s->to_inputs++;
        return 0;
    }
    s->selected += selectable(v);
    if (v->storage == ONNXZIP_STORAGE_ENTRY) {
        const oz_zentry *e = oz_zip_find(&s->a->zip, v->entry, strlen(v->entry));
        if (e) s->keep_entry[e - s->a->zip.entries] = 1;
    }
    return 0;
}

/* Entry i's data at `d`, checked against the source's digests, written. */
static int copy_entry(shard *s, size_t i, const uint8_t *d, onnxzip_writer *w)
{
    const oz_zentry *e = &s->a->zip.entries[i];
    int rc = oz_entry_check_data(e, s->a->path, d);
    if (!rc) rc = oz_pin_check(s->a, i, d); /* an entry a signature check hashed: these bytes */
    /* A package's model: its entries lie in its directory and its references
     * are relative to it, so without the directory they make a single-model
     * archive (spec 19.2). */
    size_t dir = s->a->zip.dir && !strncmp(e->pub.name, s->a->zip.dir, s->a->zip.dir_len) ? s->a->zip.dir_len : 0;
    return rc ? rc : onnxzip_writer_add_memory(w, e->pub.name + dir, d, (size_t)e->pub.size);
}

/* Kept entries (in file order) read together: runs of adjacent ones are
 * spans, headers included, all cut into chunk-size requests in flight at
 * once when remote. */
typedef struct batch {
    uint32_t *e;
    size_t ne;
    oz_file_span *sp;
    size_t nsp;
    uint64_t bytes;
} batch;

static int copy_batch(shard *s, batch *b, onnxzip_writer *w)
{
    const oz_zentry *z = s->a->zip.entries;
    uint8_t *buf = malloc(b->bytes ? (size_t)b->bytes : 1);
    if (!buf) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (%llu bytes)", s->a->path,
                            (unsigned long long)b->bytes);
    int rc = oz_source_read_spans(&s->a->src, b->sp, b->nsp, buf);
    uint64_t base = 0; /* where span j starts in buf */
    for (size_t k = 0, j = 0; k < b->ne && !rc; k++) {
        const oz_zentry *e = &z[b->e[k]];
        for (; e->pub.header_offset >= b->sp[j].to; j++) base += b->sp[j].to - b->sp[j].from;
        const uint8_t *h = buf + base + (e->pub.header_offset - b->sp[j].from);
        rc = oz_entry_check_header(s->a, b->e[k], h);
        if (!rc) rc = copy_entry(s, b->e[k], h + (e->pub.data_offset - e->pub.header_offset), w);
    }
    free(buf);
    b->ne = b->nsp = 0;
    b->bytes = 0;
    return rc;
}

/* Adds entry i to the batch: to the last span when it follows it. */
static void add(batch *b, const oz_zentry *e, uint32_t i)
{
    uint64_t from = e->pub.header_offset, to = e->pub.data_offset + e->pub.size;
    if (b->nsp && b->sp[b->nsp - 1].to == from) b->sp[b->nsp - 1].to = to;
    else b->sp[b->nsp++] = (oz_file_span){ from, to };
    b->e[b->ne++] = i;
    b->bytes += to - from;
}

static int copy_entries(shard *s, onnxzip_writer *w, void (*progress)(void *, uint64_t, uint64_t), void *user)
{
    const oz_zip *z = &s->a->zip;
    size_t cap = z->n ? z->n : 1;
    uint32_t *k = oz_zip_by_offset(z->entries, z->n);
    batch b = { .e = malloc(cap * sizeof *b.e), .sp = malloc(cap * sizeof *b.sp) };
    int rc = k && b.e && b.sp ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    uint64_t total = 0, done = 0, window = oz_spans_window(s->a);
    for (size_t i = 0; i < z->n && !rc; i++)
        total += s->keep_entry[i] && i != z->model_index ? z->entries[i].pub.size : 0;
    for (size_t j = 0; j <= z->n && !rc; j++) {
        const oz_zentry *e = j < z->n ? &z->entries[k[j]] : NULL;
        if (e && (!s->keep_entry[k[j]] || k[j] == z->model_index)) continue;
        /* memory: a window's worth at a time (or one larger entry alone) */
        if (b.ne && (!e || b.bytes + (e->pub.data_offset + e->pub.size - e->pub.header_offset) > window)) {
            for (size_t m = 0; m < b.ne; m++) done += z->entries[b.e[m]].pub.size;
            rc = copy_batch(s, &b, w);
            if (!rc) rc = oz_progress(progress, user, done, total);
        }
        if (e && !rc) add(&b, e, k[j]);
    }
    free(k);
    free(b.e);
    free(b.sp);
    return rc;
}

static int write_shard(shard *s, const char *path, const oz_buf *model,
                       void (*progress)(void *, uint64_t, uint64_t), void *user)
{
    onnxzip_writer *w = NULL;
    int rc = onnxzip_writer_create(path, NULL, &w);
    if (!rc) rc = copy_entries(s, w, progress, user);
    if (!rc) rc = onnxzip_writer_set_model(w, model->p, model->len);
    if (!rc) return onnxzip_writer_finish(&w);
    onnxzip_writer_abort(&w);
    return rc;
}

int onnxzip_fetch_tensors(onnxzip_archive *a, const char *path, const char *const *patterns, size_t npatterns,
                          void (*progress)(void *user, uint64_t done, uint64_t total), void *user)
{
    if (!a || !path || !patterns || !npatterns)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_fetch_tensors: NULL argument");
    for (size_t i = 0; i < npatterns; i++)
        if (!patterns[i]) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_fetch_tensors: NULL pattern");
    if (a->layout != ONNXZIP_LAYOUT_ARCHIVE)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_fetch_tensors: %s is not an archive", a->path);
    shard s = { .a = a, .patterns = patterns, .npatterns = npatterns };
    if (!(s.keep_entry = calloc(a->zip.n ? a->zip.n : 1, 1))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    oz_buf model = { 0 };
    oz_walk wk = { .visit = visit, .ctx = &s, .out = &model, .path = a->path, .base = a->model,
                   .base_offset = a->zip.entries[a->zip.model_index].pub.data_offset };
    int rc = oz_walk_model(&wk, a->model, a->model_len);
    if (!rc && !s.selected)
        rc = oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no initializer of the main graph stored in an entry matches %s'%s'%s",
                    a->path, npatterns > 1 ? "any of " : "", patterns[0], npatterns > 1 ? ", ..." : "");
    if (!rc) rc = write_shard(&s, path, &model, progress, user);
    oz_buf_free(&model);
    free(s.keep_entry);
    return rc;
}
