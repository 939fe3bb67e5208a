#!/usr/bin/python3
"""The model of tools/bench/bench_browser_memory.mjs: a chain of MatMul + Add
whose float32 weights total about SIZE bytes, written as a classic
external-data model (DIR/model.onnx + one DIR/model.onnx_data) without ever
holding more than one weight in memory.

    bench_browser_memory.py DIR SIZE_MIB [--dim D]

    X[1,D] -> MatMul(W0[D,D]) + B0[D] -> ... -> MatMul(Wk[D,D]) + Bk[D] -> Y[1,D]

D = 8192 by default: 256 MiB per weight, k = ceil(SIZE_MIB / 256) layers.
Weight values are small and non-zero (no sparse file, no overflow), a row
pattern of a fixed seed repeated, so writing is disk speed. The biases
(32 KiB each) go to the data file too; everything is 4096-byte aligned in it.
Needs numpy and onnx (Debian: python3-numpy python3-onnx).
"""
import argparse
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def external(name, dims, offset, length):
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "model.onnx_data"), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def write(out_dir, size_mib, dim):
    rng = np.random.default_rng(22)
    layers = max(1, math.ceil(size_mib * 2**20 / (dim * dim * 4)))
    inits, nodes, prev, offset = [], [], "X", 0
    with open(os.path.join(out_dir, "model.onnx_data"), "wb") as f:
        for i in range(layers):
            row = (rng.standard_normal(dim) / dim).astype(np.float32) + np.float32(1e-6)
            w = np.tile(row, (256, 1)).tobytes()  # 256 rows per write
            for name, dims, blocks in ((f"w{i}", [dim, dim], dim // 256), (f"b{i}", [dim], 0)):
                data_start = offset
                if blocks:
                    for _ in range(blocks):
                        f.write(w)
                    length = len(w) * blocks
                else:
                    b = (rng.standard_normal(dim) * 0.01).astype(np.float32).tobytes()
                    f.write(b)
                    length = len(b)
                inits.append(external(name, dims, data_start, length))
                offset = data_start + length
                pad = -offset % 4096
                f.write(b"\0" * pad)
                offset += pad
            nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"], name=f"matmul{i}"))
            out = "Y" if i == layers - 1 else f"a{i}"
            nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [out], name=f"add{i}"))
            prev = out
    graph = helper.make_graph(nodes, "chain",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, dim])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, dim])], inits)
    model = helper.make_model(graph, producer_name="onnxzip-bench", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    with open(os.path.join(out_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    return layers, offset


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("size_mib", type=int)
    ap.add_argument("--dim", type=int, default=8192)
    a = ap.parse_args()
    if a.dim % 256:
        ap.error("--dim must be a multiple of 256")
    layers, size = write(a.dir, a.size_mib, a.dim)
    print(f"wrote {a.dir}/model.onnx + model.onnx_data: {layers} layers, {size} bytes of data")


if __name__ == "__main__":
    main()
