/* Package paths (spec 19.2): how models, files and their tensor entries
 * are named in a package, the one check of that grammar, and the key under
 * which two paths collide on a case-insensitive or normalizing file system. */
#ifndef ONNXZIP_PACKAGE_PATH_H
#define ONNXZIP_PACKAGE_PATH_H

#include <stddef.h>
#include <stdint.h>

#define OZ_PACKAGE_NAME "__PACKAGE"
#define OZ_MAX_PATH 1024
#define OZ_MAX_MANIFEST ((uint64_t)64 << 20)
#define OZ_MAX_MODELS 65536

/* 0 when the `n` bytes at `p` (NUL-terminated after them) are a package
 * path; else ONNXZIP_ENAME (ONNXZIP_ELIMIT for one over 1024 bytes or a
 * component over 255) with *why saying which rule it breaks. */
int oz_package_path_check(const char *p, size_t n, const char **why);

/* Whether a path (at the root of a package) is a name the format reserves
 * (spec 19.2): an identifier beginning with "__" — section 7.1's reserved
 * class: __PACKAGE, __MODEL_PROTO, __PAD_<k> and the names later versions
 * add — which every 1.2 reader takes for a reserved entry. Other paths that
 * begin with "__" (__init__.py, __pycache__/x.pyc) are ordinary paths. */
int oz_package_path_reserved(const char *p, size_t n);

/* Bytes of `p`'s directory, its last '/' included (0 at the root). */
size_t oz_path_dir_len(const char *p, size_t n);

/* The collision key of `p` (malloc'ed, NUL-terminated, into *key): Unicode
 * NFC of its full case folding, so that two paths with one key are one file
 * to macOS or Windows. Builds without libunistring give ASCII paths their
 * down-cased bytes and refuse others (ONNXZIP_EUNSUPPORTED, naming `shown`):
 * the check must not be skipped. ONNXZIP_ENOMEM; ONNXZIP_ENAME when `p` is
 * not UTF-8. */
int oz_path_key(const char *p, size_t n, const char *shown, char **key);

/* Paths taken so far, by collision key: the one check that no two paths of
 * a package are one file on some file system (spec 19.2). */
typedef struct oz_path_set {
    struct oz_strmap *keys;
    char **keys_owned, **paths; /* per path added: its key, a copy of it */
    size_t n, cap;
} oz_path_set;

/* Adds `path`: 0; ONNXZIP_EDUPNAME naming it and the path it collides with
 * (the message begins "WHERE: " when `where` is not NULL); the statuses of
 * oz_path_key(); ONNXZIP_ENOMEM. */
int oz_path_set_add(oz_path_set *s, const char *path, const char *where);

/* Releases what the set holds (a zeroed set is empty). */
void oz_path_set_free(oz_path_set *s);

#endif
