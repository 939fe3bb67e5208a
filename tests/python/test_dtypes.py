"""Every ONNX data type through onnxzip.save / onnxzip.open and through a
classic .onnx: the numpy dtype of each array (ml_dtypes' bfloat16 / float8
when it is importable, else the documented uint16 / uint8 bit patterns,
also forced by hiding ml_dtypes from the package), packed 4-bit and 2-bit
types as their raw uint8 bytes with the logical shape in info(), STRING as
an object array of bytes, typed-field tensors (float_data, int32_data, ...)
decoded equal to onnx.numpy_helper.to_array, and little-endian dtypes.
FLOAT6E2M3 / FLOAT6E3M2 (onnx >= 1.23) as their packed bytes, typed or raw."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto

import onnxzip
from _helpers import (ALL_TYPES, PACKED, assert_same_array, dtype_tensors, iter_tensors, model_of, raw_tensor,
                      typed_tensor)

try:
    import ml_dtypes
except ImportError:  # Debian's python3
    ml_dtypes = None

# The package's documented dtypes, written out here independently.
PLAIN = {1: "<f4", 2: "|u1", 3: "|i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 9: "|b1", 10: "<f2", 11: "<f8",
         12: "<u4", 13: "<u8", 14: "<c8", 15: "<c16"}
ML = {16: ("bfloat16", "<u2"), 17: ("float8_e4m3fn", "|u1"), 18: ("float8_e4m3fnuz", "|u1"),
      19: ("float8_e5m2", "|u1"), 20: ("float8_e5m2fnuz", "|u1"), 24: ("float8_e8m0fnu", "|u1")}


def expected_dtype(dt: int, with_ml: bool) -> np.dtype:
    if dt in PLAIN:
        return np.dtype(PLAIN[dt])
    if dt in PACKED:
        return np.dtype(np.uint8)
    name, bits = ML[dt]
    ml = getattr(ml_dtypes, name, None) if with_ml and ml_dtypes is not None else None
    return np.dtype(ml) if ml is not None else np.dtype(bits)


def test_type_table_covers_all():
    # every code the tests walk: 1..26 but STRING (own test) and UNDEFINED
    assert sorted(set(PLAIN) | set(ML) | set(PACKED)) == ALL_TYPES == [c for c in range(1, 27) if c != 8]


@pytest.fixture(scope="module")
def every_type(tmp_path_factory):
    """The generated tensors (raw and typed, 5 and 1201 elements, of every
    type; STRING, empty, scalar, NaN payloads) saved as an archive and as a
    classic .onnx."""
    d = tmp_path_factory.mktemp("dtypes")
    model = model_of(dtype_tensors())
    archive, classic = d / "all.onnxzip", d / "all.onnx"
    onnxzip.save(model, archive)
    onnx.save(model, str(classic))
    return model, archive, classic


@pytest.mark.parametrize("layout", ["archive", "classic"])
def test_every_type_values_and_dtypes(every_type, layout):
    model, archive, classic = every_type
    tensors = list(iter_tensors(model))
    storages = set()
    with onnxzip.open(archive if layout == "archive" else classic) as a:
        infos = a.tensor_infos
        assert [i.name for i in infos] == [t.name for t in tensors]
        for info, t in zip(infos, tensors):
            got = a.array(info)
            what = f"{layout}: {t.name}"
            assert_same_array(got, t, what)  # dtype, shape and bytes of the oracle
            assert not got.flags.writeable, what
            assert info.shape == tuple(t.dims), what
            if t.data_type != TensorProto.STRING:
                assert got.dtype == expected_dtype(t.data_type, with_ml=True), what
                assert got.dtype.str[0] in "<|", f"{what}: dtype {got.dtype.str} is not little-endian"
            storages.add(info.storage)
            typed = t.name.startswith("typed_")
            if layout == "classic" and typed and len(t.string_data) == 0:
                assert info.storage == "typed", what
            if layout == "archive" and typed and t.name.endswith("_5"):  # under the threshold: kept typed
                assert info.storage == "typed", what
            if layout == "archive" and t.name.endswith("_1201") and t.data_type not in PACKED:
                assert info.storage == "entry", what  # >= 1201 bytes: an entry, typed fields converted
    assert storages >= {"typed", "inline"} | ({"entry"} if layout == "archive" else set())


def test_without_ml_dtypes(every_type, monkeypatch):
    # what the package documents when ml_dtypes is missing: bit patterns
    monkeypatch.setattr(onnxzip._dtypes, "_ml", None)
    model, archive, _ = every_type
    with onnxzip.open(archive) as a:
        for t in iter_tensors(model):
            if t.data_type not in ML:
                continue
            got = a.tensors[t.name]
            bits = np.dtype(ML[t.data_type][1])
            assert got.dtype == bits, t.name
            want = t.raw_data if t.raw_data else \
                (np.asarray(t.int32_data, dtype=np.int64) & ((1 << 8 * bits.itemsize) - 1)).astype(bits).tobytes()
            assert got.tobytes() == want, t.name
            assert onnxzip._dtypes.is_bit_pattern(t.data_type)


# bit patterns and their values: bfloat16 1, -2, inf; float8 e4m3fn 1, -1.5;
# e5m2 1, -2; e8m0 2^0, 2^1
KNOWN_VALUES = {
    16: ([0x3F80, 0xC000, 0x7F80], [1.0, -2.0, np.inf]),
    17: ([0x38, 0xBC], [1.0, -1.5]),
    19: ([0x3C, 0xC0], [1.0, -2.0]),
    24: ([0x7F, 0x80], [1.0, 2.0]),
}


@pytest.mark.parametrize("dt", sorted(KNOWN_VALUES))
def test_ml_dtypes_values(tmp_path, dt):
    bits, values = KNOWN_VALUES[dt]
    unsigned = np.dtype(ML[dt][1])
    raw = np.array(bits, dtype=unsigned).tobytes()
    path = tmp_path / "v.onnxzip"
    onnxzip.save(model_of([raw_tensor("r", dt, [len(bits)], raw),
                           typed_tensor("t", dt, [len(bits)], "int32_data", bits)]), path)
    with onnxzip.open(path) as a:
        for name in ("r", "t"):
            got = a.tensors[name]
            assert got.tobytes() == raw, name
            name_ml = ML[dt][0]
            if ml_dtypes is not None and hasattr(ml_dtypes, name_ml):
                assert got.dtype == np.dtype(getattr(ml_dtypes, name_ml)), name
                assert got.astype(np.float32).tolist() == values, name
            else:  # no ml_dtypes (Debian): the bit patterns
                assert got.dtype == unsigned and got.tolist() == bits, name


@pytest.mark.parametrize("dt,dims,nbytes", [(22, [5], 3), (21, [2, 3], 3), (23, [7], 4), (25, [5], 2),
                                            (26, [3, 3], 3), (22, [1], 1), (21, [0], 0)])
@pytest.mark.parametrize("form", ["raw", "typed"])
def test_packed_types(tmp_path, dt, dims, nbytes, form):
    data = bytes((0x21 + 0x13 * k) & 0xFF for k in range(nbytes))
    t = raw_tensor("p", dt, dims, data) if form == "raw" else typed_tensor("p", dt, dims, "int32_data", list(data))
    path = tmp_path / "p.onnxzip"
    onnxzip.save(model_of([t]), path, size_threshold=0 if form == "raw" else 1024)
    with onnxzip.open(path) as a:
        got = a.tensors["p"]
        info = a.info("p")
        assert got.dtype == np.uint8 and got.shape == (nbytes,)
        assert got.tobytes() == data
        assert info.shape == tuple(dims)  # the logical shape
        assert info.storage == ("typed" if form == "typed" else "entry")  # size_threshold 0: even empty


def test_strings(tmp_path):
    values = [b"a", b"", b"\x00\xff not utf-8", "ünï".encode(), b"x" * 5000, b"last"]
    t = typed_tensor("s", TensorProto.STRING, [2, 3], "string_data", values)
    e = typed_tensor("none", TensorProto.STRING, [0], "string_data", [])
    path = tmp_path / "s.onnxzip"
    onnxzip.save(model_of([t, e]), path, size_threshold=0)  # strings never become entries
    with onnxzip.open(path) as a:
        got = a.tensors["s"]
        assert got.dtype == object and got.shape == (2, 3)
        assert all(type(x) is bytes for x in got.reshape(-1))
        assert got.reshape(-1).tolist() == values
        assert a.info("s").storage == "typed"
        empty = a.tensors["none"]
        assert empty.dtype == object and empty.shape == (0,)
        assert [x.name for x in a.entries] == ["__MODEL_PROTO"]


@pytest.mark.parametrize("dt", [1, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15])
def test_little_endian_bytes(tmp_path, dt):
    # raw_data is little-endian on every host: the array's dtype says '<'
    # and its bytes are the file's bytes
    dtype = np.dtype(PLAIN[dt])
    data = bytes(range(1, 1 + 3 * dtype.itemsize))
    path = tmp_path / "le.onnxzip"
    onnxzip.save(model_of([raw_tensor("x", dt, [3], data)]), path, size_threshold=0)
    with onnxzip.open(path) as a:
        got = a.tensors["x"]
        assert got.dtype.str == PLAIN[dt] and got.dtype.str.startswith("<")
        assert got.tobytes() == data
        assert onnxzip._dtypes.numpy_dtype(dt).str == PLAIN[dt]
        first = int.from_bytes(data[:dtype.itemsize], "little")
        if dtype.kind in "iu":
            assert int(got[0]) == first


def _float6_raw(values):
    """ONNX's raw form of 6-bit values (onnx.proto, TensorProto.raw_data),
    group by group as the proto's comment writes it."""
    out = bytearray()
    padded = list(values) + [0] * (-len(values) % 4)
    for i in range(0, len(padded), 4):
        x0, x1, x2, x3 = padded[i:i + 4]
        out += bytes([x0 | ((x1 & 0x3) << 6) & 0xFF, (x1 >> 2) | ((x2 & 0xF) << 4) & 0xFF, (x2 >> 4) | (x3 << 2) & 0xFF])
    return bytes(out[:(6 * len(values) + 7) // 8])


@pytest.mark.parametrize("dt", [27, 28])
@pytest.mark.parametrize("count", [1, 3, 4, 5, 9])
def test_float6(tmp_path, dt, count):
    # onnx 1.23's FLOAT6E2M3 (27) and FLOAT6E3M2 (28): packed four to three
    # bytes; typed int32_data holds one 6-bit value per entry
    values = [(7 * i + 5) % 64 for i in range(count)]
    raw = _float6_raw(values)
    assert len(raw) == -(-6 * count // 8)
    path = tmp_path / "f6.onnxzip"
    model = model_of([typed_tensor("typed6", dt, [count], "int32_data", values),
                      raw_tensor("raw6", dt, [count], raw)])
    onnxzip.save(model, path, size_threshold=0)
    with onnxzip.open(path) as a:
        for name in ("typed6", "raw6"):
            info = a.info(name)
            assert info.shape == (count,) and info.dtype_name == ("FLOAT6E2M3" if dt == 27 else "FLOAT6E3M2")
            got = a.tensors[name]
            assert got.dtype == np.uint8 and got.tobytes() == raw
    kept = tmp_path / "f6-typed.onnxzip"  # kept typed: decoded by the C library
    onnxzip.save(model, kept, size_threshold=1 << 20)
    with onnxzip.open(kept) as a:
        assert a.info("typed6").storage == "typed" and a.tensors["typed6"].tobytes() == raw
    classic = tmp_path / "f6.onnx"
    classic.write_bytes(model_of([raw_tensor("short6", dt, [count], raw[:-1])]).SerializeToString())
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.open(classic)
    assert e.value.status == "ESIZE" and "short6" in str(e.value) and str(classic) in str(e.value)
