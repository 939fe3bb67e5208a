/* onnxzip_update_model(): replace __MODEL_PROTO in place (spec §15, "Model
 * update"). Weights are never read, rewritten or moved. Every state the file
 * passes through is a valid archive with the old or the new model, for
 * onnxzip and for zip readers that know no update trailer:
 *
 *   0. reserve   fallocate(KEEP_SIZE) claims every block steps 1-4 will
 *                write, before the first byte changes: a full file system
 *                fails here, with the file untouched. Where fallocate is not
 *                supported, the gap before the appended tail is written with
 *                zeros in step 2 instead, so that step 4 allocates nothing.
 *   1. shadow    A copy of the old central directory and end records, its
 *                EOCD carrying the update trailer as its 24-byte comment, is
 *                written past where the new tail will end: its last page
 *                first, in one write within one page (that write extends the
 *                file), then the rest below it. onnxzip reads the trailer
 *                (the old end), zip readers the shadow: both the old archive.
 *   2. append    The new tail — model entry, central directory, end records —
 *                is written after the old archive, below the shadow: unseen.
 *   3. flip      ftruncate() cuts the shadow off, atomically: the file now
 *                ends with the new end records; the old model, directory and
 *                end are dead space before the new model entry.
 *   4. compact   The same new tail, laid out for the position right after the
 *                last tensor entry, is written there (dead space: unseen).
 *   5. truncate  ftruncate() cuts the file after that copy, atomically: a
 *                plain archive with the new model and no dead space.
 *
 * Each step is followed by fsync, so power loss is covered as well as kill -9.
 * Failures (spec 15.6): steps 0-3 write only past the old end, so a failure
 * up to the flip's fsync is undone by cutting the file back to its old size:
 * byte-identical, and the update fails. Once the flip is durable the update
 * has succeeded: a failure in steps 4-5 leaves dead space, which every reader
 * skips and the next update removes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "common/sys.h"
#include "common/update_lock.h"
#include "read/archive.h"
#include "common/atomic_file.h"
#include "common/checksum.h"
#include "common/zip_format.h"
#include "write/zip_records.h"

#define PAGE 4096u

typedef struct update {
    const char *path;
    int fd;
    onnxzip_archive *a;
    const uint8_t *model;
    size_t size;
    uint32_t crc, align;
    uint64_t xxh3;
    oz_zentry *entries; /* the archive's entries, the model last */
    size_t n;
    uint64_t old_size; /* the file's size before the update: a rollback cuts back to it */
    int zero_fill;     /* fallocate unsupported: step 2 writes the gap with zeros */
} update;

static int io_fail(const update *u, const char *what)
{
    return oz_err_sys(ONNXZIP_EIO, -1, u->path, "%s: model update: %s: %s", u->path, what, strerror(errno));
}

static int pwrite_all(const update *u, const void *p, size_t n, uint64_t off)
{
    return oz_pwrite_full(u->fd, p, n, off) ? io_fail(u, "cannot write") : 0;
}

static int sync_file(const update *u)
{
    return oz_sys_sync(u->fd) ? io_fail(u, "cannot sync") : 0;
}

/* The tail for a model entry at `pos`: local header, model, central
 * directory, end records. Moves *pos forward when the alignment padding
 * would not fit one extra field (A = 65536): readers allow the gap. */
static int build_tail(update *u, uint64_t *pos, oz_buf *tail)
{
    const char *name = OZ_MODEL_NAME;
    uint64_t pad;
    while ((pad = oz_zip_padding(*pos, strlen(name), u->size, u->align)) + 6 + (u->size >= U32_MARK ? 20 : 0) >
           0xFFFF)
        *pos += 64;
    tail->len = 0;
    int rc = oz_buf_reserve(tail, ZIP_LOCAL_SIZE + strlen(name) + 26 + (size_t)pad + u->size);
    if (rc) return rc;
    size_t hlen = oz_zip_local(tail->p, name, u->size, *pos, (uint16_t)(u->align > 32768 ? 32768 : u->align),
                               (size_t)pad);
    oz_wr32(tail->p + LH_CRC, u->crc);
    tail->len = hlen;
    if ((rc = oz_buf_append(tail, u->model, u->size))) return rc;
    oz_zentry *m = &u->entries[u->n - 1];
    m->pub.header_offset = *pos;
    m->pub.data_offset = *pos + hlen;
    size_t cd_start = tail->len;
    for (size_t i = 0; i < u->n && !rc; i++) rc = oz_zip_central(tail, &u->entries[i]);
    if (!rc) rc = oz_zip_end(tail, u->n, tail->len - cd_start, *pos + cd_start);
    return rc;
}

/* 24 bytes: "OZUPDATE", u64 end of the valid archive, u32 format major,
 * u32 CRC-32 of the first 20 bytes (spec 15.2). */
static void build_trailer(uint8_t t[24], uint64_t archive_end)
{
    memcpy(t, "OZUPDATE", 8);
    oz_wr64(t + 8, archive_end);
    oz_wr32(t + 16, ONNXZIP_FORMAT_VERSION_MAJOR);
    oz_wr32(t + 20, (uint32_t)crc32(0, t, 20));
}

/* The shadow end for offset `at` (spec 15.2): the old central directory,
 * copied byte for byte (local header offsets unchanged: zip readers find the
 * old entries where they are), end records locating that copy, and the EOCD
 * comment: the 24-byte update trailer, so that the file's last 24 bytes are
 * the trailer for onnxzip and the comment for zip readers. */
static int build_shadow(const update *u, const uint8_t trailer[24], uint64_t at, oz_buf *sh)
{
    const oz_zip *z = &u->a->zip;
    sh->len = 0;
    int rc = oz_buf_append(sh, u->a->base + z->cd_offset, (size_t)z->cd_size);
    if (!rc) rc = oz_zip_end(sh, z->n, z->cd_size, at);
    if (!rc) oz_wr16(sh->p + sh->len - ZIP_EOCD_SIZE + 20, 24); /* Comment_Length */
    return rc ? rc : oz_buf_append(sh, trailer, 24);
}

/* Moves *at forward (at most a page) until the shadow's end records and
 * trailer lie within one page — the whole shadow when it fits one — so that
 * step 1's first write is atomic. Past 4 GiB the shadow needs zip64 end
 * records, which the old archive may lack: hence rebuilt each time. */
static int place_shadow(const update *u, const uint8_t trailer[24], uint64_t *at, oz_buf *sh)
{
    for (;;) {
        int rc = build_shadow(u, trailer, *at, sh);
        if (rc) return rc;
        uint64_t end = *at + sh->len, keep = sh->len <= PAGE ? sh->len : sh->len - u->a->zip.cd_size;
        if ((end - keep) / PAGE == (end - 1) / PAGE) return 0;
        *at += PAGE - (end - keep) % PAGE;
    }
}

static int copy_entries(update *u)
{
    const oz_zip *z = &u->a->zip;
    u->n = z->n;
    if (!(u->entries = malloc(z->n * sizeof *u->entries))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < z->n; i++)
        if (i != z->model_index) u->entries[k++] = z->entries[i];
    oz_zentry *m = &u->entries[k];
    *m = z->entries[z->model_index];
    m->pub.size = u->size;
    m->pub.crc32 = u->crc;
    m->pub.xxh3 = u->xxh3;
    m->pub.has_xxh3 = 1;
    uint32_t claim = m->align_claim; /* keep the archive's alignment */
    u->align = claim >= 64 && !(claim & (claim - 1)) ? claim : 64;
    return 0;
}

/* End of the last entry before the model: where the compacted tail goes. */
static uint64_t weights_end(const update *u)
{
    uint64_t end = 0;
    for (size_t i = 0; i + 1 < u->n; i++) {
        uint64_t e = u->entries[i].pub.data_offset + u->entries[i].pub.size;
        if (e > end) end = e;
    }
    return end;
}

/* Step 0. KEEP_SIZE: the file's size and bytes stay as they are; the blocks
 * are released by the truncation of step 5 or of a rollback. */
static int reserve(update *u, uint64_t from, uint64_t to)
{
    if (!oz_sys_reserve(u->fd, from, to - from)) return 0;
    if (errno == EOPNOTSUPP || errno == ENOSYS) {
        u->zero_fill = 1; /* e.g. NFS before 4.2, some FUSE file systems */
        return 0;
    }
    int e = errno;
    while (oz_sys_truncate(u->fd, u->old_size) && errno == EINTR) { /* frees what was claimed */
    }
    return oz_err_errno(e, ONNXZIP_EIO, -1, u->path, "%s: model update: cannot reserve the %llu bytes it needs: %s; the archive is "
                  "unchanged", u->path, (unsigned long long)(to - from), strerror(e));
}

/* The gap between the old end and the appended tail, for step 2 when no
 * reservation was made: written now, it cannot fail for space in step 4. */
static int write_zeros(const update *u, uint64_t from, uint64_t to)
{
    static const uint8_t zeros[65536];
    int rc = 0;
    for (uint64_t off = from; off < to && !rc; off += sizeof zeros)
        rc = pwrite_all(u, zeros, to - off < sizeof zeros ? (size_t)(to - off) : sizeof zeros, off);
    return rc;
}

/* Step 1, the shadow end at `at` (spec 15.4): the part in its last page
 * first, in one write within that page, so that a kill leaves either the old
 * end or a shadow EOCD with its trailer; then the rest (the CD copy) below.
 * Both under the update lock, as one step. */
static int write_shadow(const update *u, const oz_buf *sh, uint64_t at)
{
    uint64_t end = at + sh->len, page = (end - 1) / PAGE * PAGE, top = page > at ? page : at;
    oz_update_lock(u->fd, OZ_LOCK_EXCLUSIVE);
    int rc = pwrite_all(u, sh->p + (top - at), (size_t)(end - top), top);
    if (!rc && top > at) rc = pwrite_all(u, sh->p, (size_t)(top - at), at);
    oz_update_lock(u->fd, OZ_LOCK_UNLOCK);
    return rc ? rc : sync_file(u);
}

/* Steps 1-3: the new tail `t` at `p`, below the shadow `sh` at `at`; the flip
 * cuts the file at the tail's end. */
static int append_and_flip(const update *u, const oz_buf *t, uint64_t p, const oz_buf *sh, uint64_t at)
{
    int rc;
    if ((rc = write_shadow(u, sh, at))) return rc;                                                   /* 1 */
    if (u->zero_fill && p > u->old_size && (rc = write_zeros(u, u->old_size, p))) return rc;
    if ((rc = pwrite_all(u, t->p, t->len, p)) || (rc = sync_file(u))) return rc;                     /* 2 */
    oz_update_lock(u->fd, OZ_LOCK_EXCLUSIVE);
    int bad = oz_sys_truncate(u->fd, p + t->len);                                                    /* 3 */
    oz_update_lock(u->fd, OZ_LOCK_UNLOCK);
    if (bad && errno == EBUSY) /* Windows: ERROR_USER_MAPPED_FILE */
        return io_fail(u, "cannot truncate (another process maps the archive, and Windows cannot shorten a "
                          "mapped file: run set-model again once it is closed)");
    return bad ? io_fail(u, "cannot truncate") : sync_file(u);
}

/* Undoes steps 1-3 after `rc` failed one of them: they wrote only past the
 * old end, so cutting the file back to its old size restores it byte for byte
 * (and frees the reservation), whichever write or sync failed. */
static int roll_back(const update *u, int rc)
{
    char why[768];
    snprintf(why, sizeof why, "%s", onnxzip_last_error()->message);
    oz_update_lock(u->fd, OZ_LOCK_EXCLUSIVE);
    int bad = oz_sys_truncate(u->fd, u->old_size);
    int e = errno;
    oz_update_lock(u->fd, OZ_LOCK_UNLOCK);
    if (bad)
        return oz_err_errno(e, ONNXZIP_EIO, -1, u->path, "%s; the update could not be undone (cannot truncate: %s): the file may "
                      "be left in a transient form that onnxzip reads as the old model; run set-model again",
                      why, strerror(e));
    if (oz_sys_sync(u->fd))
        return oz_err_sys(rc, -1, u->path, "%s; the update was rolled back: the archive is unchanged (but the rollback could not "
                      "be synced: %s)", why, strerror(errno));
    return oz_err(rc, -1, "%s; the update was rolled back: the archive is unchanged", why);
}

/* Steps 4-5, after the flip is durable: the update has succeeded whatever
 * happens here. A failure leaves dead space (spec 15.3), which every reader
 * skips and the next update removes; it is not reported (a successful call
 * leaves the last error alone), hence raw calls rather than pwrite_all(). */
static void compact(const update *u, const oz_buf *t, uint64_t c)
{
    if (oz_pwrite_full(u->fd, t->p, t->len, c) || oz_sys_sync(u->fd)) return;                       /* 4 */
    oz_update_lock(u->fd, OZ_LOCK_EXCLUSIVE);
    int bad = oz_sys_truncate(u->fd, c + t->len);                                                  /* 5 */
    oz_update_lock(u->fd, OZ_LOCK_UNLOCK);
    if (!bad) (void)oz_sys_sync(u->fd);
}

static int run(update *u)
{
    oz_buf compact_tail = { 0 }, appended = { 0 }, shadow = { 0 };
    uint64_t c = weights_end(u), p, at;
    int rc = build_tail(u, &c, &compact_tail);
    /* Appended after everything, and far enough that the compacted copy fits
     * before it; the shadow end after it. */
    p = u->old_size > c + compact_tail.len ? u->old_size : c + compact_tail.len;
    p = (p + 63) & ~(uint64_t)63;
    if (!rc) rc = build_tail(u, &p, &appended);
    at = p + appended.len;
    uint8_t trailer[24];
    build_trailer(trailer, u->a->zip.end);
    if (!rc) rc = place_shadow(u, trailer, &at, &shadow);
    onnxzip_close(&u->a); /* no longer read; Windows cannot shorten a file while a view of it is mapped */
    if (!rc && !(rc = reserve(u, c, at + shadow.len)) && (rc = append_and_flip(u, &appended, p, &shadow, at)))
        rc = roll_back(u, rc);
    if (!rc) compact(u, &compact_tail, c);
    oz_buf_free(&compact_tail);
    oz_buf_free(&appended);
    oz_buf_free(&shadow);
    return rc;
}

#define IN_ARCHIVES_ONLY "a model is replaced in place only in an archive file"

/* The archive must be a regular file (a device or a FIFO has no end to
 * update), the one the path named when it was validated, and unchanged
 * since: its size is where a rollback cuts back to. */
static int check_file(update *u)
{
    oz_stat st;
    if (oz_sys_fstat(u->fd, &st)) return io_fail(u, "cannot stat");
    if (st.kind != OZ_KIND_REG)
        return oz_err(ONNXZIP_ENOTREG, -1, "%s: not a regular file; " IN_ARCHIVES_ONLY, u->path);
    if (st.dev != u->a->st_dev || st.ino != u->a->st_ino || st.size != u->a->size)
        return oz_err(ONNXZIP_EBUSY, -1, "%s: the file was replaced or changed during the update; nothing written",
                      u->path);
    u->old_size = st.size;
    return 0;
}

static int open_archive(update *u)
{
    if ((u->fd = oz_sys_open_rw(u->path)) >= 0) {
        oz_stat st;
        if (!oz_sys_fstat(u->fd, &st) && st.kind != OZ_KIND_REG)
            return oz_err(ONNXZIP_ENOTREG, -1, "%s: not a regular file; " IN_ARCHIVES_ONLY, u->path);
        return 0;
    }
    if (errno == EISDIR)
        return oz_err_sys(ONNXZIP_ENOTREG, -1, u->path, "%s: a directory; " IN_ARCHIVES_ONLY, u->path);
    return oz_err_sys(ONNXZIP_EIO, -1, u->path, "%s: cannot open for update: %s", u->path, strerror(errno));
}

int onnxzip_update_model(const char *path, const void *model, size_t size)
{
    if (!path || (!model && size)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_update_model: NULL argument");
    if (size > OZ_MAX_MODEL)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: a model of %zu bytes exceeds protobuf's 2 GiB", path, size);
    update u = { .path = path, .fd = -1, .model = model ? model : (const void *)"", .size = size };
    int rc = open_archive(&u);
    if (!rc && oz_sys_lock_file(u.fd, 0))
        rc = errno == EWOULDBLOCK ? oz_err(ONNXZIP_EBUSY, -1, "%s: another update of this archive is running", path)
                                  : oz_err_sys(ONNXZIP_EIO, -1, path, "%s: cannot lock: %s", path, strerror(errno));
    if (!rc) rc = onnxzip_open(path, 0, &u.a);
    if (!rc && u.a->layout != ONNXZIP_LAYOUT_ARCHIVE)
        rc = oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: a classic ONNX model, not an onnxzip archive; " IN_ARCHIVES_ONLY
                    ": convert it first with: onnxzip pack", path);
    if (!rc && u.a->zip.package)
        rc = oz_err(ONNXZIP_EINVAL, -1, "%s: a package of several models: name the model to replace "
                    "(onnxzip_update_package_model(), set-model --model PATH)", path);
    if (!rc) rc = oz_tensors_check(&u.a->zip, u.model, size, path); /* as open and verify will check it */
    if (!rc) {
        oz_checksum cs;
        oz_checksum_init(&cs);
        oz_checksum_update(&cs, u.model, size);
        u.crc = cs.crc;
        u.xxh3 = XXH3_64bits_digest(&cs.xxh);
        rc = copy_entries(&u);
    }
    if (!rc) rc = check_file(&u);
    if (!rc) rc = run(&u);
    free(u.entries);
    onnxzip_close(&u.a);
    if (u.fd >= 0) oz_sys_close(u.fd); /* releases the lock */
    return rc;
}
