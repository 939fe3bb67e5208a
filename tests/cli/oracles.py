#!/usr/bin/python3
"""oracles — archives written by `onnxzip pack` checked by independent readers.

    oracles.py ONNXZIP_EXE LIBZIP_ORACLE_EXE [--corpus DIR] [--keep DIR]

Builds the small models of testmodels.py (every place a tensor can live, many
dtypes, awkward names), packs each with --size-threshold 0 at --align 64 and
--align 4096 (one model at --align 65536, where spec 4.3 requires a __PAD_0
filler entry, checked byte offset by byte offset), and checks every archive
with:
  deterministic — packing again gives the same bytes (spec 12.1 #9);
  zipcheck   — this suite's own struct-level parser (layout, alignment, CRC,
               XXH3 digests, the writer's fixed values);
  libzip     — libzip_oracle (ZIP_CHECKCONS, reads every entry, CRC);
  unzip -t   — Info-ZIP's test mode;
  zipinfo    — Info-ZIP's listing: exit 0 and lists exactly the entries;
  zipfile    — Python's zipfile testzip();
  verify     — `onnxzip verify` accepts it;
  zipalign   — Android's `zipalign -c A` accepts it (every STORED entry's data
               at a multiple of A, fillers and the model included) for A = 64,
               4096 (archives packed at 4096 or more) and the packing alignment.
               zipalign's -p changes only entries whose names end in ".so"
               (page-aligned shared libraries); entry names here are C
               identifiers, so -p would check nothing more;
  ls-json    — `onnxzip ls --json` entries agree with zipcheck's parse, and
               its tensors agree with the original model;
  names      — every EXTERNAL tensor's `location` is the entry name spec 7.2
               derives from the tensor name (computed here from the spec);
  load       — unzip into a directory, rename __MODEL_PROTO to model.onnx,
               onnx.load() it: equal to the original model.
Also packs the model of spec Appendix A and compares its first local header,
data and central record with the spec's hex dump.
With --corpus DIR, the *.onnx files in DIR/models are checked the same way
(at --align 64); an absent DIR is reported plainly and skipped.
Prints "oracles: N passed, M failed"; exits 1 if any check failed.
"""
import json
import os
import sys
import tempfile
import traceback
import zipfile

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx  # noqa: E402

import ozcommon  # noqa: E402
import testmodels  # noqa: E402
import zipcheck  # noqa: E402

ALIGNS = (64, 4096)


class Runner:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def check(self, label, fn):
        try:
            err = fn()
        except Exception as ex:  # a crash of a check is a failure, with its trace
            err = f"exception: {ex!r}\n{traceback.format_exc(limit=3)}"
        if err:
            self.failed += 1
            self.failures.append(f"{label}: {err}")
            print(f"FAIL {label}: {err}")
        else:
            self.passed += 1
            print(f"ok   {label}")
        return not err


def _proc_err(p, what):
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).decode("utf-8", "replace").strip().splitlines()
        return f"{what} exited {p.returncode}: " + " | ".join(tail[-3:])
    return None


def zipalign_checks(align):
    """The alignments `zipalign -c` must accept for an archive packed at
    `align`: 64 always (spec 4.3: every tensor entry), 4096 from 4096 on, and
    `align` (every stored entry, fillers too: spec 4.3)."""
    return sorted({64, align} | ({4096} if align >= 4096 else set()))


def check_archive(r, label, arc_path, align, onnxzip, libzip_oracle, orig):
    state = {}

    def c_zipcheck():
        a, errs = zipcheck.check_file(arc_path, align)
        state["arc"] = a
        return "; ".join(errs[:5]) if errs else None

    def c_libzip():
        return _proc_err(ozcommon.run([libzip_oracle, arc_path]), "libzip_oracle")

    def c_unzip():
        return _proc_err(ozcommon.run(["unzip", "-t", "-q", arc_path]), "unzip -t -q")

    def c_zipinfo():
        p = ozcommon.run(["zipinfo", "-1", arc_path])
        e = _proc_err(p, "zipinfo -1")
        if e:
            return e
        listed = p.stdout.decode("utf-8", "replace").splitlines()
        with zipfile.ZipFile(arc_path) as z:
            names = [i.filename for i in z.infolist()]
        a = state.get("arc")
        if a is not None:
            names = [x.name for x in a.entries]
        if listed != names:
            return f"zipinfo lists {len(listed)} names, archive has {len(names)}; first " \
                   f"difference: {next(((x, y) for x, y in zip(listed, names) if x != y), None)}"
        p = ozcommon.run(["zipinfo", arc_path])
        return _proc_err(p, "zipinfo")

    def c_zipfile():
        with zipfile.ZipFile(arc_path) as z:
            bad = z.testzip()
        return f"testzip() reports '{bad}'" if bad is not None else None

    def c_verify():
        return _proc_err(ozcommon.run([onnxzip, "verify", arc_path]), "onnxzip verify")

    def c_zipalign():
        for a in zipalign_checks(align):
            p = ozcommon.run(["zipalign", "-c", "-v", str(a), arc_path])
            bad = [ln.strip() for ln in p.stdout.decode("utf-8", "replace").splitlines()
                   if "(BAD" in ln]
            e = _proc_err(p, f"zipalign -c {a}")
            if e or bad:
                return f"{e or f'zipalign -c {a}'}: {'; '.join(bad[:3])}"
        return None

    def c_ls():
        p = ozcommon.run([onnxzip, "ls", arc_path, "--json"])
        e = _proc_err(p, "onnxzip ls --json")
        if e:
            return e
        j = json.loads(p.stdout)
        a = state.get("arc")
        if a is None:
            return "zipcheck could not parse the archive"
        got = [(x["name"], x["header_offset"], x["data_offset"], x["size"], x["crc32"])
               for x in j["entries"]]
        want = [(x.name, x.header_offset, x.data_offset, x.usize, x.crc) for x in a.entries]
        if got != want:
            d = next(((x, y) for x, y in zip(got, want) if x != y), (len(got), len(want)))
            return f"ls entries disagree with zipcheck: first difference (ls, zipcheck) {d}"
        for x in j["entries"]:
            off = x["data_offset"]
            exp = 65536 if off == 0 else min(off & -off, 65536)
            if x.get("alignment") != exp:
                return f"entry '{x['name']}' alignment {x.get('alignment')} != {exp}"
        exp_t = ozcommon.expected_dump(orig)
        got_t = j["tensors"]
        if len(got_t) != len(exp_t):
            return f"ls lists {len(got_t)} tensors, model has {len(exp_t)}"
        ent = {x.name: x for x in a.entries}
        for i, (et, gt) in enumerate(zip(exp_t, got_t)):
            w = f"tensor #{i} ({et['where']})"
            for k in ("name", "data_type", "dims", "storage"):
                if et[k] != gt.get(k):
                    return f"{w}: {k} {gt.get(k)!r} != expected {et[k]!r}"
            if gt.get("kind") != ozcommon.KIND_NAMES[et["kind"]] and \
                    gt.get("kind") != et["kind"]:
                return f"{w}: kind {gt.get('kind')!r} != expected " \
                       f"{ozcommon.KIND_NAMES[et['kind']]!r}"
            if gt.get("graph_depth") != et["depth"]:
                return f"{w}: graph_depth {gt.get('graph_depth')} != {et['depth']}"
            try:
                dname = onnx.TensorProto.DataType.Name(et["data_type"])
            except ValueError:
                dname = None
            if dname is not None and gt.get("dtype") != dname:
                return f"{w}: dtype {gt.get('dtype')!r} != {dname!r}"
            if et["storage"] == "entry":
                z = ent.get(gt.get("entry"))
                if z is None:
                    return f"{w}: entry {gt.get('entry')!r} not in the archive"
                # the writer writes no offset/length: the tensor is its whole entry
                if (gt.get("nbytes"), gt.get("offset")) != (et["nbytes"], z.data_offset) or \
                        z.usize != et["nbytes"]:
                    return f"{w}: nbytes/offset {gt.get('nbytes')}/{gt.get('offset')}, " \
                           f"expected {et['nbytes']}/{z.data_offset} (entry of {z.usize} bytes)"
                off = z.data_offset
                exp = 65536 if off == 0 else min(off & -off, 65536)
                if gt.get("alignment") != exp:
                    return f"{w}: alignment {gt.get('alignment')} != {exp}"
        return None

    def c_names():
        with zipfile.ZipFile(arc_path) as z:
            mb = z.read(ozcommon.MODEL_ENTRY)
        return "; ".join(ozcommon.check_locations(orig, mb, 0)) or None

    def c_load():
        with tempfile.TemporaryDirectory(dir=os.path.dirname(arc_path)) as d:
            m, _n = ozcommon.extract_and_load(arc_path, d)
        a = ozcommon.normalize(onnx.ModelProto.FromString(orig.SerializeToString()))
        return ozcommon.model_diff(a, ozcommon.normalize(m))

    r.check(f"{label} zipcheck", c_zipcheck)
    r.check(f"{label} libzip", c_libzip)
    r.check(f"{label} unzip-t", c_unzip)
    r.check(f"{label} zipinfo", c_zipinfo)
    r.check(f"{label} zipfile", c_zipfile)
    r.check(f"{label} verify", c_verify)
    r.check(f"{label} zipalign", c_zipalign)
    r.check(f"{label} ls-json", c_ls)
    r.check(f"{label} names", c_names)
    r.check(f"{label} load", c_load)


def pack_and_check(r, label, model_path, orig, work, align, onnxzip, libzip_oracle):
    arc = os.path.join(work, f"{label}.a{align}.onnxzip".replace("/", "_"))

    def pack(out):
        return _proc_err(ozcommon.run([onnxzip, "pack", model_path, "-o", out, "--align",
                                       str(align), "--size-threshold", "0", "--keep-typed"]), "onnxzip pack")

    def deterministic():
        again = arc + ".again"
        e = pack(again)
        if e:
            return e
        with open(arc, "rb") as f1, open(again, "rb") as f2:
            same = f1.read() == f2.read()
        os.unlink(again)
        return None if same else "a second pack of the same model differs (spec 12.1 #9)"

    if r.check(f"{label}@{align} pack", lambda: pack(arc)):
        r.check(f"{label}@{align} deterministic", deterministic)
        check_archive(r, f"{label}@{align}", arc, align, onnxzip, libzip_oracle, orig)


# spec Appendix A: the first local header + data, and the first central
# record, of an archive whose first tensor is encoder.0.weight = float32
# [1, 2, 3, 4] at A = 64.
APPENDIX_A_LOCAL = bytes.fromhex("""
    50 4b 03 04 0a 00 00 00 00 00 00 00 21 00 54 14
    a7 8b 10 00 00 00 10 00 00 00 10 00 12 00 65 6e
    63 6f 64 65 72 5f 30 5f 77 65 69 67 68 74 35 d9
    0e 00 40 00 00 00 00 00 00 00 00 00 00 00 00 00
    00 00 80 3f 00 00 00 40 00 00 40 40 00 00 80 40""")
APPENDIX_A_CENTRAL = bytes.fromhex("""
    50 4b 01 02 2d 03 0a 00 00 00 00 00 00 00 21 00
    54 14 a7 8b 10 00 00 00 10 00 00 00 10 00 0e 00
    00 00 00 00 00 00 00 00 a4 81 00 00 00 00 65 6e
    63 6f 64 65 72 5f 30 5f 77 65 69 67 68 74 4f 5a
    0a 00 01 01 b4 0d 51 c4 2e 52 2f a8""")


def check_appendix_a(onnxzip, work):
    import numpy as np
    from onnx import helper, numpy_helper
    g = helper.make_graph([], "a", [], [], initializer=[numpy_helper.from_array(
        np.array([1, 2, 3, 4], dtype=np.float32), "encoder.0.weight")])
    mp = os.path.join(work, "appendix_a.onnx")
    arc = os.path.join(work, "appendix_a.onnxzip")
    onnx.save(helper.make_model(g), mp)
    e = _proc_err(ozcommon.run([onnxzip, "pack", mp, "-o", arc, "--size-threshold", "0", "--keep-typed"]),
                  "onnxzip pack")
    if e:
        return e
    with open(arc, "rb") as f:
        b = f.read()
    a = zipcheck.parse_archive(b)
    got_l, got_c = b[:80], b[a.cd_offset:a.cd_offset + 76]
    if got_l != APPENDIX_A_LOCAL:
        return f"first 80 bytes {got_l.hex()} != spec Appendix A {APPENDIX_A_LOCAL.hex()}"
    if got_c != APPENDIX_A_CENTRAL:
        return f"first central record {got_c.hex()} != spec Appendix A {APPENDIX_A_CENTRAL.hex()}"
    return None


def check_filler(arc_path):
    """Spec 4.3's filler procedure, by the numbers: entry a's data at 65536,
    ending at H = 131036, where w would need N = 65535 padding bytes.
    __PAD_0 at H gets its data at the next multiple of 65536 its padding
    reaches: B_f = 131036 + 30 + 7 + 6 = 131079, N_f = 65529 (fits: 6 +
    65529 = 65535), data at 196608 = 3 x 65536; w's header there has N' =
    65536 - 30 - 1 - 6 = 65499, its data at 262144 = 4 x 65536; then the
    model."""
    if not os.path.exists(arc_path):
        return "no archive"
    a, errs = zipcheck.check_file(arc_path, 65536)
    if a is None:
        return "; ".join(errs)
    got = [(e.name, e.header_offset, e.data_offset, e.align_extra) for e in a.entries[:3]]
    want = [("a", 0, 65536, (32768, 65499)), ("__PAD_0", 131036, 196608, (32768, 65529)),
            ("w", 196608, 262144, (32768, 65499))]
    if got != want:
        return f"layout {got}, spec 4.3 gives {want}"
    return None


def main(argv):
    args = argv[1:]
    corpus = keep = None
    pos = []
    while args:
        a = args.pop(0)
        if a == "--corpus" and args:
            corpus = args.pop(0)
        elif a == "--keep" and args:
            keep = args.pop(0)
        else:
            pos.append(a)
    if len(pos) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    onnxzip, libzip_oracle = pos
    r = Runner()
    tmp = None
    if keep:
        os.makedirs(keep, exist_ok=True)
        work = keep
    else:
        tmp = tempfile.TemporaryDirectory(prefix="onnxzip-oracles-")
        work = tmp.name
    for name, build in testmodels.MODELS.items():
        m = build()
        mp = os.path.join(work, f"{name}.onnx")
        onnx.save(m, mp)
        orig = onnx.load(mp)
        for align in testmodels.ALIGNS.get(name, ALIGNS):
            pack_and_check(r, name, mp, orig, work, align, onnxzip, libzip_oracle)
            if name == "filler_65536":
                r.check(f"{name}@{align} filler", lambda: check_filler(
                    os.path.join(work, f"{name}.a{align}.onnxzip")))
    r.check("spec Appendix A bytes", lambda: check_appendix_a(onnxzip, work))
    if corpus is not None:
        mdir = os.path.join(corpus, "models")
        if not os.path.isdir(mdir):
            print(f"corpus absent: {mdir}")
        else:
            for fn in sorted(os.listdir(mdir)):
                if fn.endswith(".onnx"):
                    mp = os.path.join(mdir, fn)
                    pack_and_check(r, f"corpus/{fn}", mp, onnx.load(mp), work, 64, onnxzip,
                                   libzip_oracle)
    if tmp is not None:
        tmp.cleanup()
    if r.failures:
        print("\nfailures:")
        for f in r.failures:
            print("  " + f.splitlines()[0])
    print(f"oracles: {r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
