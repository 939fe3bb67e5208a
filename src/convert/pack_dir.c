/* onnxzip_pack_dir(): a repository folder to a package (spec 19.6). Every
 * check (names, collisions, each model's external data, the output's place)
 * is made before the first byte is written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/outputs.h"
#include "common/package_path.h"
#include "common/sys.h"
#include "convert/pack_model.h"
#include "convert/pack_signed.h"
#include "write/package_writer.h"
#include "write/zip_writer.h"

enum { PLAIN, MODEL, DATA };

typedef struct dfile {
    char *rel;    /* its path in the folder, '/'-separated */
    oz_stat st;   /* links followed */
    int kind;
    oz_pack *pack; /* models */
    char *path;    /* models: root/rel, which the pack borrows */
} dfile;

typedef struct walker {
    const char *root;
    dfile *v;
    size_t n, cap;
    char **names; /* one directory's listing */
    size_t n_names, cap_names;
} walker;

static const char *shown_path(const char *rel, char *buf, size_t cap)
{
    return oz_printable(rel, strlen(rel), buf, cap);
}

static int add_name(void *user, const char *name)
{
    walker *w = user;
    if (w->n_names == w->cap_names) {
        size_t cap = w->cap_names ? w->cap_names * 2 : 32;
        char **n = realloc(w->names, cap * sizeof *n);
        if (!n) return ONNXZIP_ENOMEM;
        w->names = n;
        w->cap_names = cap;
    }
    return (w->names[w->n_names++] = strdup(name)) ? 0 : ONNXZIP_ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push_file(walker *w, char *rel, const oz_stat *st)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        dfile *n = realloc(w->v, cap * sizeof *n);
        if (!n) {
            free(rel);
            return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        }
        w->v = n;
        w->cap = cap;
    }
    w->v[w->n++] = (dfile){ .rel = rel, .st = *st };
    return 0;
}

static int walk(walker *w, int dirfd, const char *rel, int depth);

/* One name of the directory `rel` (open as dirfd). */
static int visit(walker *w, int dirfd, const char *rel, const char *name, int depth)
{
    char shown[OZ_PRINTABLE_CAP];
    size_t n = strlen(rel) + strlen(name);
    char *path = malloc(n + 2);
    if (!path) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    snprintf(path, n + 2, "%s%s", rel, name);
    oz_stat st, lst;
    if (oz_sys_stat_at(dirfd, name, 1, &st)) {
        int e = errno;
        int rc = oz_err_errno(e, e == ENOENT ? ONNXZIP_ENOTFOUND : ONNXZIP_EIO, -1, NULL, "%s/%s: cannot stat: %s",
                              w->root, shown_path(path, shown, sizeof shown),
                              e == ENOENT ? "a dangling symbolic link" : strerror(e));
        free(path);
        return rc;
    }
    if (st.kind == OZ_KIND_REG) return push_file(w, path, &st);
    int rc;
    if (st.kind != OZ_KIND_DIR)
        rc = oz_err(ONNXZIP_ENOTREG, -1, "%s/%s: neither a regular file nor a directory", w->root,
                    shown_path(path, shown, sizeof shown));
    else if (!oz_sys_stat_at(dirfd, name, 0, &lst) && lst.kind == OZ_KIND_LINK)
        rc = oz_err(ONNXZIP_EINVAL, -1, "%s/%s: a symbolic link to a directory; pack follows links to files only "
                    "(copy the directory in, or pack its target)", w->root, shown_path(path, shown, sizeof shown));
    else if (depth >= 64)
        rc = oz_err(ONNXZIP_ELIMIT, -1, "%s/%s: directories nested deeper than 64", w->root,
                    shown_path(path, shown, sizeof shown));
    else {
        int sub = oz_sys_dir_fd_at(dirfd, name);
        strcat(path, "/");
        rc = sub < 0 ? oz_err_sys(ONNXZIP_EIO, -1, path, "%s/%s: cannot open the directory: %s", w->root,
                                  shown_path(path, shown, sizeof shown), strerror(errno))
                     : walk(w, sub, path, depth + 1);
        if (sub >= 0) oz_sys_close(sub);
    }
    free(path);
    return rc;
}

/* git's and huggingface_hub's bookkeeping beside a repository. */
static int skipped(const char *rel, const char *name)
{
    return !*rel && (!strcmp(name, ".git") || !strcmp(name, ".cache"));
}

static int walk(walker *w, int dirfd, const char *rel, int depth)
{
    size_t first = w->n_names;
    int rc = oz_sys_list_dir(dirfd, add_name, w);
    if (rc == ONNXZIP_ENOMEM) return oz_err(rc, -1, "out of memory");
    if (rc) return oz_err_sys(ONNXZIP_EIO, -1, w->root, "%s/%s: cannot list: %s", w->root, rel, strerror(errno));
    size_t last = w->n_names;
    if (last > first) /* byte order: the same package anywhere (an empty folder: no list at all) */
        qsort(w->names + first, last - first, sizeof *w->names, cmp_str);
    for (size_t i = first; i < last && !rc; i++)
        if (!skipped(rel, w->names[i])) rc = visit(w, dirfd, rel, w->names[i], depth);
    for (size_t i = first; i < last; i++) free(w->names[i]);
    w->n_names = first;
    return rc;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !memcmp(s + n - k, suffix, k);
}

/* Names and collisions (spec 19.2), before anything is opened. */
static int check_names(const walker *w)
{
    oz_path_set taken = { 0 };
    int rc = 0;
    for (size_t i = 0; i < w->n && !rc; i++) {
        char shown[OZ_PRINTABLE_CAP];
        const char *why, *rel = w->v[i].rel;
        shown_path(rel, shown, sizeof shown);
        if ((rc = oz_package_path_check(rel, strlen(rel), &why)))
            rc = oz_err(rc, -1, "%s/%s: cannot be named in a package: %s", w->root, shown, why);
        else if (oz_package_path_reserved(rel, strlen(rel)))
            rc = oz_err(ONNXZIP_ENAME, -1, "%s/%s: a name the format reserves at the top of a package (\"__\" and "
                        "then only letters, digits and '_', like __PACKAGE)", w->root, shown);
        else
            rc = oz_path_set_add(&taken, rel, w->root);
    }
    oz_path_set_free(&taken);
    return rc;
}

typedef struct packer {
    walker w;
    onnxzip_pack_options opts;
    oz_pack_seen *seen;
    size_t n_models;
    char *full; /* scratch: root/rel */
} packer;

static const char *full_path(packer *k, const char *rel)
{
    free(k->full);
    size_t n = strlen(k->w.root) + strlen(rel) + 2;
    if ((k->full = malloc(n))) snprintf(k->full, n, "%s/%s", k->w.root, rel);
    return k->full;
}

static char *dir_of(const char *rel)
{
    return oz_strndup(rel, oz_path_dir_len(rel, strlen(rel)));
}

/* The walked file `st` is, or NULL: data outside the folder. */
static dfile *walked(packer *k, const oz_stat *st)
{
    for (size_t i = 0; i < k->w.n; i++)
        if (k->w.v[i].st.dev == st->dev && k->w.v[i].st.ino == st->ino) return &k->w.v[i];
    return NULL;
}

/* Opens model `m` and every data file it names; those become DATA. */
static int measure_model(packer *k, dfile *m, char **prefix)
{
    const char *path = full_path(k, m->rel);
    if (!path || !(m->path = strdup(path)) || !(*prefix = dir_of(m->rel)))
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    path = m->path;
    int rc = oz_pack_open(&m->pack, path, &k->opts, k->seen, *prefix);
    if (!rc) rc = oz_pack_measure(m->pack);
    const oz_extdata *x = rc ? NULL : oz_pack_extdata(m->pack);
    for (size_t i = 0; x && i < x->n && !rc; i++) {
        oz_stat st;
        dfile *d = oz_sys_fstat(x->files[i].fd, &st) ? NULL : walked(k, &st);
        char loc[OZ_PRINTABLE_CAP];
        oz_printable(x->files[i].location, strlen(x->files[i].location), loc, sizeof loc);
        if (!d || d->kind == MODEL) /* the tensor's name is printable already (extdata.h) */
            rc = oz_err(ONNXZIP_EPATH, -1, "%s: external data '%s' (tensor '%s') %s", path, loc, x->files[i].tensor,
                        d ? "is a model of the folder" : "lies outside the folder being packed");
        else
            d->kind = DATA;
    }
    return rc;
}

/* The output must not land in the folder (the next pack would take it in). */
static int check_output_place(packer *k, const char *out)
{
    char *root = oz_sys_realpath(k->w.root), *dir = oz_strndup(out, strlen(out));
    int rc = root && dir ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    char *real = NULL;
    while (!rc && !real) { /* its first existing ancestor */
        char *slash = strrchr(dir, '/');
        if (!slash) {
            real = oz_sys_realpath(".");
            break;
        }
        *slash = '\0';
        real = oz_sys_realpath(*dir ? dir : "/");
    }
    size_t n = root ? strlen(root) : 0;
    if (!rc && real && !strncmp(real, root, n) && (real[n] == '/' || real[n] == '\0' || n == 1))
        rc = oz_err(ONNXZIP_EINVAL, -1, "%s: the output lies inside the folder being packed (%s)", out, k->w.root);
    free(real);
    free(root);
    free(dir);
    return rc;
}

static int default_model(const packer *k, const char **out)
{
    *out = k->opts.default_model;
    if (*out) {
        for (size_t i = 0; i < k->w.n; i++)
            if (k->w.v[i].kind == MODEL && !strcmp(k->w.v[i].rel, *out)) return 0;
        return oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no model '%s' in the folder to make the default", k->w.root, *out);
    }
    size_t best_depth = SIZE_MAX;
    for (size_t i = 0; i < k->w.n; i++) {
        const char *r = k->w.v[i].rel;
        size_t depth = 0;
        for (const char *c = r; *c; c++) depth += *c == '/';
        if (k->w.v[i].kind != MODEL) continue;
        if (!*out) *out = r;
        int named = !strcmp(r + oz_path_dir_len(r, strlen(r)), "model.onnx");
        if (named && depth < best_depth) best_depth = depth, *out = r;
    }
    return 0;
}

static int check_all(packer *k, const char *out, char **prefixes)
{
    int rc = check_names(&k->w);
    for (size_t i = 0; i < k->w.n && !rc; i++)
        if (ends_with(k->w.v[i].rel, ".onnx")) k->w.v[i].kind = MODEL, k->n_models++;
    if (!rc && !k->n_models)
        rc = oz_err(ONNXZIP_ENOMODEL, -1, "%s: no .onnx model in the folder (%zu files)", k->w.root, k->w.n);
    for (size_t i = 0, m = 0; i < k->w.n && !rc; i++)
        if (k->w.v[i].kind == MODEL) rc = measure_model(k, &k->w.v[i], &prefixes[m++]);
    if (!rc) rc = check_output_place(k, out);
    for (size_t i = 0; i < k->w.n && !rc; i++) { /* the output is none of the inputs, under any name */
        oz_input *in;
        size_t n;
        if (k->w.v[i].kind != MODEL) continue;
        if (!(rc = oz_pack_inputs(k->w.v[i].pack, &in, &n))) {
            rc = oz_output_check(OZ_AT_CWD, NULL, out, in, n);
            free(in);
        }
    }
    return rc;
}

static int add_plain(packer *k, onnxzip_writer *w, const dfile *f)
{
    const char *path = full_path(k, f->rel);
    if (!path) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int fd = oz_sys_open_read(path);
    if (fd < 0) return oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot open: %s", path, strerror(errno));
    oz_stat st;
    int rc = oz_sys_fstat(fd, &st) || st.dev != f->st.dev || st.ino != f->st.ino || st.size != f->st.size
                 ? oz_err(ONNXZIP_ECHANGED, -1, "%s: changed while the folder was being packed", path)
                 : onnxzip_writer_add_file(w, f->rel, fd, 0, st.size);
    oz_sys_close(fd);
    return rc;
}

/* A model's data file names, as its locations say them (spec 19.4),
 * "./" removed; NULL when one is no package path (unpack then chooses). */
static int add_model(packer *k, onnxzip_writer *w, dfile *m)
{
    oz_buf model = { 0 };
    int rc = oz_pack_emit(m->pack, w, &model);
    if (!rc) rc = onnxzip_writer_add_model(w, m->rel, model.p, model.len);
    oz_buf_free(&model);
    const oz_extdata *x = oz_pack_extdata(m->pack);
    if (rc || !x || !x->n) return rc;
    const char **names = malloc(x->n * sizeof *names);
    if (!names) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int ok = 1;
    for (size_t i = 0; i < x->n; i++) {
        const char *why, *n = x->files[i].location;
        while (n[0] == '.' && n[1] == '/') n += 2;
        names[i] = n;
        ok &= !oz_package_path_check(n, strlen(n), &why);
    }
    const char *origin = oz_pack_origin(m->pack);
    if (!origin) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    else if (ok) rc = oz_pkg_writer_origin(oz_writer_package(w), m->rel, names, x->n, origin);
    free(names);
    return rc;
}

static int write_package(packer *k, const char *out)
{
    onnxzip_writer *w;
    onnxzip_write_options wo;
    onnxzip_write_options_init(&wo);
    wo.alignment = k->opts.alignment;
    wo.flags = ONNXZIP_WRITE_PACKAGE | ((k->opts.flags & ONNXZIP_PACK_NO_SYNC) ? ONNXZIP_WRITE_NO_SYNC : 0);
    const char *def;
    int rc = default_model(k, &def);
    if (!rc) rc = onnxzip_writer_create(out, &wo, &w);
    if (rc) return rc;
    for (size_t i = 0; i < k->w.n && !rc; i++) /* files first: the models and manifest end the archive */
        if (k->w.v[i].kind == PLAIN) rc = add_plain(k, w, &k->w.v[i]);
    for (size_t i = 0; i < k->w.n && !rc; i++)
        if (k->w.v[i].kind == MODEL) rc = add_model(k, w, &k->w.v[i]);
    if (!rc) rc = onnxzip_writer_set_default_model(w, def);
    if (!rc) return onnxzip_writer_finish(&w);
    onnxzip_writer_abort(&w);
    return rc;
}

/* A folder holding model.sig at its top is signed: the package is written
 * beside `out` and takes its name only once it is known to unpack to the
 * bytes that were signed (pack_signed.h). */
static int write_signed(packer *k, const char *out)
{
    size_t n = 0, cap = strlen(out) + 32;
    const char **rels = malloc((k->w.n ? k->w.n : 1) * sizeof *rels);
    char *tmp = malloc(cap);
    int rc = rels && tmp ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t i = 0; i < k->w.n; i++)
        if (k->w.v[i].kind != PLAIN) rels[n++] = k->w.v[i].rel;
    if (!rc) snprintf(tmp, cap, "%s.signed-%08llx", out, (unsigned long long)(oz_sys_nonce() & 0xffffffffu));
    if (!rc) rc = write_package(k, tmp);
    if (!rc) rc = oz_pack_check_signed(k->w.root, tmp, rels, n);
    if (!rc && oz_sys_rename_at(OZ_AT_CWD, tmp, OZ_AT_CWD, out))
        rc = oz_err_sys(ONNXZIP_EIO, -1, out, "%s: cannot rename the package into place: %s", out, strerror(errno));
    else if (!rc && !(k->opts.flags & ONNXZIP_PACK_NO_SYNC))
        oz_sys_sync_parent(out);
    if (rc && tmp) oz_sys_unlink_at(OZ_AT_CWD, tmp, 0);
    free(tmp);
    free(rels);
    return rc;
}

static int is_signed(const packer *k)
{
    for (size_t i = 0; i < k->w.n; i++)
        if (k->w.v[i].kind == PLAIN && !strcmp(k->w.v[i].rel, "model.sig")) return 1;
    return 0;
}

int onnxzip_pack_dir(const char *dir, const char *out_path, const onnxzip_pack_options *opts)
{
    if (!dir || !out_path) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_pack_dir: NULL path");
    packer k = { .w = { .root = dir } };
    onnxzip_pack_options_init(&k.opts);
    if (opts) k.opts = *opts;
    k.opts.flags |= ONNXZIP_PACK_DEDUP; /* spec 19.3: equal payloads of a directory once */
    int rc = oz_check_alignment(k.opts.alignment);
    if (rc) return rc;
    int fd = oz_sys_dir_fd(dir);
    if (fd < 0) return oz_err_sys(ONNXZIP_EIO, -1, dir, "%s: cannot open the folder: %s", dir, strerror(errno));
    k.seen = oz_pack_seen_new();
    rc = k.seen ? walk(&k.w, fd, "", 0) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    oz_sys_close(fd);
    char **prefixes = calloc(k.w.n ? k.w.n : 1, sizeof *prefixes);
    if (!rc && !prefixes) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (!rc) rc = check_all(&k, out_path, prefixes);
    if (!rc) rc = is_signed(&k) ? write_signed(&k, out_path) : write_package(&k, out_path);
    for (size_t i = 0; i < k.w.n; i++) {
        oz_pack_close(k.w.v[i].pack);
        free(k.w.v[i].path);
        free(k.w.v[i].rel);
        if (prefixes) free(prefixes[i]);
    }
    if (k.seen) oz_pack_seen_free(k.seen);
    free(k.seen);
    free(prefixes);
    free(k.w.v);
    free(k.w.names);
    free(k.full);
    return rc;
}
