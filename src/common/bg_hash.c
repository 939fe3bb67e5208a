#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "common/bg_hash.h"
#include "common/checksum.h"
#include "common/internal.h"
#include "common/sys.h"

#define BUF (1u << 20)

typedef struct job {
    oz_bg_result r;
    uint64_t off, len;
} job;

struct oz_bg_hash {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, done; /* work: for the thread; done: for oz_bg_hash_collect() */
    int fd;
    job *jobs;
    size_t n, cap, next; /* queued; allocated; the first not finished */
    size_t collected;    /* results handed out so far */
    uint64_t ready;
    int stop, err;
    uint8_t *buf;
    oz_bg_result *out;
};

static void fail(oz_bg_hash *h, int err)
{
    pthread_mutex_lock(&h->mu);
    h->err = err;
    pthread_cond_broadcast(&h->done);
    pthread_mutex_unlock(&h->mu);
}

/* Hashes [off, ready) of the file: through `map` (the job's range mapped at
 * map_off) when there is one, which spares copying every byte out of the page
 * cache, else with pread(). */
static int hash_range(oz_bg_hash *h, oz_checksum *cs, const uint8_t *map, uint64_t map_off, uint64_t off,
                      uint64_t ready)
{
    /* Mapped pages are unmapped behind, 1 MiB at a time (they stay in the
     * page cache): mapped, they would count in this process's RSS, which must
     * stay flat however large the entry. */
    for (uint64_t next; map && off < ready; off = next) {
        next = ready - off < BUF ? ready : off + BUF;
        oz_checksum_update(cs, map + (off - map_off), next - off);
        uint64_t lo = off & ~(uint64_t)4095, hi = next & ~(uint64_t)4095;
        if (hi > lo) oz_sys_advise_map((void *)(map + (lo - map_off)), (size_t)(hi - lo), OZ_ADV_DONTNEED);
    }
    while (off < ready) {
        size_t want = ready - off < BUF ? (size_t)(ready - off) : BUF;
        ssize_t k = oz_sys_pread(h->fd, h->buf, want, (int64_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? errno : EIO;
        oz_checksum_update(cs, h->buf, (uint64_t)k);
        off += (uint64_t)k;
    }
    return 0;
}

/* The job's range, mapped read-only; NULL where it cannot be. Only bytes
 * below `ready` are touched: the writer publishes it after writing them, and
 * never shrinks the file while a job runs, so no touched page lies past the
 * end of the file (no SIGBUS). */
static const uint8_t *map_job(const oz_bg_hash *h, uint64_t off, uint64_t len, uint64_t *map_off, size_t *map_len)
{
    *map_off = off & ~(uint64_t)0xffff; /* Windows maps from multiples of 64 KiB */
    if (off + len - *map_off > SIZE_MAX) return NULL; /* a 32-bit host: read instead */
    *map_len = (size_t)(off + len - *map_off);
    void *p = len ? oz_sys_map(h->fd, *map_off, *map_len) : NULL;
    if (!p) return NULL;
    oz_sys_advise_map(p, *map_len, OZ_ADV_SEQUENTIAL);
    return p;
}

/* Hashes job j, reading as `ready` allows; false when stopped or failed. */
static int hash_job(oz_bg_hash *h, size_t j)
{
    pthread_mutex_lock(&h->mu);
    uint64_t off = h->jobs[j].off, end = off + h->jobs[j].len;
    pthread_mutex_unlock(&h->mu);
    uint64_t map_off;
    size_t map_len = 0;
    const uint8_t *map = map_job(h, off, end - off, &map_off, &map_len);
    oz_checksum cs;
    oz_checksum_init(&cs);
    int err = 0;
    while (off < end && !err) {
        pthread_mutex_lock(&h->mu);
        while (h->ready <= off && !h->stop) pthread_cond_wait(&h->work, &h->mu);
        uint64_t ready = h->ready < end ? h->ready : end;
        int stop = h->stop;
        pthread_mutex_unlock(&h->mu);
        if (stop) break;
        err = hash_range(h, &cs, map, map_off, off, ready);
        off = ready;
    }
    oz_sys_unmap(map, map_len);
    if (err) fail(h, err);
    if (off < end || err) return 0;
    pthread_mutex_lock(&h->mu);
    h->jobs[j].r.crc = cs.crc;
    h->jobs[j].r.xxh3 = XXH3_64bits_digest(&cs.xxh);
    h->next = j + 1;
    pthread_cond_broadcast(&h->done);
    pthread_mutex_unlock(&h->mu);
    return 1;
}

static void *run(void *arg)
{
    oz_bg_hash *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->mu);
        while (h->next == h->n && !h->stop) pthread_cond_wait(&h->work, &h->mu);
        size_t j = h->next;
        int idle = h->next == h->n;
        pthread_mutex_unlock(&h->mu);
        if (idle || !hash_job(h, j)) return NULL; /* idle here means stopped */
    }
}

oz_bg_hash *oz_bg_hash_start(int fd)
{
    oz_bg_hash *h = calloc(1, sizeof *h);
    if (!h || !(h->buf = malloc(BUF))) goto fail;
    h->fd = fd;
    if (pthread_mutex_init(&h->mu, NULL)) goto fail;
    if (pthread_cond_init(&h->work, NULL)) goto fail_mu;
    if (pthread_cond_init(&h->done, NULL)) goto fail_work;
    if (pthread_create(&h->thread, NULL, run, h) == 0) return h;
    pthread_cond_destroy(&h->done);
fail_work:
    pthread_cond_destroy(&h->work);
fail_mu:
    pthread_mutex_destroy(&h->mu);
fail:
    if (h) free(h->buf);
    free(h);
    return NULL;
}

int oz_bg_hash_add(oz_bg_hash *h, size_t entry, uint64_t header, uint64_t off, uint64_t len)
{
    pthread_mutex_lock(&h->mu);
    int rc = 0;
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        job *v = realloc(h->jobs, cap * sizeof *v);
        if (v) {
            h->jobs = v;
            h->cap = cap;
        } else {
            rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory (hash queue)");
        }
    }
    if (!rc) {
        h->jobs[h->n++] = (job){ { entry, header, 0, 0 }, off, len };
        pthread_cond_broadcast(&h->work);
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

void oz_bg_hash_ready(oz_bg_hash *h, uint64_t off)
{
    pthread_mutex_lock(&h->mu);
    if (off > h->ready) h->ready = off;
    pthread_cond_broadcast(&h->work);
    pthread_mutex_unlock(&h->mu);
}

int oz_bg_hash_collect(oz_bg_hash *h, int wait, const oz_bg_result **results, size_t *n, uint64_t *pending)
{
    pthread_mutex_lock(&h->mu);
    while (wait && h->next < h->n && !h->err) pthread_cond_wait(&h->done, &h->mu);
    int err = h->err;
    size_t from = h->collected, to = h->next, count = to - from;
    oz_bg_result *out = err ? NULL : realloc(h->out, (count ? count : 1) * sizeof *out);
    if (out) {
        h->out = out;
        for (size_t i = 0; i < count; i++) out[i] = h->jobs[from + i].r;
        h->collected = to;
        *pending = to < h->n ? h->jobs[to].r.header : UINT64_MAX;
    }
    pthread_mutex_unlock(&h->mu);
    if (!out) {
        errno = err ? err : ENOMEM;
        return -1;
    }
    *results = out;
    *n = count;
    return 0;
}

const oz_bg_result *oz_bg_hash_results(oz_bg_hash *h, size_t *n)
{
    pthread_mutex_lock(&h->mu);
    size_t count = h->next;
    oz_bg_result *out = realloc(h->out, (count ? count : 1) * sizeof *out);
    if (out) {
        h->out = out;
        for (size_t i = 0; i < count; i++) out[i] = h->jobs[i].r;
    }
    pthread_mutex_unlock(&h->mu);
    *n = out ? count : 0;
    return out;
}

void oz_bg_hash_stop(oz_bg_hash *h)
{
    if (!h) return;
    pthread_mutex_lock(&h->mu);
    h->stop = 1;
    pthread_cond_broadcast(&h->work);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
    pthread_cond_destroy(&h->done);
    pthread_cond_destroy(&h->work);
    pthread_mutex_destroy(&h->mu);
    free(h->jobs);
    free(h->out);
    free(h->buf);
    free(h);
}
