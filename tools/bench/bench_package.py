#!/usr/bin/python3
"""Package benchmark: `onnxzip pack DIR` of a multi-model repository against
`cp -r` and `tar`, and opening one model of the package against opening it
packed alone; each figure against peers measured in the same run.

Usage:
    /usr/bin/python3 tools/bench/bench_package.py [--cli build/tools/onnxzip]
        [--scale 1] [--repeat 3] [--dir DIR] [--keep]

Generates (numpy and onnx; in DIR, default a new directory under /var/tmp)
an encoder-decoder repository of about 4 GiB x SCALE, laid out as the
exports of Whisper, T5 or BART are:

  onnx/encoder_model.onnx            + encoder_model.onnx_data
  onnx/decoder_model_merged.onnx     + decoder_model_merged.onnx_data and
                                       decoder_model_merged.onnx_data_1
  config.json, generation_config.json, tokenizer.json,
  tokenizer_config.json, special_tokens_map.json, README.md

Both models store the token embedding tied between them (0.5 GiB x SCALE,
the same bytes, under different tensor names; first in the encoder's data
file, last in the decoder's second chunk) and their own other weights
(fp16, random, fixed seed): 1.2 and 1.8 GiB x SCALE. The page cache is
dropped (sync + drop_caches) before every timed run when this runs as root,
else every run is warm (each input read once before); the table says which.

  pack     `onnxzip pack DIR -o PKG --no-sync` against `cp -r DIR X` and
           `tar -cf X.tar -C DIR .` (none of them fsyncs): wall time, peak
           RSS (GNU time's %M), output size; the package's size
           against the folder's, and the folder minus the package (the
           dedupe saving) against the bytes stored twice in the folder
  open     the decoder M opened in the package (`onnxzip ls --model M PKG`)
           against the same model packed alone (`onnxzip pack DIR/M -o
           ALONE`, `onnxzip ls ALONE`): wall time and peak RSS, cold (when
           root) and warm; and in-process through the Python binding of
           the same build (`onnxzip.open(PKG, model=M)`, a numpy view of
           every tensor, close; in a fresh process each time, the import
           not timed) against the same of ALONE

Times are medians of --repeat runs (warm opens: 5 x --repeat), the
commands alternated and their order rotated from round to round. Prints a
markdown table of ratios (ours / peer) and the machine. Every output goes
beside the repository, on the same disk; without --keep the repository and
the outputs are removed at the end (with --keep, a later run with the same
--dir and --scale reuses the repository).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import NamedTuple, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GiB, MiB = 1 << 30, 1 << 20
HIDDEN = 1024           # fp16 [rows, HIDDEN] matrices, [HIDDEN] norms
ITEM = 2
SEED = 29
DECODER = "onnx/decoder_model_merged.onnx"
ENCODER = "onnx/encoder_model.onnx"


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# the repository
# --------------------------------------------------------------------------
def matrix(name: str, nbytes: int) -> tuple[str, list[int]]:
    return name, [max(nbytes // (HIDDEN * ITEM), 1), HIDDEN]


def plan(scale: float) -> dict:
    """Tensors of each model, in data-file order: (name, dims, key); equal keys
    are equal bytes (key 0: the tied embedding)."""
    vocab = max(int(GiB // 2 * scale) // (HIDDEN * ITEM), 1)
    keys = iter(range(1, 1 << 30))

    def layers(prefix: str, n: int, mats: list[str], norms: list[str], total: float) -> list:
        per = int(total) // (n * len(mats))
        out = []
        for i in range(n):
            p = "%s.layers.%d." % (prefix, i)
            out += [matrix(p + m, per) + (next(keys),) for m in mats]
            out += [(p + m, [HIDDEN], next(keys)) for m in norms]
        return out

    attn = ["q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"]
    enc = [("model.encoder.embed_tokens.weight", [vocab, HIDDEN], 0)]
    enc += layers("model.encoder", 12, ["self_attn." + m for m in attn] + ["fc1.weight", "fc2.weight"],
                  ["self_attn_layer_norm.weight", "final_layer_norm.weight"], 1.2 * GiB * scale)
    dec = layers("model.decoder", 12, ["self_attn." + m for m in attn] + ["encoder_attn." + m for m in attn]
                 + ["fc1.weight", "fc2.weight"],
                 ["self_attn_layer_norm.weight", "encoder_attn_layer_norm.weight", "final_layer_norm.weight"],
                 1.8 * GiB * scale)
    dec += [("model.decoder.layer_norm.weight", [HIDDEN], next(keys)),
            ("model.decoder.embed_tokens.weight", [vocab, HIDDEN], 0)]
    return {ENCODER: enc, DECODER: dec, "vocab": vocab}


def nbytes(dims: list[int]) -> int:
    n = ITEM
    for d in dims:
        n *= d
    return n


def write_payload(f, key: int, size: int) -> None:
    """Random finite fp16 (exponent's top bit cleared: |x| < 2), the same bytes
    for the same key, written in 16 MiB pieces."""
    import numpy as np
    rng = np.random.default_rng([SEED, key])
    left = size
    while left:
        k = min(16 * MiB, left)
        f.write((np.frombuffer(rng.bytes(k), np.uint16) & 0xBFFF).tobytes())
        left -= k


def write_model(repo: str, path: str, tensors: list, chunks: int) -> None:
    """The model at PATH with its tensors in CHUNKS data files of about equal
    size (transformers.js names: X.onnx_data, X.onnx_data_1, ...), each
    tensor in one file, back to back, as onnx's save_model writes them."""
    from onnx import TensorProto, helper as oh
    base = os.path.basename(path) + "_data"
    total = sum(nbytes(d) for _, d, _ in tensors)
    inits: list = []
    files: list[str] = []
    f, off = None, 0
    try:
        for name, dims, key in tensors:
            size = nbytes(dims)
            if f is None or (len(files) < chunks and off and off + size > total / chunks):
                if f:
                    f.close()
                files.append(base if not files else "%s_%d" % (base, len(files)))
                f, off = open(os.path.join(repo, os.path.dirname(path), files[-1]), "wb"), 0
            write_payload(f, key, size)
            t = TensorProto(name=name, data_type=TensorProto.FLOAT16, dims=dims,
                            data_location=TensorProto.EXTERNAL)
            for k, v in (("location", files[-1]), ("offset", str(off)), ("length", str(size))):
                t.external_data.add(key=k, value=v)
            inits.append(t)
            off += size
    finally:
        if f:
            f.close()
    embed = next(n for n, _, k in tensors if k == 0)
    out = "last_hidden_state" if "encoder" in path else "logits"
    graph = oh.make_graph([oh.make_node("Gather", [embed, "input_ids"], [out])], os.path.basename(path),
                          [oh.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
                          [oh.make_tensor_value_info(out, TensorProto.FLOAT16, ["batch", "seq", HIDDEN])],
                          initializer=inits)
    model = oh.make_model(graph, producer_name="onnxzip-bench-package", opset_imports=[oh.make_opsetid("", 17)])
    with open(os.path.join(repo, path), "wb") as f:
        f.write(model.SerializeToString())


def write_files(repo: str, vocab: int) -> None:
    """The repository's plain files: configuration and a BPE tokenizer of 32,000
    tokens (about 1 MiB, whatever the scale, as real ones)."""
    words = ["<pad>", "</s>", "<unk>"] + ["tok%05d" % i for i in range(32000 - 3)]
    docs = {
        "config.json": {"model_type": "bart", "architectures": ["BartForConditionalGeneration"],
                        "d_model": HIDDEN, "encoder_layers": 12, "decoder_layers": 12,
                        "vocab_size": vocab, "tie_word_embeddings": True, "torch_dtype": "float16",
                        "transformers.js_config": {"use_external_data_format": {
                            "encoder_model.onnx": 1, "decoder_model_merged.onnx": 2}}},
        "generation_config.json": {"decoder_start_token_id": 1, "eos_token_id": 1, "pad_token_id": 0,
                                   "max_length": 448},
        "tokenizer.json": {"version": "1.0", "added_tokens": [], "normalizer": None,
                           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
                           "model": {"type": "BPE", "unk_token": "<unk>",
                                     "vocab": {w: i for i, w in enumerate(words)},
                                     "merges": ["%s %s" % (words[i], words[i + 1]) for i in range(3, 20003)]}},
        "tokenizer_config.json": {"model_max_length": 1024, "tokenizer_class": "BartTokenizer"},
        "special_tokens_map.json": {"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"},
    }
    for name, doc in docs.items():
        with open(os.path.join(repo, name), "w") as f:
            json.dump(doc, f, indent=2)
    with open(os.path.join(repo, "README.md"), "w") as f:
        f.write("# bench-package\n\nAn encoder-decoder repository generated by tools/bench/bench_package.py.\n")


def generate(repo: str, scale: float) -> dict:
    """REPO, made once per scale (a stamp beside it), then reused."""
    p = plan(scale)
    stamp = repo + ".stamp"
    key = "layout 2 scale %r hidden %d seed %d\n" % (scale, HIDDEN, SEED)
    if os.path.exists(stamp) and open(stamp).read() == key:
        log("reusing", repo)
        return p
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(os.path.join(repo, "onnx"))
    t0 = time.perf_counter()
    write_model(repo, ENCODER, p[ENCODER], 1)
    write_model(repo, DECODER, p[DECODER], 2)
    write_files(repo, p["vocab"])
    import onnx.checker
    for m in (ENCODER, DECODER):
        onnx.checker.check_model(os.path.join(repo, m))  # by path: its external data files must be there
    os.sync()
    with open(stamp, "w") as f:
        f.write(key)
    log("generated %s (%s) in %.1f s" % (repo, fmt_b(tree_size(repo)), time.perf_counter() - t0))
    return p


# --------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------
def tree_size(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def fmt_b(n: float) -> str:
    return "%.2f GiB" % (n / GiB) if n >= GiB else "%.1f MiB" % (n / MiB)


def fmt_t(s: float) -> str:
    return "%.2f ms" % (s * 1e3) if s < 1 else "%.2f s" % s


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def can_drop_caches() -> bool:
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1")
        return True
    except OSError:
        return False


def settle(cold: bool) -> None:
    """Before each timed run: earlier outputs on the disk; cold: no page cache."""
    os.sync()
    if cold:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3")


TIME = "/usr/bin/time"  # GNU time: the peak RSS of its child, which it forks from a small process


class Run(NamedTuple):
    wall: float  # seconds
    rss: int     # peak RSS, bytes
    cpu: float   # user + system seconds
    out: str     # stdout


def launch(argv: list[str], env: Optional[dict] = None) -> Run:
    """ARGV run under GNU time. (The ru_maxrss of a child of this process
    would count this process's own memory: a child's high-water mark starts
    at its parent's.)"""
    with tempfile.NamedTemporaryFile() as usage, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        r = subprocess.run([TIME, "-f", "%M %U %S", "-o", usage.name] + argv, stdout=out, stderr=err, env=env)
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (shlex.join(argv), r.returncode,
                                                       err.read().decode(errors="replace").strip()))
        kib, user, system = usage.read().split()[-3:]
        return Run(wall, int(kib) * 1024, float(user) + float(system), out.read().decode(errors="replace"))


class Runs:
    """Named commands measured in rounds: each round runs every command once,
    the order rotated from round to round; medians over the rounds."""

    def __init__(self, cold: bool) -> None:
        self.cold = cold
        self.runs: dict[str, list[Run]] = {}

    def rounds(self, cmds: dict, reps: int, env: Optional[dict] = None) -> None:
        names = list(cmds)
        for r in range(reps):
            for name in names[r % len(names):] + names[:r % len(names)]:
                output, argv = cmds[name]
                if output:
                    remove(output)
                settle(self.cold)
                run = launch(argv, env)
                self.runs.setdefault(name, []).append(run)
                log("  %-34s %s, %.1f MiB, CPU %s" % (name, fmt_t(run.wall), run.rss / MiB, fmt_t(run.cpu)))

    def median(self, name: str, field: str) -> float:
        """Of wall, cpu, rss, or out (the seconds a command printed)."""
        return statistics.median(float(getattr(r, field)) for r in self.runs[name])


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, ...]] = []

    def add(self, what: str, ours: str, peer: str, value: str, ratio: Optional[float], digits: int = 3) -> None:
        self.rows.append((what, ours, peer, value, "-" if ratio is None else "%.*g" % (digits, ratio)))

    def times(self, what: str, ours: float, peer: str, value: float) -> None:
        self.add(what, fmt_t(ours), peer, fmt_t(value), ours / value)

    def sizes(self, what: str, ours: float, peer: str, value: float) -> None:
        self.add(what, fmt_b(ours), peer, fmt_b(value), ours / value)

    def markdown(self) -> str:
        head = ("measure", "onnxzip", "peer", "peer's value", "ratio")
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 4 + ["--:"]) + "|"]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in self.rows])


def warm_up(paths: list[str]) -> None:
    for p in paths:
        for d, _, fs in os.walk(p) if os.path.isdir(p) else [(os.path.dirname(p), [], [os.path.basename(p)])]:
            for f in fs:
                with open(os.path.join(d, f), "rb") as fh:
                    while fh.read(16 * MiB):
                        pass


# --------------------------------------------------------------------------
# phases
# --------------------------------------------------------------------------
def bench_pack(cli: str, repo: str, outdir: str, p: dict, cold: bool, reps: int, table: Table) -> str:
    pkg = os.path.join(outdir, "package.onnxzip")
    copy, tarball = os.path.join(outdir, "copy"), os.path.join(outdir, "copy.tar")
    cmds = {
        "pack DIR -o PKG --no-sync": (pkg, [cli, "pack", repo, "-o", pkg, "--no-sync", "-q"]),
        "cp -r DIR X": (copy, ["cp", "-r", repo, copy]),
        "tar -cf X.tar -C DIR .": (tarball, ["tar", "-cf", tarball, "-C", repo, "."]),
    }
    if not cold:
        warm_up([repo])
    log("pack: %d rounds, %s" % (reps, "cold" if cold else "warm"))
    runs = Runs(cold)
    runs.rounds(cmds, reps)
    sizes = {name: tree_size(out) for name, (out, _) in cmds.items()}
    ours, peers = "pack DIR -o PKG --no-sync", ("cp -r DIR X", "tar -cf X.tar -C DIR .")
    for what, field, add in (("wall time", "wall", table.times), ("CPU time (user + system)", "cpu", table.times),
                             ("peak RSS", "rss", table.sizes)):
        for peer in peers:
            add("pack: " + what, runs.median(ours, field), "`%s`" % peer, runs.median(peer, field))
    folder = tree_size(repo)
    table.sizes("output size", sizes[ours], "the folder (`cp -r` copy: %d bytes)" % sizes["cp -r DIR X"], folder)
    table.sizes("output size", sizes[ours], "`tar` (%d bytes)" % sizes["tar -cf X.tar -C DIR ."],
                sizes["tar -cf X.tar -C DIR ."])
    shared = nbytes(p[DECODER][-1][1])
    table.add("dedupe saving: folder - package", "%s (%d bytes)" % (fmt_b(folder - sizes[ours]), folder - sizes[ours]),
              "bytes stored twice in the folder (the tied embedding)", "%s (%d bytes)" % (fmt_b(shared), shared),
              (folder - sizes[ours]) / shared, 4)
    remove(copy)
    remove(tarball)
    return pkg


def python_env(cli: str) -> Optional[dict]:
    """The environment in which the Python binding of CLI's build imports, if
    it opens a package's model (onnxzip.open(PKG, model=PATH)); else None."""
    pydir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(cli))), "src", "python")
    env = dict(os.environ, PYTHONPATH=pydir)
    probe = "import inspect, onnxzip; print('model' in inspect.signature(onnxzip.open).parameters)"
    r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    return env if r.stdout.strip() == "True" else None


# Run in a child per measurement, the import not timed: open the model (of a
# package, or the archive's), a numpy view of every tensor, close; prints the
# seconds taken.
PY_OPEN = r"""
import sys, time, onnxzip
path, model = sys.argv[1], sys.argv[2] or None
t = time.perf_counter()
a = onnxzip.open(path, model=model)
for info in a.tensor_infos:
    a.array(info)
a.close()
print(time.perf_counter() - t)
"""


def bench_open(cli: str, pkg: str, repo: str, outdir: str, cold: bool, reps: int, table: Table,
               notes: list[str]) -> None:
    alone = os.path.join(outdir, "alone.onnxzip")
    launch([cli, "pack", os.path.join(repo, DECODER), "-o", alone, "--no-sync", "-q"])
    launch([cli, "verify", pkg])
    with zipfile.ZipFile(pkg) as a, zipfile.ZipFile(alone) as b:
        notes.append("open rows: M = %s, ALONE = `onnxzip pack DIR/M -o ALONE`; `ls` prints every zip entry: "
                     "%d of PKG, %d of ALONE" % (DECODER, len(a.infolist()), len(b.infolist())))
    cli_cmds = {"`ls --model M PKG`": (None, [cli, "ls", "--model", DECODER, pkg]),
                "`ls ALONE`": (None, [cli, "ls", alone])}
    env = python_env(cli)
    py_cmds = {"Python: open(PKG, model=M), views, close": (None, [sys.executable, "-c", PY_OPEN, pkg, DECODER]),
               "the same of ALONE": (None, [sys.executable, "-c", PY_OPEN, alone, ""])}
    if env is None:
        notes.append("the Python binding of this build does not open a package's model: no Python rows")
    for mode in (["cold"] if cold else []) + ["warm"]:
        n = reps if mode == "cold" else 5 * reps
        if mode == "warm":
            warm_up([pkg, alone])
        log("open: %s, %d rounds" % (mode, n))
        runs = Runs(mode == "cold")
        runs.rounds(cli_cmds, n)
        ours, peer = cli_cmds
        table.times("%s, %s: wall time" % (ours, mode), runs.median(ours, "wall"), peer, runs.median(peer, "wall"))
        table.sizes("%s, %s: peak RSS" % (ours, mode), runs.median(ours, "rss"), peer, runs.median(peer, "rss"))
        if env is not None:
            runs.rounds(py_cmds, n, env)
            ours, peer = py_cmds
            table.times("%s, %s: in-process time" % (ours, mode), runs.median(ours, "out"), peer,
                        runs.median(peer, "out"))


# --------------------------------------------------------------------------
def first_line(path: str, key: str) -> str:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def machine(path: str) -> str:
    cpu = first_line("/proc/cpuinfo", "model name")
    ram = first_line("/proc/meminfo", "MemTotal")
    ram = "%.1f GiB RAM" % (int(ram.split()[0]) / (1 << 20)) if ram != "?" else "? RAM"
    disk = "?"
    try:
        src, fstype = subprocess.run(["findmnt", "-no", "SOURCE,FSTYPE", "-T", path], capture_output=True,
                                     text=True).stdout.split()[:2]
        blk = subprocess.run(["lsblk", "-dno", "NAME,SIZE,ROTA,TRAN,MODEL", src], capture_output=True,
                             text=True).stdout.split()
        disk = "%s %s (%s, lsblk ROTA %s%s)" % (src, fstype, blk[1] if len(blk) > 1 else "?",
                                                blk[2] if len(blk) > 2 else "?",
                                     ", " + " ".join(blk[3:]) if len(blk) > 3 else "")
    except (OSError, ValueError, IndexError):
        pass
    return "machine: %s, %d cores, %s, Linux %s, disk %s, python %s" % (
        cpu, os.cpu_count() or 0, ram, platform.release(), disk, platform.python_version())


def main() -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__[__doc__.index("Generates"):])
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "tools", "onnxzip"),
                    help="the onnxzip command (default: build/tools/onnxzip of this checkout)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="size of the repository: 4 GiB x SCALE (0.05: about 200 MiB)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each command (median; default 3)")
    ap.add_argument("--dir", help="work directory (default: a new one under /var/tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the repository and the outputs")
    args = ap.parse_args()
    if args.scale <= 0 or args.repeat < 1:
        ap.error("--scale must be > 0 and --repeat >= 1")
    cli = os.path.abspath(args.cli)
    if not os.access(cli, os.X_OK):
        ap.error("%s is not an executable onnxzip (build it, or name it with --cli)" % cli)
    if not os.access(TIME, os.X_OK):
        sys.exit("bench_package: %s (GNU time) measures peak memory; install it: apt-get install time" % TIME)
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        sys.exit("bench_package: %s; run it with a Python that has numpy and onnx (/usr/bin/python3 here)" % e)

    made = not args.dir or not os.path.exists(args.dir)
    wd = os.path.abspath(args.dir) if args.dir else tempfile.mkdtemp(prefix="onnxzip-bench-package-", dir="/var/tmp")
    os.makedirs(wd, exist_ok=True)
    repo, outdir = os.path.join(wd, "repo"), os.path.join(wd, "out")
    need = int(4 * GiB * args.scale * 3.2)  # folder, package, one peer's copy, the decoder alone
    free = shutil.disk_usage(wd).free + (tree_size(repo) if os.path.exists(repo + ".stamp") else 0)
    if free < need:
        sys.exit("bench_package: %s has %s free; --scale %g needs about %s" % (wd, fmt_b(free), args.scale,
                                                                               fmt_b(need)))
    cold = os.geteuid() == 0 and can_drop_caches()
    table, facts = Table(), machine(wd)
    notes: list[str] = []
    try:
        p = generate(repo, args.scale)
        remove(outdir)
        os.makedirs(outdir)
        pkg = bench_pack(cli, repo, outdir, p, cold, args.repeat, table)
        bench_open(cli, pkg, repo, outdir, cold, args.repeat, table, notes)
        folder = tree_size(repo)
        files = sum(len(fs) for _, _, fs in os.walk(repo))
        base = statistics.median(launch(["true"]).wall for _ in range(9))
    finally:
        if not args.keep:
            remove(outdir)
            remove(repo)
            remove(repo + ".stamp")
            if made:
                shutil.rmtree(wd, ignore_errors=True)
    version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.split("\n")[0] or "?"
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    print()
    print("onnxzip package benchmark: `%s`; %s; checkout %s"
          % (shlex.join(["tools/bench/bench_package.py"] + sys.argv[1:]), version, commit))
    print("repository: %d files, %s (%d bytes): %s and %s (data in 1 and 2 chunks) sharing a tied %s "
          "embedding [%d, %d] fp16, plus tokenizer and config files"
          % (files, fmt_b(folder), folder, ENCODER, DECODER, fmt_b(nbytes([p["vocab"], HIDDEN])), p["vocab"],
             HIDDEN))
    print("page cache: %s; medians of %d rounds (warm opens: %d), order rotated; ratio = onnxzip / peer"
          % ("dropped (sync + drop_caches) before every timed run" if cold
             else "warm for every run (not root: cannot drop it)", args.repeat, 5 * args.repeat))
    print()
    print(table.markdown())
    print()
    notes.append("wall times include starting the process under GNU time (`time true`: %s); in-process "
                 "times do not" % fmt_t(base))
    for n in notes:
        print("note:", n)
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print("%s, loadavg %s at the end (other load makes times noisy)" % (facts, load))
    if args.keep:
        print("kept:", wd)


if __name__ == "__main__":
    main()
