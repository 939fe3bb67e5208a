/* A package rewritten whole (package_copy.c). */
#ifndef ONNXZIP_PACKAGE_COPY_H
#define ONNXZIP_PACKAGE_COPY_H

#include <stddef.h>

#include "onnxzip/onnxzip.h"

/* Copies the package `in_path` to `out_path` (atomically, with `opts`'
 * alignment and flags; NULL: defaults), every entry checked against its
 * digests; with `model` set, that model's bytes become `bytes` (`size`) and
 * `out_path` is `in_path`, replaced.
 * ONNXZIP_ENOTFOUND when the package has no such model. */
int oz_package_copy(const char *in_path, const char *out_path, const onnxzip_write_options *opts, const char *model,
                    const void *bytes, size_t size);

/* Rewrites the package at `path` in place (a new file renamed over it, as
 * above) with the plain file `file` holding `size` bytes: added, or
 * replacing the file of that path (onnxzip_sign()'s model.sig). */
int oz_package_set_file(const char *path, const char *file, const void *bytes, size_t size);

/* 1 when `path` opens as a package. */
int oz_is_package(const char *path);

#endif
