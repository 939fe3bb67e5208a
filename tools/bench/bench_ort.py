#!/usr/bin/python3
"""onnxzip runtime-view benchmark: ONNX Runtime on three layouts of one model.

Usage:
    /usr/bin/python3 tools/bench/bench_ort.py [--build BUILD_DIR] [--sizes 1G,4G]
                                              [--tensors 200] [--reps 3]
                                              [--dtype float16|float32]
                                              [--workdir DIR] [--keep]

For each size, generates an LLM-like fp16 (or --dtype float32) model (bench.py's tensor plan:
embeddings, per-layer q/k/v/o, gate/up/down, norms, lm_head; all matrices
[rows, 2048]) in the classic external-data layout, and writes:

  (a) classic  the generated model.onnx + model.onnx.data (what ORT loads today)
  (b) unpack   `onnxzip pack` then `onnxzip unpack --layout single` of it
  (c) view     `onnxzip pack` then `onnxzip view`: model.view.onnx beside
               model.onnxzip, whose external data is the archive itself

The graph reads every weight exactly once per run: input x is [1, rows]
(the weights' type); every matrix W gets MatMul(x, W) -> [1, 2048], and one Sum adds all
those and every norm vector (broadcast) into the output [1, 2048].

Each measurement is one fresh node process (tools/bench/ort_load.js, the
pinned onnxruntime-node of tests/ort, CPU, 1 thread, graph optimizations
off) that creates the session by path and runs it once: session-create
time, first-run time, and from /proc/self/status after that run VmHWM (peak
RSS), RssAnon and RssFile, and the minor page faults from create to the end
of the run. Prepacking on (ORT's default) and off (session config entry
session.disable_prepacking = "1"). Once generated, every file is evicted
from the page cache (POSIX_FADV_DONTNEED: this touches no other file), and
before every process the variant's files are read once with read(): the
page cache is warm, and filled the same way, for all; rounds
of all six variant x prepack runs, order rotated per round; medians of
--reps rounds. The three variants' outputs must be bit-identical (checked).

Prints one table per size with ratios (b)/(a) and (c)/(a) and the targets
of issue 10: (c) within 1.1x of (a) in create + first-run time; RssAnon of
(c), prepacking off, <= 64 MiB + the view's size (its model proto).
Generated files are removed after each size unless --keep.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (parse_size, make_plan, machine_line, release_build, log)

log = bench.log
VARIANTS = ("a", "b", "c")
LABEL = {"a": "(a) classic", "b": "(b) unpack --layout single", "c": "(c) view of the archive"}


def generate(d, size, ntensors, dtype):
    """The classic model in D: model.onnx + model.onnx.data; returns (path, rows)."""
    import numpy as np
    from onnx import TensorProto, helper as oh

    item = 2 if dtype == "float16" else 4
    odt = TensorProto.FLOAT16 if item == 2 else TensorProto.FLOAT
    plan = bench.make_plan(size, ntensors, item)
    os.makedirs(d)
    rng = np.random.default_rng(1234)
    chunk = 16 << 20
    inits, mats, norms, off = [], [], [], 0
    with open(os.path.join(d, "model.onnx.data"), "wb") as f:
        for name, dims in plan:
            nbytes = int(np.prod(dims)) * item
            left = nbytes
            while left:
                k = min(chunk, left)
                a = rng.standard_normal(k // item, dtype=np.float32) * 0.02
                f.write((a.astype(np.float16) if item == 2 else a).tobytes())
                left -= k
            t = TensorProto(name=name, data_type=odt, dims=dims,
                            data_location=TensorProto.EXTERNAL)
            for k_, v_ in (("location", "model.onnx.data"), ("offset", str(off)), ("length", str(nbytes))):
                e = t.external_data.add()
                e.key, e.value = k_, v_
            inits.append(t)
            (norms if len(dims) == 1 else mats).append(name)
            off += nbytes
    rows, hidden = plan[[n for n, _ in plan].index(mats[0])][1]
    nodes = [oh.make_node("MatMul", ["x", w], ["y%d" % i]) for i, w in enumerate(mats)]
    nodes.append(oh.make_node("Sum", ["y%d" % i for i in range(len(mats))] + norms, ["out"]))
    graph = oh.make_graph(nodes, "bench_ort",
                          [oh.make_tensor_value_info("x", odt, [1, rows])],
                          [oh.make_tensor_value_info("out", odt, [1, hidden])],
                          initializer=inits)
    model = oh.make_model(graph, producer_name="onnxzip-bench-ort", opset_imports=[oh.make_opsetid("", 17)])
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path, off


def prepare(cli, wd, size, ntensors, dtype):
    """{variant: (model path, [files to warm])} for the three layouts."""
    shutil.rmtree(wd, ignore_errors=True)
    t0 = time.time()
    a, nbytes = generate(os.path.join(wd, "a"), size, ntensors, dtype)
    log("generated %s (%.1f MiB of weights) in %.1fs" % (a, nbytes / 2**20, time.time() - t0))
    os.makedirs(os.path.join(wd, "b"))
    os.makedirs(os.path.join(wd, "c"))
    arch = os.path.join(wd, "c", "model.onnxzip")
    view = os.path.join(wd, "c", "model.view.onnx")
    b = os.path.join(wd, "b", "model.onnx")
    for argv in ([cli, "pack", a, "-o", arch, "-q"],
                 [cli, "unpack", arch, "--layout", "single", "-o", b, "-q"],
                 [cli, "view", arch, "-o", view, "-q"]):
        t0 = time.time()
        subprocess.check_call(argv)
        log("%s: %.1fs" % (" ".join(os.path.basename(x) if os.path.isabs(x) else x for x in argv[1:3]),
                            time.time() - t0))
    os.sync()
    variants = {"a": (a, [a, a + ".data"]), "b": (b, [b, b + ".data"]), "c": (view, [view, arch])}
    for _, files in variants.values():
        evict(files)
    return variants


def evict(files):
    """Drop FILES from the page cache (synced first, so nothing is dirty).

    How a file was written decides the size of its page-cache folios (the
    generator's write() calls vs onnxzip's copy_file_range), hence how many
    page faults mapping it costs: 2.7x more for the copied files in a first
    1 GiB run, and (a) ran 1.4x faster for that alone. Evicted, then read with
    read() by warm(), every variant's pages come from the same readahead.
    """
    for p in files:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def warm(files):
    buf = bytearray(16 << 20)
    for p in files:
        with open(p, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass


def run_one(model, prepack):
    r = subprocess.run(["node", os.path.join(HERE, "ort_load.js"), model, prepack],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("ort_load.js %s %s failed (%d): %s" % (model, prepack, r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def measure(variants, reps):
    """{(variant, prepack): [result per round]}, rounds of all six, rotated."""
    keys = [(v, p) for p in ("off", "on") for v in VARIANTS]
    res = {k: [] for k in keys}
    for r in range(reps):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            model, files = variants[k[0]]
            warm(files)
            d = run_one(model, k[1])
            res[k].append(d)
            log("round %d %s prepack %s: create %.1f ms, run %.1f ms, HWM %d MiB, anon %d MiB, file %d MiB, minflt %d"
                % (r + 1, k[0], k[1], d["create_ms"], d["run_ms"], d["after"]["VmHWM"] >> 10,
                   d["after"]["RssAnon"] >> 10, d["after"]["RssFile"] >> 10, d["minflt"]))
    return res


def med(runs, f):
    return statistics.median(f(d) for d in runs)


def report(size_s, nbytes, view_size, res, out):
    mib = lambda kb: "%.1f" % (kb / 1024)
    out.append("size=%s: %d weight bytes (%.1f MiB), view %d bytes; medians of %d runs, times in ms, memory in MiB"
               % (size_s, nbytes, nbytes / 2**20, view_size, len(res[("a", "off")])))
    hdr = ("prepack", "variant", "create", "run", "create+run", "x (a)", "VmHWM", "RssAnon", "RssFile", "minflt")
    rows = []
    verdicts = []
    budget_kb = 64 * 1024 + view_size / 1024
    for p in ("off", "on"):
        base = None
        for v in VARIANTS:
            runs = res[(v, p)]
            c, r = med(runs, lambda d: d["create_ms"]), med(runs, lambda d: d["run_ms"])
            tot = med(runs, lambda d: d["create_ms"] + d["run_ms"])
            base = tot if v == "a" else base
            anon = med(runs, lambda d: d["after"]["RssAnon"])
            rows.append((p, LABEL[v], "%.1f" % c, "%.1f" % r, "%.1f" % tot,
                         "-" if v == "a" else "%.3f" % (tot / base),
                         mib(med(runs, lambda d: d["after"]["VmHWM"])), mib(anon),
                         mib(med(runs, lambda d: d["after"]["RssFile"])), "%d" % med(runs, lambda d: d["minflt"])))
            if v == "c":
                verdicts.append("target (c)/(a) <= 1.1 in create+run, prepack %s: %.3f %s"
                                % (p, tot / base, "MET" if tot / base <= 1.1 else "MISSED"))
                if p == "off":
                    verdicts.append("target RssAnon of (c), prepack off, <= 64 MiB + view (%.1f MiB): %.1f MiB %s"
                                    % (budget_kb / 1024, anon / 1024, "MET" if anon <= budget_kb else "MISSED"))
    w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
    out.append("  ".join(str(x).ljust(w[i]) for i, x in enumerate(hdr)).rstrip())
    out.append("  ".join("-" * w[i] for i in range(len(hdr))))
    for r in rows:
        out.append("  ".join(str(x).ljust(w[i]) for i, x in enumerate(r)).rstrip())
    out.append("node + onnxruntime before the session: RssAnon %.1f MiB, RssFile %.1f MiB"
               % tuple(med(res[("a", "off")], lambda d: d["before"][k]) / 1024 for k in ("RssAnon", "RssFile")))
    out.extend(verdicts)
    # bit-identical outputs across the layouts, per prepack mode
    for p in ("off", "on"):
        hs = {v: {d["out_sha256"] for d in res[(v, p)]} for v in VARIANTS}
        same = len(set.union(*hs.values())) == 1
        out.append("outputs, prepack %s: %s" % (p, "identical in every run of (a), (b), (c)" if same
                                               else "DIFFER: %s" % hs))
    out.append("")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", help="meson build directory (default: a release build in WORKDIR/build)")
    ap.add_argument("--sizes", default="1G,4G", help="comma-separated weight sizes (e.g. 1G,4G)")
    ap.add_argument("--tensors", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    ap.add_argument("--workdir", default="/tmp/onnxzip-bench-ort")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()

    wd = os.path.abspath(args.workdir)
    os.makedirs(wd, exist_ok=True)
    build = os.path.abspath(args.build) if args.build else bench.release_build(wd)
    cli = os.path.join(build, "tools", "onnxzip")
    out = ["onnxzip runtime-view benchmark: ONNX Runtime (onnxruntime-node %s, CPU, 1 thread, optimizations off), "
           "tensors=%d, %s, page cache warm for every run" % (ort_version(), args.tensors, args.dtype)]
    for size_s in args.sizes.split(","):
        size = bench.parse_size(size_s)
        swd = os.path.join(wd, size_s)
        try:
            variants = prepare(cli, swd, size, args.tensors, args.dtype)
            nbytes = os.path.getsize(variants["a"][1][1])
            res = measure(variants, args.reps)
            report(size_s, nbytes, os.path.getsize(variants["c"][0]), res, out)
        finally:
            if not args.keep:
                shutil.rmtree(swd, ignore_errors=True)
    out.append(bench.machine_line())
    print("\n".join(out))


def ort_version():
    p = os.path.join(bench.REPO, "tests", "ort", "node_modules", "onnxruntime-node", "package.json")
    try:
        return json.load(open(p))["version"]
    except (OSError, ValueError, KeyError):
        return "?"


if __name__ == "__main__":
    main()
