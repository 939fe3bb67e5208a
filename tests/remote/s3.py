"""s3 — a real S3 server on 127.0.0.1 for the s3:// tests
(tests/python/test_s3.py): versitygw v1.8.0 (tests/remote/versitygw.sh
builds it; meson passes its path as ONNXZIP_VERSITYGW), its posix backend in
a temporary directory, and a recording proxy in front of it.

  * VersityGW(binary, region=...): a context manager (start()/stop() too)
    with `endpoint` ("http://127.0.0.1:PORT"), the root account's `access`
    and `secret` (random per server), and client(), a boto3 S3 client
    (path-style, SigV4) signed with them or other credentials. An internal
    IAM directory is configured (--iam-dir): without one versitygw answers
    an unknown access key with its own XAdminUserNotFound, with one with S3's
    InvalidAccessKeyId.
  * RecordingProxy(upstream): forwards every request unchanged (its Host
    header too, so signatures made for the proxy's address still match) and
    records its method, path and headers: what a client sent, which versitygw
    does not log.

What versitygw v1.8.0 does (read from its source, github.com/versity/versitygw
v1.8.0, and seen here):
  * Session tokens: only for temporary credentials from its STS
    (AssumeRoleWithWebIdentity, which checks an OIDC identity provider's
    token against the provider's live JWKS), served by a separate standalone
    IAM service. The root account with any x-amz-security-token is refused
    with InvalidToken (400) — which shows that a token was sent.
  * Presigned URLs: query authentication is checked first; a request that
    also carries an Authorization header is still served (AWS S3 refuses it
    with InvalidArgument "Only one auth mechanism allowed"), so that a client
    adds none is checked at the RecordingProxy.
  * Anonymous requests: a bucket policy with Principal "*" allows them
    (s3:GetObject); elsewhere AccessDenied.
  * Wrong region in the credential scope: AuthorizationHeaderMalformed
    naming the region expected; a date more than 15 minutes off:
    RequestTimeTooSkewed.

Standard library only at import time; boto3 is imported by client().
"""
from __future__ import annotations

import http.client
import os
import secrets
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import HOST, Daemon, _free_port  # noqa: E402

__all__ = ["VersityGW", "RecordingProxy", "Sent", "versitygw_binary"]

_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


def versitygw_binary() -> str:
    """$ONNXZIP_VERSITYGW (set by tests/python/meson.build), or ''."""
    return os.environ.get("ONNXZIP_VERSITYGW", "")


class VersityGW(Daemon):
    """versitygw serving a temporary posix directory on a free port of
    127.0.0.1, root credentials random per instance."""

    def __init__(self, binary: str, region: str = "us-east-1", workdir: str | None = None,
                 virtual_domain: str | None = None) -> None:
        self.binary = binary
        self.region = region
        # Virtual-hosted addressing: BUCKET.virtual_domain names the bucket
        # ("localhost": curl resolves *.localhost to the loopback itself).
        self.virtual_domain = virtual_domain
        # Where its directory goes: tempfile's default may be a tmpfs, whose
        # extended attributes (versitygw keeps ETags there) older kernels lack.
        self.workdir = workdir
        self.access = "AKOZ" + secrets.token_hex(8).upper()
        self.secret = "ozsecret" + secrets.token_hex(16)
        self.endpoint = ""
        super().__init__()

    NAME = "versitygw"

    def log(self) -> str:
        """versitygw's output so far."""
        try:
            with open(os.path.join(self.prefix, "versitygw.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def start(self) -> VersityGW:
        """Starts the server; RuntimeError (with its output) when it exits or
        does not answer its health check within 15 s."""
        if not (self.binary and os.access(self.binary, os.X_OK)):
            raise RuntimeError(f"versitygw binary {self.binary!r} is not an executable "
                               "(tests/remote/versitygw.sh BUILDDIR/versitygw builds it)")
        prefix = tempfile.mkdtemp(prefix="oz-versitygw-", dir=self.workdir)
        for sub in ("data", "iam"):
            os.mkdir(os.path.join(prefix, sub), 0o700)
        self._start_in(prefix)
        return self

    def _try_start(self) -> bool:
        self.port = _free_port()
        self.endpoint = f"http://{HOST}:{self.port}"
        # The credentials go by environment, not on the command line (ps).
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ROOT_ACCESS_KEY_ID": self.access,
               "ROOT_SECRET_ACCESS_KEY": self.secret}
        args = [self.binary, "--port", f"{HOST}:{self.port}", "--region", self.region,
                "--iam-dir", os.path.join(self.prefix, "iam"), "--health", "/healthz", "--quiet"]
        if self.virtual_domain:
            args += ["--virtual-domain", self.virtual_domain]
        args += ["posix", os.path.join(self.prefix, "data")]
        self._spawn(args, os.path.join(self.prefix, "versitygw.log"), env)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

        def healthy() -> bool:
            with opener.open(self.endpoint + "/healthz", timeout=1) as r:
                return bool(r.status == 200)
        return self._wait_until(healthy, 15, 0.05)

    def client(self, *, endpoint: str | None = None, access: str | None = None, secret: str | None = None,
               token: str | None = None, region: str | None = None) -> Any:
        """A boto3 S3 client: path-style, SigV4, no retries, this server's
        root credentials unless others are given."""
        import boto3
        from botocore.config import Config
        return boto3.session.Session().client(
            "s3", endpoint_url=endpoint or self.endpoint, region_name=region or self.region,
            aws_access_key_id=access or self.access, aws_secret_access_key=secret or self.secret,
            aws_session_token=token,
            config=Config(signature_version="s3v4", s3={"addressing_style": "path"},
                          retries={"max_attempts": 1, "mode": "standard"}))


class Sent(NamedTuple):
    """One request the proxy forwarded."""
    method: str
    path: str                  # with its query
    headers: dict[str, str]    # names lower-cased
    status: int


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    server: _ProxyServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _relay(self) -> None:
        proxy = self.server.owner
        headers = {k.lower(): v for k, v in self.headers.items()}
        n = int(headers.get("content-length") or 0)
        body = self.rfile.read(n) if n else None
        conn = http.client.HTTPConnection(HOST, proxy.upstream_port, timeout=60)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for k, v in self.headers.items():
                if k.lower() not in _HOP:
                    conn.putheader(k, v)
            conn.endheaders(body)
            r = conn.getresponse()
            data = r.read()
            status, out = r.status, [(k, v) for k, v in r.getheaders()
                                     if k.lower() not in _HOP and k.lower() != "content-length"]
        finally:
            conn.close()
        proxy._record(Sent(self.command, self.path, headers, status))
        self.send_response(status)
        for k, v in out:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _relay


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: RecordingProxy) -> None:
        self.owner = owner
        super().__init__((HOST, 0), _ProxyHandler)


class RecordingProxy:
    """An HTTP proxy in front of `upstream` ("http://127.0.0.1:PORT") on a
    free port (`endpoint`), recording every request it forwards (sent())."""

    def __init__(self, upstream: str) -> None:
        self.upstream_port = int(upstream.rsplit(":", 1)[1])
        self.endpoint = ""
        self._records: list[Sent] = []
        self._lock = threading.Lock()
        self._server: _ProxyServer | None = None
        self._thread: threading.Thread | None = None

    def _record(self, sent: Sent) -> None:
        with self._lock:
            self._records.append(sent)

    def sent(self) -> list[Sent]:
        """The requests forwarded so far, oldest first."""
        with self._lock:
            return list(self._records)

    def reset(self) -> None:
        with self._lock:
            self._records.clear()

    def start(self) -> RecordingProxy:
        self._server = _ProxyServer(self)
        self.endpoint = f"http://{HOST}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="RecordingProxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(2)
        self._server = self._thread = None

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
