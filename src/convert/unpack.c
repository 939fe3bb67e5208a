/* onnxzip_unpack(): an archive back to classic ONNX. The model is rewritten
 * with the walker (EXTERNAL references to data files, or inline raw_data);
 * data files are streamed from the mapping. Everything is built in a private
 * temporary directory inside the target directory and renamed into place,
 * the model last. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "convert/unpack_files.h"
#include "convert/unpack_safetensors.h"
#include "common/atomic_file.h"
#include "common/mkdirs.h"
#include "read/archive.h"
#include "common/outputs.h"
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

static const uint8_t zeros[MAX_ALIGN]; /* written in pieces of at most this */

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
    if (o->location && !oz_unpack_plain_name(o->location))
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
    if (!oz_unpack_plain_name(u->name))
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

/* A data file's segments, one after the other. */
static int write_segments(unpack *u, const oz_ufile *f)
{
    int fd, rc = oz_unpack_create(u, f->name, &fd);
    if (rc) return rc;
    for (size_t i = 0; i < f->n && !rc; i++) {
        const onnxzip_segment *g = &f->seg[i];
        for (uint64_t n = g->length; g->kind == ONNXZIP_SEGMENT_ZEROS && n && !rc;) {
            uint64_t k = n < sizeof zeros ? n : sizeof zeros;
            rc = oz_unpack_write(u, fd, f->name, zeros, k, 0);
            n -= k;
        }
        if (g->kind == ONNXZIP_SEGMENT_ARCHIVE)
            rc = oz_unpack_copy(u, fd, f->name, g->offset, g->length, u->a->zip.entries[g->entry].pub.name);
        else if (g->kind == ONNXZIP_SEGMENT_BYTES)
            rc = oz_unpack_write(u, fd, f->name, g->bytes, g->length, 0);
    }
    return oz_unpack_close(u, fd, f->name, rc);
}

/* Every data file planned (a data file without a tensor is written empty),
 * then the safetensors files. */
static int write_data(unpack *u)
{
    int rc = 0;
    for (size_t i = 0; i < u->nout && !rc; i++) rc = write_segments(u, &u->out[i]);
    return !rc && u->o->layout == ONNXZIP_UNPACK_SAFETENSORS ? oz_st_write(u) : rc;
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
    oz_st_free(u);
    free(u->tmp);
    free(u->dir);
    oz_unpack_plan_free(u);
    onnxzip_close(&u->a);
    if (u->arcfd >= 0) oz_sys_close(u->arcfd);
}

static int run(unpack *u)
{
    oz_buf model = { 0 };
    int rc = prepare(u);
    if (!rc) rc = oz_unpack_plan(u);
    if (!rc) rc = check_targets(u);
    if (!rc) rc = oz_unpack_build(u, &model);
    if (!rc) rc = oz_unpack_segments(u);
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
                 .tmpfd = -1, .arcfd = -1, .st_take = oz_st_take, .st_plan = oz_st_plan, .st_ref = oz_st_ref };
    u.sync = !(u.o->flags & ONNXZIP_UNPACK_NO_SYNC);
    oz_unpack_plan_init(&u);
    int rc = check_options(u.o);
    if (!rc) rc = run(&u);
    cleanup(&u, rc == 0);
    return rc;
}
