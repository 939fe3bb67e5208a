/* onnxzip_unpack_dir(): a package back to its folder (spec 19.6), built in a
 * temporary folder beside the target and renamed into place whole. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/atomic_file.h"
#include "common/mkdirs.h"
#include "common/package_path.h"
#include "common/sys.h"
#include "convert/unpack_plan.h"
#include "read/archive.h"
#include "read/member_copy.h"

typedef struct unpack_dir {
    const char *archive, *dir;
    const onnxzip_unpack_options *o;
    onnxzip_archive *a;
    char *tmp;           /* the folder being built */
    oz_made_dirs made;   /* the target's missing parents */
} unpack_dir;

/* Two members one file system would make one file (spec 19.2). */
static int check_collisions(const unpack_dir *u)
{
    oz_path_set taken = { 0 };
    int rc = 0;
    for (size_t i = 0; i < onnxzip_member_count(u->a) && !rc; i++)
        rc = oz_path_set_add(&taken, onnxzip_member_at(u->a, i)->path, u->archive);
    oz_path_set_free(&taken);
    return rc;
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/%s", a, b);
    return s;
}

static int empty_entry(void *user, const char *name)
{
    (void)name;
    *(int *)user = 0;
    return 1;
}

/* The target may not hold anything: unpack makes it whole, it merges into nothing. */
static int check_target(const unpack_dir *u)
{
    oz_stat st;
    if (oz_sys_stat(u->dir, &st)) return errno == ENOENT ? 0 : oz_err_sys(ONNXZIP_EIO, -1, u->dir, "%s: %s", u->dir,
                                                                           strerror(errno));
    if (st.kind != OZ_KIND_DIR) return oz_err(ONNXZIP_ENOTREG, -1, "%s: exists and is not a directory", u->dir);
    int fd = oz_sys_dir_fd(u->dir), empty = 1;
    if (fd < 0) return oz_err_sys(ONNXZIP_EIO, -1, u->dir, "%s: cannot open: %s", u->dir, strerror(errno));
    oz_sys_list_dir(fd, empty_entry, &empty);
    oz_sys_close(fd);
    return empty ? 0 : oz_err(ONNXZIP_EINVAL, -1, "%s: exists and is not empty; unpack a package into a new or "
                              "empty folder", u->dir);
}

static int make_tmp(unpack_dir *u)
{
    int rc = oz_mkdirs_parent(u->dir, &u->made); /* the target's parents; the target is made by the rename */
    size_t n = strlen(u->dir) + 40;
    if (!rc && !(u->tmp = malloc(n))) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (int attempt = 0; !rc && attempt < 100; attempt++) {
        snprintf(u->tmp, n, "%s.unpack-%08llx", u->dir, (unsigned long long)(oz_sys_nonce() & 0xffffffffu));
        if (!oz_sys_mkdir_at(OZ_AT_CWD, u->tmp)) return 0;
        if (errno != EEXIST)
            rc = oz_err_sys(ONNXZIP_EIO, -1, u->tmp, "%s: cannot create the temporary folder: %s", u->tmp,
                            strerror(errno));
    }
    free(u->tmp);
    u->tmp = NULL;
    return rc ? rc : oz_err(ONNXZIP_EIO, -1, "%s: cannot create a temporary folder beside it", u->dir);
}

static int write_file(unpack_dir *u, const onnxzip_member *m)
{
    char *path = join(u->tmp, m->path);
    oz_made_dirs made = { 0 };
    int rc = path ? oz_mkdirs_parent(path, &made) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int fd = rc ? -1 : oz_sys_create_at(OZ_AT_CWD, path);
    if (!rc && fd < 0) rc = oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot create: %s", path, strerror(errno));
    if (!rc) rc = oz_member_copy(u->a, m, fd, path); /* streamed, holes kept: files of any size */
    if (!rc && !(u->o->flags & ONNXZIP_UNPACK_NO_SYNC) && oz_sys_sync(fd))
        rc = oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot sync: %s", path, strerror(errno));
    if (fd >= 0) oz_sys_close(fd);
    oz_mkdirs_keep(&made, 0); /* inside the temporary folder: removed with it */
    free(path);
    return rc;
}

static int write_model(unpack_dir *u, const onnxzip_member *m)
{
    char *path = join(u->tmp, m->path);
    if (!path) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    onnxzip_unpack_options o = *u->o;
    o.model = m->path;
    o.layout = ONNXZIP_UNPACK_ORIGINAL;
    int rc = onnxzip_unpack(u->archive, path, &o);
    if (rc == ONNXZIP_EUNSUPPORTED) { /* its data files cannot be recreated as named: the caller's layout */
        o.layout = oz_unpack_fallback(u->o->layout);
        rc = onnxzip_unpack(u->archive, path, &o);
    }
    free(path);
    return rc;
}

static int rm_entry(void *user, const char *name);

/* Removes the tree `path` (a failed unpack's temporary folder). */
static void rm_tree(const char *path)
{
    int fd = oz_sys_dir_fd(path);
    if (fd >= 0) {
        const char *p = path;
        oz_sys_list_dir(fd, rm_entry, &p);
        oz_sys_close(fd);
    }
    oz_sys_unlink_at(OZ_AT_CWD, path, 1);
}

static int rm_entry(void *user, const char *name)
{
    char *p = join(*(const char **)user, name);
    oz_stat st;
    if (p && !oz_sys_stat_at(OZ_AT_CWD, p, 0, &st)) {
        if (st.kind == OZ_KIND_DIR) rm_tree(p);
        else oz_sys_unlink_at(OZ_AT_CWD, p, 0);
    }
    free(p);
    return 0;
}

static int run(unpack_dir *u)
{
    int rc = onnxzip_open(u->archive, 0, &u->a);
    if (!rc && !onnxzip_member_count(u->a))
        rc = oz_err(ONNXZIP_EINVAL, -1, "%s: a single-model archive, not a package: unpack it to a model file "
                    "(onnxzip unpack %s -o DIR/NAME.onnx)", u->archive, u->archive);
    if (!rc) rc = check_collisions(u);
    if (!rc) rc = check_target(u);
    if (!rc) rc = make_tmp(u);
    size_t n = rc ? 0 : onnxzip_member_count(u->a);
    for (size_t i = 0; i < n && !rc; i++) {
        const onnxzip_member *m = onnxzip_member_at(u->a, i);
        rc = m->kind == ONNXZIP_MEMBER_FILE ? write_file(u, m) : write_model(u, m);
    }
    if (!rc) {
        oz_sys_unlink_at(OZ_AT_CWD, u->dir, 1); /* an empty target (checked) makes way */
        if (oz_sys_rename_at(OZ_AT_CWD, u->tmp, OZ_AT_CWD, u->dir))
            rc = oz_err_sys(ONNXZIP_EIO, -1, u->dir, "%s: cannot rename the unpacked folder into place: %s", u->dir,
                            strerror(errno));
        else if (!(u->o->flags & ONNXZIP_UNPACK_NO_SYNC))
            oz_sys_sync_parent(u->dir);
    }
    return rc;
}

int onnxzip_unpack_dir(const char *archive_path, const char *dir, const onnxzip_unpack_options *opts)
{
    if (!archive_path || !dir || !*dir) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_unpack_dir: NULL path");
    onnxzip_unpack_options def;
    onnxzip_unpack_options_init(&def);
    if (!opts) opts = &def;
    if (opts->model) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_unpack_dir: unpacks every model (opts->model must "
                                   "be NULL; onnxzip_unpack() unpacks one)");
    char *d = oz_strndup(dir, strlen(dir));
    while (d && strlen(d) > 1 && d[strlen(d) - 1] == '/') d[strlen(d) - 1] = '\0';
    unpack_dir u = { .archive = archive_path, .dir = d, .o = opts };
    int rc = d ? run(&u) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (u.tmp && rc) rm_tree(u.tmp);
    if (rc) oz_mkdirs_undo(&u.made);
    else oz_mkdirs_keep(&u.made, !(opts->flags & ONNXZIP_UNPACK_NO_SYNC));
    onnxzip_close(&u.a);
    free(u.tmp);
    free(d);
    return rc;
}
