"""File plans (issue 36): the SHA-256 of every file `onnxzip unpack PKG DIR`
writes, computed from the package's plans without writing anything
(onnxzip_file_plan_*, oz_plan_sha256, through tests/support/plan_sha256),
equals Python's hashlib over the folder unpack wrote: names, sizes and
digests, for the four layouts of make_repos (shared data files, tied weights,
zero runs between tensors included), from the local file and through a URL
(nginx), with the handle holding the default model or another one."""
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save

import make_repos

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "remote"))
from servers import NGINX, Nginx  # noqa: E402

PLAN = os.environ.get("ONNXZIP_PLAN_SHA256", "")


def _oracle(folder: pathlib.Path) -> dict:
    """path -> (sha256 hex, size) of every file under folder, by hashlib."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            out[p.relative_to(folder).as_posix()] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_size)
    return out


def _planned(target: str, *args: str, model: str = None) -> dict:
    cmd = [PLAN] + (["--model", model] if model else []) + [target, *args]
    got = subprocess.run(cmd, capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    out = {}
    for line in got.stdout.splitlines():
        digest, size, path = line.split(" ", 2)
        assert path not in out, f"{path} planned twice"
        out[path] = (digest, int(size))
    return out


def _external(name: str, location: str, offset: int, arr: np.ndarray) -> TensorProto:
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=arr.shape)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(arr.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def _gaps(root: pathlib.Path) -> None:
    """Zero runs: gapped.onnx's tensors lie 8 KiB apart in w.bin (unpack
    writes the zeros between them); sub/fallback.onnx's data file lies in
    another directory, so unpack falls back to the single layout (4096-byte
    alignment: padding zeros). gapped.onnx's tensor D, inline in the folder,
    is an entry in the package that unpack writes inline: a URL's plan reads
    it. big.onnx's 17 MiB tensor is read through a URL by the streamed
    path."""
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(3))
    (root / "sub" / "weights").mkdir(parents=True)
    blob = bytearray(8192 + b.nbytes)
    blob[:a.nbytes], blob[8192:] = a.tobytes(), b.tobytes()
    (root / "w.bin").write_bytes(bytes(blob))
    (root / "sub" / "weights" / "x.bin").write_bytes(a.tobytes() + c.tobytes())
    inline = numpy_helper.from_array(np.arange(512, dtype=np.float32), "D")  # an entry, written inline
    for path, inits in (("gapped.onnx", [_external("A", "w.bin", 0, a), _external("B", "w.bin", 8192, b), inline]),
                        ("sub/fallback.onnx", [_external("A", "weights/x.bin", 0, a),
                                               _external("B", "weights/x.bin", a.nbytes, c)])):
        node = helper.make_node("Add", ["A", "B"], ["y"])
        graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 16])],
                                  inits)
        save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(root / path))
    # an entry over a quarter of a URL's read window (64 MiB): streamed, not batched
    big = (np.arange(17 << 18, dtype=np.uint32) * 2654435761 % 1000).astype(np.float32)
    (root / "big.bin").write_bytes(big.tobytes())
    node = helper.make_node("Identity", ["C"], ["z"])
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("z", TensorProto.FLOAT, [big.size])],
                              [_external("C", "big.bin", 0, big)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(root / "big.onnx"))
    (root / "README.md").write_text("zero runs\n")


@pytest.fixture(scope="module", params=make_repos.KINDS + ("gaps",))
def unpacked(request, tmp_path_factory, onnxzip_cli):
    if not PLAN:
        pytest.skip("built without signing (-Dsigning: libssl-dev, libjansson-dev): no tests/plan_sha256")
    base = tmp_path_factory.mktemp(request.param)
    if request.param == "gaps":
        root = base / "repo"
        root.mkdir()
        _gaps(root)
    else:
        root = make_repos.make(request.param, base / "repo")
    package = base / "repo.onnxzip"
    subprocess.run([onnxzip_cli, "pack", str(root), "-o", str(package), "-q", "--no-sync"], check=True)
    out = base / "out"
    subprocess.run([onnxzip_cli, "unpack", str(package), str(out), "-q", "--no-sync"], check=True)
    return package, _oracle(out)


def _models(want: dict) -> list:
    return sorted(p for p in want if p.endswith(".onnx"))


def _names(target: str) -> list:
    got = subprocess.run([PLAN, "--names", target], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    return got.stdout.splitlines()


def test_every_file_local(unpacked):
    package, want = unpacked
    assert _planned(str(package)) == want
    assert sorted(_names(str(package))) == sorted(want)  # the names alone, from the manifest
    # a handle holding another model plans the others through itself
    assert _planned(str(package), model=_models(want)[-1]) == want


def test_each_path_alone(unpacked):
    package, want = unpacked
    paths = sorted(want)
    assert _planned(str(package), *paths) == want
    for path in paths:  # a model's plan, a data file's alone, a plain file's
        assert _planned(str(package), path) == {path: want[path]}


def test_every_file_by_url(unpacked):
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no HTTP origin to test against")
    package, want = unpacked
    with Nginx(str(package.parent)) as ng:
        url = ng.url("files", package.name)
        assert _planned(url) == want
        assert sorted(_names(url)) == sorted(want)
        assert _planned(url, model=_models(want)[0]) == want
        data = [p for p in want if p.endswith((".data", ".onnx_data", ".bin"))]
        for path in data[:2]:
            assert _planned(url, path) == {path: want[path]}


def test_changed_byte_by_url_is_refused(unpacked, tmp_path):
    """Through a URL every byte hashed is checked first: a byte changed in a
    tensor entry on the server fails with the entry's CRC-32 (naming it),
    never a digest of bytes that are not the archive's."""
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no HTTP origin to test against")
    package, want = unpacked
    with zipfile.ZipFile(package) as z:
        entry = max((i for i in z.infolist() if not i.filename.startswith("__")), key=lambda i: i.file_size)
        with open(package, "rb") as f:
            f.seek(entry.header_offset + 26)
            skip = int.from_bytes(f.read(2), "little") + int.from_bytes(f.read(2), "little")
    changed = tmp_path / package.name
    data = bytearray(package.read_bytes())
    at = entry.header_offset + 30 + skip + entry.file_size // 2
    data[at] ^= 0x40
    changed.write_bytes(bytes(data))
    with Nginx(str(tmp_path)) as ng:
        got = subprocess.run([PLAN, ng.url("files", changed.name)], capture_output=True, text=True)
    assert got.returncode != 0 and "CRC" in got.stderr and entry.filename in got.stderr, got.stderr


# ---- pack of a signed folder (model.sig at its top) ---------------------------------------------


def _pack(onnxzip_cli, root, out):
    return subprocess.run([onnxzip_cli, "pack", str(root), "-o", str(out), "-q", "--no-sync"],
                          capture_output=True, text=True)


def test_pack_signed_folder_that_unpacks_byte_for_byte(tmp_path, onnxzip_cli):
    """model.sig signs the folder's bytes: a folder that unpacks back byte for
    byte packs as before, model.sig kept as a plain file."""
    root = make_repos.make("encoder_decoder", tmp_path / "repo")
    (root / "model.sig").write_text('{"not parsed by pack": true}\n')
    got = _pack(onnxzip_cli, root, tmp_path / "p.onnxzip")
    assert got.returncode == 0, got.stderr
    subprocess.run([onnxzip_cli, "unpack", str(tmp_path / "p.onnxzip"), str(tmp_path / "out"), "-q", "--no-sync"],
                   check=True)
    assert _oracle(tmp_path / "out") == _oracle(root)


@pytest.mark.parametrize("case", ["elsewhere", "garbage"])
def test_pack_signed_folder_that_would_not_come_back_is_refused(tmp_path, onnxzip_cli, case):
    """A signed folder whose model or data file unpack would not give back
    byte for byte is refused naming the file, and nothing is written: a data
    file outside its model's directory (unpacked under another name), bytes
    between two tensors that are not zeros (unpack writes zeros). The same
    folder without model.sig packs."""
    root = tmp_path / "repo"
    root.mkdir()
    _gaps(root)
    if case == "elsewhere":
        bad = "sub/fallback.onnx"
        os.remove(root / "gapped.onnx")
        os.remove(root / "w.bin")
    else:
        bad = "w.bin"
        shutil.rmtree(root / "sub")
        blob = bytearray((root / "w.bin").read_bytes())
        blob[5000] = 7
        (root / "w.bin").write_bytes(bytes(blob))
    assert _pack(onnxzip_cli, root, tmp_path / "plain.onnxzip").returncode == 0
    (root / "model.sig").write_text("{}\n")
    out = tmp_path / "out" / "p.onnxzip"
    out.parent.mkdir()
    got = _pack(onnxzip_cli, root, out)
    assert got.returncode != 0
    assert "signed (model.sig)" in got.stderr and f"'{bad}" in got.stderr, got.stderr
    assert list(out.parent.iterdir()) == []
