#!/usr/bin/python3
"""ls_keys — `onnxzip ls` lists an unnamed tensor by its key.

    ls_keys.py ONNXZIP_EXE [--keep DIR]

A model made with the onnx package has unnamed Constant tensors (two of
2 KiB, entries once packed, and small inline ones), a repeated node name, an
If subgraph, a list attribute (TENSORS), a function (domain "custom") and a
training graph. Each tensor's expected key comes from onnx's own view of the
model, per the documented format (onnxzip_tensor.key): its name, or
"<node name or node#I>/<attribute>[K]" under "function:DOMAIN:NAME/",
"training_info#I/algorithm/" or a subgraph's attribute path, "~2" for a
repeated path. For the archive (`onnxzip pack`) and the classic model:
  * `ls --json` gives every tensor in model order with "name" as onnx has it
    ("" when unnamed) and "key" as expected;
  * the `ls` table lists every key in its first column;
  * `extract KEY -o FILE` writes the tensor's raw_data as onnx has it.
Prints "ls_keys: N passed, M failed"; exits 1 on any failure.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ozcommon  # noqa: E402


def unnamed(values):
    t = numpy_helper.from_array(values)
    t.ClearField("name")
    return t


def constant(name, values, out):
    return helper.make_node("Constant", [], [out], name=name, value=unnamed(values))


def make_model():
    sub = helper.make_graph([constant("", np.full(3, 7, np.float32), "s")], "then", [],
                            [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3])])
    lst = helper.make_node("Custom", [], ["l"], domain="custom", name="",
                           vals=[unnamed(np.arange(2, dtype=np.float32)),
                                 numpy_helper.from_array(np.ones(2, np.float32), "listed")])
    nodes = [constant("big_a", np.arange(512, dtype=np.float32), "a"),
             constant("", np.arange(512, dtype=np.float32) * 3, "b"),
             constant("dup", np.array([1, 2], np.int64), "c"),
             constant("dup", np.array([3, 4], np.int64), "d"),
             helper.make_node("If", ["cond"], ["r"], name="if0", then_branch=sub,
                              else_branch=sub),
             lst]
    g = helper.make_graph(nodes, "keys", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("r", TensorProto.FLOAT, [3])],
                          [numpy_helper.from_array(np.zeros(4, np.float32), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("custom", 1)])
    m.ir_version = 8
    f = m.functions.add()
    f.name, f.domain = "F", "custom"
    f.node.append(constant("", np.full(300, 5, np.float32), "fo"))  # 1200 bytes: an entry
    f.output.append("fo")
    f.opset_import.append(helper.make_opsetid("", 13))
    ti = m.training_info.add()
    ti.algorithm.CopyFrom(helper.make_graph([constant("", np.array([9], np.int32), "t")], "algo", [], []))
    return m


def expected_keys(m):
    """[(name, key, TensorProto)] in model order, from onnx's view."""
    found = []

    def nodes(ns, prefix):
        for i, n in enumerate(ns):
            where = prefix + (n.name or f"node#{i}")
            for a in n.attribute:
                if a.HasField("t"):
                    found.append((a.t, f"{where}/{a.name}"))
                for k, t in enumerate(a.tensors):
                    found.append((t, f"{where}/{a.name}[{k}]"))
                if a.HasField("g"):
                    graph(a.g, f"{where}/{a.name}/")

    def graph(g, prefix):
        nodes(g.node, prefix)
        found.extend((t, f"{prefix}initializer#{i}") for i, t in enumerate(g.initializer))

    graph(m.graph, "")
    for i, ti in enumerate(m.training_info):
        if ti.HasField("initialization"):
            graph(ti.initialization, f"training_info#{i}/initialization/")
        if ti.HasField("algorithm"):
            graph(ti.algorithm, f"training_info#{i}/algorithm/")
    for f in m.functions:
        nodes(f.node, f"function:{f.domain + ':' if f.domain else ''}{f.name}/")
    out, taken = [], set()
    for t, path in found:
        key, n = t.name or path, 2
        while not t.name and key in taken:
            key, n = f"{path}~{n}", n + 1
        taken.add(key)
        out.append((t.name, key, t))
    return out


def check_file(t, exe, path, expected, tmp):
    what = os.path.basename(path)
    r = ozcommon.run([exe, "ls", "--json", path])
    if not t.check(r.returncode == 0, f"{what}: ls --json", r.stderr):
        return
    listed = json.loads(r.stdout)["tensors"]
    got = [(x["name"], x.get("key")) for x in listed]
    t.check(got == [(n, k) for n, k, _ in expected], f"{what}: ls --json names and keys",
            f"\n  got      {got}\n  expected {[(n, k) for n, k, _ in expected]}")
    r = ozcommon.run([exe, "ls", path])
    table = r.stdout.decode().split("\ntensors:\n", 1)[-1].splitlines()[1:]
    t.check([line.split()[0] for line in table if line] == [k for _, k, _ in expected],
            f"{what}: the ls table lists the keys", "\n".join(table))
    for name, key, tensor in expected:
        if name or not tensor.HasField("raw_data"):
            continue
        out = os.path.join(tmp, "x.bin")
        r = ozcommon.run([exe, "extract", path, key, "-o", out, "-q"])
        ok = r.returncode == 0 and open(out, "rb").read() == tensor.raw_data
        t.check(ok, f"{what}: extract {key}", r.stderr)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    exe = argv[1]
    t = ozcommon.Tally()
    m = make_model()
    expected = expected_keys(m)
    # the oracle itself, against the keys the model was built for
    t.check([k for _, k, _ in expected] ==
            ["big_a/value", "node#1/value", "dup/value", "dup/value~2", "if0/else_branch/node#0/value",
             "if0/then_branch/node#0/value", "node#5/vals[0]", "listed", "w",
             "training_info#0/algorithm/node#0/value", "function:custom:F/node#0/value"],
            "oracle keys", [k for _, k, _ in expected])
    with ozcommon.workdir(argv, "oz-keys-") as d:
        classic, archive = os.path.join(d, "m.onnx"), os.path.join(d, "m.onnxzip")
        onnx.save(m, classic)
        r = ozcommon.run([exe, "pack", classic, "-o", archive, "-q"])
        if t.check(r.returncode == 0, "pack", r.stderr):
            check_file(t, exe, archive, expected, d)
            r = ozcommon.run([exe, "ls", "--json", archive])
            storage = {x.get("key"): x["storage"] for x in json.loads(r.stdout)["tensors"]} if r.returncode == 0 else {}
            t.check(storage.get("big_a/value") == storage.get("node#1/value") == "entry"
                    and storage.get("dup/value") == "inline", "2 KiB constants are entries, small ones inline",
                    storage)
        check_file(t, exe, classic, expected, d)
    print(f"ls_keys: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
