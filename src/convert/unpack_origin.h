/* onnxzip_unpack()'s ORIGINAL layout (unpack_origin.c), for unpack_plan.c. */
#ifndef ONNXZIP_UNPACK_ORIGIN_H
#define ONNXZIP_UNPACK_ORIGIN_H

#include "convert/unpack_plan.h"

typedef struct oz_og oz_og;
/* The data files and places the manifest records (into u->files). */
int oz_og_plan(unpack *u);
/* Tensor v, the `ordinal`-th of the walk (ordinals rising): at its place,
 * or inline. */
int oz_og_ref(unpack *u, const onnxzip_tensor *v, uint64_t ordinal, oz_rewrite *rw);
/* After the walk: each data file's segments (u->out). */
int oz_og_segments(unpack *u);
void oz_og_free(unpack *u);

#endif
