/* The writer's background hasher: a queue of jobs, each a span read back by
 * a follower (follow.h), hashed on its thread. */
#include <pthread.h>
#include <stdlib.h>

#include "common/bg_hash.h"
#include "common/checksum.h"
#include "common/follow.h"
#include "common/internal.h"

struct oz_bg_hash {
    oz_follow *f;
    pthread_mutex_t mu; /* the queue: appended to by the writer, finished on the follower's thread */
    oz_bg_result *jobs;  /* the queue, each with its sums once finished */
    size_t n, cap, next; /* queued; allocated; the first not finished */
    size_t collected;    /* results handed out so far */
    uint64_t end;        /* the last job's end: the writer's own */
    oz_bg_result *out;
    oz_checksum *cs; /* the job being hashed, in cs_room: the follower's thread only */
    unsigned char cs_room[sizeof(oz_checksum) + 63]; /* XXH3's state must lie at a multiple of 64 */
};

static int hash_bytes(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    (void)at;
    oz_checksum_update(((oz_bg_hash *)ctx)->cs, p, n);
    return 0;
}

/* The follower finished a span: the first unfinished job's. */
static int job_done(void *ctx)
{
    oz_bg_hash *h = ctx;
    pthread_mutex_lock(&h->mu);
    h->jobs[h->next].crc = h->cs->crc;
    h->jobs[h->next].xxh3 = XXH3_64bits_digest(&h->cs->xxh);
    h->next++;
    pthread_mutex_unlock(&h->mu);
    oz_checksum_init(h->cs);
    return 0;
}

oz_bg_hash *oz_bg_hash_start(int fd)
{
    oz_bg_hash *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->cs = (oz_checksum *)(void *)(h->cs_room + (-(uintptr_t)h->cs_room & 63));
    oz_checksum_init(h->cs);
    if (!pthread_mutex_init(&h->mu, NULL)) {
        if ((h->f = oz_follow_start_spans(fd, hash_bytes, job_done, h))) return h;
        pthread_mutex_destroy(&h->mu);
    }
    free(h);
    return NULL;
}

int oz_bg_hash_add(oz_bg_hash *h, size_t entry, uint64_t header, uint64_t off, uint64_t len)
{
    /* held while the follower gets the span: its job is in the queue before
     * job_done() can look for it */
    pthread_mutex_lock(&h->mu);
    int rc = 0;
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        oz_bg_result *v = realloc(h->jobs, cap * sizeof *v);
        if (v) {
            h->jobs = v;
            h->cap = cap;
        } else {
            rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory (hash queue)");
        }
    }
    if (!rc && !(rc = oz_follow_add(h->f, off, len))) {
        h->jobs[h->n++] = (oz_bg_result){ entry, header, 0, 0 };
        h->end = off + len;
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

void oz_bg_hash_ready(oz_bg_hash *h, uint64_t off)
{
    oz_follow_ready(h->f, off);
}

/* With h->mu held: results [from, to) of the queue into h->out; NULL when
 * out of memory. */
static const oz_bg_result *copy_out(oz_bg_hash *h, size_t from, size_t to)
{
    oz_bg_result *out = realloc(h->out, (to > from ? to - from : 1) * sizeof *out);
    if (out) {
        h->out = out;
        for (size_t i = from; i < to; i++) out[i - from] = h->jobs[i];
    }
    return out;
}

int oz_bg_hash_collect(oz_bg_hash *h, int wait, const oz_bg_result **results, size_t *n, uint64_t *pending)
{
    int rc = wait ? oz_follow_wait(h->f, h->end) : oz_follow_status(h->f);
    if (rc) return rc;
    pthread_mutex_lock(&h->mu);
    size_t from = h->collected, to = h->next;
    if ((*results = copy_out(h, from, to))) {
        h->collected = to;
        *n = to - from;
        *pending = to < h->n ? h->jobs[to].header : UINT64_MAX;
    }
    pthread_mutex_unlock(&h->mu);
    return *results ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
}

const oz_bg_result *oz_bg_hash_results(oz_bg_hash *h, size_t *n)
{
    pthread_mutex_lock(&h->mu);
    size_t count = h->next;
    const oz_bg_result *out = copy_out(h, 0, count);
    pthread_mutex_unlock(&h->mu);
    *n = out ? count : 0;
    return out;
}

void oz_bg_hash_stop(oz_bg_hash *h)
{
    if (!h) return;
    oz_follow_stop(h->f);
    pthread_mutex_destroy(&h->mu);
    free(h->jobs);
    free(h->out);
    free(h);
}
