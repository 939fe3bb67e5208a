"""Signed packages through the Python API (issue 36): onnxzip.Trust and
trust= on open, load, ort_session, genai_model, open_url and fetch.

The oracles are independent tools: the four layouts of
tests/packages/make_repos.py, signed by the reference tool `model_signing`
1.1.1 (key and certificate methods; keys and certificates made by the
`openssl` command) and packed by `onnxzip pack`. Both run in the pinned venv
(BUILD_ROOT/pyvenv: tokenizers and model_signing), so that Debian's
interpreter tests the binding over the same packages. What a trusted call
returns is compared with the folder (file bytes, onnx's tensors, ONNX
Runtime's and onnxruntime-genai's outputs over the folder's own models).
What must be refused: a wrong key, a chain to another root, an unsigned
package, a tokenizer byte and a weight byte changed after signing (the
folder changed, then packed: the package's CRC-32 and XXH3 are consistent,
only the signature can tell), each raising onnxzip.SignatureError naming
the file, with nothing run (no session made, no genai Model, no file
written by fetch)."""
import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import zipfile
import zlib

import onnx
import pytest
from onnx import TensorProto

import onnxzip
from _helpers import REPO, assert_models_equal, cli, load_classic, matmul_model

sys.path.insert(0, str(REPO / "tests" / "packages"))
sys.path.insert(0, str(REPO / "tests" / "remote"))
import make_repos  # noqa: E402  (model_paths, sample_inputs: onnx and numpy only)
from servers import NGINX, Nginx  # noqa: E402

KINDS = list(make_repos.KINDS)  # transformers_js, encoder_decoder, genai, diffusers
TOKENIZER = ("tokenizer.json", "tokenizer/vocab.json")  # the first a layout has


# ---- the oracles: openssl, model_signing, make_repos (in the venv) -----------------------------


@pytest.fixture(scope="module")
def venv_python(build_root):
    """The pinned venv's interpreter: model_signing and tokenizers."""
    python = build_root / "pyvenv" / "bin" / "python"
    if not os.access(python, os.X_OK):
        pytest.fail(f"{python} is missing: make it with tests/python/venv.sh {python.parent.parent}",
                    pytrace=False)
    return python


def run(*args, **kw):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **kw)
    assert p.returncode == 0, f"{' '.join(map(str, args))}: {p.stdout[-1000:]}{p.stderr[-2000:]}"
    return p


def key_pair(where: pathlib.Path, name: str):
    """(private, public) PEM files of a new P-256 key."""
    private, public = where / f"{name}.key", where / f"{name}.pub"
    run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", private)
    run("openssl", "ec", "-in", private, "-pubout", "-out", public)
    return private, public


def certificates(where: pathlib.Path, name: str):
    """(root certificate, leaf key, leaf certificate): a CA and a code-signing leaf it issued, valid now."""
    ca_key, _ = key_pair(where, f"{name}-ca")
    ca = where / f"{name}-ca.pem"
    run("openssl", "req", "-x509", "-new", "-key", ca_key, "-subj", f"/CN={name} root", "-days", "30", "-out", ca,
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    leaf_key, _ = key_pair(where, f"{name}-leaf")
    csr, leaf, ext = where / f"{name}-leaf.csr", where / f"{name}-leaf.pem", where / f"{name}-leaf.ext"
    ext.write_text("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=codeSigning\n")
    run("openssl", "req", "-new", "-key", leaf_key, "-subj", f"/CN={name} publisher", "-out", csr)
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "7",
        "-extfile", ext, "-out", leaf)
    return ca, leaf_key, leaf


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    where = tmp_path_factory.mktemp("keys")
    return {"publisher": key_pair(where, "publisher"), "other": key_pair(where, "other"),
            "ca": certificates(where, "publisher"), "other_ca": certificates(where, "other")}


@pytest.fixture(scope="module", autouse=True)
def signing_build(keys):
    """Skips where the library was built without signing (-Dsigning=disabled,
    or no libcrypto / jansson), as remote_build does without libcurl."""
    try:
        onnxzip.Trust(public_key=keys["publisher"][1])
    except onnxzip.UnsupportedError as e:  # pragma: no cover - depends on the build
        pytest.skip(f"this build of onnxzip has no signing: {e}")


@pytest.fixture(scope="module")
def folders(tmp_path_factory, venv_python):
    """kind -> a make_repos folder (written by the venv: tokenizers)."""
    root = tmp_path_factory.mktemp("repos")
    run(venv_python, REPO / "tests" / "packages" / "make_repos.py", "all", root)
    return {kind: root / kind for kind in KINDS}


def sign(venv_python, folder, key, signature=None, cert=None):
    """model_signing 1.1.1 signs the folder (into FOLDER/model.sig unless told)."""
    signature = signature or folder / "model.sig"
    if cert is None:
        run(venv_python, "-m", "model_signing", "sign", "key", folder, "--private_key", key, "--signature", signature)
    else:
        leaf_key, leaf, ca = cert
        run(venv_python, "-m", "model_signing", "sign", "certificate", folder, "--private_key", leaf_key,
            "--signing_certificate", leaf, "--certificate_chain", ca, "--signature", signature)
    return signature


def pack(onnxzip_cli, folder, out):
    p = cli(onnxzip_cli, "pack", folder, "-o", out)
    assert p.returncode == 0, p.stderr
    return out


def first_external(folder: pathlib.Path):
    """(model path, its data file's package path, offset of a weight byte in
    it): the middle of the first external tensor (onnx's own reading of the
    references)."""
    for path in make_repos.model_paths(folder):
        model = onnx.load(str(folder / path), load_external_data=False)
        for t in model.graph.initializer:
            if t.data_location == TensorProto.EXTERNAL:
                keys = {kv.key: kv.value for kv in t.external_data}
                data = posix_join(path, keys["location"])
                return path, data, int(keys.get("offset") or 0) + int(keys["length"]) // 2
    raise AssertionError(f"{folder}: no external tensor")


def posix_join(model_path: str, location: str) -> str:
    directory = model_path.rpartition("/")[0]
    return f"{directory}/{location}" if directory else location


def flip(path: pathlib.Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


class Signed:
    """One layout signed by model_signing, packed, and its bad variants."""

    def __init__(self, kind, folder, pkg, tampered, tokenizer, owner, data_file):
        self.kind, self.folder, self.pkg, self.tampered = kind, folder, pkg, tampered
        self.tokenizer, self.owner, self.data_file = tokenizer, owner, data_file


@pytest.fixture(scope="module", params=KINDS)
def signed(request, tmp_path_factory, folders, keys, venv_python, onnxzip_cli):
    kind = request.param
    root = tmp_path_factory.mktemp(f"signed-{kind}")
    folder = root / "folder"
    shutil.copytree(folders[kind], folder)
    pack(onnxzip_cli, folder, root / "unsigned.onnxzip")
    sign(venv_python, folder, keys["publisher"][0])
    pkg = pack(onnxzip_cli, folder, root / "repo.onnxzip")
    tokenizer = next(p for p in TOKENIZER if (folder / p).exists())
    owner, data_file, at = first_external(folder)
    tampered = {"unsigned": root / "unsigned.onnxzip"}
    for what, path, offset in (("tokenizer", tokenizer, 10), ("tensor", data_file, at)):
        copy = root / f"{what}-folder"
        shutil.copytree(folder, copy)
        flip(copy / path, offset)  # after signing: the package's CRC-32 and XXH3 are its own
        tampered[what] = pack(onnxzip_cli, copy, root / f"{what}.onnxzip")
    return Signed(kind, folder, pkg, tampered, tokenizer, owner, data_file)


@pytest.fixture(scope="module")
def trust(keys):
    return onnxzip.Trust(public_key=keys["publisher"][1])


def refused(e, status, *names):
    """The SignatureError's status and names in its message."""
    assert isinstance(e.value, onnxzip.SignatureError) and isinstance(e.value, ValueError)
    assert e.value.status == status, (e.value.status, str(e.value))
    for name in names:
        assert name in str(e.value), (name, str(e.value))


# ---- Trust ---------------------------------------------------------------------------------


def test_trust_arguments(keys, tmp_path):
    private, public = keys["publisher"]
    pem = public.read_bytes()
    for given in (public, str(public), pem, bytearray(pem), memoryview(pem)):
        t = onnxzip.Trust(public_key=given)
        assert t.public_key == pem and t.certificate_chain is None and t.signature is None
    assert repr(onnxzip.Trust(public_key=public)) == f"<onnxzip.Trust public_key={public}>"
    copy = pickle.loads(pickle.dumps(onnxzip.Trust(public_key=public, signature=b"{}")))
    assert (copy.public_key, copy.certificate_chain, copy.signature) == (pem, None, b"{}")
    with pytest.raises(AttributeError):
        t.public_key = b"x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        t.anything = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="public_key= .* or certificate_chain="):
        onnxzip.Trust()
    with pytest.raises(TypeError, match="not both"):
        onnxzip.Trust(public_key=public, certificate_chain=keys["ca"][0])
    with pytest.raises(TypeError, match="public_key must be a path"):
        onnxzip.Trust(public_key=3)
    with pytest.raises(TypeError):
        onnxzip.Trust(public)  # keyword-only
    with pytest.raises(FileNotFoundError, match="missing.pem"):
        onnxzip.Trust(public_key=tmp_path / "missing.pem")
    with pytest.raises(IsADirectoryError):
        onnxzip.Trust(public_key=tmp_path)
    with pytest.raises(FileNotFoundError, match="missing.sig"):
        onnxzip.Trust(public_key=public, signature=tmp_path / "missing.sig")
    (tmp_path / "empty.pem").write_bytes(b"")
    for bad, match in ((b"", "empty"), (tmp_path / "empty.pem", "empty.pem: public_key is empty"),
                       (b"not a key", "not PEM"), (bytes(public), r"give a path as str or os\.PathLike"),
                       (pem.decode(), "give the PEM text itself as bytes")):
        with pytest.raises(ValueError, match=match):
            onnxzip.Trust(public_key=bad)
    with pytest.raises(ValueError, match="not a Sigstore bundle"):
        onnxzip.Trust(public_key=public, signature=public)
    with pytest.raises(onnxzip.SignatureError):  # PEM, but no key the library can use
        onnxzip.Trust(public_key=private.read_bytes().replace(b"EC PRIVATE KEY", b"PUBLIC KEY"))
    with pytest.raises(TypeError, match="trust must be an onnxzip.Trust"):
        onnxzip.open(tmp_path / "x.onnxzip", trust=pem)  # type: ignore[arg-type]


# ---- local packages --------------------------------------------------------------------------


def test_open_and_load(signed, trust):
    """Every model and every signed file, as the folder has them."""
    with onnxzip.open(signed.pkg, trust=trust) as a:
        assert a.is_package
        for path in a.files:
            if path == "model.sig" or path.startswith(".git"):  # ignore_paths: not signed, not handed out
                with pytest.raises(onnxzip.SignatureError) as e:
                    a.files[path]
                refused(e, "EUNSIGNED", path)
                continue
            assert bytes(a.files[path]) == (signed.folder / path).read_bytes(), path
        for path in a.models:
            got = onnxzip.load(signed.pkg, model=path, trust=trust)
            assert_models_equal(got, load_classic(signed.folder / path), path)
            assert_models_equal(a.models[path].model(load_data=True), load_classic(signed.folder / path), path)


def test_ort_session_runs(signed, trust, ort):
    for path in make_repos.model_paths(signed.folder):
        feeds = make_repos.sample_inputs(signed.folder / path)
        want = ort.InferenceSession(str(signed.folder / path)).run(None, feeds)
        got = onnxzip.ort_session(signed.pkg, model=path, trust=trust).run(None, feeds)
        assert [g.tobytes() for g in got] == [w.tobytes() for w in want], path


def test_wrong_key(signed, keys):
    other = onnxzip.Trust(public_key=keys["other"][1])
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.open(signed.pkg, trust=other)
    refused(e, "ESIGNATURE", str(signed.pkg))
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.load(signed.pkg, trust=other)
    refused(e, "ESIGNATURE")
    chain = onnxzip.Trust(certificate_chain=keys["ca"][0])  # a key-signed bundle, a chain trusted
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.open(signed.pkg, trust=chain)
    refused(e, "ESIGNATURE")


def test_unsigned(signed, trust):
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.open(signed.tampered["unsigned"], trust=trust)
    refused(e, "EUNSIGNED", str(signed.tampered["unsigned"]))
    with onnxzip.open(signed.tampered["unsigned"]) as a:  # without trust= as ever
        assert a.is_package


def test_changed_tokenizer(signed, trust):
    """Open works (the default model is untouched); the file is refused when asked for."""
    pkg = signed.tampered["tokenizer"]
    with onnxzip.open(pkg, trust=trust) as a:
        with pytest.raises(onnxzip.SignatureError) as e:
            a.files[signed.tokenizer]
        refused(e, "EMISMATCH", signed.tokenizer)
        for path in a.files:  # the others are still the signed ones
            if path != signed.tokenizer and a._covered(path):
                assert bytes(a.files[path]) == (signed.folder / path).read_bytes()


def test_changed_tensor(signed, trust):
    """The model whose data file changed is refused by open, load and
    .models, naming the file."""
    pkg, owner = signed.tampered["tensor"], signed.owner
    for call in (lambda: onnxzip.open(pkg, model=owner, trust=trust),
                 lambda: onnxzip.load(pkg, model=owner, trust=trust)):
        with pytest.raises(onnxzip.SignatureError) as e:
            call()
        refused(e, "EMISMATCH", signed.data_file)
    with onnxzip.open(pkg) as a:
        default = a.model_path
    if default == owner:  # open() itself checks the default model
        with pytest.raises(onnxzip.SignatureError) as e:
            onnxzip.open(pkg, trust=trust)
    else:
        with onnxzip.open(pkg, trust=trust) as a, pytest.raises(onnxzip.SignatureError) as e:
            a.models[owner]
    refused(e, "EMISMATCH", signed.data_file)


def test_changed_tensor_no_session(signed, trust, ort, monkeypatch):
    made = []
    real = ort.InferenceSession
    monkeypatch.setattr(ort, "InferenceSession", lambda *a, **k: made.append(a) or real(*a, **k))
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.ort_session(signed.tampered["tensor"], model=signed.owner, trust=trust)
    refused(e, "EMISMATCH", signed.data_file)
    assert made == []
    onnxzip.ort_session(signed.pkg, model=signed.owner, trust=trust)  # the recorder sees sessions
    assert len(made) == 1


def test_certificate_chain(folders, keys, venv_python, onnxzip_cli, tmp_path):
    folder = tmp_path / "folder"
    shutil.copytree(folders["transformers_js"], folder)
    ca, leaf_key, leaf = keys["ca"]
    sign(venv_python, folder, None, cert=(leaf_key, leaf, ca))
    pkg = pack(onnxzip_cli, folder, tmp_path / "repo.onnxzip")
    with onnxzip.open(pkg, trust=onnxzip.Trust(certificate_chain=ca)) as a:
        assert bytes(a.files["config.json"]) == (folder / "config.json").read_bytes()
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.open(pkg, trust=onnxzip.Trust(certificate_chain=keys["other_ca"][0]))
    refused(e, "ESIGNATURE")


def test_detached_signature(folders, keys, venv_python, onnxzip_cli, tmp_path):
    folder = tmp_path / "folder"
    shutil.copytree(folders["encoder_decoder"], folder)
    sig = sign(venv_python, folder, keys["publisher"][0], signature=tmp_path / "repo.sig")
    pkg = pack(onnxzip_cli, folder, tmp_path / "repo.onnxzip")
    public = keys["publisher"][1]
    for signature in (sig, sig.read_bytes()):
        with onnxzip.open(pkg, trust=onnxzip.Trust(public_key=public, signature=signature)) as a:
            assert bytes(a.files["config.json"]) == (folder / "config.json").read_bytes()
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.open(pkg, trust=onnxzip.Trust(public_key=public))
    refused(e, "EUNSIGNED")


def test_single_model_archive(keys, venv_python, onnxzip_cli, tmp_path, folders):
    """OMS's single-file model: the archive file is the one resource."""
    single = pack(onnxzip_cli, folders["genai"] / "model.onnx", tmp_path / "model.onnxzip")
    sig = tmp_path / "model.onnxzip.sig"
    run(venv_python, "-m", "model_signing", "sign", "key", single, "--private_key", keys["publisher"][0],
        "--signature", sig)
    trust = onnxzip.Trust(public_key=keys["publisher"][1], signature=sig)
    want = load_classic(folders["genai"] / "model.onnx")
    assert_models_equal(onnxzip.load(single, trust=trust), want, "single")
    changed = tmp_path / "changed.onnxzip"
    shutil.copy(single, changed)
    with onnxzip.open(single) as a:
        entry = next(e for e in a.entries if e.name != "__MODEL_PROTO")
    flip(changed, entry.data_offset + entry.size // 2)
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.open(changed, trust=trust)
    refused(e, "EMISMATCH")


# ---- onnxruntime-genai ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def og():
    return pytest.importorskip("onnxruntime_genai", reason="onnxruntime_genai is not importable by this "
                               "interpreter (the pinned venv has it)")


def tokens(og, model, prompt="The tokenizer and"):
    tok = og.Tokenizer(model)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=24)
    gen = og.Generator(model, params)
    gen.append_tokens(tok.encode(prompt))
    while not gen.is_done():
        gen.generate_next_token()
    return [int(t) for t in gen.get_sequence(0)]


@pytest.fixture(scope="module")
def genai(tmp_path_factory, folders, keys, venv_python, onnxzip_cli):
    root = tmp_path_factory.mktemp("genai")
    folder = root / "folder"
    shutil.copytree(folders["genai"], folder)
    sign(venv_python, folder, keys["publisher"][0])
    tampered = root / "tampered"
    shutil.copytree(folder, tampered)
    flip(tampered / "tokenizer.json", 10)
    return folder, pack(onnxzip_cli, folder, root / "repo.onnxzip"), pack(onnxzip_cli, tampered, root / "t.onnxzip")


def test_genai_model(og, genai, trust, tmp_path, monkeypatch):
    folder, pkg, tampered = genai
    want = tokens(og, og.Model(str(folder)))
    got = onnxzip.genai_model(pkg, cache_dir=tmp_path / "cache", trust=trust)
    assert tokens(og, got) == want
    entry = next((tmp_path / "cache" / "genai").iterdir()) if (tmp_path / "cache" / "genai").exists() else \
        next((tmp_path / "cache").iterdir())
    assert not (entry / "model.sig").exists()  # not signed itself: not written
    made = []
    monkeypatch.setattr(og, "Model", lambda *a: made.append(a))
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.genai_model(tampered, cache_dir=tmp_path / "cache2", trust=trust)
    refused(e, "EMISMATCH", "tokenizer.json")
    assert made == [] and not (tmp_path / "cache2").exists()


def changed_same_size(path):
    """One byte of the file changed, its size kept."""
    data = path.read_bytes()
    path.write_bytes(data[:-2] + (b"!" if data[-2:-1] != b"!" else b"?") + data[-1:])
    return data


def test_genai_cache_entry_checked_by_content(og, genai, trust, tmp_path):
    """A cache entry changed since it was written (same size) is used as it
    is without trust= (its files' sizes are checked), written again with
    it (its bytes are)."""
    folder, pkg, _ = genai
    cache = tmp_path / "cache"
    onnxzip.genai_model(pkg, cache_dir=cache, trust=trust)
    entry, = cache.iterdir()
    original = changed_same_size(entry / "tokenizer.json")
    model = onnxzip.genai_model(pkg, cache_dir=cache, trust=trust)
    assert [p.name for p in cache.iterdir()] == [entry.name]
    assert (entry / "tokenizer.json").read_bytes() == original == (folder / "tokenizer.json").read_bytes()
    assert tokens(og, model) == tokens(og, og.Model(str(folder)))
    os.chmod(entry, 0o775)  # same bytes, but another user (of the group) could change them
    onnxzip.genai_model(pkg, cache_dir=cache, trust=trust)
    assert entry.stat().st_mode & 0o777 == 0o700  # written again (mkdtemp's), not chmod-ed back
    untrusted = tmp_path / "untrusted"
    onnxzip.genai_model(pkg, cache_dir=untrusted)
    entry, = untrusted.iterdir()
    changed_same_size(entry / "tokenizer.json")
    onnxzip.genai_model(pkg, cache_dir=untrusted)
    assert (entry / "tokenizer.json").read_bytes() != original  # by size: as ever


# ---- remote: open_url and fetch over nginx ------------------------------------------------------


@pytest.fixture(scope="module")
def served(signed, remote_build):
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no HTTP origin to test against")
    with Nginx(str(signed.pkg.parent)) as ng:
        yield ng


def test_open_url(signed, served, trust, keys):
    url = served.url("files", signed.pkg.name) + "?sig=SECRET"
    with onnxzip.open_url(url, allow_http=True, trust=trust) as a:
        assert bytes(a.files[signed.tokenizer]) == (signed.folder / signed.tokenizer).read_bytes()
        for path in a.models:
            assert_models_equal(a.models[path].model(load_data=True), load_classic(signed.folder / path), path)
    bad = served.url("files", signed.tampered["tokenizer"].name)
    with onnxzip.open_url(bad, allow_http=True, trust=trust) as a:
        with pytest.raises(onnxzip.SignatureError) as e:
            a.files[signed.tokenizer]
        refused(e, "EMISMATCH", signed.tokenizer)
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.open_url(url, allow_http=True, trust=onnxzip.Trust(public_key=keys["other"][1]))
    refused(e, "ESIGNATURE")
    assert "SECRET" not in str(e.value)


def test_fetch(signed, served, trust, tmp_path):
    url = served.url("files", signed.pkg.name)
    out = tmp_path / "out" / "repo.onnxzip"
    out.parent.mkdir()
    onnxzip.fetch(url, out, allow_http=True, trust=trust)
    assert out.read_bytes() == signed.pkg.read_bytes()
    model = make_repos.model_paths(signed.folder)[0]
    one = tmp_path / "out" / "one.onnxzip"
    onnxzip.fetch(url, one, allow_http=True, model=model, trust=trust)
    with onnxzip.open(one) as a:
        assert_models_equal(a.model(load_data=True), load_classic(signed.folder / model), model)
    for what, status, name in (("tensor", "EMISMATCH", signed.data_file),
                               ("tokenizer", "EMISMATCH", signed.tokenizer),
                               ("unsigned", "EUNSIGNED", "")):
        bad = served.url("files", signed.tampered[what].name)
        empty = tmp_path / what
        empty.mkdir()
        with pytest.raises(onnxzip.SignatureError) as e:
            onnxzip.fetch(bad, empty / "x.onnxzip", allow_http=True, trust=trust)
        refused(e, status, name)
        assert os.listdir(empty) == [], what  # nothing written, nothing left
    bad = served.url("files", signed.tampered["tensor"].name)
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.fetch(bad, tmp_path / "tensor" / "m.onnxzip", allow_http=True, model=signed.owner, trust=trust)
    refused(e, "EMISMATCH", signed.data_file)
    assert os.listdir(tmp_path / "tensor") == []


def transferred(ng, name, fn):
    """Body bytes nginx sent of file `name` while fn() ran."""
    path = f"/files/{name}"
    before = len(ng.requests(path))
    fn()
    return sum(q["bytes"] for q in ng.requests(path, wait_for=before + 1)[before:])


def test_fetch_model_crosses_the_network_once(signed, served, trust, onnxzip_cli, tmp_path):
    """fetch(model=M, trust=) transfers M's bytes once (spec 20.5: checked
    where they were written), not checked through the URL and fetched again:
    beyond what an untrusted fetch of M moves, only the signature and the
    model entries the names check plans, far less than M's tensors. A shard
    (tensors=) cannot be checked: refused before any request."""
    url = served.url("files", signed.pkg.name)
    plain = transferred(served, signed.pkg.name, lambda: onnxzip.fetch(
        url, tmp_path / "plain.onnxzip", allow_http=True, model=signed.owner))
    trusted = transferred(served, signed.pkg.name, lambda: onnxzip.fetch(
        url, tmp_path / "trusted.onnxzip", allow_http=True, model=signed.owner, trust=trust))
    listing = json.loads(cli(onnxzip_cli, "ls", signed.pkg, "--json").stdout)
    tensor_bytes, = [m["tensor_bytes"] for m in listing["models"] if m["path"] == signed.owner]
    assert trusted - plain < tensor_bytes / 2, (plain, trusted, tensor_bytes)
    assert (tmp_path / "trusted.onnxzip").read_bytes() == (tmp_path / "plain.onnxzip").read_bytes()
    before = len(served.requests(f"/files/{signed.pkg.name}"))
    with pytest.raises(ValueError, match="shard"):
        onnxzip.fetch(url, tmp_path / "shard.onnxzip", allow_http=True, tensors="*", trust=trust)
    assert len(served.requests(f"/files/{signed.pkg.name}")) == before
    assert not (tmp_path / "shard.onnxzip").exists()


def forge_crc32(data: bytes, at: int) -> bytes:
    """data changed (a byte at `at` + 4) and then bytes [at, at + 4) solved
    so that zlib.crc32 is unchanged: CRC-32 is affine over GF(2), so the 32
    bit flips of a 4-byte window span every difference (what an origin that
    forges a CRC-32 does)."""
    want = zlib.crc32(data)
    d = bytearray(data)
    d[at + 4] ^= 0xFF
    d[at:at + 4] = bytes(4)
    base = zlib.crc32(d)
    basis = {}  # leading bit -> (crc delta, window bits): Gaussian elimination over GF(2)
    for b in range(32):
        x = bytearray(d)
        x[at + b // 8] ^= 1 << (b % 8)
        delta, bits = zlib.crc32(x) ^ base, 1 << b
        while delta and delta.bit_length() - 1 in basis:
            r_delta, r_bits = basis[delta.bit_length() - 1]
            delta, bits = delta ^ r_delta, bits ^ r_bits
        assert delta, "CRC-32 over 4 bytes is full rank"
        basis[delta.bit_length() - 1] = (delta, bits)
    target, bits = want ^ base, 0
    while target:
        r_delta, r_bits = basis[target.bit_length() - 1]
        target, bits = target ^ r_delta, bits ^ r_bits
    assert target == 0
    d[at:at + 4] = bits.to_bytes(4, "little")
    assert zlib.crc32(d) == want and bytes(d) != data
    return bytes(d)


def test_read_after_trusted_open_hands_out_the_checked_bytes(signed, served, trust, tmp_path):
    """Spec 20.5: a tensor read after open_url(trust=) checked it is a new
    transfer, which a hostile origin may answer with other bytes. Here the
    origin drops the entry's XXH3 (an unknown digest algorithm, which
    readers ignore: the signature does not cover the zip's directory) and,
    once the open is done, swaps the file for one whose tensor bytes differ
    with the same CRC-32 and the same ETag (size and mtime). The read is
    refused (EMISMATCH naming the entry and the URL, not its query), where
    it used to return the forged bytes."""
    model = onnx.load(str(signed.folder / signed.owner), load_external_data=False)
    t = next(t for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL)
    keys = {kv.key: kv.value for kv in t.external_data}
    start = int(keys.get("offset") or 0)
    data_file = signed.folder / posix_join(signed.owner, keys["location"])
    weight = data_file.read_bytes()[start:start + int(keys["length"])]
    data = bytearray(signed.pkg.read_bytes())
    with zipfile.ZipFile(signed.pkg) as z:  # the oracle: where the entries holding the weight lie
        entries = [i for i in z.infolist() if i.file_size == len(weight) and z.read(i) == weight]
        assert entries, t.name
        for i in entries:
            field = i.extra[-14:]  # the digest field, last of the central extra area (spec 4.4)
            assert field[:4] == b"OZ\x0a\x00" and field[5] == 1, field
            at = data.rindex(field)
            data[at + 5] = 2  # an algorithm readers do not know: its digest is not checked
    served_path = signed.pkg.parent / "pinned.onnxzip"
    served_path.write_bytes(bytes(data))
    forged = bytearray(data)
    for i in entries:
        h = i.header_offset  # data after the local header: its name and extra lengths
        begin = h + 30 + int.from_bytes(data[h + 26:h + 28], "little") + int.from_bytes(data[h + 28:h + 30], "little")
        forged[begin:begin + len(weight)] = forge_crc32(weight, len(weight) // 2 - 4)
    stat = served_path.stat()
    url = served.url("files", served_path.name) + "?sig=SECRET"
    with onnxzip.open_url(url, allow_http=True, model=signed.owner, trust=trust) as a:
        assert a.array(t.name).tobytes() == weight
        swap = tmp_path / "swap"
        swap.write_bytes(bytes(forged))
        os.utime(swap, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # nginx's ETag: size and mtime
        os.replace(swap, served_path)
        with pytest.raises(onnxzip.SignatureError) as e:
            a.array(t.name)
        refused(e, "EMISMATCH", served.url("files", served_path.name), entries[0].filename)
        assert "SECRET" not in str(e.value)


def test_classic_model_with_external_data_refused(signed, trust):
    """OMS signs such a model as its folder: the .onnx file alone ("." of a
    single-file model) would leave its data files unchecked."""
    with pytest.raises(onnxzip.UnsupportedError, match="external data"):
        onnxzip.open(signed.folder / signed.owner, trust=trust)


def test_classic_single_file(keys, venv_python, tmp_path):
    """A classic .onnx signed as OMS's single-file model (detached): used
    with trust=; one weight byte changed (the protobuf still valid): refused."""
    model = matmul_model(64, 32, seed=3)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    sig = tmp_path / "model.onnx.sig"
    run(venv_python, "-m", "model_signing", "sign", "key", path, "--private_key", keys["publisher"][0],
        "--signature", sig)
    trust = onnxzip.Trust(public_key=keys["publisher"][1], signature=sig)
    assert_models_equal(onnxzip.load(path, trust=trust), model, "classic")
    weight = max(model.graph.initializer, key=lambda t: len(t.raw_data)).raw_data
    flip(path, path.read_bytes().index(weight) + len(weight) // 2)
    with pytest.raises(onnxzip.SignatureError) as e:
        onnxzip.load(path, trust=trust)
    refused(e, "EMISMATCH", str(path))


def test_threads_share_a_trusted_archive(signed, trust):
    """Files and models checked from several threads at once (one
    onnxzip_signed per package, used by one thread at a time)."""
    from concurrent.futures import ThreadPoolExecutor
    with onnxzip.open(signed.pkg, trust=trust) as a:
        paths = [p for p in a.files if a._covered(p)] * 4
        models = list(a.models) * 2
        with ThreadPoolExecutor(8) as pool:
            files = list(pool.map(lambda p: bytes(a.files[p]), paths))
            model_paths = list(pool.map(lambda m: a.models[m].model_path, models))
    assert files == [(signed.folder / p).read_bytes() for p in paths]
    assert model_paths == models



@pytest.fixture(scope="module")
def shards(tmp_path_factory, folders, keys, venv_python, onnxzip_cli):
    """The genai layout signed by model_signing's 'shards' method (its Python
    API; shards of 100000 bytes, so the weights span several), packed; and
    a package of it whose tokenizer changed a byte: (folder, pkg, bad,
    tokenizer)."""
    root = tmp_path_factory.mktemp("shards")
    folder = root / "folder"
    shutil.copytree(folders["genai"], folder)
    run(venv_python, "-c", "import pathlib, sys\n"
        "from model_signing import hashing, signing\n"
        "d = pathlib.Path(sys.argv[1])\n"
        "signing.Config().use_elliptic_key_signer(private_key=sys.argv[2]).set_hashing_config("
        "hashing.Config().use_shard_serialization(shard_size=100000).set_ignored_paths("
        "paths=[pathlib.Path('model.sig')], ignore_git_paths=True)).sign(d, d / 'model.sig')",
        folder, keys["publisher"][0])
    pkg = pack(onnxzip_cli, folder, root / "shards.onnxzip")
    tokenizer = next(p for p in TOKENIZER if (folder / p).exists())
    changed = root / "changed"
    shutil.copytree(folder, changed)
    flip(changed / tokenizer, 10)
    return folder, pkg, pack(onnxzip_cli, changed, root / "bad.onnxzip"), tokenizer


def check_shards_files(opened, folder, tokenizer):
    with opened as a:
        covered = [p for p in a.files if a._covered(p)]
        assert tokenizer in covered and "model.sig" not in covered, covered
        for path in covered:
            assert bytes(a.files[path]) == (folder / path).read_bytes(), path


def test_shards_signature(shards, trust):
    """Every file of a 'shards' signature is covered and handed out checked
    shard by shard; a changed tokenizer byte is EMISMATCH naming its shard.
    Files used to be refused as unsigned (EUNSIGNED): their paths are not
    the statement's names (PATH:START:END)."""
    folder, pkg, bad, tokenizer = shards
    check_shards_files(onnxzip.open(pkg, trust=trust), folder, tokenizer)
    with onnxzip.open(bad, trust=trust) as a:
        with pytest.raises(onnxzip.SignatureError) as e:
            a.files[tokenizer]
        refused(e, "EMISMATCH", f"{tokenizer}:0:")


def test_shards_signature_remote(shards, trust, remote_build):
    """The same through a URL, where a plain file is fetched once and its
    bytes hashed shard by shard (onnxzip_signed_check_bytes)."""
    if not os.access(NGINX, os.X_OK):
        pytest.skip(f"{NGINX} is absent (.ci/install-deps installs nginx): no HTTP origin to test against")
    folder, pkg, bad, tokenizer = shards
    with Nginx(str(pkg.parent)) as ng:
        check_shards_files(onnxzip.open_url(ng.url("files", pkg.name), allow_http=True, trust=trust), folder,
                           tokenizer)
        with onnxzip.open_url(ng.url("files", bad.name), allow_http=True, trust=trust) as a:
            with pytest.raises(onnxzip.SignatureError) as e:
                a.files[tokenizer]
            refused(e, "EMISMATCH", f"{tokenizer}:0:")
