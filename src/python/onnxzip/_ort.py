"""onnxzip.ort_session(): an ONNX Runtime session over an archive's view."""
from __future__ import annotations

import os
from typing import Any, Optional, Sequence

from ._archive import PathLike
from ._archive import open as _open

# ONNX Runtime's session config key for the directory that external data
# locations of a model given as bytes are relative to.
_FOLDER_KEY = "session.model_external_initializers_file_folder_path"


def ort_session(path: PathLike, sess_options: Optional[Any] = None, providers: Optional[Sequence[Any]] = None,
                **kwargs: Any) -> Any:
    """An ``onnxruntime.InferenceSession`` for the model at ``path``.

    For an archive the session is built from its view (``Archive.view()``):
    the graph with every large tensor referencing the archive file by offset,
    which ONNX Runtime reads (or maps) itself; ``sess_options`` gets the
    config entry naming the archive's directory (a new SessionOptions when
    None). A classic model is given to ONNX Runtime by path as it is.
    ``providers`` and other keyword arguments go to InferenceSession."""
    try:
        import onnxruntime
    except ImportError as e:
        raise ImportError("onnxzip.ort_session() needs onnxruntime: pip install onnxruntime") from e
    path = os.fspath(path)
    with _open(path) as archive:
        if archive.layout != "archive":
            return onnxruntime.InferenceSession(path, sess_options=sess_options, providers=providers, **kwargs)
        view = archive.view()
    options = sess_options if sess_options is not None else onnxruntime.SessionOptions()
    options.add_session_config_entry(_FOLDER_KEY, os.path.dirname(os.path.abspath(path)))
    return onnxruntime.InferenceSession(view, sess_options=options, providers=providers, **kwargs)
