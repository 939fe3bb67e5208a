#!/usr/bin/python3
"""Writes the small example model used by tools/demo.sh, and compares models.

    make_example_model.py OUT.onnx
        A 2-layer MLP, classic single-file layout (every tensor in raw_data):

            X[N,32] -> Gemm(W1[32,64], B1[64]) -> Relu
                    -> Gemm(W2[64,16], B2[16]) -> MatMul(P[16,16]) -> Y[N,16]

        With onnxzip's default 1024-byte threshold, the initializers W1
        (8 KiB) and W2 (4 KiB) and the Constant node's attribute tensor P
        (1 KiB) become aligned entries; the biases B1 (256 B) and B2 (64 B)
        stay inline. Values come from a fixed numpy seed, so the file is the
        same on every run.

    make_example_model.py --compare A.onnx B.onnx
        Loads both (external data resolved relative to each file) and checks
        that their graphs are the same and that every initializer and every
        Constant tensor holds the same values. Exit status 0 when they do.

Needs the `onnx` and `numpy` Python packages (Debian: python3-onnx,
python3-numpy).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def build_model() -> onnx.ModelProto:
    rng = np.random.default_rng(20240601)

    def weights(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    w1, b1 = weights(32, 64), weights(64)
    w2, b2 = weights(64, 16), weights(16)
    proj = weights(16, 16)

    initializers = [
        numpy_helper.from_array(w1, "fc1.weight"),
        numpy_helper.from_array(b1, "fc1.bias"),
        numpy_helper.from_array(w2, "fc2.weight"),
        numpy_helper.from_array(b2, "fc2.bias"),
    ]
    nodes = [
        helper.make_node("Gemm", ["X", "fc1.weight", "fc1.bias"], ["h1"], name="fc1"),
        helper.make_node("Relu", ["h1"], ["a1"], name="relu1"),
        helper.make_node("Gemm", ["a1", "fc2.weight", "fc2.bias"], ["h2"], name="fc2"),
        helper.make_node("Constant", [], ["proj"], name="proj_const",
                         value=numpy_helper.from_array(proj, "proj")),
        helper.make_node("MatMul", ["h2", "proj"], ["Y"], name="project"),
    ]
    graph = helper.make_graph(
        nodes, "tiny_mlp",
        inputs=[helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 32])],
        outputs=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 16])],
        initializer=initializers)
    model = helper.make_model(graph, producer_name="onnxzip-example",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8  # what onnx 1.12 writes for opset 13
    onnx.checker.check_model(model, full_check=True)
    return model


def forward(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """The model's output computed with numpy, from the model's own tensors."""
    t = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant":
            t[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    h = np.maximum(x @ t["fc1.weight"] + t["fc1.bias"], 0)
    return (h @ t["fc2.weight"] + t["fc2.bias"]) @ t["proj"]


def tensors(model: onnx.ModelProto) -> dict:
    out = {"init:" + i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for n in model.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                out["attr:%s.%s" % (n.name, a.name)] = numpy_helper.to_array(a.t)
    return out


def compare(path_a: str, path_b: str) -> int:
    a, b = onnx.load(path_a), onnx.load(path_b)
    ta, tb = tensors(a), tensors(b)
    ok = True
    if sorted(ta) != sorted(tb):
        print("tensor sets differ: %s vs %s" % (sorted(ta), sorted(tb)))
        ok = False
    for name in sorted(set(ta) & set(tb)):
        same = ta[name].dtype == tb[name].dtype and np.array_equal(ta[name], tb[name])
        print("%-28s %-12s %s" % (name, "x".join(map(str, ta[name].shape)),
                                   "same" if same else "DIFFERENT"))
        ok = ok and same
    if [n.op_type for n in a.graph.node] != [n.op_type for n in b.graph.node]:
        print("node lists differ")
        ok = False
    x = np.random.default_rng(7).standard_normal((3, 32)).astype(np.float32)
    if ok and not np.array_equal(forward(a, x), forward(b, x)):
        print("outputs differ")
        ok = False
    print("%s and %s: %s" % (path_a, path_b, "equivalent" if ok else "NOT equivalent"))
    return 0 if ok else 1


def main(argv) -> int:
    if len(argv) == 4 and argv[1] == "--compare":
        return compare(argv[2], argv[3])
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    model = build_model()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    onnx.save(model, out)
    y = forward(model, np.ones((1, 32), dtype=np.float32))
    print("wrote %s (%d bytes): %d initializers, %d nodes, opset %d; Y(ones)[0,:4] = %s"
          % (out, os.path.getsize(out), len(model.graph.initializer),
             len(model.graph.node), OPSET, np.array2string(y[0, :4], precision=4)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
