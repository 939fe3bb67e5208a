#!/usr/bin/python3
"""output_dirs — the CLI creates an output's missing parent directories.

    output_dirs.py ONNXZIP_EXE

As `mkdir -p`: `pack -o newdir/x.onnxzip`, `unpack -o out/sub/model.onnx` in
each layout, `extract -o`, `repack -o` (with libzip) write into directories
that did not exist, with the default umask's modes; Python's zipfile and
onnx.load (independent readers) check the results. A failing command leaves
no directory it made: a parent that is a regular file (ONNXZIP_EIO naming it,
reached through a new directory: new/../file/x), an input that is not a
model or an archive. `view -o` into a missing directory is refused
(ONNXZIP_EPATH): a view lies beside its archive. Existing directories,
empty ones included, are left as they were.
Prints "output_dirs: N passed, M failed"; exits 1 on any failure.
"""
import os
import re
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ozcommon

ERROR_LINE = re.compile(r"^onnxzip: (.*) \[(ONNXZIP_[A-Z0-9_]+)\]$")
WEIGHT = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
TALLY = ozcommon.Tally()
check = TALLY.check


def run(exe, *args):
    return subprocess.run([exe] + list(args), capture_output=True, text=True, timeout=60)


def tree(root):
    out = []
    for d, dirs, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, n), root) + "/" for n in dirs]
        out += [os.path.relpath(os.path.join(d, n), root) for n in files]
    return sorted(out)


def make_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    g = helper.make_graph([helper.make_node("MatMul", ["x", "weight"], ["y"])], "g", [x], [y],
                          [numpy_helper.from_array(WEIGHT, "weight")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def archive_ok(path, what):
    """Python's zipfile: CRCs good, __MODEL_PROTO last, the weight's bytes."""
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
            names = z.namelist()
            model = onnx.load_from_string(z.read("__MODEL_PROTO"))
            (w,) = model.graph.initializer
            entry = {e.key: e.value for e in w.external_data}["location"]
            same = z.read(entry) == WEIGHT.tobytes()
        check(bad is None and names[-1] == "__MODEL_PROTO" and same, f"{what}: zipfile reads it")
    except Exception as e:  # noqa: BLE001 (any failure of the oracle is a failure here)
        check(False, f"{what}: zipfile reads it", repr(e))


def model_ok(path, what):
    """onnx.load with its external data: the weight comes back."""
    try:
        m = onnx.load(path)
        (w,) = m.graph.initializer
        check(np.array_equal(numpy_helper.to_array(w), WEIGHT), f"{what}: onnx.load reads it")
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: onnx.load reads it", repr(e))


def dirs_made(root, rel, what):
    umask = os.umask(0)
    os.umask(umask)
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = os.path.join(root, *parts[:i])
        ok = os.path.isdir(d) and (os.stat(d).st_mode & 0o7777) == (0o777 & ~umask)
        check(ok, f"{what}: {'/'.join(parts[:i])} made, mode {0o777 & ~umask:o}",
              oct(os.stat(d).st_mode) if os.path.exists(d) else "missing")


def succeeds(exe, root, what, *args, out):
    r = run(exe, *args, "-o", out)
    check(r.returncode == 0, what, r.stderr.strip())
    dirs_made(root, os.path.relpath(out, root), what)


def refused(exe, root, what, status, *args, out, needle=None):
    """Exit 1 with `status`, and the tree under root as it was."""
    before = tree(root)
    r = run(exe, *args, "-o", out)
    lines = r.stderr.strip().splitlines()
    m = ERROR_LINE.match(lines[0]) if len(lines) == 1 else None
    ok = r.returncode == 1 and m and m.group(2) == status and (needle is None or needle in m.group(1))
    check(ok, f"{what}: {status}", r.stderr.strip())
    check(tree(root) == before, f"{what}: no directory left", str(sorted(set(tree(root)) - set(before))))


def main():
    exe = os.path.abspath(sys.argv[1])
    has_repack = "repack (libzip) yes" in run(exe, "--version").stdout
    with tempfile.TemporaryDirectory(prefix="oz-output-dirs-") as root:
        os.chdir(root)
        make_model("model.onnx")
        succeeds(exe, root, "pack -o newdir/x.onnxzip", "pack", "-q", "model.onnx", out="newdir/x.onnxzip")
        archive_ok("newdir/x.onnxzip", "pack -o newdir/x.onnxzip")
        for layout in ("single", "per-tensor", "inline"):
            out = f"out-{layout}/sub/model.onnx"
            succeeds(exe, root, f"unpack --layout {layout} -o {out}", "unpack", "-q", "newdir/x.onnxzip",
                     "--layout", layout, out=out)
            model_ok(out, f"unpack --layout {layout}")
        succeeds(exe, root, "extract -o t/a/w.bin", "extract", "newdir/x.onnxzip", "weight", out="t/a/w.bin")
        try:
            with open("t/a/w.bin", "rb") as f:
                check(f.read() == WEIGHT.tobytes(), "extract -o t/a/w.bin: the weight's bytes")
        except OSError as e:
            check(False, "extract -o t/a/w.bin: the weight's bytes", repr(e))
        if has_repack:
            succeeds(exe, root, "repack -o r/a/x.onnxzip", "repack", "newdir/x.onnxzip", out="r/a/x.onnxzip")
            archive_ok("r/a/x.onnxzip", "repack -o r/a/x.onnxzip")

        with open("file", "w") as f:
            f.write("x")
        os.makedirs("empty")
        for cmd, args in (("pack", ["pack", "model.onnx"]), ("unpack", ["unpack", "newdir/x.onnxzip"]),
                          ("extract", ["extract", "newdir/x.onnxzip", "weight"])):
            refused(exe, root, f"{cmd} -o new/../file/x", "ONNXZIP_EIO", *args, out="new/../file/x",
                    needle="file exists and is not a directory")
            refused(exe, root, f"{cmd} -o empty/new/../file/x", "ONNXZIP_EIO", *args,
                    out="empty/new/../../file/x", needle="file exists and is not a directory")
        refused(exe, root, "pack of a file that is no model", "ONNXZIP_EPROTO", "pack", "file", out="g1/a/x.onnxzip")
        refused(exe, root, "unpack of a classic model", "ONNXZIP_EUNSUPPORTED", "unpack", "model.onnx",
                out="g2/a/model.onnx")
        refused(exe, root, "view -o into a missing directory", "ONNXZIP_EPATH", "view", "newdir/x.onnxzip",
                out="newdir/sub/x.view.onnx", needle="a view must be in its archive's directory")
        check(os.path.isdir("empty") and not os.listdir("empty"), "an existing empty directory is kept")
    print(f"output_dirs: {TALLY.passed} passed, {TALLY.failed} failed")
    return 1 if TALLY.failed else 0


if __name__ == "__main__":
    sys.exit(main())
