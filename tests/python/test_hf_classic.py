"""Classic ONNX models with external data in a Hugging Face cache (issue 20;
spec 12.5): huggingface_hub stores a download as
CACHE/models--ORG--NAME/blobs/SHA256 (the bytes) with
snapshots/REV/model.onnx -> ../../blobs/SHA_A and snapshots/REV/model.onnx_data
-> ../../blobs/SHA_B (relative links; one more "../" per subfolder) and
refs/main naming REV. The layout is built here by hand as file_download.py
lays it out (no network). onnxzip follows such links exactly where ONNX
Runtime (>= 1.24, onnxruntime PR #27374) does.

* `onnxzip pack SNAPSHOT/model.onnx`: the archive, unzipped and read by onnx
  (spec 8.6), holds the original's tensors (numpy equality); from a subfolder
  of the snapshot and through a chain of links too. `onnxzip ls` lists them;
  onnxzip.open() gives the original's arrays.
* onnxzip.ort_session(SNAPSHOT/model.onnx) computes what
  onnxruntime.InferenceSession of the same path and of the original compute,
  bit for bit (the venv; Debian's Python has no onnxruntime: skipped there).
* Refused (ONNXZIP_EPATH from pack, ls and onnxzip.open(), no output left,
  the message naming the rule and the directories allowed): a regular model
  file whose data link leads into blobs/, a data link outside both
  directories, a chain of links ending outside — each also refused by ONNX
  Runtime itself (checked in the venv) — and links to a directory and to a
  FIFO (no hang). A regular model with a data link to a file in its own
  directory is accepted, as ONNX Runtime accepts it.
"""
import hashlib
import os
import shutil
import zipfile

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import onnxzip
from _helpers import cli, matmul_model, same_outputs

REV = "89abcdef0123456789abcdef0123456789abcdef"


def save_classic(model, path, location="model.onnx_data"):
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=0)
    return path


def arrays(model_path):
    """name -> array of every initializer, as onnx reads them (external data loaded)."""
    m = onnx.load(str(model_path))
    return {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}


def to_blob(repo, src):
    """Moves `src` into repo/blobs/<its sha256>; returns the blob."""
    blob = repo / "blobs" / hashlib.sha256(src.read_bytes()).hexdigest()
    blob.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(src), blob)
    return blob


def link(path, target):
    """A relative link at `path` to `target`, as huggingface_hub makes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(target, path.parent), path)


@pytest.fixture
def hf(tmp_path):
    """The original model (a plain copy kept for the oracles) and its HF
    cache: dict with original, repo, blobs, snapshot's model.onnx and the
    same files in the snapshot's subfolder onnx/."""
    original = save_classic(matmul_model(96, 40, seed=2020), tmp_path / "original" / "model.onnx")
    staged = tmp_path / "staged"
    shutil.copytree(original.parent, staged)
    repo = tmp_path / "hub" / "models--org--name"
    blob_m, blob_d = to_blob(repo, staged / "model.onnx"), to_blob(repo, staged / "model.onnx_data")
    snap = repo / "snapshots" / REV
    for d in (snap, snap / "onnx"):
        link(d / "model.onnx", blob_m)
        link(d / "model.onnx_data", blob_d)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REV)
    os.symlink("model.onnx", snap / "alias.onnx")  # a chain: alias -> model.onnx -> blob
    assert os.path.islink(snap / "model.onnx_data") and not os.path.isabs(os.readlink(snap / "model.onnx_data"))
    return {"original": original, "repo": repo, "blobs": repo / "blobs", "blob_m": blob_m, "blob_d": blob_d,
            "model": snap / "model.onnx", "snap": snap, "tmp": tmp_path}


def unzipped_arrays(archive, where):
    """The archive read without onnxzip: Python's zipfile extracts it, onnx
    loads __MODEL_PROTO as a classic model (spec 8.6)."""
    where.mkdir()
    with zipfile.ZipFile(archive) as z:
        z.extractall(where)
    os.rename(where / "__MODEL_PROTO", where / "model.onnx")
    return arrays(where / "model.onnx")


def assert_same(got, want):
    assert sorted(got) == sorted(want)
    for name, a in want.items():
        assert got[name].dtype == a.dtype and np.array_equal(got[name], a), name


@pytest.mark.parametrize("rel", ["model.onnx", "onnx/model.onnx", "alias.onnx"])
def test_pack_snapshot_model(hf, onnxzip_cli, rel):
    model = hf["snap"] / rel
    out = hf["tmp"] / "packed.onnxzip"
    p = cli(onnxzip_cli, "pack", model, "-o", out)
    assert p.returncode == 0, p.stderr
    assert_same(unzipped_arrays(out, hf["tmp"] / "unzipped"), arrays(hf["original"]))


def test_ls_and_open_snapshot_model(hf, onnxzip_cli):
    p = cli(onnxzip_cli, "ls", hf["model"])
    assert p.returncode == 0, p.stderr
    assert "external data" in p.stdout and "W " in p.stdout and "B " in p.stdout
    want = arrays(hf["original"])
    with onnxzip.open(hf["model"]) as a:
        assert a.layout == "external"
        assert_same({name: a.array(name) for name in want}, want)


def test_ort_session_snapshot_model(hf, ort):
    x = np.random.default_rng(1).standard_normal((1, 96)).astype(np.float32)
    mine = onnxzip.ort_session(hf["model"], providers=["CPUExecutionProvider"]).run(None, {"x": x})
    theirs = ort.InferenceSession(str(hf["model"]), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    plain = ort.InferenceSession(str(hf["original"]), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert same_outputs(mine, theirs) is None and same_outputs(mine, plain) is None


# ---- refused, as ONNX Runtime refuses them ----------------------------------------

def regular_model_link_into_blobs(hf):
    """A regular model file (a copy) beside a data link into blobs/."""
    d = hf["tmp"] / "regular"
    d.mkdir()
    shutil.copy(hf["blob_m"], d / "model.onnx")
    link(d / "model.onnx_data", hf["blob_d"])
    return d / "model.onnx", ["the model file is no symbolic link", str(hf["blobs"].resolve())]


def data_link_outside(hf):
    """The snapshot's model; its data a link to a file outside both directories."""
    other = hf["tmp"] / "other"
    other.mkdir()
    shutil.copy(hf["blob_d"], other / "secret.bin")
    os.unlink(hf["snap"] / "model.onnx_data")
    link(hf["snap"] / "model.onnx_data", other / "secret.bin")
    return hf["model"], [str((other / "secret.bin").resolve()), str(hf["snap"].resolve()),
                         str(hf["blobs"].resolve()), "where the model's symbolic link leads"]


def chain_ending_outside(hf):
    """The data link leads to a link in blobs/ that leads outside."""
    other = hf["tmp"] / "other"
    other.mkdir()
    shutil.copy(hf["blob_d"], other / "secret.bin")
    link(hf["blobs"] / "hop", other / "secret.bin")
    os.unlink(hf["snap"] / "model.onnx_data")
    link(hf["snap"] / "model.onnx_data", hf["blobs"] / "hop")
    return hf["model"], [str((other / "secret.bin").resolve()), "outside the allowed directories"]


ESCAPES = [regular_model_link_into_blobs, data_link_outside, chain_ending_outside]


def link_to_directory(hf):
    (hf["blobs"] / "subdir").mkdir()
    os.unlink(hf["snap"] / "model.onnx_data")
    link(hf["snap"] / "model.onnx_data", hf["blobs"] / "subdir")
    return hf["model"], ["not a regular file"]


def link_to_fifo(hf):
    os.mkfifo(hf["blobs"] / "fifo")
    os.unlink(hf["snap"] / "model.onnx_data")
    link(hf["snap"] / "model.onnx_data", hf["blobs"] / "fifo")
    return hf["model"], ["not a regular file"]


@pytest.mark.parametrize("case", ESCAPES + [link_to_directory, link_to_fifo], ids=lambda f: f.__name__)
def test_refused(hf, onnxzip_cli, case):
    model, needles = case(hf)
    out = hf["tmp"] / "out" / "refused.onnxzip"
    before = sorted(os.listdir(model.parent))
    for args in (("pack", model, "-o", out), ("ls", model)):
        p = cli(onnxzip_cli, *args)
        assert p.returncode == 1 and "[ONNXZIP_EPATH]" in p.stderr, (args[0], p.stderr)
        assert "tensor 'W'" in p.stderr and "'model.onnx_data' refused" in p.stderr, p.stderr
        for n in needles:
            assert n in p.stderr, (n, p.stderr)
        if case in ESCAPES:
            assert "symbolic link" in p.stderr and "ONNX Runtime refuses it too" in p.stderr, p.stderr
    assert not out.exists() and not out.parent.exists()
    assert sorted(os.listdir(model.parent)) == before
    with pytest.raises(onnxzip.Error) as info:
        onnxzip.open(model)
    assert info.value.status == "EPATH"


@pytest.mark.parametrize("case", ESCAPES, ids=lambda f: f.__name__)
def test_refused_by_onnxruntime_too(hf, ort, case):
    """The oracle for the rule: ONNX Runtime refuses each of these itself."""
    model, _ = case(hf)
    with pytest.raises(Exception) as info:
        ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    assert "External data path" in str(info.value)
    with pytest.raises(onnxzip.Error):
        onnxzip.ort_session(model)


def test_link_within_model_directory(hf, onnxzip_cli):
    """A regular model file whose data is a link to a file in its own
    directory: its resolved path stays inside, which ONNX Runtime accepts."""
    d = hf["tmp"] / "sibling"
    save_classic(matmul_model(96, 40, seed=2020), d / "model.onnx", location="weights.link")
    os.rename(d / "weights.link", d / "weights.bin")
    os.symlink("weights.bin", d / "weights.link")
    out = hf["tmp"] / "sibling.onnxzip"
    p = cli(onnxzip_cli, "pack", d / "model.onnx", "-o", out)
    assert p.returncode == 0, p.stderr
    assert_same(unzipped_arrays(out, hf["tmp"] / "unzipped"), arrays(hf["original"]))


def test_link_within_model_directory_onnxruntime(hf, ort):
    d = hf["tmp"] / "sibling"
    save_classic(matmul_model(96, 40, seed=2020), d / "model.onnx", location="weights.link")
    os.rename(d / "weights.link", d / "weights.bin")
    os.symlink("weights.bin", d / "weights.link")
    x = np.ones((1, 96), np.float32)
    theirs = ort.InferenceSession(str(d / "model.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    mine = onnxzip.ort_session(d / "model.onnx", providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert same_outputs(mine, theirs) is None
