/* onnxzip_unpack()'s safetensors layout (unpack_safetensors.c), for unpack.c. */
#ifndef ONNXZIP_UNPACK_SAFETENSORS_H
#define ONNXZIP_UNPACK_SAFETENSORS_H

#include "convert/unpack_files.h"

/* Takes tensor v (an entry tensor that is not inline) into a safetensors
 * file: 1 when taken, 0 when it goes to the side file, or an error. */
int oz_st_take(unpack *u, const onnxzip_tensor *v);
/* Names the files (after every oz_st_take) and adds them to u->files. */
int oz_st_plan(unpack *u);
/* The reference of v when it is in a safetensors file: 1, else 0. */
int oz_st_ref(unpack *u, const onnxzip_tensor *v, oz_rewrite *rw);
int oz_st_write(unpack *u);
void oz_st_free(unpack *u);

#endif
