"""Archives reached through symbolic links (issue 20), as huggingface_hub's
cache stores a download: CACHE/models--ORG--NAME/blobs/SHA256 holds the
bytes, snapshots/REV/FILE is a relative link ../../blobs/SHA256 (deeper
files get more "../"), refs/main names REV. The layout is built here by
hand, as huggingface_hub's file_download.py lays it out (no network).

* onnxzip.ort_session(link) — through a relative link, an absolute one, a
  chain, a link to a link in another directory, a file in a subdirectory of
  the snapshot — computes the original model's outputs bit for bit
  (onnxruntime.InferenceSession over the original .onnx is the oracle), and
  leaves the caller's SessionOptions as they were.
* `onnxzip view LINK -o VIEW`: refused (ONNXZIP_EPATH, naming the blob and
  the path to write) in the snapshot directory, where ONNX Runtime refuses a
  view whose external data resolves through a link into blobs/ (and where
  huggingface_hub's scan_cache_dir allows only links); written beside the
  blob, it names the blob and runs by path in onnx.load (Debian's and the
  venv's), in PyPI's onnxruntime and in onnxruntime-node (tests/ort), with
  the original's outputs.
* RssAnon: ort_session over the link maps the weights as over the plain
  archive (printed; both far below the inline model's copy).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip
from _helpers import REPO, cli, matmul_model, same_outputs

REV = "0123456789abcdef0123456789abcdef01234567"
MiB = 1 << 20


def hf_cache(root, archive, name="model.onnxzip"):
    """huggingface_hub's layout for `archive` (moved into blobs/): returns
    (the snapshot's link, the blob)."""
    repo = root / "models--org--name"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    blob = repo / "blobs" / digest
    link = repo / "snapshots" / REV / name
    blob.parent.mkdir(parents=True)
    link.parent.mkdir(parents=True)
    shutil.move(str(archive), blob)
    os.symlink(os.path.relpath(blob, link.parent), link)  # relative, as huggingface_hub makes it
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REV)
    return link, blob


@pytest.fixture
def cache(tmp_path):
    """(original .onnx, snapshot link, blob) of a small model."""
    original = tmp_path / "original.onnx"
    onnx.save(matmul_model(64, 48, seed=20), str(original))
    archive = tmp_path / "a.onnxzip"
    onnxzip.save(onnx.load(str(original)), archive, sync=False)
    link, blob = hf_cache(tmp_path / "hub", archive)
    return original, link, blob


def feeds(n=64):
    return {"x": np.linspace(-1, 1, n, dtype=np.float32).reshape(1, n)}


def outputs(session):
    return session.run(None, feeds(session.get_inputs()[0].shape[1]))


def linked(tmp_path, link, blob, form):
    """A path to the archive of the given form."""
    if form == "hf-relative":
        return link
    other = tmp_path / "elsewhere"
    other.mkdir()
    if form == "absolute":
        os.symlink(blob, other / "abs.onnxzip")
        return other / "abs.onnxzip"
    if form == "chain":  # other/c1 -> other/c2 -> the snapshot's link -> the blob
        os.symlink(link, other / "c2.onnxzip")
        os.symlink("c2.onnxzip", other / "c1.onnxzip")
        return other / "c1.onnxzip"
    if form == "link-to-link":  # a relative link to the snapshot's link, from another directory
        os.symlink(os.path.relpath(link, other), other / "l.onnxzip")
        return other / "l.onnxzip"
    if form == "nested":  # snapshots/REV/onnx/model.onnxzip -> ../../../blobs/SHA
        nested = link.parent / "onnx" / "model.onnxzip"
        nested.parent.mkdir()
        os.symlink(os.path.relpath(blob, nested.parent), nested)
        return nested
    raise AssertionError(form)


@pytest.mark.parametrize("form", ["hf-relative", "absolute", "chain", "link-to-link", "nested"])
def test_ort_session_through_links(ort, tmp_path, cache, form):
    original, link, blob = cache
    path = linked(tmp_path, link, blob, form)
    assert os.path.islink(path) and os.path.dirname(os.path.realpath(path)) != str(path.parent)
    want = outputs(ort.InferenceSession(str(original), providers=["CPUExecutionProvider"]))
    got = outputs(onnxzip.ort_session(path, providers=["CPUExecutionProvider"]))
    assert same_outputs(want, got) is None
    # the caller's options: the folder entry only while the session is built
    so = ort.SessionOptions()
    got = outputs(onnxzip.ort_session(str(path), so, providers=["CPUExecutionProvider"]))
    assert same_outputs(want, got) is None
    assert so.get_session_config_entry("session.model_external_initializers_file_folder_path") == ""


def view_refs(view_path):
    """{tensor name: location} of the view's external tensors, by onnx."""
    m = onnx.load(str(view_path), load_external_data=False)
    return {t.name: {kv.key: kv.value for kv in t.external_data}["location"]
            for t in m.graph.initializer if t.data_location == TensorProto.EXTERNAL}


def test_cli_view_hf_cache(onnxzip_cli, cache):
    """`onnxzip view` of the snapshot's link: refused in the snapshot
    directory, naming where to write; beside the blob, a view naming the
    blob that onnx.load reads as the original."""
    original, link, blob = cache
    in_snapshot = link.parent / "model.view.onnx"
    p = cli(onnxzip_cli, "view", link, "-o", in_snapshot)
    assert p.returncode == 1 and "ONNXZIP_EPATH" in p.stderr, p.stderr
    assert f"write it as {blob.parent / 'model.view.onnx'}" in p.stderr, p.stderr
    assert str(blob) in p.stderr and not os.path.lexists(in_snapshot)
    assert sorted(os.listdir(link.parent)) == ["model.onnxzip"]  # the snapshot: links only
    view = blob.parent / "model.view.onnx"
    p = cli(onnxzip_cli, "view", link, "-o", view)
    assert p.returncode == 0, p.stderr
    assert set(view_refs(view).values()) == {blob.name}
    loaded = onnx.load(str(view))  # external data read beside the view, by onnx
    want = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(original)).graph.initializer}
    got = {t.name: numpy_helper.to_array(t) for t in loaded.graph.initializer}
    assert want.keys() == got.keys() and all(np.array_equal(want[k], got[k]) for k in want)
    assert cli(onnxzip_cli, "verify", view).returncode == 0


def node_outputs(model_path, out_path):
    """tests/ort/run_model.js's outputs for the model given by path."""
    script = REPO / "tests" / "ort" / "run_model.js"
    p = subprocess.run(["node", str(script), str(model_path), str(out_path)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(out_path.read_text())["outputs"]


def test_view_by_path_in_runtimes(ort, onnxzip_cli, tmp_path, cache):
    """The view beside the blob, given by path: PyPI's onnxruntime and
    onnxruntime-node compute the original's outputs bit for bit."""
    original, link, blob = cache
    view = blob.parent / "model.view.onnx"
    assert cli(onnxzip_cli, "view", link, "-o", view).returncode == 0
    cpu = ["CPUExecutionProvider"]
    want = outputs(ort.InferenceSession(str(original), providers=cpu))
    assert same_outputs(want, outputs(ort.InferenceSession(str(view), providers=cpu))) is None
    if shutil.which("node") is None or not (REPO / "tests" / "ort" / "node_modules" / "onnxruntime-node").is_dir():
        pytest.skip("node or tests/ort/node_modules/onnxruntime-node absent (npm ci in tests/ort)")
    assert node_outputs(view, tmp_path / "v.json") == node_outputs(original, tmp_path / "o.json")


def gather_model(n: int, m: int) -> onnx.ModelProto:
    """y = Gather(W, i), W n x m float32 whose row r is all r: no kernel
    prepacks or copies W, so what ORT itself does with it shows in RssAnon."""
    w = numpy_helper.from_array(np.repeat(np.arange(n, dtype=np.float32)[:, None], m, axis=1), "W")
    graph = helper.make_graph([helper.make_node("Gather", ["W", "i"], ["y"])], "g",
                              [helper.make_tensor_value_info("i", TensorProto.INT64, ["k"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["k", m])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


# Runs in a fresh interpreter: RssAnon growth of building an ORT session
# over MODEL with ort_session (or, MODE "bytes", InferenceSession over the
# model's bytes, read before) and running it once.
MEASURE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import onnxruntime as ort
    import onnxzip

    def anon():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("RssAnon:"))

    path, mode, tiny = sys.argv[1:4]
    i = np.array([0, 7, 4095], np.int64)
    ort.InferenceSession(tiny).run(None, {"i": i[:1]})  # ORT's own start-up, outside the measure
    if mode == "bytes":  # the control: the bytes read before the measure, parsed by ORT
        data = open(path, "rb").read()
        path, make = data, ort.InferenceSession
    else:
        make = onnxzip.ort_session
    before = anon()
    session = make(path, providers=["CPUExecutionProvider"])  # alive while measured
    y = session.run(None, {"i": i})[0]
    assert y.shape == (3, 8192) and (y[1] == 7).all() and (y[2] == 4095).all()
    print(json.dumps({"anon": anon() - before}))
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="RssAnon needs Linux's /proc")
def test_rss_anon_through_link(ort, tmp_path):
    """The weights are mapped, not copied, through the link as without it."""
    model = gather_model(4096, 8192)  # W: 128 MiB
    inline = tmp_path / "inline.onnx"
    onnx.save(model, str(inline))
    tiny = tmp_path / "tiny.onnx"
    onnx.save(gather_model(4, 4), str(tiny))
    plain = tmp_path / "plain.onnxzip"
    onnxzip.save(model, plain, sync=False)
    shutil.copy(plain, tmp_path / "b.onnxzip")
    link, _ = hf_cache(tmp_path / "hub", tmp_path / "b.onnxzip")
    del model
    grown = {}
    for label, path, mode in (("plain archive", plain, "session"), ("HF link", link, "session"),
                              ("inline .onnx bytes (control)", inline, "bytes")):
        p = subprocess.run([sys.executable, "-c", MEASURE, str(path), mode, str(tiny)],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        grown[label] = json.loads(p.stdout.strip().splitlines()[-1])["anon"]
        print(f"{label}: RssAnon +{grown[label] / MiB:.1f} MiB")
    assert grown["inline .onnx bytes (control)"] > 100 * MiB, f"the control copied no weight: {grown}"
    assert grown["HF link"] < 32 * MiB and grown["plain archive"] < 32 * MiB, grown
