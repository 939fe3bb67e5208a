"""Helpers of the signing tests: running the CLI and model_signing, copying
the layouts, rewriting a package's entries consistently (zipbuild: CRC-32
and the XXH3 digest record recomputed, so that only the signature can tell)
and re-signing a changed statement with the `cryptography` package (so that
the statement's checks, not the signature's, are what refuse it)."""
import base64
import copy
import hashlib
import json
import pathlib
import shutil
import subprocess

import zipbuild
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

IN_TOTO = "application/vnd.in-toto+json"


def run(exe, *args, timeout=120):
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def out(p):
    return f"{p.args}: exit {p.returncode}\nstdout: {p.stdout[-3000:]}\nstderr: {p.stderr[-3000:]}"


def ok(p):
    assert p.returncode == 0, out(p)
    return p


def refused(p, status, *words):
    """Exit 1, the status tag, and every word in the message (stderr)."""
    assert p.returncode == 1 and f"[ONNXZIP_{status}]" in p.stderr, out(p)
    for w in words:
        assert w in p.stderr, f"{w!r} not in the message:\n{out(p)}"
    return p


def copy_repo(src, dst):
    shutil.copytree(src, dst, symlinks=True)
    return pathlib.Path(dst)


def ms_sign_key(ms, folder, pki, sig=None, key=None):
    sig = sig or pathlib.Path(folder) / "model.sig"
    ok(run(ms, "sign", "key", folder, "--private_key", key or pki.key, "--signature", sig))
    return sig


def ms_sign_cert(ms, folder, pki, sig=None, leaf=None):
    sig = sig or pathlib.Path(folder) / "model.sig"
    ok(run(ms, "sign", "certificate", folder, "--private_key", pki.leaf_key, "--signing_certificate",
           leaf or pki.leaf, "--certificate_chain", pki.intermediate, "--signature", sig))
    return sig


def ms_verified(p):
    assert p.returncode == 0 and "Verification succeeded" in p.stdout + p.stderr, out(p)


def pack(oz, folder, pkg):
    ok(run(oz, "pack", folder, "-o", pkg, "-q", "--no-sync"))
    return pathlib.Path(pkg)


def rewrite(src, dst, changes):
    """dst: src with entry name's data replaced by changes[name](data), every
    header, CRC-32 and XXH3 record made consistent again."""
    entries, cd_order, _ = zipbuild.from_archive(pathlib.Path(src).read_bytes())
    done = set()
    for e in entries:
        if e.name in changes:
            e.data = changes[e.name](e.data)
            done.add(e.name)
    assert done == set(changes), f"no entries {set(changes) - done} in {src}"
    pathlib.Path(dst).write_bytes(zipbuild.build(entries, cd_order))
    return pathlib.Path(dst)


def duplicate(src, dst, name):
    """dst: src with a second entry `name` (a copy) right after the first,
    every other entry as it was (the manifest last, as a package has it)."""
    entries, _, _ = zipbuild.from_archive(pathlib.Path(src).read_bytes())
    i = next(k for k, e in enumerate(entries) if e.name == name)
    entries.insert(i + 1, copy.deepcopy(entries[i]))
    pathlib.Path(dst).write_bytes(zipbuild.build(entries))
    return pathlib.Path(dst)


def flip(offset):
    def f(data):
        b = bytearray(data)
        b[offset] ^= 0x01
        return bytes(b)
    return f


def replace_once(old, new):
    def f(data):
        assert data.count(old) == 1 and len(old) == len(new), (old, data.count(old))
        return data.replace(old, new)
    return f


def statement(bundle):
    return json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))


def pae(payload_type, body):
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d " % (len(t), t, len(body)) + body


def resign(bundle, key_path, mutate=None, payload_type=IN_TOTO, fix_subject=True):
    """The bundle with its statement changed by mutate(statement) (the
    subject's digest recomputed as model_signing computes it: SHA-256 over
    the resources' raw digests in order), signed again with key_path."""
    st = statement(bundle)
    if mutate:
        mutate(st)
    hexes = [r["digest"] for r in st["predicate"]["resources"]]
    if fix_subject and all(len(x) == 64 and all(c in "0123456789abcdef" for c in x) for x in hexes):
        st["subject"][0]["digest"]["sha256"] = hashlib.sha256(b"".join(bytes.fromhex(x) for x in hexes)).hexdigest()
    body = json.dumps(st, indent=1).encode()
    key = serialization.load_pem_private_key(pathlib.Path(key_path).read_bytes(), password=None)
    sig = key.sign(pae(payload_type, body), ec.ECDSA(hashes.SHA256()))
    b = json.loads(json.dumps(bundle))
    b["dsseEnvelope"] = {"payload": base64.b64encode(body).decode(), "payloadType": payload_type,
                         "signatures": [{"sig": base64.b64encode(sig).decode()}]}
    return b
