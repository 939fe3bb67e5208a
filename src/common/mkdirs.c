/* Missing parent directories of an output, as mkdir -p: see mkdirs.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "common/mkdirs.h"
#include "common/sys.h"

static int is_sep(char c)
{
#ifdef _WIN32
    return c == '/' || c == '\\';
#else
    return c == '/';
#endif
}

/* The length of the part of `p` that names no directory to create: leading
 * separators, and on Windows a drive ("C:") or a UNC prefix ("\\host\share",
 * "\\?\C:"). */
static size_t root_len(const char *p)
{
    size_t i = 0;
#ifdef _WIN32
    if (((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z')) && p[1] == ':') {
        i = 2;
    } else if (is_sep(p[0]) && is_sep(p[1])) {
        i = 2;
        for (int part = 0; part < 2; part++) { /* host and share (or "?" and the drive) */
            while (p[i] && !is_sep(p[i])) i++;
            while (is_sep(p[i])) i++;
        }
    }
#endif
    while (is_sep(p[i])) i++;
    return i;
}

/* The directory m->path, cut at its separator `j` for the call: there
 * already (a directory, or a symbolic link to one), or created now. */
static int ensure_dir(oz_made_dirs *m, const char *out, size_t j)
{
    char *d = m->path;
    oz_stat st;
    int e = 0;
    if (oz_sys_stat(d, &st)) {
        e = errno;
        if (e == ENOENT) {
            if (!oz_sys_mkdir_umask_at(OZ_AT_CWD, d)) {
                m->ends[m->n++] = j;
                return 0;
            }
            e = errno;
            if (e == EEXIST && !oz_sys_stat(d, &st)) e = 0; /* made meanwhile by another: not ours */
        }
    }
    if (e) return oz_err_errno(e, ONNXZIP_EIO, -1, d, "%s: cannot create its directory %s: %s", out, d, strerror(e));
    if (st.kind != OZ_KIND_DIR) /* what mkdir -p fails with */
        return oz_err_errno(ENOTDIR, ONNXZIP_EIO, -1, d, "%s: cannot create its directory %.*s: %s exists and is "
                            "not a directory", out, (int)(oz_last_sep(out) - out), out, d);
    return 0;
}

/* The component [i, j) of m->path: "." and ".." exist once their parent does. */
static int ensure_component(oz_made_dirs *m, const char *out, size_t i, size_t j)
{
    const char *c = m->path + i;
    if ((j - i == 1 && c[0] == '.') || (j - i == 2 && c[0] == '.' && c[1] == '.')) return 0;
    char sep = m->path[j];
    m->path[j] = '\0';
    int rc = ensure_dir(m, out, j);
    m->path[j] = sep;
    return rc;
}

int oz_mkdirs_parent(const char *path, oz_made_dirs *made)
{
    *made = (oz_made_dirs){ 0 };
    const char *sep = oz_last_sep(path);
    if (!sep) return 0; /* the working directory */
    size_t len = (size_t)(sep - path), comps = 1;
    char *dir = oz_strndup(path, len + 1); /* with its separator: "/" and "C:\\" as they are */
    if (!dir) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    oz_stat st;
    if (!oz_sys_stat(dir, &st) && st.kind == OZ_KIND_DIR) { /* the usual case: nothing to create */
        free(dir);
        return 0;
    }
    dir[len] = '\0';
    for (size_t i = 0; i < len; i++) comps += is_sep(dir[i]);
    made->path = dir;
    if (!(made->ends = malloc(comps * sizeof *made->ends))) {
        oz_mkdirs_keep(made, 0);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    int rc = 0;
    for (size_t i = root_len(dir), j; !rc && i < len; i = j) {
        for (j = i; j < len && !is_sep(dir[j]); j++) {}
        rc = ensure_component(made, path, i, j);
        while (j < len && is_sep(dir[j])) j++;
    }
    if (rc) oz_mkdirs_undo(made);
    return rc;
}

void oz_mkdirs_undo(oz_made_dirs *made)
{
    if (!made) return;
    int e = errno;
    while (made->n) { /* deepest first; rmdir fails on one no longer empty */
        made->path[made->ends[--made->n]] = '\0';
        oz_sys_unlink_at(OZ_AT_CWD, made->path, 1);
    }
    errno = e;
    oz_mkdirs_keep(made, 0);
}

void oz_mkdirs_keep(oz_made_dirs *made, int sync)
{
    if (!made) return;
    while (sync && made->n) {
        made->path[made->ends[--made->n]] = '\0';
        oz_sys_sync_parent(made->path);
    }
    free(made->path);
    free(made->ends);
    *made = (oz_made_dirs){ 0 };
}
