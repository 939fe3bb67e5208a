#!/usr/bin/python3
"""servers — local HTTP origins on 127.0.0.1 for testing the range-request
client (onnxzip_open_url()). Standard library only.

  * Nginx(docroot): a private nginx serving `docroot` under /files/,
    /noranges/ (max_ranges 0), /slow/ (limit_rate 2k), /throttled/ (the
    first MiB of each response at full speed, then 8 KiB/s), /capped/
    (limit_rate `capped_rate` per request, 25m: an object store's per-connection
    cap, for tools/bench/bench_fetch.py), /redirect/ (302 to /files/), /loop/
    (302 to itself), /missing/ (404); requests() parses its access log.
  * FaultServer(docroot): a threaded Python origin whose first path component
    picks a fault mode (FaultServer.MODES), e.g. /trunc/model.onnxzip;
    requests() lists what it answered.
(The Hugging Face Hub's redirects: hub.py's HubRedirector, in front of Nginx.)

Both are context managers with a `base_url` ("http://127.0.0.1:PORT");
servers_selftest.py checks them.
"""
from __future__ import annotations

import email.utils
import grp
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import BinaryIO, Callable, NamedTuple, Self

__all__ = ["Nginx", "FaultServer", "Request"]

NGINX = "/usr/sbin/nginx"
HOST = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _opt(field: str) -> str | None:
    return None if field == "-" else field


class Daemon:
    """A server process of the tests in a temporary prefix, on a free port
    of 127.0.0.1 (a context manager; start() and stop() also work).
    Subclasses give _try_start() (spawn, then wait until it answers) and
    log() (what it said, for errors)."""

    NAME = "server"

    def __init__(self) -> None:
        self.prefix = ""
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    def log(self) -> str:
        raise NotImplementedError

    def _try_start(self) -> bool:
        raise NotImplementedError

    def _start_in(self, prefix: str) -> None:
        """Starts the server in `prefix` (removed by stop()); RuntimeError
        with its log when it exits or does not answer in time."""
        self.prefix = prefix
        try:
            for attempt in range(3):  # the free port may be taken meanwhile
                if self._try_start():
                    return
                self._kill()
                if "address already in use" not in self.log().lower() or attempt == 2:
                    raise RuntimeError(f"{self.NAME} did not start:\n{self.log()}")
        except BaseException:
            self.stop()
            raise

    def _spawn(self, argv: list[str], log: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Runs argv in a session of its own, stdout and stderr appended to `log`."""
        with open(log, "ab") as out:
            self._proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                          start_new_session=True)
        return self._proc

    def _wait_until(self, answers: Callable[[], bool], seconds: float, pause: float) -> bool:
        """Polls answers() while the process runs, for up to `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._proc is not None and self._proc.poll() is None:
            try:
                if answers():
                    return True
            except OSError:
                pass
            time.sleep(pause)
        return False

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # nginx: fast shutdown, the master stops its worker
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        try:  # its own session: nothing it started survives it
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()

    def stop(self) -> None:
        """Stops the server and removes its prefix."""
        self._kill()
        if self.prefix:
            shutil.rmtree(self.prefix, ignore_errors=True)
            self.prefix = ""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Self:
        raise NotImplementedError


class Nginx(Daemon):
    """nginx 1.22 in a temporary prefix, serving `docroot` (a context
    manager; start() and stop() also work). Static locations answer with a
    strong ETag "<mtime hex>-<size hex>" and Last-Modified, one range per
    request (206; Accept-Ranges only on 200s), and 412 to a failed If-Match
    (also to a weak tag) or If-Unmodified-Since, range or not."""

    LOCATIONS = ("files", "noranges", "slow", "throttled", "capped", "redirect", "loop", "missing")
    _LOG = r"$msec\t$request\t$status\t$body_bytes_sent\t$http_range\t$http_if_match\t$bytes_sent"

    def __init__(self, docroot: str, capped_rate: str = "25m", tls: tuple[str, str] | None = None) -> None:
        """tls: (certificate, key) PEM files: HTTPS instead of HTTP."""
        for path in [docroot, *(tls or ())]:
            if re.search(r'["$\\\n]', path):
                raise ValueError(f"path unusable in nginx.conf: {path!r}")
        self.tls = (os.path.abspath(tls[0]), os.path.abspath(tls[1])) if tls else None
        if not re.fullmatch(r"[0-9]+[km]?", capped_rate):
            raise ValueError(f"not an nginx rate: {capped_rate!r}")
        self.capped_rate = capped_rate
        self.docroot = os.path.abspath(docroot)
        self.base_url = ""
        super().__init__()

    def url(self, location: str, name: str = "") -> str:
        """base_url + /location/name."""
        return f"{self.base_url}/{location}/{name}"

    def _config(self) -> str:
        p, root = self.prefix, self.docroot
        user = ""
        tls = ""
        if self.tls:
            tls = f' ssl;\n        ssl_certificate "{self.tls[0]}";\n        ssl_certificate_key "{self.tls[1]}"'
        if os.geteuid() == 0:  # the worker must read a 0700 docroot of root's
            user = (f"user {pwd.getpwuid(os.geteuid()).pw_name} "
                    f"{grp.getgrgid(os.getegid()).gr_name};")
        temps = "\n".join(f"    {k}_temp_path {p}/{k};"
                          for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return f"""daemon off;
master_process on;
worker_processes 1;
{user}
pid {p}/nginx.pid;
lock_file {p}/nginx.lock;
error_log {p}/error.log info;
events {{ worker_connections 128; }}
http {{
    types {{ }}
    default_type application/octet-stream;
{temps}
    log_format oz "{self._LOG}";
    access_log {p}/access.log oz;
    keepalive_timeout 30s;
    server {{
        listen {HOST}:{self.port}{tls};
        server_name localhost;
        location /files/ {{ alias "{root}/"; }}
        location /noranges/ {{ alias "{root}/"; max_ranges 0; }}
        location /slow/ {{ alias "{root}/"; limit_rate 2k; }}
        location /throttled/ {{ alias "{root}/"; limit_rate_after 1m; limit_rate 8k; }}
        location /capped/ {{ alias "{root}/"; limit_rate {self.capped_rate}; }}
        location ~ ^/redirect/(.*)$ {{ return 302 /files/$1$is_args$args; }}
        location /loop/ {{ return 302 $request_uri; }}
        location /missing/ {{ return 404; }}
        location / {{ return 404; }}
    }}
}}
"""

    def error_log(self) -> str:
        """nginx's error log and stderr so far."""
        out = []
        for name in ("error.log", "stderr.log"):
            try:
                with open(os.path.join(self.prefix, name), errors="replace") as f:
                    out.append(f.read())
            except OSError:
                pass
        return "".join(out)

    NAME = "nginx"

    def log(self) -> str:
        return self.error_log()

    def start(self) -> Nginx:
        """Starts nginx; raises RuntimeError (with its error log) when it
        exits or does not listen within 10 s."""
        self._start_in(tempfile.mkdtemp(prefix="oz-nginx-"))
        return self

    def _try_start(self) -> bool:
        self.port = _free_port()
        self.base_url = f"{'https' if self.tls else 'http'}://{HOST}:{self.port}"
        conf = os.path.join(self.prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(self._config())
        self._spawn([NGINX, "-p", self.prefix, "-c", conf, "-e", os.path.join(self.prefix, "error.log")],
                    os.path.join(self.prefix, "stderr.log"))

        def listening() -> bool:
            socket.create_connection((HOST, self.port), timeout=0.5).close()
            return True
        return self._wait_until(listening, 10, 0.02)

    def requests(self, path_prefix: str | None = None, *, wait_for: int = 0,
                 timeout: float = 2.0) -> list[dict]:
        """Access-log entries, oldest first, whose path starts with
        `path_prefix`: dicts with time (float), request (the request line),
        method, path, status (int), bytes (body bytes sent), sent (bytes
        sent, headers included), range and if_match (header values or None).
        nginx logs a request once it has finished: `wait_for` waits up to
        `timeout` s for that many entries."""
        deadline = time.monotonic() + timeout
        while True:
            entries = []
            try:
                with open(os.path.join(self.prefix, "access.log"), errors="replace") as f:
                    lines = f.read().splitlines()
            except FileNotFoundError:
                lines = []
            for line in lines:
                line = re.sub(r"\\x([0-9A-Fa-f]{2})", lambda m: chr(int(m[1], 16)), line)
                t, request, status, sent, rng, if_match, total = line.split("\t")
                method, _, rest = request.partition(" ")
                path = rest.rpartition(" ")[0] or rest
                if path_prefix is None or path.startswith(path_prefix):
                    entries.append({"time": float(t), "request": request, "method": method,
                                    "path": path, "status": int(status), "bytes": int(sent),
                                    "sent": int(total), "range": _opt(rng), "if_match": _opt(if_match)})
            if len(entries) >= wait_for or time.monotonic() >= deadline:
                return entries
            time.sleep(0.02)


class Request(NamedTuple):
    """One request FaultServer answered (status 0: nothing sent yet)."""
    mode: str
    path: str            # the request's path, e.g. /ok/model.onnxzip
    range: str | None    # its Range header
    status: int
    sent: int            # body bytes sent


_UNSAT = (-1, -1)
_CHUNK = 1 << 16
# An endless or generated body ends after this many bytes or seconds (or
# when the client goes, or stop()): every loop of the server is bounded.
_ENDLESS_BYTES = 16 << 30
_ENDLESS_SECONDS = 20.0
_HUGE = 8 << 30  # the object huge200 pretends to have
# trickle and crawl: (bytes, seconds) per step of their bodies
_PACES = {"trickle": (1, 0.5), "crawl": (512, 0.125)}


def _parse_range(value: str | None, size: int) -> tuple[int, int] | None:
    """(first, last) of a single `bytes=` range, _UNSAT when unsatisfiable,
    None when absent or not one valid range (then it is ignored)."""
    m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)-(\d*)\s*", value or "")
    if not m or not (m[1] or m[2]):
        return None
    if not m[1]:
        n = int(m[2])
        return _UNSAT if n == 0 or size == 0 else (max(0, size - n), size - 1)
    first, last = int(m[1]), int(m[2]) if m[2] else None
    if last is not None and last < first:
        return None
    return _UNSAT if first >= size else (first, size - 1 if last is None else min(last, size - 1))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        self.server.owner._track(self.connection, False)
        super().finish()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def _serve(self, body: bool) -> None:
        fs = self.server.owner
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        mode, _, name = path.lstrip("/").partition("/")
        rec = [mode, path, self.headers.get("Range"), 0, 0]
        fs._record(rec)
        if mode not in FaultServer.MODES:
            return self._simple(rec, 404, "unknown mode")
        if mode == "status500":
            return self._simple(rec, 500, "internal error")
        n = fs._count((mode, name))
        if mode == "flaky503" and n <= 2:
            return self._simple(rec, 503, "try again")
        if mode == "stall":
            return self._stall()
        if mode == "to":
            return self._simple(rec, 302, "moved", {"Location": "/" + name})
        if mode in ("endless200", "endless403", "endless302", "huge200"):
            return self._endless(rec, mode, body)
        if mode in ("nostatus", "status2060", "longheader", "slowheaders"):
            return self._malformed(rec, mode)
        file = fs._resolve(name)
        if file is None:
            return self._simple(rec, 404, "no such file")
        st = os.stat(file)
        size, mtime_ns = st.st_size, st.st_mtime_ns
        if mode == "changing" and n > 1:
            mtime_ns += 3600 * 10**9  # "replaced" an hour later
        etag = f'"{size:x}-{mtime_ns:x}"'
        shown = None if mode == "noetag" else "W/" + etag if mode == "weaketag" else etag
        last_mod = None if mode in ("noetag", "weaketag") else \
            email.utils.formatdate(mtime_ns // 10**9, usegmt=True)
        if not self._preconditions(shown, mtime_ns // 10**9 if last_mod else None):
            return self._simple(rec, 412, "precondition failed")
        rng = None if mode == "noranges" else _parse_range(rec[2], size)
        if_range = self.headers.get("If-Range")
        if if_range is not None and if_range not in (shown if shown == etag else None, last_mod):
            rng = None
        if rng == _UNSAT:
            return self._simple(rec, 416, "range not satisfiable", {"Content-Range": f"bytes */{size}"})
        first, length = (0, size) if rng is None else (rng[0], rng[1] - rng[0] + 1)
        status, headers = 200 if rng is None else 206, {}
        total, clen, limit, stall = size, length, length, False
        if status == 206:
            if mode == "liar_total":
                total = size + 4096
            elif mode == "wrong_range":
                first += 64 if first + length + 64 <= size else -64 if first >= 64 else 0
            elif mode == "extra":
                clen = limit = length + 16
            elif mode == "trunc":
                limit = length // 2
            elif mode == "overlong" and not rec[2].lstrip().startswith("bytes=-"):
                clen = length + (64 << 10)
            headers["Content-Range"] = f"bytes {first}-{first + length - 1}/{total}"
        if mode == "truncfirst" and body and length > 1000 and fs._once(("truncfirst", name)):
            limit = length // 2
        if mode == "stallbody" and body:
            limit, stall = min(100, length), True
        if mode != "noranges":
            headers["Accept-Ranges"] = "bytes"
        if shown:
            headers["ETag"] = shown
        if last_mod:
            headers["Last-Modified"] = last_mod
        self._head(rec, status, clen, headers)
        if body:
            with open(file, "rb") as f:
                f.seek(first)
                paced = "trickle" if mode == "trickledata" and first + length < size else mode
                self._write(rec, f, limit, *_PACES.get(paced, (_CHUNK, 0.0)),
                            change=(lambda at, c: fs._changed(name, at, c)) if mode == "tamper" else None)
            if limit < clen or stall:
                self.close_connection = True
        if stall:
            self._stall()

    def _preconditions(self, etag: str | None, mtime: int | None) -> bool:
        if_match = self.headers.get("If-Match")
        if if_match is not None:  # strong comparison: a weak tag never matches
            tags = [t.strip() for t in if_match.split(",")]
            return "*" in tags or (etag is not None and not etag.startswith("W/") and etag in tags)
        since = self.headers.get("If-Unmodified-Since")
        if since is None or mtime is None:
            return True
        try:
            return mtime <= email.utils.parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError):
            return True

    def _head(self, rec: list, status: int, length: int, headers: dict[str, str]) -> None:
        rec[3] = status
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def _simple(self, rec: list, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        data = (text + "\n").encode()
        self._head(rec, status, len(data), {"Content-Type": "text/plain", **(headers or {})})
        if self.command != "HEAD":
            self.wfile.write(data)
            rec[4] = len(data)

    def _write(self, rec: list, f: BinaryIO, count: int, step: int = _CHUNK, pause: float = 0.0,
               change: Callable[[int, bytes], bytes] | None = None) -> None:
        """`count` bytes of f, `step` at a time, `pause` s after each (a
        paced body stops after _ENDLESS_SECONDS, or at stop()); `change`
        (file offset, chunk) -> what is sent instead."""
        end = time.monotonic() + _ENDLESS_SECONDS
        while rec[4] < count:
            at = f.tell()
            chunk = f.read(min(step, count - rec[4]))
            chunk += b"\0" * (min(step, count - rec[4]) - len(chunk))  # "extra" past the end
            if change:
                chunk = change(at, chunk)
            self.wfile.write(chunk)
            rec[4] += len(chunk)
            if pause and (self.server.owner._stopping.wait(pause) or time.monotonic() > end):
                self.close_connection = True
                return

    def _endless(self, rec: list, mode: str, body: bool) -> None:
        """endless200/403/302: that status, chunked, generated bytes without
        end; huge200: 200 with _HUGE bytes (generated). Bounded by
        _ENDLESS_BYTES, _ENDLESS_SECONDS, the client and stop()."""
        status = 403 if mode == "endless403" else 302 if mode == "endless302" else 200
        rec[3] = status
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "/ok/" + rec[1].rpartition("/")[2])
        else:
            self.send_header("ETag", '"0123456789abcdef"')
            self.send_header("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")
        framed = mode != "huge200"
        self.send_header(*(("Transfer-Encoding", "chunked") if framed else ("Content-Length", str(_HUGE))))
        self.end_headers()
        self.close_connection = True
        block = bytes(range(256)) * (_CHUNK // 256)
        out = b"%x\r\n%s\r\n" % (len(block), block) if framed else block
        end, limit = time.monotonic() + _ENDLESS_SECONDS, min(_ENDLESS_BYTES, _HUGE if not framed else _ENDLESS_BYTES)
        try:
            while body and rec[4] < limit and time.monotonic() < end and not self.server.owner._stopping.is_set():
                self.wfile.write(out)
                rec[4] += len(block)
        except OSError:  # the client went: what it read is in rec[4] (and the sockets' buffers)
            pass

    def _malformed(self, rec: list, mode: str) -> None:
        """nostatus, status2060, longheader, slowheaders: a reply that is
        not HTTP (sent raw; the connection is closed after it)."""
        self.close_connection = True
        rec[3] = 2060 if mode == "status2060" else 200
        head = {"nostatus": b"Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
                "status2060": b"HTTP/1.1 2060 Partial Content\r\nContent-Length: 0\r\n\r\n",
                "longheader": b"HTTP/1.1 206 Partial Content\r\nX-Filler: " + b"a" * (100 << 10) + b"\r\n"}
        if mode != "slowheaders":
            self.wfile.write(head[mode])
            return
        self.wfile.write(b"HTTP/1.1 206 Partial Content\r\n")
        end = time.monotonic() + _ENDLESS_SECONDS
        for i in range(1 << 20):  # a header line every 0.25 s, without end
            self.wfile.write(b"X-Slow-%d: %d\r\n" % (i, i))
            self.wfile.flush()
            if self.server.owner._stopping.wait(0.25) or time.monotonic() > end:
                return

    def _stall(self) -> None:
        self.server.owner._stopping.wait(600)
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: FaultServer) -> None:
        self.owner = owner
        super().__init__((HOST, 0), _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # resets, broken pipes, stop()
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class FaultServer:
    """A Python origin serving `docroot` at /MODE/NAME (a context manager;
    start() and stop() also work). HTTP/1.1 with keep-alive, GET and HEAD,
    one range per request (bytes=a-b, a-, -n: 206 with Content-Range, 416
    when unsatisfiable; a malformed or multiple range is ignored: 200),
    ETag "<size hex>-<mtime_ns hex>", Last-Modified, If-Match (strong
    comparison), If-Unmodified-Since and If-Range (412 before 416). Modes:

      ok           correct
      noranges     Range ignored: 200 with the whole file, no Accept-Ranges
      trunc        every 206 sends half its Content-Length, then closes
      truncfirst   the first GET per file whose body exceeds 1000 bytes
                   sends half its body, then closes; later ones are ok
      flaky503     the first 2 requests per file: 503, then ok
      stall        reads the request, answers nothing until stop()
      stallbody    headers and 100 body bytes, then nothing until stop()
      liar_total   206 with Content-Range bytes a-b/(size + 4096)
      wrong_range  206 with the range 64 bytes further (64 before when that
                   passes the end) and a Content-Range saying so
      extra        206 with 16 bytes more than asked (zeros past the end),
                   Content-Length saying so, Content-Range as asked
      noetag       no ETag, no Last-Modified
      weaketag     ETag W/"...", no Last-Modified (If-Match it: 412)
      changing     from the 2nd request per file on, ETag and Last-Modified
                   are those of a file replaced an hour later (old If-Match
                   or If-Unmodified-Since: 412)
      status500    500
      to           302 to the rest of the path: /to/MODE/NAME leads to
                   /MODE/NAME (a hostile reply behind a redirect)
      endless200   Range ignored: 200, chunked, generated bytes without end
      endless403   403, chunked, generated bytes without end
      endless302   302 to /ok/NAME with a chunked body without end
      huge200      Range ignored: 200 with Content-Length 8 GiB, generated
      trickle      as ok, but bodies come 1 byte every 0.5 s
      trickledata  as trickle, except a reply holding the file's last byte
      crawl        as ok, but bodies come at 4 KiB/s (512 bytes per 1/8 s)
      overlong     as ok, but a 206 for bytes a-b has a Content-Length 64 KiB
                   more than its Content-Range (suffix ranges are ok): the
                   body ends (the connection closes) short of what it promised
      nostatus     headers and a body without a status line
      status2060   status line "HTTP/1.1 2060 Partial Content"
      longheader   a 206 status line, then a header line of 100 KiB
      slowheaders  a 206 status line, then a header line every 0.25 s,
                   the headers never ending
      tamper       as ok, but the bytes set by tamper(name, offset, data)
                   are sent in place of the file's (a change in transit
                   that keeps every size and header: another entry's bytes,
                   one letter of a name)
    (Endless, generated and paced bodies stop after 16 GiB or 20 s, when
    the client goes, or at stop(); requests() says what each sent.)

    Counters (flaky503, truncfirst, changing) are per mode and file name,
    until reset()."""

    MODES = ("ok", "noranges", "trunc", "truncfirst", "flaky503", "stall", "stallbody",
             "liar_total", "wrong_range", "extra", "noetag", "weaketag", "changing", "status500",
             "to", "endless200", "endless403", "endless302", "huge200", "trickle", "trickledata",
             "crawl", "tamper", "overlong", "nostatus", "status2060", "longheader", "slowheaders")

    def __init__(self, docroot: str) -> None:
        self.docroot = os.path.realpath(docroot)
        self.base_url = ""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._records: list[list] = []
        self._counts: dict[tuple[str, str], int] = {}
        self._done: set[tuple[str, str]] = set()
        self._conns: set[socket.socket] = set()
        self._tampered: dict[str, list[tuple[int, bytes]]] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def url(self, mode: str, name: str = "") -> str:
        """base_url + /mode/name."""
        return f"{self.base_url}/{mode}/{name}"

    def start(self) -> FaultServer:
        """Starts serving on a free port of 127.0.0.1 in a daemon thread."""
        self._stopping.clear()
        self._server = _Server(self)
        self.base_url = f"http://{HOST}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="FaultServer", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops serving; stalled handlers are released and every connection
        is shut down (returns within ~0.1 s)."""
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(2)
        self._server = self._thread = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def tamper(self, name: str, offset: int, data: bytes) -> None:
        """/tamper/NAME sends `data` in place of NAME's bytes at `offset`."""
        with self._lock:
            self._tampered.setdefault(name, []).append((offset, data))

    def untamper(self) -> None:
        """Forgets every tamper()."""
        with self._lock:
            self._tampered.clear()

    def _changed(self, name: str, first: int, chunk: bytes) -> bytes:
        """`chunk` (file bytes from `first` on) as mode tamper sends them."""
        with self._lock:
            changes = list(self._tampered.get(name, ()))
        out = bytearray(chunk)
        for off, data in changes:
            lo, hi = max(off, first), min(off + len(data), first + len(chunk))
            if lo < hi:
                out[lo - first:hi - first] = data[lo - off:hi - off]
        return bytes(out)

    def requests(self, mode: str | None = None) -> list[Request]:
        """The requests received so far (of `mode`), oldest first."""
        with self._lock:
            return [Request(*r) for r in self._records if mode is None or r[0] == mode]

    def reset(self) -> None:
        """Forgets the requests and the per-file counters (flaky503,
        truncfirst and changing start over)."""
        with self._lock:
            self._records.clear()
            self._counts.clear()
            self._done.clear()

    def _record(self, rec: list) -> None:
        with self._lock:
            self._records.append(rec)

    def _count(self, key: tuple[str, str]) -> int:
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]

    def _once(self, key: tuple[str, str]) -> bool:
        with self._lock:
            first = key not in self._done
            self._done.add(key)
            return first

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def _resolve(self, name: str) -> str | None:
        path = os.path.realpath(os.path.join(self.docroot, name))
        inside = os.path.commonpath([path, self.docroot]) == self.docroot
        return path if inside and os.path.isfile(path) else None


# ------------------------------ clients of the self-tests (servers_selftest.py, hub.py)

class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


def _get(url: str, method: str = "GET", **headers: str) -> tuple[int, dict[str, str], bytes]:
    """status, headers, body of one request (no redirects followed);
    header names are given with _ for -."""
    req = urllib.request.Request(url, method=method,
                                 headers={k.replace("_", "-"): v for k, v in headers.items()})
    try:
        with _OPENER.open(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, dict(e.headers), e.read()


def _curl(*args: str) -> tuple[int, bytes]:
    """curl's exit code and output."""
    p = subprocess.run(["curl", "-sS", "--noproxy", "*", *args], capture_output=True, timeout=20)
    return p.returncode, p.stdout
