"""The type hints say what the functions accept: mypy --strict (the
project's mypy.ini) on a user's code passing numpy integers and bytes
paths, which the functions accept at run time."""
import pathlib
import subprocess
import sys

import pytest

import onnxzip


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
