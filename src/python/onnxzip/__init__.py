"""onnxzip: ONNX models as aligned zip archives, their weights used in place.

An archive stores every large tensor as an uncompressed, 64-byte aligned zip
entry and the graph (the serialized onnx.ModelProto) last. Opening one maps
the file and reads only the graph; tensors are numpy arrays over the
mapping, never copied::

    import onnx, onnxzip
    onnxzip.save(onnx.load("model.onnx"), "model.onnxzip")
    with onnxzip.open("model.onnxzip") as a:
        w = a.tensors["weight"]               # read-only, no copy
    session = onnxzip.ort_session("model.onnxzip")
    onnxzip.unpack("model.onnxzip", "out/model.onnx")

An archive on an HTTP(S) server that answers range requests opens without
downloading it: ``onnxzip.open_url(url)`` fetches the model and the
directory, then each tensor when asked for; ``onnxzip.fetch(url, path)``
downloads it, verified and resumable (see ``onnxzip._remote``).

A package (format 1.2) holds a repository folder: several models and plain
files under their paths. ``onnxzip.open(pkg)`` holds its default model and
lists the rest: ``a.models["onnx/model_fp16.onnx"]`` (an Archive),
``a.files["tokenizer.json"]`` (a read-only memoryview, no copy); see
``onnxzip._package``. ``onnxzip.genai_model(pkg)`` runs a packed
onnxruntime-genai folder, its weights read in place (``onnxzip._genai``).

A signed package (OpenSSF Model Signing: its ``model.sig``) is checked
before use with ``trust=onnxzip.Trust(public_key="pub.pem")`` on open,
load, ort_session, genai_model, open_url and fetch (``onnxzip._trust``).

The functions mirror the C library (include/onnxzip/onnxzip.h) and the
``onnxzip`` command; failures raise :class:`onnxzip.Error`.
"""
from . import _native
from ._archive import Archive, Entry, open
from ._convert import pack, repack, unpack, update_model, verify
from ._errors import (DirectoryError, Error, FileSystemError, FormatError, InvalidArgumentError, LimitError,
                      MemberNotFoundError, NameNotFoundError, NetworkError, NetworkTimeoutError, NotDirectoryError,
                      NotFoundError, OutOfMemoryError, PermissionDeniedError, SignatureError, UnsupportedError)
from ._genai import genai_model
from ._model import load, save
from ._ort import ort_session
from ._package import Member
from ._tensor_info import TensorInfo
from ._remote import RemoteArchive, RemoteStats, fetch, open_url
from ._trust import Trust

__version__: str = _native.version()

__all__ = ["Archive", "Entry", "Error", "Member", "RemoteArchive", "RemoteStats", "TensorInfo", "Trust", "fetch",
           "genai_model", "load", "open", "open_url", "ort_session", "pack", "repack", "save", "unpack", "update_model",
           "verify",
           "__version__",
           # the classes of Error, each also a builtin exception (_errors.py's table)
           "DirectoryError", "FileSystemError", "FormatError", "InvalidArgumentError", "LimitError",
           "MemberNotFoundError", "NameNotFoundError", "NetworkError", "NetworkTimeoutError", "NotDirectoryError",
           "NotFoundError", "OutOfMemoryError", "PermissionDeniedError", "SignatureError", "UnsupportedError"]
