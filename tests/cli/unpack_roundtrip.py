#!/usr/bin/python3
"""unpack_roundtrip — pack real models, unpack them in every layout, and check
with the onnx package that the classic models written are the originals.

    unpack_roundtrip.py ONNXZIP_EXE [MODEL_OR_DIR...] [--corpus DIR]... [--jobs N] [--verbose]

MODEL_OR_DIR: .onnx files, or directories searched recursively for *.onnx (must
exist). --corpus DIR: the same, but DIR may be absent ("corpus absent: DIR" is
printed). Exits 77 (skip) only when no model was found at all.

For each model, in one Python process (onnx imported once):
  1. onnx.load() the original (with its external data, if it has any); a
     model onnx cannot load is skipped (counted).
  2. `onnxzip pack MODEL -o ARCHIVE --size-threshold 0` (plus --keep-typed when
     pack has it, so that the archive holds the original's bytes: typed fields
     converted to raw_data would not compare equal); a refusal that the spec
     justifies (ozcommon.spec_violation) is a skip, any other a failure.
  3. `onnxzip unpack ARCHIVE -o DIR/model.onnx` with --layout single --align 4096
     --size-threshold 0,
     --layout per-tensor and --layout inline, each into its own directory.
  4. For each output: onnx.load(path) (loads external data; the references
     onnx 1.12's loader does not visit — sparse tensors, functions, training
     graphs — are resolved by ozcommon.resolve_external and counted), then
     compare with the original after normalization (data_location DEFAULT
     cleared, external_data cleared): SerializeToString must be equal.
  5. Layout checks on the model read with load_external_data=False: single —
     every moved tensor references model.onnx.data at an offset that is a
     multiple of 4096, with offset and length; per-tensor — each location is a
     plain file name present in the directory; inline — no EXTERNAL tensor
     and no file but model.onnx. Single and per-tensor externalize exactly
     the tensors the archive holds in entries.
  6. onnx.checker.check_model(path) on each output, wherever it passes on the
     original path.
Prints "unpack_roundtrip: N passed, M failed, K skipped".
"""
import os
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx  # noqa: E402
from onnx import TensorProto  # noqa: E402

import ozcommon  # noqa: E402

_onnx_lock = threading.Lock()  # protobuf work in one thread at a time
ALIGN = 4096
# --size-threshold 0: every tensor in an entry goes back to a data file, so
# that each one's (location, offset, length) is checked; the default (1024,
# small tensors inline) is covered by test_unpack and the ONNX Runtime test.
LAYOUTS = (("single", ["--layout", "single", "--align", str(ALIGN), "--size-threshold", "0"]),
           ("per-tensor", ["--layout", "per-tensor", "--size-threshold", "0"]),
           ("inline", ["--layout", "inline"]))


class Result:
    def __init__(self, path):
        self.path = path
        self.status = "pass"  # pass | fail | skip
        self.msgs = []
        self.hand_resolved = 0

    def fail(self, msg):
        self.status = "fail"
        self.msgs.append(msg)


def find_models(p):
    if os.path.isfile(p):
        return [p]
    out = []
    for root, dirs, files in os.walk(p):
        dirs.sort()
        out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".onnx")]
    return out


def _err(p, what):
    tail = (p.stderr or p.stdout).decode("utf-8", "replace").strip().splitlines()
    return f"{what} exited {p.returncode}: " + " | ".join(tail[-3:])


def normalize(m):
    for t, _k, _d, _w in ozcommon.iter_tensors(m):
        if t.HasField("data_location") and t.data_location == TensorProto.DEFAULT:
            t.ClearField("data_location")
        t.ClearField("external_data")
    return m


def checker_passes(path):
    try:
        onnx.checker.check_model(path)
        return None
    except Exception as ex:  # noqa: BLE001 — any checker failure
        return str(ex).strip().splitlines()[0][:160] if str(ex).strip() else repr(ex)


def ext_info(t):
    return {e.key: e.value for e in t.external_data}


def check_layout(layout, out_dir, entry_tensors):
    """Errors in the references of the model at out_dir/model.onnx, read
    without its external data. `entry_tensors`: how many tensors the archive
    holds in entries."""
    m = onnx.load(os.path.join(out_dir, "model.onnx"), load_external_data=False)
    errs, n_ext = [], 0
    for t, _k, _d, w in ozcommon.iter_tensors(m):
        if not ozcommon.is_external(t):
            continue
        n_ext += 1
        info = ext_info(t)
        loc = info.get("location", "")
        if set(info) - {"location", "offset", "length"}:
            errs.append(f"{w}: unexpected keys {sorted(info)}")
        if layout == "single":
            if loc != "model.onnx.data" or "offset" not in info or "length" not in info:
                errs.append(f"{w}: single reference {info}")
            elif int(info["offset"]) % ALIGN:
                errs.append(f"{w}: offset {info['offset']} is not a multiple of {ALIGN}")
        elif layout == "per-tensor":
            if not loc or "/" in loc or loc in (".", "..") or \
                    not os.path.isfile(os.path.join(out_dir, loc)):
                errs.append(f"{w}: location {loc!r} is not a file of the directory")
    files = sorted(os.listdir(out_dir))
    if layout == "inline":
        if n_ext or files != ["model.onnx"]:
            errs.append(f"inline: {n_ext} EXTERNAL tensors, files {files[:5]}")
    elif n_ext != entry_tensors:
        errs.append(f"{n_ext} EXTERNAL tensors, the archive has {entry_tensors} in entries")
    if layout == "single" and entry_tensors and files != ["model.onnx", "model.onnx.data"]:
        errs.append(f"single: files {files[:5]}")
    if any(".unpack-" in f for f in files):
        errs.append("a temporary directory was left behind")
    return errs


def one_layout(r, orig, orig_ok, arc, layout, args, d, onnxzip, entry_tensors):
    out_dir = os.path.join(d, layout)
    os.mkdir(out_dir)
    path = os.path.join(out_dir, "model.onnx")
    p = ozcommon.run([onnxzip, "unpack", arc, "-o", path] + args, timeout=300)
    if p.returncode != 0 or not p.stdout.startswith(b"unpacked "):
        r.fail(f"{layout}: " + _err(p, "unpack"))
        return
    with _onnx_lock:
        try:
            errs = check_layout(layout, out_dir, entry_tensors)
            got = onnx.load(path)
            r.hand_resolved += ozcommon.resolve_external(got, out_dir)
            diff = ozcommon.model_diff(orig, normalize(got))
        except Exception as ex:  # noqa: BLE001
            errs, diff = [], f"load failed: {ex!r}"
        if diff:
            errs.append(f"loaded model differs: {diff}")
        if orig_ok is None:
            why = checker_passes(path)
            if why:
                errs.append(f"onnx.checker fails on the output (passes on the original): {why}")
    for e in errs[:4]:
        r.fail(f"{layout}: {e}")


def entry_count(orig):
    """Tensors pack --size-threshold 0 moves to entries: every raw_data one."""
    return sum(1 for t, _k, _d, _w in ozcommon.iter_tensors(orig) if t.HasField("raw_data"))


def pack_extra_args(onnxzip):
    """["--keep-typed"] when this pack converts typed fields unless told not to."""
    p = ozcommon.run([onnxzip, "pack", "--help"], timeout=60)
    return ["--keep-typed"] if b"--keep-typed" in p.stdout else []


def one(path, onnxzip, work, pack_extra):
    r = Result(path)
    d = tempfile.mkdtemp(dir=work)
    try:
        with _onnx_lock:
            try:
                # classic external-data models are loaded with their data,
                # so the comparison below is by tensor contents either way
                orig = onnx.load(path)
            except Exception as ex:  # noqa: BLE001
                r.status = "skip"
                r.msgs.append(f"onnx.load fails: {str(ex).splitlines()[0][:120] if str(ex) else repr(ex)}")
                return r
            violation = ozcommon.spec_violation(orig)
            orig_ok = checker_passes(path)
            entry_tensors = entry_count(orig)
            orig = normalize(orig)
        arc = os.path.join(d, "a.onnxzip")
        p = ozcommon.run([onnxzip, "pack", path, "-o", arc, "--size-threshold", "0", "-q"] + pack_extra,
                         timeout=300)
        if p.returncode != 0:
            if violation and p.returncode == 1:
                r.status = "skip"
                r.msgs.append(f"pack refuses it, justified: {violation}")
            else:
                r.fail(_err(p, "pack"))
            return r
        for layout, args in LAYOUTS:
            one_layout(r, orig, orig_ok, arc, layout, args, d, onnxzip, entry_tensors)
        return r
    except Exception as ex:  # noqa: BLE001
        r.fail(f"exception: {ex!r}")
        return r
    finally:
        shutil.rmtree(d, ignore_errors=True)


def parse_args(argv):
    args = argv[1:]
    pos, corpora = [], []
    jobs = min(4, (os.cpu_count() or 2) + 1)
    verbose = False
    while args:
        a = args.pop(0)
        if a == "--corpus" and args:
            corpora.append(args.pop(0))
        elif a == "--jobs" and args:
            jobs = max(1, int(args.pop(0)))
        elif a == "--verbose":
            verbose = True
        else:
            pos.append(a)
    return pos, corpora, jobs, verbose


def collect(inputs, corpora):
    models, missing = [], 0
    for p in inputs:
        if not os.path.exists(p):
            missing += 1
            print(f"FAIL input does not exist: {p}")
            continue
        models += find_models(p)
    for c in corpora:
        if not os.path.exists(c):
            print(f"corpus absent: {c}")
            continue
        found = find_models(c)
        print(f"corpus {c}: {len(found)} models")
        models += found
    return models, missing


def report(results, missing, verbose, t0):
    counts = {"pass": 0, "fail": missing, "skip": 0}
    skip_reasons = {}
    for r in results:
        counts[r.status] += 1
        if r.status == "fail":
            print(f"FAIL {r.path}")
            for m in r.msgs:
                print(f"     {m}")
        elif r.status == "skip":
            key = r.msgs[0].split(":")[0] if r.msgs else "?"
            skip_reasons[key] = skip_reasons.get(key, 0) + 1
            if verbose:
                print(f"skip {r.path}: {'; '.join(r.msgs)}")
        elif verbose:
            print(f"ok   {r.path}")
    for why, n in sorted(skip_reasons.items()):
        print(f"skipped: {n} model(s): {why}")
    hand = sum(r.hand_resolved for r in results)
    if hand:
        print(f"note: {hand} external reference(s) were resolved by this script (onnx "
              f"{onnx.__version__}'s loader skips sparse/function/training tensors)")
    print(f"unpack_roundtrip: {len(results)} models x {len(LAYOUTS)} layouts, "
          f"{time.time() - t0:.1f} s")
    print(f"unpack_roundtrip: {counts['pass']} passed, {counts['fail']} failed, "
          f"{counts['skip']} skipped")
    return 1 if counts["fail"] else 0


def main(argv):
    pos, corpora, jobs, verbose = parse_args(argv)
    if len(pos) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    onnxzip = pos[0]
    models, missing = collect(pos[1:], corpora)
    if not models and not missing:
        print("unpack_roundtrip: no model found at all; skipping")
        return 77
    t0 = time.time()
    pack_extra = pack_extra_args(onnxzip)
    with tempfile.TemporaryDirectory(prefix="onnxzip-unpack-") as work:
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            results = list(ex.map(lambda m: one(m, onnxzip, work, pack_extra), models))
    return report(results, missing, verbose, t0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
