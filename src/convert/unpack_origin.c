/* ONNXZIP_UNPACK_ORIGINAL: a package's model written back as it was packed
 * (spec 19.4, 19.6): its data files of their names, every tensor the
 * manifest's origin list places at its offset there, the others inline. */
#include <stdio.h>
#include <stdlib.h>

#include "common/package_path.h"
#include "convert/unpack_origin.h"

typedef struct og_place {
    uint64_t ordinal, offset;
    size_t file;
} og_place;

typedef struct og_job {
    size_t file;
    uint64_t offset, from, len; /* `len` archive bytes at `from` to `offset` of data file `file` */
    const char *entry;
} og_job;

struct oz_og {
    const oz_pkg_model *m;
    og_place *places; /* by ordinal */
    size_t n_places, next;
    og_job *jobs;
    size_t n_jobs, cap_jobs;
};

static int add_job(oz_og *g, og_job j)
{
    if (g->n_jobs == g->cap_jobs) {
        size_t cap = g->cap_jobs ? g->cap_jobs * 2 : 64;
        og_job *n = realloc(g->jobs, cap * sizeof *n);
        if (!n) return oz_unpack_nomem();
        g->jobs = n;
        g->cap_jobs = cap;
    }
    g->jobs[g->n_jobs++] = j;
    return 0;
}

/* Parses a checked origin list (i:f:o,...) into `out` (n items at most). */
static size_t parse_places(const char *s, og_place *out)
{
    size_t n = 0;
    while (s && *s) {
        char *end;
        og_place *p = &out[n++];
        p->ordinal = strtoull(s, &end, 10);
        p->file = (size_t)strtoull(end + 1, &end, 10);
        p->offset = strtoull(end + 1, &end, 10);
        s = *end ? end + 1 : end;
    }
    return n;
}

static size_t count_items(const char *s)
{
    size_t n = s && *s;
    for (; s && *s; s++) n += *s == ',';
    return n;
}

/* Another model of the directory whose data file `name` this one shares
 * (two models packed from one data file): its tensors placed there are
 * written too, so that each model's unpack writes the whole file. */
static int add_sibling(unpack *u, const onnxzip_member *mb, const oz_pkg_model *r)
{
    oz_og *g = u->og;
    onnxzip_archive b;
    og_place *pl = calloc(count_items(r->origin) + 1, sizeof *pl);
    int rc = pl ? oz_archive_view_model(u->a, mb, &b) : oz_unpack_nomem();
    size_t n = rc ? 0 : parse_places(r->origin, pl);
    for (size_t i = 0; i < n && !rc; i++) {
        size_t k = 0;
        while (k < g->m->n_data && strcmp(g->m->data[k], r->data[pl[i].file])) k++;
        const onnxzip_tensor *v = pl[i].ordinal < b.tensors.n ? &b.tensors.v[pl[i].ordinal] : NULL;
        if (k < g->m->n_data && v && v->storage == ONNXZIP_STORAGE_ENTRY)
            rc = add_job(g, (og_job){ k, pl[i].offset, v->file_offset, v->nbytes, v->entry });
    }
    if (pl) oz_archive_view_free(&b);
    free(pl);
    return rc;
}

static int add_siblings(unpack *u)
{
    const oz_package *p = &u->a->pkg;
    const char *self = onnxzip_model_path(u->a);
    size_t dir = oz_path_dir_len(self, strlen(self));
    int rc = 0;
    for (size_t i = 0; i < p->n && !rc; i++) {
        const onnxzip_member *mb = &p->members[i];
        const oz_pkg_model *r = &p->models[i];
        int shares = 0;
        if (mb->kind != ONNXZIP_MEMBER_MODEL || !strcmp(mb->path, self) ||
            oz_path_dir_len(mb->path, strlen(mb->path)) != dir || strncmp(mb->path, self, dir))
            continue;
        for (size_t f = 0; f < r->n_data; f++)
            for (size_t k = 0; k < u->og->m->n_data; k++) shares |= !strcmp(r->data[f], u->og->m->data[k]);
        if (shares) rc = add_sibling(u, mb, r);
    }
    return rc;
}

static int cmp_place(const void *x, const void *y)
{
    uint64_t a = ((const og_place *)x)->ordinal, b = ((const og_place *)y)->ordinal;
    return (a > b) - (a < b);
}

static int cmp_job(const void *x, const void *y)
{
    const og_job *a = x, *b = y;
    if (a->file != b->file) return (a->file > b->file) - (a->file < b->file);
    return (a->offset > b->offset) - (a->offset < b->offset);
}

/* The manifest's record of the model the handle holds. */
static const oz_pkg_model *record_of(const onnxzip_archive *a)
{
    for (size_t i = 0; i < a->pkg.n; i++)
        if (a->pkg.members[i].entry == a->zip.model_index) return &a->pkg.models[i];
    return NULL;
}

int oz_og_plan(unpack *u)
{
    const oz_pkg_model *m = record_of(u->a);
    if (!m) return oz_err(ONNXZIP_EINVAL, -1, "%s: the original layout needs a package's model; this is a "
                          "single-model archive", u->archive_path);
    for (size_t f = 0; f < m->n_data; f++)
        if (strchr(m->data[f], '/') || oz_unpack_same_folded(m->data[f], u->name))
            return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: model '%s': data file '%s' is not a plain name beside the "
                          "model; choose a layout", u->archive_path, onnxzip_model_path(u->a), m->data[f]);
    if (!(u->og = calloc(1, sizeof *u->og))) return oz_unpack_nomem();
    oz_og *g = u->og;
    g->m = m;
    if (!(g->places = calloc(count_items(m->origin) + 1, sizeof *g->places))) return oz_unpack_nomem();
    g->n_places = parse_places(m->origin, g->places); /* checked at open: i:f:o, f < n_data */
    qsort(g->places, g->n_places, sizeof *g->places, cmp_place);
    for (size_t f = 0; f < m->n_data; f++) u->files[u->nfiles++] = m->data[f];
    return add_siblings(u);
}

int oz_og_ref(unpack *u, const onnxzip_tensor *v, uint64_t ordinal, oz_rewrite *rw)
{
    oz_og *g = u->og;
    while (g->next < g->n_places && g->places[g->next].ordinal < ordinal) g->next++;
    if (g->next == g->n_places || g->places[g->next].ordinal != ordinal) {
        const uint8_t *d;
        int rc = oz_unpack_inline_bytes(u, v, &d);
        *rw = (oz_rewrite){ .action = OZ_INLINE, .data = d, .size = v->nbytes };
        return rc;
    }
    const og_place *p = &g->places[g->next];
    int rc = add_job(g, (og_job){ p->file, p->offset, v->file_offset, v->nbytes, v->entry });
    if (rc) return rc;
    *rw = (oz_rewrite){ .action = OZ_EXTERNAL, .location = g->m->data[p->file], .has_offset = 1, .has_length = 1,
                        .offset = p->offset, .length = v->nbytes };
    return 0;
}

/* One data file: its tensors in offset order, zeros between them; a tensor
 * placed where another already is (tied weights packed once) is skipped for
 * the bytes written, which are the same bytes. */
static int file_segments(unpack *u, size_t f, size_t *j)
{
    oz_og *g = u->og;
    oz_ufile *o = oz_unpack_new_file(u, g->m->data[f]);
    int rc = o ? 0 : oz_unpack_nomem();
    uint64_t pos = 0;
    for (; !rc && *j < g->n_jobs && g->jobs[*j].file == f; ++*j) {
        const og_job *x = &g->jobs[*j];
        if (x->offset + x->len <= pos) continue;
        uint64_t skip = x->offset < pos ? pos - x->offset : 0;
        const oz_zentry *e = oz_zip_find(&u->a->zip, x->entry, strlen(x->entry));
        rc = e ? oz_ufile_zeros_range(u, o, x->offset + skip - pos, x->entry, x->from + skip - e->pub.data_offset,
                                      x->len - skip)
               : oz_err(ONNXZIP_EPROTO, -1, "%s: no entry '%s' (internal error)", u->a->path, x->entry);
        pos = x->offset + x->len;
    }
    return rc;
}

#define GAP_PER_TENSOR ((uint64_t)1 << 16) /* the largest alignment padding */

static int bad_places(const unpack *u, const og_job *x, const char *why)
{
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: model '%s': the manifest places tensors in data file '%s' %s "
                  "(offset %llu)", u->archive_path, onnxzip_model_path(u->a), u->og->m->data[x->file], why,
                  (unsigned long long)x->offset);
}

/* The recorded places must make data files that a reader of the written
 * model reads correctly, of a size their tensors explain: no two tensors
 * over each other unless they are the same bytes (one entry: tied weights),
 * and no more zeros between them than their own bytes or 64 KiB of padding
 * each (unused tensors of the original file). Else the manifest is not
 * trusted (ONNXZIP_EUNSUPPORTED: onnxzip_unpack_dir() falls back to a plain
 * layout): never a model whose tensors read other tensors' bytes, never a
 * file of terabytes of zeros. */
static int check_places(const unpack *u)
{
    const oz_og *g = u->og;
    uint64_t end = 0, zeros = 0, bytes = 0, count = 0;
    for (size_t j = 0; j < g->n_jobs; j++) {
        const og_job *x = &g->jobs[j], *p = j ? &g->jobs[j - 1] : NULL;
        if (!p || p->file != x->file) end = zeros = bytes = count = 0;
        int same = p && p->file == x->file && p->offset == x->offset && p->len == x->len && p->from == x->from;
        if (same) continue;
        if (x->offset < end) return bad_places(u, x, "over one another");
        zeros += x->offset - end;
        bytes += x->len;
        count++;
        end = x->offset + x->len;
        if (zeros > bytes && zeros > count * GAP_PER_TENSOR)
            return bad_places(u, x, "with more zeros between them than their own bytes");
    }
    return 0;
}

int oz_og_segments(unpack *u)
{
    oz_og *g = u->og;
    if (g->n_jobs) qsort(g->jobs, g->n_jobs, sizeof *g->jobs, cmp_job); /* none: jobs is NULL */
    int rc = check_places(u);
    size_t j = 0;
    for (size_t f = 0; f < g->m->n_data && !rc; f++) rc = file_segments(u, f, &j);
    return rc;
}

void oz_og_free(unpack *u)
{
    if (!u->og) return;
    free(u->og->places);
    free(u->og->jobs);
    free(u->og);
    u->og = NULL;
}
