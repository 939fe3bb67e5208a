/* onnxzip_fetch(): a remote archive downloaded byte for byte into PATH.part,
 * cut into chunks (the handle's chunk size, else one sized to the file and
 * the connections: oz_http_chunk_for(); wherever entries begin) that are
 * fetched `parallel` at once over the same connections, each written at
 * its offset; a checker on a thread of its own reads the file back in order
 * as far as it is complete (the page cache) and checks every local header
 * and entry, so hashing never holds up the transfers; renamed to PATH once
 * every chunk is there and checked. PATH.part.etag records which file the
 * part holds and which byte ranges of it are on disk, so that an interrupted
 * download fetches only what is missing (the bytes there checked again)
 * while the origin serves that file. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "common/follow.h"
#include "common/mkdirs.h"
#include "common/outputs.h"
#include "net/source_http.h"
#include "read/stream_check.h"
#if ONNXZIP_HAVE_CURL
#include "net/http.h"
#endif

#if !ONNXZIP_HAVE_CURL

int onnxzip_fetch(onnxzip_archive *a, const char *path, void (*progress)(void *, uint64_t, uint64_t), void *user)
{
    (void)a, (void)path, (void)progress, (void)user;
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "onnxzip_fetch: this build of onnxzip has no libcurl");
}

#else

/* PATH.part.etag is rewritten after this many more bytes arrived, or
 * once a second on a slow link. */
#define RECORD_EVERY ((uint64_t)8 << 20)
/* Its size, at most: a line per chunk. */
#define META_MAX ((size_t)16 << 20)

typedef struct fetch fetch;

/* A chunk of the file, [off, off + len): its first `have` bytes are on disk;
 * `resumed`: they were there before this call. */
typedef struct chunk {
    fetch *f;
    uint64_t off, len, have;
    int resumed;
} chunk;

/* A byte range on disk: [off, off + len). */
typedef struct span {
    uint64_t off, len;
} span;

struct fetch {
    onnxzip_archive *a;
    const char *path;
    char *part, *meta;
    int fd;
    oz_made_dirs made; /* PATH's missing parents, created by open_part */
    chunk *c;          /* the file, tiled in order */
    size_t n, prefix;  /* chunks; those before `prefix` are complete */
    oz_stream s;       /* the checker, run by `fl` */
    oz_follow *fl;
    uint64_t done, recorded;
    time_t recorded_at;
    void (*progress)(void *, uint64_t, uint64_t);
    void *user;
    int canceled; /* the callback canceled: the other chunks stop without calling it again */
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
    snprintf(buf, cap, "%llu %s\n", (unsigned long long)f->a->size, oz_http_validator(oz_source_http_client(&f->a->src)));
}

/* The lines after the first: "start end have" per chunk with bytes on
 * disk ([start, start + have) of the chunk [start, end)), a run of
 * complete chunks as one line. */
static size_t describe_chunks(const fetch *f, char *text, size_t n, size_t cap)
{
    for (size_t i = 0; i < f->n; i++) {
        const chunk *c = &f->c[i];
        if (!c->have) continue;
        uint64_t end = c->off + c->len;
        while (c->have == c->len && i + 1 < f->n && f->c[i + 1].have == f->c[i + 1].len) {
            i++;
            end = f->c[i].off + f->c[i].len;
        }
        n += (size_t)snprintf(text + n, cap - n, "%llu %llu %llu\n", (unsigned long long)c->off,
                              (unsigned long long)end, (unsigned long long)(c->have == c->len ? end - c->off : c->have));
    }
    return n;
}

/* PATH.part.etag. The ranges may lag what is on disk, never lead it
 * (written after the bytes); a crash's lost writes are caught when the
 * bytes are checked again. */
static int write_meta(fetch *f)
{
    size_t cap = 400 + f->n * 64;
    char *text = malloc(cap);
    if (!text) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    describe(f, text, cap);
    size_t n = describe_chunks(f, text, strlen(text), cap);
    int fd = oz_sys_open_rw(f->meta);
    if (fd < 0 && errno == ENOENT) fd = oz_sys_create_at(OZ_AT_CWD, f->meta);
    int ok = fd >= 0 && oz_sys_pwrite(fd, text, n, 0) == (ssize_t)n && !oz_sys_truncate(fd, n);
    if (fd >= 0) oz_sys_close(fd);
    free(text);
    f->recorded = f->done;
    f->recorded_at = time(NULL);
    return ok ? 0 : oz_err_sys(ONNXZIP_EIO, -1, f->meta, "%s: cannot write: %s", f->meta, strerror(errno));
}

/* Appends [off, off + len) cut into chunks (none on disk), of the size
 * for a download of the whole file. */
static size_t add_gap(fetch *f, size_t n, uint64_t off, uint64_t len)
{
    uint64_t size = oz_http_chunk_for(oz_source_http_client(&f->a->src), f->a->size);
    size_t k = oz_http_split(NULL, off, len, size, NULL, NULL);
    for (size_t j = 0; j < k && f->c; j++) {
        uint64_t at = off + j * size;
        f->c[n + j] = (chunk){ f, at, off + len - at < size ? off + len - at : size, 0, 0 };
    }
    return n + k;
}

/* Tiles the file: the `k` ranges on disk (in order, apart), kept whole,
 * and chunks for the rest. */
static int tile(fetch *f, const span *on_disk, size_t k)
{
    free(f->c);
    f->c = NULL;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        uint64_t pos = 0;
        for (size_t j = 0; j < k; j++) {
            n = add_gap(f, n, pos, on_disk[j].off - pos);
            if (f->c) f->c[n] = (chunk){ f, on_disk[j].off, on_disk[j].len, on_disk[j].len, 1 };
            n++;
            pos = on_disk[j].off + on_disk[j].len;
        }
        n = add_gap(f, n, pos, f->a->size - pos);
        if (!pass && !(f->c = malloc((n ? n : 1) * sizeof *f->c))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        f->n = n;
    }
    f->prefix = 0;
    return 0;
}

/* The ranges PATH.part.etag records, when it describes this file: *k of
 * them (0: start over). */
static int recorded(fetch *f, span **on_disk, size_t *k)
{
    char want[400];
    describe(f, want, sizeof want);
    *on_disk = NULL;
    *k = 0;
    char *text = malloc(META_MAX + 1);
    int fd = text ? oz_sys_open_read(f->meta) : -1;
    ssize_t len = fd >= 0 ? oz_sys_pread(fd, text, META_MAX, 0) : -1;
    if (fd >= 0) oz_sys_close(fd);
    size_t w = strlen(want), lines = 0;
    if (len <= 0 || (size_t)len < w || memcmp(text, want, w)) {
        free(text);
        return !text ? oz_err(ONNXZIP_ENOMEM, -1, "out of memory") : 0;
    }
    text[len] = '\0';
    for (ssize_t i = 0; i < len; i++) lines += text[i] == '\n';
    span *v = malloc((lines ? lines : 1) * sizeof *v);
    unsigned long long start, end, have, pos = 0;
    int used, ok = v != NULL;
    for (char *p = text + w; ok && *p; p += used) {
        ok = sscanf(p, "%llu %llu %llu\n%n", &start, &end, &have, &used) == 3 && start >= pos && end <= f->a->size &&
             start <= end && have <= end - start && *k < lines;
        if (ok && have) v[(*k)++] = (span){ start, have };
        pos = end;
    }
    free(text);
    if (!ok || !*k) {
        free(v);
        *k = 0;
        return v ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    *on_disk = v;
    return 0;
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

/* A failure that a new attempt may get past (the network, the disk) keeps
 * the part for resuming; bad bytes from the origin discard it. */
static int keeps_part(int rc)
{
    return rc == ONNXZIP_ENETWORK || rc == ONNXZIP_ETIMEOUT || rc == ONNXZIP_EHTTP || rc == ONNXZIP_EIO ||
           rc == ONNXZIP_ENOMEM;
}

/* The end of the bytes complete from the file's start: the checker may
 * read up to there. */
static uint64_t complete_to(fetch *f)
{
    while (f->prefix < f->n && f->c[f->prefix].have == f->c[f->prefix].len) f->prefix++;
    return f->prefix < f->n ? f->c[f->prefix].off + f->c[f->prefix].have : f->a->size;
}

static int sink(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    chunk *c = ctx;
    fetch *f = c->f;
    if (f->canceled) return ONNXZIP_ECANCELED; /* bytes of another chunk, received in the same round */
    int rc = oz_follow_status(f->fl); /* the checker found a fault: stop */
    if (rc) return rc;
    if (oz_sys_pwrite(f->fd, p, n, (int64_t)at) != (ssize_t)n)
        return oz_err_errno(errno ? errno : ENOSPC, ONNXZIP_EIO, (int64_t)at, f->part, "%s: cannot write: %s", f->part,
                            strerror(errno ? errno : ENOSPC));
    c->have += n;
    f->done += n;
    if (c == &f->c[f->prefix]) oz_follow_ready(f->fl, complete_to(f));
    if ((f->done - f->recorded >= RECORD_EVERY || time(NULL) != f->recorded_at) && (rc = write_meta(f))) return rc;
    rc = oz_progress(f->progress, f->user, f->done, f->a->size);
    f->canceled = rc == ONNXZIP_ECANCELED;
    return rc;
}

/* The checker: the file's bytes in order, on the follow thread. */
static int check(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    (void)at;
    return oz_stream_feed(&((fetch *)ctx)->s, p, n);
}

/* The first chunk that ends after `off` (binary search: chunks tile the file). */
static size_t chunk_after(const fetch *f, uint64_t off)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->c[mid].off + f->c[mid].len <= off) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* After the checker failed: did the bytes it was checking (from the end of
 * the last entry checked whole) include some that were on disk before this
 * call? Then they are dropped from there on and fetched again. */
static int drop_back(fetch *f)
{
    uint64_t from = f->s.good, to = f->s.pos > from ? f->s.pos : from + 1;
    int resumed = 0;
    for (size_t i = chunk_after(f, from); i < f->n && f->c[i].off < to; i++) resumed |= f->c[i].resumed;
    if (!resumed) return 0;
    span *keep = malloc((f->n ? f->n : 1) * sizeof *keep);
    size_t k = 0;
    if (!keep) return 0;
    for (size_t i = 0; i < f->n && f->c[i].off < from; i++) {
        uint64_t have = f->c[i].have < from - f->c[i].off ? f->c[i].have : from - f->c[i].off;
        if (have) keep[k++] = (span){ f->c[i].off, have };
    }
    size_t good_k = f->s.good_k;
    int rc = tile(f, keep, k);
    free(keep);
    oz_stream_free(&f->s);
    if (!rc) rc = oz_stream_init_at(&f->s, f->a, good_k);
    if (!rc) rc = write_meta(f);
    return !rc;
}

/* Every missing chunk at once, with the checker following; 0 once all are
 * on disk and the checker reached the file's end. *checker: the checker
 * is what failed. */
static int transfer(fetch *f, int *checker)
{
    oz_http_range *r = malloc((f->n ? f->n : 1) * sizeof *r);
    if (!r) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    f->done = 0;
    for (size_t i = 0; i < f->n; i++) {
        chunk *c = &f->c[i];
        r[i] = (oz_http_range){ c->off + c->have, c->len - c->have, sink, c };
        f->done += c->have;
    }
    f->recorded = f->done;
    f->recorded_at = time(NULL);
    int rc = oz_follow_start(&f->fl, f->fd, f->s.pos, check, f);
    if (!rc) {
        oz_follow_ready(f->fl, complete_to(f));
        rc = oz_http_get(oz_source_http_client(&f->a->src), r, f->n);
        int crc = oz_follow_status(f->fl); /* the checker's fault is the cause, when there is one */
        *checker = crc != 0;
        if (crc) rc = crc;
        if (!rc && (rc = oz_follow_wait(f->fl, f->a->size))) *checker = 1;
        oz_follow_stop(f->fl);
        f->fl = NULL;
    }
    free(r);
    if (!rc) rc = oz_stream_finish(&f->s);
    if (rc && !*checker && keeps_part(rc)) {
        const onnxzip_error_info *e = onnxzip_last_error();
        write_meta(f);
        oz_err(rc, e->offset, "%s; what was received is kept in %s: run again to resume", e->message, f->part);
    }
    return rc;
}

/* Takes up what PATH.part.etag records when it describes this file, else
 * starts over. */
static int begin(fetch *f)
{
    span *on_disk;
    size_t k;
    int rc = recorded(f, &on_disk, &k);
    if (!rc) rc = tile(f, on_disk, k);
    free(on_disk);
    if (!rc) rc = oz_stream_init(&f->s, f->a);
    if (rc) return rc;
    /* resumed: no byte past the file's end; else an empty part */
    if (oz_sys_truncate(f->fd, k ? f->a->size : 0))
        return oz_err_sys(ONNXZIP_EIO, -1, f->part, "%s: cannot truncate: %s", f->part, strerror(errno));
    return k ? 0 : write_meta(f);
}

static int run(fetch *f)
{
    int rc = open_part(f), checker = 0;
    if (!rc) rc = begin(f);
    if (!rc) rc = transfer(f, &checker);
    for (int round = 0; rc && checker && round < 2 && drop_back(f); round++) rc = transfer(f, &checker);
    if (rc) return rc;
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
    if (!oz_source_http_client(&a->src)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_fetch: %s is not a remote archive", a->path);
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
    oz_stream_free(&f.s);
    free(f.c);
    free(f.part);
    free(f.meta);
    return rc;
}

#endif
