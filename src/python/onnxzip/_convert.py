"""The C library's conversions: pack, unpack, repack, update_model, verify."""
from __future__ import annotations

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
         data_dir: Optional[PathArg] = None, sync: bool = True) -> None:
    """Converts a classic .onnx (single file or with external data) into an
    archive, streaming payloads from the files (``onnxzip_pack``; the CLI's
    ``onnxzip pack``). External data is read under ONNX's path rules, from
    ``data_dir`` or the model's directory. ``align``: a power of two in
    64..65536; ``size_threshold``: payloads of at least this many bytes
    become entries. Paths are str, bytes or os.PathLike; a bad argument
    raises TypeError or ValueError naming it, before anything is read."""
    flags = ((_PACK_KEEP_TYPED if keep_typed else 0) | (0 if convert_attribute else _PACK_NO_CONVERT_ATTRIBUTES)
             | (_PACK_DEDUP if dedup else 0) | (0 if sync else _PACK_NO_SYNC))
    _native.pack(_args.path(model_path, "model_path"), _args.path(archive_path, "archive_path"),
                 _args.alignment(align, "align", _args.ARCHIVE_MIN_ALIGN), flags,
                 _args.byte_count(size_threshold, "size_threshold"),
                 None if data_dir is None else _args.path(data_dir, "data_dir"))


def unpack(archive_path: PathArg, model_path: PathArg, *, layout: UnpackLayout = "single", align: IntArg = 4096,
           location: Optional[str] = None, checksum: bool = False, size_threshold: IntArg = 1024,
           max_shard_size: Union[IntArg, str, None] = None, sync: bool = True) -> None:
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
    TypeError or ValueError naming it."""
    code = _UNPACK_LAYOUTS[_args.choice(layout, "layout", _UNPACK_LAYOUTS)]
    shard = 0 if max_shard_size is None else _args.shard_size(max_shard_size, "max_shard_size")
    if shard and code != _UNPACK_LAYOUTS["safetensors"]:
        raise _errors.make("EINVAL", f"max_shard_size applies to layout='safetensors' only, not {layout!r}")
    flags = (_UNPACK_CHECKSUM if checksum else 0) | (0 if sync else _UNPACK_NO_SYNC)
    _native.unpack(_args.path(archive_path, "archive_path"), _args.path(model_path, "model_path"), code,
                   _args.alignment(align, "align", 1), None if location is None else _args.path(location, "location"),
                   flags, _args.byte_count(size_threshold, "size_threshold"), shard)


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
