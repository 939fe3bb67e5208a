"""onnxzip.ort_session() and the caller's SessionOptions: the options are
left as they were (no external-data folder entry stays behind), so they can
be reused for a classic external-data model elsewhere; and the session maps
the archive's weights instead of copying them (RssAnon against the weights'
size, with a negative control that copies).

onnxruntime is optional: under Debian's /usr/bin/python3 (no
python3-onnxruntime) these tests are skipped saying so; the pinned PyPI
venv runs them."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip

FOLDER_KEY = "session.model_external_initializers_file_folder_path"
MiB = 1 << 20


def add_model(w: np.ndarray) -> onnx.ModelProto:
    """y = x + w."""
    shape = list(w.shape)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                              [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def folder_entry(so) -> str:
    try:
        return so.get_session_config_entry(FOLDER_KEY)
    except RuntimeError:  # "does not have configuration with key"
        return ""


def test_options_left_unchanged_and_reusable(ort, tmp_path):
    w1 = np.arange(4096, dtype=np.float32)
    w2 = np.arange(4096, dtype=np.float32)[::-1].copy()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    archive = tmp_path / "a" / "m.onnxzip"
    onnxzip.save(add_model(w1), archive)
    classic = tmp_path / "b" / "c.onnx"  # external data in its own directory
    onnx.save(add_model(w2), str(classic), save_as_external_data=True, location="c.data", size_threshold=0)
    x = np.ones(4096, dtype=np.float32)

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.add_session_config_entry("session.disable_prepacking", "1")
    s1 = onnxzip.ort_session(archive, so, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(s1.run(None, {"x": x})[0], x + w1)
    assert folder_entry(so) == "", "ort_session() left its folder entry on the caller's SessionOptions"
    assert so.get_session_config_entry("session.disable_prepacking") == "1" and so.intra_op_num_threads == 1

    # reused, as users do: a classic model elsewhere, by path and as bytes
    s2 = ort.InferenceSession(str(classic), so, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(s2.run(None, {"x": x})[0], x + w2)
    s3 = onnxzip.ort_session(classic, so, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(s3.run(None, {"x": x})[0], x + w2)
    assert folder_entry(so) == ""


def test_options_keep_callers_folder(ort, tmp_path):
    """A folder entry the caller set is restored, not dropped."""
    archive = tmp_path / "m.onnxzip"
    w = np.arange(4096, dtype=np.float32)
    onnxzip.save(add_model(w), archive)
    so = ort.SessionOptions()
    so.add_session_config_entry(FOLDER_KEY, str(tmp_path / "elsewhere"))
    session = onnxzip.ort_session(archive, so, providers=["CPUExecutionProvider"])
    x = np.ones(4096, dtype=np.float32)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], x + w)
    assert so.get_session_config_entry(FOLDER_KEY) == str(tmp_path / "elsewhere")


def test_sess_options_type_checked(ort, tmp_path):
    archive = tmp_path / "m.onnxzip"
    onnxzip.save(add_model(np.zeros(4, dtype=np.float32)), archive)
    with pytest.raises(TypeError, match="sess_options must be an onnxruntime.SessionOptions, not dict"):
        onnxzip.ort_session(archive, {"intra_op_num_threads": 1})


# -- the weights are mapped, not copied ----------------------------------------

WEIGHTS = 64 * MiB

# Runs in a fresh interpreter; prints the RssAnon growth over building the
# session (MODE "archive": ort_session over the archive; "inline": ONNX
# Runtime over a classic .onnx holding the same weights inline, which it
# must copy into its own buffers: the negative control).
MEASURE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import onnxruntime as ort
    import onnxzip

    def rss_anon():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024

    ort.set_default_logger_severity(3)
    mode, path = sys.argv[1], sys.argv[2]
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.enable_cpu_mem_arena = False
    before = rss_anon()
    if mode == "archive":
        s = onnxzip.ort_session(path, so, providers=["CPUExecutionProvider"])
    else:
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    x = np.zeros(1, dtype=np.float32)
    y = s.run(None, {"x": x})[0]  # the weights are used: Add reads every element
    after = rss_anon()
    print(json.dumps({"anon": after - before, "sum": float(y.sum())}))
""")


@pytest.fixture(scope="module")
def big_models(tmp_path_factory):
    """y = x + w with 64 MiB of float32 weights (1.0 each, non-zero pages),
    as an archive and as a classic .onnx with the weights inline."""
    d = tmp_path_factory.mktemp("ort_rss")
    w = np.ones(WEIGHTS // 4, dtype=np.float32)
    graph = helper.make_graph([helper.make_node("ReduceSum", ["w"], ["s"], keepdims=0),
                               helper.make_node("Add", ["x", "s"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnxzip.save(model, d / "big.onnxzip", sync=False)
    onnx.save(model, str(d / "big.onnx"))
    del model, graph, w
    yield d
    for name in ("big.onnxzip", "big.onnx"):
        (d / name).unlink()


def measure(mode: str, path) -> dict:
    proc = subprocess.run([sys.executable, "-c", MEASURE, mode, str(path)], capture_output=True, text=True,
                          env=dict(os.environ), timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["sum"] == WEIGHTS // 4, result  # the session computed over every weight
    print(f"{mode}: RssAnon +{result['anon'] / MiB:.1f} MiB for {WEIGHTS // MiB} MiB of weights")
    return result


def test_session_maps_the_archive(ort, big_models):
    r = measure("archive", big_models / "big.onnxzip")
    assert r["anon"] < WEIGHTS // 4, f"RssAnon grew by {r['anon'] / MiB:.1f} MiB: the weights were copied"


def test_negative_control_inline_weights_are_copied(ort, big_models):
    r = measure("inline", big_models / "big.onnx")
    assert r["anon"] >= WEIGHTS * 0.9, f"RssAnon grew by only {r['anon'] / MiB:.1f} MiB: the measurement is blind"
