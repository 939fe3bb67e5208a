"""onnxzip.load() and onnxzip.save(): onnx.ModelProto in and out."""
from __future__ import annotations

import contextlib
import hashlib
import warnings
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Set, Tuple, Union, cast

import numpy as np

from . import _args, _native, _trust, _walk
from ._args import IntArg, PathArg
from ._archive import Archive, _import_onnx, model_source, set_loaded_location
from ._archive import open as _open
from ._errors import Error
from ._errors import open_file as _open_file
from ._tensor_info import TensorInfo
from ._trust import Trust

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
_TYPED: Dict[int, Tuple[str, str, Optional[int]]] = {
    1: ("float_data", "<f4", None), 14: ("float_data", "<f4", None), 7: ("int64_data", "<i8", None),
    11: ("double_data", "<f8", None), 15: ("double_data", "<f8", None), 12: ("uint64_data", "<u4", None),
    13: ("uint64_data", "<u8", None), 6: ("int32_data", "<i4", None)}
_TYPED.update({t: ("int32_data", "<u2", 0xFFFF) for t in (4, 5, 10, 16)})
_TYPED.update({t: ("int32_data", "u1", 0xFF) for t in (2, 3, 9, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26)})
_TYPED.update({t: ("int32_data", "u1", 0x3F) for t in (27, 28)})


def load(path: PathArg, load_external_data: bool = True, *, model: Optional[str] = None,
         trust: Optional[Trust] = None) -> "onnx.ModelProto":
    """Loads a model as ``onnx.load`` would give it, from any layout: an
    onnxzip archive, a classic .onnx, or one with external data files.

    With ``load_external_data=True`` (the default) every tensor has its data
    in the ModelProto (raw_data), the external references removed. With
    False, an archive's large tensors reference its entries and a classic
    model is returned as stored (its side files are not read).

    For a package (format 1.2), its default model, or the model whose path
    in the package ``model`` names (``"onnx/model_fp16.onnx"``):
    NameNotFoundError (a LookupError) when it has none of that path,
    InvalidArgumentError (a ValueError) when ``model`` is given for a file
    that is no package.

    ``trust`` (an :class:`onnxzip.Trust`): the model's bytes must be the
    signed ones (as :func:`onnxzip.open` checks them), else
    :class:`onnxzip.SignatureError` naming the file."""
    path = _args.path(path, "path")
    wanted = _args.model(model)
    trusted = _trust.argument(trust)
    if not load_external_data and trusted is None:
        with _open_file(path) as f:  # its failure as the library's (onnxzip.NotFoundError...)
            if f.read(4) != _ZIP_MAGIC and wanted is None:  # a classic model, as stored
                proto: "onnx.ModelProto" = _import_onnx().ModelProto()
                f.seek(0)
                proto.ParseFromString(f.read())
                return proto
    with _open(path, model=wanted, trust=trusted) as archive:  # a classic model with model=: the library's EINVAL
        return archive.model(load_data=load_external_data)


def _payload(tensor: Any) -> Optional[bytes]:
    """The tensor's bytes in raw_data form, or None when it stays as it is
    (STRING, no data, or typed data in a field its type does not use)."""
    if tensor.HasField("raw_data"):
        return cast(bytes, tensor.raw_data)
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
    flat = np.zeros(-(-n // 4) * 4, dtype=np.uint32)
    flat[:n] = values
    groups = flat.reshape(-1, 4)
    words = groups[:, 0] | groups[:, 1] << 6 | groups[:, 2] << 12 | groups[:, 3] << 18
    packed = words.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
    return packed[:(6 * n + 7) // 8]


def copy_metadata(src: Any, dst: Any) -> None:
    """Copies every field of TensorProto ``src`` into ``dst`` but its data
    and references (_DATA_FIELDS), without copying raw_data."""
    for fd in src.DESCRIPTOR.fields:  # not ListFields(): it would copy raw_data once more
        if fd.name in _DATA_FIELDS:
            continue
        if _walk.is_repeated(fd):
            if len(getattr(src, fd.name)):
                _walk.copy_field(dst, fd, getattr(src, fd.name))
        elif src.HasField(fd.name):
            _walk.copy_field(dst, fd, getattr(src, fd.name))


def set_reference(dst: Any, entry: str, *extra: Tuple[str, str]) -> None:
    """Makes ``dst`` (its data fields empty) a reference to entry ``entry``:
    all of it, or the part ``extra`` ("offset", "length") names."""
    for key, value in (("location", entry),) + extra:
        kv = dst.external_data.add()
        kv.key, kv.value = key, value
    dst.data_location = dst.EXTERNAL


class _Saver:
    """Writes each large tensor's bytes as an entry while copying the rest of
    the model, so the model is never serialized with its weights. Tensors
    referencing ``source`` (an open Archive) take their bytes from its
    mapping."""

    def __init__(self, writer: Any, size_threshold: int, convert_attribute: bool, dedup: bool,
                 source: Optional[Archive]) -> None:
        self.writer = writer
        self.threshold = size_threshold
        self.convert_attribute = convert_attribute
        self.dedup = dedup
        self.source = source
        self.regions: Optional[Dict[Tuple[str, int], List[TensorInfo]]] = None
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

    def store(self, tensor: Any, payload: Any) -> str:
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
            self.on_reference(src, dst, kind)
            return
        payload = None
        if kind != _walk.ATTRIBUTE or self.convert_attribute:
            payload = _payload(src)
        if payload is None or len(payload) < self.threshold:
            dst.CopyFrom(src)
            return
        name = self.store(src, payload)
        del payload
        copy_metadata(src, dst)
        set_reference(dst, name)

    def on_reference(self, src: Any, dst: Any, kind: str) -> None:
        """A tensor whose bytes are elsewhere: in ``source`` (streamed from
        its mapping into an entry, or put inline when small), else refused."""
        if self.source is None:
            location = next((kv.value for kv in src.external_data if kv.key == "location"), "")
            raise Error(f"{_walk.describe(src)}: its data is in an external file or entry ('{location}'); "
                        "give the archive or classic model it came from as save(model, path, source=...) "
                        "(an open Archive's model() finds its archive itself, a copy of it does not), "
                        "load the model with its data first (onnx.load(path) or onnxzip.load(path)), "
                        "or convert the file with onnxzip.pack()", status="EINVAL", code=-1)
        if self.regions is None:
            self.regions = self.source._external_regions()
        info = self.source._resolve(src, self.regions)
        region = self.source._region(info)
        copy_metadata(src, dst)
        if len(region) < self.threshold or (kind == _walk.ATTRIBUTE and not self.convert_attribute):
            dst.raw_data = bytes(region)
            set_loaded_location(dst, info.storage)
        else:
            set_reference(dst, self.store(src, region))


@contextlib.contextmanager
def _source(source: Union[Archive, PathArg, None], model: Any) -> Iterator[Optional[Archive]]:
    """save()'s source as an open Archive for the duration of the save: the
    caller's (left open), one opened from a path (closed after), or with no
    source the open Archive whose model() returned ``model`` itself."""
    if source is None:
        yield model_source(model)
        return
    if isinstance(source, Archive):
        source._handle()  # ValueError when closed, before anything is written
        yield source
        return
    with _open(_args.path(source, "source")) as archive:  # bytes: a path here, not contents
        yield archive


def save(model: "onnx.ModelProto", path: PathArg, *, align: IntArg = 64, size_threshold: IntArg = 1024,
         convert_attribute: bool = True, dedup: bool = False, sync: bool = True,
         source: Union[Archive, PathArg, None] = None) -> None:
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
    fsyncs. Raises onnxzip.Error naming the tensor at fault.

    Tensors with data_location EXTERNAL (a model from ``Archive.model()``, or
    ``onnx.load(..., load_external_data=False)``) need ``source``: the open
    Archive, or the path of the archive or classic model, the references
    name entries or side files of. Their bytes are streamed from its mapping
    into the new archive (never loaded whole; small ones become inline
    raw_data), so ``m = a.model()``, edits, then ``save(m, "new.onnxzip",
    source=a)`` writes an edited copy. ``source`` may be left out for a
    model that ``a.model()`` returned (that very object, edited in place or
    not, while ``a`` is open: each Archive remembers the last 16 it
    returned); otherwise such a tensor is an error."""
    if not hasattr(model, "DESCRIPTOR") or model.DESCRIPTOR.name != "ModelProto":
        raise TypeError(f"save() takes an onnx.ModelProto, not {type(model).__name__}")
    size_threshold = _args.byte_count(size_threshold, "size_threshold")
    path = _args.path(path, "path")
    writer = _native.writer(path, _args.alignment(align, "align", _args.ARCHIVE_MIN_ALIGN), 0 if sync else 1)
    try:
        with _source(source, model) as archive:
            saver = _Saver(writer, size_threshold, convert_attribute, dedup, archive)
            skeleton = type(model)()
            _walk.rebuild(model, skeleton, saver.on_tensor)
        size = skeleton.ByteSize()
        if size > _MAX_MODEL:
            raise Error(f"{path}: the model without its large tensors has {size} bytes, over "
                        "protobuf's 2 GiB - 1: lower size_threshold", status="ELIMIT", code=-26)
        data = skeleton.SerializeToString()
        writer.set_model(data)
        del skeleton, data
        writer.finish()
    except BaseException:
        writer.abort()
        raise


# update_model(): inline payloads found in no entry are warned about from this
# total on (they grow __MODEL_PROTO, and so the archive, by as much).
_INLINE_WARNING_BYTES = 1 << 20
_COMPARE_CHUNK = 16 << 20


def _same_bytes(region: Any, data: bytes) -> bool:
    """Whether a buffer over the mapping holds exactly ``data``, compared in
    chunks (no copy of the whole entry)."""
    a, b = np.frombuffer(region, dtype=np.uint8), np.frombuffer(data, dtype=np.uint8)
    if len(a) != len(b):
        return False
    return all(np.array_equal(a[i:i + _COMPARE_CHUNK], b[i:i + _COMPARE_CHUNK])
               for i in range(0, len(a), _COMPARE_CHUNK))


class _EntryMatcher:
    """update_model(): turns each inline tensor whose raw_data is
    byte-identical to the payload of an entry tensor of ``archive`` back into
    a reference to it (the archive keeps those bytes; the new model need
    not), counting the inline bytes that match no entry."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        entries = {e.name: e for e in archive.entries}
        self.by_name: Dict[str, List[TensorInfo]] = {}
        self.by_size: Dict[int, List[TensorInfo]] = {}
        self.parts: Dict[int, Tuple[Tuple[str, str], ...]] = {}  # the offset and length keys, for part of an entry
        for t in archive._infos:
            if t.storage != "entry" or t.entry is None or t.nbytes == 0:
                continue
            self.by_name.setdefault(t.name, []).append(t)
            self.by_size.setdefault(t.nbytes, []).append(t)
            entry = entries[t.entry]
            whole = t.offset == entry.data_offset and t.nbytes == entry.size
            self.parts[t.index] = () if whole else (("offset", str(t.offset - entry.data_offset)),
                                                    ("length", str(t.nbytes)))
        self.threshold = 1024  # save()'s default: smaller inline tensors are not counted
        self.inline_bytes = 0
        self.inline_largest = ("", 0)

    def find(self, tensor: Any, data: bytes) -> Optional[TensorInfo]:
        named = [t for t in self.by_name.get(tensor.name, ()) if t.nbytes == len(data)]
        for t in named + [t for t in self.by_size.get(len(data), ()) if t not in named]:
            region = memoryview(self.archive._region(t))
            if region[:64] == data[:64] and _same_bytes(region, data):  # the first bytes: a quick reject
                return t
        return None

    def on_tensor(self, src: Any, dst: Any, kind: str) -> None:
        if src.data_location == src.EXTERNAL or not src.HasField("raw_data"):
            dst.CopyFrom(src)
            return
        data = src.raw_data  # one copy (protobuf hands out a new bytes object each time)
        info = self.find(src, data) if len(data) else None
        if info is None:
            dst.CopyFrom(src)
            if len(data) >= self.threshold:
                self.inline_bytes += len(data)
                self.inline_largest = max(self.inline_largest, (_walk.describe(src), len(data)), key=lambda x: x[1])
            return
        copy_metadata(src, dst)
        location = self.archive._entry_location(cast(str, info.entry))  # entry tensors only (__init__)
        set_reference(dst, location, *self.parts[info.index])


def model_for_update(path: str, model: Any) -> bytes:
    """update_model()'s bytes for ``model`` (a ModelProto, not modified):
    inline tensors byte-identical to entries of the archive at ``path``
    become references to them (_EntryMatcher); a UserWarning when other
    inline payloads of 1 MiB or more in total will go into __MODEL_PROTO."""
    with _open(path) as archive:
        if archive.layout != "archive":  # the C call refuses it with its own message
            return cast(bytes, model.SerializeToString())
        matcher = _EntryMatcher(archive)
        skeleton = type(model)()
        _walk.rebuild(model, skeleton, matcher.on_tensor)
    if matcher.inline_bytes >= _INLINE_WARNING_BYTES:
        tensor, size = matcher.inline_largest
        warnings.warn(f"{path}: update_model writes {matcher.inline_bytes} bytes of tensor data that no entry of "
                      f"the archive holds (the largest: {tensor}, {size} bytes) inline into __MODEL_PROTO, "
                      "growing the archive by as much; onnxzip.save(model, new_path, source=archive) would store "
                      "them as entries", UserWarning, stacklevel=3)
    return cast(bytes, skeleton.SerializeToString())
