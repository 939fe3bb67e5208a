/* The aligned archive writer (spec §"Writer requirements"): entries are
 * STORED, their data aligned by a 0xD935 local extra field, the model last,
 * zip64 exactly when needed; all into a temporary file renamed at finish. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/atomic_file.h"
#include "common/buf.h"
#include "common/checksum.h"
#include "common/bg_hash.h"
#include "common/copy_range.h"
#include "common/sys.h"
#include "read/tensors.h"
#include "write/zip_writer.h"
#include "common/zip_format.h"
#include "write/zip_records.h"
#include "write/package_writer.h"
#include "common/package_path.h"

#define IO_CHUNK (1u << 20)
#define KERNEL_COPY_MIN (4u << 20) /* smaller file ranges: through w->chunk, hashed inline */
#define MAX_EXTRA 0xFFFFu

struct onnxzip_writer {
    char *path, *tmp;
    int fd;
    oz_made_dirs made;   /* the parents of path created at create: removed by abort */
    uint64_t pos;
    uint32_t align;
    int failed;
    uint64_t fillers[11]; /* filler numbers of 1 to 10 digits used so far, by digit count */
    oz_zip zip;          /* entries so far; names map for references */
    size_t cap;
    uint8_t *chunk;      /* IO_CHUNK bytes */
    uint8_t *header;     /* room for the largest local header */
    oz_buf model;
    int has_model;
    int sync;            /* fsync before the rename (not ONNXZIP_WRITE_NO_SYNC) */
    oz_bg_hash *hash;    /* hashes large file ranges as they are copied; NULL until one */
    int copy_err;        /* a failure inside a copy's progress callback */
    int no_hash_thread;  /* none could be started: hash inline */
    oz_pkg_writer *pkg;  /* ONNXZIP_WRITE_PACKAGE: models, files, manifest; NULL otherwise */
};

static int io_err(onnxzip_writer *w, const char *what)
{
    return oz_err_sys(ONNXZIP_EIO, (int64_t)w->pos, w->path, "%s: %s: %s", w->path, what, strerror(errno));
}

static int pwrite_all(onnxzip_writer *w, const void *p, size_t n, uint64_t off)
{
    return oz_pwrite_full(w->fd, p, n, off) ? io_err(w, "cannot write the temporary file") : 0;
}

static int is_zero(const uint8_t *p, size_t n)
{
    return n && p[0] == 0 && !memcmp(p, p + 1, n - 1);
}

/* Writes data at w->pos, leaving all-zero chunks as holes: the file is new,
 * so unwritten ranges read as zeros, and zero weights cost no disk. */
static int write_data(onnxzip_writer *w, const uint8_t *p, size_t n)
{
    int rc = is_zero(p, n) && n >= 4096 ? 0 : pwrite_all(w, p, n, w->pos);
    w->pos += n;
    return rc;
}

void onnxzip_write_options_init(onnxzip_write_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->alignment = 64;
}

int oz_check_alignment(uint32_t a)
{
    if (a < 64 || a > 65536 || (a & (a - 1)))
        return oz_err(ONNXZIP_EINVAL, -1, "alignment %u is not a power of two between 64 and 65536", a);
    return 0;
}

int onnxzip_writer_create(const char *path, const onnxzip_write_options *opts, onnxzip_writer **out)
{
    if (out) *out = NULL;
    if (!path || !*path || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_create: bad argument");
    onnxzip_write_options def;
    onnxzip_write_options_init(&def);
    if (!opts) opts = &def;
    int rc = oz_check_alignment(opts->alignment);
    if (rc) return rc;
    if (opts->flags & ~(uint32_t)(ONNXZIP_WRITE_NO_SYNC | ONNXZIP_WRITE_PACKAGE))
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_create: unknown flags 0x%x", opts->flags);
    onnxzip_writer *w = calloc(1, sizeof *w);
    if (!w) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    w->fd = -1;
    w->align = opts->alignment;
    w->sync = !(opts->flags & ONNXZIP_WRITE_NO_SYNC);
    oz_strmap_init(&w->zip.names, 1); /* case-folded, as the reader's: names are unique ignoring case */
    w->path = strdup(path);
    w->chunk = malloc(IO_CHUNK);
    w->header = malloc(ZIP_LOCAL_SIZE + OZ_MAX_PATH + MAX_EXTRA);
    if ((opts->flags & ONNXZIP_WRITE_PACKAGE) && !(w->pkg = oz_pkg_writer_new())) rc = ONNXZIP_ENOMEM;
    if (!w->path || !w->chunk || !w->header || rc) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (!rc) rc = oz_tmp_create(w->path, &w->tmp, &w->fd, &w->made);
    if (rc) {
        onnxzip_writer_abort(&w);
        return rc;
    }
    *out = w;
    return 0;
}

int oz_writer_name_taken(const onnxzip_writer *w, const char *name)
{
    uint32_t i;
    return oz_strmap_get(&w->zip.names, name, strlen(name), &i) == 0;
}

static int record_entry(onnxzip_writer *w, const char *name, oz_name_class cls, uint64_t lho, uint64_t data_off,
                        uint64_t size)
{
    if (w->zip.n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        oz_zentry *e = realloc(w->zip.entries, cap * sizeof *e);
        if (!e) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        w->zip.entries = e;
        w->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    size_t len = strlen(name);
    oz_zentry *e = &w->zip.entries[w->zip.n];
    *e = (oz_zentry){ .pub = { .name = copy, .header_offset = lho, .data_offset = data_off, .size = size,
                               .has_xxh3 = 1 },
                      .name_len = (uint32_t)len, .cls = cls, .generation = w->pkg ? 2 : 1 };
    /* Counted before the map borrows the name, so that abort frees it even
     * when the insertion fails. */
    uint32_t index = (uint32_t)w->zip.n++;
    int rc = oz_strmap_put(&w->zip.names, copy, len, index, NULL);
    return rc < 0 ? rc : 0;
}

static uint64_t padding_for(const onnxzip_writer *w, const char *name, uint64_t size)
{
    return oz_zip_padding(w->pos, strlen(name), size, w->align);
}

/* Where an entry's bytes come from: memory, a file range, or a callback. */
typedef struct source {
    const uint8_t *mem; /* memory source, or NULL for fd / callback */
    int fd;
    uint64_t offset, size;
    oz_stream_fn read;  /* callback source (mem NULL, fd -1), or NULL */
    void *user;
} source;

/* Reads up to n bytes of the source at `done` into w->chunk; *got = 0 at its end. */
static int read_source(onnxzip_writer *w, const char *name, const source *s, uint64_t done, size_t n, size_t *got)
{
    char shown[OZ_PRINTABLE_CAP];
    if (s->read) {
        *got = 0;
        int rc = s->read(s->user, w->chunk, n, got);
        if (rc) return rc < 0 ? rc : oz_err(ONNXZIP_EIO, -1, "%s: entry '%s': the source failed (%d)", w->path,
                                            oz_printable(name, strlen(name), shown, sizeof shown), rc);
        if (*got > n)
            return oz_err(ONNXZIP_EINVAL, -1, "%s: entry '%s': the source returned %zu bytes for a read of %zu",
                          w->path, oz_printable(name, strlen(name), shown, sizeof shown), *got, n);
        return 0;
    }
    for (;;) {
        ssize_t k = oz_sys_pread(s->fd, w->chunk, n, (int64_t)(s->offset + done));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return io_err(w, "cannot read the source");
        *got = (size_t)k;
        return 0;
    }
}

static int source_short(onnxzip_writer *w, const char *name, const source *s, uint64_t done)
{
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_ETRUNC, -1, "%s: entry '%s': the source ended %llu bytes early (of %llu)", w->path,
                  oz_printable(name, strlen(name), shown, sizeof shown), (unsigned long long)(s->size - done),
                  (unsigned long long)s->size);
}

static int set_crc(onnxzip_writer *w, uint64_t lho, uint32_t crc);

/* CRCs of the jobs finished so far go into their local headers now, while
 * those pages are likely still dirty: once the kernel has begun writing one
 * back, rewriting it waits for the disk (stable pages). */
static int absorb(onnxzip_writer *w, int wait)
{
    const oz_bg_result *r;
    size_t n;
    uint64_t pending;
    int rc = oz_bg_hash_collect(w->hash, wait, &r, &n, &pending);
    if (rc) { /* its message names the offset read back: this names the file */
        const onnxzip_error_info *e = onnxzip_last_error();
        return oz_err_errno(e->sys_errno, rc, e->offset, w->path, "%s: the temporary file: %s", w->path, e->message);
    }
    for (size_t i = 0; i < n && !rc; i++) rc = set_crc(w, r[i].header, r[i].crc);
    return rc;
}

static void copied(void *ctx, uint64_t final_to)
{
    onnxzip_writer *w = ctx;
    oz_bg_hash_ready(w->hash, final_to);
    if (!w->copy_err) w->copy_err = absorb(w, 0);
}

/* Large file ranges: copied by the kernel while the background hasher reads
 * them back (so the sums are of what the archive holds); their CRC goes into
 * the local header at finish. Returns 1 when this path does not apply. */
static int copy_kernel(onnxzip_writer *w, const char *name, const source *s, uint64_t lho)
{
    oz_stat st;
    if (oz_sys_fstat(s->fd, &st) || st.kind != OZ_KIND_REG) return 1;
    if (!w->hash && !w->no_hash_thread && !(w->hash = oz_bg_hash_start(w->fd))) w->no_hash_thread = 1;
    if (!w->hash) return 1;
    int rc = oz_bg_hash_add(w->hash, w->zip.n, lho, w->pos, s->size);
    if (rc) return rc;
    uint64_t done;
    w->copy_err = 0;
    oz_copy_result res = oz_copy_range(s->fd, s->offset, s->size, w->fd, w->pos, copied, w, &done);
    if (w->copy_err) return w->copy_err;
    switch (res) {
    case OZ_COPY_OK: w->pos += s->size; return 0;
    case OZ_COPY_UNSUPPORTED: return oz_err(ONNXZIP_EINVAL, -1, "%s: internal: cannot copy entry data", w->path);
    case OZ_COPY_SHORT: return source_short(w, name, s, done);
    case OZ_COPY_READ: return io_err(w, "cannot read the source");
    case OZ_COPY_WRITE: return io_err(w, "cannot write the temporary file");
    }
    return 1;
}

/* Copies the entry's data to w->pos. *cs gets its sums, unless *deferred:
 * then the background hasher has them. */
static int copy_data(onnxzip_writer *w, const char *name, const source *s, uint64_t lho, oz_checksum *cs,
                     int *deferred)
{
    char shown[OZ_PRINTABLE_CAP];
    int rc;
    *deferred = !s->mem && !s->read && s->size >= KERNEL_COPY_MIN && (rc = copy_kernel(w, name, s, lho)) <= 0;
    if (*deferred) return rc;
    for (uint64_t done = 0; done < s->size;) {
        size_t n = s->size - done < IO_CHUNK ? (size_t)(s->size - done) : IO_CHUNK;
        const uint8_t *p = s->mem ? s->mem + done : w->chunk;
        if (!s->mem) {
            if ((rc = read_source(w, name, s, done, n, &n))) return rc;
            if (n == 0) return source_short(w, name, s, done);
        }
        oz_checksum_update(cs, p, n);
        if ((rc = write_data(w, p, n))) return rc;
        done += n;
    }
    if (s->read) { /* the stream must end here; reading its end also lets it check itself (e.g. a CRC) */
        size_t more;
        if ((rc = read_source(w, name, s, s->size, 1, &more))) return rc;
        if (more)
            return oz_err(ONNXZIP_ESIZE, -1, "%s: entry '%s': the source holds more than the %llu bytes announced",
                          w->path, oz_printable(name, strlen(name), shown, sizeof shown),
                          (unsigned long long)s->size);
    }
    return 0;
}

static int write_entry(onnxzip_writer *w, const char *name, oz_name_class cls, const source *s, uint16_t claim,
                       size_t pad);

/* What a filler's alignment field records: the most a u16 says of its data
 * offset, a multiple of the writer's alignment (65536). */
#define FILLER_CLAIM 32768u

/* An extra area holds at most 65535 bytes: when the padding N does not fit
 * (A = 65536 only), an empty filler entry `__PAD_<k>` goes first at w->pos,
 * its data aligned to A as every entry's is (so `zipalign -c 65536` passes);
 * the entry's header then starts at that multiple of A and needs only
 * 65500 - n - z bytes (spec 4.3). k: the smallest unused number among those
 * of the fewest digits whose padding fits (numbers of one digit count share
 * a name length, and each digit more needs one padding byte less). */
static int add_filler(onnxzip_writer *w)
{
    char name[32];
    uint64_t first = 0, count = 10; /* the numbers of `digits` digits */
    for (int digits = 1; digits <= 10; digits++, first = first ? first * 10 : 10, count = first * 9) {
        if (w->fillers[digits] == count) continue; /* all used */
        snprintf(name, sizeof name, "__PAD_%llu", (unsigned long long)(first + w->fillers[digits]));
        uint64_t pad = padding_for(w, name, 0);
        if (6 + pad > MAX_EXTRA) continue;
        w->fillers[digits]++;
        source empty = { (const uint8_t *)"", -1, 0, 0, NULL, NULL };
        return write_entry(w, name, OZ_NAME_FILLER, &empty, FILLER_CLAIM, (size_t)pad);
    }
    return oz_err(ONNXZIP_ELIMIT, -1, "%s: no filler name left (internal error)", w->path); /* OZ_MAX_ENTRIES comes first */
}

static int add_entry(onnxzip_writer *w, const char *name, oz_name_class cls, const source *s)
{
    uint64_t pad = padding_for(w, name, s->size);
    if ((s->size >= U32_MARK ? 20 : 0) + 6 + pad > MAX_EXTRA) {
        int rc = add_filler(w);
        if (rc) return rc;
        pad = padding_for(w, name, s->size);
    }
    return write_entry(w, name, cls, s, (uint16_t)(w->align > 32768 ? 32768 : w->align), (size_t)pad);
}

static int set_crc(onnxzip_writer *w, uint64_t lho, uint32_t crc)
{
    uint8_t b[4];
    oz_wr32(b, crc);
    return pwrite_all(w, b, 4, lho + LH_CRC);
}

/* The sums the background hasher computed, into local headers and entries. */
static int collect_sums(onnxzip_writer *w)
{
    if (!w->hash) return 0;
    int rc = absorb(w, 1);
    if (rc) return rc;
    size_t n;
    const oz_bg_result *r = oz_bg_hash_results(w->hash, &n);
    if (!r) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t i = 0; i < n; i++) {
        w->zip.entries[r[i].entry].pub.crc32 = r[i].crc;
        w->zip.entries[r[i].entry].pub.xxh3 = r[i].xxh3;
    }
    return 0;
}

static int write_entry(onnxzip_writer *w, const char *name, oz_name_class cls, const source *s, uint16_t claim,
                       size_t pad)
{
    int rc;
    uint64_t lho = w->pos;
    size_t hlen = oz_zip_local(w->header, name, s->size, w->pos, claim, pad);
    if ((rc = pwrite_all(w, w->header, hlen, lho))) return rc;
    w->pos += hlen;
    uint64_t data_off = w->pos;
    oz_checksum cs;
    oz_checksum_init(&cs);
    int deferred;
    if ((rc = copy_data(w, name, s, lho, &cs, &deferred))) return rc;
    if (!deferred && (rc = set_crc(w, lho, cs.crc))) return rc;
    if ((rc = record_entry(w, name, cls, lho, data_off, s->size))) return rc;
    oz_zentry *e = &w->zip.entries[w->zip.n - 1];
    e->pub.crc32 = cs.crc;
    e->pub.xxh3 = XXH3_64bits_digest(&cs.xxh);
    return 0;
}

/* A name the writer may give an entry of class `cls`: a tensor entry's is
 * an identifier, or in a package a path whose last component is one (spec
 * 19.1); models and files of a package are paths. */
static int check_name(onnxzip_writer *w, const char *name, oz_name_class cls)
{
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(name, strlen(name), shown, sizeof shown);
    size_t dir = w->pkg ? oz_path_dir_len(name, strlen(name)) : 0;
    const char *why = NULL;
    int rc = w->pkg ? oz_package_path_check(name, strlen(name), &why) : 0;
    if (rc) return oz_err(rc, -1, "%s: '%s' is not a package path: %s", w->path, shown, why);
    oz_name_class c = oz_classify_name(name + dir, strlen(name + dir));
    if (c == OZ_NAME_TOO_LONG)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: entry name '%s' is longer than %d bytes", w->path, shown, OZ_MAX_NAME);
    if (cls == OZ_NAME_TENSOR && c != OZ_NAME_TENSOR)
        return oz_err(ONNXZIP_ENAME, -1, "%s: '%s' is not a valid entry name (a C identifier of 1-255 bytes "
                      "not starting with \"__\"%s)", w->path, shown, w->pkg ? ", after its directory" : "");
    if (cls != OZ_NAME_TENSOR && !dir && oz_package_path_reserved(name, strlen(name)))
        return oz_err(ONNXZIP_ENAME, -1, "%s: '%s': a name the format reserves (at the root: \"__\" and then only "
                      "letters, digits and '_', like __PACKAGE)", w->path, shown);
    if (oz_writer_name_taken(w, name))
        return oz_err(ONNXZIP_EDUPNAME, -1, "%s: entry name '%s' is already used (ignoring case)", w->path, shown);
    if (w->pkg && (rc = oz_pkg_writer_claim(w->pkg, name, shown))) return rc;
    if (w->zip.n + 2 >= OZ_MAX_ENTRIES)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: more than %u entries", w->path, OZ_MAX_ENTRIES);
    return 0;
}

static int add_checked(onnxzip_writer *w, const char *name, oz_name_class cls, const source *s)
{
    if (!w || !name) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add: NULL argument");
    if (w->failed) return oz_err(w->failed, -1, "%s: the writer failed earlier and must be aborted", w->path);
    int rc = check_name(w, name, cls); /* a refused name leaves the writer as it was */
    if (rc) return rc;
    if ((rc = add_entry(w, name, cls, s))) w->failed = rc;
    return rc;
}

int onnxzip_writer_add_memory(onnxzip_writer *w, const char *name, const void *data, uint64_t size)
{
    if (!data && size) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add_memory: NULL data");
    source s = { data ? data : (const uint8_t *)"", -1, 0, size, NULL, NULL };
    return add_checked(w, name, OZ_NAME_TENSOR, &s);
}

int onnxzip_writer_add_file_range(onnxzip_writer *w, const char *name, int fd, uint64_t offset, uint64_t size)
{
    if (fd < 0) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add_file_range: bad fd");
    source s = { NULL, fd, offset, size, NULL, NULL };
    return add_checked(w, name, OZ_NAME_TENSOR, &s);
}

int oz_writer_add_stream(onnxzip_writer *w, const char *name, uint64_t size, oz_stream_fn read, void *user)
{
    if (!read) return oz_err(ONNXZIP_EINVAL, -1, "oz_writer_add_stream: NULL callback");
    source s = { NULL, -1, 0, size, read, user };
    return add_checked(w, name, OZ_NAME_TENSOR, &s);
}

int oz_writer_add_file_stream(onnxzip_writer *w, const char *path, uint64_t size, oz_stream_fn read, void *user)
{
    if (!read || !w || !w->pkg) return oz_err(ONNXZIP_EINVAL, -1, "oz_writer_add_file_stream: not a package writer");
    source s = { NULL, -1, 0, size, read, user };
    int rc = add_checked(w, path, OZ_NAME_PKG_FILE, &s);
    return rc ? rc : oz_pkg_writer_file(w->pkg, path);
}

int onnxzip_writer_add_file(onnxzip_writer *w, const char *path, int fd, uint64_t offset, uint64_t size)
{
    if (w && !w->pkg) return oz_err(ONNXZIP_EINVAL, -1, "%s: plain files need a package writer "
                                    "(ONNXZIP_WRITE_PACKAGE)", w->path);
    if (fd < 0) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add_file: bad fd");
    source s = { NULL, fd, offset, size, NULL, NULL };
    int rc = add_checked(w, path, OZ_NAME_PKG_FILE, &s);
    return rc ? rc : oz_pkg_writer_file(w->pkg, path);
}

int onnxzip_writer_add_file_memory(onnxzip_writer *w, const char *path, const void *data, uint64_t size)
{
    if (w && !w->pkg) return oz_err(ONNXZIP_EINVAL, -1, "%s: plain files need a package writer "
                                    "(ONNXZIP_WRITE_PACKAGE)", w->path);
    if (!data && size) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add_file_memory: NULL data");
    source s = { data ? data : (const uint8_t *)"", -1, 0, size, NULL, NULL };
    int rc = add_checked(w, path, OZ_NAME_PKG_FILE, &s);
    return rc ? rc : oz_pkg_writer_file(w->pkg, path);
}

int onnxzip_writer_add_model(onnxzip_writer *w, const char *path, const void *model, size_t size)
{
    if (!w || !path || (!model && size)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add_model: NULL argument");
    if (!w->pkg) return oz_err(ONNXZIP_EINVAL, -1, "%s: onnxzip_writer_add_model needs a package writer "
                               "(ONNXZIP_WRITE_PACKAGE); a single model is onnxzip_writer_set_model()", w->path);
    if (size > OZ_MAX_MODEL)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: model '%s' of %zu bytes exceeds protobuf's 2 GiB limit", w->path, path,
                      size);
    int rc = check_name(w, path, OZ_NAME_PKG_MODEL);
    return rc ? rc : oz_pkg_writer_model(w->pkg, path, model, size);
}

int onnxzip_writer_set_default_model(onnxzip_writer *w, const char *path)
{
    if (!w || !path) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_set_default_model: NULL argument");
    if (!w->pkg) return oz_err(ONNXZIP_EINVAL, -1, "%s: not a package writer", w->path);
    return oz_pkg_writer_default(w->pkg, path);
}

oz_pkg_writer *oz_writer_package(onnxzip_writer *w)
{
    return w->pkg;
}

int onnxzip_writer_set_model(onnxzip_writer *w, const void *model, size_t size)
{
    if (!w || (!model && size)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_set_model: NULL argument");
    if (w->pkg) return oz_err(ONNXZIP_EINVAL, -1, "%s: a package writer takes models by path "
                              "(onnxzip_writer_add_model)", w->path);
    if (size > OZ_MAX_MODEL)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: model of %zu bytes exceeds protobuf's 2 GiB limit", w->path, size);
    w->model.len = 0;
    int rc = oz_buf_append(&w->model, model, size);
    w->has_model = !rc;
    return rc;
}

static int write_directory(onnxzip_writer *w)
{
    oz_buf cd = { 0 };
    int rc = 0;
    for (size_t i = 0; i < w->zip.n && !rc; i++) rc = oz_zip_central(&cd, &w->zip.entries[i]);
    if (!rc) rc = oz_zip_end(&cd, w->zip.n, cd.len, w->pos);
    if (!rc) rc = pwrite_all(w, cd.p, cd.len, w->pos);
    if (!rc) w->pos += cd.len;
    oz_buf_free(&cd);
    return rc;
}

static int finish_model(onnxzip_writer *w)
{
    if (!w->has_model) return oz_err(ONNXZIP_ENOMODEL, -1, "%s: no model was set (onnxzip_writer_set_model)", w->path);
    int rc = oz_tensors_check(&w->zip, w->model.p, w->model.len, w->path); /* as open and verify check it */
    if (rc || (rc = collect_sums(w))) return rc;
    source m = { w->model.p ? w->model.p : (const uint8_t *)"", -1, 0, w->model.len, NULL, NULL };
    return add_entry(w, OZ_MODEL_NAME, OZ_NAME_MODEL, &m);
}

/* A package's tail (spec 19.1): every model, checked as open checks it
 * against the entries of its directory, then the manifest. */
static int finish_package(onnxzip_writer *w)
{
    size_t n = oz_pkg_writer_models(w->pkg);
    if (!n) return oz_err(ONNXZIP_ENOMODEL, -1, "%s: a package needs a model (onnxzip_writer_add_model)", w->path);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *path;
        const uint8_t *p;
        size_t len;
        oz_pkg_writer_model_at(w->pkg, i, &path, &p, &len);
        w->zip.dir = path;
        w->zip.dir_len = oz_path_dir_len(path, strlen(path));
        rc = oz_tensors_check(&w->zip, p, len, path);
        w->zip.dir = NULL;
    }
    if (rc || (rc = collect_sums(w))) return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *path;
        source m = { NULL, -1, 0, 0, NULL, NULL };
        size_t len;
        oz_pkg_writer_model_at(w->pkg, i, &path, &m.mem, &len);
        m.size = len;
        if (!m.mem) m.mem = (const uint8_t *)"";
        rc = add_entry(w, path, OZ_NAME_PKG_MODEL, &m);
    }
    oz_buf text = { 0 };
    if (!rc) rc = oz_pkg_writer_manifest(w->pkg, &text, w->path);
    source t = { text.p, -1, 0, text.len, NULL, NULL };
    if (!rc) rc = add_entry(w, OZ_PACKAGE_NAME, OZ_NAME_PACKAGE, &t);
    oz_buf_free(&text);
    return rc;
}

static int finish(onnxzip_writer *w)
{
    if (w->failed) return oz_err(w->failed, -1, "%s: the writer failed earlier; nothing was written", w->path);
    int rc = w->pkg ? finish_package(w) : finish_model(w);
    if (rc || (rc = write_directory(w))) return rc;
    if (w->sync && oz_sys_sync(w->fd)) return io_err(w, "cannot sync the temporary file");
    /* Renamed while still open: its lock keeps sweepers away until then. */
    if (oz_sys_rename_at(OZ_AT_CWD, w->tmp, OZ_AT_CWD, w->path))
        return io_err(w, "cannot rename the temporary file into place");
    free(w->tmp);
    w->tmp = NULL; /* nothing left to remove */
    oz_sys_close(w->fd); /* synced: a close error could lose nothing */
    w->fd = -1;
    oz_mkdirs_keep(&w->made, w->sync);
    if (w->sync) oz_sys_sync_parent(w->path); /* durability of the rename, best effort */
    return 0;
}

int onnxzip_writer_finish(onnxzip_writer **wp)
{
    if (!wp || !*wp) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_finish: NULL writer");
    int rc = finish(*wp);
    onnxzip_writer_abort(wp);
    return rc;
}

void onnxzip_writer_abort(onnxzip_writer **wp)
{
    if (!wp || !*wp) return;
    onnxzip_writer *w = *wp;
    oz_bg_hash_stop(w->hash); /* before the descriptor it reads goes */
    if (w->tmp) oz_sys_unlink_at(OZ_AT_CWD, w->tmp, 0); /* before closing: still locked */
    if (w->fd >= 0) oz_sys_close(w->fd);
    oz_mkdirs_undo(&w->made); /* after the close: Windows removes no directory with a file open in it */
    for (size_t i = 0; i < w->zip.n; i++) free((char *)w->zip.entries[i].pub.name);
    free(w->zip.entries);
    oz_strmap_free(&w->zip.names);
    oz_buf_free(&w->model);
    oz_pkg_writer_free(w->pkg);
    free(w->chunk);
    free(w->header);
    free(w->tmp);
    free(w->path);
    free(w);
    *wp = NULL;
}
