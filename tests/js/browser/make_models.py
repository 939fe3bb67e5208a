#!/usr/bin/python3
"""Writes the browser test's generated model (tests/js/browser.test.mjs):

    make_models.py OUT.onnx

'embed': exact ops only (Gather, Cast float16 -> float32, Add), so
onnxruntime-node and onnxruntime-web must agree bit for bit whatever their
GEMM kernels do, and weights large enough (about 1.6 MiB in three tensors of
three types) that open()'s 64 KiB tail holds none of the first two:

    ids[N] int64 -> Gather(E float32[4096,64]) + Cast(Gather(H float16[4096,64]))
                 + X[N,64]                        -> Y[N,64] float32
    ids          -> Gather(Q int8[4096,16])        -> Z[N,16] int8
    (+ a 64-float inline bias S: Y = ... + S)

Values come from a fixed seed. Needs onnx and numpy (Debian's python3-onnx).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(20260722)
    e = rng.standard_normal((4096, 64)).astype(np.float32)
    h = rng.standard_normal((4096, 64)).astype(np.float16)
    q = rng.integers(-128, 128, (4096, 16)).astype(np.int8)
    s = rng.standard_normal(64).astype(np.float32)
    inits = [numpy_helper.from_array(e, "embed.float"), numpy_helper.from_array(h, "embed.half"),
             numpy_helper.from_array(q, "embed.int8"), numpy_helper.from_array(s, "bias")]
    nodes = [
        helper.make_node("Gather", ["embed.float", "ids"], ["e"], name="gather_float"),
        helper.make_node("Gather", ["embed.half", "ids"], ["h16"], name="gather_half"),
        helper.make_node("Cast", ["h16"], ["h"], to=T.FLOAT, name="cast_half"),
        helper.make_node("Add", ["e", "h"], ["eh"], name="add_embeds"),
        helper.make_node("Add", ["eh", "X"], ["ehx"], name="add_x"),
        helper.make_node("Add", ["ehx", "bias"], ["Y"], name="add_bias"),
        helper.make_node("Gather", ["embed.int8", "ids"], ["Z"], name="gather_int8"),
    ]
    graph = helper.make_graph(
        nodes, "embed",
        inputs=[helper.make_tensor_value_info("ids", T.INT64, ["N"]),
                helper.make_tensor_value_info("X", T.FLOAT, ["N", 64])],
        outputs=[helper.make_tensor_value_info("Y", T.FLOAT, ["N", 64]),
                 helper.make_tensor_value_info("Z", T.INT8, ["N", 16])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="onnxzip-browser-test",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    onnx.save(build(), sys.argv[1])
