"""Checks of the public functions' arguments, made in Python before anything
reaches the C library, with messages naming the argument. One rule each:

- integers: ``int`` or anything with ``__index__`` (numpy integers); not
  ``bool`` (an alignment or byte count given as True is a mistake), not
  ``float`` or ``str`` (TypeError);
- byte counts: 0 .. 2**64 - 1 (ValueError);
- alignments: a power of two within the C library's range (ValueError);
  every ValueError here is onnxzip.InvalidArgumentError (a ValueError and an
  onnxzip.Error of status EINVAL), the class of the C library's bad options;
- paths: ``str``, ``bytes`` or ``os.PathLike`` (TypeError), returned as
  ``str`` (bytes decoded as ``os.fsdecode`` does: round-trips to the same
  bytes when the C layer encodes it again);
- choices: one of a fixed set of strings (ValueError listing them);
- a package's model (``model=``): None or a non-empty ``str`` without NUL;
- bounded integers (``bounded``) and durations in seconds
  (``milliseconds``: int or float, not bool; > 0, at most a limit).
"""
from __future__ import annotations

import operator
import os
from typing import Iterable, Optional, SupportsIndex, Union

from ._errors import make

PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
# An integer argument: int or anything with __index__ (numpy integers), as integer() takes it.
IntArg = SupportsIndex

_U64_MAX = 2**64 - 1
# include/onnxzip/onnxzip.h: onnxzip_write_options.alignment (archives: pack,
# repack, save) and onnxzip_unpack_options.alignment (unpack's data file)
MAX_ALIGN = 65536
ARCHIVE_MIN_ALIGN = 64


def integer(value: object, name: str) -> int:
    """``value`` as an int; TypeError for bools, floats, strings, None."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]  # checked right here
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None


def byte_count(value: object, name: str) -> int:
    """A size in bytes: an integer in 0 .. 2**64 - 1."""
    n = integer(value, name)
    if n < 0:
        raise make("EINVAL", f"{name} must be >= 0, not {n}")
    if n > _U64_MAX:
        raise make("EINVAL", f"{name} must be < 2**64, not {n}")
    return n


def alignment(value: object, name: str, low: int) -> int:
    """A power of two in ``low`` .. 65536."""
    n = integer(value, name)
    if not low <= n <= MAX_ALIGN or n & (n - 1):
        raise make("EINVAL", f"{name} must be a power of two between {low} and {MAX_ALIGN}, not {n}")
    return n


def bounded(value: object, name: str, low: int, high: int) -> int:
    """An integer in ``low`` .. ``high``."""
    n = integer(value, name)
    if not low <= n <= high:
        raise make("EINVAL", f"{name} must be from {low} to {high}, not {n}")
    return n


def milliseconds(value: object, name: str, most: float) -> int:
    """A duration given in seconds (int or float, > 0, at most ``most``) as
    whole milliseconds (at least 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds (int or float), not {type(value).__name__}")
    if not 0 < value <= most:  # also refuses NaN
        raise make("EINVAL", f"{name} must be more than 0 and at most {most:g} seconds, not {value!r}")
    return max(1, round(value * 1000))


def path(value: object, name: str) -> str:
    """A file system path as str: from str, bytes or os.PathLike."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"{name} must be a path (str, bytes or os.PathLike), not {type(value).__name__}")
    return os.fsdecode(os.fspath(value))


def model(value: object, name: str = "model") -> Optional[str]:
    """A package's model path (``model=``, e.g. ``"onnx/model_fp16.onnx"``),
    or None (the package's default model)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str (a model's path, e.g. 'onnx/model.onnx') or None, "
                        f"not {type(value).__name__}")
    if not value or "\0" in value:
        raise make("EINVAL", f"{name} must be a model's path (e.g. 'onnx/model.onnx'), not {value!r}")
    return value


def choice(value: object, name: str, choices: Iterable[str]) -> str:
    """One of ``choices`` (exact spelling)."""
    options = list(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str (one of {', '.join(options)}), not {type(value).__name__}")
    if value not in options:
        raise make("EINVAL", f"{name} must be one of {', '.join(options)}, not {value!r}")
    return value


def shard_size(value: object, name: str) -> int:
    """A size of at least 1 byte: an integer, or a str as Hugging Face's
    tools write sizes ("5GB", "500MB", "2GiB", "4096"), parsed by the C
    library's onnxzip_parse_size (the CLI's --max-shard-size)."""
    if isinstance(value, str):
        from . import _native  # the one parser, shared with the CLI
        try:
            n: int = _native.parse_size(value)
        except ValueError as e:
            raise make("EINVAL", f"{name}: {e}") from None
    else:
        n = integer(value, name)
    if n < 1:  # 0 as well as negative ones: one message for both
        raise make("EINVAL", f"{name} must be at least 1 byte, not {value!r}")
    return byte_count(n, name)
