"""Arguments are checked before they reach the C library: integers are
range-checked (never wrapped by PyArg's unsigned codes: -5 read as
2**64 - 5, 2**32 + 64 as 64), wrong types are TypeError, messages name the
argument; paths are str, bytes or os.PathLike everywhere; open() takes
mmap and numpy buffers; unpack's layout takes the CLI's spelling; negative
tensor indexes count from the end. The extension itself refuses what
would wrap, when called directly."""
import mmap
import os
import pathlib
import re
import zipfile

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import onnxzip
from _helpers import model_of

W = np.arange(2048, dtype=np.float32)  # 8 KiB: an entry under the default threshold
B = np.array([1.0, 2.0], dtype=np.float32)  # 8 bytes: inline


def make_model() -> onnx.ModelProto:
    return model_of([numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")])


@pytest.fixture
def classic(tmp_path) -> pathlib.Path:
    path = tmp_path / "classic.onnx"
    onnx.save(make_model(), str(path))
    return path


@pytest.fixture
def archive(tmp_path) -> pathlib.Path:
    path = tmp_path / "model.onnxzip"
    onnxzip.save(make_model(), path)
    return path


def entries(path) -> list:
    """The archive's entry names, read by Python's zipfile (an independent reader)."""
    with zipfile.ZipFile(path) as z:
        return sorted(z.namelist())


# -- integers ------------------------------------------------------------------

BAD_THRESHOLDS = [(-5, ValueError, "size_threshold must be >= 0, not -5"),
                  (2**64, ValueError, "size_threshold must be < 2**64"),
                  ("1K", TypeError, "size_threshold must be an integer, not str"),
                  (1.5, TypeError, "size_threshold must be an integer, not float"),
                  (True, TypeError, "size_threshold must be an integer, not bool"),
                  (None, TypeError, "size_threshold must be an integer, not NoneType")]
BAD_ALIGNS = [(2**32 + 64, "align must be a power of two between 64 and 65536, not 4294967360"),
              (-64, "align must be a power of two between 64 and 65536, not -64"),
              (96, "align must be a power of two between 64 and 65536, not 96"),
              (32, "align must be a power of two between 64 and 65536, not 32"),
              (131072, "align must be a power of two between 64 and 65536, not 131072")]


@pytest.mark.parametrize("value,exc,message", BAD_THRESHOLDS)
def test_pack_threshold_checked(classic, tmp_path, value, exc, message):
    out = tmp_path / "out.onnxzip"
    with pytest.raises(exc, match=re.escape(message)):
        onnxzip.pack(classic, out, size_threshold=value)
    assert not out.exists()


@pytest.mark.parametrize("value,exc,message", BAD_THRESHOLDS)
def test_save_threshold_checked(tmp_path, value, exc, message):
    out = tmp_path / "out.onnxzip"
    with pytest.raises(exc, match=re.escape(message)):
        onnxzip.save(make_model(), out, size_threshold=value)
    assert not out.exists() and os.listdir(tmp_path) == []  # no temporary file left either


@pytest.mark.parametrize("value,exc,message", BAD_THRESHOLDS)
def test_unpack_threshold_checked(archive, tmp_path, value, exc, message):
    out = tmp_path / "u" / "m.onnx"
    with pytest.raises(exc, match=re.escape(message)):
        onnxzip.unpack(archive, out, size_threshold=value)
    assert not out.exists()


@pytest.mark.parametrize("value,exc,message", BAD_THRESHOLDS)
def test_view_threshold_checked(archive, tmp_path, value, exc, message):
    with onnxzip.open(archive) as a:
        with pytest.raises(exc, match=re.escape(message)):
            a.view(size_threshold=value)
        with pytest.raises(exc, match=re.escape(message)):
            a.write_view(tmp_path / "v.onnx", size_threshold=value)
    assert not (tmp_path / "v.onnx").exists()


@pytest.mark.parametrize("value,message", BAD_ALIGNS)
def test_archive_alignment_checked(classic, archive, tmp_path, value, message):
    out = tmp_path / "out.onnxzip"
    with pytest.raises(ValueError, match=re.escape(message)):
        onnxzip.pack(classic, out, align=value)
    with pytest.raises(ValueError, match=re.escape(message)):
        onnxzip.save(make_model(), out, align=value)
    with pytest.raises(ValueError, match=re.escape(message)) as e:
        onnxzip.repack(archive, out, align=value)
    assert type(e.value) is onnxzip.InvalidArgumentError and e.value.status == "EINVAL"  # as the C library's
    assert not out.exists()


@pytest.mark.parametrize("value", [0, 3, 2**32 + 64, 131072, -4096])
def test_unpack_alignment_checked(archive, tmp_path, value):
    with pytest.raises(ValueError, match=f"align must be a power of two between 1 and 65536, not {value}"):
        onnxzip.unpack(archive, tmp_path / "u" / "m.onnx", align=value)


def test_alignment_type_checked(classic, tmp_path):
    with pytest.raises(TypeError, match="align must be an integer, not bool"):
        onnxzip.pack(classic, tmp_path / "o.onnxzip", align=True)
    with pytest.raises(TypeError, match="align must be an integer, not str"):
        onnxzip.save(make_model(), tmp_path / "o.onnxzip", align="64")


def test_numpy_integers_accepted(classic, tmp_path):
    out = tmp_path / "out.onnxzip"
    onnxzip.pack(classic, out, align=np.uint32(128), size_threshold=np.int64(16))
    with onnxzip.open(out) as a:
        assert a.info("w").storage == "entry" and a.info("w").offset % 128 == 0
        assert a.info("b").storage == "inline"  # 8 bytes < 16
        assert len(a.view(size_threshold=np.uint16(0))) > 0


def test_threshold_zero_and_huge_are_honored(classic, tmp_path):
    """The bounds themselves: 0 moves every non-empty payload, 2**64 - 1
    none (what -1 used to mean once wrapped)."""
    onnxzip.pack(classic, tmp_path / "all.onnxzip", size_threshold=0)
    onnxzip.pack(classic, tmp_path / "none.onnxzip", size_threshold=2**64 - 1)
    assert entries(tmp_path / "all.onnxzip") == ["__MODEL_PROTO", "b", "w"]
    assert entries(tmp_path / "none.onnxzip") == ["__MODEL_PROTO"]


# -- the extension, called directly ----------------------------------------------

def test_native_refuses_what_would_wrap(classic, tmp_path):
    native = onnxzip._native
    out = str(tmp_path / "n.onnxzip")
    with pytest.raises(ValueError, match="size_threshold must be >= 0, not -5"):
        native.pack(str(classic), out, 64, 0, -5, None)
    with pytest.raises(OverflowError, match=re.escape("size_threshold must be at most 18446744073709551615")):
        native.pack(str(classic), out, 64, 0, 2**64, None)
    with pytest.raises(OverflowError, match="alignment must be at most 4294967295, not 4294967360"):
        native.pack(str(classic), out, 2**32 + 64, 0, 1024, None)
    with pytest.raises(ValueError, match="alignment must be >= 0, not -64"):
        native.writer(out, -64, 0)
    with pytest.raises(ValueError, match="flags must be >= 0, not -1"):
        native.open(str(classic), -1)
    with pytest.raises(TypeError):
        native.repack(str(classic), out, "64", 0)
    assert not os.path.exists(out)
    with onnxzip.open(classic) as a:
        with pytest.raises(ValueError, match="size_threshold must be >= 0, not -1"):
            a._handle().view(None, -1)


# -- paths -------------------------------------------------------------------------

def test_paths_str_bytes_pathlike(classic, tmp_path):
    """Every path argument takes str, bytes and os.PathLike, and gives the same result."""
    outs = []
    for kind in (str, os.fsencode, pathlib.Path):
        d = tmp_path / kind.__name__
        d.mkdir()
        arch = d / "m.onnxzip"
        onnxzip.pack(kind(str(classic)), kind(str(arch)), data_dir=kind(str(classic.parent)))
        onnxzip.verify(kind(str(arch)))
        onnxzip.repack(kind(str(arch)), kind(str(d / "r.onnxzip")))
        onnxzip.unpack(kind(str(arch)), kind(str(d / "u" / "m.onnx")))
        onnxzip.save(onnxzip.load(kind(str(arch))), kind(str(d / "s.onnxzip")))
        onnxzip.update_model(kind(str(d / "s.onnxzip")), onnxzip.load(kind(str(arch)), load_external_data=False))
        with onnxzip.open(str(arch)) as a:
            a.extract("w", kind(str(d / "w.bin")))
            a.write_view(kind(str(d / "m.view.onnx")))
        assert (d / "w.bin").read_bytes() == W.tobytes()
        onnx.checker.check_model(str(d / "m.view.onnx"))
        outs.append(entries(d / "r.onnxzip"))
    assert outs[0] == outs[1] == outs[2] == ["__MODEL_PROTO", "w"]


@pytest.mark.parametrize("call", [
    lambda p, t: onnxzip.pack(5, t / "o.onnxzip"),
    lambda p, t: onnxzip.unpack(p, 5),
    lambda p, t: onnxzip.repack(p, None),
    lambda p, t: onnxzip.verify(3.5),
    lambda p, t: onnxzip.load(5),
    lambda p, t: onnxzip.save(make_model(), 5),
], ids=["pack", "unpack", "repack", "verify", "load", "save"])
def test_path_types_checked(archive, tmp_path, call):
    with pytest.raises(TypeError, match=r"must be a path \(str, bytes or os.PathLike\)"):
        call(archive, tmp_path)


def test_open_bytes_are_contents(archive):
    """bytes are the archive's contents (documented), never a path."""
    with onnxzip.open(archive.read_bytes()) as a:
        assert a.path is None
        np.testing.assert_array_equal(a.tensors["w"], W)
    with pytest.raises(onnxzip.Error):
        onnxzip.open(os.fsencode(str(archive)))  # a path's bytes are not a zip


def test_open_mmap_and_numpy(archive):
    with open(archive, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    with onnxzip.open(m) as a:
        np.testing.assert_array_equal(a.tensors["w"], W)
    arr = np.fromfile(archive, dtype=np.uint8)
    with onnxzip.open(arr) as a:
        w = a.tensors["w"]
        np.testing.assert_array_equal(w, W)
    assert np.shares_memory(w, arr)  # borrowed, not copied


def test_open_wrong_types(archive):
    for bad in (3, 2.5, None, ["model.onnxzip"]):
        with pytest.raises(TypeError, match="source must be a path"):
            onnxzip.open(bad)


def test_update_model_type_checked(archive):
    before = archive.read_bytes()
    with pytest.raises(TypeError, match="model must be an onnx.ModelProto or its serialized bytes, not str"):
        onnxzip.update_model(archive, "str")
    assert archive.read_bytes() == before


# -- layouts -----------------------------------------------------------------------

def test_unpack_layout_cli_spelling(archive, tmp_path):
    for layout in ("per-tensor", "per_tensor"):
        out = tmp_path / layout / "m.onnx"
        onnxzip.unpack(archive, out, layout=layout)
        assert sorted(os.listdir(out.parent)) == ["m.onnx", "w"]  # a file per entry
        np.testing.assert_array_equal(numpy_helper.to_array(onnx.load(str(out)).graph.initializer[0]), W)


def test_unpack_layout_wrong(archive, tmp_path):
    with pytest.raises(ValueError, match=re.escape(
            "layout must be one of single, per_tensor, per-tensor, inline, safetensors, not 'pertensor'")):
        onnxzip.unpack(archive, tmp_path / "m.onnx", layout="pertensor")
    with pytest.raises(TypeError, match="layout must be a str"):
        onnxzip.unpack(archive, tmp_path / "m.onnx", layout=1)


def test_bad_values_one_class(classic, archive, tmp_path):
    """Every bad value checked here raises the class the C library's EINVAL
    raises: onnxzip.InvalidArgumentError, status EINVAL, code -1."""
    from onnxzip import _errors
    native = _errors._from_native(-1, "ONNXZIP_EINVAL", "m", -1)
    out = tmp_path / "o.onnxzip"
    calls = [lambda: onnxzip.pack(classic, out, align=96), lambda: onnxzip.pack(classic, out, size_threshold=-5),
             lambda: onnxzip.save(make_model(), out, align=2**32 + 64),
             lambda: onnxzip.unpack(archive, tmp_path / "m.onnx", layout="pertensor")]
    for call in calls:
        with pytest.raises(ValueError) as e:
            call()
        assert type(e.value) is type(native) is onnxzip.InvalidArgumentError
        assert (e.value.status, e.value.code) == (native.status, native.code) == ("EINVAL", -1)
    assert not out.exists()


# -- indexes -----------------------------------------------------------------------

def test_negative_index(archive):
    with onnxzip.open(archive) as a:
        names = [t.name for t in a.tensor_infos]
        assert names == ["w", "b"]
        np.testing.assert_array_equal(a.array(-1), B)
        np.testing.assert_array_equal(a.array(-2), W)
        np.testing.assert_array_equal(a.array(np.int64(-1)), B)
        for bad in (2, -3):
            with pytest.raises(IndexError, match=f"tensor index {bad} out of range"):
                a.array(bad)
        with pytest.raises(TypeError, match="tensor must be an integer, not float"):
            a.array(1.0)
