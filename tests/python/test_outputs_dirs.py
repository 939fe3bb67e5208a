"""Outputs create their missing parent directories, as `mkdir -p` does, and a
failing call leaves none of those it made (spec 12.3).

The README's Python quick start runs exactly as written, from a fresh working
directory holding only model.onnx: its last line unpacks into `out/`, which
does not exist beforehand. onnx.load (an independent reader) checks what
unpack wrote; Python's zipfile what save() wrote.
"""
import os
import pathlib
import re
import zipfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
WEIGHT = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)


def quick_start_block():
    """The first ```python block of README.md's "## Python" section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Python\n"):]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "README.md: no python block in the Python section"
    return m.group(1)


def make_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "weight"], ["y"])], "g", [x], [y],
                              [numpy_helper.from_array(WEIGHT, "weight")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8  # what every onnx and onnxruntime of both interpreters reads
    return m


def listing(root):
    return sorted(str(p.relative_to(root)) for p in pathlib.Path(root).rglob("*"))


def check_unpacked(model_path):
    """onnx.load, its external data included, gives back the weight."""
    m = onnx.load(str(model_path))
    (w,) = m.graph.initializer
    assert w.name == "weight"
    assert np.array_equal(numpy_helper.to_array(w), WEIGHT)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    onnx.save(make_model(), str(tmp_path / "model.onnx"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_quick_start_as_written(workdir):
    block = quick_start_block()
    assert 'onnxzip.unpack("model.onnxzip", "out/model.onnx")' in block
    assert not (workdir / "out").exists()
    try:
        import onnxruntime  # noqa: F401  (its line needs it)
    except ImportError:
        # Debian has no python3-onnxruntime: every line but that one, as written
        block = "\n".join(line for line in block.splitlines() if "ort_session" not in line)
    exec(compile(block, str(README), "exec"), {})
    assert (workdir / "out").is_dir()
    check_unpacked(workdir / "out" / "model.onnx")


@pytest.mark.parametrize("layout", ["single", "per_tensor", "inline"])
def test_unpack_into_new_directories(workdir, layout):
    onnxzip.pack("model.onnx", "model.onnxzip")
    onnxzip.unpack("model.onnxzip", "out/sub/dir/model.onnx", layout=layout)
    check_unpacked(workdir / "out" / "sub" / "dir" / "model.onnx")


def test_save_into_new_directories(workdir):
    onnxzip.save(make_model(), "newdir/deeper/x.onnxzip")
    with zipfile.ZipFile(workdir / "newdir" / "deeper" / "x.onnxzip") as z:
        assert z.testzip() is None
        names = z.namelist()
        assert names[-1] == "__MODEL_PROTO"
        model = onnx.load_from_string(z.read("__MODEL_PROTO"))
        (w,) = model.graph.initializer
        entry = {e.key: e.value for e in w.external_data}["location"]
        assert np.frombuffer(z.read(entry), dtype=np.float32).tobytes() == WEIGHT.tobytes()


def external_model():
    """save() refuses it after the writer made the directories: an EXTERNAL
    tensor and no source."""
    m = make_model()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="nowhere.bin")
    return m


def test_failures_leave_no_directory(workdir):
    before = listing(workdir)
    with pytest.raises(onnxzip.Error):
        onnxzip.save(external_model(), "new1/a/x.onnxzip")
    # unpack and pack of inputs that are not what they should be
    with pytest.raises(onnxzip.Error):
        onnxzip.unpack("model.onnx", "new2/a/model.onnx")
    pathlib.Path("garbage").write_bytes(b"not a model")
    with pytest.raises(onnxzip.Error):
        onnxzip.pack("garbage", "new3/a/x.onnxzip")
    # a parent that is a regular file, reached through a new directory
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.save(make_model(), "new4/../garbage/x.onnxzip")
    assert e.value.status == "EIO" and "garbage exists and is not a directory" in str(e.value)
    assert listing(workdir) == sorted(before + ["garbage"])


def test_existing_directories_untouched(workdir):
    os.makedirs("keep/empty")
    onnxzip.save(make_model(), "keep/x.onnxzip")
    with pytest.raises(onnxzip.Error):
        onnxzip.save(external_model(), "keep/empty/new/x.onnxzip")
    assert (workdir / "keep" / "empty").is_dir() and not os.listdir("keep/empty")
    assert sorted(os.listdir("keep")) == ["empty", "x.onnxzip"]
