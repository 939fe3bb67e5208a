/* Entry names: the spec's validity rules and the deterministic mapping from
 * arbitrary tensor names. */
#ifndef ONNXZIP_ENTRY_NAME_H
#define ONNXZIP_ENTRY_NAME_H

#include <stddef.h>

typedef enum oz_name_class {
    OZ_NAME_INVALID = 0,
    OZ_NAME_TENSOR, /* [A-Za-z_][A-Za-z0-9_]*, no "__" prefix, <= 255 bytes */
    OZ_NAME_MODEL,  /* __MODEL_PROTO */
    OZ_NAME_FILLER, /* __PAD_<decimal> */
    OZ_NAME_RESERVED, /* any other "__" identifier: ignored by readers */
    OZ_NAME_TOO_LONG, /* an identifier over 255 bytes */
    /* In a package (spec 19), set by the zip reader and the manifest: */
    OZ_NAME_PATH,     /* a package path not yet classified by the manifest */
    OZ_NAME_PACKAGE,  /* __PACKAGE, the manifest */
    OZ_NAME_PKG_MODEL, /* a model entry of a package */
    OZ_NAME_PKG_FILE   /* a file entry of a package */
} oz_name_class;

oz_name_class oz_classify_name(const char *name, size_t len);

/* The model entry of another tool's zip, as only `repack` accepts it (spec
 * section 18): "__MODEL_PROTO" (PyTorch's ZIP_ARCHIVE export, an archive
 * re-zipped) or "__MODEL_PROTO.onnx" (tf2onnx's large-model zip), each also
 * under a directory ("out/__MODEL_PROTO.onnx": a zipped export directory).
 * Returns 0 for any other name, 1 for the first spelling, 2 for the second;
 * *dir gets the length of the directory prefix, its '/' included. */
int oz_foreign_model_name(const char *name, size_t len, size_t *dir);

#endif
