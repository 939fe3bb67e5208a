"""What save(), unpack() and update_model() accept and say: a bytes path
as save()'s source=, sizes under one byte, unnamed tensors in messages, a
classic model given to update_model(). Each test failed before its fix.
Oracles are onnx (ModelProto equality) and Python's zipfile."""
import os
import pathlib
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
