"""onnxzip.ort_session(): an ONNX Runtime session over an archive's view."""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Optional, Sequence

from . import _args, _errors, _trust
from ._archive import open as _open
from ._trust import Trust

if TYPE_CHECKING:  # pragma: no cover
    import onnxruntime

# ONNX Runtime's session config key for the directory that external data
# locations of a model given as bytes are relative to.
_FOLDER_KEY = "session.model_external_initializers_file_folder_path"

# Serializes the set-and-restore of the folder entry on a caller's options
# (see _folder_entry) across threads calling ort_session().
_OPTIONS_LOCK = threading.Lock()


def _config_entry(options: "onnxruntime.SessionOptions", key: str) -> str:
    try:
        return str(options.get_session_config_entry(key))
    except RuntimeError:  # "SessionOptions does not have configuration with key"
        return ""


class _folder_entry:
    """The caller's SessionOptions with the folder entry set while a session
    is built, then set back. ONNX Runtime's SessionOptions can be neither
    copied (no copy(), no pickling; custom op libraries, providers and free
    dimension overrides cannot be read back) nor have an entry removed; the
    session copies the options when it is created, so the entry is needed
    only then. An entry the caller did not have reads "" afterwards, which
    ONNX Runtime takes as unset."""

    def __init__(self, options: "onnxruntime.SessionOptions", folder: str) -> None:
        self.options, self.folder, self.previous = options, folder, ""

    def __enter__(self) -> "onnxruntime.SessionOptions":
        _OPTIONS_LOCK.acquire()
        try:
            self.previous = _config_entry(self.options, _FOLDER_KEY)
            self.options.add_session_config_entry(_FOLDER_KEY, self.folder)
        except BaseException:
            _OPTIONS_LOCK.release()
            raise
        return self.options

    def __exit__(self, *exc: Any) -> None:
        try:
            self.options.add_session_config_entry(_FOLDER_KEY, self.previous)
        finally:
            _OPTIONS_LOCK.release()


def _view_and_folder(archive: Any, path: str, model: Optional[str],
                     trust: Optional[Trust]) -> "tuple[bytes, str]":
    """The archive's view and the directory ONNX Runtime resolves it in.
    Through a symbolic link (a Hugging Face cache's
    snapshots/REV/model.onnxzip -> ../../blobs/SHA256, chains, links into
    other directories) that is the real file's directory, the view naming
    the real file: ONNX Runtime checks the resolved path of external data
    against the folder it is given. The real file is opened again, so the
    view's offsets are those of the very file ONNX Runtime will map even if
    the link was retargeted meanwhile, and verified again with ``trust``."""
    real = os.path.realpath(path)
    if real == os.path.abspath(path):
        return archive.view(), os.path.dirname(real)
    with _open(real, model=model, trust=trust) as target:
        if target.layout != "archive":
            raise _errors.make("ECHANGED", f"{path}: the symbolic link now resolves to {real}, which is not an "
                               "archive (was it retargeted meanwhile?)", path=path)
        return target.view(), os.path.dirname(real)


def ort_session(path: _args.PathArg, sess_options: Optional["onnxruntime.SessionOptions"] = None,
                providers: Optional[Sequence[Any]] = None, *, model: Optional[str] = None,
                trust: Optional[Trust] = None, **kwargs: Any) -> "onnxruntime.InferenceSession":
    """An ``onnxruntime.InferenceSession`` for the model at ``path`` (str,
    bytes or os.PathLike).

    For an archive the session is built from its view (``Archive.view()``):
    the graph with every large tensor referencing the archive file by offset,
    which ONNX Runtime maps itself (the weights are not copied into the
    process). The view is never written to disk. ONNX Runtime finds the
    archive through the session config entry
    ``session.model_external_initializers_file_folder_path`` naming the
    archive's directory (when ``path`` is a symbolic link, e.g. a file of a
    Hugging Face cache snapshot, that of the file it resolves to, which the
    view names): on a new SessionOptions when ``sess_options`` is
    None; on ``sess_options`` only while the session is created, after which
    the entry is set back (to "", meaning unset, when it had none), so the
    same options can be reused for other models (ONNX Runtime may log a
    warning that the entry is overwritten). A classic model is given to ONNX
    Runtime by path as it is. For a package (format 1.2), the session runs
    its default model, or the model whose path ``model`` names, viewed the
    same way (errors as :func:`onnxzip.open`'s). ``trust`` (an
    :class:`onnxzip.Trust`): the model's files are checked against the
    package's signature first, as :func:`onnxzip.open` checks them
    (:class:`onnxzip.SignatureError`, and no session, when they are not
    the signed ones). ``providers`` and other keyword arguments go to
    InferenceSession."""
    try:
        import onnxruntime
    except ImportError as e:
        raise ImportError("onnxzip.ort_session() needs onnxruntime: pip install onnxruntime") from e
    path = _args.path(path, "path")
    wanted = _args.model(model)
    trusted = _trust.argument(trust)
    if sess_options is not None and not isinstance(sess_options, onnxruntime.SessionOptions):
        raise TypeError(f"sess_options must be an onnxruntime.SessionOptions, not {type(sess_options).__name__}")
    with _open(path, model=wanted, trust=trusted) as archive:
        if archive.layout != "archive":  # by the caller's path: its data files are beside it, links or not
            return onnxruntime.InferenceSession(path, sess_options=sess_options, providers=providers, **kwargs)
        view, folder = _view_and_folder(archive, path, wanted, trusted)
    if sess_options is None:
        options = onnxruntime.SessionOptions()
        options.add_session_config_entry(_FOLDER_KEY, folder)
        return onnxruntime.InferenceSession(view, sess_options=options, providers=providers, **kwargs)
    with _folder_entry(sess_options, folder) as options:
        return onnxruntime.InferenceSession(view, sess_options=options, providers=providers, **kwargs)
