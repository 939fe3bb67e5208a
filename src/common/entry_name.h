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
    OZ_NAME_TOO_LONG  /* an identifier over 255 bytes */
} oz_name_class;

oz_name_class oz_classify_name(const char *name, size_t len);

#endif
