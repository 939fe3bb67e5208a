/* Outputs never alias inputs and are never special files: see outputs.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/internal.h"
#include "common/outputs.h"

int oz_same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int oz_input_fd(oz_input *in, int fd, const char *role, const char *dir, const char *path, const char *tensor)
{
    struct stat st;
    if (fstat(fd, &st)) return oz_err(ONNXZIP_EIO, -1, "%s: cannot stat: %s", path, strerror(errno));
    *in = (oz_input){ .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino, .role = role, .dir = dir,
                      .path = path, .tensor = tensor };
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

static const char *kind(mode_t m)
{
    return S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO"
         : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "a special file";
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
    struct stat st, link;
    /* stat, never open: opening a FIFO would wait for a writer. */
    if (fstatat(dirfd, name, &st, 0)) return 0; /* nothing there, or a dangling link: rename replaces it */
    if (!S_ISREG(st.st_mode)) {
        int via_link = !fstatat(dirfd, name, &link, AT_SYMLINK_NOFOLLOW) && S_ISLNK(link.st_mode);
        return oz_err(ONNXZIP_ENOTREG, -1, "%s: the output %s%s, not a regular file; refusing to replace it", out,
                      via_link ? "is a symbolic link to " : "exists and is ", kind(st.st_mode));
    }
    for (size_t i = 0; i < n; i++)
        if ((uint64_t)st.st_dev == in[i].dev && (uint64_t)st.st_ino == in[i].ino) return same_as(out, &in[i]);
    return 0;
}
