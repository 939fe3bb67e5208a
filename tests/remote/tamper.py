#!/usr/bin/python3
"""Bytes changed in transit (issue 35, point 0): the fault server's `tamper`
mode sends other bytes in place of an entry's, keeping every size, header
and the protobuf well-formed: another model's bytes, one letter of a tensor
name in a model, a plain file's bytes swapped for another's, one byte of a
tensor or of a single-model archive's __MODEL_PROTO. Every remote command
that uses or writes those bytes must fail, naming the URL (never its query),
the entry and what mismatched, and write nothing: `ls URL [--model]`,
`fetch --model`, `fetch --tensors`, `fetch`, `extract URL --file` (to a file
and to standard output), `extract URL TENSOR`, `verify URL`. The same
commands over the untouched bytes succeed (the outputs compared with
Python's zipfile reading the local file). Where the changed bytes lie is
found by zipfile too, never by onnxzip.

Also (point 0, ELOCAL): a package whose local header names another entry is
refused by `ls URL` as by `ls FILE`.

    tamper.py --onnxzip EXE
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (its check() and counts)
from run import check  # noqa: E402
from servers import FaultServer  # noqa: E402

QUERY = "?X-Amz-Signature=tamper-secret"
BIG = (64 << 20) + 4096 * 3 + 5  # big.bin: streamed by extract --file in two windows,
WINDOWS = ("--connections", "4", "--chunk-size", "2M")  # of 64 MiB (source_read.c: oz_spans_window)


def model(path: str, inits: dict[str, np.ndarray]) -> None:
    """A valid model adding its initializers to x."""
    nodes, last = [], "x"
    for i, name in enumerate(inits):
        nodes.append(helper.make_node("Add", [last, name], [f"y{i}"]))
        last = f"y{i}"
    n = len(next(iter(inits.values())))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info(last, TensorProto.FLOAT, [n])],
                          [numpy_helper.from_array(a, k) for k, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 6
    save(m, path)


def make_fixtures(oz: str, tmp: str, docroot: str) -> None:
    """pkg.onnxzip: models a/ and b/ of the same size (one 16 KiB weight each,
    'wa' and 'wb'), c/ whose protobuf of inline weights (> 64 KiB) pushes a/
    and b/ out of the first request's 64 KiB tail, files config.json and
    vocab.txt of the same size. small.onnxzip: a package wholly in that
    tail. big.onnxzip: a/ and big.bin, of zeros, more than a window. single.onnxzip: a single-model archive."""
    rng = np.random.default_rng(35)
    repo = os.path.join(tmp, "repo")
    for d in ("a", "b", "c"):
        os.makedirs(os.path.join(repo, d))
    model(os.path.join(repo, "a", "model.onnx"), {"wa": rng.standard_normal(4096).astype(np.float32)})
    model(os.path.join(repo, "b", "model.onnx"), {"wb": rng.standard_normal(4096).astype(np.float32)})
    model(os.path.join(repo, "c", "model.onnx"),
          {f"c{i:04d}": rng.standard_normal(4).astype(np.float32) for i in range(2500)})
    with open(os.path.join(repo, "config.json"), "w") as f:
        f.write('{"model_type": "bert"}\n')
    with open(os.path.join(repo, "vocab.txt"), "w") as f:
        f.write('{"model_type": "gpt2"}\n')
    pack = [oz, "pack", "-q", "--no-sync"]
    subprocess.run(pack + [repo, "-o", os.path.join(docroot, "pkg.onnxzip")], check=True)
    shutil.rmtree(os.path.join(repo, "c"))
    subprocess.run(pack + [repo, "-o", os.path.join(docroot, "small.onnxzip")], check=True)
    big = os.path.join(tmp, "bigrepo")
    os.makedirs(big)
    shutil.copytree(os.path.join(repo, "a"), os.path.join(big, "a"))
    with open(os.path.join(big, "big.bin"), "wb") as f:  # more than extract's 64 MiB window
        f.truncate(BIG)
    subprocess.run(pack + [big, "-o", os.path.join(docroot, "big.onnxzip")], check=True)
    model(os.path.join(tmp, "single.onnx"), {"w": rng.standard_normal(4096).astype(np.float32)})
    subprocess.run(pack + [os.path.join(tmp, "single.onnx"), "-o", os.path.join(docroot, "single.onnxzip")],
                   check=True)


def data_offset(path: str, entry: str) -> tuple[int, bytes]:
    """Where `entry`'s data begins in the zip at `path`, and its bytes (zipfile)."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(entry)
        data = z.read(entry)
    with open(path, "rb") as f:
        f.seek(info.header_offset + 26)
        lens = f.read(4)
    return info.header_offset + 30 + int.from_bytes(lens[:2], "little") + int.from_bytes(lens[2:], "little"), data


def letter_changed(data: bytes, old: bytes, new: bytes) -> tuple[int, bytes]:
    """(offset within data, bytes) that turn the first `old` into `new`."""
    at = data.index(old)
    return at, new


def run_cli(oz: str, *args: str, stdout_bytes: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([oz, *args], capture_output=True, text=not stdout_bytes, timeout=120)


def refused(what: str, r: subprocess.CompletedProcess, url: str, entry: str, outdir: str,
            stdout_empty: bool = False) -> None:
    """Exit 1, ONNXZIP_ECRC or ONNXZIP_EDIGEST naming the URL without its
    query and the entry, nothing in outdir (no output, no temporary file)."""
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode(errors="replace")
    left = os.listdir(outdir)
    ok = (r.returncode == 1 and ("ONNXZIP_ECRC" in err or "ONNXZIP_EDIGEST" in err) and
          url.split("?")[0] in err and "tamper-secret" not in err and f"'{entry}'" in err and not left and
          (not stdout_empty or not r.stdout))
    check(f"{what}: refused (CRC-32/XXH3 of '{entry}'), nothing written", ok,
          f"rc={r.returncode} left={left} stdout={len(r.stdout or '')} stderr={err.strip()[-400:]}")
    for n in left:
        os.remove(os.path.join(outdir, n))


def commands_refuse(oz: str, fs: FaultServer, name: str, model: str | None, entry: str, out: str,
                    cmds: list[str], extra: tuple[str, ...] = ()) -> None:
    """The commands `cmds` over /tamper/NAME (its changes set), each refused."""
    url = fs.url("tamper", name) + QUERY
    net = ["--allow-http", "--retries", "1", *extra]
    m = ["--model", model] if model else []
    o = os.path.join(out, "o.onnxzip")
    for cmd in cmds:
        if cmd == "ls":
            refused(f"ls URL {' '.join(m)} ({name})", run_cli(oz, "ls", *net, url, *m), url, entry, out)
        elif cmd == "fetch_model":
            refused(f"fetch --model {model} ({name})", run_cli(oz, "fetch", *net, url, *m, "-o", o, "-q"), url,
                    entry, out)
        elif cmd == "fetch":
            refused(f"fetch URL ({name})", run_cli(oz, "fetch", *net, url, "-o", o, "-q"), url, entry, out)
        elif cmd.startswith("fetch_tensors:"):
            pat = cmd.split(":", 1)[1]
            refused(f"fetch --tensors {pat} ({name})",
                    run_cli(oz, "fetch", *net, url, *m, "--tensors", pat, "-o", o, "-q"), url, entry, out)
        elif cmd.startswith("file:"):
            f = cmd.split(":", 1)[1]
            refused(f"extract URL --file {f} -o FILE ({name})",
                    run_cli(oz, "extract", *net, url, "--file", f, "-o", os.path.join(out, "f"), "-q"), url, entry,
                    out)
            refused(f"extract URL --file {f} to stdout ({name})",
                    run_cli(oz, "extract", *net, url, "--file", f, stdout_bytes=True), url, entry, out,
                    stdout_empty=True)
        elif cmd.startswith("tensor:"):
            t = cmd.split(":", 1)[1]
            refused(f"extract URL {t} -o FILE ({name})",
                    run_cli(oz, "extract", *net, url, *m, t, "-o", os.path.join(out, "t"), "-q"), url, entry, out)
            refused(f"extract URL {t} -o - ({name})",
                    run_cli(oz, "extract", *net, url, *m, t, "-o", "-", stdout_bytes=True), url, entry, out,
                    stdout_empty=True)
        elif cmd == "verify":
            refused(f"verify URL ({name})", run_cli(oz, "verify", *net, url), url, entry, out)


def untouched(oz: str, fs: FaultServer, docroot: str, out: str) -> None:
    """The same commands over the same server, nothing changed: they pass."""
    net = ["--allow-http"]
    pkg, single = fs.url("tamper", "pkg.onnxzip"), fs.url("tamper", "single.onnxzip")
    with zipfile.ZipFile(os.path.join(docroot, "pkg.onnxzip")) as z:
        local = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(os.path.join(docroot, "single.onnxzip")) as z:
        w = z.read("w")
    o = os.path.join(out, "o.onnxzip")
    results = [
        ("ls URL --model a/model.onnx", run_cli(oz, "ls", *net, pkg, "--model", "a/model.onnx"), None),
        ("ls URL (single)", run_cli(oz, "ls", *net, single), None),
        ("verify URL", run_cli(oz, "verify", *net, pkg), None),
    ]
    r = run_cli(oz, "fetch", *net, pkg, "--model", "a/model.onnx", "-o", o, "-q")
    with zipfile.ZipFile(o) if r.returncode == 0 else open(os.devnull) as z:
        same = r.returncode == 0 and z.read("__MODEL_PROTO") == local["a/model.onnx"]
    results.append(("fetch --model a/model.onnx: the model's bytes", r, same))
    os.remove(o) if os.path.exists(o) else None
    r = run_cli(oz, "fetch", *net, single, "--tensors", "w", "-o", o, "-q")
    results.append(("fetch --tensors w (single)", r, None))
    os.remove(o) if os.path.exists(o) else None
    r = run_cli(oz, "extract", *net, pkg, "--file", "config.json", stdout_bytes=True)
    results.append(("extract URL --file config.json", r, r.stdout == local["config.json"]))
    r = run_cli(oz, "extract", *net, single, "w", "-o", os.path.join(out, "t"), "-q")
    with open(os.path.join(out, "t"), "rb") if r.returncode == 0 else open(os.devnull, "rb") as f:
        results.append(("extract URL w -o FILE", r, f.read() == w))
    for what, r, same in results:
        err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode(errors="replace")
        check(f"untouched: {what}", r.returncode == 0 and same is not False, err.strip()[-300:])
    for n in os.listdir(out):
        os.remove(os.path.join(out, n))


def tampered(oz: str, fs: FaultServer, docroot: str, out: str) -> None:
    pkg, small, single = (os.path.join(docroot, n) for n in ("pkg.onnxzip", "small.onnxzip", "single.onnxzip"))
    a_off, a = data_offset(pkg, "a/model.onnx")
    _, b = data_offset(pkg, "b/model.onnx")
    assert len(a) == len(b) and a != b
    assert os.path.getsize(pkg) - a_off > 65536 + 22, "a/model.onnx must lie before the first request's tail"

    # another model's bytes in place of a/model.onnx's (read by itself, before the tail)
    fs.untamper()
    fs.tamper("pkg.onnxzip", a_off, b)
    commands_refuse(oz, fs, "pkg.onnxzip", "a/model.onnx", "a/model.onnx", out,
                    ["ls", "fetch_model", "fetch_tensors:w*", "file:a/model.onnx", "verify"])

    # one letter of a tensor's name in a/model.onnx: the protobuf stays well-formed
    fs.untamper()
    at, new = letter_changed(a, b"wa", b"wz")
    fs.tamper("pkg.onnxzip", a_off + at, new)
    commands_refuse(oz, fs, "pkg.onnxzip", "a/model.onnx", "a/model.onnx", out,
                    ["ls", "fetch_model", "fetch_tensors:w*"])

    # the same in a package wholly in the first request's tail
    s_off, sa = data_offset(small, "a/model.onnx")
    fs.untamper()
    at, new = letter_changed(sa, b"wa", b"wz")
    fs.tamper("small.onnxzip", s_off + at, new)
    commands_refuse(oz, fs, "small.onnxzip", "a/model.onnx", "a/model.onnx", out, ["ls", "fetch_model"])

    # a plain file's bytes swapped for another's of the same size; one letter of it
    c_off, c = data_offset(pkg, "config.json")
    _, v = data_offset(pkg, "vocab.txt")
    assert len(c) == len(v)
    fs.untamper()
    fs.tamper("pkg.onnxzip", c_off, v)
    commands_refuse(oz, fs, "pkg.onnxzip", None, "config.json", out, ["file:config.json"])
    fs.untamper()
    fs.tamper("pkg.onnxzip", c_off + c.index(b"bert"), b"Bert")
    commands_refuse(oz, fs, "pkg.onnxzip", None, "config.json", out, ["file:config.json"])

    # the last byte of a file that extract --file streams in two windows: the first is written before
    # the change arrives; the output must not stay
    big = os.path.join(docroot, "big.onnxzip")
    g_off, _ = data_offset(big, "big.bin")
    fs.untamper()
    fs.tamper("big.onnxzip", g_off + BIG - 1, b"\x01")
    commands_refuse(oz, fs, "big.onnxzip", None, "big.bin", out, ["file:big.bin"], WINDOWS)
    fs.untamper()
    r = run_cli(oz, "extract", "--allow-http", *WINDOWS, fs.url("tamper", "big.onnxzip"), "--file", "big.bin",
                "-o", os.path.join(out, "big"), "-q")
    zeros = 0
    with open(os.path.join(out, "big") if r.returncode == 0 else os.devnull, "rb") as f:
        while chunk := f.read(1 << 24):
            zeros += chunk.count(0)
    check("untouched: extract URL --file big.bin (two windows): its bytes", r.returncode == 0 and zeros == BIG,
          r.stderr)
    os.remove(os.path.join(out, "big")) if r.returncode == 0 else None

    # one byte of a tensor entry
    t_off, t = data_offset(pkg, "a/wa")
    fs.untamper()
    fs.tamper("pkg.onnxzip", t_off + 100, bytes([t[100] ^ 0x20]))
    commands_refuse(oz, fs, "pkg.onnxzip", "a/model.onnx", "a/wa", out,
                    ["tensor:wa", "fetch_tensors:wa", "fetch_model"])

    # a single-model archive: one byte of __MODEL_PROTO, then one of its tensor
    m_off, m = data_offset(single, "__MODEL_PROTO")
    fs.untamper()
    fs.tamper("single.onnxzip", m_off + m.index(b"w"), b"v")
    commands_refuse(oz, fs, "single.onnxzip", None, "__MODEL_PROTO", out,
                    ["ls", "fetch_tensors:*", "tensor:w", "fetch"])
    w_off, w = data_offset(single, "w")
    fs.untamper()
    fs.tamper("single.onnxzip", w_off + 7, bytes([w[7] ^ 1]))
    commands_refuse(oz, fs, "single.onnxzip", None, "w", out, ["tensor:w", "fetch_tensors:w", "verify"])
    fs.untamper()


def local_header_names_another(oz: str, fs: FaultServer, docroot: str) -> None:
    """ELOCAL: config.json's local header names 'donfig.json'."""
    bad = os.path.join(docroot, "elocal.onnxzip")
    shutil.copy(os.path.join(docroot, "small.onnxzip"), bad)
    with zipfile.ZipFile(bad) as z:
        info = z.getinfo("config.json")
    with open(bad, "r+b") as f:
        f.seek(info.header_offset + 30)
        assert f.read(1) == b"c"
        f.seek(-1, 1)
        f.write(b"d")
    local = run_cli(oz, "ls", bad)
    remote = run_cli(oz, "ls", "--allow-http", fs.url("ok", "elocal.onnxzip"))
    check("ls FILE refuses a local header naming another entry (ONNXZIP_ELOCAL)",
          local.returncode == 1 and "ONNXZIP_ELOCAL" in local.stderr, local.stderr)
    check("ls URL refuses it too, as ls FILE does",
          remote.returncode == 1 and "ONNXZIP_ELOCAL" in remote.stderr and "config.json" in remote.stderr,
          remote.stderr)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnxzip", required=True)
    args = ap.parse_args()
    oz = os.path.abspath(args.onnxzip)
    tmp = tempfile.mkdtemp(prefix="oz-remote-tamper.")
    try:
        docroot, out = os.path.join(tmp, "www"), os.path.join(tmp, "out")
        os.makedirs(docroot)
        os.makedirs(out)
        make_fixtures(oz, tmp, docroot)
        with FaultServer(docroot) as fs:
            untouched(oz, fs, docroot, out)
            tampered(oz, fs, docroot, out)
            local_header_names_another(oz, fs, docroot)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"remote tamper: {run.passed} passed, {run.failed} failed")
    return 1 if run.failed or not run.passed else 0


if __name__ == "__main__":
    sys.exit(main())
