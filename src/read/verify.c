/* onnxzip_verify(): CRC-32 and XXH3-64 of every entry, both in one pass over
 * cache-sized chunks; large archives on two threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <xxhash.h>

#include "read/archive.h"
#include "read/stream_check.h"
#include "common/checksum.h"
#include "onnx/model_fields.h"
#include "onnx/onnx_walk.h"
#include "common/sha1.h"
#include "read/view_record.h"

/* ONNX's optional external_data "checksum": SHA-1 hex of the payload. */
typedef struct sums {
    const onnxzip_archive *a;
} sums;

static int check_sum(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    sums *s = ctx;
    (void)rw;
    if (!t->has_checksum) return 0;
    const onnxzip_tensor *v = oz_tensors_of(&s->a->tensors, s->a->model, t);
    if (!v) return oz_err(ONNXZIP_EPROTO, -1, "%s: a tensor of the model is not in its index (internal error)",
                          s->a->path);
    if (v->storage != ONNXZIP_STORAGE_FILE) return 0;
    char hex[41], name[OZ_PRINTABLE_CAP], want[OZ_PRINTABLE_CAP];
    oz_sha1_hex(v->data, v->nbytes, hex);
    if (t->checksum.len == 40 && !strncasecmp((const char *)t->checksum.p, hex, 40)) return 0;
    return oz_err(ONNXZIP_EDIGEST, (int64_t)v->file_offset, "%s: tensor '%s': SHA-1 of its external data in '%s' is "
                  "%s, its checksum key says '%s'", s->a->path, oz_printable(v->name, strlen(v->name), name,
                  sizeof name), v->entry, hex, oz_printable(t->checksum.p, t->checksum.len, want, sizeof want));
}

/* Classic layouts carry no CRC: reading every payload byte still proves the
 * files are complete and readable (an I/O error would fault here, not in a
 * runtime later), and external data is checked against any checksum keys. */
static int read_all(const onnxzip_archive *a)
{
    sums s = { a };
    oz_walk w = { .visit = check_sum, .ctx = &s, .path = a->path, .base = a->model };
    int rc = a->layout == ONNXZIP_LAYOUT_EXTERNAL ? oz_walk_model(&w, a->model, a->model_len) : 0;
    if (rc) return rc;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < a->tensors.n; i++) {
        const onnxzip_tensor *t = &a->tensors.v[i];
        for (uint64_t k = 0; t->data && k < t->nbytes; k += 4096) sink ^= ((const uint8_t *)t->data)[k];
    }
    (void)sink;
    return 0;
}

/* Below this many bytes a second thread costs more than it saves. */
#define PARALLEL_MIN (8u << 20)

enum { JOB_BOTH, JOB_CRC, JOB_XXH };

typedef struct job {
    uint32_t entry, kind;
    uint64_t size;
} job;

typedef struct jobs {
    const onnxzip_archive *a;
    job *v;
    size_t n;
    atomic_size_t next; /* the next job to take, largest first */
    uint64_t *crc, *xxh; /* one result per entry */
} jobs;

/* The model region may have moved since open (spec 15.5): use the copy. */
static const uint8_t *entry_data(const onnxzip_archive *a, size_t i)
{
    return i == a->zip.model_index && a->model_copy ? a->model : a->base + a->zip.entries[i].pub.data_offset;
}

static void run_job(jobs *js, const job *j)
{
    const uint8_t *d = entry_data(js->a, j->entry);
    if (j->kind == JOB_CRC) {
        js->crc[j->entry] = oz_crc32(0, d, (size_t)j->size);
    } else if (j->kind == JOB_XXH) {
        js->xxh[j->entry] = XXH3_64bits(d, (size_t)j->size);
    } else { /* both hashes per cache-sized chunk: each byte comes from memory once */
        oz_checksum cs;
        oz_checksum_init(&cs);
        oz_checksum_update(&cs, d, j->size);
        js->crc[j->entry] = cs.crc;
        js->xxh[j->entry] = XXH3_64bits_digest(&cs.xxh);
    }
}

static void *worker(void *arg)
{
    jobs *js = arg;
    for (size_t k; (k = atomic_fetch_add(&js->next, 1)) < js->n;) run_job(js, &js->v[k]);
    return NULL;
}

static int by_size_desc(const void *x, const void *y)
{
    uint64_t a = ((const job *)x)->size, b = ((const job *)y)->size;
    return (a < b) - (a > b);
}

/* Fills crc[] and xxh[] on this thread and, for large archives, one more.
 * Jobs are entries, largest first; an entry larger than an eighth of the
 * total becomes a CRC job and a digest job, so that the two threads can
 * share it instead of one waiting for the other at the end. */
static int compute(const onnxzip_archive *a, uint64_t *crc, uint64_t *xxh)
{
    uint64_t total = 0;
    for (size_t i = 0; i < a->zip.n; i++) total += a->zip.entries[i].pub.size;
    jobs js = { .a = a, .crc = crc, .xxh = xxh };
    js.v = malloc((2 * a->zip.n + 1) * sizeof *js.v);
    if (!js.v) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (verify)", a->path);
    for (size_t i = 0; i < a->zip.n; i++) {
        uint64_t size = a->zip.entries[i].pub.size;
        if (total >= PARALLEL_MIN && size > total / 8) {
            js.v[js.n++] = (job){ (uint32_t)i, JOB_CRC, size };
            js.v[js.n++] = (job){ (uint32_t)i, JOB_XXH, size };
        } else {
            js.v[js.n++] = (job){ (uint32_t)i, JOB_BOTH, size };
        }
    }
    qsort(js.v, js.n, sizeof *js.v, by_size_desc);
    atomic_init(&js.next, 0);
    pthread_t t;
    int two = total >= PARALLEL_MIN && pthread_create(&t, NULL, worker, &js) == 0;
    worker(&js);
    if (two) pthread_join(t, NULL);
    free(js.v);
    return 0;
}

static int verify_entries(const onnxzip_archive *a)
{
    uint64_t *crc = calloc(2 * (a->zip.n ? a->zip.n : 1), sizeof *crc), *xxh = crc + a->zip.n;
    if (!crc) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (verify)", a->path);
    int rc = compute(a, crc, xxh);
    for (size_t i = 0; i < a->zip.n && !rc; i++)
        rc = oz_entry_check_digests(&a->zip.entries[i], a->path, (uint32_t)crc[i], xxh[i]);
    free(crc);
    return rc;
}

int oz_verify_data(const onnxzip_archive *a)
{
    if (oz_archive_unmapped(a)) return oz_stream_verify((onnxzip_archive *)a);
    return a->layout == ONNXZIP_LAYOUT_ARCHIVE ? verify_entries(a) : read_all(a);
}

/* A package's other models (spec 19.5: verify checks every model): their
 * references, sizes and fields, each against its own directory. */
static int verify_other_models(onnxzip_archive *a)
{
    oz_zip *z = &a->zip;
    const char *dir = z->dir;
    size_t dir_len = z->dir_len;
    int rc = 0;
    for (size_t i = 0; i < a->pkg.n && !rc; i++) {
        const onnxzip_member *m = &a->pkg.members[i];
        if (m->kind != ONNXZIP_MEMBER_MODEL || m->entry == z->model_index) continue;
        uint8_t *copy = NULL;
        const uint8_t *bytes = a->base ? a->base + z->entries[m->entry].pub.data_offset : NULL;
        if (!bytes) {
            if (!(copy = malloc(m->size ? (size_t)m->size : 1))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
            rc = onnxzip_member_read(a, m, 0, m->size, copy);
            bytes = copy;
        }
        z->dir = m->path;
        z->dir_len = oz_path_dir_len(m->path, strlen(m->path));
        size_t n = strlen(a->path) + strlen(m->path) + 2;
        char *shown = malloc(n);
        if (shown) snprintf(shown, n, "%s:%s", a->path, m->path); /* archive:model, as messages name it */
        if (!rc) rc = shown ? oz_tensors_check(z, bytes, (size_t)m->size, shown) : ONNXZIP_ENOMEM;
        free(shown);
        free(copy);
    }
    z->dir = dir;
    z->dir_len = dir_len;
    return rc;
}

int onnxzip_verify(onnxzip_archive *a)
{
    if (!a) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_verify: NULL argument");
    /* The data first: a damaged model entry is reported as damage (ECRC). */
    int rc = oz_verify_data(a);
    if (!rc && (!a->pkg.n || onnxzip_model_path(a))) rc = oz_verify_model_fields(a); /* a model is held */
    if (!rc && a->pkg.n) rc = verify_other_models(a);
    return rc ? rc : oz_view_check(a); /* a view: is its archive still the one it describes? */
}
