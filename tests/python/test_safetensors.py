"""onnxzip unpack --layout safetensors (issue 20), checked by independent
readers: the `safetensors` package reads every tensor, onnx-ir loads the model
and writes the same model its own way (save_safetensors) for comparison, ONNX
Runtime runs the unpacked model by path, and onnx reads the side file of the
types safetensors cannot name. Needs safetensors and onnx-ir (pinned in
tests/python/requirements.txt: pytest_pypi); skipped under Debian's python."""
import json
import pathlib
import struct

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import _helpers

safetensors = pytest.importorskip("safetensors", reason="the safetensors package is not installed "
                                  "(pinned in tests/python/requirements.txt: runs in pytest_pypi)")
ir = pytest.importorskip("onnx_ir", reason="onnx-ir is not installed (pinned in tests/python/requirements.txt: "
                         "runs in pytest_pypi)")
import onnxzip  # noqa: E402


def _init(name, array):
    t = numpy_helper.from_array(array, name)
    return t


def _mlp(extra=()):
    """Y = relu(X @ W1 + b1) @ W2 + b2, plus an unnamed Constant (key
    'Constant_0/value'... named by its node) and `extra` initializers."""
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((32, 64)).astype(np.float32)
    b1 = rng.standard_normal(64).astype(np.float32)
    w2 = rng.standard_normal((64, 16)).astype(np.float32)
    b2 = rng.standard_normal(16).astype(np.float16)
    c = rng.standard_normal((16, 16)).astype(np.float32)
    ct = numpy_helper.from_array(c)
    ct.name = ""
    nodes = [helper.make_node("MatMul", ["X", "W1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["h2"]),
             helper.make_node("Relu", ["h2"], ["h3"]), helper.make_node("MatMul", ["h3", "W2"], ["h4"]),
             helper.make_node("Cast", ["b2"], ["b2f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["h4", "b2f"], ["h5"]),
             helper.make_node("Constant", [], ["C"], name="Const", value=ct),
             helper.make_node("MatMul", ["h5", "C"], ["Y"])]
    inits = [_init("W1", w1), _init("b1", b1), _init("W2", w2), _init("b2", b2), *extra]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 32])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 16])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _archive(tmp_path, model, name="m"):
    src = tmp_path / f"{name}.src.onnx"
    onnx.save(model, str(src))
    arc = tmp_path / f"{name}.onnxzip"
    onnxzip.pack(src, arc, size_threshold=0)
    return src, arc


def _header(path):
    raw = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack_from("<Q", raw, 0)
    return json.loads(raw[8:8 + n].decode("utf-8")), n, raw


def _refs(model_path):
    """{tensor name: (location, offset, length)} of the external tensors."""
    m = onnx.load(str(model_path), load_external_data=False)
    out = {}
    for key, t in _helpers.keyed_tensors(m):
        if _helpers.is_external(t):
            kv = {e.key: e.value for e in t.external_data}
            out[key] = (kv["location"], int(kv["offset"]), int(kv["length"]))
    return out


def _original(src):
    return {key: numpy_helper.to_array(t) for key, t in _helpers.keyed_tensors(onnx.load(str(src)))}


def test_single_file_read_by_safetensors_onnx_ir_and_ort(tmp_path, onnxzip_cli):
    src, arc = _archive(tmp_path, _mlp())
    out = tmp_path / "out" / "deep" / "m.onnx"  # missing parents are made
    r = _helpers.cli(onnxzip_cli, "unpack", arc, "-o", out, "--layout", "safetensors", "--size-threshold", "32")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == ["m.onnx", "m.safetensors"]
    header, n, raw = _header(out.parent / "m.safetensors")
    assert (8 + n) % 4096 == 0 and raw[8 + len(json.dumps(header, separators=(",", ":"))):8 + n].strip() == b""
    assert header.pop("__metadata__") == {"format": "onnx"}
    want = _original(src)
    # every tensor of >= 32 bytes, named by its key (the Constant by its node)
    assert set(header) == {"W1", "b1", "W2", "b2", "Const/value"}
    with safetensors.safe_open(str(out.parent / "m.safetensors"), framework="numpy") as f:
        for name in f.keys():
            np.testing.assert_array_equal(f.get_tensor(name), want[name])
            assert f.get_tensor(name).dtype == want[name].dtype
    refs = _refs(out)
    for name, info in header.items():
        begin, end = info["data_offsets"]
        assert refs[name] == ("m.safetensors", 8 + n + begin, end - begin)
        align = min(4096, (end - begin) & -(end - begin))
        assert (8 + n + begin) % align == 0, (name, begin)
    # onnx-ir loads it; ONNX Runtime runs it by path as the original
    loaded = ir.load(str(out))
    for v in loaded.graph.initializers.values():
        np.testing.assert_array_equal(v.const_value.numpy(), want[v.name])
    ort = pytest.importorskip("onnxruntime")
    x = np.random.default_rng(1).standard_normal((2, 32)).astype(np.float32)
    run = lambda p: ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]  # noqa: E731
    assert run(out).tobytes() == run(src).tobytes()
    # packing the result gives back the archive's tensors
    back = tmp_path / "back.onnxzip"
    r = _helpers.cli(onnxzip_cli, "pack", out, "-o", back, "-q")
    assert r.returncode == 0, r.stderr
    with onnxzip.open(back) as a:
        for key, array in want.items():
            np.testing.assert_array_equal(a.tensors[key].numpy() if hasattr(a.tensors[key], "numpy")
                                          else np.asarray(a.tensors[key]), array)


def test_same_as_onnx_ir_save_safetensors(tmp_path):
    """onnx-ir's own writer, given the same model and threshold, names the same
    file and the same tensors with the same dtypes and shapes."""
    model = _mlp()
    model.graph.node.pop(6)  # no Constant: onnx-ir externalizes initializers only
    model.graph.node[-1].input[1] = "b2f"
    model.graph.node[-1].op_type = "Add"
    src, arc = _archive(tmp_path, model)
    ours = tmp_path / "ours" / "model.onnx"
    onnxzip.unpack(arc, ours, layout="safetensors", size_threshold=256)
    theirs = tmp_path / "theirs" / "model.onnx"
    theirs.parent.mkdir()
    ir.save_safetensors(ir.load(str(src)), str(theirs), size_threshold_bytes=256)
    assert sorted(p.name for p in ours.parent.iterdir()) == sorted(p.name for p in theirs.parent.iterdir())
    h1, _, _ = _header(ours.parent / "model.safetensors")
    h2, _, _ = _header(theirs.parent / "model.safetensors")
    h1.pop("__metadata__")
    h2.pop("__metadata__", None)
    assert {k: (v["dtype"], v["shape"]) for k, v in h1.items()} == {k: (v["dtype"], v["shape"]) for k, v in h2.items()}
    assert {k: v[0] for k, v in _refs(ours).items()} == {k: v[0] for k, v in _refs(theirs).items()}


def test_sharded(tmp_path, onnxzip_cli):
    src, arc = _archive(tmp_path, _mlp())
    out = tmp_path / "s" / "net.onnx"
    r = _helpers.cli(onnxzip_cli, "unpack", arc, "-o", out, "--layout", "safetensors", "--size-threshold", "64",
                     "--max-shard-size", "5KB")
    assert r.returncode == 0, r.stderr
    index = json.loads((out.parent / "net.safetensors.index.json").read_text())
    files = sorted({*index["weight_map"].values()})
    n = len(files)
    assert n > 1 and files == [f"net-{k:05d}-of-{n:05d}.safetensors" for k in range(1, n + 1)]
    assert sorted(p.name for p in out.parent.iterdir()) == sorted(files + ["net.onnx", "net.safetensors.index.json"])
    want = _original(src)
    total = 0
    for name in files:
        header, _, _ = _header(out.parent / name)
        header.pop("__metadata__")
        sizes = [v["data_offsets"][1] - v["data_offsets"][0] for v in header.values()]
        # at most 5000 bytes, unless one tensor alone is larger (W1: 8192 bytes)
        assert sum(sizes) <= 5000 or len(sizes) == 1, (name, sizes)
        total += sum(sizes)
        with safetensors.safe_open(str(out.parent / name), framework="numpy") as f:
            assert set(f.keys()) == {k for k, v in index["weight_map"].items() if v == name}
            for key in f.keys():
                np.testing.assert_array_equal(f.get_tensor(key), want[key])
    assert index["metadata"]["total_size"] == total
    assert {k: v[0] for k, v in _refs(out).items()} == index["weight_map"]
    ort = pytest.importorskip("onnxruntime")
    x = np.ones((2, 32), np.float32)
    run = lambda p: ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]  # noqa: E731
    assert run(out).tobytes() == run(src).tobytes()
    # one shard is enough: one net.safetensors, no index (Hugging Face's rule)
    one = tmp_path / "one" / "net.onnx"
    onnxzip.unpack(arc, one, layout="safetensors", max_shard_size="1GiB")
    assert sorted(p.name for p in one.parent.iterdir()) == ["net.onnx", "net.safetensors"]


def test_types_safetensors_cannot_name_round_trip(tmp_path):
    """INT4 and STRING tensors (and a UINT4 Constant) keep their types and
    bytes: they go to the side file m.onnx.data, not into the safetensors file."""
    int4 = helper.make_tensor("q4", TensorProto.INT4, [4096], np.arange(4096) % 16 - 8)
    strings = helper.make_tensor("s", TensorProto.STRING, [300], [b"abcdefgh"] * 300)
    src, arc = _archive(tmp_path, _mlp(extra=[int4, strings]))
    out = tmp_path / "o" / "m.onnx"
    onnxzip.unpack(arc, out, layout="safetensors", size_threshold=64)
    header, _, _ = _header(out.parent / "m.safetensors")
    assert "q4" not in header and "s" not in header and "W1" in header
    refs = _refs(out)
    assert refs["q4"][0] == "m.onnx.data"
    got = {key: t for key, t in _helpers.keyed_tensors(onnx.load(str(out)))}
    for key, t in _helpers.keyed_tensors(onnx.load(str(src))):
        assert got[key].data_type == t.data_type and list(got[key].dims) == list(t.dims)
        _helpers.assert_same_array(_helpers.expected_array(got[key]), t, key)


def test_sizes_parsed_as_hugging_face(tmp_path):
    src, arc = _archive(tmp_path, _mlp())
    from onnxzip import _args
    for text, value in [("5GB", 5 * 10**9), ("500MB", 500 * 10**6), ("2GiB", 2 << 30), ("1.5GB", 1500000000),
                        ("4096", 4096), ("10 kb", 10000), ("3KiB", 3072), ("1TB", 10**12)]:
        assert _args.shard_size(text, "max_shard_size") == value, text
    for bad in ["5XB", "", "GB", "-1", "1e3", "0", "5GB5"]:
        with pytest.raises(onnxzip.InvalidArgumentError):
            onnxzip.unpack(arc, tmp_path / "bad" / "m.onnx", layout="safetensors", max_shard_size=bad)
    with pytest.raises(onnxzip.InvalidArgumentError, match="safetensors"):
        onnxzip.unpack(arc, tmp_path / "bad" / "m.onnx", layout="single", max_shard_size=100)
    assert not (tmp_path / "bad").exists()


def test_cli_errors_leave_nothing(tmp_path, onnxzip_cli):
    src, arc = _archive(tmp_path, _mlp())
    d = tmp_path / "e"
    for args, words in [(["--max-shard-size", "5XB"], "--max-shard-size"),
                        (["--max-shard-size", "0"], "--max-shard-size"),
                        (["--layout", "single", "--max-shard-size", "1GB"], "safetensors only")]:
        lay = [] if "--layout" in args else ["--layout", "safetensors"]
        r = _helpers.cli(onnxzip_cli, "unpack", arc, "-o", d / "m.onnx", *lay, *args)
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)
    # a file name that would be the model's own: refused, nothing written
    r = _helpers.cli(onnxzip_cli, "unpack", arc, "-o", d / "x.safetensors", "--layout", "safetensors")
    assert r.returncode == 1 and "model's own name" in r.stderr, r.stderr
    # a shard that is a directory: refused before anything is renamed
    d.mkdir(exist_ok=True)
    (d / "m.safetensors").mkdir()
    r = _helpers.cli(onnxzip_cli, "unpack", arc, "-o", d / "m.onnx", "--layout", "safetensors")
    assert r.returncode == 1 and "m.safetensors" in r.stderr, r.stderr
    assert sorted(p.name for p in d.iterdir()) == ["m.safetensors"]


@pytest.mark.skipif(not _helpers.corpus_models(), reason=_helpers.corpus_absent_reason())
@pytest.mark.parametrize("model", _helpers.file_params(_helpers.corpus_models()[:6], _helpers.corpus_id))
def test_corpus(tmp_path, model):
    arc = tmp_path / "m.onnxzip"
    onnxzip.pack(model, arc)
    out = tmp_path / "o" / "m.onnx"
    onnxzip.unpack(arc, out, layout="safetensors")
    want = dict(_helpers.keyed_tensors(_helpers.load_classic(model)))
    st = out.parent / "m.safetensors"
    if st.exists():
        with safetensors.safe_open(str(st), framework="numpy") as f:
            for key in f.keys():
                if f.get_slice(key).get_dtype() in ("BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0"):
                    continue  # numpy has no such type; the bytes are checked through onnx below
                _helpers.assert_same_array(f.get_tensor(key), want[key], key)
    got = dict(_helpers.keyed_tensors(onnx.load(str(out))))
    for key, t in want.items():
        _helpers.assert_same_array(_helpers.expected_array(got[key]), t, key)
