#!/usr/bin/python3
"""ozcommon — helpers shared by the oracle scripts (needs the `onnx` package:
run with /usr/bin/python3).

  * iter_tensors(model): every TensorProto, in the spec's model order (the
    order of the serialized protobuf: per graph its nodes' attribute tensors
    and subgraphs first, then initializers, then sparse initializers; the
    main graph, then training graphs, then functions);
  * expected_dump(model): what `dump_tensors` should print for it after
    `pack --size-threshold 0`;
  * extract_and_load(): unzip an archive with zipfile, rename __MODEL_PROTO to
    model.onnx, onnx.load() it (onnx resolves external data), and resolve
    by hand the references onnx 1.12's loader does not visit;
  * normalize() / model_diff(): compare two ModelProtos modulo the
    DEFAULT-data_location noise.
"""
import contextlib
import json
import os
import subprocess
import tempfile
import zipfile
import zlib

import onnx
from onnx import AttributeProto, TensorProto

MODEL_ENTRY = "__MODEL_PROTO"
KIND_NAMES = ("initializer", "attribute", "sparse_values", "sparse_indices")


class Tally:
    """Counts checks; a failed one prints "FAIL what: detail"."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}: {detail}")
        return ok


@contextlib.contextmanager
def workdir(argv, prefix):
    """A script's working directory: the one after --keep in argv (made if
    missing, left for inspection), else a temporary one removed after."""
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        d = keep or tmp
        os.makedirs(d, exist_ok=True)
        yield d


def _sparse(sp, depth, where):
    # SparseTensorProto: values = 1, indices = 2
    if sp.HasField("values"):
        yield sp.values, 2, depth, where + ".values"
    if sp.HasField("indices"):
        yield sp.indices, 3, depth, where + ".indices"


def graph_tensors(g, depth, where):
    # GraphProto: node = 1, initializer = 5, sparse_initializer = 15
    yield from nodes_tensors(g.node, depth, where)
    for i, t in enumerate(g.initializer):
        yield t, 0, depth, f"{where}.initializer[{i}]"
    for i, sp in enumerate(g.sparse_initializer):
        yield from _sparse(sp, depth, f"{where}.sparse_initializer[{i}]")


def nodes_tensors(nodes, depth, where):
    # NodeProto.attribute = 5; AttributeProto: t = 5, g = 6, tensors = 10,
    # graphs = 11, sparse_tensor = 22, sparse_tensors = 23
    for ni, n in enumerate(nodes):
        for a in n.attribute:
            w = f"{where}.node[{ni}]({n.op_type}).{a.name}"
            if a.HasField("t"):
                yield a.t, 1, depth, w + ".t"
            if a.HasField("g"):
                yield from graph_tensors(a.g, depth + 1, w + ".g")
            for i, t in enumerate(a.tensors):
                yield t, 1, depth, f"{w}.tensors[{i}]"
            for i, sg in enumerate(a.graphs):
                yield from graph_tensors(sg, depth + 1, f"{w}.graphs[{i}]")
            if a.HasField("sparse_tensor"):
                yield from _sparse(a.sparse_tensor, depth, w + ".sparse_tensor")
            for i, sp in enumerate(a.sparse_tensors):
                yield from _sparse(sp, depth, f"{w}.sparse_tensors[{i}]")


def iter_tensors(m):
    """(TensorProto, kind, graph depth, path) for every tensor, in the spec's
    model order (spec 7.2: the order in which the TensorProto messages begin in
    the model serialized in field-number order): ModelProto.graph (7), then
    training_info (20: initialization 1, algorithm 2), then functions (25:
    node 7). FunctionProto.attribute_proto (11) is unknown to onnx 1.12 and
    not visited."""
    if m.HasField("graph"):
        yield from graph_tensors(m.graph, 0, "graph")
    for ti, ti_ in enumerate(m.training_info):
        if ti_.HasField("initialization"):
            yield from graph_tensors(ti_.initialization, 0, f"training_info[{ti}].initialization")
        if ti_.HasField("algorithm"):
            yield from graph_tensors(ti_.algorithm, 0, f"training_info[{ti}].algorithm")
    for fi, f in enumerate(m.functions):
        yield from nodes_tensors(f.node, 0, f"functions[{fi}]({f.name})")


def is_external(t) -> bool:
    return t.HasField("data_location") and t.data_location == TensorProto.EXTERNAL


def expected_dump(m, threshold=0):
    """The records dump_tensors should print after pack with this threshold."""
    out = []
    for t, kind, depth, where in iter_tensors(m):
        rec = {"name": t.name, "data_type": t.data_type, "dims": list(t.dims), "where": where,
               "kind": kind, "depth": depth}
        if t.HasField("raw_data"):
            rec["storage"] = "entry" if len(t.raw_data) >= threshold else "inline"
            rec["nbytes"] = len(t.raw_data)
            rec["crc32"] = zlib.crc32(t.raw_data) & 0xFFFFFFFF
        else:
            rec["storage"] = "typed"
            rec["nbytes"] = 0
            rec["crc32"] = 0
        out.append(rec)
    return out


def _key(r):
    return (r["name"], r["data_type"], tuple(r["dims"]), r["storage"], r.get("nbytes", 0),
            r.get("crc32", 0) if r["storage"] != "typed" else 0)


def compare_dump(expected, actual):
    """Returns (errors, order_differs). Compares in order; when the in-order
    comparison fails but the multisets agree, returns no error and
    order_differs=True."""
    def show(r):
        return (f"'{r['name']}' {r['data_type']} {r['dims']} {r['storage']} "
                f"nbytes={r.get('nbytes', 0)} crc32={r.get('crc32', 0)}")
    errs = []
    for i, (e, a) in enumerate(zip(expected, actual)):
        if _key(e) != _key(a):
            errs.append(f"tensor #{i} ({e['where']}): expected {show(e)}, dump_tensors says {show(a)}")
    if len(expected) != len(actual):
        errs.append(f"{len(expected)} tensors expected, dump_tensors printed {len(actual)}")
    if not errs:
        return [], False
    ek = sorted(map(_key, expected))
    ak = sorted(map(_key, actual))
    if ek == ak:
        return [], True
    missing = [k for k in ek if k not in ak]
    extra = [k for k in ak if k not in ek]
    return errs[:5] + [f"(multiset) missing from dump: {missing[:3]}; unexpected in dump: "
                       f"{extra[:3]}"], False


def parse_dump(stdout: str):
    recs = []
    for line in stdout.splitlines():
        line = line.strip()
        if line:
            r = json.loads(line)
            r.setdefault("crc32", 0)
            r.setdefault("nbytes", 0)
            recs.append(r)
    return recs


def resolve_external(m, base_dir):
    """Resolves EXTERNAL tensors onnx.load left unresolved (onnx 1.12 does not
    visit sparse tensors, functions or training graphs). Returns their count."""
    n = 0
    for t, _k, _d, _w in iter_tensors(m):
        if not is_external(t):
            continue
        info = {e.key: e.value for e in t.external_data}
        with open(os.path.join(base_dir, info["location"]), "rb") as f:
            off = int(info.get("offset", "0") or 0)
            f.seek(off)
            ln = info.get("length")
            t.raw_data = f.read(int(ln)) if ln not in (None, "") else f.read()
        t.data_location = TensorProto.DEFAULT
        del t.external_data[:]
        n += 1
    return n


def extract_and_load(archive, outdir):
    """Extracts with zipfile, renames __MODEL_PROTO to model.onnx, loads with
    onnx. Returns (model, number of tensors resolved by hand)."""
    with zipfile.ZipFile(archive) as z:
        z.extractall(outdir)
    os.rename(os.path.join(outdir, MODEL_ENTRY), os.path.join(outdir, "model.onnx"))
    m = onnx.load(os.path.join(outdir, "model.onnx"))
    return m, resolve_external(m, outdir)


def normalize(m):
    for t, _k, _d, _w in iter_tensors(m):
        if t.HasField("data_location") and t.data_location == TensorProto.DEFAULT:
            t.ClearField("data_location")
        if len(t.external_data) == 0:
            t.ClearField("external_data")
    return m


def _tensor_diff(a, b):
    fields = []
    for f in ("name", "data_type", "dims", "raw_data", "data_location", "external_data",
              "float_data", "int32_data", "int64_data", "double_data", "uint64_data",
              "string_data", "doc_string", "segment"):
        try:
            va, vb = getattr(a, f), getattr(b, f)
        except AttributeError:
            continue
        if va != vb:
            if f == "raw_data":
                fields.append(f"raw_data ({len(va)} vs {len(vb)} bytes, crc "
                              f"{zlib.crc32(va):08x} vs {zlib.crc32(vb):08x})")
            elif f == "external_data":
                fields.append(f"external_data ({[(e.key, e.value) for e in va]} vs "
                              f"{[(e.key, e.value) for e in vb]})")
            else:
                fields.append(f"{f} ({str(va)[:60]!r} vs {str(vb)[:60]!r})")
    if not fields and a.SerializeToString() != b.SerializeToString():
        fields.append("other fields / unknown fields")
    return fields


def model_diff(orig, got):
    """None when equal after normalization, else a short description."""
    a = orig.SerializeToString(deterministic=True)
    b = got.SerializeToString(deterministic=True)
    if a == b:
        return None
    ta = list(iter_tensors(orig))
    tb = list(iter_tensors(got))
    if len(ta) != len(tb):
        return f"tensor count {len(ta)} vs {len(tb)}"
    for (x, _k, _d, w), (y, _k2, _d2, _w2) in zip(ta, tb):
        if x.SerializeToString() != y.SerializeToString():
            return f"tensor at {w} ('{x.name}') differs: " + ", ".join(_tensor_diff(x, y))
    # no tensor differs: show the first differing top-level field
    for fd in orig.DESCRIPTOR.fields:
        va, vb = getattr(orig, fd.name), getattr(got, fd.name)
        if va != vb:
            return f"ModelProto.{fd.name} differs (tensors equal)"
    return f"serializations differ ({len(a)} vs {len(b)} bytes) but no field differs " \
           f"(unknown fields?)"


def run(cmd, timeout=120, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          **kw)


# spec section 9: bytes per element, or (1, k) for k elements per byte
SPEC_DTYPES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8,
               14: 8, 15: 16, 16: 2, 17: 1, 18: 1, 19: 1, 20: 1, 21: (1, 2), 22: (1, 2),
               23: (1, 2), 24: 1, 25: (1, 4), 26: (1, 4), 27: (3, 4), 28: (3, 4)}


def spec_byte_size(data_type, dims):
    """Bytes spec 9 requires, or None when the type may not be stored."""
    sz = SPEC_DTYPES.get(data_type)
    if sz is None or any(d < 0 for d in dims):
        return None
    n = 1
    for d in dims:
        n *= d
    if isinstance(sz, tuple):  # sz[0] bytes per sz[1] elements, the last group rounded up to bytes
        return (n * sz[0] * 8 // sz[1] + 7) // 8
    return n * sz


def spec_violation(m):
    """A reason string when the model breaks a rule of spec 9/10 that makes a
    conforming writer refuse it (raw_data of a type that may not be stored,
    a negative dim, a length != dims x type, rank > 64, graph depth > 63),
    else None."""
    for t, _k, depth, w in iter_tensors(m):
        if depth > 63:
            return f"{w}: graph depth {depth} > 63"
        if len(t.dims) > 64:
            return f"{w}: rank {len(t.dims)} > 64"
        if not t.HasField("raw_data"):
            continue
        want = spec_byte_size(t.data_type, list(t.dims))
        if want is None:
            return f"{w}: raw_data with data_type {t.data_type} / dims {list(t.dims)}"
        if want != len(t.raw_data):
            return (f"{w}: tensor '{t.name}' raw_data has {len(t.raw_data)} bytes, dims "
                    f"{list(t.dims)} of type {t.data_type} need {want}")
    return None


__all__ = ["iter_tensors", "expected_dump", "compare_dump", "parse_dump", "extract_and_load",
           "normalize", "model_diff", "run", "spec_violation", "is_external", "AttributeProto"]


# --------------------------------------------------------------------------
# Entry names (spec 7.2), written from the spec, independent of the library.
# --------------------------------------------------------------------------

_IDENT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def entry_base(tensor_name: str) -> str:
    raw = tensor_name.encode("utf-8")
    mapped = "".join(chr(c) if c in _IDENT else "_" for c in raw)
    if not mapped or mapped[0].isdigit():
        mapped = "t_" + mapped
    elif mapped.startswith("__") or mapped == "_":
        mapped = "t" + mapped  # "_" -> "t_": a "_2" suffix must not make "__2" (spec 7.2)
    return mapped[:240]


def entry_name(tensor_name: str, taken_lower: set) -> str:
    """The first of base, base_2, base_3, ... not taken (ASCII down-cased);
    adds it to taken_lower."""
    base = entry_base(tensor_name)
    i = 1
    name = base
    while name.lower() in taken_lower:
        i += 1
        name = f"{base}_{i}"
    taken_lower.add(name.lower())
    return name


def _self_test_names():
    """The examples of spec 7.2; a failure is a bug of this oracle."""
    rows = [(["encoder.0.weight"], ["encoder_0_weight"]), (["W", "w"], ["W", "w_2"]),
            (["W", "w", "w_2"], ["W", "w_2", "w_2_2"]),
            (["conv.weight", "conv_weight"], ["conv_weight", "conv_weight_2"]),
            (["", ""], ["t_", "t__2"]), (["0bias"], ["t_0bias"]), (["__x"], ["t__x"]),
            (["a/b:0"], ["a_b_0"]), (["\u6743\u91cd"], ["t______"]), (["a" * 300], ["a" * 240])]
    for names, want in rows:
        taken = set()
        got = [entry_name(n, taken) for n in names]
        assert got == want, (names, got, want)


_self_test_names()


def expected_locations(m, threshold=0):
    """Entry names a conforming writer gives the tensors it moves (raw_data of
    at least `threshold` bytes), in model order: list of (path, name)."""
    taken = set()
    out = []
    for t, _k, _d, w in iter_tensors(m):
        if t.HasField("raw_data") and len(t.raw_data) >= threshold:
            out.append((w, entry_name(t.name, taken)))
    return out


def check_locations(orig, packed_model_bytes, threshold=0):
    """Compares the `location` of each EXTERNAL tensor of the packed model
    with the spec's mapping applied to the original. Returns errors."""
    packed = onnx.ModelProto.FromString(packed_model_bytes)
    want = expected_locations(orig, threshold)
    got = []
    for t, _k, _d, w in iter_tensors(packed):
        if is_external(t):
            locs = [e.value for e in t.external_data if e.key == "location"]
            keys = [e.key for e in t.external_data]
            if keys != ["location"]:
                return [f"{w}: external_data keys {keys}; a writer writes 'location' only "
                        f"(spec 8.3)"]
            got.append((w, locs[0]))
    if got != want:
        if len(got) != len(want):
            return [f"{len(got)} EXTERNAL tensors in the archive, expected {len(want)}"]
        d = next((g, x) for g, x in zip(got, want) if g != x)
        return [f"entry name at {d[0][0]}: '{d[0][1]}', spec 7.2 gives '{d[1][1]}'"]
    return []
