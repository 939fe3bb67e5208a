/* onnxzip_unpack(): an archive back to classic ONNX. The model is rewritten
 * with the walker (EXTERNAL references to data files, or inline raw_data);
 * data files are streamed from the mapping. Everything is built in a private
 * temporary directory inside the target directory and renamed into place,
 * the model last. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "convert/unpack_files.h"
#include "convert/unpack_origin.h"
#include "convert/unpack_safetensors.h"
#include "common/atomic_file.h"
#include "common/mkdirs.h"
#include "onnx/onnx_walk.h"
#include "read/archive.h"
#include "common/outputs.h"
#include "common/sha1.h"
#include "common/sys.h"

#define MAX_ALIGN 65536u

void onnxzip_unpack_options_init(onnxzip_unpack_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->layout = ONNXZIP_UNPACK_SINGLE;
    opts->alignment = 4096;
    opts->size_threshold = 1024;
}

static const uint8_t zeros[MAX_ALIGN]; /* padding is always shorter */

/* Tensors that stay inline rather than go to a data file. */
static int stays_inline(const unpack *u, const onnxzip_tensor *v)
{
    return u->o->layout == ONNXZIP_UNPACK_INLINE || v->nbytes < u->o->size_threshold;
}

static int is_plain_name(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* Windows device names (CON, PRN, AUX, NUL, COM0-9, LPT0-9), with any extension. */
static int is_device_name(const char *s)
{
    static const char *const names[] = { "con", "prn", "aux", "nul", "com", "lpt" };
    size_t stem = strcspn(s, ".");
    if (stem != 3 && stem != 4) return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int match = oz_ascii_lower(s[0]) == names[i][0] && oz_ascii_lower(s[1]) == names[i][1] &&
                    oz_ascii_lower(s[2]) == names[i][2];
        if (match) return stem == 3 ? i < 4 : i >= 4 && s[3] >= '0' && s[3] <= '9';
    }
    return 0;
}

static int check_options(const onnxzip_unpack_options *o)
{
    char shown[OZ_PRINTABLE_CAP];
    if ((unsigned)o->layout > ONNXZIP_UNPACK_ORIGINAL)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_unpack: unknown layout %d", (int)o->layout);
    if (o->flags & ~(uint32_t)(ONNXZIP_UNPACK_CHECKSUM | ONNXZIP_UNPACK_NO_SYNC))
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_unpack: unknown flags 0x%x", o->flags);
    if (o->max_shard_size && o->layout != ONNXZIP_UNPACK_SAFETENSORS)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_unpack: max_shard_size applies to the safetensors layout only");
    if (o->layout != ONNXZIP_UNPACK_SINGLE && o->layout != ONNXZIP_UNPACK_SAFETENSORS) return 0;
    uint32_t al = o->alignment;
    if (al < 1 || al > MAX_ALIGN || (al & (al - 1)))
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_unpack: alignment %u is not a power of two between 1 and 65536",
                      al);
    if (o->location && !is_plain_name(o->location))
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_unpack: data file name '%s' is not a plain file name in the "
                      "model's directory (no '/', not '.' or '..', not empty)",
                      oz_printable(o->location, strlen(o->location), shown, sizeof shown));
    return 0;
}

/* Refuses a target that is the archive or not a regular file (outputs.h). */
static int check_target(const unpack *u, const char *name)
{
    oz_input in = { .dev = u->a->st_dev, .ino = u->a->st_ino, .role = "the archive", .path = u->archive_path };
    return oz_output_check(u->dirfd, u->dir, name, &in, 1);
}

/* The model and every data file, before anything is written and again
 * before the first rename. */
static int check_targets(const unpack *u)
{
    int rc = check_target(u, u->name);
    for (size_t i = 0; !rc && i < u->nfiles; i++) rc = check_target(u, u->files[i]);
    return rc;
}

/* Splits model_path, opens the archive, creates the model's directory if
 * missing (removed again by cleanup() on failure) and opens it. */
static int prepare(unpack *u)
{
    const char *slash = oz_last_sep(u->model_path);
    u->name = slash ? slash + 1 : u->model_path;
    if (!is_plain_name(u->name))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the model path must end in a file name", u->model_path);
    size_t n = slash ? (size_t)(slash - u->model_path) : 0;
    u->dir = !slash ? strdup(".") : n ? oz_strndup(u->model_path, n) : strdup("/");
    if (!u->dir) return oz_unpack_nomem();
    int rc = onnxzip_open_model(u->archive_path, u->o->model, 0, &u->a);
    if (rc) return rc;
    if ((u->arcfd = oz_sys_open_read(u->archive_path)) < 0)
        return oz_err_sys(ONNXZIP_EIO, -1, u->archive_path, "%s: cannot open: %s", u->archive_path, strerror(errno));
    if (onnxzip_archive_layout(u->a) != ONNXZIP_LAYOUT_ARCHIVE)
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: not an onnxzip archive but a classic ONNX model; there is "
                      "nothing to unpack", u->archive_path);
    if ((rc = oz_verify_model_fields(u->a))) return rc; /* no classic model that verify refuses */
    if ((rc = oz_mkdirs_parent(u->model_path, &u->made))) return rc;
    if ((u->dirfd = oz_sys_dir_fd(u->dir)) < 0)
        return oz_err_sys(ONNXZIP_EIO, -1, u->dir, "%s: the model's directory %s cannot be opened: %s", u->model_path, u->dir,
                      strerror(errno));
    return 0;
}

/* The distinct entries, in order of first reference; the payload total. */
static int collect(unpack *u)
{
    const oz_tensors *ts = &u->a->tensors;
    if (u->o->layout == ONNXZIP_UNPACK_ORIGINAL) { /* unpack_origin.c places each tensor */
        size_t cap = 1;
        for (size_t i = 0; i < u->a->pkg.n; i++) cap += u->a->pkg.models[i].n_data;
        if (!(u->files = calloc(cap, sizeof *u->files))) return oz_unpack_nomem();
        for (size_t i = 0; i < ts->n; i++) u->total += ts->v[i].storage == ONNXZIP_STORAGE_ENTRY ? ts->v[i].nbytes : 0;
        return 0;
    }
    size_t cap = u->a->zip.n + 1; /* distinct entries, data files: at most one per entry */
    size_t files = cap + (u->o->layout == ONNXZIP_UNPACK_SAFETENSORS ? ts->n + 1 : 0); /* + shards, index */
    if (!(u->ents = calloc(cap, sizeof *u->ents)) || !(u->files = calloc(files, sizeof *u->files)))
        return oz_unpack_nomem();
    for (size_t i = 0; i < ts->n; i++) {
        const onnxzip_tensor *v = &ts->v[i];
        if (v->storage != ONNXZIP_STORAGE_ENTRY) continue;
        if (stays_inline(u, v)) { /* every inline tensor gets its own copy */
            u->total = u->total + v->nbytes < u->total ? UINT64_MAX : u->total + v->nbytes;
            continue;
        }
        if (u->o->layout == ONNXZIP_UNPACK_SAFETENSORS) {
            int taken = oz_st_take(u, v);
            if (taken) { /* 1, or an error */
                if (taken < 0) return taken;
                continue;
            }
        }
        size_t len = strlen(v->entry);
        int rc = oz_strmap_put(&u->by_entry, v->entry, len, (uint32_t)u->nents, NULL);
        if (rc < 0) return rc;
        if (rc == 1) continue;
        const oz_zentry *z = oz_zip_find(&u->a->zip, v->entry, len);
        u->ents[u->nents++].e = &z->pub;
        u->total += z->pub.size;
    }
    return 0;
}

static int plan_single(unpack *u)
{
    if (!u->nents) return 0; /* no data file */
    char shown[OZ_PRINTABLE_CAP];
    size_t n = strlen(u->name) + sizeof ".data";
    if (!(u->location = malloc(u->o->location ? strlen(u->o->location) + 1 : n))) return oz_unpack_nomem();
    if (u->o->location)
        strcpy(u->location, u->o->location);
    else
        snprintf(u->location, n, "%s.data", u->name);
    if (oz_unpack_same_folded(u->location, u->name))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the data file name '%s' is the model's own name", u->model_path,
                      oz_printable(u->location, strlen(u->location), shown, sizeof shown));
    /* Empty entries go last, at the end of the file: onnx <= 1.13 reads a
     * "length" of 0 as "to the end of the file". */
    uint64_t off = 0, al = u->o->alignment;
    for (int empty = 0; empty < 2; empty++)
        for (size_t i = 0; i < u->nents; i++) {
            if ((u->ents[i].e->size == 0) != empty) continue;
            off = (off + al - 1) & ~(al - 1);
            u->ents[i].file_off = off;
            u->ents[i].file = u->location;
            off += u->ents[i].e->size;
        }
    u->files[u->nfiles++] = u->location;
    return 0;
}

static int name_taken(const unpack *u, const char *s)
{
    uint32_t k;
    return oz_strmap_get(&u->taken, s, strlen(s), &k) == 0;
}

/* A file name for an entry that cannot keep its own: "CON" -> "CON_", then
 * "_2", "_3"... until unique ignoring case. */
static int rename_entry(unpack *u, ent *x)
{
    const char *name = x->e->name;
    int n = strlen(name) > 240 ? 240 : (int)strlen(name);
    const char *dev = is_device_name(name) ? "_" : "";
    size_t cap = (size_t)n + 16;
    if (!(x->own = malloc(cap))) return oz_unpack_nomem();
    snprintf(x->own, cap, "%.*s%s", n, name, dev);
    for (unsigned k = 2; name_taken(u, x->own); k++) snprintf(x->own, cap, "%.*s%s_%u", n, name, dev, k);
    x->file = x->own;
    return oz_strmap_put(&u->taken, x->own, strlen(x->own), 0, NULL) < 0 ? ONNXZIP_ENOMEM : 0;
}

/* Entry names are C identifiers unique ignoring case, so they are file names
 * as they are, but for Windows device names and the model's own name. */
static int plan_per_tensor(unpack *u)
{
    int rc = oz_strmap_put(&u->taken, u->name, strlen(u->name), 0, NULL);
    for (size_t i = 0; rc >= 0 && i < u->nents; i++) {
        ent *x = &u->ents[i];
        if (is_device_name(x->e->name) || name_taken(u, x->e->name)) continue;
        x->file = x->e->name;
        rc = oz_strmap_put(&u->taken, x->file, strlen(x->file), 0, NULL);
    }
    for (size_t i = 0; rc >= 0 && i < u->nents; i++)
        if (!u->ents[i].file) rc = rename_entry(u, &u->ents[i]);
    for (size_t i = 0; rc >= 0 && i < u->nents; i++) u->files[u->nfiles++] = u->ents[i].file;
    return rc < 0 ? rc : 0;
}

static int too_big(unpack *u, uint64_t size, const char *what)
{
    return oz_err(ONNXZIP_ELIMIT, -1, "%s: the inline model would %s %llu bytes, over protobuf's limit of 2 GiB - 1 "
                  "(%llu bytes) for one serialized message; use the single-file or per-tensor layout "
                  "(onnxzip unpack --layout single)", onnxzip_archive_path(u->a), what, (unsigned long long)size,
                  (unsigned long long)OZ_MAX_MODEL);
}

static int plan(unpack *u)
{
    int rc = collect(u);
    if (!rc && u->o->layout == ONNXZIP_UNPACK_INLINE) /* before anything big is built */
        rc = u->total > OZ_MAX_MODEL - u->a->model_len ? too_big(u, u->a->model_len + u->total, "be about") : 0;
    else if (!rc && u->o->layout == ONNXZIP_UNPACK_ORIGINAL)
        rc = oz_og_plan(u);
    else if (!rc && u->o->layout == ONNXZIP_UNPACK_SAFETENSORS) {
        rc = plan_single(u); /* the side file, then the safetensors files */
        if (!rc) rc = oz_st_plan(u);
    }
    else if (!rc)
        rc = u->o->layout == ONNXZIP_UNPACK_SINGLE ? plan_single(u) : plan_per_tensor(u);
    return rc ? rc : check_targets(u);
}

static int desync(const unpack *u, const oz_tensor_info *t)
{
    char name[OZ_PRINTABLE_CAP];
    oz_printable(t->name.p, t->name.len, name, sizeof name);
    return oz_err(ONNXZIP_EPROTO, -1, "%s: tensor '%s': the model walk disagrees with the tensor index (internal "
                  "error)", onnxzip_archive_path(u->a), name);
}

static int on_tensor(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    unpack *u = ctx;
    const onnxzip_tensor *v = oz_tensors_of(&u->a->tensors, u->a->model, t);
    if (!v) return desync(u, t);
    u->seen++;
    if ((v->storage == ONNXZIP_STORAGE_ENTRY) != (t->data_location == 1)) return desync(u, t);
    if (v->storage != ONNXZIP_STORAGE_ENTRY) return 0;
    if (u->o->layout == ONNXZIP_UNPACK_ORIGINAL) {
        oz_unpack_progress(u, v->nbytes);
        return oz_og_ref(u, v, u->seen - 1, rw);
    }
    if (stays_inline(u, v)) {
        *rw = (oz_rewrite){ .action = OZ_INLINE, .data = v->data, .size = v->nbytes };
        oz_unpack_progress(u, v->nbytes);
        return 0;
    }
    if (u->o->layout == ONNXZIP_UNPACK_SAFETENSORS && oz_st_ref(u, v, rw)) {
        if (u->o->flags & ONNXZIP_UNPACK_CHECKSUM) {
            oz_sha1_hex(v->data, v->nbytes, u->checksum);
            rw->checksum = u->checksum;
        }
        return 0;
    }
    uint32_t k;
    if (oz_strmap_get(&u->by_entry, v->entry, strlen(v->entry), &k)) return desync(u, t);
    const ent *x = &u->ents[k];
    uint64_t part = v->file_offset - x->e->data_offset;
    /* SINGLE (and the side file): always offset and length; PER_TENSOR: only for part of an entry */
    int keys = u->o->layout != ONNXZIP_UNPACK_PER_TENSOR || part || v->nbytes != x->e->size;
    *rw = (oz_rewrite){ .action = OZ_EXTERNAL, .location = x->file, .has_offset = keys, .has_length = keys,
                        .offset = x->file_off + part, .length = v->nbytes };
    if (u->o->flags & ONNXZIP_UNPACK_CHECKSUM) {
        oz_sha1_hex(v->data, v->nbytes, u->checksum);
        rw->checksum = u->checksum;
    }
    return 0;
}

static int build_model(unpack *u, oz_buf *out)
{
    const onnxzip_archive *a = u->a;
    oz_walk w = { .visit = on_tensor, .ctx = u, .out = out, .path = a->path, .base = a->model,
                  .base_offset = (uint64_t)(a->model - a->base) };
    int rc = oz_walk_model(&w, a->model, a->model_len);
    if (!rc && u->seen != a->tensors.n)
        rc = oz_err(ONNXZIP_EPROTO, -1, "%s: the model walk met %zu tensors, the index has %zu (internal error)",
                    a->path, u->seen, a->tensors.n);
    if (!rc && out->len > OZ_MAX_MODEL)
        rc = u->o->layout == ONNXZIP_UNPACK_INLINE ? too_big(u, out->len, "be")
             : oz_err(ONNXZIP_ELIMIT, -1, "%s: the rewritten model is %zu bytes, over protobuf's 2 GiB - 1 limit",
                      a->path, out->len);
    return rc;
}

static int copy_payload(unpack *u, int fd, const char *name, const ent *x)
{
    return oz_unpack_copy(u, fd, name, x->e->data_offset, x->e->size, x->e->name);
}

static int write_single(unpack *u)
{
    int fd, rc = oz_unpack_create(u, u->location, &fd);
    if (rc) return rc;
    uint64_t pos = 0;
    for (int empty = 0; empty < 2; empty++) /* in file order, as plan_single placed them */
        for (size_t i = 0; !rc && i < u->nents; i++) {
            const ent *x = &u->ents[i];
            if ((x->e->size == 0) != empty) continue;
            rc = oz_unpack_write(u, fd, u->location, zeros, x->file_off - pos, 0);
            if (!rc) rc = copy_payload(u, fd, u->location, x);
            pos = x->file_off + x->e->size;
        }
    return oz_unpack_close(u, fd, u->location, rc);
}

static int write_data(unpack *u)
{
    if (u->o->layout == ONNXZIP_UNPACK_ORIGINAL) return oz_og_write(u);
    if (u->o->layout == ONNXZIP_UNPACK_SAFETENSORS) {
        int rc = u->nents ? write_single(u) : 0;
        return rc ? rc : oz_st_write(u);
    }
    if (u->o->layout == ONNXZIP_UNPACK_SINGLE) return u->nents ? write_single(u) : 0;
    for (size_t i = 0; i < u->nents; i++) {
        const ent *x = &u->ents[i];
        int fd, rc = oz_unpack_create(u, x->file, &fd);
        if (rc) return rc;
        rc = oz_unpack_close(u, fd, x->file, copy_payload(u, fd, x->file, x));
        if (rc) return rc;
    }
    return 0;
}

static int write_model(unpack *u, const oz_buf *m)
{
    int fd, rc = oz_unpack_create(u, u->name, &fd);
    if (rc) return rc;
    return oz_unpack_close(u, fd, u->name, oz_unpack_write(u, fd, u->name, m->p ? m->p : zeros, m->len, 0));
}

/* Creates and locks (flock on the directory, spec 12.2) the temporary
 * directory, after removing those that dead unpacks to the same model name
 * left (see atomic_file.h). */
static int make_tmpdir(unpack *u)
{
    size_t cap = strlen(u->dir) + 240;
    char prefix[240];
    snprintf(prefix, sizeof prefix, ".%.200s.unpack-", u->name);
    oz_tmp_sweep(u->dirfd, prefix, OZ_TMP_DIR_TAIL, 1);
    if (!(u->tmp = malloc(cap))) return oz_unpack_nomem();
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(u->tmp, cap, "%s/%s", u->dir, prefix);
        char *base = strrchr(u->tmp, '/') + 1, *tail = base + strlen(base);
        uint64_t r = oz_sys_nonce();
        for (int i = 0; i < OZ_TMP_DIR_TAIL; i++, r /= 62) /* as mkdtemp's XXXXXX */
            *tail++ = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[r % 62];
        *tail = '\0';
        if (oz_sys_mkdir_at(u->dirfd, base)) {
            if (errno == EEXIST) continue;
            int rc = oz_err_sys(ONNXZIP_EIO, -1, u->dir, "%s: cannot create a temporary directory in %s: %s", u->model_path,
                            u->dir, strerror(errno));
            free(u->tmp);
            u->tmp = NULL;
            return rc;
        }
        u->tmpfd = oz_sys_dir_fd_at(u->dirfd, base);
        if (u->tmpfd < 0) return oz_err_sys(ONNXZIP_EIO, -1, u->tmp, "%s: cannot open: %s", u->tmp, strerror(errno));
        if (!oz_tmp_claim(u->dirfd, base, u->tmpfd)) return 0;
        oz_sys_close(u->tmpfd); /* swept before we locked it: try another name */
        u->tmpfd = -1;
    }
    free(u->tmp);
    u->tmp = NULL;
    return oz_err(ONNXZIP_EIO, -1, "%s: cannot create a temporary directory in %s", u->model_path, u->dir);
}

/* Data files first, the model last, so that a model in DIR never refers to
 * data that is not there. A failure between two renames leaves the data files
 * already renamed in DIR (replacing older files of the same names) but no new
 * model: the only way DIR changes on failure. */
static int commit(unpack *u)
{
    for (size_t i = 0; i < u->nfiles; i++)
        if (oz_sys_rename_at(u->tmpfd, u->files[i], u->dirfd, u->files[i]))
            return oz_unpack_io_err(u->dir, u->files[i], "cannot rename the data file into place");
    if (oz_sys_rename_at(u->tmpfd, u->name, u->dirfd, u->name))
        return oz_unpack_io_err(u->dir, u->name, "cannot rename the model into place");
    return 0;
}

/* Removes the temporary directory and whatever is still in it; after a
 * success syncs DIR, so that the renames are durable. */
static void cleanup(unpack *u, int ok)
{
    if (u->tmpfd >= 0) {
        for (size_t i = 0; i < u->nfiles; i++) oz_sys_unlink_at(u->tmpfd, u->files[i], 0);
        oz_sys_unlink_at(u->tmpfd, u->name, 0);
    }
    if (u->tmp) oz_sys_unlink_at(OZ_AT_CWD, u->tmp, 1);
    if (u->tmpfd >= 0) oz_sys_close(u->tmpfd); /* after the rmdir: the lock keeps sweepers away until then */
    if (u->dirfd >= 0) {
        if (ok && u->sync) oz_sys_sync(u->dirfd);
        oz_sys_close(u->dirfd);
    }
    if (ok) /* closed first: Windows removes no directory open here */
        oz_mkdirs_keep(&u->made, u->sync);
    else
        oz_mkdirs_undo(&u->made);
    for (size_t i = 0; u->ents && i < u->nents; i++) free(u->ents[i].own);
    free(u->ents);
    free((void *)u->files);
    free(u->location);
    oz_st_free(u);
    oz_og_free(u);
    free(u->tmp);
    free(u->dir);
    oz_strmap_free(&u->by_entry);
    oz_strmap_free(&u->taken);
    onnxzip_close(&u->a);
    if (u->arcfd >= 0) oz_sys_close(u->arcfd);
}

static int run(unpack *u)
{
    oz_buf model = { 0 };
    int rc = prepare(u);
    if (!rc) rc = plan(u);
    if (!rc) rc = build_model(u, &model);
    if (!rc) rc = make_tmpdir(u);
    if (!rc) rc = write_data(u);
    if (!rc) rc = write_model(u, &model);
    oz_buf_free(&model);
    if (!rc) rc = check_targets(u); /* once more: the paths may have changed while writing */
    if (!rc) rc = commit(u);
    if (!rc && u->o->progress) u->o->progress(u->o->progress_user, u->done, u->total);
    return rc;
}

int onnxzip_unpack(const char *archive_path, const char *model_path, const onnxzip_unpack_options *opts)
{
    if (!archive_path || !model_path) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_unpack: NULL path");
    onnxzip_unpack_options def;
    onnxzip_unpack_options_init(&def);
    unpack u = { .o = opts ? opts : &def, .archive_path = archive_path, .model_path = model_path, .dirfd = -1,
                 .tmpfd = -1, .arcfd = -1 };
    u.sync = !(u.o->flags & ONNXZIP_UNPACK_NO_SYNC);
    oz_strmap_init(&u.by_entry, 0);
    oz_strmap_init(&u.taken, 1);
    int rc = check_options(u.o);
    if (!rc) rc = run(&u);
    cleanup(&u, rc == 0);
    return rc;
}
