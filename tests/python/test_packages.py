"""Packages (format 1.2, spec section 19) through the Python API:
onnxzip.open(PKG).models / .files / .members / .model_path, load(model=),
ort_session(model=), open_url(model=), pack(DIR), unpack(PKG, DIR) and their
errors.

The repository folder is built here with onnx.helper (two models in onnx/
whose external data, one of them in two chunks, holds the same embedding;
tokenizer and config files; a binary file; an empty one) and packed by the
`onnxzip` command. The oracles are the folder itself (file bytes), onnx's
loader and numpy_helper (tensors), ONNX Runtime on the folder's models
(outputs), Python's zipfile (the manifest's order, entry sizes) and
/proc/self/maps (where the bytes handed out lie)."""
import os
import pathlib
import shutil
import sys
import zipfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxzip
from _helpers import (address, assert_models_equal, buffer_range, cli, file_mappings, inside, keyed_tensors,
                      load_classic, matmul_model, same_outputs)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "remote"))
from servers import NGINX, Nginx  # noqa: E402

VOCAB, DIM, OUT = 96, 32, 16
MODELS = ["onnx/model.onnx", "onnx/model_fp16.onnx"]
FILES = {
    "config.json": b'{"model_type": "test", "hidden_size": 32}\n',
    "tokenizer.json": b'{"version": "1.0", "model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1}}}\n',
    "tokenizer/special_tokens_map.json": b'{"unk_token": "[UNK]"}\n',
    "spm.model": bytes(range(256)) * 12 + b"\x00\xff",  # every byte value
    "added_tokens.json": b"",
}


def _external(t, location, f):
    """Moves TensorProto ``t``'s raw_data to the end of open data file ``f``
    (after a gap of zeros, as ONNX's chunked data has), as a reference."""
    data = t.raw_data
    f.write(b"\0" * (-f.tell() % 64 + 16))
    offset = f.tell()
    f.write(data)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(len(data)))):
        kv = t.external_data.add()
        kv.key, kv.value = key, value


def _model(embed, proj, half):
    """ids -> Gather(embed) -> MatMul(proj) [in float16 when ``half``]."""
    cast = [helper.make_node("Cast", ["h"], ["h16"], to=TensorProto.FLOAT16)] if half else []
    nodes = [helper.make_node("Gather", ["embed", "ids"], ["h"])] + cast + [
        helper.make_node("MatMul", ["h16" if half else "h", "proj"], ["y16" if half else "y"])]
    if half:
        nodes.append(helper.make_node("Cast", ["y16"], ["y"], to=TensorProto.FLOAT))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, OUT])],
                              [numpy_helper.from_array(embed, "embed"), numpy_helper.from_array(proj, "proj")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def make_repository(root: pathlib.Path) -> pathlib.Path:
    """A transformers.js-like folder: onnx/model.onnx (data in
    model.onnx_data) and onnx/model_fp16.onnx (data in two chunks,
    model_fp16.onnx_data and model_fp16.onnx_data_1), both holding the same
    embedding (a tied weight), and the FILES."""
    rng = np.random.default_rng(29)
    embed = rng.standard_normal((VOCAB, DIM)).astype(np.float32)
    proj = rng.standard_normal((DIM, OUT)).astype(np.float32)
    (root / "onnx").mkdir(parents=True)
    full = _model(embed, proj, half=False)
    with open(root / "onnx" / "model.onnx_data", "wb") as f:
        for t in full.graph.initializer:
            _external(t, "model.onnx_data", f)
    onnx.save(full, str(root / "onnx" / "model.onnx"))
    half = _model(embed, proj.astype(np.float16), half=True)
    with open(root / "onnx" / "model_fp16.onnx_data", "wb") as f0, \
            open(root / "onnx" / "model_fp16.onnx_data_1", "wb") as f1:
        _external(half.graph.initializer[0], "model_fp16.onnx_data", f0)
        _external(half.graph.initializer[1], "model_fp16.onnx_data_1", f1)
    onnx.save(half, str(root / "onnx" / "model_fp16.onnx"))
    for path, data in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory, onnxzip_cli):
    """(folder, package packed from it by `onnxzip pack DIR -o PKG`)."""
    base = tmp_path_factory.mktemp("pkg")
    folder = make_repository(base / "repo")
    package = base / "repo.onnxzip"
    r = cli(onnxzip_cli, "pack", str(folder), "-o", str(package), "-q")
    assert r.returncode == 0, r.stderr
    return folder, package


@pytest.fixture()
def pkg(repo):
    with onnxzip.open(repo[1]) as a:
        yield a


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """A single-model (format 1.1) archive."""
    path = tmp_path_factory.mktemp("single") / "m.onnxzip"
    onnxzip.save(matmul_model(300, 4, 1), str(path))
    return path


def manifest(package):
    """(model paths, file paths, default) in the order of __PACKAGE's lines,
    read with zipfile and the spec's grammar (19.4)."""
    with zipfile.ZipFile(package) as z:
        assert z.namelist()[-1] == "__PACKAGE"
        lines = z.read("__PACKAGE").decode("utf-8").split("\n")
    assert lines[0] == "onnxzip-package\t1.2" and lines[-1] == ""
    fields = [line.split("\t") for line in lines[1:-1]]
    models = [f[1] for f in fields if f[0] == "model"]
    default = next((f[1] for f in fields if f[0] == "default"), models[0])
    return models, [f[1] for f in fields if f[0] == "file"], default


# ---- members ----------------------------------------------------------------------------


def test_members_in_manifest_order(repo, pkg):
    folder, package = repo
    models, files, default = manifest(package)
    assert sorted(models) == MODELS and sorted(files) == sorted(FILES)
    assert pkg.is_package and pkg.model_path == default == "onnx/model.onnx"
    assert list(pkg.models) == models and list(pkg.files) == files
    assert len(pkg.models) == 2 and len(pkg.files) == len(FILES)
    with zipfile.ZipFile(package) as z:
        sizes = {i.filename: i.file_size for i in z.infolist()}
    want = [onnxzip.Member(p, "model", sizes[p], p == default) for p in models] + \
        [onnxzip.Member(p, "file", len(FILES[p]), False) for p in files]
    assert pkg.members == want
    assert "onnx/model.onnx" in pkg.models and "onnx/model.onnx" not in pkg.files
    assert "tokenizer.json" in pkg.files and 5 not in pkg.files and b"config.json" not in pkg.files
    assert "onnx/model.onnx" in repr(pkg)


def test_files_are_the_folders_bytes_in_place(repo):
    folder, package = repo
    a = onnxzip.open(package)
    views = {}
    for path in a.files:
        view = a.files[path]
        assert isinstance(view, memoryview) and view.readonly
        assert bytes(view) == (folder / path).read_bytes(), path
        with pytest.raises(TypeError):
            view[:1] = b"x"
        array = np.frombuffer(view, dtype=np.uint8)
        assert not array.flags.owndata and not array.flags.writeable
        if len(view):  # zero-copy: the bytes lie in the package's mapping
            assert inside(array, file_mappings(package)), path
        views[path] = view
    a.close()
    for path, view in views.items():  # each keeps the mapping alive
        assert bytes(view) == FILES[path], path
    with pytest.raises(ValueError, match="closed"):
        a.files["config.json"]


def test_each_model_equals_the_folders(repo, pkg):
    folder, _ = repo
    for path in MODELS:
        want = load_classic(folder / path)
        m = pkg.models[path]
        assert isinstance(m, onnxzip.Archive) and m.model_path == path and m.path == pkg.path
        assert m.members == pkg.members
        for key, t in keyed_tensors(want):
            np.testing.assert_array_equal(m.tensors[key], numpy_helper.to_array(t), err_msg=f"{path}: {key}")
        assert_models_equal(m.model(load_data=True), want, path)
        assert_models_equal(onnxzip.load(repo[1], model=path), want, path)
        with onnxzip.open(repo[1], model=path) as direct:
            assert direct.model_path == path and bytes(direct.model_bytes) == bytes(m.model_bytes)


def test_models_share_the_tied_weight(repo, pkg):
    with zipfile.ZipFile(repo[1]) as z:
        entries = {i.filename: i for i in z.infolist()}
    infos = [pkg.models[p].info("embed") for p in MODELS]
    assert infos[0].entry == infos[1].entry and infos[0].offset == infos[1].offset
    assert infos[0].entry in entries and entries[infos[0].entry].file_size == VOCAB * DIM * 4
    for p in MODELS:  # each a view of that entry in the mapping
        assert inside(pkg.models[p].tensors["embed"], file_mappings(repo[1])), p


def test_ort_outputs_equal_the_folders(repo, ort):
    folder, package = repo
    ids = np.array([[0, 5, VOCAB - 1, 7]], dtype=np.int64)
    for path in MODELS:
        want = ort.InferenceSession(str(folder / path)).run(None, {"ids": ids})
        got = onnxzip.ort_session(package, model=path).run(None, {"ids": ids})
        assert same_outputs(got, want) is None, path
    default = onnxzip.ort_session(package).run(None, {"ids": ids})
    assert same_outputs(default, ort.InferenceSession(str(folder / MODELS[0])).run(None, {"ids": ids})) is None


# ---- lifetimes ---------------------------------------------------------------------------


def test_models_opened_once_and_closed_with_the_package(repo):
    a = onnxzip.open(repo[1])
    m = a.models["onnx/model_fp16.onnx"]
    assert a.models["onnx/model_fp16.onnx"] is m
    w = m.tensors["proj"]
    m.close()
    again = a.models["onnx/model_fp16.onnx"]
    assert again is not m and not again.closed
    a.close()
    assert again.closed
    assert w.dtype == np.float16 and w.shape == (DIM, OUT)  # arrays outlive both
    with pytest.raises(ValueError, match="closed"):
        a.models["onnx/model.onnx"]
    with pytest.raises(ValueError, match="closed"):
        len(a.models)


def test_replaced_file_is_not_mixed_in(repo, tmp_path, onnxzip_cli):
    """A package replaced at its path (a newer revision) after open: its
    models are not opened from the new file."""
    path = tmp_path / "p.onnxzip"
    shutil.copyfile(repo[1], path)
    newer = tmp_path / "newer"
    shutil.copytree(repo[0], newer)
    (newer / "config.json").write_bytes(b'{"model_type": "test", "hidden_size": 33}\n')
    r = cli(onnxzip_cli, "pack", str(newer), "-o", str(tmp_path / "n.onnxzip"), "-q")
    assert r.returncode == 0, r.stderr
    a = onnxzip.open(path)
    os.replace(tmp_path / "n.onnxzip", path)
    with pytest.raises(onnxzip.FormatError) as e:
        a.models["onnx/model_fp16.onnx"]
    assert e.value.status == "ECHANGED" and str(path) in str(e.value)
    assert bytes(a.files["config.json"]) == FILES["config.json"]  # the file opened, still mapped
    a.close()


# ---- a single-model archive, buffers -------------------------------------------------------


def test_single_model_archive_has_no_members(single):
    with onnxzip.open(single) as a:
        assert not a.is_package and a.model_path is None and a.members == []
        assert dict(a.models) == {} and dict(a.files) == {}
        with pytest.raises(KeyError) as e:
            a.models["model.onnx"]
        assert "not a package" in str(e.value) and str(single) in str(e.value)


def test_buffer_package(repo):
    data = bytearray(repo[1].read_bytes())
    with onnxzip.open(data) as a:
        models, files, _ = manifest(repo[1])
        assert a.model_path == "onnx/model.onnx" and list(a.models) == models and list(a.files) == files
        lo, hi = buffer_range(data)
        view = np.frombuffer(a.files["spm.model"], dtype=np.uint8)
        assert lo <= address(view) and address(view) + view.nbytes <= hi  # in place, in the caller's buffer
        assert a.models["onnx/model.onnx"].model_path == "onnx/model.onnx"
        with pytest.raises(onnxzip.UnsupportedError, match="by path"):
            a.models["onnx/model_fp16.onnx"]
    with pytest.raises(onnxzip.UnsupportedError, match="by path"):
        onnxzip.open(bytes(data), model="onnx/model_fp16.onnx")


# ---- errors ---------------------------------------------------------------------------------


def test_missing_members_are_key_errors_naming_them(repo, pkg):
    package = str(repo[1])
    with pytest.raises(KeyError) as e:
        pkg.models["onnx/model_q4.onnx"]
    assert isinstance(e.value, onnxzip.NameNotFoundError) and e.value.status == "ENOTFOUND"
    assert "onnx/model_q4.onnx" in str(e.value) and package in str(e.value) and "onnx/model.onnx" in str(e.value)
    with pytest.raises(KeyError, match="that is a model"):
        pkg.files["onnx/model.onnx"]
    with pytest.raises(KeyError, match="that is a file"):
        pkg.models["tokenizer.json"]
    with pytest.raises(TypeError):
        pkg.models[b"onnx/model.onnx"]  # type: ignore[index]
    assert pkg.models.get("onnx/model_q4.onnx") is None and pkg.files.get("vocab.txt", b"") == b""
    for fn in (lambda: onnxzip.open(package, model="onnx/model_q4.onnx"),
               lambda: onnxzip.load(package, model="onnx/model_q4.onnx")):
        with pytest.raises(LookupError) as e:
            fn()
        assert "onnx/model_q4.onnx" in str(e.value) and package in str(e.value)


def _no_package(repo, single):
    return (single, repo[0] / "onnx" / "model.onnx")  # a 1.1 archive, a classic model


def test_model_of_no_package_is_a_value_error(single, repo):
    for path in _no_package(repo, single):
        for fn in (lambda: onnxzip.open(path, model="model.onnx"),
                   lambda: onnxzip.load(path, model="model.onnx"),
                   lambda: onnxzip.load(path, False, model="model.onnx")):
            with pytest.raises(ValueError, match="not a package"):
                fn()


def test_ort_session_model_of_no_package_is_a_value_error(single, repo, ort):
    for path in _no_package(repo, single):
        with pytest.raises(ValueError, match="not a package"):
            onnxzip.ort_session(path, model="model.onnx")


BAD_MODELS = [(5, TypeError), (b"onnx/model.onnx", TypeError), ("", ValueError), ("onnx/\0model.onnx", ValueError)]


@pytest.mark.parametrize("bad, cls", BAD_MODELS)
def test_model_argument_checked(repo, bad, cls, tmp_path):
    package = repo[1]
    for fn in (lambda: onnxzip.open(package, model=bad), lambda: onnxzip.load(package, model=bad),
               lambda: onnxzip.open_url("http://127.0.0.1:1/p.onnxzip", model=bad),
               lambda: onnxzip.pack(repo[0], tmp_path / "out.onnxzip", default_model=bad)):
        with pytest.raises(cls, match="model must be"):
            fn()
    assert not (tmp_path / "out.onnxzip").exists()


@pytest.mark.parametrize("bad, cls", BAD_MODELS)
def test_ort_session_model_argument_checked(repo, bad, cls, ort):
    with pytest.raises(cls, match="model must be"):
        onnxzip.ort_session(repo[1], model=bad)


# ---- remote packages ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nginx(repo, remote_build):
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no HTTP origin to test against")
    with Nginx(str(repo[1].parent)) as ng:
        yield ng


def test_remote_package(repo, nginx):
    folder, package = repo
    models, files, _ = manifest(package)
    url = nginx.url("files", package.name) + "?sig=SECRET"
    with onnxzip.open_url(url, allow_http=True, model="onnx/model_fp16.onnx") as a:
        assert isinstance(a, onnxzip.RemoteArchive) and a.model_path == "onnx/model_fp16.onnx"
        assert list(a.models) == models and list(a.files) == files
        for path in files:  # fetched: copies, read-only all the same
            view = a.files[path]
            assert view.readonly and bytes(view) == FILES[path], path
        for path in models:
            m = a.models[path]
            assert isinstance(m, onnxzip.RemoteArchive) and m.model_path == path
            assert_models_equal(m.model(load_data=True), load_classic(folder / path), path)
        with pytest.raises(KeyError) as e:
            a.models["onnx/model_q4.onnx"]
        assert "SECRET" not in str(e.value) and package.name in str(e.value)
    assert m.closed
    with pytest.raises(LookupError, match="model_q4"):
        onnxzip.open_url(url, allow_http=True, model="onnx/model_q4.onnx")


def test_fetch_one_model(repo, nginx, tmp_path):
    """fetch(model=): that model alone as a single-model archive, its tensors
    those of the folder's model, fewer bytes than the package."""
    folder, package = repo
    out = tmp_path / "fp16.onnxzip"
    onnxzip.fetch(nginx.url("files", package.name), out, allow_http=True, model="onnx/model_fp16.onnx")
    with onnxzip.open(out) as a:
        assert a.model_path is None and not a.models  # a single-model archive
        assert_models_equal(a.model(load_data=True), load_classic(folder / "onnx/model_fp16.onnx"), "fp16")
    assert out.stat().st_size < package.stat().st_size
    with pytest.raises(LookupError, match="model_q4"):
        onnxzip.fetch(nginx.url("files", package.name), tmp_path / "x.onnxzip", allow_http=True,
                      model="onnx/model_q4.onnx")
    assert not (tmp_path / "x.onnxzip").exists()


# ---- pack ------------------------------------------------------------------------------------


def test_pack_folder(repo, tmp_path):
    folder, package = repo
    out = tmp_path / "py.onnxzip"
    onnxzip.pack(folder, out, default_model="onnx/model_fp16.onnx", sync=False)
    with onnxzip.open(out) as a, onnxzip.open(package) as b:
        assert a.model_path == "onnx/model_fp16.onnx"
        assert sorted(a.models) == sorted(b.models) and list(a.files) == list(b.files)
        for path in a.files:
            assert bytes(a.files[path]) == bytes(b.files[path])
        for path in a.models:
            assert_models_equal(a.models[path].model(load_data=True), load_classic(folder / path), path)


def test_pack_refusals(repo, tmp_path, single):
    folder, _ = repo
    out = tmp_path / "o.onnxzip"
    with pytest.raises(ValueError, match="default_model"):
        onnxzip.pack(folder / "onnx" / "model.onnx", out, default_model="onnx/model.onnx")
    with pytest.raises(ValueError, match="data_dir"):
        onnxzip.pack(folder, out, data_dir=folder / "onnx")
    with pytest.raises(LookupError, match="onnx/none.onnx"):
        onnxzip.pack(folder, out, default_model="onnx/none.onnx")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("no model here\n")
    with pytest.raises(onnxzip.FormatError) as e:
        onnxzip.pack(empty, out)
    assert e.value.status == "ENOMODEL" and str(empty) in str(e.value)
    with pytest.raises(ValueError, match="inside"):
        onnxzip.pack(folder, folder / "self.onnxzip")
    assert not out.exists() and not (folder / "self.onnxzip").exists()


# ---- unpack ----------------------------------------------------------------------------------


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_unpack_recreates_the_folder(repo, tmp_path):
    folder, package = repo
    out = tmp_path / "out"
    onnxzip.unpack(package, out, sync=False)
    assert _tree(out) == _tree(folder)
    for path in FILES:
        assert (out / path).read_bytes() == FILES[path], path
    for path in MODELS:
        assert_models_equal(load_classic(out / path), load_classic(folder / path), path)


def test_unpacked_models_run_as_the_folders(repo, tmp_path, ort):
    folder, package = repo
    onnxzip.unpack(package, tmp_path / "out", sync=False)
    ids = np.array([[3, 1, 4, 1]], dtype=np.int64)
    for path in MODELS:
        got = ort.InferenceSession(str(tmp_path / "out" / path)).run(None, {"ids": ids})
        assert same_outputs(got, ort.InferenceSession(str(folder / path)).run(None, {"ids": ids})) is None, path


def test_unpack_one_model(repo, tmp_path):
    folder, package = repo
    out = tmp_path / "one" / "m.onnx"
    onnxzip.unpack(package, out, model="onnx/model_fp16.onnx", sync=False)
    assert sorted(os.listdir(out.parent)) == ["m.onnx", "m.onnx.data"]
    assert_models_equal(load_classic(out), load_classic(folder / "onnx" / "model_fp16.onnx"), "model_fp16")
    with pytest.raises(LookupError, match="onnx/model_q4.onnx"):
        onnxzip.unpack(package, tmp_path / "q4" / "m.onnx", model="onnx/model_q4.onnx")
    assert not (tmp_path / "q4").exists()


def test_unpack_refusals(repo, tmp_path, single):
    package = repo[1]
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_bytes(b"mine")
    with pytest.raises(onnxzip.Error) as e:
        onnxzip.unpack(package, busy)
    assert str(busy) in str(e.value)
    assert os.listdir(busy) == ["keep.txt"] and (busy / "keep.txt").read_bytes() == b"mine"
    with pytest.raises(ValueError, match="not a package"):
        onnxzip.unpack(single, tmp_path / "s" / "m.onnx", model="model.onnx")
    with pytest.raises(TypeError, match="model must be"):
        onnxzip.unpack(package, tmp_path / "t", model=1)  # type: ignore[arg-type]
    assert sorted(os.listdir(tmp_path)) == ["busy"]

