"""Every bad input of issue 36, each refused with its own status and a
message naming what is wrong: untrusted signatures (ESIGNATURE), malformed
or unsupported bundles and statements (EBUNDLE, EUNSUPPORTED), packages
that differ from their statement (EMISMATCH), unsigned ones (EUNSIGNED).
Folders are signed by model_signing; changed statements are signed again
(signtools.resign) so that the statement's own check is what refuses them;
changed packages are rewritten with consistent CRC-32 and XXH3 so that only
the signature can catch them."""
import base64
import json
import os
import pathlib
import zipfile

import pytest
from signtools import (copy_repo, duplicate, flip, ms_sign_cert, ms_sign_key, ok, pack, refused, replace_once, resign,
                       rewrite, run)


@pytest.fixture(scope="module")
def signed(repos, pki, model_signing, onnxzip_cli, tmp_path_factory):
    """transformers_js signed with the key (model.sig inside), packed; and
    its bundle."""
    base = tmp_path_factory.mktemp("signed")
    d = copy_repo(repos["transformers_js"], base / "repo")
    ms_sign_key(model_signing, d, pki)
    pkg = pack(onnxzip_cli, d, base / "p.onnxzip")
    return pkg, json.loads((d / "model.sig").read_text()), d


def verify(oz, pkg, pki, *extra):
    return run(oz, "verify", pkg, "--public-key", pki.pub, *extra)


def detached(tmp_path, bundle, name="x.sig"):
    p = tmp_path / name
    p.write_text(json.dumps(bundle) if not isinstance(bundle, str) else bundle)
    return p


# --- not trusted ------------------------------------------------------------

def test_wrong_key(signed, pki, onnxzip_cli):
    refused(run(onnxzip_cli, "verify", signed[0], "--public-key", pki.wrong_pub), "ESIGNATURE")
    refused(run(onnxzip_cli, "verify", signed[0], "--public-key", pki.p384_pub), "ESIGNATURE")


def test_signature_bytes_changed(signed, pki, onnxzip_cli, tmp_path):
    b = json.loads(json.dumps(signed[1]))
    sig = bytearray(base64.b64decode(b["dsseEnvelope"]["signatures"][0]["sig"]))
    sig[-1] ^= 1
    b["dsseEnvelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    refused(verify(onnxzip_cli, signed[0], pki, "--signature", detached(tmp_path, b)), "ESIGNATURE")


def test_statement_changed_without_signing_again(signed, pki, onnxzip_cli, tmp_path):
    b = json.loads(json.dumps(signed[1]))
    st = json.loads(base64.b64decode(b["dsseEnvelope"]["payload"]))
    st["predicate"]["resources"][0]["digest"] = "0" * 64
    b["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(st).encode()).decode()
    refused(verify(onnxzip_cli, signed[0], pki, "--signature", detached(tmp_path, b)), "ESIGNATURE")


@pytest.mark.parametrize("case", ["other_root", "expired", "nosign", "chain_for_key"])
def test_certificates_not_trusted(case, repos, pki, model_signing, onnxzip_cli, tmp_path):
    d = copy_repo(repos["genai"], tmp_path / "repo")
    leaf = {"expired": pki.expired, "nosign": pki.nosign}.get(case, pki.leaf)
    ms_sign_cert(model_signing, d, pki, leaf=leaf)
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    if case == "chain_for_key":  # a certificate bundle, only a key trusted
        refused(run(onnxzip_cli, "verify", pkg, "--public-key", pki.pub), "ESIGNATURE")
        return
    root = pki.other if case == "other_root" else pki.ca
    p = refused(run(onnxzip_cli, "verify", pkg, "--certificate-chain", root), "ESIGNATURE")
    if case == "expired":
        assert "expired" in p.stderr, p.stderr


def test_key_bundle_with_only_roots_trusted(signed, pki, onnxzip_cli):
    refused(run(onnxzip_cli, "verify", signed[0], "--certificate-chain", pki.ca), "ESIGNATURE")


def test_other_payload_type(signed, pki, onnxzip_cli, tmp_path):
    b = resign(signed[1], pki.key, payload_type="application/json")
    refused(verify(onnxzip_cli, signed[0], pki, "--signature", detached(tmp_path, b)), "ESIGNATURE")


# --- the statement: for another folder, or of a form not read -----------------

def test_statement_for_another_folder(repos, pki, model_signing, onnxzip_cli, tmp_path):
    other = copy_repo(repos["genai"], tmp_path / "other")
    sig = ms_sign_key(model_signing, other, pki)
    d = copy_repo(repos["transformers_js"], tmp_path / "repo")
    (d / "model.sig").write_bytes(sig.read_bytes())
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    refused(verify(onnxzip_cli, pkg, pki), "EMISMATCH")


def _set(path, value):
    def mutate(st):
        node = st
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    return mutate


@pytest.mark.parametrize("name,mutate,status", [
    ("predicateType", _set(["predicateType"], "https://model_signing/signature/v0.9"), "EBUNDLE"),
    ("_type", _set(["_type"], "https://in-toto.io/Statement/v0.1"), "EBUNDLE"),
    ("method", _set(["predicate", "serialization", "method"], "folders"), "EBUNDLE"),
    # 'shards' is read (test_oracle.py signs with it); without its shard_size the statement is malformed
    ("shards_no_size", _set(["predicate", "serialization", "method"], "shards"), "EBUNDLE"),
    ("hash", _set(["predicate", "serialization", "hash_type"], "blake3"), "EUNSUPPORTED"),
    ("algorithm", lambda st: [r.__setitem__("algorithm", "blake3") for r in st["predicate"]["resources"]],
     "EUNSUPPORTED"),
    ("dotdot", lambda st: st["predicate"]["resources"][0].__setitem__("name", "../config.json"), "EBUNDLE"),
    ("inner_dotdot", lambda st: st["predicate"]["resources"][0].__setitem__("name", "onnx/../../x"), "EBUNDLE"),
    ("absolute", lambda st: st["predicate"]["resources"][0].__setitem__("name", "/etc/passwd"), "EBUNDLE"),
    ("duplicated", lambda st: st["predicate"]["resources"].insert(1, dict(st["predicate"]["resources"][0])),
     "EBUNDLE"),
    ("digest_not_hex", lambda st: st["predicate"]["resources"][0].__setitem__("digest", "zz" * 32), "EBUNDLE"),
])
def test_statement_refused(name, mutate, status, signed, pki, onnxzip_cli, tmp_path):
    b = resign(signed[1], pki.key, mutate)
    refused(verify(onnxzip_cli, signed[0], pki, "--signature", detached(tmp_path, b)), status)


def test_subject_digest_not_the_resources(signed, pki, onnxzip_cli, tmp_path):
    b = resign(signed[1], pki.key, _set(["subject"], [{"name": "x", "digest": {"sha256": "1" * 64}}]),
               fix_subject=False)
    refused(verify(onnxzip_cli, signed[0], pki, "--signature", detached(tmp_path, b)), "EBUNDLE")


def test_resigned_unchanged_statement_verifies(signed, pki, onnxzip_cli, tmp_path):
    """The re-signing helper itself: with no change the bundle verifies, so
    the refusals above are the statement's checks."""
    ok(verify(onnxzip_cli, signed[0], pki, "--signature", detached(tmp_path, resign(signed[1], pki.key))))


# --- malformed bundles, keys and certificates ---------------------------------

def _edit(change):
    """A bundle -> text function that changes the parsed bundle."""
    def f(b):
        b = json.loads(json.dumps(b))
        change(b)
        return json.dumps(b)
    return f


def _payload_b64(b):
    b["dsseEnvelope"]["payload"] = "!!!not base64!!!"


def _sig_b64(b):
    b["dsseEnvelope"]["signatures"][0]["sig"] = "QUJD=x"


def _two_sigs(b):
    b["dsseEnvelope"]["signatures"] *= 2


def _no_envelope(b):
    del b["dsseEnvelope"]


def _media_type(b):
    b["mediaType"] = "application/vnd.dev.sigstore.bundle.v9+json"


@pytest.mark.parametrize("name,text", [
    ("truncated", lambda b: json.dumps(b)[:200]),
    ("not_json", lambda b: "model.sig\n"),
    ("empty", lambda b: ""),
    ("duplicate_key", lambda b: json.dumps(b).replace('"dsseEnvelope":', '"dsseEnvelope": {}, "dsseEnvelope":', 1)),
    ("not_utf8", lambda b: json.dumps(b).replace('"mediaType"', '"media\udcffType"', 1)),
    ("deep", lambda b: '{"a":' * 100000 + "1" + "}" * 100000),
    ("payload_base64", _edit(_payload_b64)),
    ("sig_base64", _edit(_sig_b64)),
    ("two_signatures", _edit(_two_sigs)),
    ("no_envelope", _edit(_no_envelope)),
    ("media_type", _edit(_media_type)),
])
def test_malformed_bundle(name, text, signed, pki, onnxzip_cli, tmp_path):
    p = tmp_path / "x.sig"
    p.write_bytes(text(signed[1]).encode("utf-8", "surrogateescape"))
    refused(verify(onnxzip_cli, signed[0], pki, "--signature", p), "EBUNDLE")


def test_huge_bundle(signed, pki, onnxzip_cli, tmp_path):
    p = tmp_path / "huge.sig"
    raw = json.dumps(signed[1]).encode()
    with open(p, "wb") as f:
        f.write(raw[:-1] + b', "pad": "')
        f.truncate((17 << 20))   # sparse: zeros inside a string
    refused(verify(onnxzip_cli, signed[0], pki, "--signature", p), "EBUNDLE")


def test_malformed_der_certificate(repos, pki, model_signing, onnxzip_cli, tmp_path):
    d = copy_repo(repos["genai"], tmp_path / "repo")
    sig = ms_sign_cert(model_signing, d, pki, sig=tmp_path / "c.sig")
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    b = json.loads(sig.read_text())
    certs = b["verificationMaterial"]["x509CertificateChain"]["certificates"]
    certs[0]["rawBytes"] = base64.b64encode(base64.b64decode(certs[0]["rawBytes"])[:-40]).decode()
    refused(run(onnxzip_cli, "verify", pkg, "--certificate-chain", pki.ca, "--signature",
                detached(tmp_path, b)), "EBUNDLE")


def test_keyless_bundle_unsupported(signed, pki, onnxzip_cli, tmp_path):
    """A bundle as Sigstore keyless signing writes it: a certificate (Fulcio)
    and a transparency log entry (Rekor)."""
    b = json.loads(json.dumps(signed[1]))
    der = pathlib.Path(pki.d / "leaf.pem").read_text()
    der = "".join(der.strip().splitlines()[1:-1])
    b["verificationMaterial"] = {"certificate": {"rawBytes": der},
                                 "tlogEntries": [{"logIndex": "1", "kindVersion": {"kind": "dsse",
                                                                                   "version": "0.0.1"}}]}
    p = refused(verify(onnxzip_cli, signed[0], pki, "--signature", detached(tmp_path, b)), "EUNSUPPORTED")
    assert "keyless" in p.stderr


@pytest.mark.parametrize("what", ["garbage", "bad_der", "private_key", "certificate"])
def test_malformed_public_key_pem(what, signed, pki, onnxzip_cli, tmp_path):
    p = tmp_path / "pub.pem"
    if what == "garbage":
        p.write_text("not a key\n")
    elif what == "bad_der":
        lines = pki.pub.read_text().splitlines()
        p.write_text("\n".join([lines[0], lines[1][:20] + "AAAA" + lines[1][24:]] + lines[2:]) + "\n")
    elif what == "private_key":
        p.write_bytes(pki.key.read_bytes())
    else:
        p.write_bytes(pki.leaf.read_bytes())
    refused(run(onnxzip_cli, "verify", signed[0], "--public-key", p), "EBUNDLE", "--public-key", str(p))


def test_malformed_certificate_chain_pem(signed, onnxzip_cli, tmp_path):
    p = tmp_path / "roots.pem"
    p.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    refused(run(onnxzip_cli, "verify", signed[0], "--certificate-chain", p), "EBUNDLE", "--certificate-chain")


# --- packages that differ from the statement ----------------------------------

def test_unsigned(repos, pki, onnxzip_cli, tmp_path):
    pkg = pack(onnxzip_cli, repos["genai"], tmp_path / "p.onnxzip")
    refused(verify(onnxzip_cli, pkg, pki), "EUNSIGNED")


@pytest.mark.parametrize("change,named", [
    ("extra", "extra.txt"), ("missing", "config.json"), ("renamed", "README.txt"),
])
def test_folder_changed_after_signing(change, named, repos, pki, model_signing, onnxzip_cli, tmp_path):
    d = copy_repo(repos["transformers_js"], tmp_path / "repo")
    ms_sign_key(model_signing, d, pki)
    if change == "extra":
        (d / "extra.txt").write_text("x\n")
    elif change == "missing":
        os.remove(d / "config.json")
    else:
        os.rename(d / "README.md", d / "README.txt")
    pkg = pack(onnxzip_cli, d, tmp_path / "p.onnxzip")
    refused(verify(onnxzip_cli, pkg, pki), "EMISMATCH", named)
    m = "onnx/model.onnx"  # the names are checked before any model's bytes
    refused(verify(onnxzip_cli, pkg, pki, "--model", m), "EMISMATCH", named)


@pytest.mark.parametrize("entry,change,named", [
    ("tokenizer.json", flip(17), "tokenizer.json"),
    ("README.md", flip(0), "README.md"),
    ("onnx/lm_head_weight", flip(4096), "onnx/model.onnx_data"),
    ("onnx/model_layers_0_mlp_fc1_weight_q4", flip(1), "onnx/model_q4.onnx"),
    ("onnx/model.onnx", replace_once(b"make_repos.py", b"make_repos.pY"), "onnx/model.onnx"),
])
def test_one_byte_changed(entry, change, named, signed, pki, onnxzip_cli, tmp_path):
    pkg = signed[0]
    same = rewrite(pkg, tmp_path / "same.onnxzip", {entry: lambda b: b})
    assert same.read_bytes() == pkg.read_bytes(), "zipbuild does not rebuild the package as it was"
    bad = rewrite(pkg, tmp_path / "bad.onnxzip", {entry: change})
    ok(run(onnxzip_cli, "verify", bad))  # CRC-32 and XXH3 agree: only the signature can tell
    refused(verify(onnxzip_cli, bad, pki), "EMISMATCH", named)


def test_two_model_sig(signed, pki, onnxzip_cli, tmp_path):
    """A second model.sig entry (zipfile lists both): our reader refuses the
    package before any signature is read (two entries of one name,
    EDUPNAME), so neither bundle can be chosen."""
    bad = duplicate(signed[0], tmp_path / "two.onnxzip", "model.sig")
    with zipfile.ZipFile(bad) as z:
        assert [i.filename for i in z.infolist()].count("model.sig") == 2
    refused(verify(onnxzip_cli, bad, pki), "EDUPNAME", "model.sig")
