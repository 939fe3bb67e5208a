/* A file that appears at its path only when complete: written as a temporary
 * file beside the target (".NAME.tmp-XXXXXXXX", created O_EXCL with mode
 * 0666 & ~umask), then fsynced and renamed into place. */
#ifndef ONNXZIP_ATOMIC_FILE_H
#define ONNXZIP_ATOMIC_FILE_H

#include <stddef.h>

typedef struct oz_atomic_file {
    char *path; /* the target */
    char *tmp;  /* the temporary file, NULL when none is left to remove */
    int fd;     /* open on tmp, or -1 */
} oz_atomic_file;

/* Creates the temporary file beside `path`. On failure nothing is left on
 * disk and *af needs no abort (though one is harmless). */
int oz_atomic_open(const char *path, oz_atomic_file *af);

/* Writes all `n` bytes at the current position of the temporary file. */
int oz_atomic_write(oz_atomic_file *af, const void *data, size_t n);

/* fsyncs and closes the temporary file, renames it to the target and syncs
 * the directory. Releases *af whether it succeeds or not; on failure the
 * temporary file is removed and the target is untouched. */
int oz_atomic_commit(oz_atomic_file *af);

/* Closes and removes the temporary file and releases *af. Harmless on an
 * *af already released (by commit, abort or a failed open) or zeroed. */
void oz_atomic_abort(oz_atomic_file *af);

#endif
