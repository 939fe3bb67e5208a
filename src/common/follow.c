/* The read-back thread: see follow.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/follow.h"
#include "common/internal.h"
#include "common/sys.h"

#define BUF (1u << 20) /* the most handed over at once */
#define STOPPED 1      /* oz_follow_stop() was called (statuses are negative) */

typedef struct span {
    uint64_t off, end;
} span;

/* A span's mapping, from `off` (NULL: read with pread). */
typedef struct mapping {
    const uint8_t *p;
    uint64_t off;
    size_t len;
} mapping;

struct oz_follow {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, moved; /* work: for the thread; moved: for oz_follow_wait() */
    int fd, map;
    oz_follow_fn fn;
    oz_follow_end_fn end;
    void *ctx;
    span *spans;
    size_t n, cap, cur;  /* queued; room; the one being read */
    uint64_t pos, ready; /* passed; final */
    int stop, rc, sys_errno;
    int64_t err_offset;
    char message[1024], path[1024]; /* the thread's error, raised again on the caller's */
    uint8_t *buf;
};

/* Waits until bytes past `at` are final: the end of those (`end` at most),
 * or 0 once stopped. */
static uint64_t wait_ready(oz_follow *f, uint64_t at, uint64_t end)
{
    pthread_mutex_lock(&f->mu);
    while (f->ready <= at && !f->stop) pthread_cond_wait(&f->work, &f->mu);
    uint64_t ready = f->stop ? 0 : f->ready < end ? f->ready : end;
    pthread_mutex_unlock(&f->mu);
    return ready;
}

/* The thread has passed `pos` (and the span, when `span_done`): whether it
 * is to stop. */
static int publish(oz_follow *f, uint64_t pos, int span_done)
{
    pthread_mutex_lock(&f->mu);
    f->pos = pos;
    f->cur += (size_t)span_done;
    int stop = f->stop;
    pthread_cond_broadcast(&f->moved);
    pthread_mutex_unlock(&f->mu);
    return stop;
}

/* Span s mapped where it can be, from a multiple of 64 KiB (Windows maps
 * from those). Only bytes below `ready` are touched: the owner publishes it
 * after writing them and keeps the file's size, so no touched page lies
 * past the end of the file (no SIGBUS). */
static mapping map_span(const oz_follow *f, span s)
{
    mapping m = { NULL, s.off & ~(uint64_t)0xffff, 0 };
    void *p = f->map && s.end > s.off ? oz_sys_map(f->fd, m.off, s.end - m.off) : NULL; /* EFBIG on 32 bits */
    if (p) {
        m.p = p;
        m.len = (size_t)(s.end - m.off);
        oz_sys_advise_map(p, m.len, OZ_ADV_SEQUENTIAL);
    }
    return m;
}

/* Hands over the first piece of [at, to), at most BUF bytes, from the
 * mapping or read into f->buf; *next: where the next piece starts. */
static int piece(oz_follow *f, const mapping *m, uint64_t at, uint64_t to, uint64_t *next)
{
    size_t n = to - at < BUF ? (size_t)(to - at) : BUF;
    *next = at;
    if (!m->p) {
        ssize_t k = oz_sys_pread(f->fd, f->buf, n, (int64_t)at);
        int e = errno;
        if (k < 0 && e == EINTR) return 0;
        if (k < 0)
            return oz_err_errno(e, ONNXZIP_EIO, (int64_t)at, NULL, "cannot read back offset %llu: %s",
                                (unsigned long long)at, strerror(e));
        if (k == 0)
            return oz_err(ONNXZIP_EIO, (int64_t)at, "cannot read back offset %llu: the file is shorter than written",
                          (unsigned long long)at);
        n = (size_t)k;
    }
    int rc = f->fn(f->ctx, m->p ? m->p + (at - m->off) : f->buf, n, at);
    *next = at + n;
    /* Mapped pages are dropped behind, whole ones (they stay in the page
     * cache): kept, they would count in this process's RSS, which must stay
     * flat however large the span. */
    uint64_t lo = at & ~(uint64_t)4095, hi = *next & ~(uint64_t)4095;
    if (m->p && hi > lo) oz_sys_advise_map((void *)(m->p + (lo - m->off)), (size_t)(hi - lo), OZ_ADV_DONTNEED);
    return rc;
}

/* Hands span s over as `ready` allows, then calls f->end: 0, STOPPED, or
 * the status. */
static int follow_span(oz_follow *f, span s)
{
    mapping m = map_span(f, s);
    int rc = 0;
    for (uint64_t at = s.off, to; !rc && at < s.end;) {
        if (!(to = wait_ready(f, at, s.end))) rc = STOPPED;
        while (!rc && at < to) {
            rc = piece(f, &m, at, to, &at);
            if (!rc && at < s.end && publish(f, at, 0)) rc = STOPPED;
        }
    }
    oz_sys_unmap(m.p, m.len);
    if (!rc && f->end) rc = f->end(f->ctx);
    return rc ? rc : publish(f, s.end, 1);
}

/* Keeps the thread's error (recorded on this thread) for the owner's. */
static void fail(oz_follow *f, int rc)
{
    const onnxzip_error_info *e = onnxzip_last_error();
    pthread_mutex_lock(&f->mu);
    snprintf(f->message, sizeof f->message, "%s", e->message);
    snprintf(f->path, sizeof f->path, "%s", e->path ? e->path : "");
    f->err_offset = e->offset;
    f->sys_errno = e->sys_errno;
    f->rc = rc;
    pthread_cond_broadcast(&f->moved);
    pthread_mutex_unlock(&f->mu);
}

static void *run(void *arg)
{
    oz_follow *f = arg;
    for (int rc = 0; !rc;) {
        pthread_mutex_lock(&f->mu);
        while (f->cur == f->n && !f->stop) pthread_cond_wait(&f->work, &f->mu);
        rc = f->stop ? STOPPED : 0;
        span s = rc ? (span){ 0, 0 } : f->spans[f->cur];
        if (!rc && f->pos < s.off) { /* the bytes between spans are passed */
            f->pos = s.off;
            pthread_cond_broadcast(&f->moved);
        }
        pthread_mutex_unlock(&f->mu);
        if (!rc) rc = follow_span(f, s);
        if (rc < 0) fail(f, rc);
    }
    return NULL;
}

/* The thread, with `first` queued (when not NULL); NULL when no thread or
 * memory could be had. */
static oz_follow *start(int fd, int map, oz_follow_fn fn, oz_follow_end_fn end, void *ctx, const span *first)
{
    oz_follow *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->cap = 16;
    f->buf = malloc(BUF); /* the fallback of mapped spans too: no page touched before it is needed */
    f->spans = malloc(f->cap * sizeof *f->spans);
    if (!f->buf || !f->spans) goto fail;
    f->fd = fd, f->map = map, f->fn = fn, f->end = end, f->ctx = ctx;
    if (first) {
        f->spans[f->n++] = *first;
        f->pos = f->ready = first->off;
    }
    if (pthread_mutex_init(&f->mu, NULL)) goto fail;
    if (pthread_cond_init(&f->work, NULL)) goto fail_mu;
    if (pthread_cond_init(&f->moved, NULL)) goto fail_work;
    if (pthread_create(&f->thread, NULL, run, f) == 0) return f;
    pthread_cond_destroy(&f->moved);
fail_work:
    pthread_cond_destroy(&f->work);
fail_mu:
    pthread_mutex_destroy(&f->mu);
fail:
    free(f->spans);
    free(f->buf);
    free(f);
    return NULL;
}

int oz_follow_start(oz_follow **fp, int fd, uint64_t from, oz_follow_fn fn, void *ctx)
{
    span all = { from, UINT64_MAX };
    if ((*fp = start(fd, 0, fn, NULL, ctx, &all))) return 0;
    return oz_err(ONNXZIP_ENOMEM, -1, "out of memory or threads (checking thread)");
}

oz_follow *oz_follow_start_spans(int fd, oz_follow_fn fn, oz_follow_end_fn end, void *ctx)
{
    return start(fd, 1, fn, end, ctx, NULL);
}

int oz_follow_add(oz_follow *f, uint64_t off, uint64_t len)
{
    pthread_mutex_lock(&f->mu);
    if (f->n == f->cap && f->cur) { /* the spans passed make room */
        memmove(f->spans, f->spans + f->cur, (f->n - f->cur) * sizeof *f->spans);
        f->n -= f->cur;
        f->cur = 0;
    }
    span *v = f->n < f->cap ? f->spans : realloc(f->spans, 2 * f->cap * sizeof *f->spans);
    if (v && f->n == f->cap) { /* grown, whether realloc() moved the block or not */
        f->spans = v;
        f->cap *= 2;
    }
    if (v) {
        f->spans[f->n++] = (span){ off, off + len };
        pthread_cond_broadcast(&f->work);
    }
    pthread_mutex_unlock(&f->mu);
    return v ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory (read-back queue)");
}

void oz_follow_ready(oz_follow *f, uint64_t off)
{
    pthread_mutex_lock(&f->mu);
    if (off > f->ready) {
        f->ready = off;
        pthread_cond_broadcast(&f->work);
    }
    pthread_mutex_unlock(&f->mu);
}

/* With f->mu held: the thread's status, its error raised here. */
static int raise_status(oz_follow *f)
{
    return f->rc ? oz_err_errno(f->sys_errno, f->rc, f->err_offset, f->path[0] ? f->path : NULL, "%s", f->message)
                 : 0;
}

int oz_follow_status(oz_follow *f)
{
    pthread_mutex_lock(&f->mu);
    int rc = raise_status(f);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

int oz_follow_wait(oz_follow *f, uint64_t end)
{
    pthread_mutex_lock(&f->mu);
    while (f->pos < end && !f->rc) pthread_cond_wait(&f->moved, &f->mu);
    int rc = raise_status(f);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void oz_follow_stop(oz_follow *f)
{
    if (!f) return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_cond_broadcast(&f->work);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    pthread_cond_destroy(&f->moved);
    pthread_cond_destroy(&f->work);
    pthread_mutex_destroy(&f->mu);
    free(f->spans);
    free(f->buf);
    free(f);
}
