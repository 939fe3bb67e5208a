#!/usr/bin/python3
"""Writes the models tests/js/web.test.mjs packs and opens in tools/web:

    web_models.py OUTDIR      (writes OUTDIR/long_names.onnx, OUTDIR/shapes.onnx,
                               OUTDIR/image.onnx, OUTDIR/image_repo/)

long_names: tensor names as exporters write them (a path of module names, no
spaces, well over 100 characters): three MatMul weights [32, 32] of 4 KiB
(entries once packed) and their outputs; X float32[batch, 32] -> an output
of as long a name. For the tables' width at 1,280 px.

shapes: the page's shape fields on every kind of input, and a model that
runs only with edited shapes (as NudeNet 320n's Resize fails with every
symbolic dimension 1): X float32[1, 3, height, width] is reshaped to
[1, 3, 4, 8] (so height x width must be 32), times `scale` (a scalar), plus
`bias` (no shape in the model: any shape that broadcasts), -> Y[1, 3, 4, 8];
`half` float16[2] cast to float32 -> H. Exact ops only (Reshape, Mul, Add,
Cast): onnxruntime-web and -node agree bit for bit. Values come from a fixed
seed. Needs onnx and numpy (Debian's python3-onnx).

image: an image model whose size only its exporter's metadata tells (as
Ultralytics writes imgsz, "[height, width]"): X float32[batch, 3, height,
width] reshaped to [1, 3, 4, 8] -> Y, metadata imgsz "[4, 8]". image_repo: a
repository folder with the same graph without metadata and a Hugging Face
preprocessor_config.json whose crop_size says 4 x 8 (its size, the resize
before the crop, says otherwise).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

PREFIX = "vision_model.encoder.layers.{}.self_attention.query_key_value_projection_with_a_descriptive_suffix"
OUTPUT = "/vision_model/encoder/final_layer_norm/self_attention/query_key_value_projection/Relu_output_0_of_the_last_block"


def long_names() -> onnx.ModelProto:
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


def shapes() -> onnx.ModelProto:
    nodes = [helper.make_node("Reshape", ["X", "shape"], ["r"]),
             helper.make_node("Mul", ["r", "scale"], ["m"]),
             helper.make_node("Add", ["m", "bias"], ["Y"]),
             helper.make_node("Cast", ["half"], ["H"], to=T.FLOAT)]
    inputs = [helper.make_tensor_value_info("X", T.FLOAT, [1, 3, "height", "width"]),
              helper.make_tensor_value_info("scale", T.FLOAT, []),
              helper.make_tensor_value_info("bias", T.FLOAT, None),
              helper.make_tensor_value_info("half", T.FLOAT16, [2])]
    outputs = [helper.make_tensor_value_info("Y", T.FLOAT, [1, 3, 4, 8]), helper.make_tensor_value_info("H", T.FLOAT, [2])]
    graph = helper.make_graph(nodes, "shapes", inputs, outputs,
                              [numpy_helper.from_array(np.array([1, 3, 4, 8], dtype=np.int64), "shape")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def image(imgsz: str | None) -> onnx.ModelProto:
    nodes = [helper.make_node("Reshape", ["X", "shape"], ["Y"])]
    graph = helper.make_graph(nodes, "image", [helper.make_tensor_value_info("X", T.FLOAT, ["batch", 3, "height", "width"])],
                              [helper.make_tensor_value_info("Y", T.FLOAT, [1, 3, 4, 8])],
                              [numpy_helper.from_array(np.array([1, 3, 4, 8], dtype=np.int64), "shape")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    if imgsz is not None:
        helper.set_model_props(model, {"imgsz": imgsz, "stride": "32"})
    return model


def image_repo(folder: str) -> None:
    os.makedirs(os.path.join(folder, "onnx"))
    onnx.save(image(None), os.path.join(folder, "onnx", "model.onnx"))
    with open(os.path.join(folder, "preprocessor_config.json"), "w", encoding="utf-8") as f:
        json.dump({"do_center_crop": True, "crop_size": {"height": 4, "width": 8}, "size": {"shortest_edge": 10}}, f)


if __name__ == "__main__":
    image_repo(os.path.join(sys.argv[1], "image_repo"))
    for name, build in (("long_names", long_names), ("shapes", shapes), ("image", lambda: image("[4, 8]"))):
        model = build()
        if name != "shapes":  # onnx 1.12's checker wants every input shaped; `bias` has none on purpose
            onnx.checker.check_model(model)
        onnx.save(model, os.path.join(sys.argv[1], name + ".onnx"))
