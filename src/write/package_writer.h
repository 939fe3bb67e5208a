/* What a package writer (ONNXZIP_WRITE_PACKAGE) keeps besides the zip
 * writer's entries: the collision keys of every path, the models (written
 * at the end, spec 19.1), the files, and the manifest it writes last. */
#ifndef ONNXZIP_PACKAGE_WRITER_H
#define ONNXZIP_PACKAGE_WRITER_H

#include "common/buf.h"
#include "common/internal.h"

typedef struct oz_pkg_writer oz_pkg_writer;

oz_pkg_writer *oz_pkg_writer_new(void);
void oz_pkg_writer_free(oz_pkg_writer *p);

/* Takes `path` (any entry's) unless another path has its collision key
 * (spec 19.2): ONNXZIP_EDUPNAME naming both; `shown` is `path` as shown. */
int oz_pkg_writer_claim(oz_pkg_writer *p, const char *path, const char *shown);

/* Lists a file entry just written. */
int oz_pkg_writer_file(oz_pkg_writer *p, const char *path);

/* Keeps a copy of model `path` (its path claimed) for the end. */
int oz_pkg_writer_model(oz_pkg_writer *p, const char *path, const void *model, size_t size);

/* The default model: a model added before finish. */
int oz_pkg_writer_default(oz_pkg_writer *p, const char *path);

/* For unpack (spec 19.4): the data files model `path` was packed from,
 * `data[0..n)`, and its origin list ("i:f:o,..."; NULL: none). Copied. */
int oz_pkg_writer_origin(oz_pkg_writer *p, const char *path, const char *const *data, size_t n, const char *origin);

size_t oz_pkg_writer_models(const oz_pkg_writer *p);
void oz_pkg_writer_model_at(const oz_pkg_writer *p, size_t i, const char **path, const uint8_t **data, size_t *len);

/* The manifest's text; ONNXZIP_EPACKAGE when the default is no model. */
int oz_pkg_writer_manifest(const oz_pkg_writer *p, oz_buf *out, const char *shown);

#endif
