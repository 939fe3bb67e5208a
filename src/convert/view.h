/* Runtime views (spec 16): a classic ONNX model whose external references
 * point into an archive file, so that external-data loaders run the archive
 * in place. onnxzip_view_model() builds one (its record: read/view_record.h). */
#ifndef ONNXZIP_VIEW_H
#define ONNXZIP_VIEW_H

#include "common/sys.h"
#include "read/archive.h"

/* The directory holding `path`, stat()ed; -1 with errno set on failure. */
int oz_stat_dir_of(const char *path, oz_stat *st);

/* The real file `a` was opened by (*real, malloc'd: oz_sys_realpath() of its path) and
 * its directory. A view names the archive by this file's name and lies in
 * this directory, wherever a symbolic link to it lies (ONNX loaders check
 * the resolved path of external data: spec 16.4). ONNXZIP_EINVAL for a
 * handle opened from a buffer or fd. */
int oz_view_real_archive(const onnxzip_archive *a, char **real, oz_stat *dir);

#endif
