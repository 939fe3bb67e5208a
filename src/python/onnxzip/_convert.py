"""The C library's conversions: pack, unpack, repack, update_model, verify."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional, Union

from . import _native
from ._archive import PathLike
from ._archive import open as _open

if TYPE_CHECKING:  # pragma: no cover
    import onnx

# include/onnxzip/onnxzip.h flags
_PACK_KEEP_TYPED, _PACK_NO_CONVERT_ATTRIBUTES, _PACK_DEDUP, _PACK_NO_SYNC = 1, 2, 4, 8
_UNPACK_CHECKSUM, _UNPACK_NO_SYNC = 1, 2
_WRITE_NO_SYNC = 1
_UNPACK_LAYOUTS = {"single": 0, "per_tensor": 1, "inline": 2}


def pack(model_path: PathLike, archive_path: PathLike, *, align: int = 64, size_threshold: int = 1024,
         keep_typed: bool = False, convert_attribute: bool = True, dedup: bool = False,
         data_dir: Optional[PathLike] = None, sync: bool = True) -> None:
    """Converts a classic .onnx (single file or with external data) into an
    archive, streaming payloads from the files (``onnxzip_pack``; the CLI's
    ``onnxzip pack``). External data is read under ONNX's path rules, from
    ``data_dir`` or the model's directory."""
    flags = ((_PACK_KEEP_TYPED if keep_typed else 0) | (0 if convert_attribute else _PACK_NO_CONVERT_ATTRIBUTES)
             | (_PACK_DEDUP if dedup else 0) | (0 if sync else _PACK_NO_SYNC))
    _native.pack(os.fspath(model_path), os.fspath(archive_path), align, flags, size_threshold,
                 None if data_dir is None else os.fspath(data_dir))


def unpack(archive_path: PathLike, model_path: PathLike, *, layout: str = "single", align: int = 4096,
           location: Optional[str] = None, checksum: bool = False, size_threshold: int = 1024,
           sync: bool = True) -> None:
    """Converts an archive back to classic ONNX (``onnxzip_unpack``):
    ``layout`` "single" (the model and one data file, ``location``, default
    NAME.onnx.data, tensors at multiples of ``align``), "per_tensor" (a file
    per entry) or "inline" (one self-contained .onnx under 2 GiB). Tensors
    under ``size_threshold`` bytes are written inline; ``checksum`` adds
    ONNX's SHA-1 checksum key."""
    if layout not in _UNPACK_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(_UNPACK_LAYOUTS)}, not {layout!r}")
    flags = (_UNPACK_CHECKSUM if checksum else 0) | (0 if sync else _UNPACK_NO_SYNC)
    _native.unpack(os.fspath(archive_path), os.fspath(model_path), _UNPACK_LAYOUTS[layout], align, location, flags,
                   size_threshold)


def repack(in_path: PathLike, out_path: PathLike, *, align: int = 64, sync: bool = True) -> None:
    """Rewrites any zip holding an onnxzip model (e.g. recompressed by another
    tool) as an aligned archive (``onnxzip_repack``)."""
    _native.repack(os.fspath(in_path), os.fspath(out_path), align, 0 if sync else _WRITE_NO_SYNC)


def update_model(archive_path: PathLike, model: Union["onnx.ModelProto", bytes]) -> None:
    """Replaces the archive's model in place, weights untouched
    (``onnxzip_update_model``, crash-safe). ``model`` is an onnx.ModelProto or
    its serialized bytes; its EXTERNAL references must name entries of the
    archive (as ``Archive.model()`` gives them)."""
    data = model if isinstance(model, (bytes, bytearray, memoryview)) else model.SerializeToString()
    _native.update_model(os.fspath(archive_path), data)


def verify(path: PathLike) -> None:
    """Opens ``path`` (any layout) and checks every byte and the model's
    required fields, as ``onnxzip verify`` does; raises onnxzip.Error naming
    the first fault."""
    with _open(path) as archive:
        archive.verify()
