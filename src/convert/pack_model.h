/* The walk of one classic model, for onnxzip_pack() (pack.c) and for each
 * model of a folder (pack_dir.c): open, a measuring walk that opens every
 * external data file, a writing walk that stores payloads and rewrites the
 * model. Both callers stand on it; it calls neither. It also defines
 * onnxzip_pack_options_init(): the defaults are the walk's. */
#ifndef ONNXZIP_PACK_MODEL_H
#define ONNXZIP_PACK_MODEL_H

#include "common/buf.h"
#include "common/outputs.h"
#include "read/extdata.h"

typedef struct oz_pack oz_pack;
typedef struct oz_pack_seen oz_pack_seen;

/* Payloads stored so far, shared by the models of a package. */
oz_pack_seen *oz_pack_seen_new(void);
void oz_pack_seen_free(oz_pack_seen *t);

/* Opens and maps the model `in_path`. `seen`: the package's table (NULL: its
 * own); `prefix`: a package model's directory ("" or "onnx/"; NULL: a
 * single-model archive), where its entries are named. *out is set even on
 * failure (release it with oz_pack_close). `opts` must outlive it. */
int oz_pack_open(oz_pack **out, const char *in_path, const onnxzip_pack_options *opts, oz_pack_seen *seen,
                 const char *prefix);

/* The walk without output: checks every tensor, opens its external data. */
int oz_pack_measure(oz_pack *p);

/* The files read (model, data): oz_input[] for outputs.h, malloc'ed. */
int oz_pack_inputs(const oz_pack *p, oz_input **in, size_t *n);

/* Its external data files (opened by the measure), or NULL when none. */
const oz_extdata *oz_pack_extdata(const oz_pack *p);

/* The walk that writes: payloads into `w` (deduplicated with ONNXZIP_PACK_DEDUP
 * against the table), the rewritten model into `model`. */
int oz_pack_emit(oz_pack *p, onnxzip_writer *w, oz_buf *model);

/* After emit, for a package model: its origin list (spec 19.4), "" when none. */
const char *oz_pack_origin(oz_pack *p);

void oz_pack_close(oz_pack *p);

#endif
