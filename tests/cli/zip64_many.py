#!/usr/bin/python3
"""zip64_many — more than 65,535 entries force the zip64 end records.

    zip64_many.py ONNXZIP_EXE LIBZIP_ORACLE_EXE [--count N]

Builds a model with N (default 70,000) one-element int8 initializers with
unique names, packs it with --size-threshold 0 (N + 1 entries with
__MODEL_PROTO), and checks the archive with `onnxzip verify`, zipcheck (which
must find a zip64 end record), libzip_oracle --expect-entries N+1,
`unzip -t -q` and Python's zipfile testzip(). Prints
"zip64_many: N passed, M failed"; exits 1 on any failure.
"""
import os
import sys
import tempfile
import time
import zipfile

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import ozcommon  # noqa: E402
import zipcheck  # noqa: E402


def build_model(n):
    g = onnx.GraphProto(name="many")
    for i in range(n):
        t = g.initializer.add()
        t.name = f"t{i}"
        t.data_type = TensorProto.INT8
        t.dims.append(1)
        t.raw_data = bytes([i & 0x7F])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def main(argv):
    args = argv[1:]
    n = 70000
    if "--count" in args:
        i = args.index("--count")
        n = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    onnxzip, libzip_oracle = args
    passed = failed = 0

    def report(label, err, t0):
        nonlocal passed, failed
        dt = time.time() - t0
        if err:
            failed += 1
            print(f"FAIL {label} ({dt:.1f} s): {err}")
        else:
            passed += 1
            print(f"ok   {label} ({dt:.1f} s)")

    def proc(label, cmd):
        t0 = time.time()
        p = ozcommon.run(cmd, timeout=300)
        err = None
        if p.returncode != 0:
            tail = (p.stderr or p.stdout).decode("utf-8", "replace").strip().splitlines()
            err = f"exited {p.returncode}: " + " | ".join(tail[-3:])
        report(label, err, t0)
        return p

    with tempfile.TemporaryDirectory(prefix="onnxzip-zip64-") as d:
        t0 = time.time()
        mp = os.path.join(d, "many.onnx")
        onnx.save(build_model(n), mp)
        print(f"built a model of {n} initializers in {time.time() - t0:.1f} s")
        arc = os.path.join(d, "many.onnxzip")
        p = proc("pack", [onnxzip, "pack", mp, "-o", arc, "--size-threshold", "0", "--keep-typed"])
        if p.returncode == 0:
            proc("onnxzip verify", [onnxzip, "verify", arc])
            t0 = time.time()
            a, errs = zipcheck.check_file(arc, 64)
            if not errs:
                if not a.zip64:
                    errs = ["no zip64 end of central directory record"]
                elif len(a.entries) != n + 1:
                    errs = [f"{len(a.entries)} entries, expected {n + 1}"]
                elif a.comment:
                    errs = ["archive comment present"]
            report("zipcheck (zip64 end record, entries, alignment, CRC)",
                   "; ".join(errs[:5]), t0)
            proc("libzip_oracle", [libzip_oracle, arc, "--expect-entries", str(n + 1)])
            proc("unzip -t -q", ["unzip", "-t", "-q", arc])
            t0 = time.time()
            err = None
            with zipfile.ZipFile(arc) as z:
                cnt = len(z.infolist())
                bad = z.testzip()
            if bad is not None:
                err = f"testzip() reports '{bad}'"
            elif cnt != n + 1:
                err = f"zipfile sees {cnt} entries, expected {n + 1}"
            report("zipfile testzip", err, t0)
    print(f"zip64_many: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
