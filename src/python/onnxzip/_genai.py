"""onnxzip.genai_model(): an onnxruntime-genai Model over a package archive.

A folder that onnxruntime-genai loads (genai_config.json, one or more ONNX
models, tokenizer files) packed as one archive (format 1.2) runs with its
weights mapped from the archive: each model named by genai_config.json is
given to genai as the archive's view (``og.Config.add_model_data``), the
graph referencing the archive file by offset, which ONNX Runtime maps
itself. Only the folder's plain files (genai_config.json, tokenizer.json,
...) are written, into a cache directory reused across calls (see
:func:`genai_model`).
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import posixpath
import shutil
import stat
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Set, Tuple

from . import _args, _trust
from ._archive import Archive
from ._archive import open as _open
from ._errors import Error, make
from ._ort import _FOLDER_KEY, _view_and_folder
from ._trust import Trust

if TYPE_CHECKING:  # pragma: no cover
    import onnxruntime_genai

CONFIG = "genai_config.json"
_PREPACK_KEY = "session.disable_prepacking"
# An entry of the cache is named by this many hex digits of its contents' SHA-256.
_KEY_DIGITS = 32


def default_cache_dir() -> str:
    """Where genai_model() writes a package's plain files unless told:
    $ONNXZIP_CACHE_DIR/genai when set; else the platform's user cache
    directory: $XDG_CACHE_HOME/onnxzip/genai (default ~/.cache/onnxzip/genai)
    on Linux and other Unix systems, ~/Library/Caches/onnxzip/genai on macOS,
    %LOCALAPPDATA%\\onnxzip\\cache\\genai on Windows."""
    own = os.environ.get("ONNXZIP_CACHE_DIR")
    if own:
        return os.path.join(own, "genai")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
        return os.path.join(base, "onnxzip", "cache", "genai")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/onnxzip/genai")
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.expanduser("~/.cache")  # XDG: relative values ignored
    return os.path.join(base, "onnxzip", "genai")


def _config_path(archive: Archive, shown: str, model: Optional[str]) -> str:
    """The package path of the genai_config.json that ``model`` chooses: the
    one in the folder ``model`` names (or in the folder of the path it
    names); with no ``model``, the package's only one."""
    configs = [p for p in archive.files if posixpath.basename(p) == CONFIG]
    if model is not None:
        base = model.strip("/")
        for candidate in (posixpath.join(base, CONFIG), base, posixpath.join(posixpath.dirname(base), CONFIG)):
            if candidate in configs:
                return candidate.lstrip("/")
        raise make("ENOTFOUND", f"{shown}: no {CONFIG} for model '{model}' in the package (its {CONFIG} files: "
                   f"{', '.join(configs) or 'none'})", sys_errno=errno.ENOENT, path=shown)
    if not configs:
        what = ("a package without an onnxruntime-genai folder" if archive.is_package else
                "not a package (format 1.2: `onnxzip pack FOLDER -o PKG` packs a genai folder)")
        raise make("ENOTFOUND", f"{shown}: no {CONFIG}: {what}", sys_errno=errno.ENOENT, path=shown)
    if len(configs) > 1:
        raise make("EINVAL", f"{shown}: {len(configs)} {CONFIG} files ({', '.join(configs)}): choose one with "
                   "model='FOLDER'", path=shown)
    return configs[0]


def _model_filenames(node: Any, where: str) -> Iterator[Tuple[str, str]]:
    """(JSON path, value) of every "filename" under genai_config.json's
    "model": the decoder's, encoder's, embedding's, vision's, speech's...
    and their pipelines' stages' (config_filename and adapter_filename name
    plain files, written to the cache as every other file)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "filename" and isinstance(value, str):
                yield f"{where}.filename", value
            else:
                yield from _model_filenames(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _model_filenames(value, f"{where}[{i}]")


def _session_options(node: Any) -> Iterator[Dict[str, Any]]:
    """Every "session_options" object under genai_config.json's "model"."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "session_options" and isinstance(value, dict):
                yield value
            yield from _session_options(value)
    elif isinstance(node, list):
        for value in node:
            yield from _session_options(value)


def _rewrite(config: Dict[str, Any], folder: str, prepack: Optional[bool]) -> bytes:
    """genai_config.json with the archive's directory as the external data
    folder of every session (``folder``, relative: genai joins it to the
    config's directory and refuses absolute paths), and ONNX Runtime's
    prepacking of weights set as ``prepack`` asks (None: as the config has
    it). Sections without session options of their own use the decoder's."""
    decoder = config["model"].setdefault("decoder", {})
    decoder.setdefault("session_options", {})
    for options in _session_options(config["model"]):
        options[_FOLDER_KEY] = folder
        if prepack is not None:
            options[_PREPACK_KEY] = "0" if prepack else "1"
    return (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _digest(files: Dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        name = path.encode("utf-8")
        h.update(len(name).to_bytes(8, "little") + name + len(files[path]).to_bytes(8, "little"))
        h.update(files[path])
    return h.hexdigest()[:_KEY_DIGITS]


def _complete(entry: str, files: Dict[str, bytes], exact: bool) -> bool:
    """Whether the cache entry holds every file at its size (an entry is
    only ever renamed into place complete; this catches one damaged since).
    False when it is missing or a file is; OSError when it cannot be read
    (another user's entry is not damaged: it is not this user's to replace).
    ``exact`` (trust=): the entry must hold these files and no other, byte
    for byte, none of it changeable by another user (see _exact)."""
    if exact:
        return _exact(entry, files)
    for path, data in files.items():
        try:
            if os.path.getsize(os.path.join(entry, *path.split("/"))) != len(data):
                return False
        except (FileNotFoundError, NotADirectoryError):
            return False
    return True


def _sealed(st: os.stat_result, inner: bool) -> bool:
    """Whether only this user (or root) can change the entry (``inner``
    False) or a file or directory in it: no link; the owner one of them
    and neither group nor others allowed to write. Inside an entry that
    only its owner can enter (mkdtemp's 0700) modes do not matter."""
    if stat.S_ISLNK(st.st_mode):
        return False
    if not hasattr(os, "getuid") or inner:  # Windows: entries are under the user's own profile
        return True
    return st.st_uid in (os.getuid(), 0) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _exact(entry: str, files: Dict[str, bytes]) -> bool:
    """Whether the entry is exactly ``files``: the same paths, the same
    bytes, no link, no other file, nothing another user could change
    before genai reads it (the tokenizer files are read again by each
    og.Tokenizer). A trusted package's files were verified; the entry is
    what genai reads, so a size alone (an entry written without trust=,
    or by another user) is not enough."""
    try:
        top = os.lstat(entry)
        if not _sealed(top, False):
            return False
        enterable = bool(top.st_mode & (stat.S_IXGRP | stat.S_IXOTH))  # by others: each item must be sealed
        found: Set[str] = set()
        for directory, subdirs, names in os.walk(entry):
            for name in subdirs + names:
                if not _sealed(os.lstat(os.path.join(directory, name)), not enterable):
                    return False
            relative = os.path.relpath(directory, entry)
            found.update(name if relative == "." else "/".join(relative.split(os.sep) + [name]) for name in names)
        if found != set(files):
            return False
        for path, data in files.items():
            with open(os.path.join(entry, *path.split("/")), "rb") as f:
                if f.read(len(data) + 1) != data:
                    return False
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def _fill(directory: str, files: Dict[str, bytes]) -> None:
    for path, data in files.items():
        target = os.path.join(directory, *path.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)


def _cache_entry(entry: str, files: Dict[str, bytes], exact: bool) -> str:
    """The directory ``entry`` (named by the digest of ``files``: path ->
    bytes) holding ``files``: reused when it is there and complete, else
    written into a temporary directory renamed into place, so that a process
    never sees a partial entry and two processes writing the same entry both
    succeed (the second rename fails; its copy is removed, the first's is
    used: they are the same bytes). OSError when the cache cannot be used.
    ``exact``: see _complete."""
    if _complete(entry, files, exact):
        return entry
    root = os.path.dirname(entry)
    if os.path.lexists(entry):  # damaged: moved aside (atomically), then removed
        trash = tempfile.mkdtemp(prefix=".trash-", dir=root)
        try:
            os.rename(entry, os.path.join(trash, "entry"))
        except OSError:
            pass  # another process moved it first
        shutil.rmtree(trash, ignore_errors=True)
    temp = tempfile.mkdtemp(prefix=".tmp-", dir=root)
    try:
        _fill(temp, files)
        try:
            os.rename(temp, entry)
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not _complete(entry, files, exact):
                raise
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return entry


def _owner(path: str) -> Optional[str]:
    """"user NAME (uid N)" when ``path`` exists and another user owns it;
    None when it is this user's, absent or cannot be looked at."""
    try:
        uid = os.lstat(path).st_uid
    except OSError:
        return None
    if not hasattr(os, "getuid") or uid == os.getuid():  # Windows: no uids
        return None
    try:
        import pwd
        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _cache_error(e: OSError, root: str, entry: Optional[str], shown: str) -> Error:
    """What the OSError ``e`` of the cache directory ``root`` (or of its
    ``entry`` for this package) means for the user: what cannot be written
    or read, whose it is, and the way out. The class is the errno's
    (PermissionError for EACCES and EPERM; another user's entry in the way
    is EACCES)."""
    reason = e.strerror or str(e)
    way_out = ("pass genai_model() a cache_dir= that this user can write, or set ONNXZIP_CACHE_DIR (the cache "
               "is then $ONNXZIP_CACHE_DIR/genai)")
    owner = _owner(entry) if entry is not None else None
    if entry is not None and owner is not None:
        code = errno.EACCES if e.errno in (errno.EEXIST, errno.ENOTEMPTY) else e.errno or errno.EACCES
        return make("EIO", f"{shown}: the genai cache entry {entry} for this package was written by {owner}, and "
                    f"this user cannot use or replace it ({reason}): {way_out}", sys_errno=code, path=entry)
    where = "" if e.filename is None else os.fsdecode(e.filename)
    inside = where == root or where.startswith(root.rstrip(os.sep) + os.sep)
    at = "" if not where or inside else f": {where}"
    others = _owner(root)
    whose = f"; it belongs to {others}" if others else ""
    return make("EIO", f"{shown}: cannot write this package's plain files (genai_config.json, tokenizer files) "
                f"into the genai cache directory {root} ({reason}{at}{whose}): {way_out}", sys_errno=e.errno or 0,
                path=root)


def _plain_files(archive: Archive, prefix: str) -> Dict[str, bytes]:
    """The package's files under the genai folder ``prefix``, by their path
    in that folder; with trust=, those its signature covers (each checked),
    not model.sig and the like, which genai does not read."""
    return {p[len(prefix):]: bytes(archive.files[p]) for p in archive.files
            if p.startswith(prefix) and archive._covered(p)}


def _views(path: str, archive: Archive, shown: str, prefix: str, config: Dict[str, Any],
           trust: Optional[Trust]) -> Tuple[Dict[str, bytes], str]:
    """The view of every model genai_config.json names (by its name there)
    and the directory the views reference. A name that is a plain file of
    the package (not ONNX) is left to genai, which reads it from the cache
    entry."""
    views: Dict[str, bytes] = {}
    folder = os.path.dirname(os.path.realpath(path))
    named = list(_model_filenames(config.get("model"), "model"))
    if not named:
        raise make("EREF", f"{shown}: {prefix}{CONFIG} names no model (no model.decoder.filename)", path=shown)
    for where, name in named:
        member = posixpath.normpath(prefix + name)
        if member in archive.files:  # not ONNX (an .ort model): written with the folder's files
            continue
        if member not in archive.models:
            models = ", ".join(archive.models) or "none"
            raise make("EREF", f"{shown}: {prefix}{CONFIG}: {where} names '{name}', a model the package lacks "
                       f"(its models: {models})", path=shown)
        if name not in views:
            views[name], folder = _view_and_folder(archive.models[member], path, member, trust)
    return views, folder


def _relative(folder: str, entry: str, shown: str) -> str:
    try:
        return os.path.relpath(folder, entry)
    except ValueError:  # Windows: another drive
        raise make("EINVAL", f"{shown}: the archive and the cache directory {entry} are on different drives; "
                   "give a cache_dir on the archive's drive", path=shown) from None


def _import_genai() -> Any:
    try:
        import onnxruntime_genai
    except ImportError as e:
        raise ImportError("onnxzip.genai_model() needs onnxruntime-genai: pip install onnxruntime-genai") from e
    return onnxruntime_genai


def _load_config(archive: Archive, shown: str, config_path: str) -> Dict[str, Any]:
    try:
        config = json.loads(bytes(archive.files[config_path]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise make("EINVAL", f"{shown}: {config_path}: not JSON ({e})", path=shown) from None
    if not isinstance(config, dict) or not isinstance(config.get("model"), dict):
        raise make("EINVAL", f"{shown}: {config_path}: no \"model\" object", path=shown)
    return config


def genai_model(path: _args.PathArg, *, model: Optional[str] = None, cache_dir: Optional[_args.PathArg] = None,
                prepack: Optional[bool] = None, trust: Optional[Trust] = None) -> "onnxruntime_genai.Model":
    """An ``onnxruntime_genai.Model`` for the onnxruntime-genai folder packed
    in the archive at ``path`` (str, bytes or os.PathLike; a package, format
    1.2: ``onnxzip pack FOLDER -o PKG``), its weights mapped from the
    archive, never copied to disk.

    Every model that the folder's genai_config.json names (model.decoder,
    and model.embedding, model.vision, model.speech, model.encoder, pipeline
    stages... ``filename``) is given to genai as the archive's view
    (``og.Config.add_model_data``): no model or weights file is written. The
    folder's plain files (genai_config.json, tokenizer.json,
    tokenizer_config.json, processor configs...) are written once into a
    directory of ``cache_dir`` named by a digest of their contents, written
    whole then renamed into place: later calls reuse it without writing;
    processes calling at once all succeed. ``cache_dir`` defaults to
    :func:`onnxzip._genai.default_cache_dir` (``~/.cache/onnxzip/genai`` on
    Linux, or $XDG_CACHE_HOME/onnxzip/genai, or $ONNXZIP_CACHE_DIR/genai). The
    entry is read by genai_model() and by each ``og.Tokenizer(model)`` when it
    is made (the tokenizer files): delete it only when no Model from it will
    make another Tokenizer (genai then raises RuntimeError "Cannot find the
    directory of ..."); a Tokenizer already made keeps working. The genai_config.json written there differs from
    the packed one in the session option
    ``session.model_external_initializers_file_folder_path`` of each model
    (the archive's directory, relative to the cache entry), and in
    ``session.disable_prepacking`` when ``prepack`` is given.

    ``prepack``: None (default) leaves ONNX Runtime's prepacking as the
    config has it (on unless it says otherwise), so the outputs are the
    folder's: prepacked kernels copy the weights they pack into anonymous
    memory. False turns it off: the weights then stay in the archive's
    mapping (shared, evictable page cache), at the cost of the packed
    kernels: outputs can differ from the folder's (MatMulNBits, the int4
    MatMul of genai's models, computes otherwise unpacked). True turns it
    on.

    ``model`` chooses the genai folder of a package holding several (e.g.
    "cpu-int4", or a path in it such as "cpu-int4/model.onnx"); by default
    the package's only genai_config.json. The tokenizer is
    ``onnxruntime_genai.Tokenizer(model)`` as with a folder.

    ``trust`` (an :class:`onnxzip.Trust`): the package's signature is
    checked, then every model genai is given and every plain file written
    to the cache, before genai sees any of it; a cache entry is then used
    only if it holds exactly those bytes (not its sizes alone) and no other
    user can change it, else it is written again (or, another user's,
    refused as below). :class:`onnxzip.SignatureError` (a ValueError)
    naming the file when a file is not the signed one: no Model is made.

    Raises ImportError without onnxruntime_genai; onnxzip.NotFoundError (a
    FileNotFoundError) for a file with no genai_config.json (or none for
    ``model``); onnxzip.FormatError (a ValueError) when genai_config.json
    names a model the package lacks; onnxzip.InvalidArgumentError (a
    ValueError) for a genai_config.json that is not JSON, several of them
    and no ``model``; onnxzip.PermissionDeniedError (a PermissionError), or
    onnxzip.FileSystemError (an OSError: a read-only file system, a full
    disk), when the cache cannot be used (a read-only cache directory or
    HOME, another user's directory or entry), naming the package, the
    directory or entry (and whose it is) and the way out (``cache_dir=``,
    ``ONNXZIP_CACHE_DIR``); a complete entry in a read-only cache is used;
    what onnxzip.open() raises for the archive;
    onnxruntime_genai's errors (RuntimeError) for what genai refuses."""
    og = _import_genai()
    path = _args.path(path, "path")
    wanted = _args.model(model)
    if prepack is not None and not isinstance(prepack, bool):
        raise TypeError(f"prepack must be None or a bool, not {type(prepack).__name__}")
    trusted = _trust.argument(trust)
    root = default_cache_dir() if cache_dir is None else _args.path(cache_dir, "cache_dir")
    with _open(path, trust=trusted) as archive:
        shown = archive.path or path
        config_path = _config_path(archive, shown, wanted)
        prefix = posixpath.dirname(config_path) + "/" if "/" in config_path else ""
        config = _load_config(archive, shown, config_path)
        views, folder = _views(path, archive, shown, prefix, config, trusted)
        files = _plain_files(archive, prefix)
    entry = _entry_for(root, files, config, folder, prepack, shown, trusted is not None)
    og_config = og.Config(entry)
    for name, view in views.items():
        og_config.add_model_data(name, view)
    try:
        result: "onnxruntime_genai.Model" = og.Model(og_config)
    finally:
        for name in views:  # genai holds a pointer to each view, not a reference: used only while loading
            og_config.remove_model_data(name)
    return result


def _entry_for(root: str, files: Dict[str, bytes], config: Dict[str, Any], folder: str,
               prepack: Optional[bool], shown: str, exact: bool) -> str:
    """The cache entry of the folder's files with genai_config.json
    rewritten. Its external data folder is relative to the entry, whose
    name is the digest of the files: the digest is taken with the folder
    relative to ``root``'s entries (all at the same depth), so it is known
    before the entry's name. onnxzip.Error (a PermissionError, ...) saying
    what is wrong when the cache cannot be used."""
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as e:
        raise _cache_error(e, root, None, shown) from None
    real = os.path.realpath(root)  # genai may normalize ".." lexically: no links above the entry
    files[CONFIG] = _rewrite(config, _relative(folder, os.path.join(real, "x"), shown), prepack)
    entry = os.path.join(real, _digest(files))
    try:
        return _cache_entry(entry, files, exact)
    except OSError as e:
        raise _cache_error(e, real, entry, shown) from None


__all__: List[str] = ["genai_model", "default_cache_dir"]
