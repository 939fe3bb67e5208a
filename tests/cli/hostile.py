#!/usr/bin/python3
"""hostile — crafted archives must be judged as spec section 11.2 says.

    hostile.py ONNXZIP_EXE [--keep DIR] [--only SUBSTRING]

Packs one small generated model (tensors a, b, c of 256, 400 and 300 bytes,
--size-threshold 0), reads the archive back into zipbuild entries and checks
that zipbuild rebuilds it byte for byte (so the builder writes what the library
writes). Every case then rebuilds the archive from those entries with exactly
ONE change — CRCs, digests, offsets, sizes and paddings of everything else are
recomputed — and runs `onnxzip verify` on it:
  * a case with an expected status must exit 1 (not 0, not a signal) with one
    stderr line "onnxzip: ... [ONNXZIP_E...]" naming that status;
  * a "valid" case (something spec 11.2 says a reader MUST NOT reject) must
    exit 0.
`onnxzip ls ARCHIVE --json` must not die from a signal on any case, and must
succeed where only verify can see the defect (CRC, digest).

Each expected status is taken from spec/onnxzip-format.md (section in the
case's description). Where a file breaks several rules, every applicable code
is accepted (spec 1.2), and only then. Choices for truncation: a prefix cut
anywhere leaves no end record in the last 22 bytes -> ENOTZIP (2.3 #4); a cut
inside the archive comment leaves a signature whose comment runs past the end
-> EEOCD (2.3 #4); a shortened file whose end record was kept has a central
directory reaching past the end of the file -> EBOUNDS (6.5 #1).
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
VALID = None


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


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def ent(entries, name):
    for e in entries:
        if e.name == name:
            return e
    raise KeyError(name)


def tensor(m, name):
    for t, _k, _d, _w in ozcommon.iter_tensors(m):
        if t.name == name:
            return t
    raise KeyError(name)


def edit_model(entries, fn):
    e = ent(entries, MODEL)
    m = onnx.ModelProto.FromString(e.data)
    fn(m)
    e.data = m.SerializeToString()


def set_ext(t, key, value):
    for kv in list(t.external_data):
        if kv.key == key:
            if value is None:
                t.external_data.remove(kv)
            else:
                kv.value = value
            return
    if value is not None:
        kv = t.external_data.add()
        kv.key, kv.value = key, value


def order_of(entries, names):
    pos = {e.name: i for i, e in enumerate(entries)}
    return [pos[n] for n in names]


def build(entries, order=None, **kw):
    return zipbuild.build(entries, order if order is not None else list(range(len(entries))),
                          **kw)


def entry_mod(entry_name, **attrs):
    """A case: set attributes of entry `entry_name`, rebuild."""
    def f(base):
        es, order = base.fresh()
        e = ent(es, entry_name)
        for k, v in attrs.items():
            setattr(e, k, v(e) if callable(v) else v)
        return build(es, order)
    return f


def model_mod(fn):
    """A case: edit the model (fn(model)), rebuild."""
    def f(base):
        es, order = base.fresh()
        edit_model(es, fn)
        return build(es, order)
    return f


def ext_mod(name, **kv):
    """A case: set external_data keys of tensor `name` (value None deletes)."""
    def fn(m):
        t = tensor(m, name)
        for k, v in kv.items():
            set_ext(t, k, v)
    return model_mod(fn)


def tensor_mod(name, fn):
    return model_mod(lambda m: fn(tensor(m, name)))


def renamed(old, new):
    return entry_mod(old, name=new)


def patched(where, fmt, *values):
    """A case: overwrite bytes of the good archive at where(base); a value may
    be a function of the base."""
    def f(base):
        d = bytearray(base.good)
        struct.pack_into(fmt, d, where(base), *[v(base) if callable(v) else v for v in values])
        return bytes(d)
    return f


def central(name, field_off):
    return lambda base: base.arc.by_name(name).central_offset + field_off


def local(name, field_off):
    return lambda base: base.arc.by_name(name).header_offset + field_off


def eocd(field_off):
    return lambda base: base.arc.eocd_offset + field_off


def _with_central(body, cd_records):
    n = len(cd_records)
    cd = b"".join(cd_records)
    return body + cd + struct.pack("<IHHHHIIH", zipcheck.SIG_EOCD, 0, 0, n, n, len(cd),
                                   len(body), 0)


# --------------------------------------------------------------------------
# cases needing more than one change of a field
# --------------------------------------------------------------------------

def _data_location_2(t):
    """data_location (field 14, varint) = 2: not a DataLocation value, so it is
    written as an unknown field after clearing the known one."""
    t.ClearField("data_location")
    t.MergeFromString(b"\x70\x02")


def c_rebuilt(base):
    return build(*base.fresh())


def c_trunc_in_comment(base):
    return build(*base.fresh(), comment=b"C" * 40)[:-10]


def c_last_record_removed(base):
    a = base.arc
    m = a.by_name(MODEL)
    return base.good[:m.central_offset] + base.good[a.eocd_offset:]


def c_data_shortened(base):
    cut = base.arc.by_name("c").data_offset + 8
    return base.good[:cut] + base.good[cut + 64:]


def c_gap_before_eocd(base):
    a = base.arc
    return base.good[:a.eocd_offset] + b"\0" * 4 + base.good[a.eocd_offset:]


def c_overlap(base):
    """Entry b (its local header + data) lies inside entry c's data and b's
    central record points there; every header is valid, every data offset
    aligned, every CRC right: the only defect is the overlap."""
    es, _ = base.fresh()
    a, b, c, m = (ent(es, n) for n in ("a", "b", "c", MODEL))
    lay = []
    zipbuild.build([a, c, m], layout=lay)
    c_data = lay[0].data_offsets[1]  # does not depend on c's data length
    start = c_data + 64
    b_local = zipbuild.local_header(b, start)
    assert (start + len(b_local)) % 64 == 0
    c.data = b"\0" * (start - c_data) + b_local + b.data + b"\0" * 64

    def fix(mm):
        tensor(mm, "c").dims[0] = len(c.data)
    edit_model([m], fix)
    lay = []
    body = zipbuild.build([a, c, m], layout=lay)
    L = lay[0]
    assert L.data_offsets[1] == c_data
    offs = {"a": L.header_offsets[0], "b": start, "c": L.header_offsets[1],
            MODEL: L.header_offsets[2]}
    return _with_central(body[:L.cd_offset],
                         [zipbuild.central_record(e, offs[e.name]) for e in (a, b, c, m)])


def c_prefix_gap(base):
    es, order = base.fresh()
    es[0].prefix = b"\0" * 64
    return build(es, order)


def c_bounds(base):
    es, order = base.fresh()
    lay = []
    build(es, order, layout=lay)
    ent(es, "b").header_offset = lay[0].cd_offset + 8
    return build(es, order)


def c_misaligned_claim(base):
    es, order = base.fresh()
    for e in es:
        if e.align:
            e.align = 4096
    ent(es, "b").pad_delta = -64
    return build(es, order)


def c_no_model(base):
    es, _ = base.fresh()
    return build([e for e in es if e.name != MODEL])


def c_two_models(base):
    es, _ = base.fresh()
    m = ent(es, MODEL)
    es.insert(3, copy.deepcopy(m))
    return build(es)


def c_model_not_last_cd(base):
    es, _ = base.fresh()
    return build(es, order_of(es, [MODEL, "a", "b", "c"]))


def c_model_not_last_file(base):
    es, _ = base.fresh()
    m = ent(es, MODEL)
    es = [m] + [e for e in es if e is not m]
    return build(es, order_of(es, ["a", "b", "c", MODEL]))


def c_cd_out_of_order(base):
    es, _ = base.fresh()
    return build(es, order_of(es, ["c", "a", "b", MODEL]))


def _insert(base, entry, at=1, model_fn=None):
    es, _ = base.fresh()
    es.insert(at, entry)
    if model_fn:
        edit_model(es, model_fn)
    return build(es)


def c_filler_nonempty(base):
    return _insert(base, zipbuild.BEntry(name="__PAD_0", data=b"xyz", align=0))


def c_unknown_reserved(base):
    return _insert(base, zipbuild.BEntry(name="__future", data=b"xyz", align=0))


def c_ref_reserved(base):
    def fn(m):
        set_ext(tensor(m, "c"), "location", "__c")
    es, order = base.fresh()
    ent(es, "c").name = "__c"
    edit_model(es, fn)
    return build(es, order)


def c_ref_filler(base):
    def fn(m):
        t = tensor(m, "c")
        set_ext(t, "location", "__PAD_0")
        t.dims[0] = 0
    return _insert(base, zipbuild.BEntry(name="__PAD_0", data=b"", align=64, align_value=0),
                   model_fn=fn)


def c_ref_missing(base):
    es, _ = base.fresh()
    es = [e for e in es if e.name != "c"]
    edit_model(es, lambda m: set_ext(tensor(m, "c"), "location", "missing_entry"))
    return build(es)


def c_shared_entry(base):
    """c references entry a (256 bytes as 256 uint8); entry c is unreferenced."""
    def fn(m):
        t = tensor(m, "c")
        set_ext(t, "location", "a")
        t.dims[0] = 256
    return model_mod(fn)(base)


def _nest(depth):
    """A node whose attribute graph nests `depth` levels of graphs."""
    g = helper.make_graph([], f"g{depth}", [], [])
    for i in range(depth - 1, 0, -1):
        g = helper.make_graph([helper.make_node("Nest", [], [], body=g)], f"g{i}", [], [])
    return helper.make_node("Nest", [], [], body=g)


def c_depth(depth):
    return model_mod(lambda m: m.graph.node.append(_nest(depth)))


def c_zip64_marks_without_field(base):
    """Local sizes 0xFFFFFFFF and no zip64 field."""
    es, order = base.fresh()
    lay = []
    d = bytearray(build(es, order, layout=lay))
    struct.pack_into("<II", d, lay[0].header_offsets[1] + 18, 0xFFFFFFFF, 0xFFFFFFFF)
    return bytes(d)


def _z64_patch(fn):
    def f(base):
        es, order = base.fresh()
        lay = []
        d = bytearray(build(es, order, zip64_eocd=True, layout=lay))
        fn(d, lay[0])
        return bytes(d)
    return f


def c_zip64_extensible_data(base):
    """Record_Size 52 and 8 more bytes before the locator: consistent, but 6.1
    allows 44 only. The locator still points at the record, the CD still ends
    where it begins."""
    es, order = base.fresh()
    lay = []
    d = bytearray(build(es, order, zip64_eocd=True, layout=lay))
    rec = lay[0].zip64_eocd_offset
    struct.pack_into("<Q", d, rec + 4, 52)
    return bytes(d[:rec + 56] + b"\x00" * 8 + d[rec + 56:])


def c_unneeded_zip64_eocd(base):
    return build(*base.fresh(), zip64_eocd=True)


def c_eocd_marker_no_locator(base):
    d = bytearray(base.good)
    struct.pack_into("<I", d, base.arc.eocd_offset + 12, 0xFFFFFFFF)
    return bytes(d)


def c_marker_eocd_at_start(base):
    return struct.pack("<IHHHHIIH", zipcheck.SIG_EOCD, 0, 0, 0xFFFF, 0xFFFF, 0, 0, 0)


def c_eocd_comment(base):
    return build(*base.fresh(), comment=b"an archive comment")


def c_crc_data(base):
    es, order = base.fresh()
    e = ent(es, "b")
    e.crc = zlib.crc32(e.data) & 0xFFFFFFFF
    e.keep_digest = True
    d = bytearray(e.data)
    d[17] ^= 0x20
    e.data = bytes(d)
    return build(es, order)


def c_digest(base):
    es, order = base.fresh()
    e = ent(es, "b")
    e.keep_digest = True  # CRC recomputed for the new data, digest kept
    d = bytearray(e.data)
    d[17] ^= 0x20
    e.data = bytes(d)
    return build(es, order)


def _digest_field(e):
    return _digest_field_of(e.central_extras)


def digest_mod(fn, keep=True):
    """A case: replace entry b's digest field data by fn(data)."""
    def f(base):
        es, order = base.fresh()
        e = ent(es, "b")
        i = e.central_extras.index(_digest_field(e))
        hid, d = e.central_extras[i]
        d = zipbuild._digest_record(d, e.data)
        e.central_extras[i] = (hid, fn(d))
        e.keep_digest = keep
        return build(es, order)
    return f


def extras_mod(name, side, fn):
    """A case: central_extras/local_extras of entry `name` = fn(list)."""
    def f(base):
        es, order = base.fresh()
        e = ent(es, name)
        setattr(e, side, fn(list(getattr(e, side))))
        return build(es, order)
    return f


def c_model_unaligned(base):
    """The model entry without alignment field, its data not 64-aligned."""
    es, order = base.fresh()
    m = ent(es, MODEL)
    m.align = 0
    lay = []
    build(es, order, layout=lay)
    if lay[0].data_offsets[-1] % 64 == 0:
        m.local_extras = [(0xCAFE, b"\0")] + m.local_extras
    return build(es, order)


def c_unknown_extras(base):
    es, order = base.fresh()
    e = ent(es, "b")
    e.local_extras = [(0xCAFE, b"hi")] + e.local_extras
    e.central_extras = [(0xBEEF, b"yo")] + e.central_extras
    return build(es, order)


def c_central_lho_marked_no_field(base):
    """Central Local_Header_Offset 0xFFFFFFFF, no zip64 field in the record."""
    d = bytearray(base.good)
    struct.pack_into("<I", d, base.arc.by_name("b").central_offset + 42, 0xFFFFFFFF)
    return bytes(d)


def eocd_counts(count_fn):
    return patched(eocd(8), "<HH", count_fn, count_fn)


def ext_tensor(name, location, data_type=TensorProto.FLOAT, dims=(64,)):
    t = TensorProto(name=name, data_type=data_type, dims=list(dims))
    t.data_location = TensorProto.EXTERNAL
    kv = t.external_data.add()
    kv.key, kv.value = "location", location
    return t


def _in_function(t):
    def fn(m):
        m.functions.append(helper.make_function(
            "local.fn", "F", [], ["y"], [helper.make_node("Constant", [], ["y"], value=t)],
            [helper.make_opsetid("", 13)]))
    return fn


def _in_training(t):
    def fn(m):
        ti = m.training_info.add()
        ti.initialization.CopyFrom(helper.make_graph([], "ti", [], [], initializer=[t]))
    return fn


def _in_sparse(t):
    def fn(m):
        idx = numpy_helper.from_array(np.arange(64, dtype=np.int64), "idx")
        m.graph.sparse_initializer.append(helper.make_sparse_tensor(t, idx, [128]))
    return fn


def _in_subgraph(t):
    def fn(m):
        g = helper.make_graph([helper.make_node("Constant", [], ["k"], value=t)], "then", [],
                              [])
        m.graph.node.append(helper.make_node("If", ["cond"], ["o"], then_branch=g,
                                             else_branch=g))
    return fn


def _in_tensors_attr(t):
    def fn(m):
        m.graph.node.append(helper.make_node("Custom", [], [], domain="x", tl=[t]))
    return fn


# --------------------------------------------------------------------------
# The cases: (description, expected statuses or VALID, builder)
# --------------------------------------------------------------------------

I4 = 22  # INT4
U2 = 25  # UINT2
F8 = 17  # FLOAT8E4M3FN

CASES = [
    ("control: good archive rebuilt by zipbuild", VALID, c_rebuilt),
    # 2.3 / 6: end records
    # no end records, but local headers from offset 0: a cut file (11.2 #1)
    ("truncated inside the EOCD (2.3 #4)", ["ETRUNC"], lambda b: b.good[:-10]),
    ("truncated inside the central directory (2.3 #4)", ["ETRUNC"],
     lambda b: b.good[:b.arc.cd_offset + b.arc.cd_size // 2]),
    ("truncated inside entry data (2.3 #4)", ["ETRUNC"],
     lambda b: b.good[:b.arc.by_name("b").data_offset + 10]),
    ("truncated inside the archive comment (2.3 #4)", ["EEOCD"], c_trunc_in_comment),
    ("last central record cut out, EOCD kept: CD past EOF (6.5 #1)", ["EBOUNDS"],
     c_last_record_removed),
    ("64 data bytes cut out, CD and EOCD kept: CD past EOF (6.5 #1)", ["EBOUNDS"],
     c_data_shortened),
    ("EOCD CD_Size 46 too large: CD past EOF (6.5 #1; records != CD_Size, 11.2 #3)",
     ["EBOUNDS", "EEOCD"], patched(eocd(12), "<I", lambda b: b.arc.cd_size + 46)),
    ("4 bytes between the CD and the EOCD (6.5 #1, 11.2 #9)", ["EOVERLAP"], c_gap_before_eocd),
    ("trailing garbage after the EOCD (2.3 #4)", ["EEOCD"], lambda b: b.good + b"garbage"),
    ("EOCD Disk_Number 1 (6.3)", ["EEOCD"], patched(eocd(4), "<H", 1)),
    ("EOCD Disk_Entries != Total_Entries (6.3)", ["EEOCD"], patched(eocd(8), "<H", 3)),
    ("EOCD Total_Entries 3 of 4 records (6.5 #2)", ["EEOCD"],
     eocd_counts(lambda b: len(b.entries) - 1)),
    ("EOCD Total_Entries 5 of 4 records (6.5 #2; record past CD end 11.2 #4)",
     ["EEOCD", "ETRUNC"], eocd_counts(lambda b: len(b.entries) + 1)),
    ("EOCD Total_Entries x 46 > CD_Size (11.2 #3)", ["EEOCD"],
     eocd_counts(lambda b: b.arc.cd_size // 46 + 1)),
    ("EOCD comment (valid, 11.2)", VALID, c_eocd_comment),
    ("last central record's comment runs past the CD (5, 11.2 #4)", ["ETRUNC"],
     patched(central(MODEL, 32), "<H", 10)),
    # 6.4 zip64 end records
    ("unneeded but consistent zip64 end records (valid, 6.4)", VALID, c_unneeded_zip64_eocd),
    ("zip64 locator pointing into entry data (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<Q", d, L.eocd_offset - 20 + 8, 64))),
    ("zip64 end record Record_Size 45 (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<Q", d, L.zip64_eocd_offset + 4, 45))),
    ("zip64 locator Total_Disks 2 (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<I", d, L.eocd_offset - 4, 2))),
    ("zip64 locator Total_Disks 0 (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<I", d, L.eocd_offset - 4, 0))),
    # every disk field of the zip64 end record and locator (6.1, 6.2, 6.4)
    ("zip64 end record Disk_Number 1 (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<I", d, L.zip64_eocd_offset + 16, 1))),
    ("zip64 end record CD_Disk 1 (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<I", d, L.zip64_eocd_offset + 20, 1))),
    ("zip64 end record Disk_Number and CD_Disk 0xFFFFFFFF (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<II", d, L.zip64_eocd_offset + 16, 0xFFFFFFFF,
                                              0xFFFFFFFF))),
    ("zip64 end record Disk_Entries != Total_Entries (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<Q", d, L.zip64_eocd_offset + 24, 1))),
    ("zip64 locator Z64_EOCD_Disk 1 (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<I", d, L.eocd_offset - 20 + 4, 1))),
    ("zip64 end record Record_Size 52 with 8 bytes of extensible data (6.1, 6.4)", ["EZIP64"],
     c_zip64_extensible_data),
    ("zip64 end record count disagrees with the EOCD's (6.4)", ["EZIP64"],
     _z64_patch(lambda d, L: struct.pack_into("<HH", d, L.eocd_offset + 8, 5, 5))),
    ("EOCD CD_Size marker 0xFFFFFFFF without zip64 locator (6.4)", ["EZIP64"],
     c_eocd_marker_no_locator),
    ("EOCD with zip64 marker at offset 0 (< 20) (6.4: ETRUNC; also marker without locator)",
     ["ETRUNC", "EZIP64"], c_marker_eocd_at_start),
    # 5 central directory records
    ("bad central signature (5)", ["ECDIR"], patched(central("b", 0), "<I", 0x02014B51)),
    ("central Disk_Start 1 (5)", ["ECDIR"], patched(central("b", 34), "<H", 1)),
    ("central Compressed_Size != Uncompressed_Size (5)", ["ECDIR"],
     patched(central("b", 20), "<I", lambda b: b.arc.by_name("b").csize + 1)),
    ("central extra area with 2 stray bytes (4.1)", ["ECDIR"],
     extras_mod("b", "central_extras", lambda x: x + [b"\0\0"])),
    ("two digest fields in a central record (4.1)", ["ECDIR"],
     extras_mod("b", "central_extras", lambda x: x + [_digest_field_of(x)])),
    ("two zip64 fields in a central record (4.1)", ["EZIP64"],
     extras_mod("b", "central_extras",
                lambda x: [(1, b""), (1, b"")] + x)),
    ("digest field Data_Size 8 (4.4)", ["ECDIR"], digest_mod(lambda d: d[:8])),
    ("digest Format_Major 0 (4.4)", ["ECDIR"], digest_mod(lambda d: b"\0" + d[1:])),
    # format 1.2 reads generations 1 and 2 (13: packages record 2); 3 is newer
    ("digest Format_Major 3 (4.4, 13)", ["EUNSUPPORTED"], digest_mod(lambda d: b"\3" + d[1:])),
    ("digest Format_Major 2 in a single-model archive (valid, 13)", VALID, digest_mod(lambda d: b"\2" + d[1:])),
    ("digest of unknown algorithm 7, garbage value (valid, 4.4)", VALID,
     digest_mod(lambda d: d[:1] + b"\7" + b"\xAA" * 8)),
    ("digest field with 2 extra bytes (valid, 4.4)", VALID, digest_mod(lambda d: d + b"\1\2")),
    ("unknown extra fields in central and local (valid, 4.1)", VALID, c_unknown_extras),
    ("0xD935 field in a central record (ignored, valid, 4.3)", VALID,
     extras_mod("b", "central_extras", lambda x: [(0xD935, b"\x40\0")] + x)),
    ("entry comment in the central record (valid, 5)", VALID,
     entry_mod("b", comment=b"a comment")),
    ("central records out of local-header order (valid, 5)", VALID, c_cd_out_of_order),
    ("filler entry __PAD_0 with 3 bytes (4.3)", ["ECDIR"], c_filler_nonempty),
    # 3 local headers
    ("bad local signature (3)", ["ELOCAL"], patched(local("b", 0), "<I", 0x04034B51)),
    ("local name differs from the central name (3)", ["ELOCAL"], entry_mod("b", local_name=b"q")),
    ("local name longer than the central name (3)", ["ELOCAL"], entry_mod("b", local_name=b"bb")),
    ("method 8 in the local header only (3)", ["ELOCAL"], entry_mod("b", local_method=8)),
    ("flags 0x0800 in the local header only (3)", ["ELOCAL"],
     entry_mod("b", local_flags=0x0800)),
    ("local CRC-32 differs from the central one (3)", ["ELOCAL"],
     entry_mod("b", local_crc=lambda e: (zlib.crc32(e.data) ^ 1) & 0xFFFFFFFF)),
    ("local size differs from the central one (3)", ["ELOCAL"],
     entry_mod("b", local_size=lambda e: len(e.data) - 4)),
    ("local extra area with 3 stray bytes (4.1)", ["ELOCAL"],
     extras_mod("b", "local_extras", lambda x: [b"\0\0\0"] + x)),
    ("two 0xD935 fields in a local header (4.1)", ["ELOCAL"],
     extras_mod("b", "local_extras", lambda x: [(0xD935, b"\x40\0")] + x)),
    ("0xD935 field with Data_Size 1 (4.3)", ["ELOCAL"],
     entry_mod("b", align_id=0xCAFE, local_extras=[(0xD935, b"\0"), zipbuild.ALIGN])),
    ("no 0xD935 field: aligned by an unknown field (valid, 4.3)", VALID,
     entry_mod("b", align_id=0xCAFE)),
    ("0xD935 Alignment 0, data 64-aligned (valid, 4.3)", VALID, entry_mod("b", align_value=0)),
    ("digest field in a local header (ignored, valid, 4.4)", VALID,
     lambda b: extras_mod("b", "local_extras",
                          lambda x: [_digest_field(ent(b.entries, "b"))] + x)(b)),
    # 4.2 zip64 fields
    ("unneeded, consistent zip64 fields in local and central (valid, 4.2)", VALID,
     entry_mod("b", zip64_local=True, local_marks={"usize", "csize"},
               central_marks={"usize", "csize", "lho"})),
    ("central zip64 field with bytes beyond the marked values (ignored, valid, 4.2)", VALID,
     entry_mod("b", central_marks=set(), central_zip64_data=b"\x77" * 16)),
    ("local zip64 values disagree with unmarked 32-bit sizes (3, 4.2)", ["EZIP64"],
     entry_mod("b", local_marks=set(),
               local_zip64_data=lambda e: struct.pack("<QQ", len(e.data) + 64,
                                                      len(e.data) + 64))),
    ("central sizes marked, zip64 field too short (4.2)", ["EZIP64"],
     entry_mod("b", central_marks={"usize", "csize"},
               central_zip64_data=lambda e: struct.pack("<Q", len(e.data)))),
    ("central offset marked, no zip64 field (4.2)", ["EZIP64"], c_central_lho_marked_no_field),
    ("local sizes marked, no zip64 field (4.2)", ["EZIP64"], c_zip64_marks_without_field),
    ("local sizes marked, zip64 field of 8 bytes (4.2)", ["EZIP64"],
     entry_mod("b", local_marks={"usize", "csize"},
               local_zip64_data=lambda e: struct.pack("<Q", len(e.data)))),
    # flags and method
    ("compressed entry: method 8 in both headers (5)", ["EMETHOD"], entry_mod("b", method=8)),
    ("encrypted flag bit 0 (5)", ["EFLAGS"], entry_mod("b", flags=0x0001)),
    ("data-descriptor flag bit 3 (5)", ["EFLAGS"], entry_mod("b", flags=0x0008)),
    ("strong-encryption flag bit 6 (5)", ["EFLAGS"], entry_mod("b", flags=0x0040)),
    ("masked-header flag bit 13 (5)", ["EFLAGS"], entry_mod("b", flags=0x2000)),
    ("flag bit 1 (5: every bit but 11 must be clear)", ["EFLAGS"], entry_mod("b", flags=0x0002)),
    ("flag bit 11 (UTF-8) in both headers (valid, 5)", VALID, entry_mod("b", flags=0x0800)),
    # 4.3 alignment, 6.5 layout
    ("misaligned tensor entry: 1 byte less padding (4.3)", ["EALIGN"],
     entry_mod("b", pad_delta=-1)),
    ("64-aligned, not the 4096 its 0xD935 field records (4.3)", ["EALIGN"], c_misaligned_claim),
    ("model entry off its recorded alignment (4.3: every entry kind)", ["EALIGN"],
     entry_mod(MODEL, pad_delta=-1)),
    ("model entry unaligned, no alignment field (valid, 4.3)", VALID, c_model_unaligned),
    ("entry b's local header inside entry c's data (6.5 #3)", ["EOVERLAP"], c_overlap),
    ("64-byte gap between entries (6.5 #3)", ["EOVERLAP"], entry_mod("b", prefix=b"\0" * 64)),
    ("64 bytes before the first local header (6.5 #3)", ["EOVERLAP"], c_prefix_gap),
    ("local header offset inside the CD (3)", ["EBOUNDS"], c_bounds),
    ("model's local Extra_Length 65535 runs past CD_Offset (3)", ["EBOUNDS"],
     patched(local(MODEL, 28), "<H", 0xFFFF)),
    ("model entry 100 bytes longer in both headers: data past CD_Offset (3)", ["EBOUNDS"],
     entry_mod(MODEL, csize=lambda e: len(e.data) + 100)),
    # 7 names
    ("duplicate entry names (7.1)", ["EDUPNAME"], renamed("b", "a")),
    ("names differing only in case: a, A (7.1)", ["EDUPNAME"], renamed("b", "A")),
    ("two __MODEL_PROTO entries (11.2 #14)", ["EDUPNAME"], c_two_models),
    ("entry name '../evil' (7.1)", ["ENAME"], renamed("c", "../evil")),
    ("entry name 'a/b' (7.1)", ["ENAME"], renamed("c", "a/b")),
    ("entry name '9c' (7.1)", ["ENAME"], renamed("c", "9c")),
    ("empty entry name (7.1)", ["ENAME"], renamed("c", "")),
    ("entry name with a NUL byte 'c\\0x' (7.1)", ["ENAME"], renamed("c", "c\0x")),
    ("entry name 'caf\u00e9' (UTF-8, 7.1)", ["ENAME"], renamed("c", "caf\u00e9")),
    ("entry name of 256 bytes (7.1, 10)", ["ELIMIT"], renamed("c", "c" * 256)),
    ("unknown reserved entry __future (ignored, valid, 7.1)", VALID, c_unknown_reserved),
    ("__MODEL_PROTO missing (2.3 #3)", ["ENOTONNXZIP"], c_no_model),
    ("__MODEL_PROTO not the last central record (2.2)", ["EMODELPOS"], c_model_not_last_cd),
    ("__MODEL_PROTO not the last entry in the file (2.2)", ["EMODELPOS"], c_model_not_last_file),
    # 8 model and references
    ("__MODEL_PROTO is not a protobuf (8.1)", ["EPROTO"],
     entry_mod(MODEL, data=b"\xff" * 50)),
    ("data_location 2 (8.2)", ["EPROTO"], tensor_mod("a", _data_location_2)),
    ("reference to a missing entry (8.4 #1)", ["EREF"], c_ref_missing),
    ("missing entry referenced from a function's Constant (8.2)", ["EREF"],
     model_mod(_in_function(ext_tensor("f", "nope")))),
    ("missing entry referenced from a training-info initializer (8.2)", ["EREF"],
     model_mod(_in_training(ext_tensor("ti", "nope")))),
    ("missing entry referenced from sparse initializer values (8.2)", ["EREF"],
     model_mod(_in_sparse(ext_tensor("sv", "nope")))),
    ("missing entry referenced from an If branch's Constant (8.2)", ["EREF"],
     model_mod(_in_subgraph(ext_tensor("sg", "nope")))),
    ("missing entry referenced from a 'tensors' attribute (8.2)", ["EREF"],
     model_mod(_in_tensors_attr(ext_tensor("tl", "nope")))),
    ("entry a as FLOAT [65] in a function's Constant (9)", ["ESIZE"],
     model_mod(_in_function(ext_tensor("f", "a", dims=(65,))))),
    ("entry a as FLOAT [65] in a training-info initializer (9)", ["ESIZE"],
     model_mod(_in_training(ext_tensor("ti", "a", dims=(65,))))),
    ("entry a as FLOAT [65] in sparse initializer values (9)", ["ESIZE"],
     model_mod(_in_sparse(ext_tensor("sv", "a", dims=(65,))))),
    ("entry a as FLOAT [65] in an If branch's Constant (9)", ["ESIZE"],
     model_mod(_in_subgraph(ext_tensor("sg", "a", dims=(65,))))),
    ("entry a shared by a function, a training graph, sparse values, a subgraph (valid)",
     VALID, model_mod(lambda m: [f(m) for f in (
         _in_function(ext_tensor("f", "a")), _in_training(ext_tensor("ti", "a")),
         _in_sparse(ext_tensor("sv", "a")), _in_subgraph(ext_tensor("sg", "a")),
         _in_tensors_attr(ext_tensor("tl", "a")))])),
    ("reference to a reserved entry __c (8.4 #1)", ["EREF"], c_ref_reserved),
    ("reference to a filler entry __PAD_0 (8.4 #1)", ["EREF"], c_ref_filler),
    ("EXTERNAL tensor that also has raw_data (8.2)", ["EREF"],
     tensor_mod("a", lambda t: setattr(t, "raw_data", b"\0" * 256))),
    ("EXTERNAL tensor that also has float_data (8.2)", ["EREF"],
     tensor_mod("a", lambda t: t.float_data.extend([1.0] * 64))),
    ("unknown external_data key 'basepath' (8.3)", ["EREF"], ext_mod("a", basepath=".")),
    ("repeated 'location' key (8.3)", ["EREF"],
     tensor_mod("a", lambda t: t.external_data.add(key="location", value="a"))),
    ("no 'location' key (8.3)", ["EREF"], ext_mod("a", location=None, offset="0")),
    ("offset '-8' (8.3)", ["EREF"], ext_mod("a", offset="-8")),
    ("offset '' (8.3)", ["EREF"], ext_mod("a", offset="")),
    ("offset '0x10' (8.3)", ["EREF"], ext_mod("a", offset="0x10")),
    ("offset of 21 digits (8.3)", ["EREF"], ext_mod("a", offset="0" * 21)),
    ("offset of 20 digits above 2^64-1 (8.3)", ["EREF"], ext_mod("a", offset="9" * 20)),
    ("offset of 20 zeros, no length (valid, 8.3)", VALID, ext_mod("a", offset="0" * 20)),
    ("'checksum' key (valid, 8.3)", VALID, ext_mod("a", checksum="0" * 40)),
    ("explicit offset 0 and length 256 (valid, 8.3)", VALID,
     ext_mod("a", offset="0", length="256")),
    ("offset 8 + length 256 > entry size 256 (8.4 #2)", ["ERANGE"],
     ext_mod("a", offset="8", length="256")),
    ("length 260 > entry size 256 (8.4 #2)", ["ERANGE"],
     model_mod(lambda m: (set_ext(tensor(m, "a"), "length", "260"),
                          tensor(m, "a").dims.__setitem__(0, 65)))),
    ("offset 2^64-1 + length 1 overflows (8.4 #2)", ["ERANGE"],
     ext_mod("a", offset=str(2 ** 64 - 1), length="1")),
    ("offset 8, no length: 248 bytes for 256 (8.4 #3)", ["ESIZE"], ext_mod("a", offset="8")),
    ("two tensors share entry a; entry c unreferenced (valid, 8.3, 8.4)", VALID, c_shared_entry),
    # 9 sizes and types
    ("dims [65] for 256 bytes of FLOAT (9)", ["ESIZE"],
     tensor_mod("a", lambda t: t.dims.__setitem__(0, 65))),
    ("negative dim (9)", ["ESIZE"], tensor_mod("a", lambda t: t.dims.__setitem__(0, -64))),
    ("dims overflowing u64 (9)", ["ESIZE"],
     tensor_mod("a", lambda t: t.dims.extend([2 ** 62, 2 ** 62]))),
    ("STRING tensor in an entry (9)", ["EDTYPE"],
     tensor_mod("c", lambda t: setattr(t, "data_type", 8))),
    ("UNDEFINED tensor in an entry (9)", ["EDTYPE"],
     tensor_mod("c", lambda t: setattr(t, "data_type", 0))),
    ("data_type 99 in an entry (9)", ["EDTYPE"],
     tensor_mod("c", lambda t: setattr(t, "data_type", 99))),
    ("INT4 [600] in 300 bytes (valid, 9)", VALID,
     tensor_mod("c", lambda t: (setattr(t, "data_type", I4), t.dims.__setitem__(0, 600)))),
    ("INT4 [599] in 300 bytes: ceil(599/2) (valid, 9)", VALID,
     tensor_mod("c", lambda t: (setattr(t, "data_type", I4), t.dims.__setitem__(0, 599)))),
    ("INT4 [601] in 300 bytes (9)", ["ESIZE"],
     tensor_mod("c", lambda t: (setattr(t, "data_type", I4), t.dims.__setitem__(0, 601)))),
    ("UINT2 [1197] in 300 bytes: ceil(1197/4) (valid, 9)", VALID,
     tensor_mod("c", lambda t: (setattr(t, "data_type", U2), t.dims.__setitem__(0, 1197)))),
    ("FLOAT8E4M3FN [300] (valid, 9)", VALID,
     tensor_mod("c", lambda t: setattr(t, "data_type", F8))),
    # 10 limits
    ("rank 64 (valid, 10)", VALID, tensor_mod("a", lambda t: t.dims.extend([1] * 63))),
    ("rank 65 (10)", ["ELIMIT"], tensor_mod("a", lambda t: t.dims.extend([1] * 64))),
    ("graph depth 63 (valid, 10)", VALID, c_depth(63)),
    ("graph depth 64 (10)", ["ELIMIT"], c_depth(64)),
    # verify
    ("data byte flipped: CRC-32 mismatch (11.2 #24)", ["ECRC"], c_crc_data),
    ("data byte flipped, CRC-32 recomputed, XXH3 kept (11.2 #25)", ["EDIGEST"], c_digest),
    # not archives
    ("not a zip at all (2.3 #4)", ["ENOTZIP"],
     lambda b: b"This is not a zip archive, just some text.\n" * 8),
    ("empty file (2.3 #4)", ["ENOTZIP"], lambda b: b""),
    ("21-byte file (2.3 #4)", ["ENOTZIP"], lambda b: b.good[-21:]),
    ("EOCD only, no entries (2.3 #3)", ["ENOTONNXZIP"],
     lambda b: struct.pack("<IHHHHIIH", zipcheck.SIG_EOCD, 0, 0, 0, 0, 0, 0, 0)),
]

VERIFY_ONLY = ("ECRC", "EDIGEST")  # open (ls) succeeds, only verify sees these


def _digest_field_of(extras):
    for x in extras:
        if isinstance(x, tuple) and x[0] == zipbuild.EXTRA_DIGEST:
            return x
    raise KeyError("digest")


def run_case(onnxzip, path, expect):
    """Returns an error string or None."""
    p = ozcommon.run([onnxzip, "verify", path], timeout=60)
    err = p.stderr.decode("utf-8", "replace")
    lines = [x for x in err.splitlines() if x.strip()]
    if p.returncode < 0:
        return f"verify killed by signal {-p.returncode}"
    if expect is VALID:
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


def run_ls(onnxzip, path, expect):
    p = ozcommon.run([onnxzip, "ls", path, "--json"], timeout=60)
    if p.returncode < 0:
        return f"ls killed by signal {-p.returncode}"
    must_open = expect is VALID or any(x in VERIFY_ONLY for x in expect)
    if must_open and p.returncode != 0:
        return f"ls --json exited {p.returncode}; open must succeed here: " \
               f"{p.stderr.decode(errors='replace').strip()}"
    return None


def main(argv):
    args = argv[1:]
    keep = only = None
    while len(args) > 1 and args[-2] in ("--keep", "--only"):
        if args[-2] == "--keep":
            keep = args[-1]
        else:
            only = args[-1]
        del args[-2:]
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
        p = ozcommon.run([onnxzip, "pack", mp, "-o", good, "--size-threshold", "0", "--keep-typed"])
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
        checks = [("control: good archive from pack", VALID, lambda b: b.good)]
        if base.rebuilt != base.good:
            failed += 1
            failures.append("zipbuild does not rebuild pack's archive byte for byte")
            print("FAIL zipbuild does not rebuild pack's archive byte for byte; the cases "
                  "below may carry more than their one defect")
        else:
            print("ok   zipbuild rebuilds pack's archive byte for byte")
            passed += 1
        digests = all(any(isinstance(x, tuple) and x[0] == zipbuild.EXTRA_DIGEST
                          for x in e.central_extras) for e in base.entries)
        for name, expect, fn in CASES:
            if not digests and ("digest" in name or "XXH3" in name):
                print(f"skip {name}: the archive records no XXH3 digests")
                continue
            checks.append((name, expect, fn))
        for i, (name, expect, fn) in enumerate(checks):
            if only and only not in name:
                continue
            want = "valid" if expect is VALID else "/".join(expect)
            try:
                data = fn(base)
            except Exception as ex:
                err = f"could not craft the case: {ex!r}"
                path = "-"
            else:
                path = os.path.join(work, f"case{i:03d}.onnxzip")
                with open(path, "wb") as f:
                    f.write(data)
                err = run_case(onnxzip, path, expect) or run_ls(onnxzip, path, expect)
            label = f"case{i:03d} {name} [{want}]"
            if err:
                failed += 1
                failures.append(f"{label}: {err}")
                print(f"FAIL {label}: {err}")
            else:
                passed += 1
                print(f"ok   {label}")
    if failures:
        print("\nfailures (reproduce: hostile.py ONNXZIP --keep DIR, then onnxzip verify "
              "DIR/caseNNN.onnxzip):")
        for f in failures:
            print("  " + f)
    print(f"hostile: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
