"""Helpers shared by the tests in tests/python: where the test inputs are,
an independent walk over a ModelProto's tensors, what ``Archive.array``
must return for a TensorProto (the oracle built on onnx.numpy_helper), the
process's file mappings, model normalization as ``onnx.load`` does it, and
generated models covering every tensor form.

Nothing here imports the onnxzip package: the oracle must not share code
with what it checks.
"""
from __future__ import annotations

import glob
import json
import os
import pathlib
import re
import subprocess
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

try:
    import ml_dtypes
except ImportError:  # Debian's python3: no ml_dtypes
    ml_dtypes = None

REPO = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = pathlib.Path(os.environ.get("ONNXZIP_TESTDATA", "/usr/share/libonnx-testdata/data"))

# ---- test inputs ---------------------------------------------------------------


def corpus_dir() -> pathlib.Path:
    """The shared corpus: ONNXZIP_SHARED_CORPUS, else <repo>/../shared/corpus."""
    value = os.environ.get("ONNXZIP_SHARED_CORPUS")
    return pathlib.Path(value) if value else REPO.parent / "shared" / "corpus"


def corpus_models() -> List[pathlib.Path]:
    """models/*.onnx (classic single files) and extdata/*/*.onnx (classic
    external data), sorted; empty when the corpus is absent."""
    root = corpus_dir()
    return sorted(root.glob("models/*.onnx")) + sorted(root.glob("extdata/*/*.onnx"))


def corpus_id(path: pathlib.Path) -> str:
    return str(path.relative_to(corpus_dir()))


def file_params(paths: List[pathlib.Path], idfn: Callable[[pathlib.Path], str]) -> List[Any]:
    """pytest.param()s of `paths` with their ids computed here, never by pytest:
    with an empty list, pytest 7.2 (Debian 12's) calls an `ids` function with
    its NOTSET placeholder and the whole module fails to collect. Empty, the
    test is skipped with its skipif reason (corpus or testdata absent)."""
    return [pytest.param(p, id=idfn(p)) for p in paths]


def corpus_absent_reason() -> str:
    return (f"shared corpus absent: no models/*.onnx or extdata/*/*.onnx under {corpus_dir()} "
            "(set ONNXZIP_SHARED_CORPUS)")


def td_models() -> List[pathlib.Path]:
    """Every model.onnx of Debian's libonnx-testdata, sorted."""
    return sorted(pathlib.Path(p) for p in glob.glob(str(TESTDATA / "**" / "*.onnx"), recursive=True))


def td_id(path: pathlib.Path) -> str:
    return str(path.parent.relative_to(TESTDATA))


def td_absent_reason() -> str:
    return f"libonnx-testdata absent: no *.onnx under {TESTDATA} (apt-get install libonnx-testdata)"


def cli(onnxzip_cli: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    """Runs the onnxzip command; returns the completed process (not checked)."""
    return subprocess.run([str(onnxzip_cli), *map(str, args)], capture_output=True, text=True, timeout=300)


def unnamed_listing(text: str, name: str, as_json: bool) -> str:
    """`text` (what `onnxzip ls [--json]` or Archive.listing() printed of
    archive `name`) without the name that begins it; fails when it does not
    begin with it. Two sources of one archive list the same rest."""
    head = '{"archive": ' + json.dumps(name) + ",\n" if as_json else name + ": "
    assert text.startswith(head), (name, text[:200])
    return text[len(head):]


# ---- tensors of a model, in the spec's model order -------------------------------

# The walk yields (path, tensor): the path is what names an unnamed tensor
# (onnxzip_tensor.key in include/onnxzip/onnxzip.h), written here from that
# documentation, not from the C code.

def _join(prefix: str, segment: str) -> str:
    return f"{prefix}/{segment}" if prefix else segment


def _sparse(sp, where: str) -> Iterator[Tuple[str, TensorProto]]:
    # SparseTensorProto: values = 1, indices = 2
    if sp.HasField("values"):
        yield _join(where, "values"), sp.values
    if sp.HasField("indices"):
        yield _join(where, "indices"), sp.indices


def _attribute(a, where: str) -> Iterator[Tuple[str, TensorProto]]:
    # AttributeProto: t = 5, g = 6, tensors = 10, graphs = 11, sparse_tensor = 22, sparse_tensors = 23
    if a.HasField("t"):
        yield where, a.t
    if a.HasField("g"):
        yield from _graph(a.g, where)
    for k, t in enumerate(a.tensors):
        yield f"{where}[{k}]", t
    for k, g in enumerate(a.graphs):
        yield from _graph(g, f"{where}[{k}]")
    if a.HasField("sparse_tensor"):
        yield from _sparse(a.sparse_tensor, where)
    for k, sp in enumerate(a.sparse_tensors):
        yield from _sparse(sp, f"{where}[{k}]")


def _named(name: str, what: str, index: int) -> str:
    name = name.split("\0")[0]  # the C library reads names up to a NUL
    return name or f"{what}#{index}"


def _nodes(nodes, prefix: str) -> Iterator[Tuple[str, TensorProto]]:
    for i, n in enumerate(nodes):  # NodeProto.attribute = 5
        where = _join(prefix, _named(n.name, "node", i))
        for j, a in enumerate(n.attribute):
            yield from _attribute(a, _join(where, _named(a.name, "attribute", j)))


def _graph(g, prefix: str) -> Iterator[Tuple[str, TensorProto]]:
    # GraphProto: node = 1, initializer = 5, sparse_initializer = 15
    yield from _nodes(g.node, prefix)
    for i, t in enumerate(g.initializer):
        yield _join(prefix, f"initializer#{i}"), t
    for i, sp in enumerate(g.sparse_initializer):
        yield from _sparse(sp, _join(prefix, f"sparse_initializer#{i}"))


def _model(model) -> Iterator[Tuple[str, TensorProto]]:
    if model.HasField("graph"):
        yield from _graph(model.graph, "")
    for i, ti in enumerate(model.training_info):
        if ti.HasField("initialization"):
            yield from _graph(ti.initialization, f"training_info#{i}/initialization")
        if ti.HasField("algorithm"):
            yield from _graph(ti.algorithm, f"training_info#{i}/algorithm")
    for f in model.functions:
        prefix = f"function:{f.domain + ':' if f.domain else ''}{f.name}"
        yield from _nodes(f.node, prefix)
        for j, a in enumerate(getattr(f, "attribute_proto", ())):
            yield from _attribute(a, _join(prefix, _named(a.name, "attribute", j)))


def iter_tensors(model) -> Iterator[TensorProto]:
    """Every TensorProto of ``model`` in the order its serialization (field
    number order, as onnx writes it) begins them: graph (7), training_info
    (20: initialization 1, algorithm 2), functions (25: node 7, then
    attribute_proto 11 where the installed onnx has that field)."""
    for _, t in _model(model):
        yield t


def keyed_tensors(model) -> List[Tuple[str, TensorProto]]:
    """(key, tensor) for every tensor, as iter_tensors orders them: the key
    is the name, or for an unnamed tensor its path in the model ("~2", "~3",
    ... appended when an earlier tensor has that key)."""
    out: List[Tuple[str, TensorProto]] = []
    taken = set()
    for path, t in _model(model):
        key, n = t.name or path, 2
        while not t.name and key in taken:
            key, n = f"{path}~{n}", n + 1
        taken.add(key)
        out.append((key, t))
    return out


def is_external(t: TensorProto) -> bool:
    return t.HasField("data_location") and t.data_location == TensorProto.EXTERNAL


def load_classic(path) -> onnx.ModelProto:
    """A classic model with every external tensor's bytes read into raw_data
    by hand (onnx 1.12's loader skips sparse tensors and functions), its
    references cleared and data_location DEFAULT: what onnx.load gives."""
    path = pathlib.Path(path)
    model = onnx.load(str(path), load_external_data=False)
    for t in iter_tensors(model):
        if not is_external(t):
            continue
        keys = {kv.key: kv.value for kv in t.external_data}
        with open(path.parent / keys["location"], "rb") as f:
            f.seek(int(keys.get("offset") or 0))
            length = keys.get("length")
            t.raw_data = f.read(int(length)) if length else f.read()
        t.data_location = TensorProto.DEFAULT
        del t.external_data[:]
    return model


def normalize(model) -> onnx.ModelProto:
    """A copy of ``model`` with the one difference between equal models
    removed: an explicit data_location DEFAULT cleared (onnx.load sets it on
    the tensors whose external data it loaded)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for t in iter_tensors(out):
        if t.HasField("data_location") and t.data_location == TensorProto.DEFAULT:
            t.ClearField("data_location")
    return out


# ---- what Archive.array must return --------------------------------------------

# little-endian dtype of one element in raw_data form
_PLAIN = {1: "<f4", 2: "u1", 3: "i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 9: "?", 10: "<f2", 11: "<f8",
          12: "<u4", 13: "<u8", 14: "<c8", 15: "<c16"}
# one-byte float types and bfloat16: ml_dtypes name, unsigned dtype of the bits
_BITS = {16: ("bfloat16", "<u2"), 17: ("float8_e4m3fn", "u1"), 18: ("float8_e4m3fnuz", "u1"),
         19: ("float8_e5m2", "u1"), 20: ("float8_e5m2fnuz", "u1"), 24: ("float8_e8m0fnu", "u1")}
# types packed several to a byte: bits per element
PACKED = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2}
# FLOAT6E2M3, FLOAT6E3M2 (onnx >= 1.20): a bit stream of 6-bit elements;
# not in PACKED / ALL_TYPES (whose users generate tensors from them)
SIX_BIT = {27: 6, 28: 6}
_STREAM = {**PACKED, **SIX_BIT}


def _typed_low_bytes(t: TensorProto, dtype: str) -> Optional[np.ndarray]:
    """The spec's raw form of a type onnx does not know: raw_data as it is,
    or each int32_data value's low bytes."""
    if t.HasField("raw_data"):
        return np.frombuffer(t.raw_data, dtype=dtype).copy()
    mask = (1 << (8 * np.dtype(dtype).itemsize)) - 1
    return (np.asarray(t.int32_data, dtype=np.int64) & mask).astype(dtype)


def _pack(values: np.ndarray, bits: int) -> np.ndarray:
    """Elements of ``bits`` bits each (the low bits of uint8 values) as
    ONNX packs them: a little-endian bit stream, element 0 in the lowest
    bits of byte 0, the last byte padded with zero bits."""
    stream = np.unpackbits(values.reshape(-1, 1).astype(np.uint8), axis=1, bitorder="little")[:, :bits]
    return np.packbits(stream.reshape(-1), bitorder="little")


def expected_array(t: TensorProto) -> np.ndarray:
    """What ``Archive.array`` must give for TensorProto ``t`` (its data in the
    message, not external): ``onnx.numpy_helper.to_array(t)`` brought to the
    package's documented representation:

    - plain types: to_array as it is (dtype, shape and bytes);
    - bfloat16 / float8: the ml_dtypes dtype when ml_dtypes is importable,
      else the uint16 / uint8 of the bit patterns. onnx 1.12's to_array widens
      bfloat16 to float32 exactly (bits << 16): its upper 16 bits are the
      bfloat16 bits. Types onnx does not know (float8 in onnx 1.12) get the
      spec's raw form: raw_data, or the low byte of each int32_data value;
    - 4-bit, 2-bit and 6-bit types: to_array's one-element-per-byte array
      packed back, low bits first, into the raw uint8 bytes (1-D); unknown
      to onnx: raw_data, or int32_data's low bytes (packed bytes for 4/2-bit,
      one element each for 6-bit, then packed);
    - STRING: an object array of the string_data bytes (to_array decodes
      them to str, and fails on bytes that are not UTF-8: where it does not
      fail, its strings are checked to be the bytes decoded);
    - complex in float_data / double_data: onnx 1.12's to_array raises
      TypeError on them; then the (real, imaginary) pairs of the field.
    """
    dt = t.data_type
    dims = tuple(t.dims)
    known = dt in onnx.TensorProto.DataType.values()
    if dt == TensorProto.STRING:
        want = np.empty(len(t.string_data), dtype=object)
        want[:] = list(t.string_data)
        try:  # to_array decodes UTF-8 (str elements): equal where it can
            ref = numpy_helper.to_array(t)
        except UnicodeDecodeError:
            ref = None
        if ref is not None:
            assert [b.decode("utf-8") for b in want] == ref.reshape(-1).tolist()
        return want.reshape(dims)
    if dt in _PLAIN:
        if dt in (TensorProto.COMPLEX64, TensorProto.COMPLEX128) and not t.HasField("raw_data"):
            # onnx 1.12's to_array fails on typed complex (TypeError): the
            # pairs (real, imaginary) of float_data / double_data
            try:
                ref = numpy_helper.to_array(t)
            except TypeError:
                pairs = t.float_data if dt == TensorProto.COMPLEX64 else t.double_data
                ref = np.asarray(pairs, dtype="<f4" if dt == TensorProto.COMPLEX64 else "<f8").view(_PLAIN[dt])
        else:
            ref = numpy_helper.to_array(t)
        return ref.astype(np.dtype(_PLAIN[dt]), copy=False).reshape(dims)
    if dt in _STREAM:
        if not known:  # raw_data; typed: 4/2-bit int32_data holds packed bytes, 6-bit one element each
            if dt in SIX_BIT and not t.HasField("raw_data"):
                return _pack(_typed_low_bytes(t, "u1"), SIX_BIT[dt])
            return _typed_low_bytes(t, "u1")
        ref = numpy_helper.to_array(t)
        assert ref.dtype.itemsize == 1, f"onnx {onnx.__version__}: to_array gave {ref.dtype} for type {dt}"
        return _pack(np.ascontiguousarray(ref).view(np.uint8), _STREAM[dt])
    if dt in _BITS:
        name, unsigned = _BITS[dt]
        if not known:
            bits = _typed_low_bytes(t, unsigned)
        else:
            ref = np.ascontiguousarray(numpy_helper.to_array(t))
            if ref.dtype == np.float32 and dt == TensorProto.BFLOAT16:
                bits = (ref.view("<u4") >> 16).astype("<u2")
            else:
                assert ref.dtype.itemsize == np.dtype(unsigned).itemsize, \
                    f"onnx {onnx.__version__}: to_array gave {ref.dtype} for type {dt}"
                bits = ref.view(unsigned)
        bits = bits.reshape(dims)
        ml = getattr(ml_dtypes, name, None) if ml_dtypes is not None else None
        return bits.view(ml) if ml is not None else bits
    raise AssertionError(f"tensor '{t.name}': data type {dt} not covered by this test")


def assert_same_array(got: np.ndarray, t: TensorProto, what: str) -> None:
    """``got`` (from Archive.array) equals expected_array(t): dtype, shape,
    bytes (bit patterns, so NaNs compare), or the bytes objects of STRING."""
    want = expected_array(t)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    if t.data_type in _STREAM and got.size:
        # the last byte's unused bits are invisible to to_array: compared
        # with raw_data where there is one, masked out otherwise
        if t.HasField("raw_data"):
            assert got.tobytes() == t.raw_data, f"{what}: bytes differ from raw_data"
        count = int(np.prod(t.dims, dtype=np.int64))
        used = (count * _STREAM[t.data_type]) % 8
        if used:
            got, want = got.copy(), want.copy()
            got[-1] &= (1 << used) - 1
            want[-1] &= (1 << used) - 1
    if want.dtype == object:
        assert got.reshape(-1).tolist() == want.reshape(-1).tolist(), f"{what}: strings differ"
    else:
        assert got.tobytes() == want.tobytes(), f"{what}: bytes differ"


# ---- where an array's data is ---------------------------------------------------------

def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def file_mappings(path) -> List[Tuple[int, int]]:
    """(start, end) of every mapping of the file ``path`` in this process."""
    real = os.path.realpath(path)
    found = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].rstrip("\n") == real:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                found.append((start, end))
    return found


def inside(a: np.ndarray, ranges: List[Tuple[int, int]]) -> bool:
    """Whether all of ``a``'s bytes lie in one of ``ranges``."""
    lo = address(a)
    return any(start <= lo and lo + a.nbytes <= end for start, end in ranges)


def anonymous_bytes(a: np.ndarray) -> int:
    """Anonymous memory (/proc/self/smaps "Anonymous:") of the mappings that
    hold ``a``'s bytes: for a private file mapping, the pages copied on write.
    Unlike the process's RssAnon, no other allocation or free (an allocator
    returning memory, ASan's quarantine) moves it."""
    lo, hi = address(a), address(a) + a.nbytes
    total, overlaps = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                start, end = (int(x, 16) for x in head.split("-"))
                overlaps = start < hi and lo < end
            elif overlaps and head == "Anonymous:":
                total += int(line.split()[1]) * 1024
    return total


def buffer_range(buf) -> Tuple[int, int]:
    """(start, end) of a bytes-like object's memory."""
    a = np.frombuffer(buf, dtype=np.uint8)
    return address(a), address(a) + a.nbytes


# ---- inputs for ONNX Runtime -------------------------------------------------------

def fnv1a(s: str) -> int:
    h = 0x811C9DC5
    for b in s.encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def input_dims(name: str, elem_type: int, shape: List) -> List[int]:
    """The dims fed for a graph input, as tests/ort/run_model.js chooses them:
    symbolic or unknown dims 1, except Silero VAD's audio chunk [1, 512] and
    PaddleOCR's image [1, 3, 64, 192] (det needs multiples of 32)."""
    fixed = [isinstance(d, int) for d in shape]
    if name == "input" and len(shape) == 2 and elem_type == TensorProto.FLOAT and not fixed[1]:
        return [shape[0] if fixed[0] else 1, 512]
    if name == "x" and len(shape) == 4 and shape[1] == 3 and not fixed[2] and not fixed[3]:
        return [shape[0] if fixed[0] else 1, 3, 64, 192]
    return [d if f else 1 for d, f in zip(shape, fixed)]


def make_input(name: str, elem_type: int, shape: List) -> np.ndarray:
    """Deterministic values for a graph input, seeded from its name: floats
    in [-1, 1), integers 0..9, bools, strings "s<k>"; Silero's ``sr`` is
    int64 16000."""
    if name == "sr" and not shape and elem_type == TensorProto.INT64:
        return np.array(16000, dtype=np.int64)
    dims = input_dims(name, elem_type, shape)
    rng = np.random.default_rng(fnv1a(name) ^ 0x2545F491)
    count = int(np.prod(dims, dtype=np.int64))
    np_type = helper.tensor_dtype_to_np_dtype(elem_type) if hasattr(helper, "tensor_dtype_to_np_dtype") \
        else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]
    if elem_type == TensorProto.STRING:
        return np.array([f"s{k}" for k in rng.integers(0, 10, count)], dtype=object).reshape(dims)
    if elem_type == TensorProto.BOOL:
        return rng.integers(0, 2, count).astype(bool).reshape(dims)
    if np.issubdtype(np_type, np.floating):
        return rng.uniform(-1, 1, count).astype(np_type).reshape(dims)
    return rng.integers(0, 10, count).astype(np_type).reshape(dims)


def graph_inputs(model) -> List[Tuple[str, int, List]]:
    """(name, elem_type, shape) of the graph inputs that are not
    initializers; a dim is an int, or a str for a symbolic/unknown one."""
    inits = {t.name for t in model.graph.initializer}
    out = []
    for i in model.graph.input:
        if i.name in inits:
            continue
        tt = i.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
        out.append((i.name, tt.elem_type, shape))
    return out


def td_feeds(model_path: pathlib.Path, model) -> Tuple[Optional[Dict[str, np.ndarray]], str]:
    """(feeds, "") from the model's test_data_set_0/input_*.pb in graph
    input order, or (None, why not): a graph input that is not a tensor
    (sequence, optional, map: input_*.pb is then no TensorProto), a
    bfloat16 / float8 / 4-bit input (numpy feeds cannot carry it), or
    input files that do not match the graph inputs."""
    inputs = []
    for i in model.graph.input:
        if i.name in {t.name for t in model.graph.initializer}:
            continue
        kind = i.type.WhichOneof("value")
        if kind != "tensor_type":
            return None, f"{kind}-typed input '{i.name}'"
        if i.type.tensor_type.elem_type in _BITS or i.type.tensor_type.elem_type in PACKED:
            return None, f"input '{i.name}' of data type {i.type.tensor_type.elem_type} (no numpy feed)"
        inputs.append(i.name)
    pbs = glob.glob(str(model_path.parent / "test_data_set_0" / "input_*.pb"))
    pbs.sort(key=lambda p: int(re.search(r"input_(\d+)\.pb$", p).group(1)))
    if len(pbs) != len(inputs):
        return None, f"{len(pbs)} input_*.pb for {len(inputs)} graph inputs"
    return {name: numpy_helper.to_array(onnx.load_tensor(pb)) for name, pb in zip(inputs, pbs)}, ""


def same_outputs(a: List, b: List) -> Optional[str]:
    """None when two lists of ORT outputs are bit-identical, else what differs."""
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for k, (x, y) in enumerate(zip(a, b)):
        if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
            if repr(x) != repr(y):
                return f"output {k}: {x!r} vs {y!r}"
            continue
        if x.dtype != y.dtype or x.shape != y.shape:
            return f"output {k}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
        if x.dtype == object:
            if x.reshape(-1).tolist() != y.reshape(-1).tolist():
                return f"output {k}: strings differ"
        elif np.ascontiguousarray(x).tobytes() != np.ascontiguousarray(y).tobytes():
            return f"output {k}: bytes differ"
    return None


# ---- generated models ------------------------------------------------------------------

def raw_tensor(name: str, data_type: int, dims, data: bytes) -> TensorProto:
    """A TensorProto with raw_data, built field by field (onnx 1.12's helpers
    refuse the types it does not know)."""
    t = TensorProto()
    t.name, t.data_type = name, data_type
    t.dims.extend(dims)
    t.raw_data = data
    return t


def typed_tensor(name: str, data_type: int, dims, field: str, values) -> TensorProto:
    t = TensorProto()
    t.name, t.data_type = name, data_type
    t.dims.extend(dims)
    getattr(t, field).extend(values)
    return t


# data type -> (raw element bytes, typed field or None, typed values from rng)
def _typed_values(rng, data_type: int, count: int):
    if data_type in (1, 14):
        return "float_data", rng.standard_normal(count * (2 if data_type == 14 else 1)).astype(np.float32).tolist()
    if data_type in (11, 15):
        return "double_data", rng.standard_normal(count * (2 if data_type == 15 else 1)).tolist()
    if data_type == 7:
        return "int64_data", rng.integers(-2**62, 2**62, count).tolist()
    if data_type == 6:
        return "int32_data", rng.integers(-2**31, 2**31, count).tolist()
    if data_type in (12, 13):
        return "uint64_data", rng.integers(0, 2**32 if data_type == 12 else 2**63, count, dtype=np.uint64).tolist()
    if data_type == 9:
        return "int32_data", rng.integers(0, 2, count).tolist()
    if data_type in (2, 17, 18, 19, 20, 24):
        return "int32_data", rng.integers(0, 256, count).tolist()
    if data_type == 3:
        return "int32_data", rng.integers(-128, 128, count).tolist()
    if data_type in (4, 10, 16):
        return "int32_data", rng.integers(0, 65536, count).tolist()
    if data_type == 5:
        return "int32_data", rng.integers(-32768, 32768, count).tolist()
    if data_type in PACKED:  # packed bytes, one per int32, as onnx.helper.make_tensor stores them
        per = 8 // PACKED[data_type]
        return "int32_data", rng.integers(0, 256, (count + per - 1) // per).tolist()
    raise AssertionError(data_type)


def _raw_bytes(rng, data_type: int, count: int) -> bytes:
    if data_type in PACKED:
        per = 8 // PACKED[data_type]
        return rng.integers(0, 256, (count + per - 1) // per, dtype=np.uint8).tobytes()
    if data_type == 9:
        return rng.integers(0, 2, count, dtype=np.uint8).tobytes()
    size = np.dtype(_PLAIN[data_type]).itemsize if data_type in _PLAIN else np.dtype(_BITS[data_type][1]).itemsize
    return rng.integers(0, 256, count * size, dtype=np.uint8).tobytes()


ALL_TYPES = sorted(set(_PLAIN) | set(_BITS) | set(PACKED))


def dtype_tensors(counts=(5, 1201), seed: int = 1) -> List[TensorProto]:
    """Tensors of every numeric ONNX type up to INT2, in raw_data and in its
    typed field, of each element count in ``counts`` (5: under any threshold;
    1201: over 1 KiB for all but the packed types), plus STRING, empty and
    scalar tensors, and float32 NaNs with payloads."""
    rng = np.random.default_rng(seed)
    out = []
    for dt in ALL_TYPES:
        for n in counts:
            dims = [n] if dt in PACKED or n < 100 else [1, n]
            out.append(raw_tensor(f"raw_{dt}_{n}", dt, dims, _raw_bytes(rng, dt, n)))
            field, values = _typed_values(rng, dt, n)
            out.append(typed_tensor(f"typed_{dt}_{n}", dt, dims, field, values))
    out.append(typed_tensor("strings", TensorProto.STRING, [2, 2], "string_data",
                            [b"a", b"", b"\x00\xff", b"long" * 400]))
    out.append(raw_tensor("empty_f32", TensorProto.FLOAT, [0, 3], b""))
    out.append(typed_tensor("empty_i64", TensorProto.INT64, [0], "int64_data", []))
    out.append(raw_tensor("scalar_f64", TensorProto.DOUBLE, [], np.float64(2.5).tobytes()))
    nans = np.array([0x7FC00001, 0xFFC12345, 0x7F800001, 0x00000001] * 300, dtype="<u4")
    out.append(raw_tensor("nan_payloads", TensorProto.FLOAT, [1200], nans.tobytes()))
    return out


def float6_tensors(counts=(1, 3, 4, 5, 9, 700), seed: int = 3) -> List[TensorProto]:
    """FLOAT6E2M3 / FLOAT6E3M2 tensors (kept out of dtype_tensors, whose
    users enumerate ALL_TYPES): raw_data (a 6-bit stream) and int32_data
    (one element per value) of each count."""
    rng = np.random.default_rng(seed)
    out = []
    for dt in sorted(SIX_BIT):
        for n in counts:
            values = rng.integers(0, 64, n)
            out.append(raw_tensor(f"raw_{dt}_{n}", dt, [n], _pack(values.astype(np.uint8), 6).tobytes()))
            out.append(typed_tensor(f"typed_{dt}_{n}", dt, [n], "int32_data", values.tolist()))
    return out


def model_of(initializers, nodes=(), inputs=(), outputs=(), opset: int = 13, **kw) -> onnx.ModelProto:
    """A ModelProto around a graph (ir_version 8: readable by onnx 1.12)."""
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kw)
    model.ir_version = 8
    return model


def matmul_model(n: int, m: int, seed: int) -> onnx.ModelProto:
    """y = x @ W + B: W n x m float32 and B m float32, drawn from
    np.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((n, m)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "B")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["y"])]
    return model_of([w, b], nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m])])


def _floats(n: int, seed: float) -> np.ndarray:
    return (np.arange(n, dtype=np.float32) * np.float32(0.001 * seed) - np.float32(0.25 * seed)).astype(np.float32)


def _const(output: str, tensor_name: str, values: np.ndarray):
    return helper.make_node("Constant", [], [output], value=numpy_helper.from_array(values, tensor_name))


def structure_model(n: int = 300) -> onnx.ModelProto:
    """A valid model (onnx.checker) with tensors everywhere the walk goes:
    initializers, a sparse initializer, Constant attribute tensors in the
    main graph (one of them a sparse_value), in both If branches (the same TensorProto name "W" in each,
    and the main graph's initializer "W" too) and in a Loop body (with its
    own initializer), and a Constant inside a model-local function. Every
    float tensor has ``n`` elements (1200 bytes at the default n: over the
    default threshold); small int64 shape-like constants stay under it.

    Y = F(X + W + c_main + (cond ? then_W : else_W) + sparse_c) where
    F(x) = x + fn_c, and Z a Loop of 2 iterations adding loop_c and loop_k;
    the sparse initializer is not used (onnx.checker refuses a sparse input
    to Add)."""
    fl = onnx.TensorProto.FLOAT
    branches = {}
    for b, seed in (("then", 5), ("else", 7)):
        branches[b] = helper.make_graph([_const(f"{b}_out", "W", _floats(n, seed))], f"{b}_g", [],
                                        [helper.make_tensor_value_info(f"{b}_out", fl, [n])])
    loop_body = helper.make_graph(
        [helper.make_node("Add", ["z_in", "loop_c"], ["z_add"]),
         helper.make_node("Identity", ["loop_cond_in"], ["loop_cond_out"]),
         _const("loop_k", "loop_k", _floats(n, 3)),
         helper.make_node("Add", ["z_add", "loop_k"], ["z_out"])],
        "body",
        [helper.make_tensor_value_info("iter", onnx.TensorProto.INT64, []),
         helper.make_tensor_value_info("loop_cond_in", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("z_in", fl, [n])],
        [helper.make_tensor_value_info("loop_cond_out", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("z_out", fl, [n])],
        initializer=[numpy_helper.from_array(_floats(n, 11), "loop_c")])
    fn = helper.make_function("local", "AddC", ["x"], ["y"],
                              [_const("fn_c", "fn_c", _floats(n, 13)), helper.make_node("Add", ["x", "fn_c"], ["y"])],
                              [helper.make_opsetid("", 13)])
    sparse_values = numpy_helper.from_array(_floats(n, 17), "sparse")
    sparse_indices = numpy_helper.from_array(np.arange(0, 2 * n, 2, dtype=np.int64), "sparse_indices")
    sparse = helper.make_sparse_tensor(sparse_values, sparse_indices, [2 * n])
    const_values = numpy_helper.from_array(_floats(n // 2, 19), "sparse_c")
    const_indices = numpy_helper.from_array(np.arange(0, n, 2, dtype=np.int64), "sparse_c_indices")
    const_sparse = helper.make_sparse_tensor(const_values, const_indices, [n])
    nodes = [
        _const("c_main", "c_main", _floats(n, 2)),
        _const("shape", "shape", np.array([n], dtype=np.int64)),
        helper.make_node("Add", ["X", "W"], ["a1"]),
        helper.make_node("Add", ["a1", "c_main"], ["a2"]),
        helper.make_node("If", ["cond"], ["branch"], then_branch=branches["then"], else_branch=branches["else"]),
        helper.make_node("Add", ["a2", "branch"], ["a3"]),
        helper.make_node("Constant", [], ["sparse_c"], sparse_value=const_sparse),
        helper.make_node("Add", ["a3", "sparse_c"], ["a4"]),
        helper.make_node("Reshape", ["a4", "shape"], ["a5"]),
        helper.make_node("AddC", ["a5"], ["Y"], domain="local"),
        helper.make_node("Loop", ["trips", "cond", "a5"], ["Z"], body=loop_body),
    ]
    graph = helper.make_graph(
        nodes, "structure",
        [helper.make_tensor_value_info("X", fl, [n]), helper.make_tensor_value_info("cond", onnx.TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("Y", fl, [n]), helper.make_tensor_value_info("Z", fl, [n])],
        initializer=[numpy_helper.from_array(_floats(n, 1), "W"), numpy_helper.from_array(np.int64(2), "trips")],
        sparse_initializer=[sparse])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("local", 1)],
                              functions=[fn])
    model.ir_version = 8
    return model


def assert_models_equal(got, want, what: str) -> None:
    """``got`` equals ``want`` after normalize(), except that a tensor whose
    payload is in a typed field (float_data, int32_data, ...) in ``want`` may
    have it in raw_data in ``got`` (onnxzip stores typed payloads over the
    threshold as raw entries): those are compared through expected_array
    (to_array: same dtype, shape and bits), then taken as equal."""
    got, want = normalize(got), normalize(want)
    gts, wts = list(iter_tensors(got)), list(iter_tensors(want))
    assert len(gts) == len(wts), f"{what}: {len(gts)} tensors, expected {len(wts)}"
    for k, (g, w) in enumerate(zip(gts, wts)):
        if g == w:
            continue
        where = f"{what}: tensor #{k} '{w.name}'"
        assert (g.name, g.data_type, list(g.dims)) == (w.name, w.data_type, list(w.dims)), where
        assert g.HasField("raw_data") and not w.HasField("raw_data"), \
            f"{where} differs: got fields {[f.name for f, _ in g.ListFields()]}, " \
            f"expected {[f.name for f, _ in w.ListFields()]}"
        a, b = expected_array(g), expected_array(w)
        assert (a.dtype, a.shape, a.tobytes()) == (b.dtype, b.shape, b.tobytes()), \
            f"{where}: typed -> raw changed the values"
        g.CopyFrom(w)
    if got != want:
        diff = [fd.name for fd in type(want).DESCRIPTOR.fields if getattr(got, fd.name) != getattr(want, fd.name)]
        raise AssertionError(f"{what}: models differ in ModelProto fields {diff}")
