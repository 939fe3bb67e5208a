#!/usr/bin/python3
"""Writes the repository folder that tests/js/repo_package.test.mjs packs, and
what the `onnx` package reads of its models (the test's oracle):

    make_repo.py REPO_DIR TENSORS.json

REPO_DIR (created) is a small transformers.js-style repository: two
variants of a model under onnx/ (their external data in one file each,
the embedding E the same bytes in both: stored once by pack), a
text encoder whose data is split into two chunks (model.onnx_data,
model.onnx_data_1) beside its own config, and plain files: JSON configs,
a tokenizer with non-ASCII text, an empty file and a 96 KiB binary (more
than a URL open's first 64 KiB). Every model maps X float32[1,16] to
float32 outputs; the biases and a Constant stay in the models (inline
in the package too).

TENSORS.json: {model path: {initializer name: base64 of its raw bytes}},
read back from REPO_DIR by onnx.load (external data resolved by onnx).
Values come from a fixed seed. Needs onnx and numpy (Debian's python3-onnx).
"""
import base64
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import external_data_helper, helper, numpy_helper

RNG = np.random.default_rng(29)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def model(nodes, inits, outputs, name):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("X", T.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info(o, T.FLOAT, dims) for o, dims in outputs],
                              [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_repo.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def save(m, path, chunks):
    """Saves `m` at `path` with its initializers named in `chunks` (a list of
    [names] per data file: model.onnx_data, model.onnx_data_1, ...) as
    external data; the others stay in the model."""
    base = os.path.basename(path) + "_data"
    offsets = {}
    for k, names in enumerate(chunks):
        offsets[base if k == 0 else f"{base}_{k}"] = names
    by_name = {t.name: t for t in m.graph.initializer}
    folder = os.path.dirname(path)
    for location, names in offsets.items():
        with open(os.path.join(folder, location), "wb") as f:
            for n in names:
                t = by_name[n]
                at = f.tell()
                f.write(t.raw_data)
                f.write(b"\0" * (-f.tell() % 64))
                external_data_helper.set_external_data(t, location, offset=at, length=len(t.raw_data))
                t.data_location = T.EXTERNAL
                t.ClearField("raw_data")
    onnx.save(m, path)


def variants(repo):
    w, e, b = rand(16, 32), rand(16, 64), rand(32)
    mm = [helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["xwb"]),
          helper.make_node("Relu", ["xwb"], ["Y"]), helper.make_node("MatMul", ["X", "E"], ["Z"])]
    save(model(mm, [("W", w), ("E", e), ("B", b)], [("Y", [1, 32]), ("Z", [1, 64])], "model"),
         os.path.join(repo, "onnx", "model.onnx"), [["W", "E"]])
    half = [helper.make_node("Cast", ["W16"], ["W"], to=T.FLOAT)] + mm
    save(model(half, [("W16", w.astype(np.float16)), ("E", e), ("B", b)], [("Y", [1, 32]), ("Z", [1, 64])], "model_fp16"),
         os.path.join(repo, "onnx", "model_fp16.onnx"), [["E", "W16"]])


def text_encoder(repo):
    w1, w2, b = rand(16, 24), rand(24, 8), rand(8)
    c = helper.make_tensor("c", T.FLOAT, [8], rand(8).tolist())
    nodes = [helper.make_node("MatMul", ["X", "W1"], ["h"]), helper.make_node("MatMul", ["h", "W2"], ["hw"]),
             helper.make_node("Constant", [], ["C"], value=c), helper.make_node("Add", ["hw", "C"], ["hwc"]),
             helper.make_node("Add", ["hwc", "b"], ["Y"])]
    save(model(nodes, [("W1", w1), ("W2", w2), ("b", b)], [("Y", [1, 8])], "text_encoder"),
         os.path.join(repo, "text_encoder", "model.onnx"), [["W1"], ["W2"]])


def files(repo):
    def write(rel, data):
        with open(os.path.join(repo, rel), "wb") as f:
            f.write(data)
    write("config.json", json.dumps({"model_type": "test", "hidden_size": 32}, indent=2).encode() + b"\n")
    write("tokenizer.json", json.dumps({"vocab": {"héllo": 0, "wörld": 1, "日本": 2, "🙂": 3}},
                                       ensure_ascii=False).encode("utf-8"))
    write("README.md", b"# test repository\n\nMade by tests/js/make_repo.py.\n")
    write("empty.txt", b"")
    write(os.path.join("assets", "blob.bin"), RNG.integers(0, 256, 96 << 10, dtype=np.uint8).tobytes())
    write(os.path.join("text_encoder", "config.json"), b'{"model_type": "encoder"}\n')


def tensors(repo):
    out = {}
    for top, _, names in sorted(os.walk(repo)):
        for n in sorted(names):
            if n.endswith(".onnx"):
                path = os.path.join(top, n)
                m = onnx.load(path)  # external data read by onnx from the folder
                out[os.path.relpath(path, repo).replace(os.sep, "/")] = {
                    t.name: base64.b64encode(numpy_helper.to_array(t).tobytes()).decode() for t in m.graph.initializer}
    return out


def main():
    repo, out = sys.argv[1], sys.argv[2]
    for d in ("onnx", "text_encoder", "assets"):
        os.makedirs(os.path.join(repo, d))
    variants(repo)
    text_encoder(repo)
    files(repo)
    with open(out, "w") as f:
        json.dump(tensors(repo), f)


if __name__ == "__main__":
    main()
