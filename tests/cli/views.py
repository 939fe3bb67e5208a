#!/usr/bin/python3
"""views — `onnxzip view` (spec 16) checked by onnx itself.

    views.py ONNXZIP_EXE [--corpus DIR]... [--jobs N] [--verbose]

--corpus DIR: directories searched recursively for *.onnx; an absent one is
reported ("corpus absent: DIR") and skipped. Exits 77 only when no model was
found at all.

For every model, three packs (`--size-threshold 0`; `--size-threshold 0
--align 4096`; `--size-threshold 0 --dedup`), each followed by
`onnxzip view ARCHIVE -o VIEW --size-threshold 0` (every tensor a reference
into the archive; tests/ort runs the default, which copies small ones) beside
the archive:
  1. onnx.load(VIEW) (references onnx 1.12's loader does not visit — sparse
     tensors, functions, training graphs — are resolved by this script with
     the view's offset and length, and counted) gives, tensor by tensor in
     model order, the original's names and numpy_helper.to_array() values;
  2. every EXTERNAL reference of the view names the archive, only the keys
     location, offset, length, in that order; offsets are multiples of 4096
     in the --align 4096 pack; the view holds one "onnxzip.view" record
     naming the archive and its size;
  3. onnx.checker.check_model(VIEW path) passes wherever it passes on the
     original;
  4. `onnxzip verify VIEW` passes.
Models that onnx cannot load, or that pack refuses, are listed by name (the
roundtrip test judges pack's refusals).

Then, on one model: -o in another directory, an archive given through a
symbolic link to another directory (refused), through a link in the same
directory (accepted: the record names the real file), -o the archive, -o -
equal to -o FILE, -o - to a terminal, and a view gone stale after set-model
(verify: ONNXZIP_ESTALE; written again: OK).
Prints "views: N passed, M failed, K skipped".
"""
import os
import pty
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

import ozcommon  # noqa: E402

_onnx_lock = threading.Lock()
PACKS = (("plain", []), ("align4096", ["--align", "4096"]), ("dedup", ["--dedup"]))


def find_models(p):
    out = []
    for root, dirs, files in os.walk(p):
        dirs.sort()
        out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".onnx")]
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300, **kw)


def tail(p):
    return " | ".join((p.stderr or p.stdout).decode("utf-8", "replace").strip().splitlines()[-2:])


def same_array(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and (
        a.tobytes() == b.tobytes() if a.dtype != object else list(a.flat) == list(b.flat))


def view_record(m):
    recs = [p.value for p in m.metadata_props if p.key == "onnxzip.view"]
    return recs


def check_refs(view, arc_name, arc_size, align, msgs):
    for t, _k, _d, w in ozcommon.iter_tensors(view):
        if not ozcommon.is_external(t):
            continue
        keys = [e.key for e in t.external_data]
        info = {e.key: e.value for e in t.external_data}
        if keys != ["location", "offset", "length"] or info["location"] != arc_name:
            msgs.append(f"{w}: external_data {keys} {info}")
            continue
        off, ln = int(info["offset"]), int(info["length"])
        if off + ln > arc_size or ln == 0 or off % align:
            msgs.append(f"{w}: offset {off} length {ln} (archive {arc_size} bytes, align {align})")
    recs = view_record(view)
    if len(recs) != 1 or not recs[0].startswith(f"format=1;archive={arc_name};size={arc_size};model_crc32="):
        msgs.append(f"onnxzip.view records: {recs}")


def compare(orig, view, msgs):
    a, b = list(ozcommon.iter_tensors(orig)), list(ozcommon.iter_tensors(view))
    if len(a) != len(b):
        msgs.append(f"{len(a)} tensors in the original, {len(b)} in the view")
        return 0
    for (x, _k, _d, w), (y, _k2, _d2, _w2) in zip(a, b):
        if x.name != y.name or not same_array(numpy_helper.to_array(x), numpy_helper.to_array(y)):
            msgs.append(f"{w} ('{x.name}'): values differ")
    return len(a)


def checker_ok(path):
    try:
        onnx.checker.check_model(path)
        return None
    except Exception as e:  # noqa: BLE001 — any checker failure
        return str(e).splitlines()[0][:160]


def sparse_index_limit(view, err):
    """onnx.checker reads sparse indices to check them and cannot read
    external ones ("Cannot parse data from external tensors", as for any
    external-data model with external sparse indices): a limit of onnx's
    checker, not of the view. True only when that message names a sparse
    indices tensor of the view."""
    key = "Please load external data into raw data for tensor: "
    if key not in err:
        return False
    name = err.split(key, 1)[1].strip()
    return any(k == 3 and t.name == name and ozcommon.is_external(t) for t, k, _d, _w in ozcommon.iter_tensors(view))


class Result:
    def __init__(self, path):
        self.path, self.status, self.msgs, self.hand, self.ntensors = path, "pass", [], 0, 0
        self.notes = []


def one_pack(r, exe, orig, orig_check, d, label, opts):
    arc, view = os.path.join(d, "m.onnxzip"), os.path.join(d, "m.view.onnx")
    p = run([exe, "pack", r.path, "-o", arc, "--size-threshold", "0", "--no-sync", "-q"] + opts)
    if p.returncode:
        r.status = "skip"
        r.msgs.append(f"pack {label} refused: {tail(p)}")
        return
    p = run([exe, "view", arc, "-o", view, "--size-threshold", "0", "-q"])
    if p.returncode:
        r.msgs.append(f"view {label} failed: {tail(p)}")
        return
    v = run([exe, "verify", view])
    if v.returncode:
        r.msgs.append(f"verify of the {label} view failed: {tail(v)}")
    msgs = []
    with _onnx_lock:
        raw = onnx.load(view, load_external_data=False)
        check_refs(raw, "m.onnxzip", os.path.getsize(arc), 4096 if label == "align4096" else 1, msgs)
        if r.path.endswith("synthetic.onnx"):  # w and w2 hold equal bytes: one entry under --dedup only
            offs = {t.name: [e.value for e in t.external_data if e.key == "offset"]
                    for t, _k, _d, _w in ozcommon.iter_tensors(raw)}
            if (offs.get("w") == offs.get("w2")) != (label == "dedup") or not offs.get("w"):
                msgs.append(f"offsets of w and w2: {offs.get('w')} {offs.get('w2')}")
        m = onnx.load(view)
        r.hand += ozcommon.resolve_external(m, d)
        r.ntensors = compare(orig, m, msgs)
        got = checker_ok(view)
        if orig_check is None and got is not None:
            if sparse_index_limit(raw, got):
                r.notes.append(f"{label}: {got}")
            else:
                msgs.append(f"onnx.checker passes on the original, not on the view: {got}")
    r.msgs += [f"{label}: {x}" for x in msgs]


def one(path, exe, work):
    r = Result(path)
    with _onnx_lock:
        try:
            orig = onnx.load(path)
        except Exception as e:  # noqa: BLE001
            r.status, r.msgs = "skip", [f"onnx cannot load it: {str(e)[:100]}"]
            return r
        orig_check = checker_ok(path)
    d0 = tempfile.mkdtemp(dir=work)
    for label, opts in PACKS:
        d = os.path.join(d0, label)
        os.mkdir(d)
        one_pack(r, exe, orig, orig_check, d, label, opts)
        if r.status == "skip":
            break
    if r.status == "pass" and r.msgs:
        r.status = "fail"
    subprocess.run(["rm", "-rf", d0])
    return r


def synthetic_model(path):
    """Tensors the corpora lack: sparse values and indices, a subgraph
    initializer, function and training-graph tensors, two equal initializers
    (one entry under --dedup), an empty one."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), "w")
    w2 = numpy_helper.from_array(numpy_helper.to_array(w), "w2")
    empty = numpy_helper.from_array(np.zeros((0, 4), np.float32), "empty")
    sub_w = numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "sub_w")
    then_g = helper.make_graph([helper.make_node("Identity", ["sub_w"], ["t_out"])], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [64])], [sub_w])
    else_g = helper.make_graph([helper.make_node("Identity", ["sub_w2"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [64])],
                               [numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "sub_w2")])
    const = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(
        np.arange(100, dtype=np.int64), "c_value"))
    cond = helper.make_node("Constant", [], ["cond"], value=numpy_helper.from_array(np.array(True), "cond_v"))
    if_node = helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(rng.standard_normal(10).astype(np.float32), "sp"),
        numpy_helper.from_array(np.arange(0, 100, 10, dtype=np.int64), "sp_idx"), [100])
    g = helper.make_graph([const, cond, if_node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                          [64])], [w, w2, empty], sparse_initializer=[sparse])
    fn = helper.make_function("local", "f", [], ["o"], [helper.make_node("Constant", [], ["o"], value=
                              numpy_helper.from_array(np.arange(50, dtype=np.float32), "fn_value"))],
                              [helper.make_opsetid("", 17)])
    init_g = helper.make_graph([], "init", [], [], [numpy_helper.from_array(np.ones(32, np.float32), "train_w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                          functions=[fn])
    m.training_info.append(helper.make_training_info(helper.make_graph([], "alg", [], []), [], init_g, []))
    onnx.save(m, path)


# ---- refusals and the CLI's other paths, on one model ----

class Checks:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}")


def refused(c, p, status, what, files=()):
    err = p.stderr.decode("utf-8", "replace")
    c.ok(p.returncode == 1 and status in err, f"{what}: exit {p.returncode}, stderr {err.strip()[:300]!r}")
    for f in files:
        c.ok(not os.path.lexists(f), f"{what}: {f} was written")


def cli_checks(exe, model, work):
    c = Checks()
    d1, d2 = os.path.join(work, "d1"), os.path.join(work, "d2")
    os.mkdir(d1)
    os.mkdir(d2)
    arc = os.path.join(d1, "m.onnxzip")
    c.ok(run([exe, "pack", model, "-o", arc, "-q"]).returncode == 0, "pack")
    before = open(arc, "rb").read()
    # -o in another directory
    refused(c, run([exe, "view", arc, "-o", os.path.join(d2, "v.onnx")]), "ONNXZIP_EPATH",
            "-o in another directory", [os.path.join(d2, "v.onnx")])
    # a symbolic link to an archive in another directory
    link = os.path.join(d2, "link.onnxzip")
    os.symlink(os.path.join("..", "d1", "m.onnxzip"), link)
    p = run([exe, "view", link, "-o", os.path.join(d2, "v.onnx")])
    refused(c, p, "ONNXZIP_EPATH", "symlink to another directory", [os.path.join(d2, "v.onnx")])
    c.ok(os.path.realpath(arc) in p.stderr.decode(), "the symlink refusal names the real file")
    # a symbolic link in the same directory: the view names the real file
    os.symlink("m.onnxzip", os.path.join(d1, "alias.onnxzip"))
    p = run([exe, "view", os.path.join(d1, "alias.onnxzip"), "-o", os.path.join(d1, "a.view.onnx")])
    c.ok(p.returncode == 0, f"symlink in the same directory: {tail(p)}")
    if p.returncode == 0:
        recs = view_record(onnx.load(os.path.join(d1, "a.view.onnx"), load_external_data=False))
        c.ok(len(recs) == 1 and recs[0].startswith("format=1;archive=m.onnxzip;"), f"alias record {recs}")
    # -o the archive itself, and through its alias
    for target in (arc, os.path.join(d1, "alias.onnxzip")):
        refused(c, run([exe, "view", arc, "-o", target]), "ONNXZIP_ESAMEFILE", f"-o {target}")
    c.ok(open(arc, "rb").read() == before, "the archive is unchanged by the refusals")
    # -o - equals -o FILE
    view = os.path.join(d1, "m.view.onnx")
    c.ok(run([exe, "view", arc, "-o", view]).returncode == 0, "view -o FILE")
    p = run([exe, "view", arc, "-o", "-"])
    c.ok(p.returncode == 0 and p.stdout == open(view, "rb").read(), "-o - gives the bytes of -o FILE")
    # -o - to a terminal
    master, slave = pty.openpty()
    p = subprocess.run([exe, "view", arc, "-o", "-"], stdout=slave, stderr=subprocess.PIPE, timeout=60)
    os.close(slave)
    os.close(master)
    c.ok(p.returncode == 1 and b"terminal" in p.stderr, "-o - to a terminal is refused")
    # a view goes stale when set-model replaces the graph
    c.ok(run([exe, "verify", view]).returncode == 0, "verify of a fresh view")
    with zipfile.ZipFile(arc) as z:
        m = onnx.load_from_string(z.read(ozcommon.MODEL_ENTRY))
    m.doc_string = "replaced by set-model"
    newm = os.path.join(work, "new.onnx")
    with open(newm, "wb") as f:
        f.write(m.SerializeToString())
    c.ok(run([exe, "set-model", arc, newm, "-q"]).returncode == 0, "set-model")
    p = run([exe, "verify", view])
    refused(c, p, "ONNXZIP_ESTALE", "verify of a stale view")
    c.ok(b"set-model" in p.stderr, "the stale message says set-model replaced the graph")
    c.ok(run([exe, "view", arc, "-o", view]).returncode == 0, "view written again")
    c.ok(run([exe, "verify", view]).returncode == 0, "verify of the new view")
    p = run([exe, "view", "--help"])
    c.ok(p.returncode == 0 and b"usage: onnxzip view" in p.stdout, "view --help")
    c.ok(b"view" in run([exe, "--help"]).stdout, "onnxzip --help lists view")
    return c


def main(argv):
    args, corpora, jobs, verbose = argv[1:], [], min(4, (os.cpu_count() or 2) + 1), False
    exe = None
    while args:
        a = args.pop(0)
        if a == "--corpus" and args:
            corpora.append(args.pop(0))
        elif a == "--jobs" and args:
            jobs = max(1, int(args.pop(0)))
        elif a == "--verbose":
            verbose = True
        else:
            exe = a
    if not exe:
        print(__doc__, file=sys.stderr)
        return 2
    exe = os.path.abspath(exe)
    models = []
    for c in corpora:
        if not os.path.exists(c):
            print(f"corpus absent: {c}")
            continue
        found = find_models(c)
        print(f"corpus {c}: {len(found)} models")
        models += found
    if not models:
        print("views: no model found at all; skipping")
        return 77
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="onnxzip-views-") as work:
        synthetic = os.path.join(work, "synthetic.onnx")
        synthetic_model(synthetic)
        models.append(synthetic)
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            results = list(ex.map(lambda m: one(m, exe, work), models))
        small = min(models[:-1], key=os.path.getsize)
        cli_dir = tempfile.mkdtemp(dir=work)
        checks = cli_checks(exe, small, cli_dir)
    counts = {"pass": 0, "fail": 0, "skip": 0}
    for r in results:
        counts[r.status] += 1
        if r.status != "pass" or verbose:
            print(f"{r.status.upper():4} {r.path}" + "".join(f"\n     {m}" for m in r.msgs))
    for r in results:
        for n in r.notes:
            print(f"note {r.path}: onnx.checker cannot check external sparse indices (onnx's limit, listed "
                  f"here): {n}")
    hand = sum(r.hand for r in results)
    print(f"views: {len(results)} models x {len(PACKS)} packs, {sum(r.ntensors for r in results)} tensors, "
          f"{time.time() - t0:.1f} s; {hand} reference(s) resolved by this script (onnx {onnx.__version__}'s "
          f"loader skips sparse/function/training tensors)")
    print(f"views: CLI checks on {os.path.basename(small)}: {checks.passed} passed, {checks.failed} failed")
    passed, failed = counts["pass"] + checks.passed, counts["fail"] + checks.failed
    print(f"views: {passed} passed, {failed} failed, {counts['skip']} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
