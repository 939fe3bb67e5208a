/* oz_plan_sha256() (plan_sha256.h): SHA-256 of planned files through
 * libcrypto's EVP. A mapped handle's files are hashed on as many threads as
 * the machine has cores, the largest files first (one file per thread:
 * SHA-256 is sequential within a file), a local file's ranges read in
 * pieces, a caller's buffer in place; a URL's or a host's are
 * read through the source, small entries in batches of parallel requests,
 * big ones streamed (each entry read whole and checked against its CRC-32
 * and XXH3), and hashed in order. */
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "convert/plan_sha256.h"
#include "common/sys.h"
#include "read/source_read.h"

static const uint8_t zero_block[1 << 16];

static int nomem(void)
{
    return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
}

static int crypto_fail(const char *path)
{
    return oz_err(ONNXZIP_EIO, -1, "%s: libcrypto's SHA-256 failed", path);
}

/* The entries of a whole archive file as it streams by (a single-model
 * archive's "."), each one's SHA-256 noted as its last byte passes. */
typedef struct walk {
    onnxzip_archive *a;
    uint32_t *order; /* entries by offset */
    size_t k;        /* the entry under way, in that order */
    EVP_MD_CTX *c;
    oz_entry_digests *seen;
    int rc;
} walk;

typedef struct slice {
    EVP_MD_CTX *c;
    uint64_t from, to; /* the entry's bytes hashed */
    EVP_MD_CTX *whole; /* the entry's own SHA-256, for its pin, or NULL */
    walk *w;           /* or each entry's of the whole file, or NULL */
    int failed;
} slice;

static int note(oz_entry_digests *seen, size_t entry, const uint8_t sha[32]);
static int note_ctx(onnxzip_archive *a, oz_entry_digests *seen, size_t i, EVP_MD_CTX *whole);

/* File bytes [at, at + n) to the entries they hold. */
static void walk_feed(walk *w, const uint8_t *p, size_t n, uint64_t at)
{
    const oz_zip *z = &w->a->zip;
    while (!w->rc && w->k < z->n) {
        const onnxzip_entry *e = &z->entries[w->order[w->k]].pub;
        uint64_t lo = at > e->data_offset ? at : e->data_offset, end = e->data_offset + e->size;
        uint64_t hi = at + n < end ? at + n : end;
        if (at + n < end || (at + n == e->data_offset && e->size)) { /* the entry goes on in the next piece */
            if (lo < hi && !EVP_DigestUpdate(w->c, p + (lo - at), (size_t)(hi - lo))) w->rc = crypto_fail(w->a->path);
            return;
        }
        if (lo < hi && !EVP_DigestUpdate(w->c, p + (lo - at), (size_t)(hi - lo))) w->rc = crypto_fail(w->a->path);
        if (!w->rc) w->rc = note_ctx(w->a, w->seen, w->order[w->k++], w->c);
        if (!w->rc && !EVP_DigestInit_ex(w->c, EVP_sha256(), NULL)) w->rc = crypto_fail(w->a->path);
    }
}

/* The part of a streamed entry that the segment covers. */
static int hash_slice(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    slice *s = ctx;
    uint64_t lo = at > s->from ? at : s->from, hi = at + n < s->to ? at + n : s->to;
    if (lo < hi && !EVP_DigestUpdate(s->c, p + (lo - at), (size_t)(hi - lo))) s->failed = 1;
    if (s->whole && !EVP_DigestUpdate(s->whole, p, n)) s->failed = 1;
    if (s->w) walk_feed(s->w, p, n, at);
    return 0;
}

/* Whether segment g is entry g->entry whole: its SHA-256 is then the
 * entry's, worth a pin (a part of an entry checks no other byte of it). */
static int whole_entry(const onnxzip_archive *a, const onnxzip_segment *g)
{
    return g->kind == ONNXZIP_SEGMENT_ARCHIVE && g->entry != SIZE_MAX && g->entry_offset == 0 &&
           g->length == a->zip.entries[g->entry].pub.size;
}

static int note(oz_entry_digests *seen, size_t entry, const uint8_t sha[32])
{
    if (seen->n == seen->cap) {
        size_t cap = seen->cap ? seen->cap * 2 : 64;
        oz_entry_digest *v = realloc(seen->v, cap * sizeof *v);
        if (!v) return nomem();
        seen->v = v;
        seen->cap = cap;
    }
    seen->v[seen->n].entry = entry;
    memcpy(seen->v[seen->n++].sha, sha, 32);
    return 0;
}

/* The SHA-256 that `whole` took of entry i, noted in `seen`. */
static int note_ctx(onnxzip_archive *a, oz_entry_digests *seen, size_t i, EVP_MD_CTX *whole)
{
    uint8_t d[32];
    unsigned len = 0;
    if (!EVP_DigestFinal_ex(whole, d, &len) || len != 32) return crypto_fail(a->path);
    return note(seen, i, d);
}

static int hash_zeros(EVP_MD_CTX *c, uint64_t n)
{
    for (; n; n -= n < sizeof zero_block ? n : sizeof zero_block)
        if (!EVP_DigestUpdate(c, zero_block, n < sizeof zero_block ? (size_t)n : sizeof zero_block)) return 0;
    return 1;
}

#define PREAD_PIECE ((size_t)4 << 20)

/* A local file's range read in pieces: faster than hashing the mapping in
 * place, whose page faults cost more than copying from the page cache
 * (measured on tools/bench/bench_digest.py: 512 MiB in 1.32 s mapped,
 * 0.9 s as openssl dgst reads). */
static int hash_pread(onnxzip_archive *a, EVP_MD_CTX *c, uint64_t off, uint64_t len)
{
    uint8_t *buf = malloc(PREAD_PIECE);
    int rc = buf ? 0 : nomem();
    while (len && !rc) {
        size_t n = len < PREAD_PIECE ? (size_t)len : PREAD_PIECE;
        ssize_t k = oz_sys_pread(a->fd, buf, n, (int64_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) rc = k ? oz_err_sys(ONNXZIP_EIO, -1, a->path, "%s: cannot read: %s", a->path, strerror(errno))
                           : oz_err(ONNXZIP_ETRUNC, -1, "%s: shorter than its directory says", a->path);
        else if (!EVP_DigestUpdate(c, buf, (size_t)k)) rc = crypto_fail(a->path);
        off += (uint64_t)(k > 0 ? k : 0);
        len -= (uint64_t)(k > 0 ? k : 0);
    }
    free(buf);
    return rc;
}

/* An archive range: a local file's read in pieces, a caller's buffer in
 * place, else through the source. */
static int hash_range(onnxzip_archive *a, EVP_MD_CTX *c, const onnxzip_segment *g, oz_entry_digests *seen)
{
    if (g->offset > a->src.size || g->length > a->src.size - g->offset)
        return oz_err(ONNXZIP_ETRUNC, -1, "%s: bytes %llu..%llu lie past the file's end", a->path,
                      (unsigned long long)g->offset, (unsigned long long)(g->offset + g->length));
    if (a->fd >= 0) return hash_pread(a, c, g->offset, g->length);
    if (a->src.map) return EVP_DigestUpdate(c, a->src.map + g->offset, (size_t)g->length) ? 0 : crypto_fail(a->path);
    slice s = { c, g->entry_offset, g->entry_offset + g->length, NULL, NULL, 0 };
    walk w = { .a = a, .seen = seen };
    if (seen && whole_entry(a, g) && (!(s.whole = EVP_MD_CTX_new()) || !EVP_DigestInit_ex(s.whole, EVP_sha256(), NULL)))
        s.failed = 1;
    if (seen && g->entry == SIZE_MAX && g->offset == 0 && g->length == a->src.size) { /* the whole file */
        s.w = &w;
        if (!(w.order = oz_zip_by_offset(a->zip.entries, a->zip.n)) || !(w.c = EVP_MD_CTX_new()) ||
            !EVP_DigestInit_ex(w.c, EVP_sha256(), NULL))
            s.failed = 1;
    }
    int rc = s.failed ? 0
           : g->entry == SIZE_MAX ? oz_source_stream(&a->src, 0, hash_slice, &s)
                                  : oz_entry_stream(a, g->entry, hash_slice, &s);
    if (!rc) rc = s.failed ? crypto_fail(a->path) : w.rc ? w.rc : s.whole ? note_ctx(a, seen, g->entry, s.whole) : 0;
    EVP_MD_CTX_free(s.whole);
    EVP_MD_CTX_free(w.c);
    free(w.order);
    return rc;
}

static int hash_segment(onnxzip_archive *a, EVP_MD_CTX *c, const onnxzip_segment *g, oz_entry_digests *seen)
{
    if (g->kind == ONNXZIP_SEGMENT_BYTES) return EVP_DigestUpdate(c, g->bytes, (size_t)g->length) ? 0 : crypto_fail(a->path);
    if (g->kind == ONNXZIP_SEGMENT_ZEROS) return hash_zeros(c, g->length) ? 0 : crypto_fail(a->path);
    return hash_range(a, c, g, seen);
}

/* Entries read together by a handle without a mapping: up to a window's
 * worth (oz_spans_window()) of entries below a quarter of it, so that many
 * small tensors cost one round of parallel requests, not one each. */
typedef struct batch {
    size_t *idx;
    uint8_t **dst;
    size_t n;
    uint64_t bytes;
} batch;

static int small_entry(const onnxzip_archive *a, const onnxzip_segment *g, uint64_t window)
{
    return g->kind == ONNXZIP_SEGMENT_ARCHIVE && g->entry != SIZE_MAX && a->zip.entries[g->entry].pub.size <= window / 4;
}

/* Segments [i, *j) of f: their small entries read in one batch, then every
 * segment hashed in order. */
static int hash_batch(onnxzip_archive *a, EVP_MD_CTX *c, const onnxzip_planned_file *f, size_t i, size_t *j,
                      uint64_t window, oz_entry_digests *seen)
{
    batch b = { malloc(f->n_segments * sizeof *b.idx), calloc(f->n_segments, sizeof *b.dst), 0, 0 };
    int rc = b.idx && b.dst ? 0 : nomem();
    size_t k = i;
    for (; !rc && k < f->n_segments; k++) {
        const onnxzip_segment *g = &f->segments[k];
        if (g->kind == ONNXZIP_SEGMENT_ARCHIVE && !small_entry(a, g, window)) break;
        if (g->kind != ONNXZIP_SEGMENT_ARCHIVE) continue;
        uint64_t size = a->zip.entries[g->entry].pub.size;
        if (b.n && b.bytes + size > window) break;
        if (!(b.dst[b.n] = malloc(size ? (size_t)size : 1))) rc = nomem();
        b.idx[b.n++] = g->entry;
        b.bytes += size;
    }
    *j = k;
    if (!rc && b.n) rc = oz_entries_read(a, b.idx, b.n, b.dst);
    for (size_t m = i, e = 0; m < k && !rc; m++) {
        const onnxzip_segment *g = &f->segments[m];
        uint8_t d[32];
        if (g->kind != ONNXZIP_SEGMENT_ARCHIVE) rc = hash_segment(a, c, g, seen);
        else if (!EVP_DigestUpdate(c, b.dst[e++] + g->entry_offset, (size_t)g->length)) rc = crypto_fail(a->path);
        else if (seen && whole_entry(a, g))
            rc = EVP_Digest(b.dst[e - 1], (size_t)g->length, d, NULL, EVP_sha256(), NULL) ? note(seen, g->entry, d)
                                                                                         : crypto_fail(a->path);
    }
    for (size_t m = 0; b.dst && m < b.n; m++) free(b.dst[m]);
    free(b.idx);
    free(b.dst);
    return rc;
}

static int hash_file(onnxzip_archive *a, const onnxzip_planned_file *f, uint8_t out[32], oz_entry_digests *seen)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c) return nomem();
    int rc = EVP_DigestInit_ex(c, EVP_sha256(), NULL) ? 0 : crypto_fail(a->path);
    uint64_t window = a->src.map ? 0 : oz_spans_window(a);
    for (size_t i = 0, j; i < f->n_segments && !rc; i = j) {
        j = i + 1;
        if (a->src.map || (f->segments[i].kind == ONNXZIP_SEGMENT_ARCHIVE && !small_entry(a, &f->segments[i], window)))
            rc = hash_segment(a, c, &f->segments[i], seen); /* in place, or a big entry streamed */
        else
            rc = hash_batch(a, c, f, i, &j, window, seen);
    }
    unsigned len = 0;
    if (!rc && (!EVP_DigestFinal_ex(c, out, &len) || len != 32)) rc = crypto_fail(a->path);
    EVP_MD_CTX_free(c);
    return rc;
}

typedef struct pool {
    onnxzip_archive *a;
    const onnxzip_planned_file *const *files;
    uint8_t (*out)[32];
    size_t *order, n;
    atomic_size_t next;
    atomic_int rc;      /* the first failure stops the others */
    pthread_mutex_t mu; /* over the first failure's error, recorded on its thread */
    char message[1024], path[1024];
    int64_t offset;
    int sys_errno;
} pool;

/* Keeps the first failure's error (the thread's own) for the caller's. */
static void fail(pool *p, int rc)
{
    const onnxzip_error_info *e = onnxzip_last_error();
    int zero = 0;
    pthread_mutex_lock(&p->mu);
    if (atomic_compare_exchange_strong(&p->rc, &zero, rc)) {
        snprintf(p->message, sizeof p->message, "%s", e->message);
        snprintf(p->path, sizeof p->path, "%s", e->path ? e->path : "");
        p->offset = e->offset;
        p->sys_errno = e->sys_errno;
    }
    pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
    pool *p = arg;
    for (size_t k; !atomic_load(&p->rc) && (k = atomic_fetch_add(&p->next, 1)) < p->n;) {
        size_t i = p->order[k];
        int rc = hash_file(p->a, p->files[i], p->out[i], NULL);
        if (rc) fail(p, rc);
    }
    return NULL;
}

typedef struct by_size {
    uint64_t size;
    size_t i;
} by_size;

static int larger_first(const void *x, const void *y)
{
    uint64_t a = ((const by_size *)x)->size, b = ((const by_size *)y)->size;
    return (a < b) - (a > b);
}

/* Threads pull files, largest first, so that a big file starts early and
 * the small ones fill the other cores around it. */
static int hash_parallel(pool *p)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = cores > 1 ? (size_t)cores : 1;
    if (nt > p->n) nt = p->n;
    pthread_t *t = calloc(nt ? nt : 1, sizeof *t);
    if (!t) return nomem();
    size_t started = 0;
    for (; started + 1 < nt; started++)
        if (pthread_create(&t[started], NULL, worker, p)) break;
    worker(p); /* this thread too */
    for (size_t i = 0; i < started; i++) pthread_join(t[i], NULL);
    free(t);
    int rc = atomic_load(&p->rc);
    return rc ? oz_err_errno(p->sys_errno, rc, p->offset, p->path[0] ? p->path : NULL, "%s", p->message) : 0;
}

int oz_plan_sha256_seen(onnxzip_archive *a, const onnxzip_planned_file *const *files, size_t n, uint8_t (*out)[32],
                        oz_entry_digests *seen)
{
    if (!a || (n && (!files || !out))) return oz_err(ONNXZIP_EINVAL, -1, "oz_plan_sha256_files: NULL argument");
    if (!a->src.map) { /* through the source, one file after the other */
        int rc = 0;
        for (size_t i = 0; i < n && !rc; i++) rc = hash_file(a, files[i], out[i], seen);
        return rc;
    }
    pool p = { .a = a, .files = files, .out = out, .n = n, .order = malloc((n ? n : 1) * sizeof(size_t)) };
    by_size *sizes = malloc((n ? n : 1) * sizeof *sizes);
    if (!p.order || !sizes) {
        free(p.order);
        free(sizes);
        return nomem();
    }
    for (size_t i = 0; i < n; i++) sizes[i] = (by_size){ files[i]->size, i };
    qsort(sizes, n, sizeof *sizes, larger_first);
    for (size_t i = 0; i < n; i++) p.order[i] = sizes[i].i;
    free(sizes);
    atomic_init(&p.next, 0);
    atomic_init(&p.rc, 0);
    pthread_mutex_init(&p.mu, NULL);
    int rc = hash_parallel(&p);
    pthread_mutex_destroy(&p.mu);
    free(p.order);
    return rc;
}

int oz_plan_sha256_files(onnxzip_archive *a, const onnxzip_planned_file *const *files, size_t n, uint8_t (*out)[32])
{
    return oz_plan_sha256_seen(a, files, n, out, NULL);
}

void oz_entry_digests_free(oz_entry_digests *seen)
{
    free(seen->v);
    *seen = (oz_entry_digests){ 0 };
}

/* The planned file of `path` in plans[0..np), or NULL. */
static const onnxzip_planned_file *find(onnxzip_file_plan *const *plans, size_t np, const char *path)
{
    for (size_t k = 0; k < np; k++)
        for (size_t i = 0; i < onnxzip_file_plan_count(plans[k]); i++)
            if (!strcmp(onnxzip_file_plan_at(plans[k], i)->path, path)) return onnxzip_file_plan_at(plans[k], i);
    return NULL;
}

/* Plans path's owner (a model: all its files) into plans[*np]. */
static int plan_owner(onnxzip_archive *a, const char *path, onnxzip_file_plan **plans, size_t *np)
{
    onnxzip_file_plan *p = NULL;
    int rc = onnxzip_file_plan_create(a, path, &p);
    const onnxzip_planned_file *f = rc ? NULL : onnxzip_file_plan_at(p, 0);
    if (f && f->model && strcmp(f->model, path)) { /* a data file: its model's plan has all its files */
        onnxzip_file_plan *m = NULL;
        rc = onnxzip_file_plan_create(a, f->model, &m);
        onnxzip_file_plan_free(&p);
        p = m;
    }
    if (!rc) plans[(*np)++] = p;
    return rc;
}

int oz_plan_sha256(onnxzip_archive *a, const char *const *paths, size_t n, uint8_t (*out)[32])
{
    if (!a || (n && (!paths || !out))) return oz_err(ONNXZIP_EINVAL, -1, "oz_plan_sha256: NULL argument");
    onnxzip_file_plan **plans = calloc(n ? n : 1, sizeof *plans);
    const onnxzip_planned_file **files = calloc(n ? n : 1, sizeof *files);
    size_t np = 0;
    int rc = plans && files ? 0 : nomem();
    for (size_t i = 0; i < n && !rc; i++) {
        if (!paths[i]) rc = oz_err(ONNXZIP_EINVAL, -1, "oz_plan_sha256: NULL path");
        else if (!(files[i] = find(plans, np, paths[i])) && !(rc = plan_owner(a, paths[i], plans, &np)))
            files[i] = find(plans, np, paths[i]);
    }
    if (!rc) rc = oz_plan_sha256_files(a, files, n, out);
    for (size_t k = 0; k < np; k++) onnxzip_file_plan_free(&plans[k]);
    free(plans);
    free((void *)files);
    return rc;
}
