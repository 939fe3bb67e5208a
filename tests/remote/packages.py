#!/usr/bin/python3
"""Remote packages (spec 19.5) end to end against nginx: a repository folder
of three models (an encoder and a decoder in onnx/ sharing a tied embedding,
a model at the top) and two files is packed, served, and read by URL:

- `ls URL` prints what `ls` of the local file prints, in at most two
  requests (the file's end, then the directory and manifest if they begin
  before it); no model is read;
- `fetch --model M URL` transfers at most 1.01x the bytes model M needs (its
  tensor entries, shared ones included, its model entry, the manifest, the
  directory and end records), counted from nginx's access log, and writes M
  alone as a single-model archive whose entries Python's zipfile finds equal
  to the package's, byte for byte;
- `extract URL --file PATH` gives the file's bytes; `verify URL` passes and a
  flipped byte in a model that is not the default fails it.

    packages.py --onnxzip EXE
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (its check() and counts)
from run import check  # noqa: E402
from servers import Nginx  # noqa: E402

MIB = 1 << 20


def model(path: str, arrays: dict[str, np.ndarray]) -> None:
    """A graph whose output sums one element of each initializer (the model
    only has to be valid; the weights are what the transfer counts)."""
    inits = [numpy_helper.from_array(a, n) for n, a in arrays.items()]
    nodes, last = [], None
    for i, name in enumerate(arrays):
        nodes.append(helper.make_node("ReduceSum", [name], [f"s{i}"], keepdims=0))
        if last:
            nodes.append(helper.make_node("Add", [last, f"s{i}"], [f"a{i}"]))
        last = f"a{i}" if last else f"s{i}"
    nodes.append(helper.make_node("Add", [last, "x"], ["y"]))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 6
    loc = os.path.basename(path) + "_data"
    save(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location=loc, size_threshold=1024)


def make_repo(root: str) -> None:
    rng = np.random.default_rng(7)
    embed = rng.standard_normal((1024, 1024), dtype=np.float32)  # 4 MiB, in both models of onnx/
    os.makedirs(os.path.join(root, "onnx"))
    model(os.path.join(root, "onnx", "encoder_model.onnx"),
          {"embed": embed, "enc.w": rng.standard_normal((2048, 1024), dtype=np.float32)})
    model(os.path.join(root, "onnx", "decoder_model_merged.onnx"),
          {"embed": embed.copy(), "dec.w": rng.standard_normal((2560, 1024), dtype=np.float32)})
    model(os.path.join(root, "model.onnx"), {"w": rng.standard_normal((2048, 1024), dtype=np.float32)})
    with open(os.path.join(root, "config.json"), "w") as f:
        f.write('{"model_type": "t5"}\n')
    with open(os.path.join(root, "tokenizer.json"), "wb") as f:
        f.write(bytes(range(256)) * 64)


def needed(pkg: str, oz: str, model_path: str) -> int:
    """The bytes `model_path` needs, from the local package as zipfile sees
    it: its tensor entries (each once), its model entry, the manifest, and
    the central directory and end records."""
    doc = json.loads(subprocess.run([oz, "ls", "--json", "--model", model_path, pkg], capture_output=True,
                                    text=True, check=True).stdout)
    entries = {t["entry"] for t in doc["tensors"] if t["storage"] == "entry"} | {model_path, "__PACKAGE"}
    with zipfile.ZipFile(pkg) as z:
        infos = {i.filename: i for i in z.infolist()}
    size = os.path.getsize(pkg)
    with open(pkg, "rb") as f:  # the directory and end records: from the EOCD's CD_Offset on
        f.seek(size - 22)
        cd_offset = int.from_bytes(f.read(22)[16:20], "little")
    cd = size - cd_offset
    return sum(infos[e].file_size for e in entries) + cd


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnxzip", required=True)
    args = ap.parse_args()
    oz = os.path.abspath(args.onnxzip)
    tmp = tempfile.mkdtemp(prefix="oz-remote-packages.")
    try:
        repo, docroot = os.path.join(tmp, "repo"), os.path.join(tmp, "www")
        os.makedirs(docroot)
        make_repo(repo)
        pkg = os.path.join(docroot, "repo.onnxzip")
        subprocess.run([oz, "pack", repo, "-o", pkg, "-q", "--no-sync"], check=True)
        with Nginx(docroot) as ng:
            url = ng.url("files", "repo.onnxzip")
            path = "/files/repo.onnxzip"

            def requests_of(fn):
                before = len(ng.requests(path))
                r = fn()
                after = ng.requests(path, wait_for=before + 1)
                return r, after[before:]

            local = subprocess.run([oz, "ls", pkg], capture_output=True, text=True).stdout
            r, reqs = requests_of(lambda: subprocess.run([oz, "ls", "--allow-http", url], capture_output=True,
                                                         text=True))
            check("ls URL of a package: exit 0", r.returncode == 0, r.stderr)
            check("ls URL prints what ls of the file prints",
                  r.stdout.replace(url, "X") == local.replace(pkg, "X"), r.stdout[:400])
            # the members in at most two requests (spec 19.5), then each model opened for its
            # tensor count and bytes (issue 35, point 8): at most two requests each
            models = sum(1 for line in local.splitlines() if line.startswith("model "))
            check(f"ls URL of a package: at most two requests, then two per model ({models})",
                  models == 3 and len(reqs) <= 2 + 2 * models and all(q["range"] for q in reqs),
                  str([q["range"] for q in reqs]))

            with zipfile.ZipFile(pkg) as z:
                names = z.namelist()
                local_bytes = {n: z.read(n) for n in names}
            for m in ("onnx/encoder_model.onnx", "onnx/decoder_model_merged.onnx", "model.onnx"):
                out = os.path.join(tmp, m.replace("/", "_") + ".onnxzip")
                r, reqs = requests_of(lambda: subprocess.run(
                    [oz, "fetch", "--allow-http", "--model", m, url, "-o", out, "-q"], capture_output=True,
                    text=True))
                check(f"fetch --model {m}: exit 0", r.returncode == 0, r.stderr)
                got, need = sum(q["bytes"] for q in reqs), needed(pkg, oz, m)
                check(f"fetch --model {m}: {got} bytes transferred for {need} needed (<= 1.01x)",
                      got <= 1.01 * need, str([(q["range"], q["bytes"]) for q in reqs]))
                if r.returncode:
                    continue
                v = subprocess.run([oz, "verify", out], capture_output=True, text=True)
                check(f"fetch --model {m}: the output verifies", v.returncode == 0, v.stderr)
                d = m.rpartition("/")[0] + "/" if "/" in m else ""
                with zipfile.ZipFile(out) as z:
                    same = all(local_bytes[d + n] == z.read(n) for n in z.namelist() if n != "__MODEL_PROTO")
                    check(f"fetch --model {m}: a single-model archive, its entries the package's bytes",
                          z.namelist()[-1] == "__MODEL_PROTO" and same and
                          z.read("__MODEL_PROTO") == local_bytes[m], str(z.namelist()))

            r = subprocess.run([oz, "extract", "--allow-http", url, "--file", "tokenizer.json"],
                               capture_output=True)
            check("extract URL --file tokenizer.json: its bytes",
                  r.returncode == 0 and r.stdout == local_bytes["tokenizer.json"], r.stderr.decode()[-300:])
            r = subprocess.run([oz, "verify", "--allow-http", url], capture_output=True, text=True)
            check("verify URL of a package", r.returncode == 0 and "3 models and 2 files" in r.stdout,
                  r.stdout + r.stderr)

            # a byte of the top-level model (not the default) flipped: verify must say so
            with zipfile.ZipFile(pkg) as z:
                info = z.getinfo("model.onnx")
            bad = os.path.join(docroot, "bad.onnxzip")
            shutil.copy(pkg, bad)
            with open(bad, "r+b") as f:  # the data begins after the local header's name and extra field
                f.seek(info.header_offset + 26)
                lens = f.read(4)
                f.seek(info.header_offset + 30 + int.from_bytes(lens[:2], "little") +
                       int.from_bytes(lens[2:], "little") + 5)
                b = f.read(1)
                f.seek(-1, 1)
                f.write(bytes([b[0] ^ 1]))
            r = subprocess.run([oz, "verify", "--allow-http", ng.url("files", "bad.onnxzip")], capture_output=True,
                               text=True)
            check("verify URL: a damaged non-default model fails (ECRC)",
                  r.returncode == 1 and "ONNXZIP_ECRC" in r.stderr and "model.onnx" in r.stderr, r.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"remote packages: {run.passed} passed, {run.failed} failed")
    return 1 if run.failed or not run.passed else 0


if __name__ == "__main__":
    sys.exit(main())
