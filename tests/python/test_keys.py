"""Keys of unnamed tensors: Archive.tensors[key], Archive.info(key),
TensorInfo.key, Archive.extract(key).

A model made with the onnx package has Constant nodes whose ``value``
tensors have no name: two of 2 KiB (entries once packed or saved), small
ones (inline), one in an If's subgraph, two under one repeated node name.
The expected key of each is derived from onnx's own view of the model (the
node's name or index in its graph, the attribute's name, the subgraph's
attribute), per the format of onnxzip_tensor.key, and its array from
onnx.numpy_helper. Before keys, every unnamed tensor was keyed '' (only the
first reachable).
"""
from __future__ import annotations

import pathlib
from typing import Any, Dict, Tuple

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip
from _helpers import keyed_tensors


def _constant(name: str, values: np.ndarray) -> onnx.NodeProto:
    tensor = numpy_helper.from_array(values)
    tensor.ClearField("name")  # an attribute tensor without a name, as exporters write them
    return helper.make_node("Constant", [], [f"{name or 'out'}_{values.size}_{values.flat[0]}"], name=name,
                            value=tensor)


def _model() -> onnx.ModelProto:
    big_a = np.arange(512, dtype=np.float32)
    big_b = np.arange(512, dtype=np.float32) * -2
    sub = helper.make_graph([_constant("", np.full(3, 7, np.float32))], "then", [],
                            [helper.make_tensor_value_info("out_3_7.0", TensorProto.FLOAT, [3])])
    other = helper.make_graph([_constant("", np.full(3, 8, np.float32))], "else", [],
                              [helper.make_tensor_value_info("out_3_8.0", TensorProto.FLOAT, [3])])
    nodes = [
        _constant("first_const", big_a),
        _constant("", big_b),  # no node name either: node#1
        _constant("", np.array([1.5, 2.5], np.float32)),
        _constant("dup", np.array([3], np.int64)),
        _constant("dup", np.array([4], np.int64)),  # a repeated node name: "~2"
        helper.make_node("If", ["cond"], ["r"], name="branch", then_branch=sub, else_branch=other),
    ]
    named = numpy_helper.from_array(np.ones(300, np.float32), "w")
    graph = helper.make_graph(nodes, "keys", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("r", TensorProto.FLOAT, [3])], [named])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _expected(model: onnx.ModelProto) -> Dict[str, Tuple[str, Any]]:
    """key -> (name, TensorProto) from onnx's view of the model
    (_helpers.keyed_tensors: a named tensor by its name; an unnamed attribute
    tensor by "<node name or node#index>/<attribute>", a subgraph's
    continuing its attribute's path, "~2" for the second of one path)."""
    return {key: (t.name, t) for key, t in keyed_tensors(model)}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, pathlib.Path]:
    d = tmp_path_factory.mktemp("keys")
    model = _model()
    onnx.checker.check_model(model)
    classic = d / "m.onnx"
    onnx.save(model, str(classic))
    packed, saved = d / "packed.onnxzip", d / "saved.onnxzip"
    onnxzip.pack(classic, packed)
    onnxzip.save(model, saved)
    return {"classic": classic, "pack": packed, "save": saved}


def test_oracle_sees_the_model_as_meant() -> None:
    keys = _expected(_model())  # helper.make_node sorts attributes by name
    assert list(keys) == ["first_const/value", "node#1/value", "node#2/value", "dup/value", "dup/value~2",
                          "branch/else_branch/node#0/value", "branch/then_branch/node#0/value", "w"]


@pytest.mark.parametrize("layout", ["classic", "pack", "save"])
def test_every_tensor_by_its_key(files: Dict[str, pathlib.Path], layout: str) -> None:
    model = onnx.load(str(files["classic"]))
    expected = _expected(model)
    with onnxzip.open(files[layout]) as a:
        assert list(a.tensors) == list(expected)  # model order, one key each
        assert "" not in a.tensors
        with pytest.raises(KeyError):
            a.info("")
        assert [t.key for t in a.tensor_infos] == list(expected)
        for key, (name, tensor) in expected.items():
            info = a.info(key)
            assert info.key == key and info.name == name
            assert a.tensor_infos[info.index] == info
            want = numpy_helper.to_array(tensor)
            got = a.tensors[key]
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want), key
            assert np.array_equal(a.array(key), want)
        storages = {t.key: t.storage for t in a.tensor_infos}
    big = "entry" if layout != "classic" else "inline"
    assert storages["first_const/value"] == storages["node#1/value"] == big  # 2 KiB each
    assert storages["node#2/value"] == storages["dup/value~2"] == "inline"


def test_extract_by_key(files: Dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    model = onnx.load(str(files["classic"]))
    tensor = model.graph.node[1].attribute[0].t
    assert tensor.name == "" and model.graph.node[1].name == ""
    out = tmp_path / "node1.bin"
    with onnxzip.open(files["pack"]) as a:
        a.extract("node#1/value", out)
    assert out.read_bytes() == tensor.raw_data
    assert len(tensor.raw_data) == 2048
