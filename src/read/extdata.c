#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/sys.h"
#include "read/extdata.h"

int oz_extdata_init(oz_extdata *x, const char *dir, const char *model)
{
    memset(x, 0, sizeof *x);
    x->dirh = oz_sys_dir_open(dir);
    if (!x->dirh)
        return oz_err_sys(ONNXZIP_EIO, -1, dir, "%s: cannot open the data directory: %s", dir, strerror(errno));
    if (!(x->dir = strdup(dir)) || (model && !(x->model = strdup(model)))) {
        oz_extdata_free(x);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    return 0;
}

void oz_extdata_free(oz_extdata *x)
{
    for (size_t i = 0; i < x->n; i++) {
        oz_sys_unmap(x->files[i].map, x->files[i].size);
        oz_sys_close(x->files[i].fd);
        free(x->files[i].location);
        free(x->files[i].tensor);
    }
    free(x->files);
    free(x->dir);
    free(x->model);
    free(x->allowed_path[0]);
    free(x->allowed_path[1]);
    oz_sys_dir_close(x->dirh);
    memset(x, 0, sizeof *x);
}

typedef struct ref {
    const char *model, *tensor, *location;
} ref;

static int refuse(const ref *r, int status, const char *rule)
{
    return oz_err(status, -1, "%s: tensor '%s': external data location '%s' refused: %s", r->model, r->tensor,
                  r->location, rule);
}

/* The location's path: the data directory's joined with it. */
static void join(const oz_extdata *x, const char *loc, size_t len, char *path, size_t cap)
{
    snprintf(path, cap, "%s%s%.*s", x->dir, *x->dir && x->dir[strlen(x->dir) - 1] == '/' ? "" : "/", (int)len,
             loc);
}

/* A side file the rules allow but the system cannot open: missing (not a
 * rule's refusal: ONNXZIP_ENOTFOUND) or unreadable (ONNXZIP_EIO), with the
 * errno and the file's path. */
static int cannot_open(const oz_extdata *x, const ref *r, const char *loc, size_t len)
{
    int e = errno;
    char path[4096];
    join(x, loc, len, path, sizeof path);
    if (e == ENOENT)
        return oz_err_errno(e, ONNXZIP_ENOTFOUND, -1, path, "%s: tensor '%s': external data file '%s' does not "
                            "exist (resolved in %s)", r->model, r->tensor, r->location, x->dir);
    return oz_err_errno(e, ONNXZIP_EIO, -1, path, "%s: tensor '%s': external data file '%s' cannot be opened "
                        "(resolved in %s): %s", r->model, r->tensor, r->location, x->dir, strerror(e));
}

/* Lexical rules, before touching the file system. */
static int check_lexical(const ref *r, const char *loc, size_t len)
{
    if (len == 0) return refuse(r, ONNXZIP_EPATH, "empty location");
    if (memchr(loc, 0, len)) return refuse(r, ONNXZIP_EPATH, "NUL byte in the location");
    if (loc[0] == '/') return refuse(r, ONNXZIP_EPATH, "absolute path");
    for (const char *c = loc; c < loc + len;) {
        const char *end = memchr(c, '/', (size_t)(loc + len - c));
        size_t n = end ? (size_t)(end - c) : (size_t)(loc + len - c);
        if (n == 2 && c[0] == '.' && c[1] == '.') return refuse(r, ONNXZIP_EPATH, "'..' path component");
        c += n + 1;
    }
    return 0;
}

static int open_beneath(const oz_dir *d, const char *loc, size_t len)
{
    char *path = oz_strndup(loc, len);
    if (!path) {
        errno = ENOMEM;
        return -1;
    }
    int fd = oz_sys_open_beneath(d, path);
    int saved = errno;
    free(path);
    errno = saved;
    return fd;
}

/* Takes the real path of a directory (malloc'd) as an allowed one. */
static void allow(oz_extdata *x, char *real)
{
    oz_stat st;
    if (real && !oz_sys_stat(real, &st) && st.kind == OZ_KIND_DIR &&
        !(x->n_allowed && x->allowed[0].dev == st.dev && x->allowed[0].ino == st.ino)) {
        x->allowed[x->n_allowed] = st;
        x->allowed_path[x->n_allowed++] = real;
    } else {
        free(real);
    }
}

/* ONNX Runtime's directories (>= 1.24, onnxruntime PR #27374): the data
 * directory, links resolved, and when the model file is a symbolic link (a
 * chain too), the directory its real file is in. */
static void find_allowed(oz_extdata *x)
{
    x->allowed_found = 1;
    allow(x, oz_sys_realpath(x->dir));
    oz_stat st;
    if (!x->model || oz_sys_stat_at(OZ_AT_CWD, x->model, 0, &st) || st.kind != OZ_KIND_LINK) return;
    char *real = oz_sys_realpath(x->model);
    char *sep = real ? (char *)oz_last_sep(real) : NULL;
    if (!sep) {
        free(real);
        return;
    }
    sep[sep == real] = '\0'; /* "/name": "/" */
    allow(x, real);
}

/* A location through symbolic links that leads outside: names where it
 * leads and the directories allowed. */
static int refuse_link(const oz_extdata *x, const ref *r, const char *real)
{
    char why[960];
    size_t k = (size_t)snprintf(why, sizeof why, "symbolic link: resolves to '%s', outside the allowed %s", real,
                                x->n_allowed > 1 ? "directories " : "directory ");
    for (size_t i = 0; i < x->n_allowed && k < sizeof why; i++)
        k += (size_t)snprintf(why + k, sizeof why - k, "%s'%s' (%s)", i ? " and " : "", x->allowed_path[i],
                              i ? "where the model's symbolic link leads" : x->model ? "the model's directory"
                              : "the data directory");
    if (x->n_allowed == 0 && k < sizeof why)
        k += (size_t)snprintf(why + k, sizeof why - k, "'%s' (cannot be resolved)", x->dir);
    if (x->model && k < sizeof why)
        snprintf(why + k, sizeof why - k, "%s; ONNX Runtime refuses it too", x->n_allowed > 1 ? ""
                 : "; the model file is no symbolic link, so its real file's directory is not allowed");
    return refuse(r, ONNXZIP_EPATH, why);
}

/* A location whose path goes through symbolic links (open_beneath refused
 * it): followed when its real file lies below an allowed directory. */
static int open_linked(oz_extdata *x, const ref *r, const char *loc, size_t len, int *fd)
{
    if (!x->allowed_found) find_allowed(x);
    char path[4096], *real = NULL;
    join(x, loc, len, path, sizeof path);
    *fd = oz_sys_open_resolved(path, x->allowed, x->n_allowed, &real);
    int e = errno, rc = 0;
    if (*fd < 0 && e == EXDEV && real) rc = refuse_link(x, r, real);
    else if (*fd < 0 && e == ENOSYS) rc = refuse(r, ONNXZIP_EPATH, "symbolic link (not followed on Windows)");
    else if (*fd < 0 && e == ELOOP) rc = refuse(r, ONNXZIP_EPATH, "symbolic link loop (or one link too many)");
    else if (*fd < 0) errno = e, rc = cannot_open(x, r, loc, len);
    free(real);
    return rc;
}

static int open_file(oz_extdata *x, const ref *r, const char *loc, size_t len, oz_extfile **out)
{
    for (size_t i = 0; i < x->n; i++)
        if (strlen(x->files[i].location) == len && !memcmp(x->files[i].location, loc, len)) {
            *out = &x->files[i];
            return 0;
        }
    int rc = check_lexical(r, loc, len);
    if (rc) return rc;
    int fd = open_beneath(x->dirh, loc, len);
    if (fd < 0 && (errno == ELOOP || errno == EXDEV)) { /* through a symbolic link */
        rc = open_linked(x, r, loc, len, &fd);
        if (rc) return rc;
    } else if (fd < 0) {
        return cannot_open(x, r, loc, len);
    }
    oz_stat st;
    const char *bad = oz_sys_fstat(fd, &st) ? "cannot stat" : st.kind != OZ_KIND_REG ? "not a regular file"
                    : st.nlink > 1 ? "file has more than one hard link" : NULL;
    if (!bad && x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 8;
        oz_extfile *f = realloc(x->files, cap * sizeof *f);
        if (!f) bad = "out of memory";
        else x->files = f, x->cap = cap;
    }
    char *copy = bad ? NULL : oz_strndup(loc, len), *tensor = bad ? NULL : strdup(r->tensor);
    if (bad || !copy || !tensor) {
        oz_sys_close(fd);
        free(copy);
        free(tensor);
        return refuse(r, bad ? ONNXZIP_EPATH : ONNXZIP_ENOMEM, bad ? bad : "out of memory");
    }
    x->files[x->n] = (oz_extfile){ .location = copy, .tensor = tensor, .fd = fd, .size = st.size };
    *out = &x->files[x->n++];
    return 0;
}

int oz_extdata_resolve(oz_extdata *x, const oz_tensor_info *t, const char *model, oz_extfile **file,
                       uint64_t *offset, uint64_t *length)
{
    *file = NULL;
    char tensor[OZ_PRINTABLE_CAP], location[OZ_PRINTABLE_CAP];
    oz_printable(t->name.p, t->name.len, tensor, sizeof tensor);
    oz_printable(t->location.p, t->location.len, location, sizeof location);
    ref r = { model, tensor, location };
    if (!t->has_location)
        return oz_err(ONNXZIP_EREF, -1, "%s: tensor '%s': EXTERNAL data without a location", model, tensor);
    if (t->has_raw || t->has_typed)
        return oz_err(ONNXZIP_EREF, -1, "%s: tensor '%s': EXTERNAL data with raw_data or typed data too", model,
                      tensor);
    uint64_t off = 0, len = 0;
    if ((t->has_offset && oz_parse_decimal(t->offset, &off)) || (t->has_length && oz_parse_decimal(t->length, &len)))
        return refuse(&r, ONNXZIP_EREF, "offset or length is not a decimal number");
    int rc = open_file(x, &r, (const char *)t->location.p, t->location.len, file);
    if (rc) return rc;
    uint64_t size = (*file)->size;
    if (off > size || (t->has_length && len > size - off)) {
        char why[160];
        snprintf(why, sizeof why, "offset %llu + length %llu run past the end of the %llu-byte file",
                 (unsigned long long)off, (unsigned long long)(t->has_length ? len : 0), (unsigned long long)size);
        return refuse(&r, ONNXZIP_ERANGE, why);
    }
    *offset = off;
    *length = t->has_length ? len : size - off;
    return 0;
}

int oz_extdata_map(oz_extdata *x, oz_extfile *f)
{
    if (f->map || f->size == 0) return 0;
    void *p = oz_sys_map(f->fd, 0, f->size);
    if (!p) {
        char what[4096 + 16];
        snprintf(what, sizeof what, "%s/%s", x->dir, f->location);
        return oz_err_map(what, f->size);
    }
    f->map = p;
    return 0;
}
