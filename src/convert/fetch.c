/* onnxzip_fetch(): a remote archive downloaded byte for byte into PATH.part,
 * in parts fetched at once (split where entries begin), every local header
 * and entry checked as the bytes stream by, renamed to PATH once complete.
 * PATH.part.etag records which file the part holds and how far each part
 * got, so that an interrupted download resumes every part where it stopped
 * (its bytes checked again from disk) while the origin serves that file. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "common/mkdirs.h"
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

/* Files below this size are fetched in one part. */
#define SPLIT_MIN ((uint64_t)16 << 20)
#define PARTS_MAX 8
/* PATH.part.etag is rewritten after this many more bytes arrived, or
 * once a second on a slow link. */
#define RECORD_EVERY ((uint64_t)8 << 20)

typedef struct fetch fetch;

/* One part of the file, [start, end): its stream has checked up to its pos. */
typedef struct part {
    fetch *f;
    oz_stream s;
    uint64_t start, end;
} part;

struct fetch {
    onnxzip_archive *a;
    const char *path;
    char *part, *meta;
    int fd;
    oz_made_dirs made; /* PATH's missing parents, created by open_part */
    part g[PARTS_MAX];
    size_t n;
    uint64_t done, recorded;
    time_t recorded_at;
    void (*progress)(void *, uint64_t, uint64_t);
    void *user;
    int canceled; /* the callback canceled: the other parts stop without calling it again */
};

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

/* First line of PATH.part.etag: the file's size and pinned validator. */
static void describe(const fetch *f, char *buf, size_t cap)
{
    snprintf(buf, cap, "%llu %s\n", (unsigned long long)f->a->size, oz_http_validator(f->a->remote->http));
}

/* PATH.part.etag: the first line, then "start end received" per part. The
 * parts' positions may lag what is on disk, never lead it (written after
 * the bytes); a crash's lost writes are caught when the bytes are checked. */
static int write_meta(fetch *f)
{
    char text[400 + PARTS_MAX * 64];
    describe(f, text, sizeof text);
    size_t n = strlen(text);
    for (size_t j = 0; j < f->n; j++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%llu %llu %llu\n", (unsigned long long)f->g[j].start,
                              (unsigned long long)f->g[j].end, (unsigned long long)(f->g[j].s.pos - f->g[j].start));
    int fd = oz_sys_open_rw(f->meta);
    if (fd < 0 && errno == ENOENT) fd = oz_sys_create_at(OZ_AT_CWD, f->meta);
    int ok = fd >= 0 && oz_sys_pwrite(fd, text, n, 0) == (ssize_t)n && !oz_sys_truncate(fd, n);
    if (fd >= 0) oz_sys_close(fd);
    f->recorded = f->done;
    f->recorded_at = time(NULL);
    return ok ? 0 : oz_err_sys(ONNXZIP_EIO, -1, f->meta, "%s: cannot write: %s", f->meta, strerror(errno));
}

/* The entry (index in file order) whose local header is at `off`, or the
 * directory (the entry count) for the end of the data area. */
static size_t entry_at(const oz_stream *s, uint64_t off, int *found)
{
    const oz_zip *z = &s->a->zip;
    *found = 1;
    for (size_t k = 0; k < z->n; k++)
        if (z->entries[s->order[k]].pub.header_offset == off) return k;
    *found = off == z->cd_offset;
    return z->n;
}

/* Part [start, end) resumed: the `have` bytes on disk checked again; on a
 * fault, back to the last entry checked whole. */
static int resume_part(fetch *f, part *g, uint64_t have)
{
    uint8_t *buf = malloc(1 << 20);
    uint64_t at = g->start;
    int ok = buf != NULL;
    while (ok && at < g->start + have) {
        uint64_t want = g->start + have - at;
        ssize_t k = oz_sys_pread(f->fd, buf, want < (1 << 20) ? (size_t)want : (1 << 20), (int64_t)at);
        ok = k > 0 && !oz_stream_feed(&g->s, buf, (size_t)k);
        at += ok ? (uint64_t)k : 0;
    }
    free(buf);
    if (ok) return 0;
    size_t k = g->s.good_k;
    oz_stream_free(&g->s);
    return oz_stream_init_at(&g->s, f->a, k);
}

/* Takes up the parts PATH.part.etag records, when it describes this file:
 * 1 when resumed, 0 to start over. */
static int resume(fetch *f)
{
    char want[400], text[400 + PARTS_MAX * 64] = "";
    describe(f, want, sizeof want);
    int fd = oz_sys_open_read(f->meta);
    ssize_t len = fd >= 0 ? oz_sys_pread(fd, text, sizeof text - 1, 0) : -1;
    if (fd >= 0) oz_sys_close(fd);
    size_t w = strlen(want);
    if (len <= 0 || (size_t)len < w || memcmp(text, want, w)) return 0;
    char *p = text + w;
    unsigned long long start, end, have;
    int used;
    while (f->n < PARTS_MAX && sscanf(p, "%llu %llu %llu\n%n", &start, &end, &have, &used) == 3) {
        part *g = &f->g[f->n];
        int found;
        *g = (part){ .f = f, .start = start, .end = end };
        if (oz_stream_init_at(&g->s, f->a, 0)) return 0;
        size_t k = entry_at(&g->s, start, &found);
        oz_stream_free(&g->s);
        if (!found || end > f->a->size || start > end || have > end - start ||
            (f->n && f->g[f->n - 1].end != start) || (!f->n && start != 0) || oz_stream_init_at(&g->s, f->a, k))
            return 0;
        f->n++;
        if (resume_part(f, g, have)) return 0;
        p += used;
    }
    return f->n && f->g[f->n - 1].end == f->a->size;
}

/* New parts that start where entries do (not the model: dead space may
 * precede it), about equal in size. */
static int plan(fetch *f)
{
    const oz_zip *z = &f->a->zip;
    size_t most = oz_http_parallel(f->a->remote->http), k = 1;
    if (most > PARTS_MAX) most = PARTS_MAX;
    if (f->a->size < SPLIT_MIN) most = 1;
    f->g[0] = (part){ .f = f, .start = 0 };
    int rc = oz_stream_init(&f->g[0].s, f->a);
    f->n = !rc;
    for (size_t j = 1; j < most && !rc; j++) {
        const uint32_t *order = f->g[0].s.order;
        uint64_t target = f->a->size / most * j;
        while (k < z->n && (order[k] == z->model_index || z->entries[order[k]].pub.header_offset < target)) k++;
        if (k == z->n) break;
        part *g = &f->g[f->n];
        *g = (part){ .f = f };
        if ((rc = oz_stream_init_at(&g->s, f->a, k++))) break;
        g->start = g->s.pos;
        f->g[f->n - 1].end = g->start;
        f->n++;
    }
    if (f->n) f->g[f->n - 1].end = f->a->size;
    return rc;
}

static int open_part(fetch *f)
{
    int rc = oz_output_check(OZ_AT_CWD, NULL, f->path, NULL, 0);
    if (!rc) rc = oz_output_check(OZ_AT_CWD, NULL, f->part, NULL, 0);
    if (!rc) rc = oz_mkdirs_parent(f->part, &f->made);
    if (rc) return rc;
    f->fd = oz_sys_open_rw(f->part);
    if (f->fd < 0 && errno == ENOENT) f->fd = oz_sys_create_at(OZ_AT_CWD, f->part);
    if (f->fd < 0) return oz_err_sys(ONNXZIP_EIO, -1, f->part, "%s: cannot open: %s", f->part, strerror(errno));
    if (oz_sys_lock_file(f->fd, 0))
        return oz_err(ONNXZIP_EBUSY, -1, "%s: another download to %s is running", f->part, f->path);
    return 0;
}

static int sink(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    part *g = ctx;
    fetch *f = g->f;
    if (f->canceled) return ONNXZIP_ECANCELED; /* bytes of another part, received in the same round */
    int rc = oz_stream_feed(&g->s, p, n);
    if (rc) return rc;
    if (oz_sys_pwrite(f->fd, p, n, (int64_t)at) != (ssize_t)n)
        return oz_err_errno(errno ? errno : ENOSPC, ONNXZIP_EIO, (int64_t)at, f->part, "%s: cannot write: %s", f->part, strerror(errno ? errno : ENOSPC));
    f->done += n;
    if ((f->done - f->recorded >= RECORD_EVERY || time(NULL) != f->recorded_at) && (rc = write_meta(f))) return rc;
    rc = oz_progress(f->progress, f->user, f->done, f->a->size);
    f->canceled = rc == ONNXZIP_ECANCELED;
    return rc;
}

/* A failure that a new attempt may get past (the network, the disk) keeps
 * the part for resuming; bad bytes from the origin discard it. */
static int keeps_part(int rc)
{
    return rc == ONNXZIP_ENETWORK || rc == ONNXZIP_ETIMEOUT || rc == ONNXZIP_EHTTP || rc == ONNXZIP_EIO ||
           rc == ONNXZIP_ENOMEM;
}

static void free_parts(fetch *f)
{
    for (size_t j = 0; j < f->n; j++) oz_stream_free(&f->g[j].s);
    f->n = 0;
}

/* Every part's rest, at once; then each must have ended where the next
 * begins, the last with the file. */
static int fetch_parts(fetch *f)
{
    oz_http_range r[PARTS_MAX];
    f->done = 0;
    for (size_t j = 0; j < f->n; j++) {
        r[j] = (oz_http_range){ f->g[j].s.pos, f->g[j].end - f->g[j].s.pos, sink, &f->g[j] };
        f->done += f->g[j].s.pos - f->g[j].start;
    }
    f->recorded = f->done;
    int rc = oz_http_get(f->a->remote->http, r, f->n);
    if (rc && keeps_part(rc)) {
        const onnxzip_error_info *e = onnxzip_last_error();
        write_meta(f);
        oz_err(rc, e->offset, "%s; what was received is kept in %s: run again to resume", e->message, f->part);
    }
    for (size_t j = 0; j < f->n && !rc; j++)
        rc = j + 1 < f->n ? oz_stream_boundary(&f->g[j].s, f->g[j].end) : oz_stream_finish(&f->g[j].s);
    return rc;
}

static int run(fetch *f)
{
    int rc = open_part(f);
    if (rc) return rc;
    if (!resume(f)) { /* start over */
        free_parts(f);
        if ((rc = plan(f)) || (rc = write_meta(f))) return rc;
        if (oz_sys_truncate(f->fd, 0))
            return oz_err_sys(ONNXZIP_EIO, -1, f->part, "%s: cannot truncate: %s", f->part, strerror(errno));
    }
    if ((rc = fetch_parts(f))) return rc;
    if (oz_sys_sync(f->fd)) return oz_err_sys(ONNXZIP_EIO, -1, f->part, "%s: cannot sync: %s", f->part, strerror(errno));
    if ((rc = oz_output_check(OZ_AT_CWD, NULL, f->path, NULL, 0))) return rc;
    if (oz_sys_rename_at(OZ_AT_CWD, f->part, OZ_AT_CWD, f->path))
        return oz_err_sys(ONNXZIP_EIO, -1, f->path, "%s: cannot rename to %s: %s", f->part, f->path, strerror(errno));
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
    int rc = f.part && f.meta ? run(&f) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (rc && !keeps_part(rc) && f.fd >= 0 && rc != ONNXZIP_EBUSY && rc != ONNXZIP_ESAMEFILE &&
        rc != ONNXZIP_ENOTREG) {
        oz_sys_unlink_at(OZ_AT_CWD, f.part, 0);
        oz_sys_unlink_at(OZ_AT_CWD, f.meta, 0);
    }
    if (f.fd >= 0) oz_sys_close(f.fd);
    if (rc) /* those still empty: not when the part is kept for resuming */
        oz_mkdirs_undo(&f.made);
    else
        oz_mkdirs_keep(&f.made, 1);
    free_parts(&f);
    free(f.part);
    free(f.meta);
    return rc;
}

#endif
