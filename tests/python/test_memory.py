"""Zero copy at scale: touching every page of every array of a 1 GiB
archive grows the process's anonymous memory (RssAnon) by under 64 MiB while
its file-backed memory (RssFile) grows by the gigabyte, read through the
mapping. The negative control copies each array (np.array) and must see
RssAnon grow by the gigabyte: the measurement can fail.

Each measurement runs in a fresh interpreter (a subprocess), so the test
process's own allocations do not blur it. /proc/self/status is read, nothing
is timed."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import onnxzip

MiB = 1 << 20
COUNT, EACH = 64, 16 * MiB  # 1 GiB


@pytest.fixture(scope="module")
def big_archive(tmp_path_factory):
    """64 UINT8 tensors of 16 MiB, tensor k filled with byte k + 1 (no zero
    run, so the file has no hole and every page is read from the file)."""
    path = tmp_path_factory.mktemp("memory") / "big.onnxzip"
    model = onnx.ModelProto()
    model.ir_version = 8
    model.opset_import.add().version = 13
    model.graph.name = "g"
    writer = onnxzip._native.writer(str(path), 64, 1)  # ONNXZIP_WRITE_NO_SYNC: scratch output
    try:
        for k in range(COUNT):
            name = f"t{k}"
            writer.add(name, np.full(EACH, k + 1, dtype=np.uint8))
            t = model.graph.initializer.add()
            t.name, t.data_type = name, TensorProto.UINT8
            t.dims.append(EACH)
            t.data_location = TensorProto.EXTERNAL
            kv = t.external_data.add()
            kv.key, kv.value = "location", name
        writer.set_model(model.SerializeToString())
        writer.finish()
    except BaseException:
        writer.abort()
        raise
    yield path
    path.unlink()


# Runs in a fresh interpreter: opens the archive, touches one byte of every
# page of every array (checking its value), and prints the RssAnon/RssFile
# growth in bytes. COPY=1: the arrays are copied first (np.array), the
# negative control.
MEASURE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import onnxzip

    def status():
        out = {}
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile"):
                    out[key] = int(value.split()[0]) * 1024
        return out

    path, copy = sys.argv[1], sys.argv[2] == "1"
    arrays = []
    before = status()
    with onnxzip.open(path) as a:
        for k, info in enumerate(a.tensor_infos):
            arr = a.tensors[info.name]
            if copy:
                arr = np.array(arr)
            pages = arr.reshape(-1)[::4096]  # one byte per 4 KiB page
            if not (pages == k + 1).all() or arr[-1] != k + 1:
                sys.exit(f"tensor {info.name}: wrong content")
            arrays.append(arr)
        after = status()
    print(json.dumps({"tensors": len(arrays), "bytes": sum(x.nbytes for x in arrays),
                      "anon": after["RssAnon"] - before["RssAnon"],
                      "file": after["RssFile"] - before["RssFile"]}))
""")


def measure(path, copy: bool) -> dict:
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(path), "1" if copy else "0"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["tensors"] == COUNT and result["bytes"] == COUNT * EACH
    print(f"copy={copy}: RssAnon +{result['anon'] / MiB:.1f} MiB, RssFile +{result['file'] / MiB:.1f} MiB")
    return result


def test_touching_every_page_is_file_backed(big_archive):
    r = measure(big_archive, copy=False)
    assert r["anon"] < 64 * MiB, f"RssAnon grew by {r['anon'] / MiB:.1f} MiB: the arrays were copied"
    assert r["file"] >= 900 * MiB, f"RssFile grew by only {r['file'] / MiB:.1f} MiB: the pages were not mapped"


def test_negative_control_copies_grow_anon(big_archive):
    r = measure(big_archive, copy=True)
    assert r["anon"] > 900 * MiB, f"copies grew RssAnon by only {r['anon'] / MiB:.1f} MiB: the measurement is blind"
