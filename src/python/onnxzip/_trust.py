"""onnxzip.Trust: whose signature a package must carry before any of it is
used (OpenSSF Model Signing, issue 36; the spec's signing section)::

    trust = onnxzip.Trust(public_key="publisher.pub.pem")
    with onnxzip.open("repo.onnxzip", trust=trust) as a:   # verified here
        w = a.tensors["embed"]
        tok = a.files["tokenizer.json"]                    # checked before it is returned
    session = onnxzip.ort_session("repo.onnxzip", trust=trust)

The signature is the package's ``model.sig`` (``model_signing sign key DIR
--signature DIR/model.sig`` then ``onnxzip pack DIR``, or ``onnxzip sign``),
or a detached one given as ``signature=``. ``open``, ``load``,
``ort_session``, ``genai_model``, ``open_url`` and ``fetch`` take it as
``trust=``: the signature is checked against the key (or the certificate
chain to the given root), the package's file names against the signed
statement, then the SHA-256 of the files used against it — the selected
model's model file and data files before the Archive is returned, each
plain file before :attr:`Archive.files` returns it, each model of
:attr:`Archive.models` before it is returned. A failure raises
:class:`onnxzip.SignatureError` (a ValueError) naming the file: nothing of
the package was used.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Optional, Tuple, Union

from . import _native
from ._errors import make, open_file

# A key, chain or signature: a path (str, os.PathLike) or the file's bytes.
Material = Union[str, "os.PathLike[str]", "os.PathLike[bytes]", bytes, bytearray, memoryview]

_PEM = b"-----BEGIN "
_EXTERNAL = 2  # onnxzip_archive_layout(): ONNXZIP_LAYOUT_EXTERNAL
# No key, chain or signature file is this large: a larger one is a wrong path.
_MAX_BYTES = 16 << 20


def _read(path: str, name: str) -> bytes:
    """The file's bytes; its failure as the C library's (NotFoundError, a
    FileNotFoundError; PermissionDeniedError...)."""
    with open_file(path) as f:
        data = f.read(_MAX_BYTES + 1)
    if len(data) > _MAX_BYTES:
        raise make("ELIMIT", f"{path}: {name}: more than {_MAX_BYTES >> 20} MiB, not a {name.replace('_', ' ')} "
                   "file", path=path)
    return data


def _material(value: object, name: str) -> Tuple[bytes, str]:
    """(the bytes, how repr() names them) of a path or bytes argument."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data, shown = bytes(value), ""
    elif isinstance(value, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(value))
        if isinstance(value, str) and value.lstrip().startswith(_PEM.decode()):
            raise make("EINVAL", f"{name}: a str is a path; give the PEM text itself as bytes (text.encode())")
        if not path or "\0" in path:
            raise make("EINVAL", f"{name} must be a file's path or its bytes, not {path!r}")
        data, shown = _read(path, name), path + ": "
    else:
        raise TypeError(f"{name} must be a path (str or os.PathLike) or the file's bytes, not "
                        f"{type(value).__name__}")
    if not data:
        raise make("EINVAL", f"{shown}{name} is empty")
    hint = "" if shown else " (bytes are the file's contents: give a path as str or os.PathLike)"
    if name == "signature" and not data.lstrip().startswith(b"{"):
        raise make("EINVAL", f"{shown}{name} is not a Sigstore bundle (JSON, as model_signing writes model.sig)"
                   + hint)
    if name != "signature" and _PEM not in data:
        raise make("EINVAL", f"{shown}{name} is not PEM (no '-----BEGIN' line){hint}")
    return data, shown[:-2] or "(bytes)"


class Trust:
    """Who may have signed a package: a publisher's EC public key (PEM,
    P-256/384/521: ``openssl ec -in key.pem -pubout``), or the PEM
    certificate chain of the root(s) that signing certificates must chain
    to; and optionally a detached signature (the ``model.sig`` Sigstore
    bundle that ``model_signing`` writes) used instead of the package's own.

    Each is a path (str or os.PathLike), read once here, or the file's
    bytes (bytes, bytearray, memoryview). Raises TypeError for another type
    or for neither or both of ``public_key`` and ``certificate_chain``;
    FileNotFoundError (onnxzip.NotFoundError), PermissionError... for a file
    that cannot be read; ValueError for empty or non-PEM contents, and
    onnxzip.SignatureError for a key or certificate the library cannot use.
    Immutable; pickles as the bytes it read. Give it as ``trust=`` to
    :func:`onnxzip.open` and the others.
    """

    __slots__ = ("_public_key", "_certificate_chain", "_signature", "_shown", "_handle")

    _public_key: Optional[bytes]
    _certificate_chain: Optional[bytes]
    _signature: Optional[bytes]
    _shown: str
    _handle: "_native.Trust"

    def __init__(self, *, public_key: Optional[Material] = None, certificate_chain: Optional[Material] = None,
                 signature: Optional[Material] = None) -> None:
        if (public_key is None) == (certificate_chain is None):
            raise TypeError("Trust() needs public_key= (a publisher's key) or certificate_chain= (the root "
                            "certificates), " + ("not both" if public_key is not None else "not neither"))
        shown = []
        values = {}
        for name, value in (("public_key", public_key), ("certificate_chain", certificate_chain),
                            ("signature", signature)):
            if value is not None:
                values[name], where = _material(value, name)
                shown.append(f"{name}={where}")
        native = _native.trust_create()
        if "public_key" in values:
            _native.trust_add_public_key(native, values["public_key"])
        else:
            _native.trust_add_certificates(native, values["certificate_chain"])
        if "signature" in values:
            _native.trust_set_signature(native, values["signature"])
        for name in ("public_key", "certificate_chain", "signature"):
            object.__setattr__(self, "_" + name, values.get(name))
        object.__setattr__(self, "_shown", " ".join(shown))
        object.__setattr__(self, "_handle", native)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"onnxzip.Trust is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"onnxzip.Trust is immutable: cannot delete {name!r}")

    @property
    def public_key(self) -> Optional[bytes]:
        """The public key's PEM bytes, or None."""
        return self._public_key

    @property
    def certificate_chain(self) -> Optional[bytes]:
        """The trusted root certificates' PEM bytes, or None."""
        return self._certificate_chain

    @property
    def signature(self) -> Optional[bytes]:
        """The detached signature's bytes, or None (the package's model.sig)."""
        return self._signature

    def __reduce__(self) -> Tuple[Any, ...]:
        # the bytes read when it was made, not the paths (pickled into another process)
        return (_rebuild, (self._public_key, self._certificate_chain, self._signature))

    def __repr__(self) -> str:
        return f"<onnxzip.Trust {getattr(self, '_shown', '')}>"


def _rebuild(public_key: Optional[bytes], certificate_chain: Optional[bytes], signature: Optional[bytes]) -> Trust:
    return Trust(public_key=public_key, certificate_chain=certificate_chain, signature=signature)


def argument(value: object) -> Optional[Trust]:
    """``trust=``: an onnxzip.Trust or None (TypeError otherwise)."""
    if value is not None and not isinstance(value, Trust):
        raise TypeError(f"trust must be an onnxzip.Trust or None, not {type(value).__name__}")
    return value


class Verifier:
    """A package's signature, verified against a Trust (onnxzip_signed_open):
    what the file's handles (its models opened later) are checked with. A
    file found equal is not hashed again (the C library remembers); one
    thread at a time."""

    def __init__(self, trust: Trust, handle: "_native.Handle") -> None:
        self.trust = trust
        self._signed = _native.signed_open(handle, trust._handle)
        self._lock = threading.Lock()

    def covers(self, path: str) -> bool:
        """Whether the signature covers the package file ``path`` (one of
        its folder's files that the statement's ignore_paths do not leave
        out, as model.sig or .gitattributes): what trust= may hand out."""
        return _native.signed_covers(self._signed, path)

    def check(self, handle: "_native.Handle", path: Optional[str]) -> None:
        """SignatureError unless ``path``'s bytes (a plain file; a model's
        file and data files; None: every file) as ``handle`` reads them
        are the signed ones."""
        with self._lock:
            _native.signed_check(self._signed, handle, path)

    def check_fetched(self, handle: "_native.Handle", model: str, fetched: str) -> None:
        """SignatureError unless the files of ``model`` (planned over the
        package ``handle``) read from ``fetched``, the single-model archive
        fetched of it, are the signed ones."""
        with self._lock:
            _native.signed_check_fetched(self._signed, handle, model, fetched)

    def check_bytes(self, path: str, data: bytes) -> None:
        """SignatureError unless ``data`` are the signed bytes of the plain
        file ``path``: a remote file's, fetched once and hashed by the C
        library where they are, so that the bytes checked are the bytes
        returned."""
        _native.signed_check_bytes(self._signed, path, data)


def verify(trust: Optional[Trust], handle: "_native.Handle") -> Optional[Verifier]:
    """The handle's package verified (its signature, and the model it holds:
    the model's files, or a single-model archive's whole file), or None
    without a trust."""
    if trust is None:
        return None
    if handle.layout() == _EXTERNAL:  # OMS signs its folder; "." would cover the .onnx file alone
        raise make("EUNSUPPORTED", f"{handle.path()}: a classic ONNX model with external data files: trust= "
                   "checks onnxzip archives and packages (model_signing verify checks a model folder)")
    verifier = Verifier(trust, handle)
    verifier.check(handle, handle.model_path())
    return verifier


__all__ = ["Trust"]
