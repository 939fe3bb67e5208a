#!/usr/bin/python3
"""Transport bounds of the CLI (`onnxzip ls URL`, `fetch URL`) against
FaultServer's hostile replies (servers.py), over http:// (a query string
that must never be shown), behind a redirect (/to/..., as the Hugging Face
Hub's resolve URLs are followed) and as s3:// (FaultServer as the endpoint:
it takes any SigV4 signature, which libcurl computes): an endless 200 or 403
body, a server that ignores Range on an 8 GiB object (generated, never
stored), an endless redirect body, a reply trickling a byte every 0.5 s
(the tail; for a download, the first chunk), one crawling at 4 KiB/s. Each call must end within seconds with the right
status, its message naming the URL, after the server sent a bounded number
of bytes (FaultServer counts them; the sockets' buffers hold a few MiB).

    bounds.py --onnxzip EXE
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (its check() and counts)
from run import check  # noqa: E402
from servers import FaultServer  # noqa: E402

NAME = "f.onnxzip"
QUERY = "?X-Amz-Signature=SECRET-SIG"
SENT_MAX = 64 << 20  # bytes a server may have sent when the client gave up: socket buffers, not the body


class Via:
    """How a mode is reached: its URL as given, as messages must show it,
    and the environment of the call."""

    def __init__(self, kind: str, fs: FaultServer, home: str) -> None:
        self.kind, self.fs, self.env = kind, fs, dict(os.environ)
        if kind == "s3":  # no AWS setting of the caller's; credentials any signature of which FaultServer takes
            self.env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
            self.env.update(HOME=home, AWS_CONFIG_FILE=os.path.join(home, "config"),
                            AWS_SHARED_CREDENTIALS_FILE=os.path.join(home, "credentials"),
                            AWS_ACCESS_KEY_ID="AKIAIOSFODNN7EXAMPLE", AWS_REGION="us-east-1",
                            AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                            AWS_ENDPOINT_URL=fs.base_url, AWS_EC2_METADATA_DISABLED="true")

    def url(self, mode: str) -> tuple[str, str]:
        if self.kind == "s3":  # path-style on a custom endpoint: /BUCKET/KEY is /MODE/NAME
            return f"s3://{mode}/{NAME}", f"s3://{mode}/{NAME}"
        path = f"/to/{mode}/{NAME}" if self.kind == "redirect" else f"/{mode}/{NAME}"
        return self.fs.base_url + path + QUERY, self.fs.base_url + path + "?..."


def call(oz: str, via: Via, mode: str, *opts: str, cmd: str = "ls", out: str = "") -> tuple[int, str, float, int]:
    """Runs `onnxzip CMD URL OPTS`: exit status, stderr, seconds, body
    bytes FaultServer sent for `mode`."""
    via.fs.reset()
    url, _ = via.url(mode)
    argv = [oz, cmd, url, "--allow-http", *opts] + (["-o", out] if out else [])
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=via.env)
        rc, err = p.returncode, p.stderr.strip()
    except subprocess.TimeoutExpired:
        rc, err = -1, "did not end within 60 s"
    took = time.monotonic() - t0
    time.sleep(0.2)  # the handler sees the client go
    return rc, err, took, sum(r.sent for r in via.fs.requests(mode))


def bounded(oz: str, via: Via, mode: str, status: str, words: str, *opts: str, seconds: float,
            sent_max: int = SENT_MAX, cmd: str = "ls", out: str = "") -> None:
    """`onnxzip CMD` of `mode` via `via` fails with `status` within
    `seconds`, its message naming the URL (no query) and holding `words`,
    the server having sent at most `sent_max` body bytes."""
    rc, err, took, sent = call(oz, via, mode, *opts, cmd=cmd, out=out)
    _, shown = via.url(mode)
    check(f"{cmd} {via.kind} {mode}: {status} in {took:.1f} s (< {seconds:g}), {sent} bytes sent (<= {sent_max})",
          rc == 1 and err.endswith(f"[{status}]") and took < seconds and sent <= sent_max and shown in err
          and words in err and "SECRET" not in err, f"exit {rc}: {err[:300]}")


def ignored_ranges(oz: str, via: Via) -> None:
    """Replies judged by status and headers: none read to its end."""
    fast = ("--retries", "0")
    bounded(oz, via, "endless200", "ONNXZIP_ENORANGE", "status 200", *fast, seconds=5)
    bounded(oz, via, "huge200", "ONNXZIP_ENORANGE", "status 200", *fast, seconds=5)
    bounded(oz, via, "endless403", "ONNXZIP_EHTTP", "HTTP status 403", *fast, seconds=5)
    # retried error replies: each cut as soon as judged
    bounded(oz, via, "endless200", "ONNXZIP_ENORANGE", "status 200", "--retries", "3", seconds=5)


def slow_replies(oz: str, via: Via, out: str) -> None:
    """The low-speed rule and the request deadline, with small values."""
    slow = ("--low-speed-limit", "1K", "--low-speed-time", "1500")
    bounded(oz, via, "trickle", "ONNXZIP_ETIMEOUT", "under the low-speed limit of 1024 bytes/s", *slow, "--retries",
            "0", seconds=4, sent_max=64)
    # (retries + 1) windows and the backoff between them (0.25 s)
    bounded(oz, via, "trickle", "ONNXZIP_ETIMEOUT", "(attempt 2)", *slow, "--retries", "1", seconds=6, sent_max=64)
    # 4 KiB/s keeps the low-speed rule; the 64 KiB tail would take 16 s: the deadline cuts it
    bounded(oz, via, "crawl", "ONNXZIP_ETIMEOUT", "the request deadline", *slow, "--request-timeout", "1500",
            "--retries", "0", seconds=4, sent_max=32 << 10)
    rc, err, took, _ = call(oz, via, "trickle", *slow, "--retries", "0", "--timeout", "700")
    check(f"ls {via.kind} trickle --timeout 700: a byte every 0.5 s is no stall: the low-speed rule ends it "
          f"({took:.1f} s)", rc == 1 and "low-speed" in err and 1.4 < took < 4, err[:300])
    # a download: the end and the model come at once, the chunks before it trickle; the part is kept for resuming
    bounded(oz, via, "trickledata", "ONNXZIP_ETIMEOUT", "kept in", *slow, "--retries", "0", "--chunk-size", "512K",
            seconds=4, sent_max=128 << 10, cmd="fetch", out=out)


def archive(oz: str, tmp: str, out: str) -> None:
    """A 1 MiB initializer in an archive packed by the CLI."""
    w = numpy_helper.from_array(np.arange(1 << 18, dtype=np.float32), "w")
    graph = helper.make_graph([helper.make_node("Add", ["w", "x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 18])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 18])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, os.path.join(tmp, "m.onnx"))
    subprocess.run([oz, "pack", os.path.join(tmp, "m.onnx"), "-o", out], check=True, timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnxzip", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="oz-bounds-") as tmp:
        docroot, home = os.path.join(tmp, "www"), os.path.join(tmp, "home")
        os.mkdir(docroot)
        os.mkdir(home)
        archive(a.onnxzip, tmp, os.path.join(docroot, NAME))
        with FaultServer(docroot) as fs:
            for kind in ("http", "redirect", "s3"):
                via = Via(kind, fs, home)
                ignored_ranges(a.onnxzip, via)
                slow_replies(a.onnxzip, via, os.path.join(tmp, f"out-{kind}.onnxzip"))
            via = Via("http", fs, home)
            bounded(a.onnxzip, via, "endless302", "ONNXZIP_EREPLY", "a redirect (status 302)", "--retries", "0",
                    seconds=5)
    print(f"remote bounds: {run.passed} passed, {run.failed} failed")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
