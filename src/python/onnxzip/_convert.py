"""The C library's conversions: pack, unpack, repack, update_model, verify."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal, Optional, Union

from . import _args, _errors, _model, _native
from ._archive import open as _open
from ._args import IntArg, PathArg

if TYPE_CHECKING:  # pragma: no cover
    import onnx

# include/onnxzip/onnxzip.h flags
_PACK_KEEP_TYPED, _PACK_NO_CONVERT_ATTRIBUTES, _PACK_DEDUP, _PACK_NO_SYNC = 1, 2, 4, 8
_UNPACK_CHECKSUM, _UNPACK_NO_SYNC = 1, 2
_WRITE_NO_SYNC = 1

UnpackLayout = Literal["single", "per_tensor", "per-tensor", "inline", "safetensors"]
# the C names and the CLI's spelling (onnxzip unpack --layout per-tensor)
_UNPACK_LAYOUTS = {"single": 0, "per_tensor": 1, "per-tensor": 1, "inline": 2, "safetensors": 3}


def pack(model_path: PathArg, archive_path: PathArg, *, align: IntArg = 64, size_threshold: IntArg = 1024,
         keep_typed: bool = False, convert_attribute: bool = True, dedup: bool = False,
         data_dir: Optional[PathArg] = None, default_model: Optional[str] = None, sync: bool = True) -> None:
    """Converts a classic .onnx (single file or with external data) into an
    archive, streaming payloads from the files (``onnxzip_pack``; the CLI's
    ``onnxzip pack``). External data is read under ONNX's path rules, from
    ``data_dir`` or the model's directory. ``align``: a power of two in
    64..65536; ``size_threshold``: payloads of at least this many bytes
    become entries. Paths are str, bytes or os.PathLike; a bad argument
    raises TypeError or ValueError naming it, before anything is read.

    ``model_path`` a folder (a model repository: several .onnx at any
    depth, their external data in any layout, tokenizer and config files)
    makes a package (format 1.2, ``onnxzip_pack_dir``; the CLI's ``onnxzip
    pack DIR -o PKG``): every model and file under its path in the folder,
    equal payloads of a directory stored once (whatever ``dedup``); its
    default model is ``default_model`` (a model's path in the folder, e.g.
    ``"onnx/model.onnx"``), else the shallowest ``model.onnx``, else the
    first model in byte order. :func:`unpack` recreates the folder. Refused,
    naming the path, before anything is written: a folder without a model
    (FormatError ENOMODEL), names that are no package path or that collide
    under case folding or Unicode normalization, missing external data or
    data outside the folder, a top-level name the format reserves (``__``
    and then only letters, digits and ``_``, like ``__PACKAGE``; files of
    any size and names like ``__init__.py`` are packed),
    ``archive_path`` inside the folder. ``data_dir`` applies to a single
    model only, ``default_model`` to a folder only (InvalidArgumentError
    otherwise)."""
    flags = ((_PACK_KEEP_TYPED if keep_typed else 0) | (0 if convert_attribute else _PACK_NO_CONVERT_ATTRIBUTES)
             | (_PACK_DEDUP if dedup else 0) | (0 if sync else _PACK_NO_SYNC))
    source = _args.path(model_path, "model_path")
    default = _args.model(default_model, "default_model")
    folder = os.path.isdir(source)
    if folder and data_dir is not None:
        raise _errors.make("EINVAL", f"{source}: data_dir applies to a single model; a folder's models have their "
                           "external data in the folder")
    if not folder and default is not None:
        raise _errors.make("EINVAL", f"{source}: default_model applies to a folder (a package's models), not to "
                           "a single model")
    _native.pack(source, _args.path(archive_path, "archive_path"),
                 _args.alignment(align, "align", _args.ARCHIVE_MIN_ALIGN), flags,
                 _args.byte_count(size_threshold, "size_threshold"),
                 None if data_dir is None else _args.path(data_dir, "data_dir"), default)


def unpack(archive_path: PathArg, model_path: PathArg, *, layout: UnpackLayout = "single", align: IntArg = 4096,
           location: Optional[str] = None, checksum: bool = False, size_threshold: IntArg = 1024,
           max_shard_size: Union[IntArg, str, None] = None, sync: bool = True, model: Optional[str] = None) -> None:
    """Converts an archive back to classic ONNX (``onnxzip_unpack``; the CLI's
    ``onnxzip unpack``): ``layout`` "single" (the model and one data file,
    ``location``, default NAME.onnx.data, tensors at multiples of ``align``,
    a power of two in 1..65536), "per_tensor" or, as the CLI spells it,
    "per-tensor" (a file per entry) or "inline" (one self-contained .onnx
    under 2 GiB) or "safetensors" (the model and NAME.safetensors, as
    onnx-ir's save_safetensors writes them; types safetensors cannot name go
    to the side file ``location``; ``max_shard_size``, bytes as an int or a
    str such as "5GB", "500MB", "2GiB", splits it into
    NAME-0000k-of-0000n.safetensors shards and NAME.safetensors.index.json).
    Tensors under ``size_threshold`` bytes are written inline;
    ``checksum`` adds ONNX's SHA-1 checksum key. A bad argument raises
    TypeError or ValueError naming it.

    A package (format 1.2) without ``model`` comes back as the folder it was
    packed from, ``model_path`` naming that folder, which must be new or
    empty (``onnxzip_unpack_dir``; ``onnxzip unpack PKG DIR``): every file
    byte for byte, every model at its path with its external data files as
    they were named, its tensors at their offsets (a model packed without
    data files gets ``layout``); the folder appears whole or not at all.
    ``model`` (a model's path in the package, ``"onnx/model_fp16.onnx"``)
    unpacks that one model to the model file ``model_path`` as above
    (NameNotFoundError when the package has no such model,
    InvalidArgumentError for a file that is no package)."""
    code = _UNPACK_LAYOUTS[_args.choice(layout, "layout", _UNPACK_LAYOUTS)]
    shard = 0 if max_shard_size is None else _args.shard_size(max_shard_size, "max_shard_size")
    if shard and code != _UNPACK_LAYOUTS["safetensors"]:
        raise _errors.make("EINVAL", f"max_shard_size applies to layout='safetensors' only, not {layout!r}")
    flags = (_UNPACK_CHECKSUM if checksum else 0) | (0 if sync else _UNPACK_NO_SYNC)
    archive, out = _args.path(archive_path, "archive_path"), _args.path(model_path, "model_path")
    wanted = _args.model(model)
    _native.unpack(archive, out, code, _args.alignment(align, "align", 1),
                   None if location is None else _args.path(location, "location"), flags,
                   _args.byte_count(size_threshold, "size_threshold"), shard, wanted,
                   wanted is None and _is_package(archive))


def _is_package(path: str) -> bool:
    """Whether ``path`` opens as a package (a file that does not open at all
    is left to onnxzip_unpack(), which says why)."""
    try:
        return _native.open(path).model_path() is not None
    except _errors.Error:
        return False


def repack(in_path: PathArg, out_path: PathArg, *, align: IntArg = 64, sync: bool = True) -> None:
    """Rewrites any zip holding an onnxzip model (e.g. recompressed by another
    tool) as an aligned archive (``onnxzip_repack``); ``align`` is a power of
    two in 64..65536."""
    _native.repack(_args.path(in_path, "in_path"), _args.path(out_path, "out_path"),
                   _args.alignment(align, "align", _args.ARCHIVE_MIN_ALIGN), 0 if sync else _WRITE_NO_SYNC)


def update_model(archive_path: PathArg, model: Union["onnx.ModelProto", bytes, bytearray, memoryview]) -> None:
    """Replaces the archive's model in place, weights untouched
    (``onnxzip_update_model``, crash-safe). ``model`` is an onnx.ModelProto or
    its serialized bytes (TypeError for anything else); its EXTERNAL
    references must name entries of the archive (as ``Archive.model()``
    gives them).

    A ModelProto's inline tensors (raw_data) whose bytes are identical to
    an entry tensor's payload are written as references to that entry
    (``model`` itself is not modified): updating with
    ``Archive.model(load_data=True)`` costs no space, where writing those
    bytes inline would double the archive. Other inline data stays inline
    in ``__MODEL_PROTO``, as the C function writes it: 1 MiB or more of it
    (e.g. changed weights) is a UserWarning, as ``onnxzip.save(model,
    new_path, source=archive)`` would store them as entries of a new
    archive. Serialized bytes are written as given."""
    path = _args.path(archive_path, "archive_path")
    if isinstance(model, (bytes, bytearray, memoryview)):
        data: Union[bytes, bytearray, memoryview] = model
    elif getattr(getattr(model, "DESCRIPTOR", None), "name", None) == "ModelProto":
        data = _model.model_for_update(path, model)
    else:
        raise TypeError(f"model must be an onnx.ModelProto or its serialized bytes, not {type(model).__name__}")
    _native.update_model(path, data)


def verify(path: PathArg) -> None:
    """Opens ``path`` (any layout) and checks every byte and the model's
    required fields, as ``onnxzip verify`` does; raises onnxzip.Error naming
    the first fault."""
    with _open(_args.path(path, "path")) as archive:
        archive.verify()
