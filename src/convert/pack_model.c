/* The walk of one classic model, for onnxzip_pack() (pack.c) and for each
 * model of a folder (pack_dir.c): each payload large enough is streamed from
 * where it lies (the mapped .onnx, a side file, or a converted typed field)
 * into an aligned entry, and the model is rewritten around it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "onnx/dtype.h"
#include "read/archive.h"
#include "read/extdata.h"
#include "common/outputs.h"
#include "common/sys.h"
#include "onnx/typed.h"
#include "write/zip_writer.h"
#include "convert/pack_model.h"
#include "common/package_path.h"

#define CMP_CHUNK (1u << 20)

void onnxzip_pack_options_init(onnxzip_pack_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->alignment = 64;
    opts->size_threshold = 1024;
}

/* Where a payload's bytes are: a file range (fd >= 0) or memory. */
typedef struct payload {
    int fd;
    uint64_t offset, size;
    const uint8_t *mem;
} payload;

typedef enum decision { KEEP, MOVE, INLINE } decision;

/* A stored payload, for ONNXZIP_PACK_DEDUP: found by XXH3, confirmed by bytes. */
typedef struct stored {
    uint64_t hash;
    payload src;
    uint8_t *owned; /* converted typed data is kept while it may be compared */
    char entry[OZ_MAX_PATH + 1];
} stored;

/* The payloads stored so far: one table for a whole package, so that
 * models of one directory share entries (spec 19.3). */
struct oz_pack_seen {
    stored *v;
    size_t n, cap;
};

struct oz_pack {
    onnxzip_writer *w; /* NULL during the measuring pass */
    const onnxzip_pack_options *opts;
    const char *in_path;
    const uint8_t *base;
    uint64_t size;
    int fd;
    oz_extdata ext;
    int ext_open;
    oz_pack_seen own_seen, *seen;
    int package;        /* a package's model (oz_pack_open() with a prefix) */
    const char *prefix; /* its directory ("" otherwise): its entries' names begin with it */
    size_t prefix_len;
    oz_buf origin;      /* a package model's origin list (spec 19.4): "i:f:o,..." */
    uint64_t ordinal;   /* TensorProtos visited so far in this walk */
    uint64_t done, total;
    uint8_t *scratch; /* typed conversion or inlined external bytes of this tensor */
    char entry[OZ_MAX_PATH + 1];
};
typedef struct oz_pack pack;

static int tensor_fail(pack *p, const oz_tensor_info *t, int status, const char *why)
{
    char name[OZ_PRINTABLE_CAP];
    oz_printable(t->name.p, t->name.len, name, sizeof name);
    return oz_err(status, (int64_t)(t->msg.p - p->base), "%s: tensor '%s': %s", p->in_path, name, why);
}

static int check_size(pack *p, const oz_tensor_info *t, uint64_t nbytes)
{
    uint64_t n, expect;
    if (!oz_dtype_bits(t->data_type))
        return tensor_fail(p, t, ONNXZIP_EDTYPE, "payload of a type without fixed element size (STRING or unknown)");
    if (oz_dims_product(t->dims, t->ndims, &n) || oz_dtype_nbytes(t->data_type, n, &expect) || expect != nbytes)
        return tensor_fail(p, t, ONNXZIP_ESIZE, "payload length does not match its dims and data type");
    return 0;
}

static int external_source(pack *p, const oz_tensor_info *t, payload *s)
{
    if (!p->ext_open) {
        char *dir = NULL;
        if (!p->opts->data_dir) {
            const char *slash = oz_last_sep(p->in_path);
            dir = slash ? oz_strndup(p->in_path, (size_t)(slash - p->in_path) + 1) : strdup(".");
            if (!dir) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        }
        int rc = oz_extdata_init(&p->ext, dir ? dir : p->opts->data_dir, dir ? p->in_path : NULL);
        free(dir);
        if (rc) return rc;
        p->ext_open = 1;
    }
    oz_extfile *f = NULL;
    int rc = oz_extdata_resolve(&p->ext, t, p->in_path, &f, &s->offset, &s->size);
    s->fd = rc ? -1 : f->fd;
    return rc;
}

/* Decides what becomes of a tensor and where its payload is (both passes). */
static int classify(pack *p, const oz_tensor_info *t, payload *s, decision *d)
{
    const onnxzip_pack_options *o = p->opts;
    int keep_inline = t->kind == ONNXZIP_KIND_ATTRIBUTE && (o->flags & ONNXZIP_PACK_NO_CONVERT_ATTRIBUTES);
    *s = (payload){ .fd = -1 };
    *d = KEEP;
    if (t->data_location == 1) {
        int rc = external_source(p, t, s);
        if (!rc) rc = check_size(p, t, s->size);
        /* An archive cannot point outside itself: small ones come inline. */
        /* A package keeps every external payload external, so that unpack
         * recreates its data files whole (spec 19.6). */
        *d = !keep_inline && (s->size >= o->size_threshold || p->package) ? MOVE : INLINE;
        return rc;
    }
    if (t->data_location != 0) return tensor_fail(p, t, ONNXZIP_EPROTO, "unknown data_location value");
    if (t->has_raw) { /* inline or not, readers will check it: fail here, naming the input */
        int rc = check_size(p, t, t->raw.len);
        if (rc || keep_inline || t->raw.len < o->size_threshold) return rc;
        *s = (payload){ .fd = p->fd, .offset = (uint64_t)(t->raw.p - p->base), .size = t->raw.len };
        *d = MOVE;
        return 0;
    }
    if (keep_inline || !t->has_typed || (o->flags & ONNXZIP_PACK_KEEP_TYPED)) return 0;
    if (oz_typed_size(t, p->in_path, &s->size)) return 0; /* strings, odd fields: they stay as they are */
    if (s->size < o->size_threshold) return 0;
    *d = MOVE; /* memory filled by load_payload() */
    return check_size(p, t, s->size);
}

/* Brings payloads that are not a file range of the input into memory. */
static int load_payload(pack *p, const oz_tensor_info *t, payload *s, decision d)
{
    if (d == MOVE && s->fd >= 0) return 0;
    free(p->scratch);
    if (!(p->scratch = malloc(s->size ? (size_t)s->size : 1))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    s->mem = p->scratch;
    if (d == MOVE) return oz_typed_convert(t, p->in_path, p->scratch);
    for (uint64_t got = 0; got < s->size;) { /* INLINE: a small external payload */
        ssize_t k = oz_sys_pread(s->fd, p->scratch + got, (size_t)(s->size - got), (int64_t)(s->offset + got));
        if (k <= 0) return tensor_fail(p, t, ONNXZIP_EIO, "cannot read its external data");
        got += (uint64_t)k;
    }
    return 0;
}

static int read_at(const payload *s, uint64_t at, uint8_t *buf, size_t n)
{
    if (s->fd < 0) {
        memcpy(buf, s->mem + at, n);
        return 0;
    }
    for (size_t got = 0; got < n;) {
        ssize_t k = oz_sys_pread(s->fd, buf + got, n - got, (int64_t)(s->offset + at + got));
        if (k <= 0) return oz_err_errno(k ? errno : 0, ONNXZIP_EIO, -1, NULL, "cannot read a payload: %s", k ? strerror(errno) : "end of file");
        got += (size_t)k;
    }
    return 0;
}

static int hash_payload(const payload *s, uint8_t *buf, uint64_t *hash)
{
    if (s->fd < 0) {
        *hash = XXH3_64bits(s->mem, (size_t)s->size);
        return 0;
    }
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    for (uint64_t at = 0; at < s->size; at += CMP_CHUNK) {
        size_t n = s->size - at < CMP_CHUNK ? (size_t)(s->size - at) : CMP_CHUNK;
        int rc = read_at(s, at, buf, n);
        if (rc) return rc;
        XXH3_64bits_update(&st, buf, n);
    }
    *hash = XXH3_64bits_digest(&st);
    return 0;
}

static int same_bytes(const payload *a, const payload *b, uint8_t *buf, int *same)
{
    *same = a->size == b->size;
    for (uint64_t at = 0; *same && at < a->size; at += CMP_CHUNK) {
        size_t n = a->size - at < CMP_CHUNK ? (size_t)(a->size - at) : CMP_CHUNK;
        int rc = read_at(a, at, buf, n);
        if (!rc) rc = read_at(b, at, buf + CMP_CHUNK, n);
        if (rc) return rc;
        *same = !memcmp(buf, buf + CMP_CHUNK, n);
    }
    return 0;
}

/* ONNXZIP_PACK_DEDUP: the entry already holding these bytes, if any. */
static int find_duplicate(pack *p, const payload *s, uint64_t *hash, const char **entry)
{
    *entry = NULL;
    uint8_t *buf = malloc(2 * CMP_CHUNK);
    if (!buf) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int rc = hash_payload(s, buf, hash);
    for (size_t i = 0; !rc && i < p->seen->n && !*entry; i++) {
        const stored *e = &p->seen->v[i];
        int same = 0;
        if (e->hash == *hash && oz_path_dir_len(e->entry, strlen(e->entry)) == p->prefix_len &&
            !memcmp(e->entry, p->prefix, p->prefix_len) && !(rc = same_bytes(&e->src, s, buf, &same)) && same)
            *entry = e->entry;
    }
    free(buf);
    return rc;
}

static int remember(pack *p, const payload *s, uint64_t hash)
{
    oz_pack_seen *t = p->seen;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        stored *n = realloc(t->v, cap * sizeof *n);
        if (!n) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        t->v = n;
        t->cap = cap;
    }
    stored *e = &t->v[t->n++];
    *e = (stored){ .hash = hash, .src = *s };
    if (s->fd < 0 && s->mem == p->scratch) { /* take ownership of converted data */
        e->owned = p->scratch;
        p->scratch = NULL;
    }
    memcpy(e->entry, p->entry, sizeof e->entry);
    return 0;
}

static int choose_name(pack *p, const oz_tensor_info *t)
{
    char tensor_name[256];
    size_t n = t->name.len < sizeof tensor_name - 1 ? t->name.len : sizeof tensor_name - 1;
    memcpy(tensor_name, t->name.p, n);
    tensor_name[n] = '\0';
    for (size_t i = 0; i < n; i++) /* spec 7.2 maps a NUL like any other byte; the mapping takes a C string */
        if (!tensor_name[i]) tensor_name[i] = '_';
    memcpy(p->entry, p->prefix, p->prefix_len); /* a package model's entries lie in its directory */
    for (unsigned k = 0;; k++) {
        int rc = onnxzip_entry_name_for(tensor_name, k, p->entry + p->prefix_len, sizeof p->entry - p->prefix_len);
        if (rc < 0) return rc;
        if (!oz_writer_name_taken(p->w, p->entry)) return 0;
    }
}

static int move_payload(pack *p, const oz_tensor_info *t, const payload *s, oz_rewrite *rw)
{
    uint64_t hash = 0;
    const char *dup = NULL;
    int dedup = (p->opts->flags & ONNXZIP_PACK_DEDUP) != 0;
    int rc = dedup ? find_duplicate(p, s, &hash, &dup) : 0;
    if (rc) return rc;
    if (!dup) {
        if ((rc = choose_name(p, t))) return rc;
        rc = s->fd >= 0 ? onnxzip_writer_add_file_range(p->w, p->entry, s->fd, s->offset, s->size)
                        : onnxzip_writer_add_memory(p->w, p->entry, s->mem, s->size);
        if (!rc && dedup) rc = remember(p, s, hash);
        if (rc) return rc;
        dup = p->entry;
        p->done += s->size;
        if (p->opts->progress) p->opts->progress(p->opts->progress_user, p->done, p->total);
    }
    *rw = (oz_rewrite){ .action = OZ_EXTERNAL, .location = dup + p->prefix_len }; /* relative to the model */
    return 0;
}

/* Where a package model's external tensor was before packing (spec 19.4). */
static int note_origin(pack *p, const oz_tensor_info *t, const payload *s, uint64_t ordinal)
{
    if (!p->package || t->data_location != 1 || !p->ext_open) return 0;
    size_t f = 0;
    while (f < p->ext.n && p->ext.files[f].fd != s->fd) f++;
    if (f == p->ext.n) return 0;
    char item[64];
    int k = snprintf(item, sizeof item, "%s%llu:%zu:%llu", p->origin.len ? "," : "", (unsigned long long)ordinal, f,
                     (unsigned long long)s->offset);
    return oz_buf_append(&p->origin, item, (size_t)k);
}

static int on_tensor(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    pack *p = ctx;
    payload s;
    decision d;
    uint64_t ordinal = p->ordinal++;
    int rc = classify(p, t, &s, &d);
    if (rc || d == KEEP) return rc;
    if (!p->w) { /* measuring pass: only the total for progress reports */
        p->total += d == MOVE ? s.size : 0;
        return 0;
    }
    if ((rc = note_origin(p, t, &s, ordinal))) return rc;
    if ((rc = load_payload(p, t, &s, d))) return rc;
    if (d == MOVE) return move_payload(p, t, &s, rw);
    *rw = (oz_rewrite){ .action = OZ_INLINE, .data = s.mem, .size = s.size };
    return 0;
}

int oz_pack_inputs(const pack *p, oz_input **in, size_t *n)
{
    *n = 1 + (p->ext_open ? p->ext.n : 0);
    if (!(*in = malloc(*n * sizeof **in))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int rc = oz_input_fd(&(*in)[0], p->fd, "the input model", NULL, p->in_path, NULL);
    for (size_t i = 1; !rc && i < *n; i++) {
        const oz_extfile *f = &p->ext.files[i - 1];
        rc = oz_input_fd(&(*in)[i], f->fd, "the external data file", p->ext.dir, f->location, f->tensor);
    }
    if (rc) free(*in);
    return rc;
}

int oz_pack_measure(pack *p)
{
    oz_walk walk = { .visit = on_tensor, .ctx = p, .path = p->in_path, .base = p->base };
    p->ordinal = 0;
    return oz_walk_model(&walk, p->base, (size_t)p->size);
}

int oz_pack_emit(pack *p, onnxzip_writer *w, oz_buf *model)
{
    oz_walk walk = { .visit = on_tensor, .ctx = p, .path = p->in_path, .base = p->base, .out = model };
    p->w = w;
    p->ordinal = 0;
    p->origin.len = 0;
    int rc = oz_walk_model(&walk, p->base, (size_t)p->size);
    p->w = NULL;
    return rc;
}

static int map_model(pack *p)
{
    oz_stat st = { 0 };
    if (oz_sys_fstat(p->fd, &st) || st.kind != OZ_KIND_REG)
        return oz_err_not_regular(p->in_path, st.kind);
    if (st.size == 0) return oz_err(ONNXZIP_EPROTO, -1, "%s: empty file, not an ONNX model", p->in_path);
    void *base = oz_sys_map(p->fd, 0, st.size);
    if (!base) return oz_err_map(p->in_path, st.size);
    p->base = base;
    p->size = st.size;
    if (oz_looks_like_zip(p->base, st.size))
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: already a zip archive; pack takes a classic .onnx model "
                      "(use repack to realign an archive)", p->in_path);
    return 0;
}

int oz_pack_open(pack **out, const char *in_path, const onnxzip_pack_options *opts, oz_pack_seen *seen,
                 const char *prefix)
{
    pack *p = calloc(1, sizeof *p);
    if (!(*out = p)) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    *p = (pack){ .opts = opts, .in_path = in_path, .fd = -1, .package = prefix != NULL,
                 .prefix = prefix ? prefix : "", .prefix_len = prefix ? strlen(prefix) : 0 };
    p->seen = seen ? seen : &p->own_seen;
    if ((p->fd = oz_sys_open_read(in_path)) < 0)
        return oz_err_sys(ONNXZIP_EIO, -1, in_path, "%s: cannot open: %s", in_path, strerror(errno));
    return map_model(p);
}

const oz_extdata *oz_pack_extdata(const pack *p)
{
    return p->ext_open ? &p->ext : NULL;
}

const char *oz_pack_origin(pack *p)
{
    return oz_buf_append(&p->origin, "", 1) ? NULL : (p->origin.len--, (const char *)p->origin.p);
}

void oz_pack_seen_free(oz_pack_seen *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->v[i].owned);
    free(t->v);
    memset(t, 0, sizeof *t);
}

oz_pack_seen *oz_pack_seen_new(void)
{
    return calloc(1, sizeof(oz_pack_seen));
}

void oz_pack_close(pack *p)
{
    if (!p) return;
    if (p->base) oz_sys_unmap(p->base, p->size);
    if (p->fd >= 0) oz_sys_close(p->fd);
    if (p->ext_open) oz_extdata_free(&p->ext);
    oz_pack_seen_free(&p->own_seen);
    oz_buf_free(&p->origin);
    free(p->scratch);
    free(p);
}
