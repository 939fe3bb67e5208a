"""The Archive API surface: what onnxzip.open() accepts, the three layouts,
Archive.tensors as a read-only Mapping, tensor_infos / info / entries,
model_bytes, model(), view() / write_view(), verify(), check(), extract(),
the errors (onnxzip.Error with status, code, offset and a message naming the
file), the closed state, the context manager and repr."""
import json
import os
import pathlib
import shutil
import subprocess
import zlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip
from _helpers import address, buffer_range, file_mappings, inside, model_of

W = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) * 0.5  # 16 KiB: an entry
U = (np.arange(3000, dtype=np.int64) * 7 - 5000).astype(np.int16)  # 6000 bytes: an entry
B = np.array([1.5, -2.0, 3.25, 0.0], dtype=np.float32)  # 16 bytes: inline
EXPECTED = {"w": W, "u": U, "b": B}


def make_model() -> onnx.ModelProto:
    return model_of([numpy_helper.from_array(W, "w"), numpy_helper.from_array(U, "u"),
                     numpy_helper.from_array(B, "b")],
                    nodes=[helper.make_node("Add", ["x", "b"], ["y"])],
                    inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                    outputs=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])


@pytest.fixture
def archive_path(tmp_path) -> pathlib.Path:
    path = tmp_path / "model.onnxzip"
    onnxzip.save(make_model(), path)
    return path


@pytest.fixture
def classic_path(tmp_path) -> pathlib.Path:
    path = tmp_path / "classic.onnx"
    onnx.save(make_model(), str(path))
    return path


@pytest.fixture
def external_path(tmp_path) -> pathlib.Path:
    path = tmp_path / "ext" / "external.onnx"
    path.parent.mkdir()
    onnx.save_model(make_model(), str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="external.onnx.data", size_threshold=1024)
    return path


def check_tensors(a: onnxzip.Archive) -> None:
    assert set(a.tensors) == set(EXPECTED)
    for name, want in EXPECTED.items():
        got = a.tensors[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert np.array_equal(got, want), name
        assert not got.flags.writeable, name


# ---- open() sources --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["str", "pathlib", "bytes", "bytearray", "memoryview"])
def test_open_sources(archive_path, kind):
    data = archive_path.read_bytes()
    source = {"str": str(archive_path), "pathlib": archive_path, "bytes": data, "bytearray": bytearray(data),
              "memoryview": memoryview(data)}[kind]
    with onnxzip.open(source) as a:
        assert a.layout == "archive"
        check_tensors(a)
        if kind in ("str", "pathlib"):
            assert a.path == str(archive_path)
            ranges = file_mappings(archive_path)
        else:  # borrowed: the arrays point into the caller's buffer
            assert a.path is None
            ranges = [buffer_range(source)]
        for name in ("w", "u"):
            assert inside(a.tensors[name], ranges), f"{kind}: tensor {name} is not inside the source's memory"


def test_layouts(archive_path, classic_path, external_path):
    expected = {archive_path: ("archive", "entry"), classic_path: ("classic", "inline"),
                external_path: ("external", "file")}
    for path, (layout, big_storage) in expected.items():
        with onnxzip.open(path) as a:
            assert a.layout == layout, path
            check_tensors(a)
            assert a.info("w").storage == big_storage, path
            assert a.info("b").storage == "inline", path
            # every payload with a view is inside one mapping of its file
            where = path.parent / "external.onnx.data" if layout == "external" else path
            assert inside(a.tensors["w"], file_mappings(where)), path
            if layout != "archive":
                assert a.entries == [], path


# ---- tensors: a Mapping ------------------------------------------------------------


def test_tensors_mapping(archive_path):
    with onnxzip.open(archive_path) as a:
        t = a.tensors
        assert len(t) == 3
        assert list(t) == ["w", "u", "b"]  # model order
        assert "w" in t and "nope" not in t and 3 not in t
        with pytest.raises(KeyError):
            t["nope"]
        with pytest.raises(KeyError):
            a.info("nope")
        with pytest.raises(KeyError):
            a.array("nope")
        assert t.get("nope") is None
        assert sorted(t.keys()) == ["b", "u", "w"]
        assert all(np.array_equal(v, EXPECTED[k]) for k, v in t.items())
        with pytest.raises(TypeError):
            t["w"] = W  # read-only mapping
        # array() by name, index and TensorInfo give the same data
        info = a.info("u")
        assert np.array_equal(a.array("u"), U) and np.array_equal(a.array(info.index), U)
        assert np.array_equal(a.array(info), U)
        with pytest.raises(IndexError):
            a.array(len(a.tensor_infos))


def test_repeated_names_first_wins(tmp_path):
    # the same name in the main graph and in a Constant's attribute: both
    # are in tensor_infos, tensors[name] is the first in model order
    first = np.full(300, 1.0, dtype=np.float32)
    second = np.full(300, 2.0, dtype=np.float32)
    const = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(first, "dup"))
    model = model_of([numpy_helper.from_array(second, "dup")], nodes=[const],
                     outputs=[helper.make_tensor_value_info("c", TensorProto.FLOAT, [300])])
    path = tmp_path / "dup.onnxzip"
    onnxzip.save(model, path)
    with onnxzip.open(path) as a:
        infos = a.tensor_infos
        assert [i.name for i in infos] == ["dup", "dup"]
        assert [i.kind for i in infos] == ["attribute", "initializer"]
        assert len(a.tensors) == 1
        assert np.array_equal(a.tensors["dup"], first)
        assert a.info("dup") == infos[0]
        assert np.array_equal(a.array(1), second)


def test_tensor_infos(archive_path):
    data = archive_path.read_bytes()
    with onnxzip.open(archive_path) as a:
        infos = a.tensor_infos
        assert [i.name for i in infos] == ["w", "u", "b"]
        w, u, b = infos
        assert (w.data_type, w.shape, w.nbytes, w.storage, w.kind, w.graph_depth) == \
            (TensorProto.FLOAT, (64, 64), W.nbytes, "entry", "initializer", 0)
        assert w.dtype_name == "FLOAT" and u.dtype_name == "INT16"
        assert w.entry == "w" and b.entry is None
        assert (b.storage, b.nbytes) == ("inline", B.nbytes)
        for i in infos:  # offset: where the bytes are in the file
            assert data[i.offset:i.offset + i.nbytes] == EXPECTED[i.name].tobytes(), i.name
            assert address(a.tensors[i.name]) % i.alignment == 0, i.name
        assert w.alignment >= 64 and u.alignment >= 64
        infos.clear()  # a copy: the archive's list is unchanged
        assert len(a.tensor_infos) == 3


def _file_alignment(offset):
    """The largest power of two (<= 65536; 65536 for 0) dividing offset."""
    return 65536 if offset == 0 else min(offset & -offset, 65536)


@pytest.mark.parametrize("as_json", [False, True])
def test_listing_is_ls(archive_path, onnxzip_cli, as_json):
    """Archive.listing() is what `onnxzip ls [--json]` prints; from a buffer
    at addresses of other alignments (tensor views there, and
    TensorInfo.alignment with them, differ) it is the same text but for the
    archive's name; every alignment in it is the file offset's."""
    p = subprocess.run([str(onnxzip_cli), "ls", str(archive_path)] + (["--json"] if as_json else []),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    with onnxzip.open(archive_path) as a:
        assert a.listing(json=as_json) == p.stdout
        if as_json:
            listed = json.loads(p.stdout)["tensors"]
            assert [t["alignment"] for t in listed] == [_file_alignment(i.offset) for i in a.tensor_infos]
    data = np.frombuffer(archive_path.read_bytes(), np.uint8)
    shown = str(archive_path) if not as_json else json.dumps(str(archive_path))[1:-1]
    addresses = set()
    for shift in (1, 2, 8, 16, 48):
        room = np.zeros(len(data) + 4096 + 64, np.uint8)
        buf = room[(-address(room)) % 4096 + shift:][:len(data)]  # `shift` past a 4096-aligned address
        buf[:] = data
        with onnxzip.open(buf) as b:
            assert b.listing(as_json) == p.stdout.replace(shown, "<buffer>", 1), shift
            addresses.add(tuple(i.alignment for i in b.tensor_infos))
    assert len(addresses) > 1  # the struct's alignments moved with the buffer; the listing did not
    with onnxzip.open(archive_path) as a, pytest.raises(TypeError, match="json must be a bool, not str"):
        a.listing("yes")


@pytest.mark.parametrize("align", [64, 4096])
def test_entries(tmp_path, align):
    path = tmp_path / "a.onnxzip"
    onnxzip.save(make_model(), path, align=align)
    data = path.read_bytes()
    with onnxzip.open(path) as a:
        entries = a.entries
        assert [e.name for e in entries] == ["w", "u", "__MODEL_PROTO"]
        for e in entries:
            payload = data[e.data_offset:e.data_offset + e.size]
            assert e.header_offset < e.data_offset
            assert zlib.crc32(payload) == e.crc32, e.name
            if e.name != "__MODEL_PROTO":
                assert e.data_offset % align == 0, e.name
                assert payload == EXPECTED[e.name].tobytes()
        assert entries[-1].size == len(a.model_bytes)


# ---- the model --------------------------------------------------------------------


def test_model_bytes(archive_path, classic_path):
    data = archive_path.read_bytes()
    with onnxzip.open(archive_path) as a:
        mb = a.model_bytes
        assert isinstance(mb, memoryview) and mb.readonly
        with pytest.raises(TypeError):
            mb[0] = 0
        last = a.entries[-1]
        assert bytes(mb) == data[last.data_offset:last.data_offset + last.size]
        m = onnx.ModelProto()
        m.ParseFromString(bytes(mb))
        assert [t.name for t in m.graph.initializer] == ["w", "u", "b"]
    with onnxzip.open(classic_path) as a:
        assert bytes(a.model_bytes) == classic_path.read_bytes()


def test_model(archive_path):
    with onnxzip.open(archive_path) as a:
        m = a.model()
        assert isinstance(m, onnx.ModelProto)
        init = {t.name: t for t in m.graph.initializer}
        for name in ("w", "u"):  # references to the entries
            t = init[name]
            assert t.data_location == TensorProto.EXTERNAL and not t.raw_data
            assert {kv.key: kv.value for kv in t.external_data}["location"] == name
        assert np.array_equal(numpy_helper.to_array(init["b"]), B)
        full = a.model(load_data=True)
        for t in full.graph.initializer:
            assert t.data_location != TensorProto.EXTERNAL and len(t.external_data) == 0, t.name
            assert np.array_equal(numpy_helper.to_array(t), EXPECTED[t.name]), t.name
        assert full.graph.node == make_model().graph.node
        # model() is a new message each time: changing one changes nothing else
        full.graph.initializer[0].raw_data = b""
        assert np.array_equal(numpy_helper.to_array(a.model(load_data=True).graph.initializer[0]), W)


def external_keys(t) -> dict:
    return {kv.key: kv.value for kv in t.external_data}


def test_view(archive_path):
    data = archive_path.read_bytes()
    with onnxzip.open(archive_path) as a:
        view = onnx.ModelProto()
        view.ParseFromString(a.view())
        init = {t.name: t for t in view.graph.initializer}
        for name in ("w", "u"):
            t = init[name]
            assert t.data_location == TensorProto.EXTERNAL, name
            keys = external_keys(t)
            assert keys["location"] == archive_path.name
            off, length = int(keys["offset"]), int(keys["length"])
            assert (off, length) == (a.info(name).offset, EXPECTED[name].nbytes)
            assert data[off:off + length] == EXPECTED[name].tobytes(), name
        assert init["b"].data_location != TensorProto.EXTERNAL
        assert np.array_equal(numpy_helper.to_array(init["b"]), B)
        # another location; a threshold that makes u (6000 bytes) inline
        other = onnx.ModelProto()
        other.ParseFromString(a.view(location="elsewhere.onnxzip", size_threshold=8192))
        init = {t.name: t for t in other.graph.initializer}
        assert external_keys(init["w"])["location"] == "elsewhere.onnxzip"
        assert init["u"].data_location != TensorProto.EXTERNAL
        assert np.array_equal(numpy_helper.to_array(init["u"]), U)
        with pytest.raises(onnxzip.Error) as e:
            a.view(location="../escape.onnxzip")
        assert e.value.status == "EINVAL"


def test_view_of_buffer_needs_location(archive_path):
    with onnxzip.open(archive_path.read_bytes()) as a:
        with pytest.raises(onnxzip.Error) as e:
            a.view()
        assert e.value.status == "EINVAL"
        view = onnx.ModelProto()
        view.ParseFromString(a.view(location="x.onnxzip"))
        assert external_keys(view.graph.initializer[0])["location"] == "x.onnxzip"


def test_write_view(archive_path, tmp_path, classic_path):
    view_path = archive_path.with_name("model.view.onnx")
    with onnxzip.open(archive_path) as a:
        a.write_view(view_path)
        assert view_path.read_bytes() == a.view()
        loaded = onnx.load(str(view_path))  # reads the weights from the archive by offset
        for t in loaded.graph.initializer:
            assert np.array_equal(numpy_helper.to_array(t), EXPECTED[t.name]), t.name
        sub = tmp_path / "sub"
        sub.mkdir()
        with pytest.raises(onnxzip.Error) as e:  # not beside the archive
            a.write_view(sub / "v.onnx")
        assert e.value.status == "EPATH"
        assert not (sub / "v.onnx").exists()
    with onnxzip.open(classic_path) as a:
        with pytest.raises(onnxzip.Error) as e:  # a classic model is its own view
            a.write_view(classic_path.with_name("c.view.onnx"))
        assert e.value.status == "EINVAL"
        assert bytes(a.view()) == classic_path.read_bytes()


# ---- verify, check, extract ------------------------------------------------------------


def test_verify(archive_path, tmp_path):
    with onnxzip.open(archive_path) as a:
        assert a.verify() is None
        offset = a.info("u").offset
    onnxzip.verify(archive_path)
    bad = tmp_path / "bad.onnxzip"
    data = bytearray(archive_path.read_bytes())
    data[offset + 100] ^= 0x40
    bad.write_bytes(data)
    with onnxzip.open(bad) as a:  # open reads no payload
        assert np.array_equal(a.tensors["w"], W)
        with pytest.raises(onnxzip.Error) as e:
            a.verify()
    err = e.value
    assert (err.status, err.code, err.offset) == ("ECRC", -24, offset)
    assert str(bad) in str(err) and "'u'" in str(err)
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.open(bad, verify=True)
    assert e.value.status == "ECRC"
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.verify(bad)
    assert e.value.status == "ECRC"


def test_check_after_replace(archive_path, tmp_path):
    a = onnxzip.open(archive_path)
    w = a.tensors["w"]
    a.check()
    other = tmp_path / "other.onnxzip"
    m = make_model()
    m.graph.initializer[0].raw_data = (W + 1).tobytes()
    onnxzip.save(m, other)
    os.replace(other, archive_path)
    with pytest.raises(onnxzip.Error) as e:
        a.check()
    assert e.value.status == "ETRUNC" and e.value.code == -6
    assert str(archive_path) in str(e.value)
    assert np.array_equal(w, W)  # the views still show the old file
    assert np.array_equal(a.tensors["w"], W)
    a.close()
    with onnxzip.open(archive_path) as b:
        assert np.array_equal(b.tensors["w"], W + 1)


def test_extract(archive_path, tmp_path):
    with onnxzip.open(archive_path) as a:
        for name in EXPECTED:
            out = tmp_path / f"{name}.bin"
            a.extract(name, out)
            assert out.read_bytes() == EXPECTED[name].tobytes(), name
        with pytest.raises(onnxzip.Error) as e:
            a.extract("nope", tmp_path / "nope.bin")
        assert e.value.status == "ENOTFOUND"
        assert not (tmp_path / "nope.bin").exists()


# ---- errors -----------------------------------------------------------------------------


def open_error(source) -> onnxzip.Error:
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.open(source)
    err = e.value
    assert isinstance(err, onnxzip.Error) and isinstance(err, Exception)
    assert isinstance(err.status, str) and isinstance(err.code, int) and isinstance(err.offset, int)
    assert err.code < 0
    return err


def test_open_errors(tmp_path, archive_path):
    missing = tmp_path / "missing.onnxzip"
    err = open_error(missing)
    assert (err.status, err.code, err.offset) == ("EIO", -3, -1)
    assert str(missing) in str(err)

    err = open_error(tmp_path)  # a directory
    assert err.status in ("EINVAL", "ENOTREG") and str(tmp_path) in str(err)
    assert "not a regular file" in str(err)

    data = archive_path.read_bytes()
    truncated = tmp_path / "truncated.onnxzip"
    truncated.write_bytes(data[:len(data) // 2])
    err = open_error(truncated)
    assert (err.status, err.code) == ("ETRUNC", -6) and str(truncated) in str(err)  # a cut download, so named
    assert f"truncated: {len(data) // 2} bytes, but its local headers describe at least " in str(err)

    garbage = tmp_path / "garbage.onnxzip"
    garbage.write_bytes(b"\xff\xfegarbage" * 100)
    err = open_error(garbage)
    assert err.status == "ENOTZIP" and str(garbage) in str(err)
    err = open_error(b"\xff\xfegarbage" * 100)
    assert err.status == "ENOTZIP" and "buffer" in str(err)

    # an error at an offset: the first local header's signature broken
    bad = tmp_path / "badlocal.onnxzip"
    bad.write_bytes(b"XXXX" + data[4:])
    err = open_error(bad)
    assert (err.status, err.code, err.offset) == ("ELOCAL", -10, 0)
    assert str(bad) in str(err) and "'w'" in str(err)

    with pytest.raises(TypeError):
        onnxzip.open(12345)


def test_error_class():
    assert issubclass(onnxzip.Error, Exception)
    assert onnxzip.Error.__module__ == "onnxzip"
    e = onnxzip.Error("msg", status="ECRC", code=-24, offset=7)
    assert (str(e), e.status, e.code, e.offset) == ("msg", "ECRC", -24, 7)


# ---- closed, with, repr --------------------------------------------------------------


CLOSED_CALLS = {
    "layout": lambda a, p: a.layout,
    "tensor_infos": lambda a, p: a.tensor_infos,
    "info": lambda a, p: a.info("w"),
    "entries": lambda a, p: a.entries,
    "model_bytes": lambda a, p: a.model_bytes,
    "model": lambda a, p: a.model(),
    "model_load": lambda a, p: a.model(load_data=True),
    "view": lambda a, p: a.view(),
    "write_view": lambda a, p: a.write_view(p.with_name("v.onnx")),
    "verify": lambda a, p: a.verify(),
    "check": lambda a, p: a.check(),
    "extract": lambda a, p: a.extract("w", p.with_name("w.bin")),
    "array_name": lambda a, p: a.array("w"),
    "array_index": lambda a, p: a.array(0),
    "tensors_getitem": lambda a, p: a.tensors["w"],
    "tensors_get": lambda a, p: a.tensors.get("w"),
    "tensors_len": lambda a, p: len(a.tensors),
    "tensors_iter": lambda a, p: list(a.tensors),
    "tensors_contains": lambda a, p: "w" in a.tensors,
}


@pytest.mark.parametrize("call", sorted(CLOSED_CALLS))
def test_closed_raises_value_error(archive_path, call):
    a = onnxzip.open(archive_path)
    a.close()
    assert a.closed
    with pytest.raises(ValueError):
        CLOSED_CALLS[call](a, archive_path)
    a.close()  # twice: harmless
    assert not archive_path.with_name("v.onnx").exists() and not archive_path.with_name("w.bin").exists()


def test_context_manager(archive_path):
    with onnxzip.open(archive_path) as a:
        assert not a.closed
        w = a.tensors["w"]
    assert a.closed
    assert np.array_equal(w, W)
    with pytest.raises(RuntimeError):
        with onnxzip.open(archive_path) as b:
            raise RuntimeError("inside")
    assert b.closed


def test_repr(archive_path):
    a = onnxzip.open(archive_path)
    r = repr(a)
    assert str(archive_path) in r and "archive" in r and "3 tensors" in r
    a.close()
    assert "closed" in repr(a) and str(archive_path) in repr(a)
    with onnxzip.open(archive_path.read_bytes()) as b:
        assert "(buffer)" in repr(b)
    assert "3" in repr(onnxzip.open(archive_path).tensors)


def test_copy_of_archive_is_independent(archive_path, tmp_path):
    # two handles on two files with the same content map separately
    copy = tmp_path / "copy.onnxzip"
    shutil.copyfile(archive_path, copy)
    with onnxzip.open(archive_path) as a, onnxzip.open(copy) as b:
        assert np.array_equal(a.tensors["w"], b.tensors["w"])
        assert address(a.tensors["w"]) != address(b.tensors["w"])
        assert inside(b.tensors["w"], file_mappings(copy))
