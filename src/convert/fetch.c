/* onnxzip_fetch(): a remote archive downloaded byte for byte into PATH.part,
 * every local header and entry checked as the bytes stream by, renamed to
 * PATH once complete. PATH.part.etag records which file the part holds, so
 * that an interrupted download resumes where it stopped while the origin
 * still serves the same file. */
#include <errno.h>
#include <stdio.h>

#include "common/outputs.h"
#include "read/remote.h"
#if ONNXZIP_HAVE_CURL
#include "common/http.h"
#endif

#if !ONNXZIP_HAVE_CURL

int onnxzip_fetch(onnxzip_archive *a, const char *path, void (*progress)(void *, uint64_t, uint64_t), void *user)
{
    (void)a, (void)path, (void)progress, (void)user;
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "onnxzip_fetch: this build of onnxzip has no libcurl");
}

#else

typedef struct fetch {
    onnxzip_archive *a;
    const char *path;
    char *part, *meta;
    int fd;
    oz_stream s;
    void (*progress)(void *, uint64_t, uint64_t);
    void *user;
} fetch;

static char *with_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);
    char *s = malloc(n + k + 1);
    if (s) {
        memcpy(s, path, n);
        memcpy(s + n, suffix, k + 1);
    }
    return s;
}

/* What the part holds: the file's size and pinned validator, one line. */
static void describe(const fetch *f, char *buf, size_t cap)
{
    snprintf(buf, cap, "%llu %s\n", (unsigned long long)f->a->size, oz_http_validator(f->a->remote->http));
}

static int same_file(const fetch *f)
{
    char want[400], have[400] = "";
    describe(f, want, sizeof want);
    int fd = oz_sys_open_read(f->meta);
    if (fd < 0) return 0;
    ssize_t n = oz_sys_pread(fd, have, sizeof have - 1, 0);
    oz_sys_close(fd);
    return n > 0 && (size_t)n == strlen(want) && !memcmp(have, want, (size_t)n);
}

static int write_meta(const fetch *f)
{
    char want[400];
    describe(f, want, sizeof want);
    oz_sys_unlink_at(OZ_AT_CWD, f->meta, 0);
    int fd = oz_sys_create_at(OZ_AT_CWD, f->meta);
    size_t n = strlen(want);
    int ok = fd >= 0 && oz_sys_write(fd, want, n) == (ssize_t)n && !oz_sys_sync(fd);
    if (fd >= 0) oz_sys_close(fd);
    return ok ? 0 : oz_err(ONNXZIP_EIO, -1, "%s: cannot write: %s", f->meta, strerror(errno));
}

/* The part's bytes already there, checked again from disk: how many can be
 * kept (0 when they are not the start of this file). */
static uint64_t resume_point(fetch *f)
{
    oz_stat st;
    if (!same_file(f) || oz_sys_fstat(f->fd, &st) || st.size > f->a->size) return 0;
    uint8_t *buf = malloc(1 << 20);
    uint64_t at = 0;
    while (buf && at < st.size) {
        ssize_t k = oz_sys_pread(f->fd, buf, 1 << 20, (int64_t)at);
        if (k <= 0 || oz_stream_feed(&f->s, buf, (size_t)k)) break;
        at += (uint64_t)k;
    }
    free(buf);
    return at == st.size ? at : 0;
}

static int open_part(fetch *f)
{
    int rc = oz_output_check(OZ_AT_CWD, NULL, f->path, NULL, 0);
    if (!rc) rc = oz_output_check(OZ_AT_CWD, NULL, f->part, NULL, 0);
    if (rc) return rc;
    f->fd = oz_sys_open_rw(f->part);
    if (f->fd < 0 && errno == ENOENT) f->fd = oz_sys_create_at(OZ_AT_CWD, f->part);
    if (f->fd < 0) return oz_err(ONNXZIP_EIO, -1, "%s: cannot open: %s", f->part, strerror(errno));
    if (oz_sys_lock_file(f->fd, 0))
        return oz_err(ONNXZIP_EBUSY, -1, "%s: another download to %s is running", f->part, f->path);
    return 0;
}

static int sink(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    fetch *f = ctx;
    int rc = oz_stream_feed(&f->s, p, n);
    if (rc) return rc;
    if (oz_sys_pwrite(f->fd, p, n, (int64_t)at) != (ssize_t)n)
        return oz_err(ONNXZIP_EIO, (int64_t)at, "%s: cannot write: %s", f->part, strerror(errno ? errno : ENOSPC));
    if (f->progress) f->progress(f->user, at + n, f->a->size);
    return 0;
}

/* A failure that a new attempt may get past (the network, the disk) keeps
 * the part for resuming; bad bytes from the origin discard it. */
static int keeps_part(int rc)
{
    return rc == ONNXZIP_ENETWORK || rc == ONNXZIP_ETIMEOUT || rc == ONNXZIP_EHTTP || rc == ONNXZIP_EIO ||
           rc == ONNXZIP_ENOMEM;
}

static int run(fetch *f)
{
    int rc = open_part(f);
    if (rc) return rc;
    uint64_t from = resume_point(f);
    if (from == 0) { /* start over */
        oz_stream_free(&f->s);
        if ((rc = oz_stream_init(&f->s, f->a)) || (rc = write_meta(f))) return rc;
        if (oz_sys_truncate(f->fd, 0))
            return oz_err(ONNXZIP_EIO, -1, "%s: cannot truncate: %s", f->part, strerror(errno));
    }
    if (from < f->a->size && (rc = oz_remote_stream(f->a, from, sink, f))) {
        if (keeps_part(rc))
            oz_err(rc, onnxzip_last_error()->offset, "%s; the %llu bytes received are kept in %s: run again to resume",
                   onnxzip_last_error()->message, (unsigned long long)f->s.pos, f->part);
        return rc;
    }
    if ((rc = oz_stream_finish(&f->s))) return rc;
    if (oz_sys_sync(f->fd)) return oz_err(ONNXZIP_EIO, -1, "%s: cannot sync: %s", f->part, strerror(errno));
    if ((rc = oz_output_check(OZ_AT_CWD, NULL, f->path, NULL, 0))) return rc;
    if (oz_sys_rename_at(OZ_AT_CWD, f->part, OZ_AT_CWD, f->path))
        return oz_err(ONNXZIP_EIO, -1, "%s: cannot rename to %s: %s", f->part, f->path, strerror(errno));
    oz_sys_unlink_at(OZ_AT_CWD, f->meta, 0);
    return 0;
}

int onnxzip_fetch(onnxzip_archive *a, const char *path, void (*progress)(void *, uint64_t, uint64_t), void *user)
{
    if (!a || !path || !*path) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_fetch: NULL argument");
    if (!a->remote) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_fetch: %s is not a remote archive", a->path);
    fetch f = { .a = a, .path = path, .fd = -1, .progress = progress, .user = user };
    f.part = with_suffix(path, ".part");
    f.meta = with_suffix(path, ".part.etag");
    int rc = f.part && f.meta ? oz_stream_init(&f.s, a) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (!rc) rc = run(&f);
    if (rc && !keeps_part(rc) && f.fd >= 0 && rc != ONNXZIP_EBUSY && rc != ONNXZIP_ESAMEFILE &&
        rc != ONNXZIP_ENOTREG) {
        oz_sys_unlink_at(OZ_AT_CWD, f.part, 0);
        oz_sys_unlink_at(OZ_AT_CWD, f.meta, 0);
    }
    if (f.fd >= 0) oz_sys_close(f.fd);
    oz_stream_free(&f.s);
    free(f.part);
    free(f.meta);
    return rc;
}

#endif
