/* Outputs never alias inputs and are never special files: see outputs.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "common/outputs.h"

int oz_same_stat(const oz_stat *a, const oz_stat *b)
{
    return a->dev == b->dev && a->ino == b->ino;
}

int oz_input_fd(oz_input *in, int fd, const char *role, const char *dir, const char *path, const char *tensor)
{
    oz_stat st;
    if (oz_sys_fstat(fd, &st)) return oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot stat: %s", path, strerror(errno));
    *in = (oz_input){ .dev = st.dev, .ino = st.ino, .role = role, .dir = dir, .path = path, .tensor = tensor };
    return 0;
}

/* "dir/name", or name alone (no dir, or "."); cut to fit (messages only). */
static const char *joined(const char *dir, const char *name, char *buf, size_t cap)
{
    if (!dir || !strcmp(dir, ".")) return name;
    size_t n = strlen(dir);
    snprintf(buf, cap, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
    return buf;
}

static const char *kind(int k)
{
    return k == OZ_KIND_CHR ? "a character device" : k == OZ_KIND_BLK ? "a block device" : k == OZ_KIND_FIFO ? "a FIFO"
         : k == OZ_KIND_SOCK ? "a socket" : k == OZ_KIND_DIR ? "a directory" : "a special file";
}

static int same_as(const char *out, const oz_input *in)
{
    char buf[4096];
    const char *path = joined(in->dir, in->path, buf, sizeof buf);
    if (!in->tensor)
        return oz_err(ONNXZIP_ESAMEFILE, -1, "%s: the output is the same file as %s %s; refusing to overwrite an "
                      "input", out, in->role, path);
    return oz_err(ONNXZIP_ESAMEFILE, -1, "%s: the output is the same file as %s %s of tensor '%s'; refusing to "
                  "overwrite an input", out, in->role, path, in->tensor);
}

int oz_output_check(int dirfd, const char *dir, const char *name, const oz_input *in, size_t n)
{
    char buf[4096];
    const char *out = joined(dir, name, buf, sizeof buf);
    oz_stat st, link;
    /* stat, never open: opening a FIFO would wait for a writer. */
    if (oz_sys_stat_at(dirfd, name, 1, &st)) return 0; /* nothing there, or a dangling link: rename replaces it */
    if (st.kind != OZ_KIND_REG) {
        int via_link = !oz_sys_stat_at(dirfd, name, 0, &link) && link.kind == OZ_KIND_LINK;
        return oz_err_errno(st.kind == OZ_KIND_DIR ? EISDIR : 0, ONNXZIP_ENOTREG, -1, out, "%s: the output %s%s, not a regular file; refusing to replace it", out,
                      via_link ? "is a symbolic link to " : "exists and is ", kind(st.kind));
    }
    for (size_t i = 0; i < n; i++)
        if (st.dev == in[i].dev && st.ino == in[i].ino) return same_as(out, &in[i]);
    return 0;
}
