#!/usr/bin/python3
"""Many-connection fetch benchmark: `onnxzip fetch` of a 1 GiB archive over
loopback against peers measured in the same run.

Usage:
    /usr/bin/python3 tools/bench/bench_fetch.py --build BUILD_DIR [--size 1G]
        [--rate 25m] [--sweep full|quick|none] [--versitygw EXE]
        [--workdir /dev/shm/onnxzip-bench-fetch]

Generates an LLM-like fp16 model with bench.py's generator (onnx, numpy),
packs it with BUILD_DIR's CLI and serves it (a) by nginx with `limit_rate
RATE` per request (/capped/: an object store's per-connection cap), (b) by
nginx uncapped (/files/), (c) by versitygw, a real S3 server (the object put
through its S3 API with curl and a SigV4-presigned URL). Needs nginx, curl,
aria2c (`apt-get install -y aria2`) and versitygw (tests/remote/versitygw.sh
BUILD_DIR/versitygw builds it, as tests/run.sh does; or --versitygw EXE).

  F1 capped      onnxzip fetch (its default connections, 8 and 16) against
                 `aria2c -x16 -s16` and against the aggregate cap: N
                 connections x RATE (the best any client could do with N;
                 one connection's rate as curl sees it is shown too);
                 target >= 0.9x aria2c at the default
  F2 uncapped    onnxzip fetch against `curl -o`; target >= 0.9x curl
  F3 s3          onnxzip fetch s3://BUCKET/KEY (AWS_* variables naming the
                 server; the presigned http:// URL while the CLI has no s3://)
                 against aria2c -x16 -s16 on a presigned URL
  F4 shards      four processes at once, each `fetch --tensors` of a quarter
                 of the layers (the first also the embedding, the last the
                 final norm and lm_head: together every tensor), on (b) and
                 (a): bytes nginx sent ($bytes_sent) against the archive's
                 size (target <= 1.01x), wall time against one whole fetch
  F5 sweep       --connections x --chunk-size on (a) and (b), one run each
                 (full: 1-32 connections x 1-32 MiB; quick: fewer)

Times are medians of 3 runs, alternated between the clients; every output
goes to WORKDIR (tmpfs by default, so that the disk is not what is measured)
and is checked against the archive's size.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import hmac
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "remote"))
import bench  # noqa: E402  (the model generator)
from s3 import VersityGW, versitygw_binary  # noqa: E402
from servers import Nginx  # noqa: E402

BUCKET = "bench"
ARIA = ["aria2c", "-x16", "-s16", "-q", "--allow-overwrite=true", "--auto-file-renaming=false",
        "--file-allocation=falloc"]
MiB = 2**20
rows: list[tuple[str, ...]] = []


def row(*cells: str) -> None:
    rows.append(cells)
    print("  " + " | ".join(cells), file=sys.stderr)


def need(exe: str, how: str) -> str:
    path = shutil.which(exe)
    if not path:
        sys.exit(f"bench_fetch: {exe} not found; install it: {how}")
    return path


class Cli:
    """BUILD_DIR's onnxzip and what its fetch offers (today's --parallel, or
    --connections and --chunk-size; s3:// URLs)."""

    def __init__(self, build: str) -> None:
        self.exe = os.path.join(os.path.abspath(build), "tools", "onnxzip")
        text = subprocess.run([self.exe, "fetch", "--help"], capture_output=True, text=True).stdout
        self.conn_opt = "--connections" if "--connections" in text else "--parallel"
        self.chunks = "--chunk-size" in text
        self.s3 = "s3://" in text
        m = re.search(self.conn_opt + r" N\b[^\n]*?\((\d+)", text)
        c = re.search(r"--chunk-size \S+[^\n]*?\((\d+) ?(MiB|M)", text)
        self.default_conns = int(m[1]) if m else 0
        self.default_chunk = int(c[1]) if c else 0

    def fetch(self, url: str, out: str, conns: int = 0, chunk_mib: int = 0, extra: tuple = ()) -> list[str]:
        argv = [self.exe, "fetch", "-q", "--allow-http", url, "-o", out, *extra]
        if conns:
            argv += [self.conn_opt, str(conns)]
        if chunk_mib:
            argv += ["--chunk-size", f"{chunk_mib}M"]
        return argv


def clean(out: str) -> None:
    for p in (out, out + ".part", out + ".part.etag", out + ".aria2"):
        if os.path.exists(p):
            os.unlink(p)


Run = tuple[list[str], Optional[dict[str, str]]]  # argv, environment (None: this one)


def timed(argv: list[str], out: str, size: int, env: Optional[dict[str, str]] = None) -> float:
    clean(out)
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    took = time.perf_counter() - t
    if os.path.getsize(out) != size:
        sys.exit(f"bench_fetch: {argv[0]} wrote {os.path.getsize(out)} bytes, not {size}")
    clean(out)
    return took


def medians(runs: dict[str, Run], out: str, size: int, reps: int = 3) -> dict[str, float]:
    """Median seconds of each client, runs alternated so that all see the
    same machine load."""
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(reps):
        for k, (argv, env) in runs.items():
            times[k].append(timed(argv, out, size, env))
    return {k: statistics.median(v) for k, v in times.items()}


def speed(size: int, s: float) -> str:
    return f"{s:.2f} s ({size / s / MiB:.0f} MiB/s)"


def verdict(ratio: float, target: float, above: bool = True) -> str:
    ok = ratio >= target if above else ratio <= target
    return "PASS" if ok else f"FAIL ({'<' if above else '>'} {target})"


def nginx_rate(rate: str) -> int:
    """Bytes/s of an nginx rate ("25m": MiB/s)."""
    return int(rate.rstrip("km")) << {"k": 10, "m": 20}.get(rate[-1], 0)


def capped_rate(url: str, workdir: str) -> float:
    """Bytes/s of one connection on /capped/: 64 MiB with curl."""
    out = os.path.join(workdir, "rate.bin")
    t = time.perf_counter()
    subprocess.run(["curl", "-sS", "-r", f"0-{64 * MiB - 1}", "-o", out, url], check=True)
    took = time.perf_counter() - t
    os.unlink(out)
    return 64 * MiB / took


def f1_capped(cli: Cli, ng: Nginx, name: str, size: int, workdir: str) -> None:
    url, out = ng.url("capped", name), os.path.join(workdir, "out.onnxzip")
    rate = nginx_rate(ng.capped_rate)
    row("F1 capped: one connection", f"curl -r 0-64M: {capped_rate(url, workdir) / MiB:.1f} MiB/s",
        f"limit_rate {ng.capped_rate}", "-", "-")
    counts = [cli.default_conns] + [n for n in (8, 16) if n != cli.default_conns]
    runs: dict[str, Run] = {str(n): (cli.fetch(url, out, n), None) for n in counts}
    runs["aria"] = (ARIA + ["-d", workdir, "-o", "out.onnxzip", url], None)
    m = medians(runs, out, size)
    for n in counts:
        t, cap, default = m[str(n)], size / (n * rate), n == cli.default_conns
        row(f"F1 capped: fetch, {n} connections" + (" (default)" if default else ""), speed(size, t),
            f"aria2c -x16 -s16 {speed(size, m['aria'])}", f"{m['aria'] / t:.2f}x aria2c",
            verdict(m["aria"] / t, 0.9) if default else "-")
        row(f"F1 capped: fetch, {n} connections, against the cap", speed(size, t),
            f"{n} x {rate / MiB:.0f} MiB/s: {speed(size, cap)}", f"{cap / t:.2f}x the cap", "-")


def f2_uncapped(cli: Cli, ng: Nginx, name: str, size: int, workdir: str) -> float:
    url, out = ng.url("files", name), os.path.join(workdir, "out.onnxzip")
    m = medians({"curl": (["curl", "-sS", "-o", out, url], None), "oz": (cli.fetch(url, out), None)}, out, size)
    r = m["curl"] / m["oz"]
    row(f"F2 uncapped: fetch, {cli.default_conns} connections (default)", speed(size, m["oz"]),
        f"curl -o {speed(size, m['curl'])}", f"{r:.2f}x curl", verdict(r, 0.9))
    return m["oz"]


def presign(gw: VersityGW, method: str, path: str, expires: int = 3600) -> str:
    """A SigV4 query-string URL of gw's root account (what boto3's
    generate_presigned_url makes), so that curl and aria2c need no client."""
    host = urllib.parse.urlsplit(gw.endpoint).netloc
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    scope = f"{day}/{gw.region}/s3/aws4_request"
    q = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{gw.access}/{scope}",
         "X-Amz-Date": stamp, "X-Amz-Expires": str(expires), "X-Amz-SignedHeaders": "host"}
    query = "&".join(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
                     for k, v in sorted(q.items()))
    cpath = urllib.parse.quote(path, safe="/-_.~")
    creq = f"{method}\n{cpath}\n{query}\nhost:{host}\n\nhost\nUNSIGNED-PAYLOAD"
    sts = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{hashlib.sha256(creq.encode()).hexdigest()}"
    key = ("AWS4" + gw.secret).encode()
    for part in (day, gw.region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return f"{gw.endpoint}{cpath}?{query}&X-Amz-Signature={hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()}"


def put(gw: VersityGW, path: str, key: str) -> None:
    """Creates BUCKET and puts `path` as `key` through the S3 API (curl)."""
    subprocess.run(["curl", "-sS", "--fail", "-X", "PUT", presign(gw, "PUT", f"/{BUCKET}")],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["curl", "-sS", "--fail", "-T", path, presign(gw, "PUT", f"/{BUCKET}/{key}")],
                   check=True, stdout=subprocess.DEVNULL)


def find_versitygw(given: str | None, build: str) -> str:
    """--versitygw, $ONNXZIP_VERSITYGW, BUILD's copy (tests/remote/versitygw.sh),
    the per-user cache, PATH; else exits saying how to build it."""
    for path in (given, versitygw_binary(), os.path.join(build, "versitygw", "bin", "versitygw"),
                 os.path.expanduser("~/.cache/onnxzip/versitygw-v1.8.0/bin/versitygw"), shutil.which("versitygw")):
        if path and os.access(path, os.X_OK):
            return path
    sys.exit(f"bench_fetch: versitygw not found; build it: tests/remote/versitygw.sh {build}/versitygw "
             "(Go from .ci/install-deps --go), or pass --versitygw EXE")


def f3_s3(cli: Cli, vgw_exe: str, archive: str, size: int, workdir: str) -> None:
    out, name = os.path.join(workdir, "out.onnxzip"), os.path.basename(archive)
    with VersityGW(vgw_exe, workdir=workdir) as gw:
        put(gw, archive, name)
        signed = presign(gw, "GET", f"/{BUCKET}/{name}")
        if cli.s3:
            env = dict(os.environ, AWS_ACCESS_KEY_ID=gw.access, AWS_SECRET_ACCESS_KEY=gw.secret,
                       AWS_REGION=gw.region, AWS_ENDPOINT_URL=gw.endpoint)
            for k in ("AWS_PROFILE", "AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN"):  # they would win
                env.pop(k, None)
            ours: Run = (cli.fetch(f"s3://{BUCKET}/{name}", out), env)
            how = f"s3://{BUCKET}/{name}"
        else:
            ours, how = (cli.fetch(signed, out), None), "presigned URL"
        m = medians({"aria": (ARIA + ["-d", workdir, "-o", "out.onnxzip", signed], None), "oz": ours}, out, size)
    r = m["aria"] / m["oz"]
    row(f"F3 versitygw: fetch {how}, {cli.default_conns} connections", speed(size, m["oz"]),
        f"aria2c -x16 -s16 {speed(size, m['aria'])}", f"{r:.2f}x aria2c", verdict(r, 0.9))


def quarters(layers: int) -> list[list[str]]:
    out = []
    for q in range(4):
        pats = [f"model.layers.{i}.*" for i in range(q * layers // 4, (q + 1) * layers // 4)]
        out.append(pats + (["model.embed_tokens.weight"] if q == 0 else [])
                   + (["model.norm.weight", "lm_head.weight"] if q == 3 else []))
    return out


def f4_shards(cli: Cli, ng: Nginx, location: str, name: str, size: int, layers: int, workdir: str,
              whole: float) -> None:
    url = ng.url(location, name)
    procs_argv = []
    for q, pats in enumerate(quarters(layers)):
        out = os.path.join(workdir, f"part_{q}.onnxzip")
        clean(out)
        procs_argv.append(cli.fetch(url, out, extra=tuple(a for p in pats for a in ("--tensors", p))))
    before = len(ng.requests())
    t = time.perf_counter()
    procs = [subprocess.Popen(a, stdout=subprocess.DEVNULL) for a in procs_argv]
    if any(p.wait() for p in procs):
        sys.exit("bench_fetch: a --tensors fetch failed")
    wall = time.perf_counter() - t
    log = ng.requests(wait_for=before + 1)[before:]
    sent = sum(e["sent"] for e in log)
    for q in range(4):
        clean(os.path.join(workdir, f"part_{q}.onnxzip"))
    row(f"F4 shards on /{location}/: 4 x fetch --tensors (1/4 of the layers)", f"{sent / MiB:.1f} MiB sent in "
        f"{len(log)} requests", f"archive {size / MiB:.1f} MiB", f"{sent / size:.4f}x the archive",
        verdict(sent / size, 1.01, above=False))
    row(f"F4 shards on /{location}/: wall time", f"{wall:.2f} s", f"one whole fetch {whole:.2f} s",
        f"{wall / whole:.2f}x its time", "-")


def f5_sweep(cli: Cli, ng: Nginx, name: str, size: int, workdir: str, mode: str) -> list[str]:
    out = os.path.join(workdir, "out.onnxzip")
    chunks = [1, 4, 8, 16, 32] if cli.chunks else [0]
    if mode == "quick":
        chunks = [c for c in chunks if c in (0, 4, 8, 16)]
    lines = []
    for location, conns in (("files", [1, 2, 4, 8, 16, 32]), ("capped", [4, 8, 16, 32])):
        if mode == "quick":
            conns = [c for c in conns if c in (4, 8, 16)]
        url = ng.url(location, name)
        head = f"{'/' + location + '/':>10} MiB/s" + "".join(f"{(str(c) + ' MiB') if c else 'default':>10}"
                                                            for c in chunks)
        lines.append(head)
        for n in conns:
            cells = []
            for c in chunks:
                s = timed(cli.fetch(url, out, n, c), out, size)
                cells.append(f"{size / s / MiB:10.0f}")
            lines.append(f"{n:>4} connections " + "".join(cells))
            print("  " + lines[-1], file=sys.stderr)
    return lines


def source_commit(build: str) -> str:
    """The commit BUILD was configured from: its source tree's HEAD (+dirty
    when tracked files differ), or the COMMIT file of an exported tree."""
    import json
    try:
        with open(os.path.join(build, "meson-info", "meson-info.json")) as f:
            src = json.load(f)["directories"]["source"]
    except (OSError, KeyError, ValueError):
        return "commit unknown"
    git = ["git", "-C", src]
    rev = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if rev and os.path.samefile(subprocess.run(git + ["rev-parse", "--show-toplevel"], capture_output=True,
                                               text=True).stdout.strip() or "/", src):
        dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    try:
        with open(os.path.join(src, "COMMIT")) as f:
            return f.read().strip()[:12]
    except OSError:
        return "commit unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="meson build directory of this repository")
    ap.add_argument("--size", default="1G", help="payload of the generated model (1G)")
    ap.add_argument("--rate", default="25m", help="nginx limit_rate of /capped/, per request (25m)")
    ap.add_argument("--sweep", choices=("full", "quick", "none"), default="full")
    ap.add_argument("--versitygw", help="versitygw executable (default: on PATH)")
    ap.add_argument("--workdir", default="/dev/shm/onnxzip-bench-fetch")
    a = ap.parse_args()
    for exe, how in (("nginx", "apt-get install -y nginx-light"), ("curl", "apt-get install -y curl"),
                     ("aria2c", "apt-get install -y aria2")):
        need(exe, how)
    vgw = find_versitygw(a.versitygw, a.build)
    cli = Cli(a.build)
    size, ntensors = bench.parse_size(a.size), 291  # 32 layers of 9 tensors, embedding, norm, lm_head
    docroot = os.path.join(a.workdir, "www")
    os.makedirs(docroot, exist_ok=True)
    model = bench.generate(os.path.join(a.workdir, "gen"), size, ntensors, "float16")
    name = f"m-{size >> 20}M.onnxzip"
    archive = os.path.join(docroot, name)
    if not os.path.exists(archive):
        subprocess.run([cli.exe, "pack", "-q", "--no-sync", model, "-o", archive], check=True)
    asize = os.path.getsize(archive)
    work = tempfile.mkdtemp(prefix="run-", dir=a.workdir)
    sweep: list[str] = []
    try:
        with Nginx(docroot, capped_rate=a.rate) as ng:
            f1_capped(cli, ng, name, asize, work)
            whole = f2_uncapped(cli, ng, name, asize, work)
            f3_s3(cli, vgw, archive, asize, work)
            f4_shards(cli, ng, "files", name, asize, 32, work, whole)
            whole_capped = timed(cli.fetch(ng.url("capped", name), os.path.join(work, "o")), os.path.join(work, "o"),
                                 asize)
            f4_shards(cli, ng, "capped", name, asize, 32, work, whole_capped)
            if a.sweep != "none":
                sweep = f5_sweep(cli, ng, name, asize, work, a.sweep)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"onnxzip fetch benchmark ({source_commit(a.build)}): {name} ({asize} bytes), nginx and versitygw on "
          f"loopback, /capped/ limit_rate {a.rate} per connection; defaults {cli.default_conns} connections"
          + (f" x {cli.default_chunk} MiB chunks" if cli.default_chunk else "") + f"; {bench.machine_line()}")
    table = [("phase", "onnxzip", "peer", "ratio", "")] + rows
    w = [max(len(r[i]) for r in table) for i in range(5)]
    for r in table:
        print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
    if sweep:
        print("\nsweep: MiB/s of one fetch per cell (connections x chunk size)")
        print("\n".join(sweep))
    return 0 if all(not r[4].startswith("FAIL") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
