"""onnxzip.Error and its classes: every failure of the C library, with its status.

Every exception the library raises is an :class:`onnxzip.Error` (``.status``,
``.code``, ``.offset``, ``.sys_errno``, ``.path``) and ALSO the builtin
exception that says the same, so that ``except FileNotFoundError`` or
``except ValueError`` catch it as they would any other. ``str(e)`` is always
the library's one-line message. The class is chosen by the errno of the
failing system call first (when there is one), else by the status:

=========================  ==========================  =======================================
class                      also a                      when
=========================  ==========================  =======================================
NotFoundError              FileNotFoundError           errno ENOENT (a missing file, external
                                                       data file or directory)
PermissionDeniedError      PermissionError             errno EACCES or EPERM
DirectoryError             IsADirectoryError           errno EISDIR (ENOTREG: a directory
                                                       given where a file is expected)
NotDirectoryError          NotADirectoryError          errno ENOTDIR
FileSystemError            OSError                     any other errno (ENOSPC, EIO...); EIO,
                                                       ENOTREG, ESAMEFILE, EBUSY without one
FormatError                ValueError                  the file's content: ENOTZIP ... EDIGEST,
                                                       EPATH, ESTALE, ENORANGE, EREPLY,
                                                       ECHANGED, EPACKAGE
LimitError                 ValueError                  ELIMIT
UnsupportedError           ValueError                  EUNSUPPORTED, EDTYPE
InvalidArgumentError       ValueError                  EINVAL
NameNotFoundError          LookupError                 ENOTFOUND without an errno (a tensor
                                                       or entry name that is not there)
MemberNotFoundError        KeyError (a LookupError)    a path that Archive.models or .files
                                                       does not have (a NameNotFoundError
                                                       too: ENOTFOUND)
OutOfMemoryError           MemoryError                 ENOMEM
NetworkError               ConnectionError             ENETWORK, EHTTP
NetworkTimeoutError        TimeoutError                ETIMEOUT
=========================  ==========================  =======================================

The OSError-based classes also have ``.errno`` (= ``.sys_errno``, or None
when no system call failed), ``.strerror`` (the message) and ``.filename``
(= ``.path``). Errors raised by the Python modules go through the same table
(``Error(message, status=...)`` builds the class for its status, as does
:func:`make`), so a given status is the same class wherever it is raised.
Instances pickle and unpickle to the same class and fields.
"""
from __future__ import annotations

import errno as _errno
from typing import Any, BinaryIO, Dict, Optional, Tuple, Type

from . import _native

# onnxzip_status values (include/onnxzip/onnxzip.h: stable ABI, never renumbered)
CODES: Dict[str, int] = {
    "EINVAL": -1, "ENOMEM": -2, "EIO": -3, "ENOTZIP": -4, "ENOTONNXZIP": -5, "ETRUNC": -6, "EEOCD": -7,
    "EZIP64": -8, "ECDIR": -9, "ELOCAL": -10, "EBOUNDS": -11, "EOVERLAP": -12, "EMETHOD": -13, "EFLAGS": -14,
    "EALIGN": -15, "ENAME": -16, "EDUPNAME": -17, "ENOMODEL": -18, "EMODELPOS": -19, "EPROTO": -20, "EREF": -21,
    "ERANGE": -22, "ESIZE": -23, "ECRC": -24, "EDIGEST": -25, "ELIMIT": -26, "ENOTFOUND": -27, "EDTYPE": -28,
    "EUNSUPPORTED": -29, "EPATH": -30, "EBUSY": -31, "ESAMEFILE": -32, "ENOTREG": -33, "ESTALE": -34,
    "ENETWORK": -35, "ETIMEOUT": -36, "EHTTP": -37, "ENORANGE": -38, "EREPLY": -39, "ECHANGED": -40,
    # a plain Error; Python never sees it: fetch()'s progress callback stops a
    # transfer by raising, and that exception propagates instead
    "ECANCELED": -41,
    "EPACKAGE": -42,
    # signatures (onnxzip_signed_open, onnxzip_sign)
    "EUNSIGNED": -43, "ESIGNATURE": -44, "EBUNDLE": -45, "EMISMATCH": -46,
}


class Error(Exception):
    """A failing onnxzip call.

    ``str(e)`` is the library's message, which names the file and, where it
    applies, the entry, tensor and byte offset at fault. ``e.status`` is the
    status name without its prefix (``"ECRC"``, ``"EPATH"``, ...; see
    ``onnxzip_status`` in ``onnxzip.h``), ``e.code`` its negative value,
    ``e.offset`` the byte offset in the file at fault, or -1, ``e.sys_errno``
    the errno of the failing system call (0 when none failed) and ``e.path``
    the file that call was about (None if none). The subclasses (see the
    module's table) are also the matching builtin exceptions.
    """

    status: str
    code: int
    offset: int
    sys_errno: int
    path: Optional[str]

    def __new__(cls, message: str = "", *, status: str = "EINVAL", code: int = -1, offset: int = -1,
                sys_errno: int = 0, path: Optional[str] = None) -> "Error":
        # Error(...) itself builds the class its status and errno call for
        # (the table above), wherever it is raised
        if cls is Error:
            cls = class_for(status, sys_errno)
        if issubclass(cls, OSError):  # OSError's __new__ sets errno, strerror, filename when __new__ is overridden
            return super().__new__(cls, sys_errno or None, message, path)
        return Exception.__new__(cls, message)  # not MemoryError's own __new__: Error is the layout base

    def __init__(self, message: str, *, status: str = "EINVAL", code: int = -1, offset: int = -1,
                 sys_errno: int = 0, path: Optional[str] = None) -> None:
        if not isinstance(self, OSError):  # an OSError's args are (errno, strerror), set by __new__
            Exception.__init__(self, message)
        self.message = message
        self.status = status
        self.code = code
        self.offset = offset
        self.sys_errno = sys_errno
        self.path = path

    def __str__(self) -> str:
        return self.message  # not OSError's "[Errno N] strerror: 'filename'"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.status, self.code, self.offset, self.sys_errno,
                           self.path))


def _rebuild(cls: Type[Error], message: str, status: str, code: int, offset: int, sys_errno: int,
             path: Optional[str]) -> Error:
    return cls(message, status=status, code=code, offset=offset, sys_errno=sys_errno, path=path)


class NotFoundError(Error, FileNotFoundError):
    """A file that does not exist (errno ENOENT)."""


class PermissionDeniedError(Error, PermissionError):
    """A file the process may not open (errno EACCES, EPERM)."""


class DirectoryError(Error, IsADirectoryError):
    """A directory where a file is expected (ENOTREG, errno EISDIR)."""


class NotDirectoryError(Error, NotADirectoryError):
    """A path component that is not a directory (errno ENOTDIR)."""


class FileSystemError(Error, OSError):
    """Another failure of the file system (ENOSPC, EIO...), or a refused output."""


class FormatError(Error, ValueError):
    """A file that is not a valid archive or model (its content is at fault)."""


class LimitError(Error, ValueError):
    """A documented limit is exceeded (ELIMIT)."""


class UnsupportedError(Error, ValueError):
    """Input this build or version does not support (EUNSUPPORTED, EDTYPE)."""


class InvalidArgumentError(Error, ValueError):
    """An invalid argument (EINVAL)."""


class NameNotFoundError(Error, LookupError):
    """A tensor or entry name that is not there (ENOTFOUND)."""


class MemberNotFoundError(NameNotFoundError, KeyError):
    """A path that :attr:`Archive.models` or :attr:`Archive.files` does not
    have (ENOTFOUND): a KeyError as the mappings' protocol wants (``get``,
    ``in``), whose message names the path and the package."""


class OutOfMemoryError(Error, MemoryError):
    """Out of memory (ENOMEM)."""


class NetworkError(Error, ConnectionError):
    """A failed network transfer or an HTTP error status (ENETWORK, EHTTP)."""


class NetworkTimeoutError(Error, TimeoutError):
    """A network transfer that timed out (ETIMEOUT)."""


_BY_ERRNO: Dict[int, Type[Error]] = {
    _errno.ENOENT: NotFoundError, _errno.EACCES: PermissionDeniedError, _errno.EPERM: PermissionDeniedError,
    _errno.EISDIR: DirectoryError, _errno.ENOTDIR: NotDirectoryError,
}
_FORMAT = ("ENOTZIP", "ENOTONNXZIP", "ETRUNC", "EEOCD", "EZIP64", "ECDIR", "ELOCAL", "EBOUNDS", "EOVERLAP",
           "EMETHOD", "EFLAGS", "EALIGN", "ENAME", "EDUPNAME", "ENOMODEL", "EMODELPOS", "EPROTO", "EREF", "ERANGE",
           "ESIZE", "ECRC", "EDIGEST", "EPATH", "ESTALE", "ENORANGE", "EREPLY", "ECHANGED", "EPACKAGE")
_BY_STATUS: Dict[str, Type[Error]] = {
    **{s: FormatError for s in _FORMAT},
    "ELIMIT": LimitError, "EUNSUPPORTED": UnsupportedError, "EDTYPE": UnsupportedError,
    "EINVAL": InvalidArgumentError, "ENOTFOUND": NameNotFoundError, "ENOMEM": OutOfMemoryError,
    "ENETWORK": NetworkError, "EHTTP": NetworkError, "ETIMEOUT": NetworkTimeoutError,
    "EIO": FileSystemError, "ENOTREG": FileSystemError, "ESAMEFILE": FileSystemError, "EBUSY": FileSystemError,
}


def class_for(status: str, sys_errno: int = 0) -> Type[Error]:
    """The class of an error of ``status`` (e.g. ``"EIO"``) with errno ``sys_errno``."""
    if sys_errno in _BY_ERRNO:
        return _BY_ERRNO[sys_errno]
    if sys_errno:
        return FileSystemError
    return _BY_STATUS.get(status, Error)


def make(status: str, message: str, *, offset: int = -1, sys_errno: int = 0, path: Optional[str] = None) -> Error:
    """The exception for ``status`` (a name without ``ONNXZIP_``): what the C
    library's failures raise, for errors found in Python."""
    return class_for(status, sys_errno)(message, status=status, code=CODES.get(status, -1), offset=offset,
                                        sys_errno=sys_errno, path=path)


def open_file(path: str) -> BinaryIO:
    """``open(path, "rb")``, its failure raised as the C library's would be
    (same class, status and message: "PATH: cannot open: REASON")."""
    try:
        return open(path, "rb")
    except IsADirectoryError as e:
        raise make("ENOTREG", f"{path}: a directory, not a regular file", sys_errno=e.errno or 0, path=path) from None
    except OSError as e:
        raise make("EIO", f"{path}: cannot open: {e.strerror}", sys_errno=e.errno or 0, path=path) from None


def _from_native(code: int, name: str, message: str, offset: int, sys_errno: int = 0,
                 path: Optional[str] = None) -> Error:
    status = name[len("ONNXZIP_"):] if name.startswith("ONNXZIP_") else name
    return class_for(status, sys_errno)(message, status=status, code=code, offset=offset, sys_errno=sys_errno,
                                        path=path)


ERROR_CLASSES = (Error, NotFoundError, PermissionDeniedError, DirectoryError, NotDirectoryError, FileSystemError,
                 FormatError, LimitError, UnsupportedError, InvalidArgumentError, NameNotFoundError,
                 MemberNotFoundError, OutOfMemoryError, NetworkError, NetworkTimeoutError)
for _cls in ERROR_CLASSES:
    _cls.__module__ = "onnxzip"
_native.set_error_factory(_from_native)
