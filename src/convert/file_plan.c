/* onnxzip_file_plan_*(): each file of a package's folder as the segments
 * unpack writes (file_plan.h). A model is planned as onnxzip_unpack_dir()
 * unpacks it: the original layout, or its fallback when the manifest's
 * places cannot be trusted. */
#include <stdio.h>
#include <stdlib.h>

#include "convert/file_plan.h"
#include "convert/unpack_origin.h"

static int keep(onnxzip_file_plan *p, void *x)
{
    if (p->nowned == p->capowned) {
        size_t cap = p->capowned ? p->capowned * 2 : 16;
        void **n = realloc(p->owned, cap * sizeof *n);
        if (!n) return oz_unpack_nomem();
        p->owned = n;
        p->capowned = cap;
    }
    p->owned[p->nowned++] = x;
    return 0;
}

/* Adds a file (taking `path` and `seg`), or replaces the one of that path:
 * the folder holds what was written last (two models sharing a data file
 * each write it whole, the same bytes). */
static int add_file(onnxzip_file_plan *p, char *path, const char *model, onnxzip_segment *seg, size_t n)
{
    char *own = model ? strdup(model) : NULL; /* the plan borrows nothing from the handle */
    int rc = path && (own || !model) ? keep(p, path) : oz_unpack_nomem();
    if (rc) {
        free(path);
        free(own);
        free(seg);
        return rc;
    }
    if ((rc = keep(p, seg)) || (rc = keep(p, own))) { /* path is the plan's now */
        free(own);
        if (p->nowned && p->owned[p->nowned - 1] == seg) p->nowned--;
        free(seg);
        return rc;
    }
    onnxzip_planned_file f = { .path = path, .model = own, .segments = seg, .n_segments = n };
    for (size_t i = 0; i < n; i++) f.size += seg[i].length;
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->files[i].path, path)) {
            p->files[i] = f;
            return 0;
        }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        onnxzip_planned_file *x = realloc(p->files, cap * sizeof *x);
        if (!x) return oz_unpack_nomem();
        p->files = x;
        p->cap = cap;
    }
    p->files[p->n++] = f;
    return 0;
}

/* `name` in the directory of package path `of`. */
static char *beside(const char *of, const char *name)
{
    size_t dir = oz_path_dir_len(of, strlen(of)), n = dir + strlen(name) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%.*s%s", (int)dir, of, name);
    return s;
}

static int add_one(onnxzip_file_plan *p, char *path, const char *model, onnxzip_segment s, const char *only)
{
    onnxzip_segment *seg = malloc(sizeof *seg);
    if (!path || !seg) {
        free(path);
        free(seg);
        return oz_unpack_nomem();
    }
    *seg = s;
    if (only && strcmp(only, path)) {
        free(path);
        free(seg);
        return 0;
    }
    return add_file(p, path, model, seg, s.length ? 1 : 0);
}

/* The entries read whole for model file `model` (the plan's path) into
 * p->inl, their bytes the plan's. */
static int take_inline(onnxzip_file_plan *p, unpack *u, const char *model)
{
    oz_plan_inline *v = u->ninl ? realloc(p->inl, (p->ninl + u->ninl) * sizeof *v) : p->inl;
    if (u->ninl && !v) return oz_unpack_nomem();
    p->inl = v;
    int rc = 0;
    for (size_t i = 0; i < u->ninl && !rc; i++)
        if (u->inl_entry[i] != SIZE_MAX && !(rc = keep(p, u->inl[i]))) {
            p->inl[p->ninl++] = (oz_plan_inline){ model, u->inl_entry[i], u->inl[i] };
            u->inl[i] = NULL; /* the plan's now */
        }
    return rc;
}

/* The planned model file and data files into p (only `only`, when set). */
static int take_files(onnxzip_file_plan *p, unpack *u, const onnxzip_member *m, oz_buf *model, const char *only)
{
    int rc = keep(p, model->p);
    if (rc) return rc;
    const void *bytes = model->p;
    model->p = NULL;
    if ((!only || !strcmp(only, m->path)))
        rc = add_one(p, strdup(m->path), m->path,
                     (onnxzip_segment){ .kind = ONNXZIP_SEGMENT_BYTES, .length = model->len, .bytes = bytes }, NULL);
    for (size_t i = 0; !rc && (!only || !strcmp(only, m->path)) && i < p->n; i++)
        if (!strcmp(p->files[i].path, m->path)) rc = take_inline(p, u, p->files[i].path);
    for (size_t i = 0; i < u->nout && !rc; i++) {
        oz_ufile *f = &u->out[i];
        char *path = beside(m->path, f->name);
        if (!path) return oz_unpack_nomem();
        if (only && strcmp(only, path)) {
            free(path);
            continue;
        }
        rc = add_file(p, path, m->path, f->seg, f->n);
        f->seg = NULL; /* taken, even on failure */
        f->n = 0;
    }
    return rc;
}

/* *refused: the original layout refused the manifest (not a read that failed). */
static int plan_layout(onnxzip_file_plan *p, onnxzip_archive *ma, const onnxzip_member *m,
                       const onnxzip_unpack_options *o, const char *only, int *refused)
{
    const char *slash = strrchr(m->path, '/');
    unpack u = { .o = o, .a = ma, .archive_path = ma->path, .model_path = m->path, .name = slash ? slash + 1 : m->path,
                 .dirfd = -1, .tmpfd = -1, .arcfd = -1 };
    oz_buf model = { 0 };
    oz_unpack_plan_init(&u);
    int rc = oz_unpack_plan(&u);
    if (!rc) rc = oz_unpack_build(&u, &model);
    if (!rc) rc = oz_unpack_segments(&u);
    if (!rc) rc = take_files(p, &u, m, &model, only);
    *refused = u.og_refused;
    oz_buf_free(&model);
    oz_unpack_plan_free(&u);
    return rc;
}

/* Model m's files, as onnxzip_unpack_dir() writes them. */
static int plan_model(onnxzip_file_plan *p, onnxzip_archive *a, const onnxzip_member *m, const char *only)
{
    onnxzip_archive view;
    onnxzip_archive *ma = a;
    int rc = 0;
    if (m->entry != a->zip.model_index) {
        rc = oz_archive_view_model(a, m, &view);
        ma = &view;
    }
    if (!rc) rc = oz_verify_model_fields(ma);
    onnxzip_unpack_options o;
    onnxzip_unpack_options_init(&o);
    o.layout = ONNXZIP_UNPACK_ORIGINAL;
    o.model = m->path;
    int refused = 0;
    if (!rc) rc = plan_layout(p, ma, m, &o, only, &refused);
    if (rc == ONNXZIP_EUNSUPPORTED && refused) { /* as onnxzip_unpack_dir() */
        o.layout = oz_unpack_fallback(ONNXZIP_UNPACK_ORIGINAL);
        rc = plan_layout(p, ma, m, &o, only, &refused);
    }
    if (ma != a) oz_archive_view_free(&view);
    return rc;
}

static int plan_member(onnxzip_file_plan *p, onnxzip_archive *a, const onnxzip_member *m, const char *only)
{
    if (m->kind == ONNXZIP_MEMBER_MODEL) return plan_model(p, a, m, only);
    const oz_zentry *e = &a->zip.entries[m->entry];
    return add_one(p, strdup(m->path), NULL,
                   (onnxzip_segment){ .kind = ONNXZIP_SEGMENT_ARCHIVE, .length = m->size,
                                      .offset = e->pub.data_offset, .entry = m->entry },
                   NULL);
}

/* A path that is no member: a data file of a model of its directory. */
static int plan_data_file(onnxzip_file_plan *p, onnxzip_archive *a, const char *path)
{
    size_t dir = oz_path_dir_len(path, strlen(path));
    for (size_t i = 0; i < a->pkg.n && !p->n; i++) {
        const onnxzip_member *m = &a->pkg.members[i];
        if (m->kind != ONNXZIP_MEMBER_MODEL || oz_path_dir_len(m->path, strlen(m->path)) != dir ||
            strncmp(m->path, path, dir))
            continue;
        int rc = plan_model(p, a, m, path);
        if (rc) return rc;
    }
    char shown[OZ_PRINTABLE_CAP];
    return p->n ? 0 : oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no file '%s' in the package's folder", a->path,
                             oz_printable(path, strlen(path), shown, sizeof shown));
}

static int plan(onnxzip_file_plan *p, onnxzip_archive *a, const char *path)
{
    if (!a->pkg.n) { /* a single-model archive: OMS's single-file model, the file itself */
        if (path && strcmp(path, "."))
            return oz_err(ONNXZIP_ENOTFOUND, -1, "%s: a single-model archive has no file '%s' (only \".\", itself)",
                          a->path, path);
        return add_one(p, strdup("."), NULL, (onnxzip_segment){ .kind = ONNXZIP_SEGMENT_ARCHIVE,
                                                                .length = a->src.size, .entry = SIZE_MAX },
                       NULL);
    }
    if (!path) {
        int rc = 0;
        for (size_t i = 0; i < a->pkg.n && !rc; i++) rc = plan_member(p, a, &a->pkg.members[i], NULL);
        return rc;
    }
    const onnxzip_member *m = oz_package_find(&a->pkg, path);
    return m ? plan_member(p, a, m, m->kind == ONNXZIP_MEMBER_MODEL ? NULL : path) : plan_data_file(p, a, path);
}

/* Model i's files by name: those the manifest records when the original
 * layout takes them, else the model planned (its entry read). */
static int names_of_model(onnxzip_file_plan *p, onnxzip_archive *a, size_t i)
{
    const onnxzip_member *m = &a->pkg.members[i];
    const oz_pkg_model *r = &a->pkg.models[i];
    const char *slash = strrchr(m->path, '/');
    if (oz_og_names_ok(r, slash ? slash + 1 : m->path) < r->n_data) return plan_model(p, a, m, NULL);
    int rc = add_file(p, strdup(m->path), m->path, NULL, 0);
    for (size_t k = 0; k < r->n_data && !rc; k++) rc = add_file(p, beside(m->path, r->data[k]), m->path, NULL, 0);
    return rc;
}

int onnxzip_file_plan_names(onnxzip_archive *a, onnxzip_file_plan **out)
{
    if (out) *out = NULL;
    if (!a || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_file_plan_names: NULL argument");
    onnxzip_file_plan *p = calloc(1, sizeof *p);
    int rc = p ? 0 : oz_unpack_nomem();
    if (!rc && !a->pkg.n) rc = add_file(p, strdup("."), NULL, NULL, 0);
    for (size_t i = 0; i < a->pkg.n && !rc; i++)
        rc = a->pkg.members[i].kind == ONNXZIP_MEMBER_MODEL ? names_of_model(p, a, i)
                                                            : add_file(p, strdup(a->pkg.members[i].path), NULL, NULL, 0);
    if (rc) onnxzip_file_plan_free(&p);
    *out = p;
    return rc;
}

int onnxzip_file_plan_create(onnxzip_archive *a, const char *path, onnxzip_file_plan **out)
{
    if (out) *out = NULL;
    if (!a || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_file_plan_create: NULL argument");
    onnxzip_file_plan *p = calloc(1, sizeof *p);
    int rc = p ? plan(p, a, path) : oz_unpack_nomem();
    if (rc) onnxzip_file_plan_free(&p);
    *out = p;
    return rc;
}

size_t onnxzip_file_plan_count(const onnxzip_file_plan *p)
{
    return p ? p->n : 0;
}

const onnxzip_planned_file *onnxzip_file_plan_at(const onnxzip_file_plan *p, size_t i)
{
    return p && i < p->n ? &p->files[i] : NULL;
}

void onnxzip_file_plan_free(onnxzip_file_plan **pp)
{
    if (!pp || !*pp) return;
    onnxzip_file_plan *p = *pp;
    for (size_t i = 0; i < p->nowned; i++) free(p->owned[i]);
    free(p->owned);
    free(p->files);
    free(p->inl);
    free(p);
    *pp = NULL;
}
