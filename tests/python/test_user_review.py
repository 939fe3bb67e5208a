"""Held-out cases from a new user's review of the Python package (issue 19's
Python points, checked again on main): each test failed before its fix.
Oracles are onnx (ModelProto equality), Python's zipfile and mypy."""
import os
import pathlib
import subprocess
import sys
import zipfile

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import onnxzip
from _helpers import model_of

W = np.arange(2048, dtype=np.float32)  # 8 KiB: an entry under the default threshold


def make_model() -> onnx.ModelProto:
    return model_of([numpy_helper.from_array(W, "w")])


@pytest.fixture
def archive(tmp_path) -> pathlib.Path:
    path = tmp_path / "model.onnxzip"
    onnxzip.save(make_model(), path)
    return path


# -- save(source=...) takes a path as every other path argument does ------------

def test_save_source_bytes_path(archive, tmp_path):
    """source= is "the path of the archive or classic model": a bytes path
    is a path there (as for path=, pack(), load()...), not the contents
    open() takes bytes for ('<buffer>: neither a zip archive nor ...')."""
    with onnxzip.open(archive) as a:
        model = a.model()
    out = tmp_path / "copy.onnxzip"
    onnxzip.save(model, out, source=os.fsencode(archive))  # the Archive is closed: source= is needed
    assert onnxzip.load(out) == make_model()
    with zipfile.ZipFile(out) as z:
        assert z.namelist()[-1] == "__MODEL_PROTO"


# -- the type hints say what the functions accept -----------------------------

# A user's code: numpy integers where integers go (the README: "numpy
# integers too"), bytes paths for load() and save() (they accept them).
TYPED_USER_CODE = '''
import os
import pathlib

import numpy as np
import onnx

import onnxzip


def use(path: pathlib.Path, model: onnx.ModelProto) -> None:
    onnxzip.save(model, os.fsencode(path), align=np.int64(128), size_threshold=np.uint32(0))
    back: onnx.ModelProto = onnxzip.load(os.fsencode(path))
    onnxzip.save(back, path.with_suffix(".copy.onnxzip"), source=os.fsencode(path))
    onnxzip.pack(path, b"out.onnxzip", align=np.uint16(4096), size_threshold=np.int32(0))
    onnxzip.unpack(path, "out/model.onnx", align=np.int64(64), size_threshold=np.int64(0))
    onnxzip.unpack(path, "st/model.onnx", layout="safetensors", max_shard_size=np.int64(1 << 30))
    onnxzip.repack(path, "r.onnxzip", align=np.int64(64))
    with onnxzip.open(path) as a:
        i = np.int64(-1)
        last: np.ndarray = a.array(i)
        writable: np.ndarray = a.writable_array(np.intp(0))
        view: bytes = a.view(size_threshold=np.int64(0))
        a.write_view(path.with_suffix(".view.onnx"), size_threshold=np.uint64(0))
        del last, writable, view
'''


def test_types_accept_numpy_integers_and_bytes_paths(tmp_path):
    """mypy --strict (the project's mypy.ini) on a user's code that passes
    numpy integers and bytes paths, which the functions accept at run time:
    the hints said int and str | PathLike[str] ("incompatible type
    signedinteger[_64Bit]; expected int")."""
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is installed in the pinned venv only (tests/python/requirements.txt): "
                    "the pytest_pypi run checks this")
    user = tmp_path / "user.py"
    user.write_text(TYPED_USER_CODE)
    package_parent = pathlib.Path(onnxzip.__file__).resolve().parent.parent
    config = pathlib.Path(__file__).resolve().parent / "mypy.ini"
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir",
                          str(tmp_path / "cache"), str(user)], cwd=package_parent, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


# -- messages say what is accepted ----------------------------------------------

@pytest.mark.parametrize("value", [-1, 0, "0"])
def test_max_shard_size_below_one_byte(archive, tmp_path, value):
    """max_shard_size=-1 said "must be >= 0", but 0 is refused too: every
    value under 1 byte gets the same message, naming the argument."""
    with pytest.raises(ValueError, match=r"^max_shard_size must be at least 1 byte, not "):
        onnxzip.unpack(archive, tmp_path / "st" / "m.onnx", layout="safetensors", max_shard_size=value)
    assert not (tmp_path / "st").exists()


# -- an unnamed tensor is never called tensor '' ----------------------------------

def constant_model() -> onnx.ModelProto:
    """The graph's only weight is an unnamed Constant's value (8 KiB: saved
    as an entry)."""
    node = onnx.helper.make_node("Constant", [], ["y"], value=numpy_helper.from_array(W))
    return model_of([], [node], outputs=[onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2048])])


def test_unnamed_tensor_in_save_messages(tmp_path):
    """save() of a copy of an archive's model (its unnamed Constant a
    reference to an entry) and save(source=)'s resolution of a reference
    to no entry named the tensor '' ("tensor '': its data is ...")."""
    path = tmp_path / "c.onnxzip"
    onnxzip.save(constant_model(), path)
    with onnxzip.open(path) as a:
        copy = onnx.ModelProto()
        copy.CopyFrom(a.model())
    with pytest.raises(ValueError, match=r"^an unnamed tensor: its data is in an external file or entry \('\w+'\)"):
        onnxzip.save(copy, tmp_path / "new.onnxzip")
    for kv in copy.graph.node[0].attribute[0].t.external_data:
        if kv.key == "location":
            kv.value = "missing"
    with pytest.raises(onnxzip.FormatError, match=r"an unnamed tensor: no data at location 'missing' offset 0$"):
        onnxzip.save(copy, tmp_path / "new.onnxzip", source=path)
    assert not (tmp_path / "new.onnxzip").exists()


def test_unnamed_tensor_in_update_warning(tmp_path):
    """update_model()'s warning about new inline data names its largest
    tensor; an unnamed one was "tensor ''"."""
    path = tmp_path / "c.onnxzip"
    onnxzip.save(constant_model(), path)
    model = constant_model()
    model.graph.node[0].attribute[0].t.CopyFrom(numpy_helper.from_array(np.arange(2**18, dtype=np.float32)))  # 1 MiB
    with pytest.warns(UserWarning, match=r"\(the largest: an unnamed tensor, 1048576 bytes\)"):
        onnxzip.update_model(path, model)


def test_update_model_of_a_classic_model(tmp_path):
    """update_model() of a classic .onnx said "not an onnxzip archive;
    set-model updates archives" (a CLI command, to a Python caller): it
    says what the file is and how to proceed, and leaves it unchanged."""
    path = tmp_path / "model.onnx"
    onnx.save(make_model(), path)
    before = path.read_bytes()
    with pytest.raises(onnxzip.UnsupportedError,
                       match=r"model\.onnx: a classic ONNX model, not an onnxzip archive; a model is replaced in place "
                             r"only in an archive file: convert it first with: onnxzip pack$") as e:
        onnxzip.update_model(path, make_model())
    assert isinstance(e.value, ValueError) and e.value.status == "EUNSUPPORTED"
    assert path.read_bytes() == before
