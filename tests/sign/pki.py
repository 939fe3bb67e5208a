"""Keys and certificates for signing tests, made by the `openssl` command
(tests/sign's fixture, and tests/cli/readme_examples.py for the README's
certificate example): Pki(DIR) writes them into DIR."""
import pathlib
import subprocess

SERIALS = {"int": 2, "leaf": 3, "nosign": 4}

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
    if p.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(map(str, args))}: {p.stderr}")


class Pki:
    """Keys (P-256) and certificates in one directory: root/ca (a root),
    intermediate, leaf (code signing), expired (a leaf whose validity ended in
    2021), nosign (a leaf with neither digitalSignature nor codeSigning),
    other (another root), and `key` with its `pub` for the key method;
    `wrong` / `wrong_pub` another key pair."""

    def __init__(self, d):
        self.d = d = pathlib.Path(d)
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
