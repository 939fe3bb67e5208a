/* onnxzip_unpack()'s plan (unpack_plan.h): where each tensor goes, the
 * model rewritten, each data file as segments. Nothing is written here. */
#include <stdio.h>
#include <stdlib.h>

#include "convert/unpack_origin.h"
#include "read/source_read.h"
#include "common/sha1.h"

#define PROGRESS_STEP ((uint64_t)8 << 20)

int oz_unpack_nomem(void)
{
    return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
}

int oz_unpack_same_folded(const char *a, const char *b)
{
    for (; *a && oz_ascii_lower(*a) == oz_ascii_lower(*b); a++, b++) {}
    return *a == *b;
}

void oz_unpack_progress(unpack *u, uint64_t n)
{
    u->done += n;
    if (u->o->progress && u->done - u->reported >= PROGRESS_STEP) {
        u->reported = u->done;
        u->o->progress(u->o->progress_user, u->done, u->total);
    }
}

void onnxzip_unpack_options_init(onnxzip_unpack_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->layout = ONNXZIP_UNPACK_SINGLE;
    opts->alignment = 4096;
    opts->size_threshold = 1024;
}

onnxzip_unpack_layout oz_unpack_fallback(onnxzip_unpack_layout asked)
{
    return asked == ONNXZIP_UNPACK_ORIGINAL ? ONNXZIP_UNPACK_SINGLE : asked;
}

void oz_unpack_plan_init(unpack *u)
{
    oz_strmap_init(&u->by_entry, 0);
    oz_strmap_init(&u->taken, 1);
}

/* Tensors that stay inline rather than go to a data file. */
static int stays_inline(const unpack *u, const onnxzip_tensor *v)
{
    return u->o->layout == ONNXZIP_UNPACK_INLINE || v->nbytes < u->o->size_threshold;
}

int oz_unpack_plain_name(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* Windows device names (CON, PRN, AUX, NUL, COM0-9, LPT0-9), with any extension. */
static int is_device_name(const char *s)
{
    static const char *const names[] = { "con", "prn", "aux", "nul", "com", "lpt" };
    size_t stem = strcspn(s, ".");
    if (stem != 3 && stem != 4) return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int match = oz_ascii_lower(s[0]) == names[i][0] && oz_ascii_lower(s[1]) == names[i][1] &&
                    oz_ascii_lower(s[2]) == names[i][2];
        if (match) return stem == 3 ? i < 4 : i >= 4 && s[3] >= '0' && s[3] <= '9';
    }
    return 0;
}

/* The distinct entries, in order of first reference; the payload total. */
static int collect(unpack *u)
{
    const oz_tensors *ts = &u->a->tensors;
    if (u->o->layout == ONNXZIP_UNPACK_ORIGINAL) { /* unpack_origin.c places each tensor */
        size_t cap = 1;
        for (size_t i = 0; i < u->a->pkg.n; i++) cap += u->a->pkg.models[i].n_data;
        if (!(u->files = calloc(cap, sizeof *u->files))) return oz_unpack_nomem();
        for (size_t i = 0; i < ts->n; i++) u->total += ts->v[i].storage == ONNXZIP_STORAGE_ENTRY ? ts->v[i].nbytes : 0;
        return 0;
    }
    size_t cap = u->a->zip.n + 1; /* distinct entries, data files: at most one per entry */
    size_t files = cap + (u->o->layout == ONNXZIP_UNPACK_SAFETENSORS ? ts->n + 1 : 0); /* + shards, index */
    if (!(u->ents = calloc(cap, sizeof *u->ents)) || !(u->files = calloc(files, sizeof *u->files)))
        return oz_unpack_nomem();
    for (size_t i = 0; i < ts->n; i++) {
        const onnxzip_tensor *v = &ts->v[i];
        if (v->storage != ONNXZIP_STORAGE_ENTRY) continue;
        if (stays_inline(u, v)) { /* every inline tensor gets its own copy */
            u->total = u->total + v->nbytes < u->total ? UINT64_MAX : u->total + v->nbytes;
            continue;
        }
        if (u->o->layout == ONNXZIP_UNPACK_SAFETENSORS) {
            int taken = u->st_take(u, v);
            if (taken) { /* 1, or an error */
                if (taken < 0) return taken;
                continue;
            }
        }
        size_t len = strlen(v->entry);
        int rc = oz_strmap_put(&u->by_entry, v->entry, len, (uint32_t)u->nents, NULL);
        if (rc < 0) return rc;
        if (rc == 1) continue;
        const oz_zentry *z = oz_zip_find(&u->a->zip, v->entry, len);
        u->ents[u->nents++].e = &z->pub;
        u->total += z->pub.size;
    }
    return 0;
}

static int plan_single(unpack *u)
{
    if (!u->nents) return 0; /* no data file */
    char shown[OZ_PRINTABLE_CAP];
    size_t n = strlen(u->name) + sizeof ".data";
    if (!(u->location = malloc(u->o->location ? strlen(u->o->location) + 1 : n))) return oz_unpack_nomem();
    if (u->o->location)
        strcpy(u->location, u->o->location);
    else
        snprintf(u->location, n, "%s.data", u->name);
    if (oz_unpack_same_folded(u->location, u->name))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the data file name '%s' is the model's own name", u->model_path,
                      oz_printable(u->location, strlen(u->location), shown, sizeof shown));
    /* Empty entries go last, at the end of the file: onnx <= 1.13 reads a
     * "length" of 0 as "to the end of the file". */
    uint64_t off = 0, al = u->o->alignment;
    for (int empty = 0; empty < 2; empty++)
        for (size_t i = 0; i < u->nents; i++) {
            if ((u->ents[i].e->size == 0) != empty) continue;
            off = (off + al - 1) & ~(al - 1);
            u->ents[i].file_off = off;
            u->ents[i].file = u->location;
            off += u->ents[i].e->size;
        }
    u->files[u->nfiles++] = u->location;
    return 0;
}

static int name_taken(const unpack *u, const char *s)
{
    uint32_t k;
    return oz_strmap_get(&u->taken, s, strlen(s), &k) == 0;
}

/* A file name for an entry that cannot keep its own: "CON" -> "CON_", then
 * "_2", "_3"... until unique ignoring case. */
static int rename_entry(unpack *u, ent *x)
{
    const char *name = x->e->name;
    int n = strlen(name) > 240 ? 240 : (int)strlen(name);
    const char *dev = is_device_name(name) ? "_" : "";
    size_t cap = (size_t)n + 16;
    if (!(x->own = malloc(cap))) return oz_unpack_nomem();
    snprintf(x->own, cap, "%.*s%s", n, name, dev);
    for (unsigned k = 2; name_taken(u, x->own); k++) snprintf(x->own, cap, "%.*s%s_%u", n, name, dev, k);
    x->file = x->own;
    return oz_strmap_put(&u->taken, x->own, strlen(x->own), 0, NULL) < 0 ? ONNXZIP_ENOMEM : 0;
}

/* Entry names are C identifiers unique ignoring case, so they are file names
 * as they are, but for Windows device names and the model's own name. */
static int plan_per_tensor(unpack *u)
{
    int rc = oz_strmap_put(&u->taken, u->name, strlen(u->name), 0, NULL);
    for (size_t i = 0; rc >= 0 && i < u->nents; i++) {
        ent *x = &u->ents[i];
        if (is_device_name(x->e->name) || name_taken(u, x->e->name)) continue;
        x->file = x->e->name;
        rc = oz_strmap_put(&u->taken, x->file, strlen(x->file), 0, NULL);
    }
    for (size_t i = 0; rc >= 0 && i < u->nents; i++)
        if (!u->ents[i].file) rc = rename_entry(u, &u->ents[i]);
    for (size_t i = 0; rc >= 0 && i < u->nents; i++) u->files[u->nfiles++] = u->ents[i].file;
    return rc < 0 ? rc : 0;
}

static int too_big(unpack *u, uint64_t size, const char *what)
{
    return oz_err(ONNXZIP_ELIMIT, -1, "%s: the inline model would %s %llu bytes, over protobuf's limit of 2 GiB - 1 "
                  "(%llu bytes) for one serialized message; use the single-file or per-tensor layout "
                  "(onnxzip unpack --layout single)", onnxzip_archive_path(u->a), what, (unsigned long long)size,
                  (unsigned long long)OZ_MAX_MODEL);
}

int oz_unpack_plan(unpack *u)
{
    int rc = collect(u);
    if (!rc && u->o->layout == ONNXZIP_UNPACK_INLINE) /* before anything big is built */
        rc = u->total > OZ_MAX_MODEL - u->a->model_len ? too_big(u, u->a->model_len + u->total, "be about") : 0;
    else if (!rc && u->o->layout == ONNXZIP_UNPACK_ORIGINAL)
        rc = oz_og_plan(u);
    else if (!rc && u->o->layout == ONNXZIP_UNPACK_SAFETENSORS) {
        rc = plan_single(u); /* the side file, then the safetensors files */
        if (!rc) rc = u->st_plan(u);
    }
    else if (!rc)
        rc = u->o->layout == ONNXZIP_UNPACK_SINGLE ? plan_single(u) : plan_per_tensor(u);
    return rc;
}

static int desync(const unpack *u, const oz_tensor_info *t)
{
    char name[OZ_PRINTABLE_CAP];
    oz_printable(t->name.p, t->name.len, name, sizeof name);
    return oz_err(ONNXZIP_EPROTO, -1, "%s: tensor '%s': the model walk disagrees with the tensor index (internal "
                  "error)", onnxzip_archive_path(u->a), name);
}

static int on_tensor(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    unpack *u = ctx;
    const onnxzip_tensor *v = oz_tensors_of(&u->a->tensors, u->a->model, t);
    if (!v) return desync(u, t);
    u->seen++;
    if ((v->storage == ONNXZIP_STORAGE_ENTRY) != (t->data_location == 1)) return desync(u, t);
    if (v->storage != ONNXZIP_STORAGE_ENTRY) return 0;
    if (u->o->layout == ONNXZIP_UNPACK_ORIGINAL) {
        oz_unpack_progress(u, v->nbytes);
        return oz_og_ref(u, v, u->seen - 1, rw);
    }
    if (stays_inline(u, v)) {
        const uint8_t *p;
        int rc = oz_unpack_inline_bytes(u, v, &p);
        if (rc) return rc;
        *rw = (oz_rewrite){ .action = OZ_INLINE, .data = p, .size = v->nbytes };
        oz_unpack_progress(u, v->nbytes);
        return 0;
    }
    if (u->o->layout == ONNXZIP_UNPACK_SAFETENSORS && u->st_ref(u, v, rw)) {
        if (u->o->flags & ONNXZIP_UNPACK_CHECKSUM) {
            oz_sha1_hex(v->data, v->nbytes, u->checksum);
            rw->checksum = u->checksum;
        }
        return 0;
    }
    uint32_t k;
    if (oz_strmap_get(&u->by_entry, v->entry, strlen(v->entry), &k)) return desync(u, t);
    const ent *x = &u->ents[k];
    uint64_t part = v->file_offset - x->e->data_offset;
    /* SINGLE (and the side file): always offset and length; PER_TENSOR: only for part of an entry */
    int keys = u->o->layout != ONNXZIP_UNPACK_PER_TENSOR || part || v->nbytes != x->e->size;
    *rw = (oz_rewrite){ .action = OZ_EXTERNAL, .location = x->file, .has_offset = keys, .has_length = keys,
                        .offset = x->file_off + part, .length = v->nbytes };
    if (u->o->flags & ONNXZIP_UNPACK_CHECKSUM) {
        oz_sha1_hex(v->data, v->nbytes, u->checksum);
        rw->checksum = u->checksum;
    }
    return 0;
}

int oz_unpack_build(unpack *u, oz_buf *out)
{
    const onnxzip_archive *a = u->a;
    oz_walk w = { .visit = on_tensor, .ctx = u, .out = out, .path = a->path, .base = a->model,
                  .base_offset = (uint64_t)(a->model - a->base) };
    int rc = oz_walk_model(&w, a->model, a->model_len);
    if (!rc && u->seen != a->tensors.n)
        rc = oz_err(ONNXZIP_EPROTO, -1, "%s: the model walk met %zu tensors, the index has %zu (internal error)",
                    a->path, u->seen, a->tensors.n);
    if (!rc && out->len > OZ_MAX_MODEL)
        rc = u->o->layout == ONNXZIP_UNPACK_INLINE ? too_big(u, out->len, "be")
             : oz_err(ONNXZIP_ELIMIT, -1, "%s: the rewritten model is %zu bytes, over protobuf's 2 GiB - 1 limit",
                      a->path, out->len);
    return rc;
}


/* An entry tensor written inline: a handle without a mapping reads its
 * entry whole (checked against its CRC-32 and XXH3 when remote), kept
 * until the plan is freed. */
int oz_unpack_inline_bytes(unpack *u, const onnxzip_tensor *v, const uint8_t **p)
{
    if (v->data || !v->nbytes) {
        *p = v->data;
        return 0;
    }
    const oz_zentry *e = v->entry ? oz_zip_find(&u->a->zip, v->entry, strlen(v->entry)) : NULL;
    if (!e) return oz_err(ONNXZIP_EPROTO, -1, "%s: tensor '%s' names no entry (internal error)", u->a->path, v->name);
    uint8_t **n = realloc(u->inl, (u->ninl + 1) * sizeof *n);
    if (n) u->inl = n;
    size_t *ne = n ? realloc(u->inl_entry, (u->ninl + 1) * sizeof *ne) : NULL;
    if (!ne) return oz_unpack_nomem();
    u->inl_entry = ne;
    if (!(n[u->ninl] = malloc(e->pub.size ? (size_t)e->pub.size : 1))) return oz_unpack_nomem();
    int whole = v->file_offset == e->pub.data_offset && v->nbytes == e->pub.size;
    ne[u->ninl] = whole ? (size_t)(e - u->a->zip.entries) : SIZE_MAX;
    int rc = oz_entry_read(u->a, (size_t)(e - u->a->zip.entries), 0, e->pub.size, n[u->ninl++]);
    *p = n[u->ninl - 1] + (v->file_offset - e->pub.data_offset);
    return rc;
}

int oz_ufile_add(oz_ufile *f, onnxzip_segment s)
{
    if (!s.length) return 0;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        onnxzip_segment *n = realloc(f->seg, cap * sizeof *n);
        if (!n) return oz_unpack_nomem();
        f->seg = n;
        f->cap = cap;
    }
    f->seg[f->n++] = s;
    return 0;
}

int oz_ufile_zeros_range(const unpack *u, oz_ufile *f, uint64_t zeros, const char *entry, uint64_t off, uint64_t len)
{
    const oz_zip *z = &u->a->zip;
    const oz_zentry *e = oz_zip_find(z, entry, strlen(entry));
    if (!e || off > e->pub.size || len > e->pub.size - off)
        return oz_err(ONNXZIP_EPROTO, -1, "%s: entry '%s' does not hold bytes %llu..%llu (internal error)",
                      u->a->path, entry, (unsigned long long)off, (unsigned long long)(off + len));
    int rc = oz_ufile_add(f, (onnxzip_segment){ .kind = ONNXZIP_SEGMENT_ZEROS, .length = zeros });
    return rc ? rc : oz_ufile_add(f, (onnxzip_segment){ .kind = ONNXZIP_SEGMENT_ARCHIVE, .length = len,
                                                        .offset = e->pub.data_offset + off,
                                                        .entry = (size_t)(e - z->entries), .entry_offset = off });
}

oz_ufile *oz_unpack_new_file(unpack *u, const char *name)
{
    oz_ufile *n = realloc(u->out, (u->nout + 1) * sizeof *n);
    if (!n) return NULL;
    u->out = n;
    n[u->nout] = (oz_ufile){ .name = name };
    return &n[u->nout++];
}

/* SINGLE (and SAFETENSORS' side file): the entries in file order, as
 * plan_single placed them, padding between them. */
static int single_segments(unpack *u)
{
    oz_ufile *f = oz_unpack_new_file(u, u->location);
    uint64_t pos = 0;
    int rc = f ? 0 : oz_unpack_nomem();
    for (int empty = 0; empty < 2; empty++)
        for (size_t i = 0; !rc && i < u->nents; i++) {
            const ent *x = &u->ents[i];
            if ((x->e->size == 0) != empty) continue;
            rc = oz_ufile_zeros_range(u, f, x->file_off - pos, x->e->name, 0, x->e->size);
            pos = x->file_off + x->e->size;
        }
    return rc;
}

int oz_unpack_segments(unpack *u)
{
    switch (u->o->layout) {
    case ONNXZIP_UNPACK_ORIGINAL: return oz_og_segments(u);
    case ONNXZIP_UNPACK_SINGLE:
    case ONNXZIP_UNPACK_SAFETENSORS: return u->nents ? single_segments(u) : 0;
    case ONNXZIP_UNPACK_PER_TENSOR: break;
    case ONNXZIP_UNPACK_INLINE: return 0;
    }
    int rc = 0;
    for (size_t i = 0; i < u->nents && !rc; i++) {
        const ent *x = &u->ents[i];
        oz_ufile *f = oz_unpack_new_file(u, x->file);
        rc = f ? oz_ufile_zeros_range(u, f, 0, x->e->name, 0, x->e->size) : oz_unpack_nomem();
    }
    return rc;
}

void oz_unpack_plan_free(unpack *u)
{
    for (size_t i = 0; u->ents && i < u->nents; i++) free(u->ents[i].own);
    free(u->ents);
    free((void *)u->files);
    free(u->location);
    oz_og_free(u);
    for (size_t i = 0; i < u->ninl; i++) free(u->inl[i]);
    free(u->inl);
    free(u->inl_entry);
    for (size_t i = 0; i < u->nout; i++) free(u->out[i].seg);
    free(u->out);
    oz_strmap_free(&u->by_entry);
    oz_strmap_free(&u->taken);
    u->ents = NULL;
    u->files = NULL;
    u->location = NULL;
    u->inl = NULL;
    u->inl_entry = NULL;
    u->out = NULL;
    u->nents = u->nfiles = u->ninl = u->nout = 0;
}
