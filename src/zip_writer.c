/* The aligned archive writer (spec §"Writer requirements"): entries are
 * STORED, their data aligned by a 0xD935 local extra field, the model last,
 * zip64 exactly when needed; all into a temporary file renamed at finish. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "checksum.h"
#include "tensors.h"
#include "writer.h"
#include "zip_format.h"

#define IO_CHUNK (1u << 20)
#define MAX_EXTRA 0xFFFFu

struct onnxzip_writer {
    char *path, *tmp;
    int fd;
    uint64_t pos;
    uint32_t align;
    int failed;
    unsigned fillers;
    oz_zip zip;          /* entries so far; names map for references */
    size_t cap;
    oz_strmap folded;    /* down-cased names, for uniqueness */
    uint8_t *chunk;      /* IO_CHUNK bytes */
    uint8_t *header;     /* room for the largest local header */
    oz_buf model;
    int has_model;
};

static int io_err(onnxzip_writer *w, const char *what)
{
    return oz_err(ONNXZIP_EIO, (int64_t)w->pos, "%s: %s: %s", w->path, what, strerror(errno));
}

static int pwrite_all(onnxzip_writer *w, const void *p, size_t n, uint64_t off)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = pwrite(w->fd, b, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return io_err(w, "cannot write the temporary file");
        b += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
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

static int tmp_open(onnxzip_writer *w)
{
    const char *slash = strrchr(w->path, '/');
    int dirlen = slash ? (int)(slash - w->path) + 1 : 0;
    size_t cap = strlen(w->path) + 64;
    if (!(w->tmp = malloc(cap))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        unsigned long r = (unsigned long)getpid() * 2654435761u ^ (unsigned long)time(NULL) ^ attempt * 40503u ^
                          (unsigned long)(uintptr_t)w;
        snprintf(w->tmp, cap, "%.*s.%s.tmp-%08lx", dirlen, w->path, slash ? slash + 1 : w->path, r & 0xffffffffu);
        w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (w->fd >= 0) return 0;
        if (errno != EEXIST) break;
    }
    return oz_err(ONNXZIP_EIO, -1, "%s: cannot create a temporary file beside it (%s): %s", w->path, w->tmp,
                  strerror(errno));
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
    onnxzip_writer *w = calloc(1, sizeof *w);
    if (!w) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    w->fd = -1;
    w->align = opts->alignment;
    oz_strmap_init(&w->zip.names, 0);
    oz_strmap_init(&w->folded, 1);
    w->path = strdup(path);
    w->chunk = malloc(IO_CHUNK);
    w->header = malloc(ZIP_LOCAL_SIZE + OZ_MAX_NAME + MAX_EXTRA);
    if (!w->path || !w->chunk || !w->header) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (!rc) rc = tmp_open(w);
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
    return oz_strmap_get(&w->folded, name, strlen(name), &i) == 0;
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
                      .name_len = (uint32_t)len, .cls = cls };
    int rc = oz_strmap_put(&w->zip.names, copy, len, (uint32_t)w->zip.n, NULL);
    if (rc >= 0) rc = oz_strmap_put(&w->folded, copy, len, (uint32_t)w->zip.n, NULL);
    if (rc < 0) {
        free(copy);
        return rc;
    }
    w->zip.n++;
    return 0;
}

/* The padding N that aligns the data of an entry whose local header starts
 * at w->pos (spec 4.3). */
static uint64_t padding_for(const onnxzip_writer *w, const char *name, uint64_t size)
{
    uint64_t b = w->pos + ZIP_LOCAL_SIZE + strlen(name) + (size >= U32_MARK ? 20 : 0) + 6;
    return (w->align - b % w->align) % w->align;
}

/* Builds the local header for an entry starting at w->pos, with an alignment
 * field recording `claim` and `pad` padding bytes; returns its length. The
 * CRC is patched after the data is written. */
static size_t build_local(onnxzip_writer *w, const char *name, uint64_t size, uint16_t claim, size_t pad)
{
    size_t nlen = strlen(name);
    int z64 = size >= U32_MARK;
    size_t extra = (z64 ? 20 : 0) + 6 + pad;
    uint8_t *h = w->header;
    memset(h, 0, ZIP_LOCAL_SIZE + nlen + extra);
    oz_wr32(h, ZIP_LOCAL_SIG);
    oz_wr16(h + 4, z64 || w->pos >= U32_MARK ? ZIP_VERSION_ZIP64 : ZIP_VERSION_PLAIN);
    oz_wr16(h + 12, ZIP_DOS_DATE_1980);
    oz_wr32(h + LH_CSIZE, z64 ? U32_MARK : (uint32_t)size);
    oz_wr32(h + LH_USIZE, z64 ? U32_MARK : (uint32_t)size);
    oz_wr16(h + LH_NAMELEN, (uint16_t)nlen);
    oz_wr16(h + LH_EXTRALEN, (uint16_t)extra);
    memcpy(h + ZIP_LOCAL_SIZE, name, nlen);
    uint8_t *x = h + ZIP_LOCAL_SIZE + nlen;
    if (z64) { /* zip64 first: the padding is computed after it is placed */
        oz_wr16(x, EF_ZIP64);
        oz_wr16(x + 2, 16);
        oz_wr64(x + 4, size);
        oz_wr64(x + 12, size);
        x += 20;
    }
    oz_wr16(x, EF_ALIGN);
    oz_wr16(x + 2, (uint16_t)(2 + pad));
    oz_wr16(x + 4, claim);
    return ZIP_LOCAL_SIZE + nlen + extra;
}

typedef struct source {
    const uint8_t *mem; /* memory source, or NULL for fd */
    int fd;
    uint64_t offset, size;
} source;

static int copy_data(onnxzip_writer *w, const source *s, oz_checksum *cs)
{
    for (uint64_t done = 0; done < s->size;) {
        size_t n = s->size - done < IO_CHUNK ? (size_t)(s->size - done) : IO_CHUNK;
        const uint8_t *p = s->mem ? s->mem + done : w->chunk;
        if (!s->mem) {
            ssize_t k = pread(s->fd, w->chunk, n, (off_t)(s->offset + done));
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) return io_err(w, "cannot read the source");
            if (k == 0)
                return oz_err(ONNXZIP_ETRUNC, -1, "%s: source ended %llu bytes early", w->path,
                              (unsigned long long)(s->size - done));
            n = (size_t)k;
        }
        oz_checksum_update(cs, p, n);
        int rc = write_data(w, p, n);
        if (rc) return rc;
        done += n;
    }
    return 0;
}

static int write_entry(onnxzip_writer *w, const char *name, oz_name_class cls, const source *s, uint16_t claim,
                       size_t pad);

/* An extra area holds at most 65535 bytes: when the padding N does not fit
 * (A = 65536 only), an empty filler entry whose header is exactly N bytes
 * long goes first, and the entry then needs none (spec 4.3). */
static int add_filler(onnxzip_writer *w, uint64_t n)
{
    char name[32];
    int f = snprintf(name, sizeof name, "__PAD_%u", w->fillers++);
    source empty = { (const uint8_t *)"", -1, 0, 0 };
    return write_entry(w, name, OZ_NAME_FILLER, &empty, 0, (size_t)(n - ZIP_LOCAL_SIZE - 6 - (uint64_t)f));
}

static int add_entry(onnxzip_writer *w, const char *name, oz_name_class cls, const source *s)
{
    uint64_t pad = padding_for(w, name, s->size);
    if ((s->size >= U32_MARK ? 20 : 0) + 6 + pad > MAX_EXTRA) {
        int rc = add_filler(w, pad);
        if (rc) return rc;
        pad = padding_for(w, name, s->size);
    }
    return write_entry(w, name, cls, s, (uint16_t)(w->align > 32768 ? 32768 : w->align), (size_t)pad);
}

static int write_entry(onnxzip_writer *w, const char *name, oz_name_class cls, const source *s, uint16_t claim,
                       size_t pad)
{
    int rc;
    uint64_t lho = w->pos;
    size_t hlen = build_local(w, name, s->size, claim, pad);
    if ((rc = pwrite_all(w, w->header, hlen, lho))) return rc;
    w->pos += hlen;
    uint64_t data_off = w->pos;
    oz_checksum cs;
    oz_checksum_init(&cs);
    if ((rc = copy_data(w, s, &cs))) return rc;
    uint8_t crc[4];
    oz_wr32(crc, cs.crc);
    if ((rc = pwrite_all(w, crc, 4, lho + LH_CRC))) return rc;
    if ((rc = record_entry(w, name, cls, lho, data_off, s->size))) return rc;
    oz_zentry *e = &w->zip.entries[w->zip.n - 1];
    e->pub.crc32 = cs.crc;
    e->pub.xxh3 = XXH3_64bits_digest(&cs.xxh);
    return 0;
}

static int add_checked(onnxzip_writer *w, const char *name, const source *s)
{
    if (!w || !name) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add: NULL argument");
    if (w->failed) return oz_err(w->failed, -1, "%s: the writer failed earlier and must be aborted", w->path);
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(name, strlen(name), shown, sizeof shown);
    oz_name_class cls = oz_classify_name(name, strlen(name));
    if (cls == OZ_NAME_TOO_LONG)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: entry name '%s' is longer than %d bytes", w->path, shown, OZ_MAX_NAME);
    if (cls != OZ_NAME_TENSOR)
        return oz_err(ONNXZIP_ENAME, -1, "%s: '%s' is not a valid entry name (a C identifier of 1-255 bytes "
                      "not starting with \"__\")", w->path, shown);
    if (oz_writer_name_taken(w, name))
        return oz_err(ONNXZIP_EDUPNAME, -1, "%s: entry name '%s' is already used (ignoring case)", w->path, shown);
    if (w->zip.n + 2 >= OZ_MAX_ENTRIES)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: more than %u entries", w->path, OZ_MAX_ENTRIES);
    int rc = add_entry(w, name, OZ_NAME_TENSOR, s);
    if (rc) w->failed = rc;
    return rc;
}

int onnxzip_writer_add_memory(onnxzip_writer *w, const char *name, const void *data, uint64_t size)
{
    if (!data && size) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add_memory: NULL data");
    source s = { data ? data : (const uint8_t *)"", -1, 0, size };
    return add_checked(w, name, &s);
}

int onnxzip_writer_add_file_range(onnxzip_writer *w, const char *name, int fd, uint64_t offset, uint64_t size)
{
    if (fd < 0) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_add_file_range: bad fd");
    source s = { NULL, fd, offset, size };
    return add_checked(w, name, &s);
}

int onnxzip_writer_set_model(onnxzip_writer *w, const void *model, size_t size)
{
    if (!w || (!model && size)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_writer_set_model: NULL argument");
    if (size > OZ_MAX_MODEL)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: model of %zu bytes exceeds protobuf's 2 GiB limit", w->path, size);
    w->model.len = 0;
    int rc = oz_buf_append(&w->model, model, size);
    w->has_model = !rc;
    return rc;
}

static int central_record(oz_buf *cd, const oz_zentry *e)
{
    const onnxzip_entry *p = &e->pub;
    int big_size = p->size >= U32_MARK, big_off = p->header_offset >= U32_MARK;
    size_t z64 = (size_t)(big_size ? 16 : 0) + (big_off ? 8 : 0);
    size_t extra = (z64 ? 4 + z64 : 0) + 4 + EF_DIGEST_SIZE;
    int rc = oz_buf_reserve(cd, ZIP_CENTRAL_SIZE + e->name_len + extra);
    if (rc) return rc;
    uint8_t *h = cd->p + cd->len;
    memset(h, 0, ZIP_CENTRAL_SIZE);
    oz_wr32(h, ZIP_CENTRAL_SIG);
    oz_wr16(h + 4, ZIP_VERSION_MADE_BY);
    oz_wr16(h + 6, big_size || big_off ? ZIP_VERSION_ZIP64 : ZIP_VERSION_PLAIN);
    oz_wr16(h + 14, ZIP_DOS_DATE_1980);
    oz_wr32(h + CH_CRC, p->crc32);
    oz_wr32(h + CH_CSIZE, big_size ? U32_MARK : (uint32_t)p->size);
    oz_wr32(h + CH_USIZE, big_size ? U32_MARK : (uint32_t)p->size);
    oz_wr16(h + CH_NAMELEN, (uint16_t)e->name_len);
    oz_wr16(h + CH_EXTRALEN, (uint16_t)extra);
    oz_wr32(h + 38, 0100644u << 16); /* regular file, rw-r--r-- */
    oz_wr32(h + CH_LHO, big_off ? U32_MARK : (uint32_t)p->header_offset);
    uint8_t *x = h + ZIP_CENTRAL_SIZE;
    memcpy(x, p->name, e->name_len);
    x += e->name_len;
    if (z64) { /* only the marked fields, in APPNOTE order */
        oz_wr16(x, EF_ZIP64);
        oz_wr16(x + 2, (uint16_t)z64);
        x += 4;
        if (big_size) oz_wr64(x, p->size), oz_wr64(x + 8, p->size), x += 16;
        if (big_off) oz_wr64(x, p->header_offset), x += 8;
    }
    oz_wr16(x, EF_DIGEST);
    oz_wr16(x + 2, EF_DIGEST_SIZE);
    x[4] = ONNXZIP_FORMAT_VERSION_MAJOR;
    x[5] = DIGEST_XXH3_64;
    oz_wr64(x + 6, p->xxh3);
    cd->len += ZIP_CENTRAL_SIZE + e->name_len + extra;
    return 0;
}

static int end_records(onnxzip_writer *w, oz_buf *cd, uint64_t cd_off)
{
    uint64_t cd_size = cd->len, n = w->zip.n;
    int z64 = n >= U16_MARK || cd_size >= U32_MARK || cd_off >= U32_MARK;
    int rc = oz_buf_reserve(cd, ZIP64_EOCD_SIZE + ZIP64_LOCATOR_SIZE + ZIP_EOCD_SIZE);
    if (rc) return rc;
    uint8_t *p = cd->p + cd->len;
    if (z64) {
        uint64_t rec = cd_off + cd_size;
        memset(p, 0, ZIP64_EOCD_SIZE + ZIP64_LOCATOR_SIZE);
        oz_wr32(p, ZIP64_EOCD_SIG);
        oz_wr64(p + 4, ZIP64_EOCD_SIZE - 12);
        oz_wr16(p + 12, ZIP_VERSION_MADE_BY);
        oz_wr16(p + 14, ZIP_VERSION_ZIP64);
        oz_wr64(p + 24, n);
        oz_wr64(p + 32, n);
        oz_wr64(p + 40, cd_size);
        oz_wr64(p + 48, cd_off);
        p += ZIP64_EOCD_SIZE;
        oz_wr32(p, ZIP64_LOCATOR_SIG);
        oz_wr64(p + 8, rec);
        oz_wr32(p + 16, 1);
        p += ZIP64_LOCATOR_SIZE;
    }
    memset(p, 0, ZIP_EOCD_SIZE);
    oz_wr32(p, ZIP_EOCD_SIG);
    uint16_t n16 = n >= U16_MARK ? U16_MARK : (uint16_t)n;
    oz_wr16(p + 8, n16);
    oz_wr16(p + 10, n16);
    oz_wr32(p + 12, cd_size >= U32_MARK ? U32_MARK : (uint32_t)cd_size);
    oz_wr32(p + 16, cd_off >= U32_MARK ? U32_MARK : (uint32_t)cd_off);
    cd->len = (size_t)(p + ZIP_EOCD_SIZE - cd->p);
    return 0;
}

static int write_directory(onnxzip_writer *w)
{
    oz_buf cd = { 0 };
    int rc = 0;
    for (size_t i = 0; i < w->zip.n && !rc; i++) rc = central_record(&cd, &w->zip.entries[i]);
    if (!rc) rc = end_records(w, &cd, w->pos);
    if (!rc) rc = pwrite_all(w, cd.p, cd.len, w->pos);
    if (!rc) w->pos += cd.len;
    oz_buf_free(&cd);
    return rc;
}

static int sync_dir(onnxzip_writer *w)
{
    const char *slash = strrchr(w->path, '/');
    char *dir = slash ? strndup(w->path, (size_t)(slash - w->path) + 1) : strdup(".");
    if (!dir) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return 0; /* the rename happened; durability is best effort here */
    fsync(fd);
    close(fd);
    return 0;
}

static int finish(onnxzip_writer *w)
{
    if (w->failed) return oz_err(w->failed, -1, "%s: the writer failed earlier; nothing was written", w->path);
    if (!w->has_model) return oz_err(ONNXZIP_ENOMODEL, -1, "%s: no model was set (onnxzip_writer_set_model)", w->path);
    oz_tensors ts;
    int rc = oz_tensors_build(&ts, &w->zip, NULL, w->model.p, w->model.len, 0, w->path);
    if (rc) return rc;
    oz_tensors_free(&ts);
    source m = { w->model.p ? w->model.p : (const uint8_t *)"", -1, 0, w->model.len };
    if ((rc = add_entry(w, OZ_MODEL_NAME, OZ_NAME_MODEL, &m)) || (rc = write_directory(w))) return rc;
    if (fsync(w->fd)) return io_err(w, "cannot sync the temporary file");
    if (close(w->fd)) {
        w->fd = -1;
        return io_err(w, "cannot close the temporary file");
    }
    w->fd = -1;
    if (rename(w->tmp, w->path)) return io_err(w, "cannot rename the temporary file into place");
    free(w->tmp);
    w->tmp = NULL; /* nothing left to remove */
    return sync_dir(w);
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
    if (w->fd >= 0) close(w->fd);
    if (w->tmp) unlink(w->tmp);
    for (size_t i = 0; i < w->zip.n; i++) free((char *)w->zip.entries[i].pub.name);
    free(w->zip.entries);
    oz_strmap_free(&w->zip.names);
    oz_strmap_free(&w->folded);
    oz_buf_free(&w->model);
    free(w->chunk);
    free(w->header);
    free(w->tmp);
    free(w->path);
    free(w);
    *wp = NULL;
}
