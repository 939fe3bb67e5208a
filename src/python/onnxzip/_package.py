"""Packages (format 1.2, spec section 19): one archive holding a repository
folder — several models, their tensors stored once, and plain files
(tokenizer, configs) under their paths::

    with onnxzip.open("repo.onnxzip") as a:         # the default model
        a.model_path                                # "onnx/model.onnx"
        list(a.models)                              # model paths, manifest order
        fp16 = a.models["onnx/model_fp16.onnx"]     # an Archive of that model
        tok = a.files["tokenizer.json"]             # read-only memoryview, no copy

For a single-model archive or a classic model, ``models`` and ``files`` are
empty and ``model_path`` is None, as the C library lists no members for
them (``onnxzip_member_count`` is 0): nothing in them has a path.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Iterator, List, Mapping, Optional, Protocol, Tuple, TypeVar

from ._errors import MemberNotFoundError

_KINDS = ("model", "file")  # onnxzip_member_kind
_NAMED_IN_MESSAGES = 8  # a missing path's message lists at most this many


@dataclass(frozen=True)
class Member:
    """One model or plain file of a package (``onnxzip_member``): its path in
    the folder (``"onnx/model_fp16.onnx"``, ``"tokenizer.json"``), its kind
    (``"model"`` or ``"file"``), its size in bytes (a file's; a model's
    serialized ModelProto, its weights not counted) and whether it is the
    package's default model."""

    path: str
    kind: str
    size: int
    is_default: bool


# The type of the Archives a package's models open as (Archive, RemoteArchive).
A = TypeVar("A", covariant=True)


class Owner(Protocol[A]):
    """What this module uses of the package's Archive (which has it all):
    written here so that this module needs nothing of _archive, which uses
    it."""

    @property
    def path(self) -> Optional[str]: ...

    @property
    def layout(self) -> str: ...

    @property
    def members(self) -> List[Member]: ...

    def _member_index(self, path: str, kind: str) -> Optional[int]: ...

    def _open_model(self, path: str) -> A: ...

    def _file_bytes(self, index: int) -> memoryview: ...


def members(raw: List[Tuple[str, int, bool, int]]) -> List[Member]:
    """Member objects of the native handle's members() tuples."""
    return [Member(path, _KINDS[kind], size, is_default) for path, kind, is_default, size in raw]


def missing(archive: Owner[object], path: str, kind: str) -> MemberNotFoundError:
    """The KeyError for a ``kind`` ("model" or "file") the archive does not
    have at ``path``, naming the package and what it has instead."""
    shown = archive.path or "(buffer)"
    listed = [m for m in archive.members if m.kind == kind]
    if not archive.members:
        what = "a classic ONNX model" if archive.layout != "archive" else "a single-model archive"
        return MemberNotFoundError(f"{shown}: no {kind} '{path}': {what}, not a package (its .models and .files "
                                   "are empty)", status="ENOTFOUND", code=-27)
    other = next((m for m in archive.members if m.path == path), None)
    hint = f"that is a {other.kind}: see .{other.kind}s; " if other else ""
    names = ", ".join(m.path for m in listed[:_NAMED_IN_MESSAGES]) + (", ..." if len(listed) > _NAMED_IN_MESSAGES
                                                                      else "")
    return MemberNotFoundError(f"{shown}: the package has no {kind} '{path}' ({hint}its {kind}s: {names or 'none'})",
                               status="ENOTFOUND", code=-27)


class _Members(Generic[A]):
    """What Models and Files share: the paths of one kind, in manifest order."""

    _kind = ""

    def __init__(self, archive: Owner[A]) -> None:
        self._archive = archive

    def _index(self, path: object) -> int:
        """The member index of ``path``, a member of this kind."""
        if not isinstance(path, str):
            raise TypeError(f"a package path is a str, not {type(path).__name__}")
        index = self._archive._member_index(path, self._kind)
        if index is None:
            raise missing(self._archive, path, self._kind)
        return index

    def _paths(self) -> List[str]:
        return [m.path for m in self._archive.members if m.kind == self._kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths())

    def __len__(self) -> int:
        return len(self._paths())

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._archive._member_index(path, self._kind) is not None

    def __repr__(self) -> str:
        return f"<onnxzip {self._kind}s: {self._paths()}>"


class Models(_Members[A], Mapping[str, A]):
    """Archive.models: model path -> an :class:`Archive` holding that model,
    opened when first asked for (``onnxzip_open_model``), then kept (opened
    again if closed) until the package's Archive is closed, which closes it.
    ``values()`` and ``items()`` open every model."""

    _kind = "model"

    def __getitem__(self, path: str) -> A:
        self._index(path)  # KeyError, TypeError
        return self._archive._open_model(path)


class Files(_Members[object], Mapping[str, memoryview]):
    """Archive.files: file path -> its bytes as a read-only memoryview: over
    the mapping, not copied, for a local file or a buffer
    (``onnxzip_member_bytes``; it keeps the mapping alive as arrays do); a
    copy fetched at each access for a remote archive (``onnxzip_member_read``:
    keep it rather than index twice)."""

    _kind = "file"

    def __getitem__(self, path: str) -> memoryview:
        return self._archive._file_bytes(self._index(path))
