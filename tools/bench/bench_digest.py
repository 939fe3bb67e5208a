#!/usr/bin/python3
"""Digest benchmark (issue 36): `onnxzip verify PKG --public-key PUB` of a
signed package (the signature, then the SHA-256 of every file it unpacks
to, hashed in place on all cores) against peers in the same run:
`model_signing verify key` of the same folder (--model-signing names its
command, e.g. a venv's bin/model_signing with model-signing 1.1.1),
`sha256sum` of the folder's files, and the machine's SHA-256 throughput
(`openssl speed -evp sha256`, one core) times its cores.

Usage:
    build/pyvenv/bin/python tools/bench/bench_digest.py [--cli build/tools/onnxzip]
        [--model-signing CMD] [--gib 1] [--repeat 3] [--dir DIR]

Generates in DIR (default a new directory under /var/tmp, removed after) a
folder of two models of GIB/2 GiB of random float weights each (tensors of
256 MiB), in their own data files, plus a config file; signs it with a fresh
P-256 key (model_signing when it runs, into the folder's model.sig; else
`onnxzip sign` signs the package); packs it; then times (warm page cache,
each input read once first; medians of --repeat):

  verify    onnxzip verify PKG --public-key PUB          (every file)
  model     onnxzip verify PKG --model a.onnx --public-key PUB  (one model: its files alone)
  sha256sum sha256sum of the folder's files (one process, one core)
  oms       model_signing verify key DIR --signature SIG --public_key PUB

and prints each time, its GB/s, and the ratios verify/peer; the target is
verify <= 1.0x model_signing's time and verify's GB/s >= 0.9x openssl's
one-core GB/s x cores.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper


CHUNK = 256 << 20  # one tensor's bytes: a 2 GiB model stays within protobuf's limit


def make_folder(root, gib):
    """Two models of gib/2 GiB of random float32 weights each, written
    straight into their data files (tensors of 256 MiB at most)."""
    half = int(gib * (1 << 30)) // 2 // 4096 * 4096
    rng = np.random.default_rng(1)
    for name in ("a", "b"):
        inits, off = [], 0
        with open(os.path.join(root, f"{name}.onnx.data"), "wb") as f:
            while off < half:
                n = min(CHUNK, half - off)
                f.write(rng.standard_normal(n // 4, dtype=np.float32).tobytes())
                t = TensorProto(name=f"W{len(inits)}", data_type=TensorProto.FLOAT, dims=[n // 4],
                                data_location=TensorProto.EXTERNAL)
                for k, v in (("location", f"{name}.onnx.data"), ("offset", str(off)), ("length", str(n))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
                inits.append(t)
                off += n
        outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, list(t.dims)) for i, t in enumerate(inits)]
        nodes = [helper.make_node("Identity", [t.name], [f"y{i}"]) for i, t in enumerate(inits)]
        model = helper.make_model(helper.make_graph(nodes, name, [], outs, inits),
                                  opset_imports=[helper.make_opsetid("", 17)])
        onnx.save(model, os.path.join(root, f"{name}.onnx"))
    with open(os.path.join(root, "config.json"), "w") as f:
        f.write('{"bench": true}\n')


def timed(cmd, repeat):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # warm
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def openssl_gbps():
    out = subprocess.run(["openssl", "speed", "-evp", "sha256", "-bytes", "1048576", "-seconds", "2"],
                         capture_output=True, text=True).stdout
    m = re.search(r"^sha256\s+([\d.]+)k", out, re.M)
    return float(m.group(1)) * 1000 / 1e9 if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/tools/onnxzip")
    ap.add_argument("--model-signing", default="model_signing")
    ap.add_argument("--gib", type=float, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir")
    a = ap.parse_args()
    base = a.dir or tempfile.mkdtemp(prefix="bench_digest-", dir="/var/tmp")
    try:
        folder, pkg = os.path.join(base, "repo"), os.path.join(base, "repo.onnxzip")
        key, pub = os.path.join(base, "key.pem"), os.path.join(base, "pub.pem")
        sig = os.path.join(folder, "model.sig")
        os.makedirs(folder, exist_ok=True)
        make_folder(folder, a.gib)
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs)
        size = sum(os.path.getsize(f) for f in files)
        subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key], check=True)
        subprocess.run(["openssl", "ec", "-in", key, "-pubout", "-out", pub], check=True, capture_output=True)
        oms = bool(a.model_signing and shutil.which(a.model_signing))
        if oms:
            subprocess.run([a.model_signing, "sign", "key", folder, "--private_key", key, "--signature", sig],
                           check=True, capture_output=True)
        subprocess.run([a.cli, "pack", folder, "-o", pkg, "-q", "--no-sync"], check=True)
        if not oms:
            print("model_signing: no --model-signing command (pip install model-signing==1.1.1): no oms peer; "
                  "the package is signed by onnxzip sign")
            subprocess.run([a.cli, "sign", pkg, "--private-key", key, "-q"], check=True)
        t = {"verify": timed([a.cli, "verify", pkg, "--public-key", pub], a.repeat),
             "model": timed([a.cli, "verify", pkg, "--model", "a.onnx", "--public-key", pub], a.repeat),
             "sha256sum": timed(["sha256sum", *files], a.repeat)}
        if oms:
            t["oms"] = timed([a.model_signing, "verify", "key", folder, "--signature", sig, "--public_key", pub],
                             a.repeat)
        one = openssl_gbps()
        cores = os.cpu_count()
        print(f"folder {size / 1e9:.2f} GB, {len(files)} files, {cores} cores, load {os.getloadavg()[0]:.1f}")
        for k, v in t.items():
            print(f"{k:10s} {v:7.2f} s  {size / v / 1e9 if k != 'model' else size / 2 / v / 1e9:6.2f} GB/s")
        for peer in ("sha256sum", "oms"):
            if peer in t:
                print(f"verify / {peer}: {t['verify'] / t[peer]:.2f}x the time")
        print(f"model / verify: {t['model'] / t['verify']:.2f}x the time (half the bytes)")
        if one:
            print(f"openssl one core {one:.2f} GB/s x {cores} = {one * cores:.2f} GB/s; "
                  f"verify {size / t['verify'] / 1e9 / (one * cores):.2f}x that")
    finally:
        if not a.dir:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
