"""Writable copy-on-write arrays and torch tensors over an Archive's file
(Archive.writable_array, Archive.torch, Archive.state_dict). torch is
imported only by the functions that return torch tensors; it is never
required.

Read-only tensors (writable=False) share the archive's read-only mapping:
torch has no read-only tensors, so a write through one (``t.add_(1)``,
``t[0] = 1``, an optimizer step) is undefined behaviour, in practice SIGSEGV
(the pages are mapped without write permission). Writable ones
(writable=True) are over a private writable mapping of the archive file
(MAP_PRIVATE, Python's ACCESS_COPY): reads share the page cache, the first
write to a page copies that page into the process (anonymous memory), and
nothing ever reaches the file. One mapping per tensor: Linux's default
overcommit heuristic judges each mapping alone, refusing one larger than
about RAM + swap, which is then a clear onnxzip.Error (ENOMEM).

DLPack: numpy's ``__dlpack__`` refuses to export read-only arrays to
consumers of the unversioned protocol (torch.from_dlpack among them; numpy
1.24 refuses every consumer), so the read-only arrays of
``Archive.tensors`` do not pass through it; writable_array()'s arrays do, as
any writable numpy array.
"""
from __future__ import annotations

import errno
import mmap
import os
import sys
import warnings
from typing import Any, Dict, Iterable, List, Optional, Protocol

import numpy as np

from . import _dtypes
from ._errors import Error
from ._tensor_info import TensorInfo

# ONNX data types torch holds under another numpy dtype: reached through a
# signed integer view of the same width, then Tensor.view(torch dtype).
# (ONNX code: torch attribute; missing attributes: an older torch lacks it.)
_TORCH = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
          10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
          16: "bfloat16", 17: "float8_e4m3fn", 18: "float8_e4m3fnuz", 19: "float8_e5m2", 20: "float8_e5m2fnuz",
          24: "float8_e8m0fnu"}
_DIRECT = frozenset((1, 2, 3, 5, 6, 7, 9, 10, 11, 14, 15))  # torch.from_numpy takes their numpy dtypes
_READONLY_WARNING = r"The given (NumPy array|buffer) is not writable"


class Mapped(Protocol):
    """What this module uses of an Archive (which has it all): written here
    so that this module needs nothing of _archive, which uses it."""

    @property
    def path(self) -> Optional[str]: ...

    @property
    def _file(self) -> Optional[str]: ...

    @property
    def _infos(self) -> List[TensorInfo]: ...

    def check(self) -> None: ...

    def array(self, tensor: TensorInfo) -> np.ndarray: ...

    def _shaped(self, index: int, data: Any) -> np.ndarray: ...


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("this onnxzip function returns torch tensors: install torch") from e
    return torch


def _where(archive: Mapped, info: TensorInfo) -> str:
    return f"{archive.path or '(buffer)'}: tensor '{info.key}'"


def _private_region(archive: Mapped, info: TensorInfo) -> np.ndarray:
    """The bytes of entry tensor ``info`` as a writable uint8 array over a
    private (copy-on-write) mapping of the archive file."""
    path = archive._file
    assert path is not None
    start = info.offset - info.offset % mmap.ALLOCATIONGRANULARITY
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        opened = os.fstat(fd)
        archive.check()  # the path still names the mapped file, unchanged (ETRUNC otherwise)
        now = os.stat(path)
        if (opened.st_dev, opened.st_ino) != (now.st_dev, now.st_ino):
            raise Error(f"{path}: replaced while being opened again: close the archive and open it again",
                        status="ETRUNC", code=-6)
        length = info.offset + info.nbytes - start
        try:
            mapping = mmap.mmap(fd, length, access=mmap.ACCESS_COPY, offset=start)
        except OSError as e:
            reason = errno.errorcode.get(e.errno or 0, str(e.errno))
            raise Error(f"{_where(archive, info)}: a copy-on-write mapping of {length} bytes was refused "
                        f"({reason}: {e.strerror}): the system limits private writable mappings (Linux's "
                        "default overcommit heuristic refuses one larger than about RAM + swap); use "
                        "writable=False (read-only, shared with the page cache) or copy the tensor",
                        status="ENOMEM", code=-2) from e
    finally:
        os.close(fd)
    return np.frombuffer(mapping, dtype=np.uint8, count=info.nbytes, offset=info.offset - start)


def writable_arrays(archive: Mapped, infos: Iterable[TensorInfo]) -> List[np.ndarray]:
    """A writable numpy array for each tensor, as Archive.array() shapes
    it: archive entries over copy-on-write pages of the file, the others
    (inline, typed fields, side files of a classic model, archives opened
    from a buffer, STRING) as copies."""
    out = []
    for info in infos:
        if info.storage != "entry" or archive._file is None or info.data_type == _dtypes.STRING or info.nbytes == 0:
            out.append(np.array(archive.array(info), copy=True))
            continue
        out.append(archive._shaped(info.index, _private_region(archive, info)))
    return out


def _torch_dtype(torch: Any, archive: Mapped, info: TensorInfo) -> Any:
    if info.data_type in _dtypes.PACKED_BITS:
        return torch.uint8  # packed 4-bit/2-bit/6-bit: the raw bytes, as Archive.array gives them
    name = _TORCH.get(info.data_type)
    dtype = getattr(torch, name, None) if name else None
    if dtype is None:
        have = f"torch {torch.__version__} has no {name}" if name else "torch has no such type"
        raise Error(f"{_where(archive, info)}: no torch dtype for data type {info.dtype_name} "
                    f"({info.data_type}): {have}", status="EDTYPE", code=-28)
    return dtype


def to_torch(archive: Mapped, info: TensorInfo, array: np.ndarray) -> Any:  # torch.Tensor
    """``array`` (Archive.array's or writable_arrays' for ``info``) as a
    torch tensor of ``info``'s torch dtype over the same memory."""
    torch = _import_torch()
    dtype = _torch_dtype(torch, archive, info)
    if sys.byteorder != "little":  # pragma: no cover - the tests run on little-endian hosts
        raise Error(f"{_where(archive, info)}: torch tensors over the file need a little-endian host",
                    status="EUNSUPPORTED", code=-29)
    if info.data_type not in _DIRECT and info.data_type not in _dtypes.PACKED_BITS:
        array = array.view(np.dtype(f"<i{array.dtype.itemsize}"))  # bfloat16/float8/unsigned: the bits
    with warnings.catch_warnings():
        # read-only arrays: the caller was told writes are undefined (module doc)
        warnings.filterwarnings("ignore", message=_READONLY_WARNING, category=UserWarning)
        tensor = torch.from_numpy(array)
    return tensor if tensor.dtype == dtype else tensor.view(dtype)


def state_dict(archive: Mapped, writable: bool) -> Dict[str, Any]:  # torch.Tensor values
    """name -> torch tensor of every dense initializer outside subgraphs,
    the first of each name."""
    first: Dict[str, TensorInfo] = {}
    for info in archive._infos:
        if info.kind == "initializer" and info.graph_depth == 0:
            first.setdefault(info.key, info)  # the name; a key for an unnamed one
    infos = list(first.values())
    _import_torch()
    arrays = writable_arrays(archive, infos) if writable else [archive.array(i) for i in infos]
    return {info.key: to_torch(archive, info, a) for info, a in zip(infos, arrays)}
