#!/usr/bin/python3
"""foreign_zips — other tools' model zips: refused by open/ls/verify, converted by repack.

    foreign_zips.py ONNXZIP_EXE [--keep DIR]

Writes, with Python's zipfile, zips laid out exactly as their tools wrote them:

  * tf2onnx large_model=True (tf2onnx/utils.py save_onnx_zip, graph.py
    Node.get_value_attr): ZipFile(path, 'w') (stored, no alignment), first
    "__MODEL_PROTO.onnx", then one entry per tensor of more than 1024
    elements, named <node name>_<counter> with ~"#%&*:<>?/\\{|} turned into
    '_' (so '.', '-' remain), the tensor an EXTERNAL reference to it; also
    with the model entry in the middle, and under a directory prefix;
  * PyTorch's export_type=ExportTypes.ZIP_ARCHIVE / COMPRESSED_ZIP_ARCHIVE
    (torch/onnx/utils.py, torch/csrc/jit/serialization/export.cpp
    EncodeTensor): "__MODEL_PROTO" first, then one entry per initializer named
    as the tensor ("fc1.weight", "onnx::MatMul_12"), stored or deflated, the
    tensor's raw_data the placeholder b"__EXTERNAL".

Checks: `ls` and `verify` exit 1 naming the layout and `onnxzip repack`, the
input unchanged; `repack` exits 0, `verify` accepts the result, zipfile sees
stored entries and __MODEL_PROTO last, and onnx.load of `unpack`'s output has
the original graph and tensors (numpy). Damaged variants (a CRC mismatch, a
referenced entry missing, the model named model.onnx, two model entries) fail
with the status named and leave no output. (onnxzip.open's FormatError for
these layouts: tests/python/test_errors.py, run with the sanitizer runtime
preloaded in sanitizer builds.)
Prints "foreign_zips: N passed, M failed"; exits 1 on any failure.
"""
import copy
import os
import re
import subprocess
import sys
import zipfile

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ozcommon  # noqa: E402

TALLY = ozcommon.Tally()
check = TALLY.check
ERROR_LINE = re.compile(r"^onnxzip: (.*) \[(ONNXZIP_[A-Z0-9_]+)\]$")


def make_model(names):
    """x[1,64] @ W1 + b1 -> @ W2 -> @ W3 -> y[1,40]; `names` are the initializers' names."""
    r = np.random.default_rng(20)
    arrays = [r.standard_normal((64, 32)).astype(np.float32), r.standard_normal(32).astype(np.float32),
              r.standard_normal((32, 48)).astype(np.float32), r.standard_normal((48, 40)).astype(np.float32)]
    w1, b1, w2, w3 = names
    nodes = [helper.make_node("MatMul", ["x", w1], ["h1"]), helper.make_node("Add", ["h1", b1], ["h2"]),
             helper.make_node("MatMul", ["h2", w2], ["h3"]), helper.make_node("MatMul", ["h3", w3], ["y"])]
    g = helper.make_graph(nodes, "foreign", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 40])],
                          initializer=[numpy_helper.from_array(a, n) for a, n in zip(arrays, names)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


# tf2onnx's initializer names are node outputs ("node:0"); its entries the node names, sanitized.
TF_NAMES = ["sequential/dense-1/MatMul/ReadVariableOp:0", "sequential/dense-1/BiasAdd/ReadVariableOp:0",
            "sequential/layer.norm/gamma:0", "model/conv~2/kernel:0"]
TORCH_NAMES = ["fc1.weight", "fc1.bias", "onnx::MatMul_12", "layers.0.proj"]


def tf2onnx_zip(model, path, model_at=0, prefix=""):
    """As tf2onnx's save_onnx_zip; model_at: where the model entry goes."""
    m, storage, counter = copy.deepcopy(model), {}, 0
    for t in m.graph.initializer:
        if np.prod(t.dims) > 1024:
            name = t.name.rsplit(":", 1)[0].strip() + "_" + str(counter)
            for c in '~"#%&*:<>?/\\{|}':
                name = name.replace(c, "_")
            counter += 1
            storage[name] = t.raw_data
            t.ClearField("raw_data")
            loc = t.external_data.add()
            loc.key, loc.value = "location", name
            t.data_location = TensorProto.EXTERNAL
    entries = [(prefix + k, v) for k, v in storage.items()]
    entries.insert(model_at, (prefix + "__MODEL_PROTO.onnx", m.SerializeToString()))
    with zipfile.ZipFile(path, "w") as z:
        for k, v in entries:
            z.writestr(k, v)
    return [k for k, _ in entries]


def torch_zip(model, path, compressed=False, model_name="__MODEL_PROTO"):
    """As torch.onnx's ZIP_ARCHIVE / COMPRESSED_ZIP_ARCHIVE export."""
    m, export_map = copy.deepcopy(model), {}
    for t in m.graph.initializer:
        export_map[t.name] = t.raw_data
        t.raw_data = b"__EXTERNAL"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED) as z:
        z.writestr(model_name, m.SerializeToString())
        for k, v in export_map.items():
            z.writestr(k, v)


def run(exe, *args):
    p = subprocess.run([exe, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def error_of(stderr):
    m = ERROR_LINE.match(stderr.strip().splitlines()[-1]) if stderr.strip() else None
    return (m.group(1), m.group(2)) if m else ("", "")


def check_refused(exe, path, layout, what):
    """ls and verify refuse `path` naming `layout` and the repack command; it stays as it was."""
    before = open(path, "rb").read()
    for cmd in ("ls", "verify"):
        rc, _, err = run(exe, cmd, path)
        msg, _ = error_of(err)
        check(rc == 1 and layout in msg and f"onnxzip repack {path} -o OUT.onnxzip" in msg,
              f"{what}: {cmd} names the layout ({layout}) and repack", f"exit {rc}: {err.strip()}")
    check(open(path, "rb").read() == before, f"{what}: ls/verify left the input unchanged")


def check_repacked(exe, work, path, model, what):
    out = os.path.join(work, what + ".onnxzip")
    before = open(path, "rb").read()
    rc, _, err = run(exe, "repack", path, "-o", out)
    if not check(rc == 0, f"{what}: repack", err.strip()):
        return
    check(open(path, "rb").read() == before, f"{what}: repack left the input unchanged")
    rc, _, err = run(exe, "verify", out)
    check(rc == 0, f"{what}: verify accepts the repacked archive", err.strip())
    with zipfile.ZipFile(out) as z:
        infos = z.infolist()
        check(infos[-1].filename == "__MODEL_PROTO" and all(i.compress_type == zipfile.ZIP_STORED for i in infos)
              and z.testzip() is None, f"{what}: zipfile reads it, stored, __MODEL_PROTO last")
        check(all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", i.filename) for i in infos),
              f"{what}: every entry name is an identifier", str([i.filename for i in infos]))
    classic = os.path.join(work, what, "model.onnx")
    rc, _, err = run(exe, "unpack", out, "-o", classic)
    if not check(rc == 0, f"{what}: unpack", err.strip()):
        return
    got = onnx.load(classic)
    want = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    have = {t.name: numpy_helper.to_array(t) for t in got.graph.initializer}
    check(want.keys() == have.keys() and all(np.array_equal(want[k], have[k]) and want[k].dtype == have[k].dtype
                                             for k in want), f"{what}: onnx.load reads the original tensors back")
    check([n.SerializeToString() for n in got.graph.node] == [n.SerializeToString() for n in model.graph.node],
          f"{what}: the graph's nodes are the original's")


def check_fails(exe, work, path, status, words, what):
    out = os.path.join(work, what + ".out.onnxzip")
    rc, _, err = run(exe, "repack", path, "-o", out)
    msg, got = error_of(err)
    check(rc == 1 and got == status and all(w in msg for w in words), f"{what}: repack fails with {status}",
          f"exit {rc}: {err.strip()}")
    left = [f for f in os.listdir(work) if f.startswith(what + ".out")]
    check(not left, f"{what}: no output left", str(left))


def damaged(work, tf_model, torch_model):
    """(name, path, status, words in the message) of zips repack must refuse."""
    cases = []
    p = os.path.join(work, "crc.zip")
    names = tf2onnx_zip(tf_model, p)
    with zipfile.ZipFile(p) as z:
        info = z.getinfo(names[1])
    data = bytearray(open(p, "rb").read())
    data[info.header_offset + 30 + len(info.filename.encode()) + 100] ^= 0xFF  # inside the entry's data
    open(p, "wb").write(bytes(data))
    cases.append(("crc", p, "ONNXZIP_ECRC", [names[1]]))
    p = os.path.join(work, "missing_tf.zip")
    names = tf2onnx_zip(tf_model, p)
    with zipfile.ZipFile(p) as z:
        kept = {n: z.read(n) for n in names if n != names[2]}
    with zipfile.ZipFile(p, "w") as z:
        for n, v in kept.items():
            z.writestr(n, v)
    cases.append(("missing_tf", p, "ONNXZIP_EREF", [names[2], "not an entry of the zip"]))
    p = os.path.join(work, "missing_torch.zip")
    torch_zip(torch_model, p)
    with zipfile.ZipFile(p) as z:
        kept = {i.filename: z.read(i) for i in z.infolist() if i.filename != "onnx::MatMul_12"}
    with zipfile.ZipFile(p, "w") as z:
        for n, v in kept.items():
            z.writestr(n, v)
    cases.append(("missing_torch", p, "ONNXZIP_EREF", ["onnx::MatMul_12", "__EXTERNAL"]))
    p = os.path.join(work, "model_onnx.zip")
    torch_zip(torch_model, p, model_name="model.onnx")
    cases.append(("model_onnx", p, "ONNXZIP_ENOTONNXZIP", ["no __MODEL_PROTO entry"]))
    p = os.path.join(work, "two_models.zip")
    tf2onnx_zip(tf_model, p)
    with zipfile.ZipFile(p, "a") as z:
        z.writestr("__MODEL_PROTO", tf_model.SerializeToString())
    cases.append(("two_models", p, "ONNXZIP_EDUPNAME", ["more than one model entry"]))
    return cases


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    exe = os.path.abspath(argv[1])
    tf_model, torch_model = make_model(TF_NAMES), make_model(TORCH_NAMES)
    with ozcommon.workdir(argv, "foreign_zips.") as work:
        os.chdir(work)
        good = [("tf2onnx", "a tf2onnx large-model zip (model entry '__MODEL_PROTO.onnx', entry 1 of 4)",
                 tf_model, lambda p: tf2onnx_zip(tf_model, p)),
                ("tf2onnx_mid", "a tf2onnx large-model zip (model entry '__MODEL_PROTO.onnx', entry 2 of 4)",
                 tf_model, lambda p: tf2onnx_zip(tf_model, p, model_at=1)),
                ("tf2onnx_dir", "an ONNX model zip of a whole directory (model entry 'out/__MODEL_PROTO.onnx'",
                 tf_model, lambda p: tf2onnx_zip(tf_model, p, prefix="out/")),
                ("torch", "a PyTorch ZIP_ARCHIVE export (model entry '__MODEL_PROTO', entry 1 of 5)",
                 torch_model, lambda p: torch_zip(torch_model, p)),
                ("torch_deflated", "a PyTorch COMPRESSED_ZIP_ARCHIVE export (model entry '__MODEL_PROTO', entry 1",
                 torch_model, lambda p: torch_zip(torch_model, p, compressed=True))]
        for what, layout, model, write in good:
            path = what + ".zip"
            write(path)
            check_refused(exe, path, layout, what)
            check_repacked(exe, work, path, model, what)
        for what, path, status, words in damaged(work, tf_model, torch_model):
            check_fails(exe, work, path, status, words, what)
    print(f"foreign_zips: {TALLY.passed} passed, {TALLY.failed} failed")
    return 1 if TALLY.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
