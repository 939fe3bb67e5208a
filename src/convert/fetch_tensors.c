/* onnxzip_fetch_tensors(): a shard of an archive, local or remote: the
 * main graph's initializers whose names match, each entry fetched once and
 * checked against the source's CRC-32 and XXH3, written with a model in
 * which the others are graph inputs (onnx_walk's OZ_TO_INPUT). */
#include <stdio.h>
#include <xxhash.h>

#include "common/checksum.h"
#include "onnx/onnx_walk.h"
#include "read/remote.h"

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
    const onnxzip_entry *e = &s->a->zip.entries[i].pub;
    oz_checksum cs;
    oz_checksum_init(&cs);
    oz_checksum_update(&cs, d, e->size);
    uint64_t xxh = XXH3_64bits_digest(&cs.xxh);
    if (cs.crc != e->crc32)
        return oz_err(ONNXZIP_ECRC, (int64_t)e->data_offset, "%s: entry '%s': CRC-32 of the data is %08x, the "
                      "archive records %08x", s->a->path, e->name, cs.crc, e->crc32);
    if (e->has_xxh3 && xxh != e->xxh3)
        return oz_err(ONNXZIP_EDIGEST, (int64_t)e->data_offset, "%s: entry '%s': XXH3-64 of the data is %016llx, "
                      "the archive records %016llx", s->a->path, e->name, (unsigned long long)xxh,
                      (unsigned long long)e->xxh3);
    return onnxzip_writer_add_memory(w, e->name, d, (size_t)e->size);
}

/* A run of kept entries side by side in the file (entries tile it): one
 * span, headers included, read at once (in parallel pieces when remote). */
static int copy_run(shard *s, const uint32_t *run, size_t n, onnxzip_writer *w)
{
    const oz_zentry *first = &s->a->zip.entries[run[0]], *last = &s->a->zip.entries[run[n - 1]];
    uint64_t from = first->pub.header_offset, to = last->pub.data_offset + last->pub.size;
    uint8_t *buf = malloc(to > from ? (size_t)(to - from) : 1);
    if (!buf) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (%llu bytes)", s->a->path,
                            (unsigned long long)(to - from));
    int rc = oz_span_read(s->a, from, to, buf);
    for (size_t k = 0; k < n && !rc; k++) {
        const oz_zentry *e = &s->a->zip.entries[run[k]];
        rc = oz_entry_check_header(s->a, run[k], buf + (e->pub.header_offset - from));
        if (!rc) rc = copy_entry(s, run[k], buf + (e->pub.data_offset - from), w);
    }
    free(buf);
    return rc;
}

/* Runs are cut at this many bytes (memory held at once), or at an entry
 * that is not kept. */
#define RUN_MAX ((uint64_t)64 << 20)

static int copy_entries(shard *s, onnxzip_writer *w, void (*progress)(void *, uint64_t, uint64_t), void *user)
{
    const oz_zip *z = &s->a->zip;
    uint32_t *k = oz_zip_by_offset(z->entries, z->n), *run = malloc((z->n ? z->n : 1) * sizeof *run);
    int rc = k && run ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    uint64_t total = 0, done = 0, bytes = 0;
    for (size_t i = 0; i < z->n && !rc; i++)
        total += s->keep_entry[i] && i != z->model_index ? z->entries[i].pub.size : 0;
    size_t n = 0;
    for (size_t j = 0; j <= z->n && !rc; j++) {
        int keep = j < z->n && s->keep_entry[k[j]] && k[j] != z->model_index;
        if (n && (!keep || bytes >= RUN_MAX)) { /* the run ends before entry j */
            rc = copy_run(s, run, n, w);
            for (size_t m = 0; m < n; m++) done += z->entries[run[m]].pub.size;
            if (!rc) rc = oz_progress(progress, user, done, total);
            n = 0;
            bytes = 0;
        }
        if (keep) {
            run[n++] = k[j];
            bytes += z->entries[k[j]].pub.size;
        }
    }
    free(k);
    free(run);
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
