"""TensorInfo: where one TensorProto of a model keeps its data, as the
native handle lists it. Archive (_archive) makes them; the writable arrays
and torch tensors (_torch) read them: neither module imports the other for
it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from . import _native, _walk

# The native handle's tensors() tuples code these by index (onnxzip_storage, the kind of TensorProto).
_STORAGE = ("entry", "inline", "typed", "file")
_KIND = (_walk.INITIALIZER, _walk.ATTRIBUTE, _walk.SPARSE_VALUES, _walk.SPARSE_INDICES)
TYPED = _STORAGE.index("typed")


@dataclass(frozen=True)
class TensorInfo:
    """Where one TensorProto of the model keeps its data, as the C library's
    ``onnxzip_tensor`` says.

    ``shape`` is the logical shape (the TensorProto's dims), also for packed
    4-bit and 2-bit types, whose arrays are their raw bytes. ``storage`` is
    ``"entry"`` (an archive entry), ``"inline"`` (raw_data in the model),
    ``"typed"`` (float_data, int32_data, ...: no view, read as a copy) or
    ``"file"`` (a classic external-data file). ``offset`` is the data's byte
    offset in its file (0 for typed), ``entry`` the entry name or external
    location (else None), ``alignment`` the largest power of two (<= 65536)
    dividing the data's address (:meth:`Archive.listing` and ``onnxzip ls``
    report the file offset's, the same from every source).

    ``key`` is what :attr:`Archive.tensors`, :meth:`Archive.info` and
    ``onnxzip ls`` name it by: ``name``, or for an unnamed tensor (``name``
    ``""``, e.g. a Constant's ``value``) its path in the model, such as
    ``"Constant_3/value"`` (node name, attribute name), ``"node#0/value"``
    (the first node of its graph has no name) or
    ``"If_0/then_branch/node#2/value"`` (in a subgraph); the format is
    ``onnxzip_tensor.key``'s in include/onnxzip/onnxzip.h. Unnamed tensors
    never share a key (``"~2"``, ``"~3"``, ... are appended when needed).
    """

    index: int
    name: str
    data_type: int
    shape: Tuple[int, ...]
    nbytes: int
    offset: int
    entry: Optional[str]
    alignment: int
    storage: str
    kind: str
    graph_depth: int
    key: str

    @property
    def dtype_name(self) -> str:
        """The ONNX name of data_type ("FLOAT", "BFLOAT16", "INT4", ...)."""
        return _native.dtype_name(self.data_type)


def tensor_infos(raw: Sequence[Tuple[Any, ...]]) -> List[TensorInfo]:
    """TensorInfo objects of the native handle's tensors() tuples, in order."""
    return [TensorInfo(i, t[0], t[1], t[2], t[3], t[4], t[5], t[6], _STORAGE[t[7]], _KIND[t[8]], t[9], t[10])
            for i, t in enumerate(raw)]
