#!/usr/bin/python3
"""Writes the model with long tensor names that tests/js/web.test.mjs packs
to check that tools/web's tables fit a 1,280 px window:

    web_long_names.py OUT.onnx

Names as exporters write them (a path of module names, no spaces, well over
100 characters): three MatMul weights [32, 32] of 4 KiB (entries once packed)
and their outputs; input X float32[batch, 32], output of as long a name.
Values come from a fixed seed. Needs onnx and numpy (Debian's python3-onnx).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

PREFIX = "vision_model.encoder.layers.{}.self_attention.query_key_value_projection_with_a_descriptive_suffix"
OUTPUT = "/vision_model/encoder/final_layer_norm/self_attention/query_key_value_projection/Relu_output_0_of_the_last_block"


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(30)
    inits, nodes, prev = [], [], "X"
    for i in range(3):
        weight = PREFIX.format(i) + ".weight_quantized_per_channel_symmetric"
        inits.append(numpy_helper.from_array(rng.standard_normal((32, 32)).astype(np.float32), weight))
        out = "/" + PREFIX.format(i).replace(".", "/") + "/MatMul_output_0"
        nodes.append(helper.make_node("MatMul", [prev, weight], [out]))
        prev = out
    nodes.append(helper.make_node("Relu", [prev], [OUTPUT]))
    graph = helper.make_graph(nodes, "long_names", [helper.make_tensor_value_info("X", T.FLOAT, ["batch", 32])],
                              [helper.make_tensor_value_info(OUTPUT, T.FLOAT, ["batch", 32])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


if __name__ == "__main__":
    model = build()
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])
