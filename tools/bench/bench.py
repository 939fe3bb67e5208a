#!/usr/bin/python3
"""onnxzip performance benchmark.

Usage:
    /usr/bin/python3 tools/bench/bench.py [--build BUILD_DIR] [--size 256M|1G|4G]
                                          [--tensors 200] [--workdir DIR]
                                          [--dtype float16|float32]

BUILD_DIR is a meson build of this repository; without --build, a release
build is set up (once) and brought up to date in WORKDIR/build. Needs the
packages of .ci/install-deps, and root for the cold-cache rows (drop_caches).

The script compiles tools/bench/bench_open.c against BUILD_DIR (libonnxzip,
the generated proto/onnx.pb-c.c, protobuf-c, xxhash, zlib), generates a
synthetic LLM-like classic external-data model in WORKDIR (kept and reused
for the same --size/--tensors/--dtype), packs it, and measures:

  P1 open         onnxzip_open + touch every view struct (+ close) vs the
                  protobuf-c unpack of __MODEL_PROTO (floor) and onnx.load()
  P2 first pass   open + sum every 8th byte of every view vs plain mmap of the
                  archive doing the same (limit), and read() of the classic
                  .data file; cold (sync + drop_caches, root) and warm; then
                  each access hint (ONNXZIP_OPEN_SEQUENTIAL, WILLNEED,
                  POPULATE, HUGEPAGE) against no hint
  P3 pack/unpack  CLI wall time vs cp of the same bytes on the same disk:
                  --no-sync vs cp, default (fsync) vs cp + fsync; each run
                  starts with its output removed and the disk synced; peak
                  RSS of the CLI (fork + wait4)
  P4 set-model    CLI wall time; bytes written by onnxzip_update_model
                  (/proc/self/io wchar) and by the CLI (/proc/PID/io)
  P5 verify       onnxzip_verify GB/s on cached data vs XXH3_64bits and
                  the fastest CRC-32 here (libdeflate when installed, zlib)
                  over the same mapped bytes
  torch           torch.save / torch.load of the same weights, if installed

Every time is the median of several repetitions. Prints one table of ratios
with the targets, plus the machine line.
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def parse_size(s):
    s = s.strip().upper()
    mult = 1
    for suf, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)):
        if s.endswith(suf):
            s, mult = s[:-1], m
            break
    return int(float(s) * mult)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def machine_line():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        load = "?"
    return "machine: %s, %d cores, Linux %s, python %s, loadavg %s (other load makes times noisy)" % (
        cpu, os.cpu_count() or 0, platform.release(), platform.python_version(), load)


# --------------------------------------------------------------------------
# build the helper
# --------------------------------------------------------------------------
def build_helper(build, workdir):
    out = os.path.join(workdir, "bench_open")
    src = os.path.join(HERE, "bench_open.c")
    pb = os.path.join(build, "proto", "onnx.pb-c.c")
    libdir = os.path.join(build, "src")
    cc = os.environ.get("CC", "cc")
    extra = []
    try:
        extra = subprocess.check_output(
            ["pkg-config", "--cflags", "--libs", "libprotobuf-c", "libxxhash", "zlib"],
            text=True).split()
    except (OSError, subprocess.CalledProcessError):
        extra = ["-lprotobuf-c", "-lxxhash", "-lz"]
    try:  # the fastest CRC-32 here, as a peer for P5
        extra += ["-DHAVE_LIBDEFLATE"] + subprocess.check_output(
            ["pkg-config", "--cflags", "--libs", "libdeflate"], text=True,
            stderr=subprocess.DEVNULL).split()
    except (OSError, subprocess.CalledProcessError):
        pass
    cmd = [cc, "-O2", "-std=gnu11", "-w", "-I", os.path.join(REPO, "include"),
           "-I", os.path.join(build, "proto"), src, pb, "-L", libdir, "-lonnxzip",
           "-Wl,-rpath," + os.path.abspath(libdir)] + extra + ["-o", out]
    subprocess.check_call(cmd)
    return out


def release_build(workdir):
    """A release build of this checkout in WORKDIR/build, set up once, then kept up to date."""
    build = os.path.join(workdir, "build")
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.check_call(["meson", "setup", build, REPO, "--buildtype=release", "-Dtests=false"],
                              stdout=sys.stderr)
    subprocess.check_call(["meson", "compile", "-C", build], stdout=sys.stderr)
    return build


def kv(text):
    d = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                d[parts[0]] = float(parts[1])
            except ValueError:
                d[parts[0]] = parts[1]
    return d


def helper(h, *args):
    r = subprocess.run([h] + [str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s %s failed (%d): %s" % (h, " ".join(map(str, args)),
                                                      r.returncode, r.stderr.strip()))
    return kv(r.stdout)


def launch(h, argv):
    """fork+exec+wait4 through the helper: wall, maxrss_kib, wchar, write_bytes."""
    r = subprocess.run([h, "launch"] + argv, capture_output=True, text=True)
    d = kv(r.stdout)
    if d.get("status", 1) != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(argv), r.stderr.strip()))
    return d


def sync_all():
    os.sync()


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


# --------------------------------------------------------------------------
# synthetic model
# --------------------------------------------------------------------------
def layer_names(i):
    p = "model.layers.%d." % i
    return [p + "input_layernorm.weight",
            p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
            p + "self_attn.v_proj.weight", p + "self_attn.o_proj.weight",
            p + "post_attention_layernorm.weight",
            p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight",
            p + "mlp.down_proj.weight"]


def make_plan(size, ntensors, itemsize):
    """[(name, dims)] summing to about `size` bytes; norms are 1-D [hidden]."""
    names = ["model.embed_tokens.weight"]
    i = 0
    while len(names) < ntensors - 2:
        names.extend(layer_names(i))
        i += 1
    names = names[:max(ntensors - 2, 1)] + ["model.norm.weight", "lm_head.weight"]
    names = names[:ntensors]
    hidden = 2048
    norms = [n for n in names if n.endswith("norm.weight")]
    mats = [n for n in names if n not in norms]
    rest = size - len(norms) * hidden * itemsize
    per = max(rest // max(len(mats), 1), hidden * itemsize)
    rows = max(per // (hidden * itemsize), 1)
    plan = []
    for n in names:
        plan.append((n, [hidden] if n in norms else [int(rows), hidden]))
    return plan


def generate(workdir, size, ntensors, dtype_name):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper as oh

    cdir = os.path.join(workdir, "classic")
    stamp = os.path.join(cdir, "STAMP")
    key = "%d %d %s\n" % (size, ntensors, dtype_name)
    model_path = os.path.join(cdir, "model.onnx")
    if os.path.exists(stamp) and open(stamp).read() == key:
        log("reusing", model_path)
        return model_path
    shutil.rmtree(cdir, ignore_errors=True)
    os.makedirs(cdir)
    itemsize = 2 if dtype_name == "float16" else 4
    onnx_dtype = TensorProto.FLOAT16 if dtype_name == "float16" else TensorProto.FLOAT
    plan = make_plan(size, ntensors, itemsize)
    data_name = "model.onnx.data"
    rng = np.random.default_rng(1234)
    chunk = 16 << 20
    inits = []
    off = 0
    t0 = time.time()
    # Written like onnx's save_model(save_as_external_data=True,
    # all_tensors_to_one_file=True): one file, tensors back to back.
    with open(os.path.join(cdir, data_name), "wb") as f:
        for name, dims in plan:
            nbytes = int(np.prod(dims)) * itemsize
            left = nbytes
            while left:
                k = min(chunk, left)
                # random mantissas, exponent kept small: finite fp16/fp32 values
                a = rng.standard_normal(k // itemsize, dtype=np.float32) * 0.02
                f.write(a.astype(np.float16 if itemsize == 2 else np.float32).tobytes())
                left -= k
            t = TensorProto()
            t.name = name
            t.data_type = onnx_dtype
            t.dims.extend(dims)
            t.data_location = TensorProto.EXTERNAL
            for k_, v_ in (("location", data_name), ("offset", str(off)),
                           ("length", str(nbytes))):
                e = t.external_data.add()
                e.key, e.value = k_, v_
            inits.append(t)
            off += nbytes
    first = plan[0][0]
    graph = oh.make_graph(
        [oh.make_node("Gather", [first, "ids"], ["hidden"])], "bench",
        [oh.make_tensor_value_info("ids", TensorProto.INT64, ["n"])],
        [oh.make_tensor_value_info("hidden", onnx_dtype, ["n", plan[0][1][-1]])],
        initializer=inits)
    model = oh.make_model(graph, producer_name="onnxzip-bench",
                          opset_imports=[oh.make_opsetid("", 17)])
    with open(model_path, "wb") as f:
        f.write(model.SerializeToString())
    sync_all()
    with open(stamp, "w") as f:
        f.write(key)
    log("generated %s (%d tensors, %.1f MiB) in %.1fs" % (model_path, len(plan),
                                                         off / 2**20, time.time() - t0))
    return model_path


# --------------------------------------------------------------------------
def median_of(fn, reps):
    v = []
    for _ in range(reps):
        v.append(fn())
    return statistics.median(v)


def fmt_t(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return "%.1f us" % (s * 1e6)
    if s < 1:
        return "%.2f ms" % (s * 1e3)
    return "%.2f s" % s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", help="meson build directory (default: a release build in WORKDIR/build)")
    ap.add_argument("--size", default="256M", help="total weight bytes (256M, 1G, 4G)")
    ap.add_argument("--tensors", type=int, default=200)
    ap.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    ap.add_argument("--workdir", default="/tmp/onnxzip-bench")
    ap.add_argument("--reps", type=int, default=0, help="override repetitions of the slow steps")
    args = ap.parse_args()

    size = parse_size(args.size)
    build = os.path.abspath(args.build) if args.build else release_build(os.path.abspath(args.workdir))
    cli = os.path.join(build, "tools", "onnxzip")
    wd = os.path.abspath(args.workdir)
    os.makedirs(wd, exist_ok=True)
    is_root = os.geteuid() == 0
    big = size > (1 << 30)
    slow_reps = args.reps or (3 if big else 5)
    notes = []

    h = build_helper(build, wd)
    model = generate(wd, size, args.tensors, args.dtype)
    data = model + ".data"
    arch = os.path.join(wd, "model.onnxzip")
    rows = []  # (phase, ours, peer, ratio, target, verdict)

    def row(phase, ours_s, peer_desc, peer_s, ratio, target, ok):
        rows.append((phase, ours_s, peer_desc, peer_s,
                     "-" if ratio is None else ("%.3g" % ratio), target,
                     "-" if ok is None else ("PASS" if ok else "FAIL")))

    # ---------------- P3 pack / unpack vs cp (first: it makes the archive)
    # Rounds of six commands, each on a cold start for the disk: its output
    # removed and everything synced before the clock starts; the order is
    # rotated from round to round. pack and unpack
    # fsync their outputs (durability) unless --no-sync; cp does not, so each
    # is compared with the peer of equal durability, cp+fsync for the default.
    log("P3: pack / unpack / cp")
    base = launch(h, ["true"])["wall"]
    subprocess.check_call([cli, "pack", model, "-o", arch, "-q"])  # by this build, for every phase
    subprocess.run(["cat", model, data], stdout=subprocess.DEVNULL)  # warm input
    udir = os.path.join(wd, "unpacked")
    dst = os.path.join(wd, "cp.copy")
    tmp_arch = os.path.join(wd, "p3.onnxzip")
    cmds = {
        "cp": (dst, ["cp", data, dst]),
        "cp+fsync": (dst, ["sh", "-c", 'cp "$1" "$2" && sync "$2"', "sh", data, dst]),
        "pack": (tmp_arch, [cli, "pack", model, "-o", tmp_arch, "-q"]),
        "pack --no-sync": (tmp_arch, [cli, "pack", model, "-o", tmp_arch, "-q", "--no-sync"]),
        "unpack": (udir, [cli, "unpack", arch, "-o", os.path.join(udir, "model.onnx"), "-q"]),
        "unpack --no-sync": (udir, [cli, "unpack", arch, "-o", os.path.join(udir, "model.onnx"), "-q",
                                    "--no-sync"]),
    }
    times = {k: [] for k in cmds}
    rss = {k: 0 for k in cmds}
    names = list(cmds)
    for r in range(slow_reps):
        # rotated each round: what ran just before (and its writeback) varies
        for name in names[r % len(names):] + names[:r % len(names)]:
            out, argv = cmds[name]
            remove(out)
            if out == udir:
                os.makedirs(udir)
            sync_all()
            d = launch(h, argv)
            times[name].append(d["wall"])
            rss[name] = max(rss[name], d["maxrss_kib"])
    for out, _ in cmds.values():
        remove(out)
    sync_all()
    t = {k: statistics.median(v) for k, v in times.items()}
    rss_pack, rss_unpack = rss["pack"], rss["unpack"]
    arch_size = os.path.getsize(arch)

    # model proto size for the RSS budget
    with zipfile.ZipFile(arch) as z:
        mp = z.read("__MODEL_PROTO")
    rss_budget = 64 * 1024 + len(mp) / 1024
    for op in ("pack", "unpack"):
        ns = t[op + " --no-sync"]
        row("P3 %s --no-sync" % op, fmt_t(ns), "cp", fmt_t(t["cp"]), ns / t["cp"], "<= 1.15x cp", ns / t["cp"] <= 1.15)
        row("P3 %s (fsync)" % op, fmt_t(t[op]), "cp + fsync", fmt_t(t["cp+fsync"]), t[op] / t["cp+fsync"],
            "<= 1.15x cp+fsync", t[op] / t["cp+fsync"] <= 1.15)
        row("P3 %s (fsync)" % op, fmt_t(t[op]), "cp", fmt_t(t["cp"]), t[op] / t["cp"],
            "(info: durable vs not)", None)
    row("P3 pack peak RSS", "%.1f MiB" % (rss_pack / 1024), "64 MiB + model",
        "%.1f MiB" % (rss_budget / 1024), rss_pack / rss_budget, "<= 1", rss_pack <= rss_budget)
    row("P3 unpack peak RSS", "%.1f MiB" % (rss_unpack / 1024), "64 MiB + model",
        "%.1f MiB" % (rss_budget / 1024), rss_unpack / rss_budget, "<= 1",
        rss_unpack <= rss_budget)

    # ---------------- P1 open
    log("P1: open")
    d = helper(h, "open", arch, 200)
    import onnx
    t_load = median_of(lambda: (lambda t0: (onnx.load(model), time.perf_counter() - t0)[1])(
        time.perf_counter()), slow_reps)
    t_open, t_pb = d["open_touch_close"], d["protobufc_unpack_free"]
    row("P1 open+views", fmt_t(t_open), "protobuf-c unpack+free", fmt_t(t_pb), t_open / t_pb,
        "<= 2x floor", t_open / t_pb <= 2)
    row("P1 open+views", fmt_t(t_open), "onnx.load (ext data)", fmt_t(t_load), t_open / t_load,
        "<= 0.001 (1000x faster)", t_open / t_load <= 1e-3)

    # ---------------- P2 first pass
    log("P2: first pass")
    hints = [("", 0), (" SEQUENTIAL", 2), (" WILLNEED", 4), (" POPULATE", 8), (" HUGEPAGE", 16)]
    p2 = {}
    for mode, reps in (("warm", 7), ("cold", slow_reps)):
        if mode == "cold" and not is_root:
            notes.append("P2 cold: not root, cannot drop caches")
            continue
        if mode == "warm":
            helper(h, "pass", arch, data, "warm", 1, -1)  # bring both files into the cache
        # round-robin over the variants, one run each per round, so that all
        # see the same machine state; medians over the rounds
        runs = {flags: [] for _, flags in hints + [("peers", -1)]}
        for _ in range(reps):
            for flags in runs:
                runs[flags].append(helper(h, "pass", arch, data, mode, 1, flags))
        med = lambda flags, key: statistics.median(r[key] for r in runs[flags])
        m, pg, rd = med(-1, "mmap_sum8"), med(-1, "mmap_touch_pages"), med(-1, "read_sum8")
        plain = None
        for label, flags in hints:
            o, gb = med(flags, "ours_open_sum8"), runs[flags][0]["payload_bytes"] / 1e9
            if plain is None:
                plain = o
                p2[mode] = o
                row("P2 pass %s" % mode, "%s (%.2f GB/s)" % (fmt_t(o), gb / o), "mmap limit (sum8)",
                    fmt_t(m), m / o, ">= 0.9x limit (speed)", m / o >= 0.9)
                row("P2 pass %s" % mode, fmt_t(o), "mmap touch 1B/page", fmt_t(pg), pg / o, "(info, speed)", None)
                row("P2 pass %s" % mode, fmt_t(o), "read() .data + sum8", fmt_t(rd), rd / o, "(info, speed)",
                    None)
            else:
                row("P2 pass %s +%s" % (mode, label.strip()), "%s (%.2f GB/s)" % (fmt_t(o), gb / o),
                    "no hint", fmt_t(plain), plain / o, "(info, speed)", None)

    # ---------------- P4 set-model
    log("P4: set-model")
    from onnx import ModelProto
    news = []
    for tag in ("A", "B"):
        m = ModelProto()
        m.ParseFromString(mp)
        m.doc_string = "edited by onnxzip bench, variant %s" % tag
        p = os.path.join(wd, "new_%s.onnx" % tag)
        with open(p, "wb") as f:
            f.write(m.SerializeToString())
        news.append(p)
    # The archive's headers cached (as after any recent use of it): one
    # untimed run first. A cold cache is measured separately, in-process.
    launch(h, [cli, "set-model", arch, news[1], "-q"])
    sets, wch = [], []
    for i in range(5):
        d = launch(h, [cli, "set-model", arch, news[i % 2], "-q"])
        sets.append(d["wall"]); wch.append(d.get("wchar", float("nan")))
    t_set = statistics.median(sets)
    d = helper(h, "update", arch, news[0], news[1], 9)
    row("P4 set-model CLI wall", fmt_t(t_set), "50 ms budget", "50.00 ms", t_set / 0.05,
        "<= 50 ms", t_set <= 0.05)
    row("P4 update_model in-proc", fmt_t(d["update_model"]), "50 ms budget", "50.00 ms",
        d["update_model"] / 0.05, "<= 50 ms", d["update_model"] <= 0.05)
    if is_root:
        dc = helper(h, "update", arch, news[0], news[1], 3, "cold")
        row("P4 update_model cold", fmt_t(dc["update_model"]), "50 ms budget", "50.00 ms",
            dc["update_model"] / 0.05, "(info: caches dropped)", None)
    row("P4 bytes written", "%d B (CLI %d B)" % (d["update_wchar"], statistics.median(wch)),
        "model proto", "%d B" % d["model_bytes"], d["update_wchar"] / d["model_bytes"],
        "O(model + cdir)", None)
    if not os.path.exists(os.path.join(wd, "noverify")):
        r = subprocess.run([cli, "verify", arch], capture_output=True, text=True)
        if r.returncode:
            notes.append("verify after set-model FAILED: " + r.stderr.strip())

    # ---------------- P5 verify
    log("P5: verify")
    d = helper(h, "hash", arch, 7)
    gbs = d["bytes"] / 1e9
    tv, tx, tc = d["verify"], d["xxh3"], d["crc32"]
    clis = [launch(h, [cli, "verify", arch])["wall"] for _ in range(5)]
    t_vcli = statistics.median(clis)
    # verify does both sums (each entry's CRC-32 and XXH3) in one wall time:
    # each pass is at least as fast as the whole.
    rate = "%.2f GB/s" % (gbs / tv)
    row("P5 verify: digest pass", rate, "XXH3_64bits alone", "%.2f GB/s" % (gbs / tx), tx / tv, ">= 0.8x (speed)",
        tx / tv >= 0.8)
    if "libdeflate_crc32" in d:
        tf, fastest = min((d["libdeflate_crc32"], "libdeflate crc32"), (tc, "zlib crc32"))
    else:
        tf, fastest = tc, "zlib crc32"
    row("P5 verify: CRC pass", rate, "fastest CRC: " + fastest, "%.2f GB/s" % (gbs / tf), tf / tv,
        ">= 0.8x (speed)", tf / tv >= 0.8)
    row("P5 verify", rate, "zlib crc32", "%.2f GB/s" % (gbs / tc), tc / tv, "(info, speed)", None)
    row("P5 verify (CLI, warm)", "%.2f GB/s" % (gbs / t_vcli), "XXH3_64bits alone",
        "%.2f GB/s" % (gbs / tx), tx / t_vcli, "(info, incl. exec)", None)
    lib = os.path.join(build, "src", "libonnxzip.so")
    linked = subprocess.run(["ldd", lib], capture_output=True, text=True).stdout if os.path.exists(lib) else ""
    notes.append("P5: the library's CRC-32 is %s; verify uses 2 threads on archives >= 8 MiB"
                 % ("libdeflate's" if "libdeflate" in linked else "zlib's"))

    # ---------------- torch
    try:
        import torch  # noqa: F401
        have_torch = True
    except Exception:
        have_torch = False
    if not have_torch:
        row("torch save/load", "-", "torch", "not installed", None, "-", None)
    else:
        # PyTorch's own container: a zip whose tensors are 64-byte aligned.
        from onnx import numpy_helper
        ext = onnx.load(model)
        sd = {t.name: torch.from_numpy(numpy_helper.to_array(t)) for t in ext.graph.initializer}
        del ext
        tp = os.path.join(wd, "weights.pt")

        def save():
            remove(tp)
            sync_all()
            t0 = time.perf_counter()
            with open(tp, "wb") as f:
                torch.save(sd, f)
                f.flush()
                os.fsync(f.fileno())
            return time.perf_counter() - t0

        def load():
            t0 = time.perf_counter()
            torch.load(tp)
            return time.perf_counter() - t0

        ts = median_of(save, slow_reps)
        load()  # warm, as P1 and P2 warm are
        tl = median_of(load, slow_reps)
        row("torch.save (fsync)", fmt_t(t["pack"]), "pack (fsync) vs torch.save", fmt_t(ts), t["pack"] / ts,
            "(info)", None)
        row("torch.load (warm)", fmt_t(t_open), "open+views vs torch.load", fmt_t(tl), t_open / tl, "(info)", None)
        if "warm" in p2:
            row("torch.load (warm)", fmt_t(p2["warm"]), "open+pass vs torch.load", fmt_t(tl), p2["warm"] / tl,
                "(info)", None)
        remove(tp)

    # ---------------- report
    print()
    print("onnxzip benchmark: size=%s (%d payload bytes), tensors=%d, dtype=%s, archive %d bytes"
          % (args.size, size, args.tensors, args.dtype, arch_size))
    print("ratio = ours/peer for times and sizes; = peer_time/our_time (speed) where marked speed;"
          " medians")
    hdr = ("phase", "ours", "peer", "peer value", "ratio", "target", "")
    w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(7)]
    print("  ".join(str(x).ljust(w[i]) for i, x in enumerate(hdr)))
    print("  ".join("-" * w[i] for i in range(7)))
    for r in rows:
        print("  ".join(str(x).ljust(w[i]) for i, x in enumerate(r)))
    print()
    print("notes: exec overhead of the launcher (fork+exec `true`): %s; P1 open repeated 200x "
          "in-process (warm); P2 warm = page cache hot, cold = sync + drop_caches before each run"
          % fmt_t(base))
    for n in notes:
        print("note:", n)
    print(machine_line())


if __name__ == "__main__":
    main()
