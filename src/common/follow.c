#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/follow.h"
#include "common/internal.h"
#include "common/sys.h"

#define BUF (1u << 20)

struct oz_follow {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, moved; /* work: for the thread; moved: for oz_follow_wait() */
    int fd;
    oz_follow_fn fn;
    void *ctx;
    uint64_t pos, ready;
    int stop, rc;
    int64_t err_offset;
    char message[1024]; /* the thread's error, raised again on the caller's */
    uint8_t *buf;
};

/* One piece [pos, ready) handed over: 0 or the status. */
static int step(oz_follow *f, uint64_t pos, uint64_t ready)
{
    size_t want = ready - pos < BUF ? (size_t)(ready - pos) : BUF;
    ssize_t k = oz_sys_pread(f->fd, f->buf, want, (int64_t)pos);
    if (k < 0 && errno == EINTR) return 0;
    if (k <= 0)
        return oz_err(ONNXZIP_EIO, (int64_t)pos, "cannot read back offset %llu: %s", (unsigned long long)pos,
                      k < 0 ? strerror(errno) : "the file is shorter than written");
    int rc = f->fn(f->ctx, f->buf, (size_t)k, pos);
    pthread_mutex_lock(&f->mu);
    if (!rc) f->pos = pos + (uint64_t)k;
    pthread_cond_broadcast(&f->moved);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

static void *run(void *arg)
{
    oz_follow *f = arg;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        while (f->ready <= f->pos && !f->stop) pthread_cond_wait(&f->work, &f->mu);
        uint64_t pos = f->pos, ready = f->ready;
        int stop = f->stop;
        pthread_mutex_unlock(&f->mu);
        if (stop) return NULL;
        int rc = step(f, pos, ready);
        if (!rc) continue;
        const onnxzip_error_info *e = onnxzip_last_error();
        pthread_mutex_lock(&f->mu);
        snprintf(f->message, sizeof f->message, "%s", e->message);
        f->err_offset = e->offset;
        f->rc = rc;
        pthread_cond_broadcast(&f->moved);
        pthread_mutex_unlock(&f->mu);
        return NULL;
    }
}

int oz_follow_start(oz_follow **fp, int fd, uint64_t from, oz_follow_fn fn, void *ctx)
{
    oz_follow *f = calloc(1, sizeof *f);
    *fp = NULL;
    if (!f || !(f->buf = malloc(BUF))) goto fail;
    *f = (oz_follow){ .fd = fd, .fn = fn, .ctx = ctx, .pos = from, .ready = from, .buf = f->buf };
    if (pthread_mutex_init(&f->mu, NULL)) goto fail;
    if (pthread_cond_init(&f->work, NULL)) goto fail_mu;
    if (pthread_cond_init(&f->moved, NULL)) goto fail_work;
    if (pthread_create(&f->thread, NULL, run, f) == 0) {
        *fp = f;
        return 0;
    }
    pthread_cond_destroy(&f->moved);
fail_work:
    pthread_cond_destroy(&f->work);
fail_mu:
    pthread_mutex_destroy(&f->mu);
fail:
    if (f) free(f->buf);
    free(f);
    return oz_err(ONNXZIP_ENOMEM, -1, "out of memory or threads (checking thread)");
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

/* With f->mu held: the thread's status, its message raised here. */
static int raise_status(oz_follow *f)
{
    return f->rc ? oz_err(f->rc, f->err_offset, "%s", f->message) : 0;
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
    free(f->buf);
    free(f);
}
