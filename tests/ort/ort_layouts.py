#!/usr/bin/python3
"""ort_layouts — ONNX Runtime must compute bit-identical outputs for a model in
every layout onnxzip writes.

    ort_layouts.py ONNXZIP_EXE CORPUS_DIR

Run with /usr/bin/python3 (Debian's, which has the onnx package). Needs node
and onnxruntime-node installed in tests/ort (`npm ci --ignore-scripts` there;
.ci/install-deps does it). Each model is run by run_model.js (next to this
script) on the same deterministic inputs; every output's dims, type and raw
bytes must be equal to those of the original model.

For each CORPUS_DIR/models/*.onnx, two variants:
  * the model as it is;
  * "+probe": the same model with every output of every main-graph node added
    as a graph output (made with the onnx package). The corpus's "light"
    models build their weights with ConstantOfShape, so their final softmax is
    uniform (all 0.001) whatever the weights; the intermediate values are not.
    As a negative control, the probe's t=256 unzipped archive then gets one
    bit flipped in its largest entry, and its outputs must change.
Each variant is run as the original file, then packed three times, with
`--size-threshold 0` (every tensor becomes an entry), 256 and the default
(1024 bytes), and each archive is run as:
  unzip     the archive unzipped with Python's zipfile, __MODEL_PROTO renamed
            to model.onnx (spec 8.5: a classic external-data model);
  single / per-tensor / inline
            `onnxzip unpack ARCHIVE -o DIR/model.onnx --layout L`, only when
            `onnxzip --help` lists an unpack command; otherwise these three
            are counted as skipped ("unpack not available yet").
  view      the archive's view (`onnxzip view`, issue 10), run by ONNX
            Runtime by path and from bytes: see ort_views.py, which packs
            each variant four more ways for it (default threshold, 0,
            --align 4096, --dedup). ort_views.make_synthetic's model (tensors
            in a function and in If branches, two equal initializers) is
            checked in every layout too, with set-model making a view stale.
For each CORPUS_DIR/extdata/*/ (classic external-data layouts written by the
onnx package), the *.onnx inside is run, packed with default options, and the
unzipped archive compared against it; a pack refused with
ONNXZIP_EUNSUPPORTED is counted as skipped. Its views are checked as above.

Known ORT limitation: ORT's graph resolution runs ONNX shape inference, whose
ParseData() refuses a tensor stored as external data ("Cannot parse data from
external tensors. Please load external data into raw data for tensor: X").
Any model whose shape-determining constants (a Reshape/ConstantOfShape/Resize
input coming from an initializer or a Constant node) are external is refused,
whoever wrote it (onnx's convert_model_to_external_data, like onnxzip pack,
keeps tensors under 1024 bytes inline by default). With --size-threshold 0 the
unzipped archive of 6 of the 7 corpus models has such constants outside the
model: for that one case ORT's refusal with exactly this message is the
expected result and passes (any other outcome but identical outputs fails).
`onnxzip unpack` brings tensors under 1024 bytes back inline by default, so
its single and per-tensor layouts must run everywhere, like the originals, the
inline layout and the 256 and default thresholds.

Prints one line per check and "ort_layouts: N passed, M failed, K skipped";
exits 1 if anything failed (including ORT refusing an original model), 77 with
"corpus absent: PATH" when CORPUS_DIR/models is absent, 1 when node or
onnxruntime-node is missing (CI installs them, so that is a real failure).
ORT_LAYOUTS_KEEP=1 keeps the scratch directory and prints its path;
ORT_LAYOUTS_ONLY=TEXT runs only the models (and extdata directories) whose
name contains TEXT.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
import ort_views  # noqa: E402 (after dont_write_bytecode; next to this script)

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_MODEL = os.path.join(HERE, "run_model.js")
MODEL_ENTRY = "__MODEL_PROTO"
UNPACK_LAYOUTS = ("single", "per-tensor", "inline")
# pack --size-threshold values; None = the default (1024). 256 keeps the
# corpus's shape constants inline (see "Known ORT limitation") while still
# moving most tensors of the light models, which the default leaves inline.
THRESHOLDS = ("0", "256", None)
CONTROL_THRESHOLD = "256"
RUN_TIMEOUT = 300

# TensorProto.DataType -> onnxruntime-node Tensor type, for INPUT_SPEC.json
ORT_TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
             7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64",
             12: "uint32", 13: "uint64", 16: "bfloat16"}


def run(cmd, timeout=RUN_TIMEOUT, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout, **kw)


def tail(p, n=600):
    s = (p.stderr or b"").decode("utf-8", "replace").strip()
    if not s:
        s = (p.stdout or b"").decode("utf-8", "replace").strip()
    return s[-n:]


ORT_EXTERNAL_LIMIT = re.compile(
    r"Cannot parse data from external tensors\. Please load external data into raw data "
    r"for tensor: ?(\S*)")


class Checker:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.why_skipped = {}

    def ok(self, what, extra=""):
        self.passed += 1
        print(f"PASS {what}{extra}", flush=True)

    def fail(self, what, why):
        self.failed += 1
        print(f"FAIL {what}: {why}", flush=True)

    def skip(self, what, why, kind=None):
        self.skipped += 1
        kind = kind or why
        self.why_skipped[kind] = self.why_skipped.get(kind, 0) + 1
        print(f"SKIP {what}: {why}", flush=True)


def check_ort(node):
    """None when node can load onnxruntime-node, else why not."""
    if node is None:
        return "node not found on PATH (install nodejs: .ci/install-deps)"
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        return (f"{HERE}/node_modules/onnxruntime-node is absent "
                f"(run 'npm ci --ignore-scripts' in {HERE}, or .ci/install-deps)")
    p = run([node, "-e", "const o = require('onnxruntime-node');"
             "process.stdout.write(o.env.versions.node || '?')"], cwd=HERE, timeout=120)
    if p.returncode != 0:
        return f"node cannot load onnxruntime-node: {tail(p)}"
    print(f"ort_layouts: onnxruntime-node {p.stdout.decode().strip()}, "
          f"node {run([node, '--version']).stdout.decode().strip()}", flush=True)
    return None


def unpack_available(onnxzip):
    p = run([onnxzip, "--help"], timeout=60)
    text = (p.stdout + p.stderr).decode("utf-8", "replace")
    return re.search(r"^\s+unpack\b", text, re.M) is not None


def input_spec(model_path):
    """{name: {type, shape}} of the graph inputs that are not initializers, from
    the model (run_model.js uses it only when ORT has no session.inputMetadata)."""
    import onnx
    m = onnx.load(model_path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    spec = {}
    for i in m.graph.input:
        if i.name in inits or not i.type.HasField("tensor_type"):
            continue
        tt = i.type.tensor_type
        shape = []
        for d in tt.shape.dim:
            shape.append(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?"))
        spec[i.name] = {"type": ORT_TYPES.get(tt.elem_type, f"elem_type_{tt.elem_type}"),
                        "shape": shape}
    return spec


def make_probe(src, dst):
    """Copy of src with every main-graph node output exposed as a graph output."""
    import onnx
    m = onnx.load(src)
    have = {o.name for o in m.graph.output} | {i.name for i in m.graph.input}
    added = 0
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                have.add(o)
                m.graph.output.add().name = o
                added += 1
    onnx.save(m, dst)
    return added


class Runner:
    # for ort_views, which cannot import this script
    run = staticmethod(run)
    tail = staticmethod(tail)
    external_limit = ORT_EXTERNAL_LIMIT

    def __init__(self, node):
        self.node = node
        self.runs = 0
        self.seconds = 0.0

    @staticmethod
    def describe_diff(ref, got):
        return describe_diff(ref, got)

    def loads(self, model_path, out_json, spec_json, loads):
        """run_model.js --load L... for each list L in loads, in one process:
        (list of per-load results, None) or (None, error message)."""
        args = [a for load in loads for a in ("--load", *load)]
        got, err = self.outputs(model_path, out_json, spec_json, args)
        return (got["loads"], None) if got is not None else (None, err)

    def outputs(self, model_path, out_json, spec_json, args=()):
        """(dict, None) or (None, error message)."""
        t0 = time.monotonic()
        try:
            p = run([self.node, RUN_MODEL, *args, model_path, out_json, spec_json])
        except subprocess.TimeoutExpired:
            return None, f"run_model.js timed out after {RUN_TIMEOUT} s"
        finally:
            self.runs += 1
            self.seconds += time.monotonic() - t0
        if p.returncode != 0:
            return None, f"run_model.js exited {p.returncode}: {tail(p)}"
        with open(out_json) as f:
            return json.load(f), None


def describe_diff(ref, got):
    for sect in ("inputs", "outputs"):
        a, b = ref.get(sect, {}), got.get(sect, {})
        if list(a) != list(b):
            return f"{sect} differ in names: {list(a)} vs {list(b)}"
        for name in a:
            x, y = a[name], b[name]
            if x == y:
                continue
            if x["dims"] != y["dims"] or x["type"] != y["type"]:
                return (f"{sect[:-1]} '{name}': {x['type']}{x['dims']} vs "
                        f"{y['type']}{y['dims']}")
            if "hex" not in x or "hex" not in y:
                return (f"{sect[:-1]} '{name}' ({x['type']}{x['dims']}, {x.get('bytes')} "
                        f"bytes): SHA-256 differs")
            hx, hy = x["hex"], y["hex"]
            if len(hx) != len(hy):
                return f"{sect[:-1]} '{name}': {len(hx) // 2} vs {len(hy) // 2} bytes"
            k = next(i for i in range(len(hx)) if hx[i] != hy[i]) // 2
            ndiff = sum(1 for i in range(0, len(hx), 2) if hx[i:i + 2] != hy[i:i + 2])
            return (f"{sect[:-1]} '{name}' ({x['type']}{x['dims']}): {ndiff} of "
                    f"{len(hx) // 2} bytes differ, first at byte {k}")
    return "outputs differ"


def unzip_to(archive, outdir):
    os.makedirs(outdir)
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            n = info.filename
            if n.startswith("/") or ".." in n.split("/") or "\\" in n:
                raise ValueError(f"unsafe entry name {n!r}")
        z.extractall(outdir)
    os.rename(os.path.join(outdir, MODEL_ENTRY), os.path.join(outdir, "model.onnx"))
    return os.path.join(outdir, "model.onnx")


def negative_control(ck, rn, label, unzip_dir, ref, spec):
    """The comparison must notice a damaged tensor: flip one exponent bit in
    the first element of the largest entry of an unzipped archive and expect
    different outputs (or ORT refusing to run)."""
    what = f"{label} [control: damaged entry is noticed]"
    entries = [(os.path.getsize(os.path.join(unzip_dir, n)), n) for n in os.listdir(unzip_dir)
               if n != "model.onnx"]
    if not entries:
        ck.skip(what, "the archive has no tensor entries", kind="control without entries")
        return
    size, name = max(entries)
    path = os.path.join(unzip_dir, name)
    with open(path, "r+b") as f:
        f.seek(min(3, size - 1))
        b = f.read(1)[0]
        f.seek(min(3, size - 1))
        f.write(bytes([b ^ 0x40]))
    got, err = rn.outputs(os.path.join(unzip_dir, "model.onnx"),
                          os.path.join(unzip_dir, "..", "control.json"), spec)
    if got is None or got != ref:
        ck.ok(what, f" (entry '{name}', {size} bytes: "
              f"{'ORT refused' if got is None else describe_diff(ref, got)})")
    else:
        ck.fail(what, f"flipping a bit of entry '{name}' ({size} bytes) changed no output")


def reference(ck, rn, label, src, work):
    """Makes `work`, writes the input spec there and runs the original:
    (spec path, outputs), or outputs None after counting the failure."""
    os.makedirs(work)
    spec = os.path.join(work, "spec.json")
    with open(spec, "w") as f:
        json.dump(input_spec(src), f)
    ref, err = rn.outputs(src, os.path.join(work, "orig.json"), spec)
    if ref is None:
        ck.fail(f"{label} [original]", f"ORT rejects the original model: {err}")
    return spec, ref


def check_layouts(ck, rn, onnxzip, label, src, work, has_unpack, has_view, control=False,
                  synthetic=False):
    """Run src and all its layouts, views included; counts into ck."""
    spec, ref = reference(ck, rn, label, src, work)
    if ref is None:
        return
    classic_t0 = None
    for threshold in THRESHOLDS:
        tlabel = f"{label} t={threshold or 'default'}"
        twork = os.path.join(work, f"t{threshold or 'default'}")
        os.makedirs(twork)
        archive = os.path.join(twork, "model.onnxzip")
        cmd = [onnxzip, "pack", src, "-o", archive, "-q"]
        if threshold is not None:
            cmd += ["--size-threshold", threshold]
        p = run(cmd)
        if p.returncode != 0:
            ck.fail(f"{tlabel} [pack]", f"onnxzip pack exited {p.returncode}: {tail(p)}")
            continue
        with zipfile.ZipFile(archive) as z:
            n_entries = len(z.namelist()) - 1
        print(f"     {tlabel}: archive with {n_entries} tensor entries", flush=True)
        classic = check_archive(ck, rn, onnxzip, tlabel, archive, twork, ref, spec,
                                has_unpack, limit_ok=(threshold == "0"))
        if threshold == "0":
            classic_t0 = classic
        if control and threshold == CONTROL_THRESHOLD and os.path.isdir(os.path.join(twork, "unzip")):
            negative_control(ck, rn, tlabel, os.path.join(twork, "unzip"), ref, spec)
    ort_views.check_views(ck, rn, onnxzip, label, src, work, ref, spec, has_view, classic_t0,
                          synthetic)


def compare(ck, rn, what, model_path, out_json, ref, spec, limit_ok=False):
    """limit_ok: ORT's documented refusal of external shape constants is the
    expected result (only for the unzipped --size-threshold 0 archive).
    Returns what ORT gave: (outputs, None) or (None, error message)."""
    got, err = rn.outputs(model_path, out_json, spec)
    if got is None:
        m = ORT_EXTERNAL_LIMIT.search(err)
        if m and limit_ok:
            ck.ok(what, f" (refused as expected: ORT's shape inference cannot read external "
                  f"tensor '{m.group(1)}')")
        else:
            ck.fail(what, err)
    elif got != ref:
        ck.fail(what, describe_diff(ref, got))
    else:
        n = len(ref["outputs"])
        nbytes = sum(v["bytes"] if "bytes" in v else len(v["hex"]) // 2
                     for v in ref["outputs"].values())
        ck.ok(what, f" ({n} output{'s' if n != 1 else ''}, {nbytes} bytes)")
    return got, err


def check_archive(ck, rn, onnxzip, label, archive, work, ref, spec, has_unpack, limit_ok):
    """Returns what ORT gave for the unzipped archive (see compare), or None."""
    classic = None
    try:
        model = unzip_to(archive, os.path.join(work, "unzip"))
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        ck.fail(f"{label} [unzip]", f"cannot unzip the archive: {e}")
    else:
        classic = compare(ck, rn, f"{label} [unzip]", model, os.path.join(work, "unzip.json"),
                          ref, spec, limit_ok)

    for layout in UNPACK_LAYOUTS:
        what = f"{label} [{layout}]"
        if not has_unpack:
            ck.fail(what, "onnxzip has no unpack command")
            continue
        d = os.path.join(work, layout)
        os.makedirs(d)
        out = os.path.join(d, "model.onnx")
        p = run([onnxzip, "unpack", archive, "-o", out, "--layout", layout])
        if p.returncode != 0:
            ck.fail(what, f"onnxzip unpack exited {p.returncode}: {tail(p)}")
            continue
        # unpack keeps small tensors inline by default: every layout must run
        compare(ck, rn, what, out, os.path.join(work, f"{layout}.json"), ref, spec)
    return classic


def check_extdata(ck, rn, onnxzip, label, ddir, work, has_view):
    models = sorted(f for f in os.listdir(ddir) if f.endswith(".onnx"))
    if len(models) != 1:
        ck.fail(label, f"expected one .onnx file in {ddir}, found {models}")
        return
    src = os.path.join(ddir, models[0])
    spec, ref = reference(ck, rn, label, src, work)
    if ref is None:
        return
    archive = os.path.join(work, "model.onnxzip")
    p = run([onnxzip, "pack", src, "-o", archive, "-q"])
    what = f"{label} [pack+unzip]"
    if p.returncode != 0:
        if b"ONNXZIP_EUNSUPPORTED" in p.stderr:
            last = p.stderr.decode("utf-8", "replace").strip().splitlines()[-1]
            ck.skip(what, f"onnxzip pack does not take external-data models yet ({last})", kind="pack of external-data models not available yet")
        else:
            ck.fail(what, f"onnxzip pack exited {p.returncode}: {tail(p)}")
        return
    try:
        model = unzip_to(archive, os.path.join(work, "unzip"))
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        ck.fail(what, f"cannot unzip the archive: {e}")
        return
    compare(ck, rn, what, model, os.path.join(work, "unzip.json"), ref, spec)
    ort_views.check_views(ck, rn, onnxzip, label, src, work, ref, spec, has_view)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    onnxzip, corpus = os.path.abspath(argv[1]), argv[2]
    mdir = os.path.join(corpus, "models")
    if not os.path.isdir(mdir):
        print(f"corpus absent: {mdir}")
        return 77
    node = shutil.which("node")
    why = check_ort(node)
    if why is not None:
        print(f"ort_layouts: {why}")
        print("ort_layouts: 0 passed, 1 failed, 0 skipped")
        return 1
    has_unpack = unpack_available(onnxzip)
    if not has_unpack:
        print("ort_layouts: 'onnxzip --help' lists no unpack command: layouts "
              f"{', '.join(UNPACK_LAYOUTS)} are skipped (unpack not available yet)")
    has_view = ort_views.view_available(onnxzip, run)
    if not has_view:
        print("ort_layouts: 'onnxzip --help' lists no view command: every view check fails")

    ck = Checker()
    rn = Runner(node)
    keep = os.environ.get("ORT_LAYOUTS_KEEP") == "1"
    only = os.environ.get("ORT_LAYOUTS_ONLY", "")
    tmp = tempfile.mkdtemp(prefix="ort_layouts.")
    t_all = time.monotonic()
    try:
        for f in sorted(os.listdir(mdir)):
            if not f.endswith(".onnx") or only not in f:
                continue
            base = f[:-len(".onnx")]
            t0, r0 = time.monotonic(), rn.runs
            src = os.path.join(mdir, f)
            check_layouts(ck, rn, onnxzip, f, src, os.path.join(tmp, base), has_unpack,
                          has_view)
            probe = os.path.join(tmp, base + "+probe.onnx")
            try:
                added = make_probe(src, probe)
            except Exception as e:  # the onnx package refusing the model
                ck.fail(f"{f}+probe", f"cannot build the probe variant: {e}")
            else:
                print(f"     {f}+probe: {added} node outputs exposed as graph outputs", flush=True)
                check_layouts(ck, rn, onnxzip, f"{f}+probe", probe,
                              os.path.join(tmp, base + "+probe"), has_unpack, has_view,
                              control=True)
            print(f"     {f}: {time.monotonic() - t0:.1f} s, {rn.runs - r0} ORT runs",
                  flush=True)
        if only in "synthetic":
            synth = os.path.join(tmp, "synthetic.onnx")
            ort_views.make_synthetic(synth)
            check_layouts(ck, rn, onnxzip, "synthetic.onnx", synth,
                          os.path.join(tmp, "synthetic"), has_unpack, has_view, synthetic=True)
        edir = os.path.join(corpus, "extdata")
        if os.path.isdir(edir):
            for d in sorted(os.listdir(edir)):
                ddir = os.path.join(edir, d)
                if os.path.isdir(ddir) and only in d:
                    check_extdata(ck, rn, onnxzip, f"extdata/{d}", ddir,
                                  os.path.join(tmp, "extdata-" + d), has_view)
        else:
            print(f"corpus absent: {edir}")
    finally:
        if keep:
            print(f"ort_layouts: scratch kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"     {rn.runs} ORT runs in {time.monotonic() - t_all:.1f} s "
          f"({rn.seconds:.1f} s in run_model.js)")
    for kind, n in sorted(ck.why_skipped.items()):
        print(f"     skipped {n}: {kind}")
    print(f"ort_layouts: {ck.passed} passed, {ck.failed} failed, {ck.skipped} skipped")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
