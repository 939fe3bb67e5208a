"""onnxzip.load() and onnxzip.save(): onnx.ModelProto in and out."""
from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Set, Tuple

import numpy as np

from . import _args, _native, _walk
from ._archive import PathLike, _import_onnx
from ._archive import open as _open
from ._errors import Error

if TYPE_CHECKING:  # pragma: no cover
    import onnx

_ZIP_MAGIC = b"PK\x03\x04"
_MAX_MODEL = 2**31 - 1

# TensorProto fields holding the payload; string_data is not among them:
# STRING tensors always stay inline, as the C library keeps them.
_DATA_FIELDS = frozenset(("float_data", "int32_data", "int64_data", "raw_data", "double_data", "uint64_data",
                          "external_data", "data_location"))

# data_type -> (typed field, little-endian dtype of one raw element, mask of
# the bits kept from each value): ONNX's raw_data form of typed data, as the C
# library converts it (src/onnx/typed.c).
_TYPED_FIELDS = ("float_data", "int32_data", "int64_data", "double_data", "uint64_data")
_TYPED = {1: ("float_data", "<f4", None), 14: ("float_data", "<f4", None), 7: ("int64_data", "<i8", None),
          11: ("double_data", "<f8", None), 15: ("double_data", "<f8", None), 12: ("uint64_data", "<u4", None),
          13: ("uint64_data", "<u8", None), 6: ("int32_data", "<i4", None)}
_TYPED.update({t: ("int32_data", "<u2", 0xFFFF) for t in (4, 5, 10, 16)})
_TYPED.update({t: ("int32_data", "u1", 0xFF) for t in (2, 3, 9, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26)})
_TYPED.update({t: ("int32_data", "u1", 0x3F) for t in (27, 28)})


def load(path: PathLike, load_external_data: bool = True) -> "onnx.ModelProto":
    """Loads a model as ``onnx.load`` would give it, from any layout: an
    onnxzip archive, a classic .onnx, or one with external data files.

    With ``load_external_data=True`` (the default) every tensor has its data
    in the ModelProto (raw_data), the external references removed. With
    False, an archive's large tensors reference its entries and a classic
    model is returned as stored (its side files are not read)."""
    path = _args.path(path, "path")
    if not load_external_data:
        with open(path, "rb") as f:
            if f.read(4) != _ZIP_MAGIC:  # a classic model, as stored
                model = _import_onnx().ModelProto()
                f.seek(0)
                model.ParseFromString(f.read())
                return model
    with _open(path) as archive:
        return archive.model(load_data=load_external_data)


def _payload(tensor: Any) -> Optional[bytes]:
    """The tensor's bytes in raw_data form, or None when it stays as it is
    (STRING, no data, or typed data in a field its type does not use)."""
    if tensor.HasField("raw_data"):
        return tensor.raw_data
    spec = _TYPED.get(tensor.data_type)
    if spec is None:
        return None
    field, dtype, mask = spec
    values = getattr(tensor, field)
    if len(values) == 0:
        return None
    if any(len(getattr(tensor, other)) for other in _TYPED_FIELDS if other != field):
        return None  # data in a field its type does not use: left as it is
    if mask is None:
        return np.asarray(values, dtype=dtype).tobytes()
    if mask == 0x3F:  # 6-bit: four values in three bytes, LSB first (ONNX's raw form)
        return _pack6(np.asarray(values, dtype=np.int64) & mask)
    return (np.asarray(values, dtype=np.int64) & mask).astype(dtype).tobytes()


def _pack6(values: "np.ndarray") -> bytes:
    n = len(values)
    groups = np.zeros(-(-n // 4) * 4, dtype=np.uint32)
    groups[:n] = values
    groups = groups.reshape(-1, 4)
    words = groups[:, 0] | groups[:, 1] << 6 | groups[:, 2] << 12 | groups[:, 3] << 18
    packed = words.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
    return packed[:(6 * n + 7) // 8]


class _Saver:
    """Writes each large tensor's bytes as an entry while copying the rest of
    the model, so the model is never serialized with its weights."""

    def __init__(self, writer: Any, size_threshold: int, convert_attribute: bool, dedup: bool) -> None:
        self.writer = writer
        self.threshold = size_threshold
        self.convert_attribute = convert_attribute
        self.dedup = dedup
        self.taken: Set[str] = set()
        self.seen: Dict[Tuple[int, bytes], str] = {}

    def entry_name(self, tensor_name: str) -> str:
        index = 0
        while True:  # the spec's mapping; names collide under ASCII down-casing
            # a NUL maps to '_' like any other byte; the C function takes a C string
            name = _native.entry_name_for(tensor_name.replace("\x00", "_"), index)
            if name.lower() not in self.taken:
                self.taken.add(name.lower())
                return name
            index += 1

    def store(self, tensor: Any, payload: bytes) -> str:
        key = None
        if self.dedup:
            key = (len(payload), hashlib.blake2b(payload, digest_size=32).digest())
            if key in self.seen:
                return self.seen[key]
        name = self.entry_name(tensor.name)
        self.writer.add(name, payload)
        if key is not None:
            self.seen[key] = name
        return name

    def on_tensor(self, src: Any, dst: Any, kind: str) -> None:
        if src.data_location == src.EXTERNAL:
            raise Error(f"tensor '{src.name}': its data is in an external file "
                        f"('{next((kv.value for kv in src.external_data if kv.key == 'location'), '')}'); "
                        "load the model with its data first (onnx.load(path) or onnxzip.load(path)), "
                        "or convert the file with onnxzip.pack()", status="EINVAL", code=-1)
        payload = None
        if kind != _walk.ATTRIBUTE or self.convert_attribute:
            payload = _payload(src)
        if payload is None or len(payload) < self.threshold:
            dst.CopyFrom(src)
            return
        name = self.store(src, payload)
        del payload
        for fd in src.DESCRIPTOR.fields:  # not ListFields(): it would copy raw_data once more
            if fd.name in _DATA_FIELDS:
                continue
            if _walk.is_repeated(fd):
                if len(getattr(src, fd.name)):
                    _walk.copy_field(dst, fd, getattr(src, fd.name))
            elif src.HasField(fd.name):
                _walk.copy_field(dst, fd, getattr(src, fd.name))
        kv = dst.external_data.add()
        kv.key, kv.value = "location", name
        dst.data_location = dst.EXTERNAL


def save(model: "onnx.ModelProto", path: PathLike, *, align: int = 64, size_threshold: int = 1024,
         convert_attribute: bool = True, dedup: bool = False, sync: bool = True) -> None:
    """Writes ``model`` as an onnxzip archive at ``path``.

    Every tensor whose payload has at least ``size_threshold`` bytes
    (initializers, sparse tensors, subgraphs, functions, training graphs;
    attribute tensors such as Constant values unless ``convert_attribute``
    is False) becomes an entry aligned to ``align`` bytes: raw_data as it is,
    typed fields (float_data, ...) converted to raw little-endian bytes.
    Each payload is written straight into the archive and the graph, with
    references, is written last, so models over protobuf's 2 GiB save
    without ever being serialized whole. ``dedup`` stores identical payloads
    once. ``model`` is not modified. The archive appears at ``path`` only
    when complete (temporary file and rename); ``sync=False`` skips the
    fsyncs. Raises onnxzip.Error naming the tensor at fault."""
    if not hasattr(model, "DESCRIPTOR") or model.DESCRIPTOR.name != "ModelProto":
        raise TypeError(f"save() takes an onnx.ModelProto, not {type(model).__name__}")
    size_threshold = _args.byte_count(size_threshold, "size_threshold")
    writer = _native.writer(_args.path(path, "path"), _args.alignment(align, "align", _args.ARCHIVE_MIN_ALIGN),
                            0 if sync else 1)
    try:
        saver = _Saver(writer, size_threshold, convert_attribute, dedup)
        skeleton = type(model)()
        _walk.rebuild(model, skeleton, saver.on_tensor)
        size = skeleton.ByteSize()
        if size > _MAX_MODEL:
            raise Error(f"{os.fspath(path)}: the model without its large tensors has {size} bytes, over "
                        "protobuf's 2 GiB - 1: lower size_threshold", status="ELIMIT", code=-26)
        data = skeleton.SerializeToString()
        writer.set_model(data)
        del skeleton, data
        writer.finish()
    except BaseException:
        writer.abort()
        raise
