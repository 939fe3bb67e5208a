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
