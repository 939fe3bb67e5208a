/* Temporary file beside a path, then rename: see atomic_file.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/atomic_file.h"
#include "common/internal.h"
#include "common/outputs.h"
#include "common/sys.h"

int oz_tmp_claim(int dirfd, const char *name, int fd)
{
    /* blocks only while a sweeper examines it; no such lock here (ENOLCK):
     * sweepers cannot take it either */
    if (oz_sys_lock_file(fd, 1)) return 0;
    oz_stat mine, there;
    if (oz_sys_fstat(fd, &mine) || oz_sys_stat_at(dirfd, name, 0, &there)) return 1;
    return oz_same_stat(&mine, &there) ? 0 : 1;
}

static int matches(const char *name, const char *prefix, size_t plen, size_t tail)
{
    if (strncmp(name, prefix, plen) || strlen(name + plen) != tail) return 0;
    for (const char *c = name + plen; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))) return 0;
    return 1;
}

typedef struct sweep {
    int dirfd;
    const char *prefix;
    size_t plen, tail;
    int dirs;
} sweep;

static int remove_in(void *user, const char *name)
{
    oz_sys_unlink_at(*(int *)user, name, 0);
    return 0;
}

/* Removes one stale entry: its lock can be taken (its creator died) and it
 * is still the entry we opened (not one created since). */
static int sweep_one(void *user, const char *name)
{
    const sweep *sw = user;
    if (!matches(name, sw->prefix, sw->plen, sw->tail)) return 0;
    int fd = oz_sys_open_at(sw->dirfd, name, sw->dirs);
    if (fd < 0) return 0;
    oz_stat st, there;
    if (!oz_sys_fstat(fd, &st) && st.kind == (sw->dirs ? OZ_KIND_DIR : OZ_KIND_REG) && !oz_sys_lock_file(fd, 0) &&
        !oz_sys_stat_at(sw->dirfd, name, 0, &there) && oz_same_stat(&st, &there)) {
        if (sw->dirs) oz_sys_list_dir(fd, remove_in, &fd); /* only files are expected in it */
        oz_sys_unlink_at(sw->dirfd, name, sw->dirs); /* lock still held */
    }
    oz_sys_close(fd);
    return 0;
}

void oz_tmp_sweep(int dirfd, const char *prefix, size_t tail, int dirs)
{
    sweep sw = { dirfd, prefix, strlen(prefix), tail, dirs };
    oz_sys_list_dir(dirfd, sweep_one, &sw);
}

int oz_tmp_create(const char *path, char **tmp, int *fd, oz_made_dirs *made)
{
    *tmp = NULL;
    *fd = -1;
    *made = (oz_made_dirs){ 0 };
    const char *slash = oz_last_sep(path);
    const char *base = slash ? slash + 1 : path;
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    size_t cap = strlen(path) + 64;
    int rc = oz_output_check(OZ_AT_CWD, NULL, path, NULL, 0); /* no device, FIFO, directory... replaced */
    if (rc) return rc;
    char *name = malloc(cap);
    if (!name) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if ((rc = oz_mkdirs_parent(path, made))) {
        free(name);
        return rc;
    }
    int dirfd = oz_sys_parent_fd(path);
    if (dirfd < 0) {
        rc = oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot open its directory: %s", path, strerror(errno));
        free(name);
        oz_mkdirs_undo(made);
        return rc;
    }
    snprintf(name, cap, ".%s.tmp-", base);
    oz_tmp_sweep(dirfd, name, OZ_TMP_FILE_TAIL, 0); /* stale ones of dead writers */
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        snprintf(name, cap, "%.*s.%s.tmp-%08lx", dirlen, path, base, (unsigned long)(oz_sys_nonce() & 0xffffffffu));
        *fd = oz_sys_create_at(dirfd, name + dirlen); /* read and write: read back to hash */
        if (*fd >= 0 && oz_tmp_claim(dirfd, name + dirlen, *fd)) { /* swept before we locked it */
            oz_sys_close(*fd);
            *fd = -1;
            errno = EEXIST;
        }
        if (*fd >= 0) {
            oz_sys_close(dirfd);
            *tmp = name;
            return 0;
        }
        if (errno != EEXIST) break;
    }
    int e = errno;
    oz_sys_close(dirfd);
    rc = oz_err_errno(e, ONNXZIP_EIO, -1, path, "%s: cannot create a temporary file beside it (%s): %s", path, name,
                strerror(e));
    free(name); /* never created: nothing to remove */
    oz_mkdirs_undo(made);
    return rc;
}

int oz_pwrite_full(int fd, const void *data, size_t n, uint64_t off)
{
    const uint8_t *p = data;
    while (n) {
        ssize_t k = oz_sys_pwrite(fd, p, n, (int64_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0) errno = ENOSPC;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

int oz_atomic_open(const char *path, oz_atomic_file *af)
{
    if (!af) return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_open: NULL argument");
    *af = (oz_atomic_file){ .fd = -1 };
    if (!path || !*path) return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_open: empty path");
    const char *slash = oz_last_sep(path);
    const char *base = slash ? slash + 1 : path;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: not a file name", path);
    if (!(af->path = strdup(path))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int rc = oz_tmp_create(path, &af->tmp, &af->fd, &af->made);
    if (rc) oz_atomic_abort(af); /* releases path; no temporary or directory was left */
    return rc;
}

int oz_atomic_write(oz_atomic_file *af, const void *data, size_t n)
{
    if (!af || af->fd < 0) return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_write: file not open");
    const uint8_t *p = data;
    while (n) {
        ssize_t k = oz_sys_write(af->fd, p, n < (1u << 30) ? n : (1u << 30));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return oz_err_errno(k < 0 ? errno : 0, ONNXZIP_EIO, -1, af->tmp, "%s: cannot write the temporary file %s: %s", af->path, af->tmp,
                          k < 0 ? strerror(errno) : "no progress");
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int oz_atomic_commit(oz_atomic_file *af)
{
    if (!af || af->fd < 0 || !af->tmp) {
        oz_atomic_abort(af);
        return oz_err(ONNXZIP_EINVAL, -1, "oz_atomic_commit: file not open");
    }
    const char *what = NULL;
    int e = 0;
    if (oz_sys_sync(af->fd)) what = "cannot sync the temporary file", e = errno;
    int rc = what ? 0 : oz_output_check(OZ_AT_CWD, NULL, af->path, NULL, 0); /* it may have changed since open */
    if (rc) {
        oz_atomic_abort(af);
        return rc;
    }
    /* Renamed while still open, so that its lock keeps sweepers away. */
    if (!what && oz_sys_rename_at(OZ_AT_CWD, af->tmp, OZ_AT_CWD, af->path))
        what = "cannot rename the temporary file into place", e = errno;
    if (what) {
        rc = oz_err_errno(e, ONNXZIP_EIO, -1, af->path, "%s: %s (%s): %s", af->path, what, af->tmp, strerror(e));
        oz_atomic_abort(af);
        return rc;
    }
    oz_sys_close(af->fd); /* synced: a close error could lose nothing */
    af->fd = -1;
    free(af->tmp);
    af->tmp = NULL; /* renamed: nothing left to remove */
    oz_mkdirs_keep(&af->made, 1);
    oz_sys_sync_parent(af->path);
    oz_atomic_abort(af);
    return 0;
}

void oz_atomic_abort(oz_atomic_file *af)
{
    if (!af) return;
    if (af->tmp) { /* fd is ours only while a temporary file exists */
        oz_sys_unlink_at(OZ_AT_CWD, af->tmp, 0); /* before closing: still locked */
        if (af->fd >= 0) oz_sys_close(af->fd);
    }
    oz_mkdirs_undo(&af->made); /* after the close: Windows removes no directory with a file open in it */
    free(af->tmp);
    free(af->path);
    *af = (oz_atomic_file){ .fd = -1 };
}
