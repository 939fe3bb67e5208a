/* A package's manifest (spec 19.4) and its members: parsed against the
 * zip's entries at open, which it classifies (model, file, tensor entry). */
#ifndef ONNXZIP_PACKAGE_H
#define ONNXZIP_PACKAGE_H

#include "common/package_path.h"
#include "read/zip_reader.h"

/* What a `model` line adds to its member. */
typedef struct oz_pkg_model {
    const char **data;  /* the data files it was packed from (into the manifest copy) */
    size_t n_data;
    const char *origin; /* its `origin` list (into the manifest copy), or NULL */
} oz_pkg_model;

typedef struct oz_package {
    char *text;               /* the manifest, copied; fields point into it */
    onnxzip_member *members;  /* manifest order */
    oz_pkg_model *models;     /* parallel to members (zeroed for files) */
    size_t n, n_models, default_member;
    oz_strmap by_path;        /* exact path -> member (not case folded) */
} oz_package;

/* Parses the manifest `len` bytes at `text` of the package whose entries
 * are `z`, checks it (spec 19.4: ONNXZIP_EPACKAGE, ONNXZIP_EUNSUPPORTED
 * for a newer major version) and classifies every entry: models and files
 * as listed, the other paths tensor entries (ONNXZIP_EALIGN when one is not
 * 64-aligned). `path` names the archive in messages. On failure *p is empty. */
int oz_package_parse(oz_package *p, oz_zip *z, const uint8_t *text, size_t len, const char *path);

/* The member of exactly this path, or NULL. */
const onnxzip_member *oz_package_find(const oz_package *p, const char *path);

/* Makes model `path` (NULL: the default) the zip's model: its entry becomes
 * z->model_index and its directory z->dir, where references resolve.
 * ONNXZIP_ENOTFOUND naming the models when there is none of that path. */
int oz_package_select(const oz_package *p, oz_zip *z, const char *model, const char *shown);

void oz_package_free(oz_package *p);

#endif
