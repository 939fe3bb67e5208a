"""onnxzip.Error: every failure of the C library, with its status."""
from __future__ import annotations

from . import _native


class Error(Exception):
    """A failing onnxzip call.

    ``str(e)`` is the library's message, which names the file and, where it
    applies, the entry, tensor and byte offset at fault. ``e.status`` is the
    status name without its prefix (``"ECRC"``, ``"EPATH"``, ...; see
    ``onnxzip_status`` in ``onnxzip.h``), ``e.code`` its negative value and
    ``e.offset`` the byte offset in the file at fault, or -1.
    """

    status: str
    code: int
    offset: int

    def __init__(self, message: str, *, status: str = "EINVAL", code: int = -1, offset: int = -1) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.offset = offset


def _from_native(code: int, name: str, message: str, offset: int) -> Error:
    status = name[len("ONNXZIP_"):] if name.startswith("ONNXZIP_") else name
    return Error(message, status=status, code=code, offset=offset)


Error.__module__ = "onnxzip"
_native.set_error_factory(_from_native)
