"""onnxzip.ort_session(): ONNX Runtime over an archive gives the outputs of
onnxruntime.InferenceSession over the original model, bit for bit.

Every session here: CPU provider, graph optimizations off, one thread,
sequential execution, so that the same model in any layout runs the same
kernels in the same order (as tests/ort/run_model.js does). Inputs: a
libonnx-testdata model gets its own test_data_set_0/input_*.pb; a corpus
model gets deterministic values from its graph inputs' types and shapes
(_helpers.make_input: symbolic dims 1, the Silero and PaddleOCR shapes of
tests/ort). A model ORT refuses (at creation or at run) must be refused
through ort_session too, with the same exception type at the same stage.

onnxruntime is optional: Debian has no python3-onnxruntime, so under
/usr/bin/python3 the ORT tests are skipped saying so; in the pinned PyPI
venv they run. test_missing_onnxruntime runs under both.
"""
import os
import sys

import numpy as np
import onnx
import pytest

import onnxzip
from _helpers import (corpus_absent_reason, corpus_id, corpus_models, file_params, graph_inputs, make_input,
                      same_outputs, structure_model, td_absent_reason, td_feeds, td_id, td_models)

CORPUS = corpus_models()
TD = td_models()


def options(ort):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return so


def run(make_session, feeds):
    """("ok", outputs) or ("refused at create"/"refused at run", exception type)."""
    try:
        session = make_session()
    except Exception as e:  # ORT's own exception classes (Fail, InvalidGraph, NotImplemented...)
        return "refused at create", type(e), str(e)
    try:
        return "ok", session.run(None, feeds), ""
    except Exception as e:
        return "refused at run", type(e), str(e)


def compare(ort, original, archive, feeds, what):
    """The archive's outputs through ort_session equal the original's."""
    cpu = ["CPUExecutionProvider"]
    want = run(lambda: ort.InferenceSession(str(original), options(ort), providers=cpu), feeds)
    got = run(lambda: onnxzip.ort_session(archive, options(ort), providers=cpu), feeds)
    if want[0] != "ok":
        assert got[:2] == want[:2], f"{what}: the original is {want[0]} ({want[1].__name__}: {want[2][:200]}), " \
                                    f"the archive: {got[0]} {got[1] if got[0] == 'ok' else got[2][:300]}"
        return "refused"
    assert got[0] == "ok", f"{what}: ORT runs the original, the archive is {got[0]}: {got[2][:300]}"
    diff = same_outputs(want[1], got[1])
    if diff is not None:
        again = run(lambda: ort.InferenceSession(str(original), options(ort), providers=cpu), feeds)
        if again[0] == "ok" and same_outputs(want[1], again[1]) is not None:
            pytest.skip(f"{what}: the original's outputs differ between two runs (a random op): no reference")
    assert diff is None, f"{what}: {diff}"
    return "identical"


def corpus_feeds(src):
    model = onnx.load(str(src), load_external_data=False)
    return {name: make_input(name, elem, shape) for name, elem, shape in graph_inputs(model)}


@pytest.mark.skipif(not CORPUS, reason=corpus_absent_reason())
@pytest.mark.parametrize("src", file_params(CORPUS, corpus_id))
def test_corpus_model(ort, src, tmp_path):
    """Packed with the default threshold, with size_threshold=0, and saved
    from onnx.load's ModelProto: the same outputs as the original."""
    feeds = corpus_feeds(src)
    onnxzip.pack(src, tmp_path / "default.onnxzip", sync=False)
    onnxzip.pack(src, tmp_path / "t0.onnxzip", size_threshold=0, sync=False)
    onnxzip.save(onnx.load(str(src)), tmp_path / "saved.onnxzip", sync=False)
    results = {name: compare(ort, src, tmp_path / f"{name}.onnxzip", feeds, f"{corpus_id(src)} {name}")
               for name in ("default", "t0", "saved")}
    assert set(results.values()) == {"identical"}, results  # the corpus models all run
    # the classic file through ort_session (given to ORT by path)
    assert compare(ort, src, src, feeds, f"{corpus_id(src)} classic") == "identical"


@pytest.mark.skipif(not TD, reason=td_absent_reason())
@pytest.mark.parametrize("src", file_params(TD, td_id))
def test_testdata_model(ort, src, tmp_path):
    feeds, why = td_feeds(src, onnx.load(str(src), load_external_data=False))
    if feeds is None:
        pytest.skip(f"{td_id(src)}: {why}")
    onnxzip.pack(src, tmp_path / "a.onnxzip", sync=False)
    compare(ort, src, tmp_path / "a.onnxzip", feeds, td_id(src))


# ---- generated models ---------------------------------------------------------------

def structure_feeds(cond):
    return {"X": np.linspace(-1, 1, 300, dtype=np.float32), "cond": np.array(cond)}


@pytest.mark.parametrize("threshold", [1024, 0])
@pytest.mark.parametrize("cond", [True, False])
def test_saved_model(ort, tmp_path, threshold, cond):
    """A model with weights in If branches, a Loop body, a function and a
    sparse Constant, saved by onnxzip.save: both branches run as the
    original."""
    model = structure_model()
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    onnxzip.save(model, tmp_path / "m.onnxzip", size_threshold=threshold, sync=False)
    assert compare(ort, tmp_path / "m.onnx", tmp_path / "m.onnxzip", structure_feeds(cond), "saved") == "identical"


def test_control_flipped_weight(ort, tmp_path):
    """Control: one weight changed in the archive changes the outputs (the
    comparison sees the archive's bytes, not the original's)."""
    model = structure_model()
    onnxzip.save(model, tmp_path / "m.onnxzip", sync=False)
    with onnxzip.open(tmp_path / "m.onnxzip") as a:
        info = next(i for i in a.tensor_infos if i.name == "W" and i.kind == "initializer")
    assert info.storage == "entry"
    data = bytearray((tmp_path / "m.onnxzip").read_bytes())
    data[info.offset + 4 * 7 + 2] ^= 0x40  # element 7 of the main graph's W
    (tmp_path / "bad.onnxzip").write_bytes(bytes(data))
    cpu = ["CPUExecutionProvider"]
    want = ort.InferenceSession(model.SerializeToString(), options(ort), providers=cpu).run(None, structure_feeds(True))
    got = onnxzip.ort_session(tmp_path / "bad.onnxzip", options(ort), providers=cpu).run(None, structure_feeds(True))
    assert same_outputs(want, got) is not None
    assert np.array_equal(np.delete(want[0], 7), np.delete(got[0], 7)) and want[0][7] != got[0][7]


def test_refused_alike(ort, tmp_path):
    """A model ORT refuses (an unknown operator) is refused through
    ort_session with the same exception type."""
    model = structure_model()
    model.graph.node[2].op_type = "NoSuchOperator"
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    onnxzip.save(model, tmp_path / "m.onnxzip", sync=False)
    assert compare(ort, tmp_path / "m.onnx", tmp_path / "m.onnxzip", structure_feeds(True), "refused") == "refused"


def test_session_options_and_providers(ort, tmp_path):
    onnxzip.save(structure_model(), tmp_path / "m.onnxzip", sync=False)
    so = options(ort)
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.enable_mem_pattern = False
    session = onnxzip.ort_session(tmp_path / "m.onnxzip", sess_options=so, providers=["CPUExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]
    used = session.get_session_options()
    assert used.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert used.enable_mem_pattern is False
    folder = used.get_session_config_entry("session.model_external_initializers_file_folder_path")
    assert os.path.realpath(folder) == os.path.realpath(tmp_path)
    # defaults: no options, no providers
    session = onnxzip.ort_session(tmp_path / "m.onnxzip")
    out = session.run(None, structure_feeds(False))
    assert [o.shape for o in out] == [(300,), (300,)]
    # keyword arguments reach InferenceSession, with the caller's options object
    calls = []
    real = ort.InferenceSession

    def recording(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ort, "InferenceSession", recording)
        onnxzip.ort_session(tmp_path / "m.onnxzip", so, ["CPUExecutionProvider"], provider_options=[{}],
                            disabled_optimizers=["ConstantFolding"])
    assert len(calls) == 1
    args, kwargs = calls[0]
    assert isinstance(args[0], bytes) and kwargs["sess_options"] is so
    assert kwargs["providers"] == ["CPUExecutionProvider"] and kwargs["provider_options"] == [{}]
    assert kwargs["disabled_optimizers"] == ["ConstantFolding"]


def test_from_another_directory(ort, tmp_path, monkeypatch):
    """The archive's directory, not the working directory, is where ORT
    finds the weights: a relative path from elsewhere works."""
    (tmp_path / "models").mkdir()
    (tmp_path / "elsewhere").mkdir()
    model = structure_model()
    onnxzip.save(model, tmp_path / "models" / "m.onnxzip", sync=False)
    monkeypatch.chdir(tmp_path / "elsewhere")
    session = onnxzip.ort_session(os.path.join("..", "models", "m.onnxzip"), options(ort))
    want = ort.InferenceSession(model.SerializeToString(), options(ort)).run(None, structure_feeds(True))
    assert same_outputs(want, session.run(None, structure_feeds(True))) is None


@pytest.mark.parametrize("external", [False, True], ids=["single", "external"])
def test_classic_model(ort, tmp_path, external):
    """ort_session on a classic model: ORT loads it by path, as is."""
    model = structure_model()
    path = tmp_path / "m.onnx"
    if external:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)  # onnx.save_model moves the data out of the message it is given
        onnx.save_model(copy, str(path), save_as_external_data=True, location="m.data", size_threshold=1024)
        assert (tmp_path / "m.data").stat().st_size > 0
    else:
        path.write_bytes(model.SerializeToString())
    assert compare(ort, path, path, structure_feeds(False), "classic") == "identical"
    want = ort.InferenceSession(model.SerializeToString(), options(ort)).run(None, structure_feeds(False))
    got = onnxzip.ort_session(path, options(ort)).run(None, structure_feeds(False))
    assert same_outputs(want, got) is None


def test_missing_onnxruntime(tmp_path, monkeypatch):
    """Without onnxruntime, a clear ImportError (runs under both interpreters)."""
    onnxzip.save(structure_model(), tmp_path / "m.onnxzip", sync=False)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(ImportError) as e:
        onnxzip.ort_session(tmp_path / "m.onnxzip")
    assert "onnxruntime" in str(e.value) and "pip install" in str(e.value), str(e.value)


def test_missing_archive(ort, tmp_path):
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.ort_session(tmp_path / "none.onnxzip")
    assert "none.onnxzip" in str(e.value)

