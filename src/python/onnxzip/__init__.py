"""onnxzip: ONNX models as aligned zip archives, weights used in place."""
from ._native import version as _version

__version__ = _version()
