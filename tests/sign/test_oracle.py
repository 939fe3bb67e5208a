"""Signed packages against the reference tool, model_signing 1.1.1, on the
four layouts of tests/packages: folders it signs verify as packages (key and
certificate, model.sig inside or detached), packages `onnxzip sign` signs
verify with it once unpacked, a single-model archive is OMS's single-file
model, and `verify --model M` reads M's files only."""
import json
import pathlib
import zipfile

import make_repos
import pytest
from conftest import LAYOUTS
from signtools import (copy_repo, flip, ms_sign_cert, ms_sign_key, ms_verified, ok, out, pack, refused, rewrite,
                       run)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_folder_signed_with_key_verifies_as_package(layout, repos, pki, model_signing, onnxzip_cli, tmp_path):
    d = copy_repo(repos[layout], tmp_path / layout)
    ms_sign_key(model_signing, d, pki)
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    with zipfile.ZipFile(pkg) as z:
        assert "model.sig" in z.namelist()  # pack keeps it: a plain file
    p = ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub))
    assert "signature verified" in p.stdout, p.stdout
    for m in make_repos.model_paths(d):
        p = ok(run(onnxzip_cli, "verify", pkg, "--model", m, "--public-key", pki.pub))
        assert m in p.stdout, p.stdout
    refused(run(onnxzip_cli, "verify", pkg, "--public-key", pki.wrong_pub), "ESIGNATURE")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_folder_signed_with_certificate_verifies_as_package(layout, repos, pki, model_signing, onnxzip_cli,
                                                            tmp_path):
    d = copy_repo(repos[layout], tmp_path / layout)
    ms_sign_cert(model_signing, d, pki)
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    ok(run(onnxzip_cli, "verify", pkg, "--certificate-chain", pki.ca))
    m = make_repos.model_paths(d)[0]
    ok(run(onnxzip_cli, "verify", pkg, "--model", m, "--certificate-chain", pki.ca))
    # the oracle agrees about the folder it signed
    ms_verified(run(model_signing, "verify", "certificate", d, "--signature", d / "model.sig",
                    "--certificate_chain", pki.ca))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_onnxzip_sign_key_verifies_with_model_signing(layout, repos, pki, model_signing, onnxzip_cli, tmp_path):
    pkg = pack(onnxzip_cli, repos[layout], tmp_path / "p.onnxzip")
    refused(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub), "EUNSIGNED")
    ok(run(onnxzip_cli, "sign", pkg, "--private-key", pki.key))
    ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub))
    ok(run(onnxzip_cli, "verify", pkg))  # still a sound archive: CRC-32, XXH3
    out = tmp_path / "out"
    ok(run(onnxzip_cli, "unpack", pkg, out))
    ms_verified(run(model_signing, "verify", "key", out, "--signature", out / "model.sig",
                    "--public_key", pki.pub))
    # signing again replaces model.sig (one entry, still verifying)
    ok(run(onnxzip_cli, "sign", pkg, "--private-key", pki.key))
    with zipfile.ZipFile(pkg) as z:
        assert z.namelist().count("model.sig") == 1
    ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_onnxzip_sign_certificate_verifies_with_model_signing(layout, repos, pki, model_signing, onnxzip_cli,
                                                              tmp_path):
    pkg = pack(onnxzip_cli, repos[layout], tmp_path / "p.onnxzip")
    ok(run(onnxzip_cli, "sign", pkg, "--private-key", pki.leaf_key, "--certificate", pki.leaf,
           "--certificate-chain", pki.intermediate))
    ok(run(onnxzip_cli, "verify", pkg, "--certificate-chain", pki.ca))
    refused(run(onnxzip_cli, "verify", pkg, "--certificate-chain", pki.other), "ESIGNATURE")
    out = tmp_path / "out"
    ok(run(onnxzip_cli, "unpack", pkg, out))
    ms_verified(run(model_signing, "verify", "certificate", out, "--signature", out / "model.sig",
                    "--certificate_chain", pki.ca))


def test_detached_signatures_both_ways(repos, pki, model_signing, onnxzip_cli, tmp_path):
    d = copy_repo(repos["encoder_decoder"], tmp_path / "repo")
    sig = ms_sign_key(model_signing, d, pki, sig=tmp_path / "folder.sig")  # outside the folder
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    refused(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub), "EUNSIGNED")
    ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub, "--signature", sig))
    m = make_repos.model_paths(d)[0]
    ok(run(onnxzip_cli, "verify", pkg, "--model", m, "--public-key", pki.pub, "--signature", sig))

    before = pkg.read_bytes()
    # a detached signature over the package itself (or the key) would destroy it
    refused(run(onnxzip_cli, "sign", pkg, "--private-key", pki.key, "--signature", pkg), "ESAMEFILE", str(pkg))
    key = tmp_path / "key.pem"
    key.write_bytes(pki.key.read_bytes())
    refused(run(onnxzip_cli, "sign", pkg, "--private-key", key, "--signature", key), "ESAMEFILE")
    assert pkg.read_bytes() == before and key.read_bytes() == pki.key.read_bytes()
    sig2 = tmp_path / "pkg.sig"
    ok(run(onnxzip_cli, "sign", pkg, "--private-key", pki.key, "--signature", sig2))
    assert pkg.read_bytes() == before, "a detached signature changed the package"
    ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub, "--signature", sig2))
    out = tmp_path / "out"
    ok(run(onnxzip_cli, "unpack", pkg, out))
    ms_verified(run(model_signing, "verify", "key", out, "--signature", sig2, "--public_key", pki.pub))


def test_single_model_archive_is_a_single_file_model(repos, pki, model_signing, onnxzip_cli, tmp_path):
    arc = tmp_path / "model.onnxzip"
    ok(run(onnxzip_cli, "pack", repos["genai"] / "model.onnx", "-o", arc, "-q", "--no-sync"))
    sig = tmp_path / "model.onnxzip.sig"
    ms_sign_key(model_signing, arc, pki, sig=sig)
    assert json.loads(sig.read_text())["dsseEnvelope"]  # the oracle wrote a bundle
    p = ok(run(onnxzip_cli, "verify", arc, "--public-key", pki.pub, "--signature", sig))
    assert "signature verified" in p.stdout
    refused(run(onnxzip_cli, "verify", arc, "--public-key", pki.pub), "EUNSIGNED")
    refused(run(onnxzip_cli, "sign", arc, "--private-key", pki.key), "EINVAL", "signature")
    sig2 = tmp_path / "ours.sig"
    ok(run(onnxzip_cli, "sign", arc, "--private-key", pki.key, "--signature", sig2))
    ms_verified(run(model_signing, "verify", "key", arc, "--signature", sig2, "--public_key", pki.pub))
    # one byte of a tensor changed, CRC-32 and XXH3 made consistent: only the signature sees it
    bad = rewrite(arc, tmp_path / "bad.onnxzip", {"model_embed_tokens_weight": flip(100)})
    ok(run(onnxzip_cli, "verify", bad))
    refused(run(onnxzip_cli, "verify", bad, "--public-key", pki.pub, "--signature", sig), "EMISMATCH",
            "bad.onnxzip")


def test_verify_model_hashes_only_its_files(repos, pki, model_signing, onnxzip_cli, tmp_path):
    """A tensor of model_fp16 changed consistently: --model onnx/model.onnx
    (which does not use it) still verifies, the fp16 model and the whole
    package do not. The q4 model shares the fp32 model's embedding."""
    d = copy_repo(repos["transformers_js"], tmp_path / "repo")
    ms_sign_key(model_signing, d, pki)
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    bad = rewrite(pkg, tmp_path / "bad.onnxzip", {"onnx/lm_head_weight_2": flip(7)})
    ok(run(onnxzip_cli, "verify", bad))  # CRC-32 and XXH3 agree with the change
    ok(run(onnxzip_cli, "verify", bad, "--model", "onnx/model.onnx", "--public-key", pki.pub))
    ok(run(onnxzip_cli, "verify", bad, "--model", "onnx/model_q4.onnx", "--public-key", pki.pub))
    refused(run(onnxzip_cli, "verify", bad, "--model", "onnx/model_fp16.onnx", "--public-key", pki.pub),
            "EMISMATCH", "onnx/model_fp16.onnx_data")
    refused(run(onnxzip_cli, "verify", bad, "--public-key", pki.pub), "EMISMATCH", "onnx/model_fp16.onnx_data")
    # the shared embedding changed: both models using it fail, the fp16 one verifies
    bad2 = rewrite(pkg, tmp_path / "bad2.onnxzip", {"onnx/model_embed_tokens_weight": flip(9)})
    for m in ("onnx/model.onnx", "onnx/model_q4.onnx"):
        refused(run(onnxzip_cli, "verify", bad2, "--model", m, "--public-key", pki.pub), "EMISMATCH", "onnx/")
    ok(run(onnxzip_cli, "verify", bad2, "--model", "onnx/model_fp16.onnx", "--public-key", pki.pub))


def test_extract_file_checked_before_written(repos, pki, model_signing, onnxzip_cli, tmp_path):
    d = copy_repo(repos["genai"], tmp_path / "repo")
    ms_sign_key(model_signing, d, pki)
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    out = tmp_path / "tok.json"
    ok(run(onnxzip_cli, "extract", pkg, "--file", "tokenizer.json", "-o", out, "--public-key", pki.pub))
    assert out.read_bytes() == (d / "tokenizer.json").read_bytes()
    # the output is checked before the temporary file is renamed over it: never the package, nor a directory
    before = pkg.read_bytes()
    refused(run(onnxzip_cli, "extract", pkg, "--file", "tokenizer.json", "-o", pkg, "--public-key", pki.pub),
            "ESAMEFILE")
    refused(run(onnxzip_cli, "extract", pkg, "--file", "tokenizer.json", "-o", tmp_path, "--public-key", pki.pub),
            "ENOTREG")
    assert pkg.read_bytes() == before
    p = ok(run(onnxzip_cli, "extract", pkg, "--file", "tokenizer.json", "--public-key", pki.pub))  # to stdout
    assert p.stdout == (d / "tokenizer.json").read_text()
    # a tensor: its model's files checked first (in the mapping it is then extracted from)
    t = tmp_path / "t.bin"
    ok(run(onnxzip_cli, "extract", pkg, "model.embed_tokens.weight", "-o", t, "--public-key", pki.pub))
    bad_t = rewrite(pkg, tmp_path / "bad_t.onnxzip", {"model_embed_tokens_weight": flip(11)})
    refused(run(onnxzip_cli, "extract", bad_t, "model.embed_tokens.weight", "-o", tmp_path / "t2.bin",
                "--public-key", pki.pub), "EMISMATCH", "model.onnx.data")
    assert not (tmp_path / "t2.bin").exists()
    bad = rewrite(pkg, tmp_path / "bad.onnxzip", {"tokenizer.json": flip(3)})
    out2 = tmp_path / "tok2.json"
    refused(run(onnxzip_cli, "extract", bad, "--file", "tokenizer.json", "-o", out2, "--public-key", pki.pub),
            "EMISMATCH", "tokenizer.json")
    assert not out2.exists()
    p = run(onnxzip_cli, "extract", bad, "--file", "tokenizer.json", "--public-key", pki.pub)  # to stdout
    refused(p, "EMISMATCH", "tokenizer.json")
    assert p.stdout == ""
    # another file's change does not stop this one
    ok(run(onnxzip_cli, "extract", bad, "--file", "genai_config.json", "-o", tmp_path / "g.json",
           "--public-key", pki.pub))


def test_shards_signed_by_model_signing_api(repos, pki, onnxzip_cli, tmp_path):
    """model_signing's method 'shards' (its Python API only: the CLI signs
    with 'files'), shards of 100000 bytes: the package verifies, whole and
    per model; a byte of a tensor changed fails naming the data file."""
    from model_signing import hashing, signing
    d = copy_repo(repos["genai"], tmp_path / "repo")
    signing.Config().use_elliptic_key_signer(private_key=pki.key).set_hashing_config(
        hashing.Config().use_shard_serialization(shard_size=100000).set_ignored_paths(
            paths=[pathlib.Path("model.sig")], ignore_git_paths=True)).sign(d, d / "model.sig")
    assert json.loads(statement_text(d / "model.sig"))["predicate"]["serialization"]["method"] == "shards"
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub))
    ok(run(onnxzip_cli, "verify", pkg, "--model", "model.onnx", "--public-key", pki.pub))
    bad = rewrite(pkg, tmp_path / "bad.onnxzip", {"model_embed_tokens_weight": flip(70000)})
    refused(run(onnxzip_cli, "verify", bad, "--public-key", pki.pub), "EMISMATCH", "model.onnx.data")
    # extract --file hashes what it wrote, shard by shard (it used to look the file's path up among the
    # shards' PATH:START:END names and refuse it as not covered)
    out = tmp_path / "tok.json"
    ok(run(onnxzip_cli, "extract", pkg, "--file", "tokenizer.json", "-o", out, "--public-key", pki.pub))
    assert out.read_bytes() == (d / "tokenizer.json").read_bytes()
    bad = rewrite(pkg, tmp_path / "bad_tok.onnxzip", {"tokenizer.json": flip(3)})
    refused(run(onnxzip_cli, "extract", bad, "--file", "tokenizer.json", "-o", tmp_path / "t2.json",
                "--public-key", pki.pub), "EMISMATCH", "tokenizer.json:0:")
    assert not (tmp_path / "t2.json").exists()


def statement_text(sig):
    import base64
    return base64.b64decode(json.loads(pathlib.Path(sig).read_text())["dsseEnvelope"]["payload"])


def data_offsets(pkg):
    """Each entry's data offset, from its local header (zipfile, not onnxzip)."""
    with zipfile.ZipFile(pkg) as z, open(pkg, "rb") as f:
        offsets = {}
        for i in z.infolist():
            f.seek(i.header_offset)
            h = f.read(30)
            offsets[i.filename] = i.header_offset + 30 + int.from_bytes(h[26:28], "little") + \
                int.from_bytes(h[28:30], "little")
        return offsets


def test_sign_keeps_the_package_alignment(repos, pki, model_signing, onnxzip_cli, tmp_path):
    """A package packed page-aligned stays so once signed in place (sign
    rewrites it whole): every entry's data still at a multiple of 4096."""
    pkg = tmp_path / "p.onnxzip"
    ok(run(onnxzip_cli, "pack", repos["genai"], "-o", pkg, "--align", "4096", "-q"))
    assert all(o % 4096 == 0 for o in data_offsets(pkg).values())
    ok(run(onnxzip_cli, "sign", pkg, "--private-key", pki.key))
    offsets = data_offsets(pkg)
    assert "model.sig" in offsets
    assert {n: o % 4096 for n, o in offsets.items() if o % 4096} == {}
    ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub))


def test_the_signature_read_is_left_out(repos, pki, model_signing, onnxzip_cli, tmp_path):
    """As model_signing verify does: a folder signed with its signature
    outside (the statement does not name model.sig), then given that
    signature as DIR/model.sig, verifies, the package too; with another
    signature given, that model.sig is an extra file for both."""
    d = copy_repo(repos["genai"], tmp_path / "repo")
    sig = ms_sign_key(model_signing, d, pki, sig=tmp_path / "out.sig")
    assert b"model.sig" not in statement_text(sig)
    (d / "model.sig").write_bytes(pathlib.Path(sig).read_bytes())
    ms_verified(run(model_signing, "verify", "key", d, "--signature", d / "model.sig", "--public_key", pki.pub))
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub))
    p = run(model_signing, "verify", "key", d, "--signature", sig, "--public_key", pki.pub)
    assert p.returncode != 0 and "model.sig" in p.stdout + p.stderr, out(p)
    refused(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub, "--signature", sig), "EMISMATCH", "model.sig")


def test_a_file_the_signature_leaves_out_is_never_handed_out(repos, pki, model_signing, onnxzip_cli, tmp_path):
    """model_signing's --ignore_paths leaves a file out of the statement: the
    package verifies whole, and asking for that file by name is EUNSIGNED
    (spec 20.5): extract --file writes nothing."""
    d = copy_repo(repos["genai"], tmp_path / "repo")
    (d / "notes.txt").write_text("not signed\n")
    ok(run(model_signing, "sign", "key", d, "--private_key", pki.key, "--signature", d / "model.sig",
           "--ignore-paths", d / "notes.txt"))
    ms_verified(run(model_signing, "verify", "key", d, "--signature", d / "model.sig", "--public_key", pki.pub,
                    "--ignore-paths", d / "notes.txt"))
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    ok(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub))
    o = tmp_path / "notes.out"
    refused(run(onnxzip_cli, "extract", pkg, "--file", "notes.txt", "-o", o, "--public-key", pki.pub),
            "EUNSIGNED", "notes.txt", "not covered")
    assert not o.exists()
