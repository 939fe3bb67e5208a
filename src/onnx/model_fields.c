#include <stdio.h>

#include "common/internal.h"
#include "onnx/model_fields.h"
#include "onnx/pbwire.h"

/* ModelProto fields that onnx.checker requires (check_model in checker.cc). */
enum { MODEL_IR_VERSION = 1, MODEL_GRAPH = 7, MODEL_OPSET_IMPORT = 8 };

/* open() accepts a model without these fields, so that tools can inspect any
 * file; verify, and every writer, names each one missing. */
int oz_check_model_fields(const uint8_t *model, size_t len, const char *path, int archive, int64_t offset)
{
    pb_reader r = { model, model + len };
    pb_field f;
    int64_t ir = 0;
    int graph = 0, opset = 0;
    while (r.p < r.end && pb_next(&r, &f) == 0) {
        if (f.num == MODEL_IR_VERSION && f.wt == PB_VARINT) ir = (int64_t)f.v; /* the last one wins */
        graph |= f.num == MODEL_GRAPH && f.wt == PB_LEN;
        opset |= f.num == MODEL_OPSET_IMPORT && f.wt == PB_LEN;
    }
    char why[160] = "";
    size_t n = 0;
    if (ir <= 0)
        n += (size_t)snprintf(why, sizeof why, "%s", ir ? "ir_version is negative" : "no ir_version");
    if (ir >= 3 && !opset)
        n += (size_t)snprintf(why + n, sizeof why - n, "no opset_import (required from ir_version 3 on, "
                              "the model has %lld)", (long long)ir);
    if (!graph)
        snprintf(why + n, sizeof why - n, "%sno graph", n ? ", " : "");
    if (!why[0]) return 0;
    return oz_err(ONNXZIP_EPROTO, offset, "%s: %s: %s (onnx.checker requires ir_version > 0, opset_import from "
                  "ir_version 3 on, and a graph)", path, archive ? "entry '" OZ_MODEL_NAME "'" : "model", why);
}
