#!/usr/bin/python3
"""servers_selftest — servers.py's Nginx and FaultServer checked against
what their documentation promises, with urllib and curl as the clients
(needs nginx and curl). Run by hand after changing servers.py:

    tests/remote/servers_selftest.py
"""
from __future__ import annotations

import http.client
import os
import re
import socket
import sys
import tempfile
import time
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import HOST, FaultServer, Nginx, _curl, _get  # noqa: E402


def selftest(title: str, body: Callable[[Callable[..., None], str, bytes, str], None]) -> int:
    """Runs body(check, docroot, data, name) over a docroot (0700) holding
    `name`, 300 KiB of random `data`; prints each check and the counts
    under `title`: 0 when all passed, else 1. (hub.py's self-test too.)"""
    results = [0, 0]

    def check(what: str, ok: bool, detail: object = "") -> None:
        results[not ok] += 1
        print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if not ok and detail != "" else ""))

    with tempfile.TemporaryDirectory(prefix=f"oz-{title}-") as tmp:
        docroot = os.path.join(tmp, "docroot")
        os.mkdir(docroot, 0o700)
        data, name = os.urandom(300 * 1024), "model.onnxzip"
        with open(os.path.join(docroot, name), "wb") as f:
            f.write(data)
        body(check, docroot, data, name)
    print(f"{title}: {results[0]} passed, {results[1]} failed")
    return 1 if results[1] else 0


def _servers(check: Callable[..., None], docroot: str, data: bytes, name: str) -> None:
    with Nginx(docroot) as ng:
        _check_nginx(ng, check, data, name)
    with FaultServer(docroot) as fs:
        _check_fault(fs, check, data, name)


def _check_nginx(ng: Nginx, check: Callable[..., None], data: bytes, name: str) -> None:
    size, url = len(data), ng.url("files", name)
    st, h, body = _get(url, Range="bytes=0-99")
    etag = h.get("ETag", "")
    check("nginx /files/ bytes=0-99: 206 with those bytes",
          (st, h.get("Content-Range"), body) == (206, f"bytes 0-99/{size}", data[:100]), (st, h))
    mtime = int(os.stat(os.path.join(ng.docroot, name)).st_mtime)
    check("nginx ETag strong \"mtime-size\" in hex", etag == f'"{mtime:x}-{size:x}"', etag)
    check("nginx Last-Modified, no Accept-Ranges on a 206", "Last-Modified" in h and "Accept-Ranges" not in h, h)
    for rng, want in (("bytes=1000-", data[1000:]), ("bytes=-500", data[-500:])):
        st, h, body = _get(url, Range=rng)
        check(f"nginx {rng}: 206 with those bytes", (st, body) == (206, want), st)
    st, h, _ = _get(url, Range=f"bytes={size}-")
    check("nginx range past the end: 416", (st, h.get("Content-Range")) == (416, f"bytes */{size}"), (st, h))
    for headers, want in (({"If_Match": '"0-0"', "Range": "bytes=0-99"}, 412),
                          ({"If_Match": '"0-0"'}, 412),
                          ({"If_Match": etag, "Range": "bytes=0-99"}, 206),
                          ({"If_Match": "W/" + etag, "Range": "bytes=0-99"}, 412),
                          ({"If_Unmodified_Since": "Sun, 06 Nov 1994 08:49:37 GMT"}, 412),
                          ({"If_Unmodified_Since": "Sun, 06 Nov 2044 08:49:37 GMT",
                            "Range": "bytes=0-9"}, 206)):
        st, _, _ = _get(url, **headers)
        check(f"nginx {headers}: {want}", st == want, st)
    st, h, body = _get(url, method="HEAD")
    check("nginx HEAD: 200, Content-Length, Accept-Ranges, no body",
          (st, h.get("Content-Length"), h.get("Accept-Ranges"), body) == (200, str(size), "bytes", b""), (st, h))
    st, h, body = _get(ng.url("noranges", name), Range="bytes=0-99")
    check("nginx /noranges/: 200 with the whole file, no Accept-Ranges",
          (st, body, "Accept-Ranges" in h) == (200, data, False), (st, h))
    t0 = time.monotonic()
    st, h, body = _get(ng.url("slow", name), Range="bytes=0-3071")
    took = time.monotonic() - t0
    check(f"nginx /slow/ 3 KiB: 206 in {took:.2f} s (>= 0.7)", (st, body) == (206, data[:3072]) and took >= 0.7)
    st, h, body = _get(ng.url("capped", name), Range="bytes=0-99")
    logged = ng.requests("/capped/", wait_for=1)
    check("nginx /capped/: 206, logged with bytes sent (headers too) > body bytes",
          (st, body) == (206, data[:100]) and len(logged) == 1 and logged[0]["sent"] > logged[0]["bytes"] == 100,
          (st, logged))
    st, h, _ = _get(ng.url("redirect", name) + "?x=1")
    check("nginx /redirect/: 302 to /files/", st == 302 and h.get("Location") == url + "?x=1", (st, h))
    rc, out = _curl("-L", "-r", "0-99", ng.url("redirect", name))
    check("nginx /redirect/ curl -L -r 0-99: the bytes", (rc, out) == (0, data[:100]), rc)
    st, h, _ = _get(ng.url("loop", name))
    check("nginx /loop/: 302 to itself", st == 302 and h.get("Location") == ng.url("loop", name), (st, h))
    rc, _ = _curl("-L", "--max-redirs", "5", ng.url("loop", name))
    check("nginx /loop/ curl -L: too many redirects (47)", rc == 47, rc)
    for u in (ng.url("missing", name), ng.url("files", "nonexistent"), ng.base_url + "/"):
        check(f"nginx {u[len(ng.base_url):]}: 404", _get(u)[0] == 404)
    log = ng.requests("/files/", wait_for=13)
    first = log[0] if log else {}
    check("nginx access log: method, path, status, bytes, range",
          [first.get(k) for k in ("request", "status", "bytes", "range", "if_match")]
          == [f"GET /files/{name} HTTP/1.1", 206, 100, "bytes=0-99", None], first)
    check("nginx access log: If-Match logged",
          any(e["if_match"] == etag and e["status"] == 206 for e in log), log)
    check("nginx access log: filter", len(ng.requests("/loop/")) == 7 and len(log) == 13,
          (len(ng.requests("/loop/")), len(log)))


def _check_fault(fs: FaultServer, check: Callable[..., None], data: bytes, name: str) -> None:
    size, url = len(data), fs.url("ok", name)
    st, h, body = _get(url, Range="bytes=0-99")
    etag = h.get("ETag", "")
    check("fault ok bytes=0-99: 206 with those bytes",
          (st, h.get("Content-Range"), body) == (206, f"bytes 0-99/{size}", data[:100]), (st, h))
    check("fault ok: strong ETag, Last-Modified, Accept-Ranges",
          re.fullmatch(r'"[0-9a-f]+-[0-9a-f]+"', etag) is not None and "Last-Modified" in h
          and h.get("Accept-Ranges") == "bytes", h)
    for rng, want in (("bytes=1000-", data[1000:]), ("bytes=-500", data[-500:]),
                      (f"bytes=10-{size + 9}", data[10:]), ("bytes=5-2", data)):
        st, h, body = _get(url, Range=rng)
        check(f"fault ok {rng}: {206 if len(want) < size else 200} with those bytes",
              (st, body) == (206 if len(want) < size else 200, want), st)
    st, h, _ = _get(url, Range=f"bytes={size}-")
    check("fault ok range past the end: 416", (st, h.get("Content-Range")) == (416, f"bytes */{size}"), st)
    for headers, want in (({"If_Match": '"0-0"', "Range": "bytes=0-99"}, 412), ({"If_Match": '"0-0"'}, 412),
                          ({"If_Match": etag, "Range": "bytes=0-99"}, 206),
                          ({"If_Match": "W/" + etag, "Range": "bytes=0-99"}, 412),
                          ({"If_Unmodified_Since": "Sun, 06 Nov 1994 08:49:37 GMT"}, 412),
                          ({"If_Range": '"0-0"', "Range": "bytes=0-99"}, 200)):
        check(f"fault ok {headers}: {want}", _get(url, **headers)[0] == want)
    st, h, body = _get(url, method="HEAD")
    check("fault ok HEAD: 200, Content-Length, no body",
          (st, h.get("Content-Length"), body) == (200, str(size), b""), (st, h))
    conn = http.client.HTTPConnection(HOST, int(fs.base_url.rsplit(":", 1)[1]), timeout=5)
    statuses = []
    for path in (f"/ok/{name}", f"/ok/{name}", "/ok/../../../etc/passwd", f"/nope/{name}"):
        conn.request("GET", path, headers={"Range": "bytes=0-9"})
        sock = conn.sock
        r = conn.getresponse()
        r.read()
        statuses.append(r.status)
    check("fault keep-alive, then 404 outside docroot and for unknown modes",
          statuses == [206, 206, 404, 404] and conn.sock is sock, statuses)
    conn.close()
    rc, out = _curl("-r", "0-99", url)
    check("fault ok curl -r 0-99", (rc, out) == (0, data[:100]), rc)
    st, h, body = _get(fs.url("noranges", name), Range="bytes=0-99")
    check("fault noranges: 200 with the whole file", (st, body) == (200, data), st)
    rcs = [_curl("-r", "0-9999", fs.url("trunc", name))[0] for _ in range(2)]
    check("fault trunc: curl error 18 every time", rcs == [18, 18], rcs)
    check("fault trunc: half the body sent",
          [r.sent for r in fs.requests("trunc")] == [5000, 5000], fs.requests("trunc"))
    got = [_curl("-r", r, fs.url("truncfirst", name)) for r in ("0-99", "0-9999", "0-9999")]
    check("fault truncfirst: 0, 18, 0", [g[0] for g in got] == [0, 18, 0] and got[2][1] == data[:10000],
          [g[0] for g in got])
    sts = [_get(fs.url("flaky503", name), Range="bytes=0-99")[0] for _ in range(3)]
    check("fault flaky503: 503, 503, 206", sts == [503, 503, 206], sts)
    check("fault requests(mode) records",
          [(r.status, r.range) for r in fs.requests("flaky503")] == [(503, "bytes=0-99")] * 2 + [(206, "bytes=0-99")],
          fs.requests("flaky503"))
    t0 = time.monotonic()
    rc, _ = _curl("--max-time", "2", fs.url("stall", name))
    check("fault stall: curl timeout (28)", rc == 28 and time.monotonic() - t0 < 4, rc)
    rc, out = _curl("--max-time", "1", "-r", "0-9999", fs.url("stallbody", name))
    check("fault stallbody: curl timeout (28) after 100 bytes", (rc, out) == (28, data[:100]), (rc, len(out)))
    st, h, body = _get(fs.url("liar_total", name), Range="bytes=0-99")
    check("fault liar_total: total + 4096 in Content-Range",
          (st, h.get("Content-Range"), body) == (206, f"bytes 0-99/{size + 4096}", data[:100]), h)
    st, h, body = _get(fs.url("wrong_range", name), Range="bytes=1000-1099")
    check("fault wrong_range: the range 64 bytes on",
          (st, h.get("Content-Range"), body) == (206, f"bytes 1064-1163/{size}", data[1064:1164]), h)
    st, h, body = _get(fs.url("extra", name), Range="bytes=0-99")
    check("fault extra: 16 bytes more than the range",
          (st, h.get("Content-Range"), h.get("Content-Length"), body)
          == (206, f"bytes 0-99/{size}", "116", data[:116]), h)
    rc, out = _curl("-r", "0-99", fs.url("extra", name))
    check(f"fault extra: curl -r 0-99 exits {rc} with {len(out)} bytes, server sent 116",
          fs.requests("extra")[-1].sent == 116 and out == data[:len(out)], fs.requests("extra"))
    st, h, body = _get(fs.url("noetag", name), Range="bytes=0-99")
    check("fault noetag: 206, no ETag, no Last-Modified",
          (st, "ETag" in h, "Last-Modified" in h, body) == (206, False, False, data[:100]), h)
    st, h, _ = _get(fs.url("weaketag", name), Range="bytes=0-99")
    weak = h.get("ETag", "")
    check("fault weaketag: W/ ETag, no Last-Modified, If-Match it: 412",
          st == 206 and weak.startswith('W/"') and "Last-Modified" not in h
          and _get(fs.url("weaketag", name), If_Match=weak)[0] == 412, h)
    u = fs.url("changing", name)
    old = _get(u, Range="bytes=0-99")[1].get("ETag")
    sts = [_get(u, Range="bytes=0-99", If_Match=old)[0]]
    st, h, _ = _get(u, Range="bytes=0-99")
    sts += [st, _get(u, Range="bytes=0-99", If_Match=h.get("ETag", ""))[0]]
    check("fault changing: old tag 412, new tag differs, 206", sts == [412, 206, 206] and h.get("ETag") != old,
          (sts, old, h.get("ETag")))
    check("fault status500: 500", _get(fs.url("status500", name))[0] == 500)
    _check_hostile(fs, check, data, name)
    fs.reset()
    check("fault reset()", fs.requests() == [] and _get(fs.url("flaky503", name))[0] == 503)
    socks = [socket.create_connection((HOST, int(fs.base_url.rsplit(":", 1)[1]))) for _ in range(2)]
    socks[0].sendall(f"GET /stall/{name} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    deadline = time.monotonic() + 2
    while not fs.requests("stall") and time.monotonic() < deadline:
        time.sleep(0.01)
    t0 = time.monotonic()
    fs.stop()
    took = time.monotonic() - t0
    socks[0].settimeout(2)
    check(f"fault stop() with a stalled and an idle connection: {took:.2f} s, EOF",
          took < 2 and socks[0].recv(100) == b"", took)
    for s in socks:
        s.close()


def _check_hostile(fs: FaultServer, check: Callable[..., None], data: bytes, name: str) -> None:
    """The transport-bounds modes: endless and huge bodies (a client reads
    4 MiB of each and goes: the server stops), redirects, paced bodies."""
    port = int(fs.base_url.rsplit(":", 1)[1])
    for mode, status, length in (("endless200", 200, None), ("endless403", 403, None), ("huge200", 200, 8 << 30)):
        conn = http.client.HTTPConnection(HOST, port, timeout=5)
        conn.request("GET", f"/{mode}/{name}", headers={"Range": "bytes=0-99"})
        r = conn.getresponse()
        clen, chunked, got = r.getheader("Content-Length"), r.chunked, len(r.read(4 << 20))
        conn.close()
        time.sleep(0.3)
        sent = [x.sent for x in fs.requests(mode)]
        check(f"fault {mode}: {status}, {'chunked' if length is None else length}, 4 MiB read, then the server stops",
              (r.status, clen, chunked, got) == (status, length and str(length), length is None, 4 << 20)
              and len(sent) == 1 and sent[0] < 64 << 20, (r.status, clen, got, sent))
    st, h, _ = _get(fs.url("to", "ok/" + name))
    check("fault to/ok/NAME: 302 to /ok/NAME", (st, h.get("Location")) == (302, f"/ok/{name}"), (st, h))
    rc, out = _curl("-L", "-r", "0-99", fs.url("to", "ok/" + name))
    check("fault to/ok/NAME: curl -L -r 0-99 gets the bytes", (rc, out) == (0, data[:100]), rc)
    rc, out = _curl("-L", "-r", "0-99", "--max-time", "2", fs.url("endless302", name))
    check("fault endless302: curl -L reads its endless body: still at it after 2 s (28)", rc == 28, rc)
    for mode, rng, seconds, least, most in (("trickle", "0-99", 1.6, 3, 5), ("crawl", "0-99999", 1.1, 4096, 5120),
                                            ("trickledata", "0-99", 1.6, 3, 5)):
        rc, out = _curl("--max-time", str(seconds), "-r", rng, fs.url(mode, name))
        check(f"fault {mode} bytes={rng} for {seconds} s: {len(out)} bytes, the file's",
              rc == 28 and least <= len(out) <= most and out == data[:len(out)], (rc, len(out)))
    rc, out = _curl("--max-time", "2", "-r", f"{len(data) - 1000}-", fs.url("trickledata", name))
    check("fault trickledata: a range holding the file's last byte comes at once", (rc, out) == (0, data[-1000:]),
          (rc, len(out)))
    fs.tamper(name, 10, b"XYZ")
    changed = data[:10] + b"XYZ" + data[13:]
    got = [_curl("-r", rng, fs.url("tamper", name)) for rng in ("0-99", "11-20", "12-")]
    fs.untamper()
    check("fault tamper: bytes 10-12 sent as XYZ, in every range that holds them",
          got == [(0, changed[:100]), (0, changed[11:21]), (0, changed[12:])] and
          _curl(fs.url("tamper", name)) == (0, data), [(rc, len(out)) for rc, out in got])
    _check_malformed(fs, check, data, name)


def _raw(fs: FaultServer, path: str, seconds: float) -> bytes:
    """What the server sends to a GET of `path` (Range: bytes=0-99) within
    `seconds`, or until it closes."""
    port, got, end = int(fs.base_url.rsplit(":", 1)[1]), b"", time.monotonic() + seconds
    with socket.create_connection((HOST, port), timeout=seconds) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nRange: bytes=0-99\r\n\r\n".encode())
        try:
            while time.monotonic() < end and (chunk := s.recv(1 << 16)):
                got += chunk
        except TimeoutError:
            pass
    return got


def _check_malformed(fs: FaultServer, check: Callable[..., None], data: bytes, name: str) -> None:
    """The modes whose replies are no HTTP, read raw; overlong with curl."""
    got = _raw(fs, f"/nostatus/{name}", 2)
    check("fault nostatus: headers and a body, no status line", got.startswith(b"Content-Type: ")
          and b"HTTP/" not in got and got.endswith(b"\r\n\r\nhello"), got[:40])
    got = _raw(fs, f"/status2060/{name}", 2)
    check("fault status2060: status line HTTP/1.1 2060", got.startswith(b"HTTP/1.1 2060 Partial Content\r\n"), got[:40])
    got = _raw(fs, f"/longheader/{name}", 2)
    check("fault longheader: a 206 status line, then a header line of 100 KiB", got.startswith(b"HTTP/1.1 206 ")
          and max(len(line) for line in got.split(b"\r\n")) >= 100 << 10, len(got))
    got = _raw(fs, f"/slowheaders/{name}", 1.1)
    lines = got.split(b"\r\n")
    check(f"fault slowheaders: {len(lines) - 2} header lines in 1.1 s, no end of headers",
          lines[0].startswith(b"HTTP/1.1 206 ") and 3 <= len(lines) - 2 <= 7 and b"\r\n\r\n" not in got, got[:80])
    rc, out = _curl("-r", "0-99", fs.url("overlong", name))
    rc2, out2 = _curl("-r", "-100", fs.url("overlong", name))
    check("fault overlong: curl -r 0-99 gets the 100 bytes, then 18 (Content-Length 64 KiB more); a suffix range ok",
          (rc, out, rc2, out2) == (18, data[:100], 0, data[-100:]), (rc, len(out), rc2, len(out2)))


if __name__ == "__main__":
    sys.exit(selftest("servers", _servers))
