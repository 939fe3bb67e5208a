"""onnxzip.open_url() and onnxzip.fetch(): archives on an HTTP(S) server that
answers byte-range requests (object stores through presigned URLs, model
hubs, CDNs, nginx) or in S3 (``s3://BUCKET/KEY``, AWS or an S3-compatible
server), read without downloading them (the C library's
``onnxzip_open_url``, spec section 17)::

    with onnxzip.open_url("https://example.com/model.onnxzip") as a:
        print([t.key for t in a.tensor_infos])    # no weight byte fetched yet
        w = a.tensors["weight"]                   # one range request
    onnxzip.fetch("https://example.com/model.onnxzip", "model.onnxzip")
    onnxzip.fetch("s3://my-bucket/models/model.onnxzip", "model.onnxzip")

``s3://`` requests are signed (AWS Signature Version 4) with the
credentials AWS's tools find: ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY`` and ``AWS_SESSION_TOKEN``, else the profile's
(``profile=``, else ``AWS_PROFILE``, else ``default``) in
``~/.aws/credentials`` and ``~/.aws/config``; the region and endpoint too
(``region=``, ``AWS_REGION``...; ``endpoint_url=``,
``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL``, the profile's
``endpoint_url``); spec section 17.6. Credential processes, SSO and
instance roles are not read: ``eval "$(aws configure export-credentials
--format env)"`` exports them. Public buckets: ``no_sign_request=True``.

Opening fetches the file's end only (the central directory and the model:
one or two requests). Each tensor read is then one range request of about
the tensor's size (large ones split into ranges fetched in parallel); the
array is a read-only copy in memory, fetched again at every access, so keep
the array rather than index ``tensors`` twice. The file the first reply
described (its ETag or Last-Modified) is pinned: a file replaced on the
server meanwhile fails the next read with status ECHANGED.

Messages and :attr:`RemoteArchive.url` name the URL without its query string,
fragment or user:password (presigned signatures, tokens), an s3:// URL as
given; no secret key or session token is ever shown (an S3 error names the
key id by its first and last four characters); the ``token`` of
:func:`open_url` (by default the Hugging Face token, for the Hub's URLs) goes
to the URL's own host only and is never shown. Failures raise the
package's classes: NetworkError (a ConnectionError: ENETWORK, EHTTP, e.g. a
404), NetworkTimeoutError (a TimeoutError: ETIMEOUT), FormatError (a
ValueError: ENORANGE for a server that ignores ranges, EREPLY, ECHANGED,
ENOTZIP, ...), InvalidArgumentError (EINVAL: e.g. an http:// URL without
``allow_http=True``). Every transfer runs with the GIL released.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterable, List, Literal, Optional, Tuple, Union

from . import _args, _native, _trust
from ._archive import Archive
from ._errors import make

# Called as progress(done, total) with bytes so far and in all.
Progress = Callable[[int, int], object]

# open_url()'s token: None (the Hugging Face token, for the Hub's URLs),
# a str (that token), False (none).
Token = Union[None, str, Literal[False]]

# open_url()'s addressing: the C library's ONNXZIP_S3_AUTO, _PATH, _VIRTUAL
Addressing = Literal["auto", "path", "virtual"]
_ADDRESSING = {"auto": 0, "path": 1, "virtual": 2}
_CHUNK_MIN = 64 << 10
_CHUNK_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}

# open_url()'s defaults are onnxzip_remote_options_init()'s
# (include/onnxzip/onnxzip.h); its limits, the CLI's (tools/cli_remote.c)
_MAX_SECONDS = 86400.0
_U32_MAX = (1 << 32) - 1


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
        if self._verifier is not None and patterns is not None:
            raise ValueError("fetch(): tensors= of an archive opened with trust= is refused: a shard holds part of "
                             "the signed files, which cannot be checked against the signature")
        if self._verifier is not None:
            _fetch_verified(self._handle(), out, progress, self._verifier.trust)
        else:
            _native.fetch(self._handle(), out, patterns, progress)


def _fetch_model_verified(handle: _native.Handle, model: str, out: str, progress: Optional[Progress],
                          trust: _trust.Trust) -> None:
    """The package's model ``model`` downloaded once as a single-model
    archive beside ``out``, its files checked against the signature there
    (the package's plan of them over the fetched bytes), then renamed."""
    verifier = _trust.Verifier(trust, handle)
    temp = out + ".unverified"
    try:
        _native.fetch(handle, temp, ["*"], progress)
        verifier.check_fetched(handle, model, temp)
        os.replace(temp, out)
    finally:
        if os.path.lexists(temp):
            os.remove(temp)


def _fetch_verified(handle: _native.Handle, out: str, progress: Optional[Progress], trust: _trust.Trust) -> None:
    """The whole file downloaded beside ``out`` (``out + ".unverified"``,
    resumed as fetch() resumes), every file of it checked against the
    signature there, then renamed to ``out``: nothing at ``out`` unless it
    is all the signed bytes. The signature and the file names are checked
    before the download (a package signed by another key costs no
    transfer)."""
    _trust.Verifier(trust, handle)
    temp = out + ".unverified"
    try:
        _native.fetch(handle, temp, None, progress)
        local = _native.open(temp, 0, None)
        _trust.Verifier(trust, local).check(local, None)
        del local
        os.replace(temp, out)
    finally:
        if os.path.lexists(temp):
            os.remove(temp)


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


def _chunk_size(value: Union[None, _args.IntArg, str]) -> int:
    """open_url()'s ``chunk_size``: bytes, an int or a str with an optional
    K, M or G (1024-based; the CLI's --chunk-size); 0 for the default."""
    if value is None:
        return 0
    if isinstance(value, str):
        text = value.strip()
        unit = text[-1:].lower() if text[-1:].lower() in ("k", "m", "g") else ""
        digits = text[:len(text) - len(unit)]
        if not digits.isascii() or not digits.isdigit():
            raise make("EINVAL", f"chunk_size must be bytes, optionally with K, M or G (e.g. '8M'), not {value!r}")
        n = int(digits) * _CHUNK_UNITS[unit]
    else:
        n = _args.byte_count(value, "chunk_size")
    if n < _CHUNK_MIN:
        raise make("EINVAL", f"chunk_size must be at least 64 KiB ({_CHUNK_MIN} bytes), not {value!r}")
    if n >= 1 << 64:
        raise make("EINVAL", f"chunk_size must be < 2**64, not {value!r}")
    return n


def _text(value: Optional[str], name: str) -> Optional[str]:
    """An optional str option (profile, region, endpoint_url): not empty,
    no NUL."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")
    if not value or "\0" in value:
        raise make("EINVAL", f"{name} must be a non-empty str without NUL characters, not {value!r}")
    return value


def _connections(connections: Optional[_args.IntArg], parallel: Optional[_args.IntArg]) -> int:
    """``connections``, or its old name ``parallel``, not both."""
    if parallel is not None and connections is not None:
        raise TypeError("give connections or parallel (its old name), not both")
    if parallel is not None:
        return _args.bounded(parallel, "parallel", 1, 64)
    return _args.bounded(16 if connections is None else connections, "connections", 1, 64)


def open_url(url: str, *, token: Token = None, allow_http: bool = False, timeout: float = 30.0,
             connect_timeout: float = 10.0, low_speed_limit: _args.IntArg = 1024, low_speed_time: float = 30.0,
             request_timeout: float = 300.0, retries: _args.IntArg = 4, max_redirects: _args.IntArg = 5,
             connections: Optional[_args.IntArg] = None, chunk_size: Union[None, _args.IntArg, str] = None,
             ca_file: Optional[_args.PathArg] = None, no_sign_request: bool = False, profile: Optional[str] = None,
             region: Optional[str] = None, endpoint_url: Optional[str] = None, addressing: Addressing = "auto",
             parallel: Optional[_args.IntArg] = None, model: Optional[str] = None,
             trust: Optional[_trust.Trust] = None) -> RemoteArchive:
    """Opens the archive at ``url`` (``https://``; ``http://`` too with
    ``allow_http=True``; ``s3://BUCKET/KEY``) over HTTP range requests,
    without downloading it: see the module's documentation
    (``help(onnxzip._remote)``).

    ``timeout``: a transfer that receives no byte for this many seconds,
    or not all of a reply's headers within them, fails
    (NetworkTimeoutError); ``connect_timeout``: per connection
    attempt; ``low_speed_limit`` (bytes per second, 1 .. 2**32 - 1) and
    ``low_speed_time`` (seconds): a transfer that receives fewer than
    low_speed_limit x low_speed_time bytes in a window of low_speed_time
    fails (NetworkTimeoutError), so that a reply trickling a byte now and
    then does not hold the call; ``request_timeout``: the seconds one
    request may take for each 8 MiB it asks (a tensor's piece, a chunk of
    fetch(); verify()'s stream of the whole file gets as many periods as
    it has 8 MiB). ``retries``: further attempts of a request after a 5xx,
    408, 429, reset, timeout (any of the four above) or short body (0 ..
    100; with backoff from 0.25 s, doubled each time; a retry resumes at
    the first byte missing). ``max_redirects``: redirects followed (0 .. 50).
    ``connections``: ranged requests in flight at once (1 .. 64; default
    16; ``parallel`` is its old name: give one of them). ``chunk_size``:
    large reads and fetch() are cut into requests of at most this many
    bytes (an int, or a str such as ``"8M"``: K, M, G are 1024-based; at
    least 64 KiB; None: the library's default, 8 MiB, and for fetch() the
    file's size / (2 x connections) within 2 .. 8 MiB). ``token``: sent as
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

    For ``s3://`` URLs (spec 17.6): ``no_sign_request=True`` sends requests
    unsigned (public buckets; no credentials are looked for);
    ``profile``: the profile to read in the AWS files (default
    ``AWS_PROFILE``, else ``default``; a profile given here wins over
    credentials in the environment, as with the AWS CLI's ``--profile``);
    ``region``: the region to sign for (default ``AWS_REGION``,
    ``AWS_DEFAULT_REGION``, the profile's ``region``, else us-east-1);
    ``endpoint_url``: an S3-compatible server (default
    ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL``, the profile's
    ``endpoint_url``, else AWS; ``http://`` needs ``allow_http=True``);
    ``addressing``: ``"path"`` (``ENDPOINT/BUCKET/KEY``), ``"virtual"``
    (``BUCKET.HOST/KEY``) or ``"auto"``: virtual on AWS, path for other
    endpoints. Without credentials open_url() raises InvalidArgumentError
    saying where it looked; S3's refusals raise NetworkError quoting S3's
    error code and message (``NoSuchKey``, ``SignatureDoesNotMatch``,
    ``AuthorizationHeaderMalformed`` with the region S3 expects).

    A package (format 1.2) opens as its default model, or as the model
    whose path ``model`` names (as :func:`onnxzip.open`): only the end of
    the file (directory, manifest) and that model's entry are transferred,
    then its tensors when asked for. :attr:`Archive.models` opens its other
    models the same way (each a new RemoteArchive with the same options),
    :attr:`Archive.files` fetches a file's bytes at each access.

    ``trust`` (an :class:`onnxzip.Trust`): as :func:`onnxzip.open`, the
    signature (the package's model.sig, fetched, or the Trust's detached
    one) and the files' names are checked, then the model's bytes are
    fetched and hashed before open_url() returns (only that model's; a
    single-model archive: the whole file); each file and model handed out
    later is checked first. :meth:`RemoteArchive.fetch` of the whole file
    checks every file before the download is renamed into place.
    :class:`onnxzip.SignatureError` (a ValueError) naming the file.

    Returns a :class:`RemoteArchive`; use it as a context manager.
    """
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, not {type(url).__name__}")
    wanted = _args.model(model)
    trusted = _trust.argument(trust)
    if not isinstance(allow_http, bool):
        raise TypeError(f"allow_http must be a bool, not {type(allow_http).__name__}")
    stall_ms = _args.milliseconds(timeout, "timeout", _MAX_SECONDS)
    connect_ms = _args.milliseconds(connect_timeout, "connect_timeout", _MAX_SECONDS)
    pace = (_args.bounded(low_speed_limit, "low_speed_limit", 1, _U32_MAX),
            _args.milliseconds(low_speed_time, "low_speed_time", _MAX_SECONDS),
            _args.milliseconds(request_timeout, "request_timeout", _MAX_SECONDS))
    n_retries = _args.bounded(retries, "retries", 0, 100)
    redirects = _args.bounded(max_redirects, "max_redirects", 0, 50)
    n_parallel = _connections(connections, parallel)
    chunk = _chunk_size(chunk_size)
    ca = None if ca_file is None else _args.path(ca_file, "ca_file")
    if "\0" in url:
        raise make("EINVAL", "url must not contain NUL characters")
    bearer = _token(token)
    if not isinstance(no_sign_request, bool):
        raise TypeError(f"no_sign_request must be a bool, not {type(no_sign_request).__name__}")
    s3 = (_text(profile, "profile"), _text(region, "region"), _text(endpoint_url, "endpoint_url"),
          _ADDRESSING[_args.choice(addressing, "addressing", _ADDRESSING)])

    def by_url(member: Optional[str]) -> _native.Handle:
        return _native.open_url(url, allow_http, ca, connect_ms, stall_ms, n_retries, redirects, n_parallel, bearer,
                                no_sign_request, *s3, chunk, *pace, member)
    handle = by_url(wanted)
    return RemoteArchive(handle, handle.path(), by_url, _trust.verify(trusted, handle))


def fetch(url: str, path: _args.PathArg, *, tensors: Union[None, str, Iterable[str]] = None,
          progress: Optional[Progress] = None, token: Token = None, allow_http: bool = False,
          timeout: float = 30.0, connect_timeout: float = 10.0, low_speed_limit: _args.IntArg = 1024,
          low_speed_time: float = 30.0, request_timeout: float = 300.0, retries: _args.IntArg = 4,
          max_redirects: _args.IntArg = 5, connections: Optional[_args.IntArg] = None,
          chunk_size: Union[None, _args.IntArg, str] = None,
          ca_file: Optional[_args.PathArg] = None, no_sign_request: bool = False, profile: Optional[str] = None,
          region: Optional[str] = None, endpoint_url: Optional[str] = None, addressing: Addressing = "auto",
          parallel: Optional[_args.IntArg] = None, model: Optional[str] = None,
          trust: Optional[_trust.Trust] = None) -> None:
    """Downloads the archive at ``url`` to ``path``, as ``onnxzip fetch``
    does (the network options are :func:`open_url`'s).

    With ``model`` (a package's model path, as ``onnxzip fetch --model``):
    ``path`` is that model alone as a single-model archive, every tensor
    of it (or those ``tensors`` selects); only its model entry, its tensor
    entries, the directory and the manifest are transferred.

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
    Any failure (S3's refusals too) leaves no ``path``.

    ``trust`` (an :class:`onnxzip.Trust`): nothing is written at ``path``
    unless what it would hold is the signed bytes (else
    :class:`onnxzip.SignatureError` naming the file). The signature and the
    package's file names are checked first (a package signed by another key
    costs no transfer), then each byte crosses the network once and is
    checked where it was written (spec 20.5), in ``path + ".unverified"``,
    renamed to ``path`` only when every file matches: with ``model``, that
    model's files (its model file and data files as unpack writes them,
    ``onnxzip_signed_check_fetched``); the whole file, every file of it.
    ``tensors`` with ``trust`` is a ValueError: a shard holds part of the
    signed files, which cannot be checked.
    """
    _fetch_args(path, tensors, progress)  # before any request
    trusted = _trust.argument(trust)
    if trusted is not None and tensors is not None:
        raise ValueError("fetch(): tensors= with trust= is refused: a shard holds part of the signed files, which "
                         "cannot be checked against the signature; fetch(model=..., trust=...) and select from it")
    with open_url(url, token=token, allow_http=allow_http, timeout=timeout, connect_timeout=connect_timeout,
                  low_speed_limit=low_speed_limit, low_speed_time=low_speed_time, request_timeout=request_timeout,
                  retries=retries, max_redirects=max_redirects, connections=connections, chunk_size=chunk_size,
                  ca_file=ca_file, no_sign_request=no_sign_request, profile=profile, region=region,
                  endpoint_url=endpoint_url, addressing=addressing, parallel=parallel, model=model,
                  trust=None) as a:  # checked below, on the bytes fetched: each crosses the network once
        if trusted is None:
            a.fetch(path, tensors="*" if model is not None and tensors is None else tensors, progress=progress)
        elif model is None:
            _fetch_verified(a._handle(), _args.path(path, "path"), progress, trusted)
        else:
            _fetch_model_verified(a._handle(), model, _args.path(path, "path"), progress, trusted)
