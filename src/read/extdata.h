/* Classic ONNX external data: opening side files under the rules ONNX >= 1.22
 * enforces (CVE-2022-25882, CVE-2024-27318, CVE-2025-51480) but for symbolic
 * links, followed where ONNX Runtime >= 1.24 follows them (spec 12.5; the
 * Hugging Face cache), and a cache so that each file is opened (and, for
 * readers, mapped) once. */
#ifndef ONNXZIP_EXTDATA_H
#define ONNXZIP_EXTDATA_H

#include <sys/types.h>

#include "common/sys.h"
#include "onnx/onnx_walk.h"

typedef struct oz_extfile {
    char *location;       /* as written in the model */
    char *tensor;         /* the first tensor referring to it (printable), for messages */
    int fd;
    uint64_t size;
    const uint8_t *map;   /* oz_extdata_map(): whole file, or NULL */
} oz_extfile;

typedef struct oz_extdata {
    struct oz_dir *dirh;  /* the data directory, open (common/sys.h) */
    char *dir;            /* its path, for messages */
    char *model;          /* the model file when `dir` is its directory, else NULL */
    oz_extfile *files;
    size_t n, cap;
    /* Where a location through symbolic links may lead (ONNX Runtime's
     * rule): found at the first such location. */
    int allowed_found;
    size_t n_allowed;
    oz_stat allowed[2];
    char *allowed_path[2];
} oz_extdata;

/* Opens the data directory `dir`. `model`: the model file's path when `dir`
 * is its directory (NULL for a data directory given apart): where it is a
 * symbolic link, data may also lie below the directory of its real file. */
int oz_extdata_init(oz_extdata *x, const char *dir, const char *model);
void oz_extdata_free(oz_extdata *x);

/* Resolves the external reference of tensor `t` (data_location EXTERNAL):
 * opens its file beneath the data directory (cached), checks every path rule,
 * parses offset/length and checks them against the file's size. On success
 * *file, *offset and *length describe the payload. `model` names the model
 * file in messages. */
int oz_extdata_resolve(oz_extdata *x, const oz_tensor_info *t, const char *model, oz_extfile **file,
                       uint64_t *offset, uint64_t *length);

/* Maps `f` read-only (once; kept until oz_extdata_free). */
int oz_extdata_map(oz_extdata *x, oz_extfile *f);

#endif
