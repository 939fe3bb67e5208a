/* The missing parent directories of an output, created as `mkdir -p` does
 * (spec 12.3): mode 0777 & ~umask, symbolic links to directories followed,
 * existing directories left as they are. The directories one call created
 * are recorded, so that a failing operation removes them again (deepest
 * first, each only while still empty) and leaves no half-made tree. */
#ifndef ONNXZIP_MKDIRS_H
#define ONNXZIP_MKDIRS_H

#include <stddef.h>

typedef struct oz_made_dirs {
    char *path;   /* the output's directory, NULL when nothing was created */
    size_t *ends; /* the length of each created directory's path in `path`, in creation order */
    size_t n;
} oz_made_dirs;

/* Creates the directories missing above the file `path` (its last component
 * is the file). Returns 0 with *made recording what was created (possibly
 * nothing), or ONNXZIP_EIO with the error set — naming the component that
 * exists but is not a directory, or the system's reason — and nothing
 * created left behind. On Windows both '/' and '\\' separate and a drive
 * ("C:", "C:\\") or UNC share ("\\\\host\\share\\") is never created. */
int oz_mkdirs_parent(const char *path, oz_made_dirs *made);

/* After a failure: removes the directories *made records, deepest first,
 * those still empty only, and releases it. errno is kept. Harmless on a
 * zeroed or released *made. */
void oz_mkdirs_undo(oz_made_dirs *made);

/* After a success: keeps the directories and releases *made; `sync` set,
 * first fsyncs the directory holding each one, so that they are as durable
 * as the rename into the deepest (best effort). */
void oz_mkdirs_keep(oz_made_dirs *made, int sync);

#endif
