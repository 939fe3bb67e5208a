#!/usr/bin/python3
"""ort_testdata — ONNX Runtime runs the view of every libonnx-testdata model
bit-identically to the model itself (issue 10, item 4).

    ort_testdata.py ONNXZIP_EXE [CORPUS_DIR]

CORPUS_DIR defaults to /usr/share/libonnx-testdata/data (Debian package
libonnx-testdata: ONNX's backend node tests and a few real models, each a
directory with model.onnx and test_data_set_0/input_*.pb). Run with
/usr/bin/python3 (the onnx package); needs node and onnxruntime-node in
tests/ort, like ort_layouts.py.

Every *.onnx under CORPUS_DIR is packed twice (`onnxzip pack`, default
threshold, and `--size-threshold 0`) and viewed three times beside its archive
with `onnxzip view`: "default" (default pack, default view), "t0" (threshold-0
pack, default view: tensors under 1 KiB copied into the view) and "t0-view0"
(threshold-0 pack, `view --size-threshold 0`: every tensor stays external).
ORT is fed the model's own test inputs (input_*.pb, in graph input order) and
asked for its tensor-typed outputs; the original model and each view are
loaded by path and from bytes (a view's bytes with the session config entry
model_external_initializers_file_folder_path = the archive's directory, node
running elsewhere). Per model, one of:
  identical    ORT runs the original (both loads give the same outputs) and
               every view load gives those outputs bit for bit;
  refused alike
               ORT refuses the original (unsupported op, type, opset...) and
               refuses every view load with the same error (the message with
               the model's path removed);
  limitation   as one of the above, except that ORT refuses the t0-view0 view
               on both loads with "Cannot parse data from external tensors"
               (ONNX shape inference cannot read an external shape constant:
               the known ORT limitation ort_layouts.py documents);
  skipped      with a named reason: an input run_model.js cannot feed
               (sequence, optional, map; bfloat16, which onnxruntime-node has
               no tensor type for), no test inputs, no tensor-typed output,
               or the original giving different outputs on its two loads
               (a random op: no reference to compare with);
  mismatch     anything else (a failed pack or view, a view load that differs
               from the original or is refused differently): the test fails.
All ORT loads run in a few node processes (run_model.js --batch, 2 at a time);
should ORT crash one, its model counts as a mismatch and the rest of the batch
runs in a new process. Prints the mismatches, the totals and the time taken;
exits 1 on any mismatch, 77 with "corpus absent: DIR" only when CORPUS_DIR
is absent, 1 when node or onnxruntime-node is missing.
ORT_TESTDATA_KEEP=1 keeps the scratch directory; ORT_TESTDATA_ONLY=TEXT runs
only the models whose path contains TEXT.
"""
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
import ort_layouts  # noqa: E402 (next to this script: check_ort, ORT_TYPES)
import ort_views  # noqa: E402 (model_tensors, external)

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_MODEL = os.path.join(HERE, "run_model.js")
DEFAULT_CORPUS = "/usr/share/libonnx-testdata/data"
JOBS = 2           # concurrent onnxzip / node processes (a 2-core machine)
BATCHES = 4        # node processes for the whole corpus (unless one crashes)
# (view name, pack options, view options)
VIEWS = (("default", [], []),
         ("t0", ["--size-threshold", "0"], []),
         ("t0-view0", ["--size-threshold", "0"], ["--size-threshold", "0"]))
LIMIT = ort_layouts.ORT_EXTERNAL_LIMIT


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300, **kw)


def find_models(corpus, only):
    found = []
    for root, dirs, files in os.walk(corpus):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files)
                  if f.endswith(".onnx") and only in os.path.join(root, f)]
    return found


# ---- feeds ------------------------------------------------------------------

def feed(pb, type_name):
    """{type, dims, hex|strings} for run_model.js from a TensorProto file."""
    import onnx
    from onnx import numpy_helper
    t = onnx.load_tensor(pb)
    a = numpy_helper.to_array(t)
    r = {"type": type_name, "dims": list(t.dims)}
    if type_name == "string":
        r["strings"] = [x.decode("utf-8") if isinstance(x, bytes) else str(x)
                        for x in a.reshape(-1)]
    else:
        if type_name == "float16":
            a = a.view("uint16")
        r["hex"] = a.astype(a.dtype.newbyteorder("<")).tobytes().hex()
    return r


def prepare_feeds(model):
    """(feeds, fetches) for model from its test_data_set_0, or (None, reason)."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    for i in inputs:
        kind = i.type.WhichOneof("value")
        if kind != "tensor_type":
            return None, f"{kind.replace('_type', '')}-typed input (run_model.js feeds tensors)"
        if i.type.tensor_type.elem_type not in ort_layouts.ORT_TYPES \
                or ort_layouts.ORT_TYPES[i.type.tensor_type.elem_type] == "bfloat16":
            name = onnx.TensorProto.DataType.Name(i.type.tensor_type.elem_type)
            return None, f"{name} input (no onnxruntime-node tensor type)"
    fetches = [o.name for o in m.graph.output if o.type.WhichOneof("value") == "tensor_type"]
    if not fetches:
        return None, "no tensor-typed output (onnxruntime-node returns tensors)"
    data = os.path.join(os.path.dirname(model), "test_data_set_0")
    pbs = sorted(glob.glob(os.path.join(data, "input_*.pb")),
                 key=lambda p: int(re.search(r"input_(\d+)\.pb$", p).group(1)))
    if len(pbs) != len(inputs):
        return None, f"{len(pbs)} input_*.pb for {len(inputs)} graph inputs"
    feeds = {i.name: feed(pb, ort_layouts.ORT_TYPES[i.type.tensor_type.elem_type])
             for i, pb in zip(inputs, pbs)}
    return (feeds, fetches), None


# ---- archives and views ---------------------------------------------------------

def make_views(onnxzip, model, work):
    """{view name: view path} or raises RuntimeError naming the failed command."""
    os.makedirs(work)
    views, archives = {}, {}
    for name, pack_opts, view_opts in VIEWS:
        key = tuple(pack_opts)
        if key not in archives:
            archives[key] = os.path.join(work, f"{name}.onnxzip")
            cmd = [onnxzip, "pack", model, "-o", archives[key]] + pack_opts
            p = run(cmd)
            if p.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd[1:])}: exit {p.returncode}: "
                                   f"{p.stderr.decode('utf-8', 'replace').strip()[-400:]}")
        views[name] = os.path.join(work, f"{name}.view.onnx")
        cmd = [onnxzip, "view", archives[key], "-o", views[name], "-q"] + view_opts
        p = run(cmd)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[1:])}: exit {p.returncode}: "
                               f"{p.stderr.decode('utf-8', 'replace').strip()[-400:]}")
    return views


def prepare(onnxzip, model, work):
    """('job', job) | ('skip', reason) | ('fail', why) for one model."""
    try:
        fed, why = prepare_feeds(model)
    except Exception as e:  # the onnx package refusing the model or its inputs
        return "fail", f"cannot read the model or its test inputs: {e}"
    if fed is None:
        return "skip", why
    try:
        views = make_views(onnxzip, model, work)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        return "fail", str(e)
    # node runs elsewhere (the scratch root): the folder entry is needed
    jobs = [{"model": model, "loads": [{"source": "path"}, {"source": "bytes"}],
             "feeds": fed[0], "fetches": fed[1]}]
    jobs += [{"model": views[name], "loads": [{"source": "path"},
                                              {"source": "bytes", "folder": work}],
              "feeds": fed[0], "fetches": fed[1]} for name in views]
    return "job", {"model": model, "views": list(views), "jobs": jobs,
                   "external": {name: external_floats(v) for name, v in views.items()}}


def external_tensors(view):
    """[(TensorProto, {location, offset, length})] of the view's external tensors."""
    import onnx
    m = onnx.load(view, load_external_data=False)
    return [(t, e) for t in ort_views.model_tensors(m) for e in [ort_views.external(t)] if e]


def external_floats(view):
    """(external tensors, of which float32) in the view."""
    import onnx
    ts = external_tensors(view)
    return len(ts), sum(1 for t, e in ts if t.data_type == onnx.TensorProto.FLOAT)


# ---- ORT ----------------------------------------------------------------------

def run_batch(node, jobs, scratch, tag):
    """Runs jobs (run_model.js --batch) in as few node processes as crashes
    allow; returns the result lines, a {"model", "crash"} line for a job whose
    process died."""
    results = []
    while jobs:
        jpath = os.path.join(scratch, f"batch-{tag}.json")
        opath = os.path.join(scratch, f"batch-{tag}.jsonl")
        with open(jpath, "w") as f:
            json.dump(jobs, f)
        p = subprocess.run([node, RUN_MODEL, "--batch", jpath, opath], cwd=scratch,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1800)
        with open(opath) as f:
            done = [json.loads(line) for line in f if line.endswith("\n")]
        results += done
        jobs = jobs[len(done):]
        if p.returncode == 0 and not jobs:
            break
        if not jobs:  # every line written, then a failure
            jobs = [None]
        why = (p.stderr.decode("utf-8", "replace").strip()[-600:]
               or f"exit status {p.returncode}")
        if jobs[0] is not None:
            results.append({"model": jobs[0]["model"], "crash": why})
        jobs = jobs[1:]
    return results


def error_class(msg, model):
    """ORT's message without the model's path (named in path loads, which
    also say "Load model from PATH failed:" where bytes loads do not)."""
    msg = msg.replace(f"Load model from {model} failed:", "")
    for s in (model, os.path.basename(model)):
        msg = msg.replace(s, "MODEL")
    return re.sub(r"\s+", " ", msg).strip()


def loads_of(res, model):
    """[(how, outputs or None, error class or None)] of one job's result."""
    if "crash" in res:
        return None
    return [(l["how"], l.get("outputs"), error_class(l["error"], model) if "error" in l else None)
            for l in res["loads"]]


def judge(entry, by_model):
    """('identical' | 'refused alike' | 'limitation' | 'skip' | 'fail', detail)."""
    model = entry["model"]
    orig = by_model[model]
    if "crash" in orig:
        return "fail", f"node died on the original: {orig['crash']}"
    (h1, o1, e1), (h2, o2, e2) = loads_of(orig, model)
    if o1 is not None and o2 is not None and o1 != o2:
        return "skip", "the original's outputs differ between two loads (random op)"
    if (o1 is None) != (o2 is None) or e1 != e2:
        return "fail", f"original: {h1}: {e1 or 'runs'}; {h2}: {e2 or 'runs'}"
    kind, limited = ("identical" if e1 is None else "refused alike"), False
    entry["same"] = []  # views that ran, giving the original's outputs
    for name, job in zip(entry["views"], entry["jobs"][1:]):
        res = by_model[job["model"]]
        if "crash" in res:
            return "fail", f"{name}: node died: {res['crash']}"
        if e1 is None and all(out == o1 for how, out, err in loads_of(res, job["model"])):
            entry["same"].append(name)
        views_loads = loads_of(res, job["model"])
        if name == "t0-view0" and all(err and LIMIT.search(err) for how, out, err in views_loads):
            limited = True  # both loads refused alike, by the documented limitation
            continue
        for how, out, err in views_loads:
            if out == o1 and err == e1:
                continue
            got = f"refused: {err}" if err else "different outputs" if o1 is not None else "runs"
            want = f"refused: {e1}" if e1 else "the original's outputs"
            return "fail", f"view {name}, {how}: {got}; expected {want}"
    return ("limitation" if limited else kind), e1


def flip_floats(view, cdir):
    """Copies view and its archive into cdir, flips the top exponent bit of
    the middle element of every external float32 tensor in the copy; returns
    (the copied view, tensors flipped)."""
    import onnx
    ts = [e for t, e in external_tensors(view)
          if t.data_type == onnx.TensorProto.FLOAT and int(e["length"]) >= 4]
    src = os.path.dirname(view)
    os.makedirs(cdir)
    archive = os.path.join(cdir, ts[0]["location"])
    shutil.copyfile(os.path.join(src, ts[0]["location"]), archive)
    copy = shutil.copy(view, cdir)
    with open(archive, "r+b") as f:
        for e in ts:
            at = int(e["offset"]) + int(e["length"]) // 8 * 4 + 3  # little-endian: sign, exponent
            f.seek(at)
            b = f.read(1)[0] ^ 0x40
            f.seek(at)
            f.write(bytes([b]))
    return copy, len(ts)


def control(node, entries, by_model, scratch):
    """Negative control: in a copy of the first view that ran identically and
    has external float32 tensors, one bit flipped in each of them in the
    archive must change ORT's outputs on both loads (the views do read the
    archive, and a difference is seen). Returns (passed, what)."""
    for e in entries:
        for name, job in zip(e["views"], e["jobs"][1:]):
            if name in e.get("same", ()) and e["external"][name][1]:
                break
        else:
            continue
        break
    else:
        return False, "no view that ran identically has an external float32 tensor"
    cdir = os.path.join(scratch, "control")
    view, n = flip_floats(job["model"], cdir)
    ref = loads_of(by_model[e["model"]], e["model"])[0][1]
    cjob = dict(job, model=view, loads=[{"source": "path"}, {"source": "bytes", "folder": cdir}])
    res = run_batch(node, [cjob], scratch, "control")[0]
    what = (f"{os.path.basename(os.path.dirname(e['model']))} view {name}, "
            f"{n} float32 tensors with a bit flipped in the archive")
    if "crash" in res:
        return False, f"{what}: node died: {res['crash']}"
    for how, out, err in loads_of(res, view):
        if out is None or out == ref:
            return False, f"{what}: {how}: {'refused: ' + err if err else 'outputs unchanged'}"
    return True, f"{what}: outputs differ on both loads"


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    onnxzip = os.path.abspath(argv[1])
    corpus = argv[2] if len(argv) == 3 else DEFAULT_CORPUS
    if not os.path.isdir(corpus):
        print(f"corpus absent: {corpus}")
        return 77
    node = shutil.which("node")
    why = ort_layouts.check_ort(node)
    if why is not None:
        print(f"ort_testdata: {why}")
        return 1
    t_start = time.monotonic()
    models = find_models(corpus, os.environ.get("ORT_TESTDATA_ONLY", ""))
    print(f"ort_testdata: {len(models)} models in {corpus}", flush=True)
    scratch = tempfile.mkdtemp(prefix="ort_testdata.")
    counts, skips, fails = {}, {}, []
    try:
        with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
            prepared = list(ex.map(lambda im: prepare(onnxzip, im[1], os.path.join(
                scratch, f"{im[0]:04d}")), enumerate(models)))
        t_prep = time.monotonic() - t_start
        entries = []
        for model, (what, x) in zip(models, prepared):
            if what == "skip":
                skips.setdefault(x, []).append(os.path.relpath(model, corpus))
            elif what == "fail":
                fails.append((model, x))
            else:
                entries.append(x)
        jobs = [j for e in entries for j in e["jobs"]]
        # a model's jobs stay in one batch (cheaper to look at together)
        per = -(-len(entries) // BATCHES) if entries else 1
        batches = [[j for e in entries[i:i + per] for j in e["jobs"]]
                   for i in range(0, len(entries), per)]
        with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
            results = list(ex.map(lambda ib: run_batch(node, ib[1], scratch, ib[0]),
                                  enumerate(batches)))
        by_model = {r["model"]: r for rs in results for r in rs}
        assert len(by_model) == len(jobs), "a job without a result"
        for e in entries:
            kind, detail = judge(e, by_model)
            if kind == "skip":
                skips.setdefault(detail, []).append(os.path.relpath(e["model"], corpus))
            elif kind == "fail":
                fails.append((e["model"], detail))
            else:
                counts[kind] = counts.get(kind, 0) + 1
                if kind == "limitation" and detail is not None:
                    counts["limitation, original refused"] = \
                        counts.get("limitation, original refused", 0) + 1
        passed, what = control(node, entries, by_model, scratch)
        print(f"{'PASS' if passed else 'FAIL'} control: {what}")
        if not passed:
            fails.append(("control", what))
        inplace = sum(1 for e in entries for name in e.get("same", ()) if e["external"][name][0])
        t_all = time.monotonic() - t_start
        loads = sum(len(j["loads"]) for j in jobs)
    finally:
        if os.environ.get("ORT_TESTDATA_KEEP") == "1":
            print(f"ort_testdata: scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    for model, why in fails:
        if model != "control":
            print(f"FAIL {os.path.relpath(model, corpus)}: {why}")
    for why, names in sorted(skips.items()):
        print(f"     skipped {len(names)}: {why}: {' '.join(names)}")
    print(f"     {inplace} views with external data references into their archive "
          f"ran identically (the others hold every tensor inline)")
    print(f"     {loads} ORT loads in {len(batches)} node processes (+ restarts after crashes); "
          f"packs and views {t_prep:.1f} s, total {t_all:.1f} s")
    print(f"ort_testdata: {len(models)} models: {counts.get('identical', 0)} ran identical, "
          f"{counts.get('refused alike', 0)} refused alike, "
          f"{counts.get('limitation', 0)} limitation (t0-view0 shape constants; "
          f"{counts.get('limitation, original refused', 0)} of them with the original refused), "
          f"{sum(len(n) for n in skips.values())} skipped, {len(fails)} mismatches")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
