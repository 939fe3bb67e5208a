#!/usr/bin/env python3
"""onnxruntime-genai benchmark: onnxzip.genai_model(PKG) against
og.Model(FOLDER), each figure against the folder measured in the same run.

Usage (the pinned venv: onnxruntime-genai, tokenizers, onnx; the build's
Python package on PYTHONPATH):
    PYTHONPATH=build/src/python build/pyvenv/bin/python tools/bench/bench_genai.py
        [--cli build/tools/onnxzip] [--hidden 1024] [--ffn 8192] [--repeat 5]
        [--tokens 64] [--dir DIR] [--keep]

Generates the genai repository of tests/packages/make_repos.py (a decoder
Gather -> MatMul + bias -> Relu -> MatMul -> MatMul(lm_head tied to the
embedding), byte-level BPE tokenizer, genai_config.json), widened to
--hidden x --ffn (default 1024 x 8192: 67 MiB of fp32 weights), in DIR
(default a new directory under /var/tmp), and packs it with `onnxzip pack`.
Each run is a fresh interpreter that imports onnxruntime_genai and onnxzip
(not timed), loads the model (timed: "load"), creates the tokenizer and
generates greedily up to --tokens tokens, the prompt's 12 included (timed:
"generate"), then reads /proc/self/status: VmHWM (peak RSS), RssAnon and
RssFile. Variants:

  folder            og.Model(FOLDER), genai's defaults (prepacking on)
  folder, no prepack  og.Config(FOLDER) + session.disable_prepacking = 1
  package           onnxzip.genai_model(PKG) (prepacking as the config has
                    it: on), the cache entry already written
  package, no prepack  onnxzip.genai_model(PKG, prepack=False)
  package, first call  the same as "package" with an empty cache directory

Medians of --repeat runs, variants alternated, their order rotated each
round; the page cache is warm, filled the same way for the folder and the
package (evicted, then read with read(): see bench_ort.py's evict()). Every variant's
generated token ids are checked equal to the folder's. Prints a markdown
table with ratios against "folder" and the machine.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
from bench_ort import evict, warm  # noqa: E402

CHILD = r"""
import json, os, sys, time
import onnxruntime_genai as og
import onnxzip
variant, source, cache, tokens = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def status():
    out = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmHWM", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) * 1024
    return out
before = status()
t0 = time.perf_counter()
if variant.startswith("folder"):
    config = og.Config(source)
    if variant == "folder, no prepack":
        config.overlay(json.dumps({"model": {"decoder": {"session_options": {"session.disable_prepacking": "1"}}}}))
    model = og.Model(config)
else:
    model = onnxzip.genai_model(source, cache_dir=cache, prepack=False if variant == "package, no prepack" else None)
t1 = time.perf_counter()
tok = og.Tokenizer(model)
params = og.GeneratorParams(model)
params.set_search_options(do_sample=False, max_length=tokens)
gen = og.Generator(model, params)
gen.append_tokens(tok.encode("The tokenizer and"))
while not gen.is_done():
    gen.generate_next_token()
t2 = time.perf_counter()
print(json.dumps({"load": t1 - t0, "generate": t2 - t1, "before": before, "after": status(),
                  "ids": [int(t) for t in gen.get_sequence(0)]}))
"""

VARIANTS = ["folder", "folder, no prepack", "package", "package, no prepack", "package, first call"]


def make(folder: pathlib.Path, hidden: int, ffn: int) -> None:
    sys.path.insert(0, str(REPO / "tests" / "packages"))
    import make_repos
    # the genai kind at another width: its builders read these module constants
    make_repos.HIDDEN, make_repos.FFN = hidden, ffn
    make_repos.make("genai", folder)


def run(variant: str, folder: pathlib.Path, pkg: pathlib.Path, cache: pathlib.Path, tokens: int) -> dict:
    if variant == "package, first call":
        shutil.rmtree(cache, ignore_errors=True)
    source = folder if variant.startswith("folder") else pkg
    p = subprocess.run([sys.executable, "-c", CHILD, variant, str(source), str(cache), str(tokens)],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"bench_genai: {variant}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout.splitlines()[-1])


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def report(results: dict, weights: int, pkg_size: int) -> None:
    def med(variant: str, f) -> float:
        return statistics.median(f(r) for r in results[variant])
    base = {"load": med("folder", lambda r: r["load"]),
            "VmHWM": med("folder", lambda r: r["after"]["VmHWM"]),
            "RssAnon": med("folder", lambda r: r["after"]["RssAnon"])}
    print(f"\nweights {mib(weights)} (fp32), package {mib(pkg_size)}; medians of {len(results['folder'])} runs; "
          "ratio = variant / folder\n")
    print("| variant | load | ratio | peak RSS (VmHWM) | ratio | RssAnon | ratio | RssFile | generate |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for v in VARIANTS:
        load, hwm = med(v, lambda r: r["load"]), med(v, lambda r: r["after"]["VmHWM"])
        anon, file_ = med(v, lambda r: r["after"]["RssAnon"]), med(v, lambda r: r["after"]["RssFile"])
        gen = med(v, lambda r: r["generate"])
        print(f"| {v} | {load * 1e3:.1f} ms | {load / base['load']:.2f} | {mib(hwm)} | {hwm / base['VmHWM']:.2f} | "
              f"{mib(anon)} | {anon / base['RssAnon']:.2f} | {mib(file_)} | {gen * 1e3:.1f} ms |")
    before = med("folder", lambda r: r["before"]["RssAnon"])
    print(f"\nthe interpreter with onnxruntime_genai and onnxzip imported, before loading: RssAnon {mib(before)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=str(REPO / "build" / "tools" / "onnxzip"))
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--dir")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    work = pathlib.Path(args.dir or tempfile.mkdtemp(prefix="bench_genai.", dir="/var/tmp"))
    folder, pkg, cache = work / "folder", work / "repo.onnxzip", work / "cache"
    try:
        if not (folder / "genai_config.json").exists():
            make(folder, args.hidden, args.ffn)
        subprocess.run([args.cli, "pack", str(folder), "-o", str(pkg), "--no-sync"], check=True,
                       stdout=subprocess.DEVNULL)
        files = [str(f) for f in [*folder.iterdir(), pkg]]
        evict(files)   # bench_ort.py's: the page cache filled by read() for both, whatever wrote them
        warm(files)
        run("package", folder, pkg, cache, args.tokens)   # the cache entry of "package"
        results: dict = {v: [] for v in VARIANTS}
        for r in range(args.repeat):
            order = VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]
            for v in order:
                results[v].append(run(v, folder, pkg, cache, args.tokens))
        ids = {v: {tuple(r["ids"]) for r in rs} for v, rs in results.items()}
        assert all(i == ids["folder"] and len(i) == 1 for i in ids.values()), ids
        weights = sum(f.stat().st_size for f in folder.iterdir() if f.name.startswith("model.onnx"))
        report(results, weights, pkg.stat().st_size)
        print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()}, "
              f"load average {os.getloadavg()[0]:.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
