/* A file that appears at its path only when complete: written as a temporary
 * file beside the target (".NAME.tmp-XXXXXXXX", created O_EXCL with mode
 * 0666 & ~umask), then fsynced and renamed into place.
 *
 * Stale temporaries (spec 12.2): the creator of a temporary file or directory
 * holds an exclusive flock() on it for its whole life, up to and including
 * the rename; one whose lock can be taken belongs to a dead process and is
 * removed by the next writer of the same target (oz_tmp_sweep). */
#ifndef ONNXZIP_ATOMIC_FILE_H
#define ONNXZIP_ATOMIC_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/mkdirs.h"

#define OZ_TMP_FILE_TAIL 8   /* ".NAME.tmp-" + 8 hex digits */
#define OZ_TMP_DIR_TAIL 6    /* ".NAME.unpack-" + 6 mkdtemp characters */

typedef struct oz_atomic_file {
    char *path; /* the target */
    char *tmp;  /* the temporary file, NULL when none is left to remove */
    int fd;     /* open on tmp, or -1 */
    oz_made_dirs made; /* the target's parents created by the open: removed by abort */
} oz_atomic_file;

/* Creates and claims (oz_tmp_claim) the temporary file ".BASE.tmp-XXXXXXXX"
 * beside `path`, first creating the missing parent directories of `path`
 * (recorded in *made: the caller removes them with oz_mkdirs_undo() when it
 * fails later, or keeps them) and sweeping stale temporaries of the same
 * target. On success *tmp is its path (malloc'd) and *fd is open for
 * writing; on failure nothing is left on disk, *tmp is NULL, *fd is -1 and
 * *made is empty. Shared by the archive writer and oz_atomic_open(). An
 * existing `path` that is not a regular file (symbolic links followed:
 * device, FIFO, socket, directory) is refused with ONNXZIP_ENOTREG before
 * anything is created (outputs.h). */
int oz_tmp_create(const char *path, char **tmp, int *fd, oz_made_dirs *made);

/* pwrite() of all `n` bytes at `off`, retrying short writes and EINTR.
 * Returns 0, or -1 with errno set (ENOSPC when a write makes no progress). */
int oz_pwrite_full(int fd, const void *data, size_t n, uint64_t off);

/* Creates the temporary file beside `path` (and the missing directories
 * above it). On failure nothing is left on disk and *af needs no abort
 * (though one is harmless). */
int oz_atomic_open(const char *path, oz_atomic_file *af);

/* Writes all `n` bytes at the current position of the temporary file. */
int oz_atomic_write(oz_atomic_file *af, const void *data, size_t n);

/* fsyncs and closes the temporary file, checks the target once more (not a
 * special file, as at open), renames it to the target and syncs the
 * directory. Releases *af whether it succeeds or not; on failure the
 * temporary file is removed and the target is untouched. */
int oz_atomic_commit(oz_atomic_file *af);

/* Closes and removes the temporary file, removes the directories the open
 * created (those still empty) and releases *af. Harmless on an *af already
 * released (by commit, abort or a failed open) or zeroed. */
void oz_atomic_abort(oz_atomic_file *af);

/* Removes, in directory `dirfd`, the entries named `prefix` followed by
 * exactly `tail` ASCII letters or digits — regular files, or when `dirs` is
 * set directories (with the files inside) — whose exclusive flock() can be
 * taken without waiting: their creator is dead. A locked one belongs to a
 * live writer and is left alone. Best effort: errors are ignored. */
void oz_tmp_sweep(int dirfd, const char *prefix, size_t tail, int dirs);

/* Takes the creator's lock on `fd`, just created as `name` in `dirfd`, and
 * checks that `name` still is that file (a sweeper may have removed it
 * between its creation and the lock). Returns 0 when the file is claimed, 1
 * when it was swept (close it and create another name). */
int oz_tmp_claim(int dirfd, const char *name, int fd);

#endif
