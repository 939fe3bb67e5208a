#!/usr/bin/python3
"""rss_flat — peak memory of pack and unpack does not grow with the weights.

    rss_flat.py ONNXZIP_EXE MAXRSS_EXE [SMALL_MIB LARGE_MIB]      (default 64 512)

For each size, a classic external-data model (the layout onnx's
save_as_external_data writes: one data file, here sparse so that the test
costs little disk) with 16 tensors is packed, then the archive is unpacked
(single layout); the peak resident set of each run is read by MAXRSS_EXE
(tests/support/maxrss.c: a tiny launcher, since ru_maxrss inherits the forking
process's own high-water mark across exec). Both must stay under 64 MiB + 2 x the model proto at every size, and
grow by less than 16 MiB from the small size to the large one: memory that
scaled with the weights would grow by hundreds of MiB here.

Prints a table and "rss_flat: N passed, M failed".
"""
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

passed = failed = 0


def check(ok, what):
    global passed, failed
    passed += ok
    failed += not ok
    if not ok:
        print("FAIL", what)


def peak_rss_kib(maxrss, args):
    p = subprocess.run([maxrss] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({p.returncode}): {err}")
    return int(err.strip().splitlines()[-1].split()[1])


def make_model(d, mib, n=16):
    each = (mib << 20) // n
    data = os.path.join(d, "m.onnx.data")
    with open(data, "wb") as f:
        f.truncate(each * n)  # sparse: zeros cost no disk
        for i in range(n):  # one non-zero byte per tensor, so they differ
            f.seek(i * each)
            f.write(bytes([i + 1]))
    inits = []
    for i in range(n):
        t = TensorProto(name=f"model.layers.{i}.weight", data_type=TensorProto.FLOAT, dims=[each // 4])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "m.onnx.data"), ("offset", str(i * each)), ("length", str(each))):
            t.external_data.add(key=k, value=v)
        inits.append(t)
    g = helper.make_graph([], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=inits)
    path = os.path.join(d, "m.onnx")
    onnx.save_model(helper.make_model(g), path)
    return path, os.path.getsize(path)


def main():
    exe, maxrss = sys.argv[1], sys.argv[2]
    sizes = [int(sys.argv[3]), int(sys.argv[4])] if len(sys.argv) > 4 else [64, 512]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for mib in sizes:
            sd = os.path.join(d, str(mib))
            os.makedirs(os.path.join(sd, "out"))
            model, proto = make_model(sd, mib)
            arc = os.path.join(sd, "m.onnxzip")
            pack = peak_rss_kib(maxrss, [exe, "pack", model, "-o", arc, "-q"])
            unpack = peak_rss_kib(maxrss, [exe, "unpack", arc, "-o", os.path.join(sd, "out", "m.onnx"), "-q"])
            rows.append((mib, proto, pack, unpack))
            limit = 64 * 1024 + 2 * proto // 1024
            check(pack < limit, f"pack of {mib} MiB: peak RSS {pack} KiB over {limit} KiB")
            check(unpack < limit, f"unpack of {mib} MiB: peak RSS {unpack} KiB over {limit} KiB")
            for f in os.listdir(os.path.join(sd, "out")):  # free the disk before the next size
                os.unlink(os.path.join(sd, "out", f))
            os.unlink(arc)
    print(f"{'weights':>10} {'model proto':>12} {'pack peak RSS':>14} {'unpack peak RSS':>16}")
    for mib, proto, pack, unpack in rows:
        print(f"{mib:>6} MiB {proto:>10} B {pack / 1024:>10.1f} MiB {unpack / 1024:>12.1f} MiB")
    for k, name in ((2, "pack"), (3, "unpack")):
        growth = rows[1][k] - rows[0][k]
        check(growth < 16 * 1024, f"{name}: peak RSS grew by {growth} KiB from {sizes[0]} to {sizes[1]} MiB")
    print(f"rss_flat: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
