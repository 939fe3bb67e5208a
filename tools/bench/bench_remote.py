#!/usr/bin/python3
"""Remote archives benchmark: onnxzip over HTTP range requests against nginx
on loopback (tests/remote/servers.py), each figure against a peer measured
in the same run.

Usage:
    /usr/bin/python3 tools/bench/bench_remote.py --build BUILD_DIR [--size 512M]
                                                 [--workdir /dev/shm/onnxzip-bench-remote]

Generates LLM-like models with bench.py's generator (onnx, numpy), packs
them with BUILD_DIR's CLI, serves them with nginx and measures:

  R1 ls URL       requests and bytes nginx sent for `onnxzip ls URL`, against
                  the archive's size, for archives of several sizes and tensor
                  counts (the directory and model grow with the tensors, not
                  with the weights)
  R2 fetch        `onnxzip fetch URL` (verified as it streams) against
                  `curl -o` of the same URL: medians of 3, both writing to
                  WORKDIR (tmpfs by default, so that the disk is not what is
                  measured); target >= 0.9x curl's speed
  R3 --tensors    bytes nginx sent for `fetch --tensors` of 1/8, 1/4 and 1/2 of
                  the layers, against the bytes of the entries kept
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "remote"))
import bench  # noqa: E402  (the model generator)
from servers import Nginx  # noqa: E402

rows: list[tuple[str, str, str, str, str]] = []


def row(what: str, ours: str, peer: str, ratio: str, verdict: str = "-") -> None:
    rows.append((what, ours, peer, ratio, verdict))
    print(f"  {what}: {ours} | {peer} | {ratio} {verdict}", file=sys.stderr)


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def served(ng: Nginx, before: int) -> tuple[int, int]:
    log = ng.requests(wait_for=before + 1)[before:]
    return len(log), sum(e["bytes"] for e in log)


def make_archive(oz: str, workdir: str, docroot: str, size: int, ntensors: int) -> str:
    sub = os.path.join(workdir, f"gen-{size}-{ntensors}")
    os.makedirs(sub, exist_ok=True)
    model = bench.generate(sub, size, ntensors, "float16")
    name = f"m-{size >> 20}M-{ntensors}t.onnxzip"
    out = os.path.join(docroot, name)
    if not os.path.exists(out):
        subprocess.run([oz, "pack", "-q", "--no-sync", model, "-o", out], check=True)
    return name


def r1_ls(oz: str, ng: Nginx, docroot: str, names: list[str]) -> None:
    for name in names:
        size = os.path.getsize(os.path.join(docroot, name))
        before = len(ng.requests())
        subprocess.run([oz, "ls", "--allow-http", ng.url("files", name)], check=True, stdout=subprocess.DEVNULL)
        n, sent = served(ng, before)
        row(f"R1 ls {name}", f"{n} requests, {mib(sent)}", f"archive {mib(size)}", f"{sent / size:.5f} of it",
            "PASS" if n <= 2 else "FAIL (> 2 requests)")


def timed(argv: list[str], out: str) -> float:
    for p in (out, out + ".part", out + ".part.etag"):
        if os.path.exists(p):
            os.unlink(p)
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def r2_fetch(oz: str, ng: Nginx, workdir: str, name: str, size: int) -> None:
    url = ng.url("files", name)
    out = os.path.join(workdir, "fetched.onnxzip")
    ours, curl = [], []
    for _ in range(3):  # alternated, so that both see the same cache state
        curl.append(timed(["curl", "-sS", "-o", out, url], out))
        ours.append(timed([oz, "fetch", "-q", "--allow-http", url, "-o", out], out))
    o, c = statistics.median(ours), statistics.median(curl)
    speed = c / o
    row(f"R2 fetch {name}", f"{o:.3f} s ({size / o / 2**30:.2f} GiB/s)", f"curl -o {c:.3f} s "
        f"({size / c / 2**30:.2f} GiB/s)", f"{speed:.2f}x curl's speed", "PASS" if speed >= 0.9 else "FAIL (< 0.9)")
    os.unlink(out)


def r3_tensors(oz: str, ng: Nginx, workdir: str, name: str, layers: int) -> None:
    out = os.path.join(workdir, "shard.onnxzip")
    url = ng.url("files", name)
    for frac in (8, 4, 2):
        k = max(layers // frac, 1)
        pats = [f"model.layers.{i}.*" for i in range(k)]
        args = [oz, "fetch", "-q", "--allow-http", url, "-o", out]
        for p in pats:
            args += ["--tensors", p]
        before = len(ng.requests())
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        n, sent = served(ng, before)
        ls = subprocess.run([oz, "ls", "--json", out], check=True, capture_output=True, text=True).stdout
        import json
        kept = sum(e["size"] for e in json.loads(ls)["entries"] if e["name"] != "__MODEL_PROTO")
        total = os.path.getsize(os.path.join(ng.docroot, name))
        row(f"R3 --tensors {k} of {layers} layers", f"{mib(sent)} in {n} requests",
            f"kept entries {mib(kept)} ({kept / total:.3f} of the archive)", f"{sent / kept:.3f}x the kept bytes",
            "PASS" if sent <= kept * 1.02 + (1 << 20) else "FAIL")
        os.unlink(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="meson build directory of this repository")
    ap.add_argument("--size", default="512M")
    ap.add_argument("--workdir", default="/dev/shm/onnxzip-bench-remote")
    a = ap.parse_args()
    oz = os.path.join(os.path.abspath(a.build), "tools", "onnxzip")
    size = bench.parse_size(a.size)
    docroot = os.path.join(a.workdir, "www")
    os.makedirs(docroot, exist_ok=True)
    big = make_archive(oz, a.workdir, docroot, size, 200)
    names = [make_archive(oz, a.workdir, docroot, 64 << 20, 200), big,
             make_archive(oz, a.workdir, docroot, 64 << 20, 2000)]
    with Nginx(docroot) as ng:
        r1_ls(oz, ng, docroot, names)
        r2_fetch(oz, ng, a.workdir, big, os.path.getsize(os.path.join(docroot, big)))
        r3_tensors(oz, ng, a.workdir, big, (200 - 3) // 9)
    print(f"onnxzip remote benchmark: nginx on loopback, {bench.machine_line()}")
    w = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in [("phase", "ours", "peer", "ratio", "")] + rows:
        print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
    shutil.rmtree(os.path.join(a.workdir, "www"), ignore_errors=True)
    return 0 if all(not r[4].startswith("FAIL") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
