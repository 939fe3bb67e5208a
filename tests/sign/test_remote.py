"""Signed packages over HTTP (nginx, tests/remote/servers.py): `fetch URL
--model M --public-key` transfers at most 1.01x the bytes M needs (its
tensor entries, model entry, manifest, directory) plus the signature,
counted from nginx's access log, and writes nothing when M's files do not
match the signed statement; `fetch` of the whole package and `extract URL
--file` likewise."""
import os
import subprocess
import zipfile

import numpy as np
import pytest
from packages import model, needed  # tests/remote/packages.py: the transfer budget of spec 19.5
from servers import Nginx  # tests/remote/servers.py
from signtools import flip, ms_sign_key, ok, pack, refused, rewrite, run

MODELS = ("model.onnx", "onnx/encoder.onnx")


def local_header_and_data(pkg, name):
    """The bytes entry `name` takes in the file: local header and data."""
    with zipfile.ZipFile(pkg) as z:
        info = z.getinfo(name)
    with open(pkg, "rb") as f:
        f.seek(info.header_offset + 26)
        n, m = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
    return 30 + n + m + info.file_size


@pytest.fixture(scope="module")
def served(pki, model_signing, onnxzip_cli, tmp_path_factory):
    """A signed package of two models (8 MiB of weights each, in data files:
    at that size the first request's 64 KiB tail is within the budget)
    and a plain file, served by nginx with copies whose bytes were changed
    consistently (CRC-32 and XXH3 agree)."""
    base = tmp_path_factory.mktemp("remote")
    repo, www = base / "repo", base / "www"
    (repo / "onnx").mkdir(parents=True)
    www.mkdir()
    rng = np.random.default_rng(36)
    model(str(repo / "model.onnx"), {"w": rng.standard_normal((2048, 1024), dtype=np.float32)})
    model(str(repo / "onnx" / "encoder.onnx"), {"e": rng.standard_normal((2048, 1024), dtype=np.float32)})
    (repo / "tokenizer.json").write_bytes(bytes(range(256)) * 16)
    ms_sign_key(model_signing, repo, pki)
    pkg = pack(onnxzip_cli, repo, www / "p.onnxzip")
    rewrite(pkg, www / "bad_m.onnxzip", {"w": flip(1000)})
    rewrite(pkg, www / "bad_other.onnxzip", {"onnx/e": flip(1000)})
    rewrite(pkg, www / "bad_tok.onnxzip", {"tokenizer.json": flip(5)})
    with Nginx(str(www)) as ng:
        yield ng, pkg


def transfer(ng, name, fn):
    path = f"/files/{name}"
    before = len(ng.requests(path))
    r = fn()
    after = ng.requests(path, wait_for=before + 1)
    return r, sum(q["bytes"] for q in after[before:])


@pytest.mark.parametrize("m", MODELS)
def test_fetch_model_transfers_its_bytes_and_the_signature(m, served, pki, onnxzip_cli, tmp_path):
    ng, pkg = served
    out = tmp_path / "m.onnxzip"
    r, got = transfer(ng, "p.onnxzip", lambda: run(onnxzip_cli, "fetch", "--allow-http", "-q", "--model", m,
                                                   ng.url("files", "p.onnxzip"), "-o", out,
                                                   "--public-key", pki.pub))
    ok(r)
    need, sig = needed(str(pkg), str(onnxzip_cli), m), local_header_and_data(pkg, "model.sig")
    assert got <= 1.01 * need + sig, f"{got} bytes transferred for {need} needed + {sig} of signature"
    ok(run(onnxzip_cli, "verify", out))


def test_fetch_model_tampered_writes_nothing(served, pki, onnxzip_cli, tmp_path):
    ng, _ = served
    out = tmp_path / "out" / "m.onnxzip"
    r = run(onnxzip_cli, "fetch", "--allow-http", "-q", "--model", "model.onnx", ng.url("files", "bad_m.onnxzip"),
            "-o", out, "--public-key", pki.pub)
    refused(r, "EMISMATCH", "model.onnx_data")
    assert not out.exists() and (not out.parent.exists() or not os.listdir(out.parent)), \
        os.listdir(out.parent)
    # the other model's change does not concern this one
    ok(run(onnxzip_cli, "fetch", "--allow-http", "-q", "--model", "model.onnx",
           ng.url("files", "bad_other.onnxzip"), "-o", out, "--public-key", pki.pub))
    # without a trust the changed bytes pass every CRC-32 and XXH3
    ok(run(onnxzip_cli, "fetch", "--allow-http", "-q", "--model", "model.onnx", ng.url("files", "bad_m.onnxzip"),
           "-o", tmp_path / "unchecked.onnxzip"))


def test_fetch_whole_package(served, pki, onnxzip_cli, tmp_path):
    ng, pkg = served
    out = tmp_path / "all.onnxzip"
    ok(run(onnxzip_cli, "fetch", "--allow-http", "-q", ng.url("files", "p.onnxzip"), "-o", out,
           "--public-key", pki.pub))
    assert out.read_bytes() == pkg.read_bytes()
    bad = tmp_path / "bad" / "all.onnxzip"
    refused(run(onnxzip_cli, "fetch", "--allow-http", "-q", ng.url("files", "bad_other.onnxzip"), "-o", bad,
                "--public-key", pki.pub), "EMISMATCH", "onnx/encoder.onnx_data")
    assert not bad.parent.exists() or not os.listdir(bad.parent), os.listdir(bad.parent)


def test_extract_file_from_url(served, pki, onnxzip_cli, tmp_path):
    ng, pkg = served
    out = tmp_path / "tok.json"
    ok(run(onnxzip_cli, "extract", "--allow-http", ng.url("files", "p.onnxzip"), "--file", "tokenizer.json",
           "-o", out, "--public-key", pki.pub))
    with zipfile.ZipFile(pkg) as z:
        assert out.read_bytes() == z.read("tokenizer.json")
    out2 = tmp_path / "tok2.json"
    refused(run(onnxzip_cli, "extract", "--allow-http", ng.url("files", "bad_tok.onnxzip"), "--file",
                "tokenizer.json", "-o", out2, "--public-key", pki.pub), "EMISMATCH", "tokenizer.json")
    assert not out2.exists()
    p = subprocess.run([str(onnxzip_cli), "extract", "--allow-http", ng.url("files", "p.onnxzip"), "--file",
                        "tokenizer.json", "--public-key", str(pki.pub)], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr  # to standard output, through a checked temporary file
    with zipfile.ZipFile(pkg) as z:
        assert p.stdout == z.read("tokenizer.json")
    # a tensor would be read again after its model's check: refused from a URL
    refused(run(onnxzip_cli, "extract", "--allow-http", ng.url("files", "p.onnxzip"), "w", "-o", tmp_path / "w.bin",
                "--public-key", pki.pub), "EUNSUPPORTED", "fetch --model")
    assert not (tmp_path / "w.bin").exists()


def test_verify_url_model(served, pki, onnxzip_cli):
    ng, _ = served
    ok(run(onnxzip_cli, "verify", "--allow-http", ng.url("files", "bad_other.onnxzip"), "--model", "model.onnx",
           "--public-key", pki.pub))
    refused(run(onnxzip_cli, "verify", "--allow-http", ng.url("files", "bad_other.onnxzip"),
                "--public-key", pki.pub), "EMISMATCH", "onnx/encoder.onnx_data")


def test_fetch_tensors_with_a_trust_refused(served, pki, onnxzip_cli, tmp_path):
    """A shard holds part of the signed files: it cannot be checked as it is
    written, so the combination is a usage error; nothing is fetched."""
    ng, _ = served
    out = tmp_path / "shard.onnxzip"
    before = len(ng.requests("/files/"))
    p = run(onnxzip_cli, "fetch", "--allow-http", "--model", "model.onnx", "--tensors", "w",
            ng.url("files", "p.onnxzip"), "-o", out, "--public-key", pki.pub)
    assert p.returncode == 2 and "--tensors cannot be checked against a signature" in p.stderr, p.stderr
    assert not out.exists() and len(ng.requests("/files/")) == before


def test_fetch_model_with_detached_signature(served, pki, onnxzip_cli, tmp_path):
    """--signature: the bundle from a file (here the package's own, copied
    out by zipfile); with another key's bundle nothing is written."""
    ng, pkg = served
    sig = tmp_path / "p.sig"
    with zipfile.ZipFile(pkg) as z:
        sig.write_bytes(z.read("model.sig"))
    out = tmp_path / "m.onnxzip"
    ok(run(onnxzip_cli, "fetch", "--allow-http", "-q", "--model", "onnx/encoder.onnx", ng.url("files", "p.onnxzip"),
           "-o", out, "--public-key", pki.pub, "--signature", sig))
    out2 = tmp_path / "m2.onnxzip"
    refused(run(onnxzip_cli, "fetch", "--allow-http", "-q", "--model", "onnx/encoder.onnx",
                ng.url("files", "p.onnxzip"), "-o", out2, "--public-key", pki.wrong_pub, "--signature", sig),
            "ESIGNATURE")
    assert not out2.exists()
