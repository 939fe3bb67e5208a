#!/usr/bin/python3
"""model_fields — `onnxzip verify` requires of a model what onnx.checker
requires of the ModelProto itself.

    model_fields.py ONNXZIP_EXE [--keep DIR]

onnx.checker (checker.cc, check_model) refuses a model without ir_version,
one of IR version 3 or later without opset_import, and one without a graph.
For each case below, as a classic single-file model, a classic external-data
model (when it has tensors) and an archive (`onnxzip pack` of the single
file; or, for a model verify refuses, which pack refuses too, a zip of it
written by Python's zipfile):
  * onnx.checker's verdict is checked first, so the expectation is the
    checker's own (except a negative ir_version: the checker accepts -1
    without opset_import, onnxzip requires ir_version > 0);
  * `onnxzip verify` must exit 0 for a model the checker accepts, and for one
    it refuses exit 1 with one line "onnxzip: FILE: ... [ONNXZIP_EPROTO]"
    naming the file (and entry '__MODEL_PROTO' for an archive) and exactly
    the missing fields;
  * `onnxzip ls` must still open every one of them (exit 0);
  * `onnxzip pack` of a model verify refuses exits 1 with verify's message
    for the archive it would have written, and leaves no file behind.
The first case is the tester's file: 100 bytes of "P\\0", i.e. field 10 = 0
fifty times, a well-formed protobuf with nothing ONNX in it.
Prints "model_fields: N passed, M failed"; exits 1 on any failure.
"""
import os
import re
import sys
import zipfile

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ozcommon  # noqa: E402

ERROR_LINE = re.compile(r"^onnxzip: (.*) \[(ONNXZIP_[A-Z0-9_]+)\]$")
PHRASES = {"ir_version": "no ir_version", "negative": "ir_version is negative",
           "opset_import": "no opset_import", "graph": "no graph"}


def full_model():
    inits = [numpy_helper.from_array(np.arange(64, dtype=np.float32), "w"),
             numpy_helper.from_array(np.arange(16, dtype=np.int64), "k")]
    # initializers are graph inputs too: IR versions < 4 require it
    g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "fields",
                          [helper.make_tensor_value_info("w", TensorProto.FLOAT, [64]),
                           helper.make_tensor_value_info("k", TensorProto.INT64, [16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def variant(ir=None, opset=True, graph=True):
    m = full_model()
    if ir is not None:
        m.ir_version = ir
    if not opset:
        del m.opset_import[:]
    if not graph:
        m.ClearField("graph")
    return m


# name, ModelProto or raw bytes, missing fields ([] = valid), checker agrees
CASES = [
    ("100 bytes of P\\0 (the tester's file)", b"P\x00" * 50, ["ir_version", "graph"], True),
    ("complete model", variant(), [], True),
    ("no ir_version", variant(ir=0), ["ir_version"], True),
    ("ir_version 8, no opset_import", variant(opset=False), ["opset_import"], True),
    ("ir_version 3, no opset_import", variant(ir=3, opset=False), ["opset_import"], True),
    ("no graph", variant(graph=False), ["graph"], True),
    ("ir_version 8, no opset_import, no graph", variant(opset=False, graph=False),
     ["opset_import", "graph"], True),
    ("nothing: only a producer_name", onnx.ModelProto(producer_name="p"), ["ir_version", "graph"],
     True),
    ("ir_version 2, no opset_import (the checker accepts it)", variant(ir=2, opset=False), [],
     True),
    ("ir_version 1, no opset_import (the checker accepts it)", variant(ir=1, opset=False), [],
     True),
    ("ir_version -1, no opset_import (the checker accepts it, onnxzip does not)",
     variant(ir=-1, opset=False), ["negative"], False),
]


def checker_accepts(data):
    try:
        onnx.checker.check_model(onnx.load_model_from_string(data))
        return True
    except Exception:  # noqa: BLE001 - any refusal counts
        return False


def run_case(t, exe, d, i, name, model, missing, agrees):
    data = model if isinstance(model, bytes) else model.SerializeToString()
    accepted = checker_accepts(data)
    t.check((accepted == (not missing)) == agrees, f"{name}: onnx.checker "
            f"{'accepts' if accepted else 'refuses'} it", "not the verdict this case expects of it")
    files = []
    single = os.path.join(d, f"case{i}.onnx")
    with open(single, "wb") as f:
        f.write(data)
    files.append(("classic", single))
    if not isinstance(model, bytes) and model.HasField("graph"):
        sub = os.path.join(d, f"ext{i}")
        os.makedirs(sub)
        ext = os.path.join(sub, "model.onnx")
        m = onnx.ModelProto()
        m.CopyFrom(model)
        onnx.external_data_helper.convert_model_to_external_data(
            m, all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
        onnx.save_model(m, ext)
        files.append(("external-data", ext))
    archive = os.path.join(d, f"case{i}.onnxzip")
    before = set(os.listdir(d))
    r = ozcommon.run([exe, "pack", single, "-o", archive, "--size-threshold", "0"])
    pack_said = r.stderr.decode("utf-8", "replace")
    if not missing:
        t.check(r.returncode == 0, f"{name}: pack", pack_said)
    else:  # refused as verify refuses the archive (compared below), nothing written
        t.check(r.returncode == 1 and set(os.listdir(d)) == before, f"{name}: pack refuses it, no file left",
                f"{r.returncode} {pack_said!r} {sorted(set(os.listdir(d)) - before)}")
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:  # the archive, by another writer
            z.writestr("__MODEL_PROTO", data)
    files.append(("archive", archive))
    for layout, path in files:
        what = f"{name} [{layout}]"
        r = ozcommon.run([exe, "ls", path])
        t.check(r.returncode == 0, f"{what}: ls opens it", r.stderr)
        r = ozcommon.run([exe, "verify", path])
        err = r.stderr.decode("utf-8", "replace")
        if not missing:
            t.check(r.returncode == 0 and not err, f"{what}: verify accepts it", err)
            continue
        lines = err.splitlines()
        m = ERROR_LINE.match(lines[0]) if len(lines) == 1 else None
        t.check(r.returncode == 1 and m is not None and m.group(2) == "ONNXZIP_EPROTO",
                f"{what}: verify exits 1 with one [ONNXZIP_EPROTO] line", f"{r.returncode} {err!r}")
        if not m:
            continue
        msg = m.group(1)
        prefix = f"{path}: entry '__MODEL_PROTO': " if layout == "archive" else f"{path}: model: "
        t.check(msg.startswith(prefix), f"{what}: message names the file", msg)
        for field, phrase in PHRASES.items():
            t.check((phrase in msg) == (field in missing), f"{what}: '{phrase}' "
                    f"{'said' if field in missing else 'not said'}", msg)
        if layout == "archive":
            t.check(pack_said == err, f"{what}: pack said what verify says", f"{pack_said!r} != {err!r}")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    exe = argv[1]
    t = ozcommon.Tally()
    with ozcommon.workdir(argv, "oz-fields-") as d:
        for i, (name, model, missing, agrees) in enumerate(CASES):
            run_case(t, exe, d, i, name, model, missing, agrees)
    print(f"model_fields: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
