"""onnxzip.open_url() and onnxzip.fetch(): archives on an HTTP(S) server that
answers byte-range requests (object stores through presigned URLs, model
hubs, CDNs, nginx), read without downloading them (the C library's
``onnxzip_open_url``, spec section 17)::

    with onnxzip.open_url("https://example.com/model.onnxzip") as a:
        print([t.key for t in a.tensor_infos])    # no weight byte fetched yet
        w = a.tensors["weight"]                   # one range request
    onnxzip.fetch("https://example.com/model.onnxzip", "model.onnxzip")

Opening fetches the file's end only (the central directory and the model:
one or two requests). Each tensor read is then one range request of about
the tensor's size (large ones split into ranges fetched in parallel); the
array is a read-only copy in memory, fetched again at every access, so keep
the array rather than index ``tensors`` twice. The file the first reply
described (its ETag or Last-Modified) is pinned: a file replaced on the
server meanwhile fails the next read with status ECHANGED.

Messages and :attr:`RemoteArchive.url` name the URL without its query string,
fragment or user:password (presigned signatures, tokens); the ``token`` of
:func:`open_url` (by default the Hugging Face token, for the Hub's URLs) goes
to the URL's own host only and is never shown. Failures raise the
package's classes: NetworkError (a ConnectionError: ENETWORK, EHTTP, e.g. a
404), NetworkTimeoutError (a TimeoutError: ETIMEOUT), FormatError (a
ValueError: ENORANGE for a server that ignores ranges, EREPLY, ECHANGED,
ENOTZIP, ...), InvalidArgumentError (EINVAL: e.g. an http:// URL without
``allow_http=True``). Every transfer runs with the GIL released.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, List, Literal, Optional, Tuple, Union

from . import _args, _native
from ._archive import Archive
from ._errors import make

# Called as progress(done, total) with bytes so far and in all.
Progress = Callable[[int, int], object]

# open_url()'s token: None (the Hugging Face token, for the Hub's URLs),
# a str (that token), False (none).
Token = Union[None, str, Literal[False]]

# open_url()'s defaults are onnxzip_remote_options_init()'s
# (include/onnxzip/onnxzip.h); its limits, the CLI's (tools/cli_remote.c)
_MAX_SECONDS = 86400.0


@dataclass(frozen=True)
class RemoteStats:
    """Traffic of a :class:`RemoteArchive` so far (``onnxzip_remote_stats``):
    HTTP requests sent (retries included), of which retries, body bytes
    received, the remote file's size, and redirects followed (each one more
    request: one per open behind the Hugging Face Hub's resolve URLs, spec
    17.4.1)."""

    requests: int
    retries: int
    bytes_received: int
    file_size: int
    redirects: int


class RemoteArchive(Archive):
    """An archive on an HTTP(S) server, opened by :func:`open_url`: an
    :class:`Archive` whose tensor_infos, info(), entries, model_bytes,
    model() and check() are those of the local file, and whose tensors are
    fetched when asked for:

    - :meth:`array` and :attr:`tensors` fetch the tensor (one range request)
      into a new read-only array each time; ``model(load_data=True)`` fetches
      every external tensor; :meth:`extract` fetches, then writes.
    - :meth:`verify` streams the whole file once, checking every entry.
    - :meth:`view`, :meth:`write_view` and ``torch(writable=True)``'s
      copy-on-write mappings need a local file: :meth:`fetch` it first
      (``writable_array`` and ``writable=True`` give copies here).
    """

    def __enter__(self) -> "RemoteArchive":
        return self

    @property
    def url(self) -> str:
        """The URL without its query string, fragment and user:password (as
        messages name it)."""
        return self._handle().path()

    @property
    def _file(self) -> Optional[str]:
        return None  # nothing mapped: no local file to map copy-on-write

    @property
    def stats(self) -> RemoteStats:
        """The requests and bytes this archive has cost so far."""
        return RemoteStats(*_native.remote_stats(self._handle()))

    def fetch(self, path: _args.PathArg, *, tensors: Union[None, str, Iterable[str]] = None,
              progress: Optional[Progress] = None) -> None:
        """Downloads the archive to ``path``; see :func:`onnxzip.fetch`."""
        out, patterns = _fetch_args(path, tensors, progress)
        _native.fetch(self._handle(), out, patterns, progress)


def _fetch_args(path: _args.PathArg, tensors: Union[None, str, Iterable[str]],
                progress: Optional[Progress]) -> Tuple[str, Optional[List[str]]]:
    """fetch()'s path and patterns, checked."""
    out = _args.path(path, "path")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable or None, not {type(progress).__name__}")
    if tensors is None:
        return out, None
    items = [tensors] if isinstance(tensors, str) else tensors
    try:
        patterns = list(items)
    except TypeError:
        raise TypeError(f"tensors must be a str or an iterable of str, not {type(tensors).__name__}") from None
    for p in patterns:
        if not isinstance(p, str):
            raise TypeError(f"tensors must hold str patterns, not {type(p).__name__}")
    if not patterns:
        raise make("EINVAL", "tensors must hold at least one pattern (None: the whole archive)")
    return out, patterns


def _token(token: Token) -> Optional[str]:
    """The C library's bearer_token for open_url()'s ``token``."""
    if token is None or token is False:
        return None if token is None else ""
    if not isinstance(token, str):
        raise TypeError(f"token must be a str, None or False, not {type(token).__name__}")
    if not token:
        raise make("EINVAL", "token must not be empty (False: send none)")
    if any(c in token for c in "\r\n\0"):  # the token itself is never shown
        raise make("EINVAL", "token must not contain CR, LF or NUL characters")
    return token


def open_url(url: str, *, token: Token = None, allow_http: bool = False, timeout: float = 30.0,
             connect_timeout: float = 10.0, retries: int = 4, max_redirects: int = 5, parallel: int = 4,
             ca_file: Optional[_args.PathArg] = None) -> RemoteArchive:
    """Opens the archive at ``url`` (``https://``; ``http://`` too with
    ``allow_http=True``) over HTTP range requests, without downloading it:
    see the module's documentation (``help(onnxzip._remote)``).

    ``timeout``: a transfer that receives no byte for this many seconds
    fails (NetworkTimeoutError); ``connect_timeout``: per connection
    attempt. ``retries``: further attempts of a request after a 5xx, 408,
    429, reset, timeout or short body (0 .. 100; with backoff from 0.25 s,
    doubled each time). ``max_redirects``: redirects followed (0 .. 50).
    ``parallel``: ranges in flight at once (1 .. 64). ``token``: sent as
    ``Authorization: Bearer TOKEN`` to the URL's own origin (scheme, host,
    port) only, never to where it redirects (the Hub's signed CDN URLs);
    None (default): the Hugging Face token as huggingface_hub finds it
    (``HF_TOKEN``, else ``HF_TOKEN_PATH`` or ``$HF_HOME/token``, which
    ``hf auth login`` writes; none if ``HF_HUB_DISABLE_IMPLICIT_TOKEN``),
    for huggingface.co, hf.co and ``HF_ENDPOINT`` URLs only; False: none.
    A 401 or 403 raises NetworkError saying whether a token was sent and
    what the Hub answered (GatedRepo, RepoNotFound). ``ca_file``: a PEM
    bundle to trust instead of the system's certificates. The defaults are
    the C library's (``onnxzip_remote_options_init``). Servers must send a
    strong ETag or Last-Modified, so that a replaced file is detected.

    Returns a :class:`RemoteArchive`; use it as a context manager.
    """
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, not {type(url).__name__}")
    if not isinstance(allow_http, bool):
        raise TypeError(f"allow_http must be a bool, not {type(allow_http).__name__}")
    stall_ms = _args.milliseconds(timeout, "timeout", _MAX_SECONDS)
    connect_ms = _args.milliseconds(connect_timeout, "connect_timeout", _MAX_SECONDS)
    n_retries = _args.bounded(retries, "retries", 0, 100)
    redirects = _args.bounded(max_redirects, "max_redirects", 0, 50)
    n_parallel = _args.bounded(parallel, "parallel", 1, 64)
    ca = None if ca_file is None else _args.path(ca_file, "ca_file")
    if "\0" in url:
        raise make("EINVAL", "url must not contain NUL characters")
    bearer = _token(token)
    handle = _native.open_url(url, allow_http, ca, connect_ms, stall_ms, n_retries, redirects, n_parallel, bearer)
    return RemoteArchive(handle, handle.path())


def fetch(url: str, path: _args.PathArg, *, tensors: Union[None, str, Iterable[str]] = None,
          progress: Optional[Progress] = None, token: Token = None, allow_http: bool = False,
          timeout: float = 30.0, connect_timeout: float = 10.0, retries: int = 4, max_redirects: int = 5,
          parallel: int = 4, ca_file: Optional[_args.PathArg] = None) -> None:
    """Downloads the archive at ``url`` to ``path``, as ``onnxzip fetch``
    does (the network options are :func:`open_url`'s).

    Without ``tensors``: the file byte for byte, every local header and
    every entry's CRC-32 and XXH3 checked as the bytes arrive, into
    ``path + ".part"`` (and ``".part.etag"``), renamed to ``path`` once
    complete. A download interrupted by the network leaves the .part files
    and the next fetch() to the same ``path`` resumes it while the server
    has the same file (``onnxzip_fetch``).

    With ``tensors`` (a shell pattern, ``*``, ``?``, ``[a-z]``, or a list
    of them): ``path`` is a new archive holding only the main graph's
    initializers whose names match, the others declared as graph inputs;
    only their entries are transferred (``onnxzip_fetch_tensors``).
    NameNotFoundError when no initializer matches.

    ``progress(done, total)`` is called in the calling thread with bytes so
    far and in all, at most about once per MiB and at the end. An exception
    it raises ends the download and propagates, leaving no file behind (no
    .part either); so does Ctrl-C (KeyboardInterrupt) in the main thread.
    """
    _fetch_args(path, tensors, progress)  # before any request
    with open_url(url, token=token, allow_http=allow_http, timeout=timeout, connect_timeout=connect_timeout,
                  retries=retries, max_redirects=max_redirects, parallel=parallel, ca_file=ca_file) as a:
        a.fetch(path, tensors=tensors, progress=progress)
