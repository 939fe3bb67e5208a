#!/usr/bin/python3
"""hostile — crafted bad archives must be refused with the right status.

    hostile.py ONNXZIP_EXE [--keep DIR]

Packs one small generated model (tensors a, b, c of a few hundred bytes,
--size-threshold 0), reads the archive back into zipbuild entries, and checks
that zipbuild rebuilds it byte for byte (so the builder writes what the
library writes). Every case then rebuilds the archive from those entries with
exactly ONE defect — CRCs, digests, offsets, sizes and paddings of everything
else are recomputed — and requires `onnxzip verify BAD` to exit 1 (not 0, not a
signal) with one stderr line "onnxzip: ... [ONNXZIP_E...]" naming the expected
status. `onnxzip ls BAD --json` must not crash either.

Expected statuses where a choice had to be made (reader logic: the end of
central directory record is found by scanning back from the end of the file
for a signature whose comment length reaches exactly the end of the file):
  * a prefix cut anywhere (inside the EOCD, the central directory or the
    data) leaves no end record at all                      -> ENOTZIP
  * a cut inside the archive COMMENT leaves a signature whose comment length
    overruns the file                                      -> EEOCD
  * the end record kept but the central directory (or data) shortened: the
    central directory no longer ends where the end record begins -> EEOCD
  * an entry whose local header lies inside another entry's data -> EOVERLAP
  * a gap between entries (entries must tile the data area) -> EOVERLAP
Prints "hostile: N passed, M failed"; exits 1 on any failure.
"""
import copy
import os
import re
import struct
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True  # never write __pycache__ into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ozcommon  # noqa: E402
import zipbuild  # noqa: E402
import zipcheck  # noqa: E402

MODEL = zipcheck.MODEL_ENTRY
LINE = re.compile(r"^onnxzip: .*\[(ONNXZIP_[A-Z0-9_]+)\]$")


def make_model():
    r = np.random.default_rng(7)
    inits = [numpy_helper.from_array(r.standard_normal(64).astype(np.float32), "a"),
             numpy_helper.from_array(r.integers(-1000, 1000, 100, dtype=np.int32), "b"),
             numpy_helper.from_array(r.integers(0, 255, 300, dtype=np.uint8), "c")]
    g = helper.make_graph([helper.make_node("Identity", ["a"], ["y"])], "hostile", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


class Base:
    def __init__(self, good: bytes):
        self.good = good
        self.entries, self.order, self.arc = zipbuild.from_archive(good)
        self.rebuilt = zipbuild.build(self.entries, self.order)

    def fresh(self):
        return copy.deepcopy(self.entries), list(self.order)


def by_name(entries, name):
    for e in entries:
        if e.name == name:
            return e
    raise KeyError(name)


def edit_model(entries, fn):
    """Parses __MODEL_PROTO, applies fn(model), re-serializes it."""
    e = by_name(entries, MODEL)
    m = onnx.ModelProto.FromString(e.data)
    fn(m)
    e.data = m.SerializeToString()


def tensor(m, name):
    for t, _k, _d, _w in ozcommon.iter_tensors(m):
        if t.name == name:
            return t
    raise KeyError(name)


def set_ext(t, key, value):
    for kv in t.external_data:
        if kv.key == key:
            if value is None:
                t.external_data.remove(kv)
            else:
                kv.value = value
            return
    if value is not None:
        kv = t.external_data.add()
        kv.key, kv.value = key, value


def ext(t, key):
    for kv in t.external_data:
        if kv.key == key:
            return kv.value
    return None


def cd_order_for(entries, order_names):
    pos = {e.name: i for i, e in enumerate(entries)}
    return [pos[n] for n in order_names]


def build(entries, order=None, **kw):
    if order is None:
        order = list(range(len(entries)))
    return zipbuild.build(entries, order, **kw)


def renamed(base, old, new):
    es, order = base.fresh()
    by_name(es, old).name = new
    return build(es, order)


# --------------------------------------------------------------------------
# Cases: each returns the bad archive's bytes.
# --------------------------------------------------------------------------

def c_control_rebuilt(base):
    return build(*base.fresh())


def c_trunc_in_eocd(base):
    return base.good[:-10]


def c_trunc_in_cd(base):
    return base.good[:base.arc.cd_offset + base.arc.cd_size // 2]


def c_trunc_in_data(base):
    return base.good[:base.arc.by_name("b").data_offset + 10]


def c_trunc_in_comment(base):
    return build(*base.fresh(), comment=b"C" * 40)[:-10]


def c_cd_shortened_eocd_kept(base):
    a = base.arc
    return base.good[:a.cd_offset + a.cd_size - 20] + base.good[a.eocd_offset:]


def c_data_shortened_eocd_kept(base):
    a = base.arc
    cut = a.by_name("c").data_offset + 8
    return base.good[:cut] + base.good[cut + 64:]


def c_trailing_garbage(base):
    return base.good + b"trailing garbage"


def c_overlap(base):
    """Entry 'b' (its local header + data) is embedded inside entry 'c''s data,
    and b's central record points there. Every header is valid, every data
    offset aligned, every CRC right: the only defect is the overlap."""
    es, _ = base.fresh()
    a, b, c, m = (by_name(es, n) for n in ("a", "b", "c", MODEL))
    lay = []
    zipbuild.build([a, c, m], layout=lay)
    c_data_off = lay[0].data_offsets[1]  # independent of c's data length
    start = c_data_off + 64
    b_local = zipbuild.local_header(b, start)
    assert (start + len(b_local)) % 64 == 0
    inner = b"\0" * (start - c_data_off) + b_local + b.data + b"\0" * 64
    c.data = inner

    def fix(mm):
        t = tensor(mm, "c")
        t.dims[0] = len(inner)
        if ext(t, "length") is not None:
            set_ext(t, "length", str(len(inner)))
    edit_model([m], fix)
    lay = []
    body = zipbuild.build([a, c, m], layout=lay)
    L = lay[0]
    assert L.data_offsets[1] == c_data_off
    return _with_central(body, L, [a, b, c, m],
                         {"a": L.header_offsets[0], "b": start, "c": L.header_offsets[1],
                          MODEL: L.header_offsets[2]})


def _with_central(data, lay, allents, offsets):
    """Replaces the central directory of `data` (whose layout is `lay`) with
    records for `allents` at the given local header offsets."""
    body = data[:lay.cd_offset]
    cd = b"".join(zipbuild.central_record(e, offsets[e.name]) for e in allents)
    n = len(allents)
    eocd = struct.pack("<IHHHHIIH", zipcheck.SIG_EOCD, 0, 0, n, n, len(cd), len(body), 0)
    return body + cd + eocd


def c_gap(base):
    es, order = base.fresh()
    by_name(es, "b").prefix = b"\0" * 64
    return build(es, order)


def c_bounds(base):
    es, order = base.fresh()
    lay = []
    build(es, order, layout=lay)
    by_name(es, "b").header_offset = lay[0].cd_offset + 8
    return build(es, order)


def c_misaligned(base):
    es, order = base.fresh()
    by_name(es, "b").pad_delta = -1
    return build(es, order)


def c_misaligned_claim(base):
    """Aligned to 64 but not to the 4096 its alignment record claims."""
    es, order = base.fresh()
    for e in es:
        if e.align:
            e.align = 4096
    by_name(es, "b").pad_delta = -64
    return build(es, order)


def c_compressed(base):
    es, order = base.fresh()
    by_name(es, "b").method = 8
    return build(es, order)


def c_compressed_local_only(base):
    es, order = base.fresh()
    by_name(es, "b").local_method = 8
    return build(es, order)


def c_encrypted(base):
    es, order = base.fresh()
    by_name(es, "b").flags = 0x0001
    return build(es, order)


def c_data_descriptor(base):
    es, order = base.fresh()
    by_name(es, "b").flags = 0x0008
    return build(es, order)


def c_local_name(base):
    es, order = base.fresh()
    by_name(es, "b").local_name = b"q"
    return build(es, order)


def c_local_crc(base):
    es, order = base.fresh()
    e = by_name(es, "b")
    e.local_crc = (zlib.crc32(e.data) ^ 0x1) & 0xFFFFFFFF
    return build(es, order)


def c_local_size(base):
    es, order = base.fresh()
    e = by_name(es, "b")
    e.local_size = len(e.data) - 4
    return build(es, order)


def c_dupname(base):
    return renamed(base, "b", "a")


def c_dupname_case(base):
    return renamed(base, "b", "A")


def c_name_dotdot(base):
    return renamed(base, "c", "../evil")


def c_name_slash(base):
    return renamed(base, "c", "a/b")


def c_name_reserved(base):
    return renamed(base, "c", "__c")


def c_name_digit(base):
    return renamed(base, "c", "9c")


def c_name_empty(base):
    return renamed(base, "c", "")


def c_no_model(base):
    es, order = base.fresh()
    es = [e for e in es if e.name != MODEL]
    return build(es)


def c_model_not_last_cd(base):
    es, _ = base.fresh()
    return build(es, cd_order_for(es, [MODEL, "a", "b", "c"]))


def c_model_not_last_file(base):
    es, _ = base.fresh()
    m = by_name(es, MODEL)
    es = [m] + [e for e in es if e is not m]
    return build(es, cd_order_for(es, ["a", "b", "c", MODEL]))


def c_filler_nonempty(base):
    es, order = base.fresh()
    f = zipbuild.BEntry(name="__PAD_0", data=b"xyz", align=0)
    es.insert(1, f)
    return build(es, cd_order_for(es, ["a", "__PAD_0", "b", "c", MODEL]))


def c_ref_missing(base):
    es, _ = base.fresh()
    es = [e for e in es if e.name != "c"]
    edit_model(es, lambda m: set_ext(tensor(m, "c"), "location", "missing_entry"))
    return build(es)


def c_size_dims(base):
    es, order = base.fresh()
    edit_model(es, lambda m: tensor(m, "a").dims.__setitem__(0, 65))
    return build(es, order)


def c_range(base):
    es, order = base.fresh()
    edit_model(es, lambda m: set_ext(tensor(m, "a"), "offset", "8"))
    return build(es, order)


def c_range_length(base):
    es, order = base.fresh()

    def f(m):
        t = tensor(m, "a")
        set_ext(t, "length", str(len(by_name(es, "a").data) + 4))
        t.dims[0] += 1
    edit_model(es, f)
    return build(es, order)


def c_model_garbage(base):
    es, order = base.fresh()
    by_name(es, MODEL).data = b"\xff" * 50
    return build(es, order)


def c_zip64_locator_garbage(base):
    es, order = base.fresh()
    return build(es, order, zip64_eocd=True, locator_offset=base.arc.by_name("a").data_offset)


def c_zip64_central_short(base):
    es, order = base.fresh()
    e = by_name(es, "b")
    e.central_marks = {"usize", "csize"}
    e.central_zip64_data = struct.pack("<Q", len(e.data))  # 8 bytes for two marked fields
    return build(es, order)


def c_zip64_local_missing(base):
    es, order = base.fresh()
    e = by_name(es, "b")
    e.local_marks = {"usize", "csize"}
    e.local_zip64_data = None
    e.local_extras = [x for x in e.local_extras if x != zipbuild.ZIP64]
    # local_header() adds a zip64 record whenever marks are set: write the
    # marks without one by hand.
    return _local_marks_without_zip64(es, order, "b")


def _local_marks_without_zip64(es, order, name):
    lay = []
    build(es, order, layout=lay)  # offsets are unchanged: only bytes differ
    e = by_name(es, name)
    e.local_marks = set()
    data = bytearray(build(es, order, layout=lay))
    i = [x.name for x in es].index(name)
    h = lay[-1].header_offsets[i]
    struct.pack_into("<II", data, h + 18, 0xFFFFFFFF, 0xFFFFFFFF)
    return bytes(data)


def c_zip64_eocd_disagree(base):
    es, order = base.fresh()
    return build(es, order, zip64_eocd=True, eocd32_count=len(es) + 1)


def c_zip64_lying_extra(base):
    """A central zip64 record with a size that disagrees with the (unmarked)
    32-bit size field."""
    es, order = base.fresh()
    e = by_name(es, "b")
    e.central_marks = set()
    e.central_zip64_data = struct.pack("<QQ", len(e.data) + 64, len(e.data) + 64)
    return build(es, order)


def c_zip64_lying_local_extra(base):
    """A local zip64 record with sizes that disagree with the (unmarked)
    32-bit local size fields."""
    es, order = base.fresh()
    e = by_name(es, "b")
    e.local_marks = set()
    e.local_zip64_data = struct.pack("<QQ", len(e.data) + 64, len(e.data) + 64)
    return build(es, order)


def c_crc_data(base):
    es, order = base.fresh()
    e = by_name(es, "b")
    e.crc = zlib.crc32(e.data) & 0xFFFFFFFF
    e.keep_digest = True
    d = bytearray(e.data)
    d[17] ^= 0x20
    e.data = bytes(d)
    return build(es, order)


def c_digest(base):
    es, order = base.fresh()
    e = by_name(es, "b")
    e.keep_digest = True  # CRC recomputed for the new data, digest kept
    d = bytearray(e.data)
    d[17] ^= 0x20
    e.data = bytes(d)
    return build(es, order)


def c_cdir_signature(base):
    d = bytearray(base.good)
    d[base.arc.by_name("b").central_offset] ^= 0xFF
    return bytes(d)


def c_cd_size_eocd(base):
    d = bytearray(base.good)
    struct.pack_into("<I", d, base.arc.eocd_offset + 12, base.arc.cd_size + 46)
    return bytes(d)


def c_not_zip(base):
    return b"This is not a zip archive, just some text.\n" * 8


def c_empty(base):
    return b""


def c_eocd_only(base):
    return struct.pack("<IHHHHIIH", zipcheck.SIG_EOCD, 0, 0, 0, 0, 0, 0, 0)


CASES = [
    # name, function, accepted statuses (None: must be accepted, exit 0), needs digest
    ("control: good archive rebuilt by zipbuild", c_control_rebuilt, None),
    ("truncated inside the EOCD", c_trunc_in_eocd, ["ENOTZIP"]),
    ("truncated inside the central directory", c_trunc_in_cd, ["ENOTZIP"]),
    ("truncated inside entry data", c_trunc_in_data, ["ENOTZIP"]),
    ("truncated inside the archive comment", c_trunc_in_comment, ["EEOCD"]),
    ("central directory shortened, EOCD kept", c_cd_shortened_eocd_kept, ["EEOCD"]),
    ("entry data shortened, CD and EOCD kept", c_data_shortened_eocd_kept, ["EEOCD"]),
    ("trailing garbage after the EOCD", c_trailing_garbage, ["EEOCD"]),
    ("entry b's local header inside entry c's data", c_overlap, ["EOVERLAP"]),
    ("64-byte gap between entries", c_gap, ["EOVERLAP"]),
    ("local header offset past the data area", c_bounds, ["EBOUNDS"]),
    ("misaligned entry (1 byte less padding)", c_misaligned, ["EALIGN"]),
    ("64-aligned, not the 4096 its 0xD935 record claims", c_misaligned_claim, ["EALIGN"]),
    ("compressed entry (method 8 in both headers)", c_compressed, ["EMETHOD"]),
    ("method 8 in the local header only", c_compressed_local_only, ["ELOCAL"]),
    ("encrypted flag", c_encrypted, ["EFLAGS"]),
    ("data-descriptor flag", c_data_descriptor, ["EFLAGS"]),
    ("local name differs from central name", c_local_name, ["ELOCAL"]),
    ("local CRC differs from central CRC", c_local_crc, ["ELOCAL"]),
    ("local size differs from central size", c_local_size, ["ELOCAL"]),
    ("duplicate entry names", c_dupname, ["EDUPNAME"]),
    ("names differing only in case (a, A)", c_dupname_case, ["EDUPNAME"]),
    ("entry name '../evil'", c_name_dotdot, ["ENAME"]),
    ("entry name 'a/b'", c_name_slash, ["ENAME"]),
    # Unknown reserved "__" entries are ignored (spec 7.1), so the tensor that
    # used entry 'c' now references a missing entry.
    ("reserved entry name '__c'", c_name_reserved, ["EREF"]),
    ("entry name starting with a digit", c_name_digit, ["ENAME"]),
    ("empty entry name", c_name_empty, ["ENAME"]),
    ("non-empty __PAD_ filler entry", c_filler_nonempty, ["ECDIR"]),
    ("__MODEL_PROTO missing", c_no_model, ["ENOTONNXZIP"]),
    ("__MODEL_PROTO not the last central record", c_model_not_last_cd, ["EMODELPOS"]),
    ("__MODEL_PROTO not the last entry in the file", c_model_not_last_file, ["EMODELPOS"]),
    ("model references a missing entry", c_ref_missing, ["EREF"]),
    ("dims x dtype != entry length (dims changed)", c_size_dims, ["ESIZE"]),
    # offset without length: the length defaults to what is left of the entry
    # (spec 8.3), so this is a size mismatch, not a range error.
    ("external_data offset leaves too few bytes", c_range, ["ESIZE"]),
    ("external_data length past the entry", c_range_length, ["ERANGE"]),
    ("__MODEL_PROTO is not a protobuf", c_model_garbage, ["EPROTO"]),
    ("zip64 locator pointing to entry data", c_zip64_locator_garbage, ["EZIP64"]),
    ("central sizes marked zip64, zip64 extra too short", c_zip64_central_short, ["EZIP64"]),
    ("local sizes marked zip64, no zip64 extra", c_zip64_local_missing, ["EZIP64"]),
    ("zip64 end record disagrees with the EOCD count", c_zip64_eocd_disagree, ["EZIP64"]),
    ("central zip64 extra lies about the (unmarked) size", c_zip64_lying_extra, ["EZIP64"]),
    ("local zip64 extra lies about the (unmarked) sizes", c_zip64_lying_local_extra, ["EZIP64"]),
    ("data byte flipped (CRC mismatch)", c_crc_data, ["ECRC"]),
    ("data byte flipped, CRC recomputed, XXH3 kept", c_digest, ["EDIGEST"]),
    ("bad central directory signature", c_cdir_signature, ["ECDIR", "EEOCD"]),
    ("EOCD central directory size too large", c_cd_size_eocd, ["EEOCD"]),
    ("not a zip at all", c_not_zip, ["ENOTZIP"]),
    ("empty file", c_empty, ["ENOTZIP"]),
    ("EOCD only, no entries", c_eocd_only, ["ENOTONNXZIP"]),
]


def run_case(onnxzip, path, expect):
    """Returns an error string or None."""
    p = ozcommon.run([onnxzip, "verify", path], timeout=60)
    err = p.stderr.decode("utf-8", "replace")
    lines = [x for x in err.splitlines() if x.strip()]
    if p.returncode < 0:
        return f"verify killed by signal {-p.returncode}"
    if expect is None:
        if p.returncode != 0:
            return f"verify exited {p.returncode} on a valid archive: {err.strip()}"
        return None
    if p.returncode != 1:
        return f"verify exited {p.returncode}, expected 1 (stderr: {err.strip()[:200]!r})"
    if len(lines) != 1:
        return f"stderr has {len(lines)} lines, expected 1: {err.strip()[:300]!r}"
    mt = LINE.match(lines[0])
    if not mt:
        return f"stderr line not of the form 'onnxzip: ... [ONNXZIP_E...]': {lines[0]!r}"
    got = mt.group(1)
    want = ["ONNXZIP_" + x for x in expect]
    if got not in want:
        return f"got {got}, expected {' or '.join(want)}: {lines[0]}"
    return None


def run_ls(onnxzip, path):
    p = ozcommon.run([onnxzip, "ls", path, "--json"], timeout=60)
    if p.returncode < 0:
        return f"ls killed by signal {-p.returncode}"
    return None


def main(argv):
    args = argv[1:]
    keep = None
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    onnxzip = args[0]
    passed = failed = 0
    failures = []
    with tempfile.TemporaryDirectory(prefix="onnxzip-hostile-") as tmp:
        work = keep or tmp
        os.makedirs(work, exist_ok=True)
        mp = os.path.join(work, "hostile.onnx")
        onnx.save(make_model(), mp)
        good = os.path.join(work, "good.onnxzip")
        p = ozcommon.run([onnxzip, "pack", mp, "-o", good, "--size-threshold", "0"])
        if p.returncode != 0:
            print(f"FAIL cannot build the good archive: pack exited {p.returncode}: "
                  f"{p.stderr.decode(errors='replace').strip()}")
            print("hostile: 0 passed, 1 failed")
            return 1
        with open(good, "rb") as f:
            base = Base(f.read())
        names = [e.name for e in base.entries]
        if names != ["a", "b", "c", MODEL]:
            print(f"FAIL the good archive's entries are {names}, expected a, b, c, {MODEL}")
            print("hostile: 0 passed, 1 failed")
            return 1
        digests = all(any(isinstance(x, tuple) and x[0] == zipbuild.EXTRA_DIGEST
                          for x in e.local_extras + e.central_extras) for e in base.entries)
        checks = [("control: good archive from pack", lambda b: b.good, None)]
        if base.rebuilt != base.good:
            n = next(i for i, (x, y) in enumerate(zip(base.rebuilt, base.good)) if x != y) \
                if len(base.rebuilt) == len(base.good) else min(len(base.rebuilt), len(base.good))
            print(f"note: zipbuild does not reproduce pack's archive byte for byte (first "
                  f"difference at {n}); cases are still built with zipbuild")
        for name, fn, expect in CASES:
            if fn is c_digest and not digests:
                print(f"skip {name}: the archive records no XXH3 digests")
                continue
            checks.append((name, fn, expect))
        for i, (name, fn, expect) in enumerate(checks):
            try:
                data = fn(base)
            except Exception as ex:
                err = f"could not craft the case: {ex!r}"
            else:
                path = os.path.join(work, f"case{i:02d}.onnxzip")
                with open(path, "wb") as f:
                    f.write(data)
                err = run_case(onnxzip, path, expect) or run_ls(onnxzip, path)
            want = "valid" if expect is None else "/".join(expect)
            if err:
                failed += 1
                failures.append(f"case{i:02d} {name} [{want}]: {err}")
                print(f"FAIL case{i:02d} {name} [{want}]: {err}")
            else:
                passed += 1
                print(f"ok   case{i:02d} {name} [{want}]")
    if failures:
        print("\nfailures (reproduce: onnxzip verify <case file>; --keep DIR keeps them):")
        for f in failures:
            print("  " + f)
    print(f"hostile: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
