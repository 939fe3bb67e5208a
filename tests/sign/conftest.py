"""Fixtures of the signing tests (tests/sign): the CLI, the reference tool
`model_signing` 1.1.1 of the pinned venv, keys and certificates made by the
`openssl` command, and the four repository layouts of tests/packages.

Run through `meson test -C BUILDDIR sign` (tests/sign/meson.build), which
sets ONNXZIP_CLI and runs pytest in BUILDDIR/pyvenv.
"""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "packages"))  # make_repos
sys.path.insert(2, str(HERE.parent / "cli"))       # zipbuild, zipcheck
sys.path.insert(3, str(HERE.parent / "remote"))    # servers (nginx)

_spec = importlib.util.spec_from_file_location("python_conftest", HERE.parent / "python" / "conftest.py")
_python_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_python_conftest)
onnxzip_cli = _python_conftest.onnxzip_cli

SERIALS = {"int": 2, "leaf": 3, "nosign": 4}
LAYOUTS = ("transformers_js", "encoder_decoder", "genai", "diffusers")

# Extensions of the certificates (openssl x509 -extfile ... -extensions NAME).
EXTENSIONS = """
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[intermediate]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = codeSigning
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[nosign]
basicConstraints = critical, CA:FALSE
keyUsage = critical, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""

# `openssl ca` for the expired leaf: x509 -req cannot set past dates (3.0).
CA_CONFIG = """
[ca]
default_ca = d
[d]
dir = {dir}
database = {dir}/index.txt
new_certs_dir = {dir}
serial = {dir}/serial
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
commonName = supplied
"""


def openssl(*args, cwd):
    p = subprocess.run(["openssl", *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert p.returncode == 0, f"openssl {' '.join(map(str, args))}: {p.stderr}"


class Pki:
    """Keys (P-256) and certificates in one directory: root/ca (a root),
    intermediate, leaf (code signing), expired (a leaf whose validity ended in
    2021), nosign (a leaf with neither digitalSignature nor codeSigning),
    other (another root), and `key` with its `pub` for the key method;
    `wrong` / `wrong_pub` another key pair."""

    def __init__(self, d: pathlib.Path):
        self.d = d
        d.mkdir()
        (d / "ext.cnf").write_text(EXTENSIONS)
        for name in ("key", "wrong", "ca", "int", "leaf", "other", "p384"):
            curve = "secp384r1" if name == "p384" else "prime256v1"
            openssl("ecparam", "-name", curve, "-genkey", "-noout", "-out", f"{name}.key", cwd=d)
            openssl("ec", "-in", f"{name}.key", "-pubout", "-out", f"{name}.pub", cwd=d)
        self.key, self.pub = d / "key.key", d / "key.pub"
        self.wrong, self.wrong_pub = d / "wrong.key", d / "wrong.pub"
        self.p384, self.p384_pub = d / "p384.key", d / "p384.pub"
        self._root("ca", "Test Root CA")
        self._root("other", "Other Root CA")
        self._issue("int", "Test Intermediate", "ca", "intermediate")
        self._issue("leaf", "Test Code Signing", "int", "leaf")
        self._issue("nosign", "Test TLS Server", "int", "nosign", key="leaf")
        self._expired()
        self.ca, self.other = d / "ca.pem", d / "other.pem"
        self.intermediate, self.leaf_key = d / "int.pem", d / "leaf.key"
        self.leaf, self.nosign, self.expired = d / "leaf.pem", d / "nosign.pem", d / "expired.pem"

    def _root(self, name, cn):
        openssl("req", "-new", "-key", f"{name}.key", "-subj", f"/CN={cn}", "-out", f"{name}.csr", cwd=self.d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-signkey", f"{name}.key", "-days", "3650",
                "-extfile", "ext.cnf", "-extensions", "ca", "-out", f"{name}.pem", cwd=self.d)

    def _issue(self, name, cn, issuer, ext, key=None):
        key = key or name
        openssl("req", "-new", "-key", f"{key}.key", "-subj", f"/CN={cn}", "-out", f"{name}.csr", cwd=self.d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{issuer}.pem", "-CAkey", f"{issuer}.key",
                "-set_serial", str(SERIALS[name]), "-days", "365", "-extfile", "ext.cnf",
                "-extensions", ext, "-out", f"{name}.pem", cwd=self.d)

    def _expired(self):
        ca = self.d / "expired-ca"
        ca.mkdir()
        (ca / "index.txt").write_text("")
        (ca / "serial").write_text("1000\n")
        (ca / "ca.cnf").write_text(CA_CONFIG.format(dir=ca))
        openssl("req", "-new", "-key", "leaf.key", "-subj", "/CN=Test Expired Signer", "-out", "expired.csr",
                cwd=self.d)
        openssl("ca", "-batch", "-config", ca / "ca.cnf", "-cert", "int.pem", "-keyfile", "int.key",
                "-in", "expired.csr", "-out", "expired.pem", "-startdate", "20200101000000Z",
                "-enddate", "20210101000000Z", "-extfile", "ext.cnf", "-extensions", "leaf", "-notext",
                cwd=self.d)


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.fail("the openssl command is missing (Debian: apt-get install openssl)", pytrace=False)
    return Pki(tmp_path_factory.mktemp("pki") / "pki")


@pytest.fixture(scope="session")
def model_signing():
    """The reference tool's command, from the venv running these tests."""
    exe = pathlib.Path(sys.executable).parent / "model_signing"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: the venv lacks model_signing (tests/python/venv.sh)", pytrace=False)
    return exe


@pytest.fixture(scope="session")
def repos(tmp_path_factory):
    """The four layouts of tests/packages, made once (read-only: copy them)."""
    import make_repos
    base = tmp_path_factory.mktemp("repos")
    return {k: make_repos.make(k, base / k) for k in LAYOUTS}


def pytest_report_header(config):
    try:
        import model_signing
        return [f"model_signing: {model_signing.__version__}"]
    except ImportError as e:
        return [f"model_signing: not importable ({e})"]
