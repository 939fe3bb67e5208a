"""ONNX TensorProto.DataType codes and the numpy dtypes of their raw_data."""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional

import numpy as np

_ml: Optional[ModuleType]
try:  # bfloat16 and float8 as numpy dtypes, as onnx >= 1.17 uses them
    _ml = importlib.import_module("ml_dtypes")
except ImportError:  # pragma: no cover - depends on the environment
    _ml = None

# Little-endian dtypes: raw_data is little-endian on every host.
_PLAIN = {
    1: "<f4", 2: "u1", 3: "i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 9: "?", 10: "<f2",
    11: "<f8", 12: "<u4", 13: "<u8", 14: "<c8", 15: "<c16",
}
# ml_dtypes names, and the unsigned integer of the same width holding the bit
# patterns when ml_dtypes is absent.
_ML = {
    16: ("bfloat16", "<u2"), 17: ("float8_e4m3fn", "u1"), 18: ("float8_e4m3fnuz", "u1"),
    19: ("float8_e5m2", "u1"), 20: ("float8_e5m2fnuz", "u1"), 24: ("float8_e8m0fnu", "u1"),
}
# Types packed several to a byte (6-bit: four in three bytes): exposed as
# their raw uint8 bytes.
PACKED_BITS = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2, 27: 6, 28: 6}
STRING = 8


_PLAIN_DTYPES = {code: np.dtype(name) for code, name in _PLAIN.items()}


def numpy_dtype(data_type: int) -> Optional[np.dtype]:
    """The dtype of one element of ``data_type`` in raw_data form, or None
    for STRING, packed sub-byte types and unknown codes."""
    plain = _PLAIN_DTYPES.get(data_type)
    if plain is not None:
        return plain
    if data_type in _ML:
        name, fallback = _ML[data_type]
        ml = getattr(_ml, name, None) if _ml is not None else None
        return np.dtype(ml) if ml is not None else np.dtype(fallback)
    return None


def is_bit_pattern(data_type: int) -> bool:
    """True when ``numpy_dtype(data_type)`` holds bit patterns as unsigned
    integers because ml_dtypes (or its type) is missing."""
    if data_type not in _ML:
        return False
    return _ml is None or getattr(_ml, _ML[data_type][0], None) is None
