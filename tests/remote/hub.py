#!/usr/bin/python3
"""hub — the Hugging Face Hub's way of serving large files, on 127.0.0.1, for
testing clients that follow it (the range-request client's redirects, the
CLI, onnxzip.open_url()). Standard library only.

  * HubRedirector(docroot, origin): resolve URLs
    /ORG/REPO/resolve/REV/FILE answered with 302 to a signed CDN URL on
    another port, whose server checks the signature and relays to `origin`
    (e.g. nginx's /files, servers.Nginx).

A context manager with a `base_url` ("http://127.0.0.1:PORT").
Run as a script for a self-test (needs nginx and curl).
"""
from __future__ import annotations

import hashlib
import hmac
import http.client
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import _CHUNK, HOST, Nginx, _curl, _free_port, _get  # noqa: E402
from servers_selftest import selftest  # noqa: E402

__all__ = ["HubRedirector"]


class _HubRecord(NamedTuple):
    """One request HubRedirector's hub or CDN answered (status 0: nothing
    sent yet)."""
    server: str                 # "hub" or "cdn"
    path: str                   # without the query
    query: str
    range: str | None
    if_match: str | None
    authorization: str | None
    status: int
    sent: int                   # body bytes sent
    method: str                 # GET or HEAD


class _HubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    server: _HubServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def _serve(self) -> None:
        owner, split = self.server.owner, urllib.parse.urlsplit(self.path)
        rec = [self.server.role, urllib.parse.unquote(split.path), split.query, self.headers.get("Range"),
               self.headers.get("If-Match"), self.headers.get("Authorization"), 0, 0, self.command]
        owner._record(rec)
        if self.server.role == "hub":
            self._redirect(owner, rec)
        else:
            self._cdn(owner, rec, urllib.parse.parse_qs(split.query))

    def _send(self, rec: list, status: int, headers: dict[str, str], body: bytes) -> None:
        rec[6] = status
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
            rec[7] = len(body)

    def _redirect(self, owner: HubRedirector, rec: list) -> None:
        m = re.fullmatch(r"/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)", rec[1])
        refusal = owner._refusal(m[1], m[2], rec[5]) if m else None
        if refusal:
            status, headers = refusal
            return self._send(rec, status, headers, headers.get("X-Error-Message", "").encode())
        file = owner._file(m[4]) if m else None
        if m is None or file is None:
            return self._send(rec, 404, {"X-Error-Code": "EntryNotFound"}, b"Entry not found")
        org, name = m[1], m[4]
        size = os.path.getsize(file)
        headers = {"Location": owner._signed(org, name), "X-Repo-Commit": "0" * 40,
                   "X-Linked-Size": str(size + (org == "wrongsize")),
                   "X-Linked-Etag": f'"{owner._sha256(file)}"', "Accept-Ranges": "bytes"}
        if org != "noetag":  # strong, and not the file's: pinning it would fail If-Match at the CDN
            headers["ETag"] = f'"hub-{size:x}"'
        self._send(rec, 302, headers, f"Found. Redirecting to {headers['Location']}".encode())

    def _cdn(self, owner: HubRedirector, rec: list, query: dict[str, list[str]]) -> None:
        org, _, name = rec[1].lstrip("/").partition("/")
        if rec[5] is not None:  # S3's answer to a presigned URL sent with an Authorization header too
            return self._send(rec, 400, {"Content-Type": "application/xml"},
                              b"<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed"
                              b"</Message></Error>")
        fields = {"Expires": "0", **{k: v[0] for k, v in query.items() if k in ("Expires", "X-Amz-Date")}}
        expires, signature = fields["Expires"], query.get("X-Amz-Signature", [""])[0]
        good = hmac.compare_digest(signature, owner._signature(rec[1], owner._signed_part(fields)))
        if org == "forbidden" or not good or not expires.isdigit() or int(expires) < time.time() \
                or not owner._honoured(org, rec[1], signature):
            why = "Request has expired" if good else "Access Denied"
            return self._send(rec, 403, {"Content-Type": "application/xml"},
                              f"<Error><Code>AccessDenied</Code><Message>{why}</Message></Error>".encode())
        self._relay(owner, rec, name)

    def _relay(self, owner: HubRedirector, rec: list, name: str) -> None:
        """The origin's reply to the same request, relayed."""
        split = urllib.parse.urlsplit(owner.origin)
        conn = http.client.HTTPConnection(split.hostname, split.port, timeout=60)
        try:
            headers = {k: v for k in ("Range", "If-Match", "If-Unmodified-Since", "If-Range")
                       if (v := self.headers.get(k)) is not None}
            conn.request(self.command, f"{split.path}/{urllib.parse.quote(name)}", headers=headers)
            r = conn.getresponse()
            rec[6] = r.status
            self.send_response(r.status)
            for key in ("Content-Type", "Content-Range", "Content-Length", "ETag", "Last-Modified", "Accept-Ranges"):
                if r.getheader(key) is not None:
                    self.send_header(key, r.getheader(key))
            self.end_headers()
            while self.command != "HEAD" and (chunk := r.read(_CHUNK)):
                self.wfile.write(chunk)
                rec[7] += len(chunk)
        finally:
            conn.close()


class _HubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: HubRedirector, role: str) -> None:
        self.owner, self.role = owner, role
        super().__init__((HOST, 0), _HubHandler)

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # resets, broken pipes, stop()
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class HubRedirector:
    """The Hugging Face Hub's way of serving large files, on two ports of
    127.0.0.1 (a context manager; start() and stop() also work):

      * the hub (base_url) answers GET and HEAD of
        /ORG/REPO/resolve/REV/FILE (FILE in `docroot`) with 302 to the CDN,
        at cdn_url/ORG/FILE?X-Amz-Expires=..&Expires=T&X-Amz-Signature=S,
        signed for `ttl` seconds, with X-Linked-Size (the file's size),
        X-Linked-Etag (its sha256, as the Hub's LFS oid: not the CDN's
        ETag), X-Repo-Commit and an ETag of its own, strong and unrelated
        to the file (a client pinning it fails If-Match at the CDN). Range
        and conditions are ignored there (RFC 9110 13.2.1: the redirect
        takes precedence); a missing FILE is 404.
      * the CDN (cdn_url) refuses a wrong or expired signature with 403 (as
        S3 and CloudFront), else relays the request (Range, If-Match,
        If-Unmodified-Since, If-Range) to `origin`/FILE, e.g. nginx's
        .../files, and its reply (status, Content-Range, Content-Length,
        ETag, Last-Modified, Accept-Ranges, body).

    ORG picks a behaviour:
      expiring    signatures valid for SHORT seconds (others: `ttl`)
      wrongsize   X-Linked-Size one more than the file's
      noetag      no ETag on the 302
      forbidden   the CDN refuses every request with 403
      deadcdn     the 302 leads to a port where nothing listens
      private     a private repository: without `Authorization: Bearer
                  <token>` 401 with X-Error-Code RepoNotFound, with another
                  token 401 "Invalid credentials in Authorization header"
      gated       a gated repository: without a token 401 with X-Error-Code
                  GatedRepo ("... Please log in."), with another token 403
                  GatedRepo ("... not in the authorized list ...")
      newest      the CDN honours only the newest signature of a file (an
                  older one: 403 "Request has expired", counted in
                  `superseded`): clients resolving it in parallel fail
      rotating    as newest, and each signature is honoured for USES requests,
                  then expires (403 "Request has expired"): as a signature
                  expiring in time, by a count (the tests' timing aside)
    (the Hub's replies, as huggingface_hub 2.4's hf_raise_for_status reads
    them). The CDN refuses any request carrying an Authorization header
    with 400, as S3 refuses a presigned URL that also carries one.

    This is what huggingface_hub's hf_hub_download (2.4) needs with
    HF_ENDPOINT=base_url: its HEAD of the resolve URL stops at a redirect to
    another origin (the CDN's port) and takes X-Repo-Commit (the snapshot's
    name), X-Linked-Etag (the blob's name), X-Linked-Size and Location from
    it; with no X-Xet-Hash the download is one plain GET of Location.

    requests() lists what both answered (_HubRecord)."""

    SHORT = 2
    USES = 40

    def __init__(self, docroot: str, origin: str, ttl: int = 3600) -> None:
        self.token = "hf_" + os.urandom(12).hex()  # the one private and gated accept
        self.docroot = os.path.realpath(docroot)
        self.origin = origin.rstrip("/")
        self.ttl = ttl
        self.base_url = self.cdn_url = ""
        self._secret = os.urandom(16)
        self._lock = threading.Lock()
        self._records: list[list] = []
        self._sha: dict[tuple[str, int, int], str] = {}
        self._servers: list[tuple[_HubServer, threading.Thread]] = []
        self._dead_port = 0
        self._newest: dict[str, str] = {}  # newest, rotating: a file's newest signature
        self._uses: dict[str, int] = {}    # ... and the requests each honoured
        self.superseded = 0                # requests refused for an older signature

    def url(self, org: str, name: str, repo: str = "repo", rev: str = "main") -> str:
        """base_url/ORG/REPO/resolve/REV/NAME."""
        return f"{self.base_url}/{org}/{repo}/resolve/{rev}/{name}"

    def start(self) -> HubRedirector:
        """Starts both servers on free ports in daemon threads."""
        for role in ("hub", "cdn"):
            server = _HubServer(self, role)
            thread = threading.Thread(target=server.serve_forever, args=(0.05,), name=f"Hub-{role}", daemon=True)
            thread.start()
            self._servers.append((server, thread))
        self.base_url, self.cdn_url = (f"http://{HOST}:{s.server_address[1]}" for s, _ in self._servers)
        self._dead_port = _free_port()
        return self

    def stop(self) -> None:
        for server, thread in self._servers:
            server.shutdown()
            server.server_close()
            thread.join(2)
        self._servers = []

    def __enter__(self) -> HubRedirector:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def requests(self, server: str | None = None) -> list[_HubRecord]:
        """What the hub and the CDN (or `server` of them) answered, oldest first."""
        with self._lock:
            return [_HubRecord(*r) for r in self._records if server is None or r[0] == server]

    def reset(self) -> None:
        with self._lock:
            self._records.clear()
            self.superseded = 0

    def _record(self, rec: list) -> None:
        with self._lock:
            self._records.append(rec)

    def _refusal(self, org: str, repo: str, authorization: str | None) -> tuple[int, dict[str, str]] | None:
        """The Hub's refusal of a resolve URL of `org`/`repo` to a request
        with that Authorization, or None."""
        if org not in ("private", "gated") or authorization == f"Bearer {self.token}":
            return None
        if org == "private" and authorization is None:
            return 401, {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"}
        if org == "private":
            return 401, {"X-Error-Message": "Invalid credentials in Authorization header"}
        if authorization is None:
            return 401, {"X-Error-Code": "GatedRepo", "X-Error-Message": f"Access to model {org}/{repo} is "
                         "restricted. You must have access to it and be authenticated to access it. Please log in."}
        return 403, {"X-Error-Code": "GatedRepo", "X-Error-Message": f"Access to model {org}/{repo} is restricted "
                     f"and you are not in the authorized list. Visit {self.base_url}/{org}/{repo} to ask for access."}

    def _file(self, name: str) -> str | None:
        path = os.path.realpath(os.path.join(self.docroot, name))
        inside = os.path.commonpath([path, self.docroot]) == self.docroot
        return path if inside and os.path.isfile(path) else None

    def _sha256(self, path: str) -> str:
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns)
        with self._lock:
            if key in self._sha:
                return self._sha[key]
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        with self._lock:
            self._sha[key] = h.hexdigest()
        return self._sha[key]

    def _honoured(self, org: str, path: str, signature: str) -> bool:
        """newest and rotating: is `signature` of `path` still honoured (a
        request under it is counted)?"""
        if org not in ("newest", "rotating"):
            return True
        with self._lock:
            if self._newest.get(path) != signature:
                self.superseded += 1
                return False
            self._uses[signature] = self._uses.get(signature, 0) + 1
            return org == "newest" or self._uses[signature] <= self.USES

    @staticmethod
    def _signed_part(fields: dict[str, str]) -> str:
        """What a signature covers besides the path: Expires (and X-Amz-Date)."""
        return ".".join(fields[k] for k in ("Expires", "X-Amz-Date") if k in fields)

    def _signature(self, path: str, signed: str) -> str:
        return hmac.new(self._secret, f"{path}\n{signed}".encode(), hashlib.sha256).hexdigest()

    def _signed(self, org: str, name: str) -> str:
        """The CDN URL of `name`, signed now."""
        ttl = self.SHORT if org == "expiring" else self.ttl
        expires = str(int(time.time() + ttl) + 1)  # whole seconds: valid for ttl to ttl + 1 s
        path = f"/{org}/{name}"
        base = f"http://{HOST}:{self._dead_port}" if org == "deadcdn" else self.cdn_url
        fields = {"X-Amz-Expires": str(ttl), "Expires": expires}
        if org in ("newest", "rotating"):  # a new signature each time, even within a second
            fields["X-Amz-Date"] = os.urandom(4).hex()
        fields["X-Amz-Signature"] = signature = self._signature(path, self._signed_part(fields))
        if org in ("newest", "rotating"):
            with self._lock:
                self._newest[path] = signature
        query = urllib.parse.urlencode(fields)
        return f"{base}{urllib.parse.quote(path)}?{query}"


# --------------------------------------------------------------- self-test

def _hub(check: Callable[..., None], docroot: str, data: bytes, name: str) -> None:
    with Nginx(docroot) as ng, HubRedirector(docroot, ng.url("files")) as hub:
        _check_hub(hub, check, data, name)


def _check_hub(hub: HubRedirector, check: Callable[..., None], data: bytes, name: str) -> None:
    size, url = len(data), hub.url("org", name)
    st, h, _ = _get(url, Range="bytes=0-99", If_Match='"x"')
    loc = urllib.parse.urlsplit(h.get("Location", ""))
    q = urllib.parse.parse_qs(loc.query)
    check("hub: 302 (Range and If-Match ignored) to the CDN with a signed query",
          st == 302 and h.get("Location", "").startswith(hub.cdn_url + f"/org/{name}?")
          and {"X-Amz-Signature", "Expires"} <= set(q), (st, h))
    check("hub: X-Linked-Size, X-Linked-Etag (sha256), an ETag not the file's",
          (h.get("X-Linked-Size"), h.get("X-Linked-Etag")) == (str(size), f'"{hashlib.sha256(data).hexdigest()}"')
          and h.get("ETag", "").startswith('"hub-'), h)
    st, h2, body = _get(h["Location"], Range="bytes=0-99")
    check("hub CDN: the origin's 206, with its own ETag",
          (st, h2.get("Content-Range"), body) == (206, f"bytes 0-99/{size}", data[:100])
          and h2.get("ETag") not in (None, h.get("ETag")), (st, h2))
    check("hub CDN: If-Match of the redirect's ETag: 412",
          _get(h["Location"], Range="bytes=0-99", If_Match=h["ETag"])[0] == 412)
    rc, out = _curl("-L", "-r", "0-99", url)
    check("hub curl -L -r 0-99: the bytes", (rc, out) == (0, data[:100]), rc)
    forged = h["Location"].replace("X-Amz-Signature=", "X-Amz-Signature=0")
    past = str(int(time.time()) - 10)
    expired = (f"{hub.cdn_url}/org/{name}?Expires={past}&X-Amz-Signature="
               f"{hub._signature(f'/org/{name}', past)}")
    check("hub CDN: a wrong or expired signature: 403",
          [_get(u, Range="bytes=0-99")[0] for u in (forged, expired)] == [403, 403])
    _, h, _ = _get(hub.url("wrongsize", name))
    check("hub wrongsize: X-Linked-Size + 1", h.get("X-Linked-Size") == str(size + 1), h)
    _, h, _ = _get(hub.url("noetag", name))
    check("hub noetag: a 302 without ETag", "ETag" not in h and "Location" in h, h)
    _, h, _ = _get(hub.url("forbidden", name))
    check("hub forbidden: the CDN answers 403", _get(h["Location"], Range="bytes=0-9")[0] == 403)
    _, h, _ = _get(hub.url("deadcdn", name))
    check("hub deadcdn: curl -L cannot connect (7)", _curl("-L", hub.url("deadcdn", name))[0] == 7, h)
    check("hub: a missing file 404", _get(hub.url("org", "nonexistent"))[0] == 404)
    bearer = f"Bearer {hub.token}"
    got = [(st, h.get("X-Error-Code"), h.get("X-Error-Message", "")[:28]) for st, h, _ in
           (_get(hub.url(org, name), **auth) for org in ("private", "gated")
            for auth in ({}, {"Authorization": "Bearer hf_wrong"}))]
    check("hub private/gated: 401 RepoNotFound, 401 invalid credentials, 401 GatedRepo, 403 GatedRepo",
          got == [(401, "RepoNotFound", "Repository not found"),
                  (401, None, "Invalid credentials in Autho"),
                  (401, "GatedRepo", "Access to model gated/repo i"),
                  (403, "GatedRepo", "Access to model gated/repo i")],
          got)
    st, h, _ = _get(hub.url("private", name), Authorization=bearer)
    check("hub private: the token's 302; the CDN refuses it an Authorization (400), not without",
          st == 302 and _get(h["Location"], Range="bytes=0-9", Authorization=bearer)[0] == 400
          and _get(h["Location"], Range="bytes=0-9")[0] == 206, st)
    first, second = (_get(hub.url("newest", name))[1]["Location"] for _ in range(2))
    check("hub newest: a signature refused (403) once a newer one was given; the newer one serves",
          [_get(u, Range="bytes=0-9")[0] for u in (first, second)] == [403, 206] and hub.superseded >= 1)
    loc = _get(hub.url("rotating", name))[1]["Location"]
    got = [_get(loc, Range="bytes=0-9")[0] for _ in range(hub.USES + 1)]
    check(f"hub rotating: a signature serves {hub.USES} requests, then 403",
          got == [206] * hub.USES + [403], got)
    recs = hub.requests("hub")
    check("hub requests(): hub and CDN records",
          recs[0][:2] == ("hub", f"/org/repo/resolve/main/{name}") and recs[0].if_match == '"x"'
          and any(r.status == 403 for r in hub.requests("cdn")), recs[:1])


if __name__ == "__main__":
    sys.exit(selftest("hub", _hub))
